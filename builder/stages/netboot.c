/* images kind "netboot": a TFTP tree for UEFI network boot, plus a dnsmasq
 * configuration serving it. The firmware's PXE client fetches the loader
 * (GRUB built for TFTP with efinet, or elilo from the ESP tree on ia64),
 * which fetches its configuration, the kernel and one initrd that carries
 * the root filesystem as squashfs (liveboot.h). Works with qemu's built-in
 * TFTP: -netdev user,tftp=OUT/tftp,bootfile=bootx64.efi under OVMF.
 *
 * root_from = "tftp": the root is a file of its own in the tree
 * (root.squashfs, or root.ext4.gz with root_image = "ext4"), the initrd is
 * the initramfs alone, and the command line says root=tftp:/FILE: the
 * initramfs brings the network up by DHCP and fetches it from the DHCP
 * server (firmware/initramfs/init). The served root carries
 * /etc/trillian/netboot-root, which nothing else has.
 *
 * GRUB on ia64: from the recipe's packages stage of kind grub (its
 * grub-mkimage and ia64-efi modules: netboot_grub_image), with prefix /grub
 * on the device it was loaded from, so the same loader finds grub/grub.cfg
 * over TFTP and on a disk holding the tree's files. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "drivers/grub_pkg.h"
#include "drivers/liveboot.h"
#include "formats/gpt.h"
#include "base/json_out.h"
#include "stage.h"

static const char *const root_from_choices[] = {"initrd", "tftp", NULL};
static const char *const root_image_choices[] = {"squashfs", "ext4", NULL};

static const struct field netboot_fields[] = {
    LIVE_FIELDS,
    {"title", F_STRING, false, NULL, NULL, "boot menu title (default: \"Trillian NAME (network)\")"},
    {"tftp_root", F_STRING, false, NULL, NULL,
     "where the tftp/ tree is installed on the server, for dnsmasq.conf "
     "(default: /srv/tftp/NAME)"},
    {"dhcp_range", F_STRING, false, NULL, "192.168.100.100,192.168.100.200,12h",
     "dnsmasq dhcp-range for the boot network"},
    {"interface", F_STRING, false, NULL, NULL, "dnsmasq interface= (default: all)"},
    {"clients", F_STRING_LIST, false, NULL, NULL,
     "elilo: clients given their own configuration file (a copy of elilo.conf to edit), "
     "each an IPv4 address, a MAC aa:bb:cc:dd:ee:ff, or MAC,IP (dnsmasq then gives that MAC "
     "that address)"},
    {"root_from", F_ENUM, false, root_from_choices, "initrd",
     "initrd: the root (squashfs) rides in the initrd; tftp: the root is its own file in "
     "tftp/, fetched by the initramfs over TFTP after DHCP (root=tftp:/FILE)"},
    {"root_image", F_ENUM, false, root_image_choices, "squashfs",
     "with root_from = \"tftp\": the served root's format, squashfs (root.squashfs, needs "
     "CONFIG_SQUASHFS) or ext4 (root.ext4.gz, gzip -9n, mounted read-write on a loop device)"},
    {0},
};

static const char *const netboot_outputs[] = {"tftp", "dnsmasq.conf", "stage-manifest.json",
                                              NULL};

static bool plain_word(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (isspace((unsigned char)*s) || *s == '#' || *s == '"' || *s == '\'')
            return false;
    return true;
}

/* A client entry: MAC and/or IPv4 address, parsed. */
struct client {
    unsigned char mac[6], ip[4];
    bool has_mac, has_ip;
};

static bool parse_mac(const char *s, unsigned char mac[6])
{
    unsigned v[6];
    char end;
    if (strlen(s) != 17 || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3],
                                  &v[4], &v[5], &end) != 6)
        return false;
    for (int i = 0; i < 6; i++)
        mac[i] = (unsigned char)v[i];
    return true;
}

static bool parse_ip(const char *s, unsigned char ip[4])
{
    unsigned v[4];
    char end;
    if (sscanf(s, "%3u.%3u.%3u.%3u%c", &v[0], &v[1], &v[2], &v[3], &end) != 4)
        return false;
    for (int i = 0; i < 4; i++) {
        if (v[i] > 255)
            return false;
        ip[i] = (unsigned char)v[i];
    }
    return true;
}

static bool parse_client(const char *s, struct client *c)
{
    memset(c, 0, sizeof *c);
    const char *comma = strchr(s, ',');
    if (comma) {
        char *mac = xstrndup(s, (size_t)(comma - s));
        c->has_mac = parse_mac(mac, c->mac);
        free(mac);
        c->has_ip = parse_ip(comma + 1, c->ip);
        return c->has_mac && c->has_ip;
    }
    c->has_mac = parse_mac(s, c->mac);
    c->has_ip = !c->has_mac && parse_ip(s, c->ip);
    return c->has_mac || c->has_ip;
}

/* The names elilo's netfs tries for a client, most specific first (elilo
 * 3.x glue_netfs.c, ENABLE_MACHINE_SPECIFIC_NETCONFIG): the IPv4 address as
 * 8 upper-case hex digits + ".conf" (then 6, 4 and 2 digits, each with
 * "-ia64.conf" and ".conf": subnets), then the MAC as AA:BB:CC:DD:EE:FF.conf;
 * then fileops' defaults elilo-ia64.conf and elilo.conf. Trillian writes the
 * full-address and MAC names. */
static void client_files(const struct client *c, struct strlist *out)
{
    if (c->has_ip)
        strlist_pushf(out, "%02X%02X%02X%02X.conf", c->ip[0], c->ip[1], c->ip[2], c->ip[3]);
    if (c->has_mac)
        strlist_pushf(out, "%02X:%02X:%02X:%02X:%02X:%02X.conf", c->mac[0], c->mac[1],
                      c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
}

/* ---- GRUB from the recipe's packages stage (ia64) ------------------------ */

/* The packages stage of kind grub (grub_pkg.h) whose grub-mkimage and
 * modules make the network loader, or NULL (then the host's, liveboot.c). */
static const char *netboot_grub_stage(const struct stage *st)
{
    return strcmp(live_loader(st), "grub") == 0 ? grub_pkg_stage(st) : NULL;
}

/* OUT: an EFI image made with that stage's grub-mkimage from its modules,
 * prefix /grub on the device GRUB was loaded from (the TFTP server, or a
 * disk with the same files). */
static int netboot_grub_image(const struct stage_ctx *cx, const char *out)
{
    static const char *const modules[] = {
        "normal", "configfile", "linux", "echo", "test", "sleep", "reboot", "halt", "gzio",
        "part_gpt", "part_msdos", "fat", "search", "search_fs_file", "ls", "cat", "serial",
        "terminal", "efinet", "tftp", "net", NULL};
    const char *gs = netboot_grub_stage(cx->st);
    const char *platform = strcmp(cx->arch, "ia64") == 0 ? "ia64-efi" : "x86_64-efi";
    char *mkimage = NULL, *dir = NULL;
    int rc = grub_pkg_files(cx, platform, &mkimage, &dir);
    for (size_t i = 0; modules[i] && !rc; i++) {
        char *m = xasprintf("%s/%s.mod", dir, modules[i]);
        if (!path_exists(m))
            rc = cx_fail(cx, "packages stage '%s' has no GRUB module %s (%s); the network "
                         "loader needs it: rebuild that stage with it", gs, modules[i], m);
        free(m);
    }
    if (!rc) {
        struct strlist argv = {0};
        strlist_push(&argv, mkimage);
        const char *head[] = {"-d", dir, "-O", platform, "-o", out,
                              "-p", "/grub", NULL};
        for (size_t i = 0; head[i]; i++)
            strlist_push(&argv, head[i]);
        for (size_t i = 0; modules[i]; i++)
            strlist_push(&argv, modules[i]);
        int st = cx_run(cx, (const char *const *)argv.v);
        strlist_free(&argv);
        if (st != 0)
            rc = cx_fail(cx, "%s failed (exit %d) making %s; see the log", mkimage, st, out);
        else
            cx_log(cx, "GRUB network loader from packages stage '%s' (prefix /grub)", gs);
    }
    free(mkimage);
    free(dir);
    return rc;
}

/* ---- the root served over TFTP ------------------------------------------- */

static bool root_over_tftp(const struct stage *st)
{
    const char *f = st_str(st, "root_from");
    return f && strcmp(f, "tftp") == 0;
}

static const char *tftp_root_file(const struct stage *st)
{
    return strcmp(st_str(st, "root_image"), "ext4") == 0 ? "root.ext4.gz" : "root.squashfs";
}

/* The kernel's value of OPTION ("y", "m") in its stage's config, or NULL. */
static char *kconfig_value(const char *config, const char *option)
{
    char *want = xasprintf("%s=", option);
    char *v = NULL;
    for (const char *l = config; l && *l && !v;) {
        size_t n = strcspn(l, "\n");
        if (n > strlen(want) && strncmp(l, want, strlen(want)) == 0)
            v = xstrndup(l + strlen(want), n - strlen(want));
        l += n + (l[n] ? 1 : 0);
    }
    free(want);
    return v;
}

/* OPTION is a module (=m): an initramfs of kind initramfs (its manifest
 * lists the modules it loads) must load MODULE, else the root's mount
 * fails in the guest. */
static int need_module(const struct stage_ctx *cx, const char *option, const char *module)
{
    char *p = path_join(cx_dep(cx, "initramfs"), "stage-manifest.json");
    json_object *m = json_object_from_file(p);
    free(p);
    json_object *mods = m ? json_member(m, "modules") : NULL;
    bool found = !mods || !json_object_is_type(mods, json_type_array);
    for (size_t i = 0; !found && i < json_object_array_length(mods); i++)
        found = strcmp(json_object_get_string(json_object_array_get_idx(mods, i)), module) == 0;
    int rc = 0;
    if (!found)
        rc = cx_fail(cx, "images.%s: the kernel has %s=m, but the initramfs does not load %s, so "
                     "the root it fetches could not be mounted; add \"%s\" to "
                     "initramfs.modules", cx->name, option, module, module);
    if (m)
        json_object_put(m);
    return rc;
}

/* The kernel can mount what the initramfs fetches: the file system and
 * loop, each built in or a module the initramfs loads. */
static int check_kernel_config(const struct stage_ctx *cx)
{
    char *path = cx_dep_file(cx, "kernel", "config"), *config = NULL;
    int rc = 0;
    if (read_file(path, &config, NULL) < 0) {
        rc = cx_fail(cx, "cannot read the kernel stage's config (%s): %s", path,
                     strerror(errno));
        free(path);
        return rc;
    }
    bool ext4 = strcmp(cx_str(cx, "root_image"), "ext4") == 0;
    const char *need[] = {ext4 ? "CONFIG_EXT4_FS" : "CONFIG_SQUASHFS", "CONFIG_BLK_DEV_LOOP",
                          NULL};
    const char *module[] = {ext4 ? "ext4" : "squashfs", "loop"};
    for (size_t i = 0; need[i] && !rc; i++) {
        char *v = kconfig_value(config, need[i]);
        if (!v || (strcmp(v, "y") && strcmp(v, "m")))
            rc = cx_fail(cx, "images.%s.root_image = \"%s\": the kernel stage's config has no "
                         "%s, so the initramfs could not mount the root it fetches; %s", cx->name,
                         cx_str(cx, "root_image"), need[i],
                         ext4 ? "add the ext4 fragment to kernel.fragments"
                              : "add the squashfs fragment to kernel.fragments (a new kernel "
                                "build), or set root_image = \"ext4\"");
        else if (strcmp(v, "m") == 0)
            rc = need_module(cx, need[i], module[i]);
        free(v);
    }
    free(config);
    free(path);
    return rc;
}

/* Writes tftp/FILE: the root T as squashfs, or as ext4 then gzip -9n. */
static int tftp_root(const struct stage_ctx *cx, const struct fs_tree *t, const char *tftp,
                     long long *bytes)
{
    const char *file = tftp_root_file(cx->st);
    char *out = path_join(tftp, file);
    int rc = 1;
    if (strcmp(cx_str(cx, "root_image"), "ext4") != 0) {
        rc = fsimage_squashfs(cx, t, out, cx_str(cx, "squashfs_comp"),
                              cx_int(cx, "squashfs_level", 0), cx->source_date_epoch);
    } else {
        char *img = path_join(cx->work, "root.ext4");
        char *seed = xasprintf("trillian-netboot-root:%s", cx->name);
        char uuid[37], hash[37];
        guid_derive(seed, uuid);
        free(seed);
        seed = xasprintf("trillian-netboot-hash:%s", cx->name);
        guid_derive(seed, hash);
        free(seed);
        /* a little room for what the running system writes (it lives in
         * the guest's RAM, and every byte of it is gunzipped there: with 32
         * MiB more the fetched root took 21 s to mount in qemu-system-ia64) */
        long long size = fsimage_ext4_min_bytes(t) + 8LL * 1024 * 1024;
        struct ext4_opts o = {.uuid = uuid, .hash_seed = hash, .label = "trillian-net",
                              .bytes = size, .sde = cx->source_date_epoch};
        int r = fsimage_ext4(cx, t, img, &o);
        if (r == 2)
            cx_fail(cx, "the root did not fit in the %lld-byte ext4 image estimated for it",
                    size);
        if (r == 0) {
            int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            const char *gz[] = {"gzip", "-9", "-n", "-c", img, NULL};
            int st = fd < 0 ? -1 : cx_run_to(cx, gz, fd);
            if (fd >= 0 && close(fd) < 0)
                st = -1;
            if (st != 0)
                cx_fail(cx, "gzip -9n of %s into %s failed (exit %d)", img, out, st);
            else
                rc = 0;
            cx_log(cx, "root: ext4 UUID %s, %lld bytes, %lld gzipped", uuid,
                   fsimage_file_size(img), fsimage_file_size(out));
        }
        unlink(img);
        free(img);
    }
    *bytes = rc ? 0 : fsimage_file_size(out);
    free(out);
    return rc;
}

/* live_cmdline's, with root=tftp:/FILE instead of the initrd's squashfs. */
static char *tftp_cmdline(const struct stage_ctx *cx)
{
    char *root = xasprintf("root=tftp:/%s", tftp_root_file(cx->st));
    char *c = live_cmdline_root(cx, root);
    free(root);
    return c;
}

static int netboot_declare(struct stage *st)
{
    int bad = live_declare_common(st, !netboot_grub_stage(st));
    if (netboot_grub_stage(st))
        st_need_file(st, netboot_grub_stage(st), "bin/grub-mkimage");
    if (root_over_tftp(st)) {
        const struct stage *ird = st_peer(st, "initramfs");
        if (ird && (strcmp(st_kind(ird), "payload") == 0 || strcmp(st_kind(ird), "rootfs") == 0))
            bad |= st_error(st, "root_from", "the initramfs stage is of kind %s, whose init does "
                            "not fetch a root; root=tftp:/FILE needs kind \"initramfs\" "
                            "(Trillian's init, firmware/initramfs/init)", st_kind(ird));
        st_need_file(st, "kernel", "config");
        if (strcmp(st_str(st, "root_image"), "ext4") == 0)
            st_tool(st, "gzip");
    } else if (st_isset(st, "root_image")) {
        bad |= st_error(st, "root_image", "only a root served on its own (root_from = "
                        "\"tftp\") has a format to choose; the initrd carries squashfs");
    }
    struct strlist cl = {0};
    st_list(st, "clients", &cl);
    for (size_t i = 0; i < cl.n; i++) {
        struct client c;
        if (!parse_client(cl.v[i], &c))
            bad |= st_error(st, "clients", "'%s' is not an IPv4 address, a MAC "
                            "(aa:bb:cc:dd:ee:ff) or MAC,IP", cl.v[i]);
    }
    if (cl.n && strcmp(live_loader(st), "elilo") != 0)
        bad |= st_error(st, "clients", "per-client configuration files are elilo's; this "
                        "image's loader is %s", live_loader(st));
    strlist_free(&cl);
    static const char *const words[] = {"tftp_root", "dhcp_range", "interface", NULL};
    for (size_t i = 0; words[i]; i++) {
        const char *v = st_str(st, words[i]);
        if (v && !plain_word(v))
            bad |= st_error(st, words[i], "'%s' must be one word without blanks, quotes or #",
                            v);
    }
    const char *title = st_str(st, "title");
    if (title && strpbrk(title, "\"\n\r"))
        bad |= st_error(st, "title", "must be one line without double quotes");
    return bad ? -1 : 0;
}

/* "BOOTX64.EFI" -> "bootx64.efi": what PXE clients are usually told. */
static char *lower(const char *s)
{
    char *r = xstrdup(s);
    for (char *p = r; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return r;
}

/* RFC 4578 DHCP option 93, client system architecture, that the firmware's
 * PXE client sends: 2 is EFI Itanium, 7 and 9 are x64 UEFI (9 what most
 * firmware sends, 7 the RFC's "EFI BC"). */
static const struct {
    const char *arch;
    int code;
} client_archs[] = {
    {"ia64", 2},
    {"amd64", 7},
    {"amd64", 9},
};

static char *dnsmasq_conf(const struct stage_ctx *cx, const char *bootfile)
{
    struct buf b = BUF_INIT;
    const char *root = cx_str(cx, "tftp_root");
    char *def_root = xasprintf("/srv/tftp/%s", cx->name);
    buf_printf(&b, "# dnsmasq configuration for network-booting the Trillian image '%s'\n"
               "# (generated). Copy the tftp/ directory to %s, then run\n"
               "#   dnsmasq --conf-file=THIS-FILE\n"
               "# on the boot network. DHCP answers only UEFI clients of this architecture.\n",
               cx->name, root ? root : def_root);
    buf_puts(&b, "port=0\n");
    const char *iface = cx_str(cx, "interface");
    if (iface)
        buf_printf(&b, "interface=%s\nbind-interfaces\n", iface);
    buf_printf(&b, "dhcp-range=%s\n", cx_str(cx, "dhcp_range"));
    for (size_t i = 0; i < ARRAY_LEN(client_archs); i++)
        if (strcmp(client_archs[i].arch, cx->arch) == 0)
            buf_printf(&b, "dhcp-match=set:trillian-efi,option:client-arch,%d\n",
                       client_archs[i].code);
    buf_printf(&b, "dhcp-boot=tag:trillian-efi,%s\n", bootfile);
    struct strlist cl = {0};
    cx_list(cx, "clients", &cl);
    for (size_t i = 0; i < cl.n; i++) {
        struct client c;
        if (parse_client(cl.v[i], &c) && c.has_mac && c.has_ip)
            buf_printf(&b, "dhcp-host=%02x:%02x:%02x:%02x:%02x:%02x,%u.%u.%u.%u\n", c.mac[0],
                       c.mac[1], c.mac[2], c.mac[3], c.mac[4], c.mac[5], c.ip[0], c.ip[1],
                       c.ip[2], c.ip[3]);
    }
    strlist_free(&cl);
    buf_printf(&b, "enable-tftp\ntftp-root=%s\n", root ? root : def_root);
    free(def_root);
    return buf_detach(&b);
}

static int netboot_run(struct stage_ctx *cx)
{
    const char *loader = live_loader(cx->st);
    char *tftp = path_join(cx->out, "tftp");
    char *kernel_src = cx_dep_file(cx, "kernel", "vmlinuz");
    char *kernel = path_join(tftp, "vmlinuz");
    char *initrd = path_join(tftp, "initrd.img");
    char *bootname = lower(live_efi_name(cx->arch));
    char *boot = path_join(tftp, bootname);
    char *cmdline = NULL, *title = NULL, *cfg = NULL, *dns = NULL;
    const char *cfgrel = NULL; /* below tftp/ */
    struct fs_tree t = {0};
    int rc = 1;
    long long sq = 0;

    if (mkdir_p(tftp, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", tftp, strerror(errno));
        goto out;
    }
    if (!path_exists(kernel_src)) {
        cx_fail(cx, "the kernel stage's output has no vmlinuz (%s); rebuild it", kernel_src);
        goto out;
    }
    if (copy_file(kernel_src, kernel) < 0) {
        cx_fail(cx, "cannot copy %s: %s", kernel_src, strerror(errno));
        goto out;
    }
    if (live_tree(cx, "userland", &t))
        goto out;
    if (root_over_tftp(cx->st)) {
        char *ird = cx_dep_file(cx, "initramfs", "initrd.img");
        char *marker = xasprintf("served over TFTP by the netboot tree '%s'\n", cx->name);
        int bad = check_kernel_config(cx) ||
                  fstree_add_text(cx, &t, "etc/trillian/netboot-root", marker, 0644,
                                  cx->source_date_epoch) ||
                  tftp_root(cx, &t, tftp, &sq);
        free(marker);
        if (!bad && copy_file(ird, initrd) < 0)
            bad = cx_fail(cx, "cannot copy %s: %s", ird, strerror(errno));
        free(ird);
        if (bad)
            goto out;
        cmdline = tftp_cmdline(cx);
    } else {
        if (live_initrd(cx, &t, initrd, &sq))
            goto out;
        cmdline = live_cmdline(cx);
    }
    title = cx_str(cx, "title") ? xstrdup(cx_str(cx, "title"))
                                : xasprintf("Trillian %s (network)", cx->name);
    if (strcmp(loader, "grub") == 0) {
        static const char *const net_modules[] = {"efinet", "tftp", "net", NULL};
        if (netboot_grub_stage(cx->st) ? netboot_grub_image(cx, boot)
                                       : live_grub_image(cx, boot, "(tftp)/grub", NULL,
                                                         net_modules))
            goto out;
        cfgrel = "grub/grub.cfg";
        cfg = live_grub_cfg(title, "/vmlinuz", "/initrd.img", cmdline);
    } else {
        if (live_copy_esp_loader(cx, boot))
            goto out;
        /* elilo fetches elilo.conf from the directory it was loaded from */
        cfgrel = "elilo.conf";
        cfg = live_elilo_conf(title, "vmlinuz", "initrd.img", cmdline);
        struct strlist cl = {0}, names = {0};
        cx_list(cx, "clients", &cl);
        for (size_t i = 0; i < cl.n; i++) {
            struct client c;
            if (parse_client(cl.v[i], &c))
                client_files(&c, &names);
        }
        int w = 0;
        for (size_t i = 0; i < names.n && !w; i++)
            w = cx_write_in(cx, tftp, names.v[i], cfg, strlen(cfg), 0644);
        strlist_free(&cl);
        strlist_free(&names);
        if (w)
            goto out;
    }
    if (cx_write_in(cx, tftp, cfgrel, cfg, strlen(cfg), 0644))
        goto out;
    dns = dnsmasq_conf(cx, bootname);
    if (cx_write(cx, "dnsmasq.conf", dns, strlen(dns)))
        goto out;
    json_object *man = json_object_new_object();
    json_add_str(man, "loader", loader);
    json_add_str(man, "bootfile", bootname);
    json_add_str(man, "cmdline", cmdline);
    if (root_over_tftp(cx->st)) {
        json_add_str(man, "root_file", tftp_root_file(cx->st));
        json_object_object_add(man, "root_bytes", json_object_new_int64(sq));
    } else {
        json_object_object_add(man, "squashfs_bytes", json_object_new_int64(sq));
    }
    json_object_object_add(man, "initrd_bytes", json_object_new_int64(fsimage_file_size(initrd)));
    json_object_object_add(man, "rootfs_entries", json_object_new_int64((int64_t)t.n));
    if (cx_write_manifest(cx, man))
        goto out;
    cx_log(cx, "tftp/: %s (%s), vmlinuz, initrd.img; command line: %s", bootname, loader,
           cmdline);
    rc = 0;
out:
    fstree_free(&t);
    free(tftp);
    free(kernel_src);
    free(kernel);
    free(initrd);
    free(bootname);
    free(boot);
    free(cmdline);
    free(title);
    free(cfg);
    free(dns);
    return rc;
}

const struct stage_kind stage_netboot = {
    .name = "netboot",
    .section = "images",
    .version = 4, /* 4: a root served over TFTP (root_from), smaller ext4 headroom */
    .summary = "TFTP tree for UEFI network boot (loader, kernel, initrd with squashfs root) "
               "and a dnsmasq.conf",
    .fields = netboot_fields,
    .outputs = netboot_outputs,
    .declare = netboot_declare,
    .run = netboot_run,
};
