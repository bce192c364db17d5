/* The emulator table and argv construction from its templates. */
#define _GNU_SOURCE
#include "emulator.h"
#include "base/run_command.h"
#include "httpserve.h"
#include "netserve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const boot_mode_names[] = {"disk", "netboot", "iso", "kernel", NULL};

int boot_mode_parse(const char *name)
{
    for (int i = 0; name && boot_mode_names[i]; i++)
        if (strcmp(boot_mode_names[i], name) == 0)
            return i;
    return -1;
}

/* ---- the table ---------------------------------------------------------- */

/* qemu reads the guest serial console from stdin and writes it to stdout;
 * no monitor on the console, so no escape character eats our bytes. */
#define QEMU_BASE                                                                          \
    "-display none", "-serial stdio", "-monitor none", "-parallel none", "-no-reboot",      \
        "-m {memory}", "-accel {accel}"
#define OVMF "-drive if=pflash,format=raw,readonly=on,file={firmware:q}",                   \
             "-drive if=pflash,format=raw,file={vars:q}"
#define QEMU_DISK "-drive file={image:q},format=raw,if=virtio,snapshot={snapshot}"
#define QEMU_NET "-netdev user,id=n0,tftp={tftp:q},bootfile={bootfile:q}",                 \
                 "-device virtio-net-pci,netdev=n0"
#define QEMU_ISO "-drive file={image:q},index=2,media=cdrom,readonly=on,format=raw"
#define QEMU_KERNEL "-kernel {kernel}", "?-initrd {initrd}", "-append {append}"
/* A check's `http` (httpserve.h): user-mode networking restricted to the
 * guestfwd (the guest reaches nothing else on or beyond the host), whose
 * command serves each connection to 10.0.2.100:80. DHCP gives the guest
 * 10.0.2.15/24. */
#define QEMU_HTTP_NETDEV "user,restrict=on,guestfwd=tcp:" HTTPSERVE_ADDR ":80-cmd:{http:q}"

static const char *const qemu_base[] = {QEMU_BASE, NULL};
static const char *const qx86_disk[] = {OVMF, QEMU_DISK, NULL};
static const char *const qx86_net[] = {OVMF, QEMU_NET, NULL};
static const char *const qx86_iso[] = {OVMF, QEMU_ISO, NULL};
static const char *const qx86_kernel[] = {QEMU_KERNEL, NULL}; /* SeaBIOS: faster */
/* romfile= (none): no iPXE option ROM, so the firmware does not try to
 * boot from this NIC */
static const char *const qx86_http[] = {"-netdev " QEMU_HTTP_NETDEV ",id=h0",
                                        "-device virtio-net-pci,netdev=h0,romfile=", NULL};

/* The out-of-tree QEMU's machine (syunnPC/qemu-system-ia64, built by the
 * `emulators` kind qemu-ia64): Montecito (itanium2-vpc; a Merced CPU never
 * gets the kernel to print), its EFI firmware by -bios with the console on
 * the serial port, its variables in a zeroed 64 KiB NVRAM file. It has no
 * virtio: the disk goes on the default controller. The firmware boots
 * \EFI\BOOT\BOOTIA64.EFI from the first disk (or CD) that has one. */
#define IA64_VPC "-machine itanium2-vpc,nvram={nvram:q},firmware-console=serial", \
                 "-bios {firmware}", NIC_NONE
static const char *const qia64_disk[] = {IA64_VPC, "-drive file={image:q},format=raw,snapshot={snapshot}",
                                         NULL};
/* netboot: the firmware has no network boot (no PXE), so its one step, the
 * loader's fetch, is stood in for by a disk holding exactly the tree's
 * loader, configuration, kernel and initrd ({image}, made and compared by
 * the check); the machine's own e1000 (-nic: the board's NIC slot, whose
 * BARs the machine sets up; a -device e1000 gets none) is a tap on the
 * network where `trillian __netboot-serve` runs the tree's dnsmasq. */
static const char *const qia64_net[] = {
    "-machine itanium2-vpc,nvram={nvram:q},firmware-console=serial", "-bios {firmware}",
    "-nic tap,model=e1000,ifname=" NETSERVE_TAP ",script=no,downscript=no,mac=52:54:00:12:34:56",
    "-drive file={image:q},format=raw,snapshot=on", NULL};
/* `http`: the board's e1000 (its NIC slot, as for netboot) on the
 * user-mode network instead of NIC_NONE */
static const char *const qia64_http[] = {
    "-nic " QEMU_HTTP_NETDEV ",model=e1000,mac=52:54:00:12:34:56", NULL};
static const char *const qia64_iso[] = {IA64_VPC,
                                        "-drive file={image:q},media=cdrom,readonly=on,format=raw",
                                        NULL};

/* bski [options] bootloader kernel args: Ski joins the words after the
 * boot loader with spaces; the boot loader takes the first as the kernel
 * file and hands the rest to Linux as its command line. -initramfs FILE
 * (an option, so before the boot loader) is served to the boot loader by
 * SSC_GET_INITRAMFS. The disk is found by the simscsi driver as the file
 * PREFIX + "a". */
static const char *const ski_base[] = {"-noconsole", NULL};
static const char *const ski_disk[] = {"{firmware} {kernel} simscsi={work}/sd {append}", NULL};
static const char *const ski_kernel[] = {"?-initramfs {initrd}", "{firmware} {kernel} {append}",
                                         NULL};
/* ski-efi (Ski's minimal EFI, from the Ski sources) takes the EFI
 * application to start as its first word: GRUB for ia64-efi. */
static const char *const ski_efi_app[] = {"{firmware} {kernel}", NULL};

const struct emulator emulators[] = {
    {
        .name = "qemu-x86_64",
        .arch = "amd64",
        .machine = "x86_64",
        .program = "qemu-system-x86_64",
        .env = "TRILLIAN_QEMU_X86_64",
        .install = "apt-get install qemu-system-x86",
        .firmware_key = "firmware",
        .firmware_env = "TRILLIAN_OVMF_CODE",
        .firmware_default = "/usr/share/OVMF/OVMF_CODE.fd",
        .firmware_install = "apt-get install ovmf",
        .vars_default = "/usr/share/OVMF/OVMF_VARS.fd",
        .console_pty = false,
        .exits_on_poweroff = true,
        .default_accel = "tcg",
        .default_append = "console=ttyS0 panic=-1",
        .kernel_names = "vmlinuz*,bzImage*,vmlinux*",
        .base = qemu_base,
        .extra_disk_opts = ",if=virtio", /* QEMU_DISK's */
        .http_nic = qx86_http,
        .mode = {qx86_disk, qx86_net, qx86_iso, qx86_kernel},
    },
    {
        .name = "qemu-ia64",
        .arch = "ia64",
        .machine = "ia64",
        .program = "qemu-system-ia64",
        .env = "TRILLIAN_QEMU_IA64",
        .install = "qemu has no ia64 target in Debian; add an `emulators` entry of kind "
                   "qemu-ia64 to build it (@include \"include/ia64-qemu.cfg\")",
        .firmware_key = "firmware",
        .firmware_env = "TRILLIAN_QEMU_IA64_BIOS",
        .firmware_default = NULL,
        .firmware_install = "the `emulators` kind qemu-ia64 builds it (share/qemu/"
                            "ia64-firmware.bin); or set `firmware` or TRILLIAN_QEMU_IA64_BIOS",
        .vars_default = NULL,
        .nvram_kib = 64,
        .console_pty = false,
        .exits_on_poweroff = true,
        .default_accel = "tcg",
        .stage_kind = "qemu-ia64",
        .stage_binary = "bin/qemu-system-ia64",
        .stage_firmware = "share/qemu/ia64-firmware.bin",
        .base = qemu_base,
        .http_nic = qia64_http,
        .netboot_standin = true,
        .mode = {qia64_disk, qia64_net, qia64_iso, NULL},
        .why_not = {NULL, NULL, NULL,
                    "it has no -kernel loader (-kernel is silently ignored): boot a disk or "
                    "ISO with GRUB or elilo on it"},
    },
    {
        .name = "ski",
        .arch = "ia64",
        .machine = "ia64",
        .program = "bski",
        .env = "TRILLIAN_SKI",
        .install = "Ski is not in Debian; add an `emulators` entry of kind ski to build it "
                   "(@include \"include/ia64-ski-sim.cfg\")",
        .firmware_key = "bootloader",
        .firmware_env = "TRILLIAN_SKI_BOOTLOADER",
        .firmware_default = NULL,
        .firmware_install = "the `emulators` kind ski builds it; or set `bootloader` or "
                            "TRILLIAN_SKI_BOOTLOADER",
        .vars_default = NULL,
        .console_pty = true, /* ski makes stdin raw with tcsetattr */
        .exits_on_poweroff = false,
        .halt_regex = "reboot: (Power down|System halted)|System halted|Power down",
        .disk_link = "sda",
        .default_accel = NULL,
        .default_append = "console=ttyS0",
        .kernel_names = "vmlinux*", /* ski-bootloader loads ELF, not vmlinuz */
        .stage_kind = "ski",
        .stage_binary = "bin/bski",
        .stage_firmware = "share/ski/ski-bootloader",
        .base = ski_base,
        .mode = {ski_disk, NULL, NULL, ski_kernel},
    },
    {
        .name = "ski-efi",
        .arch = "ia64",
        .machine = "ia64",
        .program = "bski",
        .env = "TRILLIAN_SKI",
        .install = "Ski is not in Debian; add an `emulators` entry of kind ski to build it "
                   "(@include \"include/ia64-ski-sim.cfg\")",
        .firmware_key = "bootloader",
        .firmware_env = "TRILLIAN_SKI_EFI",
        .firmware_default = NULL,
        .firmware_install = "the `emulators` kind ski builds it; or set `bootloader` or "
                            "TRILLIAN_SKI_EFI",
        .vars_default = NULL,
        .console_pty = true,
        .exits_on_poweroff = false,
        .default_accel = NULL,
        .default_append = "",
        .kernel_names = "*.efi,*.EFI", /* an EFI application: GRUB */
        .stage_kind = "ski",
        .stage_binary = "bin/bski",
        .stage_firmware = "share/ski/ski-efi",
        .base = ski_base,
        .mode = {NULL, NULL, NULL, ski_efi_app},
    },
};

const size_t n_emulators = ARRAY_LEN(emulators);

const char *const emulator_names[] = {"qemu-x86_64", "qemu-ia64", "ski", "ski-efi", NULL};

const struct emulator *emulator_find(const char *name)
{
    for (size_t i = 0; name && i < n_emulators; i++)
        if (strcmp(emulators[i].name, name) == 0)
            return &emulators[i];
    return NULL;
}

/* ---- variables ---------------------------------------------------------- */

void emu_vars_set(struct emu_vars *v, const char *name, const char *value)
{
    for (size_t i = 0; i < v->names.n; i++)
        if (strcmp(v->names.v[i], name) == 0) {
            free(v->values.v[i]);
            v->values.v[i] = xstrdup(value ? value : "");
            return;
        }
    strlist_push(&v->names, name);
    strlist_push(&v->values, value ? value : "");
}

const char *emu_vars_get(const struct emu_vars *v, const char *name)
{
    for (size_t i = 0; i < v->names.n; i++)
        if (strcmp(v->names.v[i], name) == 0)
            return v->values.v[i];
    return NULL;
}

void emu_vars_free(struct emu_vars *v)
{
    strlist_free(&v->names);
    strlist_free(&v->values);
}

/* ---- templates ---------------------------------------------------------- */

/* Calls fn for each {name[:filter]} in word; returns the first non-zero. */
struct ref {
    const char *start; /* at '{' */
    size_t len;        /* through '}' */
    char name[32];
    char filter;       /* 0 or 'q' */
};

static int next_ref(const char *s, struct ref *r)
{
    const char *o = strchr(s, '{');
    if (!o)
        return 0;
    const char *c = strchr(o, '}');
    if (!c)
        return -1;
    size_t n = (size_t)(c - o - 1);
    const char *colon = memchr(o + 1, ':', n);
    size_t nl = colon ? (size_t)(colon - o - 1) : n;
    if (nl == 0 || nl >= sizeof r->name)
        return -1;
    memcpy(r->name, o + 1, nl);
    r->name[nl] = '\0';
    r->filter = 0;
    if (colon) {
        if (n - nl != 2 || colon[1] != 'q')
            return -1;
        r->filter = 'q';
    }
    r->start = o;
    r->len = (size_t)(c - o + 1);
    return 1;
}

static bool entry_names(const char *entry, const char *var)
{
    struct ref r;
    for (const char *p = entry; next_ref(p, &r) == 1; p = r.start + r.len)
        if (strcmp(r.name, var) == 0)
            return true;
    return false;
}

int emulator_needs(const struct emulator *e, enum boot_mode mode, const char *var)
{
    const char *const *lists[] = {e->base, e->mode[mode]};
    int need = 0;
    for (size_t l = 0; l < ARRAY_LEN(lists); l++)
        for (size_t i = 0; lists[l] && lists[l][i]; i++)
            if (entry_names(lists[l][i], var))
                need = lists[l][i][0] == '?' ? (need > 1 ? need : 1) : 2;
    return need;
}

bool emulator_uses(const struct emulator *e, enum boot_mode mode, const char *var)
{
    return emulator_needs(e, mode, var) > 0;
}

/* Substitutes one word; returns NULL (with *missing set) if a variable is
 * unset or empty. */
static char *subst_word(const char *w, size_t wl, const struct emu_vars *vars,
                        struct strlist *used, const char **missing, char **err)
{
    struct buf b = BUF_INIT;
    char *word = xstrndup(w, wl);
    const char *p = word;
    struct ref r;
    int k;
    while ((k = next_ref(p, &r)) == 1) {
        buf_add(&b, p, (size_t)(r.start - p));
        const char *val = emu_vars_get(vars, r.name);
        if (used && !strlist_contains(used, r.name))
            strlist_push(used, r.name);
        if (!val || !*val) {
            static char name[32];
            memcpy(name, r.name, sizeof name);
            *missing = name;
            goto fail;
        }
        if (r.filter == 'q') { /* qemu option value: double the commas */
            for (const char *v = val; *v; v++)
                buf_add(&b, *v == ',' ? ",," : v, *v == ',' ? 2 : 1);
        } else {
            buf_puts(&b, val);
        }
        p = r.start + r.len;
    }
    if (k < 0) {
        *err = xasprintf("bad placeholder in emulator template \"%s\"", word);
        goto fail;
    }
    buf_puts(&b, p);
    free(word);
    return buf_detach(&b);
fail:
    free(word);
    buf_free(&b);
    return NULL;
}

/* emu_expand, leaving out the entry SKIP (or none). */
static int expand(const char *const *tmpl, const struct emu_vars *vars, struct strlist *argv,
                  struct strlist *used, const char *skip, char **err)
{
    *err = NULL;
    for (size_t i = 0; tmpl && tmpl[i]; i++) {
        const char *entry = tmpl[i];
        if (skip && strcmp(entry, skip) == 0)
            continue;
        bool optional = entry[0] == '?';
        if (optional)
            entry++;
        struct strlist words = {0};
        const char *missing = NULL;
        bool dropped = false;
        for (const char *p = entry; *p;) {
            const char *sp = strchr(p, ' ');
            size_t wl = sp ? (size_t)(sp - p) : strlen(p);
            char *w = subst_word(p, wl, vars, used, &missing, err);
            if (!w) {
                if (*err)
                    goto fail;
                if (optional) {
                    dropped = true;
                    break;
                }
                *err = xasprintf("the emulator needs {%s} for \"%s\", and it is not set",
                                 missing, entry);
                goto fail;
            }
            strlist_push_owned(&words, w);
            p += wl;
            while (*p == ' ')
                p++;
        }
        if (!dropped)
            for (size_t j = 0; j < words.n; j++)
                strlist_push(argv, words.v[j]);
        strlist_free(&words);
        continue;
    fail:
        strlist_free(&words);
        return -1;
    }
    return 0;
}

int emu_expand(const char *const *tmpl, const struct emu_vars *vars, struct strlist *argv,
               struct strlist *used, char **err)
{
    return expand(tmpl, vars, argv, used, NULL, err);
}

int emulator_argv(const struct emulator *e, enum boot_mode mode, const char *binary,
                  const struct emu_vars *vars, const struct strlist *extra,
                  struct strlist *argv, char **err)
{
    *err = NULL;
    if (!e->mode[mode]) {
        *err = xasprintf("emulator %s cannot do a %s boot", e->name, boot_mode_names[mode]);
        return -1;
    }
    const char *http = emu_vars_get(vars, "http");
    bool serve = http && *http;
    if (serve && !e->http_nic) {
        *err = xasprintf("emulator %s gives the guest no network to serve HTTP on", e->name);
        return -1;
    }
    struct strlist used = {0};
    strlist_push(argv, binary);
    const char *skip = serve ? NIC_NONE : NULL;
    if (expand(e->base, vars, argv, &used, skip, err) < 0 ||
        expand(e->mode[mode], vars, argv, &used, skip, err) < 0 ||
        (serve && expand(e->http_nic, vars, argv, &used, NULL, err) < 0)) {
        strlist_free(&used);
        return -1;
    }
    /* What was asked for must reach the emulator. */
    static const char *const must[] = {"image", "initrd", "tftp", "kernel"};
    for (size_t i = 0; i < ARRAY_LEN(must); i++) {
        const char *v = emu_vars_get(vars, must[i]);
        if (!v || !*v || strlist_contains(&used, must[i]))
            continue;
        if (strcmp(must[i], "image") == 0 && e->disk_link)
            continue; /* reaches it through the link in work */
        *err = xasprintf("emulator %s cannot take a%s %s for a %s boot", e->name,
                         must[i][0] == 'i' ? "n" : "", must[i], boot_mode_names[mode]);
        strlist_free(&used);
        return -1;
    }
    strlist_free(&used);
    for (size_t i = 0; extra && i < extra->n; i++)
        strlist_push(argv, extra->v[i]);
    return 0;
}

/* ---- finding binaries --------------------------------------------------- */

char *emulator_which(const char *program)
{
    return run_find_program(program, NULL, 0);
}

/* PROGRAM below STAGE_DIR, if it is there (new string) or NULL. */
static char *in_stage(const char *stage_dir, const char *rel)
{
    if (!stage_dir || !rel)
        return NULL;
    char *p = path_join(stage_dir, rel);
    if (access(p, R_OK) == 0)
        return p;
    free(p);
    return NULL;
}

char *emulator_binary(const struct emulator *e, const char *setting, const char *stage_dir,
                      const char **how)
{
    const char *env = e->env ? getenv(e->env) : NULL;
    if (env && *env) {
        *how = e->env;
        return emulator_which(env);
    }
    if (setting && *setting) {
        *how = "setting `binary`";
        return emulator_which(setting);
    }
    char *p = in_stage(stage_dir, e->stage_binary);
    if (p) {
        *how = "the recipe's emulators stage";
        return p;
    }
    *how = "PATH";
    return emulator_which(e->program);
}

char *emulator_firmware(const struct emulator *e, const char *setting, const char *stage_dir,
                        const char **how)
{
    const char *env = e->firmware_env ? getenv(e->firmware_env) : NULL;
    const char *p;
    if (env && *env) {
        *how = e->firmware_env;
        p = env;
    } else if (setting && *setting) {
        *how = e->firmware_key;
        p = setting;
    } else if (stage_dir && e->stage_firmware) {
        *how = "the recipe's emulators stage";
        return in_stage(stage_dir, e->stage_firmware);
    } else if (e->firmware_default) {
        *how = "default";
        p = e->firmware_default;
    } else {
        *how = "nothing";
        return NULL;
    }
    return access(p, R_OK) == 0 ? xstrdup(p) : NULL;
}
