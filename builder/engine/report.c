/* The build report (report.h). Everything comes from OUT/manifest.json and
 * the boot checks' transcripts under OUT, read with json-c; the page needs
 * no network (inline CSS and SVG) and reads as text too (tables, <pre>). */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_out.h"
#include "report.h"
#include "stage.h"

void html_escape(struct buf *b, const char *s)
{
    for (const char *p = s; p && *p; p++) {
        switch (*p) {
        case '&': buf_puts(b, "&amp;"); break;
        case '<': buf_puts(b, "&lt;"); break;
        case '>': buf_puts(b, "&gt;"); break;
        case '"': buf_puts(b, "&quot;"); break;
        case '\'': buf_puts(b, "&#39;"); break;
        default:
            /* control characters from a console transcript, except tab
             * and newline, would make the page invalid */
            if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
                continue;
            buf_add(b, p, 1);
        }
    }
}

size_t critical_path(const struct report_span *s, size_t n, size_t *path)
{
    if (!n)
        return 0;
    size_t last = 0;
    for (size_t i = 1; i < n; i++)
        if (s[i].end > s[last].end)
            last = i;
    size_t k = 0, cur = last;
    for (;;) {
        path[k++] = cur;
        if (k == n)
            break;
        /* the dependency that ended last held this stage back */
        size_t best = n;
        for (size_t d = 0; d < s[cur].ndeps; d++) {
            size_t j = s[cur].deps[d];
            if (j < n && (best == n || s[j].end > s[best].end))
                best = j;
        }
        if (best == n)
            break;
        cur = best;
    }
    for (size_t i = 0; i < k / 2; i++) {
        size_t t = path[i];
        path[i] = path[k - 1 - i];
        path[k - 1 - i] = t;
    }
    return k;
}

/* ---- manifest access ---------------------------------------------------- */

static double num(json_object *o, const char *key, double def)
{
    json_object *v = json_member(o, key);
    return v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
               ? json_object_get_double(v) : def;
}

static size_t arr_len(json_object *a)
{
    return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

/* The components table's rows for the stages that report_components does
 * not list (they assemble parts rather than build one from a source): a
 * label and the details keys that hold its version, tried in order. */
static const struct component {
    const char *kind_prefix, *label, *keys[3];
} components[] = {
    {"headers/", "kernel UAPI headers", {"version", "release"}},
    {"bootloader/", "loader", {"loader_from", "loader"}},
    {"userland/debootstrap", "Debian package set", {"suite", "version"}},
    {"userland/", "root file system", {"version", "name", "components"}},
    {"initramfs/", "initramfs", {"kind"}},
};

static bool component_matches(const struct component *c, const char *kind)
{
    return !strncmp(kind, c->kind_prefix, strlen(c->kind_prefix));
}

/* "glibc 2.43, busybox 1.35.0": a list of {name, version} (a minimal
 * root's parts); NULL for any other list. */
static char *named_versions(json_object *list)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < arr_len(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        const char *n = json_member_str(e, "name"), *v = json_member_str(e, "version");
        if (!n || !v) {
            buf_free(&b);
            return NULL;
        }
        buf_printf(&b, "%s%s %s", i ? ", " : "", n, v);
    }
    return b.n ? buf_detach(&b) : NULL;
}

/* The row's version: the first of its details keys the stage recorded; a
 * list of {name, version} as its parts' versions, another list counted. */
static char *component_version(const struct component *c, json_object *st)
{
    json_object *details = json_member(st, "details");
    for (size_t k = 0; k < 3 && c->keys[k]; k++) {
        json_object *v = json_member(details, c->keys[k]);
        if (v && json_object_is_type(v, json_type_string))
            return xstrdup(json_object_get_string(v));
        char *named = v && json_object_is_type(v, json_type_array) ? named_versions(v) : NULL;
        if (named)
            return named;
        if (v && json_object_is_type(v, json_type_array))
            return xasprintf("%zu packages", arr_len(v));
    }
    return NULL;
}

/* The machine a boot check's emulator stands for. */
static const char *machine_of(const char *emulator)
{
    static const struct {
        const char *emulator, *machine;
    } m[] = {
        {"ski", "Ski (hp-sim)"},
        {"ski-efi", "Ski (ski-efi firmware)"},
        {"qemu-ia64", "qemu ia64-vpc"},
        {"qemu-x86_64", "qemu x86_64 + OVMF"},
    };
    for (size_t i = 0; emulator && i < ARRAY_LEN(m); i++)
        if (!strcmp(emulator, m[i].emulator))
            return m[i].machine;
    return emulator ? emulator : "?";
}

static const char *kind_of(json_object *st)
{
    const char *k = json_member_str(st, "kind");
    return k ? k : "?";
}

static bool is_bootcheck(json_object *st)
{
    return !strncmp(kind_of(st), "bootcheck/", 10);
}

static void human_size(struct buf *b, double n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB"};
    size_t u = 0;
    while (n >= 1024 && u + 1 < ARRAY_LEN(unit)) {
        n /= 1024;
        u++;
    }
    buf_printf(b, u ? "%.1f %s" : "%.0f %s", n, unit[u]);
}

/* ---- verdicts: the same words on the terminal and on the page ----------- */

static bool status_is(json_object *st, const char *s)
{
    const char *v = json_member_str(st, "status");
    return v && !strcmp(v, s);
}

/* "not-run" is how older manifests said "not started". */
static bool not_started(json_object *st)
{
    return status_is(st, "not-started") || status_is(st, "not-run");
}

/* A boot check's verdict in a line: "PASS (shell at 17.1 s)", "SKIPPED
 * (emulator ski is not installed ...)", "FAIL at step 05 machine: expect
 * /^ia64$/". New string. */
static char *check_verdict(json_object *st)
{
    json_object *det = json_member(st, "details"), *steps = json_member(det, "step_results");
    const char *why = json_member_str(st, "reason");
    struct buf b = BUF_INIT;
    if (status_is(st, "built") || status_is(st, "cached")) {
        /* a cached check passed for exactly these inputs, in an earlier build */
        buf_puts(&b, status_is(st, "cached") ? "PASS (cached: " : "PASS (");
        if (json_member(det, "shell_seconds"))
            buf_printf(&b, "shell at %.1f s", num(det, "shell_seconds", 0));
        else if (json_member(det, "marker_seconds"))
            buf_printf(&b, "marker at %.1f s", num(det, "marker_seconds", 0));
        else
            buf_printf(&b, "%zu steps in %.1f s", arr_len(steps), num(det, "seconds", 0));
        /* a second boot from a disk the first wrote (reboot_from), or of the
         * image as the first left it (reboot_from = "image") */
        const char *from = json_member_str(det, "reboot_from");
        if (json_member(det, "reboot_shell_seconds") && from && !strcmp(from, "image"))
            buf_printf(&b, "; then the image again: shell at %.1f s",
                       num(det, "reboot_shell_seconds", 0));
        else if (json_member(det, "reboot_shell_seconds"))
            buf_printf(&b, "; then '%s' alone: shell at %.1f s", from ? from : "?",
                       num(det, "reboot_shell_seconds", 0));
        buf_puts(&b, ")");
    } else if (status_is(st, "failed")) {
        const char *step = NULL;
        for (size_t j = 0; j < arr_len(steps) && !step; j++) {
            json_object *s = json_object_array_get_idx(steps, j);
            if (json_member_str(s, "status") && !strcmp(json_member_str(s, "status"), "fail"))
                step = json_member_str(s, "name");
        }
        if (step)
            buf_printf(&b, "FAIL at step %s", step);
        else
            buf_printf(&b, "FAIL (%s)", why ? why : "see its log");
    } else if (status_is(st, "skipped")) {
        buf_printf(&b, "SKIPPED (%s)", why ? why : "no reason recorded");
    } else if (status_is(st, "blocked")) {
        buf_printf(&b, "not run: %s", why ? why : "blocked");
    } else if (not_started(st)) {
        buf_puts(&b, "not started");
    } else {
        buf_printf(&b, "%s", json_member_str(st, "status") ? json_member_str(st, "status") : "?");
    }
    return buf_detach(&b);
}

enum verdict { V_VERIFIED, V_UNVERIFIED, V_FAILED, V_INTERRUPTED };

/* What a build shows: failed, or built and boot-verified (a check passed),
 * or built but not boot-verified (every check skipped or blocked, or none). */
static enum verdict build_verdict(json_object *m)
{
    int result = (int)num(m, "result", -1);
    if (result == 130)
        return V_INTERRUPTED;
    if (result != 0)
        return V_FAILED;
    json_object *stages = json_member(m, "stages");
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (is_bootcheck(st) && (status_is(st, "built") || status_is(st, "cached")))
            return V_VERIFIED;
    }
    return V_UNVERIFIED;
}

static const char *const verdict_words[] = {
    [V_VERIFIED] = "ok, boot-verified",
    [V_UNVERIFIED] = "built, not boot-verified",
    [V_FAILED] = "FAILED",
    [V_INTERRUPTED] = "interrupted",
};

static json_object *primary_image(json_object *m)
{
    json_object *imgs = json_member(m, "images");
    for (size_t i = 0; i < arr_len(imgs); i++) {
        json_object *e = json_object_array_get_idx(imgs, i), *p = json_member(e, "primary");
        if (p && json_object_get_boolean(p))
            return e;
    }
    return NULL;
}

/* The parts of the verdict line after the verdict, joined by "; ": the
 * stages that failed, the primary image with its sha256 (PREFIX before its
 * path), and every boot check's verdict. */
static void verdict_parts(struct buf *b, json_object *m, const char *prefix)
{
    json_object *stages = json_member(m, "stages"), *img = primary_image(m);
    size_t n = 0, checks = 0;
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        const char *why = json_member_str(st, "reason");
        if (is_bootcheck(st) || !status_is(st, "failed"))
            continue;
        if (why && !strcmp(why, "interrupted")) /* stopped by a signal, not failed */
            buf_printf(b, "%sstage '%s' interrupted", n++ ? "; " : "", json_member_str(st, "name"));
        else
            buf_printf(b, "%sstage '%s' failed (%s)", n++ ? "; " : "", json_member_str(st, "name"),
                       why ? why : "see its log");
    }
    if (img) {
        char *path = path_join(prefix, json_member_str(img, "path") ? json_member_str(img, "path") : "?");
        buf_printf(b, "%s%s", n++ ? "; " : "", path);
        free(path);
        if (json_member_str(img, "sha256"))
            buf_printf(b, " sha256 %s", json_member_str(img, "sha256"));
    } else {
        for (size_t i = 0; i < arr_len(stages); i++) {
            json_object *st = json_object_array_get_idx(stages, i);
            if (!strncmp(kind_of(st), "images/", 7)) {
                buf_printf(b, "%sno image: '%s' %s", n++ ? "; " : "", json_member_str(st, "name"),
                           json_member_str(st, "status") ? json_member_str(st, "status") : "?");
                break;
            }
        }
    }
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (!is_bootcheck(st))
            continue;
        char *v = check_verdict(st);
        buf_printf(b, "%s%s %s", n++ ? "; " : "", json_member_str(st, "name"), v);
        free(v);
        checks++;
    }
    if (!checks)
        buf_printf(b, "%sno boot checks in the recipe", n++ ? "; " : "");
}

/* The stage states, as the summary counts them. */
enum { N_STATES = 6 };
static const char *const state_words[N_STATES] = {"built",   "cached",  "failed",
                                                  "skipped", "blocked", "not started"};

static size_t state_index(json_object *st)
{
    static const char *const status[N_STATES] = {"built",   "cached",  "failed",
                                                 "skipped", "blocked", "not-started"};
    for (size_t k = 0; k < N_STATES; k++)
        if (status_is(st, status[k]))
            return k;
    return not_started(st) ? 5 : 2; /* "interrupted": it did not end well */
}

static void count_states(json_object *stages, size_t count[N_STATES])
{
    memset(count, 0, N_STATES * sizeof *count);
    for (size_t i = 0; i < arr_len(stages); i++)
        count[state_index(json_object_array_get_idx(stages, i))]++;
}

/* ---- the page ----------------------------------------------------------- */

static const char css[] =
    "body{font:14px/1.4 sans-serif;margin:1.5em auto;padding:0 1em;max-width:1100px;"
    "color:#222}"
    "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;"
    "text-align:left;vertical-align:top}th{background:#f0f0f0}"
    "code,pre{font:12px monospace}td code{overflow-wrap:anywhere}td.key{white-space:nowrap}"
    "pre{background:#f8f8f8;padding:.5em;overflow:auto;max-height:30em}"
    ".pass{color:#070;font-weight:bold}.fail{color:#b00;font-weight:bold}"
    "td.pass,td.fail{white-space:nowrap}"
    ".skipped,.not-run,.not-started,.blocked,.unverified{color:#a60}.unverified{font-weight:bold}"
    ".key{color:#666}.unknown{color:#a60}.patch-sources{overflow-wrap:anywhere}";

static void td(struct buf *b, const char *s)
{
    buf_puts(b, "<td>");
    html_escape(b, s ? s : "");
    buf_puts(b, "</td>");
}

/* A result as a CSS class (pass, fail, skipped, not-run): manifest text, so
 * escaped like any other. */
static void open_class(struct buf *b, const char *tag, const char *result)
{
    buf_printf(b, "<%s class=\"", tag);
    html_escape(b, result ? result : "");
    buf_puts(b, "\"");
}

static char *read_tail(const char *path, size_t max)
{
    char *text = NULL;
    size_t n = 0;
    if (read_file(path, &text, &n) < 0)
        return NULL;
    if (n > max) {
        char *t = xasprintf("[... %zu bytes before this ...]\n%s", n - max, text + n - max);
        free(text);
        return t;
    }
    return text;
}

/* The kernel's patch series, each patch with its sha256, folded. */
static void patch_list(struct buf *b, json_object *patches)
{
    buf_printf(b, "<details><summary>%zu patches</summary><ol>", arr_len(patches));
    for (size_t j = 0; j < arr_len(patches); j++) {
        json_object *p = json_object_array_get_idx(patches, j);
        buf_puts(b, "<li><code>");
        if (json_object_is_type(p, json_type_string)) {
            html_escape(b, json_object_get_string(p));
        } else {
            html_escape(b, json_member_str(p, "name"));
            buf_puts(b, "</code> sha256 <code>");
            html_escape(b, json_member_str(p, "sha256"));
        }
        buf_puts(b, "</code></li>");
    }
    buf_puts(b, "</ol></details>");
}

/* A value of the components table: the text, or "unknown" when the
 * stage's manifest does not record it (an entry built before it did). */
static void td_known(struct buf *b, const char *s, bool code)
{
    buf_puts(b, "<td>");
    if (!s) {
        buf_puts(b, "<span class=\"unknown\">unknown</span></td>");
        return;
    }
    buf_puts(b, code ? "<code>" : "");
    html_escape(b, s);
    buf_puts(b, code ? "</code></td>" : "</td>");
}

/* Where a stage's patches come from (its "patch_sources", patch_sources.c),
 * an origin a part: "136 from OWNER/REPO@COMMIT (NAME.series)", "2 from
 * Trillian (kernel-config/patches)", escaped, joined by SEP; with SETTING,
 * each led by the recipe setting it is from. */
static void patch_sources(struct buf *b, json_object *ps, const char *sep, bool setting)
{
    for (size_t i = 0; i < arr_len(ps); i++) {
        json_object *e = json_object_array_get_idx(ps, i), *n = json_member(e, "patches");
        const char *series = json_member_str(e, "series"), *origin = json_member_str(e, "origin");
        buf_puts(b, i ? sep : "");
        if (setting && json_member_str(e, "setting")) {
            buf_puts(b, "<code>");
            html_escape(b, json_member_str(e, "setting"));
            buf_puts(b, "</code> ");
        }
        if (n)
            buf_printf(b, "%lld from ", (long long)json_object_get_int64(n));
        html_escape(b, origin ? origin : "?");
        if (series) {
            buf_puts(b, " (");
            html_escape(b, series);
            buf_puts(b, ")");
        }
    }
}

/* The matrix's cell for the patches of stage ST: their origins, one a
 * line; "-" for none, or for a kind without patch settings; "unknown" for
 * a manifest from before patch_sources (a kind that has them). */
static void td_patches(struct buf *b, json_object *st)
{
    json_object *ps = json_member(st, "patch_sources");
    const struct stage_kind *k = stage_kind_named(kind_of(st));
    buf_puts(b, "<td class=\"patch-sources\">");
    if (arr_len(ps))
        patch_sources(b, ps, "<br>", false);
    else if (st && !ps && (!k || k->patch_fields))
        buf_puts(b, "<span class=\"unknown\">unknown</span>");
    else
        buf_puts(b, "-");
    buf_puts(b, "</td>");
}

/* A row's stage (its name and kind) and cache key cells, and its end. The
 * key as `trillian plan` shows it, 12 digits, the whole key on hover. */
static void stage_cells(struct buf *b, json_object *st)
{
    buf_puts(b, "<td>");
    html_escape(b, json_member_str(st, "name"));
    buf_puts(b, " <small>(");
    html_escape(b, kind_of(st));
    const char *key = json_member_str(st, "key");
    buf_puts(b, ")</small></td><td class=\"key\" title=\"");
    html_escape(b, key);
    buf_puts(b, "\"><code>");
    if (key)
        buf_printf(b, "%.12s", key);
    buf_puts(b, "</code></td></tr>\n");
}

static json_object *stage_named(json_object *stages, const char *name)
{
    for (size_t i = 0; name && i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (json_member_str(st, "name") && !strcmp(json_member_str(st, "name"), name))
            return st;
    }
    return NULL;
}

/* Kinds whose parts report_components lists (components.c); the table's
 * other rows come from the components[] table above. */
static bool listed_by_components(const char *kind)
{
    static const char *const prefixes[] = {"toolchain/", "kernel/", "packages/", "emulators/"};
    for (size_t i = 0; i < ARRAY_LEN(prefixes); i++)
        if (str_starts(kind, prefixes[i]))
            return true;
    return false;
}

/* One table of what the build is made of, near the top: each component of
 * the manifest's "components" (report_components) with its version, whether
 * it was built here from source, its source and that source's sha256, then
 * the stages that assemble the rest (headers, loader, root, initramfs) with
 * their versions; every row with its stage and cache key. No script. */
static void section_components(struct buf *b, json_object *m)
{
    json_object *stages = json_member(m, "stages"), *own = NULL;
    json_object *comps = json_member(m, "components");
    if (!comps)
        comps = own = report_components(stages);
    buf_puts(b, "<h2 id=\"components\">Components</h2>\n<table id=\"components-table\">\n"
                "<tr><th>component</th><th>version</th><th>built here</th><th>source</th>"
                "<th>sha256</th><th>stage</th><th>cache key</th></tr>\n");
    size_t rows = arr_len(comps);
    for (size_t i = 0; i < arr_len(comps); i++) {
        json_object *c = json_object_array_get_idx(comps, i);
        const char *origin = json_member_str(c, "origin"), *status = json_member_str(c, "status");
        bool here = json_object_get_boolean(json_member(c, "built_here"));
        buf_puts(b, "<tr>");
        td(b, json_member_str(c, "component"));
        td_known(b, json_member_str(c, "version"), false);
        buf_printf(b, "<td class=\"%s\">", here ? "pass" : "built-elsewhere");
        if (here) {
            buf_puts(b, "yes");
        } else if (origin && !strcmp(origin, "debian-package")) {
            buf_puts(b, "no: Debian package <code>");
            html_escape(b, json_member_str(c, "package") ? json_member_str(c, "package") : "?");
            buf_puts(b, "</code>, version ");
            html_escape(b, json_member_str(c, "package_version") ? json_member_str(c, "package_version") : "unknown");
        } else if (origin && !strcmp(origin, "host")) {
            buf_puts(b, "no: the host's");
            if (json_member_str(c, "note")) {
                buf_puts(b, " (");
                html_escape(b, json_member_str(c, "note"));
                buf_puts(b, ")");
            }
        } else {
            buf_puts(b, "no: stage ");
            html_escape(b, status ? status : "not run");
        }
        buf_puts(b, "</td>");
        /* a Debian package names itself; a host program has no source here */
        /* a URL's file name, the whole URL on hover (and in manifest.json) */
        const char *src = json_member_str(c, "source");
        if (src && strcmp(src, path_basename(src))) {
            buf_puts(b, "<td title=\"");
            html_escape(b, src);
            buf_puts(b, "\"><code>");
            html_escape(b, path_basename(src));
            buf_puts(b, "</code></td>");
        } else if (origin && strcmp(origin, "source") && !src) {
            td(b, "");
        } else {
            td_known(b, src, true);
        }
        if (origin && strcmp(origin, "source") && !json_member_str(c, "sha256"))
            td(b, "");
        else
            td_known(b, json_member_str(c, "sha256"), true);
        json_object *st = stage_named(stages, json_member_str(c, "stage"));
        stage_cells(b, st);
        /* under a stage's first component, where its patches come from; the
           kernel's series and patches, each with its sha256 */
        json_object *det = json_member(st, "details");
        bool first = true;
        for (size_t j = 0; j < i && first; j++) {
            const char *sj = json_member_str(json_object_array_get_idx(comps, j), "stage");
            first = !sj || !json_member_str(c, "stage") || strcmp(sj, json_member_str(c, "stage"));
        }
        json_object *ps = first ? json_member(st, "patch_sources") : NULL;
        bool kernel = str_starts(kind_of(st), "kernel/") &&
                      (json_member_str(det, "series") || arr_len(json_member(det, "patches")));
        if (kernel || arr_len(ps)) {
            buf_puts(b, "<tr><td></td><td colspan=\"6\">");
            if (arr_len(ps)) {
                buf_puts(b, "<small class=\"patch-sources\">patch sources: ");
                patch_sources(b, ps, "; ", true);
                buf_puts(b, "</small> ");
            }
            if (json_member_str(det, "series")) {
                buf_puts(b, "<small>series <code>");
                html_escape(b, path_basename(json_member_str(det, "series")));
                buf_puts(b, "</code></small> ");
            }
            if (arr_len(json_member(det, "patches")))
                patch_list(b, json_member(det, "patches"));
            buf_puts(b, "</td></tr>\n");
        }
    }
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (listed_by_components(kind_of(st)))
            continue;
        for (size_t c = 0; c < ARRAY_LEN(components); c++) {
            if (!component_matches(&components[c], kind_of(st)))
                continue;
            const char *status = json_member_str(st, "status");
            bool done = status && (!strcmp(status, "built") || !strcmp(status, "cached"));
            char *ver = component_version(&components[c], st);
            buf_puts(b, "<tr>");
            td(b, components[c].label);
            td_known(b, ver, false);
            buf_puts(b, "<td>");
            if (done) {
                buf_puts(b, "yes");
            } else {
                buf_puts(b, "no: stage ");
                html_escape(b, status ? status : "not run");
            }
            buf_puts(b, "</td><td></td><td></td>");
            stage_cells(b, st);
            free(ver);
            rows++;
            break; /* a kind's first matching row (debootstrap is not also "root") */
        }
    }
    buf_puts(b, "</table>\n");
    if (!rows)
        buf_puts(b, "<p>No stage of this recipe builds a component that this table knows "
                    "(toolchain, kernel, C library, busybox, loader, emulators, root).</p>\n");
    json_object_put(own);
}

static void section_bootchecks(struct buf *b, json_object *stages, const char *outdir)
{
    buf_puts(b, "<h2 id=\"boot\">Boot checks</h2>\n<table id=\"boot-table\">\n<tr><th>check</th>"
                "<th>emulator</th><th>machine</th><th>result</th><th>time to marker</th>"
                "<th>time to shell</th><th>whole check</th></tr>\n");
    size_t nchecks = 0;
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (!is_bootcheck(st))
            continue;
        nchecks++;
        json_object *det = json_member(st, "details");
        const char *name = json_member_str(st, "name"), *status = json_member_str(st, "status");
        const char *result = json_member_str(det, "result");
        if (!result)
            result = status && !strcmp(status, "skipped") ? "skipped" : status ? status : "?";
        buf_puts(b, "<tr>");
        td(b, name);
        td(b, json_member_str(det, "emulator"));
        td(b, json_member_str(det, "emulator") ? machine_of(json_member_str(det, "emulator")) : "");
        open_class(b, "td", result);
        buf_puts(b, ">");
        html_escape(b, result);
        if (json_member_str(st, "reason")) { /* why it was skipped, blocked or failed */
            buf_puts(b, "<br><small>");
            html_escape(b, json_member_str(st, "reason"));
            buf_puts(b, "</small>");
        }
        buf_puts(b, "</td>");
        if (json_member(det, "marker_seconds"))
            buf_printf(b, "<td>%.1f s</td>", num(det, "marker_seconds", 0));
        else
            buf_puts(b, "<td></td>");
        if (json_member(det, "shell_seconds"))
            buf_printf(b, "<td>%.1f s</td>", num(det, "shell_seconds", 0));
        else
            buf_puts(b, "<td></td>");
        if (json_member(det, "seconds"))
            buf_printf(b, "<td>%.1f s</td>", num(det, "seconds", 0));
        else
            buf_puts(b, "<td></td>");
        buf_puts(b, "</tr>\n");
    }
    buf_puts(b, "</table>\n");
    if (!nchecks)
        buf_puts(b, "<p>This recipe has no boot checks.</p>\n");
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (!is_bootcheck(st))
            continue;
        const char *name = json_member_str(st, "name");
        json_object *det = json_member(st, "details"), *steps = json_member(det, "step_results");
        buf_puts(b, "<h3>");
        html_escape(b, name);
        buf_puts(b, "</h3>\n");
        if (arr_len(steps)) {
            buf_puts(b, "<table class=\"steps\"><tr><th>step</th><th>result</th><th>seconds</th>"
                        "</tr>\n");
            for (size_t j = 0; j < arr_len(steps); j++) {
                json_object *s = json_object_array_get_idx(steps, j);
                buf_puts(b, "<tr>");
                td(b, json_member_str(s, "name"));
                open_class(b, "td", json_member_str(s, "status"));
                buf_puts(b, ">");
                html_escape(b, json_member_str(s, "status"));
                buf_printf(b, "</td><td>%.1f</td></tr>\n", num(s, "seconds", 0));
            }
            buf_puts(b, "</table>\n");
        }
        /* the console transcript, or the log of a check that did not run */
        char *tpath = xasprintf("%s/%s/%s.log", outdir, name, name);
        char *text = read_tail(tpath, 64 * 1024);
        if (!text) {
            free(tpath);
            tpath = xasprintf("%s/logs/%s.log", outdir, name);
            text = read_tail(tpath, 8 * 1024);
        }
        buf_puts(b, "<details><summary>transcript (");
        html_escape(b, path_basename(tpath));
        buf_puts(b, ")</summary><pre>");
        html_escape(b, text ? text : "(no transcript)");
        buf_puts(b, "</pre></details>\n");
        free(text);
        free(tpath);
    }
}

static void section_timeline(struct buf *b, json_object *stages)
{
    size_t n = arr_len(stages);
    struct report_span *sp = xcalloc(n ? n : 1, sizeof *sp);
    size_t **deps = xcalloc(n ? n : 1, sizeof *deps);
    double total = 0;
    size_t kept = 0;
    const char *kept_at = NULL;
    for (size_t i = 0; i < n; i++) {
        json_object *st = json_object_array_get_idx(stages, i), *needs = json_member(st, "needs");
        /* a cached stage: the times of the build that made its entry, where
           the manifest kept them (a no-op rebuild keeps the cold build's) */
        json_object *k = status_is(st, "cached") ? json_member(st, "kept") : NULL;
        json_object *t = k ? k : st;
        sp[i].start = num(t, "start", 0);
        sp[i].end = num(t, "end", sp[i].start);
        if (k) {
            kept++;
            if (json_member_str(k, "built_at") &&
                (!kept_at || strcmp(json_member_str(k, "built_at"), kept_at) < 0))
                kept_at = json_member_str(k, "built_at");
        }
        deps[i] = xcalloc(arr_len(needs) + 1, sizeof **deps);
        for (size_t d = 0; d < arr_len(needs); d++) {
            const char *dn = json_object_get_string(json_object_array_get_idx(needs, d));
            for (size_t j = 0; j < n; j++)
                if (dn && json_member_str(json_object_array_get_idx(stages, j), "name") &&
                    !strcmp(dn, json_member_str(json_object_array_get_idx(stages, j), "name")))
                    deps[i][sp[i].ndeps++] = j;
        }
        sp[i].deps = deps[i];
        if (sp[i].end > total)
            total = sp[i].end;
    }
    size_t *path = xcalloc(n ? n : 1, sizeof *path), np = critical_path(sp, n, path);
    bool *on_path = xcalloc(n ? n : 1, sizeof *on_path);
    for (size_t k = 0; k < np; k++)
        on_path[path[k]] = true;

    const int label_w = 150, width = 900, row = 20;
    double scale = total > 0 ? (width - label_w - 60) / total : 0;
    buf_printf(b, "<h2 id=\"timeline\">Stage timeline</h2>\n<p>%.1f s from the build's start "
                  "to the last stage's end. Solid bars were built, hollow ones came from the "
                  "cache; bars outlined in black are on the critical path.", total);
    if (kept) {
        buf_printf(b, " <span id=\"kept-times\">%zu cached stage%s drawn with the times of the "
                      "build that made %s entr%s", kept, kept == 1 ? " is" : "s are",
                   kept == 1 ? "its" : "their", kept == 1 ? "y" : "ies");
        if (kept_at) {
            buf_puts(b, " (the earliest on ");
            html_escape(b, kept_at);
            buf_puts(b, ")");
        }
        buf_puts(b, ".</span>");
    }
    buf_puts(b, "</p>\n");
    buf_printf(b, "<svg id=\"timeline-svg\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                  "height=\"%zu\" font-size=\"12\" font-family=\"sans-serif\">\n", width,
               n * row + 24);
    for (size_t i = 0; i < n; i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        const char *status = json_member_str(st, "status");
        bool cached = status && !strcmp(status, "cached");
        bool bad = status && (!strcmp(status, "failed") || !strcmp(status, "skipped"));
        double x = label_w + sp[i].start * scale, w = (sp[i].end - sp[i].start) * scale;
        if (w < 2)
            w = 2;
        size_t y = i * row + 4;
        buf_printf(b, "<text x=\"4\" y=\"%zu\">", y + 13);
        html_escape(b, json_member_str(st, "name"));
        buf_puts(b, "</text>");
        buf_printf(b, "<rect x=\"%.1f\" y=\"%zu\" width=\"%.1f\" height=\"14\" fill=\"%s\" "
                      "stroke=\"%s\" stroke-width=\"%s\"><title>", x, y, w,
                   cached ? "none" : bad ? "#d55" : "#59c", on_path[i] ? "#000" : "#59c",
                   on_path[i] ? "2" : "1");
        html_escape(b, json_member_str(st, "name"));
        buf_printf(b, ": %s, %.1f-%.1f s", status ? status : "?", sp[i].start, sp[i].end);
        if (cached && json_member_str(json_member(st, "kept"), "built_at")) {
            buf_puts(b, " in the build of ");
            html_escape(b, json_member_str(json_member(st, "kept"), "built_at"));
        }
        buf_puts(b, "</title></rect>");
        buf_printf(b, "<text x=\"%.1f\" y=\"%zu\">%.0f s</text>\n", x + w + 4, y + 12,
                   sp[i].end - sp[i].start);
    }
    buf_printf(b, "<line x1=\"%d\" y1=\"%zu\" x2=\"%d\" y2=\"%zu\" stroke=\"#999\"/>"
                  "<text x=\"%d\" y=\"%zu\">0 s</text><text x=\"%d\" y=\"%zu\">%.0f s</text>\n"
                  "</svg>\n",
               label_w, n * row + 6, width - 60, n * row + 6, label_w, n * row + 20,
               width - 90, n * row + 20, total);
    buf_puts(b, "<p id=\"critical-path\">Critical path: ");
    for (size_t k = 0; k < np; k++) {
        json_object *st = json_object_array_get_idx(stages, path[k]);
        buf_puts(b, k ? " &rarr; " : "");
        html_escape(b, json_member_str(st, "name"));
        buf_printf(b, " (%.0f s)", sp[path[k]].end - sp[path[k]].start);
    }
    buf_puts(b, "</p>\n");
    for (size_t i = 0; i < n; i++)
        free(deps[i]);
    free(deps);
    free(sp);
    free(path);
    free(on_path);
}

static void section_artifacts(struct buf *b, json_object *arts)
{
    buf_puts(b, "<h2 id=\"artifacts\">Artifacts</h2>\n<p>Files a stage put directly in its "
                "output directory; deeper trees (kernel modules, sysroots) are counted, and "
                "manifest.json lists every file with its sha256.</p>\n"
                "<table id=\"artifacts-table\"><tr><th>path</th><th>size</th><th>sha256</th>"
                "</tr>\n");
    size_t deeper = 0;
    for (size_t i = 0; i < arr_len(arts); i++) {
        json_object *a = json_object_array_get_idx(arts, i);
        const char *p = json_member_str(a, "path");
        const char *slash = p ? strchr(p, '/') : NULL;
        if (!p || (slash && strchr(slash + 1, '/'))) {
            deeper++;
            continue;
        }
        buf_puts(b, "<tr>");
        td(b, p);
        buf_puts(b, "<td>");
        human_size(b, num(a, "size", 0));
        buf_puts(b, "</td><td><code>");
        html_escape(b, json_member_str(a, "sha256"));
        buf_puts(b, "</code></td></tr>\n");
    }
    buf_puts(b, "</table>\n");
    if (deeper)
        buf_printf(b, "<p>%zu more files in subdirectories.</p>\n", deeper);
}

static int render(struct buf *b, json_object *m, const char *outdir, bool whole)
{
    json_object *stages = json_member(m, "stages");
    const char *name = json_member_str(m, "name"), *arch = json_member_str(m, "arch");
    size_t checks = 0, passed = 0;
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (is_bootcheck(st)) {
            checks++;
            passed += json_member_str(json_member(st, "details"), "result") &&
                      !strcmp(json_member_str(json_member(st, "details"), "result"), "pass");
        }
    }
    if (whole) {
        buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<title>Trillian: ");
        html_escape(b, name);
        buf_puts(b, "</title><style>");
        buf_puts(b, css);
        buf_puts(b, "</style></head><body>\n");
    }
    buf_puts(b, "<h1>");
    html_escape(b, name);
    buf_puts(b, " (");
    html_escape(b, arch);
    static const char *const head[] = {
        [V_VERIFIED] = "build ok, boot-verified", [V_UNVERIFIED] = "built, not boot-verified",
        [V_FAILED] = "build FAILED", [V_INTERRUPTED] = "build interrupted"};
    static const char *const cls[] = {[V_VERIFIED] = "pass", [V_UNVERIFIED] = "unverified",
                                      [V_FAILED] = "fail", [V_INTERRUPTED] = "fail"};
    enum verdict v = build_verdict(m);
    buf_printf(b, "): <span id=\"verdict\" class=\"%s\">%s</span></h1>\n", cls[v], head[v]);
    /* what was verified and what not, in the words of the build's last line */
    struct buf parts = BUF_INIT;
    verdict_parts(&parts, m, "");
    static const char *const lead[] = {
        [V_VERIFIED] = "Boot-verified: ", [V_UNVERIFIED] = "Built, but no boot check passed: ",
        [V_FAILED] = "Failed: ", [V_INTERRUPTED] = "Interrupted: "};
    buf_puts(b, "<p id=\"verdict-detail\">");
    buf_puts(b, lead[v]);
    html_escape(b, parts.p);
    buf_puts(b, "</p>\n");
    buf_free(&parts);
    size_t count[N_STATES];
    count_states(stages, count);
    buf_printf(b, "<p>%zu stages:", arr_len(stages));
    for (size_t k = 0; k < N_STATES; k++)
        buf_printf(b, "%s %zu %s", k ? "," : "", count[k], state_words[k]);
    buf_printf(b, "; boot checks: %zu of %zu passed. Trillian ", passed, checks);
    html_escape(b, json_member_str(m, "trillian"));
    buf_puts(b, ", recipe <code>");
    html_escape(b, json_member_str(m, "recipe"));
    buf_printf(b, "</code>, SOURCE_DATE_EPOCH %.0f.", num(m, "source_date_epoch", 0));
    if (whole) /* beside the page; a matrix page's builds are elsewhere */
        buf_puts(b, " Software bill of materials: <a id=\"sbom-link\" href=\"sbom.spdx.json\">"
                    "sbom.spdx.json</a> (SPDX 2.3).");
    buf_puts(b, "</p>\n");
    section_components(b, m);
    section_bootchecks(b, stages, outdir);
    section_timeline(b, stages);
    section_artifacts(b, json_member(m, "artifacts"));
    if (whole)
        buf_puts(b, "</body></html>\n");
    return 0;
}

static void junit(struct buf *b, json_object *m, const char *outdir)
{
    json_object *stages = json_member(m, "stages");
    size_t n = arr_len(stages), fail = 0, skip = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = json_member_str(json_object_array_get_idx(stages, i), "status");
        fail += s && !strcmp(s, "failed");
        skip += s && strcmp(s, "failed") && strcmp(s, "built") && strcmp(s, "cached");
    }
    buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
                "name=\"trillian.");
    html_escape(b, json_member_str(m, "name"));
    buf_printf(b, ".stages\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n", n,
               fail, skip);
    for (size_t i = 0; i < n; i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        const char *s = json_member_str(st, "status");
        buf_puts(b, "    <testcase classname=\"stage\" name=\"");
        html_escape(b, json_member_str(st, "name"));
        buf_printf(b, "\" time=\"%.3f\"", num(st, "wall_seconds", 0));
        if (s && !strcmp(s, "failed")) {
            /* the end of its log, where the error usually is */
            char *log = xasprintf("%s/logs/%s.log", outdir, json_member_str(st, "name"));
            char *tail = file_tail(log, 30);
            buf_puts(b, "><failure message=\"the stage failed; its log: logs/");
            html_escape(b, json_member_str(st, "name"));
            buf_puts(b, ".log\">");
            html_escape(b, tail ? tail : "");
            buf_puts(b, "</failure></testcase>\n");
            free(tail);
            free(log);
        }
        else if (s && strcmp(s, "built") && strcmp(s, "cached")) {
            buf_puts(b, "><skipped message=\"");
            /* a blocked stage's reason says so already */
            if (strcmp(s, "blocked") || !json_member_str(st, "reason"))
                html_escape(b, s);
            if (json_member_str(st, "reason")) {
                buf_puts(b, strcmp(s, "blocked") ? ": " : "");
                html_escape(b, json_member_str(st, "reason"));
            }
            buf_puts(b, "\"/></testcase>\n");
        }
        else
            buf_puts(b, "/>\n");
    }
    buf_puts(b, "  </testsuite>\n");
    /* each boot check wrote its own suite (a test case per step, failure
     * messages, the console): taken as it is */
    for (size_t i = 0; i < n; i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (!is_bootcheck(st) || !json_member_str(st, "name"))
            continue;
        char *path = xasprintf("%s/%s/%s.junit.xml", outdir, json_member_str(st, "name"), json_member_str(st, "name"));
        char *text = NULL;
        if (read_file(path, &text, NULL) == 0) {
            const char *from = strstr(text, "<testsuite "), *to = strstr(text, "</testsuites>");
            if (from && to && to > from)
                buf_printf(b, "  %.*s", (int)(to - from), from);
        }
        free(text);
        free(path);
    }
    buf_puts(b, "</testsuites>\n");
}

static json_object *load(const char *outdir)
{
    char *path = path_join(outdir, "manifest.json");
    json_object *m = json_object_from_file(path);
    if (!m || !json_object_is_type(m, json_type_object)) {
        fprintf(stderr, "trillian: report: cannot read %s (%s): build there first, or name an "
                "output directory of a build\n", path, m ? "not a manifest" : json_util_get_last_err());
        json_object_put(m);
        m = NULL;
    }
    free(path);
    return m;
}

static int write_out(const char *path, const struct buf *b)
{
    if (write_file_atomic(path, b->p, b->n, 0644) < 0) {
        fprintf(stderr, "trillian: report: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int report_write(const char *outdir)
{
    json_object *m = load(outdir);
    if (!m)
        return -1;
    struct buf page = BUF_INIT, ju = BUF_INIT;
    render(&page, m, outdir, true);
    junit(&ju, m, outdir);
    char *hp = path_join(outdir, "report.html"), *jp = path_join(outdir, "junit.xml");
    int rc = write_out(hp, &page) < 0 || write_out(jp, &ju) < 0 || sbom_write(outdir, m) < 0
                 ? -1 : 0;
    free(hp);
    free(jp);
    buf_free(&page);
    buf_free(&ju);
    json_object_put(m);
    return rc;
}

/* What to do with an image of this kind, a line each. */
static void image_hints(FILE *f, const char *kind, const char *path)
{
    if (!strcmp(kind, "disk") || !strcmp(kind, "iso"))
        fprintf(f, "    write it with dd if=%s of=/dev/sdX bs=4M conv=fsync "
                "(docs/install-hardware.md)\n", path);
    if (!strcmp(kind, "netboot"))
        fprintf(f, "    serve it by TFTP: docs/install-hardware.md (netboot)\n");
    if (strstr(kind, "bundle"))
        fprintf(f, "    unpack it and run its script to boot it in an emulator (README inside)\n");
    else
        fprintf(f, "    boot it in an emulator: see docs/bootcheck.md\n");
}

int report_summary(const char *outdir, double seconds, FILE *f)
{
    json_object *m = load(outdir);
    if (!m)
        return -1;
    json_object *stages = json_member(m, "stages"), *imgs = json_member(m, "images");
    size_t count[N_STATES], width = 5;
    count_states(stages, count);
    for (size_t i = 0; i < arr_len(stages); i++) {
        const char *n = json_member_str(json_object_array_get_idx(stages, i), "name");
        if (n && strlen(n) > width)
            width = strlen(n);
    }
    fprintf(f, "\ntrillian: %s: %zu stages:", json_member_str(m, "name") ? json_member_str(m, "name") : "?",
            arr_len(stages));
    for (size_t k = 0; k < N_STATES; k++)
        fprintf(f, "%s %zu %s", k ? "," : "", count[k], state_words[k]);
    fprintf(f, ", in %.1f s\n", seconds);
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        size_t k = state_index(st);
        double t = k == 0 ? num(st, "wall_seconds", 0) : num(st, "end", 0) - num(st, "start", 0);
        fprintf(f, "  %-*s ", (int)width, json_member_str(st, "name") ? json_member_str(st, "name") : "?");
        if (k == 0 || k == 2 || k == 3)
            fprintf(f, "%7.1f s  ", t);
        else
            fprintf(f, "%7s    ", "-");
        /* a blocked stage's reason already says "blocked by" */
        if (k == 4 && json_member_str(st, "reason"))
            fprintf(f, "%s\n", json_member_str(st, "reason"));
        else if (k == 2 && json_member_str(st, "reason") && !strcmp(json_member_str(st, "reason"), "interrupted"))
            fprintf(f, "interrupted\n");
        else if ((k == 2 || k == 3) && json_member_str(st, "reason"))
            fprintf(f, "%s: %s\n", state_words[k], json_member_str(st, "reason"));
        else
            fprintf(f, "%s\n", k == 2 && json_member_str(st, "status") ? json_member_str(st, "status") : state_words[k]);
    }
    size_t nchecks = 0;
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (!is_bootcheck(st))
            continue;
        if (!nchecks++)
            fprintf(f, "trillian: boot checks:\n");
        char *v = check_verdict(st);
        fprintf(f, "  %-*s %s\n", (int)width, json_member_str(st, "name"), v);
        free(v);
    }
    if (!nchecks)
        fprintf(f, "trillian: no boot checks: the images were not booted\n");
    if (arr_len(imgs))
        fprintf(f, "trillian: image%s (every image file's sha256: %s/SHA256SUMS):\n",
                arr_len(imgs) > 1 ? "s" : "", outdir);
    for (size_t i = 0; i < arr_len(imgs); i++) {
        json_object *e = json_object_array_get_idx(imgs, i);
        char *path = path_join(outdir, json_member_str(e, "path") ? json_member_str(e, "path") : "?");
        fprintf(f, "  %s%s\n", path, json_member(e, "primary") && json_object_get_boolean(json_member(e, "primary"))
                                         ? " (primary)" : "");
        if (json_member_str(e, "sha256"))
            fprintf(f, "    sha256 %s\n", json_member_str(e, "sha256"));
        image_hints(f, json_member_str(e, "kind") ? json_member_str(e, "kind") : "", path);
        free(path);
    }
    struct buf parts = BUF_INIT;
    verdict_parts(&parts, m, outdir);
    fprintf(f, "trillian: %s: %s\n", verdict_words[build_verdict(m)], parts.p);
    buf_free(&parts);
    json_object_put(m);
    return 0;
}

/* One run of the matrix: a boot check, or a build without any. Strings
 * point into the manifests. */
struct run {
    const char *kernel, *machine, *loader, *result, *recipe, *outdir, *image;
    const char *check; /* the boot check's name, or NULL */
    json_object *kstage; /* the kernel's stage (its patch_sources), or NULL */
};

/* The matrix's image kind of a boot check (its stage manifest DET): disk,
 * ISO as CD, ISO as disk, netboot, bundle or kernel; the second boot of a
 * check with reboot_from is "installed disk", or the image's own kind again
 * for reboot_from = "image" (matrix_runs). */
static const char *image_kind(json_object *det)
{
    static const char *const named[][2] = {
        {"disk", "disk"}, {"iso-cd", "ISO as CD"}, {"iso-disk", "ISO as disk"},
        {"installed-disk", "installed disk"}, {"netboot", "netboot"}, {"bundle", "bundle"},
        {"kernel", "kernel"}};
    const char *rk = json_member_str(det, "report_kind"); /* the check's report_kind */
    for (size_t i = 0; rk && i < sizeof named / sizeof named[0]; i++)
        if (!strcmp(rk, named[i][0]))
            return named[i][1];
    const char *boot = json_member_str(det, "boot"), *ik = json_member_str(det, "image_kind");
    if (!boot)
        return "?";
    if (!strcmp(boot, "netboot"))
        return "netboot";
    if (!strcmp(boot, "iso"))
        return "ISO as CD";
    if (!strcmp(boot, "kernel"))
        return "kernel";
    if (ik && strstr(ik, "bundle"))
        return "bundle";
    if (ik && !strcmp(ik, "iso"))
        return "ISO as disk";
    return "disk";
}

/* The result of steps [FROM, TO) of a check: fail if one failed, not-run if
 * one did not run, else pass. */
static const char *steps_result(json_object *det, size_t from, size_t to)
{
    json_object *sr = json_member(det, "step_results");
    const char *r = "pass";
    for (size_t i = from; i < to && i < arr_len(sr); i++) {
        const char *s = json_member_str(json_object_array_get_idx(sr, i), "status");
        if (s && !strcmp(s, "fail"))
            return "fail";
        if (s && strcmp(s, "pass"))
            r = "not-run";
    }
    return r;
}

static void matrix_runs(json_object *m, const char *outdir, struct run **v, size_t *n)
{
    json_object *stages = json_member(m, "stages"), *kst = NULL;
    const char *kernel = "?", *loader = "kernel directly", *machine = NULL;
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i), *det = json_member(st, "details");
        const char *kind = kind_of(st);
        if (!strncmp(kind, "kernel/", 7)) {
            kst = st;
            if (json_member_str(det, "release"))
                kernel = json_member_str(det, "release");
            const char *dc = json_member_str(det, "defconfig");
            machine = dc && !strcmp(dc, "sim_defconfig") ? "Ski (hp-sim)"
                      : !strcmp(json_member_str(m, "arch") ? json_member_str(m, "arch") : "", "ia64") ? "HP Integrity"
                                                                            : json_member_str(m, "arch");
        }
        if (!strncmp(kind, "bootloader/", 11))
            loader = kind + 11;
    }
    /* no bootloader stage: a netboot tree's own loader (its details) */
    for (size_t i = 0; i < arr_len(stages) && !strcmp(loader, "kernel directly"); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        const char *l = json_member_str(json_member(st, "details"), "loader");
        if (!strcmp(kind_of(st), "images/netboot") && l)
            loader = l;
    }
    size_t before = *n;
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i), *det = json_member(st, "details");
        if (!is_bootcheck(st))
            continue;
        const char *res = json_member_str(det, "result"), *emu = json_member_str(det, "emulator");
        if (!res)
            res = json_member_str(st, "status") ? json_member_str(st, "status") : "?";
        const char *mach = emu ? machine_of(emu) : machine ? machine : "?";
        const char *ld = emu && !strcmp(emu, "ski") ? "ski-bootloader" : loader;
        size_t first2 = (size_t)num(det, "reboot_first_step", 0);
        *v = xrealloc(*v, (*n + 2) * sizeof **v);
        if (first2 > 1) { /* two boots: the image's, then the installed disk's or
                             * (reboot_from = "image") the same image's again */
            size_t all = arr_len(json_member(det, "step_results"));
            const char *from = json_member_str(det, "reboot_from");
            bool again = from && !strcmp(from, "image");
            (*v)[(*n)++] = (struct run){kernel, mach, ld, steps_result(det, 0, first2 - 1),
                                        json_member_str(m, "name"), outdir, image_kind(det),
                                        json_member_str(st, "name"), kst};
            (*v)[(*n)++] = (struct run){kernel, mach, ld, steps_result(det, first2 - 1, all),
                                        json_member_str(m, "name"), outdir,
                                        again ? image_kind(det) : "installed disk",
                                        json_member_str(st, "name"), kst};
            continue;
        }
        (*v)[(*n)++] = (struct run){kernel, mach, ld, res, json_member_str(m, "name"), outdir,
                                    image_kind(det), json_member_str(st, "name"), kst};
    }
    if (*n == before) {
        *v = xrealloc(*v, (*n + 1) * sizeof **v);
        (*v)[(*n)++] = (struct run){kernel, machine ? machine : "?", loader,
                                    (int)num(m, "result", -1) == 0 ? "not-run" : "fail",
                                    json_member_str(m, "name"), outdir, "-", NULL, kst};
    }
}

static bool same_column(const struct run *a, const struct run *b)
{
    return !strcmp(a->machine, b->machine) && !strcmp(a->loader, b->loader) &&
           !strcmp(a->image, b->image);
}

/* Kernel releases down, machine and loader across; each cell the results of
 * the runs there, linked to their builds' reports. */
static void matrix_table(struct buf *b, const struct run *v, size_t n, bool links)
{
    size_t *col = xcalloc(n ? n : 1, sizeof *col), ncol = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        while (c < ncol && !same_column(&v[col[c]], &v[i]))
            c++;
        if (c == ncol)
            col[ncol++] = i;
    }
    buf_puts(b, "<table id=\"matrix-table\"><tr><th>kernel</th>");
    for (size_t c = 0; c < ncol; c++) {
        buf_puts(b, "<th>");
        html_escape(b, v[col[c]].machine);
        buf_puts(b, "<br><small>");
        html_escape(b, v[col[c]].loader);
        buf_puts(b, "<br>");
        html_escape(b, v[col[c]].image);
        buf_puts(b, "</small></th>");
    }
    buf_puts(b, "</tr>\n");
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(v[j].kernel, v[i].kernel);
        if (seen)
            continue;
        buf_puts(b, "<tr>");
        td(b, v[i].kernel);
        for (size_t c = 0; c < ncol; c++) {
            buf_puts(b, "<td>");
            for (size_t j = i; j < n; j++) {
                if (strcmp(v[j].kernel, v[i].kernel) || !same_column(&v[j], &v[col[c]]))
                    continue;
                open_class(b, "a", v[j].result);
                buf_puts(b, " href=\"");
                html_escape(b, v[j].outdir);
                buf_puts(b, "/report.html\">");
                html_escape(b, !strcmp(v[j].result, "not-run") ? "built" : v[j].result);
                buf_puts(b, "</a> ");
                if (links && v[j].check) { /* a published page: the files beside it */
                    buf_puts(b, "<a class=\"file\" href=\"");
                    html_escape(b, v[j].outdir);
                    buf_printf(b, "/");
                    html_escape(b, v[j].check);
                    buf_puts(b, "/");
                    html_escape(b, v[j].check);
                    buf_puts(b, ".log\">transcript</a> ");
                }
                if (links) {
                    buf_puts(b, "<a class=\"file\" href=\"#images-");
                    html_escape(b, v[j].recipe ? v[j].recipe : "");
                    buf_puts(b, "\">images</a> ");
                }
            }
            buf_puts(b, "</td>");
        }
        buf_puts(b, "</tr>\n");
    }
    buf_puts(b, "</table>\n");
    free(col);
}

static void matrix_list(struct buf *b, const struct run *v, size_t n)
{
    buf_puts(b, "<table id=\"matrix-runs\"><tr><th>kernel</th><th>kernel patches</th>"
                "<th>machine</th><th>loader</th><th>image kind</th><th>result</th><th>recipe</th>"
                "<th>build</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        buf_puts(b, "<tr>");
        td(b, v[i].kernel);
        if (v[i].kstage)
            td_patches(b, v[i].kstage);
        else
            td(b, "-");
        td(b, v[i].machine);
        td(b, v[i].loader);
        td(b, v[i].image);
        open_class(b, "td", v[i].result);
        buf_puts(b, ">");
        html_escape(b, !strcmp(v[i].result, "not-run") ? "built, not booted" : v[i].result);
        buf_puts(b, "</td>");
        td(b, v[i].recipe);
        td(b, v[i].outdir);
        buf_puts(b, "</tr>\n");
    }
    buf_puts(b, "</table>\n");
}

/* The matrix's cell for component NAME of COMPS: its version, and where it
 * came from when not built here; NULL when the build has none. New string. */
static char *matrix_component(json_object *comps, const char *name)
{
    for (size_t i = 0; i < arr_len(comps); i++) {
        json_object *c = json_object_array_get_idx(comps, i);
        if (!json_member_str(c, "component") || strcmp(json_member_str(c, "component"), name))
            continue;
        const char *v = json_member_str(c, "version") ? json_member_str(c, "version") : "unknown";
        const char *o = json_member_str(c, "origin") ? json_member_str(c, "origin") : "";
        if (!strcmp(o, "debian-package"))
            return xasprintf("%s (Debian package)", v);
        if (!strcmp(o, "host"))
            return xasprintf("%s (host)", v);
        return xstrdup(v);
    }
    return NULL;
}

/* The loader: one built here (the component that declares itself the
 * loader of the bootloader stage's kind), else what the bootloader stage
 * says it took (systemd-boot from its Debian package). New string or NULL. */
static char *matrix_loader(json_object *m, json_object *comps)
{
    json_object *stages = json_member(m, "stages");
    for (size_t i = 0; i < arr_len(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        if (strncmp(kind_of(st), "bootloader/", 11))
            continue;
        const char *k = kind_of(st) + 11;
        const char *name = NULL;
        for (size_t c = 0; c < arr_len(comps) && !name; c++) {
            const struct stage_component *sc = component_declared(json_object_array_get_idx(comps, c));
            if (sc && sc->loader && !strcmp(sc->loader, k))
                name = sc->name;
        }
        char *v = name ? matrix_component(comps, name) : NULL;
        if (v) {
            char *r = xasprintf("%s %s", name, v);
            free(v);
            return r;
        }
        json_object *d = json_member(st, "details");
        const char *from = json_member_str(d, "loader_from");
        return xasprintf("%s%s%s%s", json_member_str(d, "loader") ? json_member_str(d, "loader") : k,
                         from ? " (" : "", from ? from : "", from ? ")" : "");
    }
    return NULL;
}

/* A row per build: the recipe and its gcc, glibc, kernel, where the
 * kernel's patches come from, and its loader. */
static void matrix_recipes(struct buf *b, json_object *const *ms, const char *const *outdirs,
                           size_t n)
{
    buf_puts(b, "<table id=\"matrix-recipes\"><tr><th>recipe</th><th>gcc</th><th>glibc</th>"
                "<th>kernel</th><th>kernel patches</th><th>loader</th><th>build</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        json_object *own = NULL, *comps = json_member(ms[i], "components");
        if (!comps)
            comps = own = report_components(json_member(ms[i], "stages"));
        char *cell[4] = {matrix_component(comps, "gcc"), matrix_component(comps, "glibc"),
                         matrix_component(comps, "Linux"), matrix_loader(ms[i], comps)};
        /* the kernel's stage, as the matrix's rows take it (matrix_runs) */
        json_object *stages = json_member(ms[i], "stages"), *kst = NULL;
        for (size_t s = 0; s < arr_len(stages); s++)
            if (!strncmp(kind_of(json_object_array_get_idx(stages, s)), "kernel/", 7))
                kst = json_object_array_get_idx(stages, s);
        buf_puts(b, "<tr>");
        td(b, json_member_str(ms[i], "name"));
        for (size_t k = 0; k < 4; k++) {
            td(b, cell[k] ? cell[k] : "-");
            free(cell[k]);
            if (k == 2 && kst)
                td_patches(b, kst);
            else if (k == 2)
                td(b, "-");
        }
        buf_puts(b, "<td><a href=\"");
        html_escape(b, outdirs[i]);
        buf_puts(b, "/report.html\">");
        html_escape(b, outdirs[i]);
        buf_puts(b, "</a></td></tr>\n");
        json_object_put(own);
    }
    buf_puts(b, "</table>\n");
}

int report_matrix(const char *const *outdirs, size_t n, const char *path)
{
    return report_matrix_page(outdirs, n, NULL, path);
}

int report_matrix_page(const char *const *outdirs, size_t n, const char *preamble,
                       const char *path)
{
    json_object **ms = xcalloc(n ? n : 1, sizeof *ms);
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if (!(ms[i] = load(outdirs[i])))
            rc = -1;
    if (rc == 0) {
        struct buf b = BUF_INIT;
        buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<title>Trillian: build matrix</title><style>");
        buf_puts(&b, css);
        struct run *runs = NULL;
        size_t nruns = 0;
        for (size_t i = 0; i < n; i++)
            matrix_runs(ms[i], outdirs[i], &runs, &nruns);
        buf_printf(&b, "</style></head><body>\n<h1>Build matrix: %zu builds</h1>\n"
                       "<p>Kernel release down, machine and loader across; a cell links to "
                       "the build's report%s.</p>\n", n,
                   preamble ? ", its boot transcript and its images" : "");
        if (preamble)
            buf_puts(&b, preamble);
        matrix_table(&b, runs, nruns, preamble != NULL);
        buf_puts(&b, "<h2>Recipes</h2>\n<p>What each build built its system from (the "
                     "versions of its report's <em>Components</em> table).</p>\n");
        matrix_recipes(&b, ms, outdirs, n);
        buf_puts(&b, "<h2>Every run</h2>\n");
        matrix_list(&b, runs, nruns);
        free(runs);
        for (size_t i = 0; i < n; i++) {
            buf_puts(&b, "<hr>\n");
            render(&b, ms[i], outdirs[i], false);
        }
        buf_puts(&b, "</body></html>\n");
        if (!strcmp(path, "-"))
            rc = fwrite(b.p, 1, b.n, stdout) == b.n ? 0 : -1;
        else
            rc = write_out(path, &b);
        buf_free(&b);
    }
    for (size_t i = 0; i < n; i++)
        json_object_put(ms[i]);
    free(ms);
    return rc;
}
