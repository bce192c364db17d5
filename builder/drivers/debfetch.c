/* One Debian binary package, pinned at plan time and fetched at run time
 * (debfetch.h). */
#define _GNU_SOURCE
#include "debfetch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/run_command.h"
#include "base/sha256.h"
#include "fetch.h"

void deb_pin_free(struct deb_pin *pin)
{
    free(pin->package);
    free(pin->arch);
    free(pin->version);
    free(pin->sha256);
    free(pin->filename);
    *pin = (struct deb_pin){0};
}

/* A field of the first paragraph of deb822 TEXT (apt-cache show's output,
 * a .dsc's body), or NULL: its first line, then each continuation line
 * without its leading blank, after a '\n' (Checksums-Sha256's value starts
 * with one). A clearsigned text's signature ends the paragraph. New string. */
static char *field(const char *text, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = text; p && *p && *p != '\n' && !str_starts(p, "-----BEGIN PGP");) {
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            struct buf b = BUF_INIT;
            buf_add(&b, v, strcspn(v, "\n"));
            for (const char *c = strchr(v, '\n'); c && (c[1] == ' ' || c[1] == '\t');
                 c = strchr(c + 1, '\n')) {
                const char *l = c + 2;
                buf_puts(&b, "\n");
                buf_add(&b, l, strcspn(l, "\n"));
            }
            return buf_detach(&b);
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return NULL;
}

/* What the host apt's answers follow from: its lists, its configuration
 * (sources, pins, APT_CONFIG), dpkg's status and architectures, and the
 * apt-cache that answers. TRILLIAN_APT_STATE (paths, colon-separated)
 * replaces the first four: an apt whose Dir::State::Lists is elsewhere, and
 * the tests' fake apt. New string, or NULL (answers not remembered)
 * without an apt-cache, or with APT_CONFIG but no TRILLIAN_APT_STATE. */
static char *apt_state(void)
{
    char *prog = run_find_program("apt-cache", NULL, 0);
    if (!prog)
        return NULL;
    const char *env = getenv("TRILLIAN_APT_STATE"), *conf = getenv("APT_CONFIG");
    char *own = env && env[0] ? xstrdup(env) : NULL;
    if (!own && conf && conf[0]) {
        /* APT_CONFIG may move the lists (Dir::State::Lists) where the
         * standard paths do not see them: ask apt every time */
        free(prog);
        return NULL;
    }
    struct strlist paths = {0};
    if (own) {
        char *save = NULL;
        for (char *p = strtok_r(own, ":", &save); p; p = strtok_r(NULL, ":", &save))
            strlist_push(&paths, p);
    } else {
        const char *std[] = {"/var/lib/apt/lists", "/etc/apt", "/var/lib/dpkg/status",
                             "/var/lib/dpkg/arch", conf && conf[0] ? conf : NULL};
        for (size_t i = 0; i < ARRAY_LEN(std) && std[i]; i++)
            strlist_push(&paths, std[i]);
    }
    strlist_push(&paths, prog);
    char *state = st_files_state((const char *const *)paths.v);
    strlist_free(&paths);
    free(own);
    free(prog);
    return state;
}

int debfetch_host_query(const char *const *argv, char **out)
{
    char *state = apt_state(), *question = run_argv_text(argv);
    *out = state ? st_recall(question, state) : NULL;
    int rc = 0;
    if (!*out) {
        rc = run_capture_quiet(argv, out);
        if (rc == 0 && state)
            st_remember(question, state, *out);
    }
    free(state);
    free(question);
    return rc;
}

static char *spec_of(const char *package, const char *arch, const char *version)
{
    return version ? xasprintf("%s:%s=%s", package, arch, version)
                   : xasprintf("%s:%s", package, arch);
}

/* apt-cache show with OPTS (NULL: the host's apt). */
static int resolve_with(const struct strlist *opts, const char *package, const char *arch,
                        const char *version, struct deb_pin *pin, char **err)
{
    *pin = (struct deb_pin){0};
    *err = NULL;
    char *spec = spec_of(package, arch, version);
    struct strlist argv = {0};
    strlist_push(&argv, "apt-cache");
    for (size_t i = 0; opts && i < opts->n; i++)
        strlist_push(&argv, opts->v[i]);
    const char *rest[] = {"show", "--no-all-versions", spec};
    for (size_t i = 0; i < ARRAY_LEN(rest); i++)
        strlist_push(&argv, rest[i]);
    char *text = NULL;
    int st = opts ? run_capture_quiet((const char *const *)argv.v, &text)
                  : debfetch_host_query((const char *const *)argv.v, &text);
    strlist_free(&argv);
    if (st < 0) {
        *err = xstrdup("could not run apt-cache (install apt, or give the file's path "
                       "in the recipe instead)");
    } else if (st != 0 || !(pin->package = field(text, "Package"))) {
        *err = xasprintf("apt knows no package %s (run apt-get update; for another "
                         "architecture add it with dpkg --add-architecture %s and its "
                         "archive to apt's sources, or give the file's path in the "
                         "recipe instead)", spec, arch);
    } else {
        pin->arch = xstrdup(arch);
        pin->version = field(text, "Version");
        pin->sha256 = field(text, "SHA256");
        pin->filename = field(text, "Filename");
        if (!pin->version || !pin->sha256 || !pin->filename)
            *err = xasprintf("apt-cache show %s gave no Version, SHA256 or Filename "
                             "(a virtual package?)", spec);
    }
    free(text);
    free(spec);
    if (*err) {
        deb_pin_free(pin);
        return -1;
    }
    return 0;
}

int debfetch_resolve(const char *package, const char *arch, const char *version,
                     struct deb_pin *pin, char **err)
{
    return resolve_with(NULL, package, arch, version, pin, err);
}

static bool hash_matches(const char *path, const char *want)
{
    char hex[65];
    return sha256_file(path, hex) == 0 && strcasecmp(hex, want) == 0;
}

/* The only *.deb that apt-get download left in DIR, or NULL. */
static char *find_deb(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char *found = NULL;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (str_ends(de->d_name, ".deb") && !found)
            found = path_join(dir, de->d_name);
    closedir(d);
    return found;
}

static char *get_with(const struct stage_ctx *cx, const struct strlist *opts,
                      const struct deb_pin *pin, const char *setting)
{
    char *dir = path_join(cx->cache_dir, "downloads/apt");
    char *cached = path_join(dir, path_basename(pin->filename));
    char *dl = NULL, *got = NULL, *tmp = NULL;
    if (path_exists(cached)) {
        if (hash_matches(cached, pin->sha256)) {
            cx_log(cx, "using %s (sha256 matches the archive's)", cached);
            free(dir);
            return cached;
        }
        cx_log(cx, "%s does not match sha256 %s: downloading it again", cached, pin->sha256);
    }
    if (mkdir_p(dir, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s (check the cache directory's permissions)", dir,
                strerror(errno));
        goto fail;
    }
    dl = xasprintf("%s/apt-download-%s", cx->work, pin->package);
    rm_rf(dl);
    if (mkdir_p(dl, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", dl, strerror(errno));
        goto fail;
    }
    char *spec = spec_of(pin->package, pin->arch, pin->version);
    struct strlist argv = {0};
    strlist_push(&argv, "apt-get");
    for (size_t i = 0; opts && i < opts->n; i++)
        strlist_push(&argv, opts->v[i]);
    strlist_push(&argv, "download");
    strlist_push(&argv, "-q");
    strlist_push_owned(&argv, spec);
    int st = cx_run_in(cx, dl, NULL, (const char *const *)argv.v);
    strlist_free(&argv);
    got = st == 0 ? find_deb(dl) : NULL;
    if (!got) {
        cx_fail(cx, "apt-get download of %s %s failed (%s: check that Debian's archive is "
                "reachable and apt-get update has run, or set %s to a file)", pin->package,
                pin->version, setting, setting);
        goto fail;
    }
    if (!hash_matches(got, pin->sha256)) {
        cx_fail(cx, "%s does not match the archive's sha256 %s (%s: a broken mirror or "
                "proxy? run apt-get update and retry)", got, pin->sha256, setting);
        goto fail;
    }
    /* Copy beside the cache name, then rename: readers never see half. */
    tmp = xasprintf("%s.tmp.%ld", cached, (long)getpid());
    if (copy_file(got, tmp) < 0 || rename(tmp, cached) < 0) {
        cx_fail(cx, "cannot store %s: %s", cached, strerror(errno));
        unlink(tmp);
        goto fail;
    }
    free(tmp);
    free(got);
    rm_rf(dl);
    free(dl);
    free(dir);
    return cached;
fail:
    if (dl)
        rm_rf(dl);
    free(tmp);
    free(got);
    free(dl);
    free(dir);
    free(cached);
    return NULL;
}

char *debfetch_get(const struct stage_ctx *cx, const struct deb_pin *pin, const char *setting)
{
    return get_with(cx, NULL, pin, setting);
}

/* ---- a private apt for one archive -------------------------------------- */

void debfetch_apt_free(struct debfetch_apt *apt)
{
    free(apt->dir);
    free(apt->arch);
    free(apt->rkey);
    free(apt->mirror);
    free(apt->suite);
    strlist_free(&apt->opts);
    *apt = (struct debfetch_apt){0};
}

static void apt_opt(struct debfetch_apt *apt, const char *name, const char *value)
{
    strlist_push(&apt->opts, "-o");
    strlist_pushf(&apt->opts, "%s=%s", name, value);
}

/* The stage log's text from byte OFFSET on (stdout is the log in a stage),
 * new string; "" when it cannot be read. */
static char *log_since(off_t offset)
{
    fflush(stdout);
    fflush(stderr);
    char *data = NULL;
    size_t len = 0;
    if (read_file("/proc/self/fd/1", &data, &len) != 0)
        return xstrdup("");
    char *r = xstrdup((size_t)offset <= len ? data + offset : "");
    free(data);
    return r;
}

static off_t log_offset(void)
{
    fflush(stdout);
    fflush(stderr);
    off_t o = lseek(STDOUT_FILENO, 0, SEEK_END);
    return o < 0 ? 0 : o;
}

/* For a file: mirror, its directory (new string); NULL for other URLs. */
static char *file_mirror_dir(const char *mirror)
{
    if (!str_starts(mirror, "file:"))
        return NULL;
    const char *p = mirror + 5;
    if (str_starts(p, "//"))
        p = strchr(p + 2, '/');
    return p ? xstrdup(p) : NULL;
}

/* Explains a failed (or incomplete) apt-get update from its messages. */
static int explain_update(const struct stage_ctx *cx, const struct debfetch_archive *a,
                          const char *msgs)
{
    /* "packages.busybox" + ".keyring"; "kernel.debian_" + "keyring" */
    char *k = xasprintf("%s%s", a->rkey, str_ends(a->rkey, "_") ? "" : ".");
    char *mdir = file_mirror_dir(a->mirror);
    int rc;
    if (strstr(msgs, "NO_PUBKEY") || strstr(msgs, "is not signed") ||
        strstr(msgs, "BADSIG") || strstr(msgs, "EXPKEYSIG") ||
        strstr(msgs, "signatures were invalid") || strstr(msgs, "signatures couldn't be verified"))
        rc = cx_fail(cx, "%skeyring: the Release file of %s at %s is not signed by a key in "
                     "%s (apt refused it); set %skeyring to the archive's keyring "
                     "(/usr/share/keyrings/debian-archive-keyring.gpg for Debian, "
                     "debian-ports-archive-keyring.gpg for ports such as ia64)",
                     k, a->suite, a->mirror, a->keyring, k);
    else if (mdir && !is_dir(mdir))
        rc = cx_fail(cx, "%smirror: %s is not a directory (no such archive); fix the path "
                     "in %smirror", k, a->mirror, k);
    else if (strstr(msgs, "does not have a Release file") || strstr(msgs, "404"))
        rc = cx_fail(cx, "%ssuite: %s has no suite '%s' (no dists/%s/InRelease or Release "
                     "there); set %ssuite to a suite the mirror carries, or fix %smirror",
                     k, a->mirror, a->suite, a->suite, k, k);
    else if (strstr(msgs, "doesn't support architecture"))
        rc = cx_fail(cx, "%smirror: %s %s has no %s packages; use a mirror that carries "
                     "%s (for ia64: debian-ports or a snapshot of it)", k, a->mirror,
                     a->suite, a->arch, a->arch);
    else if (strstr(msgs, "Could not connect") || strstr(msgs, "Connection refused") ||
             strstr(msgs, "Could not resolve") || strstr(msgs, "Temporary failure resolving") ||
             strstr(msgs, "timed out") || strstr(msgs, "Failed to fetch"))
        rc = cx_fail(cx, "%smirror: %s does not answer (%s); check the URL in %smirror "
                     "and that this host can reach it (a proxy: set http_proxy)", k, a->mirror,
                     strstr(msgs, "Connection refused") ? "connection refused"
                     : strstr(msgs, "resolv") ? "host name does not resolve"
                     : "see apt's messages above", k);
    else if (strstr(msgs, "Unable to find expected entry") || strstr(msgs, "Skipping acquire"))
        rc = cx_fail(cx, "%scomponents: %s %s lacks one of the components for %s; list "
                     "components its Release file names (usually main)", k, a->mirror,
                     a->suite, a->arch);
    else
        rc = cx_fail(cx, "apt-get update of %s %s failed (see its messages above); check "
                     "%smirror, %ssuite and %skeyring", a->mirror, a->suite, k, k, k);
    free(mdir);
    free(k);
    return rc;
}

int debfetch_apt_open(const struct stage_ctx *cx, const struct debfetch_archive *a,
                      const char *dir, struct debfetch_apt *apt)
{
    *apt = (struct debfetch_apt){0};
    apt->dir = xstrdup(dir);
    apt->arch = xstrdup(a->arch);
    apt->rkey = xstrdup(a->rkey);
    apt->mirror = xstrdup(a->mirror);
    apt->suite = xstrdup(a->suite);
    const char *sub[] = {"lists/partial", "cache/archives/partial", "sources.list.d",
                         "preferences.d"};
    for (size_t i = 0; i < ARRAY_LEN(sub); i++) {
        char *d = path_join(dir, sub[i]);
        int r = mkdir_p(d, 0755);
        free(d);
        if (r < 0)
            return cx_fail(cx, "cannot create %s/%s: %s", dir, sub[i], strerror(errno));
    }
    struct buf b = BUF_INIT;
    buf_printf(&b, "# Trillian's private apt for %s\n", a->rkey);
    {
        /* source packages are arch-independent: no arch= on deb-src */
        if (a->sources)
            buf_printf(&b, "deb-src [signed-by=%s] %s %s", a->keyring, a->mirror, a->suite);
        else
            buf_printf(&b, "deb [arch=%s signed-by=%s] %s %s", a->arch, a->keyring, a->mirror,
                       a->suite);
        for (size_t i = 0; a->components && i < a->components->n; i++)
            buf_printf(&b, " %s", a->components->v[i]);
        if (!a->components || !a->components->n)
            buf_puts(&b, " main");
        buf_puts(&b, "\n");
    }
    char *list = path_join(dir, "sources.list");
    char *status = path_join(dir, "status");
    int werr = write_file_atomic(list, b.p, b.n, 0644) < 0 ||
               write_file_atomic(status, "", 0, 0644) < 0;
    buf_free(&b);
    if (werr) {
        int rc = cx_fail(cx, "cannot write %s: %s", list, strerror(errno));
        free(list);
        free(status);
        return rc;
    }
    char *parts = path_join(dir, "sources.list.d"), *prefs = path_join(dir, "preferences.d");
    char *prefsfile = path_join(dir, "preferences"), *lists = path_join(dir, "lists");
    char *cache = path_join(dir, "cache");
    apt_opt(apt, "Dir::Etc::sourcelist", list);
    apt_opt(apt, "Dir::Etc::sourceparts", parts);
    apt_opt(apt, "Dir::Etc::preferences", prefsfile);
    apt_opt(apt, "Dir::Etc::preferencesparts", prefs);
    apt_opt(apt, "Dir::State::Lists", lists);
    apt_opt(apt, "Dir::State::status", status);
    apt_opt(apt, "Dir::Cache", cache);
    apt_opt(apt, "Debug::NoLocking", "1");
    apt_opt(apt, "APT::Architecture", a->arch);
    apt_opt(apt, "APT::Architectures", a->arch);
    apt_opt(apt, "Acquire::Languages", "none");
    /* as root apt downloads as _apt, which cannot write a private dir */
    if (geteuid() == 0)
        apt_opt(apt, "APT::Sandbox::User", "root");
    free(list);
    free(status);
    free(parts);
    free(prefs);
    free(prefsfile);
    free(lists);
    free(cache);

    struct strlist argv = {0};
    strlist_push(&argv, "apt-get");
    for (size_t i = 0; i < apt->opts.n; i++)
        strlist_push(&argv, apt->opts.v[i]);
    strlist_push(&argv, "update");
    off_t off = log_offset();
    int st = cx_run(cx, (const char *const *)argv.v);
    strlist_free(&argv);
    char *msgs = log_since(off);
    int rc = 0;
    /* apt-get update exits 0 after some failures (an architecture the
     * Release file does not list is a notice): look at what it said */
    if (st != 0 || strstr(msgs, "\nE: ") || str_starts(msgs, "E: ") ||
        strstr(msgs, "doesn't support architecture") || strstr(msgs, "\nW: GPG error"))
        rc = explain_update(cx, a, msgs);
    free(msgs);
    return rc;
}

int debfetch_apt_resolve(const struct debfetch_apt *apt, const char *package,
                         const char *version, struct deb_pin *pin, char **err)
{
    int rc = resolve_with(&apt->opts, package, apt->arch, version, pin, err);
    if (rc < 0) {
        free(*err);
        *err = version ? xasprintf("%s (%s) has no %s package %s version %s", apt->mirror,
                                   apt->suite, apt->arch, package, version)
                       : xasprintf("%s (%s) has no %s package %s", apt->mirror, apt->suite,
                                   apt->arch, package);
    }
    return rc;
}

char *debfetch_apt_get(const struct stage_ctx *cx, const struct debfetch_apt *apt,
                       const struct deb_pin *pin, const char *setting)
{
    return get_with(cx, &apt->opts, pin, setting);
}

static void src_files_free(struct dsc_file *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].name);
        free(f[i].sha256);
    }
    free(f);
}

char *debfetch_apt_source(const struct stage_ctx *cx, const struct debfetch_apt *apt,
                          const char *package, const char *version, const char *setting,
                          char **version_out)
{
    *version_out = NULL;
    char *spec = version ? xasprintf("%s=%s", package, version) : xstrdup(package);
    struct strlist argv = {0};
    strlist_push(&argv, "apt-get");
    for (size_t i = 0; i < apt->opts.n; i++)
        strlist_push(&argv, apt->opts.v[i]);
    strlist_push(&argv, "source");
    strlist_push(&argv, "-q");
    size_t verb = argv.n;
    strlist_push(&argv, "--print-uris");
    strlist_push(&argv, spec);
    char *text = NULL;
    int st = cx_capture(cx, (const char *const *)argv.v, &text);
    /* 'URI' NAME SIZE SHA256:HEX lines, from the signed Sources index */
    struct dsc_file *files = NULL;
    size_t n = 0;
    char *dsc = NULL, *dir = path_join(cx->cache_dir, "downloads/sources");
    char *tmp = NULL;
    for (char *l = text; st == 0 && l && *l;) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        char uri[4096], name[1024], hash[256];
        unsigned long long size;
        if (l[0] == '\'' && sscanf(l, "%4095s %1023s %llu %255s", uri, name, &size, hash) == 4 &&
            str_starts(hash, "SHA256:") && !strchr(name, '/')) {
            files = xrealloc(files, (n + 1) * sizeof *files);
            files[n++] = (struct dsc_file){xstrdup(name), xstrdup(hash + 7)};
            if (str_ends(name, ".dsc") && !dsc)
                dsc = path_join(dir, name);
        }
        l = nl ? nl + 1 : NULL;
    }
    if (st != 0 || !dsc) {
        cx_fail(cx, "%s: %s (%s) has no source package %s%s%s (%s)", setting, apt->mirror,
                apt->suite, package, version ? " version " : "", version ? version : "",
                st != 0 ? "apt-get source --print-uris failed, see the log"
                        : "no .dsc with a SHA256 in the Sources index");
        goto fail;
    }
    if (mkdir_p(dir, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", dir, strerror(errno));
        goto fail;
    }
    bool missing = false;
    for (size_t i = 0; i < n; i++) {
        char *p = path_join(dir, files[i].name);
        if (!hash_matches(p, files[i].sha256))
            missing = true;
        free(p);
    }
    if (missing) {
        tmp = xasprintf("%s/apt-source-%s", cx->work, package);
        rm_rf(tmp);
        if (mkdir_p(tmp, 0755) < 0) {
            cx_fail(cx, "cannot create %s: %s", tmp, strerror(errno));
            goto fail;
        }
        free(argv.v[verb]);
        argv.v[verb] = xstrdup("--download-only");
        if (cx_run_in(cx, tmp, NULL, (const char *const *)argv.v) != 0) {
            cx_fail(cx, "%s: apt-get source --download-only %s failed (see the log; check "
                    "that %s is reachable)", setting, spec, apt->mirror);
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            char *got = path_join(tmp, files[i].name);
            char *dst = path_join(dir, files[i].name);
            char *part = xasprintf("%s.tmp.%ld", dst, (long)getpid());
            int bad = !hash_matches(got, files[i].sha256);
            if (bad)
                cx_fail(cx, "%s: %s does not match the Sources index's sha256 %s (a broken "
                        "mirror or proxy?)", setting, got, files[i].sha256);
            else if (copy_file(got, part) < 0 || rename(part, dst) < 0)
                bad = cx_fail(cx, "cannot store %s: %s", dst, strerror(errno));
            unlink(part);
            free(part);
            free(got);
            free(dst);
            if (bad)
                goto fail;
        }
        rm_rf(tmp);
    } else {
        cx_log(cx, "using %s (the files' sha256 match the Sources index)", dsc);
    }
    /* the version from the .dsc file name: NAME_VERSION.dsc (no epoch) */
    const char *b = path_basename(dsc);
    const char *us = strchr(b, '_');
    *version_out = us ? xstrndup(us + 1, strlen(us + 1) - 4) : xstrdup("?");
    src_files_free(files, n);
    strlist_free(&argv);
    free(text);
    free(spec);
    free(dir);
    free(tmp);
    return dsc;
fail:
    if (tmp)
        rm_rf(tmp);
    free(tmp);
    src_files_free(files, n);
    strlist_free(&argv);
    free(text);
    free(spec);
    free(dir);
    free(dsc);
    return NULL;
}

char *debfetch_host_arch(const struct stage_ctx *cx)
{
    const char *argv[] = {"dpkg", "--print-architecture", NULL};
    char *out = NULL;
    if (cx_capture(cx, argv, &out) != 0 || !out || !out[0]) {
        free(out);
        return xstrdup("amd64");
    }
    out[strcspn(out, "\n")] = 0;
    return out;
}

char *debfetch_source(const struct stage_ctx *cx, const char *mirror, const char *suite,
                      const char *keyring, const char *rkey, const char *package,
                      const char *version, const char *setting, char **version_out)
{
    char *arch = debfetch_host_arch(cx), *aptdir = path_join(cx->work, "apt");
    struct debfetch_archive a = {
        .mirror = mirror,
        .suite = suite,
        .keyring = keyring,
        .arch = arch,
        .components = NULL, /* main */
        .sources = true,
        .rkey = rkey,
    };
    struct debfetch_apt apt = {0};
    char *dsc = NULL;
    if (debfetch_apt_open(cx, &a, aptdir, &apt) == 0)
        dsc = debfetch_apt_source(cx, &apt, package, version, setting, version_out);
    debfetch_apt_free(&apt);
    free(arch);
    free(aptdir);
    return dsc;
}

/* ---- a source package by its .dsc ---------------------------------------- */

void dsc_info_free(struct dsc_info *d)
{
    free(d->source);
    free(d->version);
    free(d->format);
    src_files_free(d->files, d->n);
    *d = (struct dsc_info){0};
}

/* A file a .dsc may name: a plain name in its directory (no '/', no leading
 * '.': nothing outside it, nothing hidden). */
static bool plain_name(const char *n)
{
    return n[0] && n[0] != '.' && !strchr(n, '/');
}

int debfetch_dsc_parse(const char *text, struct dsc_info *out, char **err)
{
    *out = (struct dsc_info){0};
    *err = NULL;
    /* a clearsigned .dsc: the paragraph starts after the armor's header
     * lines and the blank line that ends them */
    if (str_starts(text, "-----BEGIN PGP SIGNED MESSAGE-----")) {
        const char *b = strstr(text, "\n\n");
        text = b ? b + 2 : "";
    }
    char *sums = field(text, "Checksums-Sha256"), *md5 = field(text, "Files");
    out->source = field(text, "Source");
    out->version = field(text, "Version");
    out->format = field(text, "Format");
    if (!out->source || !out->version || !*out->source || !*out->version)
        *err = xstrdup("no Source or Version field (not a source package's .dsc)");
    else if (!sums)
        *err = xstrdup("no Checksums-Sha256 field (a .dsc older than dpkg 1.14.17 has md5 sums "
                       "alone, which pin nothing: rebuild it with dpkg-source -b)");
    char *save = NULL;
    for (char *l = *err ? NULL : strtok_r(sums, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char sha[80], name[1024], extra[2];
        unsigned long long size;
        int k = sscanf(l, "%79s %llu %1023s %1s", sha, &size, name, extra);
        if (k == EOF)
            continue; /* the field's empty first line */
        if (k != 3 || !fetch_valid_sha256(sha) || !plain_name(name)) {
            *err = xasprintf("Checksums-Sha256 line '%s' is not SHA256 SIZE NAME (a file name "
                             "beside the .dsc)", l);
            break;
        }
        for (size_t i = 0; i < out->n && !*err; i++)
            if (!strcmp(out->files[i].name, name))
                *err = xasprintf("Checksums-Sha256 lists %s twice", name);
        if (*err)
            break;
        out->files = xrealloc(out->files, (out->n + 1) * sizeof *out->files);
        out->files[out->n++] = (struct dsc_file){xstrdup(name), xstrdup(sha)};
    }
    if (!*err && !out->n)
        *err = xstrdup("its Checksums-Sha256 lists no file");
    save = NULL;
    for (char *l = *err || !md5 ? NULL : strtok_r(md5, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        char sum[80], name[1024];
        unsigned long long size;
        if (sscanf(l, "%79s %llu %1023s", sum, &size, name) != 3)
            continue;
        bool known = false;
        for (size_t i = 0; i < out->n && !known; i++)
            known = !strcmp(out->files[i].name, name);
        if (!known) {
            *err = xasprintf("Files lists %s, which Checksums-Sha256 does not: an md5 alone "
                             "pins nothing", name);
            break;
        }
    }
    free(sums);
    free(md5);
    if (*err) {
        dsc_info_free(out);
        return -1;
    }
    return 0;
}

int debfetch_dsc_files(const struct stage_ctx *cx, const char *dsc, const char *url,
                       const char *where, struct dsc_info *info, struct strlist *paths)
{
    char *text = NULL, *err = NULL;
    *info = (struct dsc_info){0};
    if (read_file(dsc, &text, NULL) < 0)
        return cx_fail(cx, "%s: cannot read %s: %s", where, dsc, strerror(errno));
    int rc = 0;
    if (debfetch_dsc_parse(text, info, &err) < 0)
        rc = cx_fail(cx, "%s: %s: %s", where, url, err);
    free(text);
    free(err);
    if (rc)
        return rc;
    /* its files are beside it, in the pool as in a mirror */
    const char *base = path_basename(url);
    for (size_t i = 0; !rc && i < info->n; i++) {
        char *furl = xasprintf("%.*s%s", (int)(base - url), url, info->files[i].name);
        char *fwhere = xasprintf("%s: %s lists %s", where, base, info->files[i].name);
        char *got = fetch_pinned(cx, furl, NULL, info->files[i].sha256, fwhere);
        if (got)
            strlist_push_owned(paths, got);
        else
            rc = 1; /* fetch_pinned named the file, both hashes and what to do */
        free(fwhere);
        free(furl);
    }
    if (rc)
        dsc_info_free(info);
    return rc;
}

char *debfetch_dsc_get(const struct stage_ctx *cx, const char *url, const char *sha256,
                       const char *where, const char *where_sha, const char *dir,
                       struct dsc_info *info)
{
    *info = (struct dsc_info){0};
    char *got = fetch_pinned(cx, url, NULL, sha256, where_sha);
    struct strlist paths = {0};
    if (!got || debfetch_dsc_files(cx, got, url, where, info, &paths)) {
        free(got);
        strlist_free(&paths);
        return NULL;
    }
    /* links, not copies: the cache's files, under the names the .dsc gives */
    char *dsc = path_join(dir, path_basename(url));
    int rc = 0;
    rm_rf(dir);
    if (mkdir_p(dir, 0755) < 0 || symlink(got, dsc) < 0)
        rc = cx_fail(cx, "cannot link %s as %s: %s", got, dsc, strerror(errno));
    for (size_t i = 0; !rc && i < info->n; i++) {
        char *link = path_join(dir, info->files[i].name);
        if (symlink(paths.v[i], link) < 0)
            rc = cx_fail(cx, "cannot link %s as %s: %s", paths.v[i], link, strerror(errno));
        free(link);
    }
    free(got);
    strlist_free(&paths);
    if (rc) {
        dsc_info_free(info);
        free(dsc);
        return NULL;
    }
    cx_log(cx, "%s: %s %s (%s), %zu files", path_basename(url), info->source, info->version,
           info->format ? info->format : "1.0", info->n);
    return dsc;
}
