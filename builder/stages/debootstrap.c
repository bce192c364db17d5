/* The `debootstrap` userland kind: a Debian root filesystem as rootfs.tar.
 *
 * Two stages (root_config.h): `userland-base` (kind debootstrap-base, this
 * file) runs debootstrap, keyed on the package settings only; `userland`
 * (root_config.c) applies the overlays, hostname, fstab, getty, network,
 * modules, build info and password to a copy of it.
 *
 * Native mode runs debootstrap to the end on the build host. That needs
 * root (debootstrap chroots into the new tree to configure packages and
 * creates device nodes), and the target arch must run on the host.
 *
 * Foreign mode (`foreign = true`) runs only debootstrap's first stage
 * (download and unpack); the configuration step installs
 * /sbin/trillian-firstboot, which the kernel runs as init on the first boot
 * (`init=/sbin/trillian-firstboot` in cmdline-extra, which the bootloader
 * stage appends to the kernel command line). That script runs
 * `debootstrap --second-stage`, applies the configuration the userland stage
 * prepared (overlays, hostname, fstab, getty, network, password), makes SSH
 * host keys, replaces itself by a stub that execs /sbin/init, and execs
 * /sbin/init. The image therefore boots before the second stage has run.
 *
 * Outputs of the base: rootfs.tar (owners, modes, device nodes and xattrs
 * kept; every mtime is source_date_epoch), packages.tsv and
 * stage-manifest.json; the userland stage adds cmdline-extra (empty in native
 * mode). Debian packages are cached across builds in
 * CACHE/downloads/debootstrap. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "formats/archive.h"
#include "base/json_out.h"
#include "base/sha256.h"
#include "stage.h"
#include "root_config.h"

static const char *const variants[] = {"minbase", "buildd", "default", NULL};
static const char *const networks[] = {"dhcp", "none", NULL};

/* The package install's settings: they alone make the base stage's key. */
#define PACKAGE_FIELDS                                                                       \
    {"suite", F_STRING, false, NULL, "bookworm", "Debian suite or codename to install"},    \
    {"mirror", F_STRING, false, NULL, "http://deb.debian.org/debian",                       \
     "archive URL (http://, https:// or file:/)"},                                          \
    {"variant", F_ENUM, false, variants, "minbase",                                         \
     "debootstrap variant; default = debootstrap's own (required + important)"},            \
    {"components", F_STRING_LIST, false, NULL, "[\"main\"]", "archive components"},          \
    {"include", F_STRING_LIST, false, NULL, NULL, "extra packages to install"},             \
    {"exclude", F_STRING_LIST, false, NULL, NULL, "packages to leave out"},                 \
    {"keyring", F_PATH, false, NULL, "/usr/share/keyrings/debian-archive-keyring.gpg",      \
     "OpenPGP keyring that must have signed the suite's Release file"},                    \
    {"foreign", F_BOOL, false, NULL, "false",                                               \
     "first stage only (runs without root, under fakeroot); the second stage runs on the "  \
     "first boot, from init=/sbin/trillian-firstboot in cmdline-extra"},                    \
    {"archive", F_STRING, false, NULL, NULL,                                                \
     "an apt-archive packages stage of this recipe to bootstrap from: mirror, keyring and " \
     "suite are then that stage's output (file://), its trillian-archive-keyring.gpg and "  \
     "its suite"},                                                                          \
    {"archive_in_root", F_BOOL, false, NULL, "false",                                       \
     "with `archive` and `foreign`: a copy of the archive in the root at the path the "     \
     "root's sources.list names (/trillian-archive when the archive has no url), so that "  \
     "apt installs from it on the machine with no network"}

static const struct field base_fields[] = {PACKAGE_FIELDS, {0}};

/* Added after the kinds shipped: in the key only when set (stage.h). */
static const char *const late_fields[] = {"archive", "archive_in_root", NULL};

static const struct field fields[] = {
    PACKAGE_FIELDS,
    {"hostname", F_STRING, false, NULL, "trillian", "the image's host name"},
    {"root_password", F_STRING, false, NULL, NULL,
     "root's password (stored SHA-512-crypt hashed); unset = root locked"},
    {"autologin", F_BOOL, false, NULL, "true",
     "log root in on the serial console without a password (boot checks)"},
    {"overlays", F_PATH_LIST, false, NULL, "[\"overlays/common\"]",
     "trees copied over the root in order, modes kept"},
    {"console", F_STRING, false, NULL, "ttyS0", "serial console device for the getty"},
    {"network", F_ENUM, false, networks, "dhcp",
     "dhcp: systemd-networkd DHCP on the ethernet interfaces"},
    {"rootfs_type", F_STRING, false, NULL, "ext4", "root filesystem type for /etc/fstab"},
    {"modules", F_STRING_LIST, false, NULL, NULL,
     "kernel modules loaded at boot (/etc/modules-load.d)"},
    {0},
};

static const char *const tools[] = {"debootstrap", NULL};
static const char *const base_outputs[] = {"rootfs.tar", "packages.tsv", "stage-manifest.json",
                                           NULL};
static const char *const outputs[] = {"rootfs.tar", "packages.tsv", "stage-manifest.json",
                                      "cmdline-extra", NULL};

/* ---- plan time ---------------------------------------------------------- */

static const char *host_arch(void)
{
    struct utsname u;
    if (uname(&u) != 0)
        return "unknown";
    if (strcmp(u.machine, "x86_64") == 0)
        return "amd64";
    if (strcmp(u.machine, "aarch64") == 0)
        return "arm64";
    if (strcmp(u.machine, "ia64") == 0)
        return "ia64";
    return "unknown";
}

#define ARCHIVE_KEYRING "trillian-archive-keyring.gpg" /* apt_archive.c's output */

/* The apt-archive stage `archive` names, or NULL (unset, or not one). */
static const struct stage *archive_stage(const struct stage *st)
{
    const char *name = st_str(st, "archive");
    const struct stage *a = name ? st_peer(st, name) : NULL;
    return a && strcmp(st_kind(a), "apt-archive") == 0 ? a : NULL;
}

const char *debootstrap_suite(const struct stage *st)
{
    const struct stage *a = archive_stage(st);
    return a ? st_str(a, "suite") : st_str(st, "suite");
}

/* `archive`: that stage is the mirror, its key the keyring and its suite
 * the suite, so the recipe must not name others. */
static void declare_archive(struct stage *st, const char *name)
{
    const struct stage *a = archive_stage(st);
    if (!a) {
        struct buf names = BUF_INIT;
        const struct stage *p;
        for (size_t i = 0; (p = st_peers(st, "packages", "apt-archive", &i));)
            buf_printf(&names, "%s%s", names.n ? ", " : "", st_name(p));
        const struct stage *other = st_peer(st, name);
        char *what = other ? xasprintf("the %s stage '%s' is not an apt-archive stage",
                                       st_kind(other), name)
                           : xasprintf("the recipe has no stage '%s'", name);
        if (names.n)
            st_error(st, "archive", "%s; name one of its apt-archive stages: %s", what, names.p);
        else
            st_error(st, "archive", "%s, and no apt-archive stage: add one to packages "
                     "(docs/apt-archive.md) or drop userland.archive", what);
        free(what);
        buf_free(&names);
        return;
    }
    const char *keys[] = {"mirror", "keyring"};
    for (size_t i = 0; i < ARRAY_LEN(keys); i++)
        if (st_isset(st, keys[i]))
            st_error(st, keys[i], "userland.archive = \"%s\" gives the %s (that stage's %s); "
                     "drop userland.%s, or drop userland.archive to bootstrap from the %s",
                     name, keys[i], i ? "trillian-archive-keyring.gpg" : "output, as file://",
                     keys[i], i ? "mirror this keyring signs" : "mirror");
    const char *suite = st_str(a, "suite");
    if (st_isset(st, "suite") && strcmp(st_str(st, "suite"), suite) != 0)
        st_error(st, "suite", "'%s' is not the suite of the archive stage '%s', which has "
                 "dists/%s only; drop userland.suite (it follows the archive's)",
                 st_str(st, "suite"), name, suite);
    const char *aarch = st_str(a, "architecture");
    if (aarch && strcmp(aarch, st_arch(st)) != 0)
        st_error(st, "archive", "the archive stage '%s' is for %s (its architecture), the "
                 "recipe for %s; debootstrap needs binary-%s: drop that stage's architecture",
                 name, aarch, st_arch(st), st_arch(st));
    st_need_file(st, name, ARCHIVE_KEYRING);
}

static int declare(struct stage *st)
{
    const char *arch = st_arch(st);
    const char *archive = st_str(st, "archive");
    if (archive)
        declare_archive(st, archive);
    const char *suite = debootstrap_suite(st);
    if (!str_all_alnum_or(suite, "-_.+"))
        st_error(st, "suite", "'%s' is not a suite name (expected e.g. bookworm or sid)",
                 suite ? suite : "");
    const char *mirror = st_str(st, "mirror");
    if (!mirror || !(str_starts(mirror, "http://") || str_starts(mirror, "https://") ||
                     str_starts(mirror, "file:/")))
        st_error(st, "mirror", "'%s' is not an archive URL (expected http://, https:// or "
                 "file:/, e.g. http://deb.debian.org/debian)", mirror ? mirror : "");
    struct strlist l = {0};
    const char *lists[] = {"components", "include", "exclude"};
    for (size_t k = 0; k < ARRAY_LEN(lists); k++) {
        st_list(st, lists[k], &l);
        for (size_t i = 0; i < l.n; i++)
            if (!str_all_alnum_or(l.v[i], "-_.+"))
                st_error(st, lists[k], "'%s' is not a package, component or module name",
                         l.v[i]);
        strlist_free(&l);
    }
    bool foreign = st_bool(st, "foreign", false);
    if (st_bool(st, "archive_in_root", false) && (!archive || !foreign))
        st_error(st, "archive_in_root", "puts the recipe's own archive into a foreign root: "
                 "it needs userland.archive and userland.foreign = true; drop it, or set "
                 "both");
    if (!foreign && strcmp(arch, host_arch()) != 0)
        st_error(st, "foreign", "the recipe's arch is %s but this host runs %s, so "
                 "debootstrap cannot finish here: set userland.foreign = true (the second "
                 "stage then runs on the first boot)", arch, host_arch());
    return 0;
}

/* ---- run time: helpers -------------------------------------------------- */

/* What debootstrap installs from: the recipe's mirror, keyring and suite,
 * or, with `archive`, that stage's output, keyring and suite. */
struct source {
    const char *archive; /* the apt-archive stage, or NULL */
    const char *suite;
    char *mirror, *keyring;
    /* with `archive`: the URL the root records in place of MIRROR (its
     * path in this cache): the archive's `url` (without the trailing
     * slash debootstrap drops), else STABLE_MIRROR */
    char *recorded;
};
#define STABLE_MIRROR "file:///trillian-archive"

static int source_get(const struct stage_ctx *cx, struct source *s)
{
    *s = (struct source){.archive = cx_str(cx, "archive"), .suite = debootstrap_suite(cx->st)};
    if (!s->archive) {
        s->mirror = xstrdup(cx_str(cx, "mirror"));
        s->keyring = cx_path(cx, "keyring");
        s->recorded = xstrdup(cx_str(cx, "mirror"));
        return 0;
    }
    const struct stage *a = archive_stage(cx->st);
    const char *dir = cx_dep(cx, s->archive);
    s->keyring = cx_dep_file(cx, s->archive, ARCHIVE_KEYRING);
    if (!a || !dir || !s->keyring)
        return cx_fail(cx, "engine error: the apt-archive stage '%s' that userland.archive "
                       "names is not among this stage's dependencies (a bug: report it)",
                       s->archive);
    if (dir[strcspn(dir, " \t\n")])
        return cx_fail(cx, "userland.archive: the archive's path %s has a space, and "
                       "debootstrap takes mirrors as a space-separated list; use a cache "
                       "directory without spaces (--cache)", dir);
    s->mirror = xasprintf("file://%s", dir);
    s->recorded = xstrdup(st_str(a, "url") ? st_str(a, "url") : STABLE_MIRROR);
    for (size_t n = strlen(s->recorded); n > 1 && s->recorded[n - 1] == '/'; n--)
        s->recorded[n - 1] = 0;
    return 0;
}

static void source_free(struct source *s)
{
    free(s->mirror);
    free(s->keyring);
    free(s->recorded);
}

/* ---- packages ----------------------------------------------------------- */

struct pkg {
    char *name, *version, *arch;
};

struct pkgs {
    struct pkg *v;
    size_t n, cap;
};

static void pkg_add(struct pkgs *p, const char *name, const char *version, const char *arch)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 128;
        p->v = xrealloc(p->v, p->cap * sizeof *p->v);
    }
    p->v[p->n++] = (struct pkg){xstrdup(name), xstrdup(version), xstrdup(arch)};
}

static int cmp_pkg(const void *a, const void *b)
{
    const struct pkg *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->arch, y->arch);
}

static void pkgs_free(struct pkgs *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].name);
        free(p->v[i].version);
        free(p->v[i].arch);
    }
    free(p->v);
}

/* Installed packages from ROOT/var/lib/dpkg/status. */
static int pkgs_from_status(const struct stage_ctx *cx, const char *root, struct pkgs *out)
{
    char *path = path_join(root, "var/lib/dpkg/status");
    char *data;
    size_t len;
    if (read_file(path, &data, &len) != 0) {
        int rc = cx_fail(cx, "cannot read %s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    for (char *para = data; para && *para;) {
        char *end = strstr(para, "\n\n");
        if (end)
            *end = 0;
        char *name = deb_control_field(para, "Package");
        char *ver = deb_control_field(para, "Version");
        char *arch = deb_control_field(para, "Architecture");
        char *status = deb_control_field(para, "Status");
        if (name && ver && arch && status && str_ends(status, " installed"))
            pkg_add(out, name, ver, arch);
        free(name);
        free(ver);
        free(arch);
        free(status);
        para = end ? end + 2 : NULL;
        while (para && *para == '\n')
            para++;
    }
    free(data);
    free(path);
    return 0;
}

/* Packages a first stage will install: the .debs listed in
 * ROOT/debootstrap/debpaths ("name /var/cache/apt/archives/x.deb"). */
static int pkgs_from_debpaths(const struct stage_ctx *cx, const char *root, struct pkgs *out)
{
    char *path = path_join(root, "debootstrap/debpaths");
    char *data;
    size_t len;
    if (read_file(path, &data, &len) != 0) {
        int rc = cx_fail(cx, "cannot read %s: %s (debootstrap --foreign left no package "
                         "list)", path, strerror(errno));
        free(path);
        return rc;
    }
    int rc = 0;
    for (char *l = data, *nl; l && *l && rc == 0; l = nl) {
        nl = strchr(l, '\n');
        if (nl)
            *nl++ = 0;
        char *sp = strchr(l, ' ');
        if (!sp)
            continue;
        const char *rel = sp + 1;
        while (*rel == '/')
            rel++; /* path_join lets an absolute path win */
        char *deb = path_join(root, rel);
        struct deb_info d;
        char err[ARC_ERRLEN];
        if (arc_deb_info(deb, &d, err) != 0) {
            rc = cx_fail(cx, "%s", err);
        } else {
            pkg_add(out, d.package, d.version, d.architecture);
            deb_info_free(&d);
        }
        free(deb);
    }
    free(data);
    free(path);
    return rc;
}

static int write_package_lists(const struct stage_ctx *cx, const struct source *src,
                               struct pkgs *p, bool foreign)
{
    qsort(p->v, p->n, sizeof *p->v, cmp_pkg);
    struct buf tsv = BUF_INIT;
    buf_puts(&tsv, "package\tversion\tarchitecture\n");
    json_object *man = json_object_new_object(), *list = json_object_new_array();
    json_add_str(man, "suite", src->suite);
    json_add_str(man, "mirror", src->recorded);
    if (src->archive)
        json_add_str(man, "archive", src->archive);
    json_object_object_add(man, "foreign", json_object_new_boolean(foreign));
    for (size_t i = 0; i < p->n; i++) {
        buf_printf(&tsv, "%s\t%s\t%s\n", p->v[i].name, p->v[i].version, p->v[i].arch);
        json_object *e = json_object_new_object();
        json_add_str(e, "name", p->v[i].name);
        json_add_str(e, "version", p->v[i].version);
        json_add_str(e, "arch", p->v[i].arch);
        json_one_line(e);
        json_object_array_add(list, e);
    }
    json_object_object_add(man, "packages", list);
    int rc = cx_write(cx, "packages.tsv", tsv.p, tsv.n);
    if (rc == 0)
        rc = cx_write_manifest(cx, man);
    else
        json_object_put(man);
    buf_free(&tsv);
    cx_log(cx, "%zu packages", p->n);
    return rc;
}

/* Removes caches and logs that differ from build to build. */
static void clean_root(const struct stage_ctx *cx, const char *root)
{
    const char *dirs[] = {"var/cache/apt/archives", "var/lib/apt/lists", "var/log/apt",
                          "tmp", "var/tmp"};
    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        struct strlist l = {0};
        char *d = path_join(root, dirs[i]);
        list_tree(d, &l);
        for (size_t j = 0; j < l.n; j++) {
            char *p = path_join(d, l.v[j]);
            unlink(p);
            free(p);
        }
        strlist_free(&l);
        free(d);
    }
    const char *files[] = {"var/cache/apt/pkgcache.bin", "var/cache/apt/srcpkgcache.bin",
                           "var/log/dpkg.log", "var/log/alternatives.log",
                           "var/log/bootstrap.log", "var/lib/dbus/machine-id",
                           "var/cache/debconf/config.dat-old",
                           "var/cache/debconf/templates.dat-old", "var/lib/dpkg/status-old",
                           "var/lib/dpkg/diversions-old", "etc/passwd-", "etc/group-",
                           "etc/shadow-", "etc/gshadow-", "var/cache/ldconfig/aux-cache",
                           "etc/ssh/ssh_host_rsa_key", "etc/ssh/ssh_host_rsa_key.pub",
                           "etc/ssh/ssh_host_ecdsa_key", "etc/ssh/ssh_host_ecdsa_key.pub",
                           "etc/ssh/ssh_host_ed25519_key", "etc/ssh/ssh_host_ed25519_key.pub"};
    for (size_t i = 0; i < ARRAY_LEN(files); i++) {
        char *p = path_join(root, files[i]);
        unlink(p);
        free(p);
    }
    /* systemd makes a machine id on the first boot if the file is empty */
    char *mid = path_join(root, "etc/machine-id");
    if (path_exists(mid))
        write_file_atomic(mid, "", 0, 0444);
    free(mid);
    cx_log(cx, "removed caches, logs, machine id and SSH host keys");
}

/* debootstrap inside a container makes /proc a symlink to the host's
 * /proc; a booted system needs a directory there. debootstrap also copies
 * the build host's /etc/resolv.conf and /etc/hostname: not ours to ship. */
static int fix_root(const struct stage_ctx *cx, const char *root)
{
    const char *host_files[] = {"etc/resolv.conf", "etc/hostname"};
    for (size_t i = 0; i < ARRAY_LEN(host_files); i++) {
        char *f = path_join(root, host_files[i]);
        unlink(f);
        free(f);
    }
    char *p = path_join(root, "proc");
    struct stat sb;
    int rc = 0;
    if (lstat(p, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        if (unlink(p) != 0 || mkdir(p, 0755) != 0)
            rc = cx_fail(cx, "cannot replace the /proc symlink in %s: %s", root,
                         strerror(errno));
    } else if (lstat(p, &sb) != 0 && mkdir(p, 0755) != 0) {
        rc = cx_fail(cx, "cannot create %s: %s", p, strerror(errno));
    }
    free(p);
    return rc;
}

/* debootstrap prints its I:/W:/E: messages on its stdout, which is this
 * stage's log (run() runs with stdout on it): the last "E: " line there,
 * without the prefix, or NULL. */
static char *debootstrap_error(void)
{
    fflush(stdout);
    fflush(stderr);
    struct stat sb;
    char *data = NULL;
    size_t len;
    /* a regular file only: reading a pipe's other end would block */
    if (fstat(STDOUT_FILENO, &sb) != 0 || !S_ISREG(sb.st_mode) ||
        read_file("/proc/self/fd/1", &data, &len) != 0)
        return NULL;
    char *last = NULL;
    for (char *l = data; l && *l;) {
        char *nl = strchr(l, '\n');
        if (str_starts(l, "E: "))
            last = l + 3;
        l = nl ? nl + 1 : NULL;
    }
    char *r = last ? xstrndup(last, strcspn(last, "\n")) : NULL;
    free(data);
    return r;
}

/* For a file: mirror, its directory; NULL for other URLs. */
static char *mirror_dir(const char *mirror)
{
    if (!str_starts(mirror, "file:"))
        return NULL;
    const char *p = mirror + 5;
    if (str_starts(p, "//")) /* file://host/path or file:///path */
        p = strchr(p + 2, '/');
    return p ? xstrdup(p) : NULL;
}

/* Explains a failed debootstrap from its messages and its own log, naming
 * the recipe key to fix. */
static int explain_failure(const struct stage_ctx *cx, const struct source *src,
                           const char *root)
{
    char *logp = path_join(root, "debootstrap/debootstrap.log");
    char *log = NULL;
    size_t len;
    if (read_file(logp, &log, &len) == 0) {
        char *tail = file_tail(logp, 15);
        cx_log(cx, "last lines of %s:\n%s", logp, tail);
        free(tail);
    }
    free(logp);
    char *err = debootstrap_error();
    const char *e = err ? err : "";
    const char *suite = src->suite, *mirror = src->mirror, *keyring = src->keyring;
    int rc;
    char *mdir = mirror_dir(mirror);
    bool bad_signature = (log && strstr(log, "gpgv:") &&
                          (strstr(log, "No public key") || strstr(log, "BAD signature") ||
                           strstr(log, "Can't check signature"))) ||
                         str_starts(e, "Release signed by unknown key") ||
                         str_starts(e, "Invalid Release signature");
    if (src->archive && bad_signature)
        rc = cx_fail(cx, "userland.archive: the Release file of the archive stage '%s' (%s) "
                     "is not signed by its own %s: that stage's output changed after it was "
                     "built; rebuild it (trillian build RECIPE --force %s)", src->archive,
                     mirror, keyring, src->archive);
    else if (src->archive && str_starts(e, "Couldn't find these debs:"))
        rc = cx_fail(cx, "userland.include: the archive stage '%s' (suite %s) has no %s "
                     "package for:%s (debootstrap: %s); fix userland.include, or add the "
                     "package to that stage (its stages or debian)", src->archive, suite,
                     cx->arch, e + strlen("Couldn't find these debs:"), e);
    else if (bad_signature)
        rc = cx_fail(cx, "userland.keyring: the Release file of %s at %s is not signed by "
                     "a key in %s; set userland.keyring to the archive's keyring "
                     "(/usr/share/keyrings/debian-archive-keyring.gpg for Debian, "
                     "debian-ports-archive-keyring.gpg for ports such as ia64)",
                     suite, mirror, keyring);
    else if (str_starts(e, "Couldn't find these debs:"))
        rc = cx_fail(cx, "userland.include: %s (%s) has no %s package for:%s; fix "
                     "userland.include, or userland.components if the package lives in "
                     "another component", mirror, suite, cx->arch,
                     e + strlen("Couldn't find these debs:"));
    else if (str_starts(e, "No such script:"))
        rc = cx_fail(cx, "userland.suite: debootstrap has no script for suite '%s' "
                     "(%s); use a suite or codename it knows (bookworm, trixie, unstable, "
                     "sid, ...)", suite, e);
    else if (str_starts(e, "Asked to install suite"))
        rc = cx_fail(cx, "userland.suite: %s serves another suite under dists/%s (%s); set "
                     "userland.suite to the suite or codename its Release file names",
                     mirror, suite, e);
    else if (str_starts(e, "Invalid Release file, no entry for"))
        rc = cx_fail(cx, "userland.mirror: %s %s has no %s packages (%s); use a mirror that "
                     "carries %s (for ia64: debian-ports or a snapshot of it), or fix "
                     "userland.components", mirror, suite, cx->arch, e, cx->arch);
    else if (str_starts(e, "Invalid Release file, no valid components"))
        rc = cx_fail(cx, "userland.components: none of the components is in %s %s; list "
                     "components the Release file names (usually main)", mirror, suite);
    else if (str_starts(e, "Failed getting release file") &&
             ((log && strstr(log, "ERROR 404")) ||
              (mdir && is_dir(mdir))))
        rc = cx_fail(cx, "userland.suite: %s has no suite '%s' (no dists/%s/InRelease or "
                     "Release there); set userland.suite to a suite the mirror carries "
                     "(debian-ports: unstable), or fix the path in userland.mirror",
                     mirror, suite, suite);
    else if (str_starts(e, "Failed getting release file"))
        rc = cx_fail(cx, "userland.mirror: %s does not answer or has no Debian archive "
                     "there (%s); check the URL in userland.mirror and that this host can "
                     "reach it (a proxy: set http_proxy)", mirror,
                     mdir ? "no such directory"
                          : log && strstr(log, "Connection refused") ? "connection refused"
                          : log && strstr(log, "unable to resolve") ? "host name does not resolve"
                          : log && strstr(log, "timed out") ? "connection timed out"
                          : "see the wget messages above");
    else
        rc = cx_fail(cx, "debootstrap failed%s%s; check userland.suite ('%s'), "
                     "userland.mirror ('%s') and that the mirror is reachable",
                     err ? ": " : " (see its messages above)", e, suite, mirror);
    free(mdir);
    free(err);
    free(log);
    return rc;
}

/* Without root: the owners, modes and device nodes fakeroot recorded for
 * ROOT, as a metadata table for arc_write_tree. fakeroot's tar lists the
 * tree as debootstrap left it (files we added since are unknown to fakeroot
 * and show as root's); the empty files fakeroot made for device nodes and
 * fifos are removed so that the table's rows add the real ones. */
struct fr_ctx {
    struct arc_table *t;
    const char *root;
    int rc;
};

static int fr_row(const struct arc_entry *e, void *ud)
{
    struct fr_ctx *c = ud;
    if (strcmp(e->path, ".") == 0)
        return 0;
    struct arc_entry row = *e;
    if (row.type == ARC_HARDLINK) {
        row.type = ARC_FILE;
        row.target = NULL;
    }
    if (row.type == ARC_CHR || row.type == ARC_BLK || row.type == ARC_FIFO) {
        char *p = path_join(c->root, e->path);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode))
            unlink(p);
        free(p);
    }
    arc_table_add(c->t, &row);
    return 0;
}

static int fakeroot_table(const struct stage_ctx *cx, const char *root, const char *state,
                          struct arc_table *t)
{
    char *raw = path_join(cx->work, "fakeroot-list.tar");
    const char *argv[] = {"fakeroot", "-i", state, "--", "tar", "--numeric-owner", "-C", root,
                          "-cf", raw, ".", NULL};
    int rc = 0;
    if (cx_run(cx, argv) != 0) {
        rc = cx_fail(cx, "could not list the owners fakeroot recorded (see the log)");
    } else {
        struct fr_ctx c = {t, root, 0};
        char err[ARC_ERRLEN];
        if (arc_list(raw, fr_row, &c, err) != 0)
            rc = cx_fail(cx, "%s", err);
        else
            cx_log(cx, "%zu owners and device nodes from fakeroot", t->n);
    }
    unlink(raw);
    free(raw);
    return rc;
}

/* ---- with `archive` ------------------------------------------------------ */

/* Whether debootstrap has a script for SUITE (where it looks: its
 * DEBOOTSTRAP_DIR, else /usr/share/debootstrap). */
static bool has_script(const char *suite)
{
    const char *dir = getenv("DEBOOTSTRAP_DIR");
    char *p = xasprintf("%s/scripts/%s", dir && *dir ? dir : "/usr/share/debootstrap", suite);
    bool r = path_exists(p);
    free(p);
    return r;
}

/* The file-name prefix debootstrap gives MIRROR's index files in
 * var/lib/apt/lists (functions: apt_dest): the URL without its scheme,
 * slashes as underscores, then "_". New string. */
static char *lists_prefix(const char *mirror)
{
    const char *sep = strstr(mirror, "://");
    if (sep && sep > mirror && !memchr(mirror, ':', (size_t)(sep - mirror)))
        mirror = sep + 3;
    char *r = xasprintf("%s_", mirror);
    for (char *c = r; *c; c++)
        if (*c == '/')
            *c = '_';
    return r;
}

/* DIR/NAME with each FROM replaced by TO; 0, or -1 with errno. */
static int replace_in_file(const char *dir, const char *name, const char *from, const char *to)
{
    char *p = path_join(dir, name), *data;
    size_t len;
    int rc = read_file(p, &data, &len);
    if (rc == 0) {
        struct buf b = BUF_INIT;
        const char *s = data;
        for (const char *m; (m = strstr(s, from)); s = m + strlen(from)) {
            buf_add(&b, s, (size_t)(m - s));
            buf_puts(&b, to);
        }
        buf_puts(&b, s);
        rc = write_file_atomic(p, b.p, b.n, 0644);
        buf_free(&b);
        free(data);
    }
    free(p);
    return rc;
}

/* A first stage names the mirror in /debootstrap/mirror and deburis and,
 * after it, the index files the second stage reads (var/lib/apt/lists):
 * with `archive`, the archive's path in this cache. All become
 * src->recorded, so that the root is the same bytes from any cache. */
static int record_mirror(const struct stage_ctx *cx, const char *root, const struct source *src)
{
    char *lists = path_join(root, "var/lib/apt/lists");
    char *from = lists_prefix(src->mirror), *to = lists_prefix(src->recorded);
    struct strlist names = {0};
    int rc = 0;
    dir_list(lists, &names); /* none: nothing to rename */
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        if (!str_starts(names.v[i], from))
            continue;
        char *a = path_join(lists, names.v[i]);
        char *bn = xasprintf("%s%s", to, names.v[i] + strlen(from));
        char *b = path_join(lists, bn);
        if (rename(a, b) != 0)
            rc = cx_fail(cx, "cannot rename %s to %s: %s", a, bn, strerror(errno));
        free(a);
        free(bn);
        free(b);
    }
    char *dd = path_join(root, "debootstrap");
    char *m = xasprintf("%s\n", src->mirror), *r = xasprintf("%s\n", src->recorded);
    char *mu = xasprintf("%s/", src->mirror), *ru = xasprintf("%s/", src->recorded);
    const char *file = "mirror";
    if (rc == 0 && (replace_in_file(dd, file, m, r) != 0 ||
                    replace_in_file(dd, (file = "deburis"), mu, ru) != 0))
        rc = cx_fail(cx, "cannot rewrite %s/%s: %s", dd, file, strerror(errno));
    if (rc == 0)
        cx_log(cx, "the root names the archive %s (not %s)", src->recorded, src->mirror);
    free(m);
    free(r);
    free(mu);
    free(ru);
    free(dd);
    strlist_free(&names);
    free(from);
    free(to);
    free(lists);
    return rc;
}

static bool pkgs_has(const struct pkgs *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i].name, name) == 0)
            return true;
    return false;
}

/* A foreign first stage leaves etc/apt/sources.list empty (the second stage
 * does not write it): one line for the recorded source, signed-by the
 * archive's keyring when the root has trillian-archive-keyring. */
static int write_sources(const struct stage_ctx *cx, const char *root, const struct source *src,
                         const struct pkgs *pk)
{
    char *list = path_join(root, "etc/apt/sources.list");
    struct stat sb;
    int rc = 0;
    if (stat(list, &sb) == 0 && sb.st_size == 0) {
        bool keyring = src->archive && pkgs_has(pk, "trillian-archive-keyring");
        struct strlist comps = {0};
        cx_list(cx, "components", &comps);
        struct buf b = BUF_INIT;
        buf_printf(&b, "deb %s%s %s", keyring ? "[signed-by=/usr/share/keyrings/"
                                                "trillian-archive-keyring.gpg] " : "",
                   src->recorded, src->suite);
        for (size_t i = 0; i < comps.n; i++)
            buf_printf(&b, " %s", comps.v[i]);
        if (!comps.n) /* unset: debootstrap's default */
            buf_puts(&b, " main");
        buf_puts(&b, "\n");
        if (write_file_atomic(list, b.p, b.n, 0644) != 0)
            rc = cx_fail(cx, "cannot write %s: %s", list, strerror(errno));
        else
            cx_log(cx, "sources.list: %.*s", (int)b.n - 1, b.p);
        buf_free(&b);
        strlist_free(&comps);
    }
    free(list);
    return rc;
}

/* `archive_in_root`: the archive at the stable file:// path, which the
 * root's sources.list then names. */
static int archive_into_root(const struct stage_ctx *cx, const char *root,
                             const struct source *src)
{
    if (strcmp(src->recorded, STABLE_MIRROR) != 0)
        return cx_fail(cx, "userland.archive_in_root: the archive has a url (%s), so the "
                       "root's sources.list names that and not a copy in the root; "
                       "leave archive_in_root unset, or the archive's url", src->recorded);
    const char *in_root = STABLE_MIRROR + strlen("file:///");
    char *dst = path_join(root, in_root);
    const char *dir = cx_dep(cx, src->archive);
    int rc = 0;
    if (copy_tree(dir, dst, false) != 0)
        rc = cx_fail(cx, "cannot copy the archive %s into the root: %s", dir, strerror(errno));
    else
        cx_log(cx, "the archive is in the root at /%s", in_root);
    free(dst);
    return rc;
}

/* ---- run ---------------------------------------------------------------- */

static void push_joined(struct strlist *argv, const char *opt, const struct strlist *l)
{
    if (!l->n)
        return;
    struct buf b = BUF_INIT;
    buf_puts(&b, opt);
    for (size_t i = 0; i < l->n; i++)
        buf_printf(&b, "%s%s", i ? "," : "", l->v[i]);
    strlist_push_owned(argv, buf_detach(&b));
}

static int run(struct stage_ctx *cx)
{
    bool foreign = cx_bool(cx, "foreign", false);
    bool as_root = geteuid() == 0;
    if (!as_root && !foreign)
        return cx_fail(cx, "userland.foreign = false runs debootstrap to the end on this "
                       "host, which needs root (it chroots into the new system); run "
                       "trillian as root, or set userland.foreign = true (the first stage "
                       "then runs under fakeroot)");
    if (!as_root && access("/usr/bin/fakeroot", X_OK) != 0)
        return cx_fail(cx, "userland.foreign = true without root needs fakeroot (install "
                       "the fakeroot package, or run trillian as root)");
    char *fakestate = path_join(cx->work, "fakeroot.state");
    char *root = path_join(cx->work, "root");
    /* the archive's .debs are on this disk already: no download cache */
    char *cache = cx_str(cx, "archive") ? NULL
                                        : path_join(cx->cache_dir, "downloads/debootstrap");
    char *sde = xasprintf("SOURCE_DATE_EPOCH=%lld", cx->source_date_epoch);
    struct strlist argv = {0}, l = {0};
    struct pkgs pkgs = {0};
    struct arc_table meta = {0};
    struct source src;
    int rc = source_get(cx, &src);
    if (rc)
        goto out;

    if (cache && mkdir_p(cache, 0755) != 0) {
        rc = cx_fail(cx, "cannot create the download cache %s: %s", cache, strerror(errno));
        goto out;
    }
    if (!as_root) {
        /* fakeroot records owners and device nodes in FAKESTATE */
        const char *fr[] = {"fakeroot", "-s", fakestate, "--", NULL};
        for (size_t i = 0; fr[i]; i++)
            strlist_push(&argv, fr[i]);
    }
    strlist_push(&argv, "debootstrap");
    if (foreign)
        strlist_push(&argv, "--foreign");
    strlist_pushf(&argv, "--arch=%s", cx->arch);
    if (strcmp(cx_str(cx, "variant"), "default") != 0)
        strlist_pushf(&argv, "--variant=%s", cx_str(cx, "variant"));
    if (cx_list(cx, "components", &l) == 0)
        strlist_push(&l, "main");
    push_joined(&argv, "--components=", &l);
    strlist_free(&l);
    cx_list(cx, "include", &l);
    push_joined(&argv, "--include=", &l);
    strlist_free(&l);
    cx_list(cx, "exclude", &l);
    push_joined(&argv, "--exclude=", &l);
    strlist_free(&l);
    strlist_pushf(&argv, "--keyring=%s", src.keyring);
    if (cache)
        strlist_pushf(&argv, "--cache-dir=%s", cache);
    strlist_push(&argv, src.suite);
    strlist_push(&argv, root);
    strlist_push(&argv, src.mirror);
    /* an archive's suite is the recipe's to name (trillian, sid-trillian):
     * debootstrap then takes sid's script, the generic Debian one */
    if (src.archive && !has_script(src.suite)) {
        cx_log(cx, "debootstrap has no script for suite %s: using sid's", src.suite);
        strlist_push(&argv, "sid");
    }
    const char *env[] = {sde, "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive",
                         "DEBCONF_NONINTERACTIVE_SEEN=true", NULL};
    /* debootstrap writes .debs straight into the shared cache directory:
     * one debootstrap at a time per cache */
    char *lockp = cache ? path_join(cache, ".lock") : NULL;
    int lock = lockp ? open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1;
    free(lockp);
    if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) != 0) {
        cx_log(cx, "waiting for another build using the download cache %s", cache);
        flock(lock, LOCK_EX);
    }
    double t0 = now_seconds();
    int drc = cx_run_in(cx, cx->work, env, (const char *const *)argv.v);
    if (lock >= 0)
        close(lock);
    if (drc != 0) {
        rc = explain_failure(cx, &src, root);
        goto out;
    }
    cx_log(cx, "debootstrap%s took %.1f s", foreign ? " --foreign" : "", now_seconds() - t0);

    if ((rc = fix_root(cx, root)) != 0)
        goto out;
    if (foreign) {
        /* debootstrap's log holds download times and build paths; the
         * second stage appends its own to the emptied file */
        char *dlog = path_join(root, "debootstrap/debootstrap.log");
        if (path_exists(dlog))
            write_file_atomic(dlog, "", 0, 0644);
        free(dlog);
        if (src.archive && (rc = record_mirror(cx, root, &src)) != 0)
            goto out;
        if ((rc = pkgs_from_debpaths(cx, root, &pkgs)) != 0)
            goto out;
        if ((rc = write_sources(cx, root, &src, &pkgs)) != 0)
            goto out;
        if (src.archive && cx_bool(cx, "archive_in_root", false) &&
            (rc = archive_into_root(cx, root, &src)) != 0)
            goto out;
    } else {
        if ((rc = pkgs_from_status(cx, root, &pkgs)) != 0)
            goto out;
        clean_root(cx, root);
    }
    if ((rc = write_package_lists(cx, &src, &pkgs, foreign)) != 0)
        goto out;

    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.format = ARC_TAR;
    o.mtime = cx->source_date_epoch;
    o.keep_owners = as_root;
    if (!as_root) {
        if ((rc = fakeroot_table(cx, root, fakestate, &meta)) != 0)
            goto out;
        o.meta = &meta;
    }
    char err[ARC_ERRLEN];
    char *tar = path_join(cx->out, "rootfs.tar");
    t0 = now_seconds();
    if (arc_write_tree(root, tar, &o, err) != 0)
        rc = cx_fail(cx, "cannot write rootfs.tar: %s", err);
    else
        cx_log(cx, "wrote %s in %.1f s", tar, now_seconds() - t0);
    free(tar);
out:
    arc_table_free(&meta);
    free(fakestate);
    pkgs_free(&pkgs);
    strlist_free(&argv);
    free(sde);
    source_free(&src);
    free(cache);
    free(root);
    return rc;
}

/* The package install: debootstrap, keyed on PACKAGE_FIELDS only. */
static const struct stage_kind stage_debootstrap_base = {
    .name = "debootstrap-base",
    .section = "userland",
    .version = 2, /* 2: a foreign root's sources.list names its source */
    .summary = "the package install of a debootstrap userland (added by the engine as "
               "userland-base)",
    .fields = base_fields,
    .late_fields = late_fields,
    .tools = tools,
    .outputs = base_outputs,
    .declare = declare,
    .run = run,
    .cost_hint = 60,
};

static int config_declare(struct stage *st) { return root_config_declare(st, &root_config_debian); }
static int config_run(struct stage_ctx *cx) { return root_config_run(cx, &root_config_debian); }

const struct stage_kind stage_debootstrap = {
    .name = "debootstrap",
    .section = "userland",
    .version = 2, /* 2: the configuration on a copy of userland-base's root */
    .summary = "a Debian root filesystem from debootstrap: natively (needs root, same arch), "
               "or foreign (first stage without root; finished on the first boot)",
    .fields = fields,
    .late_fields = late_fields,
    .outputs = outputs,
    .base = &stage_debootstrap_base,
    .declare = config_declare,
    .run = config_run,
};
