/* The plan-time half of the stage interface (stage.h): settings with
 * defaults, dependencies, inputs and outputs, recipe errors. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fetch.h"
#include "sha256.h"

static const struct field *field_of(const struct stage *st, const char *key)
{
    for (size_t i = 0; st->kind->fields && st->kind->fields[i].key; i++)
        if (strcmp(st->kind->fields[i].key, key) == 0)
            return &st->kind->fields[i];
    return NULL;
}

config_setting_t *st_setting(const struct stage *st, const char *key)
{
    return config_setting_get_member(st->cfg, key);
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
const char *st_arch(const struct stage *st) { return st->recipe->arch; }
const char *st_recipe_dir(const struct stage *st) { return st->recipe->dir; }

config_setting_t *st_recipe_lookup(const struct stage *st, const char *path)
{
    return config_lookup(&st->recipe->cfg, path);
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
    char hex[65];
    if (hash_path(path, hex) < 0) {
        recipe_error(st->recipe, st->cfg, st->keypath, "%s: cannot read %s (expected an "
                     "existing, readable path)", label, path);
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
                     "on PATH (install it: tools/install-deps installs everything Trillian uses)",
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
}
