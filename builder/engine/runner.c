/* Runs stages and their commands. A stage's run() executes in a forked
 * child that leads its own process group (so an interrupt can stop all of
 * its descendants), with stdout and stderr on the stage log. Its commands
 * (cx_run, cx_capture) go through run_command.h: argv arrays, never a shell. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "base/run_command.h"

void cx_log(const struct stage_ctx *cx, const char *fmt, ...)
{
    (void)cx;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "trillian: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}

int cx_fail(const struct stage_ctx *cx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "trillian: error: stage %s: ", cx->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    return 1;
}

const char *cx_dep(const struct stage_ctx *cx, const char *name)
{
    const struct stage *st = cx->st;
    for (size_t d = 0; d < st->deps.n; d++)
        if (strcmp(st->deps.v[d], name) == 0)
            return st->recipe->stages[st->dep_idx[d]]->outdir;
    return NULL;
}

/* The commands of a stage: stdin /dev/null, in cx->work unless CWD says
 * otherwise, logged; stdout on OUT_FD when >= 0, else the log. */
static int stage_command(const struct stage_ctx *cx, const char *cwd, const char *const *env,
                         const char *const *argv, int out_fd)
{
    struct run_command cmd = {
        .argv = argv,
        .cwd = cwd ? cwd : cx->work,
        .env = env,
        .out = out_fd >= 0 ? RUN_OUT_FD : RUN_OUT_INHERIT,
        .out_fd = out_fd,
        .log = true,
    };
    int rc = run_command(&cmd);
    run_command_clear(&cmd);
    return rc;
}

int cx_run(const struct stage_ctx *cx, const char *const *argv)
{
    return stage_command(cx, NULL, NULL, argv, -1);
}

int cx_run_to(const struct stage_ctx *cx, const char *const *argv, int out_fd)
{
    return stage_command(cx, NULL, NULL, argv, out_fd);
}

int cx_run_in(const struct stage_ctx *cx, const char *cwd, const char *const *env,
              const char *const *argv)
{
    return stage_command(cx, cwd, env, argv, -1);
}

int cx_capture(const struct stage_ctx *cx, const char *const *argv, char **out)
{
    return cx_capture_in(cx, NULL, argv, out);
}

int cx_capture_in(const struct stage_ctx *cx, const char *const *env, const char *const *argv,
                  char **out)
{
    struct run_command cmd = {
        .argv = argv,
        .cwd = cx->work,
        .env = env,
        .out = RUN_OUT_CAPTURE,
        .log = true,
    };
    int rc = run_command(&cmd);
    *out = cmd.output;
    cmd.output = NULL;
    run_command_clear(&cmd);
    return rc;
}

int runner_status(int wstatus)
{
    return run_status(wstatus);
}

char *runner_last_command(const char *log_path)
{
    char *data;
    if (read_file(log_path, &data, NULL) < 0)
        return NULL;
    char *last = NULL;
    for (char *line = data; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        if (str_starts(line, "$ "))
            last = line + 2;
        line = nl ? nl + 1 : NULL;
    }
    char *r = last ? xstrdup(last) : NULL;
    free(data);
    return r;
}

static void child_setenv(const struct stage_ctx *cx, const struct jobserver *js)
{
    char *v = xasprintf("%lld", cx->source_date_epoch);
    setenv("SOURCE_DATE_EPOCH", v, 1);
    free(v);
    char *mf = jobserver_makeflags(js);
    setenv("MAKEFLAGS", mf, 1);
    free(mf);
    unsetenv("MFLAGS");
    unsetenv("MAKELEVEL");
    setenv("TRILLIAN_STAGE", cx->name, 1);
    setenv("TRILLIAN_OUT", cx->out, 1);
    setenv("TRILLIAN_WORK", cx->work, 1);
    setenv("TRILLIAN_KEEP", cx->keep, 1);
    v = xasprintf("%d", cx->jobs);
    setenv("TRILLIAN_JOBS", v, 1);
    free(v);
    setenv("TZ", "UTC", 1);
    setenv("LC_ALL", "C.UTF-8", 1);
}

/* In a stage's process, when trillian dies (even by SIGKILL, which it
 * cannot catch): the stage's whole process group (make, compilers, image
 * tools) goes with it, so no orphan goes on writing. */
static void on_build_death(int sig)
{
    (void)sig;
    kill(0, SIGKILL);
}

pid_t runner_start(struct stage *st, const struct build_opts *o, const struct jobserver *js,
                   const char *log_path, const char *keep_dir)
{
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        if (pid > 0)
            setpgid(pid, pid);
        return pid;
    }
    /* child */
    setpgid(0, 0);
    cache_locks_forget();
    /* SIGUSR2, not SIGTERM: an interrupt's SIGTERM leaves the group its 10 s */
    struct sigaction sa = {0};
    sa.sa_handler = on_build_death;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
    if (prctl(PR_SET_PDEATHSIG, SIGUSR2) < 0 || getppid() != parent)
        _exit(125); /* trillian already gone: run nothing */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (log < 0 || null < 0)
        _exit(125);
    dup2(null, 0);
    dup2(log, 1);
    dup2(log, 2);
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *out = path_join(st->tmp, "out");
    char *work = path_join(st->tmp, "work");
    if (mkdir_p(out, 0755) < 0 || mkdir_p(work, 0755) < 0 || mkdir_p(keep_dir, 0755) < 0 ||
        chdir(work) < 0) {
        fprintf(stderr, "trillian: cannot create %s: %s\n", st->tmp, strerror(errno));
        _exit(125);
    }
    struct stage_ctx cx = {
        .st = st,
        .name = st->name,
        .out = out,
        .work = work,
        .keep = keep_dir,
        .recipe_dir = st->recipe->dir,
        .arch = st->recipe->arch,
        .cache_dir = o->cache,
        .jobs = o->jobs,
        .source_date_epoch = st->recipe->source_date_epoch,
    };
    child_setenv(&cx, js);
    fprintf(stderr, "trillian: stage %s (%s/%s), key %s\n", st->name, st->kind->section,
            st->kind->name, st->key);
    int rc = st->kind->run(&cx);
    if (rc == 0) {
        char *sums = path_join(st->tmp, "sums");
        if (manifest_sums_write(out, sums) < 0) { /* an entry unrecorded cannot be verified */
            fprintf(stderr, "trillian: cannot record the sha256 of every file in %s: %s (a "
                    "tree deeper than PATH_MAX, or an unreadable directory?)\n", out,
                    strerror(errno));
            rc = 1;
        }
        free(sums);
    }
    fflush(stdout);
    fflush(stderr);
    _exit(rc < 0 ? 1 : rc > 255 ? 1 : rc);
}
