/* A GNU make jobserver shared by every stage, so that parallel stages which
 * each run make do not oversubscribe the machine. The pipe holds jobs-1
 * tokens; the engine's first running stage uses the implicit token and each
 * further concurrent stage takes one from the pipe, as make's own children
 * do. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"

int jobserver_init(struct jobserver *js, int jobs)
{
    int p[2];
    js->jobs = jobs < 1 ? 1 : jobs;
    if (pipe(p) < 0)
        return -1;
    /* Children inherit these (no O_CLOEXEC): make finds them in MAKEFLAGS. */
    js->rfd = p[0];
    js->wfd = p[1];
    for (int i = 1; i < js->jobs; i++)
        if (write(js->wfd, "+", 1) != 1)
            return -1;
    /* Our own non-blocking view: opening the pipe again through /proc gives
     * a separate open file description, so make's blocking reads are not
     * affected by O_NONBLOCK. */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", js->rfd);
    js->rfd_nb = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    return js->rfd_nb < 0 ? -1 : 0;
}

bool jobserver_take(struct jobserver *js)
{
    char c;
    ssize_t n;
    do
        n = read(js->rfd_nb, &c, 1);
    while (n < 0 && errno == EINTR);
    return n == 1;
}

void jobserver_give(struct jobserver *js)
{
    ssize_t n;
    do
        n = write(js->wfd, "+", 1);
    while (n < 0 && errno == EINTR);
}

char *jobserver_makeflags(const struct jobserver *js)
{
    return xasprintf("-j%d --jobserver-auth=%d,%d", js->jobs, js->rfd, js->wfd);
}

void jobserver_close(struct jobserver *js)
{
    close(js->rfd);
    close(js->wfd);
    close(js->rfd_nb);
}
