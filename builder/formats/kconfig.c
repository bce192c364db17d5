/* Kernel .config fragments: parse, merge, check. See kconfig.h. */
#define _GNU_SOURCE
#include "kconfig.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the set, with a small open-addressing index by name ---------------- */

/* Lookups from the public API scan from the end (sets are small and
 * lookups rare); parse, merge and check, which look up every line of a
 * possibly 10k-line distribution .config, use a temporary hash index. */

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

struct index {
    size_t *slot; /* entry number + 1, 0 = empty */
    size_t mask;
};

static void index_build(struct index *ix, const struct kconfig *kc)
{
    size_t size = 64;
    while (size < kc->n * 2 + 2)
        size *= 2;
    ix->slot = xcalloc(size, sizeof(*ix->slot));
    ix->mask = size - 1;
    for (size_t i = 0; i < kc->n; i++) {
        size_t h = hash_name(kc->v[i].name) & ix->mask;
        while (ix->slot[h])
            h = (h + 1) & ix->mask;
        ix->slot[h] = i + 1;
    }
}

static long index_find(const struct index *ix, const struct kconfig *kc,
                       const char *name)
{
    size_t h = hash_name(name) & ix->mask;
    while (ix->slot[h]) {
        if (strcmp(kc->v[ix->slot[h] - 1].name, name) == 0)
            return (long)(ix->slot[h] - 1);
        h = (h + 1) & ix->mask;
    }
    return -1;
}

static long find(const struct kconfig *kc, const char *name)
{
    for (size_t i = kc->n; i-- > 0;)
        if (strcmp(kc->v[i].name, name) == 0)
            return (long)i;
    return -1;
}

const struct kconfig_entry *kconfig_get(const struct kconfig *kc,
                                        const char *name)
{
    long i = find(kc, name);
    return i < 0 ? NULL : &kc->v[i];
}

static void replace(char **field, const char *s)
{
    free(*field);
    *field = s ? xstrdup(s) : NULL;
}

static void set_at(struct kconfig *kc, long i, const char *name,
                   const char *value, const char *origin)
{
    if (i >= 0) {
        replace(&kc->v[i].value, value);
        replace(&kc->v[i].origin, origin);
        return;
    }
    if (kc->n == kc->cap) {
        kc->cap = kc->cap ? kc->cap * 2 : 64;
        kc->v = xrealloc(kc->v, kc->cap * sizeof(*kc->v));
    }
    struct kconfig_entry *e = &kc->v[kc->n++];
    e->name = xstrdup(name);
    e->value = value ? xstrdup(value) : NULL;
    e->origin = origin ? xstrdup(origin) : NULL;
}

void kconfig_set(struct kconfig *kc, const char *name, const char *value,
                 const char *origin)
{
    set_at(kc, find(kc, name), name, value, origin);
}

void kconfig_free(struct kconfig *kc)
{
    for (size_t i = 0; i < kc->n; i++) {
        free(kc->v[i].name);
        free(kc->v[i].value);
        free(kc->v[i].origin);
    }
    free(kc->v);
    kc->v = NULL;
    kc->n = kc->cap = 0;
}

/* ---- parsing ------------------------------------------------------------- */

/* Length of a CONFIG_ symbol name at s (0 if s does not start with one). */
static size_t symbol_len(const char *s)
{
    if (strncmp(s, "CONFIG_", 7) != 0)
        return 0;
    size_t n = 7;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    return n > 7 ? n : 0;
}

static bool valid_value(const char *v)
{
    size_t n = strlen(v);
    if (n == 0)
        return false;
    if (v[0] == '"') {
        if (n < 2 || v[n - 1] != '"')
            return false;
        for (size_t i = 1; i + 1 < n; i++) {
            if (v[i] == '\\' && i + 2 < n)
                i++;
            else if (v[i] == '"')
                return false;
        }
        return true;
    }
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)v[i]) || v[i] == '"')
            return false;
    return true;
}

int kconfig_parse(struct kconfig *kc, const char *text, const char *label,
                  struct buf *err)
{
    struct index ix;
    index_build(&ix, kc);
    size_t indexed = kc->n;
    int rc = 0;
    int lineno = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = xstrndup(p, len);
        p += len + (eol ? 1 : 0);
        lineno++;

        /* trim */
        size_t n = strlen(line);
        while (n > 0 && isspace((unsigned char)line[n - 1]))
            line[--n] = '\0';
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;

        char *name = NULL;
        const char *value = NULL;
        if (*s == '\0') {
            free(line);
            continue;
        }
        if (*s == '#') {
            const char *c = s + 1;
            while (*c == ' ')
                c++;
            size_t sl = symbol_len(c);
            if (sl && strcmp(c + sl, " is not set") == 0)
                name = xstrndup(c, sl);
            else {
                free(line); /* an ordinary comment */
                continue;
            }
        } else {
            size_t sl = symbol_len(s);
            if (sl && s[sl] == '=' && valid_value(s + sl + 1)) {
                name = xstrndup(s, sl);
                value = s + sl + 1;
                if (strcmp(value, "n") == 0)
                    value = NULL;
            } else {
                if (err) {
                    if (sl && s[sl] == '=')
                        buf_printf(err, "%s:%d: bad value in '%s': use y, m, "
                                   "a number or a \"quoted string\"\n",
                                   label, lineno, s);
                    else
                        buf_printf(err, "%s:%d: expected CONFIG_NAME=value or "
                                   "'# CONFIG_NAME is not set', got '%s'\n",
                                   label, lineno, s);
                }
                rc = -1;
                free(line);
                continue;
            }
        }

        char *origin = xasprintf("%s:%d", label, lineno);
        long i = index_find(&ix, kc, name);
        if (i < 0) {
            /* not among the indexed entries: added by this parse? */
            for (size_t j = indexed; j < kc->n; j++)
                if (strcmp(kc->v[j].name, name) == 0) {
                    i = (long)j;
                    break;
                }
        }
        set_at(kc, i, name, value, origin);
        if (kc->n > indexed && (kc->n - indexed) > 256) {
            free(ix.slot);
            index_build(&ix, kc);
            indexed = kc->n;
        }
        free(origin);
        free(name);
        free(line);
    }
    free(ix.slot);
    return rc;
}

/* ---- merge and format ---------------------------------------------------- */

static bool same_value(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static void format_setting(struct buf *b, const char *name, const char *value)
{
    if (value)
        buf_printf(b, "%s=%s", name, value);
    else
        buf_printf(b, "# %s is not set", name);
}

size_t kconfig_merge(struct kconfig *dst, const struct kconfig *src,
                     struct strlist *warnings)
{
    struct index ix;
    index_build(&ix, dst);
    size_t indexed = dst->n;
    size_t changed = 0;
    for (size_t i = 0; i < src->n; i++) {
        const struct kconfig_entry *e = &src->v[i];
        long at = index_find(&ix, dst, e->name);
        if (at < 0)
            for (size_t j = indexed; j < dst->n; j++)
                if (strcmp(dst->v[j].name, e->name) == 0)
                    at = (long)j;
        if (at >= 0 && !same_value(dst->v[at].value, e->value)) {
            changed++;
            if (warnings) {
                struct buf w = BUF_INIT;
                buf_printf(&w, "%s: ", e->name);
                format_setting(&w, e->name, e->value);
                buf_printf(&w, " (%s) overrides ", e->origin ? e->origin : "?");
                format_setting(&w, dst->v[at].name, dst->v[at].value);
                buf_printf(&w, " (%s)",
                           dst->v[at].origin ? dst->v[at].origin : "?");
                strlist_push_owned(warnings, buf_detach(&w));
            }
        }
        set_at(dst, at, e->name, e->value, e->origin);
    }
    free(ix.slot);
    return changed;
}

void kconfig_format(const struct kconfig *kc, struct buf *out)
{
    for (size_t i = 0; i < kc->n; i++) {
        format_setting(out, kc->v[i].name, kc->v[i].value);
        buf_puts(out, "\n");
    }
}

/* ---- checking ------------------------------------------------------------ */

size_t kconfig_check(const struct kconfig *want, const struct kconfig *final,
                     struct kconfig_problem **problems)
{
    struct index ix;
    index_build(&ix, final);
    size_t n = 0;
    *problems = NULL;
    for (size_t i = 0; i < want->n; i++) {
        const struct kconfig_entry *w = &want->v[i];
        long at = index_find(&ix, final, w->name);
        const char *got = at >= 0 ? final->v[at].value : NULL;
        if (same_value(w->value, got))
            continue;
        *problems = xrealloc(*problems, (n + 1) * sizeof(**problems));
        (*problems)[n++] = (struct kconfig_problem){
            .want = w, .got = got, .absent = at < 0};
    }
    free(ix.slot);
    return n;
}

/* Does the Kconfig text define SYM (`config SYM` or `menuconfig SYM`)? */
static bool defines(const char *text, const char *sym)
{
    size_t sl = strlen(sym);
    for (const char *p = text; (p = strstr(p, sym)) != NULL; p += sl) {
        if (isalnum((unsigned char)p[sl]) || p[sl] == '_')
            continue;
        /* walk back over blanks to the keyword, then to the line start */
        const char *q = p;
        if (q == text || (q[-1] != ' ' && q[-1] != '\t'))
            continue;
        while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
            q--;
        const char *kw = NULL;
        if (q - text >= 10 && strncmp(q - 10, "menuconfig", 10) == 0)
            kw = q - 10;
        else if (q - text >= 6 && strncmp(q - 6, "config", 6) == 0)
            kw = q - 6;
        if (!kw)
            continue;
        while (kw > text && (kw[-1] == ' ' || kw[-1] == '\t'))
            kw--;
        if (kw == text || kw[-1] == '\n')
            return true;
    }
    return false;
}

static void scan_dir(const char *root, const char *rel, const char *sym,
                     struct strlist *out)
{
    char *dir = rel[0] ? path_join(root, rel) : xstrdup(root);
    DIR *d = opendir(dir);
    if (!d) {
        free(dir);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char *r = rel[0] ? path_join(rel, de->d_name) : xstrdup(de->d_name);
        char *full = path_join(root, r);
        struct stat sb;
        if (lstat(full, &sb) == 0) {
            if (S_ISDIR(sb.st_mode)) {
                scan_dir(root, r, sym, out);
            } else if (S_ISREG(sb.st_mode) &&
                       strncmp(de->d_name, "Kconfig", 7) == 0) {
                char *text = NULL;
                size_t len;
                if (read_file(full, &text, &len) == 0 && defines(text, sym))
                    strlist_push(out, r);
                free(text);
            }
        }
        free(full);
        free(r);
    }
    closedir(d);
    free(dir);
}

int kconfig_find_symbol(const char *srctree, const char *name,
                        struct strlist *out)
{
    if (!is_dir(srctree)) {
        errno = ENOENT;
        return -1;
    }
    if (str_starts(name, "CONFIG_"))
        name += 7;
    scan_dir(srctree, "", name, out);
    strlist_sort(out);
    return 0;
}

char *kconfig_problem_text(const struct kconfig_problem *p,
                           const char *srctree, const char *srcarch)
{
    const struct kconfig_entry *w = p->want;
    struct buf b = BUF_INIT;
    format_setting(&b, w->name, w->value);
    buf_printf(&b, " (set by %s) ", w->origin ? w->origin : "a fragment");
    if (!w->value) {
        buf_printf(&b, "did not hold: the final .config has %s=%s "
                   "(another option selects it or it cannot be turned off)",
                   w->name, p->got ? p->got : "?");
        return buf_detach(&b);
    }
    if (!p->absent || !srctree) {
        if (p->got)
            buf_printf(&b, "did not hold: the final .config has %s=%s", w->name,
                       p->got);
        else
            buf_printf(&b, "was dropped: the final .config has it %s",
                       p->absent ? "missing" : "not set");
        if (!p->absent && !p->got)
            buf_puts(&b, " (a choice picked another option, or a "
                     "dependency limits it)");
        else if (p->got && strcmp(w->value, "y") == 0 &&
                 strcmp(p->got, "m") == 0)
            buf_puts(&b, " (something it depends on is a module)");
        return buf_detach(&b);
    }
    struct strlist where = {0};
    kconfig_find_symbol(srctree, w->name, &where);
    if (where.n == 0) {
        buf_printf(&b, "was dropped: %s is not a Kconfig symbol in this source tree "
                   "(misspelt, or removed or renamed upstream)", w->name + 7);
    } else {
        char *ours = srcarch ? xasprintf("arch/%s/", srcarch) : NULL;
        bool here = false;
        for (size_t i = 0; i < where.n; i++)
            if (!str_starts(where.v[i], "arch/") ||
                (ours && str_starts(where.v[i], ours)))
                here = true;
        if (here)
            buf_printf(&b, "was dropped: its dependencies are not met (see "
                       "'depends on' of %s in %s and set what it needs in a "
                       "fragment too)", w->name + 7, where.v[0]);
        else
            buf_printf(&b, "was dropped: %s exists only for other "
                       "architectures (%s)", w->name + 7, where.v[0]);
        free(ours);
    }
    strlist_free(&where);
    return buf_detach(&b);
}
