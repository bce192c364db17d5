/* userland, kind "minimal": a small root assembled from the recipe's
 * packages stages (the C library built from source or taken from Debian,
 * busybox, the stage-2 gcc's runtime), with no package manager.
 *
 * From each stage in `packages` (default: every packages stage):
 *   sysroot/      (a C library) the runtime shared objects only: ld.so,
 *                 libc, libm, libresolv, libnss_*, libgcc_s, ... (versioned
 *                 .so.N files and their symlinks; no headers, static
 *                 libraries or linker scripts), at their sysroot paths;
 *   root/         (busybox) copied as is;
 *   runtime/lib/  (the stage-2 gcc) copied into /lib.
 * Then the binary packages named in `debs` ("STAGE" or "STAGE/PACKAGE": the
 * .debs of package stages), their data unpacked over the root as dpkg-deb
 * -x would (modes kept, owners root's; a path two packages ship, or one a
 * package ships over a C library or compiler stage's runtime file, is an
 * error: the C library comes from the glibc stage or from its packages,
 * not both; busybox's applet links a package replaces, as dpkg would),
 * listed in /var/lib/trillian/packages (PACKAGE VERSION ARCH).
 * Then /etc: rcS for busybox init (mounts proc, sys, devtmpfs, devpts, run
 * and tmp), profile, os-release naming Trillian and the components (unless
 * a package brought /etc/os-release: base-files). That is
 * the `userland-base` stage (kind minimal-base), keyed on `packages` and
 * `strip`; the `userland` stage (root_config.c) then writes passwd, group,
 * shadow (root's password per root_password, hashed like the debootstrap
 * kind; locked when unset), hostname, hosts, fstab (the root by root_uuid
 * when the recipe has one), inittab (a shell on the console with autologin,
 * else getty and login) and the `overlays` last on a copy. Device nodes (console,
 * null, zero, tty, ttyS0-3, ...), directory modes and owners are rows of a
 * metadata table written straight into the tarball by libarchive: no root,
 * no mknod.
 *
 * Checks before anything is cached: the arch's loader (ld-linux-x86-64.so.2,
 * ld-linux-ia64.so.2) is in the root at the path programs name, and every
 * dynamically linked program from root/ trees (busybox) and the packages
 * has its PT_INTERP in the root, once all are there (the loader may come
 * in a package: libc6.1).
 *
 * Outputs (the debootstrap kind's contract, so the initramfs, disk, ISO and
 * netboot stages take it unchanged): rootfs.tar (sorted, owners 0:0 unless
 * the table says otherwise, mtimes source_date_epoch), packages.tsv (one
 * row per component: glibc, busybox, gcc, kernel), stage-manifest.json and
 * an empty cmdline-extra. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "formats/archive.h"
#include "formats/binfmt.h"
#include "base/json_out.h"
#include "base/sha256.h"
#include "stage.h"
#include "pkg_deb.h"
#include "root_config.h"
#include "sysroot.h"
#include "toolchain.h"

/* The root assembly's settings: they alone make the base stage's key. */
#define PACKAGE_FIELDS                                                                       \
    {"packages", F_STRING_LIST, false, NULL, NULL,                                          \
     "packages stages whose outputs make the root (default: those whose kind declares "   \
     "components; binary packages come in through debs)"},                                  \
    {"debs", F_STRING_LIST, false, NULL, NULL,                                              \
     "binary packages unpacked over the root, as dpkg-deb -x would: \"STAGE\" (every .deb " \
     "of that packages stage) or \"STAGE/PACKAGE\" (one); listed in "                       \
     "/var/lib/trillian/packages"},                                                          \
    {"dpkg_database", F_BOOL, false, NULL, "false",                                         \
     "with debs: dpkg's database for them too (/var/lib/dpkg: status, each `install ok "   \
     "unpacked`, and info/), so that dpkg on the target knows them and `dpkg --configure "  \
     "-a` runs their maintainer scripts"}
#define STRIP_FIELD                                                                          \
    {"strip", F_BOOL, false, NULL, "true",                                                  \
     "strip debug information from the root's shared libraries (the toolchain's "           \
     "TARGET-strip --strip-debug; glibc from source installs them with -g)"}

static const struct field base_fields[] = {PACKAGE_FIELDS, STRIP_FIELD, {0}};

/* Added after the kinds shipped: in the key only when set (stage.h). */
static const char *const late_fields[] = {"dpkg_database", NULL};

static const struct field fields[] = {
    PACKAGE_FIELDS,
    {"hostname", F_STRING, false, NULL, "trillian", "the root's host name"},
    {"root_password", F_STRING, false, NULL, NULL,
     "root's password (stored SHA-512-crypt hashed); unset = root locked"},
    {"autologin", F_BOOL, false, NULL, "true",
     "a root shell on the console without logging in (boot checks)"},
    {"console", F_STRING, false, NULL, "console",
     "device for the shell or getty (\"console\": whatever the kernel's console= is)"},
    {"overlays", F_PATH_LIST, false, NULL, NULL, "trees copied over the root last, modes kept"},
    STRIP_FIELD,
    {0},
};

static const char *const base_outputs[] = {"rootfs.tar", "packages.tsv", "stage-manifest.json",
                                           NULL};
static const char *const outputs[] = {"rootfs.tar", "packages.tsv", "stage-manifest.json",
                                      "cmdline-extra", NULL};

/* Directories and device nodes of every root: path, type, mode, major,
 * minor. Owners are root's. */
struct node {
    const char *path;
    enum arc_type type;
    int mode;
    unsigned major, minor;
};
static const struct node nodes[] = {
    {"bin", ARC_DIR, 0755, 0, 0},        {"dev", ARC_DIR, 0755, 0, 0},
    {"dev/pts", ARC_DIR, 0755, 0, 0},    {"dev/shm", ARC_DIR, 01777, 0, 0},
    {"etc", ARC_DIR, 0755, 0, 0},        {"etc/init.d", ARC_DIR, 0755, 0, 0},
    {"home", ARC_DIR, 0755, 0, 0},       {"lib", ARC_DIR, 0755, 0, 0},
    {"mnt", ARC_DIR, 0755, 0, 0},        {"proc", ARC_DIR, 0555, 0, 0},
    {"root", ARC_DIR, 0700, 0, 0},       {"run", ARC_DIR, 0755, 0, 0},
    {"sbin", ARC_DIR, 0755, 0, 0},       {"sys", ARC_DIR, 0555, 0, 0},
    {"tmp", ARC_DIR, 01777, 0, 0},       {"usr", ARC_DIR, 0755, 0, 0},
    {"usr/bin", ARC_DIR, 0755, 0, 0},    {"usr/sbin", ARC_DIR, 0755, 0, 0},
    {"var", ARC_DIR, 0755, 0, 0},        {"var/log", ARC_DIR, 0755, 0, 0},
    {"var/tmp", ARC_DIR, 01777, 0, 0},
    {"dev/console", ARC_CHR, 0600, 5, 1}, {"dev/null", ARC_CHR, 0666, 1, 3},
    {"dev/zero", ARC_CHR, 0666, 1, 5},   {"dev/full", ARC_CHR, 0666, 1, 7},
    {"dev/random", ARC_CHR, 0666, 1, 8}, {"dev/urandom", ARC_CHR, 0666, 1, 9},
    {"dev/kmsg", ARC_CHR, 0644, 1, 11},  {"dev/tty", ARC_CHR, 0666, 5, 0},
    {"dev/ptmx", ARC_CHR, 0666, 5, 2},   {"dev/tty0", ARC_CHR, 0620, 4, 0},
    {"dev/tty1", ARC_CHR, 0620, 4, 1},   {"dev/ttyS0", ARC_CHR, 0660, 4, 64},
    {"dev/ttyS1", ARC_CHR, 0660, 4, 65}, {"dev/ttyS2", ARC_CHR, 0660, 4, 66},
    {"dev/ttyS3", ARC_CHR, 0660, 4, 67},
    {0},
};

/* Files written into every root: path, mode, text (%s placeholders are
 * filled by make_etc). */
static const char rcs[] =
    "#!/bin/sh\n"
    "# Written by Trillian (userland kind \"minimal\"): busybox init's sysinit.\n"
    "mount -t proc proc /proc\n"
    "mount -t sysfs sysfs /sys\n"
    "# devtmpfs has every device the kernel knows; without it the root's own\n"
    "# nodes stay\n"
    "mount -t devtmpfs devtmpfs /dev 2>/dev/null\n"
    "mkdir -p /dev/pts /dev/shm\n"
    "mount -t devpts devpts /dev/pts\n"
    "mount -t tmpfs tmpfs /run\n"
    "mount -t tmpfs tmpfs /tmp\n"
    "hostname -F /etc/hostname\n"
    "[ -x /etc/init.d/rc.local ] && /etc/init.d/rc.local\n"
    ". /etc/os-release\n"
    "echo \"$PRETTY_NAME\"\n";

static const char profile[] =
    "# Written by Trillian (userland kind \"minimal\").\n"
    "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
    "export HOME=${HOME:-/root}\n"
    "PS1='\\u@\\h:\\w\\$ '\n"
    "umask 022\n";

/* ---- plan time ---------------------------------------------------------- */

/* The packages stages this root takes. By default, those whose kind
 * declares components (stage.h: what a build puts into the image, which
 * packages.tsv and os-release name); kinds without (binary packages,
 * archives) enter the root through `debs`. No kind is named here. */
static void stage_list(const struct stage *st, struct strlist *out)
{
    if (st_list(st, "packages", out))
        return;
    const struct stage *p;
    for (size_t i = 0; (p = st_peers(st, "packages", NULL, &i));) {
        const struct stage_kind *k = st_kind_def(p);
        if (k && k->components)
            strlist_push(out, st_name(p));
    }
}

static int declare(struct stage *st)
{
    if (!libc_names_of(st_arch(st)))
        return st_error(st, NULL, "no C library names known for arch \"%s\"", st_arch(st));
    struct strlist l = {0};
    stage_list(st, &l);
    if (!l.n)
        st_error(st, "packages", "no packages stages: the recipe needs a packages section "
                 "(a C library and busybox at least)");
    for (size_t i = 0; i < l.n; i++) {
        if (!st_has_stage(st, l.v[i]) || !sr_stage_kind(st, l.v[i])) {
            st_error(st, "packages", "no packages stage named '%s' in the recipe", l.v[i]);
            continue;
        }
        st_need(st, l.v[i]);
    }
    strlist_free(&l);
    st_list(st, "debs", &l);
    for (size_t i = 0; i < l.n; i++) {
        const char *pkg;
        char *name = pkg_deb_entry_stage(l.v[i], &pkg);
        if (!*name || (pkg && !*pkg))
            st_error(st, "debs", "'%s' is not STAGE or STAGE/PACKAGE", l.v[i]);
        else if (!st_has_stage(st, name) || !sr_stage_kind(st, name))
            st_error(st, "debs", "no packages stage named '%s' in the recipe", name);
        else
            st_need(st, name);
        free(name);
    }
    strlist_free(&l);
    if (st_bool(st, "dpkg_database", false)) {
        if (!st_isset(st, "debs"))
            st_error(st, "dpkg_database", "records the packages of `debs`, and there are none");
        st_tool(st, "dpkg-deb"); /* --control, for the maintainer scripts */
    }
    st_want(st, "kernel");
    if (st_bool(st, "strip", true) && !st_want(st, "toolchain"))
        st_error(st, "strip", "needs the toolchain section (its TARGET-strip); set strip = "
                 "false or add a toolchain");
    return 0;
}

/* ---- run time helpers ---------------------------------------------------- */

static int put(const struct stage_ctx *cx, const char *root, const char *rel, const char *text,
               mode_t mode)
{
    return cx_write_in(cx, root, rel, text, strlen(text), mode);
}

/* A string field of a stage-manifest.json our stages wrote, new string or
 * NULL. */
static char *manifest_field(const char *dir, const char *key)
{
    char *p = path_join(dir, "stage-manifest.json");
    json_object *o = json_object_from_file(p);
    const char *v = json_member_str(o, key);
    char *r = v ? xstrdup(v) : NULL;
    json_object_put(o);
    free(p);
    return r;
}

static char *first_line_of(const char *dir, const char *name)
{
    char *p = path_join(dir, name);
    char *data = NULL;
    size_t len;
    char *r = NULL;
    if (read_file(p, &data, &len) == 0)
        r = xstrndup(data, strcspn(data, "\n"));
    free(data);
    free(p);
    return r;
}

/* Copies the runtime shared objects of SYSROOT into ROOT at the same paths,
 * adding each path to COPIED. */
static int copy_runtime(const struct stage_ctx *cx, const char *sysroot, const char *root,
                        size_t *n, struct strlist *copied)
{
    struct strlist l = {0};
    if (list_tree(sysroot, &l) < 0)
        return cx_fail(cx, "cannot read %s: %s", sysroot, strerror(errno));
    int rc = 0;
    for (size_t i = 0; i < l.n && rc == 0; i++) {
        const char *rel = l.v[i];
        if (!sr_runtime_lib(path_basename(rel)) || str_starts(rel, "usr/include/") ||
            strstr(rel, "/gconv/") || strstr(rel, "/audit/"))
            continue;
        char *s = path_join(sysroot, rel), *d = path_join(root, rel);
        char *dd = path_dirname(d);
        char t[4096];
        ssize_t tl = readlink(s, t, sizeof t - 1);
        unlink(d);
        if (mkdir_p(dd, 0755) < 0)
            rc = cx_fail(cx, "cannot create %s: %s", dd, strerror(errno));
        else if (tl > 0 ? (t[tl] = 0, symlink(t, d)) : copy_file(s, d))
            rc = cx_fail(cx, "cannot copy %s: %s", s, strerror(errno));
        else {
            (*n)++;
            strlist_push(copied, rel);
        }
        free(s);
        free(d);
        free(dd);
    }
    strlist_free(&l);
    return rc;
}

struct component {
    char *name, *version;
};

/* The root's own /etc files (the userland stage writes the configuration:
 * root_config.c). */
static int make_etc(const struct stage_ctx *cx, const char *root, const struct component *comp,
                    size_t ncomp)
{
    struct buf b = BUF_INIT;
    int rc = 0;
    rc |= put(cx, root, "etc/init.d/rcS", rcs, 0755);
    rc |= put(cx, root, "etc/profile", profile, 0644);
    rc |= put(cx, root, "etc/shells", "/bin/sh\n/bin/ash\n", 0644);
    rc |= put(cx, root, "etc/nsswitch.conf",
              "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n", 0644);
    /* os-release: Trillian and what the root is made of */
    struct buf parts = BUF_INIT;
    for (size_t i = 0; i < ncomp; i++)
        buf_printf(&parts, "%s%s %s", i ? ", " : "", comp[i].name, comp[i].version);
    b.n = 0;
    buf_printf(&b, "NAME=\"Trillian\"\nID=trillian\nVARIANT=\"minimal root\"\n"
               "VARIANT_ID=minimal\nPRETTY_NAME=\"Trillian minimal root (%s)\"\n"
               "TRILLIAN_ARCH=%s\nTRILLIAN_COMPONENTS=\"%s\"\n"
               "HOME_URL=\"https://github.com/linux-ia64\"\n",
               parts.p, cx->arch, parts.p);
    /* ... unless a package brought one (base-files: /etc/os-release ->
     * /usr/lib/os-release), which stays as dpkg would leave it */
    char *osr = path_join(root, "etc/os-release");
    struct stat osb;
    if (lstat(osr, &osb) == 0)
        cx_log(cx, "/etc/os-release is a package's: kept");
    else
        rc |= put(cx, root, "etc/os-release", b.p, 0644);
    free(osr);
    /* busybox init is /sbin/init; a root without one gets a link */
    char *init = path_join(root, "sbin/init");
    struct stat sb;
    if (lstat(init, &sb) != 0 && symlink("../bin/busybox", init) != 0)
        rc |= cx_fail(cx, "cannot link %s: %s", init, strerror(errno));
    free(init);
    buf_free(&parts);
    buf_free(&b);
    return rc ? 1 : 0;
}

/* Strips debug information from the shared libraries in ROOT with the
 * toolchain's TARGET-strip, in one run. */
static int strip_libs(const struct stage_ctx *cx, const char *root)
{
    const char *tdir = cx_dep(cx, "toolchain");
    char *target = tdir ? tc_read_target(cx, tdir) : NULL;
    if (!target)
        return 1;
    struct strlist l = {0}, argv = {0};
    list_tree(root, &l);
    strlist_pushf(&argv, "%s/bin/%s-strip", tdir, target);
    strlist_push(&argv, "--strip-debug");
    long long before = 0, after = 0;
    size_t first = argv.n;
    for (size_t i = 0; i < l.n; i++) {
        char *p = path_join(root, l.v[i]);
        struct stat sb;
        char err[BINFMT_ERRLEN];
        if (sr_runtime_lib(path_basename(l.v[i])) && lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) &&
            binfmt_elf_machine(p, err) >= 0) {
            strlist_push(&argv, p);
            before += sb.st_size;
        }
        free(p);
    }
    int rc = 0;
    if (argv.n > first && cx_run(cx, (const char *const *)argv.v) != 0)
        rc = cx_fail(cx, "userland.strip: %s failed on the root's libraries (see the log); set "
                     "userland.strip = false to keep them as they are", argv.v[0]);
    for (size_t i = first; rc == 0 && i < argv.n; i++) {
        struct stat sb;
        if (stat(argv.v[i], &sb) == 0)
            after += sb.st_size;
    }
    if (rc == 0)
        cx_log(cx, "stripped %zu libraries: %lld -> %lld bytes", argv.n - first, before, after);
    strlist_free(&argv);
    strlist_free(&l);
    free(target);
    return rc;
}

/* ELF programs with a PT_INTERP among the files of TREE (relative to ROOT):
 * each interpreter must exist inside ROOT. */
static int check_interps(const struct stage_ctx *cx, const char *root, const char *tree,
                         const char *stage)
{
    struct strlist l = {0};
    list_tree(tree, &l);
    int rc = 0;
    for (size_t i = 0; i < l.n && rc == 0; i++) {
        char *p = path_join(tree, l.v[i]);
        struct stat sb;
        char interp[512], err[BINFMT_ERRLEN];
        if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 0111) &&
            binfmt_elf_interp(p, interp, sizeof interp, err) == 1) {
            char *in = sr_resolve_in_root(root, interp);
            if (stat(in, &sb) != 0 || !S_ISREG(sb.st_mode))
                rc = cx_fail(cx, "userland: /%s from stage %s asks for the loader %s, which "
                             "the root does not have: its C library stage is for another "
                             "loader (check the libc setting of %s)", l.v[i], stage, interp,
                             stage);
            else
                cx_log(cx, "/%s: loader %s present", l.v[i], interp);
            free(in);
        }
        free(p);
    }
    strlist_free(&l);
    return rc;
}

/* An ELF program REL in ROOT (from WHAT) must find its PT_INTERP there. */
static int check_interp(const struct stage_ctx *cx, const char *root, const char *rel,
                        const char *what)
{
    char *p = path_join(root, rel);
    char interp[512], err[BINFMT_ERRLEN];
    int rc = 0;
    if (binfmt_elf_interp(p, interp, sizeof interp, err) == 1) {
        char *in = sr_resolve_in_root(root, interp);
        struct stat sb;
        if (stat(in, &sb) != 0 || !S_ISREG(sb.st_mode))
            rc = cx_fail(cx, "userland.debs: /%s of %s asks for the loader %s, which the "
                         "root does not have (a package for another arch or C library?)",
                         rel, what, interp);
        free(in);
    }
    free(p);
    return rc;
}

/* One binary package unpacked over the root. */
struct unpacked {
    char *package, *version, *arch, *file; /* file: STAGE/NAME.deb, for messages */
};

/* Unpacks the .debs of the `debs` entries over ROOT (data.tar only, as
 * dpkg-deb -x: modes and symlinks as the package has them, owners root's),
 * adding a metadata row for each entry to META so the tarball keeps its
 * mode. A path that two packages ship (other than a directory) is an
 * error naming both, as is one in STAGED (the C library and compiler
 * stages' runtime files, sorted: one source for each library); one of a
 * root tree (busybox's applet links) is replaced, as dpkg replaces a file
 * no package owns. So is an executable ELF file whose PT_INTERP the root
 * lacks once all are unpacked an error. The packages go to LIST, sorted
 * by name. */
static int md5_hex(const char *path, char hex[33])
{
    char *data;
    size_t len;
    if (read_file(path, &data, &len) < 0)
        return -1;
    unsigned char d[16];
    unsigned int n = 0;
    int rc = EVP_Digest(data, len, d, &n, EVP_md5(), NULL) == 1 && n == 16 ? 0 : -1;
    free(data);
    for (int i = 0; rc == 0 && i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return rc;
}

/* dpkg's record of a package it unpacked but has not configured, as `dpkg
 * --unpack` leaves it: info/NAME.list (every path, "/." first),
 * info/NAME.MEMBER for each control member but control (md5sums, conffiles,
 * scripts, shlibs, triggers), and the status stanza (its control with
 * "Status: install ok unpacked" and Conffiles) added to STANZAS. NAME is
 * PACKAGE:ARCH for a Multi-Arch: same package, as dpkg names it. */
static int dpkg_record(const struct stage_ctx *cx, const char *root, const char *deb,
                       const struct deb_info *di, const struct arc_table *rec,
                       struct strlist *stanzas)
{
    char *ma = deb_control_field(di->control, "Multi-Arch");
    char *name = ma && !strcmp(ma, "same") ? xasprintf("%s:%s", di->package, di->architecture)
                                            : xstrdup(di->package);
    char *ctrl = xasprintf("%s/dpkg-control/%s", cx->work, di->package);
    char *info = path_join(root, "var/lib/dpkg/info");
    const char *argv[] = {"dpkg-deb", "--control", deb, ctrl, NULL};
    struct strlist members = {0};
    struct buf list = BUF_INIT, st = BUF_INIT;
    int rc = 0;
    char *parent = path_dirname(ctrl), *where = cx_where(cx, "dpkg_database");
    if ((rm_rf(ctrl) < 0 && errno != ENOENT) || mkdir_p(parent, 0755) < 0)
        rc = cx_fail(cx, "cannot clear %s: %s", ctrl, strerror(errno));
    else if (cx_run(cx, argv) != 0)
        rc = cx_fail(cx, "%s: dpkg-deb --control %s failed (see the log): not a .deb dpkg "
                     "reads?", where, deb);
    else if (mkdir_p(info, 0755) < 0 || dir_list(ctrl, &members) < 0)
        rc = cx_fail(cx, "cannot read %s or create %s: %s", ctrl, info, strerror(errno));
    free(parent);
    strlist_sort(&members);
    for (size_t i = 0; !rc && i < members.n; i++) {
        if (!strcmp(members.v[i], "control"))
            continue;
        char *from = path_join(ctrl, members.v[i]);
        char *to = xasprintf("%s/%s.%s", info, name, members.v[i]);
        if (copy_file(from, to) < 0)
            rc = cx_fail(cx, "cannot copy %s to %s: %s", from, to, strerror(errno));
        free(from);
        free(to);
    }
    buf_puts(&list, "/.\n");
    for (size_t i = 0; i < rec->n; i++)
        if (strcmp(rec->v[i].path, ".") != 0)
            buf_printf(&list, "/%s\n", rec->v[i].path);
    char *lp = xasprintf("var/lib/dpkg/info/%s.list", name);
    if (!rc)
        rc = cx_write_in(cx, root, lp, list.p, list.n, 0644);
    free(lp);
    /* the stanza: Package first, then Status, then the rest */
    const char *nl = strchr(di->control, '\n');
    size_t first = nl ? (size_t)(nl - di->control) + 1 : strlen(di->control);
    buf_add(&st, di->control, first);
    buf_puts(&st, "Status: install ok unpacked\n");
    buf_puts(&st, di->control + first);
    if (st.n && st.p[st.n - 1] != '\n')
        buf_puts(&st, "\n");
    char *cf = path_join(ctrl, "conffiles"), *text = NULL;
    size_t len;
    if (!rc && read_file(cf, &text, &len) == 0 && len) {
        buf_puts(&st, "Conffiles:\n");
        for (char *save = NULL, *l = strtok_r(text, "\n", &save); !rc && l;
             l = strtok_r(NULL, "\n", &save)) {
            char hex[33], *p = path_join(root, l + (l[0] == '/'));
            if (md5_hex(p, hex) < 0)
                rc = cx_fail(cx, "%s: conffile %s of %s is not in the root: %s", where, l,
                             di->package, strerror(errno));
            else
                buf_printf(&st, " %s %s\n", l, hex);
            free(p);
        }
    }
    free(text);
    free(cf);
    if (!rc)
        strlist_push(stanzas, st.p);
    buf_free(&st);
    buf_free(&list);
    strlist_free(&members);
    free(where);
    free(info);
    free(ctrl);
    free(name);
    free(ma);
    return rc;
}

/* /var/lib/dpkg with the packages' stanzas: status, an empty available, and
 * the directories dpkg works in (its own package ships them, as empty
 * directories, which a package of the `package` kind cannot). */
static int dpkg_database(const struct stage_ctx *cx, const char *root, struct strlist *stanzas)
{
    static const char *const dirs[] = {"info", "updates", "triggers", "alternatives", "parts",
                                       NULL};
    int rc = 0;
    for (size_t i = 0; !rc && dirs[i]; i++) {
        char *d = xasprintf("%s/var/lib/dpkg/%s", root, dirs[i]);
        if (mkdir_p(d, 0755) < 0)
            rc = cx_fail(cx, "cannot create %s: %s", d, strerror(errno));
        free(d);
    }
    strlist_sort(stanzas); /* "Package: NAME" first: by name */
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < stanzas->n; i++)
        buf_printf(&b, "%s%s", i ? "\n" : "", stanzas->v[i]);
    if (!rc)
        rc = cx_write_in(cx, root, "var/lib/dpkg/status", b.p, b.n, 0644) ||
             cx_write_in(cx, root, "var/lib/dpkg/available", "", 0, 0644);
    if (!rc)
        cx_log(cx, "dpkg's database: %zu packages, each install ok unpacked", stanzas->n);
    buf_free(&b);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Debian's packages are laid out for a merged /usr (programs in
 * /usr/bin and /usr/sbin only, scripts starting #!/bin/bash or #!/bin/dash,
 * through the /bin -> usr/bin link). This root keeps /bin and /sbin as
 * directories (busybox's applet links are there): a program a package put
 * in usr/bin or usr/sbin gets a /bin or /sbin link to it where that name
 * is free, as a merged /usr would show it. REL: a path a package shipped. */
static int usr_link(const struct stage_ctx *cx, const char *root, const char *rel,
                    struct arc_table *meta)
{
    const char *name = NULL, *top = NULL;
    if (str_starts(rel, "usr/bin/"))
        name = rel + 8, top = "bin";
    else if (str_starts(rel, "usr/sbin/"))
        name = rel + 9, top = "sbin";
    if (!name || !*name || strchr(name, '/'))
        return 0;
    char *link = xasprintf("%s/%s/%s", root, top, name), *target = xasprintf("../%s", rel);
    char *dir = path_dirname(link);
    struct stat sb;
    int rc = 0;
    if (lstat(link, &sb) < 0) {
        if (mkdir_p(dir, 0755) < 0 || symlink(target, link) < 0)
            rc = cx_fail(cx, "userland.debs: cannot link /%s/%s to /%s: %s", top, name, rel,
                         strerror(errno));
        else {
            char *lrel = xasprintf("%s/%s", top, name);
            struct arc_entry row = {.path = lrel, .type = ARC_KEEP, .mode = -1, .uid = 0,
                                    .gid = 0};
            arc_table_add(meta, &row);
            free(lrel);
        }
    }
    free(dir);
    free(target);
    free(link);
    return rc;
}

static int unpack_debs(const struct stage_ctx *cx, const char *root, struct arc_table *meta,
                       const struct strlist *staged, struct unpacked **list, size_t *nlist)
{
    struct strlist entries = {0}, owned = {0}, owner = {0}, progs = {0}, progs_of = {0};
    struct strlist stanzas = {0};
    bool dpkg_db = cx_bool(cx, "dpkg_database", false);
    cx_list(cx, "debs", &entries);
    int rc = 0;
    for (size_t i = 0; i < entries.n && rc == 0; i++) {
        struct pkg_deb_iter it;
        char err[ARC_ERRLEN];
        int more = 0;
        if (pkg_deb_iter_open(&it, cx, entries.v[i]) < 0)
            rc = cx_fail(cx, "userland.debs: stage %s has no debs/ (not a stage that makes "
                         "binary packages: the package kind does)", it.stage);
        while (rc == 0 && (more = pkg_deb_iter_next(&it, err)) > 0) {
            const struct deb_info *di = &it.info;
            struct arc_table rec = {0};
            char *label = xasprintf("%s (%s/%s)", di->package, it.stage, it.file);
            if (arc_deb_extract(it.path, root, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS | ARC_X_DIRS_STAY,
                                &rec, err) < 0)
                rc = cx_fail(cx, "userland.debs: cannot unpack %s: %s", label, err);
            for (size_t e = 0; e < rec.n && rc == 0; e++) {
                struct arc_entry row = rec.v[e];
                if (!strcmp(row.path, "."))
                    continue;
                const char *key = row.path;
                if (row.type != ARC_DIR && staged->n &&
                    bsearch(&key, staged->v, staged->n, sizeof *staged->v, cmp_str)) {
                    rc = cx_fail(cx, "userland.debs: /%s of %s is in the root already, from a "
                                 "C library or compiler stage of userland.packages: take it "
                                 "from one of the two (a C library packaged as libc6.1 "
                                 "replaces the glibc stage in userland.packages)", row.path,
                                 label);
                    break;
                }
                if (row.type != ARC_DIR) {
                    for (size_t o = 0; o < owned.n; o++)
                        if (!strcmp(owned.v[o], row.path)) {
                            rc = cx_fail(cx, "userland.debs: /%s is in two packages: %s and "
                                         "%s (leave one out, or name the package wanted as "
                                         "STAGE/PACKAGE)", row.path, owner.v[o], label);
                            break;
                        }
                    strlist_push(&owned, row.path);
                    strlist_push(&owner, label);
                }
                if (row.type == ARC_FILE && (row.mode & 0111)) {
                    strlist_push(&progs, row.path);
                    strlist_push(&progs_of, label);
                }
                /* the mode as the package has it, owners root's whatever it said */
                row.type = ARC_KEEP;
                row.target = NULL;
                row.uid = row.gid = 0;
                arc_table_add(meta, &row);
            }
            if (rc == 0) {
                *list = xrealloc(*list, (*nlist + 1) * sizeof **list);
                (*list)[(*nlist)++] = (struct unpacked){
                    xstrdup(di->package), xstrdup(di->version), xstrdup(di->architecture),
                    xasprintf("%s/%s", it.stage, it.file)};
                cx_log(cx, "unpacked %s %s (%zu entries)", label, di->version, rec.n);
                if (dpkg_db)
                    rc = dpkg_record(cx, root, it.path, di, &rec, &stanzas);
            }
            free(label);
            arc_table_free(&rec);
        }
        if (more < 0)
            rc = cx_fail(cx, "userland.debs: %s", err);
        else if (rc == 0 && !it.taken)
            rc = cx_fail(cx, "userland.debs: stage %s has no binary package%s%s", it.stage,
                         it.want ? " named " : "", it.want ? it.want : "");
        pkg_deb_iter_close(&it);
    }
    /* once all are there (a loader may come in a later package) */
    for (size_t i = 0; i < progs.n && rc == 0; i++)
        rc = check_interp(cx, root, progs.v[i], progs_of.v[i]);
    for (size_t i = 0; i < owned.n && rc == 0; i++)
        rc = usr_link(cx, root, owned.v[i], meta);
    if (rc == 0 && dpkg_db)
        rc = dpkg_database(cx, root, &stanzas);
    strlist_free(&stanzas);
    /* sorted by package name (then file): the list's order */
    for (size_t i = 1; i < *nlist; i++)
        for (size_t j = i; j > 0; j--) {
            struct unpacked *a = &(*list)[j - 1], *b = &(*list)[j];
            int c = strcmp(a->package, b->package);
            if (c < 0 || (c == 0 && strcmp(a->file, b->file) <= 0))
                break;
            struct unpacked t = *a;
            *a = *b;
            *b = t;
        }
    strlist_free(&entries);
    strlist_free(&owned);
    strlist_free(&owner);
    strlist_free(&progs);
    strlist_free(&progs_of);
    return rc;
}

static int run(struct stage_ctx *cx)
{
    const struct libc_names *ln = libc_names_of(cx->arch);
    char *root = path_join(cx->work, "root");
    struct strlist stages = {0};
    stage_list(cx->st, &stages);
    /* what the C library and compiler stages put in the root: a package
     * may not bring it again */
    struct strlist runtime = {0};
    struct component comp[16];
    size_t ncomp = 0;
    struct arc_table meta = {0};
    struct buf tsv = BUF_INIT;
    json_object *man = json_object_new_object(), *comps = json_object_new_array();
    bool have_sysroot = false;
    struct unpacked *debs = NULL;
    size_t ndebs = 0;
    int rc = 0;
    if (mkdir_p(root, 0755) < 0) {
        rc = cx_fail(cx, "cannot create %s: %s", root, strerror(errno));
        goto out;
    }
    for (const struct node *n = nodes; n->path && rc == 0; n++) {
        if (n->type == ARC_DIR) {
            char *p = path_join(root, n->path);
            if (mkdir_p(p, 0755) < 0)
                rc = cx_fail(cx, "cannot create %s: %s", p, strerror(errno));
            free(p);
        }
        arc_table_addf(&meta, n->path, n->type, n->mode, 0, 0, n->major, n->minor, NULL);
    }
    for (size_t i = 0; i < stages.n && rc == 0; i++) {
        const char *dir = cx_dep(cx, stages.v[i]);
        const char *kind = sr_stage_kind(cx->st, stages.v[i]);
        char *sys = path_join(dir, "sysroot"), *tree = path_join(dir, "root");
        char *rt = path_join(dir, "runtime/lib");
        size_t n = 0;
        const char *what = "";
        if (is_dir(sys)) {
            have_sysroot = true;
            rc = copy_runtime(cx, sys, root, &n, &runtime);
            what = "runtime libraries";
        }
        if (rc == 0 && is_dir(tree)) {
            if (copy_tree(tree, root, false) < 0)
                rc = cx_fail(cx, "cannot copy %s: %s", tree, strerror(errno));
            what = "root tree";
        }
        if (rc == 0 && is_dir(rt)) {
            char *lib = path_join(root, "lib");
            struct strlist l = {0};
            list_tree(rt, &l);
            for (size_t j = 0; j < l.n; j++)
                strlist_pushf(&runtime, "lib/%s", l.v[j]);
            strlist_free(&l);
            if (copy_tree(rt, lib, false) < 0)
                rc = cx_fail(cx, "cannot copy %s: %s", rt, strerror(errno));
            free(lib);
            what = "compiler runtime";
        }
        cx_log(cx, "stage %s (%s): %s%s", stages.v[i], kind ? kind : "?", what,
               n ? "" : "");
        /* the component's name and version for packages.tsv, as its kind
         * declares them (stage.h, root_name) */
        char *ver = NULL;
        const char *cname = stages.v[i];
        const struct stage_kind *k = sr_stage_kind_def(cx->st, stages.v[i]);
        const struct stage_component *c = k ? k->components : NULL;
        while (c && c->name && !c->root_name)
            c++;
        if (c && c->root_name) {
            cname = c->root_name;
            for (size_t f = 0; !ver && f < ARRAY_LEN(c->root_version) && c->root_version[f]; f++)
                ver = c->root_version[f][0] == '@' ? first_line_of(dir, c->root_version[f] + 1)
                                                   : manifest_field(dir, c->root_version[f]);
        }
        if (ncomp < ARRAY_LEN(comp) - 1)
            comp[ncomp++] = (struct component){xstrdup(cname), ver ? ver : xstrdup("unknown")};
        else
            free(ver);
        free(sys);
        free(tree);
        free(rt);
    }
    if (rc)
        goto out;
    tree_owner_writable(root, true); /* what came out of the cache is read-only */
    if (cx_bool(cx, "strip", true) && (rc = strip_libs(cx, root)) != 0)
        goto out;
    /* the binary packages, after the strip: their files as they ship them */
    strlist_sort(&runtime);
    rc = unpack_debs(cx, root, &meta, &runtime, &debs, &ndebs);
    if (rc)
        goto out;
    /* the root trees' programs find their loader, now that packages are in */
    for (size_t i = 0; i < stages.n && rc == 0; i++) {
        char *tree = path_join(cx_dep(cx, stages.v[i]), "root");
        if (is_dir(tree))
            rc = check_interps(cx, root, tree, stages.v[i]);
        free(tree);
    }
    if (rc)
        goto out;
    if (ndebs) {
        struct buf pl = BUF_INIT;
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < ndebs; i++) {
            buf_printf(&pl, "%s %s %s\n", debs[i].package, debs[i].version, debs[i].arch);
            json_object *d = json_object_new_object();
            json_add_str(d, "package", debs[i].package);
            json_add_str(d, "version", debs[i].version);
            json_add_str(d, "architecture", debs[i].arch);
            json_add_str(d, "file", debs[i].file);
            json_object_array_add(a, d);
        }
        json_object_object_add(man, "debs", a);
        rc = put(cx, root, "var/lib/trillian/packages", pl.p, 0644);
        buf_free(&pl);
        if (rc)
            goto out;
    }
    const char *kdir = cx_dep(cx, "kernel");
    char *krel = kdir ? first_line_of(kdir, "release") : NULL;
    if (krel)
        comp[ncomp++] = (struct component){xstrdup("kernel"), krel};

    /* with a C library, its loader must be there under the arch's name */
    char *ld = sr_resolve_in_root(root, ln->interp);
    struct stat sb;
    if (have_sysroot && (stat(ld, &sb) != 0 || !S_ISREG(sb.st_mode)))
        rc = cx_fail(cx, "userland: the root has no %s (the %s loader %s): is the C library "
                     "stage for arch %s?", ln->interp, cx->arch, ln->ldso, cx->arch);
    free(ld);
    if (rc || (rc = make_etc(cx, root, comp, ncomp)) != 0)
        goto out;

    buf_puts(&tsv, "package\tversion\tarchitecture\n");
    json_add_str(man, "kind", "minimal");
    for (size_t i = 0; i < ncomp; i++) {
        buf_printf(&tsv, "%s\t%s\t%s\n", comp[i].name, comp[i].version, cx->arch);
        json_object *c = json_object_new_object();
        json_add_str(c, "name", comp[i].name);
        json_add_str(c, "version", comp[i].version);
        json_object_array_add(comps, c);
    }
    json_object_object_add(man, "components", comps);
    comps = NULL;
    json_add_str(man, "loader", ln->interp);
    char *tar = path_join(cx->out, "rootfs.tar");
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.format = ARC_TAR;
    o.mtime = cx->source_date_epoch;
    o.meta = &meta;
    o.no_xattrs = true;
    char err[ARC_ERRLEN];
    if (arc_write_tree(root, tar, &o, err) != 0) {
        rc = cx_fail(cx, "cannot write rootfs.tar: %s", err);
    } else {
        long long size = stat(tar, &sb) == 0 ? (long long)sb.st_size : -1;
        json_object_object_add(man, "tar_size", json_object_new_int64(size));
        cx_log(cx, "rootfs.tar: %lld bytes", size);
        if (cx_write(cx, "packages.tsv", tsv.p, tsv.n) || cx_write(cx, "cmdline-extra", "", 0))
            rc = 1;
        else
            rc = cx_write_manifest(cx, man);
        man = NULL;
    }
    free(tar);
out:
    strlist_free(&runtime);
    for (size_t i = 0; i < ndebs; i++) {
        free(debs[i].package);
        free(debs[i].version);
        free(debs[i].arch);
        free(debs[i].file);
    }
    free(debs);
    for (size_t i = 0; i < ncomp; i++) {
        free(comp[i].name);
        free(comp[i].version);
    }
    arc_table_free(&meta);
    strlist_free(&stages);
    buf_free(&tsv);
    json_object_put(man);
    json_object_put(comps);
    free(root);
    return rc;
}

/* The root assembly, keyed on `packages` and `strip` (and the stages they name). */
static const struct stage_kind stage_minimal_base = {
    .name = "minimal-base",
    .section = "userland",
    .version = 2, /* 2: /bin and /sbin links to the packages' programs (usr_link); a
                     package's symlink over a directory of the root left out */
    .summary = "the root assembly of a minimal userland (added by the engine as userland-base)",
    .fields = base_fields,
    .outputs = base_outputs,
    .late_fields = late_fields,
    .declare = declare,
    .run = run,
};

static int config_declare(struct stage *st) { return root_config_declare(st, &root_config_minimal); }
static int config_run(struct stage_ctx *cx) { return root_config_run(cx, &root_config_minimal); }

const struct stage_kind stage_minimal_root = {
    .name = "minimal",
    .section = "userland",
    .version = 3, /* 2: packages.tsv names GRUB's version; 3: the configuration on a copy
                     of userland-base's root */
    .summary = "a small root from the packages stages (C library runtime, busybox, gcc "
               "runtime) with /etc, busybox init and device nodes, made without root",
    .fields = fields,
    .outputs = outputs,
    .late_fields = late_fields,
    .base = &stage_minimal_base,
    .in_stages = true, /* an install ISO's live system beside another userland (iso.c) */
    .declare = config_declare,
    .run = config_run,
};
