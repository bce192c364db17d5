/* images kind "iso": a UEFI-bootable live ISO 9660 image (xorriso). The El
 * Torito EFI boot image is a small FAT file system (fat.h)
 * holding the loader: GRUB (grub-mkimage with iso9660 and an embedded
 * configuration that finds the ISO by a marker file and loads
 * /boot/grub/grub.cfg), or elilo from the bootloader stage's ESP tree with
 * kernel, initrd and elilo.conf beside it (elilo reads only its own FAT).
 * The root filesystem is squashfs inside the initrd (liveboot.h). With
 * `installer` the live root also gets /usr/sbin/trillian-install, the ESP
 * image and install.conf, so the live system can install itself to a disk.
 * Hybrid: the El Torito EFI image is also the EFI system partition of a GPT
 * (xorriso -efi-boot-part --efi-boot-image, with a protective MBR), so the
 * same file boots as a CD and as a disk (a USB stick).
 * Reproducible: SOURCE_DATE_EPOCH for xorriso (volume dates and UUID), every
 * file's mtime set to it, Rock Ridge with normalized owners (-r). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drivers/fat.h"
#include "formats/gpt.h"
#include "drivers/liveboot.h"
#include "drivers/live_cpio.h"
#include "base/json_out.h"
#include "stage.h"

#define MIB (1024LL * 1024)

static const char *const live_root_choices[] = {"squashfs", "initramfs", NULL};
static const char *const installer_root_choices[] = {"copy", "image", NULL};

static const struct field iso_fields[] = {
    LIVE_FIELDS,
    {"title", F_STRING, false, NULL, NULL, "boot menu title (default: \"Trillian NAME (live)\")"},
    {"volume_id", F_STRING, false, NULL, "TRILLIAN", "ISO 9660 volume id (up to 32 of A-Z 0-9 _)"},
    {"installer", F_BOOL, false, NULL, "true",
     "put trillian-install, the ESP image and install.conf into the live root"},
    {"live_root", F_ENUM, false, live_root_choices, NULL,
     "squashfs (default): the root as squashfs appended to the initramfs stage's initrd (the kernel "
     "needs squashfs and the initramfs mounts it); initramfs: the whole live root is the "
     "initrd (gzip cpio; no initramfs stage, no squashfs in the kernel: the ia64 default's)"},
    {"installer_root", F_ENUM, false, installer_root_choices, NULL,
     "copy (default): trillian-install partitions with sfdisk and copies the running root with "
     "mke2fs (the root needs util-linux and e2fsprogs); image: the stage makes the installed "
     "root's ext4 image (root_uuid) now and the installer writes the GPT and that image with "
     "dd (a busybox root is enough)"},
    {"install_root_mib", F_INT, false, NULL, NULL,
     "installer_root = \"image\": the installed root filesystem's size in MiB (0: the "
     "content and half as much again, at least 64 MiB free)"},
    {"live_from", F_STRING, false, NULL, NULL,
     "the stage whose rootfs.tar is the live system (default: the userland, which is then also "
     "what the installer installs): a second root in the recipe's `stages` list (e.g. kind "
     "\"minimal\", busybox) boots the ISO, and the installer writes the userland (a Debian "
     "root, say) as an image; needs installer_root = \"image\" when the installer is on"},
    {"autoinstall", F_STRING, false, NULL, NULL,
     "a disk (e.g. \"/dev/sda\"): the boot menu's default entry installs onto it unattended "
     "(trillian.install=DISK trillian.install.after=poweroff on the kernel command line) and "
     "powers off; a second entry boots the live system only"},
    {0},
};

static const char *const iso_outputs[] = {"stage-manifest.json", NULL};

static char *installer_path(void) { return trillian_data_path("firmware/installer/trillian-install"); }

static int iso_declare(struct stage *st)
{
    int bad = live_declare(st);
    const char *vol = st_str(st, "volume_id");
    if (vol) {
        bool ok = strlen(vol) >= 1 && strlen(vol) <= 32;
        for (const char *p = vol; *p && ok; p++)
            ok = (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_';
        if (!ok)
            bad |= st_error(st, "volume_id", "'%s' must be 1 to 32 characters of A-Z, 0-9 "
                            "and _", vol);
    }
    const char *title = st_str(st, "title");
    if (title && strpbrk(title, "\"\n\r"))
        bad |= st_error(st, "title", "must be one line without double quotes");
    const char *auto_disk = st_str(st, "autoinstall");
    if (auto_disk && (strncmp(auto_disk, "/dev/", 5) != 0 || strpbrk(auto_disk, " \t\n\r\"'")))
        bad |= st_error(st, "autoinstall", "'%s' is not a disk's device path (e.g. \"/dev/sda\")",
                        auto_disk);
    if (auto_disk && !st_bool(st, "installer", true))
        bad |= st_error(st, "autoinstall", "needs the installer (installer = true)");
    bool image_mode = st_str(st, "installer_root") && !strcmp(st_str(st, "installer_root"), "image");
    if (!image_mode && st_isset(st, "install_root_mib"))
        bad |= st_error(st, "install_root_mib", "only installer_root = \"image\" uses it");
    if (st_isset(st, "install_root_mib") && st_int(st, "install_root_mib", 0) < 0)
        bad |= st_error(st, "install_root_mib", "must be 0 (from the content) or a size in MiB");
    const char *from = st_str(st, "live_from");
    if (from && strcmp(from, "userland") != 0) {
        st_need_file(st, from, "rootfs.tar");
        if (st_bool(st, "installer", true) && !image_mode)
            bad |= st_error(st, "live_from", "the installer's copy mode (installer_root = "
                            "\"copy\", the default) installs the running live system, stage "
                            "'%s', not the userland: set installer_root = \"image\" to install "
                            "the userland, or installer = false", from);
    }
    if (image_mode) {
        st_tool(st, "mke2fs");
        st_tool(st, "debugfs");
        st_tool(st, "gzip");
    }
    if (st_bool(st, "installer", true)) {
        st_need_file(st, "bootloader", "esp.img"); /* the ESP image the installer writes */
        st_need_file(st, "bootloader", "cmdline"); /* its root=PARTUUID=, if any */
        char *inst = installer_path();
        st_input_file(st, "trillian-install", inst);
        free(inst);
        const char *ru = st_root_uuid(st);
        if (!ru || !guid_valid(ru))
            bad |= st_error(st, "installer", "the installer needs root_uuid (a UUID) at the "
                            "top of the recipe: it makes the installed root with it");
        else
            st_input_text(st, "root_uuid", ru);
    }
    st_tool(st, "xorriso");
    st_tool(st, "mkfs.vfat");
    st_tool(st, "mcopy");
    char *out = xasprintf("%s.iso", st_name(st));
    st_output(st, out);
    free(out);
    return bad ? -1 : 0;
}

/* Every mtime below DIR (and DIR) becomes T, so the ISO does not depend on
 * when the files were written. */
static int set_times(const char *dir, long long t, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *p = path_join(dir, de->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode) && depth < 64)
            rc |= set_times(p, t, depth + 1);
        struct timespec ts[2] = {{t, 0}, {t, 0}};
        rc |= utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW);
        free(p);
    }
    closedir(d);
    struct timespec ts[2] = {{t, 0}, {t, 0}};
    rc |= utimensat(AT_FDCWD, dir, ts, 0);
    return rc;
}

static int put_text(const struct stage_ctx *cx, const char *dir, const char *rel,
                    const char *text)
{
    return cx_write_in(cx, dir, rel, text, strlen(text), 0644);
}

static int put_copy(const struct stage_ctx *cx, const char *dir, const char *rel,
                    const char *src)
{
    char *p = path_join(dir, rel);
    char *parent = path_dirname(p);
    int rc = 0;
    if (mkdir_p(parent, 0755) < 0 || copy_file(src, p) < 0)
        rc = cx_fail(cx, "cannot copy %s to %s: %s", src, p, strerror(errno));
    free(parent);
    free(p);
    return rc;
}

/* Whether the root filesystem has PROGRAM in one of the usual directories. */
static bool root_has(const struct fs_tree *t, const char *program)
{
    static const char *const dirs[] = {"usr/sbin", "usr/bin", "sbin", "bin", NULL};
    for (size_t i = 0; dirs[i]; i++) {
        char *p = xasprintf("%s/%s/%s", t->dir, dirs[i], program);
        bool ok = path_exists(p);
        free(p);
        if (ok)
            return true;
    }
    return false;
}

/* The PARTUUID in the bootloader stage's command line (root=PARTUUID=X),
 * lower case, or NULL: the installed root partition must carry it. */
static char *root_partuuid(const struct stage_ctx *cx)
{
    char *p = cx_dep_file(cx, "bootloader", "cmdline");
    char *text = NULL;
    char *found = NULL;
    if (p && read_file(p, &text, NULL) == 0) {
        const char *w = strstr(text, "root=PARTUUID=");
        if (w && (w == text || w[-1] == ' ')) {
            w += strlen("root=PARTUUID=");
            size_t n = strcspn(w, " \t\r\n");
            char *g = xstrndup(w, n);
            for (char *c = g; *c; c++)
                if (*c >= 'A' && *c <= 'F')
                    *c = (char)(*c - 'A' + 'a');
            if (guid_valid(g))
                found = g;
            else
                free(g);
        }
    }
    free(text);
    free(p);
    return found;
}

/* installer_root = "image": the installed root's ext4 image (root_uuid, the
 * userland's root with the kernel's modules and its own /etc/fstab), made
 * here and gzipped into the live root, for trillian-install to write with
 * dd. Returns 0 or 1. */
static int add_root_image(const struct stage_ctx *cx, struct fs_tree *live, long long *bytes)
{
    char *tar = cx_dep_file(cx, "userland", "rootfs.tar");
    char *dir = path_join(cx->work, "install-root");
    char *img = path_join(cx->work, "root.img");
    char *gz = path_join(cx->work, "root.img.gz");
    struct fs_tree t = {0};
    int rc = 1, fd = -1;
    long long sde = cx->source_date_epoch;
    if (fstree_from_tar(cx, tar, dir, "the userland stage's rootfs.tar", sde, &t))
        goto out;
    if (cx_bool(cx, "kernel_modules", true) &&
        fstree_add_kernel_modules(cx, &t, cx_dep(cx, "kernel"), sde))
        goto out;
    long long min = fsimage_ext4_min_bytes(&t);
    long long want = cx_int(cx, "install_root_mib", 0) * MIB;
    if (want == 0) {
        want = min + min / 2;
        if (want < min + 64 * MIB)
            want = min + 64 * MIB;
        want = (want + MIB - 1) / MIB * MIB;
    } else if (want < min) {
        char *where = cx_where(cx, "install_root_mib");
        cx_fail(cx, "%s = %lld is too small for the root (%lld MiB at least); raise it or set "
                "0", where, want / MIB, (min + MIB - 1) / MIB);
        free(where);
        goto out;
    }
    char seed_uuid[37];
    char *seed = xasprintf("install-root/%s", cx->name);
    guid_derive(seed, seed_uuid);
    free(seed);
    struct ext4_opts o = {.uuid = st_root_uuid(cx->st), .hash_seed = seed_uuid, .label = "root",
                          .bytes = want, .sde = sde};
    int r = fsimage_ext4(cx, &t, img, &o);
    if (r == 2)
        cx_fail(cx, "images.%s: the installed root did not fit in %lld MiB; raise "
                "images.%s.install_root_mib", cx->name, want / MIB, cx->name);
    if (r)
        goto out;
    fd = open(gz, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    /* gzip's default level: -9 took twice the CPU for 1% less on an ext4
     * image (measured 2026-12-07: 13.6 s against 7.9 s on 1 GiB holding 58 MB) */
    const char *argv[] = {"gzip", "-6", "-n", "-c", img, NULL};
    if (fd < 0 || cx_run_to(cx, argv, fd) != 0) {
        cx_fail(cx, "gzip of the installed root image %s failed; see the log", img);
        goto out;
    }
    close(fd);
    fd = -1;
    if (fstree_add(cx, live, "usr/share/trillian/root.img.gz", gz, 0644, sde))
        goto out;
    *bytes = want;
    cx_log(cx, "installed root image: ext4 %lld MiB (UUID %s), %lld bytes gzipped", want / MIB,
           st_root_uuid(cx->st), fsimage_file_size(gz));
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    unlink(img);
    unlink(gz);
    fstree_free(&t);
    free(tar);
    free(dir);
    free(img);
    free(gz);
    return rc;
}

/* busybox init (the minimal userland) runs /etc/init.d/rc.local from its
 * rcS: there the live system looks at its command line for
 * trillian.install= (the unattended install). */
static const char rc_local[] =
    "#!/bin/sh\n"
    "# Written by Trillian's iso stage: the live system's unattended install\n"
    "# (trillian.install=DISK on the kernel command line; see trillian-install).\n"
    "[ -x /usr/sbin/trillian-install ] && /usr/sbin/trillian-install --from-cmdline\n"
    "exit 0\n";

/* The installer and what it needs, into the live root. */
static int add_installer(const struct stage_ctx *cx, struct fs_tree *t, const char *loader_path)
{
    bool image_mode = cx_str(cx, "installer_root") && !strcmp(cx_str(cx, "installer_root"), "image");
    /* What trillian-install runs; util-linux and e2fsprogs have the rest. */
    static const char *const needs[][2] = {{"sfdisk", "fdisk"}, {"mke2fs", "e2fsprogs"},
                                           {"debugfs", "e2fsprogs"}};
    static const char *const image_needs[] = {"dd", "gunzip", "crc32", "xxd", "blockdev"};
    for (size_t i = 0; i < ARRAY_LEN(needs) && !image_mode; i++)
        if (!root_has(t, needs[i][0]))
            return cx_fail(cx, "images.%s.installer: the root filesystem has no %s, which "
                           "trillian-install needs; add the Debian package %s to the userland "
                           "stage's packages, set images.%s.installer_root = \"image\" (a "
                           "busybox root is enough), or set images.%s.installer = false",
                           cx->name, needs[i][0], needs[i][1], cx->name, cx->name);
    for (size_t i = 0; i < ARRAY_LEN(image_needs) && image_mode; i++)
        if (!root_has(t, image_needs[i])) {
            char *where = cx_where(cx, "installer_root");
            int r = cx_fail(cx, "%s = \"image\": the root filesystem has no %s, which "
                            "trillian-install needs to write the disk (busybox has it); add it "
                            "to the userland, or set images.%s.installer = false", where,
                            image_needs[i], cx->name);
            free(where);
            return r;
        }
    char *inst = installer_path();
    char *esp = cx_dep_file(cx, "bootloader", "esp.img");
    char *partuuid = root_partuuid(cx);
    const char *ru = st_root_uuid(cx->st);
    long long sde = cx->source_date_epoch;
    long long root_bytes = 0;
    int rc = 1;
    if (fstree_add(cx, t, "usr/sbin/trillian-install", inst, 0755, sde) ||
        fstree_add(cx, t, "usr/share/trillian/esp.img", esp, 0644, sde))
        goto out;
    if (image_mode && add_root_image(cx, t, &root_bytes))
        goto out;
    char disk_guid[37], esp_guid[37], root_guid[37];
    char *seed = xasprintf("install-disk/%s", cx->name);
    guid_derive(seed, disk_guid);
    free(seed);
    seed = xasprintf("install-esp/%s", cx->name);
    guid_derive(seed, esp_guid);
    free(seed);
    if (image_mode && !partuuid) {
        /* the image installer writes the GPT itself and needs the root
         * partition's GUID; a loader that finds the root by its file
         * system's UUID (root=UUID=, an initramfs) names none: derive one */
        seed = xasprintf("install-root-part/%s", cx->name);
        guid_derive(seed, root_guid);
        free(seed);
        partuuid = xstrdup(root_guid);
    }
    struct buf b = BUF_INIT;
    buf_printf(&b, "# Read by trillian-install (generated by the iso stage).\n"
                   "ESP_IMAGE=/usr/share/trillian/esp.img\n"
                   "ROOT_UUID=%s\n"
                   "EFI_LOADER='%s'\n"
                   "BOOT_LABEL='Trillian %s'\n"
                   "ARCH=%s\n"
                   "VOLUME_ID='%s'\n",
               ru, loader_path, cx->name, cx->arch, cx_str(cx, "volume_id"));
    if (partuuid)
        buf_printf(&b, "ROOT_PARTUUID=%s\n", partuuid);
    if (image_mode)
        buf_printf(&b, "ROOT_IMAGE=/usr/share/trillian/root.img.gz\n"
                       "ROOT_IMAGE_MIB=%lld\n"
                       "DISK_GUID=%s\n"
                       "ESP_PARTUUID=%s\n",
                   root_bytes / MIB, disk_guid, esp_guid);
    int r = fstree_add_text(cx, t, "usr/share/trillian/install.conf", b.p, 0644, sde);
    buf_free(&b);
    if (r)
        goto out;
    /* the unattended install's hook, where busybox init runs one */
    char *rcs = path_join(t->dir, "etc/init.d/rcS");
    char *rcl = path_join(t->dir, "etc/init.d/rc.local");
    bool hook = path_exists(rcs) && !path_exists(rcl);
    free(rcs);
    free(rcl);
    if (hook && fstree_add_text(cx, t, "etc/init.d/rc.local", rc_local, 0755, sde))
        goto out;
    if (cx_str(cx, "autoinstall") && !hook) {
        cx_fail(cx, "images.%s.autoinstall: the live root has no busybox init rcS to run the "
                "install from (or has its own /etc/init.d/rc.local): run trillian-install "
                "from the live shell instead, and remove autoinstall", cx->name);
        goto out;
    }
    rc = 0;
out:
    free(inst);
    free(esp);
    free(partuuid);
    return rc;
}

/* live_root = "initramfs": the loader's command line without root= (the
 * root is the initrd; the kernel runs its /init). */
static char *live_cmdline_initramfs(const struct stage_ctx *cx)
{
    return cx_str(cx, "cmdline") ? live_cmdline(cx) : live_cmdline_root(cx, NULL);
}

/* Removes init=... from CMDLINE in place: the bootloader's command line
 * carries the installed userland's init (its cmdline-extra, such as the
 * first boot's init=/sbin/trillian-firstboot), which a live system from
 * another stage (live_from) does not have. */
static void drop_init(char *cmdline)
{
    char *w = cmdline, *o = cmdline;
    while (*w) {
        while (*w == ' ')
            w++;
        size_t n = strcspn(w, " ");
        if (n && strncmp(w, "init=", 5) != 0) {
            if (o != cmdline)
                *o++ = ' ';
            memmove(o, w, n);
            o += n;
        }
        w += n;
    }
    *o = 0;
}

/* The loader's menu: one live entry, or with AUTO (a disk) an unattended
 * install onto it as the default and the live system as the second entry. */
static char *menu_text(bool grub, const char *title, const char *kernel, const char *initrd,
                       const char *cmdline, const char *autodisk)
{
    if (!autodisk)
        return grub ? live_grub_cfg(title, kernel, initrd, cmdline)
                    : live_elilo_conf(title, kernel, initrd, cmdline);
    char *inst_title = xasprintf("%s: install onto %s (unattended, erases it)", title, autodisk);
    char *inst_cmd = xasprintf("%s trillian.install=%s trillian.install.after=poweroff",
                               cmdline, autodisk);
    char *first = grub ? live_grub_cfg(inst_title, kernel, initrd, inst_cmd)
                       : live_elilo_conf(inst_title, kernel, initrd, inst_cmd);
    char *text;
    if (grub)
        text = xasprintf("%s"
                         "menuentry \"%s\" {\n"
                         "\tlinux %s %s\n"
                         "\tinitrd %s\n"
                         "}\n",
                         first, title, kernel, cmdline, initrd);
    else
        text = xasprintf("%s\n"
                         "image=%s\n"
                         "\tlabel=live\n"
                         "\tdescription=\"%s\"\n"
                         "\tinitrd=%s\n"
                         "\tappend=\"%s\"\n",
                         first, kernel, title, initrd, cmdline);
    free(first);
    free(inst_title);
    free(inst_cmd);
    return text;
}

static int iso_run(struct stage_ctx *cx)
{
    const char *loader = live_loader(cx->st);
    bool grub = strcmp(loader, "grub") == 0;
    const char *efiname = live_efi_name(cx->arch);
    char *stage = path_join(cx->work, "iso");
    char *efidir = path_join(cx->work, "efi");
    char *efiimg = path_join(stage, "boot/efi.img");
    char *initrd = path_join(cx->work, "initrd.img");
    char *kernel = cx_dep_file(cx, "kernel", "vmlinuz");
    char *iso = xasprintf("%s/%s.iso", cx->out, cx->name);
    char *loader_rel = xasprintf("EFI/BOOT/%s", efiname);
    char *cmdline = NULL, *title = NULL, *text = NULL;
    struct fs_tree t = {0};
    int rc = 1;
    long long sq = 0, sde = cx->source_date_epoch;

    if (!path_exists(kernel)) {
        cx_fail(cx, "the kernel stage's output has no vmlinuz (%s); rebuild it", kernel);
        goto out;
    }
    const char *from = cx_str(cx, "live_from") ? cx_str(cx, "live_from") : "userland";
    bool other_live = strcmp(from, "userland") != 0;
    if (live_tree(cx, from, &t))
        goto out;
    if (cx_bool(cx, "installer", true)) {
        /* \EFI\BOOT\BOOTX64.EFI: what the installed ESP boots */
        char *winpath = xasprintf("\\EFI\\BOOT\\%s", efiname);
        int r = add_installer(cx, &t, winpath);
        free(winpath);
        if (r)
            goto out;
    }
    bool whole = cx_str(cx, "live_root") && !strcmp(cx_str(cx, "live_root"), "initramfs");
    if (whole ? live_cpio_initrd(cx, &t, initrd) : live_initrd(cx, &t, initrd, &sq))
        goto out;
    cmdline = whole ? live_cmdline_initramfs(cx) : live_cmdline(cx);
    if (other_live && !cx_str(cx, "cmdline"))
        drop_init(cmdline);
    title = cx_str(cx, "title") ? xstrdup(cx_str(cx, "title"))
                                : xasprintf("Trillian %s (live)", cx->name);

    /* The ISO 9660 tree. */
    char *marker = xasprintf("trillian-%s\n", cx->name);
    int r = put_text(cx, stage, "trillian.id", marker);
    free(marker);
    if (r || mkdir_p(efidir, 0755) < 0)
        goto out;
    char *efiloader = path_join(efidir, loader_rel);
    char *efiparent = path_dirname(efiloader);
    mkdir_p(efiparent, 0755);
    free(efiparent);
    if (grub) {
        if (put_copy(cx, stage, "boot/vmlinuz", kernel) ||
            put_copy(cx, stage, "boot/initrd.img", initrd)) {
            free(efiloader);
            goto out;
        }
        text = menu_text(true, title, "/boot/vmlinuz", "/boot/initrd.img", cmdline,
                         cx_str(cx, "autoinstall"));
        r = put_text(cx, stage, "boot/grub/grub.cfg", text);
        static const char early[] =
            "search --no-floppy --set=root --file /trillian.id\n"
            "set prefix=($root)/boot/grub\n"
            "configfile ($root)/boot/grub/grub.cfg\n";
        static const char *const iso_modules[] = {"iso9660", NULL};
        if (r || live_grub_image(cx, efiloader, "/boot/grub", early, iso_modules)) {
            free(efiloader);
            goto out;
        }
    } else {
        /* elilo reads only the FAT it was loaded from: everything goes there. */
        if (live_copy_esp_loader(cx, efiloader) || put_copy(cx, efidir, "EFI/BOOT/vmlinuz", kernel) ||
            put_copy(cx, efidir, "EFI/BOOT/initrd.img", initrd)) {
            free(efiloader);
            goto out;
        }
        text = menu_text(false, title, "vmlinuz", "initrd.img", cmdline,
                         cx_str(cx, "autoinstall"));
        if (put_text(cx, efidir, "EFI/BOOT/elilo.conf", text)) {
            free(efiloader);
            goto out;
        }
    }
    free(efiloader);
    char *bootdir = path_join(stage, "boot");
    r = mkdir_p(bootdir, 0755);
    free(bootdir);
    if (r < 0) {
        cx_fail(cx, "cannot create %s/boot: %s", stage, strerror(errno));
        goto out;
    }
    char volid[37];
    char *seed = xasprintf("iso-efi/%s", cx->name);
    guid_derive(seed, volid);
    free(seed);
    volid[8] = 0;
    /* the content with a twentieth more and 2 MiB for the FATs, in MiB */
    long long content = fat_content_bytes(efidir, NULL);
    struct fat_spec fs = {.bytes = (content + content / 20 + 2 * MIB + MIB - 1) / MIB * MIB,
                          .label = "TRILLIANEFI", .volid = volid,
                          .what = "the ISO's EFI boot image",
                          .size_hint = "Trillian sizes it from its content, so this is a bug"};
    if (fat_image(cx, efiimg, &fs, efidir, NULL))
        goto out;
    if (set_times(stage, sde, 0) < 0) {
        cx_fail(cx, "cannot set times in %s: %s", stage, strerror(errno));
        goto out;
    }

    char *sdee = xasprintf("SOURCE_DATE_EPOCH=%lld", sde);
    const char *env[] = {sdee, NULL};
    const char *argv[] = {"xorriso", "-as", "mkisofs", "-quiet", "-o", iso, "-V",
                          cx_str(cx, "volume_id"), "-r", "-J", "-joliet-long",
                          "-e", "boot/efi.img", "-no-emul-boot",
                          /* hybrid: a GPT (behind a protective MBR) whose EFI system
                           * partition is the El Torito image, so the ISO written to a
                           * USB stick (a disk to the firmware) boots the same loader */
                          "-efi-boot-part", "--efi-boot-image", "--protective-msdos-label",
                          stage, NULL};
    int st = cx_run_in(cx, NULL, env, argv);
    free(sdee);
    if (st != 0) {
        cx_fail(cx, "xorriso failed (exit %d) making %s; see the log", st, iso);
        goto out;
    }

    json_object *man = json_object_new_object();
    char *base = xasprintf("%s.iso", cx->name);
    json_add_str(man, "iso", base);
    free(base);
    json_object_object_add(man, "bytes", json_object_new_int64(fsimage_file_size(iso)));
    json_add_str(man, "loader", loader);
    json_add_str(man, "volume_id", cx_str(cx, "volume_id"));
    json_add_str(man, "cmdline", cmdline);
    json_object_object_add(man, "squashfs_bytes", json_object_new_int64(sq));
    json_object_object_add(man, "efi_img_bytes",
                           json_object_new_int64(fsimage_file_size(efiimg)));
    json_object_object_add(man, "installer",
                           json_object_new_boolean(cx_bool(cx, "installer", true)));
    json_object_object_add(man, "rootfs_entries", json_object_new_int64((int64_t)t.n));
    json_add_str(man, "live_root", whole ? "initramfs" : "squashfs");
    json_add_str(man, "live_from", from);
    if (cx_str(cx, "autoinstall"))
        json_add_str(man, "autoinstall", cx_str(cx, "autoinstall"));
    if (cx_write_manifest(cx, man))
        goto out;
    cx_log(cx, "%s.iso: %lld bytes, loader %s, squashfs root %lld bytes", cx->name,
           fsimage_file_size(iso), loader, sq);
    rc = 0;
out:
    fstree_free(&t);
    free(stage);
    free(efidir);
    free(efiimg);
    free(initrd);
    free(kernel);
    free(iso);
    free(loader_rel);
    free(cmdline);
    free(title);
    free(text);
    return rc;
}

/* Added after the kind shipped: out of the key while unset. */
static const char *const iso_late_fields[] = {"live_root", "installer_root", "install_root_mib",
                                              "autoinstall", "live_from", NULL};

const struct stage_kind stage_iso = {
    .name = "iso",
    .section = "images",
    .version = 6, /* 6: image mode derives the root partition GUID when the loader names
                     none, and gzips the root image at -6 */
    .summary = "UEFI live ISO (xorriso, El Torito EFI image) with squashfs root and installer",
    .fields = iso_fields,
    .late_fields = iso_late_fields,
    .outputs = iso_outputs,
    .declare = iso_declare,
    .run = iso_run,
};
