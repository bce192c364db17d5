/* Machine profiles from firmware/machines.cfg (machine.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <libconfig.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "stage.h" /* trillian_data_path */

#define MACHINES_FILE "firmware/machines.cfg"

enum mtype { M_STRING, M_LIST };

/* The keys of a profile: the parser is this table. */
static const struct mfield {
    const char *key;
    enum mtype type;
    bool required;
    size_t off;
} mfields[] = {
    {"name", M_STRING, true, offsetof(struct machine, name)},
    {"arch", M_STRING, true, offsetof(struct machine, arch)},
    {"description", M_STRING, true, offsetof(struct machine, description)},
    {"console", M_STRING, true, offsetof(struct machine, console)},
    {"cmdline", M_STRING, false, offsetof(struct machine, cmdline)},
    {"fragments", M_LIST, false, offsetof(struct machine, fragments)},
};

void machine_free(struct machine *m)
{
    for (size_t i = 0; i < ARRAY_LEN(mfields); i++) {
        if (mfields[i].type == M_STRING)
            free(*(char **)((char *)m + mfields[i].off));
        else
            strlist_free((struct strlist *)((char *)m + mfields[i].off));
    }
    memset(m, 0, sizeof *m);
}

void machines_free(struct machine *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        machine_free(&m[i]);
    free(m);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct machine *)a)->name, ((const struct machine *)b)->name);
}

/* One profile from group G; -1 with *err on a bad key. */
static int parse_one(const config_setting_t *g, const char *origin, struct machine *m,
                     char **err)
{
    for (int i = 0; i < config_setting_length(g); i++) {
        config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *key = config_setting_name(s);
        const struct mfield *f = NULL;
        for (size_t j = 0; j < ARRAY_LEN(mfields) && !f; j++)
            if (strcmp(mfields[j].key, key) == 0)
                f = &mfields[j];
        if (!f) {
            struct buf keys = BUF_INIT;
            for (size_t j = 0; j < ARRAY_LEN(mfields); j++)
                buf_printf(&keys, "%s%s", j ? ", " : "", mfields[j].key);
            *err = xasprintf("%s:%u: unknown key '%s' (a profile has: %s)", origin,
                             config_setting_source_line(s), key, keys.p);
            buf_free(&keys);
            return -1;
        }
        void *slot = (char *)m + f->off;
        if (f->type == M_STRING) {
            if (config_setting_type(s) != CONFIG_TYPE_STRING) {
                *err = xasprintf("%s:%u: %s must be a string", origin,
                                 config_setting_source_line(s), key);
                return -1;
            }
            free(*(char **)slot);
            *(char **)slot = xstrdup(config_setting_get_string(s));
        } else {
            bool ok = config_setting_type(s) == CONFIG_TYPE_ARRAY ||
                      config_setting_type(s) == CONFIG_TYPE_LIST;
            for (int k = 0; ok && k < config_setting_length(s); k++) {
                const char *v = config_setting_get_string_elem(s, k);
                if (v)
                    strlist_push((struct strlist *)slot, v);
                else
                    ok = false;
            }
            if (!ok) {
                *err = xasprintf("%s:%u: %s must be a list of strings, like [\"a\", \"b\"]",
                                 origin, config_setting_source_line(s), key);
                return -1;
            }
        }
    }
    for (size_t j = 0; j < ARRAY_LEN(mfields); j++) {
        char **slot = (char **)((char *)m + mfields[j].off);
        if (mfields[j].type != M_STRING || *slot)
            continue;
        if (mfields[j].required) {
            *err = xasprintf("%s:%u: a profile needs '%s'", origin,
                             config_setting_source_line(g), mfields[j].key);
            return -1;
        }
        *slot = xstrdup("");
    }
    if (strpbrk(m->console, " \t\n") || strpbrk(m->cmdline, "\n\"")) {
        *err = xasprintf("%s:%u: %s: console is one word, cmdline one line without quotes",
                         origin, config_setting_source_line(g), m->name);
        return -1;
    }
    return 0;
}

int machine_parse(const char *text, const char *origin, struct machine **out, size_t *n,
                  char **err)
{
    config_t cfg;
    config_init(&cfg);
    *out = NULL;
    *n = 0;
    *err = NULL;
    int rc = -1;
    if (config_read_string(&cfg, text) != CONFIG_TRUE) {
        *err = xasprintf("%s:%d: %s", origin, config_error_line(&cfg), config_error_text(&cfg));
        goto out;
    }
    config_setting_t *list = config_lookup(&cfg, "machines");
    if (!list || config_setting_type(list) != CONFIG_TYPE_LIST) {
        *err = xasprintf("%s: no list `machines = ( { name = …; }, … );`", origin);
        goto out;
    }
    int len = config_setting_length(list);
    *out = xcalloc((size_t)len + 1, sizeof **out);
    for (int i = 0; i < len; i++) {
        config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
        if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
            *err = xasprintf("%s:%u: each profile is a group { name = …; … }", origin,
                             config_setting_source_line(g));
            goto out;
        }
        (*n)++;
        if (parse_one(g, origin, &(*out)[i], err) < 0)
            goto out;
        for (int j = 0; j < i; j++)
            if (strcmp((*out)[j].name, (*out)[i].name) == 0) {
                *err = xasprintf("%s:%u: profile '%s' is given twice", origin,
                                 config_setting_source_line(g), (*out)[i].name);
                goto out;
            }
    }
    qsort(*out, *n, sizeof **out, by_name);
    rc = 0;
out:
    if (rc) {
        machines_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    config_destroy(&cfg);
    return rc;
}

int machine_find(const char *name, struct machine *out, char **err)
{
    char *path = trillian_data_path(MACHINES_FILE), *text = NULL;
    struct machine *all = NULL;
    size_t n = 0;
    int rc = -1;
    memset(out, 0, sizeof *out);
    if (read_file(path, &text, NULL) < 0) {
        *err = xasprintf("cannot read the machine profiles %s: %s", path, strerror(errno));
        goto out;
    }
    if (machine_parse(text, path, &all, &n, err) < 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].name, name) == 0) {
            *out = all[i];
            memset(&all[i], 0, sizeof all[i]);
            rc = 0;
            goto out;
        }
    struct buf known = BUF_INIT;
    for (size_t i = 0; i < n; i++)
        buf_printf(&known, "%s%s", i ? ", " : "", all[i].name);
    *err = xasprintf("no machine profile '%s' (known: %s; they are in %s)", name,
                     known.n ? known.p : "none", path);
    buf_free(&known);
out:
    machines_free(all, n);
    free(text);
    free(path);
    return rc;
}
