/* FAT file system images (the EFI system partition, the ISO's El Torito EFI
 * image) without mounting or root: mkfs.vfat with a fixed volume id
 * (--invariant where dosfstools has it), then mtools (mmd, mcopy -m) with
 * every time stamp at SOURCE_DATE_EPOCH and TZ=UTC, entries copied in a
 * fixed order, so two builds from the same inputs are byte-identical.
 * fsck.fat -n checks the result. */
#ifndef TRILLIAN_FAT_H
#define TRILLIAN_FAT_H

#include "stage.h"

struct fat_spec {
    long long bytes;     /* image size, a multiple of 1 KiB */
    int bits;            /* 12, 16 or 32 (mkfs.vfat -F); 0: mkfs.vfat's choice */
    int cluster_sectors; /* mkfs.vfat -s; 0: mkfs.vfat's choice */
    const char *label;   /* volume label, up to 11 characters */
    const char *volid;   /* volume id, 8 hex digits */
    const char *what;    /* the image in messages, e.g. "the ESP" */
    /* What sets the size, for messages when the image may be too small,
     * e.g. "bootloader.size_mib sets it (...)". */
    const char *size_hint;
};

/* The FAT type and cluster size for an image of MIB MiB: FAT12 below
 * 4 MiB (mkfs.vfat's cluster size), FAT16 below 64 MiB (1-sector clusters
 * up to 32 MiB), FAT32 above. */
void fat_geometry(long long mib, int *bits, int *cluster_sectors);

/* Bytes SRC's content takes with clusters up to 4 KiB: each file rounded
 * up to 4 KiB and 4 KiB per directory below SRC holding one. *RAW (if RAW
 * is not NULL) gets the sum of the file sizes. */
long long fat_content_bytes(const char *src, long long *raw);

/* Makes IMAGE (replacing it) as a FAT file system per SPEC holding the
 * files below SRC and the directories holding them, whose modification
 * times all become cx->source_date_epoch first. They go in the order ORDER
 * gives (paths relative to SRC, every directory before its content) or,
 * with ORDER NULL, the directories sorted, then the files sorted. Returns
 * 0, or 1 after cx_fail. */
int fat_image(const struct stage_ctx *cx, const char *image, const struct fat_spec *spec,
              const char *src, const struct strlist *order);

#endif
