/* bootloader, kinds "systemd-boot", "grub" and "elilo": the EFI
 * system partition as a FAT image, built without mounting or root by fat.h
 * (mkfs.vfat with a fixed volume id, mtools, every time stamp at
 * source_date_epoch, directories and files in sorted order), so two builds
 * are byte-identical. fsck.fat -n checks the result.
 *
 * It holds the loader at the removable-media fallback path (EFI/BOOT/
 * BOOTX64.EFI on amd64, BOOTIA64.EFI on ia64) and at its own path, the
 * loader's configuration with the recipe's label, timeout and kernel command
 * line, the kernel (the kernel stage's vmlinuz) and the initramfs (the
 * initramfs stage's initrd.img, if the recipe has one).
 *
 * The kernel command line is: root=ROOT, the recipe's `cmdline`,
 * console=CONSOLE, then the userland stage's `cmdline-extra` file if it has
 * one (the foreign first-boot path uses it). ROOT is the `root` setting, else
 * UUID=<the recipe's root_uuid>; a `cmdline` with its own root= needs neither.
 *
 * Each loader is a row of `loaders`: kind and arch, the fallback file name,
 * the loader's own path, where its binary comes from (the `loader` setting,
 * else the file of an installed Debian package, else that package fetched
 * with apt-get download, or else made by the row's build function: GRUB with
 * grub-mkimage) and the function writing its configuration (systemd-boot:
 * loader/loader.conf and loader/entries/ENTRY.conf; GRUB: EFI/BOOT/grub.cfg).
 * ia64 has rows for elilo (elilo.conf, kernel and initramfs beside the
 * binary in EFI/BOOT, which elilo reads from its own directory) and GRUB.
 * elilo's binary comes from the recipe's packages stage of kind "elilo"
 * (elilo_build.c: built from source) when it has one, else from the
 * archive's elilo package (debian-ports), or `loader`; GRUB's image
 * comes from the recipe's packages stage of kind "grub" when it has one
 * (grub_build.c builds GRUB from source; on any arch), else the host's
 * grub-mkimage and modules.
 *
 * Outputs: esp.img, the same tree loose in esp/ (netboot and ISO stages reuse
 * the loader and its configuration), cmdline (the final command line and a
 * newline), stage-manifest.json. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "formats/archive.h"
#include "formats/binfmt.h"
#include "drivers/debfetch.h"
#include "drivers/fat.h"
#include "drivers/liveboot.h"
#include "base/run_command.h"
#include "base/sha256.h"
#include "base/json_out.h"
#include "stage.h"
#include "sysroot.h"

/* The keys every loader kind takes; LOADER_HELP says where its binary
 * comes from by default. */
#define ESP_FIELDS(LOADER_HELP)                                                              \
    {"cmdline", F_STRING, false, NULL, "",                                                 \
     "kernel command line (root= and console= are added from `root` and `console`)"},     \
    {"console", F_STRING, false, NULL, "ttyS0,115200",                                    \
     "console= for the kernel command line (\"\" for none; default: the recipe's machine "  \
     "profile's, else ttyS0,115200)"},                                                      \
    {"root", F_STRING, false, NULL, NULL,                                                  \
     "root= for the kernel command line, e.g. \"UUID=…\" (default: UUID=root_uuid)"},     \
    {"label", F_STRING, false, NULL, NULL,                                                 \
     "boot menu title (default: \"Trillian NAME\", NAME the recipe's name)"},             \
    {"timeout", F_INT, false, NULL, "0", "seconds the boot menu waits (0: boot at once)"}, \
    {"entry", F_STRING, false, NULL, "trillian",                                           \
     "name of the boot entry (file name of its configuration)"},                           \
    {"loader", F_PATH, false, NULL, NULL, LOADER_HELP},                                    \
    {"size_mib", F_INT, false, NULL, NULL,                                                 \
     "size of esp.img in MiB (default: from the content, with margin)"},                   \
    {"volume_id", F_STRING, false, NULL, NULL,                                             \
     "FAT volume id, 8 hex digits (default: derived from the recipe's name)"},             \
    {"volume_label", F_STRING, false, NULL, "ESP", "FAT volume label (up to 11 characters)"}

static const struct field systemd_boot_fields[] = {
    ESP_FIELDS("systemd-boot's EFI binary (default: from Debian's systemd-boot-efi, "
               "installed or fetched with apt)"),
    {0},
};
static const struct field grub_fields[] = {
    ESP_FIELDS("a GRUB EFI image with prefix /EFI/BOOT (default: the image of the recipe's "
               "packages stage of kind grub, else made with grub-mkimage from the installed "
               "GRUB modules)"),
    {0},
};
static const struct field elilo_fields[] = {
    ESP_FIELDS("elilo's EFI binary for the recipe's arch (default: elilo.efi from the "
               "recipe's packages stage of kind elilo, built from source; without one, or "
               "with elilo_version set, from the archive's elilo package, fetched by a "
               "private, signature-checked apt)"),
    {"distro_dir", F_STRING, false, NULL, "trillian",
     "the distribution's directory EFI/NAME/ (Debian's is \"debian\"): elilo.efi, "
     "elilo.conf, the kernel and initramfs; EFI/BOOT/ has the fallback BOOTIA64.EFI with "
     "an elilo.conf naming them there"},
    /* where the elilo package comes from: the debootstrap userland's archive
     * (debian-ports for ia64) unless set */
    SR_ARCHIVE_FIELDS,
    {"elilo_version", F_STRING, false, NULL, NULL,
     "the elilo package version to take (default: the archive's candidate when the stage "
     "runs); a pin enters the cache key"},
    {0},
};

static const char *const tools[] = {"mkfs.vfat", "mmd", "mcopy", "fsck.fat", NULL};
static const char *const outputs[] = {"esp.img", "esp", "cmdline", "stage-manifest.json",
                                      NULL};

/* What goes into the loader's configuration. Paths are ESP-absolute. */
struct boot_entry {
    const char *title, *entry, *cmdline;
    const char *kernel, *initrd; /* initrd NULL: none */
    long long timeout;
};

struct loader_row {
    const char *kind;      /* the recipe's bootloader.kind */
    const char *arch;      /* the recipe's arch */
    const char *fallback;  /* removable-media path the firmware boots */
    const char *own_path;  /* the loader's own path, or NULL */
    const char *package;   /* Debian package holding the binary */
    const char *member;    /* the binary's path in it (and on an installed host) */
    const char *boot_dir;  /* directory of the kernel and initramfs */
    /* Writes the configuration below TREE; -1 with errno on failure. */
    int (*config)(const struct stage_ctx *cx, const char *tree, const struct boot_entry *e);
    /* Rows whose binary is made, not copied (package NULL): plan-time
     * inputs, and the run-time build into OUT (0, or 1 after cx_fail). */
    int (*declare)(struct stage *st);
    int (*build)(const struct stage_ctx *cx, const char *out);
    /* startup.nsh (ia64): the file whose presence marks this ESP among the
     * shell's fsN: mappings (NULL: no startup.nsh), and the loader's
     * arguments there. */
    const char *startup_marker, *startup_args;
    /* Non-NULL: the loader also goes in EFI/DISTRO/ under this name
     * (DISTRO the distro_dir setting), with the kernel and initramfs. */
    const char *dist_loader;
};

/* GRUB's script syntax and elilo's quoted append= cannot carry these in the
 * command line or title literally (systemd-boot's entries can). */
#define QUOTING_UNSAFE "\"'\\$`;{}"

static bool config_is_literal(const struct loader_row *row);

/* TEXT as the file REL of the ESP tree; 0, or 1 after cx_fail. */
static int put(const struct stage_ctx *cx, const char *tree, const char *rel, const char *text)
{
    return cx_write_in(cx, tree, rel, text, strlen(text), 0644);
}

/* systemd-boot: loader/loader.conf and loader/entries/ENTRY.conf (Boot Loader
 * Specification type #1 entries). The editor stays on: at the menu, 'e' adds
 * trillian.shell (or anything else) to the command line for one boot. */
static int systemd_boot_config(const struct stage_ctx *cx, const char *tree,
                               const struct boot_entry *e)
{
    char *loader = xasprintf("default %s.conf\ntimeout %lld\neditor yes\n", e->entry,
                             e->timeout);
    struct buf b = BUF_INIT;
    buf_printf(&b, "title %s\nlinux %s\n", e->title, e->kernel);
    if (e->initrd)
        buf_printf(&b, "initrd %s\n", e->initrd);
    buf_printf(&b, "options %s\n", e->cmdline);
    char *rel = xasprintf("loader/entries/%s.conf", e->entry);
    int rc = put(cx, tree, "loader/loader.conf", loader) || put(cx, tree, rel, b.p);
    free(rel);
    free(loader);
    buf_free(&b);
    return rc;
}

/* GRUB: a grub-mkimage image at the fallback path with prefix /EFI/BOOT on
 * the device it was loaded from, and EFI/BOOT/grub.cfg. */
#define GRUB_PREFIX "/EFI/BOOT"

static int grub_config(const struct stage_ctx *cx, const char *tree, const struct boot_entry *e)
{
    struct buf b = BUF_INIT;
    buf_printf(&b, "# Trillian (generated)\nset timeout=%lld\nset default=0\n\n", e->timeout);
    buf_printf(&b, "menuentry \"%s\" --id %s {\n\tlinux %s %s\n", e->title, e->entry, e->kernel,
               e->cmdline);
    if (e->initrd)
        buf_printf(&b, "\tinitrd %s\n", e->initrd);
    buf_puts(&b, "}\n");
    int rc = put(cx, tree, "EFI/BOOT/grub.cfg", b.p); /* GRUB_PREFIX, relative */
    buf_free(&b);
    return rc;
}

static const char *grub_format(const char *arch)
{
    return strcmp(arch, "ia64") == 0 ? "ia64-efi" : "x86_64-efi";
}

/* The recipe's packages stage of kind "grub" (grub_build.c), or NULL. With
 * one, and no `loader`, the ESP takes that stage's image (grubia64.efi,
 * grubx64.efi) instead of running the host's grub-mkimage: it is how ia64
 * gets GRUB. */
static const char *grub_stage(const struct stage *st, const char **prefix)
{
    size_t it = 0;
    const struct stage *g = st_peers(st, "packages", "grub", &it);
    if (g && prefix) /* its default is GRUB_PREFIX */
        *prefix = st_str(g, "prefix");
    return g ? st_name(g) : NULL;
}

static const char *grub_stage_image(const char *arch)
{
    return strcmp(arch, "ia64") == 0 ? "grubia64.efi" : "grubx64.efi";
}

static int grub_declare(struct stage *st)
{
    char *dir = xasprintf("/usr/lib/grub/%s", grub_format(st_arch(st)));
    int rc = 0;
    const char *prefix = NULL;
    const char *gs = st_str(st, "loader") ? NULL : grub_stage(st, &prefix);
    if (gs) {
        if (prefix && strcmp(prefix, GRUB_PREFIX) != 0)
            rc = st_error(st, "kind", "takes its GRUB image from the packages stage '%s', "
                          "whose prefix is %s: this ESP keeps grub.cfg in " GRUB_PREFIX "; "
                          "leave packages.%s.prefix out or set it to " GRUB_PREFIX, gs, prefix,
                          gs);
        st_need(st, gs);
    } else if (!st_str(st, "loader")) {
        if (is_dir(dir))
            st_input_tree(st, "grub-modules", dir);
        else
            rc = st_error(st, "kind", "grub needs GRUB's %s modules in %s, which are not "
                          "installed (%s), or set bootloader.loader to a GRUB EFI image with "
                          "prefix " GRUB_PREFIX, grub_format(st_arch(st)), dir,
                          strcmp(st_arch(st), "amd64") == 0
                              ? "apt-get install grub-efi-amd64-bin"
                              : "Debian's archive here has none for this arch: add "
                                "packages = ( { kind = \"grub\"; } ) to build it");
        st_tool(st, "grub-mkimage");
    }
    free(dir);
    return rc;
}

static int grub_build(const struct stage_ctx *cx, const char *out)
{
    const char *gs = grub_stage(cx->st, NULL);
    if (!gs)
        return live_grub_image(cx, out, GRUB_PREFIX, NULL, NULL);
    char *img = path_join(cx_dep(cx, gs), grub_stage_image(cx->arch));
    int rc = 0;
    if (copy_file(img, out) < 0)
        rc = cx_fail(cx, "cannot copy the GRUB image %s of packages stage '%s': %s", img, gs,
                     strerror(errno));
    else
        cx_log(cx, "GRUB image from packages stage '%s': %s", gs, img);
    free(img);
    return rc;
}

/* elilo (ia64): elilo reads the configuration beside its binary and opens
 * relative names from its own directory, absolute ones ("/EFI/...") from
 * the file system's root. EFI/DISTRO/elilo.conf names the kernel and
 * initramfs beside it; EFI/BOOT/elilo.conf, for the fallback loader, names
 * the same files by absolute path, so they are on the ESP once.
 * timeout is in tenths of a second; without a timeout, no prompt.
 * `relocatable`: load the kernel elsewhere when firmware holds its preferred
 * address (large-memory and cell machines). docs/ia64.md lists the options. */
static char *elilo_conf_text(const struct boot_entry *e, bool absolute)
{
    struct buf b = BUF_INIT;
    buf_puts(&b, "# Trillian (generated)\nrelocatable\n");
    if (e->timeout > 0)
        buf_printf(&b, "prompt\ntimeout=%lld\n", e->timeout * 10);
    buf_printf(&b, "default=%s\n\nimage=%s\n\tlabel=%s\n\tdescription=\"%s\"\n", e->entry,
               absolute ? e->kernel : path_basename(e->kernel), e->entry, e->title);
    if (e->initrd)
        buf_printf(&b, "\tinitrd=%s\n", absolute ? e->initrd : path_basename(e->initrd));
    buf_printf(&b, "\tappend=\"%s\"\n", e->cmdline);
    return buf_detach(&b);
}

static int elilo_config(const struct stage_ctx *cx, const char *tree, const struct boot_entry *e)
{
    char *dir = path_dirname(e->kernel + 1); /* EFI/DISTRO */
    char *own = xasprintf("%s/elilo.conf", dir);
    char *rel = elilo_conf_text(e, false), *abs = elilo_conf_text(e, true);
    int rc = put(cx, tree, own, rel) || put(cx, tree, "EFI/BOOT/elilo.conf", abs);
    free(dir);
    free(own);
    free(rel);
    free(abs);
    return rc;
}

/* elilo: `loader`, else Debian's elilo package (ia64: debian-ports) from
 * the archive (its own mirror/suite/keyring settings, else the debootstrap
 * userland's): the archive enters the key; the package is resolved and
 * fetched at run time through a private apt that checks the Release
 * signature and every hash (debfetch), like the other archive kinds. */
#define ELILO_PACKAGE "elilo"
#define ELILO_MEMBER "usr/lib/elilo/elilo.efi"

/* The recipe's packages stage of kind "elilo" (elilo_build.c) whose
 * elilo.efi this ESP takes, or NULL: with one, it is the default; `loader`
 * (a file) and `elilo_version` (the archive's package) still choose
 * otherwise. */
static const char *elilo_stage(const struct stage *st)
{
    size_t it = 0;
    const struct stage *e = st_peers(st, "packages", "elilo", &it);
    if (!e || st_str(st, "loader") || st_isset(st, "elilo_version"))
        return NULL;
    return st_name(e);
}

static int elilo_declare(struct stage *st)
{
    if (st_str(st, "loader"))
        return 0;
    const char *es = elilo_stage(st);
    if (es) {
        st_need_file(st, es, "elilo.efi");
        return 0;
    }
    struct sr_archive a;
    sr_archive_of(st, &a);
    sr_declare_archive(st, &a);
    strlist_free(&a.components);
    st_input_text(st, "elilo-package", ELILO_PACKAGE " " ELILO_MEMBER);
    const char *v = st_str(st, "elilo_version");
    if (v && (!v[0] || strpbrk(v, " \t\n/=")))
        return st_error(st, "elilo_version", "'%s' is not a Debian version (e.g. \"3.16-3\")", v);
    st_tool(st, "apt-get");
    return 0;
}

static int elilo_build(const struct stage_ctx *cx, const char *out)
{
    const char *es = elilo_stage(cx->st);
    if (es) {
        char *efi = cx_dep_file(cx, es, "elilo.efi");
        int rc = 0;
        if (!efi)
            rc = cx_fail(cx, "packages stage '%s' does not declare elilo.efi", es);
        else if (copy_file(efi, out) < 0)
            rc = cx_fail(cx, "cannot copy elilo.efi of packages stage '%s' (%s): %s", es, efi,
                         strerror(errno));
        else
            cx_log(cx, "elilo.efi from packages stage '%s' (built from source): %s", es, efi);
        free(efi);
        return rc;
    }
    struct sr_archive a;
    sr_archive_of(cx->st, &a);
    struct debfetch_archive da = {a.mirror, a.suite, a.keyring, cx->arch, &a.components, false,
                                  "bootloader"};
    struct debfetch_apt apt = {0};
    struct deb_pin pin = {0};
    char *aptdir = path_join(cx->work, "elilo-apt"), *dir = path_join(cx->work, "elilo-deb");
    char *deb = NULL, *err = NULL, *efi = NULL;
    int rc = 1;
    if (debfetch_apt_open(cx, &da, aptdir, &apt) != 0)
        goto out;
    const char *want = cx_str(cx, "elilo_version");
    if (debfetch_apt_resolve(&apt, ELILO_PACKAGE, want, &pin, &err) < 0) {
        cx_fail(cx, "bootloader.%s: %s %s has no %s elilo package%s%s (%s): set "
                "bootloader.loader to an elilo.efi, or bootloader.mirror/suite to an archive "
                "that has one (debian-ports for ia64)", want ? "elilo_version" : "loader",
                a.mirror, a.suite, cx->arch, want ? " version " : "", want ? want : "", err);
        goto out;
    }
    deb = debfetch_apt_get(cx, &apt, &pin, "bootloader.loader");
    if (!deb)
        goto out;
    char aerr[ARC_ERRLEN];
    if (mkdir_p(dir, 0755) < 0 ||
        arc_deb_extract(deb, dir, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL, aerr) < 0) {
        cx_fail(cx, "cannot unpack %s: %s (bootloader.loader: set it to an elilo.efi instead)",
                deb, aerr);
        goto out;
    }
    efi = path_join(dir, ELILO_MEMBER);
    char berr[BINFMT_ERRLEN];
    int m = binfmt_pe_machine(efi, berr);
    if (m != BINFMT_PE_IA64 && strcmp(cx->arch, "ia64") == 0) {
        cx_fail(cx, "bootloader.loader: %s %s from %s %s has %s, %s%s%s; set "
                "bootloader.loader to an ia64 elilo.efi, or bootloader.mirror to an archive "
                "with the ia64 package", pin.package, pin.version, a.mirror, a.suite,
                "/" ELILO_MEMBER, m < 0 ? berr : "an EFI binary for ",
                m < 0 ? "" : binfmt_pe_machine_name(m), m < 0 ? "" : ", not IA-64 (0x200)");
        goto out;
    }
    if (copy_file(efi, out) < 0) {
        cx_fail(cx, "cannot copy %s: %s", efi, strerror(errno));
        goto out;
    }
    cx_log(cx, "elilo.efi from %s %s (sha256 %s), %s %s", pin.package, pin.version, pin.sha256,
           a.mirror, a.suite);
    rc = 0;
out:
    debfetch_apt_free(&apt);
    deb_pin_free(&pin);
    strlist_free(&a.components);
    free(aptdir);
    free(dir);
    free(deb);
    free(err);
    free(efi);
    return rc;
}

static const struct loader_row loaders[] = {
    {"systemd-boot", "amd64", "EFI/BOOT/BOOTX64.EFI", "EFI/systemd/systemd-bootx64.efi",
     "systemd-boot-efi", "usr/lib/systemd/boot/efi/systemd-bootx64.efi", "trillian",
     systemd_boot_config, NULL, NULL, NULL, NULL, NULL},
    {"grub", "amd64", "EFI/BOOT/BOOTX64.EFI", NULL, NULL, NULL, "trillian", grub_config,
     grub_declare, grub_build, NULL, NULL, NULL},
    /* ia64: GRUB needs a packages stage of kind "grub" (Debian's archive
     * here has no ia64-efi modules) or a prebuilt image in `loader`; elilo
     * takes a packages stage of kind "elilo", else the archive's package. */
    {"grub", "ia64", "EFI/BOOT/BOOTIA64.EFI", NULL, NULL, NULL, "trillian", grub_config,
     grub_declare, grub_build, "EFI/BOOT/grub.cfg", "", NULL},
    {"elilo", "ia64", "EFI/BOOT/BOOTIA64.EFI", NULL, NULL, NULL, "EFI/BOOT", elilo_config,
     elilo_declare, elilo_build, "EFI/BOOT/elilo.conf", "-C \\EFI\\BOOT\\elilo.conf",
     "elilo.efi"},
    {0},
};

/* startup.nsh at the ESP root: Itanium firmware often falls back to the EFI
 * shell (a new disk has no boot entry yet, or the entry was lost with the
 * NVRAM), and the shell runs startup.nsh after a few seconds with nobody at
 * the keyboard. It looks for this ESP among fs0: to fs15: by the loader's
 * configuration file (another disk or the install CD may hold a
 * BOOTIA64.EFI too) and starts the loader there. EFI 1.10 shell syntax
 * (HP Integrity firmware has no `for %i run`), CRLF line ends. NULL if the
 * row has none. */
#define STARTUP_FS 16

static char *startup_nsh(const struct loader_row *row, const char *title)
{
    if (!row->startup_marker)
        return NULL;
    struct buf b = BUF_INIT;
    char *marker = xstrdup(row->startup_marker), *loader = xstrdup(row->fallback);
    for (char *c = marker; *c; c++)
        *c = *c == '/' ? '\\' : *c;
    for (char *c = loader; *c; c++)
        *c = *c == '/' ? '\\' : *c;
    buf_printf(&b, "# startup.nsh (generated by Trillian): the EFI shell runs it at start-up.\r\n"
               "# It boots %s from the first file system holding %s.\r\n"
               "@echo -off\r\n", title, row->startup_marker);
    for (int i = 0; i < STARTUP_FS; i++)
        buf_printf(&b, "if exist fs%d:\\%s then\r\n"
                   "  fs%d:\r\n"
                   "  echo \"Trillian: starting \\%s on fs%d:\"\r\n"
                   "  \\%s%s%s\r\n"
                   "  goto END\r\n"
                   "endif\r\n",
                   i, marker, i, loader, i, loader, row->startup_args[0] ? " " : "",
                   row->startup_args);
    buf_printf(&b, "echo \"Trillian: no file system holds \\%s; boot from the EFI Boot "
               "Manager\"\r\n:END\r\n", marker);
    free(marker);
    free(loader);
    return buf_detach(&b);
}

static bool config_is_literal(const struct loader_row *row)
{
    return row->config == systemd_boot_config;
}

static const struct loader_row *loader_row(const char *kind, const char *arch)
{
    for (size_t i = 0; loaders[i].kind; i++)
        if (strcmp(loaders[i].kind, kind) == 0 && strcmp(loaders[i].arch, arch) == 0)
            return &loaders[i];
    return NULL;
}

/* True if the command line has a word starting with PREFIX ("root="). */
static bool has_word(const char *cmdline, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = cmdline; p && *p;) {
        while (*p == ' ')
            p++;
        if (strncmp(p, prefix, n) == 0)
            return true;
        p = strchr(p, ' ');
    }
    return false;
}

/* The command line without cmdline-extra, with CONSOLE and the machine
 * profile's words MORE; NULL with *key and *why set on error. */
static char *cmdline_with(const struct stage *st, const char *console, const char *more,
                          const char **key, char **why)
{
    const char *cmdline = st_str(st, "cmdline");
    const char *root = st_str(st, "root");
    const char *uuid = st_root_uuid(st);
    struct buf b = BUF_INIT;
    *why = NULL;
    if (strpbrk(cmdline, "\n\r") || strpbrk(console, " \n\r") ||
        (root && strpbrk(root, " \n\r"))) {
        *key = strpbrk(cmdline, "\n\r") ? "cmdline" : strpbrk(console, " \n\r") ? "console"
                                                                                 : "root";
        *why = xstrdup("must be one line without newlines (console and root: one word)");
        return NULL;
    }
    if (root && has_word(cmdline, "root=")) {
        *key = "root";
        *why = xstrdup("is set and bootloader.cmdline has its own root=: keep only one");
        return NULL;
    }
    if (!root && !has_word(cmdline, "root=")) {
        if (!uuid) {
            *key = "root";
            *why = xstrdup("the kernel needs a root file system: set bootloader.root = "
                           "\"UUID=…\", or the recipe's top-level root_uuid");
            return NULL;
        }
        buf_printf(&b, "root=UUID=%s", uuid);
    } else if (root) {
        buf_printf(&b, "root=%s", root);
    }
    if (cmdline[0])
        buf_printf(&b, "%s%s", b.n ? " " : "", cmdline);
    if (more[0])
        buf_printf(&b, "%s%s", b.n ? " " : "", more);
    if (console[0])
        buf_printf(&b, "%sconsole=%s", b.n ? " " : "", console);
    return buf_detach(&b);
}

/* cmdline_with the console: the `console` setting, else the recipe's
 * machine profile's (machine.h), else the field's default. */
static char *base_cmdline(const struct stage *st, const char **key, char **why)
{
    const struct machine *m = st_isset(st, "console") ? NULL : st_machine(st);
    return cmdline_with(st, m ? m->console : st_str(st, "console"), m ? m->cmdline : "", key,
                        why);
}

/* 8 hex digits: the setting, else from sha256("trillian-esp:" NAME). */
static char *volume_id(const struct stage *st)
{
    const char *v = st_str(st, "volume_id");
    if (v)
        return xstrdup(v);
    const char *name = st_recipe_name(st);
    char *text = xasprintf("trillian-esp:%s", name ? name : "");
    char hex[65];
    sha256_hex(text, strlen(text), hex);
    free(text);
    return xstrndup(hex, 8);
}

static char *host_loader(const struct loader_row *row)
{
    if (!row->member)
        return NULL;
    char *p = xasprintf("/%s", row->member);
    if (access(p, R_OK) == 0)
        return p;
    free(p);
    return NULL;
}


/* The title: the `label` setting, else "Trillian NAME". */
static char *title_of(const struct stage *st)
{
    const char *l = st_str(st, "label");
    const char *name = st_recipe_name(st);
    return l ? xstrdup(l) : xasprintf("Trillian %s", name ? name : "");
}

static bool all_hex8(const char *s)
{
    if (strlen(s) != 8)
        return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return false;
    return true;
}

/* A file or directory name the ESP's FAT and the loaders' configs take
 * as it is: letters, digits, '.', '_', '-', not empty. */
static bool is_name(const char *s)
{
    return s[0] && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789._-") == strlen(s);
}

static int declare_esp(struct stage *st)
{
    const char *kind = st_kind(st);
    const struct loader_row *row = loader_row(kind, st_arch(st));
    if (!row) {
        struct buf kinds = BUF_INIT;
        for (size_t i = 0; loaders[i].kind; i++)
            if (strcmp(loaders[i].arch, st_arch(st)) == 0)
                buf_printf(&kinds, "%s\"%s\"", kinds.n ? ", " : "", loaders[i].kind);
        st_error(st, "kind", "\"%s\" has no loader for arch %s yet (kinds for %s: %s)", kind,
                 st_arch(st), st_arch(st), kinds.n ? kinds.p : "none yet");
        buf_free(&kinds);
        return -1;
    }
    st_need_file(st, "kernel", "vmlinuz");
    if (st_want(st, "initramfs"))
        st_need_file(st, "initramfs", "initrd.img");
    st_want(st, "userland"); /* its cmdline-extra, if it writes one */

    int bad = 0;
    if (st_int(st, "timeout", 0) < 0 || st_int(st, "timeout", 0) > 3600)
        bad |= st_error(st, "timeout", "must be 0 to 3600 seconds");
    if (row->dist_loader) {
        const char *d = st_str(st, "distro_dir");
        if (!is_name(d) || strcasecmp(d, "BOOT") == 0 || strcmp(d, ".") == 0 ||
            strcmp(d, "..") == 0)
            bad |= st_error(st, "distro_dir", "'%s' must be one directory name of letters, "
                            "digits, '.', '_' and '-', not BOOT (e.g. \"debian\")", d);
    }
    const char *entry = st_str(st, "entry");
    if (!is_name(entry))
        bad |= st_error(st, "entry", "'%s' must be a file name of letters, digits, '.', '_' "
                        "and '-'", entry);
    char *title = title_of(st);
    if (strpbrk(title, "\n\r"))
        bad |= st_error(st, "label", "must be one line");
    if (!config_is_literal(row) && strpbrk(title, QUOTING_UNSAFE))
        bad |= st_error(st, "label", "must not contain any of %s for %s", QUOTING_UNSAFE, kind);
    const char *vl = st_str(st, "volume_label");
    if (strlen(vl) > 11 || strpbrk(vl, "\n\r\"*/:<>?\\|"))
        bad |= st_error(st, "volume_label", "'%s' must be at most 11 characters, without "
                        "\"*/:<>?\\|", vl);
    const char *vid = st_str(st, "volume_id");
    if (vid && !all_hex8(vid))
        bad |= st_error(st, "volume_id", "'%s' must be 8 hex digits, like \"7a3c09e1\"", vid);
    if (st_isset(st, "size_mib") && (st_int(st, "size_mib", 0) < 1 ||
                                       st_int(st, "size_mib", 0) > 65536))
        bad |= st_error(st, "size_mib", "must be 1 to 65536 (MiB), or left out to size the "
                        "ESP from its content");
    const char *key;
    char *why;
    char *cmdline = base_cmdline(st, &key, &why);
    if (!cmdline) {
        bad |= st_error(st, key, "%s", why);
        free(why);
    } else {
        if (!config_is_literal(row) && strpbrk(cmdline, QUOTING_UNSAFE))
            bad |= st_error(st, "cmdline", "'%s' must not contain any of %s for %s (its "
                            "configuration syntax would change them)", cmdline,
                            QUOTING_UNSAFE, kind);
        st_input_text(st, "cmdline", cmdline); /* covers the recipe's root_uuid */
    }
    st_input_text(st, "title", title);
    char *nsh = startup_nsh(row, title); /* ia64 only: other keys stay as they were */
    if (nsh)
        st_input_text(st, "startup.nsh", nsh);
    free(nsh);
    char *v = volume_id(st);
    st_input_text(st, "volume-id", v);
    free(v);
    free(cmdline);
    free(title);
    if (bad)
        return -1;

    if (row->declare)
        return row->declare(st);
    if (!st_str(st, "loader")) {
        char *host = host_loader(row);
        if (host) {
            st_input_file(st, "loader (installed)", host);
            free(host);
        } else {
            struct deb_pin pin;
            char *err;
            if (debfetch_resolve(row->package, st_arch(st), NULL, &pin, &err) < 0) {
                st_error(st, "loader", "the default %s binary (Debian's %s): %s", kind,
                         row->package, err);
                free(err);
                return -1;
            }
            st_input_text(st, "loader-package", pin.package);
            st_input_text(st, "loader-version", pin.version);
            st_input_text(st, "loader-sha256", pin.sha256);
            deb_pin_free(&pin);
            st_tool(st, "apt-get");
        }
    }
    return 0;
}

/* ---- run -------------------------------------------------------------------- */

/* The PE machine an EFI loader must have for each arch: an x64 loader on an
 * Itanium ESP would only fail in the firmware, with no message. */
static const struct {
    const char *arch;
    int machine;
} loader_machines[] = {
    {"amd64", BINFMT_PE_AMD64},
    {"ia64", BINFMT_PE_IA64},
};

/* 0, or 1 after cx_fail when LOADER is not an EFI binary for the arch. */
static int check_loader_machine(const struct stage_ctx *cx, const char *loader)
{
    for (size_t i = 0; i < ARRAY_LEN(loader_machines); i++) {
        if (strcmp(loader_machines[i].arch, cx->arch) != 0)
            continue;
        char err[BINFMT_ERRLEN];
        int m = binfmt_pe_machine(loader, err);
        if (m < 0)
            return cx_fail(cx, "bootloader.loader: %s (expected an EFI binary for %s)", err,
                           cx->arch);
        if (m != loader_machines[i].machine)
            return cx_fail(cx, "bootloader.loader: %s is an EFI binary for %s (machine 0x%x), "
                           "not %s (0x%x); give a loader built for %s", loader,
                           binfmt_pe_machine_name(m), (unsigned)m,
                           binfmt_pe_machine_name(loader_machines[i].machine),
                           (unsigned)loader_machines[i].machine, cx->arch);
    }
    return 0;
}

/* The ELF machine the kernel must have, where the arch's vmlinuz is an ELF
 * file (ia64: vmlinux, gzipped, which elilo and GRUB unpack). amd64's
 * bzImage is not ELF and is not checked here. */
static const struct {
    const char *arch;
    int machine;
} kernel_machines[] = {
    {"ia64", BINFMT_ELF_IA64},
};

/* The first bytes of a possibly compressed file, decompressed into OUT
 * (libarchive's raw format reads gzip, xz, zstd...). 0 or -1. */
static int file_head(const char *path, const char *out)
{
    struct archive *a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_raw(a);
    struct archive_entry *ae;
    char buf[512];
    la_ssize_t n = -1;
    if (archive_read_open_filename(a, path, 16384) == ARCHIVE_OK &&
        archive_read_next_header(a, &ae) == ARCHIVE_OK)
        n = archive_read_data(a, buf, sizeof buf);
    archive_read_free(a);
    return n < 0 ? -1 : write_file_atomic(out, buf, (size_t)n, 0644);
}

/* 0, or 1 after cx_fail when the kernel is not an ELF file for the arch: an
 * x86-64 or truncated kernel on an Itanium ESP fails only in elilo. */
static int check_kernel_machine(const struct stage_ctx *cx, const char *kernel)
{
    for (size_t i = 0; i < ARRAY_LEN(kernel_machines); i++) {
        if (strcmp(kernel_machines[i].arch, cx->arch) != 0)
            continue;
        char *head = path_join(cx->work, "kernel-head");
        char err[BINFMT_ERRLEN];
        int readable = file_head(kernel, head) == 0;
        int m = readable ? binfmt_elf_machine(head, err) : -1;
        unlink(head);
        free(head);
        if (m < 0)
            return cx_fail(cx, "the kernel stage's %s is not a (compressed) ELF kernel for %s: "
                           "%s; build the kernel for %s", kernel, cx->arch,
                           readable ? "no ELF header" : "unreadable", cx->arch);
        if (m != kernel_machines[i].machine)
            return cx_fail(cx, "the kernel stage's %s is an ELF kernel for %s (machine %d), not "
                           "%s (%d); build the kernel for %s (kernel.kind and its toolchain)",
                           kernel, binfmt_elf_machine_name(m), m,
                           binfmt_elf_machine_name(kernel_machines[i].machine),
                           kernel_machines[i].machine, cx->arch);
    }
    return 0;
}

/* Gets the loader binary: the setting, the installed package's file, or
 * the package fetched with apt. *origin says which. New path or NULL. */
static char *get_loader(const struct stage_ctx *cx, const struct loader_row *row, char **origin)
{
    char *p = cx_path(cx, "loader");
    if (p) {
        *origin = xstrdup(p);
        return p;
    }
    if (row->build) {
        p = path_join(cx->work, "loader.efi");
        if (row->build(cx, p)) {
            free(p);
            return NULL;
        }
        *origin = xasprintf("built by Trillian for %s", row->kind);
        return p;
    }
    if (!row->package) {
        cx_fail(cx, "bootloader.loader: %s on %s needs it set to the loader's EFI binary",
                row->kind, cx->arch);
        return NULL;
    }
    p = host_loader(row);
    if (p) {
        const char *argv[] = {"dpkg-query", "-W", "-f", "${Version}", row->package, NULL};
        char *ver = NULL;
        if (cx_capture(cx, argv, &ver) != 0 || !ver[0]) {
            free(ver);
            ver = xstrdup("unknown version");
        }
        *origin = xasprintf("%s %s (installed: %s)", row->package, ver, p);
        free(ver);
        return p;
    }
    struct deb_pin pin;
    char *err;
    if (debfetch_resolve(row->package, cx->arch, NULL, &pin, &err) < 0) {
        cx_fail(cx, "bootloader.loader: the default %s binary (Debian's %s): %s", row->kind,
                row->package, err);
        free(err);
        return NULL;
    }
    char *deb = debfetch_get(cx, &pin, "bootloader.loader");
    char *dir = path_join(cx->work, "loader-deb");
    char aerr[ARC_ERRLEN];
    if (deb) {
        mkdir_p(dir, 0755);
        if (arc_deb_extract(deb, dir, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL, aerr) < 0) {
            cx_fail(cx, "cannot unpack %s: %s (bootloader.loader: set it to the EFI binary "
                    "instead)", deb, aerr);
        } else {
            p = path_join(dir, row->member);
            if (!path_exists(p)) {
                cx_fail(cx, "%s %s has no %s (bootloader.loader: set it to the EFI binary)",
                        pin.package, pin.version, row->member);
                free(p);
                p = NULL;
            } else {
                *origin = xasprintf("%s %s (sha256 %s)", pin.package, pin.version, pin.sha256);
            }
        }
    }
    free(dir);
    free(deb);
    deb_pin_free(&pin);
    return p;
}

static int copy_in(const struct stage_ctx *cx, const char *src, const char *tree,
                   const char *rel, const char *what)
{
    char *dst = path_join(tree, rel), *dir = path_dirname(dst);
    int rc = 0;
    if (mkdir_p(dir, 0755) < 0 || copy_file(src, dst) < 0 || chmod(dst, 0644) < 0)
        rc = cx_fail(cx, "cannot copy %s %s into the ESP tree: %s", what, src,
                     strerror(errno));
    free(dir);
    free(dst);
    return rc;
}

/* Trims cmdline-extra to one line of words. New string ("" if none). */
static char *read_extra(const struct stage_ctx *cx)
{
    const char *u = cx_dep(cx, "userland");
    if (!u)
        return xstrdup("");
    char *p = path_join(u, "cmdline-extra"), *text = NULL;
    if (read_file(p, &text, NULL) < 0) {
        free(p);
        return xstrdup("");
    }
    free(p);
    for (char *c = text; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    struct buf b = BUF_INIT;
    char *save = NULL;
    for (char *w = strtok_r(text, " ", &save); w; w = strtok_r(NULL, " ", &save))
        buf_printf(&b, "%s%s", b.n ? " " : "", w);
    free(text);
    return buf_detach(&b);
}

#define MIB (1024LL * 1024)

static int run_esp(struct stage_ctx *cx)
{
    const char *kind = cx_kind(cx);
    const struct loader_row *row = loader_row(kind, cx->arch);
    if (!row)
        return cx_fail(cx, "bootloader.kind: no %s loader for arch %s", kind, cx->arch);
    const char *key;
    char *why = NULL;
    char *base = base_cmdline(cx->st, &key, &why);
    if (!base) {
        int rc = cx_fail(cx, "bootloader.%s %s", key, why);
        free(why);
        return rc;
    }
    char *extra = read_extra(cx);
    if (!config_is_literal(row) && strpbrk(extra, QUOTING_UNSAFE)) {
        int rc = cx_fail(cx, "the userland stage's cmdline-extra '%s' has one of %s, which %s "
                         "cannot carry; change what writes it", extra, QUOTING_UNSAFE, kind);
        free(extra);
        free(base);
        return rc;
    }
    char *cmdline = xasprintf("%s%s%s", base, base[0] && extra[0] ? " " : "", extra);
    char *title = title_of(cx->st);
    char *vid = volume_id(cx->st);
    char *tree = path_join(cx->work, "esp");
    char *img = path_join(cx->work, "esp.img");
    char *origin = NULL, *loader = NULL, *own = NULL, *boot_dir = NULL;
    struct strlist files = {0};
    int rc = 1;
    rm_rf(tree);
    mkdir_p(tree, 0755);

    loader = get_loader(cx, row, &origin);
    if (!loader || check_loader_machine(cx, loader))
        goto out;
    if (row->dist_loader) {
        const char *d = cx_str(cx, "distro_dir");
        own = xasprintf("EFI/%s/%s", d, row->dist_loader);
        boot_dir = xasprintf("EFI/%s", d);
    } else {
        own = row->own_path ? xstrdup(row->own_path) : NULL;
        boot_dir = xstrdup(row->boot_dir);
    }
    if (copy_in(cx, loader, tree, row->fallback, "the loader") ||
        (own && copy_in(cx, loader, tree, own, "the loader")))
        goto out;

    char *kernel = cx_dep_file(cx, "kernel", "vmlinuz");
    char *kdst = xasprintf("%s/vmlinuz", boot_dir);
    int e = !path_exists(kernel) ? cx_fail(cx, "the kernel stage's output has no vmlinuz (%s)",
                                           kernel)
            : check_kernel_machine(cx, kernel) ? 1
                                               : copy_in(cx, kernel, tree, kdst, "the kernel");
    free(kernel);
    char *kpath = xasprintf("/%s", kdst);
    free(kdst);
    char *ipath = NULL;
    const char *idir = cx_dep(cx, "initramfs");
    if (!e && idir) {
        char *initrd = cx_dep_file(cx, "initramfs", "initrd.img");
        char *idst = xasprintf("%s/initrd.img", boot_dir);
        e = path_exists(initrd) ? copy_in(cx, initrd, tree, idst, "the initramfs")
                                : cx_fail(cx, "the initramfs stage's output has no initrd.img");
        ipath = xasprintf("/%s", idst);
        free(idst);
        free(initrd);
    }
    if (!e) {
        struct boot_entry be = {.title = title, .entry = cx_str(cx, "entry"),
                                .cmdline = cmdline, .kernel = kpath, .initrd = ipath,
                                .timeout = cx_int(cx, "timeout", 0)};
        e = row->config(cx, tree, &be);
    }
    char *nsh = e ? NULL : startup_nsh(row, title);
    if (nsh)
        e = put(cx, tree, "startup.nsh", nsh);
    free(nsh);
    free(kpath);
    free(ipath);
    if (e)
        goto out;

    if (list_tree(tree, &files) < 0) {
        cx_fail(cx, "cannot list %s: %s", tree, strerror(errno));
        goto out;
    }
    long long raw;
    /* the content, the root directory, the FATs (2 x 2 bytes per 512) */
    long long sum = fat_content_bytes(tree, &raw) + 4096;
    long long need = sum + sum / 64 + 64 * 1024;
    long long need_mib = (need + MIB - 1) / MIB;
    long long mib;
    if (st_isset(cx->st, "size_mib")) {
        mib = cx_int(cx, "size_mib", 0);
        if (mib < need_mib) {
            cx_fail(cx, "bootloader.size_mib = %lld is too small: the ESP's content takes "
                    "%lld MiB (%.1f MiB in %zu files); set size_mib to at least %lld, or "
                    "leave it out to size the ESP from its content", mib, need_mib,
                    (double)raw / MIB, files.n, need_mib);
            goto out;
        }
    } else {
        /* a quarter more than the content, at least 8 MiB */
        mib = need_mib + need_mib / 4 + 1;
        if (mib < 8)
            mib = 8;
    }
    struct fat_spec fs = {.bytes = mib * MIB, .label = cx_str(cx, "volume_label"), .volid = vid,
                          .what = "the ESP",
                          .size_hint = "bootloader.size_mib sets its size: raise it, or leave it "
                                       "out to size the ESP from its content"};
    fat_geometry(mib, &fs.bits, &fs.cluster_sectors);
    int fat = fs.bits;
    if (fat_image(cx, img, &fs, tree, NULL))
        goto out;

    /* Everything is ready: move it into the output. */
    char *oimg = path_join(cx->out, "esp.img"), *otree = path_join(cx->out, "esp");
    e = rename(img, oimg) < 0 || rename(tree, otree) < 0;
    if (e)
        cx_fail(cx, "cannot move the ESP into %s: %s", cx->out, strerror(errno));
    free(oimg);
    free(otree);
    if (e)
        goto out;
    char *line = xasprintf("%s\n", cmdline);
    e = cx_write(cx, "cmdline", line, strlen(line));
    free(line);
    if (e)
        goto out;
    json_object *m = json_object_new_object();
    json_add_str(m, "loader", kind);
    json_add_str(m, "loader_from", origin);
    json_add_str(m, "fallback", row->fallback);
    if (own)
        json_add_str(m, "loader_path", own);
    json_add_str(m, "cmdline", cmdline);
    json_add_str(m, "title", title);
    json_object_object_add(m, "size_mib", json_object_new_int64(mib));
    json_object_object_add(m, "fat", json_object_new_int(fat));
    json_add_str(m, "volume_id", vid);
    json_object_object_add(m, "files", json_strlist(&files));
    if (cx_write_manifest(cx, m))
        goto out;
    cx_log(cx, "esp.img: %lld MiB FAT%d, %zu files (%.1f MiB), loader %s; cmdline: %s", mib,
           fat, files.n, (double)raw / MIB, origin, cmdline);
    rc = 0;
out:
    if (rc) {
        rm_rf(tree);
        unlink(img);
    }
    free(base);
    free(extra);
    free(cmdline);
    free(title);
    free(vid);
    free(tree);
    free(img);
    free(origin);
    free(loader);
    free(own);
    free(boot_dir);
    strlist_free(&files);
    return rc;
}


const struct stage_kind stage_esp_systemd_boot = {
    .name = "systemd-boot",
    .section = "bootloader",
    .version = 1,
    .summary = "an EFI system partition image (FAT) with systemd-boot, the kernel and initramfs",
    .fields = systemd_boot_fields,
    .tools = tools,
    .outputs = outputs,
    .declare = declare_esp,
    .run = run_esp,
};


const struct stage_kind stage_esp_grub = {
    .name = "grub",
    .section = "bootloader",
    .version = 1,
    .summary = "an EFI system partition image (FAT) with GRUB (grub-mkimage), the kernel and "
               "initramfs",
    .fields = grub_fields,
    .tools = tools,
    .outputs = outputs,
    .declare = declare_esp,
    .run = run_esp,
};


const struct stage_kind stage_esp_elilo = {
    .name = "elilo",
    .section = "bootloader",
    .version = 3, /* 2: elilo.conf says relocatable; 3: EFI/distro_dir/ */
    .summary = "an EFI system partition image (FAT) with elilo (ia64), the kernel and initramfs",
    .fields = elilo_fields,
    .tools = tools,
    .outputs = outputs,
    .declare = declare_esp,
    .run = run_esp,
};
