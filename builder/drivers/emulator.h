/* The table of emulators a boot check can run, one row each. A row says
 * where the binary comes from, which firmware it needs, and how each kind
 * of boot (disk image, netboot tree, ISO, bare kernel) becomes an argv. The
 * argv is written as templates, so adding an emulator is a new row in
 * emulator.c and no new code path.
 *
 * Template syntax: each template entry is one or more words separated by
 * single spaces; a word may contain {var} placeholders, substituted after
 * the split (so a value with spaces stays one argument). An entry starting
 * with '?' is dropped when any variable it names is unset or empty; in any
 * other entry an unset variable is an error. Variables: memory (MiB), accel,
 * firmware, vars (private copy of the firmware variable store), nvram (a
 * zeroed NVRAM file), image, snapshot (on: the emulator's writes to the disk
 * are dropped; off only for `trillian boot --persistent` and the private
 * copy a check with reboot_from = "image" boots first), tftp,
 * bootfile, kernel, initrd, append, work, http (the guestfwd command of a
 * check that serves HTTP to the guest: httpserve.h). */
#ifndef TRILLIAN_EMULATOR_H
#define TRILLIAN_EMULATOR_H

#include <stdbool.h>

#include "base/util.h"

enum boot_mode { BOOT_DISK, BOOT_NETBOOT, BOOT_ISO, BOOT_KERNEL, BOOT_MODE_COUNT };

extern const char *const boot_mode_names[]; /* "disk", "netboot", "iso", "kernel", NULL */
int boot_mode_parse(const char *name);     /* -1 if unknown */

struct emulator {
    const char *name;      /* value of the `emulator` setting */
    const char *arch;      /* recipe arch it boots ("amd64", "ia64") */
    const char *machine;   /* what `uname -m` prints in the guest */
    const char *program;   /* binary looked up on PATH */
    const char *env;       /* env var naming the binary (wins over all) */
    const char *install;   /* how to get it, for error messages */

    /* Firmware: found through firmware_env, then the recipe key
     * firmware_key, then firmware_default. Only looked for when the chosen
     * mode's templates name {firmware}. */
    const char *firmware_key;     /* "firmware" or "bootloader" */
    const char *firmware_env;
    const char *firmware_default;
    const char *firmware_install; /* how to get it */
    /* Variable store copied into the work directory as {vars} (OVMF). */
    const char *vars_default;
    /* > 0: a zeroed EFI NVRAM file of this many KiB made in the work
     * directory as {nvram} (qemu-system-ia64's itanium2-vpc machine, which
     * ignores any size but 64 KiB). */
    long nvram_kib;

    bool console_pty;     /* console on a pty (else a pipe pair) */
    bool exits_on_poweroff; /* else killed after the last step */
    const char *halt_regex; /* console line that means the guest is down */
    const char *disk_link;  /* name in work the disk must appear under */
    const char *default_accel;
    const char *default_append; /* kernel command line when unset */
    const char *kernel_names;   /* globs, comma-separated, for the kernel file */

    /* The `emulators` stage kind that builds it (NULL: none), and the
     * binary and firmware in that stage's output, relative. */
    const char *stage_kind;
    const char *stage_binary;
    const char *stage_firmware;

    /* netboot without firmware network boot: the check builds a stand-in
     * disk holding the tree's loader, its configuration, kernel and initrd
     * ({image}) and runs the emulator under `trillian __netboot-serve`,
     * which serves the tree with dnsmasq on a tap in a network namespace of
     * its own (netserve.h). */
    bool netboot_standin;

    /* A check's `http` (httpserve.h): the NIC on QEMU's user-mode network
     * whose guestfwd runs {http} for each connection to 10.0.2.100:80,
     * added to a disk, ISO or kernel boot; it replaces NIC_NONE where the
     * mode's templates have it. NULL: the emulator gives the guest no
     * network. */
    const char *const *http_nic;

    /* Drive options of a boot check's blank `disks` after file= and
     * format= (",if=virtio"), as the disk mode attaches its image: a reboot
     * from one (reboot_from) then finds it where the first boot's firmware
     * saw it. NULL: the machine's default controller. */
    const char *extra_disk_opts;
    const char *const *base;              /* always */
    const char *const *mode[BOOT_MODE_COUNT]; /* NULL: mode unsupported */
    const char *why_not[BOOT_MODE_COUNT];     /* why, for a NULL mode (or NULL) */
};

extern const struct emulator emulators[];
extern const size_t n_emulators;
extern const char *const emulator_names[]; /* NULL-terminated, for F_ENUM */

const struct emulator *emulator_find(const char *name);
/* Whether the templates for MODE (and the base) name {var}: 0 no, 1 only in
 * optional entries, 2 in a required entry. */
int emulator_needs(const struct emulator *e, enum boot_mode mode, const char *var);
bool emulator_uses(const struct emulator *e, enum boot_mode mode, const char *var);

/* Finds the binary: env override, then SETTING (recipe value or NULL), then
 * STAGE_DIR (output of the recipe's `emulators` stage that builds it, or
 * NULL), then PATH. Returns a new string, or NULL. *how says where it came
 * from. */
char *emulator_binary(const struct emulator *e, const char *setting, const char *stage_dir,
                      const char **how);
/* Same for the firmware: env, SETTING, STAGE_DIR, then the row's default. */
char *emulator_firmware(const struct emulator *e, const char *setting, const char *stage_dir,
                        const char **how);
/* Looks PROGRAM up on PATH (a name with '/' is checked as is). */
char *emulator_which(const char *program);

/* Template variables. */
struct emu_vars {
    struct strlist names, values;
};
void emu_vars_set(struct emu_vars *v, const char *name, const char *value);
const char *emu_vars_get(const struct emu_vars *v, const char *name);
void emu_vars_free(struct emu_vars *v);

/* The template entry that keeps a machine off the network. */
#define NIC_NONE "-nic none"

/* Appends BINARY, the base args, MODE's args (with {http} set: without
 * NIC_NONE, and the row's http_nic after them) and EXTRA to ARGV. Every
 * variable in VARS that is one of image, initrd, tftp, kernel must be used
 * by the chosen templates (else the emulator cannot boot what was asked).
 * Returns 0, or -1 with a message in *err (caller frees). */
int emulator_argv(const struct emulator *e, enum boot_mode mode, const char *binary,
                  const struct emu_vars *vars, const struct strlist *extra,
                  struct strlist *argv, char **err);
/* Expands one template list (exposed for tests). */
int emu_expand(const char *const *tmpl, const struct emu_vars *vars, struct strlist *argv,
               struct strlist *used, char **err);

#endif
