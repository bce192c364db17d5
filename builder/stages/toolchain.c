/* toolchain: the cross compiler for the recipe's architecture.
 *
 * kind "build": builds a GCC stage 1 (C only, no libc: enough for kernels,
 * boot loaders and freestanding code) from a GCC source tarball (`gcc`: a
 * path or a URL with `gcc_sha256`) into the stage's output directory, which
 * becomes the toolchain prefix. binutils = "system" uses the host's
 * TARGET-as, TARGET-ld, ... (Debian's binutils-ia64-linux-gnu), symlinked
 * into the prefix (bin/TARGET-X and TARGET/bin/X) so that everything is
 * reachable under it; otherwise `binutils` is a binutils source tarball (path
 * or URL with `binutils_sha256`) built first into the same prefix.
 * The build is a table over the generic package build (pkg_build.h): the
 * two sources, binutils' steps (configure, make, make install-strip) when it
 * is built here, then the GCC steps both GCC kinds share (tc_gcc_steps:
 * those of bench/ia64-toolchain-by-hand.sh: configure, make all-gcc, make
 * all-target-libgcc, make install-strip-gcc install-target-libgcc, with
 * MAKEINFO=true and gcc/s-tm-texi touched, as Debian's dfsg tarball has no
 * generated docs), then the check. make runs under the engine's jobserver
 * (MAKEFLAGS).
 *
 * kind "external": an existing toolchain, either a prefix directory
 * (`prefix`, copied into the cache) or a tarball (`tarball`, a path or a URL
 * with `sha256`) unpacked with libarchive; a tarball holding a single
 * top-level directory is taken to be that directory.
 *
 * Both kinds check the result before it is cached: TARGET-gcc must compile
 * and link a tiny freestanding program, and the ELF header of that program
 * must name the recipe's machine (e_machine 50, EM_IA_64, for ia64). A
 * compiler for another architecture is refused.
 *
 * Outputs: bin/TARGET-gcc (and the rest of the prefix), `target` (the GNU
 * triplet and a newline: downstream stages use
 * cx_dep(cx, "toolchain")/bin/TARGET- as CROSS_COMPILE), stage-manifest.json
 * ("gcc_version", "gcc_source" and "gcc_sha256" of kind build, "binutils" (a
 * tarball's name, with "binutils_sha256", or "system") and "binutils_version";
 * for system binutils the Debian package that holds
 * TARGET-as, "binutils_package" and "binutils_debian_version").
 * Key: the settings, the source tarballs' content (st_input_file), the host's
 * gcc, g++ and make (st_tool) and, for system binutils, TARGET-as and TARGET-ld. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/archive.h"
#include "formats/binfmt.h"
#include "drivers/launcher.h"
#include "base/sha256.h"
#include "drivers/fetch.h"
#include "base/run_command.h"
#include "stage.h"
#include "patch_apply.h"
#include "toolchain.h"

/* The default configure flags (environment.md, "Measured by hand"). */
#define GCC_DEFAULT_FLAGS                                                        \
    "--enable-languages=c --without-headers --with-newlib --disable-shared "     \
    "--disable-threads --disable-multilib --disable-bootstrap --disable-nls "    \
    "--disable-libssp --disable-libquadmath --disable-libgomp "                  \
    "--disable-libatomic --disable-libitm --disable-libvtv "                     \
    "--disable-libsanitizer --disable-libstdcxx --disable-lto "                  \
    "--with-glibc-version=2.36"

static const char *const gcc_default_flags[] = {
    "--enable-languages=c", "--without-headers", "--with-newlib", "--disable-shared",
    "--disable-threads", "--disable-multilib", "--disable-bootstrap", "--disable-nls",
    "--disable-libssp", "--disable-libquadmath", "--disable-libgomp", "--disable-libatomic",
    "--disable-libitm", "--disable-libvtv", "--disable-libsanitizer", "--disable-libstdcxx",
    /* no lto1, lto-dump or LTO plugin: nothing Trillian builds uses -flto,
     * and both gcc stages would compile and link them */
    "--disable-lto",
    /* the glibc the from-source root builds (2.36): gcc then configures
     * its host part exactly as stage 2 will (see tc_gcc_setup_env) */
    "--with-glibc-version=2.36",
    NULL,
};

/* The binutils programs linked into the prefix for binutils = "system". */
static const char *const binutils_progs[] = {
    "addr2line", "ar", "as", "c++filt", "elfedit", "ld", "ld.bfd", "nm", "objcopy",
    "objdump", "ranlib", "readelf", "size", "strings", "strip", NULL,
};

static const struct field build_fields[] = {
    {"gcc", F_STRING, true, NULL, NULL,
     "GCC source tarball: a path (relative to the recipe) or an http(s) URL"},
    {"gcc_sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the GCC tarball (required for a URL, checked for a path)"},
    {"binutils", F_STRING, false, NULL, "system",
     "\"system\" (the host's TARGET-as, TARGET-ld, ...) or a binutils source tarball "
     "(path or URL)"},
    {"binutils_sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the binutils tarball (required for a URL)"},
    {"gcc_patches", F_INPUT_LIST, false, NULL, NULL,
     "patches applied to GCC in order with patch -p1 (paths, or downloads pinned by sha256: "
     "{ url = \"https://...\"; sha256 = \"...\"; }); the stage-2 gcc applies them too"},
    {"binutils_patches", F_INPUT_LIST, false, NULL, NULL,
     "patches applied to a binutils tarball in order with patch -p1 (paths or pinned "
     "downloads)"},
    {"target", F_STRING, false, NULL, NULL,
     "GNU target triplet (default from arch: ia64-linux-gnu, x86_64-linux-gnu)"},
    {"configure_flags", F_STRING_LIST, false, NULL, GCC_DEFAULT_FLAGS,
     "GCC configure flags besides --prefix and --target (replace the defaults)"},
    {"extra_configure_flags", F_STRING_LIST, false, NULL, NULL,
     "GCC configure flags added after configure_flags"},
    {"host_cflags", F_STRING, false, NULL, "-O2",
     "CFLAGS and CXXFLAGS for compiling GCC's own programs (cc1, the driver; not libgcc, "
     "which keeps GCC's flags). \"-O1\" built gcc 12.2 stage 1 in 15% less CPU time and the "
     "compiler then ran 9% slower (docs/testing.md); it emits the same code either way. The "
     "gcc kind (stage 2) takes them too, so that it finds stage 1's objects in ccache"},
    {0},
};

static const struct field external_fields[] = {
    {"prefix", F_PATH, false, NULL, NULL,
     "an installed toolchain: the directory holding bin/TARGET-gcc"},
    {"tarball", F_STRING, false, NULL, NULL,
     "a toolchain tarball (path or URL) whose root, or single top directory, is the prefix"},
    {"sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the tarball (required for a URL, checked for a path)"},
    {"target", F_STRING, false, NULL, NULL,
     "GNU target triplet (default from arch: ia64-linux-gnu, x86_64-linux-gnu)"},
    {0},
};

/* Added after the kind shipped: in the key only when set (stage.h). */
static const char *const build_late_fields[] = {"gcc_patches", "binutils_patches",
                                                "host_cflags", NULL};

static const char *const build_tools[] = {"gcc", "g++", "make", NULL};
static const char *const toolchain_outputs[] = {"target", NULL};

/* ---- small helpers ----------------------------------------------------- */

bool tc_is_url(const char *s)
{
    return str_starts(s, "http://") || str_starts(s, "https://") || str_starts(s, "ftp://");
}

static bool is_sha256(const char *s)
{
    if (!s || strlen(s) != 64)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

const char *tc_default_target(const char *arch)
{
    if (arch && strcmp(arch, "ia64") == 0)
        return "ia64-linux-gnu";
    if (arch && strcmp(arch, "amd64") == 0)
        return "x86_64-linux-gnu";
    return NULL;
}

static const char *target_of(const struct stage *st)
{
    const char *t = st_str(st, "target");
    return t ? t : tc_default_target(st_arch(st));
}

/* ELF e_machine the recipe's arch needs, and names for messages. */
int tc_arch_machine(const char *arch)
{
    if (arch && strcmp(arch, "ia64") == 0)
        return 50; /* EM_IA_64 */
    if (arch && strcmp(arch, "amd64") == 0)
        return 62; /* EM_X86_64 */
    return -1;
}

static char *first_line(char *s)
{
    if (!s)
        return xstrdup("");
    s[strcspn(s, "\n")] = 0;
    return s;
}

/* Plan-time checks of a source given as path-or-URL plus an optional hash.
 * A local path enters the key by content. */
void tc_declare_source(struct stage *st, const char *key, const char *shakey)
{
    char *p = st_path(st, key);
    tc_declare_source_value(st, key, shakey, st_str(st, key), p, st_str(st, shakey));
    free(p);
}

void tc_declare_source_value(struct stage *st, const char *key, const char *shakey,
                             const char *v, const char *path, const char *sha)
{
    if (!v)
        return;
    if (sha && !is_sha256(sha)) {
        st_error(st, shakey, "'%s' is not a SHA-256 (expected 64 lowercase hex digits)", sha);
        return;
    }
    if (tc_is_url(v)) {
        if (!sha)
            st_error(st, shakey, "is required when %s is a URL (%s): give the tarball's "
                     "SHA-256 so the download can be checked", key, v);
        else
            st_remote(st, shakey, v, NULL, sha);
        return; /* the URL and its hash are settings, hence in the key */
    }
    if (!path_exists(path) || is_dir(path))
        st_error(st, key, "%s is not a file (expected a tarball path relative to the "
                 "recipe, or an http(s) URL)", path);
    else
        st_input_file(st, key, path);
}

/* Run time: the local file for a path-or-URL setting, downloaded into
 * CACHE/downloads/toolchain/ when it is a URL, and its hash checked. New
 * string or NULL (after cx_fail). */
char *tc_get_source(const struct stage_ctx *cx, const char *rkey, const char *setting,
                    const char *shasetting)
{
    char *p = cx_path(cx, setting);
    char *r = tc_get_source_value(cx, rkey, setting, shasetting, cx_str(cx, setting), p,
                                  cx_str(cx, shasetting));
    free(p);
    return r;
}

char *tc_get_source_value(const struct stage_ctx *cx, const char *rkey, const char *setting,
                          const char *shasetting, const char *v, const char *path,
                          const char *sha)
{
    char key[160], shakey[160], hex[65] = "?";
    snprintf(key, sizeof key, "%s.%s", rkey, setting);
    snprintf(shakey, sizeof shakey, "%s.%s", rkey, shasetting);
    if (!tc_is_url(v)) {
        char *p = xstrdup(path);
        if (sha) {
            if (sha256_file(p, hex) < 0) {
                cx_fail(cx, "%s: cannot read %s: %s", key, p, strerror(errno));
                free(p);
                return NULL;
            }
            if (strcmp(hex, sha) != 0) {
                cx_fail(cx, "%s: %s has SHA-256 %s, but %s says %s (fix %s or the file)",
                        key, p, hex, shakey, sha, shakey);
                free(p);
                return NULL;
            }
        }
        return p;
    }
    /* a URL: from the cache, a mirror or its origin (fetch.h) */
    char *where = st_isset(cx->st, shasetting) ? cx_where(cx, shasetting) : xstrdup(shakey);
    char *file = fetch_pinned(cx, v, NULL, sha, where);
    free(where);
    return file;
}

void tc_manifest_sha256(const struct stage_ctx *cx, json_object *m, const char *key,
                        const char *file)
{
    char hex[65];
    if (file && sha256_file(file, hex) == 0)
        json_add_str(m, key, hex);
    else
        cx_log(cx, "cannot hash %s for the manifest: %s", file ? file : "?", strerror(errno));
}

/* Unpacks TARBALL into DIR (created) with libarchive; returns the directory
 * holding the content: DIR's single subdirectory if that is all it has, else
 * DIR. New string or NULL (after cx_fail). */
char *tc_unpack(const struct stage_ctx *cx, const char *rkey, const char *setting,
                const char *tarball, const char *dir)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", rkey, setting);
    char err[ARC_ERRLEN];
    double t0 = now_seconds();
    if (mkdir_p(dir, 0755) < 0) {
        cx_fail(cx, "%s: cannot create %s: %s", key, dir, strerror(errno));
        return NULL;
    }
    cx_log(cx, "unpacking %s", tarball);
    if (arc_extract(tarball, dir, ARC_X_NO_OWNERS, NULL, err) < 0) {
        cx_fail(cx, "%s: cannot unpack %s: %s (expected a tar archive, optionally "
                "compressed)", key, tarball, err);
        return NULL;
    }
    cx_log(cx, "unpacked in %.1f s", now_seconds() - t0);
    /* A single top-level directory (gcc-12.2.0/) is the content. */
    char *only = NULL;
    int entries = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        entries++;
        free(only);
        only = path_join(dir, e->d_name);
    }
    if (d)
        closedir(d);
    if (entries != 1 || !is_dir(only)) {
        free(only);
        only = NULL;
    }
    return only ? only : xstrdup(dir);
}

/* Debian's gcc-N orig tarball wraps the source: gcc-16-16.2.0/ holds
 * gcc-16.2.0-dfsg.tar.xz beside newlib's. A tree with no configure whose
 * only gcc-*.tar.* member is such a tarball is unpacked once more. */
static char *unpack_gcc(const struct stage_ctx *cx, const char *rkey, const char *key,
                        const char *tarball, const char *dir)
{
    char *src = tc_unpack(cx, rkey, key, tarball, dir);
    if (!src)
        return NULL;
    char *conf = path_join(src, "configure");
    bool plain = path_exists(conf);
    free(conf);
    if (plain)
        return src;
    struct strlist names = {0};
    char *inner = NULL;
    size_t n = 0;
    if (dir_list(src, &names) == 0)
        for (size_t i = 0; i < names.n; i++)
            if (str_starts(names.v[i], "gcc-") && strstr(names.v[i], ".tar.")) {
                n++;
                free(inner);
                inner = path_join(src, names.v[i]);
            }
    strlist_free(&names);
    char *r = NULL;
    if (n != 1) {
        cx_fail(cx, "%s.%s: %s has no configure at its top and %s gcc-*.tar.* inside "
                "(expected a GCC source tarball, or Debian's gcc-N orig tarball that wraps "
                "one)", rkey, key, path_basename(tarball), n ? "more than one" : "no");
    } else {
        cx_log(cx, "%s wraps %s: unpacking that", path_basename(tarball),
               path_basename(inner));
        char *d2 = xasprintf("%s-inner", dir);
        r = tc_unpack(cx, rkey, key, inner, d2);
        free(d2);
    }
    free(inner);
    free(src);
    return r;
}

char *tc_unpack_gcc(const struct stage_ctx *cx, const char *rkey, const char *key,
                    const char *tarball)
{
    double t0 = now_seconds();
    char *dir = path_join(cx->work, "gcc-src");
    char *r = unpack_gcc(cx, rkey, key, tarball, dir);
    free(dir);
    if (r)
        cx_log(cx, "gcc-unpack: %.1f s", now_seconds() - t0);
    return r;
}

int tc_run_step(const struct stage_ctx *cx, const char *cwd, const char *const *env,
                const char *const *argv, const char *step)
{
    double t0 = now_seconds();
    int rc = cx_run_in(cx, cwd, env, argv);
    cx_log(cx, "%s: %.1f s (exit %d)", step, now_seconds() - t0, rc);
    return rc;
}

/* ---- the check both kinds share ---------------------------------------- */

/* Compiles and links a freestanding program with PREFIX/bin/TARGET-gcc and
 * reads the machine from its ELF header. Returns 0 if it is the arch's. */
int tc_check_compiler(const struct stage_ctx *cx, const char *key, const char *origin,
                          const char *prefix, const char *target, struct tc_probe *pr)
{
    *pr = (struct tc_probe){.machine = -1};
    int want = tc_arch_machine(cx->arch);
    char *gcc = xasprintf("%s/bin/%s-gcc", prefix, target);
    char *src = path_join(cx->work, "trillian-probe.c");
    char *exe = path_join(cx->work, "trillian-probe");
    int rc = 1;
    static const char probe_c[] =
        "/* Trillian toolchain probe: freestanding, no libc. */\n"
        "int trillian_probe_data = 42;\n"
        "void _start(void)\n{\n    for (;;)\n        ;\n}\n";
    if (access(gcc, X_OK) < 0) {
        cx_fail(cx, "%s: %s is not an executable file (expected the toolchain's C compiler "
                "as bin/%s-gcc under its prefix)", key, gcc, target);
        goto out;
    }
    if (cx_write_in(cx, cx->work, "trillian-probe.c", probe_c, sizeof probe_c - 1, 0644))
        goto out;
    const char *cc[] = {gcc, "-ffreestanding", "-nostdlib", "-static", "-O2",
                        "-o", exe, src, NULL};
    if (cx_run(cx, cc) != 0) {
        cx_fail(cx, "%s: %s cannot compile and link a freestanding C program (see the log "
                "above): the toolchain is incomplete (no assembler or linker under its "
                "prefix?)", key, gcc);
        goto out;
    }
    unsigned char h[64];
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, h, sizeof h) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 20 || memcmp(h, "\177ELF", 4) != 0 || (h[5] != 1 && h[5] != 2)) {
        cx_fail(cx, "%s: %s produced %s, which is not an ELF file", key, gcc, exe);
        goto out;
    }
    pr->machine = h[5] == 1 ? (h[18] | h[19] << 8) : (h[18] << 8 | h[19]);
    const char *ver[] = {gcc, "-dumpversion", NULL};
    const char *mach[] = {gcc, "-dumpmachine", NULL};
    char *o = NULL;
    if (cx_capture(cx, ver, &o) == 0)
        pr->version = first_line(o);
    else
        free(o);
    o = NULL;
    if (cx_capture(cx, mach, &o) == 0)
        pr->dumpmachine = first_line(o);
    else
        free(o);
    if (pr->machine != want) {
        cx_fail(cx, "%s: refusing the toolchain from %s: its bin/%s-gcc makes %s code (ELF "
                "e_machine %d, -dumpmachine %s), but arch \"%s\" needs %s (e_machine %d). "
                "Point %s at an %s cross toolchain, or use kind = \"build\"",
                key, origin, target, binfmt_elf_machine_name(pr->machine), pr->machine,
                pr->dumpmachine ? pr->dumpmachine : "?", cx->arch, binfmt_elf_machine_name(want), want,
                key, target);
        goto out;
    }
    cx_log(cx, "%s: ok, compiles and links %s code (ELF e_machine %d), gcc %s, %s", gcc,
           binfmt_elf_machine_name(pr->machine), pr->machine, pr->version ? pr->version : "?",
           pr->dumpmachine ? pr->dumpmachine : "?");
    rc = 0;
out:
    unlink(exe);
    free(gcc);
    free(src);
    free(exe);
    return rc;
}

int tc_finish(const struct stage_ctx *cx, const char *target, const struct tc_probe *pr,
              json_object *kind_details)
{
    char *t = xasprintf("%s\n", target);
    int rc = cx_write(cx, "target", t, strlen(t));
    free(t);
    json_object *m = json_object_new_object();
    json_add_str(m, "target", target);
    json_object_object_add(m, "e_machine", json_object_new_int(pr->machine));
    json_add_str(m, "gcc_version", pr->version);
    json_add_str(m, "dumpmachine", pr->dumpmachine);
    if (kind_details) {
        json_object_object_foreach(kind_details, k, v)
            json_object_object_add(m, k, json_object_get(v));
        json_object_put(kind_details);
    }
    if (rc == 0)
        return cx_write_manifest(cx, m);
    json_object_put(m);
    return rc;
}

void tc_probe_free(struct tc_probe *pr)
{
    free(pr->version);
    free(pr->dumpmachine);
}

/* Both kinds: the target triplet, and an ELF machine to check it against.
 * NULL after a recipe error. */
static const char *declare_target(struct stage *st)
{
    const char *target = target_of(st);
    if (!target) {
        st_error(st, "target", "no default target for arch \"%s\": set target", st_arch(st));
        return NULL;
    }
    if (tc_arch_machine(st_arch(st)) < 0) {
        st_error(st, NULL, "arch \"%s\" has no known ELF machine to check the toolchain "
                 "against", st_arch(st));
        return NULL;
    }
    return target;
}

/* PATH as seen from DIR (both absolute): "../gcc-src/gcc-12.2.0/configure"
 * from work/gcc-obj. Otherwise PATH itself. */
static char *relative_to(const char *dir, const char *path)
{
    if (dir[0] != '/' || path[0] != '/')
        return xstrdup(path);
    size_t common = 0; /* length of the shared leading components */
    for (size_t i = 0;; i++) {
        bool dend = dir[i] == 0 || dir[i] == '/', pend = path[i] == 0 || path[i] == '/';
        if (dend && pend)
            common = i;
        if (dir[i] != path[i] || !dir[i] || !path[i])
            break;
    }
    struct buf b = BUF_INIT;
    for (const char *c = dir + common; *c; c++)
        if (*c == '/' && c[1] && c[1] != '/')
            buf_puts(&b, "../");
    buf_puts(&b, path[common] == '/' ? path + common + 1 : path + common);
    return buf_detach(&b);
}

/* Stage 1 and stage 2 configure GCC with the same host configuration
 * (auto-host.h and tm.h are equal when stage 1 names the glibc version
 * stage 2 builds against: only configargs.h and the few files that carry
 * the prefix or sysroot differ), so the host compiler's objects are the
 * same. Both builds go through one ccache under the cache, off the key:
 * stage 2 compiles little beyond those files. The build directories have
 * the same layout below cx->work, which CCACHE_BASEDIR makes relative.
 * Without ccache on PATH both build everything, with the same result.
 * With distcc hosts set (launcher.h), ccache hands its misses to distcc. */
void tc_gcc_setup_env(const struct stage_ctx *cx, struct strlist *env, void *arg)
{
    struct tc_gcc *g = arg;
    /* the prefix's bin/ first: the binutils linked or built into it */
    strlist_push_owned(env, run_path_env("%s/bin", cx->out));
    char *launch = launcher_prefix(cx, "gcc", cx->work, true, env);
    if (!launch) {
        cx_log(cx, "no ccache (not on PATH, or TRILLIAN_CCACHE=0): the compiler is built "
                   "without it");
    } else {
        g->cc = xasprintf("%s gcc", launch);
        g->cxx_cmd = xasprintf("%s g++", launch);
    }
    free(launch);
    /* configure by a relative path: gcc writes its srcdir into generated
     * headers (tm-preds.h names the .md file it read), and an absolute one
     * differs between the two stages' scratch directories, so that ccache
     * could not find stage 1's objects for stage 2 without preprocessing. */
    char *obj = path_join(cx->work, "gcc-obj"), *conf = path_join(g->src, "configure");
    g->configure = relative_to(obj, conf);
    free(obj);
    free(conf);
}

const char *tc_gcc_var(void *arg, const char *name)
{
    const struct tc_gcc *g = arg;
    /* The host compiler's objects without debug info: the installed
     * programs are stripped anyway, and -g costs about a fifth of the
     * compile time. Target libraries keep gcc's own default flags. */
    return !strcmp(name, "host_cflags") ? (g->host_cflags ? g->host_cflags : "-O2")
         : !strcmp(name, "gcc_configure") ? g->configure
         : !strcmp(name, "gcc_cc") ? g->cc
         : !strcmp(name, "gcc_cxx") ? g->cxx_cmd
         : !strcmp(name, "cxx") ? (g->cxx ? "c++" : NULL)
         : !strcmp(name, "cxx_install") ? (g->cxx ? "install-target-libstdc++-v3" : NULL)
         : !strcmp(name, "gcc_rkey") ? g->rkey : NULL;
}

const struct strlist *tc_gcc_list(void *arg, const char *name)
{
    const struct tc_gcc *g = arg;
    return !strcmp(name, "gcc_flags") ? &g->flags : NULL;
}

void tc_gcc_free(struct tc_gcc *g)
{
    strlist_free(&g->flags);
    free(g->src);
    free(g->configure);
    free(g->cc);
    free(g->cxx_cmd);
}

/* Debian's dfsg tarball lacks the generated docs: without this stamp the
 * install regenerates tm.texi and fails. */
static int stamp_tm_texi(const struct stage_ctx *cx, void *arg)
{
    (void)arg;
    char *stamp = path_join(cx->work, "gcc-obj/gcc/s-tm-texi");
    int fd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        futimens(fd, NULL);
        close(fd);
    }
    free(stamp);
    return 0;
}

/* Documentation is not part of a cross toolchain's output. */
static int drop_share(const struct stage_ctx *cx, void *arg)
{
    (void)arg;
    char *share = path_join(cx->out, "share");
    rm_rf(share);
    free(share);
    return 0;
}

/* GCC's own programs get host_cflags and the shared ccache; binutils, built
 * before them in the toolchain stage, neither. */
static const char *const gcc_env[] = {"CFLAGS=${kind:host_cflags}",
                                      "CXXFLAGS=${kind:host_cflags}", "?CC=${kind:gcc_cc}",
                                      "?CXX=${kind:gcc_cxx}", NULL};
static const char *const gcc_configure[] = {"${kind:gcc_configure}", "${kindlist:gcc_flags}",
                                            NULL};
static const char *const all_gcc[] = {"make", "all-gcc", "MAKEINFO=true", NULL};
static const char *const all_libgcc[] = {"make", "all-target-libgcc", "MAKEINFO=true", NULL};
static const char *const all_libstdcxx[] = {"make", "all-target-libstdc++-v3", "MAKEINFO=true",
                                            NULL};
/* Stripped host programs: 73 MB instead of 594 MB for ia64. */
static const char *const install_gcc[] = {"make", "install-strip-gcc", "install-target-libgcc",
                                          "MAKEINFO=true", "?${kind:cxx_install}", NULL};

const struct pkg_step tc_gcc_steps[] = {
    {.label = "configure", .cwd = "${work}/gcc-obj", .argv = gcc_configure, .env = gcc_env,
     .hint = "GCC's configure: see ${work}/gcc-obj/config.log, and check the ${kind:gcc_rkey} "
             "settings"},
    {.label = "make-all-gcc", .cwd = "${work}/gcc-obj", .argv = all_gcc, .env = gcc_env},
    {.label = "make-all-target-libgcc", .cwd = "${work}/gcc-obj", .argv = all_libgcc,
     .env = gcc_env},
    /* only with C++: libstdc++ needs the shared libgcc above */
    {.label = "make-all-target-libstdc++-v3", .cwd = "${work}/gcc-obj", .argv = all_libstdcxx,
     .env = gcc_env, .when = "${kind:cxx}"},
    {.label = "tm-texi", .fn = stamp_tm_texi},
    {.label = "install", .cwd = "${work}/gcc-obj", .argv = install_gcc, .env = gcc_env},
    {.label = "share", .fn = drop_share},
    {0},
};

void tc_make_argv(const struct stage_ctx *cx, struct strlist *argv, const char *const *args)
{
    strlist_push(argv, "make");
    const char *mf = getenv("MAKEFLAGS");
    bool js = mf && (strstr(mf, "--jobserver-auth") || strstr(mf, "--jobserver-fds"));
    if (!js && cx->jobs > 0)
        strlist_pushf(argv, "-j%d", cx->jobs);
    for (size_t i = 0; args && args[i]; i++)
        strlist_push(argv, args[i]);
}

char *tc_read_target(const struct stage_ctx *cx, const char *toolchain_dir)
{
    char *f = path_join(toolchain_dir, "target"), *t = NULL;
    size_t n = 0;
    if (read_file(f, &t, &n) < 0) {
        cx_fail(cx, "cannot read %s: %s (the toolchain stage's outputs are incomplete: "
                "rebuild it)", f, strerror(errno));
        free(f);
        return NULL;
    }
    free(f);
    t[strcspn(t, "\n")] = 0;
    return t;
}

int tc_link_binutils_from(const struct stage_ctx *cx, const char *from, const char *prefix,
                          const char *target)
{
    char *bin = path_join(prefix, "bin");
    char *tbin = xasprintf("%s/%s/bin", prefix, target);
    char *real_from = realpath(from, NULL);
    int rc = 0;
    if (mkdir_p(bin, 0755) < 0 || mkdir_p(tbin, 0755) < 0 || !real_from) {
        rc = cx_fail(cx, "cannot create %s (or resolve %s): %s", tbin, from, strerror(errno));
        goto out;
    }
    for (size_t i = 0; binutils_progs[i] && !rc; i++) {
        char *name = xasprintf("%s-%s", target, binutils_progs[i]);
        char *src = xasprintf("%s/bin/%s", from, name);
        char *real = realpath(src, NULL);
        char *l1 = path_join(bin, name), *l2 = path_join(tbin, binutils_progs[i]);
        if (!real) {
            if (!strcmp(binutils_progs[i], "as") || !strcmp(binutils_progs[i], "ld"))
                rc = cx_fail(cx, "the toolchain at %s has no bin/%s (rebuild the toolchain "
                             "stage)", from, name);
        } else if (str_starts(real, real_from) && real[strlen(real_from)] == '/') {
            /* built into the toolchain's prefix: a copy, the cache may prune it */
            if (copy_file(real, l1) < 0 || copy_file(real, l2) < 0)
                rc = cx_fail(cx, "cannot copy %s into %s: %s", real, prefix, strerror(errno));
        } else if (symlink(real, l1) < 0 || symlink(real, l2) < 0) {
            rc = cx_fail(cx, "cannot link %s into %s: %s", real, prefix, strerror(errno));
        }
        free(name);
        free(src);
        free(real);
        free(l1);
        free(l2);
    }
out:
    free(real_from);
    free(bin);
    free(tbin);
    return rc;
}

/* ---- kind "build" ------------------------------------------------------- */

static int build_declare(struct stage *st)
{
    const char *target = declare_target(st);
    if (!target)
        return -1;
    tc_declare_source(st, "gcc", "gcc_sha256");
    const char *bu = st_str(st, "binutils");
    if (!bu || strcmp(bu, "system") == 0) {
        char *as = xasprintf("%s-as", target), *ld = xasprintf("%s-ld", target);
        st_tool(st, as);
        st_tool(st, ld);
        free(as);
        free(ld);
        if (st_isset(st, "binutils_patches"))
            st_error(st, "binutils_patches", "patches need binutils built here: set binutils "
                     "to a binutils source tarball (path or URL with binutils_sha256), or "
                     "drop binutils_patches");
    } else {
        tc_declare_source(st, "binutils", "binutils_sha256");
    }
    struct strlist l = {0};
    st_list(st, "configure_flags", &l);
    st_list(st, "extra_configure_flags", &l);
    for (size_t i = 0; i < l.n; i++)
        if (str_starts(l.v[i], "--prefix") || str_starts(l.v[i], "--target"))
            st_error(st, "configure_flags", "'%s': Trillian sets --prefix and --target itself "
                     "(use the target setting)", l.v[i]);
    strlist_free(&l);
    if (tc_is_url(st_str(st, "gcc") ? st_str(st, "gcc") : "") ||
        tc_is_url(bu ? bu : ""))
        st_tool(st, "curl");
    char *o = xasprintf("bin/%s-gcc", target);
    st_output(st, o);
    free(o);
    return 0;
}

/* Symlinks the host's TARGET-* binutils into PREFIX. */
/* The Debian package that holds the host's assembler AS, and its version,
 * into DETAILS ("binutils_package", "binutils_debian_version"): the report
 * says the toolchain's binutils came from it. Nothing on a host without
 * dpkg, or for an assembler no package owns. */
static void binutils_package(const struct stage_ctx *cx, const char *as, json_object *details)
{
    char *real = realpath(as, NULL), *o = NULL, *v = NULL;
    const char *q[] = {"dpkg-query", "-S", as, NULL};
    int rc = cx_capture(cx, q, &o);
    if (rc != 0 && real) {
        free(o);
        o = NULL;
        q[2] = real;
        rc = cx_capture(cx, q, &o);
    }
    /* "binutils-ia64-linux-gnu: /usr/bin/ia64-linux-gnu-as" */
    char *colon = rc == 0 && o ? strstr(o, ": ") : NULL;
    if (colon && !memchr(o, '\n', (size_t)(colon - o)) && !memchr(o, ',', (size_t)(colon - o))) {
        *colon = 0;
        const char *w[] = {"dpkg-query", "-W", "-f=${Version}", o, NULL};
        if (cx_capture(cx, w, &v) == 0 && v && *first_line(v)) {
            json_add_str(details, "binutils_package", o);
            json_add_str(details, "binutils_debian_version", first_line(v));
        }
    }
    free(v);
    free(o);
    free(real);
}

static int link_system_binutils(const struct stage_ctx *cx, const char *prefix,
                                const char *target, json_object *details)
{
    char *bin = path_join(prefix, "bin");
    char *tbin = xasprintf("%s/%s/bin", prefix, target);
    int rc = 0;
    if (mkdir_p(bin, 0755) < 0 || mkdir_p(tbin, 0755) < 0) {
        rc = cx_fail(cx, "cannot create %s: %s", tbin, strerror(errno));
        goto out;
    }
    for (size_t i = 0; binutils_progs[i]; i++) {
        char *name = xasprintf("%s-%s", target, binutils_progs[i]);
        char *found = run_find_program(name, NULL, 0);
        if (!found) {
            if (!strcmp(binutils_progs[i], "as") || !strcmp(binutils_progs[i], "ld"))
                rc = cx_fail(cx, "toolchain.binutils: %s is not on PATH (install "
                             "binutils-%s, or set toolchain.binutils to a binutils tarball)",
                             name, target);
            free(name);
            if (rc)
                goto out;
            continue;
        }
        char *l1 = path_join(bin, name);
        char *l2 = path_join(tbin, binutils_progs[i]);
        unlink(l1);
        unlink(l2);
        if (symlink(found, l1) < 0 || symlink(found, l2) < 0)
            rc = cx_fail(cx, "cannot link %s into %s: %s", found, prefix, strerror(errno));
        if (!strcmp(binutils_progs[i], "as")) {
            const char *v[] = {found, "--version", NULL};
            char *o = NULL;
            if (cx_capture(cx, v, &o) == 0) {
                json_add_str(details, "binutils_version", first_line(o));
            }
            free(o);
            binutils_package(cx, found, details);
        }
        free(l1);
        free(l2);
        free(name);
        free(found);
        if (rc)
            goto out;
    }
out:
    free(bin);
    free(tbin);
    return rc;
}

/* The build's state (pkg_build's ARG): the shared GCC steps' part first. */
struct tc_build {
    struct tc_gcc gcc;
    const char *target;
    const char *binutils;   /* the binutils tarball setting; NULL: the host's */
    json_object *bu, *gc;   /* the manifest's binutils and gcc keys, in that order */
    struct tc_probe pr;
};

static char *get_binutils(const struct stage_ctx *cx, void *arg)
{
    struct tc_build *s = arg;
    char *tarball = tc_get_source(cx, "toolchain", "binutils", "binutils_sha256");
    if (!tarball)
        return NULL;
    char *dir = path_join(cx->work, "binutils-src");
    char *src = tc_unpack(cx, "toolchain", "binutils", tarball, dir);
    free(dir);
    json_object *bp = json_object_new_array();
    if (src && patch_apply_setting(cx, "binutils_patches", src, NULL, bp) != 0) {
        free(src);
        src = NULL;
    }
    if (json_object_array_length(bp))
        json_object_object_add(s->bu, "binutils_patches", bp);
    else
        json_object_put(bp);
    json_add_str(s->bu, "binutils", path_basename(tarball));
    tc_manifest_sha256(cx, s->bu, "binutils_sha256", tarball);
    free(tarball);
    return src;
}

static char *get_gcc(const struct stage_ctx *cx, void *arg)
{
    struct tc_build *s = arg;
    char *tarball = tc_get_source(cx, "toolchain", "gcc", "gcc_sha256");
    if (!tarball)
        return NULL;
    json_add_str(s->gc, "gcc_source", path_basename(tarball));
    tc_manifest_sha256(cx, s->gc, "gcc_sha256", tarball);
    char *src = tc_unpack_gcc(cx, "toolchain", "gcc", tarball);
    free(tarball);
    if (!src)
        return NULL;
    /* kept in the output: the stage-2 gcc rebuilds this source with them */
    char *keep = path_join(cx->out, TC_GCC_PATCHES_DIR);
    json_object *gp = json_object_new_array();
    int prc = patch_apply_setting(cx, "gcc_patches", src, keep, gp);
    free(keep);
    if (json_object_array_length(gp))
        json_object_object_add(s->gc, "gcc_patches", gp);
    else
        json_object_put(gp);
    if (prc != 0) {
        free(src);
        return NULL;
    }
    s->gcc.src = xstrdup(src);
    return src;
}

static int link_step(const struct stage_ctx *cx, void *arg)
{
    struct tc_build *s = arg;
    json_add_str(s->bu, "binutils", "system");
    return link_system_binutils(cx, cx->out, s->target, s->bu);
}

static int check_step(const struct stage_ctx *cx, void *arg)
{
    struct tc_build *s = arg;
    return tc_check_compiler(cx, "toolchain.gcc", "the build", cx->out, s->target, &s->pr);
}

static const char *var(void *arg, const char *name)
{
    const struct tc_build *s = arg;
    return !strcmp(name, "target") ? s->target
         : !strcmp(name, "binutils_tarball") ? s->binutils
         : !strcmp(name, "system_binutils") ? (s->binutils ? NULL : "system")
         : tc_gcc_var(arg, name);
}

static const struct pkg_source sources[] = {
    {.name = "binutils", .get = get_binutils, .when = "${kind:binutils_tarball}"},
    {.name = "gcc", .get = get_gcc},
    {0},
};

static const char *const bu_configure[] = {
    "${src:binutils}/configure", "--prefix=${out}", "--target=${kind:target}", "--disable-nls",
    "--disable-werror", "--disable-gdb", "--disable-gdbserver", "--disable-sim",
    "--disable-readline", "--disable-libdecnumber", "--disable-gprofng", "--disable-multilib",
    NULL};
static const char *const bu_make[] = {"make", "MAKEINFO=true", NULL};
static const char *const bu_install[] = {"make", "install-strip", "MAKEINFO=true", NULL};

/* binutils first (the host's linked, or a tarball built into the prefix,
 * where GCC's configure finds TARGET-as), then GCC stage 1, then the check
 * every toolchain passes. */
static const struct pkg_step steps[] = {
    {.label = "binutils-link", .fn = link_step, .when = "${kind:system_binutils}"},
    {.label = "binutils-configure", .cwd = "${work}/binutils-obj", .argv = bu_configure,
     .when = "${src:binutils}",
     .hint = "binutils' configure: see ${work}/binutils-obj/config.log, and check "
             "toolchain.binutils and toolchain.target"},
    {.label = "binutils-make", .cwd = "${work}/binutils-obj", .argv = bu_make,
     .when = "${src:binutils}"},
    {.label = "binutils-install", .cwd = "${work}/binutils-obj", .argv = bu_install,
     .when = "${src:binutils}"},
    {.label = "gcc", .sub = tc_gcc_steps},
    {.label = "check", .fn = check_step},
    {0},
};

static const struct pkg_file no_files[] = {{0}};

static const struct pkg_desc desc = {
    .what = "the toolchain", .sources = sources, .steps = steps, .install = no_files,
    .setup_env = tc_gcc_setup_env, .var = var, .list = tc_gcc_list,
};

static int build_run(struct stage_ctx *cx)
{
    const char *bu = cx_str(cx, "binutils");
    struct tc_build s = {.gcc = {.rkey = "toolchain", .host_cflags = cx_str(cx, "host_cflags")},
                         .target = target_of(cx->st),
                         .binutils = bu && strcmp(bu, "system") ? bu : NULL,
                         .bu = json_object_new_object(), .gc = json_object_new_object()};
    strlist_pushf(&s.gcc.flags, "--prefix=%s", cx->out);
    strlist_pushf(&s.gcc.flags, "--target=%s", s.target);
    if (!st_isset(cx->st, "configure_flags"))
        for (size_t i = 0; gcc_default_flags[i]; i++)
            strlist_push(&s.gcc.flags, gcc_default_flags[i]);
    else
        cx_list(cx, "configure_flags", &s.gcc.flags);
    cx_list(cx, "extra_configure_flags", &s.gcc.flags);
    int rc = pkg_build(cx, &desc, &s);
    if (!rc) {
        json_object_object_foreach(s.gc, k, v)
            json_object_object_add(s.bu, k, json_object_get(v));
        rc = tc_finish(cx, s.target, &s.pr, s.bu);
        s.bu = NULL;
    }
    tc_probe_free(&s.pr);
    tc_gcc_free(&s.gcc);
    json_object_put(s.bu);
    json_object_put(s.gc);
    return rc;
}

/* ---- kind "external" ---------------------------------------------------- */

static int external_declare(struct stage *st)
{
    const char *target = declare_target(st);
    if (!target)
        return -1;
    const char *prefix = st_str(st, "prefix");
    const char *tarball = st_str(st, "tarball");
    if (!prefix == !tarball)
        return st_error(st, NULL, "set exactly one of prefix (an installed toolchain "
                        "directory) and tarball (a toolchain archive)");
    if (prefix) {
        char *p = st_path(st, "prefix");
        char *gcc = xasprintf("%s/bin/%s-gcc", p, target);
        if (!is_dir(p))
            st_error(st, "prefix", "%s is not a directory (expected a toolchain prefix "
                     "holding bin/%s-gcc)", p, target);
        else if (access(gcc, X_OK) < 0)
            st_error(st, "prefix", "%s has no bin/%s-gcc (expected a toolchain prefix for "
                     "target %s)", p, target, target);
        free(gcc);
        free(p);
        /* prefix is an F_PATH: the engine hashes the whole tree into the key */
    } else {
        tc_declare_source(st, "tarball", "sha256");
        if (tc_is_url(tarball))
            st_tool(st, "curl");
    }
    char *o = xasprintf("bin/%s-gcc", target);
    st_output(st, o);
    free(o);
    return 0;
}

static int external_run(struct stage_ctx *cx)
{
    const char *target = target_of(cx->st);
    struct tc_probe pr = {0};
    json_object *details = json_object_new_object();
    int rc = 1;
    char *tarball = NULL, *root = NULL;
    char *dir = path_join(cx->work, "unpacked");
    if (cx_str(cx, "prefix")) {
        char *p = cx_path(cx, "prefix");
        cx_log(cx, "copying %s", p);
        double t0 = now_seconds();
        /* A copy, not hard links: the cache makes its entries read-only,
         * which must not change the user's files. */
        if (copy_tree(p, cx->out, false) < 0) {
            cx_fail(cx, "toolchain.prefix: cannot copy %s into the cache: %s", p, strerror(errno));
            free(p);
            goto out;
        }
        cx_log(cx, "copied in %.1f s", now_seconds() - t0);
        json_add_str(details, "prefix", p);
        free(p);
    } else {
        tarball = tc_get_source(cx, "toolchain", "tarball", "sha256");
        if (!tarball)
            goto out;
        root = tc_unpack(cx, "toolchain", "tarball", tarball, dir);
        if (!root)
            goto out;
        if (copy_tree(root, cx->out, true) < 0) {
            cx_fail(cx, "toolchain.tarball: cannot move the unpacked toolchain into %s: %s",
                    cx->out, strerror(errno));
            goto out;
        }
        json_add_str(details, "tarball", path_basename(tarball));
    }
    const char *key = cx_str(cx, "prefix") ? "toolchain.prefix" : "toolchain.tarball";
    char *origin = cx_str(cx, "prefix") ? cx_path(cx, "prefix") : xstrdup(tarball);
    int bad = tc_check_compiler(cx, key, origin, cx->out, target, &pr);
    free(origin);
    if (bad)
        goto out;
    rc = tc_finish(cx, target, &pr, details);
    details = NULL;
out:
    tc_probe_free(&pr);
    json_object_put(details);
    free(tarball);
    free(root);
    free(dir);
    return rc;
}

/* binutils is built first */
static const char *const build_patch_fields[] = {"binutils_patches", "gcc_patches", NULL};

const struct stage_kind stage_toolchain_build = {
    .name = "build",
    .section = "toolchain",
    .version = 2, /* not bumped for dropping the step times from the manifest:
                     * no input decided them (docs/engine.md) */
    .summary = "build a GCC stage 1 cross compiler (C, no libc) for the recipe's arch",
    .fields = build_fields,
    .tools = build_tools,
    .outputs = toolchain_outputs,
    .late_fields = build_late_fields,
    .patch_fields = build_patch_fields,
    .declare = build_declare,
    .run = build_run,
    .cost_hint = 1100,
};

const struct stage_kind stage_toolchain_external = {
    .name = "external",
    .section = "toolchain",
    .version = 1,
    .summary = "use an existing cross toolchain (a prefix or a tarball), checked for the arch",
    .fields = external_fields,
    .outputs = toolchain_outputs,
    .declare = external_declare,
    .run = external_run,
    .cost_hint = 1100,
};
