/* GRUB from the recipe's packages stage of kind "grub" (grub_build.c): its
 * bin/grub-mkimage and lib/grub/PLATFORM modules, for stages that make
 * their own GRUB image (the iso and netboot kinds, through liveboot.c), as
 * the ESP takes that stage's image. This is how ia64 gets GRUB: Debian has
 * no ia64-efi modules for the host's grub-mkimage. */
#ifndef TRILLIAN_GRUB_PKG_H
#define TRILLIAN_GRUB_PKG_H

#include "stage.h"

/* The name of the recipe's packages stage of kind grub, or NULL. */
const char *grub_pkg_stage(const struct stage *st);

/* With such a stage: depends on it (its grub-mkimage and modules) and
 * returns its name; without one, NULL (the caller uses the host's GRUB). */
const char *grub_pkg_declare(struct stage *st);

/* Its grub-mkimage and module directory for PLATFORM ("ia64-efi"), as new
 * strings; 0, or 1 after cx_fail naming what is missing. */
int grub_pkg_files(const struct stage_ctx *cx, const char *platform, char **mkimage,
                   char **moddir);

#endif
