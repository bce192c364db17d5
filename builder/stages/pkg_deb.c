/* Binary packages from the generic package build (pkg_deb.h). */
#define _GNU_SOURCE
#include "pkg_deb.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sha256.h"
#include "formats/binfmt.h"
#include "formats/deb.h"
#include "formats/shlibs.h"
#include "pkg_build.h"

/* The Version of binary package P: its own, else the packages'. */
static const char *deb_version(const struct pkg_debs *d, const struct pkg_deb *p)
{
    return p->version ? p->version : d->version;
}

/* The Architecture of binary package P built for the recipe's ARCH: "all",
 * or the recipe's as Debian spells it. */
static const char *pkg_arch(const struct pkg_deb *p, const char *arch)
{
    return p->arch ? p->arch : deb_arch(arch);
}

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
        if (p->version && deb_valid_version(p->version, err) < 0)
            bad |= st_error(st, "debs", "%s: %s", p->name, err);
        if (p->arch && strcmp(p->arch, "all") != 0)
            bad |= st_error(st, "debs", "%s: architecture '%s': a binary package is the "
                            "recipe's architecture (leave it unset) or \"all\"", p->name,
                            p->arch);
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
    if (d->shlibs_version && deb_valid_version(d->shlibs_version, err) < 0)
        bad |= st_error(st, "shlibs_version", "%s", err);
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

/* A glob of the split: whose, and whether it took a file (or only matched
 * files not_installed leaves out). */
struct glob_use {
    const char *glob, *owner, *where; /* owner: a package, or NULL for not_installed */
    bool used, shadowed;
};

int pkg_debs_split(const struct pkg_debs *d, const struct strlist *files, size_t *owner,
                   const char *where, char *err, size_t errlen)
{
    size_t ng = 0;
    for (const struct pkg_deb *p = d->debs; p->name; p++)
        for (size_t g = 0; p->files && p->files[g]; g++)
            ng++;
    for (size_t g = 0; d->not_installed && d->not_installed[g]; g++)
        ng++;
    struct glob_use *u = xcalloc(ng + 1, sizeof *u);
    size_t *of = xcalloc(ng + 1, sizeof *of); /* the package index of each glob */
    size_t npg = 0;                           /* the packages' globs come first */
    for (const struct pkg_deb *p = d->debs; p->name; p++)
        for (size_t g = 0; p->files && p->files[g]; g++) {
            of[npg] = (size_t)(p - d->debs);
            u[npg++] = (struct glob_use){.glob = p->files[g], .owner = p->name,
                                         .where = p->where ? p->where : where};
        }
    ng = npg;
    for (size_t g = 0; d->not_installed && d->not_installed[g]; g++)
        u[ng++] = (struct glob_use){
            .glob = d->not_installed[g],
            .where = d->not_installed_where ? d->not_installed_where : where};
    int rc = 0;
    for (size_t i = 0; !rc && i < files->n; i++) {
        /* not_installed first: it narrows the packages' globs ("usr/include"
         * without the kernel's headers) */
        bool left_out = false;
        for (size_t g = npg; g < ng; g++)
            if (takes(u[g].glob, files->v[i]))
                left_out = u[g].used = true;
        if (left_out) {
            owner[i] = PKG_NOT_INSTALLED;
            for (size_t g = 0; g < npg; g++)
                if (takes(u[g].glob, files->v[i]))
                    u[g].shadowed = true;
            continue;
        }
        const struct glob_use *own = NULL;
        for (size_t g = 0; !rc && g < npg; g++) {
            if (!takes(u[g].glob, files->v[i]))
                continue;
            u[g].used = true;
            if (own && own->owner != u[g].owner) {
                snprintf(err, errlen, "%s: /%s is taken by two binary packages, %s and %s: "
                         "each file goes into one (narrow their files globs)", u[g].where,
                         files->v[i], own->owner, u[g].owner);
                rc = -1;
            }
            own = &u[g];
            owner[i] = of[g];
        }
        if (!rc && !own) {
            snprintf(err, errlen, "%s: /%s is in no binary package: add it to one's files globs "
                     "(or to not_installed, or do not install it)", where, files->v[i]);
            rc = -1;
        }
    }
    for (size_t g = 0; !rc && g < ng; g++)
        if (!u[g].used) {
            snprintf(err, errlen, "%s: %s's glob '%s' takes no file of DESTDIR (%zu files%s): "
                     "correct it, or drop it if the build no longer installs those files",
                     u[g].where, u[g].owner ? u[g].owner : "not_installed", u[g].glob,
                     files->n, u[g].shadowed ? "; those it matches, not_installed leaves out"
                                             : "");
            rc = -1;
        }
    free(u);
    free(of);
    return rc;
}

/* Per binary package, while building. */
struct built {
    char *root;          /* WORK/deb/NAME */
    struct strlist rel;  /* its files, relative */
    struct buf shlibs;   /* lines of the libraries it ships */
    struct strlist deps; /* computed Depends */
    char *file;          /* NAME_VERSION_ARCH.deb */
    /* The SONAMEs of its libraries (a library without one: its file name,
     * as gconv modules name their helpers): DT_NEEDED of those adds no
     * dependency, whether or not shlibs can name them. */
    struct strlist sonames;
    struct strlist exec; /* its files its executables globs take */
};

/* A failure at a debs entry: its FILE:LINE (the recipe's `debs` setting
 * where the table has none), then the message. */
static int entry_fail(const struct stage_ctx *cx, const struct pkg_deb *p, const char *fmt, ...)
    PRINTF_LIKE(3, 4);
static int entry_fail(const struct stage_ctx *cx, const struct pkg_deb *p, const char *fmt, ...)
{
    char *where = p->where ? xstrdup(p->where) : cx_where(cx, "debs");
    va_list ap;
    va_start(ap, fmt);
    char *msg = xvasprintf(fmt, ap);
    va_end(ap);
    int rc = cx_fail(cx, "%s: %s", where, msg);
    free(msg);
    free(where);
    return rc;
}

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
            if (r == 1 && (e.soname || strstr(path_basename(path), ".so")))
                strlist_push(&b[i].sonames, e.soname ? e.soname : path_basename(path));
            if (r == 1 && e.soname && !shlibs_find(m, e.soname)) {
                char *dep = xasprintf("%s (>= %s)", d->debs[i].name,
                                      d->shlibs_version ? d->shlibs_version
                                                        : deb_version(d, &d->debs[i]));
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
        bool reg = lstat(path, &sb) == 0 && S_ISREG(sb.st_mode);
        char berr[BINFMT_ERRLEN];
        int machine = reg && p->arch && !strcmp(p->arch, "all") ? binfmt_elf_machine(path, berr)
                                                                  : -1;
        if (machine >= 0) {
            free(label);
            free(path);
            return entry_fail(cx, p, "%s is Architecture: all, but /%s is an ELF object (%s), "
                              "built for the recipe's architecture: leave its architecture "
                              "unset, or move the file to another package", p->name,
                              b->rel.v[j], binfmt_elf_machine_name(machine));
        }
        int r = reg ? elf_dynamic_read(path, &e, err) : 0;
        struct strlist needed = {0};
        for (size_t k = 0; r == 1 && k < e.needed.n; k++)
            if (!strlist_contains(&b->sonames, e.needed.v[k]))
                strlist_push(&needed, e.needed.v[k]);
        if (r == 1 && shlibs_depends(m, p->name, label, &needed, &b->deps, err) < 0)
            r = -1;
        strlist_free(&needed);
        if (r == 1)
            elf_dynamic_free(&e);
        free(label);
        free(path);
        if (r < 0)
            return entry_fail(cx, p, "%s", err);
    }
    strlist_sort(&b->deps);
    return 0;
}

/* The components of path P, ".." and "." resolved (never above the root). */
static void path_parts(const char *p, struct strlist *out)
{
    char *copy = xstrdup(p), *save = NULL;
    for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, ".."))
            out->n ? (free(out->v[--out->n]), out->v[out->n] = NULL) : (void)0;
        else if (strcmp(c, "."))
            strlist_push(out, c);
    }
    free(copy);
}

/* A symlink's target as dh_link writes it (policy 10.5): absolute between
 * top-level directories (/usr/lib/libc.so -> /lib/libc.so.6.1), else
 * relative and short (libz.so -> libz.so.1.3.1). REL is the link's path
 * in the package. New string. */
char *pkg_link_target(const char *rel, const char *target)
{
    char *dir = path_dirname(rel);
    char *abs = target[0] == '/' ? xstrdup(target) : xasprintf("/%s/%s", dir, target);
    struct strlist d = {0}, t = {0};
    path_parts(strcmp(dir, ".") ? dir : "", &d);
    path_parts(abs, &t);
    struct buf b = BUF_INIT;
    if (!t.n || (d.n && strcmp(d.v[0], t.v[0]))) {
        for (size_t i = 0; i < t.n; i++)
            buf_printf(&b, "/%s", t.v[i]);
        if (!t.n)
            buf_puts(&b, "/");
    } else {
        size_t common = 0;
        while (common < d.n && common < t.n && !strcmp(d.v[common], t.v[common]))
            common++;
        for (size_t i = common; i < d.n; i++)
            buf_printf(&b, "%s..", b.n ? "/" : "");
        for (size_t i = common; i < t.n; i++)
            buf_printf(&b, "%s%s", b.n ? "/" : "", t.v[i]);
        if (!b.n)
            buf_puts(&b, ".");
    }
    strlist_free(&d);
    strlist_free(&t);
    free(abs);
    free(dir);
    return buf_detach(&b);
}

/* Copies the files P takes from DESTDIR into B->root (symlinks as dh_link
 * would have them), and its copyright. */
static int stage_files(const struct stage_ctx *cx, const struct pkg_vars *v,
                       const struct pkg_deb *p, const char *destdir, struct built *b)
{
    for (size_t j = 0; j < b->rel.n; j++) {
        char *from = path_join(destdir, b->rel.v[j]), *to = path_join(b->root, b->rel.v[j]);
        char *dir = path_dirname(to);
        char target[4096];
        ssize_t tl = readlink(from, target, sizeof target - 1);
        int bad = mkdir_p(dir, 0755) < 0;
        if (!bad && tl > 0) {
            target[tl] = 0;
            char *t = pkg_link_target(b->rel.v[j], target);
            bad = symlink(t, to) < 0;
            free(t);
        } else if (!bad) {
            bad = copy_tree(from, to, false) < 0;
        }
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

/* B->exec: the files of P its executables globs take; a glob taking none
 * is an error at its row. */
static int executables(const struct stage_ctx *cx, const struct pkg_deb *p, struct built *b)
{
    for (size_t g = 0; p->executables && p->executables[g]; g++) {
        bool used = false;
        for (size_t j = 0; j < b->rel.n; j++)
            if (takes(p->executables[g], b->rel.v[j])) {
                used = true;
                if (!strlist_contains(&b->exec, b->rel.v[j]))
                    strlist_push(&b->exec, b->rel.v[j]);
            }
        if (!used)
            return entry_fail(cx, p, "%s's executables glob '%s' takes none of its files: "
                              "correct it, or drop it", p->name, p->executables[g]);
    }
    return 0;
}

enum strip_class { STRIP_NONE, STRIP_LIB, STRIP_PROG, STRIP_AR };

/* What dh_strip does with PATH: shared libraries by name (.so) and ELF
 * type, programs (ELF executables and PIEs), static libraries (ar
 * archives named .a); object files and everything else are left. */
static enum strip_class strip_class_of(const char *path)
{
    unsigned char h[20];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, h, sizeof h);
    if (fd >= 0)
        close(fd);
    const char *base = path_basename(path);
    if (n >= 8 && !memcmp(h, "!<arch>\n", 8))
        return str_ends(base, ".a") ? STRIP_AR : STRIP_NONE;
    if (n < 18 || memcmp(h, "\177ELF", 4) || (h[5] != 1 && h[5] != 2))
        return STRIP_NONE;
    unsigned type = h[5] == 1 ? (unsigned)(h[16] | h[17] << 8) : (unsigned)(h[16] << 8 | h[17]);
    if (type == 3 /* ET_DYN */)
        return strstr(base, ".so") ? STRIP_LIB : STRIP_PROG;
    return type == 2 /* ET_EXEC */ ? STRIP_PROG : STRIP_NONE;
}

/* dh_strip over every package's staged files, one strip run per class. */
static int strip_all(const struct stage_ctx *cx, const struct pkg_vars *v, struct built *b,
                     size_t n)
{
    static const char *const args[][6] = {
        [STRIP_LIB] = {"--remove-section=.comment", "--remove-section=.note", "--strip-unneeded"},
        [STRIP_PROG] = {"--remove-section=.comment", "--remove-section=.note"},
        [STRIP_AR] = {"--strip-debug", "--remove-section=.comment", "--remove-section=.note",
                      "--enable-deterministic-archives", "--remove-section=.gnu.lto_*",
                      "--remove-section=.gnu.debuglto_*"},
    };
    char *prog = v->cross ? xasprintf("%sstrip", v->cross) : xstrdup("strip");
    int rc = 0;
    for (int c = STRIP_LIB; !rc && c <= STRIP_AR; c++) {
        struct strlist argv = {0};
        strlist_push(&argv, prog);
        for (size_t k = 0; k < ARRAY_LEN(args[c]) && args[c][k]; k++)
            strlist_push(&argv, args[c][k]);
        size_t first = argv.n;
        long long before = 0, after = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < b[i].rel.n; j++) {
                char *path = path_join(b[i].root, b[i].rel.v[j]);
                struct stat sb;
                if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
                    strip_class_of(path) == (enum strip_class)c) {
                    before += sb.st_size;
                    strlist_push_owned(&argv, path);
                } else {
                    free(path);
                }
            }
        if (argv.n > first && cx_run(cx, (const char *const *)argv.v) != 0) {
            char *where = cx_where(cx, "strip");
            rc = cx_fail(cx, "%s: %s failed on the packages' files (see its output above): "
                         "a file it cannot read, or set strip = false", where, prog);
            free(where);
        }
        for (size_t k = first; !rc && k < argv.n; k++) {
            struct stat sb;
            if (stat(argv.v[k], &sb) == 0)
                after += sb.st_size;
        }
        if (!rc && argv.n > first)
            cx_log(cx, "strip: %zu %s, %lld -> %lld bytes", argv.n - first,
                   c == STRIP_LIB ? "shared libraries" : c == STRIP_PROG ? "programs"
                                                         : "static libraries", before, after);
        strlist_free(&argv);
    }
    free(prog);
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
    /* the libraries' dependencies go where dpkg-shlibdeps -dPre-Depends puts
     * them for an Essential package, or into Depends */
    const struct strlist none = {0};
    char *dep = join_deps(p->shlibs_pre ? &none : &b->deps, p->depends);
    char *pre = join_deps(p->shlibs_pre ? &b->deps : &none, p->pre_depends);
    struct deb_package dp = {
        .f = {.package = p->name, .version = deb_version(d, p), .arch = pkg_arch(p, cx->arch),
              .maintainer = d->maintainer, .section = p->section, .priority = p->priority,
              .essential = p->essential, .depends = dep, .pre_depends = pre,
              .provides = p->provides, .conflicts = p->conflicts, .replaces = p->replaces,
              .breaks = p->breaks, .recommends = p->recommends, .suggests = p->suggests,
              .multi_arch = p->multi_arch, .summary = p->summary,
              .description = p->description},
        .conffiles = p->conffiles,
        .shlibs = b->shlibs.p,
        .executables = (const char *const *)b->exec.v,
        .dirs = p->dirs,
        .triggers = p->triggers,
    };
    for (int s = 0; s < 4; s++)
        dp.scripts[s] = scripts[s];
    char *deb = path_join(debdir, b->file), err[DEB_ERRLEN];
    if (!rc && deb_build(&dp, b->root, deb, cx->source_date_epoch, err) < 0)
        rc = entry_fail(cx, p, "%s", err); /* its trigger, copyright or dirs */
    else if (!rc)
        cx_log(cx, "%s: Depends: %s%s%s", b->file, *dep ? dep : "(none)",
               *pre ? "; Pre-Depends: " : "", pre);
    free(deb);
    free(dep);
    free(pre);
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
        char err[DEB_ERRLEN], *where = cx_where(cx, "debs");
        if (pkg_debs_split(d, &files, owner, where, err, sizeof err) < 0)
            rc = cx_fail(cx, "%s", err);
        free(where);
    }
    for (size_t i = 0; i < n; i++) {
        buf_init(&b[i].shlibs);
        b[i].root = xasprintf("%s/deb/%s", cx->work, d->debs[i].name);
        b[i].file = deb_file_name(d->debs[i].name, deb_version(d, &d->debs[i]),
                                  pkg_arch(&d->debs[i], cx->arch));
        for (size_t j = 0; !rc && j < files.n; j++)
            if (owner[j] == i)
                strlist_push(&b[i].rel, files.v[j]);
        if (!rc && (rm_rf(b[i].root) < 0 && errno != ENOENT))
            rc = cx_fail(cx, "cannot clear %s: %s", b[i].root, strerror(errno));
        if (!rc && mkdir_p(b[i].root, 0755) < 0)
            rc = cx_fail(cx, "cannot create %s: %s", b[i].root, strerror(errno));
        if (!rc)
            rc = stage_files(cx, v, &d->debs[i], destdir, &b[i]);
        if (!rc) /* copies of a cached tree are read-only: strip rewrites them */
            tree_owner_writable(b[i].root, true);
        if (!rc)
            rc = executables(cx, &d->debs[i], &b[i]);
    }
    if (!rc && d->strip)
        rc = strip_all(cx, v, b, n);
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
        strlist_free(&b[i].sonames);
        strlist_free(&b[i].exec);
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
    for (const struct pkg_deb *p = d->debs; p->name; p++) {
        const char *arch = pkg_arch(p, cx->arch);
        char *file = deb_file_name(p->name, deb_version(d, p), arch);
        char *path = xasprintf("%s/debs/%s", cx->out, file), hex[65];
        struct stat sb;
        int rc = 0;
        if (stat(path, &sb) < 0 || sha256_file(path, hex) < 0) {
            rc = cx_fail(cx, "cannot read %s: %s", path, strerror(errno));
        } else {
            json_object *o = json_object_new_object();
            json_add_str(o, "package", p->name);
            json_add_str(o, "version", deb_version(d, p));
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

char *pkg_deb_entry_stage(const char *e, const char **pkg)
{
    const char *sl = strchr(e, '/');
    *pkg = sl ? sl + 1 : NULL;
    return sl ? xstrndup(e, (size_t)(sl - e)) : xstrdup(e);
}

int pkg_deb_iter_open(struct pkg_deb_iter *it, const struct stage_ctx *cx, const char *entry)
{
    *it = (struct pkg_deb_iter){0};
    it->stage = pkg_deb_entry_stage(entry, &it->want);
    it->dir = path_join(cx_dep(cx, it->stage), "debs");
    return dir_list(it->dir, &it->names) < 0 ? -1 : 0; /* sorted */
}

int pkg_deb_iter_next(struct pkg_deb_iter *it, char err[ARC_ERRLEN])
{
    while (it->at < it->names.n) {
        const char *name = it->names.v[it->at++];
        if (!str_ends(name, ".deb"))
            continue; /* debs/shlibs */
        free(it->path);
        deb_info_free(&it->info);
        it->file = name;
        it->path = path_join(it->dir, name);
        if (arc_deb_info(it->path, &it->info, err) < 0)
            return -1;
        if (!it->want || !strcmp(it->want, it->info.package)) {
            it->taken++;
            return 1;
        }
    }
    return 0;
}

void pkg_deb_iter_close(struct pkg_deb_iter *it)
{
    deb_info_free(&it->info);
    free(it->path);
    free(it->dir);
    free(it->stage);
    strlist_free(&it->names);
}
