/* The table of stage kinds. A new kind is a module in builder/stages/ and one
 * row here; the engine needs no other change. Keep rows one per line. */
#include <string.h>

#include "stage.h"

extern const struct stage_kind stage_command;
extern const struct stage_kind stage_initramfs, stage_esp_systemd_boot, stage_esp_grub,
    stage_esp_elilo;
extern const struct stage_kind stage_boot;
extern const struct stage_kind stage_debootstrap;
extern const struct stage_kind stage_disk;
extern const struct stage_kind stage_netboot;
extern const struct stage_kind stage_iso;
extern const struct stage_kind stage_kernel_package;
extern const struct stage_kind stage_kernel_source;
extern const struct stage_kind stage_headers_source;
extern const struct stage_kind stage_toolchain_build, stage_toolchain_external;
extern const struct stage_kind stage_payload, stage_rootfs_initramfs;
extern const struct stage_kind stage_ski_bundle, stage_qemu_bundle;
extern const struct stage_kind stage_glibc, stage_gcc_stage2;
extern const struct stage_kind stage_toolchain_host, stage_debian_libc, stage_busybox,
    stage_minimal_root;
extern const struct stage_kind stage_grub_build, stage_elilo_build;
extern const struct stage_kind stage_qemu_ia64, stage_ski;
extern const struct stage_kind stage_pkg_generic;
extern const struct stage_kind stage_apt_archive;

const struct stage_kind *const stage_kinds[] = {
    &stage_command,
    &stage_kernel_package,
    &stage_kernel_source,
    &stage_headers_source,
    &stage_disk,
    &stage_netboot,
    &stage_iso,
    &stage_toolchain_build, &stage_toolchain_external,
    &stage_debootstrap,
    &stage_boot,
    &stage_initramfs, &stage_esp_systemd_boot, &stage_esp_grub, &stage_esp_elilo,
    &stage_payload, &stage_rootfs_initramfs,
    &stage_ski_bundle, &stage_qemu_bundle,
    &stage_glibc, &stage_gcc_stage2,
    &stage_toolchain_host, &stage_debian_libc, &stage_busybox, &stage_minimal_root,
    &stage_grub_build, &stage_elilo_build,
    &stage_qemu_ia64, &stage_ski,
    &stage_pkg_generic,
    &stage_apt_archive,
    /* new kinds: one row each, above this line */
    NULL,
};

const struct stage_kind *stage_kind_find(const char *section, const char *name)
{
    for (size_t i = 0; stage_kinds[i]; i++)
        if (strcmp(stage_kinds[i]->section, section) == 0 &&
            strcmp(stage_kinds[i]->name, name) == 0)
            return stage_kinds[i];
    return NULL;
}

const struct stage_kind *stage_kind_named(const char *section_name)
{
    const char *slash = section_name ? strchr(section_name, '/') : NULL;
    if (!slash)
        return NULL;
    for (size_t i = 0; stage_kinds[i]; i++)
        if (strlen(stage_kinds[i]->section) == (size_t)(slash - section_name) &&
            !strncmp(stage_kinds[i]->section, section_name, (size_t)(slash - section_name)) &&
            !strcmp(stage_kinds[i]->name, slash + 1))
            return stage_kinds[i];
    return NULL;
}
