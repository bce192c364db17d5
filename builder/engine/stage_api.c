/* The plan-time half of the stage interface (stage.h): settings with
 * defaults, the read-only node view of free-form settings, peers, recipe
 * facts, dependencies, inputs and outputs, recipe errors. Stages never see
 * libconfig: a struct st_node is a libconfig setting of the recipe, cast
 * here and nowhere else in builder/. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "drivers/fetch.h"
#include "base/sha256.h"

static const struct field *field_of(const struct stage *st, const char *key)
{
    for (size_t i = 0; st->kind->fields && st->kind->fields[i].key; i++)
        if (strcmp(st->kind->fields[i].key, key) == 0)
            return &st->kind->fields[i];
    return NULL;
}

static config_setting_t *st_setting(const struct stage *st, const char *key)
{
    return config_setting_get_member(st->cfg, key);
}

static const config_setting_t *cs(const struct st_node *n) { return (const config_setting_t *)n; }
static const struct st_node *nd(const config_setting_t *s) { return (const struct st_node *)s; }

bool st_isset(const struct stage *st, const char *key) { return st_setting(st, key) != NULL; }
const struct st_node *st_node(const struct stage *st, const char *key) { return nd(st_setting(st, key)); }

enum node_type node_type(const struct st_node *n)
{
    switch (n ? config_setting_type(cs(n)) : CONFIG_TYPE_NONE) {
    case CONFIG_TYPE_GROUP: return NODE_GROUP;
    case CONFIG_TYPE_ARRAY:
    case CONFIG_TYPE_LIST: return NODE_LIST;
    case CONFIG_TYPE_STRING: return NODE_STRING;
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: return NODE_INT;
    case CONFIG_TYPE_FLOAT: return NODE_FLOAT;
    case CONFIG_TYPE_BOOL: return NODE_BOOL;
    default: return NODE_NONE;
    }
}

const char *node_str(const struct st_node *n)
{
    return node_type(n) == NODE_STRING ? config_setting_get_string(cs(n)) : NULL;
}

long long node_int(const struct st_node *n, long long def)
{
    return node_type(n) == NODE_INT ? config_setting_get_int64(cs(n)) : def;
}

double node_float(const struct st_node *n, double def)
{
    /* libconfig gives 0.0 for an integer's float unless auto-convert is on */
    enum node_type t = node_type(n);
    if (t == NODE_INT)
        return (double)config_setting_get_int64(cs(n));
    return t == NODE_FLOAT ? config_setting_get_float(cs(n)) : def;
}

bool node_bool(const struct st_node *n, bool def)
{
    return node_type(n) == NODE_BOOL ? config_setting_get_bool(cs(n)) : def;
}

size_t node_len(const struct st_node *n)
{
    enum node_type t = node_type(n);
    return t == NODE_LIST || t == NODE_GROUP ? (size_t)config_setting_length(cs(n)) : 0;
}

const struct st_node *node_elem(const struct st_node *n, size_t i)
{
    return i < node_len(n) ? nd(config_setting_get_elem(cs(n), (unsigned)i)) : NULL;
}

const struct st_node *node_member(const struct st_node *n, const char *key)
{
    return node_type(n) == NODE_GROUP ? nd(config_setting_get_member(cs(n), key)) : NULL;
}

const char *node_member_str(const struct st_node *n, const char *key)
{
    return node_str(node_member(n, key));
}

const char *node_name(const struct st_node *n) { return n ? config_setting_name(cs(n)) : NULL; }
unsigned node_line(const struct st_node *n) { return n ? config_setting_source_line(cs(n)) : 0; }

char *st_node_where(const struct stage *st, const struct st_node *n)
{
    return recipe_location(st->recipe, n ? cs(n) : st->cfg);
}

const char *st_str(const struct stage *st, const char *key)
{
    config_setting_t *s = st_setting(st, key);
    if (s && config_setting_type(s) == CONFIG_TYPE_STRING)
        return config_setting_get_string(s);
    const struct field *f = field_of(st, key);
    return f ? f->def : NULL;
}

long long st_int(const struct stage *st, const char *key, long long def)
{
    config_setting_t *s = st_setting(st, key);
    if (s && (config_setting_type(s) == CONFIG_TYPE_INT ||
              config_setting_type(s) == CONFIG_TYPE_INT64))
        return config_setting_get_int64(s);
    const struct field *f = field_of(st, key);
    return f && f->def ? strtoll(f->def, NULL, 0) : def;
}

bool st_bool(const struct stage *st, const char *key, bool def)
{
    config_setting_t *s = st_setting(st, key);
    if (s && config_setting_type(s) == CONFIG_TYPE_BOOL)
        return config_setting_get_bool(s);
    const struct field *f = field_of(st, key);
    return f && f->def ? strcmp(f->def, "true") == 0 : def;
}

size_t st_list(const struct stage *st, const char *key, struct strlist *out)
{
    config_setting_t *s = st_setting(st, key);
    size_t n = 0;
    if (s && (config_setting_type(s) == CONFIG_TYPE_ARRAY ||
              config_setting_type(s) == CONFIG_TYPE_LIST)) {
        for (int i = 0; i < config_setting_length(s); i++) {
            const char *v = config_setting_get_string_elem(s, (unsigned)i);
            if (v) {
                strlist_push(out, v);
                n++;
            }
        }
    }
    return n;
}

char *st_path(const struct stage *st, const char *key)
{
    const char *v = st_str(st, key);
    return v ? path_absolute(st->recipe->dir, v) : NULL;
}

const char *st_name(const struct stage *st) { return st->name; }
const char *st_kind(const struct stage *st) { return st->kind->name; }
const struct stage_kind *st_kind_def(const struct stage *st) { return st->kind; }
const char *st_section(const struct stage *st) { return st->section; }
const char *st_arch(const struct stage *st) { return st->recipe->arch; }
const char *st_recipe_dir(const struct stage *st) { return st->recipe->dir; }

const char *st_recipe_name(const struct stage *st) { return st->recipe->name; }
const char *st_root_uuid(const struct stage *st) { return st->recipe->root_uuid; }
long long st_source_date_epoch(const struct stage *st) { return st->recipe->source_date_epoch; }
const struct machine *st_machine(const struct stage *st) { return st->recipe->machine; }

const struct stage *st_peer(const struct stage *st, const char *name)
{
    return recipe_stage(st->recipe, name);
}

const struct stage *st_peers(const struct stage *st, const char *section, const char *kind,
                             size_t *iter)
{
    /* recipe order is the section's order in the file: r->stages is in
     * graph order once the plan is resolved */
    const struct recipe *r = st->recipe;
    config_setting_t *sec = config_setting_get_member(config_root_setting(&r->cfg), section);
    if (!sec)
        return NULL;
    bool one = config_setting_type(sec) == CONFIG_TYPE_GROUP; /* kernel = { ... } */
    size_t len = one ? 1 : (size_t)config_setting_length(sec);
    while (*iter < len) {
        config_setting_t *e = one ? sec : config_setting_get_elem(sec, (unsigned)*iter);
        ++*iter;
        for (size_t i = 0; i < r->nstages; i++)
            if (r->stages[i]->cfg == e && (!kind || !strcmp(r->stages[i]->kind->name, kind)))
                return r->stages[i];
    }
    return NULL;
}

bool st_has_output(const struct stage *st, const char *file)
{
    return strlist_contains(&st->outputs, file);
}

void st_need_file(struct stage *st, const char *name, const char *file)
{
    st_need(st, name);
    strlist_pushf(&st->need_files, "%s\t%s", name, file);
}

void stages_check_files(struct recipe *r)
{
    for (size_t i = 0; i < r->nstages; i++) {
        struct stage *st = r->stages[i];
        for (size_t j = 0; j < st->need_files.n; j++) {
            const char *nf = st->need_files.v[j], *tab = strchr(nf, '\t');
            char *name = xstrndup(nf, (size_t)(tab - nf));
            const struct stage *p = recipe_stage(r, name);
            if (p && !st_has_output(p, tab + 1)) {
                struct buf outs = BUF_INIT;
                for (size_t k = 0; k < p->outputs.n; k++)
                    buf_printf(&outs, "%s%s", k ? ", " : "", p->outputs.v[k]);
                recipe_error(r, st->cfg, st->keypath, "needs %s from stage '%s', which that "
                             "stage (kind %s) does not output with its settings (its outputs: "
                             "%s; a command stage lists the file in `outputs`)", tab + 1, name,
                             p->kind->name, outs.n ? outs.p : "none");
                buf_free(&outs);
            }
            free(name);
        }
    }
}

char *cx_dep_file(const struct stage_ctx *cx, const char *name, const char *file)
{
    const struct stage *st = cx->st;
    for (size_t j = 0; j < st->need_files.n; j++) {
        const char *nf = st->need_files.v[j], *tab = strchr(nf, '\t');
        if (!strncmp(nf, name, (size_t)(tab - nf)) && !name[tab - nf] && !strcmp(tab + 1, file))
            return path_join(cx_dep(cx, name), file);
    }
    cx_log(cx, "engine error: %s reads %s/%s without declaring it (st_need_file in its "
           "declare(); report this as a bug of the %s kind)", st->name, name, file,
           st->kind->name);
    return NULL;
}

bool st_has_stage(const struct stage *st, const char *name)
{
    return recipe_stage(st->recipe, name) != NULL;
}

void st_need(struct stage *st, const char *name)
{
    if (strlist_contains(&st->deps, name))
        return;
    if (!st_has_stage(st, name)) {
        config_setting_t *after = st_setting(st, "after");
        recipe_error(st->recipe, after ? after : st->cfg, st->keypath,
                     "needs a stage named '%s', which the recipe does not have (add a %s "
                     "section or fix the name)", name, name);
        return;
    }
    if (strcmp(name, st->name) == 0) {
        recipe_error(st->recipe, st->cfg, st->keypath, "a stage cannot depend on itself");
        return;
    }
    strlist_push(&st->deps, name);
}

bool st_want(struct stage *st, const char *name)
{
    if (!st_has_stage(st, name) || strcmp(name, st->name) == 0)
        return false;
    st_need(st, name);
    return true;
}

void st_input_text(struct stage *st, const char *label, const char *text)
{
    char hex[65];
    sha256_hex(text, strlen(text), hex);
    char *l = xasprintf("text:%s", label);
    stage_add_input(st, l, hex);
    free(l);
}

static void input_path(struct stage *st, const char *label, const char *path)
{
    char hex[65], *why = NULL;
    if (hash_path(path, hex, &why) < 0) {
        recipe_error(st->recipe, st->cfg, st->keypath, "%s: %s", label, why);
        free(why);
        return;
    }
    char *l = xasprintf("file:%s", label);
    stage_add_input(st, l, hex);
    free(l);
}

void st_input_file(struct stage *st, const char *label, const char *path) { input_path(st, label, path); }
void st_input_tree(struct stage *st, const char *label, const char *dir) { input_path(st, label, dir); }

void st_tool(struct stage *st, const char *program)
{
    char hex[65];
    if (tool_version_hash(program, true, hex) < 0) {
        recipe_error(st->recipe, st->cfg, st->keypath, "needs the program '%s', which is not "
                     "on PATH (install it: `tools/install-deps recipes` installs what every "
                     "shipped recipe uses)",
                     program);
        return;
    }
    char *l = xasprintf("tool:%s", program);
    stage_add_input(st, l, hex);
    free(l);
}

void st_output(struct stage *st, const char *relpath)
{
    if (!strlist_contains(&st->outputs, relpath))
        strlist_push(&st->outputs, relpath);
}

int st_error(struct stage *st, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    config_setting_t *s = key ? st_setting(st, key) : NULL;
    char *kp = key ? xasprintf("%s.%s", st->keypath, key) : xstrdup(st->keypath);
    recipe_error(st->recipe, s ? s : st->cfg, kp, "%s", msg ? msg : "error");
    free(kp);
    free(msg);
    return -1;
}

char *cx_where(const struct stage_ctx *cx, const char *key)
{
    const struct stage *st = cx->st;
    config_setting_t *s = key ? st_setting(st, key) : NULL;
    char *loc = recipe_location(st->recipe, s ? s : st->cfg);
    char *w = key ? xasprintf("%s: %s.%s", loc, st->keypath, key)
                  : xasprintf("%s: %s", loc, st->keypath);
    free(loc);
    return w;
}

int cx_inputs(const struct stage_ctx *cx, const char *key, struct strlist *out)
{
    config_setting_t *s = st_setting(cx->st, key);
    int n = 0;
    for (int i = 0; s && i < config_setting_length(s); i++, n++) {
        config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        if (config_setting_type(e) == CONFIG_TYPE_STRING) {
            strlist_push_owned(out, path_absolute(cx->recipe_dir, config_setting_get_string(e)));
            continue;
        }
        const char *url = NULL, *sha = NULL;
        config_setting_lookup_string(e, "url", &url);
        config_setting_lookup_string(e, "sha256", &sha);
        char *loc = recipe_location(cx->st->recipe, e);
        char *where = xasprintf("%s: %s.%s[%d]", loc, cx->st->keypath, key, i);
        char *got = fetch_pinned(cx, url, NULL, sha, where);
        free(loc);
        free(where);
        if (!got)
            return -1;
        strlist_push_owned(out, got);
    }
    return n;
}

void st_remote(struct stage *st, const char *key, const char *url, const char *name,
               const char *sha256)
{
    config_setting_t *s = key ? st_setting(st, key) : NULL;
    char *loc = recipe_location(st->recipe, s ? s : st->cfg);
    strlist_pushf(&st->recipe->remotes, "%s\t%s\t%s\t%s: %s%s%s", sha256, name ? name : "",
                  url ? url : "", loc, st->keypath, key ? "." : "", key ? key : "");
    free(loc);
    if (key && url)
        strlist_pushf(&st->remote_urls, "%s\t%s", key, url);
}
