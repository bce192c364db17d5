/* The configuration step of the userland kinds: see root_config.h.
 *
 * run() extracts the base stage's rootfs.tar (as root with owners, device
 * nodes and xattrs; without root into a metadata table, as arc_extract
 * records it), builds the configuration tree CONF (the overlays and the
 * kind's /etc files), copies it over the root, and writes rootfs.tar again:
 * sorted, every mtime source_date_epoch, owners and modes kept. In foreign
 * debootstrap mode CONF goes to var/lib/trillian-firstboot/overlay instead,
 * with the config file /sbin/trillian-firstboot reads, as the first boot
 * applies it after debootstrap's second stage.
 *
 * Outputs: the base's rootfs.tar so configured, its packages.tsv and
 * stage-manifest.json as they are, and cmdline-extra. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json_out.h"
#include "formats/archive.h"
#include "root_config.h"
#include "root_password.h"

const struct root_config root_config_debian = {
    .etc = ROOT_ETC_DEBIAN,
    .default_overlay = "overlays/common",
    .autologin_overlay = "overlays/autologin",
    .overlays_first = true,
    .shadow_edit = true,
    .foreign = true,
    .console_example = "ttyS0",
};

const struct root_config root_config_minimal = {
    .etc = ROOT_ETC_BUSYBOX,
    .no_xattrs = true,
    .console_example = "console or ttyS0",
};

#define FIRSTBOOT_STATE "var/lib/trillian-firstboot"
#define FIRSTBOOT_INIT "/sbin/trillian-firstboot"

/* ---- plan time ---------------------------------------------------------- */

/* The overlay trees, in order: the recipe's (else the kind's default from
 * the data directory), then the autologin overlay if autologin is on. */
static void overlay_list(const struct stage *st, const struct root_config *rc,
                         struct strlist *out)
{
    if (st_isset(st, "overlays")) {
        struct strlist l = {0};
        st_list(st, "overlays", &l);
        for (size_t i = 0; i < l.n; i++)
            strlist_push_owned(out, path_absolute(st_recipe_dir(st), l.v[i]));
        strlist_free(&l);
    } else if (rc->default_overlay) {
        strlist_push_owned(out, trillian_data_path(rc->default_overlay));
    }
    if (rc->autologin_overlay && st_bool(st, "autologin", true))
        strlist_push_owned(out, trillian_data_path(rc->autologin_overlay));
}

int root_config_declare(struct stage *st, const struct root_config *rc)
{
    const char *host = st_str(st, "hostname");
    if (!str_all_alnum_or(host, "-") || strlen(host) > 63 || host[0] == '-')
        st_error(st, "hostname", "'%s' is not a host name (letters, digits and '-', at "
                 "most 63)", host ? host : "");
    const char *console = st_str(st, "console");
    if (!str_all_alnum_or(console, "") && (rc->etc == ROOT_ETC_DEBIAN || (console && *console)))
        st_error(st, "console", "'%s' is not a device name (expected e.g. %s)",
                 console ? console : "", rc->console_example);
    if (rc->etc == ROOT_ETC_DEBIAN) {
        const char *fstype = st_str(st, "rootfs_type");
        if (!str_all_alnum_or(fstype, ""))
            st_error(st, "rootfs_type", "'%s' is not a filesystem type (expected e.g. ext4)",
                     fstype ? fstype : "");
        struct strlist l = {0};
        st_list(st, "modules", &l);
        for (size_t i = 0; i < l.n; i++)
            if (!str_all_alnum_or(l.v[i], "-_.+"))
                st_error(st, "modules", "'%s' is not a package, component or module name",
                         l.v[i]);
        strlist_free(&l);
    }
    const char *uuid = st_root_uuid(st); /* its form is checked where the recipe is read */
    st_input_text(st, "root_uuid", uuid ? uuid : "(none)");
    st_input_text(st, "recipe-name", st_recipe_name(st));
    /* Overlays from the data directory are not recipe paths: hash them. */
    struct strlist ov = {0};
    overlay_list(st, rc, &ov);
    for (size_t i = 0; i < ov.n; i++) {
        if (!is_dir(ov.v[i])) {
            st_error(st, "overlays", "%s is not a directory (expected overlay trees)",
                     ov.v[i]);
            continue;
        }
        if (!st_isset(st, "overlays") ||
            (rc->autologin_overlay && str_ends(ov.v[i], rc->autologin_overlay))) {
            char *label = xasprintf("overlay:%s", path_basename(ov.v[i]));
            st_input_tree(st, label, ov.v[i]);
            free(label);
        }
    }
    strlist_free(&ov);
    if (rc->foreign && st_bool(st, "foreign", false)) {
        char *fb = trillian_data_path("overlays/firstboot/trillian-firstboot");
        st_input_file(st, "firstboot", fb);
        free(fb);
    }
    if (st_str(st, "root_password"))
        st_tool(st, "openssl");
    return 0;
}

/* ---- run time: files ---------------------------------------------------- */

static int put_file(const struct stage_ctx *cx, const char *dir, const char *rel,
                    const char *text, mode_t mode)
{
    return cx_write_in(cx, dir, rel, text, strlen(text), mode);
}

static int put_symlink(const struct stage_ctx *cx, const char *dir, const char *rel,
                       const char *target)
{
    char *p = path_join(dir, rel);
    char *d = path_dirname(p);
    int rc = mkdir_p(d, 0755);
    if (rc == 0) {
        unlink(p);
        rc = symlink(target, p);
    }
    if (rc)
        cx_fail(cx, "cannot create symlink %s: %s", p, strerror(errno));
    free(d);
    free(p);
    return rc;
}

/* PATH inside ROOT with symlinks in the existing part resolved within ROOT
 * (an absolute link such as var/run -> /run must not lead to the host). */
static char *resolve_in_root(const char *root, const char *path)
{
    char *p = xstrdup(path);
    for (int hops = 0; hops < 32; hops++) {
        struct stat sb;
        if (lstat(p, &sb) != 0 || !S_ISLNK(sb.st_mode))
            return p;
        char t[4096];
        ssize_t n = readlink(p, t, sizeof t - 1);
        if (n < 0)
            return p;
        t[n] = 0;
        char *next;
        if (t[0] == '/') {
            next = path_join(root, t + 1);
        } else {
            char *d = path_dirname(p);
            next = path_join(d, t);
            free(d);
        }
        free(p);
        p = next;
    }
    return p;
}

/* Copies the tree SRC over DST (below ROOT): files and symlinks replace what
 * is there, directories are merged; new entries keep SRC's modes, existing
 * directories keep theirs. */
static int overlay_copy(const struct stage_ctx *cx, const char *root, const char *src,
                        const char *dst)
{
    DIR *d = opendir(src);
    if (!d)
        return cx_fail(cx, "cannot read overlay directory %s: %s (check userland.overlays)",
                       src, strerror(errno));
    struct strlist names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            strlist_push(&names, e->d_name);
    closedir(d);
    strlist_sort(&names);
    int rc = 0;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        char *s = path_join(src, names.v[i]);
        char *raw = path_join(dst, names.v[i]);
        struct stat ss, ds;
        if (lstat(s, &ss) != 0) {
            rc = cx_fail(cx, "cannot stat %s: %s", s, strerror(errno));
        } else if (S_ISDIR(ss.st_mode)) {
            char *t = resolve_in_root(root, raw);
            if (stat(t, &ds) == 0 && S_ISDIR(ds.st_mode)) {
                rc = overlay_copy(cx, root, s, t);
            } else {
                unlink(t);
                if (mkdir(t, 0700) != 0)
                    rc = cx_fail(cx, "cannot create %s: %s", t, strerror(errno));
                else if ((rc = overlay_copy(cx, root, s, t)) == 0 &&
                         chmod(t, ss.st_mode & 07777) != 0)
                    rc = cx_fail(cx, "cannot chmod %s: %s", t, strerror(errno));
            }
            free(t);
        } else {
            /* the last component is replaced, not followed */
            if (lstat(raw, &ds) == 0) {
                if (S_ISDIR(ds.st_mode))
                    rc = cx_fail(cx, "overlay file %s would replace the directory %s", s,
                                 raw);
                else
                    unlink(raw);
            }
            if (rc == 0 && S_ISLNK(ss.st_mode)) {
                char t[4096];
                ssize_t n = readlink(s, t, sizeof t - 1);
                if (n < 0 || (t[n] = 0, symlink(t, raw) != 0))
                    rc = cx_fail(cx, "cannot copy symlink %s: %s", s, strerror(errno));
            } else if (rc == 0 && S_ISREG(ss.st_mode)) {
                if (copy_file(s, raw) != 0)
                    rc = cx_fail(cx, "cannot copy %s to %s: %s", s, raw, strerror(errno));
            } else if (rc == 0) {
                rc = cx_fail(cx, "overlay %s is not a file, directory or symlink", s);
            }
        }
        free(s);
        free(raw);
    }
    strlist_free(&names);
    return rc;
}

/* Sets root's password hash in ROOT/etc/shadow. */
static int set_root_hash(const struct stage_ctx *cx, const char *root, const char *hash)
{
    char *path = path_join(root, "etc/shadow");
    char *data;
    size_t len;
    struct stat sb;
    if (stat(path, &sb) != 0 || read_file(path, &data, &len) != 0) {
        int rc = cx_fail(cx, "cannot read %s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    struct buf b = BUF_INIT;
    bool done = false;
    for (char *l = data, *nl; l && *l; l = nl) {
        nl = strchr(l, '\n');
        if (nl)
            *nl++ = 0;
        char *c1 = strchr(l, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!done && str_starts(l, "root:") && c2) {
            buf_printf(&b, "root:%s%s\n", hash, c2);
            done = true;
        } else {
            buf_printf(&b, "%s\n", l);
        }
    }
    int rc = 0;
    if (!done)
        rc = cx_fail(cx, "%s has no root entry", path);
    else if (write_file_atomic(path, b.p, b.n, sb.st_mode & 07777) != 0 ||
             chown(path, sb.st_uid, sb.st_gid) != 0 || chmod(path, sb.st_mode & 07777) != 0)
        rc = cx_fail(cx, "cannot write %s: %s", path, strerror(errno));
    free(data);
    buf_free(&b);
    free(path);
    return rc;
}

/* /etc/fstab's head and its root line: by UUID when the recipe has a
 * root_uuid, else a note that root= decides (UNSET_MORE: what else may). */
static void fstab_root(struct buf *b, const char *uuid, const char *fstype,
                       const char *unset_more)
{
    buf_puts(b, "# /etc/fstab, written by Trillian.\n"
             "# <file system> <mount point> <type> <options> <dump> <pass>\n");
    if (uuid)
        buf_printf(b, "UUID=%s / %s defaults 0 1\n", uuid, fstype);
    else
        buf_printf(b, "# no root_uuid in the recipe: / is whatever root= names%s\n", unset_more);
}

/* A Debian root's files: hostname, hosts, fstab, getty, network, modules,
 * build info. */
static int etc_debian(const struct stage_ctx *cx, const char *conf, const char *hash)
{
    (void)hash; /* edited into the base's shadow */
    const char *host = cx_str(cx, "hostname");
    struct buf b = BUF_INIT;
    int rc = 0;
    buf_printf(&b, "%s\n", host);
    rc |= put_file(cx, conf, "etc/hostname", b.p, 0644);
    b.n = 0;
    buf_printf(&b, "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n\n"
               "::1\tlocalhost ip6-localhost ip6-loopback\n"
               "ff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n", host);
    rc |= put_file(cx, conf, "etc/hosts", b.p, 0644);
    b.n = 0;
    fstab_root(&b, st_root_uuid(cx->st), cx_str(cx, "rootfs_type"), "");
    rc |= put_file(cx, conf, "etc/fstab", b.p, 0644);
    b.n = 0;
    char *getty = xasprintf("etc/systemd/system/getty.target.wants/serial-getty@%s.service",
                            cx_str(cx, "console"));
    rc |= put_symlink(cx, conf, getty, "/lib/systemd/system/serial-getty@.service");
    free(getty);
    if (strcmp(cx_str(cx, "network"), "dhcp") == 0) {
        rc |= put_file(cx, conf, "etc/systemd/network/80-trillian-dhcp.network",
                       "# Written by Trillian (userland.network = \"dhcp\").\n"
                       "[Match]\nType=ether\nName=en* eth*\n\n"
                       "[Network]\nDHCP=yes\n", 0644);
        rc |= put_symlink(cx, conf,
                          "etc/systemd/system/multi-user.target.wants/systemd-networkd.service",
                          "/lib/systemd/system/systemd-networkd.service");
        rc |= put_symlink(cx, conf,
                          "etc/systemd/system/sockets.target.wants/systemd-networkd.socket",
                          "/lib/systemd/system/systemd-networkd.socket");
    }
    struct strlist mods = {0};
    if (cx_list(cx, "modules", &mods)) {
        buf_puts(&b, "# Written by Trillian (userland.modules).\n");
        for (size_t i = 0; i < mods.n; i++)
            buf_printf(&b, "%s\n", mods.v[i]);
        rc |= put_file(cx, conf, "etc/modules-load.d/trillian.conf", b.p, 0644);
        b.n = 0;
    }
    strlist_free(&mods);
    buf_printf(&b, "RECIPE=%s\nARCH=%s\nSUITE=%s\nSOURCE_DATE_EPOCH=%lld\nFOREIGN=%s\n",
               st_recipe_name(cx->st), cx->arch, debootstrap_suite(cx->st), cx->source_date_epoch,
               cx_bool(cx, "foreign", false) ? "yes" : "no");
    rc |= put_file(cx, conf, "etc/trillian-build", b.p, 0644);
    buf_free(&b);
    return rc ? 1 : 0;
}

/* A busybox root's files: users and password, hostname, hosts, fstab,
 * inittab (a shell on the console with autologin, else getty and login),
 * build info. */
static int etc_busybox(const struct stage_ctx *cx, const char *conf, const char *hash)
{
    const char *host = cx_str(cx, "hostname");
    const char *con = cx_str(cx, "console");
    struct buf b = BUF_INIT;
    int rc = 0;
    rc |= put_file(cx, conf, "etc/passwd",
                   "root:x:0:0:root:/root:/bin/sh\n"
                   "daemon:x:1:1:daemon:/usr/sbin:/bin/false\n"
                   "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n", 0644);
    rc |= put_file(cx, conf, "etc/group",
                   "root:x:0:\ndaemon:x:1:\ntty:x:5:\nshadow:x:42:\nnogroup:x:65534:\n", 0644);
    /* the last change: the build's day, not today's */
    long long day = cx->source_date_epoch / 86400;
    buf_printf(&b, "root:%s:%lld:0:99999:7:::\ndaemon:*:%lld:0:99999:7:::\n"
               "nobody:*:%lld:0:99999:7:::\n", hash ? hash : "*", day, day, day);
    rc |= put_file(cx, conf, "etc/shadow", b.p, 0600);
    b.n = 0;
    buf_printf(&b, "%s\n", host);
    rc |= put_file(cx, conf, "etc/hostname", b.p, 0644);
    b.n = 0;
    buf_printf(&b, "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost "
               "ip6-loopback\n", host);
    rc |= put_file(cx, conf, "etc/hosts", b.p, 0644);
    b.n = 0;
    fstab_root(&b, st_root_uuid(cx->st), "ext4", " (or the initramfs)");
    buf_puts(&b, "proc /proc proc defaults 0 0\nsysfs /sys sysfs defaults 0 0\n");
    rc |= put_file(cx, conf, "etc/fstab", b.p, 0644);
    b.n = 0;
    /* the console's device: "console" goes through cttyhack, which finds
     * the real tty so that the shell has job control */
    buf_puts(&b, "# /etc/inittab for busybox init, written by Trillian.\n"
             "::sysinit:/etc/init.d/rcS\n");
    bool any = !strcmp(con, "console");
    if (cx_bool(cx, "autologin", true))
        buf_printf(&b, "%s::respawn:/bin/cttyhack /bin/sh -l\n", any ? "" : con);
    else
        buf_printf(&b, "%s::respawn:/sbin/getty -L 115200 %s vt100\n", any ? "" : con, con);
    buf_puts(&b, "::ctrlaltdel:/sbin/reboot\n::shutdown:/bin/umount -a -r\n");
    rc |= put_file(cx, conf, "etc/inittab", b.p, 0644);
    b.n = 0;
    buf_printf(&b, "RECIPE=%s\nARCH=%s\nUSERLAND=minimal\nSOURCE_DATE_EPOCH=%lld\n",
               st_recipe_name(cx->st), cx->arch, cx->source_date_epoch);
    rc |= put_file(cx, conf, "etc/trillian-build", b.p, 0644);
    buf_free(&b);
    return rc ? 1 : 0;
}

/* The configuration tree CONF: the overlays and the kind's files, in the
 * kind's order. */
static int make_conf(const struct stage_ctx *cx, const struct root_config *rc,
                     const char *conf, const char *hash)
{
    if (mkdir_p(conf, 0755) != 0)
        return cx_fail(cx, "cannot create %s: %s", conf, strerror(errno));
    int r = 0;
    if (!rc->overlays_first)
        r = rc->etc == ROOT_ETC_DEBIAN ? etc_debian(cx, conf, hash) : etc_busybox(cx, conf, hash);
    struct strlist ov = {0};
    overlay_list(cx->st, rc, &ov);
    for (size_t i = 0; i < ov.n && r == 0; i++) {
        cx_log(cx, "overlay %s", ov.v[i]);
        r = overlay_copy(cx, conf, ov.v[i], conf);
    }
    strlist_free(&ov);
    if (r == 0 && rc->overlays_first)
        r = rc->etc == ROOT_ETC_DEBIAN ? etc_debian(cx, conf, hash) : etc_busybox(cx, conf, hash);
    return r;
}

/* Installs the first-boot init and its state (config and overlay). */
static int install_firstboot(const struct stage_ctx *cx, const char *root, const char *conf,
                             const char *root_hash)
{
    char *state = path_join(root, FIRSTBOOT_STATE);
    char *ov = path_join(state, "overlay");
    int rc = mkdir_p(ov, 0755) == 0 ? 0 : cx_fail(cx, "cannot create %s", ov);
    if (rc == 0)
        rc = overlay_copy(cx, ov, conf, ov);
    struct buf b = BUF_INIT;
    buf_puts(&b, "# Written by Trillian's userland stage for /sbin/trillian-firstboot.\n");
    const char *keys[] = {"hostname", "console", "network"};
    const char *vars[] = {"HOST_NAME", "CONSOLE", "NETWORK"};
    for (size_t i = 0; i < ARRAY_LEN(keys); i++) {
        buf_printf(&b, "%s=", vars[i]);
        buf_shell_quote(&b, cx_str(cx, keys[i]));
        buf_puts(&b, "\n");
    }
    buf_puts(&b, "ROOT_HASH=");
    buf_shell_quote(&b, root_hash ? root_hash : "");
    buf_printf(&b, "\nAUTOLOGIN=%s\n", cx_bool(cx, "autologin", true) ? "yes" : "no");
    if (rc == 0)
        rc = put_file(cx, state, "config", b.p, 0644);
    buf_free(&b);
    char *src = trillian_data_path("overlays/firstboot/trillian-firstboot");
    char *sbin_raw = path_join(root, "sbin");
    char *sbin = resolve_in_root(root, sbin_raw);
    free(sbin_raw);
    char *dst = path_join(sbin, "trillian-firstboot");
    if (rc == 0 && (mkdir_p(sbin, 0755) != 0 || copy_file(src, dst) != 0 ||
                    chmod(dst, 0755) != 0))
        rc = cx_fail(cx, "cannot install %s as %s: %s", src, dst, strerror(errno));
    if (rc == 0) {
        rc = put_file(cx, cx->out, "cmdline-extra", "init=" FIRSTBOOT_INIT "\n", 0644);
        cx_log(cx, "installed %s; the kernel must run it as init (cmdline-extra)",
               FIRSTBOOT_INIT);
    }
    free(src);
    free(sbin);
    free(dst);
    free(ov);
    free(state);
    return rc;
}

/* ---- run time: the base's root ------------------------------------------ */

const char *root_config_base_dir(const struct stage_ctx *cx)
{
    char *name = xasprintf("%s-base", cx->name);
    const char *dir = cx_dep(cx, name);
    free(name);
    return dir;
}

static enum arc_type type_of(mode_t m)
{
    return S_ISREG(m) ? ARC_FILE : S_ISDIR(m) ? ARC_DIR : S_ISLNK(m) ? ARC_SYMLINK
         : S_ISCHR(m) ? ARC_CHR : S_ISBLK(m) ? ARC_BLK : S_ISFIFO(m) ? ARC_FIFO : ARC_SOCK;
}

/* Without root: the rows arc_extract recorded for ROOT, less those of what
 * the configuration replaced since (another type now, or a file written
 * after the extraction, whose mtime is no longer the archive's), which then
 * are root's with their new modes, as if written as root. Hard links become
 * plain file rows (the writer finds the links in the tree). */
static void table_of_base(const struct arc_table *rec, const char *root, long long mtime,
                          struct arc_table *out)
{
    for (size_t i = 0; i < rec->n; i++) {
        struct arc_entry row = rec->v[i];
        if (strcmp(row.path, ".") == 0)
            continue;
        if (row.type == ARC_HARDLINK) {
            row.type = ARC_FILE;
            row.target = NULL;
        }
        char *p = path_join(root, row.path);
        struct stat sb;
        bool keep;
        if (lstat(p, &sb) != 0)
            keep = row.type == ARC_CHR || row.type == ARC_BLK || row.type == ARC_FIFO ||
                   row.type == ARC_SOCK; /* not extracted without root */
        else
            keep = type_of(sb.st_mode) == row.type &&
                   (row.type != ARC_FILE || (long long)sb.st_mtime == mtime);
        if (keep)
            arc_table_add(out, &row);
        free(p);
    }
}

static int copy_out(const struct stage_ctx *cx, const char *base, const char *name)
{
    char *s = path_join(base, name), *d = path_join(cx->out, name);
    int rc = 0;
    if (copy_file(s, d) != 0 || chmod(d, 0644) != 0)
        rc = cx_fail(cx, "cannot copy %s to %s: %s", s, d, strerror(errno));
    free(s);
    free(d);
    return rc;
}

/* The base's stage-manifest.json, with its "tar_size" (the minimal kind
 * states its tarball's size) made the size of TAR, the configured one. */
static int copy_manifest(const struct stage_ctx *cx, const char *base, const char *tar)
{
    char *s = path_join(base, "stage-manifest.json");
    json_object *man = json_object_from_file(s);
    struct stat sb;
    int rc;
    if (!man || stat(tar, &sb) != 0) {
        rc = cx_fail(cx, "cannot read %s or %s: %s", s, tar, man ? strerror(errno) :
                     json_util_get_last_err());
        json_object_put(man);
    } else {
        if (json_object_object_get_ex(man, "tar_size", NULL))
            json_object_object_add(man, "tar_size", json_object_new_int64(sb.st_size));
        json_object *pk; /* a package a line, as the base wrote them */
        if (json_object_object_get_ex(man, "packages", &pk) && json_object_is_type(pk, json_type_array))
            for (size_t i = 0; i < json_object_array_length(pk); i++)
                json_one_line(json_object_array_get_idx(pk, i));
        rc = cx_write_manifest(cx, man);
    }
    free(s);
    return rc;
}

int root_config_run(struct stage_ctx *cx, const struct root_config *rc)
{
    bool as_root = geteuid() == 0;
    bool foreign = rc->foreign && cx_bool(cx, "foreign", false);
    const char *base = root_config_base_dir(cx);
    char *root = path_join(cx->work, "root");
    char *conf = path_join(cx->work, "config");
    char *btar = path_join(base, "rootfs.tar");
    char *tar = path_join(cx->out, "rootfs.tar");
    struct arc_table rec = {0}, meta = {0};
    char *hash = NULL;
    char err[ARC_ERRLEN];
    int r = 0;

    double t0 = now_seconds();
    if (mkdir_p(root, 0755) != 0) {
        r = cx_fail(cx, "cannot create %s: %s", root, strerror(errno));
        goto out;
    }
    if (arc_extract(btar, root, rc->no_xattrs ? ARC_X_NO_XATTRS : 0, as_root ? NULL : &rec,
                    err) != 0) {
        r = cx_fail(cx, "cannot extract the %s-base stage's rootfs.tar: %s (rebuild it with "
                    "--force %s-base)", cx->name, err, cx->name);
        goto out;
    }
    /* without root, read-only directories (proc, sys: 0555) must take the
     * configuration; the table restores their modes in the archive */
    if (!as_root)
        tree_owner_writable(root, false);
    cx_log(cx, "extracted %s in %.1f s", btar, now_seconds() - t0);

    const char *pw = cx_str(cx, "root_password");
    if (pw && !(hash = root_password_hash(cx, pw))) {
        r = 1;
        goto out;
    }
    if (!pw && !cx_bool(cx, "autologin", true))
        cx_log(cx, "warning: no root_password and autologin = false: root cannot log in");
    if ((r = make_conf(cx, rc, conf, hash)) != 0)
        goto out;
    if (foreign) {
        r = install_firstboot(cx, root, conf, hash);
    } else {
        r = overlay_copy(cx, root, conf, root);
        if (r == 0 && rc->shadow_edit && hash)
            r = set_root_hash(cx, root, hash);
        if (r == 0)
            r = put_file(cx, cx->out, "cmdline-extra", "", 0644);
    }
    if (r || (r = copy_out(cx, base, "packages.tsv")) != 0)
        goto out;

    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.format = ARC_TAR;
    o.mtime = cx->source_date_epoch;
    o.keep_owners = as_root; /* as root the tree has the archive's owners */
    o.no_xattrs = rc->no_xattrs;
    if (!as_root) {
        table_of_base(&rec, root, cx->source_date_epoch, &meta);
        o.meta = &meta;
    }
    t0 = now_seconds();
    if (arc_write_tree(root, tar, &o, err) != 0)
        r = cx_fail(cx, "cannot write rootfs.tar: %s", err);
    else
        cx_log(cx, "wrote %s in %.1f s", tar, now_seconds() - t0);
    if (r == 0)
        r = copy_manifest(cx, base, tar);
out:
    arc_table_free(&rec);
    arc_table_free(&meta);
    free(hash);
    free(tar);
    free(btar);
    free(conf);
    free(root);
    return r;
}
