/* What a build built from source (report.h, report_components): each
 * toolchain, C library, userland, loader, kernel and emulator component a
 * stage's manifest names, with its version, its source and that source's
 * sha256, or the Debian package or host it was taken from instead. Read
 * from the stages' details alone, so an OUT/manifest.json of any age gives
 * them: a field an older cache entry lacks is null ("unknown" on the page)
 * until that stage is built again. */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

#include "base/json_out.h"
#include "base/util.h"
#include "report.h"
#include "stage.h"

/* KEY: S, or null when S is unknown (NULL or empty). */
static void add_str(json_object *o, const char *key, const char *s)
{
    json_object_object_add(o, key, s && *s ? json_str(s) : NULL);
}

/* Where a component came from: built here from source, a Debian binary
 * package, or the host (a program found on PATH, an external prefix). */
enum origin { FROM_SOURCE, FROM_PACKAGE, FROM_HOST };
static const char *const origin_words[] = {"source", "debian-package", "host"};

/* A download's file name as the cache keeps it ("1f12db4797c61933-gcc-16_
 * 16.2.0.orig.tar.gz": 16 hex digits of its sha256 first) without that
 * prefix: the name it was published under. Other names as they are. */
static const char *published_name(const char *s)
{
    if (!s || strlen(s) < 18 || s[16] != '-')
        return s;
    for (int i = 0; i < 16; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
            return s;
    return s + 17;
}

/* Appends a component of stage ST to ARR; returns it, for extra keys. */
static json_object *add(json_object *arr, json_object *st, const char *name, const char *version,
                        enum origin from, const char *source, const char *sha256)
{
    const char *status = json_member_str(st, "status");
    bool done = status && (!strcmp(status, "built") || !strcmp(status, "cached"));
    json_object *o = json_object_new_object();
    json_add_str(o, "component", name);
    add_str(o, "version", version);
    json_object_object_add(o, "built_here", json_object_new_boolean(from == FROM_SOURCE && done));
    json_add_str(o, "origin", origin_words[from]);
    add_str(o, "source", published_name(source));
    add_str(o, "sha256", sha256);
    add_str(o, "stage", json_member_str(st, "name"));
    add_str(o, "kind", json_member_str(st, "kind"));
    add_str(o, "status", status);
    json_object_array_add(arr, o);
    return o;
}

/* "binutils-2.40.tar.xz" or "binutils_2.47.orig.tar.xz" -> the version; "GNU assembler (GNU Binutils for
 * Debian) 2.40" -> "2.40". New string or NULL. */
static char *version_in(const char *s, const char *prefix)
{
    if (!s)
        return NULL;
    s = published_name(s);
    /* Debian's orig tarballs: "binutils_2.47.orig.tar.xz" */
    size_t pn = prefix ? strlen(prefix) : 0;
    if (prefix && pn && !strncmp(s, prefix, pn - 1) && (s[pn - 1] == '-' || s[pn - 1] == '_')) {
        const char *v = s + pn, *e = strstr(v, ".orig");
        if (!e)
            e = strstr(v, ".tar");
        return xstrndup(v, e ? (size_t)(e - v) : strlen(v));
    }
    const char *sp = strrchr(s, ' ');
    return sp && sp[1] ? xstrdup(sp + 1) : NULL;
}

static void toolchain(json_object *arr, json_object *st, json_object *d, const char *kind)
{
    if (!strcmp(kind, "build"))
        add(arr, st, "gcc", json_member_str(d, "gcc_version"), FROM_SOURCE, json_member_str(d, "gcc_source"),
            json_member_str(d, "gcc_sha256"));
    else
        add(arr, st, "gcc", json_member_str(d, "gcc_version"), FROM_HOST,
            json_member_str(d, "tarball") ? json_member_str(d, "tarball") : json_member_str(d, "prefix"), NULL);
    const char *bu = json_member_str(d, "binutils"), *pkg = json_member_str(d, "binutils_package");
    char *v = NULL;
    if (bu && strcmp(bu, "system")) {
        v = version_in(bu, "binutils-");
        add(arr, st, "binutils", v, FROM_SOURCE, bu, json_member_str(d, "binutils_sha256"));
    } else if (pkg) {
        v = version_in(json_member_str(d, "binutils_version"), NULL);
        json_object *o = add(arr, st, "binutils", v, FROM_PACKAGE, NULL, NULL);
        json_add_str(o, "package", pkg);
        add_str(o, "package_version", json_member_str(d, "binutils_debian_version"));
    } else if (json_member_str(d, "binutils_version")) {
        /* the host's TARGET-as, in an entry built before the package was
         * recorded: its --version line says whose it is ("GNU Binutils for
         * Debian": Debian's binutils-TARGET, version unknown) */
        const char *bv = json_member_str(d, "binutils_version"), *t = json_member_str(d, "target");
        v = version_in(bv, NULL);
        bool debian = strstr(bv, "for Debian") && t;
        json_object *o = add(arr, st, "binutils", v, debian ? FROM_PACKAGE : FROM_HOST, NULL,
                             NULL);
        if (debian) {
            char *p = xasprintf("binutils-%s", t);
            json_add_str(o, "package", p);
            free(p);
            json_object_object_add(o, "package_version", NULL);
        }
        json_add_str(o, "note", bv);
    }
    free(v);
}

/* The components a kind declares (stage.h, struct stage_component), read
 * from its stage's details D. */
static void declared(json_object *arr, json_object *st, json_object *d,
                     const struct stage_component *c)
{
    json_object *list = json_member(d, "sources");
    size_t n = list && json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
    for (; c->name; c++) {
        if (c->in_sources) {
            /* the generic package build's list (pkg_manifest) */
            for (size_t i = 0; i < n; i++) {
                json_object *s = json_object_array_get_idx(list, i);
                const char *nm = json_member_str(s, "name");
                if (!nm || strcmp(nm, c->name))
                    continue;
                const char *url = json_member_str(s, "url");
                add(arr, st, nm, json_member_str(s, "version"), FROM_SOURCE,
                    url ? url : json_member_str(s, "file"), json_member_str(s, "sha256"));
            }
            continue;
        }
        const char *commit = c->commit ? json_member_str(d, c->commit) : NULL;
        char *v = commit ? xasprintf("git %.12s", commit) : NULL;
        json_object *o = add(arr, st, c->name, v ? v : c->version ? json_member_str(d, c->version) : NULL,
                             c->package ? FROM_PACKAGE : FROM_SOURCE,
                             c->source ? json_member_str(d, c->source) : NULL,
                             c->sha256 ? json_member_str(d, c->sha256) : NULL);
        free(v);
        if (c->package) {
            json_add_str(o, "package", c->package);
            add_str(o, "package_version", json_member_str(d, c->package_version));
        }
        if (c->extra && json_member_str(d, c->extra))
            json_add_str(o, c->extra, json_member_str(d, c->extra));
    }
}

const struct stage_component *component_declared(json_object *comp)
{
    const struct stage_kind *k = stage_kind_named(json_member_str(comp, "kind"));
    const char *name = json_member_str(comp, "component");
    for (const struct stage_component *c = k ? k->components : NULL; c && c->name && name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

static void kernel(json_object *arr, json_object *st, json_object *d, const char *kind)
{
    if (!strcmp(kind, "package")) {
        /* the .deb, pinned by its sha256 */
        json_object *o = add(arr, st, "Linux", json_member_str(d, "release"), FROM_PACKAGE,
                             json_member_str(d, "package"), json_member_str(d, "sha256"));
        add_str(o, "package", json_member_str(d, "package"));
        add_str(o, "package_version", json_member_str(d, "version"));
        return;
    }
    json_object *o = add(arr, st, "Linux", json_member_str(d, "release"), FROM_SOURCE, json_member_str(d, "tarball"),
                         json_member_str(d, "sha256"));
    json_object *p = json_member(d, "patches");
    if (p && json_object_is_type(p, json_type_array))
        json_object_object_add(o, "patches",
                               json_object_new_int64((int64_t)json_object_array_length(p)));
}

json_object *report_components(json_object *stages)
{
    json_object *arr = json_object_new_array();
    size_t n = stages && json_object_is_type(stages, json_type_array)
                   ? json_object_array_length(stages) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *st = json_object_array_get_idx(stages, i), *d = json_member(st, "details");
        const char *kind = json_member_str(st, "kind");
        if (!kind)
            continue;
        const struct stage_kind *k;
        if (str_starts(kind, "toolchain/"))
            toolchain(arr, st, d, kind + 10);
        else if (str_starts(kind, "kernel/"))
            kernel(arr, st, d, kind + 7);
        else if ((k = stage_kind_named(kind)) && k->components)
            declared(arr, st, d, k->components);
    }
    for (size_t i = 0; i < json_object_array_length(arr); i++)
        json_one_line(json_object_array_get_idx(arr, i));
    return arr;
}
