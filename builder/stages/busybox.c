/* packages, kind "busybox": BusyBox cross-built against the recipe's C
 * library, as a root tree for the minimal userland.
 *
 * Source: by default Debian's busybox source package (`source_package`,
 * `version` to pin) from the archive (the debootstrap userland's, else
 * Debian bookworm): the .dsc and tarballs with the SHA256s of the signed
 * Sources index, kept in CACHE/downloads/sources (debfetch_apt_source), and
 * unpacked with Debian's patches by dpkg-source -x. Or `tarball`: an
 * upstream busybox tarball (a path, or a URL with `sha256`).
 *
 * Build: the compiler stage's bin/TARGET-gcc (`compiler`: default the
 * packages stage "gcc" if the recipe has it, else "toolchain") as
 * CROSS_COMPILE, the libc stage's sysroot/ (`libc`: default "glibc", else
 * the only C library stage) as CONFIG_SYSROOT (--sysroot). Configuration:
 * `make defconfig` (or allnoconfig: `base`), the fragment `config` (default
 * firmware/busybox/trillian.config) and then each of `config_extra`
 * merged over it in order with the kernel's kconfig rules (a later file
 * wins), CONFIG_STATIC from `static`, then `make oldconfig` (over
 * allnoconfig: defconfig with the merged file as its base); every option
 * the fragments set must survive (a dropped one fails naming it).
 * config_extra lets a recipe add a few applets to a shipped fragment
 * without copying it.
 *
 * The steps are a table for the generic source-package build (pkg_build.h):
 * the source by the kind's get hook, make defconfig, the fragment merged
 * (a function step), make oldconfig, the fragment checked, make, the
 * binary checked, the install (function steps).
 *
 * Install without running the target binary: bin/busybox, and one relative
 * symlink per line of busybox.links (what `busybox --install` would make).
 *
 * Checks: busybox is an ELF file for the recipe's machine; dynamic builds
 * have a PT_INTERP, static ones none.
 *
 * Outputs: root/ (bin/busybox and the applet links), stage-manifest.json
 * {busybox, debian_version, source (the tarball or Debian's .dsc), sha256 (its
 * sha256), static, interp, applets, size}. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/binfmt.h"
#include "drivers/debfetch.h"
#include "formats/kconfig.h"
#include "base/json_out.h"
#include "base/sha256.h"
#include "base/run_command.h"
#include "pkg_build.h"
#include "stage.h"
#include "sysroot.h"
#include "toolchain.h"

/* What the fragment is merged over: busybox's defconfig (nearly every
 * applet), or allnoconfig (only what the fragment turns on: a small root
 * that compiles in a fraction of the time). */
static const char *const bases[] = {"defconfig", "allnoconfig", NULL};

static const struct field fields[] = {
    {"source_package", F_STRING, false, NULL, "busybox",
     "Debian source package to build (when tarball is unset)"},
    {"version", F_STRING, false, NULL, NULL,
     "exact version of the source package (default: the suite's)"},
    SR_ARCHIVE_FIELDS,
    {"tarball", F_STRING, false, NULL, NULL,
     "an upstream busybox tarball instead: a path (relative to the recipe) or a URL"},
    {"sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the tarball (required for a URL, checked for a path)"},
    {"compiler", F_STRING, false, NULL, NULL,
     "stage whose bin/TARGET-gcc builds busybox (default: the packages stage gcc, else "
     "toolchain)"},
    {"libc", F_STRING, false, NULL, NULL,
     "C library stage whose sysroot/ it is built against (default: glibc, else the only "
     "C library stage)"},
    /* no default in the table: a default F_PATH would resolve against the
     * recipe, this one lives in the data directory */
    {"config", F_PATH, false, NULL, NULL,
     "configuration fragment merged over busybox's defconfig (or allnoconfig: base; default: the data "
     "directory's firmware/busybox/trillian.config)"},
    {"static", F_BOOL, false, NULL, "false", "link statically (no C library needed at run time)"},
    {"base", F_ENUM, false, bases, "defconfig",
     "the configuration the fragment is merged over: defconfig (busybox's, nearly every "
     "applet) or allnoconfig (only the applets and features the fragment turns on)"},
    {"config_extra", F_PATH_LIST, false, NULL, NULL,
     "further fragments merged after `config`, in order (a later one wins): what a recipe "
     "adds to a shipped fragment without copying it"},
    {0},
};

/* added after the kind shipped: unset, the keys stay as they were */
static const char *const late_fields[] = {"base", "config_extra", NULL};

static const char *const tools[] = {"make", "dpkg-source", NULL};

#define SYSROOT_LINK ".trillian-sysroot"
static const char *const outputs[] = {"root/bin/busybox", "stage-manifest.json", NULL};

static char *config_path(const struct stage *st)
{
    return st_isset(st, "config") ? st_path(st, "config")
                                    : trillian_data_path("firmware/busybox/trillian.config");
}

static int declare(struct stage *st)
{
    const char *lib = sr_libc_stage(st, "libc");
    const char *cc = sr_compiler_stage(st, "compiler");
    char *cfg = config_path(st);
    if (!path_exists(cfg) || is_dir(cfg))
        st_error(st, "config", "%s is not a file (expected a busybox .config fragment, e.g. "
                 "firmware/busybox/trillian.config)", cfg);
    else if (!st_isset(st, "config"))
        st_input_file(st, "config", cfg);
    free(cfg);
    struct strlist extra = {0};
    st_list(st, "config_extra", &extra);
    for (size_t i = 0; i < extra.n; i++) {
        char *p = path_absolute(st_recipe_dir(st), extra.v[i]);
        if (is_dir(p))
            st_error(st, "config_extra", "%s is a directory (expected a busybox .config "
                     "fragment)", p);
        free(p);
    }
    strlist_free(&extra);
    if (st_str(st, "tarball")) {
        tc_declare_source(st, "tarball", "sha256");
        if (tc_is_url(st_str(st, "tarball")))
            st_tool(st, "curl");
    } else {
        struct sr_archive a;
        sr_archive_of(st, &a);
        sr_declare_archive(st, &a);
        strlist_free(&a.components);
        st_tool(st, "apt-get");
    }
    return lib && cc ? 0 : -1;
}

/* The source file's name and sha256, for the manifest (the report names
 * what busybox was built from); an unreadable file leaves SHA empty. */
static void source_id(const char *file, char **name, char sha[65])
{
    *name = xstrdup(path_basename(file));
    if (sha256_file(file, sha) < 0)
        sha[0] = 0;
}

/* The source tree in WORK/src, the version, and the source file (the
 * tarball, or Debian's .dsc) with its sha256; NULL after cx_fail. */
static char *get_source(const struct stage_ctx *cx, const char *rkey, char **version,
                        char **debian_version, char **srcname, char srcsha[65])
{
    char *dir = path_join(cx->work, "src");
    if (cx_str(cx, "tarball")) {
        char *tb = tc_get_source(cx, rkey, "tarball", "sha256");
        char *src = tb ? tc_unpack(cx, rkey, "tarball", tb, dir) : NULL;
        if (src) {
            source_id(tb, srcname, srcsha);
            /* busybox-1.36.1 -> 1.36.1 */
            const char *b = path_basename(src);
            *version = xstrdup(str_starts(b, "busybox-") ? b + 8 : b);
        }
        free(tb);
        free(dir);
        return src;
    }
    struct sr_archive a;
    sr_archive_of(cx->st, &a);
    struct debfetch_archive da = {a.mirror, a.suite, a.keyring, cx->arch, &a.components, true,
                                  rkey};
    struct debfetch_apt apt = {0};
    char *aptdir = path_join(cx->work, "apt");
    char *src = NULL, *dsc = NULL;
    char *setting = xasprintf("%s.source_package", rkey);
    if (debfetch_apt_open(cx, &da, aptdir, &apt) == 0)
        dsc = debfetch_apt_source(cx, &apt, cx_str(cx, "source_package"), cx_str(cx, "version"),
                                  setting, debian_version);
    if (dsc) {
        source_id(dsc, srcname, srcsha);
        src = path_join(dir, "busybox");
        const char *argv[] = {"dpkg-source", "--no-copy", "-x", dsc, src, NULL};
        if (mkdir_p(dir, 0755) < 0 || cx_run(cx, argv) != 0) {
            cx_fail(cx, "%s: dpkg-source -x %s failed (see the log)", setting, dsc);
            free(src);
            src = NULL;
        } else {
            /* 1:1.35.0-4+deb12u1 -> 1.35.0 */
            const char *v = *debian_version;
            const char *c = strchr(v, ':');
            v = c ? c + 1 : v;
            *version = xstrndup(v, strcspn(v, "-"));
        }
    }
    free(setting);
    free(dsc);
    free(aptdir);
    free(dir);
    debfetch_apt_free(&apt);
    strlist_free(&a.components);
    return src;
}

/* The build (pkg_build.h): the source by get_source, then defconfig,
 * the fragment merged (config_merge), oldconfig, the fragment checked
 * (config_check), make, busybox checked (check_binary) and installed below
 * WORK/root (install_step) as function and table steps. */
struct bb_state {
    char *rkey;          /* "packages.busybox" */
    const char *ccdir;   /* the compiler stage's output */
    char *cross;         /* its bin/TARGET- */
    const char *base;    /* the make target the fragment is merged over */
    char *src;           /* the source tree (pkg_build's, borrowed) */
    char *version, *debver, *srcname;
    char srcsha[65];
    struct kconfig frag; /* the fragments as merged, checked after oldconfig */
    /* config_extra: each file's path and entries, to name the one a
     * dropped option came from */
    struct strlist extra_paths;
    struct kconfig *extras;
    char interp[512];
    long long size;
    size_t napplets;
};

static char *get_source_step(const struct stage_ctx *cx, void *arg)
{
    struct bb_state *s = arg;
    s->src = get_source(cx, s->rkey, &s->version, &s->debver, &s->srcname, s->srcsha);
    if (!s->src)
        return NULL;
    /* The sysroot by a relative name (busybox compiles from its top
     * directory): its absolute path, which depends on where the cache is,
     * must not reach the build. */
    const char *libc_name = sr_libc_name(cx->st, "libc");
    char *sysroot = path_join(cx_dep(cx, libc_name), "sysroot");
    char *link = path_join(s->src, SYSROOT_LINK);
    int lrc = symlink(sysroot, link);
    free(link);
    free(sysroot);
    if (lrc < 0) {
        cx_fail(cx, "cannot link the sysroot into %s: %s", s->src, strerror(errno));
        free(s->src);
        return s->src = NULL;
    }
    return s->src;
}

/* Merges each config_extra fragment into S->frag, in order (a later one
 * wins; a changed value is a line in WARN), keeping each file's path and
 * entries in S. 0, or -1 after cx_fail. */
static int merge_extra(const struct stage_ctx *cx, struct bb_state *s, struct strlist *warn)
{
    struct strlist extra = {0};
    cx_list(cx, "config_extra", &extra);
    s->extras = xcalloc(extra.n ? extra.n : 1, sizeof *s->extras);
    int rc = 0;
    for (size_t i = 0; i < extra.n && rc == 0; i++) {
        strlist_push_owned(&s->extra_paths, path_absolute(st_recipe_dir(cx->st), extra.v[i]));
        const char *p = s->extra_paths.v[i];
        char *text = NULL;
        size_t len;
        struct buf err = BUF_INIT;
        if (read_file(p, &text, &len) != 0)
            rc = cx_fail(cx, "%s.config_extra[%zu]: cannot read %s: %s", s->rkey, i, p,
                         strerror(errno));
        else if (kconfig_parse(&s->extras[i], text, path_basename(p), &err))
            rc = cx_fail(cx, "%s.config_extra[%zu]: %s", s->rkey, i, err.p);
        else
            kconfig_merge(&s->frag, &s->extras[i], warn);
        buf_free(&err);
        free(text);
    }
    strlist_free(&extra);
    return rc;
}

/* The fragments (+ static, + the sysroot) merged over the defconfig. */
static int config_merge(const struct stage_ctx *cx, void *arg)
{
    struct bb_state *s = arg;
    const char *rkey = s->rkey;
    char *cfg = config_path(cx->st);
    char *dotconfig = path_join(s->src, ".config");
    char *text = NULL, *ftext = NULL;
    size_t len;
    struct kconfig base = {0};
    struct buf err = BUF_INIT, out = BUF_INIT;
    int rc = 0;
    if (read_file(dotconfig, &text, &len) != 0 || kconfig_parse(&base, text, ".config", &err)) {
        rc = cx_fail(cx, "%s: cannot read the defconfig %s %s", rkey, dotconfig,
                     err.n ? err.p : strerror(errno));
        goto out;
    }
    if (read_file(cfg, &ftext, &len) != 0) {
        rc = cx_fail(cx, "%s.config: cannot read %s: %s", rkey, cfg, strerror(errno));
        goto out;
    }
    if (kconfig_parse(&s->frag, ftext, path_basename(cfg), &err)) {
        rc = cx_fail(cx, "%s.config: %s", rkey, err.p);
        goto out;
    }
    struct strlist warn = {0};
    if ((rc = merge_extra(cx, s, &warn)) != 0) {
        strlist_free(&warn);
        goto out;
    }
    bool st = cx_bool(cx, "static", false);
    kconfig_set(&s->frag, "CONFIG_STATIC", st ? "y" : NULL, "static setting");
    kconfig_set(&s->frag, "CONFIG_SYSROOT", "\"" SYSROOT_LINK "\"", "libc stage");
    kconfig_merge(&base, &s->frag, &warn);
    for (size_t i = 0; i < warn.n; i++)
        cx_log(cx, "%s", warn.v[i]);
    strlist_free(&warn);
    kconfig_format(&base, &out);
    rc = cx_write_in(cx, s->src, ".config", out.p, out.n, 0644);
out:
    kconfig_free(&base);
    buf_free(&err);
    buf_free(&out);
    free(text);
    free(ftext);
    free(cfg);
    free(dotconfig);
    return rc;
}

/* The setting and file the merged entry WANT came from: the config_extra
 * fragment whose own entry it is (the last one that sets it: a later file
 * wins the merge), else config (static and the sysroot are the kind's own,
 * set over config). New strings. */
static char *fragment_of(const struct stage_ctx *cx, const struct bb_state *s,
                         const struct kconfig_entry *want, char **key)
{
    for (size_t i = s->extra_paths.n; i-- > 0;) {
        const struct kconfig_entry *e = kconfig_get(&s->extras[i], want->name);
        if (e && e->origin && want->origin && !strcmp(e->origin, want->origin)) {
            *key = xasprintf("config_extra[%zu]", i);
            return xstrdup(s->extra_paths.v[i]);
        }
    }
    *key = xstrdup("config");
    return config_path(cx->st);
}

/* Every option the fragments set survived oldconfig. */
static int config_check(const struct stage_ctx *cx, void *arg)
{
    struct bb_state *s = arg;
    char *dotconfig = path_join(s->src, ".config"), *text = NULL;
    size_t len;
    struct kconfig final = {0};
    struct buf err = BUF_INIT;
    struct kconfig_problem *probs = NULL;
    int rc = 0;
    if (read_file(dotconfig, &text, &len) != 0 || kconfig_parse(&final, text, ".config", &err)) {
        rc = cx_fail(cx, "cannot read %s after oldconfig", dotconfig);
    } else {
        size_t np = kconfig_check(&s->frag, &final, &probs);
        for (size_t i = 0; i < np; i++) {
            char *t = kconfig_problem_text(&probs[i], s->src, NULL);
            cx_log(cx, "%s", t);
            if (i == 0) {
                char *key = NULL, *path = fragment_of(cx, s, probs[i].want, &key);
                rc = cx_fail(cx, "%s.%s: %s (fix the fragment %s)", s->rkey, key, t, path);
                free(key);
                free(path);
            }
            free(t);
        }
    }
    free(probs);
    kconfig_free(&final);
    buf_free(&err);
    free(text);
    free(dotconfig);
    return rc;
}

/* bin/busybox and the applet links from busybox.links, below ROOT. */
static int install(const struct stage_ctx *cx, const char *src, const char *root, size_t *napplets)
{
    char *bin = path_join(root, "bin");
    char *bb = path_join(src, "busybox");
    char *dst = path_join(bin, "busybox");
    char *links = path_join(src, "busybox.links");
    char *text = NULL;
    size_t len;
    int rc = 0;
    *napplets = 0;
    if (mkdir_p(bin, 0755) < 0 || copy_file(bb, dst) < 0 || chmod(dst, 0755) < 0) {
        rc = cx_fail(cx, "cannot install %s as %s: %s", bb, dst, strerror(errno));
        goto out;
    }
    if (read_file(links, &text, &len) != 0) {
        rc = cx_fail(cx, "the build made no %s: %s", links, strerror(errno));
        goto out;
    }
    for (char *l = text, *nl; l && *l && rc == 0; l = nl) {
        nl = strchr(l, '\n');
        if (nl)
            *nl++ = 0;
        if (l[0] != '/' || strstr(l, "..") || !strcmp(l, "/bin/busybox"))
            continue;
        /* relative: "busybox", "../bin/busybox", "../../bin/busybox" */
        struct buf t = BUF_INIT;
        for (const char *p = strchr(l + 1, '/'); p; p = strchr(p + 1, '/'))
            buf_puts(&t, "../");
        buf_puts(&t, "bin/busybox");
        const char *target = !strncmp(l, "/bin/", 5) && !strchr(l + 5, '/') ? "busybox" : t.p;
        char *p = path_join(root, l + 1);
        char *d = path_dirname(p);
        unlink(p);
        if (mkdir_p(d, 0755) < 0 || symlink(target, p) < 0)
            rc = cx_fail(cx, "cannot link %s: %s", p, strerror(errno));
        else
            (*napplets)++;
        free(d);
        free(p);
        buf_free(&t);
    }
out:
    free(text);
    free(links);
    free(bin);
    free(bb);
    free(dst);
    return rc;
}

/* busybox is code for the recipe's machine, linked as `static` says. */
static int check_binary(const struct stage_ctx *cx, void *arg)
{
    struct bb_state *s = arg;
    const char *rkey = s->rkey;
    char *bb = path_join(s->src, "busybox");
    char err[BINFMT_ERRLEN];
    int m = binfmt_elf_machine(bb, err);
    int want = tc_arch_machine(cx->arch);
    bool is_static = cx_bool(cx, "static", false);
    struct stat sb;
    int rc = 0;
    if (m < 0 || m != want)
        rc = cx_fail(cx, "%s: %s is %s, not %s code: check %s.compiler", rkey, bb,
                     m < 0 ? err : binfmt_elf_machine_name(m), binfmt_elf_machine_name(want),
                     rkey);
    else if (binfmt_elf_interp(bb, s->interp, sizeof s->interp, err) < 0)
        rc = cx_fail(cx, "%s: %s", rkey, err);
    else if (is_static == (s->interp[0] != 0))
        rc = cx_fail(cx, "%s.static: busybox was linked %s (PT_INTERP '%s') but static = %s",
                     rkey, s->interp[0] ? "dynamically" : "statically", s->interp,
                     is_static ? "true" : "false");
    else
        s->size = stat(bb, &sb) == 0 ? (long long)sb.st_size : -1;
    free(bb);
    return rc;
}

static int install_step(const struct stage_ctx *cx, void *arg)
{
    struct bb_state *s = arg;
    char *root = path_join(cx->work, "root");
    int rc = install(cx, s->src, root, &s->napplets);
    free(root);
    return rc;
}

static void setup_env(const struct stage_ctx *cx, struct strlist *env, void *arg)
{
    struct bb_state *s = arg;
    (void)cx;
    strlist_push_owned(env, run_path_env("%s/bin", s->ccdir));
    /* KBUILD_BUILD_TIMESTAMP and the user/host name: a reproducible banner */
    strlist_push(env, "KCONFIG_NOTIMESTAMP=1");
}

static const char *var(void *arg, const char *name)
{
    const struct bb_state *s = arg;
    bool allno = strcmp(s->base, "allnoconfig") == 0;
    if (strcmp(name, "cross") == 0)
        return s->cross;
    if (strcmp(name, "base") == 0)
        return s->base;
    /* After the merge: over the defconfig, every symbol has a value and
     * oldconfig asks nothing. Over allnoconfig, the fragment turns on
     * options whose own sub-options allnoconfig never wrote, and oldconfig
     * would ask for each: `conf -D .config` (make defconfig with the
     * merged file as its base) gives those their defaults instead. */
    if (strcmp(name, "settle") == 0)
        return allno ? "defconfig" : "oldconfig";
    if (strcmp(name, "settle_base") == 0)
        return allno ? "KBUILD_DEFCONFIG=.config" : NULL;
    return NULL;
}

static const struct pkg_source sources[] = {
    {.name = "busybox", .get = get_source_step},
    {0},
};

static const char *const defconfig[] = {"make", "${kind:base}", NULL};
static const char *const oldconfig[] = {"make", "?${kind:settle_base}", "${kind:settle}", NULL};
static const char *const make[] = {"make", "CROSS_COMPILE=${kind:cross}", "busybox",
                                   "busybox.links", NULL};

static const struct pkg_step steps[] = {
    {.label = "defconfig", .cwd = "${src:busybox}", .argv = defconfig,
     .hint = "make defconfig (or allnoconfig: the setting base)"},
    {.label = "config", .fn = config_merge},
    {.label = "oldconfig", .cwd = "${src:busybox}", .argv = oldconfig,
     .hint = "make oldconfig (over allnoconfig: make KBUILD_DEFCONFIG=.config defconfig), after "
             "the fragment"},
    {.label = "config-check", .fn = config_check},
    {.label = "make", .cwd = "${src:busybox}", .argv = make,
     .hint = "an applet that does not build against this C library can be turned off in the "
             "fragment (config)"},
    {.label = "check", .fn = check_binary},
    {.label = "install", .fn = install_step},
    {0},
};

static const struct pkg_file no_files[] = {{0}};

static const struct pkg_desc desc = {
    .what = "BusyBox", .sources = sources, .steps = steps, .install = no_files,
    .setup_env = setup_env, .var = var,
};

static int run(struct stage_ctx *cx)
{
    const char *libc_name = sr_libc_name(cx->st, "libc");
    const char *cc_name = sr_compiler_name(cx->st, "compiler");
    const char *libdir = libc_name ? cx_dep(cx, libc_name) : NULL;
    struct bb_state s = {.rkey = xasprintf("packages.%s", cx->name),
                         .ccdir = cc_name ? cx_dep(cx, cc_name) : NULL,
                         .base = cx_str(cx, "base")};
    char *target = s.ccdir ? tc_read_target(cx, s.ccdir) : NULL;
    char *sysroot = libdir ? path_join(libdir, "sysroot") : NULL;
    char *root = path_join(cx->work, "root"), *outroot = path_join(cx->out, "root");
    int rc = 1;
    if (!target || !sysroot) {
        if (target)
            cx_fail(cx, "%s: the libc stage has no output", s.rkey);
        goto out;
    }
    if (!is_dir(sysroot)) {
        cx_fail(cx, "%s.libc: stage %s has no sysroot/ (expected a C library stage's output)",
                s.rkey, libc_name);
        goto out;
    }
    s.cross = xasprintf("%s/bin/%s-", s.ccdir, target);
    if (pkg_build(cx, &desc, &s))
        goto out;
    bool is_static = cx_bool(cx, "static", false);
    json_object *man = json_object_new_object();
    json_add_str(man, "busybox", s.version);
    json_object_object_add(man, "debian_version", s.debver ? json_str(s.debver) : NULL);
    json_add_str(man, "source", s.srcname);
    if (s.srcsha[0])
        json_add_str(man, "sha256", s.srcsha);
    json_object_object_add(man, "static", json_object_new_boolean(is_static));
    json_add_str(man, "interp", s.interp);
    json_object_object_add(man, "applets", json_object_new_int64((int64_t)s.napplets));
    json_object_object_add(man, "size", json_object_new_int64(s.size));
    json_add_str(man, "compiler", cc_name);
    json_add_str(man, "libc", libc_name);
    if (cx_write_manifest(cx, man))
        goto out;
    if (rename(root, outroot) < 0) {
        cx_fail(cx, "cannot move %s to %s: %s", root, outroot, strerror(errno));
        goto out;
    }
    rc = 0;
    cx_log(cx, "busybox %s: %lld bytes, %zu applet links, %s", s.version, s.size, s.napplets,
           s.interp[0] ? s.interp : "static");
out:
    kconfig_free(&s.frag);
    for (size_t i = 0; s.extras && i < s.extra_paths.n; i++)
        kconfig_free(&s.extras[i]);
    free(s.extras);
    strlist_free(&s.extra_paths);
    free(s.rkey);
    free(s.cross);
    free(s.version);
    free(s.debver);
    free(s.srcname);
    free(target);
    free(sysroot);
    free(root);
    free(outroot);
    return rc;
}

/* What the stage is, for the report, the SBOM and a minimal root (stage.h). */
static const struct stage_component made[] = {
    {.name = "busybox", .version = "busybox", .source = "source", .sha256 = "sha256",
     .extra = "debian_version", .licence = "GPL-2.0-only", .role = COMPONENT_ROOT,
     .root_name = "busybox", .root_version = {"busybox"}},
    {0},
};

const struct stage_kind stage_busybox = {
    .name = "busybox",
    .section = "packages",
    .version = 2, /* not bumped for dropping the step times from the manifest:
                     * no input decided them (docs/engine.md) */
    .summary = "BusyBox from Debian's source package (or a tarball), cross-built against the "
               "recipe's C library; bin/busybox and its applet links",
    .fields = fields,
    .late_fields = late_fields,
    .tools = tools,
    .outputs = outputs,
    .components = made,
    .declare = declare,
    .run = run,
    .cost_hint = 100,
};
