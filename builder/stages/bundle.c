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
 * ELF), the initramfs, a disk stage's NAME.img as "sda" (Ski's simscsi
 * driver opens PREFIX"a" for simscsi=PREFIX), and the ski stage's
 * ski-bootloader, for bski.
 * qemu-bundle: a disk stage's image as qcow2 for qemu-system-ia64's
 * out-of-tree itanium2-vpc machine (with a zeroed 64 KiB NVRAM file; the
 * same options as the qemu-ia64 boot check, emulator.c), or for
 * qemu-system-x86_64 + OVMF on amd64.
 *
 * The ia64 bundles carry the firmware their emulator needs, which no package
 * provides: qemu's ia64-firmware.bin from the recipe's qemu-ia64 emulators
 * stage, Ski's ski-bootloader from its ski stage (declared with
 * st_need_file: no such stage is a plan-time error), each with its licence
 * text and a note on its source. The licence text is not in that stage's
 * output: it is read, at bundle time, from the stage's own source tarball
 * (fetched by its sha256 like the stage does, so from the cache's downloads
 * after a build), whose COPYING is the GPL's text and whose firmware
 * sources say which version (SPDX-License-Identifier). Another stage
 * (`emulator`: a command stage with a prebuilt firmware) gives the licence
 * and the note itself, as FIRMWARE.COPYING and FIRMWARE.SOURCE beside it. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json_out.h"
#include "drivers/fetch.h"
#include "formats/archive.h"
#include "formats/binfmt.h"
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
    const char *howto;       /* the run script's hint when the emulator is not found */
    /* a firmware carried in the bundle (bios mode), from an emulators stage */
    const char *fw_kind;     /* the emulators kind that builds it */
    const char *fw_what;     /* what it is, for the README and messages */
    const char *fw_file;     /* its path in that stage's output */
    const char *fw_copying;  /* a stage of another kind: the licence text beside it */
    const char *fw_note;     /* ... and the note on its source */
    const char *fw_licence;  /* fw_kind's source tarball (below its top directory):
                                the licence text */
    const char *fw_spdx;     /* ... a firmware source whose SPDX line names the licence */
    const char *fw_src_dir;  /* ... where the firmware's sources are */
    const char *fw_include;  /* the shipped include that adds the fw_kind stage */
    const char *fw_note_tmpl; /* the note written for a fw_kind stage's firmware */
};

static const struct bundle_row rows[] = {
    {
        .kind = "ski-bundle", .arch = "ia64", .script = "run-ski.sh",
        .script_tmpl = "firmware/bundles/run-ski.sh.in",
        .readme_tmpl = "firmware/bundles/README-ski.in",
        .kernel = "vmlinux", .kernel_elf = BINFMT_ELF_IA64,
        .disk = "sda", .disk_format = "raw", .initramfs = true, .emulator = "Ski",
        .howto = "It is in no distribution: build it with Trillian (trillian build of a recipe "
                 "that includes include/ia64-ski-sim.cfg gives OUT/ski/bin/bski) or by hand "
                 "(README, Getting Ski).",
        .fw_kind = "ski", .fw_what = "Ski's boot loader for hp-sim kernels",
        .fw_file = "share/ski/ski-bootloader",
        .fw_copying = "share/ski/ski-bootloader.COPYING",
        .fw_note = "share/ski/ski-bootloader.SOURCE",
        .fw_licence = "COPYING", .fw_spdx = "ski-bootloader/bootloader.c",
        .fw_src_dir = "ski-bootloader/", .fw_include = "include/ia64-ski-sim.cfg",
        .fw_note_tmpl = "firmware/bundles/ski-bootloader.SOURCE.in",
    },
    {
        .kind = "qemu-bundle", .arch = "ia64", .script = "run-qemu.sh",
        .script_tmpl = "firmware/bundles/run-qemu.sh.in",
        .readme_tmpl = "firmware/bundles/README-qemu-ia64.in",
        .disk = "disk.qcow2", .disk_format = "qcow2",
        .qemu = "qemu-system-ia64", .machine = "itanium2-vpc",
        .machine_opts = ",firmware-console=serial", .drive_opts = "",
        .firmware_mode = "bios", .firmware_env = "QEMU_IA64_BIOS", .firmware_default = "",
        .nvram = "nvram.bin", .nvram_zeroed = true, .nvram_only_kib = 64,
        .emulator = "qemu-system-ia64",
        .howto = "It is in no distribution: build it with Trillian (trillian build of a "
                 "recipe that includes include/ia64-qemu.cfg gives "
                 "OUT/qemu-ia64/bin/qemu-system-ia64) or by hand from its pinned source "
                 "(README, Getting qemu-system-ia64).",
        .fw_kind = "qemu-ia64", .fw_what = "qemu-system-ia64's EFI firmware",
        .fw_file = "share/qemu/ia64-firmware.bin",
        .fw_copying = "share/qemu/ia64-firmware.COPYING",
        .fw_note = "share/qemu/ia64-firmware.SOURCE",
        .fw_licence = "COPYING", .fw_spdx = "roms/ia64-firmware/firmware.c",
        .fw_src_dir = "roms/ia64-firmware/", .fw_include = "include/ia64-qemu.cfg",
        .fw_note_tmpl = "firmware/bundles/ia64-firmware.SOURCE.in",
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
        .howto = "Debian: apt-get install qemu-system-x86 ovmf.",
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
    {"emulator", F_STRING, false, NULL, NULL,
     "the stage whose share/ski/ski-bootloader goes in the bundle (default: the recipe's "
     "emulators entry of kind ski; a stage of another kind also gives "
     "share/ski/ski-bootloader.COPYING and .SOURCE, its licence and source)"},
    TARBALL_FIELD,
    {0},
};

static const struct field qemu_fields[] = {
    {"disk", F_STRING, true, NULL, NULL, "images entry whose NAME.img goes in as disk.qcow2"},
    {"memory_mib", F_INT, false, NULL, "1024", "guest memory in MiB (the script's default)"},
    {"nvram_kib", F_INT, false, NULL, "64",
     "ia64: size in KiB of the zeroed EFI NVRAM file nvram.bin (itanium2-vpc's nvram=; it "
     "takes only 64)"},
    {"emulator", F_STRING, false, NULL, NULL,
     "ia64: the stage whose share/qemu/ia64-firmware.bin goes in the bundle (default: the "
     "recipe's emulators entry of kind qemu-ia64; a stage of another kind also gives "
     "share/qemu/ia64-firmware.COPYING and .SOURCE, its licence and source)"},
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

/* The stage that gives the bundle's firmware: `emulator`, else the recipe's
 * first emulators entry of the row's fw_kind; NULL if there is none. */
static const struct stage *fw_peer(const struct stage *st, const struct bundle_row *r)
{
    const char *name = st_str(st, "emulator");
    if (name)
        return st_peer(st, name);
    size_t it = 0;
    return st_peers(st, "emulators", r->fw_kind, &it);
}

static bool fw_built(const struct stage *p, const struct bundle_row *r)
{
    return strcmp(st_kind(p), r->fw_kind) == 0;
}

/* Plan time: the firmware file (and, from a stage of another kind, its
 * licence and note) as needed files of that stage, so a missing one is a
 * recipe error naming it; the built kind's source tarball as a download. */
static int declare_firmware(struct stage *st, const struct bundle_row *r)
{
    if (!r->fw_file)
        return st_isset(st, "emulator")
                   ? st_error(st, "emulator", "only for arch ia64 (on %s the firmware is the "
                              "host's: %s)", st_arch(st), r->firmware_default)
                   : 0;
    const struct stage *p = fw_peer(st, r);
    const char *name = st_str(st, "emulator");
    if (!p && name)
        return st_error(st, "emulator", "the recipe has no stage '%s': name the stage whose %s "
                        "goes in the bundle (an emulators entry of kind %s), or remove the "
                        "setting to take the recipe's %s entry", name, r->fw_file, r->fw_kind,
                        r->fw_kind);
    if (!p)
        return st_error(st, NULL, "a %s for %s carries %s, %s of the emulators stage of "
                        "kind %s, and this recipe has none: add it (@include \"%s\" builds %s "
                        "and it from pinned source) or set `emulator` to a stage that outputs "
                        "%s", st_kind(st), st_arch(st), r->fw_what, r->fw_file, r->fw_kind,
                        r->fw_include, r->emulator, r->fw_file);
    st_need_file(st, st_name(p), r->fw_file);
    if (!fw_built(p, r)) {
        st_need_file(st, st_name(p), r->fw_copying);
        st_need_file(st, st_name(p), r->fw_note);
        return 0;
    }
    char *t = trillian_data_path(r->fw_note_tmpl);
    st_input_file(st, "firmware note template", t);
    free(t);
    /* the licence text comes from the stage's source tarball (bundle_run) */
    const char *sha = st_str(p, "sha256");
    if (sha && fetch_valid_sha256(sha))
        st_remote(st, st_isset(st, "emulator") ? "emulator" : NULL, st_str(p, "url"),
                  st_str(p, "file"), sha);
    return 0;
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
    if (declare_firmware(st, r))
        bad = 1;
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
    buf_shell_quote(&b, s);
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
    /* a qemu bundle's disk boots the recipe's initramfs from the disk */
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

/* ---- the firmware ------------------------------------------------------- */

struct fw_out {
    const char *name, *copying, *note; /* the files' names in the bundle */
    const char *stage;                 /* the stage it came from */
    char *licence;                     /* as its sources say (SPDX), or "see NOTE" */
    char *origin;                      /* lines naming its source */
    bool built;                        /* from a fw_kind stage */
};

static void fw_out_free(struct fw_out *f)
{
    free(f->licence);
    free(f->origin);
}

/* The SPDX-License-Identifier of a source file's text, or NULL (new). */
static char *spdx_of(const char *text)
{
    const char *tag = "SPDX-License-Identifier:";
    const char *p = text ? strstr(text, tag) : NULL;
    if (!p)
        return NULL;
    p += strlen(tag);
    p += strspn(p, " \t");
    size_t n = strcspn(p, "\r\n");
    while (n > 0 && strchr(" \t*/", p[n - 1]))
        n--;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)p[i]) && !strchr(".-+() ", p[i]))
            return NULL;
    return n ? xstrndup(p, n) : NULL;
}

static int copy_in(const struct stage_ctx *cx, const char *src, const char *dir,
                   const char *name)
{
    char *dst = path_join(dir, name);
    int rc = 0;
    if (link_or_copy(src, dst) < 0)
        rc = cx_fail(cx, "cannot copy %s into the bundle: %s", src, strerror(errno));
    free(dst);
    return rc;
}

/* The firmware of the stage declare_firmware named, with its licence text
 * and a note on its source, into DIR. */
static int bundle_firmware(const struct stage_ctx *cx, const struct bundle_row *r,
                           const char *dir, struct fw_out *f)
{
    const struct stage *p = fw_peer(cx->st, r);
    if (!p)
        return cx_fail(cx, "no stage gives %s (the plan should have refused this recipe; "
                       "report it as a bug of the %s kind)", r->fw_file, r->kind);
    f->stage = st_name(p);
    f->name = path_basename(r->fw_file);
    f->copying = path_basename(r->fw_copying);
    f->note = path_basename(r->fw_note);
    f->built = fw_built(p, r);
    char *src = cx_dep_file(cx, f->stage, r->fw_file);
    struct stat sb;
    if (!src || stat(src, &sb) < 0 || sb.st_size == 0) {
        int rc = cx_fail(cx, "the %s stage's output has no %s (%s): rebuild that stage "
                         "(trillian build --force %s)", f->stage, r->fw_file,
                         src ? src : "?", f->stage);
        free(src);
        return rc;
    }
    int rc = copy_in(cx, src, dir, f->name);
    free(src);
    if (rc)
        return rc;
    cx_log(cx, "%s: %lld bytes, from the %s stage", f->name, (long long)sb.st_size, f->stage);
    if (!f->built) {
        /* a stage of another kind gives its licence and note itself */
        const char *given[] = {r->fw_copying, r->fw_note};
        for (size_t i = 0; i < 2; i++) {
            src = cx_dep_file(cx, f->stage, given[i]);
            rc = src ? copy_in(cx, src, dir, path_basename(given[i]))
                     : cx_fail(cx, "stage '%s' does not declare %s, which the bundle carries "
                               "beside its firmware (declare it in that stage's outputs)",
                               f->stage, given[i]);
            free(src);
            if (rc)
                return rc;
        }
        f->licence = xasprintf("see %s", f->note);
        f->origin = xasprintf("    (given by the stage \"%s\" of the recipe: see %s)", f->stage,
                              f->note);
        return 0;
    }

    /* the licence from the stage's source tarball, found as that stage finds it */
    const char *url = st_str(p, "url"), *file = st_str(p, "file"), *sha = st_str(p, "sha256");
    const char *git = st_str(p, "git"), *commit = st_str(p, "commit");
    char *loc = st_node_where(cx->st, st_node(p, "sha256"));
    char *where = xasprintf("%s: %s.%s.sha256", loc, st_section(p), f->stage);
    free(loc);
    char *tarball = fetch_pinned(cx, url, file, sha, where);
    if (!tarball) {
        rc = cx_fail(cx, "%s: the licence text of %s is read from the %s stage's source "
                     "tarball, and no copy of it could be had (above): put it in a mirror "
                     "(--mirror DIR) or the cache, as for building that stage",
                     where, f->name, f->stage);
        free(where);
        return rc;
    }
    const char *members[] = {r->fw_licence, r->fw_spdx, NULL};
    char *data[2] = {NULL, NULL};
    size_t len[2];
    char err[ARC_ERRLEN];
    if (arc_read_files(tarball, 1, members, data, len, 4 << 20, err) < 0)
        rc = cx_fail(cx, "%s: cannot read the source tarball: %s", where, err);
    else if (!data[0] || !data[1])
        rc = cx_fail(cx, "%s: the source tarball %s has no %s (below its top directory): is "
                     "it the source of %s?", where, tarball, !data[0] ? members[0] : members[1],
                     r->emulator);
    else if (!(f->licence = spdx_of(data[1])))
        rc = cx_fail(cx, "%s: %s in the source tarball has no SPDX-License-Identifier line: "
                     "the licence of %s cannot be told, and the bundle would ship it without",
                     where, members[1], f->name);
    if (!rc)
        rc = cx_write_in(cx, dir, f->copying, data[0], len[0], 0644);
    if (!rc) {
        struct buf o = BUF_INIT;
        buf_printf(&o, "    source tarball  %s\n", file ? file : path_basename(url));
        buf_printf(&o, "    its sha256      %s\n", sha);
        if (url)
            buf_printf(&o, "    from            %s\n", url);
        if (git && commit)
            buf_printf(&o, "    git             %s\n    commit          %s\n", git, commit);
        if (o.n)
            o.p[--o.n] = 0;
        f->origin = buf_detach(&o);
        cx_log(cx, "%s: %s (SPDX-License-Identifier of %s), licence text %s from %s", f->name,
               f->licence, members[1], members[0], tarball);
    }
    free(data[0]);
    free(data[1]);
    free(tarball);
    free(where);
    return rc;
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
    struct fw_out fw = {0};
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
    if (r->fw_file && bundle_firmware(cx, r, dir, &fw))
        goto out;

    /* the files list for the README, before the script and README exist */
    int w = r->fw_file ? 22 : 14; /* the names' column */
    char *recipe_name = NULL;
    recipe_name = xstrdup(st_recipe_name(cx->st));
    if (r->kernel)
        buf_printf(&list, "  %-*s the kernel (%s ELF, from the kernel stage)\n", w, r->kernel,
                   binfmt_elf_machine_name(r->kernel_elf));
    if (initrd)
        buf_printf(&list, "  %-*s the initramfs (from the initramfs stage)\n", w, "initrd.img");
    if (disk)
        buf_printf(&list, "  %-*s the disk image (%s, from the images entry \"%s\")\n", w, r->disk,
                   r->disk_format, disk);
    if (r->fw_file) {
        buf_printf(&list, "  %-*s %s (from the %s stage)\n", w, fw.name, r->fw_what,
                   fw.stage);
        buf_printf(&list, "  %-*s the text of its licence\n", w, fw.copying);
        buf_printf(&list, "  %-*s its licence and where its source is\n", w, fw.note);
    }
    if (r->nvram)
        buf_printf(&list, "  %-*s %s\n", w, r->nvram,
                   r->nvram_zeroed ? "the machine's EFI NVRAM (zeroed)"
                                   : "the EFI variable store (made by the script on its first "
                                     "run)");
    buf_printf(&list, "  %-*s the script that starts the emulator\n", w, r->script);
    buf_printf(&list, "  %-*s this file", w, "README");

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
    expect = expect_text(cx, initrd || (r->qemu && strcmp(r->arch, "ia64") == 0));
    var(&vs, "EXPECT", expect);
    var(&vs, "MEMORY", mem);
    var(&vs, "NVRAM_KIB", nvkib);
    if (r->fw_file) {
        char *q_bundled = shq(fw.name);
        var(&vs, "FW_BUNDLED", q_bundled);
        free(q_bundled);
        var(&vs, "FW_NAME", fw.name);
        var(&vs, "FW_COPYING", fw.copying);
        var(&vs, "FW_NOTE", fw.note);
        var(&vs, "FW_STAGE", fw.built ? fw.stage : r->fw_kind);
        var(&vs, "FW_KIND", r->fw_kind);
        var(&vs, "FW_INCLUDE", r->fw_include);
        char *asr = fw.built ? xasprintf(" (as %s does)", recipe_name) : xstrdup("");
        var(&vs, "FW_AS_RECIPE", asr);
        free(asr);
        var(&vs, "FW_LICENCE", fw.licence);
        var(&vs, "FW_SPDX", r->fw_spdx);
        var(&vs, "FW_SRC_DIR", r->fw_src_dir);
        var(&vs, "FW_ORIGIN", fw.origin);
    }
    char *howto = shq(r->howto ? r->howto : "See README.");
    var(&vs, "HOWTO", howto);
    free(howto);
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
        char *q_bundled = shq(r->fw_file ? fw.name : "");
        var(&vs, "FIRMWARE_BUNDLED", q_bundled);
        free(q_bundled);
        char *fwt = r->fw_file ? xasprintf("%s in this directory", fw.name)
                    : *r->firmware_default ? xstrdup(r->firmware_default)
                                           : xstrdup("none, it must be given");
        var(&vs, "FIRMWARE_DEFAULT_TEXT", fwt);
        free(fwt);
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
        write_template(cx, r->readme_tmpl, dir, "README", 0644, &vs) ||
        (r->fw_file && fw.built &&
         write_template(cx, r->fw_note_tmpl, dir, fw.note, 0644, &vs)))
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
    if (r->fw_file) {
        json_object *f = json_object_new_object();
        json_add_str(f, "file", fw.name);
        json_add_str(f, "stage", fw.stage);
        json_add_str(f, "licence", fw.licence);
        if (fw.built)
            json_add_str(f, "source_sha256", st_str(fw_peer(cx->st, r), "sha256"));
        json_object_object_add(man, "firmware", f);
    }
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
    fw_out_free(&fw);
    return rc;
}

const struct stage_kind stage_ski_bundle = {
    .name = "ski-bundle",
    .section = "images",
    .version = 2, /* 2: carries ski-bootloader with its licence and source note; run-ski.sh
                     boots it by default and says how to get Ski */
    .summary = "a directory and tarball to boot the build in the HP Ski simulator: hp-sim "
               "vmlinux, initramfs, disk as sda, ski-bootloader from the ski stage, "
               "run-ski.sh, README",
    .fields = ski_fields,
    .outputs = outputs,
    .declare = declare,
    .run = bundle_run,
};

const struct stage_kind stage_qemu_bundle = {
    .name = "qemu-bundle",
    .section = "images",
    .version = 3, /* 2: README note reworded; 3: ia64 carries its firmware, its licence
                     and source note, and its own README; run-qemu.sh says how to get QEMU */
    .summary = "a directory and tarball to boot a disk image in QEMU (ia64: the out-of-tree "
               "itanium2-vpc machine, with its EFI firmware from the qemu-ia64 stage; amd64: "
               "OVMF): disk.qcow2, run-qemu.sh, README",
    .fields = qemu_fields,
    .outputs = outputs,
    .declare = declare,
    .run = bundle_run,
};
