/* The configuration step of the userland kinds (root_config.c).
 *
 * A userland kind (debootstrap, minimal) is two stages: the engine adds
 * `userland-base`, the kind's package install or root assembly, keyed on the
 * package inputs only (stage_kind.base), and the `userland` stage itself,
 * which takes a copy of the base's rootfs.tar and applies the overlays, host
 * name, users and password, services and the other configuration files, so
 * that changing one of those re-runs this cheap step and not the install.
 * What differs between the kinds is the data below. */
#ifndef TRILLIAN_ROOT_CONFIG_H
#define TRILLIAN_ROOT_CONFIG_H

#include "stage.h"

/* Which /etc files the step writes (root_config.c has both sets). */
enum root_etc {
    ROOT_ETC_DEBIAN,  /* hostname, hosts, fstab, serial getty, networkd, modules */
    ROOT_ETC_BUSYBOX, /* passwd, group, shadow, hostname, hosts, fstab, inittab */
};

struct root_config {
    enum root_etc etc;
    /* overlay trees from the data directory: when `overlays` is unset, and
     * after the recipe's when `autologin` is on (NULL: none) */
    const char *default_overlay, *autologin_overlay;
    bool overlays_first;  /* the kind's files win over the overlays (else the overlays win) */
    bool shadow_edit;     /* root's hash goes into the base's /etc/shadow (else the
                             etc files write shadow whole) */
    bool foreign;         /* honours `foreign`: the first boot applies the files */
    bool no_xattrs;       /* rootfs.tar without extended attributes */
    const char *console_example; /* for the console message */
};

extern const struct root_config root_config_debian, root_config_minimal;

/* The step's declare() and run() for a kind described by RC. */
int root_config_declare(struct stage *st, const struct root_config *rc);
int root_config_run(struct stage_ctx *cx, const struct root_config *rc);

/* The base stage's output directory (the `userland-base` stage's). */
const char *root_config_base_dir(const struct stage_ctx *cx);

/* The suite a debootstrap userland installs (debootstrap.c): its `suite`,
 * or the suite of the apt-archive stage its `archive` names. */
const char *debootstrap_suite(const struct stage *st);

#endif
