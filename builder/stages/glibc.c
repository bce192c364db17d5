/* packages, kind "glibc": the GNU C library cross-built from source into a
 * sysroot.
 *
 * Source: a glibc tarball (`source`, default Debian's glibc-source,
 * /usr/src/glibc/glibc-2.36.tar.xz; a path or a URL with `sha256`), plus
 * `patches` applied with patch -p1. Built out of tree in the stage's scratch
 * directory with the recipe's stage-1 compiler (the toolchain stage's
 * bin/TARGET-gcc, TARGET from its `target` file) against the kernel's UAPI
 * headers: those of the headers stage (HEADERS/include, kind "source": no
 * kernel build, so glibc builds beside the kernel and one glibc serves every
 * kernel the recipe's variants build), or, in a recipe without one, the
 * kernel stage's (KERNEL/headers/include, kind "source"). configure
 * --prefix=/usr --host=TARGET --with-headers=... --disable-werror
 * [--enable-kernel=enable_kernel] CFLAGS=cflags plus `configure`, make under
 * the engine's jobserver, make install DESTDIR=OUT/sysroot, the kernel
 * headers copied into sysroot/usr/include. The steps are those of
 * bench/ia64-glibc-by-hand.sh. CFLAGS is -O2 by default, not configure's
 * -g -O2: the root is stripped, and debug info costs compile time.
 *
 * The stage-1 compiler has no shared libgcc (--disable-shared): no
 * libgcc_eh.a, no libgcc_s. glibc 2.36 built shared links libc.so and its
 * static programs (ldconfig, sln) with -lgcc alone (Makeconfig: gnulib,
 * static-gnulib), and only its test suite wants libgcc_eh, so `make` and
 * `make install` need neither; nothing is added to the toolchain.
 *
 * Checks before anything is cached: ld.so and libc exist and are ELF files
 * for the recipe's machine, and the kernel version of the headers (the
 * headers stage's `version`, or the kernel stage's `release`) satisfies the
 * minimum in libc's ABI tag (binfmt_kernel_for_libc): a glibc configured
 * for a newer kernel than that would stop every program with "FATAL: kernel
 * too old". An enable_kernel newer than the headers fails before the build,
 * naming both versions.
 *
 * Outputs: sysroot/ (lib/, usr/lib, usr/include with the kernel headers;
 * usable as TARGET-gcc --sysroot=DIR), `version` (e.g. "2.36"),
 * stage-manifest.json {"glibc", "min_kernel", "kernel_release" (the
 * headers' version), "headers" (the stage they came from), "target",
 * "source" (the tarball's name), "sha256" (its sha256), "ld_so", "libc"}. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/binfmt.h"
#include "drivers/launcher.h"
#include "base/run_command.h"
#include "stage.h"
#include "patch_apply.h"
#include "toolchain.h"

#define GLIBC_DEFAULT_SOURCE "/usr/src/glibc/glibc-2.36.tar.xz"

static const struct field fields[] = {
    {"source", F_STRING, false, NULL, GLIBC_DEFAULT_SOURCE,
     "glibc source tarball: a path (relative to the recipe) or an http(s) URL "
     "(default: Debian's glibc-source)"},
    {"sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the tarball (required for a URL, checked for a path)"},
    {"patches", F_INPUT_LIST, false, NULL, NULL,
     "patches applied in order with patch -p1 to the unpacked source: paths, or downloads "
     "pinned by sha256 ({ url = \"https://...\"; sha256 = \"...\"; })"},
    {"enable_kernel", F_STRING, false, NULL, NULL,
     "oldest kernel the C library supports (--enable-kernel, X.Y.Z; default glibc's "
     "own for the arch: 3.2.18 on ia64); must not be newer than the kernel headers"},
    {"cflags", F_STRING, false, NULL, "-O2",
     "CFLAGS of the build (glibc needs optimisation: -O1 or more; \"-g -O2\" keeps "
     "debug info)"},
    {"configure", F_STRING_LIST, false, NULL, NULL,
     "extra configure flags, after Trillian's (--prefix=/usr --host --build "
     "--with-headers --disable-werror)"},
    {0},
};

static const char *const tools[] = {"make", "gawk", "bison", "python3", NULL};
static const char *const outputs[] = {"version", NULL};

/* Where glibc installs its dynamic loader and libc for each arch, relative
 * to the sysroot (prefix /usr: slibdir /lib; ia64's libc soname is 6.1). */
struct libc_arch {
    const char *arch, *ldso, *libc;
};
static const struct libc_arch libc_arches[] = {
    {"ia64", "lib/ld-linux-ia64.so.2", "lib/libc.so.6.1"},
    {0},
};

static const struct libc_arch *libc_arch_of(const char *arch)
{
    for (const struct libc_arch *a = libc_arches; a->arch; a++)
        if (arch && strcmp(a->arch, arch) == 0)
            return a;
    return NULL;
}

/* "packages.NAME": how run-time messages name this stage's settings. */
static char *rkey_of(const struct stage_ctx *cx)
{
    return xasprintf("packages.%s", cx->name);
}

/* Whether CFLAGS has an -O option that optimises (-O, -O1.., -Os, -Og, ...),
 * the last one winning as with gcc. */
static bool has_optimisation(const char *cflags)
{
    bool opt = false;
    for (const char *p = cflags; (p = strstr(p, "-O")); p += 2)
        if (p == cflags || p[-1] == ' ' || p[-1] == '\t')
            opt = strncmp(p, "-O0", 3) != 0;
    return opt;
}

static int declare(struct stage *st)
{
    const struct libc_arch *a = libc_arch_of(st_arch(st));
    if (!a)
        return st_error(st, NULL, "glibc is built for arch ia64 only (the recipe's arch is "
                        "\"%s\"): use a Debian sysroot (kind \"debian-libc\") there",
                        st_arch(st));
    st_need(st, "toolchain");
    /* the headers stage, or the kernel stage's headers/ in a recipe without one */
    const struct stage *k = st_peer(st, "kernel");
    bool ksection = k && !strcmp(st_section(k), "kernel");
    if (st_has_stage(st, "headers"))
        st_need(st, "headers");
    else if (k && (!ksection || (!strcmp(st_kind(k), "source") &&
                                 !st_bool(k, "config_only", false))))
        st_need(st, "kernel"); /* a command stage named kernel, or kind source */
    else
        return st_error(st, NULL, "glibc needs the kernel's UAPI headers, and the recipe has "
                        "no headers section%s: add one, e.g. headers = { kind = \"source\"; "
                        "tarball = \"/usr/src/linux-source-6.1.tar.xz\"; }",
                        st_has_stage(st, "kernel") ? " and no kernel of kind \"source\" "
                        "that installs them" : "");
    const char *cf = st_str(st, "cflags");
    if (!cf || !has_optimisation(cf))
        st_error(st, "cflags", "'%s' has no -O option: glibc does not build without "
                 "optimisation (use -O2, or \"-g -O2\" for debug info)", cf ? cf : "");
    const char *src = st_str(st, "source");
    if (!st_isset(st, "source") && !path_exists(src))
        return st_error(st, "source", "%s does not exist: install Debian's glibc-source "
                        "(apt-get install glibc-source) or set source to a glibc tarball",
                        src);
    tc_declare_source(st, "source", "sha256");
    if (tc_is_url(src))
        st_tool(st, "curl");
    const char *ek = st_str(st, "enable_kernel");
    unsigned v[3];
    if (ek && (binfmt_parse_release(ek, v) < 0 || strspn(ek, "0123456789.") != strlen(ek)))
        st_error(st, "enable_kernel", "'%s' is not a kernel version (expected X.Y.Z, e.g. "
                 "3.2.18)", ek);
    struct strlist l = {0};
    st_list(st, "configure", &l);
    static const char *const ours[] = {"--prefix", "--host", "--build", "--with-headers",
                                       "--enable-kernel", "CFLAGS=", NULL};
    for (size_t i = 0; i < l.n; i++)
        for (size_t j = 0; ours[j]; j++)
            if (str_starts(l.v[i], ours[j]))
                st_error(st, "configure", "'%s': Trillian sets %s itself (%s)", l.v[i],
                         ours[j], !strcmp(ours[j], "--enable-kernel") ? "use enable_kernel"
                         : !strcmp(ours[j], "CFLAGS=") ? "use cflags"
                         : "--prefix=/usr into the sysroot; --host, --build and "
                           "--with-headers from the toolchain and headers stages");
    strlist_free(&l);
    if (st_isset(st, "patches"))
        st_tool(st, "patch");
    st_output(st, "stage-manifest.json");
    char *o = xasprintf("sysroot/%s", a->ldso);
    st_output(st, o);
    free(o);
    return 0;
}

/* The contents of DIR/FILE up to the first newline (new string), NULL after
 * cx_fail. */
static char *read_line(const struct stage_ctx *cx, const char *dir, const char *file,
                       const char *what)
{
    char *p = path_join(dir, file), *s = NULL;
    size_t n = 0;
    if (read_file(p, &s, &n) < 0) {
        cx_fail(cx, "cannot read %s (%s): %s", p, what, strerror(errno));
        free(p);
        return NULL;
    }
    free(p);
    s[strcspn(s, "\n")] = 0;
    return s;
}

/* "2.36" from SRC/version.h (#define VERSION "2.36"). */
static char *glibc_version(const char *src)
{
    char *p = path_join(src, "version.h");
    char *v = file_text_after(p, "#define VERSION \"", "\"");
    free(p);
    return v;
}

static unsigned long vnum(const unsigned v[3])
{
    return (unsigned long)v[0] << 32 | (unsigned long)v[1] << 16 | v[2];
}

/* Copies each entry of the kernel's headers/include into DST (merging, so
 * DST's own mode is kept). */
static int copy_headers(const struct stage_ctx *cx, const char *hdr, const char *dst)
{
    struct strlist names = {0};
    if (dir_list(hdr, &names) < 0 || mkdir_p(dst, 0755) < 0)
        return cx_fail(cx, "cannot copy the kernel headers %s into %s: %s", hdr, dst,
                       strerror(errno));
    int rc = 0;
    for (size_t i = 0; i < names.n && !rc; i++) {
        char *s = path_join(hdr, names.v[i]), *d = path_join(dst, names.v[i]);
        if (copy_tree(s, d, false) < 0)
            rc = cx_fail(cx, "cannot copy %s to %s: %s", s, d, strerror(errno));
        free(s);
        free(d);
    }
    strlist_free(&names);
    return rc;
}

/* Where the UAPI headers come from: the headers stage, or the kernel's. */
struct hdr_src {
    const char *stage;   /* "headers" or "kernel" */
    const char *include; /* below its output directory */
    const char *version; /* file holding the kernel version */
    const char *what;    /* for messages */
    const char *fix;     /* how to get a newer one */
};
static const struct hdr_src hdr_srcs[] = {
    {"headers", "include", "version", "the headers stage's kernel version",
     "take the headers from a newer kernel (headers.tarball or headers.url)"},
    {"kernel", "headers/include", "release", "the kernel stage's release",
     "build a newer kernel (kernel.tarball, kernel.url or kernel.git)"},
};

static const struct hdr_src *hdr_src_of(const struct stage_ctx *cx)
{
    return st_has_stage(cx->st, "headers") ? &hdr_srcs[0] : &hdr_srcs[1];
}

/* The after-build checks: loader and libc for the arch's machine, and the
 * headers' kernel version new enough for libc's ABI tag. Fills min[]. */
static int check_sysroot(const struct stage_ctx *cx, const char *rkey, const char *sysroot,
                         const struct libc_arch *a, const struct hdr_src *hs,
                         const char *release, char min[32])
{
    char err[BINFMT_ERRLEN];
    int want = tc_arch_machine(cx->arch);
    const char *files[] = {a->ldso, a->libc, NULL};
    for (size_t i = 0; files[i]; i++) {
        char *p = path_join(sysroot, files[i]);
        int m = binfmt_elf_machine(p, err);
        if (m < 0) {
            cx_fail(cx, "%s: the installed glibc lacks %s: %s (see the install step in the "
                    "log)", rkey, files[i], err);
            free(p);
            return 1;
        }
        if (m != want) {
            cx_fail(cx, "%s: %s is %s code (e_machine %d), but arch \"%s\" needs %s: the "
                    "toolchain stage's compiler is for the wrong machine", rkey, files[i],
                    binfmt_elf_machine_name(m), m, cx->arch, binfmt_elf_machine_name(want));
            free(p);
            return 1;
        }
        free(p);
    }
    char *libc = path_join(sysroot, a->libc);
    int r = binfmt_kernel_for_libc(libc, release, min, err);
    free(libc);
    switch (r) {
    case BINFMT_KERNEL_OK:
        cx_log(cx, "kernel check: %s", err);
        return 0;
    case BINFMT_KERNEL_TOO_OLD:
        if (cx_str(cx, "enable_kernel"))
            return cx_fail(cx, "%s: kernel too old for this glibc: %s (libc's minimum kernel, "
                           "from its ABI tag) is newer than %s %s. Lower %s.enable_kernel "
                           "(%s) to %s or less, or %s", rkey, min, hs->what, release, rkey,
                           cx_str(cx, "enable_kernel"), release, hs->fix);
        return cx_fail(cx, "%s: kernel too old for this glibc: %s (libc's minimum kernel, "
                       "from its ABI tag; %s.enable_kernel is unset, so this is glibc's own "
                       "minimum for arch %s) is newer than %s %s. Use a kernel >= %s: %s",
                       rkey, min, rkey, cx->arch, hs->what, release, min, hs->fix);
    default:
        return cx_fail(cx, "%s: cannot check the kernel against the built libc: %s", rkey,
                       err);
    }
}

static int run(struct stage_ctx *cx)
{
    const struct libc_arch *a = libc_arch_of(cx->arch);
    char *rkey = rkey_of(cx);
    const struct hdr_src *hs = hdr_src_of(cx);
    const char *tc = cx_dep(cx, "toolchain"), *kernel = cx_dep(cx, hs->stage);
    char *target = NULL, *release = NULL, *tarball = NULL, *src = NULL, *version = NULL;
    char *hdr = path_join(kernel, hs->include);
    char *srcdir = path_join(cx->work, "src"), *obj = path_join(cx->work, "obj");
    char *sysroot = path_join(cx->out, "sysroot");
    char *build = NULL, *env_path = NULL, *cc = NULL, *cxx = NULL, *ar = NULL, *ranlib = NULL;
    struct strlist argv = {0}, envl = {0};
    json_object *patch_list = json_object_new_array();
    char min[32] = "";
    int rc = 1;

    if (!(target = tc_read_target(cx, tc)) ||
        !(release = read_line(cx, kernel, hs->version, hs->what)))
        goto out;
    if (!is_dir(hdr)) {
        cx_fail(cx, "%s: the %s stage has no UAPI headers (%s): glibc needs them; add a "
                "headers section (headers = { kind = \"source\"; tarball = ...; })", rkey,
                hs->stage, hdr);
        goto out;
    }
    /* A minimum newer than the kernel: fail now, not after the build. */
    const char *ek = cx_str(cx, "enable_kernel");
    unsigned ev[3], kv[3];
    if (ek && binfmt_parse_release(ek, ev) == 0 && binfmt_parse_release(release, kv) == 0 &&
        vnum(ev) > vnum(kv)) {
        cx_fail(cx, "%s.enable_kernel: kernel too old for this glibc: enable_kernel = %s, "
                "but %s is %s and glibc built so would refuse to run on it (\"FATAL: kernel "
                "too old\"). Lower %s.enable_kernel to %s or less, or %s", rkey, ek, hs->what,
                release, rkey, release, hs->fix);
        goto out;
    }

    if (!(tarball = tc_get_source(cx, rkey, "source", "sha256")))
        goto out;
    double t0 = now_seconds();
    if (!(src = tc_unpack(cx, rkey, "source", tarball, srcdir)))
        goto out;
    cx_log(cx, "unpack: %.1f s", now_seconds() - t0);
    if (patch_apply_setting(cx, "patches", src, NULL, patch_list) != 0)
        goto out;
    if (!(version = glibc_version(src))) {
        cx_fail(cx, "%s.source: %s has no version.h with #define VERSION: not a glibc source "
                "tarball", rkey, tarball);
        goto out;
    }
    cx_log(cx, "glibc %s for %s, kernel headers of %s", version, target, release);

    char *guess = path_join(src, "scripts/config.guess");
    const char *ga[] = {guess, NULL};
    int gr = cx_capture(cx, ga, &build);
    free(guess);
    if (gr != 0 || !build) {
        cx_fail(cx, "%s: scripts/config.guess of the glibc source failed (see the log)", rkey);
        goto out;
    }
    build[strcspn(build, "\n")] = 0;

    /* The toolchain's bin/ first: TARGET-gcc finds as and ld, configure
     * finds TARGET-ar, -ranlib, -objdump, ... */
    env_path = run_path_env("%s/bin", tc);
    char *launch = launcher_prefix(cx, "glibc", cx->work, false, &envl);
    cc = xasprintf("CC=%s%s%s/bin/%s-gcc", launch ? launch : "", launch ? " " : "", tc, target);
    free(launch);
    /* a stage-1 toolchain has no TARGET-g++: naming it keeps configure from
     * taking the host's g++ for the target (it would, "not prefixed with
     * host triplet"), so glibc's C++ bits are off */
    cxx = xasprintf("CXX=%s/bin/%s-g++", tc, target);
    ar = xasprintf("AR=%s/bin/%s-ar", tc, target);
    ranlib = xasprintf("RANLIB=%s/bin/%s-ranlib", tc, target);
    const char *base_env[] = {env_path, cc, cxx, ar, ranlib, "MAKEINFO=:", NULL};
    for (size_t i = 0; base_env[i]; i++)
        strlist_push(&envl, base_env[i]);
    const char *const *env = (const char *const *)envl.v;
    if (mkdir_p(obj, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", obj, strerror(errno));
        goto out;
    }
    strlist_pushf(&argv, "%s/configure", src);
    strlist_push(&argv, "--prefix=/usr");
    strlist_pushf(&argv, "--host=%s", target);
    strlist_pushf(&argv, "--build=%s", build);
    strlist_pushf(&argv, "--with-headers=%s", hdr);
    /* gcc 12 warns where glibc 2.36's ia64 code predates it */
    strlist_push(&argv, "--disable-werror");
    if (ek)
        strlist_pushf(&argv, "--enable-kernel=%s", ek);
    strlist_pushf(&argv, "CFLAGS=%s", cx_str(cx, "cflags"));
    cx_list(cx, "configure", &argv);
    if (tc_run_step(cx, obj, env, (const char *const *)argv.v, "configure") != 0) {
        cx_fail(cx, "%s: glibc's configure failed (see the log and %s/config.log; check "
                "%s.configure and %s.enable_kernel)", rkey, obj, rkey, rkey);
        goto out;
    }
    strlist_free(&argv);
    tc_make_argv(cx, &argv, NULL);
    if (tc_run_step(cx, obj, env, (const char *const *)argv.v, "make") != 0) {
        cx_fail(cx, "%s: make failed (see the log above)", rkey);
        goto out;
    }
    strlist_free(&argv);
    char *destdir = xasprintf("DESTDIR=%s", sysroot);
    const char *inst[] = {"install", destdir, NULL};
    tc_make_argv(cx, &argv, inst);
    free(destdir);
    if (tc_run_step(cx, obj, env, (const char *const *)argv.v, "install") != 0) {
        cx_fail(cx, "%s: make install failed (see the log above)", rkey);
        goto out;
    }
    char *inc = path_join(sysroot, "usr/include");
    int hr = copy_headers(cx, hdr, inc);
    free(inc);
    if (hr)
        goto out;

    if (check_sysroot(cx, rkey, sysroot, a, hs, release, min) != 0)
        goto out;

    char *vline = xasprintf("%s\n", version);
    int wr = cx_write(cx, "version", vline, strlen(vline));
    free(vline);
    if (wr)
        goto out;
    json_object *m = json_object_new_object();
    json_add_str(m, "glibc", version);
    json_add_str(m, "min_kernel", min);
    json_add_str(m, "kernel_release", release);
    json_add_str(m, "headers", hs->stage);
    json_add_str(m, "enable_kernel", ek ? ek : "default");
    json_add_str(m, "target", target);
    json_add_str(m, "source", path_basename(tarball));
    tc_manifest_sha256(cx, m, "sha256", tarball);
    json_add_str(m, "ld_so", a->ldso);
    json_add_str(m, "libc", a->libc);
    json_object_object_add(m, "patches",
                           json_object_new_int64((int64_t)json_object_array_length(patch_list)));
    if (json_object_array_length(patch_list)) {
        json_object_object_add(m, "patch_files", patch_list);
        patch_list = NULL;
    }
    if (cx_write_manifest(cx, m))
        goto out;
    cx_log(cx, "glibc %s installed in %s (minimum kernel %s)", version, sysroot, min);
    rc = 0;
out:
    strlist_free(&argv);
    json_object_put(patch_list);
    strlist_free(&envl);
    free(rkey);
    free(target);
    free(release);
    free(tarball);
    free(src);
    free(version);
    free(hdr);
    free(srcdir);
    free(obj);
    free(sysroot);
    free(build);
    free(env_path);
    free(cc);
    free(cxx);
    free(ar);
    free(ranlib);
    return rc;
}

/* What the stage is, for the report, the SBOM and a minimal root (stage.h). */
static const struct stage_component made[] = {
    {.name = "glibc", .version = "glibc", .source = "source", .sha256 = "sha256",
     .licence = "LGPL-2.1-or-later", .role = COMPONENT_ROOT,
     .root_name = "glibc", .root_version = {"debian_version", "@version"}},
    {0},
};

static const char *const patch_fields[] = {"patches", NULL};

const struct stage_kind stage_glibc = {
    .name = "glibc",
    .section = "packages",
    .version = 2, /* not bumped for dropping the step times from the manifest:
                     * no input decided them (docs/engine.md) */
    .summary = "the GNU C library cross-built from source into a sysroot against the kernel "
               "headers, checked against their kernel version",
    .fields = fields,
    .patch_fields = patch_fields,
    .tools = tools,
    .outputs = outputs,
    .components = made,
    .declare = declare,
    .run = run,
    .cost_hint = 750,
};
