/* Removing a finished stage's scratch directory behind the build: the
 * toolchain's is 2 GB in 100 000 files, 15 s of unlinking during which no
 * further stage could start. */
#ifndef TRILLIAN_TRASH_H
#define TRILLIAN_TRASH_H

#include <stdbool.h>
#include <sys/types.h>

struct trash {
    pid_t *pids; /* removers still running */
    size_t n, cap;
    unsigned seq;
};

/* Renames DIR into TRASHDIR (on the same file system: instant) and removes
 * it in a child at the lowest priority. Where that fails, removes it here. */
void trash_remove_behind(struct trash *t, const char *dir, const char *trashdir);

/* True if PID was one of T's removers (and forgets it): the engine reaps
 * every child with waitpid(-1). */
bool trash_reaped(struct trash *t, pid_t pid);

/* Waits for the removers still running. */
void trash_wait(struct trash *t);

#endif
