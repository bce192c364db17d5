/* ELF dynamic sections and shlibs maps (shlibs.h). */
#define _GNU_SOURCE
#include "shlibs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int errf(char err[SHLIBS_ERRLEN], const char *fmt, ...) PRINTF_LIKE(2, 3);
static int errf(char err[SHLIBS_ERRLEN], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, SHLIBS_ERRLEN, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- ELF ------------------------------------------------------------------ */

struct elf {
    const unsigned char *p;
    size_t size;
    bool is64, be;
};

static uint64_t get(const struct elf *e, size_t off, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)e->p[off + (size_t)(e->be ? n - 1 - i : i)] << (8 * i);
    return v;
}

/* Field sizes: ELF64's 8-byte words are 4 bytes in ELF32. */
#define W(e) ((e)->is64 ? 8 : 4)

static bool fits(const struct elf *e, uint64_t off, uint64_t n)
{
    return off <= e->size && n <= e->size - off;
}

/* The file offset of virtual address ADDR (in a PT_LOAD segment), or -1. */
static long long vaddr_offset(const struct elf *e, uint64_t phoff, unsigned phentsize,
                              unsigned phnum, uint64_t addr)
{
    for (unsigned i = 0; i < phnum; i++) {
        size_t ph = (size_t)(phoff + (uint64_t)i * phentsize);
        if (get(e, ph, 4) != 1 /* PT_LOAD */)
            continue;
        uint64_t off = e->is64 ? get(e, ph + 8, 8) : get(e, ph + 4, 4);
        uint64_t va = e->is64 ? get(e, ph + 16, 8) : get(e, ph + 8, 4);
        uint64_t fsz = e->is64 ? get(e, ph + 32, 8) : get(e, ph + 16, 4);
        if (addr >= va && addr - va < fsz)
            return (long long)(off + (addr - va));
    }
    return -1;
}

static int parse(const struct elf *e, const char *path, struct elf_dynamic *d,
                 char err[SHLIBS_ERRLEN])
{
    size_t ehsize = e->is64 ? 64 : 52;
    if (e->size < ehsize)
        return errf(err, "%s: truncated ELF header", path);
    d->machine = (int)get(e, 18, 2);
    uint64_t phoff = e->is64 ? get(e, 32, 8) : get(e, 28, 4);
    unsigned phentsize = (unsigned)get(e, e->is64 ? 54 : 42, 2);
    unsigned phnum = (unsigned)get(e, e->is64 ? 56 : 44, 2);
    if (!phoff || !phnum)
        return 0; /* an object file: no segments */
    if (phentsize < (e->is64 ? 56u : 32u) || !fits(e, phoff, (uint64_t)phentsize * phnum))
        return errf(err, "%s: the program headers run past the end of the file", path);
    uint64_t dyn = 0, dynsz = 0;
    bool has_dyn = false;
    for (unsigned i = 0; i < phnum && !has_dyn; i++) {
        size_t ph = (size_t)(phoff + (uint64_t)i * phentsize);
        if (get(e, ph, 4) == 2 /* PT_DYNAMIC */) {
            has_dyn = true;
            dyn = e->is64 ? get(e, ph + 8, 8) : get(e, ph + 4, 4);
            dynsz = e->is64 ? get(e, ph + 32, 8) : get(e, ph + 16, 4);
        }
    }
    if (!has_dyn)
        return 0; /* linked statically */
    if (!fits(e, dyn, dynsz))
        return errf(err, "%s: the dynamic section runs past the end of the file", path);
    size_t ent = 2 * (size_t)W(e);
    uint64_t strtab = 0, strsz = 0, soname = UINT64_MAX;
    bool has_strtab = false;
    struct strlist offs = {0}; /* DT_NEEDED string offsets, as text, in order */
    for (uint64_t o = dyn; o + ent <= dyn + dynsz; o += ent) {
        uint64_t tag = get(e, (size_t)o, W(e)), val = get(e, (size_t)o + W(e), W(e));
        if (tag == 0 /* DT_NULL */)
            break;
        if (tag == 1 /* DT_NEEDED */)
            strlist_pushf(&offs, "%llu", (unsigned long long)val);
        else if (tag == 5 /* DT_STRTAB */)
            strtab = val, has_strtab = true;
        else if (tag == 10 /* DT_STRSZ */)
            strsz = val;
        else if (tag == 14 /* DT_SONAME */)
            soname = val;
    }
    long long stroff = has_strtab ? vaddr_offset(e, phoff, phentsize, phnum, strtab) : -1;
    int rc = 1;
    if ((offs.n || soname != UINT64_MAX) && (stroff < 0 || !fits(e, (uint64_t)stroff, strsz)))
        rc = errf(err, "%s: the dynamic string table is not in the file", path);
    for (size_t i = 0; rc == 1 && i <= offs.n; i++) {
        uint64_t s = i < offs.n ? strtoull(offs.v[i], NULL, 10) : soname;
        if (i == offs.n && soname == UINT64_MAX)
            break;
        const char *str = (const char *)e->p + stroff + s;
        if (s >= strsz || !memchr(str, 0, (size_t)(strsz - s)))
            rc = errf(err, "%s: a %s string outside the dynamic string table", path,
                      i < offs.n ? "DT_NEEDED" : "DT_SONAME");
        else if (i < offs.n)
            strlist_push(&d->needed, str);
        else
            d->soname = xstrdup(str);
    }
    strlist_free(&offs);
    return rc;
}

int elf_dynamic_read(const char *path, struct elf_dynamic *d, char err[SHLIBS_ERRLEN])
{
    *d = (struct elf_dynamic){0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errf(err, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) < 0) {
        close(fd);
        return errf(err, "%s: %s", path, strerror(errno));
    }
    unsigned char id[6];
    if (!S_ISREG(sb.st_mode) || sb.st_size < 6 || pread(fd, id, 6, 0) != 6 ||
        memcmp(id, "\177ELF", 4) != 0) {
        close(fd);
        return 0;
    }
    if ((id[4] != 1 && id[4] != 2) || (id[5] != 1 && id[5] != 2)) {
        close(fd);
        return errf(err, "%s: an ELF file of unknown class %u or byte order %u", path, id[4],
                    id[5]);
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return errf(err, "%s: %s", path, strerror(errno));
    struct elf e = {.p = p, .size = (size_t)sb.st_size, .is64 = id[4] == 2, .be = id[5] == 2};
    int rc = parse(&e, path, d, err);
    munmap(p, (size_t)sb.st_size);
    if (rc != 1)
        elf_dynamic_free(d);
    return rc;
}

void elf_dynamic_free(struct elf_dynamic *d)
{
    free(d->soname);
    strlist_free(&d->needed);
    *d = (struct elf_dynamic){0};
}

/* ---- shlibs --------------------------------------------------------------- */

int shlibs_split(const char *soname, char **name, char **version)
{
    /* dpkg's split_soname: NAME.so.VERSION, else NAME-VERSION.so with a
     * VERSION starting with a digit */
    const char *so = strstr(soname, ".so.");
    if (so && so > soname && so[4]) {
        *name = xstrndup(soname, (size_t)(so - soname));
        *version = xstrdup(so + 4);
        return 0;
    }
    if (str_ends(soname, ".so")) {
        size_t n = strlen(soname) - 3;
        for (size_t i = n; i-- > 1;)
            if (soname[i] == '-' && isdigit((unsigned char)soname[i + 1])) {
                *name = xstrndup(soname, i);
                *version = xstrndup(soname + i + 1, n - i - 1);
                return 0;
            }
    }
    return -1;
}

static const struct shlibs_entry *find_split(const struct shlibs *m, const char *name,
                                             const char *version)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].name, name) && !strcmp(m->v[i].version, version))
            return &m->v[i];
    return NULL;
}

static void add_split(struct shlibs *m, char *name, char *version, const char *dep)
{
    if (find_split(m, name, version)) {
        free(name);
        free(version);
        return;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->v = xrealloc(m->v, m->cap * sizeof *m->v);
    }
    size_t plen = strcspn(dep, " \t(,|");
    m->v[m->n++] = (struct shlibs_entry){.name = name, .version = version, .dep = xstrdup(dep),
                                         .package = xstrndup(dep, plen)};
}

int shlibs_add(struct shlibs *m, const char *soname, const char *dep)
{
    char *name, *version;
    if (shlibs_split(soname, &name, &version) < 0)
        return -1;
    add_split(m, name, version, dep);
    return 0;
}

int shlibs_parse(struct shlibs *m, const char *text, const char *where,
                 char err[SHLIBS_ERRLEN])
{
    unsigned line = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *l = xstrndup(p, n);
        p += n + (nl != NULL);
        line++;
        char *s = l;
        while (isspace((unsigned char)*s))
            s++;
        char *w[2] = {0};
        int nw = 0;
        while (*s && *s != '#' && nw < 2) {
            w[nw++] = s;
            s += strcspn(s, " \t");
            if (*s)
                *s++ = 0;
            while (isspace((unsigned char)*s))
                s++;
        }
        size_t dl = strlen(s);
        while (dl && isspace((unsigned char)s[dl - 1]))
            s[--dl] = 0;
        if (nw == 0 || (w[0][0] == '#')) {
            free(l);
            continue; /* empty or a comment */
        }
        if (str_ends(w[0], ":")) {
            free(l);
            continue; /* a typed line ("udeb:"): not for .debs */
        }
        if (nw < 2 || !*s) {
            int rc = errf(err, "%s:%u: not a shlibs line (NAME VERSION DEPENDENCY, as "
                          "\"libc 6 libc6 (>= 2.36)\")", where, line);
            free(l);
            return rc;
        }
        add_split(m, xstrdup(w[0]), xstrdup(w[1]), s);
        free(l);
    }
    return 0;
}

const struct shlibs_entry *shlibs_find(const struct shlibs *m, const char *soname)
{
    char *name, *version;
    if (shlibs_split(soname, &name, &version) < 0)
        return NULL;
    const struct shlibs_entry *e = find_split(m, name, version);
    free(name);
    free(version);
    return e;
}

char *shlibs_line(const char *soname, const char *dep)
{
    char *name, *version;
    if (shlibs_split(soname, &name, &version) < 0)
        return NULL;
    char *l = xasprintf("%s %s %s\n", name, version, dep);
    free(name);
    free(version);
    return l;
}

void shlibs_free(struct shlibs *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].name);
        free(m->v[i].version);
        free(m->v[i].dep);
        free(m->v[i].package);
    }
    free(m->v);
    *m = (struct shlibs){0};
}

int shlibs_depends(const struct shlibs *m, const char *package, const char *file,
                   const struct strlist *needed, struct strlist *deps,
                   char err[SHLIBS_ERRLEN])
{
    for (size_t i = 0; i < needed->n; i++) {
        const struct shlibs_entry *e = shlibs_find(m, needed->v[i]);
        if (!e)
            return errf(err, "%s (package %s) needs %s (DT_NEEDED), which no package of this "
                        "build and no shlibs file provides: add the package that ships it, or "
                        "a shlibs line for it", file, package, needed->v[i]);
        if (strcmp(e->package, package) != 0 && !strlist_contains(deps, e->dep))
            strlist_push(deps, e->dep);
    }
    return 0;
}
