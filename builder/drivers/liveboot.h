/* The live-boot payload shared by the netboot and iso images: the root
 * filesystem as squashfs inside the initramfs, the kernel command line that
 * selects it, and the EFI loader (GRUB built with grub-mkimage, or elilo
 * taken from the bootloader stage's ESP tree) with its configuration.
 *
 * The initrd the loader loads is ONE file: the initramfs stage's initrd.img,
 * zero-padded to a multiple of 4 bytes, followed by a newc cpio holding
 * /root.squashfs. The kernel unpacks both archives into the same rootfs, so
 * loaders that take a single initrd (elilo) work too. The initramfs init
 * mounts it for root=squashfs:/root.squashfs (see /work/notes/images.md). */
#ifndef TRILLIAN_LIVEBOOT_H
#define TRILLIAN_LIVEBOOT_H

#include <stdbool.h>

#include "fsimage.h"
#include "stage.h"

#define LIVE_ROOT_ARG "root=squashfs:/root.squashfs"

/* Field rows both kinds accept (copied into their tables). */
#define LIVE_FIELDS                                                                          \
    {"loader", F_ENUM, false, live_loader_choices, NULL,                                  \
     "EFI loader: grub (grub-mkimage; default on amd64) or elilo (from the bootloader "    \
     "stage's ESP tree; default on ia64)"},                                                 \
    {"cmdline", F_STRING, false, NULL, NULL,                                              \
     "kernel command line; default: the bootloader stage's, with root= replaced by "       \
     LIVE_ROOT_ARG},                                                                        \
    {"squashfs_comp", F_ENUM, false, live_comp_choices, "xz", "squashfs compressor"},     \
    {"squashfs_level", F_INT, false, NULL, "0",                                            \
     "squashfs compression level; 0 = the compressor's default (zstd 15, xz 6, gzip 9)"},  \
    {"kernel_modules", F_BOOL, false, NULL, "true",                                        \
     "add the kernel stage's modules to the root if it has none for that release"}

extern const char *const live_loader_choices[];
extern const char *const live_comp_choices[];

/* "grub" or "elilo": the setting, else the arch's default. */
const char *live_loader(const struct stage *st);
/* Plan-time checks and dependencies common to both kinds; returns 0 or -1. */
int live_declare(struct stage *st);
/* The same; HOST_GRUB false: the caller makes GRUB's image another way (the
 * recipe's grub packages stage), so the host's modules are not needed. */
int live_declare_common(struct stage *st, bool host_grub);

/* EFI removable-media name of the loader: "BOOTX64.EFI", "BOOTIA64.EFI". */
const char *live_efi_name(const char *arch);

/* Unpacks stage FROM's rootfs.tar (the userland's, or the iso kind's
 * live_from) into WORK/live-root and adds the kernel's modules (if set).
 * The caller may add files, then calls live_initrd. */
int live_tree(const struct stage_ctx *cx, const char *from, struct fs_tree *t);

/* Makes the squashfs of T and writes OUT = initrd.img + padding + cpio
 * (root.squashfs). *sq_bytes gets the squashfs size. Returns 0 or 1. */
int live_initrd(const struct stage_ctx *cx, const struct fs_tree *t, const char *out,
                long long *sq_bytes);

/* The kernel command line (new string). */
char *live_cmdline(const struct stage_ctx *cx);
/* live_cmdline with its squashfs root argument (LIVE_ROOT_ARG) replaced by
 * ROOT ("root=tftp:/root.ext4.gz"), or dropped with the space before it when
 * ROOT is NULL (the initrd is the root); as it is when the line has none (a
 * recipe's cmdline that names its own root). New string. */
char *live_cmdline_root(const struct stage_ctx *cx, const char *root);

/* Builds a GRUB EFI image at OUT with prefix PREFIX; EARLY_CFG (may be NULL)
 * is embedded. MODULES: extra to the common set. Returns 0 or 1. */
int live_grub_image(const struct stage_ctx *cx, const char *out, const char *prefix,
                    const char *early_cfg, const char *const *modules);
/* grub.cfg / elilo.conf text booting KERNEL and INITRD (paths as the loader
 * sees them) with CMDLINE. */
char *live_grub_cfg(const char *title, const char *kernel, const char *initrd,
                    const char *cmdline);
char *live_elilo_conf(const char *title, const char *kernel, const char *initrd,
                      const char *cmdline);
/* Copies the elilo loader (EFI/BOOT/BOOTIA64.EFI or the arch's name) from
 * the bootloader stage's esp/ tree to OUT. Returns 0 or 1. */
int live_copy_esp_loader(const struct stage_ctx *cx, const char *out);

#endif
