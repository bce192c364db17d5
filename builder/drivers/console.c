/* Console driver: the emulator child, its transcript, regex matching and the
 * step runner. See console.h for the matching rules. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* posix_openpt, ptsname_r, pipe2, cfmakeraw */
#endif
#include "console.h"
#include "base/run_command.h"
#include "stage.h" /* the recipe's `steps` as read-only nodes */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* ---- text and matching -------------------------------------------------- */

void console_init(struct console *c)
{
    memset(c, 0, sizeof *c);
    buf_init(&c->raw);
    buf_init(&c->text);
    c->rfd = c->wfd = c->logfd = -1;
}

enum { ESC_NONE, ESC_SEEN, ESC_CSI, ESC_OSC, ESC_OSC_ESC };

void console_feed(struct console *c, const char *data, size_t n)
{
    if (n == 0)
        return;
    c->last_rx = now_seconds();
    buf_add(&c->raw, data, n);
    if (c->logfd >= 0) {
        size_t off = 0;
        while (off < n) {
            ssize_t w = write(c->logfd, data + off, n - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break; /* the transcript in memory still has it */
            off += (size_t)w;
        }
    }
    char out[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)data[i];
        switch (c->esc) {
        case ESC_SEEN:
            c->esc = ch == '[' ? ESC_CSI : ch == ']' ? ESC_OSC : ESC_NONE;
            continue;
        case ESC_CSI:
            if (ch >= 0x40 && ch <= 0x7e)
                c->esc = ESC_NONE;
            continue;
        case ESC_OSC:
            if (ch == 7)
                c->esc = ESC_NONE;
            else if (ch == 0x1b)
                c->esc = ESC_OSC_ESC;
            continue;
        case ESC_OSC_ESC:
            c->esc = ch == '\\' ? ESC_NONE : ESC_OSC;
            continue;
        default:
            break;
        }
        if (ch == 0x1b) {
            c->esc = ESC_SEEN;
            continue;
        }
        if (ch == '\r' || ch == 0 || ch == 7)
            continue;
        out[k++] = (char)ch;
        if (k == sizeof out) {
            buf_add(&c->text, out, k);
            k = 0;
        }
    }
    buf_add(&c->text, out, k);
}

int console_compile(regex_t *re, const char *pattern, char **err)
{
    int rc = regcomp(re, pattern, REG_EXTENDED | REG_NEWLINE);
    if (rc == 0)
        return 0;
    char msg[256];
    regerror(rc, re, msg, sizeof msg);
    if (err)
        *err = xasprintf("bad regular expression /%s/: %s", pattern, msg);
    return -1;
}

static const char *text_at(const struct console *c, size_t off)
{
    return c->text.p + off;
}

/* Searches the text from FROM; on a match sets [*so, *eo) as offsets. */
static bool search(const struct console *c, const regex_t *re, size_t from, size_t *so,
                   size_t *eo)
{
    if (from > c->text.n)
        from = c->text.n;
    int flags = 0;
    if (from > 0 && c->text.p[from - 1] != '\n')
        flags |= REG_NOTBOL;
    regmatch_t m;
    if (regexec(re, text_at(c, from), 1, &m, flags) != 0)
        return false;
    *so = from + (size_t)m.rm_so;
    *eo = from + (size_t)m.rm_eo;
    return true;
}

/* A match ending at the end of an unfinished line while text still flows. */
static bool tentative(const struct console *c, size_t eo)
{
    return c->settle > 0 && eo == c->text.n && eo > 0 && c->text.p[eo - 1] != '\n' &&
           now_seconds() - c->last_rx < c->settle;
}

bool console_match(struct console *c, const regex_t *re, char **matched)
{
    size_t so, eo;
    if (!search(c, re, c->mark, &so, &eo))
        return false;
    if (tentative(c, eo))
        return false;
    if (matched)
        *matched = xstrndup(text_at(c, so), eo - so);
    c->mark = eo;
    return true;
}

bool console_scan(struct console *c, const regex_t *re, char **matched)
{
    /* Re-scan from the start of the line the last scan ended in, so a
     * pattern split across two reads is still found. */
    size_t from = c->fail_mark;
    while (from > 0 && c->text.p[from - 1] != '\n')
        from--;
    size_t so, eo;
    bool hit = search(c, re, from, &so, &eo);
    if (hit && matched) {
        /* Report the whole line it is on. */
        size_t ls = so, le = eo;
        while (ls > 0 && c->text.p[ls - 1] != '\n')
            ls--;
        while (le < c->text.n && c->text.p[le] != '\n')
            le++;
        *matched = xstrndup(text_at(c, ls), le - ls);
    }
    c->fail_mark = c->text.n;
    return hit;
}

void console_skip(struct console *c) { c->mark = c->text.n; }

char *console_tail(const struct console *c, int n)
{
    const char *t = text_at(c, 0);
    size_t end = c->text.n;
    while (end > 0 && t[end - 1] == '\n')
        end--;
    size_t start = end;
    int lines = 0;
    while (start > 0) {
        if (t[start - 1] == '\n' && ++lines == n)
            break;
        start--;
    }
    return xstrndup(t + start, end - start);
}

/* ---- the child ---------------------------------------------------------- */

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int console_start(struct console *c, const char *const *argv, bool pty, const char *log_path,
                  char **err)
{
    *err = NULL;
    signal(SIGPIPE, SIG_IGN);
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    int master = -1, slave = -1;

    if (log_path) {
        c->logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (c->logfd < 0) {
            *err = xasprintf("cannot create %s: %s", log_path, strerror(errno));
            return -1;
        }
    }
    if (pty) {
        char name[128];
        struct termios t;
        master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
            ptsname_r(master, name, sizeof name) != 0 ||
            (slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 || tcgetattr(slave, &t) < 0)
            goto syserr;
        cfmakeraw(&t);
        tcsetattr(slave, TCSANOW, &t);
    } else if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
        goto syserr;
    }
    run_log_argv(argv); /* here, so that a start failure is reported once, by the caller */
    struct run_command cmd = {
        .argv = argv,
        .in = RUN_IN_FD,
        .in_fd = pty ? slave : in[0],
        .out = RUN_OUT_FD,
        .out_fd = pty ? slave : out[1],
        .err = RUN_ERR_TO_OUT,
        /* its own session (the pty), so a kill of the stage's group misses
         * it: it dies with the process that started it instead */
        .new_session = true,
        .ctty = pty,
        .pdeathsig = SIGKILL,
    };
    int rc = run_start(&cmd);
    run_command_clear(&cmd);
    /* only the child keeps its ends: the reader sees EOF when it is gone */
    int theirs[] = {slave, in[0], out[1]};
    for (size_t i = 0; i < ARRAY_LEN(theirs); i++)
        if (theirs[i] >= 0)
            close(theirs[i]);
    if (pty) {
        c->rfd = c->wfd = master;
    } else {
        c->wfd = in[1];
        c->rfd = out[0];
    }
    if (rc < 0) {
        *err = xasprintf("cannot run %s: %s", argv[0], strerror(cmd.start_errno));
        c->wstatus = W_EXITCODE(127, 0);
        c->exited = true;
        c->pid = 0;
        return -1;
    }
    c->pid = cmd.pid;
    set_nonblock(c->rfd);
    return 0;

syserr:
    *err = xasprintf("cannot set up the console for %s: %s", argv[0], strerror(errno));
    int fds[] = {in[0], in[1], out[0], out[1], master, slave};
    for (size_t i = 0; i < ARRAY_LEN(fds); i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return -1;
}

bool console_reap(struct console *c)
{
    if (c->exited || c->pid <= 0)
        return c->exited;
    siginfo_t si;
    si.si_pid = 0;
    if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
        return false;
    /* The leader is a zombie, so its group id cannot be reused yet: end
     * anything it left behind, then reap it. */
    kill(-c->pid, SIGKILL);
    while (waitpid(c->pid, &c->wstatus, 0) < 0 && errno == EINTR)
        ;
    c->exited = true;
    return true;
}

int console_pump(struct console *c, double timeout)
{
    if (c->eof) {
        console_reap(c);
        return -1;
    }
    struct pollfd p = {.fd = c->rfd, .events = POLLIN};
    int ms = timeout <= 0 ? 0 : (int)ceil(timeout * 1000);
    int pr = poll(&p, 1, ms);
    if (pr < 0 && errno != EINTR)
        return -1;
    int total = 0;
    for (;;) {
        char buf[4096];
        ssize_t n = read(c->rfd, buf, sizeof buf);
        if (n > 0) {
            console_feed(c, buf, (size_t)n);
            total += (int)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        c->eof = true; /* 0 = end of pipe; EIO = pty slave closed */
        break;
    }
    console_reap(c);
    if (total > 0)
        return total;
    return c->eof ? -1 : 0;
}

int console_send(struct console *c, const char *s, bool newline)
{
    if (c->wfd < 0)
        return -1;
    struct buf b = BUF_INIT;
    buf_puts(&b, s);
    if (newline)
        buf_puts(&b, "\n");
    size_t off = 0;
    int rc = 0;
    double deadline = now_seconds() + 10;
    while (off < b.n) {
        ssize_t w = write(c->wfd, b.p + off, b.n - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && now_seconds() < deadline) {
            console_pump(c, 0.05); /* keep reading so the guest can go on */
            continue;
        }
        rc = -1;
        break;
    }
    buf_free(&b);
    return rc;
}

void console_kill(struct console *c, double grace)
{
    if (c->pid <= 0 || console_reap(c))
        return;
    c->killed = true;
    kill(-c->pid, SIGTERM);
    double deadline = now_seconds() + grace;
    while (now_seconds() < deadline) {
        if (console_reap(c))
            return;
        if (console_pump(c, 0.05) < 0) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    kill(-c->pid, SIGKILL);
    while (waitpid(c->pid, &c->wstatus, 0) < 0 && errno == EINTR)
        ;
    c->exited = true;
}

static volatile sig_atomic_t guarded_pid;

static void guard_handler(int sig)
{
    if (guarded_pid > 0)
        kill(-(pid_t)guarded_pid, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

void console_guard(const struct console *c)
{
    guarded_pid = c->pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = guard_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

void console_close(struct console *c)
{
    if (guarded_pid == c->pid && c->pid > 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        guarded_pid = 0;
    }
    if (c->pid > 0 && !c->exited)
        console_kill(c, 2);
    if (c->rfd >= 0)
        close(c->rfd);
    if (c->wfd >= 0 && c->wfd != c->rfd)
        close(c->wfd);
    if (c->logfd >= 0)
        close(c->logfd);
    c->rfd = c->wfd = c->logfd = -1;
    buf_free(&c->raw);
    buf_free(&c->text);
}

const char *console_status(const struct console *c)
{
    static char s[64];
    if (!c->exited)
        return "still running";
    if (WIFEXITED(c->wstatus))
        snprintf(s, sizeof s, "exit status %d", WEXITSTATUS(c->wstatus));
    else if (WIFSIGNALED(c->wstatus))
        snprintf(s, sizeof s, "killed by signal %d (%s)", WTERMSIG(c->wstatus),
                 strsignal(WTERMSIG(c->wstatus)));
    else
        snprintf(s, sizeof s, "wait status %d", c->wstatus);
    return s;
}

/* ---- steps: parsing ----------------------------------------------------- */

static const char *const step_keys[] = {"wait",    "expect", "send",   "exit", "timeout",
                                        "name",    "fail",   "newline", "secret", "kill",
                                        NULL};
static const char *const step_kind_keys[] = {"wait", "expect", "send", "exit"};

static void step_free(struct step *st)
{
    free(st->name);
    free(st->arg);
    free(st->fail);
    if (st->re_ok)
        regfree(&st->re);
    if (st->fail_re_ok)
        regfree(&st->fail_re);
}

void steps_free(struct steps *s)
{
    for (size_t i = 0; i < s->n; i++)
        step_free(&s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static struct step *steps_push(struct steps *s)
{
    s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    struct step *st = &s->v[s->n++];
    memset(st, 0, sizeof *st);
    st->newline = true;
    return st;
}

static double default_timeout(enum step_kind kind)
{
    return kind == STEP_EXPECT ? STEP_EXPECT_TIMEOUT
           : kind == STEP_EXIT ? STEP_EXIT_TIMEOUT
                               : STEP_WAIT_TIMEOUT;
}

void steps_add(struct steps *s, enum step_kind kind, const char *arg, double timeout)
{
    struct step *st = steps_push(s);
    st->kind = kind;
    st->arg = arg ? xstrdup(arg) : NULL;
    st->timeout = timeout > 0 ? timeout : default_timeout(kind);
}

int steps_compile(struct steps *s, char **err)
{
    for (size_t i = 0; i < s->n; i++) {
        struct step *st = &s->v[i];
        char *e = NULL;
        if ((st->kind == STEP_WAIT || st->kind == STEP_EXPECT) && !st->re_ok) {
            if (console_compile(&st->re, st->arg, &e) < 0)
                goto fail;
            st->re_ok = true;
        }
        if (st->fail && !st->fail_re_ok) {
            if (console_compile(&st->fail_re, st->fail, &e) < 0)
                goto fail;
            st->fail_re_ok = true;
        }
        continue;
    fail:
        *err = xasprintf("steps.[%zu]: %s", i, e);
        free(e);
        return -1;
    }
    return 0;
}

static int perr(char **err, const struct st_node *s, size_t i, const char *key,
                const char *fmt, ...) PRINTF_LIKE(5, 6);
static int perr(char **err, const struct st_node *s, size_t i, const char *key,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg;
    if (vasprintf(&msg, fmt, ap) < 0)
        abort();
    va_end(ap);
    unsigned line = node_line(s);
    if (line)
        *err = xasprintf("steps.[%zu]%s%s (line %u): %s", i, key ? "." : "", key ? key : "",
                         line, msg);
    else
        *err = xasprintf("steps.[%zu]%s%s: %s", i, key ? "." : "", key ? key : "", msg);
    free(msg);
    return -1;
}

static bool is_number(const struct st_node *s)
{
    enum node_type t = node_type(s);
    return t == NODE_INT || t == NODE_FLOAT;
}

/* Refuses a key no step has, suggesting the one it may be a typo of. */
static int step_keys_known(const struct st_node *e, size_t ix, char **err)
{
    for (size_t k = 0; k < node_len(e); k++) {
        const struct st_node *m = node_elem(e, k);
        const char *name = node_name(m);
        bool ok = false;
        const char *best = NULL;
        size_t bestd = 3;
        for (size_t j = 0; step_keys[j]; j++) {
            if (strcmp(step_keys[j], name) == 0)
                ok = true;
            size_t d = edit_distance(step_keys[j], name);
            if (d < bestd)
                bestd = d, best = step_keys[j];
        }
        if (!ok) {
            if (best)
                perr(err, m, ix, name, "unknown step key; did you mean `%s`?", best);
            else
                perr(err, m, ix, name,
                     "unknown step key; a step has one of wait, expect, send, exit and "
                     "may have timeout, name, fail, newline, secret, kill");
            return -1;
        }
    }
    return 0;
}

/* Which of wait, expect, send, exit the step E is, with that setting in
 * *KS; -1 when it has none or more than one. */
static int step_kind_of(const struct st_node *e, size_t ix, const struct st_node **ks,
                        char **err)
{
    int kind = -1;
    for (int k = 0; k < 4; k++) {
        const struct st_node *m = node_member(e, step_kind_keys[k]);
        if (!m)
            continue;
        if (kind >= 0) {
            perr(err, m, ix, step_kind_keys[k], "a step has only one of wait, expect, "
                 "send, exit (this one also has `%s`); split it into two steps",
                 step_kind_keys[kind]);
            return -1;
        }
        kind = k;
        *ks = m;
    }
    if (kind < 0)
        perr(err, e, ix, NULL, "needs one of wait = \"regex\", expect = \"regex\", "
             "send = \"text\", exit = true");
    return kind;
}

/* The step's own setting KS: exit = true, or the regex or text. */
static int step_arg(struct step *st, const struct st_node *ks, size_t ix, char **err)
{
    int kind = (int)st->kind;
    if (kind == STEP_EXIT) {
        if (!node_bool(ks, false)) { /* false, or not a boolean */
            perr(err, ks, ix, "exit", "must be true (wait for the emulator to exit)");
            return -1;
        }
        return 0;
    }
    const char *v = node_str(ks);
    if (!v) {
        perr(err, ks, ix, step_kind_keys[kind], "must be a string");
        return -1;
    }
    if (kind != STEP_SEND && !*v) {
        perr(err, ks, ix, step_kind_keys[kind], "the regular expression is empty");
        return -1;
    }
    st->arg = xstrdup(v);
    return 0;
}

/* timeout, name and fail of the step E. */
static int step_options(struct step *st, const struct st_node *e, size_t ix, char **err)
{
    enum step_kind kind = st->kind;
    const struct st_node *m;
    st->timeout = default_timeout(st->kind);
    if ((m = node_member(e, "timeout"))) {
        if (kind == STEP_SEND) {
            perr(err, m, ix, "timeout", "a send does not wait; put the timeout on the "
                 "wait or expect after it");
            return -1;
        }
        double t = node_float(m, -1); /* an integer or a float */
        if (!is_number(m) || !(t > 0) || t > 86400) {
            perr(err, m, ix, "timeout", "must be a number of seconds, 0 < timeout <= 86400");
            return -1;
        }
        st->timeout = t;
    }
    if ((m = node_member(e, "name"))) {
        const char *v = node_str(m);
        if (!v || !*v) {
            perr(err, m, ix, "name", "must be a non-empty string");
            return -1;
        }
        st->name = xstrdup(v);
    }
    if ((m = node_member(e, "fail"))) {
        const char *v = node_str(m);
        if (kind != STEP_WAIT && kind != STEP_EXPECT) {
            perr(err, m, ix, "fail", "only a wait or expect step takes `fail`");
            return -1;
        }
        if (!v || !*v) {
            perr(err, m, ix, "fail", "must be a regular expression (string)");
            return -1;
        }
        st->fail = xstrdup(v);
    }
    return 0;
}

/* newline, secret (a send's) and kill (an exit's). */
static int step_bools(struct step *st, const struct st_node *e, size_t ix, char **err)
{
    static const char *const bools[] = {"newline", "secret", "kill"};
    const struct st_node *m;
    for (size_t b = 0; b < ARRAY_LEN(bools); b++) {
        if (!(m = node_member(e, bools[b])))
            continue;
        bool want_send = b < 2;
        if (want_send ? st->kind != STEP_SEND : st->kind != STEP_EXIT) {
            perr(err, m, ix, bools[b], "only %s step takes `%s`",
                 want_send ? "a send" : "an exit", bools[b]);
            return -1;
        }
        if (node_type(m) != NODE_BOOL) {
            perr(err, m, ix, bools[b], "must be true or false");
            return -1;
        }
        bool v = node_bool(m, false);
        if (b == 0)
            st->newline = v;
        else if (b == 1)
            st->secret = v;
        else
            st->kill = v;
    }
    return 0;
}

int steps_parse_node(const struct st_node *list, struct steps *out, char **err)
{
    *err = NULL;
    memset(out, 0, sizeof *out);
    if (node_type(list) != NODE_LIST) { /* a list or an array */
        *err = xstrdup("steps: must be a list of groups, ( { wait = \"login:\"; }, ... )");
        return -1;
    }
    size_t n = node_len(list);
    if (n == 0) {
        *err = xstrdup("steps: the list is empty; give at least one step or use `profile`");
        return -1;
    }
    for (size_t ix = 0; ix < n; ix++) {
        const struct st_node *e = node_elem(list, ix);
        if (node_type(e) != NODE_GROUP) {
            perr(err, e, ix, NULL, "must be a group like { wait = \"login:\"; timeout = 120; }");
            goto fail;
        }
        const struct st_node *ks = NULL;
        int kind;
        if (step_keys_known(e, ix, err) < 0 || (kind = step_kind_of(e, ix, &ks, err)) < 0)
            goto fail;
        struct step *st = steps_push(out);
        st->kind = (enum step_kind)kind;
        if (step_arg(st, ks, ix, err) < 0 || step_options(st, e, ix, err) < 0 ||
            step_bools(st, e, ix, err) < 0)
            goto fail;
        char *cerr = NULL;
        struct steps one = {st, 1};
        if (steps_compile(&one, &cerr) < 0) {
            perr(err, ks, ix, step_kind_keys[kind], "%s", strchr(cerr, ' ') + 1);
            free(cerr);
            goto fail;
        }
    }
    return 0;
fail:
    steps_free(out);
    return -1;
}

/* ---- profiles ----------------------------------------------------------- */

const char *const profile_names[] = {"debian-login", "marker", NULL};

char *os_release_regex(const char *suite)
{
    if (!suite || !*suite)
        return NULL;
    const char *s = suite;
    if (strcmp(suite, "unstable") == 0)
        s = "sid";
    struct buf b = BUF_INIT;
    buf_puts(&b, "^(VERSION_CODENAME|PRETTY_NAME|VERSION)=.*");
    for (const char *p = s; *p; p++) { /* a suite name is [a-z0-9-]; be safe */
        if (strchr(".[]()*+?{}|^$\\", *p))
            buf_puts(&b, "\\");
        buf_add(&b, p, 1);
    }
    return buf_detach(&b);
}

static void add_named(struct steps *s, enum step_kind k, const char *arg, double t,
                      const char *name)
{
    steps_add(s, k, arg, t);
    if (name)
        s->v[s->n - 1].name = xstrdup(name);
}

int steps_profile(const char *profile, const struct profile_opts *o, struct steps *out,
                  char **err)
{
    *err = NULL;
    memset(out, 0, sizeof *out);
    double boot = o->boot_timeout > 0 ? o->boot_timeout : 600;
    double cmd = o->command_timeout > 0 ? o->command_timeout : 60;
    if (profile && strcmp(profile, "marker") == 0) {
        const char *marker = o->marker && *o->marker ? o->marker : "TRILLIAN-BOOT-OK";
        add_named(out, STEP_WAIT, marker, boot, "boot marker");
        add_named(out, STEP_EXIT, NULL, o->exit_timeout > 0 ? o->exit_timeout : 30,
                  "emulator exits");
        out->v[out->n - 1].kill = true;
    } else if (profile && strcmp(profile, "debian-login") == 0) {
        const char *prompt = o->prompt && *o->prompt ? o->prompt : PROFILE_PROMPT;
        /* agetty --autologin prints "HOST login: root (automatic login)". */
        add_named(out, STEP_WAIT, "login: ?", boot, o->autologin ? "automatic login" : "login prompt");
        if (!o->autologin)
            add_named(out, STEP_SEND, o->user && *o->user ? o->user : "root", 0, "send user");
        if (o->password && !o->autologin) {
            add_named(out, STEP_WAIT, "[Pp]assword: ?", cmd, "password prompt");
            add_named(out, STEP_SEND, o->password, 0, "send password");
            out->v[out->n - 1].secret = true;
        }
        add_named(out, STEP_WAIT, prompt, cmd, "shell prompt");
        out->v[out->n - 1].fail = xstrdup("Login incorrect");
        struct {
            const char *cmd, *expect, *name;
            double timeout;
        } checks[] = {
            {"uname -m", NULL, "machine", cmd},
            {"cat /etc/os-release", o->os_release, "os-release", cmd},
            {"systemctl is-system-running --wait", "^(running|degraded)$", "systemd state",
             boot},
            /* sysvinit prints "N 2": no previous runlevel, now the default one */
            {"/sbin/runlevel", "^N [2-5]$", "sysvinit runlevel", cmd},
        };
        char *mre = NULL;
        if (o->machine && *o->machine) {
            struct buf b = BUF_INIT;
            buf_puts(&b, "^");
            buf_puts(&b, o->machine);
            buf_puts(&b, "$");
            checks[0].expect = mre = buf_detach(&b);
        }
        for (size_t i = 0; i < ARRAY_LEN(checks); i++) {
            if (!checks[i].expect || (i == 2 && !o->systemd) || (i == 3 && !o->sysvinit))
                continue;
            char *n = xasprintf("%s: send", checks[i].name);
            add_named(out, STEP_SEND, checks[i].cmd, 0, n);
            free(n);
            n = xasprintf("%s: expect", checks[i].name);
            add_named(out, STEP_EXPECT, checks[i].expect, checks[i].timeout, n);
            /* The prompt coming back without the output fails it at once. */
            out->v[out->n - 1].fail = xstrdup(prompt);
            free(n);
            n = xasprintf("%s: prompt", checks[i].name);
            add_named(out, STEP_WAIT, prompt, cmd, n);
            free(n);
        }
        free(mre);
        add_named(out, STEP_SEND, o->poweroff && *o->poweroff ? o->poweroff : "poweroff", 0,
                  "power off");
        add_named(out, STEP_EXIT, NULL, o->exit_timeout > 0 ? o->exit_timeout : 120,
                  "emulator exits");
    } else {
        *err = xasprintf("unknown profile \"%s\"; profiles: debian-login, marker",
                         profile ? profile : "");
        return -1;
    }
    if (steps_compile(out, err) < 0) {
        steps_free(out);
        return -1;
    }
    return 0;
}

/* ---- steps: running ----------------------------------------------------- */

char *step_describe(const struct step *st)
{
    switch (st->kind) {
    case STEP_WAIT:
        return xasprintf("wait /%s/", st->arg);
    case STEP_EXPECT:
        return xasprintf("expect /%s/", st->arg);
    case STEP_SEND:
        return st->secret ? xstrdup("send (secret)") : xasprintf("send \"%s\"", st->arg);
    case STEP_EXIT:
        return xstrdup(st->kill ? "exit (else kill)" : "exit");
    }
    return xstrdup("?");
}

static void say(const struct run_opts *o, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void say(const struct run_opts *o, const char *fmt, ...)
{
    if (!o->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->log, fmt, ap);
    va_end(ap);
    fputc('\n', o->log);
    fflush(o->log);
}

static void step_fail(struct console *c, struct step_result *r, const char *fmt, ...)
    PRINTF_LIKE(3, 4);
static void step_fail(struct console *c, struct step_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&r->message, fmt, ap) < 0)
        abort();
    va_end(ap);
    r->status = STEP_FAILED;
    r->tail = console_tail(c, 20);
}

/* Runs one wait/expect/exit step until it passes, fails or times out. */
static void run_wait(struct console *c, const struct step *st, const struct run_opts *o,
                     double deadline, bool total_bound, struct step_result *r)
{
    const char *what = st->kind == STEP_EXPECT ? "expected" : "waited for";
    double t0 = now_seconds();
    size_t so_, eo_;
    for (;;) {
        if (st->kind != STEP_EXIT && console_match(c, &st->re, &r->matched)) {
            r->status = STEP_PASSED;
            return;
        }
        char *line = NULL;
        if (st->fail_re_ok) {
            size_t so, eo;
            if (search(c, &st->fail_re, c->mark, &so, &eo) && !tentative(c, eo)) {
                line = xstrndup(text_at(c, so), eo - so);
                step_fail(c, r, "%s /%s/ but the console showed /%s/ first: \"%s\"", what,
                          st->arg, st->fail, line);
                free(line);
                return;
            }
        }
        if (o->fail_re && console_scan(c, o->fail_re, &line)) {
            if (st->kind == STEP_EXIT)
                step_fail(c, r, "while waiting for the emulator to exit the console showed "
                          "/%s/: \"%s\"", o->fail_pattern, line);
            else
                step_fail(c, r, "%s /%s/ but the console showed /%s/: \"%s\"", what, st->arg,
                          o->fail_pattern, line);
            free(line);
            return;
        }
        if (st->kind == STEP_EXIT) {
            if (c->exited) {
                if (WIFEXITED(c->wstatus) && WEXITSTATUS(c->wstatus) == 0) {
                    r->status = STEP_PASSED;
                    r->matched = xstrdup("exit status 0");
                } else {
                    step_fail(c, r, "the emulator ended with %s", console_status(c));
                }
                return;
            }
            if (o->halt_re && !o->exits_on_poweroff && console_match(c, o->halt_re, &r->matched)) {
                console_kill(c, 3); /* the guest is down; the emulator spins */
                r->status = STEP_PASSED;
                return;
            }
        } else if (o->halt_re && !o->exits_on_poweroff && search(c, o->halt_re, c->mark, &so_, &eo_)) {
            line = xstrndup(text_at(c, so_), eo_ - so_);
            step_fail(c, r, "%s /%s/ but the guest went down first: \"%s\"", what, st->arg, line);
            free(line);
            return;
        } else if (c->exited || c->eof) {
            console_reap(c);
            step_fail(c, r, "%s /%s/ but the emulator stopped first (%s)", what, st->arg,
                      console_status(c));
            return;
        }
        double now = now_seconds();
        if (now >= deadline) {
            const char *why = total_bound ? " (timeout_total reached)" : "";
            if (st->kind == STEP_EXIT && st->kill) {
                console_kill(c, 3);
                r->status = STEP_PASSED;
                r->matched = xasprintf("killed after %.0f s", now - t0);
            } else if (st->kind == STEP_EXIT) {
                step_fail(c, r, "the emulator did not exit within %.0f s%s (the guest did not "
                          "power off)", now - t0, why);
            } else {
                step_fail(c, r, "%s /%s/ for %.0f s%s and it did not appear", what, st->arg,
                          now - t0, why);
            }
            return;
        }
        double slice = deadline - now;
        if (slice > 0.5)
            slice = 0.5;
        if (console_pump(c, slice) < 0 && !c->exited) {
            struct timespec ts = {0, 20 * 1000 * 1000}; /* EOF; the exit comes soon */
            nanosleep(&ts, NULL);
        }
    }
}

long steps_run(struct console *c, const struct steps *s, const struct run_opts *o,
               struct step_result *res)
{
    double t0 = now_seconds();
    double end = o->total_timeout > 0 ? t0 + o->total_timeout : INFINITY;
    long failed = -1;
    for (size_t i = 0; i < s->n; i++)
        memset(&res[i], 0, sizeof res[i]);
    for (size_t i = 0; i < s->n; i++) {
        const struct step *st = &s->v[i];
        struct step_result *r = &res[i];
        double start = now_seconds();
        char *d = step_describe(st);
        say(o, "[%7.1fs] step %zu/%zu%s%s%s: %s", start - t0, i + 1, s->n,
            st->name ? " (" : "", st->name ? st->name : "", st->name ? ")" : "", d);
        free(d);
        if (st->kind == STEP_SEND) {
            /* A password prompt is printed before the guest turns echo off:
             * give it a moment, so the secret is not echoed into the
             * transcript. */
            double until = now_seconds() + (st->secret ? 0.5 : 0);
            console_pump(c, 0); /* take in what has arrived, then forget it */
            while (!c->eof && now_seconds() < until)
                console_pump(c, until - now_seconds());
            console_skip(c);
            if (c->eof || c->exited || console_send(c, st->arg, st->newline) < 0) {
                console_reap(c);
                step_fail(c, r, "could not send %s: the emulator stopped (%s)",
                          st->secret ? "the secret text" : st->arg, console_status(c));
            } else {
                r->status = STEP_PASSED;
            }
        } else {
            double deadline = start + st->timeout;
            bool total_bound = false;
            if (end < deadline) {
                deadline = end;
                total_bound = true;
            }
            run_wait(c, st, o, deadline, total_bound, r);
        }
        r->seconds = now_seconds() - start;
        if (r->status == STEP_FAILED) {
            say(o, "[%7.1fs]   FAILED after %.1f s: %s", now_seconds() - t0, r->seconds,
                r->message);
            failed = (long)i;
            break;
        }
        if (r->matched && st->kind != STEP_SEND)
            say(o, "[%7.1fs]   ok (%.1f s): \"%s\"", now_seconds() - t0, r->seconds, r->matched);
    }
    /* A guest that failed may still be saying why: an oops's registers and
     * call trace follow its first line, which fail_on matched. Up to 3 s
     * more of the console, until it is quiet for half a second, goes into
     * the transcript before the emulator is stopped. */
    for (double end = now_seconds() + 3; failed >= 0 && c->pid > 0 && !c->eof &&
                                         now_seconds() < end;)
        if (console_pump(c, 0.5) <= 0)
            break;
    if (c->pid > 0 && !console_reap(c)) {
        say(o, "[%7.1fs] stopping the emulator (SIGTERM, then SIGKILL)", now_seconds() - t0);
        console_kill(c, 3);
    }
    return failed;
}

void step_results_free(struct step_result *res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(res[i].message);
        free(res[i].matched);
        free(res[i].tail);
    }
}
