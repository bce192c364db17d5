/* Live-boot payload for netboot and iso images; see liveboot.h. */
#define _GNU_SOURCE
#include "liveboot.h"

#include "grub_pkg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const live_loader_choices[] = {"grub", "elilo", NULL};
const char *const live_comp_choices[] = {"xz", "zstd", "gzip", "lzo", "lz4", NULL};

const char *live_loader(const struct stage *st)
{
    const char *l = st_str(st, "loader");
    if (l)
        return l;
    return strcmp(st_arch(st), "ia64") == 0 ? "elilo" : "grub";
}

const char *live_efi_name(const char *arch)
{
    return strcmp(arch, "ia64") == 0 ? "BOOTIA64.EFI" : "BOOTX64.EFI";
}

static const char *grub_format(const char *arch)
{
    return strcmp(arch, "ia64") == 0 ? "ia64-efi" : "x86_64-efi";
}

int live_declare(struct stage *st)
{
    return live_declare_common(st, true);
}

int live_declare_common(struct stage *st, bool host_grub)
{
    int bad = 0;
    st_need_file(st, "userland", "rootfs.tar");
    st_need_file(st, "kernel", "vmlinuz"); /* iso.c and netboot.c copy it */
    /* the iso kind's live_root = "initramfs" is the initrd itself (live_cpio.h) */
    bool whole = strcmp(st_kind(st), "iso") == 0 && st_str(st, "live_root") &&
                 strcmp(st_str(st, "live_root"), "initramfs") == 0;
    if (!whole)
        st_need_file(st, "initramfs", "initrd.img");
    const char *loader = live_loader(st);
    if (strcmp(loader, "elilo") == 0) {
        st_need(st, "bootloader"); /* the elilo binary comes from its ESP tree */
        st_input_text(st, "elilo.conf", "relocatable"); /* live_elilo_conf's options */
    }
    else if (!st_str(st, "cmdline"))
        st_want(st, "bootloader"); /* its command line, if the recipe has one */
    const char *cmdline = st_str(st, "cmdline");
    if (cmdline && strpbrk(cmdline, "\n\r\""))
        bad |= st_error(st, "cmdline", "must be one line without double quotes");
    if (!host_grub && strcmp(loader, "grub") == 0) {
        /* the netboot stage declares the recipe's GRUB itself (netboot.c) */
    } else if (strcmp(loader, "grub") == 0 && grub_pkg_declare(st)) {
        /* the recipe's GRUB (grub_pkg.h), as the ESP takes it */
        st_input_text(st, "grub-format", grub_format(st_arch(st)));
    } else if (strcmp(loader, "grub") == 0) {
        char *dir = xasprintf("/usr/lib/grub/%s", grub_format(st_arch(st)));
        if (!is_dir(dir))
            bad |= st_error(st, "loader", "grub needs GRUB's %s modules in %s, which are not "
                            "installed%s", grub_format(st_arch(st)), dir,
                            strcmp(st_arch(st), "ia64") == 0
                                ? " (Debian does not ship them for ia64: add packages = ( "
                                  "{ kind = \"grub\"; } ) to build GRUB, or use loader = "
                                  "\"elilo\")"
                                : " (apt-get install grub-efi-amd64-bin)");
        free(dir);
        st_tool(st, "grub-mkimage");
        st_input_text(st, "grub-format", grub_format(st_arch(st)));
    }
    if (!whole) {
        st_tool(st, "gensquashfs");
        bad |= fsimage_squashfs_check_level(st, "squashfs_comp", "squashfs_level");
    }
    return bad ? -1 : 0;
}

int live_tree(const struct stage_ctx *cx, const char *from, struct fs_tree *t)
{
    char *tar = cx_dep_file(cx, from, "rootfs.tar");
    char *dir = path_join(cx->work, "live-root");
    char *what = xasprintf("the %s stage's rootfs.tar", from);
    int rc = fstree_from_tar(cx, tar, dir, what, cx->source_date_epoch, t);
    free(what);
    if (rc == 0 && cx_bool(cx, "kernel_modules", true))
        rc = fstree_add_kernel_modules(cx, t, cx_dep(cx, "kernel"), cx->source_date_epoch);
    /* The live system's / is not the disk /etc/fstab names; keep that fstab
     * for trillian-install and give the live system one without a / line
     * (else systemd-remount-fs fails on it). */
    char *fstab = path_join(dir, "etc/fstab");
    if (rc == 0 && path_exists(fstab)) {
        rc = fstree_add(cx, t, "usr/share/trillian/fstab.installed", fstab, 0644,
                        cx->source_date_epoch);
        if (rc == 0)
            rc = fstree_add_text(cx, t, "etc/fstab",
                                 "# /etc/fstab of a Trillian live system (generated): / is the "
                                 "squashfs root\n# with a tmpfs overlay, mounted by the "
                                 "initramfs. trillian-install puts\n# "
                                 "/usr/share/trillian/fstab.installed in place on the "
                                 "installed system.\n",
                                 0644, cx->source_date_epoch);
    }
    free(fstab);
    free(tar);
    free(dir);
    return rc;
}

static int append_file(int out, const char *src)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    char *chunk = xmalloc(1 << 20);
    int rc = 0;
    for (;;) {
        ssize_t r = read(in, chunk, 1 << 20);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -1;
            break;
        }
        if (r == 0)
            break;
        if (write(out, chunk, (size_t)r) != r) {
            rc = -1;
            break;
        }
    }
    free(chunk);
    close(in);
    return rc;
}

int live_initrd(const struct stage_ctx *cx, const struct fs_tree *t, const char *out,
                long long *sq_bytes)
{
    char *sq = path_join(cx->work, "root.squashfs");
    char *cpio = path_join(cx->work, "root.cpio");
    char *initrd = cx_dep_file(cx, "initramfs", "initrd.img");
    int rc = 1, fd = -1;
    if (fsimage_squashfs(cx, t, sq, cx_str(cx, "squashfs_comp"), cx_int(cx, "squashfs_level", 0),
                         cx->source_date_epoch))
        goto done;
    *sq_bytes = fsimage_file_size(sq);
    if (fsimage_cpio_one(cx, cpio, "root.squashfs", sq, cx->source_date_epoch))
        goto done;
    long long isize = fsimage_file_size(initrd);
    if (isize <= 0) {
        cx_fail(cx, "the initramfs stage's output has no initrd.img (%s); rebuild it", initrd);
        goto done;
    }
    fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    static const char zeros[4] = {0};
    if (fd < 0 || append_file(fd, initrd) < 0 ||
        write(fd, zeros, (size_t)((4 - isize % 4) % 4)) < 0 || append_file(fd, cpio) < 0 ||
        close(fd) < 0) {
        fd = -1;
        cx_fail(cx, "cannot write %s: %s", out, strerror(errno));
        goto done;
    }
    fd = -1;
    cx_log(cx, "initrd: %lld bytes of initramfs + %lld bytes of squashfs root", isize,
           *sq_bytes);
    rc = 0;
done:
    if (fd >= 0)
        close(fd);
    unlink(cpio);
    free(sq);
    free(cpio);
    free(initrd);
    return rc;
}

static bool drop_word(const char *w, size_t n)
{
    static const char *const drop[] = {"root=", "rootfstype=", "rootflags=", NULL};
    for (size_t i = 0; drop[i]; i++)
        if (n >= strlen(drop[i]) && strncmp(w, drop[i], strlen(drop[i])) == 0)
            return true;
    return false;
}

char *live_cmdline(const struct stage_ctx *cx)
{
    const char *set = cx_str(cx, "cmdline");
    char *base = NULL;
    if (set) {
        base = xstrdup(set);
    } else if (st_has_stage(cx->st, "bootloader")) {
        char *p = path_join(cx_dep(cx, "bootloader"), "cmdline");
        if (read_file(p, &base, NULL) < 0)
            base = xstrdup("console=ttyS0,115200");
        free(p);
    } else {
        base = xstrdup("console=ttyS0,115200");
    }
    struct buf b = BUF_INIT;
    bool has_root = false;
    for (const char *w = base; *w;) {
        while (*w == ' ' || *w == '\t' || *w == '\n' || *w == '\r')
            w++;
        size_t n = strcspn(w, " \t\n\r");
        if (!n)
            break;
        if (set && strncmp(w, "root=", 5) == 0)
            has_root = true;
        if (set || !drop_word(w, n)) {
            if (b.n)
                buf_puts(&b, " ");
            buf_add(&b, w, n);
        }
        w += n;
    }
    if (!has_root)
        buf_printf(&b, "%s%s", b.n ? " " : "", LIVE_ROOT_ARG);
    free(base);
    return buf_detach(&b);
}

int live_grub_image(const struct stage_ctx *cx, const char *out, const char *prefix,
                    const char *early_cfg, const char *const *modules)
{
    static const char *const common[] = {
        "normal", "configfile", "linux", "echo", "test", "sleep", "reboot", "halt", "gzio",
        "part_gpt", "part_msdos", "fat", "search", "search_fs_file", "search_label", "ls",
        "cat", "efi_gop", NULL};
    struct strlist argv = {0};
    char *mkimage = NULL, *moddir = NULL;
    /* the recipe's GRUB when it builds one (grub_pkg.h), else the host's */
    if (grub_pkg_stage(cx->st) && strcmp(st_section(cx->st), "bootloader") != 0) {
        if (grub_pkg_files(cx, grub_format(cx->arch), &mkimage, &moddir))
            return 1;
        strlist_push(&argv, mkimage);
        strlist_push(&argv, "-d");
        strlist_push(&argv, moddir);
        free(mkimage);
        free(moddir);
    } else {
        strlist_push(&argv, "grub-mkimage");
    }
    strlist_push(&argv, "-O");
    strlist_push(&argv, grub_format(cx->arch));
    strlist_push(&argv, "-o");
    strlist_push(&argv, out);
    strlist_push(&argv, "-p");
    strlist_push(&argv, prefix);
    char *cfg = NULL;
    if (early_cfg) {
        cfg = path_join(cx->work, "grub-early.cfg");
        if (write_file_atomic(cfg, early_cfg, strlen(early_cfg), 0644) < 0) {
            int e = errno;
            cx_fail(cx, "cannot write %s: %s", cfg, strerror(e));
            free(cfg);
            strlist_free(&argv);
            return 1;
        }
        strlist_push(&argv, "-c");
        strlist_push(&argv, cfg);
    }
    for (size_t i = 0; common[i]; i++)
        strlist_push(&argv, common[i]);
    for (size_t i = 0; modules && modules[i]; i++)
        strlist_push(&argv, modules[i]);
    int st = cx_run(cx, (const char *const *)argv.v);
    strlist_free(&argv);
    free(cfg);
    if (st != 0)
        return cx_fail(cx, "grub-mkimage failed (exit %d) making %s; see the log", st, out);
    return 0;
}

char *live_grub_cfg(const char *title, const char *kernel, const char *initrd,
                    const char *cmdline)
{
    return xasprintf("# Trillian live boot (generated)\n"
                     "set timeout=0\n"
                     "set default=0\n"
                     "menuentry \"%s\" {\n"
                     "\techo \"Loading %s ...\"\n"
                     "\tlinux %s %s\n"
                     "\techo \"Loading %s ...\"\n"
                     "\tinitrd %s\n"
                     "}\n",
                     title, kernel, kernel, cmdline, initrd, initrd);
}

char *live_elilo_conf(const char *title, const char *kernel, const char *initrd,
                      const char *cmdline)
{
    return xasprintf("# Trillian live boot (generated)\n"
                     "relocatable\n"
                     "prompt\n"
                     "timeout=1\n"
                     "default=trillian\n"
                     "\n"
                     "image=%s\n"
                     "\tlabel=trillian\n"
                     "\tdescription=\"%s\"\n"
                     "\tinitrd=%s\n"
                     "\tappend=\"%s\"\n",
                     kernel, title, initrd, cmdline);
}

int live_copy_esp_loader(const struct stage_ctx *cx, const char *out)
{
    char *rel = xasprintf("esp/EFI/BOOT/%s", live_efi_name(cx->arch));
    char *src = path_join(cx_dep(cx, "bootloader"), rel);
    int rc = 0;
    if (!path_exists(src))
        rc = cx_fail(cx, "loader = \"elilo\" takes the loader from the bootloader stage's ESP "
                     "tree, which has no %s; build the ESP with elilo", rel);
    else if (copy_file(src, out) < 0)
        rc = cx_fail(cx, "cannot copy %s to %s: %s", src, out, strerror(errno));
    free(rel);
    free(src);
    return rc;
}

char *live_cmdline_root(const struct stage_ctx *cx, const char *root)
{
    char *c = live_cmdline(cx);
    char *at = strstr(c, LIVE_ROOT_ARG);
    if (!at)
        return c;
    size_t n = strlen(LIVE_ROOT_ARG);
    if (!root && at > c && at[-1] == ' ')
        at--, n++;
    char *r = xasprintf("%.*s%s%s", (int)(at - c), c, root ? root : "", at + n);
    free(c);
    return r;
}
