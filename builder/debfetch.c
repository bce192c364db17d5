/* One Debian binary package, pinned at plan time and fetched at run time
 * (debfetch.h). */
#define _GNU_SOURCE
#include "debfetch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sha256.h"

extern char **environ;

void deb_pin_free(struct deb_pin *pin)
{
    free(pin->package);
    free(pin->arch);
    free(pin->version);
    free(pin->sha256);
    free(pin->filename);
    *pin = (struct deb_pin){0};
}

/* Runs argv with stdin and stderr on /dev/null, stdout captured. */
static int capture(const char *const *argv, char **out)
{
    *out = NULL;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        return -1;
    }
    struct buf b = {0};
    char tmp[8192];
    ssize_t n;
    while ((n = read(p[0], tmp, sizeof tmp)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            buf_add(&b, tmp, (size_t)n);
    close(p[0]);
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    *out = b.p ? b.p : xstrdup("");
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* A field of the first paragraph of apt-cache show output; new string. */
static char *field(const char *text, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = text; p && *p && *p != '\n';) {
        if (strncmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            return xstrndup(v, strcspn(v, "\n"));
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return NULL;
}

static char *spec_of(const char *package, const char *arch, const char *version)
{
    return version ? xasprintf("%s:%s=%s", package, arch, version)
                   : xasprintf("%s:%s", package, arch);
}

int debfetch_resolve(const char *package, const char *arch, const char *version,
                     struct deb_pin *pin, char **err)
{
    *pin = (struct deb_pin){0};
    *err = NULL;
    char *spec = spec_of(package, arch, version);
    const char *argv[] = {"apt-cache", "show", "--no-all-versions", spec, NULL};
    char *text = NULL;
    int st = capture(argv, &text);
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

char *debfetch_get(const struct stage_ctx *cx, const struct deb_pin *pin, const char *setting)
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
    const char *argv[] = {"apt-get", "download", "-q", spec, NULL};
    int st = cx_run_in(cx, dl, NULL, argv);
    free(spec);
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
