/* Helpers shared by the debian-libc, busybox and minimal-root kinds
 * (sysroot.h). */
#define _GNU_SOURCE
#include "sysroot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct libc_names libc_table[] = {
    {"amd64", "x86_64-linux-gnu", "ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2",
     "libc.so.6", "libc6", "libc6-dev"},
    {"ia64", "ia64-linux-gnu", "ld-linux-ia64.so.2", "/lib/ld-linux-ia64.so.2", "libc.so.6.1",
     "libc6.1", "libc6.1-dev"},
    {"arm64", "aarch64-linux-gnu", "ld-linux-aarch64.so.1", "/lib/ld-linux-aarch64.so.1",
     "libc.so.6", "libc6", "libc6-dev"},
    {0},
};

const struct libc_names *libc_names_of(const char *arch)
{
    for (const struct libc_names *l = libc_table; l->arch; l++)
        if (arch && strcmp(l->arch, arch) == 0)
            return l;
    return NULL;
}

/* ---- stages of the recipe ----------------------------------------------- */

static const char *const libc_kinds[] = {"glibc", "debian-libc", NULL};

/* The stage NAME if it is a packages or stages entry, or the stage of the
 * section NAME ("toolchain"), else NULL. */
static const struct stage *named_stage(const struct stage *st, const char *name)
{
    const struct stage *p = name ? st_peer(st, name) : NULL;
    if (!p)
        return NULL;
    const char *sec = st_section(p);
    return !strcmp(sec, "packages") || !strcmp(sec, "stages") || !strcmp(sec, name) ? p : NULL;
}

const char *sr_stage_kind(const struct stage *st, const char *name)
{
    const struct stage *p = named_stage(st, name);
    return p ? st_kind(p) : NULL;
}

const struct stage_kind *sr_stage_kind_def(const struct stage *st, const char *name)
{
    const struct stage *p = named_stage(st, name);
    return p ? st_kind_def(p) : NULL;
}

static bool is_libc_kind(const char *k)
{
    for (size_t i = 0; k && libc_kinds[i]; i++)
        if (!strcmp(k, libc_kinds[i]))
            return true;
    return false;
}

/* The recipe's C library stage names, in order. */
static void libc_stages(const struct stage *st, struct strlist *out)
{
    const struct stage *p;
    for (size_t i = 0; (p = st_peers(st, "packages", NULL, &i));)
        if (is_libc_kind(st_kind(p)))
            strlist_push(out, st_name(p));
}

const char *sr_libc_name(const struct stage *st, const char *key)
{
    const char *want = st_str(st, key);
    struct strlist libcs = {0};
    libc_stages(st, &libcs);
    const char *found = want ? want
                        : strlist_contains(&libcs, "glibc") ? "glibc"
                        : libcs.n == 1 ? libcs.v[0] : NULL;
    /* the stage's own name: it outlives our list */
    const struct stage *p = named_stage(st, found);
    const char *r = p && (!strcmp(st_section(p), "packages") || !strcmp(st_section(p), "stages"))
                    ? st_name(p) : NULL;
    strlist_free(&libcs);
    return r;
}

const char *sr_libc_stage(struct stage *st, const char *key)
{
    const char *want = st_str(st, key);
    const char *r = sr_libc_name(st, key);
    if (r) {
        st_need(st, r);
        return r;
    }
    struct strlist libcs = {0};
    libc_stages(st, &libcs);
    if (want)
        st_error(st, key, "no stage named '%s' in the recipe (the C library: a packages stage "
                 "of kind glibc or debian-libc%s%s)", want, libcs.n ? "; the recipe has " : "",
                 libcs.n ? libcs.v[0] : "");
    else if (libcs.n)
        st_error(st, key, "the recipe has several C library stages: set %s to one", key);
    else
        st_error(st, key, "the recipe has no C library stage: add a packages stage of kind "
                 "glibc or debian-libc, or set %s", key);
    strlist_free(&libcs);
    return NULL;
}

const char *sr_compiler_name(const struct stage *st, const char *key)
{
    const char *want = st_str(st, key);
    return want ? want : st_has_stage(st, "gcc") ? "gcc" : "toolchain";
}

const char *sr_compiler_stage(struct stage *st, const char *key)
{
    const char *name = sr_compiler_name(st, key);
    if (!st_has_stage(st, name)) {
        st_error(st, key, "no stage named '%s' in the recipe (the compiler: the toolchain "
                 "section, or a packages stage of kind gcc)", name);
        return NULL;
    }
    st_need(st, name);
    return name;
}

/* ---- the archive ------------------------------------------------------------ */

bool sr_debootstrap_userland(const struct stage *st)
{
    const struct stage *u = st_peer(st, "userland");
    return u && !strcmp(st_section(u), "userland") && !strcmp(st_kind(u), "debootstrap");
}

static const char *pick(const struct stage *st, const char *key, const char *def)
{
    const char *v = st_str(st, key);
    if (v)
        return v;
    /* debootstrap's defaults are the same as DEF */
    return sr_debootstrap_userland(st) ? st_str(st_peer(st, "userland"), key) : def;
}

void sr_archive_of(const struct stage *st, struct sr_archive *a)
{
    a->mirror = pick(st, "mirror", SR_DEFAULT_MIRROR);
    a->suite = pick(st, "suite", SR_DEFAULT_SUITE);
    a->keyring = pick(st, "keyring", SR_DEFAULT_KEYRING);
    a->components = (struct strlist){0};
    st_list(st, "components", &a->components);
    if (!a->components.n && sr_debootstrap_userland(st))
        st_list(st_peer(st, "userland"), "components", &a->components);
    if (!a->components.n)
        strlist_push(&a->components, "main");
}

void sr_declare_archive(struct stage *st, const struct sr_archive *a)
{
    if (!(str_starts(a->mirror, "http://") || str_starts(a->mirror, "https://") ||
          str_starts(a->mirror, "file:/")))
        st_error(st, "mirror", "'%s' is not an archive URL (expected http://, https:// or "
                 "file:/)", a->mirror);
    if (!path_exists(a->keyring))
        st_error(st, "keyring", "%s does not exist (expected an OpenPGP keyring such as "
                 SR_DEFAULT_KEYRING ")", a->keyring);
    else
        st_input_file(st, "keyring", a->keyring);
    struct buf b = BUF_INIT;
    buf_printf(&b, "%s %s", a->mirror, a->suite);
    for (size_t i = 0; i < a->components.n; i++)
        buf_printf(&b, " %s", a->components.v[i]);
    st_input_text(st, "archive", b.p);
    buf_free(&b);
}

/* ---- sysroot files ------------------------------------------------------- */

char *sr_find_lib(const char *root, const char *triplet, const char *name)
{
    char *dirs[] = {xasprintf("lib/%s", triplet), xstrdup("lib"), xstrdup("lib64"),
                    xasprintf("usr/lib/%s", triplet), xstrdup("usr/lib"), xstrdup("usr/lib64")};
    char *found = NULL;
    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        char *rel = path_join(dirs[i], name);
        char *abs = path_join(root, rel);
        struct stat sb;
        if (!found && lstat(abs, &sb) == 0)
            found = rel;
        else
            free(rel);
        free(abs);
        free(dirs[i]);
    }
    return found;
}

/* Runtime libraries by soname prefix: the dynamic loader, glibc's libraries
 * that programs and NSS load, libcrypt and libgcc_s. */
static const char *const runtime_prefixes[] = {
    "ld-linux", "libc.so.", "libm.so.", "libresolv.so.", "libnss_files.so.", "libnss_dns.so.",
    "libpthread.so.", "libdl.so.", "librt.so.", "libutil.so.", "libanl.so.", "libcrypt.so.",
    "libgcc_s.so.", NULL,
};

bool sr_runtime_lib(const char *name)
{
    for (size_t i = 0; runtime_prefixes[i]; i++)
        if (str_starts(name, runtime_prefixes[i])) {
            /* a versioned object (lib.so.N[.M...]): not the unversioned
             * linker script or link, not libc.so.6-gdb.py */
            const char *so = strstr(name, ".so.");
            if (!so || !so[4])
                return false;
            for (const char *p = so + 4; *p; p++)
                if (!(*p >= '0' && *p <= '9') && *p != '.')
                    return false;
            return true;
        }
    return false;
}

/* "../.." for REL's depth below the root ("lib64/x" -> ".."). */
static char *up_to_root(const char *rel)
{
    struct buf b = BUF_INIT;
    for (const char *p = strchr(rel, '/'); p; p = strchr(p + 1, '/'))
        buf_puts(&b, b.n ? "/.." : "..");
    return b.n ? buf_detach(&b) : xstrdup(".");
}

int sr_relative_links(const char *root)
{
    struct strlist l = {0};
    if (list_tree(root, &l) < 0)
        return -1;
    int n = 0;
    for (size_t i = 0; i < l.n; i++) {
        char *p = path_join(root, l.v[i]);
        char t[4096];
        ssize_t len = readlink(p, t, sizeof t - 1);
        if (len > 1 && t[0] == '/') {
            t[len] = 0;
            char *up = up_to_root(l.v[i]);
            char *nt = xasprintf("%s%s", up, t);
            if (unlink(p) == 0 && symlink(nt, p) == 0)
                n++;
            free(nt);
            free(up);
        }
        free(p);
    }
    strlist_free(&l);
    return n;
}

char *sr_resolve_in_root(const char *root, const char *path)
{
    char *p = path_join(root, path[0] == '/' ? path + 1 : path);
    for (int hops = 0; hops < 40; hops++) {
        /* resolve the first symlink component from the left */
        size_t rl = strlen(root);
        bool changed = false;
        for (char *c = p + rl; c && *c; c = strchr(c + 1, '/')) {
            char *end = strchr(c + 1, '/');
            char *prefix = end ? xstrndup(p, (size_t)(end - p)) : xstrdup(p);
            char t[4096];
            ssize_t n = readlink(prefix, t, sizeof t - 1);
            if (n > 0) {
                t[n] = 0;
                char *base;
                if (t[0] == '/') {
                    base = path_join(root, t + 1);
                } else {
                    char *d = path_dirname(prefix);
                    base = path_join(d, t);
                    free(d);
                }
                char *next = end ? xasprintf("%s%s", base, end) : base;
                if (end)
                    free(base);
                free(prefix);
                free(p);
                p = next;
                changed = true;
                break;
            }
            free(prefix);
        }
        if (!changed)
            break;
    }
    return p;
}
