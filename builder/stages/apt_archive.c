/* The `apt-archive` stage (section `stages`): a signed Debian apt archive,
 * laid out as debian-ports has it, from the .deb files of the recipe stages
 * it names and Debian packages pinned by name, version and sha256
 * (docs/apt-archive.md).
 *
 *   pool/main/PFX/SOURCE/PACKAGE_VERSION_ARCH.deb
 *   dists/SUITE/main/binary-ARCH/Packages, Packages.xz
 *   dists/SUITE/Release, InRelease (clearsigned), Release.gpg (detached)
 *   trillian-archive-keyring.gpg (binary) and .asc: the public key
 *
 * The Packages stanzas are made here from each .deb's control (dpkg-deb
 * --field) and its size and hashes, sorted by package, version (Debian's
 * order) and architecture, so the same inputs give the same bytes. gpg
 * signs in a private home under the stage's scratch directory, at
 * SOURCE_DATE_EPOCH (--faked-system-time): ed25519 signatures are
 * deterministic, so the signed files are too. The key is the recipe's
 * (`key`, an armored secret key) or a throwaway ed25519 key made once per
 * cache under CACHE/keys/apt-archive/ (a lock keeps two builds from making
 * two). The archive always carries trillian-archive-keyring, a .deb of the
 * key. Before it returns, the stage checks its own output: every Packages
 * entry against its pool file, the Release hashes against the indexes,
 * InRelease and Release.gpg with gpgv against the exported keyring. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/json_out.h"
#include "base/sha256.h"
#include "drivers/fetch.h"
#include "formats/deb.h"
#include "stage.h"

#define KEYRING_PKG "trillian-archive-keyring"
#define KEYRING_PATH "/usr/share/keyrings/" KEYRING_PKG ".gpg"

static const struct field fields[] = {
    {"stages", F_STRING_LIST, false, NULL, NULL,
     "stages whose outputs' *.deb files (any depth) go into the archive"},
    {"debian", F_LIST, false, NULL, NULL,
     "Debian packages to take, each pinned: ({ package = \"...\"; version = \"...\"; sha256 = "
     "\"...\"; arch = \"all\"; filename = \"pool/main/...\"; }, ...); arch and filename "
     "optional (default all, and the pool path from the package's name)"},
    {"debian_mirror", F_STRING, false, NULL, "http://deb.debian.org/debian",
     "archive the `debian` packages come from (MIRROR/FILENAME; --mirror and the cache are "
     "tried first, by sha256)"},
    {"suite", F_STRING, false, NULL, "trillian", "the archive's suite: dists/SUITE"},
    {"codename", F_STRING, false, NULL, NULL, "Release's Codename (default: the suite)"},
    {"architecture", F_STRING, false, NULL, NULL,
     "the archive's Debian architecture (default: the recipe's arch); packages must be it or all"},
    {"origin", F_STRING, false, NULL, "Trillian", "Release's Origin"},
    {"label", F_STRING, false, NULL, "Trillian", "Release's Label"},
    {"release_description", F_STRING, false, NULL, NULL,
     "Release's Description (default: \"Trillian packages for RECIPE\")"},
    {"key", F_PATH, false, NULL, NULL,
     "armored OpenPGP secret key without a passphrase (gpg --export-secret-keys --armor) that "
     "signs the archive; default: a throwaway ed25519 key made once per cache "
     "(CACHE/keys/apt-archive/)"},
    {"url", F_STRING, false, NULL, NULL,
     "where the archive will be served: the keyring package then installs "
     "/etc/apt/sources.list.d/trillian-archive.list with its deb line"},
    {"keyring_version", F_STRING, false, NULL, NULL,
     "version of the trillian-archive-keyring package (default: YYYYMMDD of SOURCE_DATE_EPOCH)"},
    {0},
};

static const char *const tools[] = {"dpkg-deb", "gpg", "gpgv", "xz", NULL};
static const char *const outputs[] = {"dists", "pool", KEYRING_PKG ".gpg", KEYRING_PKG ".asc",
                                      "stage-manifest.json", NULL};

/* ---- small helpers ------------------------------------------------------- */

static bool word_ok(const char *s, const char *extra)
{
    if (!s || !*s || !isalnum((unsigned char)*s))
        return false;
    return str_all_alnum_or(s, extra);
}

static const char *arch_of(const struct stage *st)
{
    const char *a = st_str(st, "architecture");
    return a ? a : st_arch(st);
}

/* Debian's version order (dpkg's verrevcmp), on the whole version. */
static int order(int c)
{
    if (isdigit(c))
        return 0;
    if (isalpha(c))
        return c;
    if (c == '~')
        return -1;
    if (c)
        return c + 256;
    return 0;
}

static int verrevcmp(const char *a, const char *b)
{
    while (*a || *b) {
        int first_diff = 0;
        while ((*a && !isdigit((unsigned char)*a)) || (*b && !isdigit((unsigned char)*b))) {
            int ac = order((unsigned char)*a), bc = order((unsigned char)*b);
            if (ac != bc)
                return ac - bc;
            a++;
            b++;
        }
        while (*a == '0')
            a++;
        while (*b == '0')
            b++;
        while (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            if (!first_diff)
                first_diff = *a - *b;
            a++;
            b++;
        }
        if (isdigit((unsigned char)*a))
            return 1;
        if (isdigit((unsigned char)*b))
            return -1;
        if (first_diff)
            return first_diff;
    }
    return 0;
}

static void split_version(const char *v, long *epoch, char **up, char **rev)
{
    const char *colon = strchr(v, ':');
    *epoch = colon ? strtol(v, NULL, 10) : 0;
    const char *u = colon ? colon + 1 : v;
    const char *dash = strrchr(u, '-');
    *up = dash ? xstrndup(u, (size_t)(dash - u)) : xstrdup(u);
    *rev = xstrdup(dash ? dash + 1 : "");
}

static int version_cmp(const char *a, const char *b)
{
    long ea, eb;
    char *ua, *ra, *ub, *rb;
    split_version(a, &ea, &ua, &ra);
    split_version(b, &eb, &ub, &rb);
    int c = ea < eb ? -1 : ea > eb ? 1 : verrevcmp(ua, ub);
    if (!c)
        c = verrevcmp(ra, rb);
    free(ua);
    free(ra);
    free(ub);
    free(rb);
    return c < 0 ? -1 : c > 0;
}

/* The pool directory of a source: "libf/libfoo", "h/hello". */
static char *pool_dir(const char *source)
{
    if (str_starts(source, "lib") && strlen(source) > 3)
        return xasprintf("pool/main/lib%c/%s", source[3], source);
    return xasprintf("pool/main/%c/%s", source[0], source);
}

static int file_hashes(const char *path, char md5[33], char sha[65], long long *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    struct sha256 s;
    sha256_init(&s);
    if (!m || EVP_DigestInit_ex(m, EVP_md5(), NULL) != 1) {
        EVP_MD_CTX_free(m);
        sha256_discard(&s);
        close(fd);
        return -1;
    }
    static unsigned char block[1 << 16];
    long long n = 0;
    ssize_t r;
    while ((r = read(fd, block, sizeof block)) > 0) {
        EVP_DigestUpdate(m, block, (size_t)r);
        sha256_update(&s, block, (size_t)r);
        n += r;
    }
    close(fd);
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_DigestFinal_ex(m, d, &len);
    EVP_MD_CTX_free(m);
    sha256_final_hex(&s, sha);
    if (r < 0 || len != 16)
        return -1;
    for (unsigned i = 0; i < 16; i++)
        snprintf(md5 + 2 * i, 3, "%02x", d[i]);
    *size = n;
    return 0;
}

/* The value of FIELD in a control paragraph (first line only; new string). */
static char *control_field(const char *ctl, const char *field)
{
    size_t fl = strlen(field);
    for (const char *l = ctl; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (!strncasecmp(l, field, fl) && l[fl] == ':') {
            const char *v = l + fl + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            size_t n = strcspn(v, "\n");
            while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
                n--;
            return xstrndup(v, n);
        }
    }
    return NULL;
}

/* ---- plan time ------------------------------------------------------------ */

/* The default pool path of a Debian package. */
static char *debian_filename(const char *pkg, const char *version, const char *arch)
{
    char *dir = pool_dir(pkg), *name = deb_file_name(pkg, version, arch);
    char *f = path_join(dir, name);
    free(dir);
    free(name);
    return f;
}

static int check_key_file(struct stage *st, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) < 0)
        return st_error(st, "key", "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return st_error(st, "key", "%s is not a file (expected an armored OpenPGP secret key: "
                        "gpg --export-secret-keys --armor KEYID > FILE)", path);
    char *data = NULL;
    size_t len = 0;
    if (read_file(path, &data, &len) < 0)
        return st_error(st, "key", "%s cannot be read: %s", path, strerror(errno));
    const char *p = data;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    int rc = 0;
    if (str_starts(p, "-----BEGIN PGP PUBLIC KEY BLOCK-----"))
        rc = st_error(st, "key", "%s is a public key, not a secret key (export the secret one: "
                      "gpg --export-secret-keys --armor KEYID > FILE)", path);
    else if (!str_starts(p, "-----BEGIN PGP PRIVATE KEY BLOCK-----"))
        rc = st_error(st, "key", "%s is not an armored OpenPGP secret key (no \"-----BEGIN PGP "
                      "PRIVATE KEY BLOCK-----\"; make one with gpg --export-secret-keys --armor "
                      "KEYID > FILE)", path);
    free(data);
    return rc;
}

static int declare(struct stage *st)
{
    const char *arch = arch_of(st);
    if (!word_ok(arch, "-"))
        st_error(st, "architecture", "'%s' is not a Debian architecture name", arch);
    if (!strcmp(arch, "all"))
        st_error(st, "architecture", "'all' is not an archive architecture (arch:all packages go "
                 "into every binary-ARCH index; name the machine's, e.g. ia64)");
    const char *suite = st_str(st, "suite"), *codename = st_str(st, "codename");
    if (!word_ok(suite, "._-"))
        st_error(st, "suite", "'%s' is not a suite name (letters, digits, '.', '_', '-')", suite);
    if (codename && !word_ok(codename, "._-"))
        st_error(st, "codename", "'%s' is not a codename (letters, digits, '.', '_', '-')",
                 codename);
    static const char *const oneline[] = {"origin", "label", "release_description", "url",
                                          "keyring_version", NULL};
    for (size_t i = 0; oneline[i]; i++) {
        const char *v = st_str(st, oneline[i]);
        if (v && (strchr(v, '\n') || !*v))
            st_error(st, oneline[i], "must be one non-empty line");
    }
    const char *kv = st_str(st, "keyring_version");
    if (kv && (!isdigit((unsigned char)kv[0]) || !str_all_alnum_or(kv, ".+~-:")))
        st_error(st, "keyring_version", "'%s' is not a Debian version", kv);
    const char *url = st_str(st, "url");
    if (url && strchr(url, ' '))
        st_error(st, "url", "'%s' has a space", url);

    struct strlist names = {0};
    st_list(st, "stages", &names);
    for (size_t i = 0; i < names.n; i++) {
        if (!strcmp(names.v[i], st_name(st)))
            st_error(st, "stages", "names this stage itself (%s)", names.v[i]);
        else
            st_need(st, names.v[i]);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names.v[i], names.v[j]))
                st_error(st, "stages", "names %s twice", names.v[i]);
    }
    strlist_free(&names);

    const struct st_node *deb = st_node(st, "debian");
    const char *mirror = st_str(st, "debian_mirror");
    if (!fetch_valid_url(mirror))
        st_error(st, "debian_mirror", "'%s' is not an http(s), ftp or file URL", mirror);
    for (size_t i = 0; i < node_len(deb); i++) {
        const struct st_node *e = node_elem(deb, i);
        char *where = st_node_where(st, e);
        if (node_type(e) != NODE_GROUP) {
            st_error(st, "debian", "entry %zu (%s) is not a group { package = ...; version = ...; "
                     "sha256 = ...; }", i + 1, where);
            free(where);
            continue;
        }
        for (size_t j = 0; j < node_len(e); j++) {
            const char *m = node_name(node_elem(e, j));
            static const char *const known[] = {"package", "version", "sha256", "arch",
                                                "filename", NULL};
            bool ok = false;
            for (size_t k = 0; known[k]; k++)
                ok |= m && !strcmp(m, known[k]);
            if (!ok || !node_member_str(e, m))
                st_error(st, "debian", "%s: entry %zu: '%s' is not a string setting of an entry "
                         "(expected package, version, sha256, arch, filename)", where, i + 1,
                         m ? m : "?");
        }
        const char *p = node_member_str(e, "package"), *v = node_member_str(e, "version"),
                   *h = node_member_str(e, "sha256"), *a = node_member_str(e, "arch"),
                   *f = node_member_str(e, "filename");
        if (!p || !v || !h) {
            st_error(st, "debian", "%s: entry %zu needs package, version and sha256", where,
                     i + 1);
        } else if (!word_ok(p, "+.-") || !word_ok(v, ".+~-:") || (a && !word_ok(a, "-"))) {
            st_error(st, "debian", "%s: entry %zu: '%s' '%s' is not a package name and version",
                     where, i + 1, p, v);
        } else if (!fetch_valid_sha256(h)) {
            st_error(st, "debian", "%s: entry %zu (%s): sha256 '%s' is not 64 hex digits", where,
                     i + 1, p, h);
        } else if (a && strcmp(a, "all") && strcmp(a, arch)) {
            st_error(st, "debian", "%s: entry %zu (%s): arch %s is neither the archive's (%s) nor "
                     "all", where, i + 1, p, a, arch);
        } else if (f && (f[0] == '/' || strstr(f, "..") || !str_ends(f, ".deb"))) {
            st_error(st, "debian", "%s: entry %zu (%s): filename '%s' must be a path in the "
                     "archive ending in .deb (pool/main/...)", where, i + 1, p, f);
        } else {
            char *fn = f ? xstrdup(f) : debian_filename(p, v, a ? a : "all");
            char *u = xasprintf("%s%s%s", mirror, str_ends(mirror, "/") ? "" : "/", fn);
            st_remote(st, "debian", u, path_basename(fn), h);
            free(u);
            free(fn);
        }
        free(where);
    }
    char *key = st_path(st, "key");
    if (key)
        check_key_file(st, key);
    free(key);
    return 0;
}

/* ---- run time ------------------------------------------------------------- */

struct deb {
    char *path;   /* where it is read from */
    char *origin; /* for messages: "stage NAME's PATH", or the setting's FILE:LINE */
    char *from;   /* for the manifest: "stage NAME: PATH", "debian[N]", "keyring" */
    char *control;
    char *package, *version, *arch, *source;
    char md5[33], sha[65];
    long long size;
    char *filename; /* pool/... */
    size_t idx;     /* the order it came in: stages, debian, keyring */
};

struct debs {
    struct deb *v;
    size_t n, cap;
};

static void debs_free(struct debs *d)
{
    for (size_t i = 0; i < d->n; i++) {
        struct deb *e = &d->v[i];
        free(e->path);
        free(e->origin);
        free(e->from);
        free(e->control);
        free(e->package);
        free(e->version);
        free(e->arch);
        free(e->source);
        free(e->filename);
    }
    free(d->v);
}

/* Reads PATH's control and hashes into a new entry; 0, or 1 after cx_fail. */
static int deb_add(const struct stage_ctx *cx, struct debs *d, const char *path, char *origin,
                   char *from)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 16;
        d->v = xrealloc(d->v, d->cap * sizeof *d->v);
    }
    struct deb *e = &d->v[d->n++];
    memset(e, 0, sizeof *e);
    e->path = xstrdup(path);
    e->origin = origin;
    e->from = from;
    e->idx = d->n - 1;
    const char *argv[] = {"dpkg-deb", "--field", path, NULL};
    if (cx_capture(cx, argv, &e->control) != 0 || !e->control)
        return cx_fail(cx, "%s: dpkg-deb cannot read its control (not a Debian package?)",
                       origin);
    e->package = control_field(e->control, "Package");
    e->version = control_field(e->control, "Version");
    e->arch = control_field(e->control, "Architecture");
    char *src = control_field(e->control, "Source");
    if (src) {
        src[strcspn(src, " (")] = 0;
        e->source = src;
    } else if (e->package) {
        e->source = xstrdup(e->package);
    }
    if (!e->package || !e->version || !e->arch || !word_ok(e->package, "+.-") ||
        !word_ok(e->version, ".+~-:") || !word_ok(e->source, "+.-") || !word_ok(e->arch, "-"))
        return cx_fail(cx, "%s: its control lacks a valid Package, Version or Architecture",
                       origin);
    const char *want = arch_of(cx->st);
    if (strcmp(e->arch, "all") && strcmp(e->arch, want))
        return cx_fail(cx, "%s: package %s %s is for architecture %s, neither the archive's (%s) "
                       "nor all", origin, e->package, e->version, e->arch, want);
    if (file_hashes(path, e->md5, e->sha, &e->size) < 0)
        return cx_fail(cx, "%s: cannot read: %s", origin, strerror(errno));
    char *dir = pool_dir(e->source), *name = deb_file_name(e->package, e->version, e->arch);
    e->filename = path_join(dir, name);
    free(dir);
    free(name);
    return 0;
}

static int deb_cmp(const void *pa, const void *pb)
{
    const struct deb *a = pa, *b = pb;
    int c = strcmp(a->package, b->package);
    if (!c)
        c = version_cmp(a->version, b->version);
    if (!c)
        c = strcmp(a->version, b->version);
    if (!c)
        c = strcmp(a->arch, b->arch);
    if (!c)
        c = a->idx < b->idx ? -1 : a->idx > b->idx;
    return c;
}

/* The stanza of E: its control without Description, then Filename, Size,
 * MD5sum, SHA256, then the Description (as dpkg-scanpackages puts them). */
static void stanza(struct buf *b, const struct deb *e)
{
    struct buf desc = BUF_INIT;
    bool in_desc = false;
    for (const char *l = e->control; *l;) {
        size_t n = strcspn(l, "\n");
        bool cont = l[0] == ' ' || l[0] == '\t';
        if (!cont)
            in_desc = !strncasecmp(l, "Description:", 12);
        if (n) {
            struct buf *to = in_desc ? &desc : b;
            buf_add(to, l, n);
            buf_puts(to, "\n");
        }
        l += n;
        if (*l)
            l++;
    }
    buf_printf(b, "Filename: %s\nSize: %lld\nMD5sum: %s\nSHA256: %s\n", e->filename, e->size,
               e->md5, e->sha);
    if (desc.n)
        buf_add(b, desc.p, desc.n);
    buf_puts(b, "\n");
    buf_free(&desc);
}

/* gpg in HOME, batch, no agent prompts. */
static void gpg_argv(struct strlist *a, const char *home, long long epoch)
{
    strlist_push(a, "gpg");
    strlist_push(a, "--homedir");
    strlist_push(a, home);
    strlist_push(a, "--batch");
    strlist_push(a, "--no-tty");
    strlist_push(a, "--quiet");
    strlist_push(a, "--no-auto-check-trustdb");
    strlist_push(a, "--pinentry-mode");
    strlist_push(a, "loopback");
    strlist_push(a, "--passphrase");
    strlist_push(a, "");
    if (epoch >= 0) {
        strlist_push(a, "--faked-system-time");
        strlist_pushf(a, "%lld!", epoch);
    }
}

static int gpg_run(const struct stage_ctx *cx, const char *home, long long epoch,
                   const char *const *args, char **out)
{
    struct strlist a = {0};
    gpg_argv(&a, home, epoch);
    for (size_t i = 0; args[i]; i++)
        strlist_push(&a, args[i]);
    int rc = out ? cx_capture(cx, (const char *const *)a.v, out)
                 : cx_run(cx, (const char *const *)a.v);
    strlist_free(&a);
    return rc;
}

static void gpg_stop(const struct stage_ctx *cx, const char *home)
{
    const char *argv[] = {"gpgconf", "--homedir", home, "--kill", "gpg-agent", NULL};
    cx_run(cx, argv);
}

/* A GnuPG home: in the scratch directory when its agent's socket path fits
 * there, else a short directory under /tmp (removed by the caller). */
static char *gnupg_home(const struct stage_ctx *cx, bool *outside, const char *tag)
{
    char *h = xasprintf("%s/%s", cx->work, tag);
    *outside = false;
    if (strlen(h) + sizeof "/S.gpg-agent.browser" > 100) {
        free(h);
        h = xstrdup("/tmp/trl-apt.XXXXXX");
        if (!mkdtemp(h)) {
            free(h);
            return NULL;
        }
        *outside = true;
    } else if (mkdir(h, 0700) < 0) {
        free(h);
        return NULL;
    }
    return h;
}

/* The throwaway key of this cache: CACHE/keys/apt-archive/secret.asc, made
 * once (under a lock) with creation time 0 so that it can sign at any
 * SOURCE_DATE_EPOCH. Returns its path, or NULL after cx_fail. */
static char *cache_key(const struct stage_ctx *cx)
{
    char *dir = xasprintf("%s/keys/apt-archive", cx->cache_dir);
    char *path = path_join(dir, "secret.asc"), *lock = path_join(dir, "lock");
    if (mkdir_p(dir, 0700) < 0) {
        cx_fail(cx, "cannot make %s: %s", dir, strerror(errno));
        goto fail;
    }
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) < 0) {
        cx_fail(cx, "cannot lock %s: %s", lock, strerror(errno));
        if (fd >= 0)
            close(fd);
        goto fail;
    }
    if (path_exists(path)) {
        close(fd);
        goto done;
    }
    bool outside;
    char *home = gnupg_home(cx, &outside, "keygen");
    if (!home) {
        cx_fail(cx, "cannot make a GnuPG home: %s", strerror(errno));
        close(fd);
        goto fail;
    }
    cx_log(cx, "making this cache's throwaway archive key (ed25519) in %s", dir);
    char *uid = xasprintf("Trillian apt archive (throwaway key of one build cache) "
                          "<apt-archive@trillian.invalid>");
    const char *gen[] = {"--quick-gen-key", uid, "ed25519", "sign", "never", NULL};
    char *armored = NULL;
    const char *exp[] = {"--armor", "--export-secret-keys", NULL};
    int rc = gpg_run(cx, home, 0, gen, NULL);
    if (rc == 0)
        rc = gpg_run(cx, home, 0, exp, &armored);
    gpg_stop(cx, home);
    if (outside)
        rm_rf(home);
    free(home);
    free(uid);
    if (rc != 0 || !armored || !str_starts(armored, "-----BEGIN PGP PRIVATE KEY BLOCK-----")) {
        cx_fail(cx, "gpg could not make the archive key (see the log above)");
        free(armored);
        close(fd);
        goto fail;
    }
    rc = write_file_atomic(path, armored, strlen(armored), 0600);
    free(armored);
    close(fd);
    if (rc < 0) {
        cx_fail(cx, "cannot write %s: %s", path, strerror(errno));
        goto fail;
    }
done:
    free(dir);
    free(lock);
    return path;
fail:
    free(dir);
    free(lock);
    free(path);
    return NULL;
}

/* The fingerprint of the one secret key in HOME that can sign (new string),
 * or NULL after cx_fail naming WHERE. */
static char *signing_key(const struct stage_ctx *cx, const char *home, const char *where)
{
    char *out = NULL;
    const char *args[] = {"--with-colons", "--list-secret-keys", NULL};
    if (gpg_run(cx, home, -1, args, &out) != 0 || !out) {
        free(out);
        cx_fail(cx, "%s: gpg cannot list the imported key (see the log above)", where);
        return NULL;
    }
    char *fpr = NULL;
    int keys = 0;
    bool want_fpr = false, usable = false;
    char why[160] = "";
    for (char *l = out; l && *l;) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        char *f[13] = {0};
        size_t nf = 0;
        for (char *p = l; p && nf < 13; nf++) {
            f[nf] = p;
            p = strchr(p, ':');
            if (p)
                *p++ = 0;
        }
        if (!strcmp(f[0], "sec")) {
            keys++;
            want_fpr = true;
            const char *validity = nf > 1 ? f[1] : "", *caps = nf > 11 ? f[11] : "";
            usable = strchr(caps, 'S') != NULL;
            if (!strcmp(validity, "e"))
                snprintf(why, sizeof why, "it has expired");
            else if (!strcmp(validity, "r"))
                snprintf(why, sizeof why, "it is revoked");
            else if (!usable)
                snprintf(why, sizeof why, "it cannot sign (capabilities '%s')", caps);
        } else if (!strcmp(f[0], "fpr") && want_fpr && nf > 9) {
            free(fpr);
            fpr = xstrdup(f[9]);
            want_fpr = false;
        }
        l = nl ? nl + 1 : NULL;
    }
    free(out);
    if (keys != 1 || !fpr || !usable) {
        if (keys == 0)
            cx_fail(cx, "%s: holds no secret key gpg can use", where);
        else if (keys > 1)
            cx_fail(cx, "%s: holds %d secret keys; give one", where, keys);
        else
            cx_fail(cx, "%s: the key cannot sign archives: %s", where, why[0] ? why : "unusable");
        free(fpr);
        return NULL;
    }
    return fpr;
}

/* Sets the mtime of every entry below DIR (and DIR) to EPOCH and the modes
 * to 0755 (directories) or 0644. */
static const char copyright_text[] =
    "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
    "Upstream-Name: trillian-archive-keyring\n"
    "Comment: The OpenPGP public key that signs a Trillian-built apt archive,\n"
    " made by Trillian's apt-archive stage. A public key is a fact, not a work:\n"
    " this package carries no copyrightable material of its own.\n"
    "\n"
    "Files: *\n"
    "Copyright: none claimed\n"
    "License: public-domain\n"
    " The files of this package are dedicated to the public domain.\n";

/* Builds the keyring package from KEYRING (binary) into WORK/keyring.deb,
 * with the package writer every package kind uses (formats/deb.h). */
static char *keyring_deb(const struct stage_ctx *cx, const char *keyring, const char *line,
                         const char *version)
{
    char *root = path_join(cx->work, "keyring-pkg");
    char *deb = path_join(cx->work, KEYRING_PKG ".deb");
    char *doc = xasprintf("%s/usr/share/doc/" KEYRING_PKG, root);
    char *kdir = xasprintf("%s/usr/share/keyrings", root);
    const char *url = cx_str(cx, "url");
    char *result = NULL;
    if (mkdir_p(doc, 0755) < 0 || mkdir_p(kdir, 0755) < 0) {
        cx_fail(cx, "cannot make %s: %s", root, strerror(errno));
        goto out;
    }
    char *kpath = path_join(kdir, KEYRING_PKG ".gpg");
    int rc = copy_file(keyring, kpath);
    free(kpath);
    struct buf readme = BUF_INIT;
    buf_printf(&readme, "The key of the %s apt archive (suite %s) is\n" KEYRING_PATH ".\n\n",
               cx_str(cx, "origin"), cx_str(cx, "suite"));
    if (url)
        buf_printf(&readme, "This package installs /etc/apt/sources.list.d/trillian-archive.list:\n"
                   "\n    %s\n", line);
    else
        buf_printf(&readme, "To use the archive, add this line to a file in\n"
                   "/etc/apt/sources.list.d/, with URL where the archive is served:\n\n    %s\n",
                   line);
    if (rc == 0)
        rc = cx_write_in(cx, doc, "copyright", copyright_text, sizeof copyright_text - 1, 0644)
                 ? -1 : 0;
    if (rc == 0)
        rc = cx_write_in(cx, doc, "README", readme.p, readme.n, 0644) ? -1 : 0;
    if (rc == 0 && url) { /* under etc/: deb_build makes it a conffile */
        char *l = xasprintf("%s\n", line);
        rc = cx_write_in(cx, root, "etc/apt/sources.list.d/trillian-archive.list", l, strlen(l),
                         0644) ? -1 : 0;
        free(l);
    }
    buf_free(&readme);
    if (rc != 0) {
        cx_fail(cx, "cannot assemble the keyring package in %s: %s", root, strerror(errno));
        goto out;
    }
    char *summary = xasprintf("OpenPGP key of the %s apt archive (suite %s)",
                              cx_str(cx, "origin"), cx_str(cx, "suite"));
    struct deb_package p = {
        .f = {.package = KEYRING_PKG, .version = version, .arch = "all",
              .maintainer = "Trillian <trillian@trillian.invalid>", .section = "misc",
              .priority = "optional", .multi_arch = "foreign", .summary = summary,
              .description = "The public key that signs the archive, as " KEYRING_PATH ",\n"
                             "for deb [signed-by=" KEYRING_PATH "] lines."}};
    char err[DEB_ERRLEN];
    rc = deb_build(&p, root, deb, cx->source_date_epoch, err);
    free(summary);
    if (rc != 0) {
        cx_fail(cx, "the " KEYRING_PKG " package: %s", err);
        goto out;
    }
    result = xstrdup(deb);
out:
    free(root);
    free(deb);
    free(doc);
    free(kdir);
    return result;
}

/* The hashes of FILE (below the dists dir DISTS) as Release lines. */
static int release_hashes(const char *dists, const struct strlist *files, struct buf *md5s,
                          struct buf *shas)
{
    for (size_t i = 0; i < files->n; i++) {
        char *p = path_join(dists, files->v[i]);
        char md5[33], sha[65];
        long long size;
        int rc = file_hashes(p, md5, sha, &size);
        free(p);
        if (rc < 0)
            return -1;
        buf_printf(md5s, " %s %16lld %s\n", md5, size, files->v[i]);
        buf_printf(shas, " %s %16lld %s\n", sha, size, files->v[i]);
    }
    return 0;
}

static char *rfc2822(long long epoch)
{
    time_t t = (time_t)epoch;
    struct tm tm;
    gmtime_r(&t, &tm);
    static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    return xasprintf("%s, %02d %s %04d %02d:%02d:%02d UTC", days[tm.tm_wday], tm.tm_mday,
                     months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* The checks of the finished archive in OUT. 0, or 1 after cx_fail. */
static int self_check(const struct stage_ctx *cx, const char *dists, const char *packages_rel,
                      const struct strlist *indexes, size_t expected)
{
    char *pk = path_join(dists, packages_rel), *text = NULL;
    if (read_file(pk, &text, NULL) < 0) {
        free(pk);
        return cx_fail(cx, "self-check: cannot read %s", packages_rel);
    }
    free(pk);
    size_t n = 0;
    int rc = 0;
    for (char *para = text; rc == 0 && para && *para;) {
        char *end = strstr(para, "\n\n");
        if (end)
            end[1] = 0;
        char *fn = control_field(para, "Filename"), *size = control_field(para, "Size"),
             *sha = control_field(para, "SHA256");
        char *p = fn ? path_join(cx->out, fn) : NULL;
        char md5[33], got[65];
        long long sz = -1;
        if (!fn || !size || !sha || file_hashes(p, md5, got, &sz) < 0)
            rc = cx_fail(cx, "self-check: the Packages entry %.40s... names no readable pool file",
                         para);
        else if (sz != atoll(size) || strcmp(got, sha))
            rc = cx_fail(cx, "self-check: %s is %lld bytes, sha256 %s; Packages says %s, %s", fn,
                         sz, got, size, sha);
        n++;
        free(fn);
        free(size);
        free(sha);
        free(p);
        para = end ? end + 2 : NULL;
    }
    free(text);
    if (rc == 0 && n != expected)
        rc = cx_fail(cx, "self-check: Packages has %zu entries, expected %zu", n, expected);
    if (rc)
        return rc;
    /* the Release hashes */
    char *rel = path_join(dists, "Release");
    char *rtext = NULL;
    if (read_file(rel, &rtext, NULL) < 0) {
        free(rel);
        return cx_fail(cx, "self-check: cannot read Release");
    }
    struct buf m = BUF_INIT, s = BUF_INIT;
    if (release_hashes(dists, indexes, &m, &s) < 0 || !strstr(rtext, s.p) || !strstr(rtext, m.p))
        rc = cx_fail(cx, "self-check: Release's hashes do not match the index files");
    buf_free(&m);
    buf_free(&s);
    free(rtext);
    /* the signatures, with gpgv against the keyring we publish */
    char *ring = path_join(cx->out, KEYRING_PKG ".gpg");
    char *inrel = path_join(dists, "InRelease"), *gpg = path_join(dists, "Release.gpg");
    const char *v1[] = {"gpgv", "--keyring", ring, inrel, NULL};
    const char *v2[] = {"gpgv", "--keyring", ring, gpg, rel, NULL};
    if (rc == 0 && cx_run(cx, v1) != 0)
        rc = cx_fail(cx, "self-check: gpgv does not verify InRelease with %s", ring);
    if (rc == 0 && cx_run(cx, v2) != 0)
        rc = cx_fail(cx, "self-check: gpgv does not verify Release.gpg with %s", ring);
    free(ring);
    free(inrel);
    free(gpg);
    free(rel);
    return rc;
}

static int run(struct stage_ctx *cx)
{
    const char *arch = arch_of(cx->st), *suite = cx_str(cx, "suite");
    const char *codename = cx_str(cx, "codename") ? cx_str(cx, "codename") : suite;
    long long epoch = cx->source_date_epoch;
    struct debs debs = {0};
    int rc = 1;
    char *home = NULL, *keypath = NULL, *fpr = NULL, *keywhere = NULL, *kdeb = NULL;
    char *line = NULL, *dists = NULL, *kversion = NULL;
    bool outside = false;
    struct strlist indexes = {0};
    json_object *man = json_object_new_object();

    /* the key: imported into a private home */
    if (cx_isset(cx, "key")) {
        keypath = cx_path(cx, "key");
        keywhere = cx_where(cx, "key");
    } else {
        keypath = cache_key(cx);
        if (!keypath)
            goto out;
        keywhere = xasprintf("this cache's archive key %s", keypath);
    }
    home = gnupg_home(cx, &outside, "gnupg");
    if (!home) {
        cx_fail(cx, "cannot make a GnuPG home: %s", strerror(errno));
        goto out;
    }
    const char *imp[] = {"--import", keypath, NULL};
    if (gpg_run(cx, home, -1, imp, NULL) != 0) {
        cx_fail(cx, "%s: gpg cannot import it (see the log above)", keywhere);
        goto out;
    }
    fpr = signing_key(cx, home, keywhere);
    if (!fpr)
        goto out;
    char *ring = path_join(cx->out, KEYRING_PKG ".gpg");
    char *asc = path_join(cx->out, KEYRING_PKG ".asc");
    int fd1 = open(ring, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int fd2 = open(asc, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    struct strlist a = {0};
    gpg_argv(&a, home, -1);
    strlist_push(&a, "--export-options");
    strlist_push(&a, "export-minimal");
    strlist_push(&a, "--export");
    strlist_push(&a, fpr);
    int erc = fd1 < 0 || fd2 < 0 ? -1 : cx_run_to(cx, (const char *const *)a.v, fd1);
    if (erc == 0) {
        strlist_free(&a);
        gpg_argv(&a, home, -1);
        strlist_push(&a, "--armor");
        strlist_push(&a, "--export-options");
        strlist_push(&a, "export-minimal");
        strlist_push(&a, "--export");
        strlist_push(&a, fpr);
        erc = cx_run_to(cx, (const char *const *)a.v, fd2);
    }
    strlist_free(&a);
    if (fd1 >= 0)
        close(fd1);
    if (fd2 >= 0)
        close(fd2);
    if (erc != 0) {
        cx_fail(cx, "cannot export the public key to %s (see the log above)", ring);
        free(ring);
        free(asc);
        goto out;
    }

    /* the keyring package */
    const char *url = cx_str(cx, "url");
    line = xasprintf("deb [signed-by=" KEYRING_PATH "] %s %s main", url ? url : "URL", suite);
    kversion = cx_str(cx, "keyring_version") ? xstrdup(cx_str(cx, "keyring_version")) : NULL;
    if (!kversion) {
        time_t t = (time_t)epoch;
        struct tm tm;
        gmtime_r(&t, &tm);
        kversion = xasprintf("%04d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    }
    kdeb = keyring_deb(cx, ring, line, kversion);
    free(ring);
    free(asc);
    if (!kdeb)
        goto out;

    /* the packages: the stages' .debs, the Debian ones, the keyring */
    struct strlist names = {0};
    cx_list(cx, "stages", &names);
    for (size_t i = 0; i < names.n; i++) {
        const char *dir = cx_dep(cx, names.v[i]);
        struct strlist files = {0};
        char *where = cx_where(cx, "stages");
        if (!dir || list_tree(dir, &files) < 0) {
            cx_fail(cx, "%s: cannot read the output of stage %s", where, names.v[i]);
            free(where);
            strlist_free(&files);
            strlist_free(&names);
            goto out;
        }
        size_t found = 0;
        for (size_t j = 0; j < files.n; j++) {
            char *p = path_join(dir, files.v[j]);
            struct stat sb;
            if (str_ends(files.v[j], ".deb") && stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
                found++;
                if (deb_add(cx, &debs, p, xasprintf("stage %s's %s", names.v[i], files.v[j]),
                            xasprintf("stage %s: %s", names.v[i], files.v[j]))) {
                    free(p);
                    free(where);
                    strlist_free(&files);
                    strlist_free(&names);
                    goto out;
                }
            }
            free(p);
        }
        strlist_free(&files);
        if (!found) {
            cx_fail(cx, "%s: stage %s makes no .deb (no *.deb among its outputs)", where,
                    names.v[i]);
            free(where);
            strlist_free(&names);
            goto out;
        }
        free(where);
    }
    strlist_free(&names);
    const struct st_node *dn = cx_node(cx, "debian");
    const char *mirror = cx_str(cx, "debian_mirror");
    for (size_t i = 0; i < node_len(dn); i++) {
        const struct st_node *e = node_elem(dn, i);
        const char *p = node_member_str(e, "package"), *v = node_member_str(e, "version"),
                   *h = node_member_str(e, "sha256"), *a = node_member_str(e, "arch"),
                   *f = node_member_str(e, "filename");
        char *fn = f ? xstrdup(f) : debian_filename(p, v, a ? a : "all");
        char *u = xasprintf("%s%s%s", mirror, str_ends(mirror, "/") ? "" : "/", fn);
        char *loc = st_node_where(cx->st, e);
        char *where = xasprintf("%s: %s.debian[%zu] (%s %s)", loc, cx->name, i + 1, p, v);
        free(loc);
        char *got = fetch_pinned(cx, u, path_basename(fn), h, where);
        free(u);
        free(fn);
        if (!got) { /* fetch_pinned said why, naming WHERE */
            free(where);
            goto out;
        }
        size_t k = debs.n;
        if (deb_add(cx, &debs, got, xstrdup(where), xasprintf("debian[%zu]", i + 1))) {
            free(got);
            free(where);
            goto out;
        }
        free(got);
        if (strcmp(debs.v[k].package, p) || strcmp(debs.v[k].version, v)) {
            cx_fail(cx, "%s: the file with that sha256 is %s %s, not %s %s", where,
                    debs.v[k].package, debs.v[k].version, p, v);
            free(where);
            goto out;
        }
        free(where);
    }
    if (deb_add(cx, &debs, kdeb, xstrdup("the archive's own " KEYRING_PKG " package"),
                xstrdup("keyring")))
        goto out;

    /* sorted; one entry per package, version and architecture */
    qsort(debs.v, debs.n, sizeof *debs.v, deb_cmp);
    size_t kept = 0;
    bool dup = false;
    for (size_t i = 0; i < debs.n; i++) {
        if (kept && !strcmp(debs.v[kept - 1].package, debs.v[i].package) &&
            !strcmp(debs.v[kept - 1].version, debs.v[i].version) &&
            !strcmp(debs.v[kept - 1].arch, debs.v[i].arch)) {
            if (strcmp(debs.v[kept - 1].sha, debs.v[i].sha)) {
                cx_fail(cx, "two different files are %s %s (%s): %s (sha256 %s) and %s (sha256 "
                        "%s); an archive holds one", debs.v[i].package, debs.v[i].version,
                        debs.v[i].arch, debs.v[kept - 1].origin, debs.v[kept - 1].sha,
                        debs.v[i].origin, debs.v[i].sha);
                dup = true;
                break;
            }
            cx_log(cx, "%s is the same file as %s: kept once", debs.v[i].origin,
                   debs.v[kept - 1].origin);
            continue; /* freed with the array: swap it past kept */
        }
        if (kept != i) {
            struct deb t = debs.v[kept];
            debs.v[kept] = debs.v[i];
            debs.v[i] = t;
        }
        kept++;
    }
    if (dup)
        goto out;

    /* the pool and the index */
    struct buf pk = BUF_INIT;
    json_object *list = json_object_new_array();
    for (size_t i = 0; i < kept; i++) {
        struct deb *e = &debs.v[i];
        char *dst = path_join(cx->out, e->filename), *dir = path_dirname(dst);
        /* a hard link where the input is 0644 already (another entry's file: its mode is
           not ours to change), else a copy made 0644 */
        struct stat sb;
        bool same_mode = stat(e->path, &sb) == 0 && (sb.st_mode & 07777) == 0644;
        if (mkdir_p(dir, 0755) < 0 ||
            (same_mode ? link_or_copy(e->path, dst) : copy_file(e->path, dst)) < 0 ||
            (!same_mode && chmod(dst, 0644) < 0)) {
            cx_fail(cx, "cannot put %s into %s: %s", e->origin, dst, strerror(errno));
            free(dst);
            free(dir);
            buf_free(&pk);
            json_object_put(list);
            goto out;
        }
        free(dst);
        free(dir);
        stanza(&pk, e);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "package", json_object_new_string(e->package));
        json_object_object_add(o, "version", json_object_new_string(e->version));
        json_object_object_add(o, "architecture", json_object_new_string(e->arch));
        json_object_object_add(o, "filename", json_object_new_string(e->filename));
        json_object_object_add(o, "sha256", json_object_new_string(e->sha));
        json_object_object_add(o, "from", json_object_new_string(e->from));
        json_object_array_add(list, o);
    }
    dists = xasprintf("%s/dists/%s", cx->out, suite);
    char *prel = xasprintf("main/binary-%s/Packages", arch);
    char *pxz = xasprintf("%s.xz", prel);
    strlist_push(&indexes, prel);
    strlist_push(&indexes, pxz);
    int wrc = cx_write_in(cx, dists, prel, pk.p ? pk.p : "", pk.n, 0644);
    buf_free(&pk);
    if (wrc == 0) {
        char *src = path_join(dists, prel), *dst = path_join(dists, pxz);
        int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        const char *xz[] = {"xz", "-6", "--threads=1", "--check=crc64", "-c", src, NULL};
        wrc = fd < 0 || cx_run_to(cx, xz, fd) != 0;
        if (fd >= 0)
            close(fd);
        if (wrc)
            cx_fail(cx, "xz could not compress %s (see the log above)", src);
        free(src);
        free(dst);
    }
    free(prel);
    free(pxz);
    json_object_object_add(man, "packages", list);
    if (wrc)
        goto out;

    /* Release, signed */
    struct buf r = BUF_INIT, md5s = BUF_INIT, shas = BUF_INIT;
    char *date = rfc2822(epoch);
    const char *desc = cx_str(cx, "release_description");
    char *defdesc = xasprintf("Trillian packages for %s", st_recipe_name(cx->st));
    buf_printf(&r, "Origin: %s\nLabel: %s\nSuite: %s\nCodename: %s\nDate: %s\n"
               "Architectures: %s\nComponents: main\nDescription: %s\n",
               cx_str(cx, "origin"), cx_str(cx, "label"), suite, codename, date, arch,
               desc ? desc : defdesc);
    free(date);
    free(defdesc);
    if (release_hashes(dists, &indexes, &md5s, &shas) < 0) {
        cx_fail(cx, "cannot read the index files in %s: %s", dists, strerror(errno));
        buf_free(&r);
        buf_free(&md5s);
        buf_free(&shas);
        goto out;
    }
    buf_printf(&r, "MD5Sum:\n%sSHA256:\n%s", md5s.p, shas.p);
    buf_free(&md5s);
    buf_free(&shas);
    wrc = cx_write_in(cx, dists, "Release", r.p, r.n, 0644);
    buf_free(&r);
    if (wrc)
        goto out;
    char *rel = path_join(dists, "Release"), *inrel = path_join(dists, "InRelease"),
         *sig = path_join(dists, "Release.gpg");
    const char *s1[] = {"--local-user", fpr, "--digest-algo", "SHA512", "--output", inrel,
                        "--clearsign", rel, NULL};
    const char *s2[] = {"--local-user", fpr, "--digest-algo", "SHA512", "--armor", "--output",
                        sig, "--detach-sign", rel, NULL};
    wrc = gpg_run(cx, home, epoch, s1, NULL) || gpg_run(cx, home, epoch, s2, NULL);
    free(rel);
    free(inrel);
    free(sig);
    if (wrc) {
        cx_fail(cx, "%s: gpg could not sign Release at SOURCE_DATE_EPOCH %lld (see the log "
                "above: a key with a passphrase, or one created after that time?)", keywhere,
                epoch);
        goto out;
    }

    if (self_check(cx, dists, indexes.v[0], &indexes, kept))
        goto out;

    json_object_object_add(man, "suite", json_object_new_string(suite));
    json_object_object_add(man, "codename", json_object_new_string(codename));
    json_object_object_add(man, "architecture", json_object_new_string(arch));
    json_object_object_add(man, "key_fingerprint", json_object_new_string(fpr));
    json_object_object_add(man, "key", json_object_new_string(cx_isset(cx, "key") ? "recipe"
                                                                                  : "cache"));
    json_object_object_add(man, "sources_line", json_object_new_string(line));
    json_object_object_add(man, "keyring_version", json_object_new_string(kversion));
    rc = cx_write_manifest(cx, man);
    man = NULL;
    cx_log(cx, "apt archive: %zu packages in dists/%s (main, %s), signed by %s", kept, suite,
           arch, fpr);
out:
    if (home) {
        gpg_stop(cx, home);
        if (outside)
            rm_rf(home);
    }
    if (man)
        json_object_put(man);
    free(home);
    free(keypath);
    free(keywhere);
    free(fpr);
    free(kdeb);
    free(line);
    free(dists);
    free(kversion);
    strlist_free(&indexes);
    debs_free(&debs);
    return rc;
}

const struct stage_kind stage_apt_archive = {
    .name = "apt-archive",
    .section = "packages",
    .version = 1,
    .summary = "a signed Debian apt archive (pool/, dists/SUITE with Packages, Release, InRelease, "
               "Release.gpg) of the .debs of the stages it names and pinned Debian packages, with "
               "its keyring and a trillian-archive-keyring package",
    .fields = fields,
    .tools = tools,
    .outputs = outputs,
    .declare = declare,
    .run = run,
};
