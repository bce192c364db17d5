/* Runs stages and their commands. A stage's run() executes in a forked
 * child that leads its own process group (so an interrupt can stop all of
 * its descendants), with stdout and stderr on the stage log. Commands are
 * spawned from argv arrays, never through a shell. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"

extern char **environ;

/* Quotes an argument for the log so a reader can paste it into a shell. */
static void quote_arg(struct buf *b, const char *a)
{
    bool plain = a[0] != 0;
    for (const char *p = a; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *p))
            plain = false;
    if (plain) {
        buf_puts(b, a);
        return;
    }
    buf_puts(b, "'");
    for (const char *p = a; *p; p++) {
        if (*p == '\'')
            buf_puts(b, "'\\''");
        else
            buf_add(b, p, 1);
    }
    buf_puts(b, "'");
}

static char *argv_text(const char *const *argv)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; argv[i]; i++) {
        if (i)
            buf_puts(&b, " ");
        quote_arg(&b, argv[i]);
    }
    return buf_detach(&b);
}

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

static char **merged_env(const char *const *extra)
{
    size_t n = 0, m = 0;
    while (environ[n])
        n++;
    while (extra && extra[m])
        m++;
    char **env = xcalloc(n + m + 1, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool overridden = false;
        const char *eq = strchr(environ[i], '=');
        size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        for (size_t j = 0; j < m; j++)
            if (strncmp(extra[j], environ[i], len) == 0 && extra[j][len] == '=')
                overridden = true;
        if (!overridden)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < m; j++)
        env[k++] = (char *)extra[j];
    env[k] = NULL;
    return env;
}

static int spawn_wait(const struct stage_ctx *cx, const char *cwd, const char *const *env,
                      const char *const *argv, int out_fd)
{
    char *text = argv_text(argv);
    fprintf(stderr, "$ %s\n", text);
    fflush(stderr);
    fflush(stdout);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (out_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_addchdir_np(&fa, cwd ? cwd : cx->work);
    char **envp = merged_env(env);
    pid_t pid;
    double t0 = now_seconds();
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    if (rc != 0) {
        fprintf(stderr, "trillian: cannot run %s: %s (is it installed? tools/install-deps "
                "installs what Trillian uses)\n", argv[0], strerror(rc));
        free(text);
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    int code = runner_status(st);
    double took = now_seconds() - t0;
    if (took >= 1.0) /* where a stage's time goes, for bench/ and slow builds */
        fprintf(stderr, "trillian: (%s: %.1f s)\n", argv_program(argv), took);
    if (code != 0)
        fprintf(stderr, "trillian: command failed (%s%d): %s\n",
                WIFSIGNALED(st) ? "signal " : "exit status ",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), text);
    free(text);
    return code;
}

int cx_run(const struct stage_ctx *cx, const char *const *argv)
{
    return spawn_wait(cx, NULL, NULL, argv, -1);
}

int cx_run_to(const struct stage_ctx *cx, const char *const *argv, int out_fd)
{
    return spawn_wait(cx, NULL, NULL, argv, out_fd);
}

int cx_run_in(const struct stage_ctx *cx, const char *cwd, const char *const *env,
              const char *const *argv)
{
    return spawn_wait(cx, cwd, env, argv, -1);
}

int cx_capture(const struct stage_ctx *cx, const char *const *argv, char **out)
{
    return cx_capture_in(cx, NULL, argv, out);
}

int cx_capture_in(const struct stage_ctx *cx, const char *const *env, const char *const *argv,
                  char **out)
{
    char tmpl[] = "/tmp/trillian-capture-XXXXXX";
    int fd = mkstemp(tmpl);
    *out = NULL;
    if (fd < 0)
        return -1;
    unlink(tmpl);
    int rc = spawn_wait(cx, NULL, env, argv, fd);
    struct buf b = BUF_INIT;
    lseek(fd, 0, SEEK_SET);
    char tmp[65536];
    ssize_t n;
    while ((n = read(fd, tmp, sizeof tmp)) > 0)
        buf_add(&b, tmp, (size_t)n);
    close(fd);
    *out = buf_detach(&b);
    return rc;
}

int runner_status(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 1;
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
        manifest_sums_write(out, sums);
        free(sums);
    }
    fflush(stdout);
    fflush(stderr);
    _exit(rc < 0 ? 1 : rc > 255 ? 1 : rc);
}
