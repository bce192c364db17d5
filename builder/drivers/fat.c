/* FAT images with dosfstools and mtools; see fat.h. */
#define _GNU_SOURCE
#include "fat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/run_command.h"

#define MIB (1024LL * 1024)

void fat_geometry(long long mib, int *bits, int *cluster_sectors)
{
    long long sectors = mib * MIB / 512;
    if (mib < 4) {
        *bits = 12;
        *cluster_sectors = 0;
    } else if (mib < 64) {
        *bits = 16;
        *cluster_sectors = 1;
        while (sectors / *cluster_sectors > 65000)
            *cluster_sectors *= 2;
    } else {
        *bits = 32;
        *cluster_sectors = 1;
        while (*cluster_sectors < 8 && sectors / (*cluster_sectors * 2) >= 66000)
            *cluster_sectors *= 2;
    }
}

/* SRC's files (sorted) and the directories holding them (sorted, so
 * parents first), as paths relative to SRC. */
static int list_content(const char *src, struct strlist *files, struct strlist *dirs)
{
    if (list_tree(src, files) < 0)
        return -1;
    for (size_t i = 0; i < files->n; i++) {
        char *d = xstrdup(files->v[i]);
        for (char *s = strchr(d, '/'); s; s = strchr(s + 1, '/')) {
            *s = 0;
            if (!strlist_contains(dirs, d))
                strlist_push(dirs, d);
            *s = '/';
        }
        free(d);
    }
    strlist_sort(dirs);
    return 0;
}

long long fat_content_bytes(const char *src, long long *raw)
{
    struct strlist dirs = {0}, files = {0};
    list_content(src, &files, &dirs); /* what cannot be read is not counted */
    long long sum = (long long)dirs.n * 4096, bytes = 0;
    for (size_t i = 0; i < files.n; i++) {
        char *p = path_join(src, files.v[i]);
        struct stat sb;
        if (lstat(p, &sb) == 0) {
            bytes += sb.st_size;
            sum += (sb.st_size + 4095) / 4096 * 4096;
        }
        free(p);
    }
    strlist_free(&dirs);
    strlist_free(&files);
    if (raw)
        *raw = bytes;
    return sum;
}

/* mtools writes local times into FAT entries: UTC, whoever builds. */
static int run_env(const struct stage_ctx *cx, const char *const *argv)
{
    char *sde = xasprintf("SOURCE_DATE_EPOCH=%lld", cx->source_date_epoch);
    const char *env[] = {"TZ=UTC", "LC_ALL=C", "MTOOLS_SKIP_CHECK=1", sde, NULL};
    int rc = cx_run_in(cx, NULL, env, argv);
    free(sde);
    return rc;
}

/* A program's absolute path (sbin included, where mkfs.vfat and fsck.fat
 * are), else its name. New string. */
static char *program(const char *name)
{
    char *p = run_find_program(name, NULL, RUN_FIND_SBIN);
    return p ? p : xstrdup(name);
}

/* dosfstools 4.2 has --invariant (no time-derived fields); older ones
 * refuse the option. */
static bool mkfs_has_invariant(const struct stage_ctx *cx, const char *mkfs)
{
    const char *argv[] = {mkfs, "--version", NULL};
    char *out = NULL;
    cx_capture(cx, argv, &out); /* exits 1 after printing "mkfs.fat 4.2 (…)" */
    int major = 0, minor = 0;
    const char *p = out ? strstr(out, "mkfs.fat ") : NULL;
    bool yes = p && sscanf(p, "mkfs.fat %d.%d", &major, &minor) == 2 &&
               (major > 4 || (major == 4 && minor >= 2));
    free(out);
    return yes;
}

static int set_times(const struct stage_ctx *cx, const char *src, const struct strlist *l)
{
    struct timespec ts[2] = {{.tv_sec = cx->source_date_epoch},
                             {.tv_sec = cx->source_date_epoch}};
    for (size_t i = 0; i < l->n; i++) {
        char *p = path_join(src, l->v[i]);
        int e = utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW);
        free(p);
        if (e < 0)
            return cx_fail(cx, "cannot set the mtime of %s/%s: %s", src, l->v[i],
                           strerror(errno));
    }
    return 0;
}

static int make_fs(const struct stage_ctx *cx, const char *image, const struct fat_spec *s,
                   const char *mkfs)
{
    int fd = open(image, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, s->bytes) < 0) {
        cx_fail(cx, "cannot create %s: %s", image, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    close(fd);
    char bits[16], spc[16];
    snprintf(bits, sizeof bits, "%d", s->bits);
    snprintf(spc, sizeof spc, "%d", s->cluster_sectors);
    struct strlist a = {0};
    strlist_push(&a, mkfs);
    if (mkfs_has_invariant(cx, mkfs))
        strlist_push(&a, "--invariant");
    if (s->bits) {
        strlist_push(&a, "-F");
        strlist_push(&a, bits);
    }
    if (s->cluster_sectors) {
        strlist_push(&a, "-s");
        strlist_push(&a, spc);
    }
    strlist_push(&a, "-i");
    strlist_push(&a, s->volid);
    strlist_push(&a, "-n");
    strlist_push(&a, s->label);
    strlist_push(&a, image);
    int e = run_env(cx, (const char *const *)a.v);
    strlist_free(&a);
    if (e)
        return cx_fail(cx, "mkfs.vfat failed on a %lld KiB image for %s (see the log; %s)",
                       s->bytes / 1024, s->what, s->size_hint);
    return 0;
}

/* Directories (mmd) and files (mcopy -m) from SRC into IMAGE, in ORDER. */
static int copy_in(const struct stage_ctx *cx, const char *image, const struct fat_spec *s,
                   const char *src, const struct strlist *order)
{
    char *mmd = program("mmd"), *mcopy = program("mcopy");
    int rc = 0;
    for (size_t i = 0; i < order->n && rc == 0; i++) {
        char *from = path_join(src, order->v[i]);
        char *to = xasprintf("::/%s", order->v[i]);
        if (is_dir(from)) {
            const char *argv[] = {mmd, "-i", image, to, NULL};
            if (run_env(cx, argv))
                rc = cx_fail(cx, "mmd %s failed in %s (see the log)", order->v[i], s->what);
        } else {
            const char *argv[] = {mcopy, "-m", "-i", image, from, to, NULL};
            if (run_env(cx, argv))
                rc = cx_fail(cx, "mcopy of %s into %s (%lld MiB) failed: if the log says the "
                             "disk is full, it is too small: %s", order->v[i], s->what, s->bytes / MIB,
                             s->size_hint);
        }
        free(from);
        free(to);
    }
    free(mmd);
    free(mcopy);
    return rc;
}

int fat_image(const struct stage_ctx *cx, const char *image, const struct fat_spec *spec,
              const char *src, const struct strlist *order)
{
    struct strlist dirs = {0}, files = {0}, sorted = {0};
    char *mkfs = program("mkfs.vfat"), *fsck = program("fsck.fat");
    int rc = 1;
    if (list_content(src, &files, &dirs) < 0) {
        cx_fail(cx, "cannot list %s: %s", src, strerror(errno));
        goto out;
    }
    if (set_times(cx, src, &files) || set_times(cx, src, &dirs))
        goto out;
    if (!order) {
        for (size_t i = 0; i < dirs.n; i++)
            strlist_push(&sorted, dirs.v[i]);
        for (size_t i = 0; i < files.n; i++)
            strlist_push(&sorted, files.v[i]);
        order = &sorted;
    }
    if (make_fs(cx, image, spec, mkfs) || copy_in(cx, image, spec, src, order))
        goto out;
    const char *fargv[] = {fsck, "-n", image, NULL};
    if (run_env(cx, fargv) != 0) {
        cx_fail(cx, "fsck.fat -n finds errors in %s (see the log): a bug in Trillian or "
                "dosfstools/mtools", spec->what);
        goto out;
    }
    rc = 0;
out:
    strlist_free(&dirs);
    strlist_free(&files);
    strlist_free(&sorted);
    free(mkfs);
    free(fsck);
    return rc;
}
