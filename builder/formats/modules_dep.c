/* Kernel module dependency resolution (modules_dep.h). */
#define _GNU_SOURCE
#include "modules_dep.h"

#include <stdlib.h>
#include <string.h>

struct mod {
    char *path; /* as modules.dep writes it: "kernel/fs/fuse/fuse.ko" */
    char *name; /* canonical: "fuse" */
    struct strlist deps; /* paths */
    int state;  /* resolve: 0 unseen, 1 on the stack, 2 done */
};

struct modules_dep {
    struct mod *mods;
    size_t n, cap;
    struct strlist builtin; /* canonical names */
};

char *modules_dep_name(const char *name_or_path)
{
    const char *base = strrchr(name_or_path, '/');
    base = base ? base + 1 : name_or_path;
    char *s = xstrdup(base);
    char *ko = strstr(s, ".ko");
    if (ko && (ko[3] == 0 || ko[3] == '.'))
        *ko = 0;
    for (char *p = s; *p; p++)
        if (*p == '-')
            *p = '_';
    return s;
}

static struct mod *find_path(struct modules_dep *d, const char *path)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->mods[i].path, path) == 0)
            return &d->mods[i];
    return NULL;
}

static struct mod *find_name(const struct modules_dep *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->mods[i].name, name) == 0)
            return &d->mods[i];
    return NULL;
}

static struct mod *add_mod(struct modules_dep *d, const char *path)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 64;
        d->mods = xrealloc(d->mods, d->cap * sizeof *d->mods);
    }
    struct mod *m = &d->mods[d->n++];
    memset(m, 0, sizeof *m);
    m->path = xstrdup(path);
    m->name = modules_dep_name(path);
    return m;
}

void modules_dep_free(struct modules_dep *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        free(d->mods[i].path);
        free(d->mods[i].name);
        strlist_free(&d->mods[i].deps);
    }
    free(d->mods);
    strlist_free(&d->builtin);
    free(d);
}

size_t modules_dep_count(const struct modules_dep *d) { return d->n; }

/* Splits text into whitespace-separated words of one line. */
static void split_words(char *line, struct strlist *out)
{
    char *save = NULL;
    for (char *w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save))
        strlist_push(out, w);
}

struct modules_dep *modules_dep_parse(const char *dep_text, const char *builtin_text,
                                      char **err)
{
    struct modules_dep *d = xcalloc(1, sizeof *d);
    char *copy = xstrdup(dep_text ? dep_text : "");
    char *save = NULL;
    int lineno = 0;
    /* strtok_r skips empty lines, so count them by hand. */
    for (char *p = copy; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        lineno++;
        char *line = p;
        p = nl ? nl + 1 : NULL;
        while (*line == ' ' || *line == '\t')
            line++;
        if (!*line || *line == '#')
            continue;
        char *colon = strchr(line, ':');
        if (!colon || colon == line) {
            *err = xasprintf("modules.dep line %d: expected 'MODULE: DEPS...', got '%s'",
                             lineno, line);
            free(copy);
            modules_dep_free(d);
            return NULL;
        }
        *colon = 0;
        char *path = line;
        size_t pl = strlen(path);
        while (pl && (path[pl - 1] == ' ' || path[pl - 1] == '\t'))
            path[--pl] = 0;
        struct mod *m = find_path(d, path);
        if (!m)
            m = add_mod(d, path);
        split_words(colon + 1, &m->deps);
    }
    free(copy);
    /* Dependencies without a line of their own are leaves. */
    for (size_t i = 0; i < d->n; i++)
        for (size_t j = 0; j < d->mods[i].deps.n; j++)
            if (!find_path(d, d->mods[i].deps.v[j]))
                add_mod(d, d->mods[i].deps.v[j]); /* may move d->mods: index anew */
    if (builtin_text) {
        char *b = xstrdup(builtin_text);
        for (char *w = strtok_r(b, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save))
            strlist_push_owned(&d->builtin, modules_dep_name(w));
        free(b);
    }
    (void)err;
    return d;
}

static int visit(struct modules_dep *d, struct mod *m, struct strlist *out, char **err)
{
    if (m->state == 2)
        return 0;
    if (m->state == 1) {
        *err = xasprintf("modules.dep has a dependency cycle through %s", m->path);
        return -1;
    }
    m->state = 1;
    /* depmod lists dependencies so that modprobe loads them last to first. */
    for (size_t j = m->deps.n; j-- > 0;) {
        struct mod *dep = find_path(d, m->deps.v[j]);
        if (dep && visit(d, dep, out, err) < 0)
            return -1;
    }
    m->state = 2;
    strlist_push(out, m->path);
    return 0;
}

int modules_dep_resolve(struct modules_dep *d, const struct strlist *names,
                        struct strlist *load_order, struct strlist *builtin, char **err)
{
    int rc = 0;
    *err = NULL;
    for (size_t i = 0; i < d->n; i++)
        d->mods[i].state = 0;
    for (size_t i = 0; i < names->n && rc == 0; i++) {
        char *name = modules_dep_name(names->v[i]);
        struct mod *m = find_name(d, name);
        if (m) {
            rc = visit(d, m, load_order, err);
        } else if (strlist_contains(&d->builtin, name)) {
            if (builtin && !strlist_contains(builtin, name))
                strlist_push(builtin, name);
        } else {
            *err = xasprintf("no kernel module named '%s' (modules.dep lists %zu modules and "
                             "modules.builtin does not name it either)", names->v[i], d->n);
            rc = -1;
        }
        free(name);
    }
    for (size_t i = 0; i < d->n; i++)
        d->mods[i].state = 0;
    return rc;
}
