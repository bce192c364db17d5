/* images kind "disk": a GPT disk image made without root or loop devices.
 * Partition 1 is the EFI system partition (the bootloader stage's esp.img
 * copied in), partition 2 the root filesystem (ext4 from mke2fs -d, or
 * squashfs), partition 3 an optional swap area. libparted lays out the table
 * on the image file; gpt.c then sets the disk and partition GUIDs from the
 * recipe, since libparted 3.5 can only pick them at random. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <parted/parted.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drivers/fsimage.h"
#include "formats/gpt.h"
#include "base/json_out.h"
#include "stage.h"

#define MIB (1024LL * 1024LL)
#define SECTOR 512

static const char *const fs_choices[] = {"ext4", "squashfs", NULL};
static const char *const comp_choices[] = {"xz", "zstd", "gzip", "lzo", "lz4", NULL};

static const struct field disk_fields[] = {
    {"size_mib", F_INT, true, NULL, NULL, "size of the whole disk image in MiB"},
    {"fs", F_ENUM, false, fs_choices, "ext4", "root filesystem type"},
    {"label", F_STRING, false, NULL, "root", "root filesystem label (ext4)"},
    {"hash_seed", F_STRING, false, NULL, NULL,
     "ext4 directory hash seed (a UUID); default derived from root_uuid"},
    {"squashfs_comp", F_ENUM, false, comp_choices, "xz", "squashfs compressor"},
    {"swap_mib", F_INT, false, NULL, "0", "size of a swap partition (3) in MiB; 0 = none"},
    {"disk_guid", F_STRING, false, NULL, NULL, "GPT disk GUID; default derived from the names"},
    {"esp_guid", F_STRING, false, NULL, NULL, "unique GUID of partition 1 (ESP)"},
    {"root_guid", F_STRING, false, NULL, NULL,
     "unique GUID of partition 2 (root); for squashfs default root_uuid (root=PARTUUID=)"},
    {"swap_guid", F_STRING, false, NULL, NULL, "unique GUID of partition 3 (swap)"},
    {"swap_uuid", F_STRING, false, NULL, NULL, "UUID inside the swap area (mkswap -U)"},
    {"kernel_modules", F_BOOL, false, NULL, "true",
     "add the kernel stage's modules to the root if it has none for that release"},
    {"qcow2", F_BOOL, false, NULL, "false", "also write NAME.qcow2 (qemu-img convert)"},
    {"squashfs_level", F_INT, false, NULL, "0",
     "squashfs compression level; 0 = the compressor's default (zstd 15, xz 6, gzip 9)"},
    {"zstd", F_BOOL, false, NULL, "false", "also write NAME.img.zst"},
    {"zstd_level", F_INT, false, NULL, "19",
     "zstd compression level (1-19); from 10 up with --long=27 (smaller, twice the time)"},
    {"xz", F_BOOL, false, NULL, "false", "also write NAME.img.xz"},
    {"xz_level", F_INT, false, NULL, "6", "xz compression level (0-9)"},
    {0},
};

/* The compressed copies of the raw image: one row per compressor. Both
 * tools' output is the same for any thread count. */
static const struct packer {
    const char *name, *ext; /* setting ("zstd", with "zstd_level"), file suffix */
    long long lo, hi, dflt; /* level range and default */
    long long long_from;    /* zstd: --long=27 from this level up */
    /* -T for one job: any -T gives zstd the same output; xz needs its
     * threaded mode, which -T+1 forces with one thread */
    const char *one_thread;
} packers[] = {
    {"zstd", ".img.zst", 1, 19, 19, 10, "-T1"},
    {"xz", ".img.xz", 0, 9, 6, 0, "-T+1"},
};

static const char *const disk_outputs[] = {"stage-manifest.json", NULL};

/* ---- settings shared by declare and run ---------------------------------- */

static const char *root_uuid(const struct stage *st)
{
    return st_root_uuid(st);
}

static const char *recipe_name(const struct stage *st)
{
    return st_recipe_name(st);
}

/* A GUID setting, or one derived from recipe name, stage name and ROLE. */
static void guid_setting(const struct stage *st, const char *key, const char *role,
                         char out[37])
{
    const char *v = st_str(st, key);
    if (v && guid_valid(v)) {
        snprintf(out, 37, "%s", v);
        return;
    }
    char *seed = xasprintf("%s/%s/%s", recipe_name(st), st_name(st), role);
    guid_derive(seed, out);
    free(seed);
}

static void root_guid(const struct stage *st, char out[37])
{
    const char *fs = st_str(st, "fs");
    const char *ru = root_uuid(st);
    if (!st_str(st, "root_guid") && strcmp(fs, "squashfs") == 0 && ru && guid_valid(ru))
        snprintf(out, 37, "%s", ru);
    else
        guid_setting(st, "root_guid", "root-partition", out);
}

static void hash_seed(const struct stage *st, char out[37])
{
    const char *v = st_str(st, "hash_seed");
    if (v && guid_valid(v)) {
        snprintf(out, 37, "%s", v);
        return;
    }
    const char *ru = root_uuid(st);
    char *seed = xasprintf("hash-seed/%s", ru ? ru : "");
    guid_derive(seed, out);
    free(seed);
}

static int disk_declare(struct stage *st)
{
    int bad = 0;
    st_need_file(st, "userland", "rootfs.tar");
    st_need_file(st, "bootloader", "esp.img");
    st_need_file(st, "bootloader", "cmdline");
    if (st_bool(st, "kernel_modules", true))
        st_want(st, "kernel");
    long long size = st_int(st, "size_mib", 0);
    if (size <= 0 || size > 16LL * 1024 * 1024)
        bad |= st_error(st, "size_mib", "must be a size in MiB between 1 and 16777216 (got %lld)",
                        size);
    long long swap = st_int(st, "swap_mib", 0);
    if (swap < 0 || swap >= size)
        bad |= st_error(st, "swap_mib", "must be 0 (no swap) or a size in MiB smaller than "
                        "size_mib (got %lld)", swap);
    static const char *const guid_keys[] = {"disk_guid", "esp_guid", "root_guid", "swap_guid",
                                            "swap_uuid", "hash_seed", NULL};
    for (size_t i = 0; guid_keys[i]; i++) {
        const char *v = st_str(st, guid_keys[i]);
        if (v && !guid_valid(v))
            bad |= st_error(st, guid_keys[i], "'%s' is not a GUID (write it as "
                            "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hex digits)", v);
    }
    const char *label = st_str(st, "label");
    if (label && strlen(label) > 16)
        bad |= st_error(st, "label", "an ext4 label has at most 16 characters ('%s' has %zu)",
                        label, strlen(label));
    for (size_t i = 0; i < ARRAY_LEN(packers); i++) {
        const struct packer *k = &packers[i];
        char *setting = xasprintf("%s_level", k->name);
        long long lvl = st_int(st, setting, k->dflt);
        if (lvl < k->lo || lvl > k->hi)
            bad |= st_error(st, setting, "must be between %lld and %lld (got %lld)", k->lo,
                            k->hi, lvl);
        free(setting);
    }
    bad |= fsimage_squashfs_check_level(st, "squashfs_comp", "squashfs_level");
    const char *fs = st_str(st, "fs");
    const char *ru = root_uuid(st);
    if (strcmp(fs, "ext4") == 0) {
        if (!ru)
            bad |= st_error(st, NULL, "an ext4 root needs root_uuid at the top of the recipe "
                            "(the UUID fstab and the kernel command line use), e.g. "
                            "root_uuid = \"%s\";", "6a9d1c52-2f3e-4c1a-9d7b-3e5f8a1b2c4d");
        /* (its form is checked where the recipe is read) */
        st_tool(st, "mke2fs");
        st_tool(st, "debugfs");
        st_tool(st, "e2fsck");
    } else {
        st_tool(st, "gensquashfs");
    }
    if (ru)
        st_input_text(st, "root_uuid", ru);
    if (swap > 0)
        st_tool(st, "mkswap");
    const char *name = st_name(st);
    char *f = xasprintf("%s.img", name);
    st_output(st, f);
    free(f);
    if (st_bool(st, "qcow2", false)) {
        st_tool(st, "qemu-img");
        f = xasprintf("%s.qcow2", name);
        st_output(st, f);
        free(f);
    }
    for (size_t i = 0; i < ARRAY_LEN(packers); i++) {
        if (!st_bool(st, packers[i].name, false))
            continue;
        st_tool(st, packers[i].name);
        f = xasprintf("%s%s", name, packers[i].ext);
        st_output(st, f);
        free(f);
    }
    return bad ? -1 : 0;
}

/* ---- libparted ------------------------------------------------------------ */

static const struct stage_ctx *parted_cx;

static PedExceptionOption parted_handler(PedException *ex)
{
    if (parted_cx)
        cx_log(parted_cx, "libparted: %s: %s", ped_exception_get_type_string(ex->type),
               ex->message);
    if (ex->type <= PED_EXCEPTION_WARNING && (ex->options & PED_EXCEPTION_IGNORE))
        return PED_EXCEPTION_IGNORE;
    if (ex->options & PED_EXCEPTION_CANCEL)
        return PED_EXCEPTION_CANCEL;
    return PED_EXCEPTION_UNHANDLED;
}

struct part_plan {
    const char *name;
    const char *fstype; /* libparted fs type for the type GUID, or NULL */
    bool esp;
    long long start, end; /* sectors, inclusive */
};

static int write_table(const struct stage_ctx *cx, const char *img, const struct part_plan *pp,
                       size_t n)
{
    parted_cx = cx;
    ped_exception_set_handler(parted_handler);
    int rc = 1;
    PedDevice *dev = ped_device_get(img);
    PedDisk *disk = NULL;
    if (!dev) {
        cx_fail(cx, "libparted cannot open %s", img);
        goto out;
    }
    if (dev->sector_size != SECTOR) {
        cx_fail(cx, "libparted reports %lld-byte sectors for %s; expected %d", dev->sector_size,
                img, SECTOR);
        goto out;
    }
    disk = ped_disk_new_fresh(dev, ped_disk_type_get("gpt"));
    if (!disk) {
        cx_fail(cx, "libparted cannot create a GPT on %s", img);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const PedFileSystemType *ft = pp[i].fstype ? ped_file_system_type_get(pp[i].fstype)
                                                   : NULL;
        PedPartition *p = ped_partition_new(disk, PED_PARTITION_NORMAL, ft, pp[i].start,
                                            pp[i].end);
        if (!p) {
            cx_fail(cx, "libparted cannot make partition %zu (%s)", i + 1, pp[i].name);
            goto out;
        }
        PedConstraint *c = ped_constraint_exact(&p->geom);
        int ok = ped_disk_add_partition(disk, p, c);
        ped_constraint_destroy(c);
        if (!ok) {
            ped_partition_destroy(p);
            cx_fail(cx, "libparted cannot add partition %zu (%s) at sectors %lld-%lld",
                    i + 1, pp[i].name, pp[i].start, pp[i].end);
            goto out;
        }
        if (pp[i].esp && !ped_partition_set_flag(p, PED_PARTITION_ESP, 1)) {
            cx_fail(cx, "libparted cannot mark partition %zu as ESP", i + 1);
            goto out;
        }
        if (!ped_partition_set_name(p, pp[i].name)) {
            cx_fail(cx, "libparted cannot name partition %zu", i + 1);
            goto out;
        }
    }
    if (!ped_disk_commit_to_dev(disk)) {
        cx_fail(cx, "libparted cannot write the partition table to %s", img);
        goto out;
    }
    rc = 0;
out:
    if (disk)
        ped_disk_destroy(disk);
    if (dev)
        ped_device_destroy(dev);
    parted_cx = NULL;
    return rc;
}

/* ---- run ------------------------------------------------------------------ */

static long long mib_up(long long bytes) { return (bytes + MIB - 1) / MIB; }

static int size_fail(const struct stage_ctx *cx, long long size_mib, long long need_mib,
                     long long esp_mib, long long root_mib, long long swap_mib)
{
    return cx_fail(cx, "images.%s.size_mib = %lld is too small: the image needs at least %lld "
                   "MiB (ESP %lld + root %lld + swap %lld + 2 for the partition tables and "
                   "alignment); set images.%s.size_mib to %lld or more",
                   cx->name, size_mib, need_mib, esp_mib, root_mib, swap_mib, cx->name,
                   need_mib);
}

/* The rootfs's /etc/fstab must mount / from the filesystem we make. Returns
 * 0, or 1 after cx_fail. */
static int check_fstab(const struct stage_ctx *cx, const char *rootdir, const char *uuid)
{
    char *path = path_join(rootdir, "etc/fstab");
    char *text = NULL;
    int rc = 0;
    if (read_file(path, &text, NULL) == 0) {
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
            char dev[256], mnt[256];
            if (line[0] == '#' || sscanf(line, "%255s %255s", dev, mnt) != 2)
                continue;
            if (strcmp(mnt, "/") == 0 && strncmp(dev, "UUID=", 5) == 0 &&
                strcasecmp(dev + 5, uuid) != 0) {
                rc = cx_fail(cx, "the userland's /etc/fstab mounts / from %s, but this image's "
                             "root filesystem gets root_uuid %s; build the userland stage with "
                             "the same root_uuid", dev, uuid);
                break;
            }
        }
    }
    free(text);
    free(path);
    return rc;
}

static int convert_outputs(const struct stage_ctx *cx, const char *img)
{
    if (cx_bool(cx, "qcow2", false)) {
        char *q = xasprintf("%s/%s.qcow2", cx->out, cx->name);
        const char *argv[] = {"qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", img, q,
                              NULL};
        int st = cx_run(cx, argv);
        free(q);
        if (st != 0)
            return cx_fail(cx, "qemu-img convert failed (exit %d); see the log", st);
    }
    for (size_t i = 0; i < ARRAY_LEN(packers); i++) {
        const struct packer *k = &packers[i];
        if (!cx_bool(cx, k->name, false))
            continue;
        char *setting = xasprintf("%s_level", k->name);
        long long level = cx_int(cx, setting, k->dflt);
        free(setting);
        char *z = xasprintf("%s/%s%s", cx->out, cx->name, k->ext);
        char *lvl = xasprintf("-%lld", level);
        char *thr = cx->jobs > 1 ? xasprintf("-T%d", cx->jobs) : xstrdup(k->one_thread);
        bool lng = k->long_from && level >= k->long_from;
        const char *argv[] = {k->name, "-q", "-c", lvl, thr, lng ? "--long=27" : img,
                              lng ? img : NULL, NULL};
        int fd = open(z, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int st = fd < 0 ? -1 : cx_run_to(cx, argv, fd);
        if (fd >= 0)
            close(fd);
        free(lvl);
        free(thr);
        if (st != 0) {
            unlink(z);
            free(z);
            return cx_fail(cx, "%s failed (exit %d) writing %s%s; see the log", k->name, st,
                           cx->name, k->ext);
        }
        free(z);
    }
    return 0;
}

static int disk_run(struct stage_ctx *cx)
{
    const struct stage *st = cx->st;
    const char *fs = cx_str(cx, "fs");
    bool ext4 = strcmp(fs, "ext4") == 0;
    const char *ru = root_uuid(st);
    long long size_mib = cx_int(cx, "size_mib", 0);
    long long swap_mib = cx_int(cx, "swap_mib", 0);
    char disk_guid[37], esp_guid[37], rguid[37], swap_guid[37], swap_uuid[37], seed[37];
    guid_setting(st, "disk_guid", "disk", disk_guid);
    guid_setting(st, "esp_guid", "esp-partition", esp_guid);
    root_guid(st, rguid);
    guid_setting(st, "swap_guid", "swap-partition", swap_guid);
    guid_setting(st, "swap_uuid", "swap-area", swap_uuid);
    hash_seed(st, seed);

    char *tar = cx_dep_file(cx, "userland", "rootfs.tar");
    char *esp = cx_dep_file(cx, "bootloader", "esp.img");
    char *cmdline_path = cx_dep_file(cx, "bootloader", "cmdline");
    char *rootdir = path_join(cx->work, "root");
    char *rootimg = path_join(cx->work, ext4 ? "root.ext4" : "root.squashfs");
    char *swapimg = path_join(cx->work, "swap.img");
    char *img = xasprintf("%s/%s.img", cx->out, cx->name);
    struct fs_tree t = {0};
    int rc = 1;

    double t_start = now_seconds();
    long long esp_bytes = fsimage_file_size(esp);
    if (esp_bytes <= 0) {
        cx_fail(cx, "the bootloader stage's output has no esp.img (%s); rebuild it", esp);
        goto out;
    }
    /* The kernel command line must find this root filesystem. */
    char *cmdline = NULL;
    if (ext4 && read_file(cmdline_path, &cmdline, NULL) == 0) {
        char *r = strstr(cmdline, "root=UUID=");
        if (r && (strncasecmp(r + 10, ru, 36) != 0)) {
            cx_fail(cx, "the bootloader's kernel command line says '%.46s' but this image's "
                    "root filesystem gets root_uuid %s; use root_uuid in the bootloader "
                    "stage too", r, ru);
            free(cmdline);
            goto out;
        }
    }
    free(cmdline);

    if (fstree_from_tar(cx, tar, rootdir, "the userland stage's rootfs.tar",
                        cx->source_date_epoch, &t))
        goto out;
    if (ext4 && check_fstab(cx, rootdir, ru))
        goto out;
    if (cx_bool(cx, "kernel_modules", true) && st_has_stage(st, "kernel") &&
        fstree_add_kernel_modules(cx, &t, cx_dep(cx, "kernel"), cx->source_date_epoch))
        goto out;
    cx_log(cx, "rootfs: %zu entries, %lld bytes of file data (%.1f s from the start)", t.n,
           t.file_bytes, now_seconds() - t_start);

    long long esp_mib = mib_up(esp_bytes);
    long long root_min;
    if (ext4) {
        root_min = fsimage_ext4_min_bytes(&t);
    } else {
        if (fsimage_squashfs(cx, &t, rootimg, cx_str(cx, "squashfs_comp"),
                             cx_int(cx, "squashfs_level", 0), cx->source_date_epoch))
            goto out;
        root_min = fsimage_file_size(rootimg);
    }
    long long root_min_mib = mib_up(root_min);
    long long need_mib = 1 + esp_mib + root_min_mib + swap_mib + 1;
    if (size_mib < need_mib) {
        size_fail(cx, size_mib, need_mib, esp_mib, root_min_mib, swap_mib);
        goto out;
    }
    long long root_mib = size_mib - 2 - esp_mib - swap_mib;

    if (ext4) {
        struct ext4_opts o = {.uuid = ru, .hash_seed = seed, .label = cx_str(cx, "label"),
                              .bytes = root_mib * MIB, .sde = cx->source_date_epoch};
        int r = fsimage_ext4(cx, &t, rootimg, &o);
        if (r == 2) {
            /* The estimate was too low: suggest a fifth more. */
            long long more = 2 + esp_mib + swap_mib + root_mib + root_mib / 5 + 8;
            cx_fail(cx, "images.%s.size_mib = %lld is too small: the root filesystem did not "
                    "fit in %lld MiB although the estimate (%lld MiB) said it would; set "
                    "images.%s.size_mib to %lld or more",
                    cx->name, size_mib, root_mib, root_min_mib, cx->name, more);
            goto out;
        }
        if (r)
            goto out;
    }
    if (swap_mib > 0) {
        int fd = open(swapimg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || ftruncate(fd, swap_mib * MIB) < 0 || close(fd) < 0) {
            cx_fail(cx, "cannot create %s: %s", swapimg, strerror(errno));
            goto out;
        }
        const char *argv[] = {"mkswap", "-U", swap_uuid, "-L", "swap", swapimg, NULL};
        if (cx_run(cx, argv) != 0) {
            cx_fail(cx, "mkswap failed making the swap area; see the log");
            goto out;
        }
    }

    /* The image: sparse file, GPT by libparted, GUIDs by gpt.c, contents. */
    int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, size_mib * MIB) < 0 || close(fd) < 0) {
        cx_fail(cx, "cannot create %s: %s", img, strerror(errno));
        goto out;
    }
    const long long spm = MIB / SECTOR;
    struct part_plan pp[3] = {
        {"ESP", "fat32", true, spm, spm * (1 + esp_mib) - 1},
        {"root", ext4 ? "ext4" : NULL, false, spm * (1 + esp_mib),
         spm * (1 + esp_mib + root_mib) - 1},
        {"swap", "linux-swap", false, spm * (1 + esp_mib + root_mib),
         spm * (1 + esp_mib + root_mib + swap_mib) - 1},
    };
    size_t nparts = swap_mib > 0 ? 3 : 2;
    if (write_table(cx, img, pp, nparts))
        goto out;
    uint8_t g_disk[16], g_parts[3][16], t_parts[3][16];
    guid_parse(disk_guid, g_disk);
    guid_parse(esp_guid, g_parts[0]);
    guid_parse(rguid, g_parts[1]);
    guid_parse(swap_guid, g_parts[2]);
    guid_parse(GPT_TYPE_ESP, t_parts[0]);
    guid_parse(GPT_TYPE_LINUX, t_parts[1]);
    guid_parse(GPT_TYPE_SWAP, t_parts[2]);
    const uint8_t *pg[3] = {g_parts[0], g_parts[1], g_parts[2]};
    const uint8_t *pt[3] = {t_parts[0], t_parts[1], t_parts[2]};
    char err[256];
    if (gpt_set_guids(img, SECTOR, g_disk, pg, pt, nparts, err, sizeof err) < 0) {
        cx_fail(cx, "cannot set the GPT GUIDs of %s: %s", img, err);
        goto out;
    }
    struct gpt_info gi;
    if (gpt_read(img, SECTOR, &gi, err, sizeof err) < 0 || gi.nparts != nparts) {
        cx_fail(cx, "the partition table written to %s does not read back: %s", img,
                gi.nparts != nparts ? "wrong number of partitions" : err);
        goto out;
    }
    for (size_t i = 0; i < nparts; i++) {
        if ((long long)gi.parts[i].first_lba != pp[i].start ||
            (long long)gi.parts[i].last_lba != pp[i].end) {
            cx_fail(cx, "libparted moved partition %zu (%s) to %llu-%llu; wanted %lld-%lld",
                    i + 1, pp[i].name, (unsigned long long)gi.parts[i].first_lba,
                    (unsigned long long)gi.parts[i].last_lba, pp[i].start, pp[i].end);
            goto out;
        }
    }
    double t0 = now_seconds();
    if (fsimage_copy_at(cx, esp, img, pp[0].start * SECTOR) ||
        fsimage_copy_at(cx, rootimg, img, pp[1].start * SECTOR) ||
        (nparts == 3 && fsimage_copy_at(cx, swapimg, img, pp[2].start * SECTOR)))
        goto out;
    cx_log(cx, "(partitions written into %s.img: %.1f s)", cx->name, now_seconds() - t0);
    if (convert_outputs(cx, img))
        goto out;

    /* The image's sha256 is in the build's manifest.json (the stage's sums). */
    json_object *man = json_object_new_object(), *parts = json_object_new_array();
    char *base = xasprintf("%s.img", cx->name);
    json_add_str(man, "image", base);
    free(base);
    json_object_object_add(man, "bytes", json_object_new_int64(size_mib * MIB));
    json_object_object_add(man, "sector_size", json_object_new_int(SECTOR));
    json_add_str(man, "disk_guid", disk_guid);
    json_add_str(man, "root_fs", fs);
    json_add_str(man, "root_uuid", ru ? ru : "");
    if (ext4)
        json_add_str(man, "hash_seed", seed);
    json_object_object_add(man, "rootfs_entries", json_object_new_int64((int64_t)t.n));
    json_object_object_add(man, "rootfs_file_bytes", json_object_new_int64(t.file_bytes));
    json_object_object_add(man, "root_min_mib", json_object_new_int64(root_min_mib));
    static const char *const fsnames[3] = {"vfat", NULL, "swap"};
    for (size_t i = 0; i < nparts; i++) {
        char ty[37], gu[37];
        guid_format(gi.parts[i].type, ty);
        guid_format(gi.parts[i].guid, gu);
        json_object *p = json_object_new_object();
        json_object_object_add(p, "number", json_object_new_int64(gi.parts[i].index));
        json_add_str(p, "name", gi.parts[i].name);
        json_add_str(p, "type", ty);
        json_add_str(p, "guid", gu);
        json_object_object_add(p, "first_lba", json_object_new_uint64(gi.parts[i].first_lba));
        json_object_object_add(p, "last_lba", json_object_new_uint64(gi.parts[i].last_lba));
        json_object_object_add(p, "bytes", json_object_new_uint64(
            (gi.parts[i].last_lba - gi.parts[i].first_lba + 1) * SECTOR));
        json_add_str(p, "fs", i == 1 ? fs : fsnames[i]);
        json_object_array_add(parts, p);
    }
    json_object_object_add(man, "partitions", parts);
    if (cx_write_manifest(cx, man))
        goto out;
    cx_log(cx, "%s.img: %lld MiB, ESP %lld MiB, root %s %lld MiB (minimum %lld), swap %lld MiB",
           cx->name, size_mib, esp_mib, fs, root_mib, root_min_mib, swap_mib);
    rc = 0;
out:
    fstree_free(&t);
    free(tar);
    free(esp);
    free(cmdline_path);
    free(rootdir);
    free(rootimg);
    free(swapimg);
    free(img);
    return rc;
}

const struct stage_kind stage_disk = {
    .name = "disk",
    .section = "images",
    .version = 2, /* 2: stage-manifest without the image sha256 (manifest.json has it) */
    .summary = "GPT disk image: ESP + ext4 or squashfs root (+ swap), no root needed",
    .fields = disk_fields,
    .outputs = disk_outputs,
    .declare = disk_declare,
    .run = disk_run,
};
