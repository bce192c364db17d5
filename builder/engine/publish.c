/* Publishing a stage's outputs into OUT (docs/engine.md, "Outputs"). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "publish.h"
#include "testhook.h"

/* OUT/.keys: "STAGE KEY" for every stage published into OUT, so a warm
 * rebuild can leave OUT alone instead of re-linking every file. */
bool publish_same(struct buf *pub, const char *outroot, const struct stage *st)
{
    if (!pub->n) { /* not read yet: it is at least "\n" once read */
        char *path = path_join(outroot, ".keys"), *data;
        if (read_file(path, &data, NULL) == 0) {
            buf_puts(pub, "\n");
            buf_puts(pub, data);
            free(data);
        } else {
            buf_puts(pub, "\n");
        }
        free(path);
    }
    char *line = xasprintf("\n%s %s\n", st->name, st->key);
    char *dir = path_join(outroot, st->name);
    bool same = strstr(pub->p, line) && is_dir(dir);
    free(dir);
    free(line);
    return same;
}

void publish_save_keys(const struct recipe *r, const char *outroot)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < r->nstages; i++)
        if (r->stages[i]->state == ST_DONE && !r->stages[i]->kind->uncached)
            buf_printf(&b, "%s %s\n", r->stages[i]->name, r->stages[i]->key);
    char *path = path_join(outroot, ".keys");
    write_file_atomic(path, b.p, b.n, 0644);
    free(path);
    buf_free(&b);
}

/* SRC's tree copied to DST one top-level output at a time, so that the
 * test hook's "publish" point falls inside the copy; stops at the first
 * failure (a full disk: no point in trying the rest). */
static int copy_outputs(const char *src, const char *dst)
{
    struct stat sb;
    struct strlist names = {0};
    if (lstat(src, &sb) < 0 || mkdir(dst, 0700) < 0 || dir_list(src, &names) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        char *s = path_join(src, names.v[i]), *t = path_join(dst, names.v[i]);
        rc = publish_tree(s, t);
        if (rc == 0 && i == 0)
            rc = test_hook("publish");
        free(s);
        free(t);
    }
    strlist_free(&names);
    if (rc == 0 && chmod(dst, sb.st_mode & 07777) < 0)
        rc = -1;
    return rc;
}

/* Drops STAGE's line from OUT/.keys before OUT/STAGE changes. .keys is
 * written whole only at the build's end, and a kill before then must not
 * leave it naming the old key beside the new files: a copy is checked by
 * names, sizes and mtimes, which two keys' outputs may share. */
static int keys_forget(const char *outroot, const char *stage)
{
    char *path = path_join(outroot, ".keys"), *data;
    if (read_file(path, &data, NULL) < 0) {
        free(path);
        return 0; /* none: nothing to forget */
    }
    struct buf b = BUF_INIT;
    size_t n = strlen(stage);
    bool found = false;
    for (char *line = data; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (strncmp(line, stage, n) == 0 && line[n] == ' ')
            found = true;
        else
            buf_add(&b, line, len);
        line += len;
    }
    int rc = found ? write_file_atomic(path, b.p, b.n, 0644) : 0;
    buf_free(&b);
    free(data);
    free(path);
    return rc;
}

/* Puts the tree TMP in DST's place in one step (RENAME_EXCHANGE), so a kill
 * at any moment leaves DST whole, old or new; the old one is then at TMP.
 * Where the file system cannot exchange, the old one is renamed aside
 * first: a kill between leaves no DST, never part of one. */
int publish_swap_in(const char *tmp, const char *dst)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dst, RENAME_EXCHANGE) == 0)
        return 0;
    if (errno == ENOENT) /* nothing published there yet */
        return rename(tmp, dst);
    char *old = xasprintf("%s.old", tmp);
    rm_rf(old);
    int rc = rename(dst, old) < 0 && errno != ENOENT ? -1 : rename(tmp, dst);
    int e = errno;
    bool kept = false;
    if (rc < 0 && access(old, F_OK) == 0 && rename(old, dst) < 0) {
        /* the old tree could not go back: leave it where it is, never
         * remove the only copy */
        fprintf(stderr, "trillian: %s: the previous outputs are in %s\n", dst, old);
        kept = true;
    }
    if (!kept)
        rm_rf(old);
    free(old);
    errno = e;
    return rc;
}

/* Publishes a stage's outputs as OUT/STAGE: copies (reflinks where the file
 * system can), never the cache's own inodes, which a write into OUT (a disk
 * image booted without snapshot=on) would change for every later build.
 * The copy is made in OUT/.STAGE.tmp, then swapped in whole. */
int publish_stage(const char *outroot, const struct stage *st, const char *src)
{
    char *dst = path_join(outroot, st->name);
    char *tmp = xasprintf("%s/.%s.tmp", outroot, st->name);
    rm_rf(tmp); /* a killed build's copy, or the old tree it swapped out */
    int rc = copy_outputs(src, tmp);
    if (rc == 0)
        rc = keys_forget(outroot, st->name);
    if (rc == 0)
        rc = publish_swap_in(tmp, dst);
    if (rc == 0)
        test_hook("published");
    int e = errno;
    rm_rf(tmp); /* a failed copy, or the old tree */
    errno = e;
    free(tmp);
    free(dst);
    return rc;
}
