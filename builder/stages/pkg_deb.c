/* Binary packages from the generic package build (pkg_deb.h). */
#define _GNU_SOURCE
#include "pkg_deb.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/sha256.h"
#include "formats/deb.h"
#include "formats/shlibs.h"
#include "pkg_build.h"

int pkg_debs_declare(struct stage *st, const struct pkg_debs *d)
{
    int bad = 0;
    char err[DEB_ERRLEN];
    if (!deb_arch(st_arch(st)))
        bad |= st_error(st, "debs", "no Debian architecture for the recipe's arch %s",
                        st_arch(st));
    if (deb_valid_version(d->version, err) < 0)
        bad |= st_error(st, "version", "%s", err);
    if (!d->maintainer || !strchr(d->maintainer, '<'))
        bad |= st_error(st, "maintainer", "'%s' is not a Maintainer (\"Name <address>\")",
                        d->maintainer ? d->maintainer : "");
    for (const struct pkg_deb *p = d->debs; p->name; p++) {
        if (deb_valid_name(p->name, err) < 0)
            bad |= st_error(st, "debs", "%s", err);
        for (const struct pkg_deb *q = d->debs; q < p; q++)
            if (!strcmp(q->name, p->name))
                bad |= st_error(st, "debs", "two binary packages are named %s", p->name);
        if (!p->summary || !*p->summary)
            bad |= st_error(st, "debs", "binary package %s has no summary (the Description's "
                            "first line)", p->name);
        if (!p->files || !p->files[0])
            bad |= st_error(st, "debs", "binary package %s takes no files (give its globs)",
                            p->name);
    }
    for (size_t i = 0; d->shlibs_files && d->shlibs_files[i]; i++) {
        char *label = xasprintf("shlibs:%s", path_basename(d->shlibs_files[i]));
        st_input_file(st, label, d->shlibs_files[i]);
        free(label);
    }
    for (size_t i = 0; d->shlibs_stages && d->shlibs_stages[i]; i++)
        st_need_file(st, d->shlibs_stages[i], "debs/shlibs");
    st_tool(st, "dpkg-deb");
    st_output(st, "debs");
    st_output(st, "debs/shlibs");
    return bad ? -1 : 0;
}

/* Whether GLOB takes REL: REL itself or one of its parent directories. */
static bool takes(const char *glob, const char *rel)
{
    while (*glob == '/')
        glob++;
    char *p = xstrdup(rel);
    bool yes = false;
    for (char *end = p + strlen(p); !yes && end > p;) {
        *end = 0;
        yes = fnmatch(glob, p, FNM_PATHNAME) == 0;
        char *slash = strrchr(p, '/');
        end = slash ? slash : p;
    }
    free(p);
    return yes;
}

int pkg_debs_split(const struct pkg_debs *d, const struct strlist *files, size_t *owner,
                   char *err, size_t errlen)
{
    for (size_t i = 0; i < files->n; i++) {
        const struct pkg_deb *own = NULL;
        for (const struct pkg_deb *p = d->debs; p->name; p++) {
            bool t = false;
            for (size_t g = 0; !t && p->files && p->files[g]; g++)
                t = takes(p->files[g], files->v[i]);
            if (t && own) {
                snprintf(err, errlen, "/%s is taken by two binary packages, %s and %s: each "
                         "file goes into one (narrow their files globs)", files->v[i],
                         own->name, p->name);
                return -1;
            }
            if (t) {
                own = p;
                owner[i] = (size_t)(p - d->debs);
            }
        }
        if (!own) {
            snprintf(err, errlen, "/%s is in no binary package: add it to one's files globs "
                     "(or do not install it)", files->v[i]);
            return -1;
        }
    }
    return 0;
}

/* Per binary package, while building. */
struct built {
    char *root;          /* WORK/deb/NAME */
    struct strlist rel;  /* its files, relative */
    struct buf shlibs;   /* lines of the libraries it ships */
    struct strlist deps; /* computed Depends */
    char *file;          /* NAME_VERSION_ARCH.deb */
};

static int read_shlibs_file(const struct stage_ctx *cx, struct shlibs *m, const char *path)
{
    char *text, err[SHLIBS_ERRLEN];
    size_t len;
    if (read_file(path, &text, &len) < 0)
        return cx_fail(cx, "cannot read the shlibs file %s: %s", path, strerror(errno));
    int rc = shlibs_parse(m, text, path, err) < 0 ? cx_fail(cx, "%s", err) : 0;
    free(text);
    return rc;
}

/* The map: the libraries of this build first (the package being built wins,
 * as with dpkg-shlibdeps), then the shlibs files given, then those of the
 * package stages named. */
static int make_map(const struct stage_ctx *cx, const struct pkg_debs *d, struct built *b,
                    size_t n, struct shlibs *m)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < b[i].rel.n; j++) {
            char *path = path_join(b[i].root, b[i].rel.v[j]), err[SHLIBS_ERRLEN];
            struct elf_dynamic e;
            struct stat sb;
            int r = lstat(path, &sb) == 0 && S_ISREG(sb.st_mode)
                        ? elf_dynamic_read(path, &e, err) : 0;
            if (r < 0) {
                free(path);
                return cx_fail(cx, "%s", err);
            }
            if (r == 1 && e.soname && !shlibs_find(m, e.soname)) {
                char *dep = xasprintf("%s (>= %s)", d->debs[i].name, d->version);
                char *line = shlibs_line(e.soname, dep);
                if (line && shlibs_add(m, e.soname, dep) == 0)
                    buf_puts(&b[i].shlibs, line);
                free(line);
                free(dep);
            }
            if (r == 1)
                elf_dynamic_free(&e);
            free(path);
        }
    }
    for (size_t i = 0; d->shlibs_files && d->shlibs_files[i]; i++)
        if (read_shlibs_file(cx, m, d->shlibs_files[i]))
            return 1;
    for (size_t i = 0; d->shlibs_stages && d->shlibs_stages[i]; i++) {
        char *p = cx_dep_file(cx, d->shlibs_stages[i], "debs/shlibs");
        int rc = p ? read_shlibs_file(cx, m, p) : 1;
        free(p);
        if (rc)
            return 1;
    }
    return 0;
}

static int depends(const struct stage_ctx *cx, const struct pkg_deb *p, struct built *b,
                   const struct shlibs *m)
{
    for (size_t j = 0; j < b->rel.n; j++) {
        char *path = path_join(b->root, b->rel.v[j]), err[SHLIBS_ERRLEN];
        char *label = xasprintf("/%s", b->rel.v[j]);
        struct elf_dynamic e;
        struct stat sb;
        int r = lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? elf_dynamic_read(path, &e, err)
                                                             : 0;
        if (r == 1 && shlibs_depends(m, p->name, label, &e.needed, &b->deps, err) < 0)
            r = -1;
        if (r == 1)
            elf_dynamic_free(&e);
        free(label);
        free(path);
        if (r < 0)
            return cx_fail(cx, "%s", err);
    }
    strlist_sort(&b->deps);
    return 0;
}

/* Copies the files P takes from DESTDIR into B->root, and its copyright. */
static int stage_files(const struct stage_ctx *cx, const struct pkg_vars *v,
                       const struct pkg_deb *p, const char *destdir, struct built *b)
{
    for (size_t j = 0; j < b->rel.n; j++) {
        char *from = path_join(destdir, b->rel.v[j]), *to = path_join(b->root, b->rel.v[j]);
        char *dir = path_dirname(to);
        int bad = mkdir_p(dir, 0755) < 0 || copy_tree(from, to, false) < 0;
        int e = errno;
        free(dir);
        free(from);
        free(to);
        if (bad)
            return cx_fail(cx, "%s: cannot stage /%s: %s", p->name, b->rel.v[j], strerror(e));
    }
    if (!p->copyright)
        return 0;
    char *from = pkg_expand(v, p->copyright);
    if (!from)
        return 1;
    char *to = xasprintf("%s/usr/share/doc/%s/copyright", b->root, p->name);
    char *dir = path_dirname(to);
    int rc = 0;
    if (mkdir_p(dir, 0755) < 0 || copy_file(from, to) < 0)
        rc = cx_fail(cx, "%s: cannot install its copyright file %s: %s", p->name, from,
                     strerror(errno));
    free(dir);
    free(to);
    free(from);
    return rc;
}

static char *join_deps(const struct strlist *deps, const char *extra)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < deps->n; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", deps->v[i]);
    if (extra && *extra)
        buf_printf(&b, "%s%s", b.n ? ", " : "", extra);
    return buf_detach(&b);
}

static int build_one(const struct stage_ctx *cx, const struct pkg_vars *v,
                     const struct pkg_debs *d, const struct pkg_deb *p, struct built *b,
                     const char *debdir)
{
    char *scripts[4] = {0};
    int rc = 0;
    for (int s = 0; s < 4 && !rc; s++)
        if (p->scripts[s] && !(scripts[s] = pkg_expand(v, p->scripts[s])))
            rc = 1;
    char *dep = join_deps(&b->deps, p->depends);
    struct deb_package dp = {
        .f = {.package = p->name, .version = d->version, .arch = deb_arch(cx->arch),
              .maintainer = d->maintainer, .section = p->section, .priority = p->priority,
              .essential = p->essential, .depends = dep, .pre_depends = p->pre_depends,
              .provides = p->provides, .conflicts = p->conflicts, .replaces = p->replaces,
              .breaks = p->breaks, .multi_arch = p->multi_arch, .summary = p->summary,
              .description = p->description},
        .conffiles = p->conffiles,
        .shlibs = b->shlibs.p,
    };
    for (int s = 0; s < 4; s++)
        dp.scripts[s] = scripts[s];
    char *deb = path_join(debdir, b->file), err[DEB_ERRLEN];
    if (!rc && deb_build(&dp, b->root, deb, cx->source_date_epoch, err) < 0)
        rc = cx_fail(cx, "%s", err);
    else if (!rc)
        cx_log(cx, "%s: Depends: %s", b->file, *dep ? dep : "(none)");
    free(deb);
    free(dep);
    for (int s = 0; s < 4; s++)
        free(scripts[s]);
    return rc;
}

int pkg_debs_build(const struct stage_ctx *cx, const struct pkg_vars *v,
                   const struct pkg_debs *d)
{
    size_t n = 0;
    while (d->debs[n].name)
        n++;
    char *destdir = pkg_expand(v, d->destdir);
    if (!destdir)
        return 1;
    struct strlist files = {0};
    struct built *b = xcalloc(n + 1, sizeof *b);
    struct shlibs map = {0};
    char *debdir = path_join(cx->work, "debs-out");
    size_t *owner = NULL;
    int rc = 0;
    if (!is_dir(destdir) || list_tree(destdir, &files) < 0)
        rc = cx_fail(cx, "the steps installed nothing into %s (DESTDIR): see the log", destdir);
    if (!rc) {
        owner = xcalloc(files.n + 1, sizeof *owner);
        char err[DEB_ERRLEN];
        if (pkg_debs_split(d, &files, owner, err, sizeof err) < 0)
            rc = cx_fail(cx, "%s", err);
    }
    for (size_t i = 0; i < n; i++) {
        buf_init(&b[i].shlibs);
        b[i].root = xasprintf("%s/deb/%s", cx->work, d->debs[i].name);
        b[i].file = deb_file_name(d->debs[i].name, d->version, deb_arch(cx->arch));
        for (size_t j = 0; !rc && j < files.n; j++)
            if (owner[j] == i)
                strlist_push(&b[i].rel, files.v[j]);
        if (!rc && (rm_rf(b[i].root) < 0 && errno != ENOENT))
            rc = cx_fail(cx, "cannot clear %s: %s", b[i].root, strerror(errno));
        if (!rc && mkdir_p(b[i].root, 0755) < 0)
            rc = cx_fail(cx, "cannot create %s: %s", b[i].root, strerror(errno));
        if (!rc)
            rc = stage_files(cx, v, &d->debs[i], destdir, &b[i]);
    }
    if (!rc && mkdir_p(debdir, 0755) < 0)
        rc = cx_fail(cx, "cannot create %s: %s", debdir, strerror(errno));
    if (!rc)
        rc = make_map(cx, d, b, n, &map);
    for (size_t i = 0; !rc && i < n; i++)
        rc = depends(cx, &d->debs[i], &b[i], &map);
    for (size_t i = 0; !rc && i < n; i++)
        rc = build_one(cx, v, d, &d->debs[i], &b[i], debdir);
    /* only now into OUT: a failure above leaves no .deb there */
    struct buf all = BUF_INIT;
    for (size_t i = 0; i < n; i++)
        buf_puts(&all, b[i].shlibs.p);
    if (!rc)
        rc = cx_write(cx, "debs/shlibs", all.p, all.n);
    for (size_t i = 0; !rc && i < n; i++) {
        char *from = path_join(debdir, b[i].file), *to = xasprintf("%s/debs/%s", cx->out,
                                                                   b[i].file);
        if (rename(from, to) < 0)
            rc = cx_fail(cx, "cannot move %s to %s: %s", from, to, strerror(errno));
        free(from);
        free(to);
    }
    buf_free(&all);
    for (size_t i = 0; i < n; i++) {
        free(b[i].root);
        free(b[i].file);
        strlist_free(&b[i].rel);
        strlist_free(&b[i].deps);
        buf_free(&b[i].shlibs);
    }
    free(b);
    free(owner);
    free(debdir);
    free(destdir);
    strlist_free(&files);
    shlibs_free(&map);
    return rc;
}

int pkg_debs_manifest(const struct stage_ctx *cx, const struct pkg_debs *d, json_object *m)
{
    json_object *a = json_object_new_array();
    json_object_object_add(m, "debs", a);
    const char *arch = deb_arch(cx->arch);
    for (const struct pkg_deb *p = d->debs; p->name; p++) {
        char *file = deb_file_name(p->name, d->version, arch);
        char *path = xasprintf("%s/debs/%s", cx->out, file), hex[65];
        struct stat sb;
        int rc = 0;
        if (stat(path, &sb) < 0 || sha256_file(path, hex) < 0) {
            rc = cx_fail(cx, "cannot read %s: %s", path, strerror(errno));
        } else {
            json_object *o = json_object_new_object();
            json_add_str(o, "package", p->name);
            json_add_str(o, "version", d->version);
            json_add_str(o, "architecture", arch);
            json_add_str(o, "file", file);
            json_object_object_add(o, "size", json_object_new_int64((int64_t)sb.st_size));
            json_add_str(o, "sha256", hex);
            json_object_array_add(a, o);
        }
        free(path);
        free(file);
        if (rc)
            return rc;
    }
    return 0;
}
