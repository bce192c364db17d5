/* OUT/sbom.spdx.json: the build's software bill of materials as an SPDX 2.3
 * JSON document (report.h, sbom_write), from OUT/manifest.json alone like
 * the report: the build, its images, the root file system and every
 * component the manifest names (components.c) as SPDX packages, with the
 * relations between them. Reproducible: the time is SOURCE_DATE_EPOCH and
 * the namespace a hash of the document's content. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json_out.h"
#include "base/sha256.h"
#include "base/util.h"
#include "report.h"
#include "stage.h"

/* The licence each project declares for what it ships (its COPYING or
 * LICENSE file), for the toolchain's and the kernel's components; the other
 * kinds declare theirs (struct stage_component). Others are NOASSERTION,
 * never a guess. */
static const struct {
    const char *component, *licence;
} declared[] = {
    {"Linux", "GPL-2.0-only WITH Linux-syscall-note"},
    {"gcc", "GPL-3.0-or-later WITH GCC-exception-3.1"},
    {"binutils", "GPL-3.0-or-later"},
};

static const char *licence_of(json_object *comp)
{
    const struct stage_component *c = component_declared(comp);
    if (c)
        return c->licence ? c->licence : "NOASSERTION";
    const char *name = json_member_str(comp, "component");
    for (size_t i = 0; name && i < ARRAY_LEN(declared); i++)
        if (!strcmp(declared[i].component, name))
            return declared[i].licence;
    return "NOASSERTION";
}

/* How a component relates to the images: by its stage's section, else as
 * its kind declares. */
enum role { R_KERNEL, R_ROOT, R_LOADER, R_BUILD_TOOL, R_TEST_TOOL, R_OTHER };

static enum role role_of(json_object *comp)
{
    const char *kind = json_member_str(comp, "kind");
    if (!kind)
        return R_OTHER;
    if (str_starts(kind, "kernel/"))
        return R_KERNEL;
    if (str_starts(kind, "toolchain/"))
        return R_BUILD_TOOL;
    if (str_starts(kind, "emulators/"))
        return R_TEST_TOOL;
    const struct stage_component *c = component_declared(comp);
    return !c ? R_OTHER : c->role == COMPONENT_ROOT ? R_ROOT
                        : c->role == COMPONENT_LOADER ? R_LOADER : R_OTHER;
}

/* "SPDXRef-" PREFIX "-" NAME with every character SPDX ids do not allow
 * (letters, digits, '.', '-') as '-'; new string. */
static char *spdx_id(const char *prefix, const char *name)
{
    char *id = xasprintf("SPDXRef-%s-%s", prefix, name ? name : "unnamed");
    for (char *p = id + 8; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-')
            *p = '-';
    return id;
}

static bool is_url(const char *s)
{
    return s && (str_starts(s, "http://") || str_starts(s, "https://") ||
                 str_starts(s, "ftp://") || str_starts(s, "git+") || str_starts(s, "git://"));
}

/* A package with the fields SPDX 2.3 requires; the caller adds the rest. */
static json_object *package(json_object *pkgs, const char *id, const char *name,
                            const char *version, const char *location, const char *sha256,
                            const char *licence)
{
    json_object *p = json_object_new_object();
    json_add_str(p, "SPDXID", id);
    json_add_str(p, "name", name && *name ? name : "unnamed");
    if (version && *version)
        json_add_str(p, "versionInfo", version);
    json_add_str(p, "downloadLocation", location && *location ? location : "NOASSERTION");
    json_object_object_add(p, "filesAnalyzed", json_object_new_boolean(false));
    if (sha256 && strlen(sha256) == 64) {
        json_object *c = json_object_new_object(), *a = json_object_new_array();
        json_add_str(c, "algorithm", "SHA256");
        json_add_str(c, "checksumValue", sha256);
        json_object_array_add(a, c);
        json_object_object_add(p, "checksums", a);
    }
    json_add_str(p, "licenseConcluded", "NOASSERTION");
    json_add_str(p, "licenseDeclared", licence ? licence : "NOASSERTION");
    json_add_str(p, "copyrightText", "NOASSERTION");
    json_object_array_add(pkgs, p);
    return p;
}

static void relate(json_object *rels, const char *from, const char *type, const char *to)
{
    json_object *r = json_object_new_object();
    json_add_str(r, "spdxElementId", from);
    json_add_str(r, "relationshipType", type);
    json_add_str(r, "relatedSpdxElement", to);
    json_one_line(r);
    json_object_array_add(rels, r);
}

/* The artifact at PATH in the manifest: its sha256, or NULL. */
static const char *artifact_sha(json_object *m, const char *path)
{
    json_object *arts = json_member(m, "artifacts");
    size_t n = arts && json_object_is_type(arts, json_type_array) ? json_object_array_length(arts) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *a = json_object_array_get_idx(arts, i);
        const char *p = json_member_str(a, "path");
        if (p && !strcmp(p, path))
            return json_member_str(a, "sha256");
    }
    return NULL;
}

/* The completed userland stage (the root file system), or NULL. */
static json_object *root_stage(json_object *stages)
{
    size_t n = stages && json_object_is_type(stages, json_type_array)
                   ? json_object_array_length(stages) : 0;
    json_object *found = NULL;
    for (size_t i = 0; i < n; i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        const char *kind = json_member_str(st, "kind"), *status = json_member_str(st, "status");
        /* the configured root, not its package-install base stage */
        if (kind && str_starts(kind, "userland/") && !str_ends(kind, "-base") && status &&
            (!strcmp(status, "built") || !strcmp(status, "cached")))
            found = st;
    }
    return found;
}

static json_object *document(json_object *m)
{
    const char *name = json_member_str(m, "name");
    json_object *stages = json_member(m, "stages"), *own = NULL;
    json_object *comps = json_member(m, "components");
    if (!comps)
        comps = own = report_components(stages);
    json_object *doc = json_object_new_object(), *pkgs = json_object_new_array();
    json_object *rels = json_object_new_array();

    /* the build, which the document describes */
    char *build = spdx_id("Build", name);
    json_object *bp = package(pkgs, build, name, NULL, NULL, NULL, "NOASSERTION");
    char *bc = xasprintf("the Trillian build of recipe %s (%s)", name ? name : "?",
                         json_member_str(m, "recipe") ? json_member_str(m, "recipe") : "?");
    json_add_str(bp, "comment", bc);
    free(bc);
    relate(rels, "SPDXRef-DOCUMENT", "DESCRIBES", build);

    /* the images */
    json_object *imgs = json_member(m, "images");
    size_t nimg = imgs && json_object_is_type(imgs, json_type_array) ? json_object_array_length(imgs) : 0;
    char **img_ids = xcalloc(nimg + 1, sizeof *img_ids);
    for (size_t i = 0; i < nimg; i++) {
        json_object *im = json_object_array_get_idx(imgs, i);
        img_ids[i] = spdx_id("Image", json_member_str(im, "stage"));
        json_object *p = package(pkgs, img_ids[i], json_member_str(im, "stage"), NULL, NULL,
                                 json_member_str(im, "sha256"), "NOASSERTION");
        if (json_member_str(im, "path"))
            json_add_str(p, "packageFileName", json_member_str(im, "path"));
        json_add_str(p, "primaryPackagePurpose", "OPERATING_SYSTEM");
        relate(rels, build, "CONTAINS", img_ids[i]);
    }

    /* the root file system, which holds the C library, busybox, libgcc */
    json_object *rst = root_stage(stages);
    char *root = NULL;
    if (rst) {
        const char *rn = json_member_str(rst, "name");
        root = spdx_id("Root", rn);
        char *tar = xasprintf("%s/rootfs.tar", rn ? rn : "");
        json_object *p = package(pkgs, root, "root file system", NULL, NULL, artifact_sha(m, tar),
                                 "NOASSERTION");
        if (artifact_sha(m, tar))
            json_add_str(p, "packageFileName", tar);
        free(tar);
        char *c = xasprintf("stage %s (%s)", rn ? rn : "?", json_member_str(rst, "kind"));
        json_add_str(p, "comment", c);
        free(c);
        for (size_t i = 0; i < nimg; i++)
            relate(rels, img_ids[i], "CONTAINS", root);
        if (!nimg)
            relate(rels, build, "CONTAINS", root);
    }

    /* the components */
    size_t nc = comps && json_object_is_type(comps, json_type_array) ? json_object_array_length(comps) : 0;
    for (size_t i = 0; i < nc; i++) {
        json_object *c = json_object_array_get_idx(comps, i);
        const char *cn = json_member_str(c, "component"), *src = json_member_str(c, "source");
        const char *origin = json_member_str(c, "origin");
        char *idn = xasprintf("%zu-%s", i + 1, cn ? cn : "component");
        char *id = spdx_id("Component", idn);
        free(idn);
        json_object *p = package(pkgs, id, cn, json_member_str(c, "version"),
                                 is_url(src) ? src : NULL, json_member_str(c, "sha256"),
                                 licence_of(c));
        if (src && !is_url(src))
            json_add_str(p, "packageFileName", src);
        char *note;
        if (origin && !strcmp(origin, "debian-package"))
            note = xasprintf("Debian package %s %s, stage %s",
                             json_member_str(c, "package") ? json_member_str(c, "package") : "?",
                             json_member_str(c, "package_version") ? json_member_str(c, "package_version") : "(version unknown)",
                             json_member_str(c, "stage") ? json_member_str(c, "stage") : "?");
        else
            note = xasprintf("%s, stage %s (%s)",
                             origin && !strcmp(origin, "host") ? "the host's" : "built from source",
                             json_member_str(c, "stage") ? json_member_str(c, "stage") : "?",
                             json_member_str(c, "kind") ? json_member_str(c, "kind") : "?");
        json_add_str(p, "comment", note);
        free(note);
        enum role r = role_of(c);
        if (r == R_ROOT && root) {
            relate(rels, root, "CONTAINS", id);
        } else if ((r == R_KERNEL || r == R_LOADER || r == R_ROOT) && nimg) {
            for (size_t k = 0; k < nimg; k++)
                relate(rels, img_ids[k], "CONTAINS", id);
        } else if (r == R_BUILD_TOOL || r == R_TEST_TOOL) {
            relate(rels, id, r == R_BUILD_TOOL ? "BUILD_TOOL_OF" : "TEST_TOOL_OF", build);
        } else {
            relate(rels, build, "CONTAINS", id);
        }
        free(id);
    }
    for (size_t i = 0; i < nimg; i++)
        free(img_ids[i]);
    free(img_ids);
    free(root);
    json_object_put(own);

    /* the header, its namespace a hash of what follows */
    const char *body = json_object_to_json_string_ext(pkgs, JSON_C_TO_STRING_PLAIN);
    struct buf all = BUF_INIT;
    buf_puts(&all, body);
    buf_puts(&all, json_object_to_json_string_ext(rels, JSON_C_TO_STRING_PLAIN));
    char hex[65];
    sha256_hex(all.p, all.n, hex);
    buf_free(&all);
    json_add_str(doc, "spdxVersion", "SPDX-2.3");
    json_add_str(doc, "dataLicense", "CC0-1.0");
    json_add_str(doc, "SPDXID", "SPDXRef-DOCUMENT");
    char *dn = xasprintf("trillian-%s", name ? name : "build");
    json_add_str(doc, "name", dn);
    char *ns = xasprintf("https://spdx.org/spdxdocs/%s-%s", dn, hex);
    json_add_str(doc, "documentNamespace", ns);
    free(ns);
    free(dn);
    json_object *ci = json_object_new_object(), *creators = json_object_new_array();
    time_t t = (time_t)json_object_get_int64(json_member(m, "source_date_epoch"));
    struct tm tm;
    char when[32];
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_add_str(ci, "created", when);
    char *tool = xasprintf("Tool: trillian-%s",
                           json_member_str(m, "trillian") ? json_member_str(m, "trillian") : "unknown");
    json_object_array_add(creators, json_str(tool));
    free(tool);
    json_object_object_add(ci, "creators", creators);
    json_object_object_add(doc, "creationInfo", ci);
    json_object_object_add(doc, "packages", pkgs);
    json_object_object_add(doc, "relationships", rels);
    free(build);
    return doc;
}

int sbom_write(const char *outdir, json_object *m)
{
    json_object *doc = document(m);
    char *text = xasprintf("%s\n", json_object_to_json_string_ext(doc, JSON_FLAGS));
    json_object_put(doc);
    char *path = path_join(outdir, "sbom.spdx.json");
    int rc = write_file_atomic(path, text, strlen(text), 0644);
    if (rc < 0)
        fprintf(stderr, "trillian: report: cannot write %s: %s\n", path, strerror(errno));
    free(path);
    free(text);
    return rc;
}
