/* packages, kind "gcc": a GCC stage 2, the cross compiler for programs that
 * run on the target's C library.
 *
 * Rebuilds GCC from the toolchain's source tarball (`gcc`, default the
 * toolchain section's `gcc` and `gcc_sha256`) against the sysroot of the
 * packages stage named by `libc` (default "glibc"; any stage whose output
 * has sysroot/, e.g. a Debian libc sysroot). The sysroot is copied into the
 * prefix (OUT/sysroot, hard links) and given to --with-sysroot: inside the
 * prefix, gcc finds it relative to itself wherever the cache puts it.
 * Configured C only (or, with `languages` "c,c++", C++ and libstdc++ too),
 * --enable-shared (libgcc_s), --enable-threads=posix; a table over the
 * generic package build (pkg_build.h) whose GCC steps are stage 1's
 * (tc_gcc_steps, toolchain.h: all-gcc, all-target-libgcc, install-strip-gcc
 * install-target-libgcc, and libstdc++'s), with the stage-1 toolchain's
 * binutils linked into the prefix.
 *
 * Checks before anything is cached: the compiler check of the toolchain
 * kinds (a freestanding program of the recipe's ELF machine), then a dynamic
 * hello world linked against the sysroot whose program interpreter
 * (PT_INTERP, read with binfmt) is the arch's loader
 * (/lib/ld-linux-ia64.so.2), and libgcc_s.so.1 of the recipe's machine.
 *
 * Outputs: the same contract as the toolchain stage (bin/TARGET-gcc, the
 * binutils, `target`, stage-manifest.json), plus sysroot/ and
 * runtime/lib/libgcc_s.so.1 (for the target's root filesystem); with C++,
 * bin/TARGET-g++ and runtime/usr/lib/TRIPLET/libstdc++.so.6 (Debian's
 * multiarch place) after a C++ hello world linked against it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/binfmt.h"
#include "base/run_command.h"
#include "stage.h"
#include "patch_apply.h"
#include "toolchain.h"

static const struct field fields[] = {
    {"gcc", F_STRING, false, NULL, NULL,
     "GCC source tarball, path or URL (default: the toolchain section's gcc)"},
    {"gcc_sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the tarball (default: the toolchain section's gcc_sha256 when gcc is "
     "its gcc)"},
    {"libc", F_STRING, false, NULL, "glibc",
     "name of the packages stage whose output has the sysroot/ to build against"},
    {"configure", F_STRING_LIST, false, NULL, NULL,
     "extra GCC configure flags, after Trillian's"},
    {"languages", F_STRING, false, NULL, NULL,
     "\"c\" (unset) or \"c,c++\": also g++ and libstdc++ (libstdc++.so.6 under "
     "runtime/usr/lib/TRIPLET)"},
    {0},
};

static const char *const tools[] = {"gcc", "g++", "make", NULL};
/* Added after the kind shipped: in the key only when set (stage.h), so the
 * C-only stages keep their keys. */
static const char *const late_fields[] = {"languages", NULL};
static const char *const outputs[] = {"target", "runtime/lib/libgcc_s.so.1", NULL};

/* Stage 2 is stage 1's build with a C library: shared libgcc, threads. */
static const char *const stage2_flags[] = {
    "--enable-languages=c", "--enable-shared", "--enable-threads=posix",
    "--disable-multilib", "--disable-bootstrap", "--disable-nls", "--disable-libssp",
    "--disable-libquadmath", "--disable-libgomp", "--disable-libatomic", "--disable-libitm",
    "--disable-libvtv", "--disable-libsanitizer", "--disable-libstdcxx", "--disable-lto", NULL,
};

/* `languages`: true for "c,c++", false for "c" or unset, -1 otherwise. */
static int wants_cxx(const char *languages)
{
    if (!languages || strcmp(languages, "c") == 0)
        return 0;
    return strcmp(languages, "c,c++") == 0 ? 1 : -1;
}

/* The program interpreter a dynamic program for each arch must name. */
static const struct {
    const char *arch, *interp;
} interps[] = {
    {"ia64", "/lib/ld-linux-ia64.so.2"},
    {"amd64", "/lib64/ld-linux-x86-64.so.2"},
};

static const char *interp_of(const char *arch)
{
    for (size_t i = 0; i < ARRAY_LEN(interps); i++)
        if (arch && strcmp(interps[i].arch, arch) == 0)
            return interps[i].interp;
    return NULL;
}

/* The tarball: this stage's `gcc`, else the toolchain section's. *sha and
 * *from_toolchain say which. */
static const char *gcc_value(const struct stage *st, const char **sha, bool *from_toolchain)
{
    const char *v = st_str(st, "gcc");
    *sha = st_str(st, "gcc_sha256");
    *from_toolchain = false;
    if (v)
        return v;
    const struct stage *tc = st_peer(st, "toolchain");
    const char *g = tc ? st_str(tc, "gcc") : NULL;
    if (!g)
        return NULL;
    *from_toolchain = true;
    if (!*sha)
        *sha = st_str(tc, "gcc_sha256");
    return g;
}

static const char *target_of(const struct stage *st)
{
    const struct stage *tc = st_peer(st, "toolchain");
    const char *t = tc ? st_str(tc, "target") : NULL;
    if (t)
        return t;
    return tc_default_target(st_arch(st));
}

/* The toolchain's host_cflags when it sets them: GCC's own programs are
 * compiled as stage 1's were, so that stage 1's objects in the shared
 * ccache serve stage 2 too (tc_gcc_setup_env); NULL: -O2, as stage 1's
 * default. */
static const char *host_cflags_of(const struct stage *st)
{
    const struct stage *tc = st_peer(st, "toolchain");
    return tc && st_isset(tc, "host_cflags") ? st_str(tc, "host_cflags") : NULL;
}

static int declare(struct stage *st)
{
    if (!interp_of(st_arch(st)) || tc_arch_machine(st_arch(st)) < 0)
        return st_error(st, NULL, "no stage-2 gcc for arch \"%s\" (known: ia64, amd64)",
                        st_arch(st));
    const char *target = target_of(st);
    if (!target)
        return st_error(st, NULL, "no target triplet for arch \"%s\": set toolchain.target",
                        st_arch(st));
    int cxx = wants_cxx(st_str(st, "languages"));
    if (cxx < 0)
        return st_error(st, "languages", "'%s': known are \"c\" and \"c,c++\"",
                        st_str(st, "languages"));
    st_need(st, "toolchain");
    st_need(st, st_str(st, "libc"));
    const char *sha;
    bool from_tc;
    const char *v = gcc_value(st, &sha, &from_tc);
    if (!v)
        return st_error(st, "gcc", "unset, and the toolchain section has no gcc (kind "
                        "\"external\"?): set gcc to a GCC source tarball (path or URL)");
    char *path = path_absolute(st_recipe_dir(st), v);
    tc_declare_source_value(st, "gcc", "gcc_sha256", v, path, sha);
    free(path);
    if (from_tc) /* not a setting of ours: the key must see it */
        st_input_text(st, "gcc-from-toolchain", v);
    const char *hc = host_cflags_of(st);
    if (hc) /* stage 1's flags for GCC's own programs: the key sees them only when set */
        st_input_text(st, "host-cflags", hc);
    if (tc_is_url(v))
        st_tool(st, "curl");
    struct strlist l = {0};
    st_list(st, "configure", &l);
    static const char *const ours[] = {"--prefix", "--target", "--with-sysroot", NULL};
    for (size_t i = 0; i < l.n; i++)
        for (size_t j = 0; ours[j]; j++)
            if (str_starts(l.v[i], ours[j]))
                st_error(st, "configure", "'%s': Trillian sets %s itself (the prefix is the "
                         "stage's output, the sysroot a copy of the libc stage's, the target "
                         "the toolchain's)", l.v[i], ours[j]);
    strlist_free(&l);
    char *o = xasprintf("bin/%s-gcc", target);
    st_output(st, o);
    free(o);
    if (cxx) {
        o = xasprintf("bin/%s-g++", target);
        st_output(st, o);
        free(o);
        o = xasprintf("runtime/usr/lib/%s/libstdc++.so.6", target);
        st_output(st, o);
        free(o);
    }
    return 0;
}

/* Links a dynamic hello world with PREFIX/bin/TARGET-gcc against its
 * sysroot and checks its program interpreter. */
static int check_hello(const struct stage_ctx *cx, const char *rkey, const char *target,
                       const char *libc, bool cxx, json_object *details)
{
    static const char hello_c[] = "#include <stdio.h>\n"
                                  "int main(void)\n{\n    puts(\"hello from trillian\");\n"
                                  "    return 0;\n}\n";
    /* iostream and an exception: libstdc++ and the unwinder in libgcc_s */
    static const char hello_cc[] = "#include <iostream>\n#include <stdexcept>\n"
                                   "int main()\n{\n    try {\n"
                                   "        throw std::runtime_error(\"hello from trillian\");\n"
                                   "    } catch (const std::exception &e) {\n"
                                   "        std::cout << e.what() << std::endl;\n    }\n"
                                   "    return 0;\n}\n";
    const char *want = interp_of(cx->arch), *name = cxx ? "hello.cc" : "hello.c";
    const char *text = cxx ? hello_cc : hello_c;
    char *src = path_join(cx->work, name), *exe = path_join(cx->work, "hello");
    char *gcc = xasprintf("%s/bin/%s-%s", cx->out, target, cxx ? "g++" : "gcc");
    char err[BINFMT_ERRLEN], interp[256];
    int rc = 1;
    if (cx_write_in(cx, cx->work, name, text, strlen(text), 0644))
        goto out;
    const char *cc[] = {gcc, "-O2", "-o", exe, src, NULL};
    if (cx_run(cx, cc) != 0) {
        cx_fail(cx, "%s: %s cannot link a dynamic %s hello world against the sysroot of stage "
                "%s (see the log): is %s.libc a C library stage?", rkey, gcc,
                cxx ? "C++" : "C", libc, rkey);
        goto out;
    }
    int r = binfmt_elf_interp(exe, interp, sizeof interp, err);
    if (r < 0) {
        cx_fail(cx, "%s: %s", rkey, err);
        goto out;
    }
    if (r == 0 || strcmp(interp, want) != 0) {
        cx_fail(cx, "%s: a hello world linked by %s has program interpreter %s, but arch "
                "\"%s\" needs %s: the sysroot of stage %s is not a C library for it", rkey,
                gcc, r ? interp : "(none: linked statically)", cx->arch, want, libc);
        goto out;
    }
    cx_log(cx, "%s hello world: dynamic, program interpreter %s", cxx ? "C++" : "C", interp);
    if (!cxx)
        json_add_str(details, "interp", interp);
    rc = 0;
out:
    unlink(exe);
    free(src);
    free(exe);
    free(gcc);
    return rc;
}

/* FROM copied to DIR/NAME (DIR made), which must be code of the recipe's
 * machine: the runtime a root takes from the stage. */
static int copy_runtime(const struct stage_ctx *cx, const char *rkey, const char *from,
                        const char *dir, const char *name)
{
    char *dst = path_join(dir, name), err[BINFMT_ERRLEN];
    int rc = 0;
    if (mkdir_p(dir, 0755) < 0 || copy_file(from, dst) < 0) {
        rc = cx_fail(cx, "cannot copy %s to %s: %s", from, dst, strerror(errno));
    } else {
        int m = binfmt_elf_machine(dst, err), want = tc_arch_machine(cx->arch);
        if (m != want)
            rc = cx_fail(cx, "%s: %s is %s, not %s code", rkey, from,
                         m < 0 ? err : binfmt_elf_machine_name(m),
                         binfmt_elf_machine_name(want));
    }
    free(dst);
    return rc;
}

/* PREFIX/TARGET/lib{,64}/libgcc_s.so.1 copied to runtime/lib, checked. */
static int runtime_libgcc(const struct stage_ctx *cx, const char *rkey, const char *target)
{
    static const char *const dirs[] = {"lib", "lib64", NULL};
    char *found = NULL;
    for (size_t i = 0; dirs[i] && !found; i++) {
        char *p = xasprintf("%s/%s/%s/libgcc_s.so.1", cx->out, target, dirs[i]);
        if (path_exists(p))
            found = p;
        else
            free(p);
    }
    if (!found)
        return cx_fail(cx, "%s: the build installed no %s/lib/libgcc_s.so.1 (was "
                       "--disable-shared given in %s.configure?)", rkey, target, rkey);
    char *dir = path_join(cx->out, "runtime/lib");
    int rc = copy_runtime(cx, rkey, found, dir, "libgcc_s.so.1");
    free(found);
    free(dir);
    return rc;
}

/* PREFIX/TARGET/lib/libstdc++.so.6 and the file it names, copied into
 * runtime/usr/lib/TARGET (Debian's libstdc++6 has them there), checked. */
static int runtime_libstdcxx(const struct stage_ctx *cx, const char *rkey, const char *target,
                             json_object *details)
{
    char *link = xasprintf("%s/%s/lib/libstdc++.so.6", cx->out, target);
    char *dir = xasprintf("%s/runtime/usr/lib/%s", cx->out, target);
    char real[256];
    int rc = 1;
    ssize_t n = readlink(link, real, sizeof real - 1);
    if (n <= 0 || memchr(real, '/', (size_t)n)) {
        cx_fail(cx, "%s: the C++ build left no link %s to a libstdc++.so.6.0.N beside it",
                rkey, link);
        goto out;
    }
    real[n] = 0;
    char *from = xasprintf("%s/%s/lib/%s", cx->out, target, real);
    char *to_link = path_join(dir, "libstdc++.so.6");
    if (copy_runtime(cx, rkey, from, dir, real) == 0) {
        if (symlink(real, to_link) < 0) {
            cx_fail(cx, "cannot link %s to %s: %s", to_link, real, strerror(errno));
        } else {
            json_add_str(details, "libstdcxx", real);
            rc = 0;
        }
    }
    free(from);
    free(to_link);
out:
    free(link);
    free(dir);
    return rc;
}

/* The build's state (pkg_build's ARG): the shared GCC steps' part first. */
struct g2_state {
    struct tc_gcc gcc;
    char *rkey, *target, *tarball, *libc_version;
    const char *libc, *tc;      /* the libc stage's name, the toolchain's output */
    json_object *details;
    struct tc_probe pr;
};

/* The tarball (this stage's gcc, else the toolchain's), unpacked; with the
 * toolchain's source, the patches stage 1 applied. */
static char *get_gcc(const struct stage_ctx *cx, void *arg)
{
    struct g2_state *s = arg;
    const char *sha;
    bool from_tc;
    const char *v = gcc_value(cx->st, &sha, &from_tc);
    char *path = path_absolute(cx->recipe_dir, v);
    s->tarball = tc_get_source_value(cx, from_tc ? "toolchain" : s->rkey, "gcc", "gcc_sha256",
                                     v, path, sha);
    free(path);
    if (!s->tarball)
        return NULL;
    char *src = tc_unpack_gcc(cx, s->rkey, "gcc", s->tarball);
    if (!src)
        return NULL;
    if (from_tc) { /* the same source as stage 1: with the patches it applied */
        char *pd = path_join(s->tc, TC_GCC_PATCHES_DIR);
        int prc = patch_apply_dir(cx, "toolchain.gcc_patches", pd, src);
        free(pd);
        if (prc != 0) {
            free(src);
            return NULL;
        }
    }
    s->gcc.src = xstrdup(src);
    return src;
}

/* The libc stage's sysroot copied into the prefix (hard links), where
 * --with-sysroot finds it relative to the compiler. */
static int sysroot_step(const struct stage_ctx *cx, void *arg)
{
    const struct g2_state *s = arg;
    char *from = path_join(cx_dep(cx, s->libc), "sysroot"), *to = path_join(cx->out, "sysroot");
    double t0 = now_seconds();
    int rc = 0;
    if (copy_tree(from, to, true) < 0)
        rc = cx_fail(cx, "cannot copy %s into %s: %s", from, to, strerror(errno));
    else
        cx_log(cx, "sysroot-copy: %.1f s", now_seconds() - t0);
    free(from);
    free(to);
    return rc;
}

static int binutils_step(const struct stage_ctx *cx, void *arg)
{
    const struct g2_state *s = arg;
    return tc_link_binutils_from(cx, s->tc, cx->out, s->target);
}

static int check_step(const struct stage_ctx *cx, void *arg)
{
    struct g2_state *s = arg;
    bool cxx = s->gcc.cxx;
    if (tc_check_compiler(cx, s->rkey, "the stage-2 build", cx->out, s->target, &s->pr) != 0 ||
        check_hello(cx, s->rkey, s->target, s->libc, false, s->details) != 0 ||
        (cxx && check_hello(cx, s->rkey, s->target, s->libc, true, s->details) != 0) ||
        runtime_libgcc(cx, s->rkey, s->target) != 0 ||
        (cxx && runtime_libstdcxx(cx, s->rkey, s->target, s->details) != 0))
        return 1;
    return 0;
}

static const struct pkg_source sources[] = {
    {.name = "gcc", .get = get_gcc},
    {0},
};

/* The sysroot and stage 1's binutils into the prefix, stage 1's GCC steps
 * with the C library, then the checks (above). */
static const struct pkg_step steps[] = {
    {.label = "sysroot", .fn = sysroot_step},
    {.label = "binutils", .fn = binutils_step},
    {.label = "gcc", .sub = tc_gcc_steps},
    {.label = "check", .fn = check_step},
    {0},
};

static const struct pkg_file no_files[] = {{0}};

static const struct pkg_desc desc = {
    .what = "gcc stage 2", .sources = sources, .steps = steps, .install = no_files,
    .setup_env = tc_gcc_setup_env, .var = tc_gcc_var, .list = tc_gcc_list,
};

/* configure's arguments: the prefix, the target, the sysroot, stage 2's
 * flags (with C++ when asked), the C library's version, the recipe's. */
static void stage2_configure(const struct stage_ctx *cx, struct g2_state *s)
{
    struct strlist *f = &s->gcc.flags;
    strlist_pushf(f, "--prefix=%s", cx->out);
    strlist_pushf(f, "--target=%s", s->target);
    strlist_pushf(f, "--with-sysroot=%s/sysroot", cx->out);
    bool cxx = s->gcc.cxx;
    for (size_t i = 0; stage2_flags[i]; i++) {
        if (cxx && strcmp(stage2_flags[i], "--disable-libstdcxx") == 0)
            continue;
        strlist_push(f, cxx && strcmp(stage2_flags[i], "--enable-languages=c") == 0
                            ? "--enable-languages=c,c++"
                            : stage2_flags[i]);
    }
    /* the precompiled <bits/stdc++.h> is build time and 100s of MB, for
     * nothing a package build uses */
    if (cxx)
        strlist_push(f, "--disable-libstdcxx-pch");
    /* what gcc would read from the sysroot's features.h; stage 1 names it
     * too, so both configure the host compiler alike (tc_gcc_setup_env) */
    unsigned gmaj, gmin;
    if (s->libc_version && sscanf(s->libc_version, "%u.%u", &gmaj, &gmin) == 2)
        strlist_pushf(f, "--with-glibc-version=%u.%u", gmaj, gmin);
    cx_list(cx, "configure", f);
}

static int run(struct stage_ctx *cx)
{
    struct g2_state s = {.rkey = xasprintf("packages.%s", cx->name), .libc = cx_str(cx, "libc"),
                         .tc = cx_dep(cx, "toolchain"), .details = json_object_new_object()};
    s.gcc = (struct tc_gcc){.rkey = s.rkey, .host_cflags = host_cflags_of(cx->st),
                            .cxx = wants_cxx(cx_str(cx, "languages")) == 1};
    char *sysroot_from = path_join(cx_dep(cx, s.libc), "sysroot");
    int rc = 1;

    if (!(s.target = tc_read_target(cx, s.tc)))
        goto out;
    if (!is_dir(sysroot_from)) {
        cx_fail(cx, "%s.libc: stage %s has no sysroot/ (%s): name a C library stage (kind "
                "glibc or debian-libc)", s.rkey, s.libc, sysroot_from);
        goto out;
    }
    char *vf = path_join(cx_dep(cx, s.libc), "version");
    size_t vn = 0;
    if (read_file(vf, &s.libc_version, &vn) == 0)
        s.libc_version[strcspn(s.libc_version, "\n")] = 0;
    free(vf);
    stage2_configure(cx, &s);
    if (pkg_build(cx, &desc, &s))
        goto out;
    json_object_object_add(s.details, "stage", json_object_new_int(2));
    json_add_str(s.details, "libc", s.libc);
    json_add_str(s.details, "libc_version", s.libc_version);
    json_add_str(s.details, "gcc_source", path_basename(s.tarball));
    tc_manifest_sha256(cx, s.details, "gcc_sha256", s.tarball);
    rc = tc_finish(cx, s.target, &s.pr, s.details);
    s.details = NULL;
out:
    tc_probe_free(&s.pr);
    tc_gcc_free(&s.gcc);
    json_object_put(s.details);
    free(s.rkey);
    free(s.target);
    free(s.tarball);
    free(s.libc_version);
    free(sysroot_from);
    return rc;
}

/* What the stage is, for the report, the SBOM and a minimal root (stage.h):
 * the root gets its runtime (libgcc_s). */
static const struct stage_component made[] = {
    {.name = "gcc (stage 2)", .version = "gcc_version", .source = "gcc_source",
     .sha256 = "gcc_sha256", .licence = "GPL-3.0-or-later WITH GCC-exception-3.1",
     .role = COMPONENT_ROOT, .root_name = "gcc", .root_version = {"gcc_version"}},
    {0},
};

const struct stage_kind stage_gcc_stage2 = {
    .name = "gcc",
    .section = "packages",
    .version = 2, /* not bumped for dropping the step times from the manifest:
                     * no input decided them (docs/engine.md) */
    .summary = "GCC stage 2 (C, optionally C++ and libstdc++; shared libgcc, POSIX threads) "
               "against a C library stage's sysroot",
    .fields = fields,
    .tools = tools,
    .outputs = outputs,
    .components = made,
    .late_fields = late_fields,
    .declare = declare,
    .run = run,
    .cost_hint = 500,
};
