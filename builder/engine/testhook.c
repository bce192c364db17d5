/* The test hook (testhook.h): never set outside tests/integration. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testhook.h"

int test_hook(const char *point)
{
    const char *v = getenv("TRILLIAN_TEST_FAULT");
    const char *at = v ? strchr(v, '@') : NULL;
    if (!at || strcmp(at + 1, point) != 0)
        return 0;
    size_t n = (size_t)(at - v);
    if (n == 4 && strncmp(v, "stop", n) == 0) {
        fprintf(stderr, "trillian: test hook: stopped at %s (pid %ld)\n", point, (long)getpid());
        raise(SIGSTOP);
        return 0;
    }
    if (n == 6 && strncmp(v, "enospc", n) == 0) {
        errno = ENOSPC;
        return -1;
    }
    return 0;
}
