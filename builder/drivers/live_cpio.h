/* The live root as the initrd itself: for kernels without squashfs (the
 * ia64 default's), the iso kind's `live_root = "initramfs"` packs the whole
 * live tree (the userland's root, the kernel's modules, the installer) as
 * one gzip newc cpio that the loader hands to the kernel; the kernel runs
 * /init from it (a link to /sbin/init unless the root has its own) and the
 * root stays in RAM. No initramfs stage is needed. */
#ifndef TRILLIAN_LIVE_CPIO_H
#define TRILLIAN_LIVE_CPIO_H

#include "fsimage.h"
#include "stage.h"

/* Writes T as OUT (gzip newc cpio, entries sorted, every mtime sde, owners
 * and device nodes from T). Returns 0, or 1 after cx_fail. */
int live_cpio_initrd(const struct stage_ctx *cx, struct fs_tree *t, const char *out);

#endif
