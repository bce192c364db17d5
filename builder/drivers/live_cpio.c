/* The whole live root as a cpio initrd; see live_cpio.h. */
#define _GNU_SOURCE
#include "live_cpio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/archive.h"

int live_cpio_initrd(const struct stage_ctx *cx, struct fs_tree *t, const char *out)
{
    long long sde = cx->source_date_epoch;
    char *init = path_join(t->dir, "init");
    struct stat sb;
    if (lstat(init, &sb) != 0) {
        char *sinit = path_join(t->dir, "sbin/init");
        bool has = lstat(sinit, &sb) == 0;
        free(sinit);
        if (!has) {
            free(init);
            char *where = cx_where(cx, "live_root");
            int r = cx_fail(cx, "%s = \"initramfs\": the root has neither /init nor /sbin/init "
                            "for the kernel to run; use a userland with an init, or live_root "
                            "= \"squashfs\" with an initramfs stage", where);
            free(where);
            return r;
        }
        if (symlink("/sbin/init", init) < 0) {
            int e = errno;
            int r = cx_fail(cx, "cannot create %s: %s", init, strerror(e));
            free(init);
            return r;
        }
    }
    free(init);
    struct arc_table meta = {0};
    for (size_t i = 0; i < t->n; i++) {
        const struct fs_entry *e = &t->v[i];
        if (!e->path[0])
            continue;
        switch (e->type) {
        case 'c':
        case 'b':
        case 'p':
            arc_table_addf(&meta, e->path,
                           e->type == 'c' ? ARC_CHR : e->type == 'b' ? ARC_BLK : ARC_FIFO,
                           (int)e->mode, (long long)e->uid, (long long)e->gid, e->rmajor,
                           e->rminor, NULL);
            break;
        case 'd':
            arc_table_addf(&meta, e->path, ARC_DIR, (int)e->mode, (long long)e->uid,
                           (long long)e->gid, 0, 0, NULL);
            break;
        case 'l':
            break; /* the tree has the link; owners of links do not matter */
        default: /* f, h */
            arc_table_addf(&meta, e->path, ARC_KEEP, (int)e->mode, (long long)e->uid,
                           (long long)e->gid, 0, 0, NULL);
        }
    }
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.format = ARC_CPIO;
    o.filter = ARC_GZIP;
    o.mtime = sde;
    o.meta = &meta;
    char err[ARC_ERRLEN];
    int rc = 0;
    if (arc_write_tree(t->dir, out, &o, err) < 0)
        rc = cx_fail(cx, "cannot write the live root as the initrd %s: %s", out, err);
    else
        cx_log(cx, "initrd: the whole live root, %lld bytes (gzip cpio, %zu entries)",
               fsimage_file_size(out), t->n);
    arc_table_free(&meta);
    return rc;
}
