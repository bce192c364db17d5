#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "trash.h"

void trash_remove_behind(struct trash *t, const char *dir, const char *trashdir)
{
    if (!path_exists(dir))
        return;
    char *to = xasprintf("%s/trash-%u.%ld", trashdir, t->seq++, (long)getpid());
    if (rename(dir, to) < 0) {
        rm_rf(dir);
        free(to);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        cache_locks_forget(); /* else a finished stage's lock lasts as long as the rm */
        setpriority(PRIO_PROCESS, 0, 19);
        _exit(rm_rf(to) < 0 ? 1 : 0);
    }
    if (pid < 0) {
        rm_rf(to);
    } else {
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 4;
            t->pids = xrealloc(t->pids, t->cap * sizeof *t->pids);
        }
        t->pids[t->n++] = pid;
    }
    free(to);
}

bool trash_reaped(struct trash *t, pid_t pid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->pids[i] == pid) {
            t->pids[i] = t->pids[--t->n];
            return true;
        }
    return false;
}

void trash_wait(struct trash *t)
{
    for (size_t i = 0; i < t->n; i++)
        while (waitpid(t->pids[i], NULL, 0) < 0 && errno == EINTR)
            ;
    free(t->pids);
    t->pids = NULL;
    t->n = t->cap = 0;
}
