/* images kinds "ski-bundle" and "qemu-bundle": a directory NAME/ and a
 * reproducible tarball NAME.tar.zst (or .gz, .xz) holding what one emulator needs to boot
 * the build somewhere else, with a run script and a README.
 *
 * Emulators are rows of a table (kind + recipe arch): which kernel file goes
 * in (and which ELF machine it must be), how the disk is named and stored,
 * whether the initramfs goes in, the firmware and its variable store, and
 * the script and README templates (firmware/bundles/, files ending in .in, @VAR@ replaced by
 * shell-quoted values). Adding an emulator is a row and, if its command line
 * differs, a template; run() is one code path for all of them.
 *
 * ski-bundle (ia64): the hp-sim kernel's vmlinux (checked to be an IA-64
 * ELF), the initramfs, and a disk stage's NAME.img as "sda" (Ski's simscsi
 * driver opens PREFIX"a" for simscsi=PREFIX), for bski + ski-bootloader.
 * qemu-bundle: a disk stage's image as qcow2 for qemu-system-ia64's
 * out-of-tree itanium2-vpc machine (with a zeroed 64 KiB NVRAM file; the
 * same options as the qemu-ia64 boot check, emulator.c), or for
 * qemu-system-x86_64 + OVMF on amd64. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/archive.h"
#include "formats/binfmt.h"
#include "base/json_out.h"
#include "stage.h"

struct bundle_row {
    const char *kind;        /* stage kind */
    const char *arch;        /* recipe arch */
    const char *script;      /* run script's name in the bundle */
    const char *script_tmpl; /* below the data directory */
    const char *readme_tmpl;
    const char *kernel;      /* kernel stage file copied under this name, or NULL */
    int kernel_elf;          /* e_machine the kernel must have (0: not checked) */
    const char *disk;        /* the disk's name in the bundle */
    const char *disk_format; /* "raw" (copied) or "qcow2" (qemu-img convert) */
    bool initramfs;          /* takes the initramfs stage's initrd.img */
    /* qemu rows */
    const char *qemu, *machine;
    const char *machine_opts; /* after nvram= (bios mode): ",firmware-console=serial" */
    const char *drive_opts;   /* after format=: ",if=virtio", or "" for the default */
    const char *firmware_mode; /* "bios" (-bios FILE) or "pflash" (OVMF) */
    const char *firmware_env, *firmware_default;
    const char *vars_env, *vars_default; /* pflash: variable store template */
    const char *nvram;       /* EFI variable store's name in the bundle */
    bool nvram_zeroed;       /* written at build time (nvram_kib of zeros);
                                else copied from vars_default at first run */
    long nvram_only_kib;     /* > 0: the one size the machine accepts */
    const char *note;        /* README paragraph about the emulator */
    const char *emulator;    /* for messages */
};

static const struct bundle_row rows[] = {
    {
        .kind = "ski-bundle", .arch = "ia64", .script = "run-ski.sh",
        .script_tmpl = "firmware/bundles/run-ski.sh.in",
        .readme_tmpl = "firmware/bundles/README-ski.in",
        .kernel = "vmlinux", .kernel_elf = BINFMT_ELF_IA64,
        .disk = "sda", .disk_format = "raw", .initramfs = true, .emulator = "Ski",
    },
    {
        .kind = "qemu-bundle", .arch = "ia64", .script = "run-qemu.sh",
        .script_tmpl = "firmware/bundles/run-qemu.sh.in",
        .readme_tmpl = "firmware/bundles/README-qemu.in",
        .disk = "disk.qcow2", .disk_format = "qcow2",
        .qemu = "qemu-system-ia64", .machine = "itanium2-vpc",
        .machine_opts = ",firmware-console=serial", .drive_opts = "",
        .firmware_mode = "bios", .firmware_env = "QEMU_IA64_BIOS", .firmware_default = "",
        .nvram = "nvram.bin", .nvram_zeroed = true, .nvram_only_kib = 64,
        .emulator = "qemu-system-ia64",
        .note = "qemu-system-ia64 and its itanium2-vpc machine are not part of QEMU upstream\n"
                "and not in Debian: they come from an out-of-tree QEMU\n"
                "(github.com/syunnPC/qemu-system-ia64), which also builds the machine's EFI\n"
                "firmware, ia64-firmware.bin. Trillian builds both with an `emulators` entry\n"
                "of kind qemu-ia64 (recipes/include/ia64-qemu.cfg): the firmware is that\n"
                "stage's share/qemu/ia64-firmware.bin; give it as the first argument or set\n"
                "QEMU_IA64_BIOS. nvram.bin, shipped zeroed (64 KiB: the machine ignores any\n"
                "other size), is the machine's nvram= file for the firmware's variables. The\n"
                "machine has no virtio: the disk is on its default controller. Trillian's\n"
                "boot check runs the same options (docs/ia64.md).",
    },
    {
        .kind = "qemu-bundle", .arch = "amd64", .script = "run-qemu.sh",
        .script_tmpl = "firmware/bundles/run-qemu.sh.in",
        .readme_tmpl = "firmware/bundles/README-qemu.in",
        .disk = "disk.qcow2", .disk_format = "qcow2",
        .qemu = "qemu-system-x86_64", .machine = "q35", .machine_opts = "",
        .drive_opts = ",if=virtio",
        .firmware_mode = "pflash", .firmware_env = "OVMF_CODE",
        .firmware_default = "/usr/share/OVMF/OVMF_CODE.fd",
        .vars_env = "OVMF_VARS", .vars_default = "/usr/share/OVMF/OVMF_VARS.fd",
        .nvram = "ovmf-vars.fd", .nvram_zeroed = false, .emulator = "qemu-system-x86_64",
        .note = "Needs QEMU and OVMF (Debian: apt-get install qemu-system-x86 ovmf). On the\n"
                "first run the script copies OVMF's empty variable store (OVMF_VARS, default\n"
                "/usr/share/OVMF/OVMF_VARS.fd) to ovmf-vars.fd next to the disk.",
    },
};

/* The tarball's compression (libarchive filter of the same name; suffix from
 * tarball_name). */
static const char *const tarball_choices[] = {"zstd", "gzip", "xz", NULL};
#define TARBALL_FIELD                                                                        \
    {"tarball", F_ENUM, false, tarball_choices, "zstd",                                     \
     "compression of NAME.tar.zst/.gz/.xz (zstd: multithreaded, the fastest; gzip: for "    \
     "tar without zstd)"}

static char *tarball_name(const char *name, const char *comp)
{
    return xasprintf("%s.tar.%s", name,
                     strcmp(comp, "zstd") == 0   ? "zst"
                     : strcmp(comp, "gzip") == 0 ? "gz"
                                                 : comp);
}

static const struct field ski_fields[] = {
    {"disk", F_STRING, false, NULL, NULL,
     "images entry whose NAME.img becomes Ski's disk sda (default: none; boot the initramfs)"},
    {"cmdline", F_STRING, false, NULL, NULL,
     "kernel command line (default with `disk`: root=/dev/sda2, the disk stage's root "
     "partition; else empty)"},
    {"initramfs", F_BOOL, false, NULL, "true",
     "include the initramfs stage's initrd.img (passed with bski -initramfs) if the recipe "
     "has one"},
    TARBALL_FIELD,
    {0},
};

static const struct field qemu_fields[] = {
    {"disk", F_STRING, true, NULL, NULL, "images entry whose NAME.img goes in as disk.qcow2"},
    {"memory_mib", F_INT, false, NULL, "1024", "guest memory in MiB (the script's default)"},
    {"nvram_kib", F_INT, false, NULL, "64",
     "ia64: size in KiB of the zeroed EFI NVRAM file nvram.bin (itanium2-vpc's nvram=; it "
     "takes only 64)"},
    TARBALL_FIELD,
    {0},
};

static const char *const outputs[] = {"stage-manifest.json", NULL};

static const struct bundle_row *find_row(const char *kind, const char *arch)
{
    for (size_t i = 0; i < ARRAY_LEN(rows); i++)
        if (strcmp(rows[i].kind, kind) == 0 && strcmp(rows[i].arch, arch) == 0)
            return &rows[i];
    return NULL;
}

static bool plain_name(const char *s)
{
    if (!*s || *s == '.' || *s == '-')
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
            return false;
    return true;
}

/* The kernel command line the bundle uses. */
static char *cmdline_of(const struct stage *st)
{
    const char *c = st_str(st, "cmdline");
    if (c)
        return xstrdup(c);
    return xstrdup(st_str(st, "disk") ? "root=/dev/sda2" : "");
}

static bool wants_initramfs(const struct stage *st, const struct bundle_row *r)
{
    return r->initramfs && st_bool(st, "initramfs", true) && st_has_stage(st, "initramfs");
}

static int declare(struct stage *st)
{
    const char *kind = st_kind(st);
    const struct bundle_row *r = find_row(kind, st_arch(st));
    if (!r) {
        struct buf b = BUF_INIT;
        for (size_t i = 0; i < ARRAY_LEN(rows); i++)
            if (strcmp(rows[i].kind, kind) == 0)
                buf_printf(&b, "%s%s", b.n ? ", " : "", rows[i].arch);
        st_error(st, NULL, "kind %s has no emulator for arch %s (it supports: %s)", kind,
                 st_arch(st), b.p);
        buf_free(&b);
        return -1;
    }
    const char *name = st_name(st);
    if (!plain_name(name))
        return st_error(st, "name", "'%s' names files and scripts: use letters, digits, '.', "
                        "'_' and '-' only", name);
    int bad = 0;
    const char *disk = st_str(st, "disk");
    if (disk) {
        if (strcmp(disk, name) == 0)
            bad |= st_error(st, "disk", "names this stage itself; give the disk image's entry");
        else
            st_need(st, disk); /* a missing stage is a recipe error there */
    }
    if (r->kernel)
        st_need(st, "kernel");
    bool initrd = false;
    if (r->initramfs && st_bool(st, "initramfs", true))
        initrd = st_want(st, "initramfs");
    if (initrd)
        st_need_file(st, "initramfs", "initrd.img");
    if (!disk && !initrd)
        bad |= st_error(st, "disk", "nothing to boot: set `disk` to a disk image entry or add "
                        "an initramfs section (initramfs = { kind = \"payload\"; } on ia64)");
    if (st_isset(st, "cmdline")) {
        const char *c = st_str(st, "cmdline");
        for (const char *p = c; p && *p; p++)
            if (iscntrl((unsigned char)*p)) {
                bad |= st_error(st, "cmdline", "must be one line without control characters");
                break;
            }
    }
    if (st_isset(st, "memory_mib")) {
        long long m = st_int(st, "memory_mib", 1024);
        if (m < 64 || m > 1048576)
            bad |= st_error(st, "memory_mib", "%lld is out of range (64 to 1048576)", m);
    }
    if (st_isset(st, "nvram_kib")) {
        long long k = st_int(st, "nvram_kib", 64);
        if (!r->nvram_zeroed)
            bad |= st_error(st, "nvram_kib", "only for arch ia64 (on %s the script copies "
                            "OVMF's variable store)", st_arch(st));
        else if (r->nvram_only_kib && k != r->nvram_only_kib)
            bad |= st_error(st, "nvram_kib", "%lld: %s ignores an NVRAM file of any size but "
                            "%ld KiB; remove the setting", k, r->machine, r->nvram_only_kib);
    }
    char *t = trillian_data_path(r->script_tmpl);
    st_input_file(st, "script template", t);
    free(t);
    t = trillian_data_path(r->readme_tmpl);
    st_input_file(st, "README template", t);
    free(t);
    if (strcmp(r->disk_format, "qcow2") == 0 && disk)
        st_tool(st, "qemu-img");
    st_output(st, name);
    char *tarball = tarball_name(name, st_str(st, "tarball"));
    st_output(st, tarball);
    free(tarball);
    return bad ? -1 : 0;
}

/* ---- templates ------------------------------------------------------------ */

struct vars {
    struct strlist k, v;
};

static void var(struct vars *vs, const char *k, const char *v)
{
    strlist_push(&vs->k, k);
    strlist_push(&vs->v, v ? v : "");
}

/* 'text' with ' written as '\'' : one shell word whatever it holds. */
static char *shq(const char *s)
{
    struct buf b = BUF_INIT;
    buf_puts(&b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            buf_puts(&b, "'\\''");
        else
            buf_add(&b, s, 1);
    }
    buf_puts(&b, "'");
    return buf_detach(&b);
}

/* Replaces every @NAME@ (NAME of A-Z, 0-9, _) by its value; an unknown NAME
 * is an error (a template typo), reported in *bad. */
static char *expand(const char *tmpl, const struct vars *vs, char **bad)
{
    struct buf b = BUF_INIT;
    *bad = NULL;
    for (const char *p = tmpl; *p;) {
        if (*p == '@') {
            const char *q = p + 1;
            while (isupper((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '_')
                q++;
            if (*q == '@' && q > p + 1) {
                size_t n = (size_t)(q - p - 1);
                const char *val = NULL;
                for (size_t i = 0; i < vs->k.n; i++)
                    if (strlen(vs->k.v[i]) == n && strncmp(vs->k.v[i], p + 1, n) == 0)
                        val = vs->v.v[i];
                if (!val) {
                    if (!*bad)
                        *bad = xstrndup(p, n + 2);
                } else {
                    buf_puts(&b, val);
                }
                p = q + 1;
                continue;
            }
        }
        buf_add(&b, p, 1);
        p++;
    }
    return buf_detach(&b);
}

static int write_template(const struct stage_ctx *cx, const char *rel, const char *dir,
                          const char *name, mode_t mode, const struct vars *vs)
{
    char *path = trillian_data_path(rel), *text = NULL, *bad = NULL;
    size_t len = 0;
    int rc = 1;
    if (read_file(path, &text, &len) < 0) {
        cx_fail(cx, "cannot read the template %s: %s (is TRILLIAN_DATA right?)", path,
                strerror(errno));
        goto out;
    }
    char *res = expand(text, vs, &bad);
    if (bad)
        cx_fail(cx, "template %s uses the unknown variable %s", path, bad);
    else
        rc = cx_write_in(cx, dir, name, res, strlen(res), mode);
    free(res);
out:
    free(bad);
    free(text);
    free(path);
    return rc;
}

/* ---- run ------------------------------------------------------------------ */

static int check_kernel(const struct stage_ctx *cx, const struct bundle_row *r,
                        const char *path)
{
    char err[BINFMT_ERRLEN];
    int m = binfmt_elf_machine(path, err);
    if (m < 0)
        return cx_fail(cx, "%s; the kernel stage must give the uncompressed %s ELF vmlinux "
                       "(a kernel built for the hp-sim platform, e.g. kernel.defconfig = "
                       "\"sim_defconfig\" with the hp-sim patch)",
                       err, binfmt_elf_machine_name(r->kernel_elf));
    if (r->kernel_elf && m != r->kernel_elf)
        return cx_fail(cx, "the kernel stage's %s is an ELF for %s (e_machine %d), not %s: "
                       "%s boots only an %s kernel (%s; check the kernel stage and the "
                       "recipe's arch)",
                       r->kernel, binfmt_elf_machine_name(m), m,
                       binfmt_elf_machine_name(r->kernel_elf), r->emulator,
                       binfmt_elf_machine_name(r->kernel_elf), path);
    cx_log(cx, "%s: ELF, %s", path, binfmt_elf_machine_name(m));
    return 0;
}

static int write_zeros(const struct stage_ctx *cx, const char *path, long long bytes)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return cx_fail(cx, "cannot create %s: %s", path, strerror(errno));
    static const char zero[4096];
    for (long long done = 0; done < bytes;) {
        size_t n = bytes - done < (long long)sizeof zero ? (size_t)(bytes - done) : sizeof zero;
        ssize_t w = write(fd, zero, n);
        if (w < 0) {
            int e = errno;
            close(fd);
            return cx_fail(cx, "cannot write %s: %s", path, strerror(e));
        }
        done += w;
    }
    if (close(fd) < 0)
        return cx_fail(cx, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

static char *expect_text(const struct stage_ctx *cx, bool initrd)
{
    const struct stage *ird = st_peer(cx->st, "initramfs");
    const char *kind = ird ? st_kind(ird) : NULL;
    if (initrd && kind && strcmp(kind, "payload") == 0)
        return xstrdup("    TRILLIAN-BOOT-OK release=... machine=ia64\n"
                       "    TRILLIAN-CPUINFO ... (the lines of /proc/cpuinfo)\n"
                       "    TRILLIAN-POWEROFF\n"
                       "\n"
                       "from Trillian's boot-check payload (/init of the initramfs), which then\n"
                       "powers the machine off.");
    return xstrdup("the root filesystem mounted and the system's init running: a login\n"
                   "prompt on the console for a Debian userland.");
}

static int bundle_run(struct stage_ctx *cx)
{
    const char *kind = cx_kind(cx);
    const struct bundle_row *r = find_row(kind, cx->arch);
    if (!r)
        return cx_fail(cx, "kind %s has no emulator for arch %s", kind, cx->arch);
    const char *name = cx->name;
    const char *disk = cx_str(cx, "disk");
    bool initrd = wants_initramfs(cx->st, r);
    char *top = path_join(cx->work, "bundle");
    char *dir = path_join(top, name);
    const char *comp = cx_str(cx, "tarball");
    char *tarball = tarball_name(name, comp);
    char *tgz = path_join(cx->out, tarball);
    char *outdir = path_join(cx->out, name);
    char *cmdline = cmdline_of(cx->st);
    char *src = NULL, *dst = NULL, *expect = NULL;
    struct vars vs = {0};
    struct strlist files = {0};
    struct arc_table meta = {0};
    struct buf list = BUF_INIT;
    int rc = 1;

    if (mkdir_p(dir, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", dir, strerror(errno));
        goto out;
    }
    if (r->kernel) {
        src = path_join(cx_dep(cx, "kernel"), r->kernel);
        if (!path_exists(src)) {
            cx_fail(cx, "the kernel stage's output has no %s (%s): %s needs the uncompressed "
                    "ELF kernel (kernel kind \"source\" gives it)", r->kernel, src, r->kind);
            goto out;
        }
        if (check_kernel(cx, r, src))
            goto out;
        dst = path_join(dir, r->kernel);
        if (link_or_copy(src, dst) < 0) {
            cx_fail(cx, "cannot copy %s: %s", src, strerror(errno));
            goto out;
        }
        free(src), free(dst);
        src = dst = NULL;
    }
    if (initrd) {
        src = cx_dep_file(cx, "initramfs", "initrd.img");
        dst = path_join(dir, "initrd.img");
        if (!path_exists(src)) {
            cx_fail(cx, "the initramfs stage's output has no initrd.img (%s); rebuild it or "
                    "set initramfs = false", src);
            goto out;
        }
        if (link_or_copy(src, dst) < 0) {
            cx_fail(cx, "cannot copy %s: %s", src, strerror(errno));
            goto out;
        }
        free(src), free(dst);
        src = dst = NULL;
    }
    if (disk) {
        src = xasprintf("%s/%s.img", cx_dep(cx, disk), disk);
        dst = path_join(dir, r->disk);
        if (!path_exists(src)) {
            cx_fail(cx, "setting disk = \"%s\": that stage's output has no %s.img (%s); name an "
                    "images entry of kind \"disk\"", disk, disk, src);
            goto out;
        }
        if (strcmp(r->disk_format, "qcow2") == 0) {
            const char *argv[] = {"qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2",
                                  src, dst, NULL};
            int st = cx_run(cx, argv);
            if (st != 0) {
                cx_fail(cx, "qemu-img convert of %s failed (exit %d); see the log", src, st);
                goto out;
            }
        } else if (link_or_copy(src, dst) < 0) {
            cx_fail(cx, "cannot copy %s: %s", src, strerror(errno));
            goto out;
        }
        free(src), free(dst);
        src = dst = NULL;
    }
    if (r->nvram && r->nvram_zeroed) {
        dst = path_join(dir, r->nvram);
        if (write_zeros(cx, dst, cx_int(cx, "nvram_kib", 64) * 1024))
            goto out;
        free(dst);
        dst = NULL;
    }

    /* the files list for the README, before the script and README exist */
    char *recipe_name = NULL;
    recipe_name = xstrdup(st_recipe_name(cx->st));
    if (r->kernel)
        buf_printf(&list, "  %-14s the kernel (%s ELF, from the kernel stage)\n", r->kernel,
                   binfmt_elf_machine_name(r->kernel_elf));
    if (initrd)
        buf_printf(&list, "  %-14s the initramfs (from the initramfs stage)\n", "initrd.img");
    if (disk)
        buf_printf(&list, "  %-14s the disk image (%s, from the images entry \"%s\")\n", r->disk,
                   r->disk_format, disk);
    if (r->nvram)
        buf_printf(&list, "  %-14s %s\n", r->nvram,
                   r->nvram_zeroed ? "the machine's EFI NVRAM (zeroed)"
                                   : "the EFI variable store (made by the script on its first "
                                     "run)");
    buf_printf(&list, "  %-14s the script that starts the emulator\n", r->script);
    buf_printf(&list, "  %-14s this file", "README");

    char mem[32], nvkib[32];
    snprintf(mem, sizeof mem, "%lld", cx_int(cx, "memory_mib", 1024));
    snprintf(nvkib, sizeof nvkib, "%lld", cx_int(cx, "nvram_kib", 64));
    char *q_name = shq(name), *q_disk = shq(disk ? r->disk : ""),
         *q_initrd = shq(initrd ? "initrd.img" : ""), *q_cmd = shq(cmdline),
         *q_fwdef = shq(r->firmware_default ? r->firmware_default : ""),
         *q_varsdef = shq(r->vars_default ? r->vars_default : ""),
         *q_nvram = shq(r->nvram ? r->nvram : "");
    var(&vs, "NAME", name);
    var(&vs, "TARBALL", tarball);
    var(&vs, "ARCH", cx->arch);
    var(&vs, "RECIPE", recipe_name);
    var(&vs, "FILES", list.p);
    var(&vs, "DISK", q_disk);
    var(&vs, "DISK_NAME", disk ? r->disk : "");
    var(&vs, "INITRD", q_initrd);
    var(&vs, "CMDLINE", q_cmd);
    var(&vs, "CMDLINE_TEXT", *cmdline ? cmdline : "(empty)");
    var(&vs, "INITRD_OPT", initrd ? "-initramfs initrd.img " : "");
    var(&vs, "SIMSCSI_TEXT", disk ? " simscsi=./sd" : "");
    var(&vs, "DISK_TEXT",
        disk ? "\nsimscsi=./sd: Ski's simulated SCSI disk 0 is the file ./sda (the disk\n"
               "image; the kernel sees it as /dev/sda, with the partitions of the image)."
             : "");
    expect = expect_text(cx, initrd);
    var(&vs, "EXPECT", expect);
    var(&vs, "MEMORY", mem);
    var(&vs, "NVRAM_KIB", nvkib);
    if (r->qemu) {
        char *mt = strcmp(r->firmware_mode, "bios") == 0
                       ? xasprintf("%s,nvram=%s%s -bios FIRMWARE", r->machine, r->nvram,
                                   r->machine_opts)
                       : xasprintf("%s -drive if=pflash,...,file=FIRMWARE "
                                   "-drive if=pflash,...,file=%s",
                                   r->machine, r->nvram);
        var(&vs, "MACHINE_TEXT", mt);
        free(mt);
        var(&vs, "QEMU", r->qemu);
        var(&vs, "MACHINE", r->machine);
        var(&vs, "MACHINE_OPTS", r->machine_opts);
        var(&vs, "DRIVE_OPTS", r->drive_opts);
        var(&vs, "DISK_FORMAT", r->disk_format);
        var(&vs, "FIRMWARE_MODE", r->firmware_mode);
        var(&vs, "FIRMWARE_ENV", r->firmware_env);
        var(&vs, "FIRMWARE_DEFAULT", q_fwdef);
        var(&vs, "FIRMWARE_DEFAULT_TEXT",
            *r->firmware_default ? r->firmware_default : "none, it must be given");
        char *fn = *r->firmware_default ? xasprintf(" (default %s)", r->firmware_default)
                                        : xstrdup(" (no default: the firmware comes with the "
                                                  "emulator)");
        var(&vs, "FIRMWARE_DEFAULT_NOTE", fn);
        free(fn);
        var(&vs, "VARS_ENV", r->vars_env ? r->vars_env : "VARS_UNUSED");
        var(&vs, "VARS_DEFAULT", q_varsdef);
        var(&vs, "NVRAM", q_nvram);
        var(&vs, "EMULATOR_NOTE", r->note);
    }
    free(q_name), free(q_disk), free(q_initrd), free(q_cmd), free(q_fwdef), free(q_varsdef),
        free(q_nvram);
    free(recipe_name);

    if (write_template(cx, r->script_tmpl, dir, r->script, 0755, &vs) ||
        write_template(cx, r->readme_tmpl, dir, "README", 0644, &vs))
        goto out;

    /* The tarball: NAME/ and its files, sorted, mtime = source_date_epoch,
     * owners 0:0, modes fixed here (the inputs are read-only cache files). */
    if (list_tree(top, &files) < 0) {
        cx_fail(cx, "cannot list %s: %s", top, strerror(errno));
        goto out;
    }
    arc_table_addf(&meta, name, ARC_KEEP, 0755, -1, -1, 0, 0, NULL);
    for (size_t i = 0; i < files.n; i++) {
        bool exec = str_ends(files.v[i], ".sh");
        arc_table_addf(&meta, files.v[i], ARC_KEEP, exec ? 0755 : 0644, -1, -1, 0, 0, NULL);
    }
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.format = ARC_TAR;
    o.filter = arc_filter_from_name(comp);
    o.threads = cx->jobs > 0 ? cx->jobs : 1;
    o.mtime = cx->source_date_epoch;
    o.no_xattrs = true;
    o.meta = &meta;
    char err[ARC_ERRLEN];
    double t0 = now_seconds();
    if (arc_write_tree(top, tgz, &o, err) < 0) {
        cx_fail(cx, "cannot write %s: %s", tgz, err);
        goto out;
    }
    cx_log(cx, "(%s: %.1f s)", tgz, now_seconds() - t0);
    t0 = now_seconds();
    if (copy_tree(dir, outdir, true) < 0) {
        cx_fail(cx, "cannot copy the bundle to %s: %s", outdir, strerror(errno));
        goto out;
    }
    cx_log(cx, "(copied to %s: %.1f s)", outdir, now_seconds() - t0);

    json_object *man = json_object_new_object();
    json_add_str(man, "emulator", r->emulator);
    json_add_str(man, "script", r->script);
    if (r->kernel)
        json_add_str(man, "cmdline", cmdline);
    json_object_object_add(man, "files", json_strlist(&files));
    if (cx_write_manifest(cx, man))
        goto out;
    cx_log(cx, "%s/ and %s: %zu files for %s", name, tarball, files.n, r->emulator);
    rc = 0;
out:
    strlist_free(&vs.k);
    strlist_free(&vs.v);
    strlist_free(&files);
    arc_table_free(&meta);
    buf_free(&list);
    free(top);
    free(dir);
    free(tgz);
    free(tarball);
    free(outdir);
    free(cmdline);
    free(src);
    free(dst);
    free(expect);
    return rc;
}

const struct stage_kind stage_ski_bundle = {
    .name = "ski-bundle",
    .section = "images",
    .version = 1,
    .summary = "a directory and tarball to boot the build in the HP Ski simulator: hp-sim "
               "vmlinux, initramfs, disk as sda, run-ski.sh, README",
    .fields = ski_fields,
    .outputs = outputs,
    .declare = declare,
    .run = bundle_run,
};

const struct stage_kind stage_qemu_bundle = {
    .name = "qemu-bundle",
    .section = "images",
    .version = 2, /* 2: README note reworded */
    .summary = "a directory and tarball to boot a disk image in QEMU (ia64: the out-of-tree "
               "ia64-vpc machine; amd64: OVMF): disk.qcow2, run-qemu.sh, README",
    .fields = qemu_fields,
    .outputs = outputs,
    .declare = declare,
    .run = bundle_run,
};
