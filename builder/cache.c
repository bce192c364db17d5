/* The content-addressed cache. Layout under the cache root:
 *   objects/KEY/out/   a stage's outputs; objects/KEY/log its log
 *   objects/KEY/used   touched on every use, for `clean --cache --older-than`
 *   tmp/KEY.PID/       a stage being built; renamed to objects/KEY when done
 *   keep/RECIPE/STAGE/ persistent build directories (incremental kernels)
 *   last/RECIPE/STAGE  the input list of the last build, for `plan`
 * An entry appears only by rename(2), so a killed build leaves no half entry. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

const char *cache_default_dir(void)
{
    static char *dir;
    if (dir)
        return dir;
    const char *env = getenv("TRILLIAN_CACHE");
    if (env && *env)
        return dir = xstrdup(env);
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg)
        return dir = path_join(xdg, "trillian");
    const char *home = getenv("HOME");
    return dir = xasprintf("%s/.cache/trillian", home && *home ? home : "/tmp");
}

char *cache_entry(const char *cache, const char *key)
{
    return xasprintf("%s/objects/%s", cache, key);
}

bool cache_has(const char *cache, const char *key)
{
    char *e = xasprintf("%s/objects/%s/out", cache, key);
    bool ok = is_dir(e);
    free(e);
    return ok;
}

void cache_touch(const char *cache, const char *key)
{
    char *u = xasprintf("%s/objects/%s/used", cache, key);
    int fd = open(u, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        futimens(fd, NULL);
        close(fd);
    }
    free(u);
}

char *cache_keep_dir(const char *cache, const char *recipe, const char *stage)
{
    return xasprintf("%s/keep/%s/%s", cache, recipe, stage);
}

/* Cache files are read-only so a stray write into OUT (hard links) fails. */
static void make_readonly(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) < 0 || S_ISLNK(sb.st_mode))
        return;
    if (S_ISDIR(sb.st_mode)) {
        struct strlist names = {0};
        dir_list(path, &names);
        for (size_t i = 0; i < names.n; i++) {
            char *sub = path_join(path, names.v[i]);
            make_readonly(sub);
            free(sub);
        }
        strlist_free(&names);
        return;
    }
    chmod(path, sb.st_mode & ~(mode_t)0222);
}

int cache_commit(const char *cache, const char *tmp, const char *key)
{
    char *objects = path_join(cache, "objects");
    char *dest = cache_entry(cache, key);
    int rc = mkdir_p(objects, 0755);
    char *out = path_join(tmp, "out");
    make_readonly(out);
    free(out);
    if (rc == 0 && rename(tmp, dest) < 0) {
        if (errno == EEXIST || errno == ENOTEMPTY) {
            /* --force: replace the old entry */
            char *old = xasprintf("%s.old", tmp);
            rc = rename(dest, old);
            if (rc == 0)
                rc = rename(tmp, dest);
            rm_rf(old);
            free(old);
        } else {
            rc = -1;
        }
    }
    if (rc == 0)
        cache_touch(cache, key);
    free(objects);
    free(dest);
    return rc;
}

void cache_sweep_tmp(const char *cache)
{
    char *tmp = path_join(cache, "tmp");
    DIR *d = opendir(tmp);
    if (!d) {
        free(tmp);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || e->d_name[0] == '.')
            continue;
        pid_t pid = (pid_t)atol(dot + 1);
        if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM))
            continue; /* its build is still running */
        char *p = path_join(tmp, e->d_name);
        rm_rf(p);
        free(p);
    }
    closedir(d);
    free(tmp);
}

int cache_prune(const char *cache, double older_than_days, bool all)
{
    int removed = 0;
    char *objects = path_join(cache, "objects");
    DIR *d = opendir(objects);
    time_t now = time(NULL);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char *entry = path_join(objects, e->d_name);
            char *used = path_join(entry, "used");
            struct stat sb;
            bool old = all;
            if (!all) {
                if (stat(used, &sb) < 0 && stat(entry, &sb) < 0)
                    old = true;
                else
                    old = difftime(now, sb.st_mtime) > older_than_days * 86400.0;
            }
            if (old && rm_rf(entry) == 0)
                removed++;
            free(used);
            free(entry);
        }
        closedir(d);
    }
    free(objects);
    if (all) {
        static const char *const extra[] = {"tmp", "keep", "last", "hashes"};
        for (size_t i = 0; i < ARRAY_LEN(extra); i++) {
            char *p = path_join(cache, extra[i]);
            rm_rf(p);
            free(p);
        }
    } else {
        cache_sweep_tmp(cache);
    }
    return removed;
}

static char *last_path(const char *cache, const struct stage *st)
{
    return xasprintf("%s/last/%s/%s", cache, st->recipe->name, st->name);
}

void cache_save_inputs(const char *cache, const struct stage *st)
{
    char *p = last_path(cache, st);
    char *dir = path_dirname(p);
    mkdir_p(dir, 0755);
    struct buf b = {0};
    buf_printf(&b, "key %s\n", st->key);
    for (size_t i = 0; i < st->ninputs; i++)
        buf_printf(&b, "%s %s\n", st->inputs[i].hash, st->inputs[i].label);
    write_file_atomic(p, b.p, b.n, 0644);
    buf_free(&b);
    free(dir);
    free(p);
}

char *cache_load_inputs(const char *cache, const struct stage *st)
{
    char *p = last_path(cache, st);
    char *data = NULL;
    if (read_file(p, &data, NULL) < 0)
        data = NULL;
    free(p);
    return data;
}
