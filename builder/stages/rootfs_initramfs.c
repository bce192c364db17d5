/* The `rootfs` initramfs: the whole userland root as the initramfs, so a
 * small root (the from-source minimal root) boots with no disk at all. This
 * is how the Ski boot check runs a shell: Ski's simscsi disk needs a block
 * driver and a filesystem in the kernel, an initramfs needs neither.
 *
 * The userland stage's rootfs.tar is unpacked without root (owners and device
 * nodes recorded in a metadata table by the archive module) and written back
 * as a newc cpio, entries sorted, every mtime source_date_epoch. The kernel
 * runs /init from an initramfs, so /init becomes a symlink to the `init`
 * setting (default /sbin/init) unless the root has an /init of its own; a
 * root whose init target is missing is refused before anything is written.
 *
 * Input: the userland stage (rootfs.tar). Outputs: initrd.img, and
 * stage-manifest.json with the init and the size. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/archive.h"
#include "base/json_out.h"
#include "stage.h"

static const char *const compressions[] = {"gzip", "zstd", "none", NULL};

static const struct field fields[] = {
    {"init", F_STRING, false, NULL, "/sbin/init",
     "program the kernel runs as /init (an absolute path inside the root)"},
    {"compression", F_ENUM, false, compressions, "gzip", "compression of the cpio archive"},
    {0},
};

static const char *const outputs[] = {"initrd.img", "stage-manifest.json", NULL};

static int declare(struct stage *st)
{
    const char *init = st_str(st, "init");
    if (init && init[0] != '/')
        return st_error(st, "init", "'%s' is not an absolute path (e.g. \"/sbin/init\")", init);
    st_need_file(st, "userland", "rootfs.tar");
    return 0;
}

/* Whether PATH (absolute, inside ROOT) names something, following the
 * root's own symlinks only as far as lstat: a dangling link is still refused
 * by the check on its target below. */
static bool root_has(const char *root, const char *path)
{
    char *p = path_join(root, path + 1);
    struct stat sb;
    bool ok = lstat(p, &sb) == 0;
    if (ok && S_ISLNK(sb.st_mode)) {
        /* resolve one level relative to the root (busybox applet links are
         * relative or absolute symlinks to /bin/busybox) */
        char buf[4096];
        ssize_t n = readlink(p, buf, sizeof buf - 1);
        ok = n > 0;
        if (ok) {
            buf[n] = '\0';
            char *t;
            if (buf[0] == '/') {
                t = path_join(root, buf + 1);
            } else {
                char *dir = xstrdup(p);
                char *slash = strrchr(dir, '/');
                if (slash)
                    *slash = '\0';
                t = path_join(dir, buf);
                free(dir);
            }
            ok = stat(t, &sb) == 0 || lstat(t, &sb) == 0;
            free(t);
        }
    }
    free(p);
    return ok;
}

static int run(struct stage_ctx *cx)
{
    const char *init = cx_str(cx, "init");
    char *tar = cx_dep_file(cx, "userland", "rootfs.tar");
    char *root = path_join(cx->work, "root");
    char *img = path_join(cx->out, "initrd.img");
    char err[ARC_ERRLEN];
    struct arc_table meta = {0};
    int rc = 1;

    if (mkdir_p(root, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", root, strerror(errno));
        goto out;
    }
    if (arc_extract(tar, root, 0, &meta, err) < 0) {
        cx_fail(cx, "cannot unpack the userland's root: %s", err);
        goto out;
    }
    if (!root_has(root, "/init")) {
        if (!root_has(root, init)) {
            cx_fail(cx, "the root has no %s (initramfs.init): set it to the root's init "
                    "program, e.g. \"/bin/sh\"", init);
            goto out;
        }
        char *link = path_join(root, "init");
        if (symlink(init, link) < 0) {
            cx_fail(cx, "cannot create %s: %s", link, strerror(errno));
            free(link);
            goto out;
        }
        free(link);
        arc_table_addf(&meta, "init", ARC_SYMLINK, 0777, 0, 0, 0, 0, init);
        cx_log(cx, "/init -> %s", init);
    }

    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.format = ARC_CPIO;
    o.filter = arc_filter_from_name(cx_str(cx, "compression"));
    o.mtime = cx->source_date_epoch;
    o.meta = &meta;
    if (arc_write_tree(root, img, &o, err) < 0) {
        cx_fail(cx, "cannot write the initramfs: %s", err);
        goto out;
    }
    struct stat sb;
    long long size = stat(img, &sb) == 0 ? (long long)sb.st_size : -1;
    json_object *man = json_object_new_object();
    json_add_str(man, "init", init);
    json_object_object_add(man, "bytes", json_object_new_int64(size));
    rc = cx_write_manifest(cx, man);
    cx_log(cx, "initrd.img: %lld bytes", size);
out:
    arc_table_free(&meta);
    free(tar);
    free(root);
    free(img);
    return rc;
}

const struct stage_kind stage_rootfs_initramfs = {
    .name = "rootfs",
    .section = "initramfs",
    .version = 1,
    .summary = "the userland's whole root as the initramfs (newc cpio, no root needed): boots "
               "a small root with no disk",
    .fields = fields,
    .outputs = outputs,
    .declare = declare,
    .run = run,
};
