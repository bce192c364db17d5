/* images kind "netboot": a TFTP tree for UEFI network boot, plus a dnsmasq
 * configuration serving it. The firmware's PXE client fetches the loader
 * (GRUB built for TFTP with efinet, or elilo from the ESP tree on ia64),
 * which fetches its configuration, the kernel and one initrd that carries
 * the root filesystem as squashfs (liveboot.h). Works with qemu's built-in
 * TFTP: -netdev user,tftp=OUT/tftp,bootfile=bootx64.efi under OVMF. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/liveboot.h"
#include "base/json_out.h"
#include "stage.h"

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

static int netboot_declare(struct stage *st)
{
    int bad = live_declare(st);
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
    if (live_tree(cx, &t) || live_initrd(cx, &t, initrd, &sq))
        goto out;
    cmdline = live_cmdline(cx);
    title = cx_str(cx, "title") ? xstrdup(cx_str(cx, "title"))
                                : xasprintf("Trillian %s (network)", cx->name);
    if (strcmp(loader, "grub") == 0) {
        static const char *const net_modules[] = {"efinet", "tftp", "net", NULL};
        if (live_grub_image(cx, boot, "(tftp)/grub", NULL, net_modules))
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
    json_object_object_add(man, "squashfs_bytes", json_object_new_int64(sq));
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
    .version = 3,
    .summary = "TFTP tree for UEFI network boot (loader, kernel, initrd with squashfs root) "
               "and a dnsmasq.conf",
    .fields = netboot_fields,
    .outputs = netboot_outputs,
    .declare = netboot_declare,
    .run = netboot_run,
};
