/* Filesystem images from a root filesystem tarball, without root and
 * without loop devices. The tar is unpacked into a work directory as the
 * current user (no owners, no device nodes, permissive modes) while its real
 * metadata (owner, mode, mtime, device numbers) is kept in a list; the image
 * tools then get that metadata back: debugfs commands for ext4 (mke2fs -d),
 * a gensquashfs pack file for squashfs. The result does not
 * depend on who runs the build. Times are clamped to SOURCE_DATE_EPOCH. */
#ifndef TRILLIAN_FSIMAGE_H
#define TRILLIAN_FSIMAGE_H

#include <stdbool.h>

#include "stage.h"

struct fs_entry {
    char *path;    /* relative, without "./"; "" is the root directory */
    char type;     /* f d l h(ardlink) c b p */
    unsigned mode; /* permission bits, 07777 */
    unsigned long uid, gid;
    long long mtime;
    unsigned rmajor, rminor;
    long long size; /* regular files; symlinks: target length */
    char *link;     /* 'h': the path of the first link to the same inode */
};

struct fs_tree {
    char *dir; /* the unpacked content */
    struct fs_entry *v;
    size_t n, cap;
    long long file_bytes; /* sum of regular file sizes */
    long long name_bytes; /* sum of name lengths, for directory blocks */
};

/* Unpacks TAR into DIR (created) and fills T. Unsafe entries (absolute or
 * ".." paths, writes through symlinks) fail. Times are clamped to sde.
 * Returns 0, or 1 after cx_fail naming LABEL (e.g. "userland's rootfs.tar"). */
int fstree_from_tar(const struct stage_ctx *cx, const char *tar, const char *dir,
                    const char *label, long long sde, struct fs_tree *t);
/* Adds a file (copied from SRC), or a directory if SRC is NULL, owned 0:0. */
int fstree_add(const struct stage_ctx *cx, struct fs_tree *t, const char *relpath,
               const char *src, unsigned mode, long long mtime);
/* Adds a file with the given content, owned 0:0. */
int fstree_add_text(const struct stage_ctx *cx, struct fs_tree *t, const char *relpath,
                    const char *text, unsigned mode, long long mtime);
void fstree_free(struct fs_tree *t);
/* Copies the tree SRC into T below RELPATH (files, directories, symlinks;
 * modes from SRC, owned 0:0, mtime MTIME). Returns 0 or 1 after cx_fail. */
int fstree_add_tree(const struct stage_ctx *cx, struct fs_tree *t, const char *relpath,
                    const char *src, long long mtime);
/* Adds the kernel stage's modules (KERNEL_OUT/modules/lib/modules/RELEASE)
 * unless the root filesystem has lib/modules/RELEASE already; follows a
 * merged-/usr "lib -> usr/lib" link. Returns 0 or 1 after cx_fail. */
int fstree_add_kernel_modules(const struct stage_ctx *cx, struct fs_tree *t,
                              const char *kernel_out, long long mtime);

/* Smallest ext4 filesystem (bytes, a multiple of 1 MiB) that holds T with
 * the layout fsimage_ext4 uses. An estimate with a safety margin. */
long long fsimage_ext4_min_bytes(const struct fs_tree *t);

struct ext4_opts {
    const char *uuid;      /* mke2fs -U */
    const char *hash_seed; /* -E hash_seed= */
    const char *label;     /* -L, or NULL */
    long long bytes;       /* filesystem size */
    long long sde;
};
/* Makes IMAGE (a new file) as ext4 with T's content and metadata.
 * Returns 0; 1 after cx_fail; 2 (after logging) if it ran out of space. */
int fsimage_ext4(const struct stage_ctx *cx, const struct fs_tree *t, const char *image,
                 const struct ext4_opts *o);

/* Makes IMAGE as squashfs (COMP: "xz", "zstd", "gzip", ...) with
 * gensquashfs at LEVEL (0: the compressor's default); every timestamp is
 * sde. 0 or 1. */
int fsimage_squashfs(const struct stage_ctx *cx, const struct fs_tree *t, const char *image,
                     const char *comp, long long level, long long sde);
/* Plan-time check of the stage's level setting LEVEL_KEY against the
 * compressor named by COMP_KEY. 0, or 1 after st_error. */
int fsimage_squashfs_check_level(struct stage *st, const char *comp_key,
                                 const char *level_key);

/* Writes a newc cpio archive holding one file NAME (content from SRC),
 * owned 0:0, mode 0644, mtime sde. Returns 0 or 1 after cx_fail. */
int fsimage_cpio_one(const struct stage_ctx *cx, const char *cpio, const char *name,
                     const char *src, long long sde);

/* Copies the whole file SRC into DST at byte OFFSET, leaving all-zero
 * blocks as holes. Returns 0 or 1 after cx_fail. */
int fsimage_copy_at(const struct stage_ctx *cx, const char *src, const char *dst,
                    long long offset);

/* Runs argv like cx_capture but with stderr merged into the captured text
 * (also copied to the log): for tools that report errors only on stderr
 * and still exit 0 (debugfs). Returns the exit status or -1. */
int fsimage_run_merged(const struct stage_ctx *cx, const char *const *argv, char **out);

/* Size of a file, or -1. */
long long fsimage_file_size(const char *path);

#endif
