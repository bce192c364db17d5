/* Recipe loading: libconfig parsing, --set overrides, validation against the
 * stage kinds' field tables, and stage instantiation. Every error is found
 * here, before any stage runs, and printed as FILE:LINE: key: message. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "drivers/fetch.h"
#include "machine.h"
#include "base/sha256.h"

/* Sections whose value is a list of stage groups; every other section is a
 * single group whose stage is named after the section. */
static const char *const list_sections[] = {"packages", "emulators", "images", "bootcheck",
                                            "stages", NULL};

static const char *const arch_choices[] = {"amd64", "ia64", NULL};

/* Top-level keys that are not sections. */
static const struct field top_fields[] = {
    {"name", F_STRING, true, NULL, NULL, "short name; the default output directory is out/NAME"},
    {"description", F_STRING, false, NULL, NULL, "one line shown by `trillian list`"},
    {"arch", F_ENUM, true, arch_choices, NULL, "target architecture"},
    {"source_date_epoch", F_INT, false, NULL, "0", "timestamp for reproducible outputs"},
    {"root_uuid", F_STRING, false, NULL, NULL,
     "UUID of the root filesystem (fstab, kernel command line, mke2fs -U)"},
    {"machine", F_STRING, false, NULL, NULL,
     "machine profile (firmware/machines.cfg): the kernel's console and config fragments"},
    {0},
};

/* Keys every stage group accepts besides its kind's own fields. */
static const struct field common_fields[] = {
    {"kind", F_STRING, false, NULL, NULL, "which stage kind this section uses"},
    {"name", F_STRING, false, NULL, NULL, "stage name (list sections); default the kind"},
    {"after", F_STRING_LIST, false, NULL, NULL, "stages this one runs after"},
    {"description", F_STRING, false, NULL, NULL, "free text"},
    {0},
};

static bool is_list_section(const char *name)
{
    for (size_t i = 0; list_sections[i]; i++)
        if (strcmp(list_sections[i], name) == 0)
            return true;
    return false;
}

static bool is_section(const char *name)
{
    for (size_t i = 0; stage_kinds[i]; i++)
        if (strcmp(stage_kinds[i]->section, name) == 0)
            return true;
    return is_list_section(name);
}

/* ---- error reporting -------------------------------------------------- */

/* Settings created or changed by --set, so errors can point at the option. */
struct override_mark {
    const config_setting_t *s;
    char *text;
};
static struct override_mark *marks;
static size_t nmarks;

static const char *override_text(const config_setting_t *s)
{
    for (; s; s = config_setting_parent(s))
        for (size_t i = 0; i < nmarks; i++)
            if (marks[i].s == s)
                return marks[i].text;
    return NULL;
}

/* The real path of an included file libconfig names FILE, when it came
 * through the include search path (include_union), else NULL. */
static const char *included_from_data(const struct recipe *r, const char *file)
{
    size_t n = file ? strlen(file) : 0;
    for (size_t i = 0; file && i < r->include_map.n; i++)
        if (!strncmp(r->include_map.v[i], file, n) && r->include_map.v[i][n] == '\t')
            return r->include_map.v[i] + n + 1;
    return NULL;
}

char *recipe_location(const struct recipe *r, const config_setting_t *s)
{
    const char *ov = s ? override_text(s) : NULL;
    if (ov)
        return xasprintf("--set %s", ov);
    const char *file = s ? config_setting_source_file(s) : NULL;
    unsigned line = s ? config_setting_source_line(s) : 0;
    char *shown = NULL;
    if (!file)
        file = r->file;
    else if (included_from_data(r, file))
        file = included_from_data(r, file);
    else if (file[0] != '/' && strcmp(file, r->file) != 0)
        file = shown = path_join(r->dir, file); /* an @include, as libconfig names it */
    /* A key missing from the whole file is reported at its first line. */
    char *loc = xasprintf("%s:%u", file, line ? line : 1);
    free(shown);
    return loc;
}

void recipe_error(struct recipe *r, const config_setting_t *s, const char *keypath,
                  const char *fmt, ...)
{
    va_list ap;
    char *loc = recipe_location(r, s);
    fprintf(stderr, "%s: ", loc);
    free(loc);
    if (keypath && keypath[0])
        fprintf(stderr, "%s: ", keypath);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    r->nerrors++;
}

static const char *type_name(enum field_type t)
{
    switch (t) {
    case F_STRING: return "a string";
    case F_INT: return "an integer";
    case F_BOOL: return "true or false";
    case F_ENUM: return "one of the listed words";
    case F_STRING_LIST: return "a list of strings, [\"a\", \"b\"]";
    case F_PATH: return "a path string";
    case F_PATH_LIST: return "a list of path strings";
    case F_INPUT_LIST: return "a list of paths and { url = \"...\"; sha256 = \"...\"; } groups";
    case F_GROUP: return "a group { … }";
    case F_LIST: return "a list ( { … }, … )";
    }
    return "?";
}

static char *choices_text(const char *const *choices)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; choices && choices[i]; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", choices[i]);
    return buf_detach(&b);
}

/* The closest candidate to word, if close enough to be a likely typo. */
const char *did_you_mean(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    size_t bestd = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, cands[i]);
        if (d < bestd) {
            bestd = d;
            best = cands[i];
        }
    }
    size_t limit = strlen(word) / 3 + 1;
    if (limit < 2)
        limit = 2;
    return bestd <= limit ? best : NULL;
}

static void unknown_key(struct recipe *r, const config_setting_t *s, const char *keypath,
                        const char *key, const char *const *cands, size_t n)
{
    const char *dym = did_you_mean(key, cands, n);
    struct buf all = BUF_INIT;
    for (size_t i = 0; i < n; i++)
        buf_printf(&all, "%s%s", i ? ", " : "", cands[i]);
    if (dym)
        recipe_error(r, s, keypath, "unknown key '%s' (did you mean '%s'?)", key, dym);
    else
        recipe_error(r, s, keypath, "unknown key '%s' (expected one of: %s)", key,
                     all.p);
    buf_free(&all);
}

/* ---- field validation ------------------------------------------------- */

static bool is_string_list(const config_setting_t *s)
{
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
        return false;
    for (int i = 0; i < config_setting_length(s); i++)
        if (config_setting_type(config_setting_get_elem(s, (unsigned)i)) != CONFIG_TYPE_STRING)
            return false;
    return true;
}

static bool check_path(struct recipe *r, const config_setting_t *s, const char *keypath,
                       const char *value)
{
    char *abs = path_absolute(r->dir, value);
    bool ok = path_exists(abs);
    struct stat sb;
    if (!ok)
        recipe_error(r, s, keypath, "file not found: %s (expected an existing path, "
                     "relative to the recipe's directory)", abs);
    if (ok && stat(abs, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
        /* reading a FIFO or a device to hash it may never end */
        recipe_error(r, s, keypath, "%s is a %s (expected a regular file or a directory)", abs,
                     S_ISFIFO(sb.st_mode) ? "FIFO" : S_ISSOCK(sb.st_mode) ? "socket" : "device");
        ok = false;
    }
    free(abs);
    return ok;
}

/* One entry of an F_INPUT_LIST: a path, or { url; sha256; } pinned. */
static void check_input(struct recipe *r, const config_setting_t *e, const char *keypath, int i)
{
    char *kp = xasprintf("%s[%d]", keypath, i);
    int t = config_setting_type(e);
    if (t == CONFIG_TYPE_STRING) {
        check_path(r, e, kp, config_setting_get_string(e));
    } else if (t != CONFIG_TYPE_GROUP) {
        recipe_error(r, e, kp, "wrong type (expected a path string or "
                     "{ url = \"https://...\"; sha256 = \"...\"; })");
    } else {
        const char *url = NULL, *sha = NULL;
        for (int j = 0; j < config_setting_length(e); j++) {
            config_setting_t *m = config_setting_get_elem(e, (unsigned)j);
            const char *n = config_setting_name(m);
            if (strcmp(n, "url") && strcmp(n, "sha256"))
                recipe_error(r, m, kp, "unknown key '%s' (a download has url and sha256)", n);
        }
        if (!config_setting_lookup_string(e, "url", &url))
            recipe_error(r, e, kp, "needs url (a string: where the file is published)");
        else if (!fetch_valid_url(url))
            recipe_error(r, config_setting_get_member(e, "url"), kp, "url '%s' must start "
                         "with https://, http://, ftp:// or file://", url);
        if (!config_setting_lookup_string(e, "sha256", &sha))
            recipe_error(r, e, kp, "needs sha256 (64 hex digits, as sha256sum prints them)");
        else if (!fetch_valid_sha256(sha))
            recipe_error(r, config_setting_get_member(e, "sha256"), kp, "sha256 '%s' is not "
                         "64 hex digits", sha);
    }
    free(kp);
}

static void check_field(struct recipe *r, const config_setting_t *s, const char *keypath,
                        const struct field *f)
{
    int t = config_setting_type(s);
    bool ok;
    switch (f->type) {
    case F_STRING:
    case F_PATH:
    case F_ENUM: ok = t == CONFIG_TYPE_STRING; break;
    case F_INT: ok = t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64; break;
    case F_BOOL: ok = t == CONFIG_TYPE_BOOL; break;
    case F_STRING_LIST:
    case F_PATH_LIST: ok = is_string_list(s); break;
    case F_INPUT_LIST: ok = t == CONFIG_TYPE_ARRAY || t == CONFIG_TYPE_LIST; break;
    case F_GROUP: ok = t == CONFIG_TYPE_GROUP; break;
    case F_LIST: ok = t == CONFIG_TYPE_LIST; break;
    default: ok = false;
    }
    if (!ok) {
        if (f->type == F_ENUM) {
            char *c = choices_text(f->choices);
            recipe_error(r, s, keypath, "wrong type (expected one of: %s)", c);
            free(c);
        } else {
            recipe_error(r, s, keypath, "wrong type (expected %s)", type_name(f->type));
        }
        return;
    }
    if (f->type == F_ENUM) {
        const char *v = config_setting_get_string(s);
        for (size_t i = 0; f->choices[i]; i++)
            if (strcmp(f->choices[i], v) == 0)
                return;
        char *c = choices_text(f->choices);
        size_t n = 0;
        while (f->choices[n])
            n++;
        const char *dym = did_you_mean(v, f->choices, n);
        if (dym)
            recipe_error(r, s, keypath, "'%s' is not allowed (did you mean '%s'? expected one of: %s)",
                         v, dym, c);
        else
            recipe_error(r, s, keypath, "'%s' is not allowed (expected one of: %s)", v, c);
        free(c);
    } else if (f->type == F_PATH) {
        check_path(r, s, keypath, config_setting_get_string(s));
    } else if (f->type == F_PATH_LIST) {
        for (int i = 0; i < config_setting_length(s); i++) {
            config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
            check_path(r, e, keypath, config_setting_get_string(e));
        }
    } else if (f->type == F_INPUT_LIST) {
        for (int i = 0; i < config_setting_length(s); i++)
            check_input(r, config_setting_get_elem(s, (unsigned)i), keypath, i);
    }
}

static const struct field *find_field(const struct field *fields, const char *key)
{
    for (size_t i = 0; fields && fields[i].key; i++)
        if (strcmp(fields[i].key, key) == 0)
            return &fields[i];
    return NULL;
}

/* Validates a group's members against one or two field tables. */
static void check_group(struct recipe *r, const config_setting_t *g, const char *prefix,
                        const struct field *a, const struct field *b)
{
    for (int i = 0; i < config_setting_length(g); i++) {
        config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *key = config_setting_name(s);
        char *kp = prefix[0] ? xasprintf("%s.%s", prefix, key) : xstrdup(key);
        const struct field *f = find_field(a, key);
        if (!f)
            f = find_field(b, key);
        if (f) {
            check_field(r, s, kp, f);
        } else {
            struct strlist c = {0};
            for (size_t j = 0; a && a[j].key; j++)
                strlist_push(&c, a[j].key);
            for (size_t j = 0; b && b[j].key; j++)
                strlist_push(&c, b[j].key);
            unknown_key(r, s, kp, key, (const char *const *)c.v, c.n);
            strlist_free(&c);
        }
        free(kp);
    }
    /* required keys */
    const struct field *tabs[2] = {a, b};
    for (int t = 0; t < 2; t++)
        for (size_t j = 0; tabs[t] && tabs[t][j].key; j++)
            if (tabs[t][j].required && !config_setting_get_member(g, tabs[t][j].key)) {
                char *kp = prefix[0] ? xasprintf("%s.%s", prefix, tabs[t][j].key)
                                     : xstrdup(tabs[t][j].key);
                if (tabs[t][j].type == F_ENUM) {
                    char *c = choices_text(tabs[t][j].choices);
                    recipe_error(r, g, kp, "missing required key (expected one of: %s)", c);
                    free(c);
                } else {
                    recipe_error(r, g, kp, "missing required key (expected %s: %s)",
                                 type_name(tabs[t][j].type), tabs[t][j].help);
                }
                free(kp);
            }
}

/* ---- kinds and stage creation ----------------------------------------- */

/* The kinds a SECTION's groups may name: the section's own first (*OWN of
 * them), then, for the `stages` list, the kinds of other sections that
 * allow it (in_stages). */
static size_t kinds_of(const char *section, const struct stage_kind **out, size_t max,
                       size_t *own)
{
    size_t n = 0;
    for (size_t i = 0; stage_kinds[i]; i++)
        if (strcmp(stage_kinds[i]->section, section) == 0 && n < max)
            out[n++] = stage_kinds[i];
    *own = n;
    for (size_t i = 0; stage_kinds[i] && strcmp(section, "stages") == 0; i++)
        if (stage_kinds[i]->in_stages && n < max)
            out[n++] = stage_kinds[i];
    return n;
}

/* The kind a stage group names (or the only kind of its section). */
static const struct stage_kind *group_kind(struct recipe *r, const config_setting_t *g,
                                           const char *section, const char *keypath, bool report)
{
    const struct stage_kind *ks[32];
    size_t own;
    size_t n = kinds_of(section, ks, ARRAY_LEN(ks), &own);
    const char *kind = NULL;
    config_setting_t *ks_set = config_setting_get_member(g, "kind");
    if (ks_set && config_setting_type(ks_set) == CONFIG_TYPE_STRING)
        kind = config_setting_get_string(ks_set);
    const char *names[32];
    for (size_t i = 0; i < n; i++)
        names[i] = ks[i]->name;
    names[n] = NULL;
    if (!kind) {
        if (own == 1) /* the section's only kind: `kind` may be left out */
            return ks[0];
        if (report) {
            char *c = choices_text(names);
            char *kp = xasprintf("%s.kind", keypath);
            if (n == 0)
                recipe_error(r, g, keypath, "no stage kinds for this section are built into "
                             "this trillian");
            else
                recipe_error(r, ks_set ? ks_set : g, kp, ks_set ? "wrong type (expected one of: %s)"
                             : "missing required key (expected one of: %s)", c);
            free(kp);
            free(c);
        }
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(ks[i]->name, kind) == 0)
            return ks[i];
    if (report) {
        char *c = choices_text(names);
        char *kp = xasprintf("%s.kind", keypath);
        const char *dym = did_you_mean(kind, names, n);
        if (dym)
            recipe_error(r, ks_set, kp, "unknown kind '%s' (did you mean '%s'? expected one of: %s)",
                         kind, dym, c);
        else
            recipe_error(r, ks_set, kp, "unknown kind '%s' (expected one of: %s)", kind, c);
        free(kp);
        free(c);
    }
    return NULL;
}

/* ---- names and numbers from strangers ------------------------------------
 * A recipe is untrusted input. Its name becomes out/NAME and CACHE/keep/NAME,
 * a stage's name OUT/STAGE, OUT/logs/STAGE.log and CACHE/times/NAME/STAGE,
 * and `clean` removes OUT: a name that is a path (../src, /abs, a/b), ".",
 * "" or one of OUT's own files would write or delete outside its place.
 * Stage names are compared ignoring case: OUT may be on a file system that
 * does (vfat or exFAT, a macOS or Windows share), where LOGS is logs. */
#define NAME_MAX_LEN 64

/* OUT's own entries, which a stage directory must not replace (build.c,
 * manifest.c, report.c; OUT/.keys and OUT/.STAGE.tmp start with a dot).
 * `trillian boot` adds OUT/boot-CHECK/ (check_boot_dirs). */
static const char *const out_files[] = {"logs", "manifest.json", "report.html", "junit.xml",
                                        "SHA256SUMS", "sbom.spdx.json", NULL};
#define RESERVED_TEXT "logs, manifest.json, report.html, junit.xml, SHA256SUMS, sbom.spdx.json " \
    "or boot-CHECK for a boot check CHECK, in any case"

/* NULL if NAME is a safe file name, else why not. */
static const char *bad_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return "is empty";
    if (n > NAME_MAX_LEN)
        return "is longer than 64 characters";
    if (name[0] == '.')
        return "starts with a dot";
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
            return "has a character other than A-Z, a-z, 0-9, '.', '_' and '-'";
    return NULL;
}

static void check_stage_name(struct recipe *r, const config_setting_t *s, const char *keypath,
                             const char *name)
{
    const char *why = bad_name(name);
    char *own = NULL;
    for (size_t i = 0; !why && out_files[i]; i++)
        if (strcmp(name, out_files[i]) == 0)
            why = "is one of the output directory's own files";
        else if (strcasecmp(name, out_files[i]) == 0)
            why = own = xasprintf("is one of the output directory's own files, %s, where case "
                                  "is ignored", out_files[i]);
    if (why)
        recipe_error(r, s, keypath, "stage name '%s' %s (expected up to 64 of A-Z a-z 0-9 . _ -, "
                     "not starting with a dot, and not " RESERVED_TEXT ")", name, why);
    free(own);
}

/* The stage whose name is NAME ignoring case (one directory in OUT where
 * case is ignored), else NULL. */
static struct stage *stage_named_nocase(const struct recipe *r, const char *name)
{
    for (size_t i = 0; i < r->nstages; i++)
        if (strcasecmp(r->stages[i]->name, name) == 0)
            return r->stages[i];
    return NULL;
}

/* `trillian boot CHECK` keeps its files (NVRAM, a --persistent disk) in
 * OUT/boot-CHECK/, which must not be a stage's directory too. */
static void check_boot_dirs(struct recipe *r)
{
    for (size_t i = 0; i < r->nstages; i++) {
        const struct stage *st = r->stages[i];
        if (strncasecmp(st->name, "boot-", 5) != 0)
            continue;
        for (size_t j = 0; j < r->nstages; j++) {
            const struct stage *c = r->stages[j];
            if (strcmp(c->section, "bootcheck") || strcasecmp(st->name + 5, c->name))
                continue;
            const config_setting_t *ns = config_setting_get_member(st->cfg, "name");
            recipe_error(r, ns ? ns : st->cfg, st->keypath, "stage name '%s' is OUT/boot-%s/, "
                         "where `trillian boot %s` keeps the boot check's files (expected "
                         "another name for one of the two; not " RESERVED_TEXT ")", st->name,
                         c->name, c->name);
            break;
        }
    }
}

static bool is_uuid(const char *s)
{
    for (size_t i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
            return false;
    }
    return s[36] == 0;
}

/* The top-level values that name files or become timestamps. */
static void check_top_values(struct recipe *r, config_setting_t *root)
{
    config_setting_t *s = config_setting_get_member(root, "name");
    if (s && config_setting_type(s) == CONFIG_TYPE_STRING) {
        const char *why = bad_name(config_setting_get_string(s));
        if (why)
            recipe_error(r, s, "name", "'%s' %s (expected up to 64 of A-Z a-z 0-9 . _ -, not "
                         "starting with a dot: it names out/NAME)", config_setting_get_string(s),
                         why);
    }
    s = config_setting_get_member(root, "source_date_epoch");
    if (s && (config_setting_type(s) == CONFIG_TYPE_INT ||
              config_setting_type(s) == CONFIG_TYPE_INT64)) {
        /* libconfig turns an overflowing literal into -1 */
        long long v = config_setting_get_int64(s);
        if (v < 0 || v > 4294967295LL)
            recipe_error(r, s, "source_date_epoch", "%lld is out of range (expected 0 to "
                         "4294967295 seconds since 1970: cpio and FAT times end in 2106; a "
                         "literal too large for 64 bits reads as -1)", v);
    }
    s = config_setting_get_member(root, "root_uuid");
    if (s && config_setting_type(s) == CONFIG_TYPE_STRING && !is_uuid(config_setting_get_string(s)))
        recipe_error(r, s, "root_uuid", "'%s' is not a UUID (expected "
                     "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hex)", config_setting_get_string(s));
}

static void push_stage(struct recipe *r, char *name, const struct stage_kind *k,
                       config_setting_t *g, const char *section, char *keypath)
{
    struct stage *st = xcalloc(1, sizeof *st);
    st->name = name;
    st->kind = k;
    st->cfg = g;
    st->section = xstrdup(section);
    st->keypath = keypath;
    st->recipe = r;
    r->stages = xrealloc(r->stages, (r->nstages + 1) * sizeof *r->stages);
    r->stages[r->nstages++] = st;
}

static void add_stage(struct recipe *r, config_setting_t *g, const char *section,
                      const char *keypath_in, bool in_list)
{
    if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
        recipe_error(r, g, keypath_in, "wrong type (expected a group { kind = …; … })");
        return;
    }
    const char *name = NULL;
    config_setting_t *ns = config_setting_get_member(g, "name");
    if (ns && config_setting_type(ns) == CONFIG_TYPE_STRING)
        name = config_setting_get_string(ns);
    char *named = in_list && name ? xasprintf("%s.%s", section, name) : xstrdup(keypath_in);
    const struct stage_kind *k = group_kind(r, g, section, named, true);
    free(named);
    if (in_list && !name)
        name = k ? k->name : NULL;
    if (!in_list)
        name = section;
    char *keypath = in_list && name ? xasprintf("%s.%s", section, name) : xstrdup(keypath_in);
    if (!k) { /* its keys cannot be checked without a kind */
        free(keypath);
        return;
    }
    check_group(r, g, keypath, common_fields, k->fields);
    if (!name) {
        free(keypath);
        return;
    }
    check_stage_name(r, in_list && ns ? ns : g, keypath, name);
    const struct stage *same = stage_named_nocase(r, name);
    if (same && strcmp(same->name, name) == 0) {
        recipe_error(r, g, keypath, "a stage named '%s' already exists (expected unique names; "
                     "set name = \"…\")", name);
        free(keypath);
        return;
    }
    if (same) {
        recipe_error(r, g, keypath, "a stage named '%s' already exists: OUT/%s and OUT/%s are "
                     "one directory where case is ignored (expected names unique in any case; "
                     "set name = \"…\")", same->name, same->name, name);
        free(keypath);
        return;
    }
    if (k->base) { /* the implicit NAME-base stage, on the same group */
        char *bname = xasprintf("%s-base", name);
        if (stage_named_nocase(r, bname))
            recipe_error(r, g, keypath, "a stage named '%s' already exists (the %s kind adds "
                         "it for its package install; rename the other stage)", bname, k->name);
        push_stage(r, bname, k->base, g, section, xstrdup(keypath));
    }
    push_stage(r, xstrdup(name), k, g, section, keypath);
}

/* A NAME-base stage the engine added for its group's kind (not in the recipe). */
static bool implicit_base(const struct recipe *r, const struct stage *st)
{
    for (size_t i = 0; i < r->nstages; i++)
        if (r->stages[i]->cfg == st->cfg && r->stages[i]->kind->base == st->kind)
            return true;
    return false;
}

void recipe_settable_keys(const struct recipe *r, struct strlist *out)
{
    for (size_t i = 0; top_fields[i].key; i++)
        strlist_push(out, top_fields[i].key);
    for (size_t i = 0; i < r->nstages; i++) {
        const struct stage *st = r->stages[i];
        if (implicit_base(r, st))
            continue; /* its keys are its group's, listed there */
        const struct field *tabs[2] = {common_fields, st->kind->fields};
        for (size_t t = 0; t < 2; t++)
            for (size_t j = 0; tabs[t] && tabs[t][j].key; j++)
                if (tabs[t][j].type != F_GROUP && tabs[t][j].type != F_LIST) /* set_value refuses */
                    strlist_pushf(out, "%s.%s", st->keypath, tabs[t][j].key);
    }
}

struct stage *recipe_stage(const struct recipe *r, const char *name)
{
    for (size_t i = 0; i < r->nstages; i++)
        if (strcmp(r->stages[i]->name, name) == 0)
            return r->stages[i];
    return NULL;
}

/* ---- --set overrides --------------------------------------------------- */

static const struct field *field_for(struct recipe *r, config_setting_t *parent, const char *key,
                                     struct strlist *cands)
{
    if (parent == config_root_setting(&r->cfg)) {
        for (size_t i = 0; top_fields[i].key; i++)
            strlist_push(cands, top_fields[i].key);
        return find_field(top_fields, key);
    }
    /* the parent is a stage group: find its section */
    config_setting_t *sec = config_setting_parent(parent);
    const char *section = config_setting_name(parent);
    if (sec && config_setting_type(sec) == CONFIG_TYPE_LIST)
        section = config_setting_name(sec);
    if (!section || !is_section(section))
        return NULL;
    for (size_t i = 0; common_fields[i].key; i++)
        strlist_push(cands, common_fields[i].key);
    const struct field *f = find_field(common_fields, key);
    if (f)
        return f;
    const struct stage_kind *k = group_kind(r, parent, section, section, false);
    if (!k)
        return NULL;
    for (size_t i = 0; k->fields && k->fields[i].key; i++)
        strlist_push(cands, k->fields[i].key);
    return find_field(k->fields, key);
}

static bool parse_bool(const char *v, int *out)
{
    if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
        *out = 1;
    else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
        *out = 0;
    else
        return false;
    return true;
}

static int set_value(struct recipe *r, config_setting_t *parent, const char *key,
                     const struct field *f, const char *value, const char *text)
{
    int type;
    switch (f->type) {
    case F_INT: type = CONFIG_TYPE_INT64; break;
    case F_BOOL: type = CONFIG_TYPE_BOOL; break;
    case F_STRING_LIST:
    case F_PATH_LIST:
    case F_INPUT_LIST: type = CONFIG_TYPE_ARRAY; break; /* of paths */
    case F_GROUP:
    case F_LIST:
        fprintf(stderr, "--set %s: %s is %s and cannot be set from the command line; "
                "set its members instead\n", text, key, type_name(f->type));
        r->nerrors++;
        return -1;
    default: type = CONFIG_TYPE_STRING;
    }
    long long iv = 0;
    int bv = 0;
    if (type == CONFIG_TYPE_INT64) {
        char *end;
        errno = 0;
        iv = strtoll(value, &end, 0);
        if (errno || end == value || *end) {
            fprintf(stderr, "--set %s: '%s' is not an integer (expected %s)\n", text, value,
                    type_name(f->type));
            r->nerrors++;
            return -1;
        }
    } else if (type == CONFIG_TYPE_BOOL && !parse_bool(value, &bv)) {
        fprintf(stderr, "--set %s: '%s' is not a boolean (expected true or false)\n", text, value);
        r->nerrors++;
        return -1;
    }
    config_setting_t *old = config_setting_get_member(parent, key);
    if (old)
        config_setting_remove(parent, key);
    config_setting_t *s = config_setting_add(parent, key, type);
    if (!s) {
        fprintf(stderr, "--set %s: cannot set '%s' here\n", text, key);
        r->nerrors++;
        return -1;
    }
    if (type == CONFIG_TYPE_INT64)
        config_setting_set_int64(s, iv);
    else if (type == CONFIG_TYPE_BOOL)
        config_setting_set_bool(s, bv);
    else if (type == CONFIG_TYPE_STRING)
        config_setting_set_string(s, value);
    else {
        /* a list: "a,b,c" or "[a, b]" */
        char *copy = xstrdup(value), *p = copy;
        size_t len = strlen(p);
        if (len >= 2 && p[0] == '[' && p[len - 1] == ']') {
            p[len - 1] = 0;
            p++;
        }
        for (char *tok = strtok(p, ","); tok; tok = strtok(NULL, ",")) {
            while (*tok == ' ' || *tok == '"')
                tok++;
            char *e = tok + strlen(tok);
            while (e > tok && (e[-1] == ' ' || e[-1] == '"'))
                *--e = 0;
            if (*tok)
                config_setting_set_string_elem(s, -1, tok);
        }
        free(copy);
    }
    marks = xrealloc(marks, (nmarks + 1) * sizeof *marks);
    marks[nmarks].s = s;
    marks[nmarks].text = xstrdup(text);
    nmarks++;
    return 0;
}

/* Finds (or, for groups, creates) the child of parent named comp. In lists,
 * comp is an entry's name, or [N]. */
static config_setting_t *walk(config_setting_t *parent, const char *comp, bool create)
{
    if (config_setting_type(parent) == CONFIG_TYPE_LIST) {
        if (comp[0] == '[') {
            int idx = atoi(comp + 1);
            return config_setting_get_elem(parent, (unsigned)idx);
        }
        for (int i = 0; i < config_setting_length(parent); i++) {
            config_setting_t *e = config_setting_get_elem(parent, (unsigned)i);
            const char *n = NULL, *k = NULL;
            if (config_setting_type(e) != CONFIG_TYPE_GROUP)
                continue;
            config_setting_lookup_string(e, "name", &n);
            config_setting_lookup_string(e, "kind", &k);
            if ((n && !strcmp(n, comp)) || (!n && k && !strcmp(k, comp)))
                return e;
        }
        return NULL;
    }
    if (config_setting_type(parent) != CONFIG_TYPE_GROUP)
        return NULL;
    config_setting_t *s = config_setting_get_member(parent, comp);
    if (!s && create)
        s = config_setting_add(parent, comp, CONFIG_TYPE_GROUP);
    return s;
}

/* What walk() could have found under PARENT: its members, or a list's
 * entries by name (or kind), for did-you-mean. */
static void child_names(const config_setting_t *parent, struct strlist *out)
{
    bool list = config_setting_type(parent) == CONFIG_TYPE_LIST;
    for (int i = 0; i < config_setting_length(parent); i++) {
        config_setting_t *e = config_setting_get_elem(parent, (unsigned)i);
        const char *n = list ? NULL : config_setting_name(e);
        if (list && config_setting_type(e) == CONFIG_TYPE_GROUP &&
            !config_setting_lookup_string(e, "name", &n))
            config_setting_lookup_string(e, "kind", &n);
        if (n)
            strlist_push(out, n);
    }
}

static void apply_override(struct recipe *r, const char *text)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text) {
        fprintf(stderr, "--set %s: expected KEY=VALUE, e.g. --set kernel.kind=package\n", text);
        r->nerrors++;
        return;
    }
    char *path = xstrndup(text, (size_t)(eq - text));
    const char *value = eq + 1;
    if (path[0] == '.' || path[strlen(path) - 1] == '.' || strstr(path, "..")) {
        /* strtok would skip the empty part and set another key than meant */
        fprintf(stderr, "--set %s: '%s' has an empty part (expected KEY or SECTION.KEY, "
                "e.g. --set kernel.kind=package)\n", text, path);
        r->nerrors++;
        free(path);
        return;
    }
    struct strlist comps = {0};
    for (char *tok = strtok(path, "."); tok; tok = strtok(NULL, "."))
        strlist_push(&comps, tok);
    config_setting_t *cur = config_root_setting(&r->cfg);
    for (size_t i = 0; i + 1 < comps.n && cur; i++) {
        /* only sections may be created on the way */
        bool create = i == 0 && is_section(comps.v[0]) && !is_list_section(comps.v[0]);
        config_setting_t *next = walk(cur, comps.v[i], create);
        if (!next) {
            struct strlist names = {0};
            child_names(cur, &names);
            const char *dym = did_you_mean(comps.v[i], (const char *const *)names.v, names.n);
            fprintf(stderr, "--set %s: no setting '%s' in the recipe to set '%s' under%s%s%s\n",
                    text, comps.v[i], comps.v[comps.n - 1], dym ? " (did you mean '" : "",
                    dym ? dym : "", dym ? "'?)" : "");
            strlist_free(&names);
            r->nerrors++;
            cur = NULL;
        }
        cur = next;
    }
    if (cur && comps.n) {
        const char *key = comps.v[comps.n - 1];
        struct strlist cands = {0};
        const struct field *f = field_for(r, cur, key, &cands);
        if (!f && cur == config_root_setting(&r->cfg) && is_section(key)) {
            fprintf(stderr, "--set %s: '%s' is a section; set one of its keys, e.g. %s.kind=…\n",
                    text, key, key);
            r->nerrors++;
        } else if (!f) {
            const char *dym = did_you_mean(key, (const char *const *)cands.v, cands.n);
            if (dym)
                fprintf(stderr, "--set %s: unknown key '%s' (did you mean '%s'?)\n", text, key, dym);
            else
                fprintf(stderr, "--set %s: unknown key '%s'\n", text, key);
            r->nerrors++;
        } else {
            set_value(r, cur, key, f, value, text);
        }
        strlist_free(&cands);
    }
    strlist_free(&comps);
    free(path);
}

/* ---- loading ----------------------------------------------------------- */

/* `machine` names a profile (machine.h) for the recipe's arch. */
static void check_machine(struct recipe *r, config_setting_t *root)
{
    config_setting_t *s = config_setting_get_member(root, "machine");
    if (!s || config_setting_type(s) != CONFIG_TYPE_STRING)
        return; /* absent, or a type error check_field reported */
    struct machine *m = xcalloc(1, sizeof *m);
    char *err = NULL;
    if (machine_find(config_setting_get_string(s), m, &err) < 0) {
        recipe_error(r, s, "machine", "%s", err);
        free(err);
        free(m);
        return;
    }
    const char *arch = NULL;
    if (config_setting_lookup_string(root, "arch", &arch) && strcmp(arch, m->arch) != 0)
        recipe_error(r, s, "machine", "'%s' is a profile for arch %s, and the recipe's arch is "
                     "%s (%s)", m->name, m->arch, arch, m->description);
    /* the only reading of machines.cfg: stages get it by st_machine() */
    r->machine = m;
}

static void check_top(struct recipe *r)
{
    config_setting_t *root = config_root_setting(&r->cfg);
    struct strlist cands = {0};
    for (size_t i = 0; top_fields[i].key; i++)
        strlist_push(&cands, top_fields[i].key);
    for (size_t i = 0; stage_kinds[i]; i++)
        if (!strlist_contains(&cands, stage_kinds[i]->section))
            strlist_push(&cands, stage_kinds[i]->section);
    for (size_t i = 0; list_sections[i]; i++)
        if (!strlist_contains(&cands, list_sections[i]))
            strlist_push(&cands, list_sections[i]);

    for (int i = 0; i < config_setting_length(root); i++) {
        config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        const char *key = config_setting_name(s);
        const struct field *f = find_field(top_fields, key);
        if (f) {
            check_field(r, s, key, f);
        } else if (is_list_section(key)) {
            if (config_setting_type(s) != CONFIG_TYPE_LIST) {
                recipe_error(r, s, key, "wrong type (expected a list ( { kind = …; }, … ))");
                continue;
            }
            for (int j = 0; j < config_setting_length(s); j++) {
                char *kp = xasprintf("%s.[%d]", key, j);
                add_stage(r, config_setting_get_elem(s, (unsigned)j), key, kp, true);
                free(kp);
            }
        } else if (is_section(key)) {
            add_stage(r, s, key, key, false);
        } else {
            unknown_key(r, s, key, key, (const char *const *)cands.v, cands.n);
        }
    }
    check_boot_dirs(r);
    check_machine(r, root);
    check_top_values(r, root);
    for (size_t i = 0; top_fields[i].key; i++)
        if (top_fields[i].required && !config_setting_get_member(root, top_fields[i].key)) {
            if (top_fields[i].type == F_ENUM) {
                char *c = choices_text(top_fields[i].choices);
                recipe_error(r, NULL, top_fields[i].key, "missing required key (expected one of: %s)", c);
                free(c);
            } else {
                recipe_error(r, NULL, top_fields[i].key, "missing required key (expected %s: %s)",
                             type_name(top_fields[i].type), top_fields[i].help);
            }
        }
    strlist_free(&cands);
}

/* Whether the NULL-terminated LIST has S. */
static bool strlist_has_c(const char *const *list, const char *s)
{
    for (size_t i = 0; list && list[i]; i++)
        if (!strcmp(list[i], s))
            return true;
    return false;
}

/* An F_INPUT_LIST enters the key entry by entry, in order: a file by its
 * content, a download by the sha256 it is pinned to (so the same bytes give
 * the same key wherever they come from). */
static void declare_inputs(struct stage *st, const char *key, const config_setting_t *s)
{
    for (int j = 0; s && j < config_setting_length(s); j++) {
        config_setting_t *e = config_setting_get_elem(s, (unsigned)j);
        char *label = xasprintf("%s[%d]", key, j);
        const char *sha = NULL;
        if (config_setting_type(e) == CONFIG_TYPE_STRING) {
            char *p = path_absolute(st->recipe->dir, config_setting_get_string(e));
            if (is_dir(p))
                st_input_tree(st, label, p);
            else
                st_input_file(st, label, p);
            free(p);
        } else if (config_setting_lookup_string(e, "sha256", &sha) && fetch_valid_sha256(sha)) {
            const char *url = NULL;
            config_setting_lookup_string(e, "url", &url);
            char *loc = recipe_location(st->recipe, e);
            strlist_pushf(&st->recipe->remotes, "%s\t\t%s\t%s: %s.%s", sha, url ? url : "",
                          loc, st->keypath, label);
            free(loc);
            char lower[65];
            for (size_t i = 0; i < 65; i++)
                lower[i] = (char)tolower((unsigned char)sha[i]);
            char *l = xasprintf("file:%s", label);
            stage_add_input(st, l, lower);
            free(l);
        }
        free(label);
    }
}

/* Engine-side declarations every stage gets: its settings, path fields by
 * content, `after`, tools, static outputs. */
static void declare_common(struct stage *st)
{
    const struct stage_kind *k = st->kind;
    struct buf b = BUF_INIT;
    buf_printf(&b, "kind=%s/%s v%u\nname=%s\narch=%s\nsde=%lld\n", k->section, k->name,
               k->version, st->name, st->recipe->arch, st->recipe->source_date_epoch);
    for (size_t i = 0; k->fields && k->fields[i].key; i++) {
        const struct field *f = &k->fields[i];
        config_setting_t *s = config_setting_get_member(st->cfg, f->key);
        if (!s && strlist_has_c(k->late_fields, f->key))
            continue;
        if (f->type == F_INPUT_LIST) { /* "<N paths>" as F_PATH_LIST had it: same keys */
            declare_inputs(st, f->key, s);
            buf_printf(&b, "%s=<%d paths>\n", f->key, s ? config_setting_length(s) : 0);
            continue;
        }
        if (f->type == F_PATH || f->type == F_PATH_LIST) {
            struct strlist paths = {0};
            if (f->type == F_PATH) {
                char *p = st_path(st, f->key);
                if (p)
                    strlist_push_owned(&paths, p);
            } else if (s) {
                for (int j = 0; j < config_setting_length(s); j++)
                    strlist_push_owned(&paths, path_absolute(st->recipe->dir,
                        config_setting_get_string_elem(s, (unsigned)j)));
            }
            for (size_t j = 0; j < paths.n; j++) {
                char *label = xasprintf("%s[%zu]", f->key, j);
                if (is_dir(paths.v[j]))
                    st_input_tree(st, label, paths.v[j]);
                else
                    st_input_file(st, label, paths.v[j]);
                free(label);
            }
            buf_printf(&b, "%s=<%zu paths>\n", f->key, paths.n);
            strlist_free(&paths);
            continue;
        }
        buf_printf(&b, "%s=", f->key);
        if (s)
            setting_canonical(s, &b);
        else if (f->def)
            buf_printf(&b, "default:%s", f->def);
        buf_puts(&b, "\n");
    }
    char hex[65];
    sha256_hex(b.p, b.n, hex);
    stage_add_input(st, "settings", hex);
    buf_free(&b);

    struct strlist after = {0};
    st_list(st, "after", &after);
    for (size_t i = 0; i < after.n; i++)
        st_need(st, after.v[i]);
    strlist_free(&after);
    if (k->base) {
        char *base = xasprintf("%s-base", st->name);
        st_need(st, base);
        free(base);
    }
    for (size_t i = 0; k->tools && k->tools[i]; i++)
        st_tool(st, k->tools[i]);
    for (size_t i = 0; k->outputs && k->outputs[i]; i++)
        st_output(st, k->outputs[i]);
}

/* libconfig reads what it is given: a directory as a recipe or @include
 * ends the process inside its scanner ("input in flex scanner failed", no
 * place), and a FIFO blocks it. So PATH and, before libconfig sees them,
 * the files it @includes (relative to DIR, else the data directory's recipes/,
 * as read_with_includes finds them; nested up to libconfig's own
 * depth of 10) must be regular files of at most RECIPE_MAX_BYTES, without a
 * NUL libconfig would lose (recipe_text.c). Prints FILE:LINE and returns -1. */
#define RECIPE_MAX_BYTES (1024 * 1024)

static int check_includes(const char *path, const char *dir, int depth)
{
    struct stat sb;
    if (stat(path, &sb) < 0)
        return 0; /* libconfig reports a missing file with its place */
    if (!S_ISREG(sb.st_mode)) {
        fprintf(stderr, "%s:1: recipe: is a %s (expected a libconfig .cfg file)\n", path,
                S_ISDIR(sb.st_mode) ? "directory" : "special file");
        return -1;
    }
    if (sb.st_size > RECIPE_MAX_BYTES) {
        /* validation is not linear in the number of stages: a 10 MB recipe
         * took minutes before its first error */
        fprintf(stderr, "%s:1: recipe: is %lld bytes (expected at most %d: a recipe is a few "
                "kilobytes; put data in files it names)\n", path, (long long)sb.st_size,
                RECIPE_MAX_BYTES);
        return -1;
    }
    if (depth > 10)
        return 0; /* libconfig reports the include depth */
    char *text = NULL;
    size_t len = 0;
    if (read_file(path, &text, &len) < 0)
        return 0;
    bool raw = false;
    unsigned line = recipe_text_nul(text, len, &raw);
    if (line) {
        if (raw)
            fprintf(stderr, "%s:%u: a NUL byte (expected text: libconfig would cut a string at "
                    "it without a word; remove it)\n", path, line);
        else
            fprintf(stderr, "%s:%u: a string holds \\x00, a NUL (libconfig would drop it "
                    "without a word: \"a\\x00b\" reads as \"ab\"; a NUL cannot be in an "
                    "argument, a path or a file name: remove it)\n", path, line);
        free(text);
        return -1;
    }
    int rc = 0;
    line = 1;
    for (char *l = text; l && *l && rc == 0; line++) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        while (*l == ' ' || *l == '\t')
            l++;
        if (str_starts(l, "@include")) {
            char *q = strchr(l, '"'), *e = q ? strchr(q + 1, '"') : NULL;
            if (e) {
                char *name = xstrndup(q + 1, (size_t)(e - q - 1));
                char *inc = path_absolute(dir, name);
                if (stat(inc, &sb) < 0 && name[0] != '/') { /* the search path's second place */
                    char *rel = path_join("recipes", name);
                    free(inc);
                    inc = trillian_data_path(rel);
                    free(rel);
                }
                if (stat(inc, &sb) == 0 && !S_ISREG(sb.st_mode)) {
                    fprintf(stderr, "%s:%u: @include \"%s\": %s is a %s (expected a libconfig "
                            "file)\n", path, line, name, inc,
                            S_ISDIR(sb.st_mode) ? "directory" : "special file");
                    rc = -1;
                } else {
                    rc = check_includes(inc, dir, depth + 1);
                }
                free(inc);
                free(name);
            }
        }
        l = nl ? nl + 1 : NULL;
    }
    free(text);
    return rc;
}

/* ---- the @include search path ----------------------------------------- */

/* Adds to UNI (a directory) a link NAME -> the first of the recipe's
 * DIR/NAME and DATA/NAME that exists, for every `@include "NAME"` of FILE
 * and of what it includes; returns how many came from DATA. */
static int include_scan(struct recipe *r, const char *file, const char *data, const char *uni,
                        int depth)
{
    char *text = NULL, *save = NULL;
    int from_data = 0;
    if (depth > 16 || read_file(file, &text, NULL) < 0)
        return 0; /* an include loop or an unreadable file: libconfig says which */
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *p = line + strspn(line, " \t"), *q;
        if (strncmp(p, "@include", 8) != 0)
            continue;
        p += 8 + strspn(p + 8, " \t");
        if (*p != '"' || !(q = strchr(p + 1, '"')) || p[1] == '/')
            continue;
        char *name = xstrndup(p + 1, (size_t)(q - p - 1));
        char *link = path_join(uni, name);
        char *mine = path_join(r->dir, name), *theirs = path_join(data, name);
        const char *real = path_exists(mine) ? mine : path_exists(theirs) ? theirs : NULL;
        char *ldir = path_dirname(link);
        if (real && !path_exists(link) && mkdir_p(ldir, 0700) == 0 && symlink(real, link) == 0) {
            if (real == theirs) {
                from_data++;
                strlist_pushf(&r->include_map, "%s\t%s", name, real);
                strlist_pushf(&r->include_map, "%s\t%s", link, real);
            }
            from_data += include_scan(r, real, data, uni, depth + 1);
        }
        free(ldir);
        free(theirs);
        free(mine);
        free(link);
        free(name);
    }
    free(text);
    return from_data;
}

/* Reads the recipe with the include search path: the recipe's directory,
 * then the data directory's recipes/ (so a recipe anywhere can include
 * "include/ia64-toolchain.cfg"). libconfig 1.5 takes one include_dir and
 * no callback, so when a name is found only in the data directory, the
 * include_dir is a private directory of links made for this parse. */
static int read_with_includes(struct recipe *r, const char *path)
{
    char *data = trillian_data_path("recipes");
    const char *tmp = getenv("TMPDIR");
    char *uni = xasprintf("%s/trillian-include.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    bool union_dir = mkdtemp(uni) && include_scan(r, path, data, uni, 0) > 0;
    config_set_include_dir(&r->cfg, union_dir ? uni : r->dir);
    int ok = config_read_file(&r->cfg, path);
    rm_rf(uni);
    free(uni);
    free(data);
    return ok;
}

struct recipe *recipe_load(const char *path, const struct strlist *overrides)
{
    struct recipe *r = xcalloc(1, sizeof *r);
    r->file = xstrdup(path);
    char *abs = path_absolute(NULL, path);
    r->dir = path_dirname(abs);
    free(abs);
    config_init(&r->cfg);
    if (!path_exists(path)) {
        fprintf(stderr, "%s: recipe not found (expected a .cfg file; `trillian list` shows "
                "the shipped recipes)\n", path);
        recipe_free(r);
        return NULL;
    }
    if (check_includes(path, r->dir, 0) < 0) {
        recipe_free(r);
        return NULL;
    }
    if (!read_with_includes(r, path)) {
        const char *f = config_error_file(&r->cfg);
        if (f && included_from_data(r, f))
            f = included_from_data(r, f);
        fprintf(stderr, "%s:%d: syntax error: %s (expected libconfig syntax: key = value;)\n",
                f ? f : path, config_error_line(&r->cfg), config_error_text(&r->cfg));
        recipe_free(r);
        return NULL;
    }
    for (size_t i = 0; overrides && i < overrides->n; i++) {
        strlist_push(&r->overrides, overrides->v[i]);
        apply_override(r, overrides->v[i]);
    }
    if (r->nerrors) {
        recipe_free(r);
        return NULL;
    }
    const char *s;
    if (config_lookup_string(&r->cfg, "name", &s))
        r->name = xstrdup(s);
    if (config_lookup_string(&r->cfg, "arch", &s))
        r->arch = xstrdup(s);
    if (config_lookup_string(&r->cfg, "description", &s))
        r->description = xstrdup(s);
    if (config_lookup_string(&r->cfg, "root_uuid", &s))
        r->root_uuid = xstrdup(s);
    long long sde = 0;
    config_lookup_int64(&r->cfg, "source_date_epoch", &sde);
    int sdei = 0;
    if (!sde && config_lookup_int(&r->cfg, "source_date_epoch", &sdei))
        sde = sdei;
    const char *env = getenv("SOURCE_DATE_EPOCH");
    if (env && *env) {
        char *end;
        errno = 0;
        sde = strtoll(env, &end, 10);
        if (errno || *end || sde < 0 || sde > 4294967295LL) {
            fprintf(stderr, "trillian: SOURCE_DATE_EPOCH=%s: expected 0 to 4294967295 (seconds "
                    "since 1970)\n", env);
            recipe_free(r);
            return NULL;
        }
    }
    r->source_date_epoch = sde;

    check_top(r);
    if (!r->name)
        r->name = xstrdup("recipe");
    if (!r->arch)
        r->arch = xstrdup("amd64");
    if (r->nerrors) {
        recipe_free(r);
        return NULL;
    }
    for (size_t i = 0; i < r->nstages; i++)
        declare_common(r->stages[i]);
    for (size_t i = 0; i < r->nstages; i++)
        if (r->stages[i]->kind->declare)
            r->stages[i]->kind->declare(r->stages[i]);
    stages_check_files(r);
    if (r->nerrors || graph_resolve(r) != 0) {
        recipe_free(r);
        return NULL;
    }
    return r;
}

void recipe_free(struct recipe *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nstages; i++) {
        struct stage *st = r->stages[i];
        free(st->name);
        free(st->section);
        free(st->keypath);
        strlist_free(&st->deps);
        free(st->dep_idx);
        for (size_t j = 0; j < st->ninputs; j++)
            free(st->inputs[j].label);
        free(st->inputs);
        strlist_free(&st->outputs);
        strlist_free(&st->need_files);
        strlist_free(&st->remote_urls);
        free(st->tmp);
        free(st->outdir);
        free(st->why);
        free(st->subst_from);
        free(st);
    }
    free(r->stages);
    config_destroy(&r->cfg);
    strlist_free(&r->overrides);
    strlist_free(&r->remotes);
    strlist_free(&r->include_map);
    free(r->file);
    free(r->dir);
    free(r->name);
    free(r->root_uuid);
    if (r->machine)
        machine_free(r->machine);
    free(r->machine);
    free(r->arch);
    free(r->description);
    free(r);
    for (size_t i = 0; i < nmarks; i++)
        free(marks[i].text);
    free(marks);
    marks = NULL;
    nmarks = 0;
}

void setting_canonical(const config_setting_t *s, struct buf *b)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: buf_printf(b, "i:%lld", (long long)config_setting_get_int64(s)); break;
    case CONFIG_TYPE_FLOAT: buf_printf(b, "f:%.17g", config_setting_get_float(s)); break;
    case CONFIG_TYPE_BOOL: buf_printf(b, "b:%d", config_setting_get_bool(s)); break;
    case CONFIG_TYPE_STRING: {
        const char *v = config_setting_get_string(s);
        buf_printf(b, "s%zu:%s", strlen(v), v);
        break;
    }
    case CONFIG_TYPE_ARRAY:
    case CONFIG_TYPE_LIST:
        buf_puts(b, "[");
        for (int i = 0; i < config_setting_length(s); i++) {
            setting_canonical(config_setting_get_elem(s, (unsigned)i), b);
            buf_puts(b, ",");
        }
        buf_puts(b, "]");
        break;
    case CONFIG_TYPE_GROUP: {
        /* members sorted by name: order in the file does not matter */
        struct strlist names = {0};
        for (int i = 0; i < config_setting_length(s); i++)
            strlist_push(&names, config_setting_name(config_setting_get_elem(s, (unsigned)i)));
        strlist_sort(&names);
        buf_puts(b, "{");
        for (size_t i = 0; i < names.n; i++) {
            buf_printf(b, "%s=", names.v[i]);
            setting_canonical(config_setting_get_member(s, names.v[i]), b);
            buf_puts(b, ";");
        }
        buf_puts(b, "}");
        strlist_free(&names);
        break;
    }
    default: buf_puts(b, "?");
    }
}

int recipe_check_offline(const struct recipe *r, const char *cache_dir)
{
    int missing = 0;
    for (size_t i = 0; i < r->remotes.n; i++) {
        char *f[4] = {0}, *copy = xstrdup(r->remotes.v[i]), *p = copy;
        for (int j = 0; j < 4 && p; j++) {
            f[j] = p;
            p = j < 3 ? strchr(p, '\t') : NULL;
            if (p)
                *p++ = 0;
        }
        if (f[3] && !fetch_available(cache_dir, *f[2] ? f[2] : NULL, *f[1] ? f[1] : NULL, f[0])) {
            fprintf(stderr, "%s: --offline: %s (sha256 %s) is neither in the cache nor in a "
                    "local mirror; fetch it first (trillian build online, or --mirror DIR)\n",
                    f[3], *f[2] ? f[2] : f[1], f[0]);
            missing++;
        }
        free(copy);
    }
    return missing;
}
