/* Debian binary packages from a staged tree (deb.h). */
#define _GNU_SOURCE
#include "deb.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/run_command.h"
#include "base/util.h"

static int errf(char err[DEB_ERRLEN], const char *fmt, ...) PRINTF_LIKE(2, 3);
static int errf(char err[DEB_ERRLEN], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, DEB_ERRLEN, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- names and versions ------------------------------------------------- */

int deb_valid_name(const char *name, char err[DEB_ERRLEN])
{
    if (!name || strlen(name) < 2)
        return errf(err, "package name '%s' is too short: Debian names have at least two "
                    "characters (policy 5.6.1)", name ? name : "");
    if (!islower((unsigned char)name[0]) && !isdigit((unsigned char)name[0]))
        return errf(err, "package name '%s' must start with a lower-case letter or a digit "
                    "(policy 5.6.1)", name);
    for (const char *p = name; *p; p++)
        if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && !strchr("+.-", *p))
            return errf(err, "package name '%s' has '%c': Debian names are made of a-z, 0-9, "
                        "'+', '-' and '.' (policy 5.6.1)", name, *p);
    return 0;
}

static bool all_of(const char *s, size_t n, const char *extra)
{
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i]))
            return false;
    return true;
}

int deb_valid_version(const char *v, char err[DEB_ERRLEN])
{
    if (!v || !*v)
        return errf(err, "the version is empty");
    const char *colon = strchr(v, ':'), *up = v;
    if (colon) {
        if (colon == v || !all_of(v, (size_t)(colon - v), ""))
            return errf(err, "version '%s': the epoch before ':' must be digits (policy 5.6.12)",
                        v);
        for (const char *p = v; p < colon; p++)
            if (!isdigit((unsigned char)*p))
                return errf(err, "version '%s': the epoch before ':' must be digits (policy "
                            "5.6.12)", v);
        up = colon + 1;
    }
    const char *dash = strrchr(up, '-');
    size_t uplen = dash ? (size_t)(dash - up) : strlen(up);
    if (!uplen)
        return errf(err, "version '%s' has no upstream version (policy 5.6.12)", v);
    if (!isdigit((unsigned char)up[0]))
        return errf(err, "version '%s': the upstream version must start with a digit (policy "
                    "5.6.12)", v);
    if (!all_of(up, uplen, colon ? ".+~-:" : ".+~-"))
        return errf(err, "version '%s': the upstream version may have only letters, digits and "
                    "\". + ~%s%s\" (policy 5.6.12)", v, dash ? " -" : "", colon ? " :" : "");
    if (dash && (!dash[1] || !all_of(dash + 1, strlen(dash + 1), "+.~")))
        return errf(err, "version '%s': the Debian revision after the last '-' must be letters, "
                    "digits and \"+ . ~\" (policy 5.6.12)", v);
    return 0;
}

const char *deb_arch(const char *a)
{
    if (!a)
        return NULL;
    if (!strcmp(a, "ia64"))
        return "ia64";
    if (!strcmp(a, "amd64") || !strcmp(a, "x86_64"))
        return "amd64";
    return NULL;
}

char *deb_file_name(const char *name, const char *version, const char *arch)
{
    const char *colon = strchr(version, ':');
    return xasprintf("%s_%s_%s.deb", name, colon ? colon + 1 : version, arch);
}

/* ---- control -------------------------------------------------------------- */

static void field(struct buf *b, const char *name, const char *value)
{
    if (value && *value)
        buf_printf(b, "%s: %s\n", name, value);
}

char *deb_control(const struct deb_fields *f)
{
    struct buf b = BUF_INIT;
    field(&b, "Package", f->package);
    field(&b, "Version", f->version);
    field(&b, "Architecture", f->arch);
    if (f->essential)
        field(&b, "Essential", "yes");
    field(&b, "Maintainer", f->maintainer);
    if (f->installed_size >= 0)
        buf_printf(&b, "Installed-Size: %lld\n", f->installed_size);
    field(&b, "Pre-Depends", f->pre_depends);
    field(&b, "Depends", f->depends);
    field(&b, "Recommends", f->recommends);
    field(&b, "Suggests", f->suggests);
    field(&b, "Breaks", f->breaks);
    field(&b, "Conflicts", f->conflicts);
    field(&b, "Provides", f->provides);
    field(&b, "Replaces", f->replaces);
    field(&b, "Section", f->section);
    field(&b, "Priority", f->priority);
    field(&b, "Multi-Arch", f->multi_arch);
    buf_printf(&b, "Description: %s\n", f->summary ? f->summary : "");
    /* each long line indented by one space; an empty one is " ." */
    for (const char *p = f->description; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.'))
            buf_puts(&b, " .\n");
        else
            buf_printf(&b, " %.*s\n", (int)n, p);
        p = nl ? nl + 1 : p + n;
    }
    return buf_detach(&b);
}

/* ---- walking the tree ----------------------------------------------------- */

/* Calls FN on ROOT and everything below it, in sorted order; REL is "" for
 * ROOT. Stops at the first nonzero FN. */
typedef int (*walk_fn)(const char *path, const char *rel, const struct stat *sb, void *arg);

static int walk(const char *path, const char *rel, walk_fn fn, void *arg, char err[DEB_ERRLEN])
{
    struct stat sb;
    if (lstat(path, &sb) < 0)
        return errf(err, "%s: %s", path, strerror(errno));
    int rc = fn(path, rel, &sb, arg);
    if (rc || !S_ISDIR(sb.st_mode))
        return rc < 0 ? errf(err, "%s: %s", path, strerror(errno)) : rc;
    struct strlist names = {0};
    if (dir_list(path, &names) < 0) {
        strlist_free(&names);
        return errf(err, "%s: %s", path, strerror(errno));
    }
    for (size_t i = 0; !rc && i < names.n; i++) {
        char *p = path_join(path, names.v[i]);
        char *r = *rel ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
        rc = walk(p, r, fn, arg, err);
        free(p);
        free(r);
    }
    strlist_free(&names);
    return rc;
}

struct size_walk {
    long long kib;
    struct strlist seen; /* "dev:ino" of hard-linked inodes counted */
};

static int size_one(const char *path, const char *rel, const struct stat *sb, void *arg)
{
    (void)path;
    (void)rel;
    struct size_walk *w = arg;
    if (!S_ISREG(sb->st_mode) && !S_ISLNK(sb->st_mode)) {
        w->kib += 1; /* a directory is shared, others are an inode: 1 KiB */
        return 0;
    }
    if (sb->st_nlink > 1) {
        char id[64];
        snprintf(id, sizeof id, "%llu:%llu", (unsigned long long)sb->st_dev,
                 (unsigned long long)sb->st_ino);
        if (strlist_contains(&w->seen, id))
            return 0;
        strlist_push(&w->seen, id);
    }
    w->kib += ((long long)sb->st_size + 1023) / 1024;
    return 0;
}

long long deb_installed_size(const char *root, char err[DEB_ERRLEN])
{
    struct size_walk w = {0};
    int rc = walk(root, "", size_one, &w, err);
    strlist_free(&w.seen);
    return rc ? -1 : w.kib;
}

/* ---- DEBIAN/ -------------------------------------------------------------- */

struct list_walk {
    struct strlist *out;
    const char *under; /* only below this relative directory, or NULL */
};

static int regular_one(const char *path, const char *rel, const struct stat *sb, void *arg)
{
    (void)path;
    struct list_walk *w = arg;
    if (S_ISREG(sb->st_mode) && strcmp(rel, "DEBIAN") != 0 && !str_starts(rel, "DEBIAN/") &&
        (!w->under || str_starts(rel, w->under)))
        strlist_push(w->out, rel);
    return 0;
}

static int md5_file(const char *path, char hex[33])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_md5(), NULL);
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        EVP_DigestUpdate(c, buf, (size_t)n);
    int e = errno;
    close(fd);
    unsigned char d[16];
    EVP_DigestFinal_ex(c, d, NULL);
    EVP_MD_CTX_free(c);
    if (n < 0) {
        errno = e;
        return -1;
    }
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return 0;
}

static int write_debian(const char *root, const char *name, const char *text, mode_t mode,
                        char err[DEB_ERRLEN])
{
    char *p = xasprintf("%s/DEBIAN/%s", root, name);
    int rc = write_file_atomic(p, text, strlen(text), mode) < 0 || chmod(p, mode) < 0
                 ? errf(err, "cannot write %s: %s", p, strerror(errno))
                 : 0;
    free(p);
    return rc;
}

struct fix {
    long long epoch;
    const char *const *executables; /* shared objects kept 0755, or NULL */
};

static bool listed(const char *const *l, const char *s)
{
    for (size_t i = 0; l && l[i]; i++)
        if (!strcmp(l[i], s))
            return true;
    return false;
}

/* dh_fixperms, in short: directories 0755, files 0755 when executable by
 * anyone, else 0644; shared libraries 0644 (they are not run) unless the
 * package says they are programs too; no setuid bits from a build
 * directory. Then every mtime clamped to EPOCH. */
static int fix_one(const char *path, const char *rel, const struct stat *sb, void *arg)
{
    const struct fix *fx = arg;
    long long epoch = fx->epoch;
    if (S_ISDIR(sb->st_mode)) {
        if (chmod(path, 0755) < 0)
            return -1;
    } else if (S_ISREG(sb->st_mode)) {
        bool lib = strstr(path_basename(rel), ".so") != NULL;
        mode_t m = (sb->st_mode & 0111) && !lib ? 0755 : 0644;
        if (listed(fx->executables, rel))
            m = 0755;
        if (str_starts(rel, "DEBIAN/"))
            m = (sb->st_mode & 0111) ? 0755 : 0644;
        if (chmod(path, m) < 0)
            return -1;
    }
    if ((long long)sb->st_mtime > epoch) {
        struct timespec ts[2] = {{.tv_sec = (time_t)epoch}, {.tv_sec = (time_t)epoch}};
        if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
            return -1;
    }
    return 0;
}

static const char *const script_names[4] = {"preinst", "postinst", "prerm", "postrm"};

/* A `dirs` entry, "PATH" or "PATH MODE": makes ROOT/PATH, or (CHMOD)
 * gives it its mode (checked: a relative path without "..", an octal mode
 * of at most 07777). 0 or -1. */
static int make_dir(const char *root, const char *entry, bool chmod_it, char err[DEB_ERRLEN])
{
    const char *sp = strchr(entry, ' ');
    char *rel = sp ? xstrndup(entry, (size_t)(sp - entry)) : xstrdup(entry);
    unsigned long m = 0755;
    char *end = NULL;
    if (sp)
        m = strtoul(sp + 1, &end, 8);
    int rc = 0;
    if (!*rel || rel[0] == '/' || strstr(rel, "..") || (sp && (!sp[1] || *end || m > 07777)))
        rc = errf(err, "dirs: '%s' is not PATH or PATH MODE (a path inside the package, an "
                  "octal mode: \"tmp 1777\")", entry);
    char *path = rc ? NULL : path_join(root, rel);
    if (!rc && !chmod_it && mkdir_p(path, 0755) < 0)
        rc = errf(err, "cannot create %s: %s", path, strerror(errno));
    if (!rc && chmod_it && chmod(path, (mode_t)m) < 0)
        rc = errf(err, "cannot give %s mode %lo: %s", path, m, strerror(errno));
    free(path);
    free(rel);
    return rc;
}

int deb_build(const struct deb_package *p, const char *root, const char *deb,
              long long epoch, char err[DEB_ERRLEN])
{
    const struct deb_fields *f = &p->f;
    if (deb_valid_name(f->package, err) < 0 || deb_valid_version(f->version, err) < 0)
        return -1;
    if (!f->arch || !f->maintainer || !f->summary || !*f->summary)
        return errf(err, "%s: Architecture, Maintainer and a Description summary are "
                    "required", f->package);
    char *copyright = xasprintf("%s/usr/share/doc/%s/copyright", root, f->package);
    struct stat sb;
    bool has_copyright = stat(copyright, &sb) == 0 && S_ISREG(sb.st_mode);
    free(copyright);
    if (!has_copyright)
        return errf(err, "%s has no /usr/share/doc/%s/copyright (policy 12.5: every binary "
                    "package has one; give the package its copyright file)", f->package,
                    f->package);
    char *dir = path_join(root, "DEBIAN");
    int rc = mkdir_p(dir, 0755) < 0 ? errf(err, "cannot create %s: %s", dir, strerror(errno))
                                    : 0;
    free(dir);
    for (size_t i = 0; !rc && p->dirs && p->dirs[i]; i++)
        rc = make_dir(root, p->dirs[i], false, err);
    for (int i = 0; !rc && i < 4; i++) {
        if (!p->scripts[i])
            continue;
        char *to = xasprintf("%s/DEBIAN/%s", root, script_names[i]);
        if (copy_file(p->scripts[i], to) < 0 || chmod(to, 0755) < 0)
            rc = errf(err, "%s: cannot copy the %s script %s: %s", f->package, script_names[i],
                      p->scripts[i], strerror(errno));
        free(to);
    }
    /* conffiles: given, or every regular file under etc/ */
    struct strlist conf = {0};
    if (!rc && p->conffiles) {
        for (size_t i = 0; p->conffiles[i]; i++)
            strlist_push(&conf, p->conffiles[i]);
    } else if (!rc) {
        struct strlist rel = {0};
        struct list_walk w = {.out = &rel, .under = "etc/"};
        rc = walk(root, "", regular_one, &w, err);
        for (size_t i = 0; i < rel.n; i++)
            strlist_pushf(&conf, "/%s", rel.v[i]);
        strlist_free(&rel);
    }
    strlist_sort(&conf);
    if (!rc && conf.n) {
        struct buf b = BUF_INIT;
        for (size_t i = 0; i < conf.n; i++) {
            char *in = path_join(root, conf.v[i] + (conf.v[i][0] == '/'));
            if (conf.v[i][0] != '/' || lstat(in, &sb) < 0 || !S_ISREG(sb.st_mode))
                rc = errf(err, "%s: conffile %s is not a regular file in the package (give "
                          "absolute paths of files it ships)", f->package, conf.v[i]);
            free(in);
            buf_printf(&b, "%s\n", conf.v[i]);
        }
        if (!rc)
            rc = write_debian(root, "conffiles", b.p, 0644, err);
        buf_free(&b);
    }
    strlist_free(&conf);
    /* the package's own triggers (libc-bin's interest in ldconfig), then,
     * for one shipping shared libraries, ldconfig's activation as
     * dh_makeshlibs writes it */
    struct buf tr = BUF_INIT;
    for (size_t i = 0; p->triggers && p->triggers[i]; i++) {
        const char *t = p->triggers[i];
        size_t w = strcspn(t, " ");
        static const char *const dirs[] = {"interest", "interest-await", "interest-noawait",
                                           "activate", "activate-await", "activate-noawait",
                                           NULL};
        bool ok = t[w] == ' ' && t[w + 1] && !strpbrk(t + w + 1, " \t\n");
        bool known = false;
        for (size_t j = 0; dirs[j]; j++)
            known |= strlen(dirs[j]) == w && !strncmp(t, dirs[j], w);
        if (!rc && (!ok || !known))
            rc = errf(err, "%s: trigger '%s' is not 'DIRECTIVE NAME' with DIRECTIVE one of "
                      "interest, interest-await, interest-noawait, activate, activate-await, "
                      "activate-noawait (deb-triggers(5))", f->package, t);
        buf_printf(&tr, "%s\n", t);
    }
    bool libs = p->shlibs && *p->shlibs;
    if (libs)
        buf_puts(&tr, "activate-noawait ldconfig\n");
    if (!rc && libs)
        rc = write_debian(root, "shlibs", p->shlibs, 0644, err);
    if (!rc && tr.p && *tr.p)
        rc = write_debian(root, "triggers", tr.p, 0644, err);
    buf_free(&tr);
    /* modes and mtimes before the size (which does not look at them) */
    struct fix fx = {.epoch = epoch, .executables = p->executables};
    if (!rc)
        rc = walk(root, "", fix_one, &fx, err);
    /* Installed-Size: what dpkg-gencontrol sees, which runs (dh_gencontrol)
     * after the scripts, conffiles and shlibs and before md5sums */
    struct deb_fields cf = *f;
    if (!rc && (cf.installed_size = deb_installed_size(root, err)) < 0)
        rc = -1;
    if (!rc) {
        struct strlist files = {0};
        struct list_walk w = {.out = &files};
        rc = walk(root, "", regular_one, &w, err);
        struct buf b = BUF_INIT;
        for (size_t i = 0; !rc && i < files.n; i++) {
            char hex[33], *in = path_join(root, files.v[i]);
            if (md5_file(in, hex) < 0)
                rc = errf(err, "cannot read %s: %s", in, strerror(errno));
            else
                buf_printf(&b, "%s  %s\n", hex, files.v[i]);
            free(in);
        }
        if (!rc && b.n)
            rc = write_debian(root, "md5sums", b.p, 0644, err);
        buf_free(&b);
        strlist_free(&files);
    }
    if (!rc) {
        char *control = deb_control(&cf);
        rc = write_debian(root, "control", control, 0644, err);
        free(control);
    }
    if (!rc) /* DEBIAN/ and its files are new: clamp them too */
        rc = walk(root, "", fix_one, &fx, err);
    /* the modes the package gives its directories, over dh_fixperms' 0755 */
    for (size_t i = 0; !rc && p->dirs && p->dirs[i]; i++)
        rc = make_dir(root, p->dirs[i], true, err);
    if (rc)
        return -1;
    char *sde = xasprintf("SOURCE_DATE_EPOCH=%lld", epoch);
    const char *env[] = {sde, "LC_ALL=C", NULL};
    /* one xz thread: dpkg-deb's threaded xz writes other bytes, and the
     * same package must not differ between machines with other core counts */
    const char *argv[] = {"dpkg-deb", "--build", "--root-owner-group", "-Zxz", "--threads-max=1",
                          root, deb, NULL};
    struct run_command cmd = {.argv = argv, .env = env, .out = RUN_OUT_FD, .out_fd = 2,
                              .log = true};
    int st = run_command(&cmd);
    run_command_clear(&cmd);
    free(sde);
    if (st != 0)
        return errf(err, "%s: dpkg-deb --build failed (%s %d; see its output above)",
                    f->package, st < 0 ? "could not start:" : "exit status", st);
    return 0;
}
