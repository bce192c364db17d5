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
 * kernel stage's (KERNEL/headers/include, kind "source").
 *
 * The build is a table over the generic package build (pkg_build.h, cross
 * mode): the source its own (.get: the tarball resolved, fetched, unpacked
 * into WORK/src and patched; its settings, defaults and so the cache keys
 * are those from before the table), then the steps: the
 * version and config.guess's build triplet (a function), configure
 * --prefix=/usr --host=TARGET --with-headers=... --disable-werror
 * [--enable-kernel=enable_kernel] CFLAGS=cflags plus `configure` in
 * WORK/obj, make under the engine's jobserver, make install
 * DESTDIR=OUT/sysroot (argv templates), the kernel headers copied into
 * sysroot/usr/include and the checks below (functions). The steps are
 * those of bench/ia64-glibc-by-hand.sh. CFLAGS is -O2 by default, not
 * configure's -g -O2: the root is stripped, and debug info costs compile
 * time.
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
#include "stage.h"
#include "patch_apply.h"
#include "pkg_build.h"
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

/* What the build's hooks and steps share (pkg_build's ARG). */
struct glibc_state {
    const struct libc_arch *a;
    const struct hdr_src *hs;
    char *rkey, *target, *release, *hdr; /* hdr: the UAPI headers' include/ */
    char *tarball, *src;                 /* src: the unpacked tree (pkg_build's copy) */
    char *version, *build;               /* build: config.guess's triplet */
    char *launch;                        /* ccache or distcc and a space, or "" */
    json_object *patch_list;             /* the manifest's patch_files */
    char min[32];                        /* libc's minimum kernel, from its ABI tag */
};

/* The tarball (a path, or a URL pinned by sha256; Debian's glibc-source by
 * default) unpacked into WORK/src and patched. The kind's own source, not
 * PKG_SOURCE_FIELDS: `source` and `sha256` predate the table, and
 * glibc_url, glibc_sha256, ... would change every recipe's key for the same
 * bytes. The patches are applied here, not by patches_key, to keep their
 * files and hashes for the manifest's patch_files. */
static char *get_source(const struct stage_ctx *cx, void *arg)
{
    struct glibc_state *s = arg;
    if (!(s->tarball = tc_get_source(cx, s->rkey, "source", "sha256")))
        return NULL;
    double t0 = now_seconds();
    char *dir = path_join(cx->work, "src");
    char *src = tc_unpack(cx, s->rkey, "source", s->tarball, dir);
    free(dir);
    if (!src)
        return NULL;
    cx_log(cx, "unpack: %.1f s", now_seconds() - t0);
    if (patch_apply_setting(cx, "patches", src, NULL, s->patch_list) != 0) {
        free(src);
        return NULL;
    }
    s->src = xstrdup(src);
    return src;
}

/* The version of the patched tree, and the build machine's triplet from its
 * config.guess (configure's --build). */
static int version_step(const struct stage_ctx *cx, void *arg)
{
    struct glibc_state *s = arg;
    if (!(s->version = glibc_version(s->src)))
        return cx_fail(cx, "%s.source: %s has no version.h with #define VERSION: not a glibc "
                       "source tarball", s->rkey, s->tarball);
    cx_log(cx, "glibc %s for %s, kernel headers of %s", s->version, s->target, s->release);
    char *guess = path_join(s->src, "scripts/config.guess");
    const char *ga[] = {guess, NULL};
    int gr = cx_capture(cx, ga, &s->build);
    free(guess);
    if (gr != 0 || !s->build)
        return cx_fail(cx, "%s: scripts/config.guess of the glibc source failed (see the log)",
                       s->rkey);
    s->build[strcspn(s->build, "\n")] = 0;
    return 0;
}

/* The kernel's UAPI headers into the installed sysroot's usr/include. */
static int headers_step(const struct stage_ctx *cx, void *arg)
{
    const struct glibc_state *s = arg;
    char *inc = path_join(cx->out, "sysroot/usr/include");
    int rc = copy_headers(cx, s->hdr, inc);
    free(inc);
    return rc;
}

static int check_step(const struct stage_ctx *cx, void *arg)
{
    struct glibc_state *s = arg;
    char *sysroot = path_join(cx->out, "sysroot");
    int rc = check_sysroot(cx, s->rkey, sysroot, s->a, s->hs, s->release, s->min);
    free(sysroot);
    return rc;
}

/* The launcher's environment (CACHE/ccache/glibc), before the env rows. */
static void setup_env(const struct stage_ctx *cx, struct strlist *env, void *arg)
{
    struct glibc_state *s = arg;
    char *l = launcher_prefix(cx, "glibc", cx->work, false, env);
    s->launch = l ? xasprintf("%s ", l) : xstrdup("");
    free(l);
}

static const char *var(void *arg, const char *name)
{
    const struct glibc_state *s = arg;
    return !strcmp(name, "build") ? s->build
         : !strcmp(name, "headers") ? s->hdr
         : !strcmp(name, "launch") ? s->launch
         : !strcmp(name, "rkey") ? s->rkey : NULL;
}

static const struct pkg_source sources[] = {
    {.name = "glibc", .get = get_source},
    {0},
};

/* gcc 12 warns where glibc 2.36's ia64 code predates it: --disable-werror */
static const char *const configure[] = {
    "${src:glibc}/configure", "--prefix=/usr", "--host=${target}", "--build=${kind:build}",
    "--with-headers=${kind:headers}", "--disable-werror", "?--enable-kernel=${set:enable_kernel}",
    "CFLAGS=${set:cflags}", "${list:configure}", NULL};
static const char *const make[] = {"make", NULL};
static const char *const make_install[] = {"make", "install", "DESTDIR=${out}/sysroot", NULL};

/* Out of tree in WORK/obj (glibc refuses to build in its source tree). */
static const struct pkg_step steps[] = {
    {.label = "version", .fn = version_step},
    {.label = "configure", .cwd = "${work}/obj", .argv = configure,
     .hint = "glibc's configure: see ${work}/obj/config.log, and check ${kind:rkey}.configure "
             "and ${kind:rkey}.enable_kernel"},
    {.label = "make", .cwd = "${work}/obj", .argv = make},
    {.label = "install", .cwd = "${work}/obj", .argv = make_install,
     .hint = "make install into ${out}/sysroot"},
    {.label = "headers", .fn = headers_step},
    {.label = "check", .fn = check_step},
    {0},
};

static const struct pkg_file no_files[] = {{0}};

/* The toolchain's bin/ is first on PATH (pkg_build, cross): TARGET-gcc finds
 * as and ld, configure finds TARGET-ar, -ranlib, -objdump, ... A stage-1
 * toolchain has no TARGET-g++: naming it keeps configure from taking the
 * host's g++ for the target (it would, "not prefixed with host triplet"),
 * so glibc's C++ bits are off. */
static const char *const env[] = {"CC=${kind:launch}${cross}gcc", "CXX=${cross}g++",
                                  "AR=${cross}ar", "RANLIB=${cross}ranlib", "MAKEINFO=:",
                                  NULL};

static const struct pkg_desc desc = {
    .what = "glibc", .sources = sources, .steps = steps, .install = no_files, .env = env,
    .cross = true, .setup_env = setup_env, .var = var,
};

static int write_manifest(const struct stage_ctx *cx, struct glibc_state *s)
{
    const char *ek = cx_str(cx, "enable_kernel");
    json_object *m = json_object_new_object();
    json_add_str(m, "glibc", s->version);
    json_add_str(m, "min_kernel", s->min);
    json_add_str(m, "kernel_release", s->release);
    json_add_str(m, "headers", s->hs->stage);
    json_add_str(m, "enable_kernel", ek ? ek : "default");
    json_add_str(m, "target", s->target);
    json_add_str(m, "source", path_basename(s->tarball));
    tc_manifest_sha256(cx, m, "sha256", s->tarball);
    json_add_str(m, "ld_so", s->a->ldso);
    json_add_str(m, "libc", s->a->libc);
    size_t np = json_object_array_length(s->patch_list);
    json_object_object_add(m, "patches", json_object_new_int64((int64_t)np));
    if (np) {
        json_object_object_add(m, "patch_files", s->patch_list);
        s->patch_list = NULL;
    }
    return cx_write_manifest(cx, m);
}

static int run(struct stage_ctx *cx)
{
    struct glibc_state s = {.a = libc_arch_of(cx->arch), .rkey = rkey_of(cx),
                            .hs = hdr_src_of(cx), .patch_list = json_object_new_array()};
    const char *tc = cx_dep(cx, "toolchain"), *kernel = cx_dep(cx, s.hs->stage);
    s.hdr = path_join(kernel, s.hs->include);
    int rc = 1;

    if (!(s.target = tc_read_target(cx, tc)) ||
        !(s.release = read_line(cx, kernel, s.hs->version, s.hs->what)))
        goto out;
    if (!is_dir(s.hdr)) {
        cx_fail(cx, "%s: the %s stage has no UAPI headers (%s): glibc needs them; add a "
                "headers section (headers = { kind = \"source\"; tarball = ...; })", s.rkey,
                s.hs->stage, s.hdr);
        goto out;
    }
    /* A minimum newer than the kernel: fail now, not after the build. */
    const char *ek = cx_str(cx, "enable_kernel");
    unsigned ev[3], kv[3];
    if (ek && binfmt_parse_release(ek, ev) == 0 && binfmt_parse_release(s.release, kv) == 0 &&
        vnum(ev) > vnum(kv)) {
        cx_fail(cx, "%s.enable_kernel: kernel too old for this glibc: enable_kernel = %s, "
                "but %s is %s and glibc built so would refuse to run on it (\"FATAL: kernel "
                "too old\"). Lower %s.enable_kernel to %s or less, or %s", s.rkey, ek,
                s.hs->what, s.release, s.rkey, s.release, s.hs->fix);
        goto out;
    }
    if (pkg_build(cx, &desc, &s))
        goto out;
    char *vline = xasprintf("%s\n", s.version);
    int wr = cx_write(cx, "version", vline, strlen(vline));
    free(vline);
    if (wr || write_manifest(cx, &s))
        goto out;
    cx_log(cx, "glibc %s installed in %s/sysroot (minimum kernel %s)", s.version, cx->out,
           s.min);
    rc = 0;
out:
    json_object_put(s.patch_list);
    free(s.rkey);
    free(s.target);
    free(s.release);
    free(s.hdr);
    free(s.tarball);
    free(s.src);
    free(s.version);
    free(s.build);
    free(s.launch);
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
