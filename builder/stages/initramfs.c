/* initramfs, kind "initramfs": a small initramfs of our own, as a newc cpio
 * (what the kernel unpacks), gzip- or zstd-compressed, written reproducibly
 * by the archive module (sorted entries, every mtime = source_date_epoch,
 * owners 0:0, device nodes from a metadata table, no mknod, no root).
 *
 * Contents:
 *   init                     firmware/initramfs/init (or the `init` setting):
 *                            POSIX sh that mounts the root and switch_roots
 *   bin/busybox, bin/sh      a static busybox for the recipe's arch; init
 *                            installs the other applet links at boot
 *   dev/console, dev/null    device nodes (5,1 and 1,3), from the table
 *   lib/modules/RELEASE/...  the `modules` and their dependencies, resolved
 *                            from the kernel stage's modules.dep, with a
 *                            modules.dep trimmed to what is shipped
 *   etc/trillian/modules     the module files in load order (init insmods them)
 *   etc/trillian/kernel-release
 *   plus the `overlay` tree, if any.
 *
 * Busybox comes from the `busybox` setting (a file), or else from the
 * architecture's row in busybox_sources (amd64: Debian's busybox-static, its
 * /bin/busybox if the package is installed, else pinned at plan time and
 * fetched with apt-get download). An architecture without a default
 * package (ia64) takes the recipe's packages stage of kind busybox with
 * static = true (built against the recipe's C library), else needs the
 * setting. The binary is checked: ELF, the recipe's machine, static. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/archive.h"
#include "drivers/debfetch.h"
#include "formats/modules_dep.h"
#include "base/json_out.h"
#include "stage.h"

static const char *const compressions[] = {"gzip", "zstd", "none", NULL};

static const struct field fields[] = {
    {"compression", F_ENUM, false, compressions, "gzip",
     "compression of the cpio archive (the kernel needs CONFIG_RD_GZIP/RD_ZSTD)"},
    {"modules", F_STRING_LIST, false, NULL, NULL,
     "kernel modules the root needs (dependencies are added from modules.dep)"},
    {"busybox", F_PATH, false, NULL, NULL,
     "a static busybox for the target arch (amd64 default: Debian's busybox-static; ia64: the "
     "recipe's packages stage of kind busybox with static = true)"},
    {"init", F_PATH, false, NULL, NULL,
     "the /init script (default: Trillian's firmware/initramfs/init)"},
    {"overlay", F_PATH, false, NULL, NULL, "a directory tree copied over the initramfs"},
    {0},
};

static const char *const outputs[] = {"initrd.img", "stage-manifest.json", NULL};

/* Where busybox comes from when the recipe does not say. */
struct busybox_source {
    const char *arch;      /* recipe arch */
    unsigned elf_machine;  /* e_machine the binary must have */
    const char *package;   /* Debian package, or NULL: no default */
    const char *member;    /* the binary's path inside the package, and on a
                              host that has the package installed */
};

static const struct busybox_source busybox_sources[] = {
    {"amd64", 62 /* EM_X86_64 */, "busybox-static", "bin/busybox"},
    /* ia64: no Debian package reachable here; a packages stage of kind
     * busybox with static = true (static_busybox_stage), or the setting */
    {"ia64", 50 /* EM_IA_64 */, NULL, NULL},
    {0},
};

static const struct busybox_source *busybox_source(const char *arch)
{
    for (size_t i = 0; busybox_sources[i].arch; i++)
        if (strcmp(busybox_sources[i].arch, arch) == 0)
            return &busybox_sources[i];
    return NULL;
}

static uint64_t rd(const unsigned char *p, int n, bool le)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[le ? i : n - 1 - i] << (8 * i);
    return v;
}

/* Checks that DATA is an ELF executable for MACHINE without a program
 * interpreter (static). Returns NULL or a reason (static string). */
static const char *elf_check(const unsigned char *d, size_t n, unsigned machine,
                             unsigned *got_machine)
{
    *got_machine = 0;
    if (n < 52 || memcmp(d, "\177ELF", 4) != 0)
        return "is not an ELF executable";
    bool is64 = d[4] == 2, le = d[5] == 1;
    if ((d[4] != 1 && d[4] != 2) || (d[5] != 1 && d[5] != 2))
        return "has a malformed ELF header";
    if (is64 && n < 64)
        return "has a truncated ELF header";
    *got_machine = (unsigned)rd(d + 18, 2, le);
    if (*got_machine != machine)
        return "is built for another machine";
    uint64_t phoff = is64 ? rd(d + 32, 8, le) : rd(d + 28, 4, le);
    uint64_t phentsize = is64 ? rd(d + 54, 2, le) : rd(d + 42, 2, le);
    uint64_t phnum = is64 ? rd(d + 56, 2, le) : rd(d + 44, 2, le);
    if (phnum && (phoff > n || phentsize < 4 || phentsize > n))
        return "has a truncated ELF program header table";
    for (uint64_t i = 0; i < phnum; i++) {
        uint64_t off = phoff + i * phentsize;
        if (off + 4 > n)
            return "has a truncated ELF program header table";
        if (rd(d + off, 4, le) == 3 /* PT_INTERP */)
            return "is dynamically linked (the initramfs has no libc: use a static busybox, "
                   "like Debian's busybox-static)";
    }
    return NULL;
}

/* The installed package's binary (/bin/busybox from busybox-static), if
 * it is there and passes elf_check: static, for the arch. New path or NULL. */
static char *host_busybox(const struct busybox_source *src)
{
    if (!src || !src->member)
        return NULL;
    char *p = xasprintf("/%s", src->member), *data = NULL;
    size_t n = 0;
    unsigned machine;
    bool ok = read_file(p, &data, &n) == 0 &&
              !elf_check((const unsigned char *)data, n, src->elf_machine, &machine);
    free(data);
    if (!ok) {
        free(p);
        return NULL;
    }
    return p;
}

static char *default_init(void) { return trillian_data_path("firmware/initramfs/init"); }

/* The recipe's packages stage of kind busybox with static = true, or NULL:
 * where an arch without a default busybox package (ia64) gets its busybox
 * when the `busybox` setting is unset. */
static const struct stage *static_busybox_stage(const struct stage *st)
{
    const struct stage *p;
    for (size_t i = 0; (p = st_peers(st, "packages", "busybox", &i));)
        if (st_bool(p, "static", false))
            return p;
    return NULL;
}

static int declare(struct stage *st)
{
    struct strlist mods = {0};
    st_list(st, "modules", &mods);
    for (size_t i = 0; i < mods.n; i++)
        if (!mods.v[i][0] || strpbrk(mods.v[i], "/ \t"))
            st_error(st, "modules", "'%s' is not a module name (write names like "
                     "\"virtio_blk\", without paths)", mods.v[i]);
    if (mods.n)
        st_need(st, "kernel");
    strlist_free(&mods);

    if (!st_str(st, "init")) {
        char *init = default_init();
        st_input_file(st, "firmware/initramfs/init", init);
        free(init);
    }

    const struct busybox_source *src = busybox_source(st_arch(st));
    if (!st_str(st, "busybox")) {
        const struct stage *bb = src && src->package ? NULL : static_busybox_stage(st);
        if (bb) {
            st_need_file(st, st_name(bb), "root/bin/busybox");
            st_input_text(st, "busybox-stage", st_name(bb));
            return 0;
        }
        if (!src || !src->package)
            return st_error(st, "busybox", "is needed for arch %s: Trillian has no default "
                            "busybox there yet; set it to the path of a static busybox built "
                            "for %s, or add packages stage { kind = \"busybox\"; name = "
                            "\"busybox-static\"; static = true; }", st_arch(st), st_arch(st));
        char *host = host_busybox(src);
        if (host) {
            st_input_file(st, "busybox (installed)", host);
            free(host);
            return 0;
        }
        struct deb_pin pin;
        char *err;
        if (debfetch_resolve(src->package, st_arch(st), NULL, &pin, &err) < 0) {
            st_error(st, "busybox", "the default busybox (Debian's %s): %s", src->package, err);
            free(err);
            return -1;
        }
        st_input_text(st, "busybox-package", pin.package);
        st_input_text(st, "busybox-version", pin.version);
        st_input_text(st, "busybox-sha256", pin.sha256);
        deb_pin_free(&pin);
        st_tool(st, "apt-get");
    }
    return 0;
}

/* ---- busybox --------------------------------------------------------------- */

/* "v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1)" from the banner in the binary. */
static char *busybox_version(const char *d, size_t n)
{
    static const char tag[] = "BusyBox v";
    const char *p = memmem(d, n, tag, sizeof tag - 1);
    if (!p)
        return xstrdup("unknown");
    p += 8;
    size_t len = 0;
    while (p + len < d + n && p[len] && p[len] != '\n' && len < 80)
        len++;
    char *v = xstrndup(p, len);
    char *close = strchr(v, ')'); /* drop what follows the build note */
    if (close)
        close[1] = 0;
    return v;
}

/* Gets busybox into DEST (mode 0755). *origin: where it came from. */
static int get_busybox(const struct stage_ctx *cx, const char *dest, char **origin)
{
    char *path = cx_path(cx, "busybox");
    const struct busybox_source *src = busybox_source(cx->arch);
    *origin = NULL;
    const struct stage *bb = path || (src && src->package) ? NULL : static_busybox_stage(cx->st);
    if (bb) {
        path = cx_dep_file(cx, st_name(bb), "root/bin/busybox");
        *origin = xasprintf("packages stage '%s' (static)", st_name(bb));
    } else if (!path && (path = host_busybox(src)) != NULL) {
        *origin = xasprintf("%s (installed: %s)", src->package, path);
    } else if (path) {
        *origin = xstrdup(path);
    } else {
        struct deb_pin pin;
        char *err;
        if (debfetch_resolve(src->package, cx->arch, NULL, &pin, &err) < 0) {
            int rc = cx_fail(cx, "initramfs.busybox: the default busybox (Debian's %s): %s",
                             src->package, err);
            free(err);
            return rc;
        }
        char *deb = debfetch_get(cx, &pin, "initramfs.busybox");
        if (!deb) {
            deb_pin_free(&pin);
            return 1;
        }
        char *dir = path_join(cx->work, "busybox-deb");
        mkdir_p(dir, 0755);
        char aerr[ARC_ERRLEN];
        if (arc_deb_extract(deb, dir, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL, aerr) < 0) {
            int rc = cx_fail(cx, "cannot unpack %s: %s (initramfs.busybox: set it to a static "
                             "busybox instead)", deb, aerr);
            free(dir);
            free(deb);
            deb_pin_free(&pin);
            return rc;
        }
        path = path_join(dir, src->member);
        *origin = xasprintf("%s %s (sha256 %s)", pin.package, pin.version, pin.sha256);
        free(dir);
        free(deb);
        deb_pin_free(&pin);
    }
    int rc = 0;
    if (copy_file(path, dest) < 0 || chmod(dest, 0755) < 0)
        rc = cx_fail(cx, "cannot copy busybox from %s: %s (initramfs.busybox)", path,
                     strerror(errno));
    free(path);
    return rc;
}

/* ---- modules --------------------------------------------------------------- */

static char *trim_line(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

/* The kernel stage's release: its `release` file, else the one directory
 * below modules/lib/modules. */
static char *kernel_release(const struct stage_ctx *cx, const char *kdir)
{
    char *p = path_join(kdir, "release"), *text = NULL;
    if (read_file(p, &text, NULL) == 0 && trim_line(text)[0]) {
        free(p);
        return text;
    }
    free(text);
    free(p);
    char *mods = path_join(kdir, "modules/lib/modules");
    struct strlist files = {0};
    list_tree(mods, &files);
    char *rel = NULL;
    for (size_t i = 0; i < files.n; i++)
        if (str_ends(files.v[i], "/modules.dep")) {
            if (rel) { /* two releases: ambiguous */
                free(rel);
                rel = NULL;
                break;
            }
            rel = xstrndup(files.v[i], strlen(files.v[i]) - strlen("/modules.dep"));
        }
    strlist_free(&files);
    free(mods);
    if (!rel)
        cx_fail(cx, "the kernel stage's output (%s) has no release file and not exactly one "
                "modules/lib/modules/RELEASE/modules.dep (initramfs.modules needs the kernel "
                "stage to ship its modules with modules.dep)", kdir);
    return rel;
}

/* Copies the resolved modules, a trimmed modules.dep and the load list.
 * Adds the manifest's module fields to JSON. */
static int add_modules(const struct stage_ctx *cx, const char *root, json_object *json)
{
    struct strlist names = {0};
    cx_list(cx, "modules", &names);
    if (!names.n) {
        json_object_object_add(json, "kernel_release", NULL);
        json_object_object_add(json, "modules", json_object_new_array());
        json_object_object_add(json, "module_files", json_object_new_array());
        json_object_object_add(json, "builtin", json_object_new_array());
        strlist_free(&names);
        return 0;
    }
    const char *kdir = cx_dep(cx, "kernel");
    char *rel = kdir ? kernel_release(cx, kdir) : NULL;
    if (!rel) {
        strlist_free(&names);
        return kdir ? 1 : cx_fail(cx, "initramfs.modules needs the kernel stage's output");
    }
    char *src = xasprintf("%s/modules/lib/modules/%s", kdir, rel);
    char *dep_path = path_join(src, "modules.dep");
    char *builtin_path = path_join(src, "modules.builtin");
    char *dep_text = NULL, *builtin_text = NULL, *err = NULL;
    struct modules_dep *md = NULL;
    struct strlist order = {0}, builtin = {0};
    struct buf trimmed = BUF_INIT, load = BUF_INIT;
    int rc = 1;
    if (read_file(dep_path, &dep_text, NULL) < 0) {
        cx_fail(cx, "cannot read %s: %s (the kernel stage must run depmod; "
                "initramfs.modules needs it)", dep_path, strerror(errno));
        goto out;
    }
    if (read_file(builtin_path, &builtin_text, NULL) < 0)
        builtin_text = NULL; /* optional: then built-in names are unknown */
    md = modules_dep_parse(dep_text, builtin_text, &err);
    if (!md) {
        cx_fail(cx, "%s: %s", dep_path, err);
        goto out;
    }
    if (modules_dep_resolve(md, &names, &order, &builtin, &err) < 0) {
        cx_fail(cx, "initramfs.modules: %s, in kernel %s (check the name with modinfo, or "
                "build the module in the kernel config)", err, rel);
        goto out;
    }
    char *dst = xasprintf("%s/lib/modules/%s", root, rel);
    for (size_t i = 0; i < order.n; i++) {
        char *from = path_join(src, order.v[i]);
        char *to = path_join(dst, order.v[i]);
        char *parent = path_dirname(to);
        int ok = mkdir_p(parent, 0755) == 0 && copy_file(from, to) == 0 && chmod(to, 0644) == 0;
        if (!ok)
            cx_fail(cx, "cannot copy module %s: %s", from, strerror(errno));
        free(parent);
        free(to);
        free(from);
        if (!ok) {
            free(dst);
            goto out;
        }
        buf_printf(&load, "/lib/modules/%s/%s\n", rel, order.v[i]);
    }
    /* modules.dep lines of the shipped modules, for modprobe in the shell. */
    char *save = NULL;
    for (char *line = strtok_r(dep_text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *path = xstrndup(line, (size_t)(colon - line));
        if (strlist_contains(&order, path))
            buf_printf(&trimmed, "%s\n", line);
        free(path);
    }
    char *reltext = xasprintf("%s\n", rel);
    int w = cx_write_in(cx, dst, "modules.dep", trimmed.p, trimmed.n, 0644);
    if (w == 0 && builtin_text)
        w = cx_write_in(cx, dst, "modules.builtin", builtin_text, strlen(builtin_text), 0644);
    if (w == 0)
        w = cx_write_in(cx, root, "etc/trillian/modules", load.p, load.n, 0644);
    if (w == 0)
        w = cx_write_in(cx, root, "etc/trillian/kernel-release", reltext, strlen(reltext),
                        0644);
    free(reltext);
    free(dst);
    if (w)
        goto out;
    cx_log(cx, "modules for %s: %zu requested, %zu files with dependencies, %zu built in",
           rel, names.n, order.n, builtin.n);

    json_add_str(json, "kernel_release", rel);
    json_object_object_add(json, "modules", json_strlist(&names));
    json_object_object_add(json, "module_files", json_strlist(&order));
    json_object_object_add(json, "builtin", json_strlist(&builtin));
    rc = 0;
out:
    modules_dep_free(md);
    strlist_free(&names);
    strlist_free(&order);
    strlist_free(&builtin);
    buf_free(&trimmed);
    buf_free(&load);
    free(err);
    free(dep_text);
    free(builtin_text);
    free(src);
    free(dep_path);
    free(builtin_path);
    free(rel);
    return rc;
}

/* ---- run ------------------------------------------------------------------- */

static int run(struct stage_ctx *cx)
{
    const char *comp = cx_str(cx, "compression");
    int filter = arc_filter_from_name(comp);
    if (filter < 0 || filter == ARC_XZ)
        return cx_fail(cx, "initramfs.compression: '%s' is not gzip, zstd or none", comp);
    char *root = path_join(cx->work, "root");
    char *origin = NULL, *bbdata = NULL, *bbver = NULL;
    json_object *modjson = json_object_new_object();
    struct arc_table meta = {0};
    int rc = 1;
    rm_rf(root);
    static const char *const dirs[] = {"bin", "dev", "etc/trillian", "lib/modules", "proc",
                                       "root", "run", "sbin", "sys", "tmp", "usr/bin",
                                       "usr/sbin"};
    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        char *d = path_join(root, dirs[i]);
        int e = mkdir_p(d, 0755);
        free(d);
        if (e < 0) {
            cx_fail(cx, "cannot create %s/%s: %s", root, dirs[i], strerror(errno));
            goto out;
        }
    }

    /* busybox, checked for the recipe's machine and static linking */
    char *bb = path_join(root, "bin/busybox");
    int g = get_busybox(cx, bb, &origin);
    size_t bblen = 0;
    if (g == 0 && read_file(bb, &bbdata, &bblen) < 0)
        g = cx_fail(cx, "cannot read %s: %s", bb, strerror(errno));
    free(bb);
    if (g)
        goto out;
    const struct busybox_source *src = busybox_source(cx->arch);
    unsigned machine = 0;
    const char *why = src ? elf_check((const unsigned char *)bbdata, bblen, src->elf_machine,
                                      &machine)
                          : NULL;
    if (why) {
        if (machine && machine != src->elf_machine)
            cx_fail(cx, "initramfs.busybox: %s %s (ELF machine %u; arch %s needs %u): set it "
                    "to a static busybox built for %s", origin, why, machine, cx->arch,
                    src->elf_machine, cx->arch);
        else
            cx_fail(cx, "initramfs.busybox: %s %s", origin, why);
        goto out;
    }
    bbver = busybox_version(bbdata, bblen);
    char *sh = path_join(root, "bin/sh");
    int e = symlink("busybox", sh);
    free(sh);
    if (e < 0) {
        cx_fail(cx, "cannot create bin/sh: %s", strerror(errno));
        goto out;
    }

    /* init */
    char *init_src = cx_path(cx, "init");
    if (!init_src)
        init_src = default_init();
    char *init_dst = path_join(root, "init");
    e = copy_file(init_src, init_dst) < 0 || chmod(init_dst, 0755) < 0;
    if (e)
        cx_fail(cx, "cannot copy the init script %s: %s (initramfs.init)", init_src,
                strerror(errno));
    free(init_dst);
    free(init_src);
    if (e)
        goto out;

    if (add_modules(cx, root, modjson))
        goto out;

    char *overlay = cx_path(cx, "overlay");
    if (overlay) {
        e = !is_dir(overlay) || copy_tree(overlay, root, false) < 0;
        if (e)
            cx_fail(cx, "initramfs.overlay: cannot copy %s (expected a directory): %s", overlay,
                    strerror(errno));
        free(overlay);
        if (e)
            goto out;
    }

    /* Device nodes and fixed modes through the table: no mknod, no root. */
    arc_table_addf(&meta, "dev/console", ARC_CHR, 0600, 0, 0, 5, 1, NULL);
    arc_table_addf(&meta, "dev/null", ARC_CHR, 0666, 0, 0, 1, 3, NULL);
    arc_table_addf(&meta, "root", ARC_KEEP, 0700, -1, -1, 0, 0, NULL);
    arc_table_addf(&meta, "tmp", ARC_KEEP, 01777, -1, -1, 0, 0, NULL);

    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.format = ARC_CPIO;
    o.filter = (enum arc_filter)filter;
    o.mtime = cx->source_date_epoch;
    o.no_xattrs = true;
    o.meta = &meta;
    char *img = path_join(cx->out, "initrd.img");
    char aerr[ARC_ERRLEN];
    e = arc_write_tree(root, img, &o, aerr);
    struct stat sb;
    if (e < 0)
        cx_fail(cx, "cannot write %s: %s", img, aerr);
    else if (stat(img, &sb) == 0)
        cx_log(cx, "initrd.img: %lld bytes (%s), busybox %s", (long long)sb.st_size, comp,
               bbver);
    free(img);
    if (e < 0)
        goto out;

    json_object *m = json_object_new_object(), *bbj = json_object_new_object();
    json_add_str(bbj, "version", bbver);
    json_add_str(bbj, "from", origin);
    json_object_object_add(m, "busybox", bbj);
    json_add_str(m, "compression", comp);
    json_object_object_foreach(modjson, k, v)
        json_object_object_add(m, k, json_object_get(v));
    if (cx_write_manifest(cx, m))
        goto out;
    rc = 0;
out:
    rm_rf(root);
    free(root);
    free(origin);
    free(bbdata);
    free(bbver);
    json_object_put(modjson);
    arc_table_free(&meta);
    return rc;
}

const struct stage_kind stage_initramfs = {
    .name = "initramfs",
    .section = "initramfs",
    .version = 1,
    .summary = "a busybox initramfs (newc cpio) that mounts the root by UUID and switch_roots",
    .fields = fields,
    .outputs = outputs,
    .declare = declare,
    .run = run,
};
