/* Running other programs (run_command.h). fork and exec rather than
 * posix_spawn: a child may need a parent-death signal and a controlling
 * terminal, which posix_spawn cannot set up. Trillian has no threads, so the
 * child may call anything before exec. */
#define _GNU_SOURCE
#include "run_command.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

extern char **environ;

/* ---- the command line, for logs ----------------------------------------- */

/* Quotes an argument for the log so a reader can paste it into a shell. */
static void quote_arg(struct buf *b, const char *a)
{
    bool plain = a[0] != 0;
    for (const char *p = a; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *p))
            plain = false;
    if (plain)
        buf_puts(b, a);
    else
        buf_shell_quote(b, a);
}

char *run_argv_text(const char *const *argv)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; argv[i]; i++) {
        if (i)
            buf_puts(&b, " ");
        quote_arg(&b, argv[i]);
    }
    return buf_detach(&b);
}

void run_log_argv(const char *const *argv)
{
    char *text = run_argv_text(argv);
    fflush(stdout); /* both are the stage log: keep the order */
    fprintf(stderr, "$ %s\n", text);
    fflush(stderr);
    free(text);
}

int run_status(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 1;
}

/* ---- starting and waiting ------------------------------------------------ */

/* The caller's environment with EXTRA's "K=V" entries replacing or added. */
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

/* dup2 that also leaves FD on TARGET open across exec when they are the
 * same descriptor (dup2 then does nothing, close-on-exec included). */
static int move_fd(int fd, int target)
{
    if (fd == target) {
        int fl = fcntl(fd, F_GETFD);
        return fl < 0 ? -1 : fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
    }
    return dup2(fd, target) < 0 ? -1 : 0;
}

static int open_null_on(int target, int flags)
{
    int fd = open("/dev/null", flags | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = move_fd(fd, target);
    if (fd != target)
        close(fd);
    return rc;
}

/* Sets up this process as CMD says and execs; returns only on failure
 * (with errno). */
static void setup_and_exec(const struct run_command *cmd, char **envp)
{
    int out_fd = cmd->out == RUN_OUT_FD ? cmd->out_fd
                 : cmd->out == RUN_OUT_CAPTURE ? cmd->capture_fd : -1;
    /* stdout first: in_fd may sit on 1 or 2 no longer than it is needed */
    if (out_fd >= 0 && out_fd <= 2 && out_fd != 1) {
        out_fd = fcntl(out_fd, F_DUPFD_CLOEXEC, 3);
        if (out_fd < 0)
            return;
    }
    int in_fd = cmd->in == RUN_IN_FD ? cmd->in_fd : -1;
    if (in_fd >= 1 && in_fd <= 2) {
        in_fd = fcntl(in_fd, F_DUPFD_CLOEXEC, 3);
        if (in_fd < 0)
            return;
    }
    if (in_fd >= 0 ? move_fd(in_fd, 0) < 0
                   : cmd->in != RUN_IN_INHERIT && open_null_on(0, O_RDONLY) < 0)
        return;
    if (out_fd >= 0 && move_fd(out_fd, 1) < 0)
        return;
    if (cmd->out == RUN_OUT_NULL && open_null_on(1, O_WRONLY) < 0)
        return;
    if (cmd->err == RUN_ERR_TO_OUT && move_fd(1, 2) < 0)
        return;
    if (cmd->err == RUN_ERR_NULL && open_null_on(2, O_WRONLY) < 0)
        return;
    if (cmd->ctty && ioctl(0, TIOCSCTTY, 0) < 0)
        return;
    if (cmd->cwd && chdir(cmd->cwd) < 0)
        return;
    signal(SIGPIPE, SIG_DFL); /* a caller may ignore it; a tool expects it */
    /* like posix_spawnp: the caller's PATH finds it, ENVP goes with it */
    execvpe(cmd->argv[0], (char *const *)cmd->argv, envp);
}

/* In the child: sets up and execs; on failure sends errno to ERRFD. */
static void child(const struct run_command *cmd, char **envp, pid_t parent, int errfd)
{
    if (cmd->new_session)
        setsid();
    if (cmd->pdeathsig && (prctl(PR_SET_PDEATHSIG, cmd->pdeathsig) < 0 || getppid() != parent))
        _exit(127); /* the caller is already gone: run nothing */
    setup_and_exec(cmd, envp);
    int e = errno;
    if (write(errfd, &e, sizeof e) < 0)
        _exit(126);
    _exit(127);
}

/* After a failed start: remembers errno and, with ->log, says what to do. */
static int start_failed(struct run_command *cmd)
{
    cmd->start_errno = errno;
    if (cmd->log) {
        fprintf(stderr, "trillian: cannot run %s: %s (is it installed? tools/install-deps "
                "installs what Trillian uses)\n", cmd->argv[0], strerror(cmd->start_errno));
        fflush(stderr);
    }
    return -1;
}

int run_start(struct run_command *cmd)
{
    cmd->pid = 0;
    cmd->start_errno = 0;
    cmd->wstatus = 0;
    cmd->capture_fd = -1;
    free(cmd->text);
    cmd->text = NULL;
    if (cmd->log) {
        cmd->text = run_argv_text(cmd->argv);
        fflush(stdout);
        fprintf(stderr, "$ %s\n", cmd->text);
    }
    fflush(stdout);
    fflush(stderr);
    int ep[2] = {-1, -1};
    if (cmd->out == RUN_OUT_CAPTURE) {
        /* a file, not a pipe: no deadlock on long output, and no wait for a
         * daemon the command leaves holding its stdout */
        char tmpl[] = "/tmp/trillian-capture-XXXXXX";
        cmd->capture_fd = mkostemp(tmpl, O_CLOEXEC);
        if (cmd->capture_fd < 0)
            goto fail;
        unlink(tmpl);
    }
    if (pipe2(ep, O_CLOEXEC) < 0)
        goto fail;
    char **envp = merged_env(cmd->env);
    pid_t parent = getpid();
    cmd->t0 = now_seconds();
    pid_t pid = fork();
    if (pid == 0)
        child(cmd, envp, parent, ep[1]);
    free(envp);
    close(ep[1]);
    if (pid < 0) {
        int e = errno;
        close(ep[0]);
        errno = e;
        goto fail;
    }
    int e = 0;
    ssize_t r;
    do
        r = read(ep[0], &e, sizeof e);
    while (r < 0 && errno == EINTR);
    close(ep[0]);
    if (r == (ssize_t)sizeof e) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        errno = e;
        goto fail;
    }
    cmd->pid = pid;
    return 0;
fail:;
    int why = errno;
    if (cmd->capture_fd >= 0)
        close(cmd->capture_fd);
    cmd->capture_fd = -1;
    errno = why;
    return start_failed(cmd);
}

static char *read_capture(int fd)
{
    struct buf b = BUF_INIT;
    char tmp[65536];
    ssize_t n;
    lseek(fd, 0, SEEK_SET);
    while ((n = read(fd, tmp, sizeof tmp)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            buf_add(&b, tmp, (size_t)n);
    return buf_detach(&b);
}

int run_finish(struct run_command *cmd)
{
    if (cmd->pid <= 0) {
        if (cmd->out == RUN_OUT_CAPTURE && !cmd->output)
            cmd->output = xstrdup("");
        return -1;
    }
    int st;
    while (waitpid(cmd->pid, &st, 0) < 0)
        if (errno != EINTR) {
            st = W_EXITCODE(1, 0);
            break;
        }
    cmd->pid = 0;
    cmd->wstatus = st;
    if (cmd->capture_fd >= 0) {
        free(cmd->output);
        cmd->output = read_capture(cmd->capture_fd);
        close(cmd->capture_fd);
        cmd->capture_fd = -1;
    }
    int code = run_status(st);
    if (cmd->log) {
        double took = now_seconds() - cmd->t0;
        if (took >= 1.0) /* where a stage's time goes, for bench/ and slow builds */
            fprintf(stderr, "trillian: (%s: %.1f s)\n", argv_program(cmd->argv), took);
        if (code != 0)
            fprintf(stderr, "trillian: command failed (%s%d): %s\n",
                    WIFSIGNALED(st) ? "signal " : "exit status ",
                    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), cmd->text);
        fflush(stderr);
    }
    return code;
}

int run_command(struct run_command *cmd)
{
    run_start(cmd);
    return run_finish(cmd);
}

int run_exec(struct run_command *cmd)
{
    cmd->start_errno = 0;
    if (cmd->log)
        run_log_argv(cmd->argv);
    fflush(stdout);
    fflush(stderr);
    if (cmd->out == RUN_OUT_CAPTURE) {
        errno = EINVAL; /* nobody would be left to read it */
        return start_failed(cmd);
    }
    if (cmd->new_session)
        setsid();
    char **envp = merged_env(cmd->env);
    setup_and_exec(cmd, envp);
    int e = errno;
    free(envp);
    errno = e;
    return start_failed(cmd);
}

int run_capture_quiet(const char *const *argv, char **out)
{
    struct run_command cmd = {.argv = argv, .out = RUN_OUT_CAPTURE, .err = RUN_ERR_NULL};
    int rc = run_command(&cmd);
    *out = cmd.output;
    cmd.output = NULL;
    run_command_clear(&cmd);
    return rc < 0 || WIFSIGNALED(cmd.wstatus) ? -1 : rc;
}

void run_command_clear(struct run_command *cmd)
{
    if (cmd->capture_fd > 0)
        close(cmd->capture_fd);
    cmd->capture_fd = -1;
    free(cmd->output);
    cmd->output = NULL;
    free(cmd->text);
    cmd->text = NULL;
}

/* ---- finding programs ------------------------------------------------------ */

/* DIR/PROGRAM if it is an executable regular file (new string), or NULL. */
static char *executable_in(const char *dir, size_t len, const char *program)
{
    if (len == 0 || dir[0] != '/')
        return NULL;
    char *d = xstrndup(dir, len);
    char *cand = path_join(d, program);
    free(d);
    struct stat sb;
    if (stat(cand, &sb) == 0 && S_ISREG(sb.st_mode) && access(cand, X_OK) == 0)
        return cand;
    free(cand);
    return NULL;
}

char *run_find_program(const char *program, const char *first_dir, unsigned flags)
{
    if (!program || !*program)
        return NULL;
    if (strchr(program, '/')) {
        struct stat sb;
        return stat(program, &sb) == 0 && S_ISREG(sb.st_mode) && access(program, X_OK) == 0
                   ? path_absolute(NULL, program)
                   : NULL;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char *all = xasprintf("%s:%s%s", first_dir ? first_dir : "", path,
                          flags & RUN_FIND_SBIN ? ":/usr/sbin:/sbin" : "");
    char *found = NULL;
    for (const char *p = all; !found;) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        found = executable_in(p, n, program);
        if (!c)
            break;
        p = c + 1;
    }
    free(all);
    return found;
}

char *run_path_env(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dir = NULL;
    if (vasprintf(&dir, fmt, ap) < 0)
        dir = NULL;
    va_end(ap);
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    char *r = dir && *dir ? xasprintf("PATH=%s:%s", dir, path) : xasprintf("PATH=%s", path);
    free(dir);
    return r;
}
