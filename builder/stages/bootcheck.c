/* The `boot` stage kind (section "bootcheck"): boots an image, netboot tree,
 * ISO or bare kernel in an emulator from the table in emulator.c and drives
 * its serial console through steps (console.c). Uncached: it runs every
 * time. It writes the raw console transcript to OUT/NAME/NAME.log as it
 * arrives, a JUnit report (one testcase per step) to NAME.junit.xml, and a
 * summary to the stage log; a failed step fails the build with exit 3. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>
#include <sys/stat.h>

#include "drivers/console.h"
#include "drivers/emulator.h"
#include "drivers/fat.h"
#include "drivers/fsimage.h"
#include "drivers/httpserve.h"
#include "drivers/netserve.h"
#include "base/json_out.h"
#include "stage.h"

/* reboot_from's value that boots the image itself again (not a `disks` entry) */
#define REBOOT_IMAGE "image"

static const char *const accel_choices[] = {"tcg", "kvm", NULL};

static const char *const report_kind_choices[] = {"disk", "iso-cd", "iso-disk", "installed-disk",
                                                   "netboot", "bundle", "kernel", NULL};

static const struct field fields[] = {
    {"emulator", F_ENUM, false, emulator_names, NULL,
     "emulator from the table; default qemu-x86_64 for amd64, ski for ia64"},
    {"image", F_STRING, true, NULL, NULL,
     "stage whose output is booted: an images entry, or kernel for a bare kernel boot"},
    {"boot", F_ENUM, false, boot_mode_names, NULL,
     "disk, netboot, iso or kernel; default from the kind of the image stage"},
    {"file", F_STRING, false, NULL, NULL,
     "file in the image stage's output (disk: NAME.img, iso: NAME.iso, netboot: the EFI "
     "loader in its tftp/ tree, kernel: vmlinuz)"},
    {"kernel", F_STRING, false, NULL, "kernel",
     "stage with the kernel, when the emulator needs one for a disk boot (Ski)"},
    {"kernel_file", F_STRING, false, NULL, NULL, "kernel file in that stage (default by emulator)"},
    {"initrd", F_STRING, false, NULL, NULL,
     "stage with the initramfs for a kernel boot; default initramfs if the recipe has one, "
     "\"\" for none"},
    {"initrd_file", F_STRING, false, NULL, "initrd.img", "initramfs file in that stage"},
    {"http", F_STRING, false, NULL, NULL,
     "stage whose output the guest can fetch over HTTP at http://10.0.2.100/ during the check "
     "(an apt archive: `deb http://10.0.2.100/ SUITE main`): a NIC on QEMU's user-mode network "
     "(DHCP gives 10.0.2.15/24; nothing else is reachable) whose connections `trillian "
     "__http-serve` answers with that stage's files, GET and HEAD only; requests logged to "
     "NAME.http.log (qemu emulators; not with boot = \"netboot\")"},
    {"append", F_STRING, false, NULL, NULL,
     "kernel command line for kernel boots (default console=ttyS0 panic=-1)"},
    {"binary", F_STRING, false, NULL, NULL,
     "emulator binary (path or name on PATH); env TRILLIAN_QEMU_X86_64 etc. wins; default: "
     "the recipe's `emulators` stage that builds it, else PATH"},
    {"firmware", F_STRING, false, NULL, NULL,
     "qemu firmware: OVMF code (default /usr/share/OVMF/OVMF_CODE.fd), -bios for qemu-ia64"},
    {"firmware_vars", F_STRING, false, NULL, NULL,
     "OVMF variable store copied into the work directory (default OVMF_VARS.fd)"},
    {"bootloader", F_STRING, false, NULL, NULL,
     "Ski: the ski-bootloader (env TRILLIAN_SKI_BOOTLOADER wins)"},
    {"accel", F_ENUM, false, accel_choices, "tcg", "qemu accelerator (kvm is opt-in)"},
    {"memory_mib", F_INT, false, NULL, "1024", "guest memory (qemu)"},
    {"extra_args", F_STRING_LIST, false, NULL, NULL, "more emulator arguments, appended"},
    {"steps", F_LIST, false, NULL, NULL,
     "console steps: ( { wait = \"re\"; timeout = 120; }, { send = \"text\"; }, "
     "{ expect = \"re\"; }, { exit = true; } )"},
    {"profile", F_ENUM, false, profile_names, NULL,
     "generated steps when `steps` is absent: debian-login (default) or marker"},
    {"user", F_STRING, false, NULL, "root", "debian-login: user to log in as"},
    {"password", F_STRING, false, NULL, NULL,
     "debian-login: password, if the login asks (default userland.root_password)"},
    {"autologin", F_BOOL, false, NULL, NULL,
     "debian-login: the serial getty logs root in by itself (default userland.autologin)"},
    {"prompt", F_STRING, false, NULL, PROFILE_PROMPT,
     "debian-login: shell prompt regex ('#' or '$' ending a line, or before a kernel message)"},
    {"machine", F_STRING, false, NULL, NULL,
     "debian-login: expected `uname -m` (default x86_64 / ia64 from the emulator)"},
    {"os_release", F_STRING, false, NULL, NULL,
     "debian-login: regex on /etc/os-release (default from userland.suite)"},
    {"systemd", F_BOOL, false, NULL, NULL,
     "debian-login: check systemctl is-system-running (default: userland is debootstrap "
     "without sysvinit-core in its include)"},
    {"sysvinit", F_BOOL, false, NULL, NULL,
     "debian-login: check that sysvinit's runlevel is a multi-user one (default: userland "
     "is debootstrap with sysvinit-core in its include)"},
    {"poweroff", F_STRING, false, NULL, NULL,
     "debian-login: power-off command (default poweroff; echo o > /proc/sysrq-trigger for a "
     "minimal userland)"},
    {"marker", F_STRING, false, NULL, "TRILLIAN-BOOT-OK", "marker: regex the payload prints"},
    {"boot_timeout", F_INT, false, NULL, "600", "seconds until the login prompt or marker"},
    {"command_timeout", F_INT, false, NULL, "60", "seconds for each command's output"},
    {"exit_timeout", F_INT, false, NULL, NULL,
     "seconds from power-off to emulator exit (120; marker: 30, then killed)"},
    {"fail_on", F_STRING_LIST, false, NULL, "[\"Kernel panic - not syncing\"]",
     "console regexes that fail the check at once ([] for none)"},
    {"timeout_total", F_INT, false, NULL, "1800", "seconds for the whole check"},
    {"disks", F_STRING_LIST, false, NULL, NULL,
     "blank disks attached after the image, as \"NAME:MIB\" (qemu emulators): raw files "
     "made empty in the check's work directory, written by the guest (an installer's "
     "target); boot again from one with `reboot_from`"},
    {"reboot_from", F_STRING, false, NULL, NULL,
     "after `steps` pass (the guest powered off), boot the blank disk of this name alone "
     "(no image attached) and run `reboot_steps`: an installed disk's first boot; "
     "\"image\": the booted disk image again as the first boot left it (that boot runs on "
     "a private writable copy in the check's work directory, never on the cached image)"},
    {"reboot_steps", F_LIST, false, NULL, NULL,
     "console steps of the boot from `reboot_from` (as `steps`)"},
    {"report_kind", F_ENUM, false, report_kind_choices, NULL,
     "the image kind `trillian report --matrix` files this check under (default from `boot` "
     "and the image's kind: disk, iso-cd, iso-disk, netboot, bundle, kernel); for a check that "
     "stands in for another path, e.g. netboot through a stand-in boot disk"},
    {"optional", F_BOOL, false, NULL, "false",
     "skip (not fail) when the emulator or its firmware is not installed (never when the "
     "recipe's `emulators` section builds it)"},
    {0},
};

static const char *const profile_keys[] = {"user",    "password",   "autologin", "prompt",  "machine",
                                           "os_release", "systemd", "sysvinit", "poweroff",     "marker",
                                           "boot_timeout", "command_timeout", "exit_timeout",
                                           NULL};

/* ---- plan time ---------------------------------------------------------- */

static const struct emulator *emulator_of(const struct stage *st)
{
    const char *name = st_str(st, "emulator");
    if (!name)
        name = strcmp(st_arch(st), "ia64") == 0 ? "ski" : "qemu-x86_64";
    return emulator_find(name);
}

/* The name of the recipe's `emulators` stage that builds E, or NULL. */
static const char *emulator_stage(const struct stage *st, const struct emulator *e)
{
    size_t it = 0;
    const struct stage *p = e->stage_kind ? st_peers(st, "emulators", e->stage_kind, &it) : NULL;
    return p ? st_name(p) : NULL;
}

/* The kind of the images entry the check boots, or NULL (kernel, or not an
 * images entry). */
static const char *image_kind_of(const struct stage *st)
{
    const char *image = st_str(st, "image");
    const struct stage *p;
    for (size_t i = 0; image && (p = st_peers(st, "images", NULL, &i));)
        if (strcmp(st_name(p), image) == 0)
            return st_kind(p);
    return NULL;
}

/* The boot mode: the `boot` setting, else from the image stage's section. */
static int mode_of(const struct stage *st, const char **why)
{
    const char *b = st_str(st, "boot");
    if (b)
        return boot_mode_parse(b);
    const char *image = st_str(st, "image");
    *why = NULL;
    if (!image)
        return -1;
    if (strcmp(image, "kernel") == 0)
        return BOOT_KERNEL;
    const char *kind = image_kind_of(st);
    if (!kind) {
        *why = "it is not an images entry; set boot = \"disk\", \"netboot\", \"iso\" or "
               "\"kernel\"";
        return -1;
    }
    int m = boot_mode_parse(kind);
    if (m < 0)
        *why = "its images entry has a kind Trillian cannot boot";
    return m;
}

static const char *userland_kind(const struct stage *st)
{
    const struct stage *u = st_peer(st, "userland");
    return u ? st_kind(u) : NULL;
}

/* A userland setting as the userland stage sees it (its kind's defaults);
 * NULL or DEF without a userland stage. */
static const char *userland_str(const struct stage *st, const char *key)
{
    const struct stage *u = st_peer(st, "userland");
    return u ? st_str(u, key) : NULL;
}

static bool userland_bool(const struct stage *st, const char *key, bool def)
{
    const struct stage *u = st_peer(st, "userland");
    return u ? st_bool(u, key, def) : def;
}

/* Whether the userland's include names PKG: the init it boots decides
 * which init check the debian-login profile runs. */
static bool userland_includes(const struct stage *st, const char *pkg)
{
    const struct stage *u = st_peer(st, "userland");
    struct strlist l = {0};
    if (u)
        st_list(u, "include", &l);
    bool found = strlist_contains(&l, pkg);
    strlist_free(&l);
    return found;
}

static const char *initrd_stage(const struct stage *st)
{
    const char *s = st_str(st, "initrd");
    if (s)
        return *s ? s : NULL;
    return st_has_stage(st, "initramfs") ? "initramfs" : NULL;
}

/* `disks` as NAME and MiB; false if the entry is not NAME:MIB. */
static bool disk_spec(const char *spec, char *name, size_t cap, long long *mib)
{
    const char *colon = strchr(spec, ':');
    if (!colon || colon == spec || (size_t)(colon - spec) >= cap)
        return false;
    for (const char *p = spec; p < colon; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
            return false;
    char *end = NULL;
    long long m = strtoll(colon + 1, &end, 10);
    if (!end || *end || m <= 0 || m > 1024 * 1024)
        return false;
    memcpy(name, spec, (size_t)(colon - spec));
    name[colon - spec] = '\0';
    *mib = m;
    return true;
}

/* Plan-time checks of disks, reboot_from and reboot_steps; MODE is the
 * first boot's. */
static int declare_disks(struct stage *st, const struct emulator *e, int mode)
{
    int bad = 0;
    struct strlist dl = {0};
    st_list(st, "disks", &dl);
    bool qemu = strncmp(e->name, "qemu", 4) == 0;
    if (dl.n && !qemu)
        bad |= st_error(st, "disks", "emulator %s cannot attach more disks (qemu-ia64 and "
                        "qemu-x86_64 can)", e->name);
    const char *from = st_str(st, "reboot_from");
    bool self = from && strcmp(from, REBOOT_IMAGE) == 0, found = self;
    for (size_t i = 0; i < dl.n; i++) {
        char name[64];
        long long mib;
        if (!disk_spec(dl.v[i], name, sizeof name, &mib)) {
            bad |= st_error(st, "disks", "'%s' is not NAME:MIB (a name of a-z, 0-9, - and _, "
                            "a size in MiB), e.g. \"target:2048\"", dl.v[i]);
            continue;
        }
        for (size_t j = 0; j < i; j++)
            if (strncmp(dl.v[j], name, strlen(name)) == 0 && dl.v[j][strlen(name)] == ':')
                bad |= st_error(st, "disks", "two disks are named '%s'", name);
        if (self && strcmp(name, REBOOT_IMAGE) == 0)
            bad |= st_error(st, "disks", "a disk named '%s' cannot be told from reboot_from = "
                            "\"%s\", which boots the image again; rename the disk",
                            name, REBOOT_IMAGE);
        if (from && strcmp(from, name) == 0)
            found = true;
    }
    strlist_free(&dl);
    const struct st_node *rs = st_node(st, "reboot_steps");
    if (from && !found)
        bad |= st_error(st, "reboot_from", "'%s' is not one of `disks`; add \"%s:MIB\" there, "
                        "or say \"%s\" to boot the image again", from, from, REBOOT_IMAGE);
    /* only qemu is run twice with the same firmware and NVRAM; Ski is
     * stopped, not left to exit, and boots its kernel from outside the disk */
    if (from && !e->mode[BOOT_DISK])
        bad |= st_error(st, "reboot_from", "emulator %s cannot boot a disk", e->name);
    else if (from && !qemu)
        bad |= st_error(st, "reboot_from", "emulator %s cannot boot a second time in one check: "
                        "it is stopped after the guest halts and boots its kernel from outside "
                        "the disk (qemu-ia64 and qemu-x86_64 can)", e->name);
    /* a boot keeps its writes only on a disk image: not on an ISO (even
     * booted as a disk: its live root is read-only), a tree or a kernel */
    const char *ikind = image_kind_of(st);
    if (self && (mode != BOOT_DISK || (ikind && strcmp(ikind, "iso") == 0)))
        bad |= st_error(st, "reboot_from", "\"%s\" boots the image again as the first boot "
                        "left it, and only a disk image keeps what a boot wrote; this check "
                        "boots %s: boot a disk image, or give `disks` a target and reboot from "
                        "that", REBOOT_IMAGE,
                        mode == BOOT_DISK ? "an ISO as a disk" : mode == BOOT_ISO ? "an ISO"
                        : mode == BOOT_NETBOOT ? "a netboot tree" : "a bare kernel");
    if (from && !rs)
        bad |= st_error(st, "reboot_from", "needs `reboot_steps`: what to check on the "
                        "disk's boot");
    if (rs && !from)
        bad |= st_error(st, "reboot_steps", "needs `reboot_from`: the disk to boot them on");
    if (rs && !st_node(st, "steps"))
        bad |= st_error(st, "reboot_steps", "needs `steps` for the first boot (a profile "
                        "cannot come before a reboot)");
    if (rs) {
        struct steps s2;
        char *err = NULL;
        if (steps_parse_node(rs, &s2, &err) < 0) {
            bad |= st_error(st, "reboot_steps", "%s", err);
            free(err);
        } else {
            steps_free(&s2);
        }
    }
    return bad;
}

/* `http`: the served stage is a dependency (its output enters the key),
 * the NIC that serves it part of the emulator line. */
static int declare_http(struct stage *st, const struct emulator *e, int mode)
{
    const char *h = st_str(st, "http");
    if (!h)
        return 0;
    if (!*h || !st_has_stage(st, h))
        return st_error(st, "http", "no stage '%s' in the recipe: name the stage whose output "
                        "the guest fetches (e.g. an apt archive's)", h);
    int bad = 0;
    if (!e->http_nic)
        bad |= st_error(st, "http", "emulator %s gives the guest no network to serve HTTP on "
                        "(qemu-x86_64 and qemu-ia64 do)", e->name);
    if (mode == BOOT_NETBOOT)
        bad |= st_error(st, "http", "not with boot = \"netboot\": the netboot's own network "
                        "is the guest's; serve HTTP to a disk, ISO or kernel boot");
    st_need(st, h);
    if (e->http_nic && !bad) {
        struct buf t = BUF_INIT;
        buf_printf(&t, "without %s\n", NIC_NONE);
        for (const char *const *a = e->http_nic; *a; a++)
            buf_printf(&t, "%s\n", *a);
        st_input_text(st, "http nic", t.p);
        buf_free(&t);
    }
    char *f = xasprintf("%s.http.log", st_name(st));
    st_output(st, f);
    free(f);
    return bad;
}

static int declare(struct stage *st)
{
    int bad = 0;
    const struct emulator *e = emulator_of(st);
    if (!e)
        return st_error(st, "emulator", "unknown emulator");
    if (strcmp(e->arch, st_arch(st)) != 0)
        bad |= st_error(st, "emulator", "emulator %s boots %s, but the recipe's arch is %s "
                        "(use %s)", e->name, e->arch, st_arch(st),
                        strcmp(st_arch(st), "ia64") == 0 ? "ski or qemu-ia64" : "qemu-x86_64");
    const char *why = NULL;
    int mode = mode_of(st, &why);
    const char *image = st_str(st, "image");
    if (mode < 0)
        return st_error(st, "image", "cannot tell how to boot stage '%s': %s", image,
                        why ? why : "unknown");
    if (!e->mode[mode])
        bad |= st_error(st, "boot", "emulator %s cannot do a %s boot%s%s (it can do:%s%s%s%s)",
                        e->name, boot_mode_names[mode], e->why_not[mode] ? ": " : "",
                        e->why_not[mode] ? e->why_not[mode] : "", e->mode[0] ? " disk" : "",
                        e->mode[1] ? " netboot" : "", e->mode[2] ? " iso" : "",
                        e->mode[3] ? " kernel" : "");
    if (e->mode[mode]) { /* how the emulator is run is part of what is checked */
        struct buf t = BUF_INIT;
        for (const char *const *a = e->base; a && *a; a++)
            buf_printf(&t, "%s\n", *a);
        for (const char *const *a = e->mode[mode]; *a; a++)
            buf_printf(&t, "%s\n", *a);
        buf_printf(&t, "nvram %ld KiB\n", e->nvram_kib);
        st_input_text(st, "emulator argv", t.p);
        buf_free(&t);
    }
    st_need(st, image);
    bad |= declare_http(st, e, mode);
    if (mode == BOOT_NETBOOT && e->netboot_standin) {
        /* the stand-in disk (mtools) and the server (netserve.h); a missing
         * one is a plan-time error naming it */
        const char *const tools[] = {netserve_dnsmasq(), "ip", "mkfs.vfat", "mcopy", "mdir",
                                     "sgdisk", NULL};
        for (size_t i = 0; tools[i]; i++)
            st_tool(st, tools[i]);
    }
    /* the emulator the recipe builds: its binary and firmware (run()) */
    if (emulator_stage(st, e))
        st_need(st, emulator_stage(st, e));
    if (e->mode[mode] && emulator_needs(e, mode, "kernel") && mode != BOOT_KERNEL)
        st_need(st, st_str(st, "kernel"));
    if (mode == BOOT_KERNEL && initrd_stage(st)) {
        if (!emulator_uses(e, mode, "initrd"))
            bad |= st_error(st, "initrd", "emulator %s cannot load an initramfs; set "
                            "initrd = \"\" to boot the kernel alone", e->name);
        st_need(st, initrd_stage(st));
    }
    /* Settings that would be silently ignored are errors. */
    static const struct {
        const char *key, *var;
    } uses[] = {{"memory_mib", "memory"}, {"accel", "accel"}, {"append", "append"}};
    for (size_t i = 0; i < ARRAY_LEN(uses); i++)
        if (st_isset(st, uses[i].key) && e->mode[mode] &&
            !emulator_uses(e, mode, uses[i].var))
            bad |= st_error(st, uses[i].key, "emulator %s does not use %s for a %s boot; "
                            "remove it", e->name, uses[i].key, boot_mode_names[mode]);
    if (st_isset(st, "firmware") && strcmp(e->firmware_key, "firmware") != 0)
        bad |= st_error(st, "firmware", "emulator %s takes `%s`, not `firmware`", e->name,
                        e->firmware_key);
    if (st_isset(st, "bootloader") && strcmp(e->firmware_key, "bootloader") != 0)
        bad |= st_error(st, "bootloader", "emulator %s takes `%s`, not `bootloader`", e->name,
                        e->firmware_key);
    if (st_isset(st, "firmware_vars") && !e->vars_default)
        bad |= st_error(st, "firmware_vars", "emulator %s has no firmware variable store",
                        e->name);

    /* Steps or a profile. */
    const struct st_node *steps = st_node(st, "steps");
    if (steps) {
        if (st_isset(st, "profile"))
            bad |= st_error(st, "profile", "give either `steps` or `profile`, not both");
        for (size_t i = 0; profile_keys[i]; i++)
            if (st_isset(st, profile_keys[i]))
                bad |= st_error(st, profile_keys[i], "only a profile uses `%s`; with `steps`, "
                                "write it into the steps", profile_keys[i]);
        struct steps s;
        char *err = NULL;
        if (steps_parse_node(steps, &s, &err) < 0) {
            bad |= st_error(st, "steps", "%s", err);
            free(err);
        } else {
            steps_free(&s);
        }
    } else {
        const char *profile = st_str(st, "profile");
        if (profile && strcmp(profile, "marker") == 0) {
            for (size_t i = 0; profile_keys[i]; i++)
                if (st_isset(st, profile_keys[i]) && strcmp(profile_keys[i], "marker") &&
                    strcmp(profile_keys[i], "boot_timeout") && strcmp(profile_keys[i], "exit_timeout"))
                    bad |= st_error(st, profile_keys[i], "profile marker does not use `%s`",
                                    profile_keys[i]);
        } else if (st_isset(st, "marker")) {
            bad |= st_error(st, "marker", "only profile = \"marker\" uses `marker`");
        }
        static const char *const regex_keys[] = {"prompt", "os_release", "machine", "marker"};
        for (size_t i = 0; i < ARRAY_LEN(regex_keys); i++) {
            const char *v = st_isset(st, regex_keys[i]) ? st_str(st, regex_keys[i]) : NULL;
            regex_t re;
            char *err = NULL;
            if (!v)
                continue;
            if (console_compile(&re, v, &err) < 0) {
                bad |= st_error(st, regex_keys[i], "%s", err);
                free(err);
            } else {
                regfree(&re);
            }
        }
    }
    bad |= declare_disks(st, e, mode);
    static const char *const pos[] = {"timeout_total", "boot_timeout", "command_timeout",
                                      "exit_timeout", "memory_mib"};
    for (size_t i = 0; i < ARRAY_LEN(pos); i++)
        if (st_isset(st, pos[i]) && st_int(st, pos[i], 1) <= 0)
            bad |= st_error(st, pos[i], "must be a positive number");
    struct strlist fl = {0};
    st_list(st, "fail_on", &fl);
    for (size_t i = 0; i < fl.n; i++) {
        regex_t re;
        char *err = NULL;
        if (console_compile(&re, fl.v[i], &err) < 0) {
            bad |= st_error(st, "fail_on", "%s", err);
            free(err);
        } else {
            regfree(&re);
        }
    }
    strlist_free(&fl);

    /* Outputs, named after the stage. */
    char *f = xasprintf("%s.log", st_name(st));
    st_output(st, f);
    free(f);
    f = xasprintf("%s.junit.xml", st_name(st));
    st_output(st, f);
    free(f);
    return bad ? -1 : 0;
}

/* ---- run time: finding files -------------------------------------------- */

/* The first regular file (or symlink) under DIR, top level first, whose name
 * matches one of the comma-separated globs (case-insensitive). */
static char *find_file(const char *dir, const char *globs)
{
    struct strlist files = {0};
    if (list_tree(dir, &files) < 0)
        return NULL;
    char *found = NULL;
    char *g = xstrdup(globs);
    for (int depth_ok = 0; depth_ok < 2 && !found; depth_ok++) {
        char *save = NULL;
        char *copy = xstrdup(g);
        for (char *pat = strtok_r(copy, ",", &save); pat && !found;
             pat = strtok_r(NULL, ",", &save))
            for (size_t i = 0; i < files.n && !found; i++) {
                bool top = !strchr(files.v[i], '/');
                if (depth_ok == 0 && !top)
                    continue;
                if (fnmatch(pat, path_basename(files.v[i]), FNM_CASEFOLD) == 0)
                    found = path_join(dir, files.v[i]);
            }
        free(copy);
    }
    free(g);
    strlist_free(&files);
    return found;
}

/* A file of a dependency: SETTING if set (relative to its output), else the
 * first match of GLOBS. NULL with a message logged if absent. */
static char *dep_file(const struct stage_ctx *cx, const char *stage, const char *setting,
                      const char *key, const char *globs)
{
    const char *dir = cx_dep(cx, stage);
    if (!dir) {
        cx_fail(cx, "no output directory for stage '%s'", stage);
        return NULL;
    }
    char *p = NULL;
    if (setting) {
        p = path_join(dir, setting);
        if (!path_exists(p)) {
            cx_fail(cx, "stage '%s' has no output file '%s' (setting `%s`); it has: %s", stage,
                    setting, key, dir);
            free(p);
            return NULL;
        }
        return p;
    }
    p = find_file(dir, globs);
    if (!p)
        cx_fail(cx, "stage '%s' has no file matching %s in %s; name it with the setting `%s`",
                stage, globs, dir, key);
    return p;
}

/* ---- run time: the netboot stand-in disk ---------------------------------- */

/* The first word after KEY at the start of a line of CFG (leading blanks
 * skipped), without a leading '/', or NULL. "linux /vmlinuz ro" -> vmlinuz. */
static char *cfg_word(const char *cfg, const char *key)
{
    size_t kl = strlen(key);
    for (const char *l = cfg; l && *l;) {
        while (*l == ' ' || *l == '\t')
            l++;
        size_t n = strcspn(l, "\n");
        if (n > kl && strncmp(l, key, kl) == 0) {
            const char *w = l + kl;
            while (*w == ' ' || *w == '\t' || *w == '/')
                w++;
            size_t wl = strcspn(w, " \t\n\"");
            if (wl)
                return xstrndup(w, wl);
        }
        l += n + (l[n] ? 1 : 0);
    }
    return NULL;
}

/* IMG: a GPT disk whose one partition, an EFI system partition at 1 MiB
 * (STANDIN_OFFSET), is the FAT image FAT of MIB MiB: how the firmware and
 * both loaders see a real ESP (elilo takes a bare FAT disk for a CD and
 * finds no elilo.conf there). Fixed GUIDs: the same disk every time. */
#define STANDIN_OFFSET (1LL << 20)
static int gpt_standin(const struct stage_ctx *cx, const char *fat, const char *img,
                       long long mib)
{
    int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, (mib + 2) << 20) < 0 || close(fd) < 0)
        return cx_fail(cx, "cannot make %s: %s", img, strerror(errno));
    char *part = xasprintf("1:2048:%lld", 2048 + (mib << 11) - 1);
    const char *argv[] = {"sgdisk", "--clear", "--disk-guid=7e7b0071-5e7d-4d15-9a1e-6e6574626f6f",
                          "--new", part, "--typecode=1:ef00", "--change-name=1:netboot-standin",
                          "--partition-guid=1:7e7b0071-5e7d-4d15-9a1e-657370000001", img, NULL};
    int st = cx_run(cx, argv);
    free(part);
    if (st != 0)
        return cx_fail(cx, "sgdisk failed (exit %d) making the stand-in disk %s; see the log", st,
                       img);
    return fsimage_copy_at(cx, fat, img, STANDIN_OFFSET);
}

/* The emulator's firmware cannot fetch the loader (emulator.h,
 * netboot_standin): a GPT disk whose ESP holds the tree's loader at the
 * firmware's fallback path, and its configuration, kernel and initrd where
 * that loader looks for them: GRUB's grub/grub.cfg naming /vmlinuz and /initrd.img at
 * the same paths as on the TFTP server (its prefix has no device), elilo's
 * elilo.conf and the files it names beside it in EFI/BOOT. FILES gets
 * "DISKPATH=TREEFILE" per file: `trillian __netboot-serve` reads each back
 * and compares it with the tree's before it starts anything. */
static char *make_standin(const struct stage_ctx *cx, const char *tftp, const char *bootfile,
                          const char *priv, struct strlist *files)
{
    char *cfgpath = path_join(tftp, "grub/grub.cfg"), *cfg = NULL, *kernel = NULL,
         *initrd = NULL, *img = NULL;
    const char *cfgrel = "grub/grub.cfg", *dest = ""; /* where the loader's files go */
    if (!path_exists(cfgpath)) {
        free(cfgpath);
        cfgpath = path_join(tftp, "elilo.conf");
        cfgrel = "elilo.conf";
        dest = "EFI/BOOT/";
    }
    if (read_file(cfgpath, &cfg, NULL) < 0) {
        cx_fail(cx, "the netboot tree %s has neither grub/grub.cfg nor elilo.conf: the stand-in "
                "disk needs the loader's configuration", tftp);
        goto out;
    }
    bool grub = *dest == 0;
    kernel = cfg_word(cfg, grub ? "linux" : "image=");
    initrd = cfg_word(cfg, grub ? "initrd" : "initrd=");
    if (!kernel || !initrd) {
        cx_fail(cx, "%s names no %s: the stand-in disk holds the kernel and initrd it loads",
                cfgpath, !kernel ? "kernel" : "initrd");
        goto out;
    }
    char *src = path_join(priv, "standin");
    const char *efi = strcmp(cx->arch, "ia64") == 0 ? "EFI/BOOT/BOOTIA64.EFI"
                                                    : "EFI/BOOT/BOOTX64.EFI";
    const char *pairs[][2] = {{efi, bootfile}, {cfgrel, cfgrel}, {kernel, kernel},
                              {initrd, initrd}};
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(pairs) && !bad; i++) {
        char *rel = i == 0 ? xstrdup(pairs[i][0]) : xasprintf("%s%s", dest, pairs[i][0]);
        char *to = path_join(src, rel), *from = path_join(tftp, pairs[i][1]);
        char *dir = path_dirname(to);
        if (mkdir_p(dir, 0755) < 0 || copy_file(from, to) < 0)
            bad = cx_fail(cx, "cannot copy %s to the stand-in disk's tree %s: %s", from, to,
                          strerror(errno));
        strlist_pushf(files, "%s=%s", rel, from);
        free(dir);
        free(rel);
        free(to);
        free(from);
    }
    if (!bad) {
        long long mib = (fat_content_bytes(src, NULL) + (2LL << 20)) >> 20;
        struct fat_spec spec = {.bytes = mib << 20, .label = "TRLNETBOOT", .volid = "7e7b0071",
                                .what = "the netboot stand-in disk",
                                .size_hint = "the tree's loader, config, kernel and initrd "
                                             "set it"};
        fat_geometry(mib, &spec.bits, &spec.cluster_sectors);
        char *fat = path_join(priv, "standin.fat");
        img = path_join(priv, "standin.img");
        if (fat_image(cx, fat, &spec, src, NULL) != 0 || gpt_standin(cx, fat, img, mib) != 0) {
            free(img);
            img = NULL;
        } else {
            printf("netboot: stand-in disk %s (GPT, a %lld MiB EFI system partition): %s, "
                   "%s%s, %s%s, %s%s from the tree %s (the firmware has no network boot)\n",
                   img, mib, efi, dest, cfgrel, dest, kernel, dest, initrd, tftp);
        }
        unlink(fat);
        free(fat);
    }
    free(src);
out:
    free(cfgpath);
    free(cfg);
    free(kernel);
    free(initrd);
    return img;
}

/* The netboot server's own failure in transcript TEXT (netserve.c prints
 * "netboot server: FAILED: WHY" after dnsmasq's message, if any): "WHY
 * (LAST DNSMASQ LINE)", new, or NULL. */
static char *server_failure(const char *text)
{
    static const char tag[] = "netboot server: FAILED: ";
    const char *f = text ? strstr(text, tag) : NULL;
    if (!f)
        return NULL;
    char *why = xstrndup(f + strlen(tag), strcspn(f + strlen(tag), "\r\n"));
    const char *dl = NULL; /* the last line before it that dnsmasq wrote */
    for (const char *l = text; l < f; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : f)
        if (strncmp(l, "dnsmasq", 7) == 0 || strstr(l, " dnsmasq[") == l + strcspn(l, " "))
            dl = l;
    char *r = dl ? xasprintf("%s (%.*s)", why, (int)strcspn(dl, "\r\n"), dl) : xstrdup(why);
    free(why);
    return r;
}

/* ---- run time: reports -------------------------------------------------- */

static void xml_escape(struct buf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        switch (*p) {
        case '&': buf_puts(b, "&amp;"); break;
        case '<': buf_puts(b, "&lt;"); break;
        case '>': buf_puts(b, "&gt;"); break;
        case '"': buf_puts(b, "&quot;"); break;
        default:
            if (*p < 0x20 && *p != '\n' && *p != '\t')
                break; /* not allowed in XML 1.0 */
            buf_add(b, p, 1);
        }
    }
}

static char *case_name(const struct steps *s, size_t i)
{
    char *d = step_describe(&s->v[i]);
    char *n = s->v[i].name ? xasprintf("%02zu %s: %s", i + 1, s->v[i].name, d)
                           : xasprintf("%02zu %s", i + 1, d);
    free(d);
    return n;
}

static int write_junit(const struct stage_ctx *cx, const struct emulator *e, int mode,
                       const struct steps *s, const struct step_result *res, double secs,
                       const char *transcript)
{
    size_t failures = 0, skipped = 0;
    for (size_t i = 0; i < s->n; i++) {
        failures += res[i].status == STEP_FAILED;
        skipped += res[i].status == STEP_NOT_RUN;
    }
    struct buf b = BUF_INIT;
    buf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    buf_puts(&b, "  <testsuite name=\"bootcheck.");
    xml_escape(&b, cx->name);
    buf_printf(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" "
               "time=\"%.3f\">\n", s->n, failures, skipped, secs);
    buf_printf(&b, "    <properties>\n      <property name=\"emulator\" value=\"%s\"/>\n"
               "      <property name=\"boot\" value=\"%s\"/>\n", e->name,
               boot_mode_names[mode]);
    if (mode == BOOT_NETBOOT)
        buf_printf(&b, "      <property name=\"image_kind\" value=\"netboot%s\"/>\n",
                   e->netboot_standin ? " (loader from a stand-in disk)" : "");
    buf_puts(&b, "    </properties>\n");
    for (size_t i = 0; i < s->n; i++) {
        char *n = case_name(s, i);
        buf_puts(&b, "    <testcase classname=\"bootcheck.");
        xml_escape(&b, cx->name);
        buf_puts(&b, "\" name=\"");
        xml_escape(&b, n);
        buf_printf(&b, "\" time=\"%.3f\"", res[i].seconds);
        free(n);
        if (res[i].status == STEP_PASSED) {
            buf_puts(&b, "/>\n");
            continue;
        }
        buf_puts(&b, ">\n");
        if (res[i].status == STEP_NOT_RUN) {
            buf_puts(&b, "      <skipped message=\"not reached: an earlier step failed\"/>\n");
        } else {
            buf_puts(&b, "      <failure message=\"");
            xml_escape(&b, res[i].message);
            buf_puts(&b, "\" type=\"bootcheck\">");
            xml_escape(&b, res[i].message);
            buf_puts(&b, "\n\nLast console lines:\n");
            xml_escape(&b, res[i].tail);
            buf_puts(&b, "</failure>\n");
        }
        buf_puts(&b, "    </testcase>\n");
    }
    buf_puts(&b, "    <system-out>");
    xml_escape(&b, transcript);
    buf_puts(&b, "</system-out>\n  </testsuite>\n</testsuites>\n");
    char *rel = xasprintf("%s.junit.xml", cx->name);
    int rc = cx_write(cx, rel, b.p, b.n);
    free(rel);
    buf_free(&b);
    return rc;
}

/* The check's result for the manifest and the build report: each step's
 * name, status and seconds, and the time to the first wait's marker. */
static int write_manifest(const struct stage_ctx *cx, const struct emulator *e,
                          const char *binary, int mode, bool passed, const struct steps *s,
                          const struct step_result *res, double secs, size_t n1)
{
    static const char *const status_names[] = {
        [STEP_NOT_RUN] = "not-run", [STEP_PASSED] = "pass", [STEP_FAILED] = "fail"};
    json_object *m = json_object_new_object();
    json_add_str(m, "emulator", e->name);
    json_add_str(m, "binary", binary);
    json_add_str(m, "boot", boot_mode_names[mode]);
    /* what was booted, for the matrix's image kind (report.c) */
    const char *image = cx_str(cx, "image");
    const struct stage *ip = image ? st_peer(cx->st, image) : NULL;
    if (image)
        json_add_str(m, "image", image);
    if (ip)
        json_add_str(m, "image_kind", st_kind(ip));
    if (cx_str(cx, "report_kind"))
        json_add_str(m, "report_kind", cx_str(cx, "report_kind"));
    if (mode == BOOT_NETBOOT) /* the image kind: netboot (docs/ia64.md: its stand-in) */
        json_add_str(m, "image_kind", e->netboot_standin ? "netboot (loader from a stand-in "
                     "disk)" : "netboot");
    json_add_str(m, "result", passed ? "pass" : "fail");
    json_object_object_add(m, "steps", json_object_new_int64((int64_t)s->n));
    json_object_object_add(m, "seconds", json_fixed(secs, 1));
    if (s->n && s->v[0].kind == STEP_WAIT && res[0].status == STEP_PASSED)
        json_object_object_add(m, "marker_seconds", json_fixed(res[0].seconds, 1));
    /* when the shell answered: the end of the first passed step named like
     * "shell prompt", from the start (steps run back to back) */
    double at = 0;
    for (size_t i = 0; i < n1 && res[i].status == STEP_PASSED; i++) {
        at += res[i].seconds;
        if (s->v[i].name && strcasestr(s->v[i].name, "shell") &&
            (s->v[i].kind == STEP_WAIT || s->v[i].kind == STEP_EXPECT)) {
            json_object_object_add(m, "shell_seconds", json_fixed(at, 1));
            break;
        }
    }
    /* the boot from `reboot_from`: its shell, from that emulator's start */
    if (n1 < s->n) {
        json_add_str(m, "reboot_from", cx_str(cx, "reboot_from"));
        at = 0;
        bool all = true;
        for (size_t i = 0; i < n1; i++)
            all = all && res[i].status == STEP_PASSED;
        for (size_t i = n1; all && i < s->n && res[i].status == STEP_PASSED; i++) {
            at += res[i].seconds;
            if (s->v[i].name && strcasestr(s->v[i].name, "shell") &&
                (s->v[i].kind == STEP_WAIT || s->v[i].kind == STEP_EXPECT)) {
                json_object_object_add(m, "reboot_shell_seconds", json_fixed(at, 1));
                break;
            }
        }
        json_object_object_add(m, "reboot_first_step", json_object_new_int64((int64_t)n1 + 1));
    }
    json_object *results = json_object_new_array();
    for (size_t i = 0; i < s->n; i++) {
        char *n = case_name(s, i);
        json_object *r = json_object_new_object();
        json_add_str(r, "name", n);
        json_add_str(r, "status", status_names[res[i].status]);
        json_object_object_add(r, "seconds", json_fixed(res[i].seconds, 1));
        json_object_array_add(results, r);
        free(n);
    }
    json_object_object_add(m, "step_results", results);
    return cx_write_manifest(cx, m);
}

/* ---- run time ----------------------------------------------------------- */

/* The emulator or its firmware is not installed: skipped if optional,
 * unless the recipe builds it. Takes MSG. */
static int missing(const struct stage_ctx *cx, const struct emulator *e, char *msg)
{
    const char *built = emulator_stage(cx->st, e);
    if (built) {
        cx_fail(cx, "%s (the recipe's emulators stage '%s' builds it: this check does not "
                "skip)", msg, built);
        free(msg);
        return 1;
    }
    if (cx_bool(cx, "optional", false)) {
        printf("%s; skipped (optional = true)\n", msg);
        free(msg);
        return STAGE_SKIPPED;
    }
    cx_fail(cx, "%s; or set optional = true to skip this check when it is missing", msg);
    free(msg);
    return 1;
}

static char *recipe_path(const struct stage_ctx *cx, const char *key)
{
    const char *v = cx_str(cx, key);
    return v && *v ? path_absolute(cx->recipe_dir, v) : NULL;
}

static int get_steps(const struct stage_ctx *cx, const struct emulator *e, struct steps *s)
{
    char *err = NULL;
    const struct st_node *list = cx_node(cx, "steps");
    if (list) {
        if (steps_parse_node(list, s, &err) == 0)
            return 0;
        return cx_fail(cx, "steps: %s", err); /* declare() checked; not reached */
    }
    const char *ukind = userland_kind(cx->st);
    bool deb = ukind && strcmp(ukind, "debootstrap") == 0;
    char *osr = NULL;
    /* an apt-archive's suite (userland.archive) is no Debian release name
     * that os-release would show */
    if (!st_isset(cx->st, "os_release") && deb && !userland_str(cx->st, "archive"))
        osr = os_release_regex(userland_str(cx->st, "suite"));
    bool autologin = cx_bool(cx, "autologin", deb && userland_bool(cx->st, "autologin", false));
    bool sysv = deb && userland_includes(cx->st, "sysvinit-core");
    const char *password = cx_str(cx, "password");
    if (!password && deb)
        password = userland_str(cx->st, "root_password");
    struct profile_opts o = {
        .user = cx_str(cx, "user"),
        .password = password,
        .autologin = autologin,
        .prompt = cx_str(cx, "prompt"),
        .machine = st_isset(cx->st, "machine") ? cx_str(cx, "machine") : e->machine,
        .os_release = osr ? osr : cx_str(cx, "os_release"),
        .systemd = cx_bool(cx, "systemd", deb && !sysv),
        .sysvinit = cx_bool(cx, "sysvinit", sysv),
        .poweroff = cx_str(cx, "poweroff") ? cx_str(cx, "poweroff")
                    : deb ? "poweroff" : "echo o > /proc/sysrq-trigger",
        .marker = cx_str(cx, "marker"),
        .boot_timeout = (double)cx_int(cx, "boot_timeout", 600),
        .command_timeout = (double)cx_int(cx, "command_timeout", 60),
        .exit_timeout = (double)cx_int(cx, "exit_timeout", 0),
    };
    const char *profile = cx_str(cx, "profile") ? cx_str(cx, "profile") : "debian-login";
    int rc = steps_profile(profile, &o, s, &err);
    free(osr);
    if (rc < 0) {
        cx_fail(cx, "profile: %s", err);
        free(err);
        return 1;
    }
    return 0;
}

/* One regex out of the fail_on list: (a)|(b). */
static bool fail_regex(const struct stage_ctx *cx, regex_t *re, char **src)
{
    struct strlist l = {0};
    if (st_isset(cx->st, "fail_on"))
        cx_list(cx, "fail_on", &l);
    else
        strlist_push(&l, "Kernel panic - not syncing");
    if (l.n == 0)
        return false;
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < l.n; i++)
        buf_printf(&b, "%s(%s)", i ? "|" : "", l.v[i]);
    strlist_free(&l);
    char *err = NULL;
    if (console_compile(re, b.p, &err) < 0) {
        free(err);
        buf_free(&b);
        return false;
    }
    *src = buf_detach(&b);
    return true;
}

/* `trillian boot` (main.c) runs this stage with TRILLIAN_BOOT_INTO set to a
 * directory of its own: the check then only prepares the emulator's files
 * there (NVRAM, variable store, disk copies), writes the argv it would run
 * to DIR/argv (NUL-separated) and stops, so the interactive boot runs the
 * very line a check runs. TRILLIAN_BOOT_PERSISTENT=1: the disk image is
 * copied into DIR once and booted with snapshot=off, so the guest's writes
 * stay in that copy (never in the cache or OUT). */
static const char *boot_into(void)
{
    const char *d = getenv("TRILLIAN_BOOT_INTO");
    return d && *d ? d : NULL;
}

static bool boot_persistent(void)
{
    const char *p = getenv("TRILLIAN_BOOT_PERSISTENT");
    return boot_into() && p && strcmp(p, "1") == 0;
}

/* Writes ARGV to DIR/argv, NUL-separated; 0, or 1 after logging why not. */
static int write_argv(const struct stage_ctx *cx, const char *dir, const struct strlist *argv)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < argv->n; i++)
        buf_add(&b, argv->v[i], strlen(argv->v[i]) + 1);
    int rc = cx_write_in(cx, dir, "argv", b.p, b.n, 0644);
    buf_free(&b);
    return rc;
}

/* reboot_from = "image" in a check (not for `trillian boot`, which boots
 * the image as the check's first boot would without it). */
static bool reboots_image(const struct stage_ctx *cx)
{
    const char *from = cx_str(cx, "reboot_from");
    return from && strcmp(from, REBOOT_IMAGE) == 0 && !boot_into();
}

/* The second boot of a check (`reboot_from`): the blank disk the first boot
 * wrote (an installer's target), or the copy of the image the first boot ran
 * on (reboot_from = "image"), booted alone, with the same emulator,
 * firmware and NVRAM, and steps N1.. of S. Its console is appended to the
 * transcript LOG_PATH (after a line saying so) and to *TRANSCRIPT. C is the
 * first boot's console, closed here. Returns the failed step's index or -1. */
static long reboot_run(const struct stage_ctx *cx, const struct emulator *e, const char *binary,
                       struct emu_vars *v, const struct strlist *extra, const char *disk,
                       const char *log_path, const struct run_opts *ro, struct steps *s,
                       size_t n1, struct step_result *res, struct console *c, char **transcript)
{
    console_close(c);
    console_init(c);
    c->settle = 0.3;
    struct strlist argv = {0};
    char *err = NULL;
    long failed = (long)n1;
    emu_vars_set(v, "image", disk);
    emu_vars_set(v, "snapshot", "on");
    char *log2 = xasprintf("%s.reboot", log_path);
    char *banner = strcmp(cx_str(cx, "reboot_from"), REBOOT_IMAGE) == 0
        ? xasprintf("\n==== trillian: reboot: the image '%s' again, as the first boot left it "
                    "(%s), nothing else attached ====\n", cx_str(cx, "image"), disk)
        : xasprintf("\n==== trillian: reboot: the disk '%s' alone (%s), nothing else "
                    "attached ====\n", cx_str(cx, "reboot_from"), disk);
    printf("%s", banner + 1);
    fflush(stdout);
    if (emulator_argv(e, BOOT_DISK, binary, v, extra, &argv, &err) < 0 ||
        console_start(c, (const char *const *)argv.v, e->console_pty, log2, &err) < 0) {
        res[n1].status = STEP_FAILED;
        res[n1].message = xasprintf("cannot start the emulator for the reboot: %s", err);
        res[n1].tail = xstrdup("");
        cx_fail(cx, "cannot start the emulator for the reboot from '%s': %s",
                cx_str(cx, "reboot_from"), err);
        goto out;
    }
    console_guard(c);
    struct steps second = {s->v + n1, s->n - n1};
    long f = steps_run(c, &second, ro, res + n1);
    failed = f < 0 ? -1 : (long)n1 + f;
out:
    {
        /* the reboot's console after the first boot's, in the log and the report */
        char *text2 = NULL;
        size_t len = 0;
        if (read_file(log2, &text2, &len) == 0) {
            int fd = open(log_path, O_WRONLY | O_APPEND | O_CLOEXEC);
            if (fd >= 0) {
                if (write(fd, banner, strlen(banner)) < 0 || write(fd, text2, len) < 0)
                    cx_log(cx, "could not append the reboot's console to %s", log_path);
                close(fd);
            }
            unlink(log2);
        }
        free(text2);
        char *all = xasprintf("%s%s%s", *transcript, banner, c->text.p ? c->text.p : "");
        free(*transcript);
        *transcript = all;
    }
    free(banner);
    free(log2);
    free(err);
    strlist_free(&argv);
    return failed;
}

/* The program running now, for a helper the emulator starts (new string).
 * When its file was replaced while it runs (an upgrade, a `make`), the path
 * names another program or none ("PATH (deleted)"): the helper must be this
 * one, so it is copied from /proc/self/exe into PRIV and run from there. */
static char *self_exe(const char *priv)
{
    static const char gone[] = " (deleted)";
    const size_t gl = sizeof gone - 1;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return NULL;
    self[n] = 0;
    if ((size_t)n <= gl || strcmp(self + n - gl, gone) != 0)
        return xstrdup(self);
    char *copy = path_join(priv, "trillian-self");
    if (copy_file("/proc/self/exe", copy) < 0 || chmod(copy, 0755) < 0) {
        fprintf(stderr, "trillian: %s was replaced while it runs, and copying it from "
                "/proc/self/exe to %s failed: %s\n", self, copy, strerror(errno));
        free(copy);
        return NULL;
    }
    printf("this program's file was replaced while it runs (%s): its helpers run from a "
           "copy, %s\n", self, copy);
    return copy;
}

/* `http`: sets {http} to the guestfwd command serving the stage's output
 * (httpserve.h); *LOG, its request log (made empty here, so it exists even
 * when the guest asks nothing). 0, or 1 after cx_fail. */
static int serve_http(const struct stage_ctx *cx, const char *priv, struct emu_vars *v,
                      char **log)
{
    const char *stage = cx_str(cx, "http");
    const char *dir = cx_dep(cx, stage);
    char *self = self_exe(priv);
    if (!dir || !is_dir(dir) || !self) {
        free(self);
        return cx_fail(cx, "cannot serve stage '%s' over HTTP: %s", stage,
                       self ? "it has no output directory" : "this program is not found "
                       "(/proc/self/exe)");
    }
    char *name = xasprintf("%s.http.log", cx->name);
    *log = path_join(boot_into() ? priv : cx->out, name);
    free(name);
    int rc = 0;
    if (write_file_atomic(*log, "", 0, 0644) < 0) {
        rc = cx_fail(cx, "cannot make the HTTP request log %s: %s", *log, strerror(errno));
    } else {
        char *cmd = http_guestfwd_command(self, dir, *log);
        emu_vars_set(v, "http", cmd);
        free(cmd);
        printf("http: stage '%s' (%s) served to the guest at http://%s/ by %s %s for each "
               "connection; requests in %s\n", stage, dir, HTTPSERVE_ADDR, self,
               HTTPSERVE_COMMAND, path_basename(*log));
    }
    free(self);
    return rc;
}

/* After the check: how many requests the guest made, how many failed. */
static void http_summary(const char *log)
{
    char *text = NULL;
    if (read_file(log, &text, NULL) < 0)
        return;
    size_t n = 0, not_ok = 0;
    for (const char *l = text; *l;) {
        size_t len = strcspn(l, "\n");
        if (*l == ' ') { /* a note on the request above (a transfer cut short) */
            l += len + (l[len] ? 1 : 0);
            continue;
        }
        /* "METHOD PATH STATUS BYTES": STATUS between the last two blanks */
        const char *b = memrchr(l, ' ', len);
        const char *a = b ? memrchr(l, ' ', (size_t)(b - l)) : NULL;
        n++;
        not_ok += !(a && b - a == 4 && strncmp(a + 1, "200", 3) == 0);
        l += len + (l[len] ? 1 : 0);
    }
    printf("http: %zu requests from the guest, %zu not answered with 200 (%s)\n", n, not_ok,
           path_basename(log));
    free(text);
}

static int run(struct stage_ctx *cx)
{
    const struct emulator *e = emulator_of(cx->st);
    const char *why = NULL;
    int mode = mode_of(cx->st, &why);
    const char *image = cx_str(cx, "image");
    int rc = 1;
    struct emu_vars v = {0};
    struct strlist argv = {0}, extra = {0}, extra1 = {0};
    char *reboot_disk = NULL, *transcript = NULL;
    size_t n1 = 0;
    struct steps steps = {0};
    struct step_result *res = NULL;
    char *binary = NULL, *fw = NULL, *img = NULL, *kernel = NULL, *initrd = NULL;
    char *fail_src = NULL, *log_path = NULL, *err = NULL;
    char *serve_tftp = NULL, *serve_conf = NULL, *serve_img = NULL; /* netboot_standin */
    char *http_log = NULL; /* `http` */
    struct strlist standin_files = {0};
    regex_t fail_re, halt_re;
    bool have_fail = false, have_halt = false;
    struct console c;
    console_init(&c);
    c.settle = 0.3; /* see console_match: prompts vs. lines cut by a read */
    const char *priv = boot_into() ? boot_into() : cx->work; /* the emulator's own files */

    /* The emulator. */
    const char *how = NULL;
    const char *estage = emulator_stage(cx->st, e);
    const char *edir = estage ? cx_dep(cx, estage) : NULL;
    binary = emulator_binary(e, cx_str(cx, "binary"), edir, &how);
    if (!binary) {
        const char *env = e->env ? getenv(e->env) : NULL;
        if (env && *env)
            rc = missing(cx, e, xasprintf("emulator %s: %s=%s is not an executable program",
                                       e->name, e->env, env));
        else if (cx_str(cx, "binary"))
            rc = missing(cx, e, xasprintf("emulator %s: setting binary = \"%s\" is not an "
                                       "executable program", e->name, cx_str(cx, "binary")));
        else
            rc = missing(cx, e, xasprintf("emulator %s is not installed (%s is not on PATH): %s, "
                                       "or point Trillian at one with %s=/path/to/it or the "
                                       "setting `binary`", e->name, e->program, e->install,
                                       e->env));
        goto out;
    }
    printf("emulator %s: %s (from %s)\n", e->name, binary, how);
    if (emulator_needs(e, mode, "firmware")) {
        char *setting = recipe_path(cx, e->firmware_key);
        fw = emulator_firmware(e, setting, edir, &how);
        if (!fw && emulator_needs(e, mode, "firmware") == 2) {
            const char *env = e->firmware_env ? getenv(e->firmware_env) : NULL;
            const char *tried = env && *env ? env : setting ? setting : e->firmware_default;
            if (tried)
                rc = missing(cx, e, xasprintf("emulator %s: its firmware %s is not readable (%s)",
                                           e->name, tried, e->firmware_install));
            else
                rc = missing(cx, e, xasprintf("emulator %s needs firmware: %s", e->name,
                                           e->firmware_install));
            free(setting);
            goto out;
        }
        free(setting);
        if (fw) {
            printf("firmware: %s (from %s)\n", fw, how);
            emu_vars_set(&v, "firmware", fw);
        }
    }
    if (emulator_uses(e, mode, "vars") && e->vars_default) {
        char *src = recipe_path(cx, "firmware_vars");
        const char *from = src ? src : e->vars_default;
        char *dst = path_join(priv, path_basename(from));
        if (copy_file(from, dst) < 0 || chmod(dst, 0644) < 0) {
            rc = missing(cx, e, xasprintf("emulator %s: cannot copy the firmware variable store "
                                       "%s: %s (%s)", e->name, from, strerror(errno),
                                       e->firmware_install));
            free(src);
            free(dst);
            goto out;
        }
        emu_vars_set(&v, "vars", dst);
        free(src);
        free(dst);
    }

    if (emulator_uses(e, mode, "nvram") && e->nvram_kib > 0) {
        char *nv = path_join(priv, "nvram.bin");
        /* a persistent boot keeps its NVRAM (boot entries) from the last one */
        if (!(boot_persistent() && path_exists(nv))) {
            int fd = open(nv, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0 || ftruncate(fd, e->nvram_kib * 1024) < 0 || close(fd) < 0) {
                rc = cx_fail(cx, "cannot make the NVRAM file %s: %s", nv, strerror(errno));
                free(nv);
                goto out;
            }
        }
        emu_vars_set(&v, "nvram", nv);
        free(nv);
    }

    /* What to boot. */
    static const char *const globs[] = {"*.img", NULL, "*.iso", NULL};
    const char *file = cx_str(cx, "file");
    if (mode == BOOT_DISK || mode == BOOT_ISO) {
        char *def = xasprintf("%s.%s,%s", image, mode == BOOT_DISK ? "img" : "iso", globs[mode]);
        img = dep_file(cx, image, file, "file", def);
        free(def);
        if (!img)
            goto out;
        bool again = reboots_image(cx); /* the reboot boots what the first boot wrote */
        if (again || e->disk_link || (boot_persistent() && mode == BOOT_DISK)) {
            /* The emulator may write to its disk: give it a private copy so
             * the cached image is never changed (a persistent boot keeps
             * its copy from one boot to the next). copy_file keeps the
             * image's holes. No `disks` name has a dot: "image.NAME" is
             * none of theirs. */
            char *name = again ? xasprintf("image.%s", path_basename(img))
                               : xstrdup(e->disk_link ? e->disk_link : path_basename(img));
            char *link = path_join(priv, name);
            free(name);
            bool have = boot_persistent() && path_exists(link);
            double t0 = now_seconds();
            if (!have && !again)
                printf("copying %s to %s (the emulator writes to its disk)\n", img, link);
            if (!have && copy_file(img, link) < 0) {
                cx_fail(cx, "cannot copy %s to %s: %s", img, link, strerror(errno));
                free(link);
                goto out;
            }
            if (again) {
                printf("reboot_from = \"%s\": the first boot runs on a writable copy of the "
                       "image, which the reboot boots again: %s (sparse, copied in %.1f s)\n",
                       REBOOT_IMAGE, link, now_seconds() - t0);
                reboot_disk = xstrdup(link);
            }
            free(img);
            img = link;
        }
        emu_vars_set(&v, "image", img);
    } else if (mode == BOOT_NETBOOT) {
        /* The TFTP root: the stage's tftp/ directory if it has one (the
         * netboot kind's layout), else its whole output. */
        char *dir = path_join(cx_dep(cx, image), "tftp");
        if (!is_dir(dir)) {
            free(dir);
            dir = xstrdup(cx_dep(cx, image));
        }
        char *bootfile = file ? xstrdup(file) : NULL;
        if (bootfile) {
            char *p = path_join(dir, bootfile);
            bool ok = path_exists(p);
            free(p);
            if (!ok) {
                cx_fail(cx, "no boot file '%s' (setting `file`) in the TFTP root %s", bootfile,
                        dir);
                free(bootfile);
                free(dir);
                goto out;
            }
        } else {
            const char *efi = strcmp(cx->arch, "ia64") == 0 ? "bootia64.efi" : "bootx64.efi";
            char *def = xasprintf("%s,*.efi", efi);
            char *p = find_file(dir, def);
            if (!p) {
                cx_fail(cx, "no %s in the TFTP root %s; name the boot file with the setting "
                        "`file`", def, dir);
                free(def);
                free(dir);
                goto out;
            }
            free(def);
            bootfile = xstrdup(p + strlen(dir) + 1);
            free(p);
        }
        if (e->netboot_standin) {
            char *sd = make_standin(cx, dir, bootfile, priv, &standin_files);
            if (sd) {
                emu_vars_set(&v, "image", sd);
                serve_tftp = xstrdup(dir);
                serve_conf = path_join(cx_dep(cx, image), "dnsmasq.conf");
                serve_img = sd;
            }
            if (sd && !path_exists(serve_conf))
                cx_fail(cx, "stage '%s' has no dnsmasq.conf to serve its tree with", image);
            if (!sd || !path_exists(serve_conf)) {
                free(bootfile);
                free(dir);
                goto out;
            }
        } else {
            emu_vars_set(&v, "tftp", dir);
            emu_vars_set(&v, "bootfile", bootfile);
        }
        printf("netboot: tftp root %s, boot file %s\n", dir, bootfile);
        free(bootfile);
        free(dir);
    }
    if (mode == BOOT_KERNEL || emulator_uses(e, mode, "kernel")) {
        const char *kst = mode == BOOT_KERNEL ? image : cx_str(cx, "kernel");
        const char *kf = mode == BOOT_KERNEL ? file : cx_str(cx, "kernel_file");
        kernel = dep_file(cx, kst, kf, mode == BOOT_KERNEL ? "file" : "kernel_file",
                          e->kernel_names);
        if (!kernel)
            goto out;
        emu_vars_set(&v, "kernel", kernel);
        const char *append = cx_str(cx, "append") ? cx_str(cx, "append") : e->default_append;
        emu_vars_set(&v, "append", append);
    }
    if (mode == BOOT_KERNEL && initrd_stage(cx->st)) {
        initrd = dep_file(cx, initrd_stage(cx->st), cx_str(cx, "initrd_file"), "initrd_file",
                          "initrd*,initramfs*,*.cpio*");
        if (!initrd)
            goto out;
        emu_vars_set(&v, "initrd", initrd);
    }
    if (cx_str(cx, "http") && serve_http(cx, priv, &v, &http_log) != 0)
        goto out;
    char *mem = xasprintf("%lld", cx_int(cx, "memory_mib", 1024));
    emu_vars_set(&v, "memory", mem);
    free(mem);
    emu_vars_set(&v, "accel", cx_str(cx, "accel") ? cx_str(cx, "accel") : e->default_accel);
    emu_vars_set(&v, "work", priv);
    emu_vars_set(&v, "snapshot", boot_persistent() || reboots_image(cx) ? "off" : "on");
    cx_list(cx, "extra_args", &extra);
    /* blank disks after the image (`disks`), kept for `reboot_from` */
    struct strlist disks = {0};
    cx_list(cx, "disks", &disks);
    for (size_t i = 0; i < extra.n; i++)
        strlist_push(&extra1, extra.v[i]);
    for (size_t i = 0; i < disks.n; i++) {
        char name[64];
        long long mib = 0;
        disk_spec(disks.v[i], name, sizeof name, &mib); /* declare() checked it */
        char *rel = xasprintf("%s.img", name);
        char *p = path_join(priv, rel);
        free(rel);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || ftruncate(fd, mib * 1024 * 1024) < 0 || close(fd) < 0) {
            cx_fail(cx, "cannot make the blank disk %s (disks: \"%s\"): %s", p, disks.v[i],
                    strerror(errno));
            free(p);
            strlist_free(&disks);
            goto out;
        }
        printf("blank disk '%s': %s (%lld MiB)\n", name, p, mib);
        strlist_push(&extra1, "-drive");
        char *d = xasprintf("file=%s,format=raw%s", p, e->extra_disk_opts ? e->extra_disk_opts : "");
        strlist_push(&extra1, d);
        free(d);
        if (cx_str(cx, "reboot_from") && strcmp(cx_str(cx, "reboot_from"), name) == 0)
            reboot_disk = xstrdup(p);
        free(p);
    }
    strlist_free(&disks);
    if (emulator_argv(e, (enum boot_mode)mode, binary, &v, &extra1, &argv, &err) < 0) {
        cx_fail(cx, "%s", err);
        goto out;
    }
    if (serve_img) { /* the emulator runs under the server (netserve.h) */
        char *self = self_exe(priv);
        if (!self) {
            cx_fail(cx, "cannot find this program (/proc/self/exe: %s) to run the netboot "
                    "server", strerror(errno));
            goto out;
        }
        struct strlist w = {0};
        char *spec = xasprintf("%s@@%lld", serve_img, STANDIN_OFFSET); /* mtools' -i */
        const char *head[] = {self, NETSERVE_COMMAND, "--work", priv, "--tftp", serve_tftp,
                              "--conf", serve_conf, "--standin", spec, NULL};
        for (size_t i = 0; head[i]; i++)
            strlist_push(&w, head[i]);
        free(spec);
        free(self);
        for (size_t i = 0; i < standin_files.n; i++) {
            strlist_push(&w, "--file");
            strlist_push(&w, standin_files.v[i]);
        }
        strlist_push(&w, "--");
        for (size_t i = 0; i < argv.n; i++)
            strlist_push(&w, argv.v[i]);
        strlist_free(&argv);
        argv = w;
    }
    if (boot_into()) { /* trillian boot: the line, not the check */
        rc = write_argv(cx, boot_into(), &argv) == 0 ? STAGE_SKIPPED : 1;
        if (rc == STAGE_SKIPPED)
            printf("prepared for trillian boot in %s (no check run)\n", boot_into());
        goto out;
    }

    /* Steps. */
    if (get_steps(cx, e, &steps) != 0)
        goto out;
    n1 = steps.n;
    if (reboot_disk) { /* the reboot's steps after the first boot's, in one list */
        struct steps s2;
        if (steps_parse_node(cx_node(cx, "reboot_steps"), &s2, &err) < 0) {
            cx_fail(cx, "reboot_steps: %s", err); /* declare() checked; not reached */
            goto out;
        }
        steps.v = xrealloc(steps.v, (n1 + s2.n) * sizeof *steps.v);
        memcpy(steps.v + n1, s2.v, s2.n * sizeof *s2.v);
        for (size_t i = 0; i < s2.n; i++) { /* say which boot a step belongs to */
            struct step *st = &steps.v[n1 + i];
            char *n = st->name ? xasprintf("after reboot: %s", st->name)
                               : xstrdup("after reboot");
            free(st->name);
            st->name = n;
        }
        steps.n = n1 + s2.n;
        free(s2.v);
    }
    res = xcalloc(steps.n ? steps.n : 1, sizeof *res);
    have_fail = fail_regex(cx, &fail_re, &fail_src);
    if (e->halt_regex)
        have_halt = console_compile(&halt_re, e->halt_regex, NULL) == 0;

    /* Boot ("$ ARGV" comes from console_start). */
    log_path = xasprintf("%s/%s.log", cx->out, cx->name);
    printf("console on a %s; transcript in %s.log (OUT/%s/%s.log)\n",
           e->console_pty ? "pty" : "pipe", cx->name, cx->name, cx->name);
    fflush(stdout);
    double t0 = now_seconds();
    if (console_start(&c, (const char *const *)argv.v, e->console_pty, log_path, &err) < 0) {
        cx_fail(cx, "%s", err);
        goto out;
    }
    console_guard(&c);
    struct run_opts ro = {
        .total_timeout = (double)cx_int(cx, "timeout_total", 1800),
        .fail_re = have_fail ? &fail_re : NULL,
        .fail_pattern = fail_src,
        .halt_re = have_halt ? &halt_re : NULL,
        .exits_on_poweroff = e->exits_on_poweroff,
        .log = stdout,
    };
    struct steps first = {steps.v, n1};
    long failed = steps_run(&c, &first, &ro, res);
    transcript = xstrdup(c.text.p ? c.text.p : "");
    for (size_t i = n1; i < steps.n; i++)
        res[i].status = STEP_NOT_RUN;
    if (failed < 0 && reboot_disk) {
        failed = reboot_run(cx, e, binary, &v, &extra, reboot_disk, log_path, &ro,
                            &steps, n1, res, &c, &transcript);
    }
    double secs = now_seconds() - t0;
    if (http_log)
        http_summary(http_log);
    /* a check whose results could not be written fails: its cached outputs
     * would lack what `trillian check`, the manifest and the report read */
    int unwritten = write_junit(cx, e, mode, &steps, res, secs, transcript);
    unwritten |= write_manifest(cx, e, binary, mode, failed < 0, &steps, res, secs, n1);
    if (failed < 0 && unwritten) {
        rc = cx_fail(cx, "the boot check passed but its results could not be written to %s "
                     "(above); free space there and run it again", cx->out);
    } else if (failed < 0) {
        printf("%s: PASS: %zu/%zu steps in %.1f s (%s, boot = %s)", cx->name, steps.n, steps.n,
               secs, e->name, boot_mode_names[mode]);
        if (steps.n && steps.v[0].kind == STEP_WAIT)
            printf("; first wait (%s) took %.1f s", steps.v[0].name ? steps.v[0].name : "boot",
                   res[0].seconds);
        printf("\n");
        rc = 0;
    } else {
        const struct step *st = &steps.v[failed];
        char *n = case_name(&steps, (size_t)failed);
        printf("%s: FAIL at step %ld/%zu (%s) after %.1f s: %s\n", cx->name, failed + 1,
               steps.n, n, secs, res[failed].message);
        if (st->kind == STEP_WAIT || st->kind == STEP_EXPECT)
            printf("  expected: /%s/ within %.0f s (regex, matched against console text "
                   "since the last match)\n", st->arg, st->timeout);
        printf("  last console lines:\n");
        char *tail = res[failed].tail;
        for (char *line = tail, *nl; line && *line; line = nl ? nl + 1 : NULL) {
            nl = strchr(line, '\n');
            printf("  | %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
            if (!nl)
                break;
        }
        printf("  transcript: %s.log, report: %s.junit.xml, in the build output's %s/\n",
               cx->name, cx->name, cx->name);
        char *server = serve_img ? server_failure(c.text.p) : NULL;
        if (server)
            cx_fail(cx, "boot check failed at step %ld (%s): the netboot server failed: %s",
                    failed + 1, n, server);
        else
            cx_fail(cx, "boot check failed at step %ld (%s): %s", failed + 1, n,
                    res[failed].message);
        free(server);
        free(n);
        rc = 1;
    }

out:
    fflush(stdout);
    console_close(&c);
    if (res)
        step_results_free(res, steps.n);
    free(res);
    steps_free(&steps);
    if (have_fail)
        regfree(&fail_re);
    if (have_halt)
        regfree(&halt_re);
    free(fail_src);
    free(log_path);
    free(reboot_disk);
    free(transcript);
    strlist_free(&extra1);
    free(err);
    free(binary);
    free(fw);
    free(img);
    free(kernel);
    free(initrd);
    emu_vars_free(&v);
    strlist_free(&argv);
    strlist_free(&extra);
    strlist_free(&standin_files);
    free(serve_tftp);
    free(serve_conf);
    free(serve_img);
    free(http_log);
    return rc;
}

/* Added after the kind shipped: left out of the key while unset, so the
 * keys of existing checks stay the same. */
static const char *const late_fields[] = {"disks",    "reboot_from", "reboot_steps",
                                          "report_kind", "sysvinit", "http", NULL};

const struct stage_kind stage_boot = {
    .name = "boot",
    .section = "bootcheck",
    .version = 2,
    .summary = "boot an image in an emulator and check its serial console",
    .fields = fields,
    .late_fields = late_fields,
    .tools = NULL,
    .outputs = NULL,
    .publish_failed = true, /* passing checks are cached; `trillian check` reruns them */
    .fail_exit = 3,
    .declare = declare,
    .run = run,
};
