/* The table-driven source-package build (pkg_build.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/run_command.h"
#include "drivers/debfetch.h"
#include "drivers/fetch.h"
#include "drivers/launcher.h"
#include "formats/archive.h"
#include "patch_apply.h"
#include "pkg_build.h"
#include "sysroot.h"
#include "pkg_deb.h"
#include "toolchain.h"

/* What pkg_path_maps maps, in the key of a kind with map_paths: change it
 * with the maps. */
#define PATH_MAPS "-ffile-prefix-map: toolchain /usr/, scratch ., sysroot /"

static char *skey(const struct pkg_source *s, const char *what)
{
    return xasprintf("%s_%s", s->key, what);
}

/* A string setting KEY_WHAT of source S (NULL if unset and no default). */
static const char *sset(const struct stage *st, const struct pkg_source *s, const char *what)
{
    char *k = skey(s, what);
    const char *v = st_str(st, k);
    free(k);
    return v && *v ? v : NULL;
}

/* A source given by .dsc (KEY_dsc, KEY_dsc_sha256): -1 after errors. */
static int declare_dsc(struct stage *st, const struct pkg_source *s)
{
    const char *dsc = sset(st, s, "dsc"), *sha = sset(st, s, "dsc_sha256");
    char *kd = skey(s, "dsc"), *kds = skey(s, "dsc_sha256");
    static const char *const tarball[] = {"url", "file", "sha256"};
    const char *both = NULL;
    for (size_t i = 0; i < ARRAY_LEN(tarball) && !both; i++) {
        char *k = skey(s, tarball[i]);
        if (st_isset(st, k))
            both = tarball[i];
        free(k);
    }
    int bad = 0;
    if (both) {
        char *k = skey(s, both);
        bad = st_error(st, k, "%s and %s exclude each other: give a tarball (%s_url, "
                       "%s_sha256) or a Debian source package's .dsc (%s, %s), not both", k,
                       kd, s->key, s->key, kd, kds);
        free(k);
    } else if (!dsc) {
        bad = st_error(st, kds, "give %s too: the URL of the .dsc this pins", kd);
    } else if (!fetch_valid_url(dsc) || !str_ends(dsc, ".dsc")) {
        bad = st_error(st, kd, "'%s' is not an http(s), ftp or file URL of a .dsc", dsc);
    } else if (!sha) {
        bad = st_error(st, kd, "give %s too: the SHA-256 of the .dsc (sha256sum NAME.dsc), "
                       "which pins the files it lists", kds);
    } else if (!fetch_valid_sha256(sha)) {
        bad = st_error(st, kds, "'%s' is not a SHA-256 (64 hex digits of the .dsc: sha256sum "
                       "NAME.dsc)", sha);
    } else { /* the files it lists are known once it is read, at run time */
        st_remote(st, kds, dsc, NULL, sha);
    }
    st_tool(st, "curl");
    st_tool(st, "dpkg-source");
    free(kd);
    free(kds);
    return bad;
}

int pkg_declare(struct stage *st, const struct pkg_desc *d)
{
    int bad = 0;
    for (const struct pkg_source *s = d->sources; s->name; s++) {
        if (s->get)
            continue; /* the kind declares its own source */
        const char *url = sset(st, s, "url"), *file = sset(st, s, "file");
        const char *sha = sset(st, s, "sha256");
        char *ku = skey(s, "url"), *kf = skey(s, "file"), *ks = skey(s, "sha256");
        if (s->dsc && (sset(st, s, "dsc") || sset(st, s, "dsc_sha256")))
            bad |= declare_dsc(st, s);
        else if (s->dsc && !url && !file && !sha)
            bad |= st_error(st, NULL, "give its source: %s and %s (a tarball), or %s_dsc and "
                            "%s_dsc_sha256 (a Debian source package's .dsc)", ku, ks, s->key,
                            s->key);
        else if (!fetch_valid_sha256(sha))
            bad |= st_error(st, ks, "'%s' is not a SHA-256 (64 hex digits of the %s tarball: "
                            "sha256sum FILE)", sha ? sha : "", s->name);
        else if (url && !fetch_valid_url(url))
            bad |= st_error(st, ku, "'%s' is not an http(s), ftp or file URL", url);
        else if (!url && !file)
            bad |= st_error(st, NULL, "give %s (the %s tarball's file name in a mirror) or %s "
                            "(its origin)", kf, s->name, ku);
        else if (file && strchr(file, '/'))
            bad |= st_error(st, kf, "'%s' must be a file name, without '/'", file);
        else
            st_remote(st, ks, url, file, sha);
        if (url)
            st_tool(st, "curl");
        char *kp = skey(s, "patches");
        if (st_isset(st, kp) || s->patches)
            st_tool(st, "patch");
        free(kp);
        for (size_t i = 0; s->patches && s->patches[i]; i++) {
            char *path = trillian_data_path(s->patches[i]);
            char *label = xasprintf("patch:%s", s->patches[i]);
            if (!path_exists(path))
                bad |= st_error(st, "kind", "the kind's patch %s is missing (an incomplete "
                                "installation: reinstall Trillian)", path);
            else
                st_input_file(st, label, path);
            free(label);
            free(path);
        }
        free(ku);
        free(kf);
        free(ks);
    }
    if (d->cross) {
        if (!st_has_stage(st, "toolchain"))
            bad |= st_error(st, "kind", "builds %s with the recipe's %s cross compiler, but the "
                            "recipe has no toolchain stage: add @include "
                            "\"include/%s-toolchain.cfg\" (gcc built here) or a toolchain "
                            "section (kind \"external\" for an installed cross compiler)",
                            d->what, st_arch(st), st_arch(st));
        else
            st_need_file(st, "toolchain", "target");
    }
    if (d->target && (!sr_compiler_stage(st, "compiler") | !sr_libc_stage(st, "libc")))
        bad = 1; /* they said what is missing */
    for (size_t i = 0; d->build_depends && d->build_depends[i]; i++) {
        const char *e = d->build_depends[i], *pkg;
        char *stage = pkg_deb_entry_stage(e, &pkg);
        if (!d->target)
            bad |= st_error(st, "build_depends", "only target mode builds against packages: "
                            "set target = true") < 0;
        else if (!*stage || (pkg && !*pkg) || !strcmp(stage, st_name(st)))
            bad |= st_error(st, "build_depends", "'%s' is not STAGE/PACKAGE (or STAGE) of "
                            "another stage", e) < 0;
        else if (!st_has_stage(st, stage))
            bad |= st_error(st, "build_depends", "'%s': no stage named '%s' in the recipe "
                            "(a package stage whose -dev package this one builds against)",
                            e, stage) < 0;
        else
            st_need(st, stage);
        free(stage);
        if (!d->target)
            break;
    }
    if (d->map_paths) /* the objects differ from a build without the maps */
        st_input_text(st, "prefix-map", PATH_MAPS);
    if (d->debs && pkg_debs_declare(st, d->debs) < 0)
        bad = 1;
    if (d->debs && d->debs->strip && !d->cross && !d->target)
        st_tool(st, "strip"); /* the host's; else the toolchain's, in its stage's key */
    return bad ? -1 : 0;
}

/* ---- templates -------------------------------------------------------------- */

/* The build's NAME ("gcc", "g++") as its compile steps run it: the mode's,
 * in target mode behind the launcher and with --sysroot (autotools and
 * CMake take flags in CC), then the path maps. New string. */
static char *compiler(const struct pkg_vars *v, const char *name)
{
    struct buf b = BUF_INIT;
    if (v->launcher)
        buf_printf(&b, "%s ", v->launcher);
    buf_printf(&b, "%s%s", v->cross ? v->cross : "", name);
    if (v->sysroot)
        buf_printf(&b, " --sysroot=%s", v->sysroot);
    for (size_t i = 0; i < v->maps.n; i++)
        buf_printf(&b, " %s", v->maps.v[i]);
    return buf_detach(&b);
}

/* The value of variable NAME (LEN bytes), or NULL if unknown. New string. */
static char *var_value(const struct pkg_vars *v, const char *name, size_t len)
{
    char *n = xstrndup(name, len), *r = NULL;
    if (str_starts(n, "src:")) {
        for (size_t i = 0; v->d->sources[i].name && !r; i++)
            if (strcmp(v->d->sources[i].name, n + 4) == 0 && v->src[i])
                r = xstrdup(v->src[i]);
    } else if (str_starts(n, "set:")) {
        const char *s = cx_str(v->cx, n + 4);
        r = s ? xstrdup(s) : NULL;
    } else if (str_starts(n, "kind:")) {
        const char *k = v->d->var ? v->d->var(v->arg, n + 5) : NULL;
        r = k ? xstrdup(k) : NULL;
    } else if (!strcmp(n, "work")) {
        r = xstrdup(v->cx->work);
    } else if (!strcmp(n, "out")) {
        r = xstrdup(v->cx->out);
    } else if (!strcmp(n, "epoch")) {
        r = xasprintf("%lld", v->cx->source_date_epoch);
    } else if (!strcmp(n, "jobs")) { /* for builders that are no jobserver client (ninja) */
        r = xasprintf("%d", v->cx->jobs > 0 ? v->cx->jobs : 1);
    } else if (!strcmp(n, "cross") && v->cross) {
        r = xstrdup(v->cross);
    } else if (!strcmp(n, "target") && v->target) {
        r = xstrdup(v->target);
    } else if (!strcmp(n, "sysroot") && v->sysroot) {
        r = xstrdup(v->sysroot);
    } else if (!strcmp(n, "launch")) { /* ccache or distcc and a space, or nothing */
        r = v->launcher ? xasprintf("%s ", v->launcher) : xstrdup("");
    } else if (!strcmp(n, "launcher") && v->launcher) { /* the same, alone: no value if none */
        r = xstrdup(v->launcher);
    } else if (!strcmp(n, "toolchain") && v->toolchain) {
        r = xstrdup(v->toolchain);
    } else if (!strcmp(n, "cc") || !strcmp(n, "cxx")) {
        r = compiler(v, !strcmp(n, "cc") ? "gcc" : "g++");
    } else if (!strcmp(n, "prefix_maps")) { /* space-separated, or empty */
        struct buf b = BUF_INIT;
        for (size_t i = 0; i < v->maps.n; i++)
            buf_printf(&b, "%s%s", i ? " " : "", v->maps.v[i]);
        r = buf_detach(&b);
    }
    free(n);
    return r;
}

/* T with its ${...} replaced (new string), or NULL after cx_fail naming the
 * unknown variable (a bug in the kind's table); with OPTIONAL, NULL quietly
 * (*missing set). */
static char *expand_opt(const struct pkg_vars *v, const char *t, bool optional, bool *missing)
{
    struct buf b = BUF_INIT;
    for (const char *p = t; *p;) {
        const char *open = strstr(p, "${");
        const char *close = open ? strchr(open, '}') : NULL;
        if (!open || !close) {
            buf_puts(&b, p);
            break;
        }
        buf_add(&b, p, (size_t)(open - p));
        char *val = var_value(v, open + 2, (size_t)(close - open - 2));
        if (!val) {
            if (optional)
                *missing = true;
            else
                cx_fail(v->cx, "%s: the build table uses %.*s, which is not set here (a bug "
                        "in the kind: report it)", v->d->what, (int)(close - open + 1), open);
            buf_free(&b);
            return NULL;
        }
        buf_puts(&b, val);
        free(val);
        p = close + 1;
    }
    return buf_detach(&b);
}

char *pkg_expand(const struct pkg_vars *v, const char *t)
{
    bool missing = false;
    return expand_opt(v, t, false, &missing);
}

char *pkg_hint(const struct pkg_vars *v, const char *t)
{
    bool missing = false;
    char *e = expand_opt(v, t, true, &missing);
    return e ? e : xstrdup(t); /* a failure's message never fails itself */
}

int pkg_push_arg(const struct pkg_vars *v, struct strlist *argv, const char *t)
{
    if (str_starts(t, "${list:") && str_ends(t, "}") && !strchr(t + 2, '$')) {
        char *key = xstrndup(t + 7, strlen(t) - 8);
        cx_list(v->cx, key, argv);
        free(key);
        return 0;
    }
    if (str_starts(t, "${kindlist:") && str_ends(t, "}") && !strchr(t + 2, '$')) {
        char *name = xstrndup(t + 11, strlen(t) - 12);
        const struct strlist *l = v->d->list ? v->d->list(v->arg, name) : NULL;
        free(name);
        if (!l) {
            cx_fail(v->cx, "%s: the build table uses %s, which is not set here (a bug in the "
                    "kind: report it)", v->d->what, t);
            return -1;
        }
        for (size_t i = 0; i < l->n; i++)
            strlist_push(argv, l->v[i]);
        return 0;
    }
    bool optional = t[0] == '?', missing = false;
    char *e = expand_opt(v, t + optional, optional, &missing);
    if (!e)
        return missing ? 0 : -1;
    strlist_push_owned(argv, e);
    return 0;
}

/* ---- the build -------------------------------------------------------------- */

/* A source's .dsc, when it is given by one (else NULL). */
static const char *dsc_url(const struct stage *st, const struct pkg_source *s)
{
    return s->dsc ? sset(st, s, "dsc") : NULL;
}

/* Where a .dsc and its files are linked for dpkg-source: WORK/NAME.dsc.d. */
static char *dsc_dir(const struct stage_ctx *cx, const struct pkg_source *s)
{
    return xasprintf("%s/%s.dsc.d", cx->work, s->name);
}

/* Whether a source's or a step's WHEN holds: every variable in it has a
 * value (NULL: always). */
static bool holds(const struct pkg_vars *v, const char *when)
{
    if (!when)
        return true;
    bool missing = false;
    char *e = expand_opt(v, when, true, &missing);
    bool ok = e != NULL;
    free(e);
    return ok;
}

static int fetch_all(const struct pkg_vars *v, char **tarballs)
{
    const struct stage_ctx *cx = v->cx;
    const struct pkg_desc *d = v->d;
    for (size_t i = 0; d->sources[i].name; i++) {
        const struct pkg_source *s = &d->sources[i];
        if (s->get || !holds(v, s->when))
            continue; /* fetched by the kind, after the pinned ones; or not used */
        if (dsc_url(cx->st, s)) { /* tarballs[i]: the .dsc, its files beside it */
            char *kd = skey(s, "dsc"), *kds = skey(s, "dsc_sha256"), *dir = dsc_dir(cx, s);
            char *wd = cx_where(cx, kd), *wds = cx_where(cx, kds);
            struct dsc_info info;
            tarballs[i] = debfetch_dsc_get(cx, dsc_url(cx->st, s), sset(cx->st, s, "dsc_sha256"),
                                           wd, wds, dir, &info);
            dsc_info_free(&info);
            free(wd);
            free(wds);
            free(dir);
            free(kd);
            free(kds);
            if (!tarballs[i])
                return 1; /* debfetch_dsc_get said which file and what to do */
            continue;
        }
        char *ks = skey(s, "sha256"), *where = cx_where(cx, ks);
        tarballs[i] = fetch_pinned(cx, sset(cx->st, s, "url"), sset(cx->st, s, "file"),
                                   sset(cx->st, s, "sha256"), where);
        free(where);
        free(ks);
        if (!tarballs[i])
            return 1; /* fetch_pinned said what was found and what to do */
    }
    return 0;
}

static int unpack_and_patch(const struct pkg_vars *v, char **tarballs, char **src)
{
    const struct stage_ctx *cx = v->cx;
    const struct pkg_desc *d = v->d;
    void *arg = v->arg;
    for (size_t i = 0; d->sources[i].name; i++) {
        const struct pkg_source *s = &d->sources[i];
        if (!holds(v, s->when)) {
            cx_log(cx, "%s: source %s not used here", d->what, s->name);
            continue;
        }
        if (s->get) {
            if (!(src[i] = s->get(cx, arg)) ||
                (s->patches_key &&
                 patch_apply_all(cx, s->name, src[i], NULL, s->patches_key, NULL, NULL)))
                return 1;
            continue;
        }
        char *dir = path_join(cx->work, s->name);
        if (dsc_url(cx->st, s)) {
            /* --no-check: each file was checked against the .dsc's sha256,
             * the .dsc against the recipe's (its signature cannot be, without
             * Debian's developer keyring); --no-copy: the orig tarball stays
             * a link to the cache */
            const char *argv[] = {"dpkg-source", "--no-check", "--no-copy", "-x", tarballs[i],
                                  dir, NULL};
            if (tc_run_step(cx, cx->work, NULL, argv, "unpack") == 0) {
                src[i] = dir;
            } else {
                char *kd = skey(s, "dsc"), *where = cx_where(cx, kd);
                cx_fail(cx, "%s: dpkg-source -x %s failed (see the log above)", where,
                        path_basename(tarballs[i]));
                free(where);
                free(kd);
                free(dir);
                return 1;
            }
        } else {
            char *rk = xasprintf("%s.%s", st_section(cx->st), cx->name);
            char *ks = skey(s, "sha256");
            src[i] = tc_unpack(cx, rk, ks, tarballs[i], dir);
            free(ks);
            free(rk);
            free(dir);
            if (!src[i])
                return 1;
        }
        char *kp = skey(s, "patches");
        int rc = patch_apply_all(cx, s->name, src[i], s->patches, kp, NULL, NULL);
        free(kp);
        if (rc)
            return 1;
    }
    return 0;
}

/* Target mode's environment: the user's ccache or distcc for the compilers
 * (${launch}: as the kernel's, launcher.h; a package's objects in
 * CACHE/ccache/pkg), the tools by the compiler stage's prefix, and
 * pkg-config reading only the sysroot's .pc files (Debian's multiarch
 * directory first) with their paths under it. */
static void target_env(struct pkg_vars *v, struct strlist *env)
{
    v->launcher = launcher_prefix(v->cx, "pkg", v->cx->work, false, env);
    static const char *const tools[] = {"AR=ar", "RANLIB=ranlib", "STRIP=strip", "NM=nm",
                                        "OBJCOPY=objcopy", NULL};
    for (size_t i = 0; tools[i]; i++) {
        const char *eq = strchr(tools[i], '=');
        strlist_pushf(env, "%.*s=%s%s", (int)(eq - tools[i]), tools[i], v->cross, eq + 1);
    }
    const struct libc_names *ln = libc_names_of(v->cx->arch);
    char *multiarch = ln ? xasprintf("%s/usr/lib/%s/pkgconfig:", v->sysroot, ln->triplet)
                         : xstrdup("");
    strlist_pushf(env, "PKG_CONFIG_LIBDIR=%s%s/usr/lib/pkgconfig:%s/usr/share/pkgconfig",
                  multiarch, v->sysroot, v->sysroot);
    free(multiarch);
    strlist_pushf(env, "PKG_CONFIG_SYSROOT_DIR=%s", v->sysroot);
    if (v->d->build_depends && ln) /* their libraries are in the multiarch directory */
        strlist_pushf(env, "LDFLAGS=-L%s/usr/lib/%s -Wl,-rpath-link,%s/usr/lib/%s", v->sysroot,
                      ln->triplet, v->sysroot, ln->triplet);
}

/* -ffile-prefix-map=FROM=TO onto MAPS for DIR, and for its real path if that
 * differs; with SLASH, DIR/ to TO/ (a prefix of the tree's paths only, not
 * of a sibling such as DIR-old). */
static void add_map(struct strlist *maps, const char *dir, const char *to, bool slash)
{
    char *real = realpath(dir, NULL);
    const char *sl = slash ? "/" : "";
    strlist_pushf(maps, "-ffile-prefix-map=%s%s=%s%s", dir, sl, to, sl);
    if (real && strcmp(real, dir))
        strlist_pushf(maps, "-ffile-prefix-map=%s%s=%s%s", real, sl, to, sl);
    free(real);
}

void pkg_path_maps(struct pkg_vars *v)
{
    if (!v->d->map_paths)
        return;
    if (v->toolchain) /* gcc's own headers: TOOLCHAIN/lib/gcc/TARGET/VERSION/include */
        add_map(&v->maps, v->toolchain, "/usr", true);
    add_map(&v->maps, v->cx->work, ".", false); /* the sources, the objects */
    if (v->sysroot) /* the C library's headers, as /usr/include */
        add_map(&v->maps, v->sysroot, "", true);
}

/* build_depends: a copy of the libc stage's sysroot with those packages'
 * data unpacked into it (as dpkg-deb -x), the sysroot of the build. New
 * string, or NULL after cx_fail. */
static char *build_sysroot(const struct stage_ctx *cx, const struct pkg_desc *d,
                           const char *libc_sysroot)
{
    char *own = path_join(cx->work, "sysroot"), err[ARC_ERRLEN];
    if (copy_tree(libc_sysroot, own, false) < 0) {
        cx_fail(cx, "cannot copy %s to %s: %s", libc_sysroot, own, strerror(errno));
        free(own);
        return NULL;
    }
    tree_owner_writable(own, true);
    int rc = 0;
    for (size_t i = 0; !rc && d->build_depends[i]; i++) {
        const char *e = d->build_depends[i];
        struct pkg_deb_iter it;
        int more = 0;
        pkg_deb_iter_open(&it, cx, e); /* without debs/ it made none: said below */
        while (!rc && (more = pkg_deb_iter_next(&it, err)) > 0) {
            if (arc_deb_extract(it.path, own, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL, err) < 0)
                rc = cx_fail(cx, "build_depends: cannot unpack %s: %s", it.path, err);
            else
                cx_log(cx, "build_depends: %s %s unpacked into the sysroot", it.info.package,
                       it.info.version);
        }
        if (more < 0) {
            rc = cx_fail(cx, "build_depends: %s", err);
        } else if (!rc && !it.taken) {
            char *where = cx_where(cx, "build_depends");
            rc = cx_fail(cx, "%s: '%s': stage %s made no %s%s", where, e, it.stage,
                         it.want ? "binary package " : ".deb", it.want ? it.want : "");
            free(where);
        }
        pkg_deb_iter_close(&it);
    }
    if (rc) {
        free(own);
        return NULL;
    }
    return own;
}

/* Whether ENV has an entry for the variable of "NAME=VALUE" entry E. */
static bool env_has(const struct strlist *env, const char *e)
{
    size_t len = strcspn(e, "=");
    for (size_t i = 0; i < env->n; i++)
        if (strncmp(env->v[i], e, len) == 0 && env->v[i][len] == '=')
            return true;
    return false;
}

/* The steps of STEPS in order, in ENV (and each step's own env). */
static int run_list(const struct pkg_vars *v, const struct pkg_step *steps,
                    const struct strlist *env)
{
    const struct stage_ctx *cx = v->cx;
    const struct pkg_desc *d = v->d;
    int rc = 0;
    for (const struct pkg_step *s = steps; !rc && s->label; s++) {
        if (!holds(v, s->when)) {
            cx_log(cx, "%s: step %s not needed here", d->what, s->label);
            continue;
        }
        if (s->sub) {
            cx_log(cx, "%s: steps of %s", d->what, s->label);
            rc = run_list(v, s->sub, env);
            continue;
        }
        if (s->fn || s->vfn) {
            rc = s->fn ? s->fn(cx, v->arg) : s->vfn(v);
            continue;
        }
        struct strlist argv = {0}, senv = {0}, own = {0};
        for (size_t i = 0; !rc && s->env && s->env[i]; i++)
            rc = pkg_push_arg(v, &own, s->env[i]);
        for (size_t i = 0; i < env->n; i++) /* the step's own entries replace the build's */
            if (!env_has(&own, env->v[i]))
                strlist_push(&senv, env->v[i]);
        for (size_t i = 0; i < own.n; i++)
            strlist_push(&senv, own.v[i]);
        strlist_free(&own);
        char *cwd = rc ? NULL : pkg_expand(v, s->cwd);
        size_t first = 0;
        if (strcmp(s->argv[0], "make") == 0 && !s->plain) {
            if (s->serial) {
                strlist_push(&argv, "make");
                strlist_push(&argv, "-j1");
            } else {
                tc_make_argv(cx, &argv, NULL);
            }
            first = 1;
        }
        for (size_t j = first; cwd && !rc && s->argv[j]; j++)
            rc = pkg_push_arg(v, &argv, s->argv[j]);
        if (!cwd) {
            rc = 1;
        } else if (!rc && mkdir_p(cwd, 0755) < 0) {
            rc = cx_fail(cx, "%s: cannot create %s: %s", d->what, cwd, strerror(errno));
        } else if (!rc) {
            cx_log(cx, "%s: step %s", d->what, s->label);
            if (tc_run_step(cx, cwd, (const char *const *)senv.v,
                            (const char *const *)argv.v, s->label) != 0) {
                char *where = cx_where(cx, NULL);
                char *hint = pkg_hint(v, s->hint ? s->hint : "the command's output");
                rc = cx_fail(cx, "%s: step '%s' of %s failed (%s; see the log above)", where,
                             s->label, d->what, hint);
                free(hint);
                free(where);
            }
        }
        free(cwd);
        strlist_free(&argv);
        strlist_free(&senv);
    }
    return rc;
}

static int run_steps(const struct stage_ctx *cx, struct pkg_vars *v)
{
    const struct pkg_desc *d = v->d;
    struct strlist env = {0};
    int rc = 0;
    if (v->toolchain)
        strlist_push_owned(&env, run_path_env("%s/bin", v->toolchain));
    strlist_push(&env, "LC_ALL=C");
    strlist_pushf(&env, "SOURCE_DATE_EPOCH=%lld", cx->source_date_epoch);
    if (v->sysroot) /* target mode: the compiler and pkg-config see the sysroot */
        target_env(v, &env);
    for (int i = 0; i < 2 && (v->sysroot || v->maps.n); i++) { /* ${cc}, ${cxx} */
        char *c = compiler(v, i ? "g++" : "gcc");
        strlist_pushf(&env, "%s=%s", i ? "CXX" : "CC", c);
        free(c);
    }
    if (d->setup_env)
        d->setup_env(cx, &env, v->arg);
    for (size_t i = 0; !rc && d->env && d->env[i]; i++)
        rc = pkg_push_arg(v, &env, d->env[i]);
    if (!rc)
        rc = run_list(v, d->steps, &env);
    strlist_free(&env);
    return rc;
}

static int install(const struct stage_ctx *cx, const struct pkg_vars *v)
{
    for (const struct pkg_file *f = v->d->install; f->from; f++) {
        char *from = pkg_expand(v, f->from), *rel = from ? pkg_expand(v, f->to) : NULL;
        char *to = rel ? path_join(cx->out, rel) : NULL, *dir = to ? path_dirname(to) : NULL;
        int rc = 0;
        if (!to)
            rc = 1;
        else if (mkdir_p(dir, 0755) < 0 ||
                 (f->tree ? copy_tree(from, to, false) : copy_file(from, to)) < 0)
            rc = cx_fail(cx, "%s: cannot install %s as %s: %s (the build did not make it: see "
                         "the log)", v->d->what, from, to, strerror(errno));
        free(dir);
        free(from);
        free(rel);
        free(to);
        if (rc)
            return rc;
    }
    return 0;
}

int pkg_build(const struct stage_ctx *cx, const struct pkg_desc *d, void *arg)
{
    size_t n = 0;
    while (d->sources[n].name)
        n++;
    char **tarballs = xcalloc(n + 1, sizeof *tarballs);
    struct pkg_vars v = {.cx = cx, .d = d, .arg = arg, .src = xcalloc(n + 1, sizeof(char *))};
    int rc = fetch_all(&v, tarballs);
    if (!rc && (d->cross || d->target)) {
        v.toolchain = cx_dep(cx, d->target ? sr_compiler_name(cx->st, "compiler") : "toolchain");
        v.target = tc_read_target(cx, v.toolchain);
        if (!v.target)
            rc = 1;
        else
            v.cross = xasprintf("%s/bin/%s-", v.toolchain, v.target);
    }
    if (!rc && d->target) {
        const char *libc = sr_libc_name(cx->st, "libc");
        v.sysroot = path_join(cx_dep(cx, libc), "sysroot");
        if (!is_dir(v.sysroot))
            rc = cx_fail(cx, "%s.%s.libc: stage %s has no sysroot/ (expected a C library "
                         "stage's output: glibc or debian-libc)", st_section(cx->st), cx->name,
                         libc);
        char *own = !rc && d->build_depends ? build_sysroot(cx, d, v.sysroot) : NULL;
        if (!rc && d->build_depends && !own)
            rc = 1;
        if (own) {
            free(v.sysroot);
            v.sysroot = own;
        }
    }
    if (!rc)
        pkg_path_maps(&v);
    if (!rc)
        rc = unpack_and_patch(&v, tarballs, v.src);
    if (!rc)
        rc = run_steps(cx, &v);
    if (!rc)
        rc = install(cx, &v);
    if (!rc && d->debs)
        rc = pkg_debs_build(cx, &v, d->debs);
    for (size_t i = 0; i < n; i++) {
        free(tarballs[i]);
        free(v.src[i]);
    }
    free(tarballs);
    free(v.src);
    free(v.cross);
    free(v.target);
    free(v.sysroot);
    free(v.launcher);
    strlist_free(&v.maps);
    return rc;
}

int pkg_manifest(const struct stage_ctx *cx, const struct pkg_desc *d, json_object *extra)
{
    json_object *m = json_object_new_object(), *srcs = json_object_new_array();
    for (const struct pkg_source *s = d->sources; s->name; s++) {
        if (s->get)
            continue; /* the kind names it */
        json_object *o = json_object_new_object();
        const char *url = sset(cx->st, s, "url"), *file = sset(cx->st, s, "file");
        const char *dsc = dsc_url(cx->st, s);
        char *ks = skey(s, "sha256"), *kp = skey(s, "patches");
        json_add_str(o, "name", s->name);
        if (dsc) {
            /* the .dsc that pins the rest, with its Version (pkg_build linked
             * it into its directory) */
            char *dir = dsc_dir(cx, s), *path = path_join(dir, path_basename(dsc));
            char *text = NULL, *err = NULL;
            struct dsc_info info = {0};
            if (read_file(path, &text, NULL) == 0 && debfetch_dsc_parse(text, &info, &err) == 0)
                json_add_str(o, "version", info.version);
            dsc_info_free(&info);
            free(err);
            free(text);
            free(path);
            free(dir);
            json_add_str(o, "file", path_basename(dsc));
            json_add_str(o, "url", dsc);
            json_add_str(o, "sha256", sset(cx->st, s, "dsc_sha256"));
        } else {
            /* the table's version is the default pin's; a recipe's own pin
             * is named by its file and hash only */
            if (!cx_isset(cx, ks))
                json_add_str(o, "version", s->version);
            json_add_str(o, "file", file ? file : path_basename(url));
            if (url)
                json_add_str(o, "url", url);
            json_add_str(o, "sha256", sset(cx->st, s, "sha256"));
        }
        json_object *pl = json_object_new_array();
        for (size_t i = 0; s->patches && s->patches[i]; i++)
            json_object_array_add(pl, json_str(path_basename(s->patches[i])));
        const struct st_node *pn = cx_node(cx, kp);
        for (size_t i = 0; i < node_len(pn); i++) {
            const struct st_node *e = node_elem(pn, i);
            const char *name = node_str(e) ? node_str(e) : node_member_str(e, "url");
            json_object_array_add(pl, json_str(name ? path_basename(name) : "?"));
        }
        json_object_object_add(o, "patches", pl);
        json_object_array_add(srcs, o);
        free(ks);
        free(kp);
    }
    json_object_object_add(m, "sources", srcs);
    if (d->debs && pkg_debs_manifest(cx, d->debs, m)) {
        json_object_put(m);
        if (extra)
            json_object_put(extra);
        return 1;
    }
    if (extra) {
        json_object_object_foreach(extra, k, val)
            json_object_object_add(m, k, json_object_get(val));
        json_object_put(extra);
    }
    return cx_write_manifest(cx, m);
}
