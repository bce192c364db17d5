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

#include "../liveboot.h"
#include "../stage.h"

static const struct field netboot_fields[] = {
    LIVE_FIELDS,
    {"title", F_STRING, false, NULL, NULL, "boot menu title (default: \"Trillian NAME (network)\")"},
    {"tftp_root", F_STRING, false, NULL, NULL,
     "where the tftp/ tree is installed on the server, for dnsmasq.conf "
     "(default: /srv/tftp/NAME)"},
    {"dhcp_range", F_STRING, false, NULL, "192.168.100.100,192.168.100.200,12h",
     "dnsmasq dhcp-range for the boot network"},
    {"interface", F_STRING, false, NULL, NULL, "dnsmasq interface= (default: all)"},
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

static int netboot_declare(struct stage *st)
{
    int bad = live_declare(st);
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

static char *dnsmasq_conf(const struct stage_ctx *cx, const char *bootfile)
{
    struct buf b = {0};
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
    /* RFC 4578 client architecture: 7 and 9 are x64 UEFI, 2 is EFI Itanium. */
    if (strcmp(cx->arch, "ia64") == 0) {
        buf_puts(&b, "dhcp-match=set:trillian-efi,option:client-arch,2\n");
    } else {
        buf_puts(&b, "dhcp-match=set:trillian-efi,option:client-arch,7\n");
        buf_puts(&b, "dhcp-match=set:trillian-efi,option:client-arch,9\n");
    }
    buf_printf(&b, "dhcp-boot=tag:trillian-efi,%s\n", bootfile);
    buf_printf(&b, "enable-tftp\ntftp-root=%s\n", root ? root : def_root);
    free(def_root);
    return b.p;
}

static int netboot_run(struct stage_ctx *cx)
{
    const char *loader = live_loader(cx->st);
    char *tftp = path_join(cx->out, "tftp");
    char *kernel_src = path_join(cx_dep(cx, "kernel"), "vmlinuz");
    char *kernel = path_join(tftp, "vmlinuz");
    char *initrd = path_join(tftp, "initrd.img");
    char *bootname = lower(live_efi_name(cx->arch));
    char *boot = path_join(tftp, bootname);
    char *cmdline = NULL, *title = NULL, *cfg = NULL, *cfgpath = NULL, *dns = NULL;
    struct fs_tree t = {0};
    struct buf man = {0};
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
        char *gdir = path_join(tftp, "grub");
        mkdir_p(gdir, 0755);
        cfgpath = path_join(gdir, "grub.cfg");
        free(gdir);
        cfg = live_grub_cfg(title, "/vmlinuz", "/initrd.img", cmdline);
    } else {
        if (live_copy_esp_loader(cx, boot))
            goto out;
        /* elilo fetches elilo.conf from the directory it was loaded from */
        cfgpath = path_join(tftp, "elilo.conf");
        cfg = live_elilo_conf(title, "vmlinuz", "initrd.img", cmdline);
    }
    if (write_file_atomic(cfgpath, cfg, strlen(cfg), 0644) < 0) {
        cx_fail(cx, "cannot write %s: %s", cfgpath, strerror(errno));
        goto out;
    }
    dns = dnsmasq_conf(cx, bootname);
    char *dpath = path_join(cx->out, "dnsmasq.conf");
    int w = write_file_atomic(dpath, dns, strlen(dns), 0644);
    free(dpath);
    if (w < 0) {
        cx_fail(cx, "cannot write dnsmasq.conf: %s", strerror(errno));
        goto out;
    }
    buf_puts(&man, "{\"loader\": ");
    json_string(&man, loader);
    buf_puts(&man, ", \"bootfile\": ");
    json_string(&man, bootname);
    buf_puts(&man, ", \"cmdline\": ");
    json_string(&man, cmdline);
    buf_printf(&man, ", \"squashfs_bytes\": %lld, \"initrd_bytes\": %lld, "
               "\"rootfs_entries\": %zu}\n",
               sq, fsimage_file_size(initrd), t.n);
    char *mp = path_join(cx->out, "stage-manifest.json");
    w = write_file_atomic(mp, man.p, man.n, 0644);
    free(mp);
    if (w < 0) {
        cx_fail(cx, "cannot write stage-manifest.json: %s", strerror(errno));
        goto out;
    }
    cx_log(cx, "tftp/: %s (%s), vmlinuz, initrd.img; command line: %s", bootname, loader,
           cmdline);
    rc = 0;
out:
    fstree_free(&t);
    buf_free(&man);
    free(tftp);
    free(kernel_src);
    free(kernel);
    free(initrd);
    free(bootname);
    free(boot);
    free(cmdline);
    free(title);
    free(cfg);
    free(cfgpath);
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
