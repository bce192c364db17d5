/* Answers remembered across builds (stage.h: st_files_state, st_recall,
 * st_remember). A plan-time question whose answer costs a program run and
 * follows from a few files (apt-cache show, from apt's lists) is asked once;
 * CACHE/answers/SHA256(QUESTION) keeps
 *     STATE\nQUESTION\nANSWER
 * and is given back while the asker's STATE, a digest of those files'
 * identities, is the same. Written whole and renamed (write_file_atomic), so
 * builds sharing a cache never read half an answer. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "base/sha256.h"

static char *answers_dir;

void answers_set_cache_dir(const char *cache_dir)
{
    free(answers_dir);
    answers_dir = path_join(cache_dir, "answers");
}

/* One line per entry below PATH (itself first): type, name, size, mtime,
 * ctime and inode. Any write changes mtime or ctime; a file renamed in (apt
 * replaces its lists so) has a new inode. Contents are never read. */
static void identity_into(const char *path, const char *name, struct sha256 *s)
{
    struct stat sb = {0};
    struct buf b = BUF_INIT;
    if (lstat(path, &sb) < 0) {
        buf_printf(&b, "- %s\n", name);
    } else {
        buf_printf(&b, "%o %s %lld %lld.%09ld %lld.%09ld %llu\n", (unsigned)(sb.st_mode & S_IFMT),
                   name, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec,
                   (long long)sb.st_ctim.tv_sec, sb.st_ctim.tv_nsec,
                   (unsigned long long)sb.st_ino);
        struct stat tb;
        if (S_ISLNK(sb.st_mode) && stat(path, &tb) == 0) /* what apt reads through it */
            buf_printf(&b, "-> %lld %lld.%09ld %lld.%09ld %llu\n", (long long)tb.st_size,
                       (long long)tb.st_mtim.tv_sec, tb.st_mtim.tv_nsec,
                       (long long)tb.st_ctim.tv_sec, tb.st_ctim.tv_nsec,
                       (unsigned long long)tb.st_ino);
    }
    sha256_update(s, b.p, b.n);
    buf_free(&b);
    struct strlist names = {0};
    if (S_ISDIR(sb.st_mode) && dir_list(path, &names) == 0)
        for (size_t i = 0; i < names.n; i++) {
            char *p = path_join(path, names.v[i]), *n = xasprintf("%s/%s", name, names.v[i]);
            identity_into(p, n, s);
            free(p);
            free(n);
        }
    strlist_free(&names);
}

char *st_files_state(const char *const *paths)
{
    struct sha256 s;
    sha256_init(&s);
    for (size_t i = 0; paths[i]; i++)
        identity_into(paths[i], paths[i], &s);
    char hex[65];
    sha256_final_hex(&s, hex);
    return xstrdup(hex);
}

static char *answer_path(const char *question)
{
    char hex[65];
    sha256_hex(question, strlen(question), hex);
    return answers_dir ? path_join(answers_dir, hex) : NULL;
}

char *st_recall(const char *question, const char *state)
{
    char *path = answer_path(question), *data = NULL, *answer = NULL;
    size_t len;
    if (path && read_file(path, &data, &len) == 0) {
        size_t sl = strlen(state), ql = strlen(question);
        if (len >= sl + ql + 2 && memcmp(data, state, sl) == 0 && data[sl] == '\n' &&
            memcmp(data + sl + 1, question, ql) == 0 && data[sl + 1 + ql] == '\n')
            answer = xstrdup(data + sl + ql + 2);
    }
    free(data);
    free(path);
    return answer;
}

void st_remember(const char *question, const char *state, const char *answer)
{
    char *path = answer_path(question);
    if (!path || strchr(question, '\n') || strchr(state, '\n')) {
        free(path);
        return;
    }
    char *text = xasprintf("%s\n%s\n%s", state, question, answer);
    if (mkdir_p(answers_dir, 0755) == 0)
        write_file_atomic(path, text, strlen(text), 0644); /* a failure only costs a spawn */
    free(text);
    free(path);
}
