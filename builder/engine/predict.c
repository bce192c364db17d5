/* Plan-time predictions (predict.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "drivers/emulator.h"
#include "drivers/fetch.h"
#include "predict.h"

const char *const outcome_names[] = {"skip", "fail", "root", "network", NULL};

static void add(struct predictions *p, enum outcome what, const char *fmt, ...) PRINTF_LIKE(3, 4);
static void add(struct predictions *p, enum outcome what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = NULL;
    if (vasprintf(&why, fmt, ap) < 0)
        abort();
    va_end(ap);
    p->v = xrealloc(p->v, (p->n + 1) * sizeof *p->v);
    p->v[p->n++] = (struct prediction){what, why};
}

void predictions_free(struct predictions *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i].why);
    free(p->v);
    p->v = NULL;
    p->n = 0;
}

bool recipe_has_section(const struct recipe *r, const char *section)
{
    for (size_t i = 0; i < r->nstages; i++)
        if (!strcmp(r->stages[i]->section, section))
            return true;
    return false;
}

/* The boot mode as bootcheck.c's mode_of finds it (the `boot` setting, else
 * the kind of the images entry), or -1 where that one would report an error
 * at run time anyway. */
static int boot_mode(const struct stage *st)
{
    const char *b = st_str(st, "boot"), *image = st_str(st, "image");
    if (b)
        return boot_mode_parse(b);
    if (image && !strcmp(image, "kernel"))
        return BOOT_KERNEL;
    const struct stage *img = image ? recipe_stage(st->recipe, image) : NULL;
    return img && !strcmp(img->section, "images") ? boot_mode_parse(img->kind->name) : -1;
}

/* A boot check: its emulator and firmware, found as the check will find
 * them. Without `optional = true` a missing one fails the check. */
static void predict_bootcheck(const struct stage *st, struct predictions *out)
{
    const char *name = st_str(st, "emulator");
    if (!name) /* bootcheck.c's default */
        name = !strcmp(st->recipe->arch, "ia64") ? "ski" : "qemu-x86_64";
    const struct emulator *e = emulator_find(name);
    if (!e)
        return; /* a recipe error, reported already */
    /* a netboot server's tap (drivers/netserve.c): as another user than
     * root, in a user namespace, it needs /dev/net/tun */
    if (e->netboot_standin && boot_mode(st) == BOOT_NETBOOT && geteuid() != 0 &&
        access("/dev/net/tun", R_OK | W_OK) != 0)
        add(out, PR_FAIL, "its netboot server: uid %u cannot open /dev/net/tun (%s) to make "
            "its tap: run the check as root, or give the device mode 0666 (Debian's default)",
            (unsigned)geteuid(), strerror(errno));
    /* An emulator the recipe builds itself (an `emulators` stage) is not
     * there yet at plan time and will be when the check runs. */
    if (recipe_has_section(st->recipe, "emulators"))
        return;
    bool optional = st_bool(st, "optional", false);
    enum outcome what = optional ? PR_SKIP : PR_FAIL;
    const char *then = optional ? "" : " (or set optional = true to skip it instead)";
    const char *how = NULL;
    char *bin = emulator_binary(e, st_str(st, "binary"), NULL, &how);
    if (!bin) {
        const char *env = e->env ? getenv(e->env) : NULL;
        if (env && *env)
            add(out, what, "emulator %s: %s=%s is not an executable program%s", e->name, e->env,
                env, then);
        else if (st_str(st, "binary"))
            add(out, what, "emulator %s: setting binary = \"%s\" is not an executable "
                "program%s", e->name, st_str(st, "binary"), then);
        else
            add(out, what, "emulator %s is not installed (%s is not on PATH): %s%s%s%s", e->name,
                e->program, e->install, strstr(e->install, e->env) ? "" : ", or set ",
                strstr(e->install, e->env) ? "" : e->env, then);
        return;
    }
    free(bin);
    int mode = boot_mode(st);
    if (mode < 0 || emulator_needs(e, (enum boot_mode)mode, "firmware") != 2)
        return;
    const char *set = e->firmware_key ? st_str(st, e->firmware_key) : NULL;
    char *setting = set && *set ? path_absolute(st->recipe->dir, set) : NULL;
    char *fw = emulator_firmware(e, setting, NULL, &how);
    if (!fw)
        add(out, what, "emulator %s: no readable firmware (%s)%s", e->name, e->firmware_install,
            then);
    free(fw);
    free(setting);
}

static bool is_remote_url(const char *u)
{
    return str_starts(u, "http://") || str_starts(u, "https://") || str_starts(u, "ftp://");
}

/* The stage's pinned downloads (recipe->remotes: "SHA\tNAME\tURL\tLOC:
 * KEYPATH[.KEY]") that neither the cache nor a local mirror holds. */
static void predict_downloads(const struct stage *st, const char *cache, struct predictions *out)
{
    const struct recipe *r = st->recipe;
    struct buf names = BUF_INIT;
    size_t n = 0;
    for (size_t i = 0; i < r->remotes.n; i++) {
        char *f[4] = {0}, *copy = xstrdup(r->remotes.v[i]), *p = copy;
        for (int j = 0; j < 4 && p; j++) {
            f[j] = p;
            if ((p = j < 3 ? strchr(p, '\t') : NULL))
                *p++ = 0;
        }
        const char *kp = NULL; /* after the last ": " of LOC: KEYPATH */
        for (const char *s = f[3]; s && (s = strstr(s, ": ")); s += 2)
            kp = s + 2;
        size_t kl = strlen(st->keypath);
        if (kp && !strncmp(kp, st->keypath, kl) && (kp[kl] == '.' || !kp[kl]) &&
            !fetch_available(cache, *f[2] ? f[2] : NULL, *f[1] ? f[1] : NULL, f[0])) {
            const char *shown = *f[2] ? path_basename(f[2]) : f[1];
            buf_printf(&names, "%s%s%s", n++ ? ", " : "", shown,
                       is_remote_url(f[2]) ? "" : " (only a mirror has it)");
        }
        free(copy);
    }
    if (n)
        add(out, PR_NETWORK, "downloads %zu input%s neither the cache nor a local mirror has: "
            "%s (`trillian fetch` gets them now; --mirror DIR offline)", n, n == 1 ? "" : "s",
            names.p);
    buf_free(&names);
}

void predict_stage(const struct stage *st, const char *cache, struct predictions *out)
{
    if (!strcmp(st->section, "bootcheck"))
        predict_bootcheck(st, out);
    if (!strcmp(st->section, "userland") && !strcmp(st->kind->name, "debootstrap-base")) {
        /* the package install, as debootstrap.c decides at run time (the
         * configuration step needs neither root nor the network) */
        bool foreign = st_bool(st, "foreign", false);
        if (!foreign && geteuid() != 0)
            add(out, PR_ROOT, "debootstrap of the build host's architecture chroots into the "
                "new system: run trillian as root, or set userland.foreign = true");
        else if (foreign && geteuid() != 0 && access("/usr/bin/fakeroot", X_OK) != 0)
            add(out, PR_ROOT, "userland.foreign = true without root needs fakeroot: install the "
                "fakeroot package, or run trillian as root");
        /* with `archive` the mirror is that stage's output, on this disk */
        const char *mirror = st_isset(st, "archive") ? NULL : st_str(st, "mirror");
        if (mirror && is_remote_url(mirror))
            add(out, PR_NETWORK, "debootstrap downloads the packages from %s", mirror);
    }
    predict_downloads(st, cache, out);
}
