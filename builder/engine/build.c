/* The build loop: runs the stages of a recipe in dependency order, up to -j
 * at a time, skipping those whose cache key is present, and reports
 * progress, failures and interrupts. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cold_estimate.h"
#include "engine.h"
#include "publish.h"
#include "report.h"
#include "substitute.h"
#include "trash.h"

static volatile sig_atomic_t got_signal;
static int sig_pipe[2] = {-1, -1};

/* SIGCHLD only wakes the loop; the others stop the build. */
static void on_signal(int sig)
{
    if (sig != SIGCHLD)
        got_signal = sig;
    int e = errno;
    if (sig_pipe[1] >= 0 && write(sig_pipe[1], "x", 1) < 0) {
        /* the loop also polls got_signal */
    }
    errno = e;
}

/* ---- progress ---------------------------------------------------------- */

struct progress {
    bool tty;
    int drawn; /* live lines currently on screen */
    double t0;
    double interval;  /* not on a terminal: a line per running stage this often */
    double last_beat;
    const char *cache, *recipe;
    double *expect;   /* per stage: seconds its last build took, or -1 */
    bool estimated;   /* some of expect comes from the recorded costs */
};

/* One build_run: the state its steps share. */
struct build {
    struct recipe *r;
    const struct build_opts *o;
    struct progress prog;
    struct jobserver js;
    char *logs, *tmproot; /* OUT/logs, CACHE/tmp */
    size_t *order;        /* stage indexes in start order */
    struct buf pub;       /* OUT/.keys once read (publish_same) */
    struct trash trash;
    int result;           /* the exit code so far */
    int running;          /* stages running */
    bool implicit_busy;   /* the job slot that needs no token is taken */
    /* Tokens of stages that just ended, kept for the stages they let
     * start: back in the pipe, a running make would read them first (it
     * blocks on the pipe; the engine only polls) and the next stage in the
     * start order would wait for one of its jobs to end. */
    int spare;
    bool stop;            /* no new stage starts (fail fast, a failed fork) */
    bool told_wait;       /* say_waiting said it */
    const char *first_failed;
};

/* Where a stage's last build time is kept: CACHE/times/RECIPE/STAGE. The
 * estimate of the time left comes from these; a key change (new code, new
 * settings) still finds the time of the stage's previous build. */
static char *stage_time_path(const char *cache, const char *recipe, const char *stage)
{
    return xasprintf("%s/times/%s/%s", cache, recipe, stage);
}

static double stage_time_read(const char *cache, const char *recipe, const char *stage)
{
    char *path = stage_time_path(cache, recipe, stage), *text = NULL;
    double t = -1;
    if (read_file(path, &text, NULL) == 0) {
        char *end;
        t = strtod(text, &end);
        if (end == text || t < 0)
            t = -1;
    }
    free(text);
    free(path);
    return t;
}

/* "WALL CPU": the reader takes the first figure; the CPU seconds are for
 * people and bench/ (they vary less with the machine's load than WALL). */
static void stage_time_write(const char *cache, const char *recipe, const char *stage, double t,
                             double cpu)
{
    char *path = stage_time_path(cache, recipe, stage);
    char *dir = xasprintf("%s/times/%s", cache, recipe);
    char *text = xasprintf("%.1f %.1f\n", t, cpu);
    if (mkdir_p(dir, 0755) == 0)
        write_file_atomic(path, text, strlen(text), 0644);
    free(text);
    free(dir);
    free(path);
}

/* Seconds left: the longest chain through the stages not yet done, each
 * taking what it took last time (less what a running one has had). -1 when
 * a stage on the way has no earlier time. Stages are in graph order. */
static double time_left(const struct progress *p, const struct recipe *r, double now)
{
    double *finish = xcalloc(r->nstages ? r->nstages : 1, sizeof *finish), left = 0;
    bool known = true;
    for (size_t i = 0; i < r->nstages; i++) {
        const struct stage *st = r->stages[i];
        if (!st->wanted || st->state == ST_DONE || st->state == ST_FAILED ||
            st->state == ST_SKIPPED || st->state == ST_BLOCKED)
            continue;
        double start = 0;
        for (size_t d = 0; d < st->deps.n; d++)
            if (finish[st->dep_idx[d]] > start)
                start = finish[st->dep_idx[d]];
        double e = p->expect[i];
        if (e < 0) {
            known = false;
            e = 0;
        }
        if (st->state == ST_RUNNING)
            e = e > now - st->t_start ? e - (now - st->t_start) : 0;
        finish[i] = start + e;
        if (finish[i] > left)
            left = finish[i];
    }
    free(finish);
    return known ? left : -1;
}

/* A stage this recipe has no earlier time for: its kind's rough cold cost
 * (stage.h, cost_hint). Only the order matters: a first build starts the
 * longest chain first (the kernel before GRUB), which decides its end when
 * there are fewer job slots than ready stages. */
static double stage_cost(const struct progress *p, const struct recipe *r, size_t i)
{
    if (p->expect[i] >= 0)
        return p->expect[i];
    const struct stage_kind *k = r->stages[i]->kind;
    return k->cost_hint > 0 ? k->cost_hint : 1;
}

/* The order in which ready stages get job slots: the longest chain from the
 * stage to the end of the graph first (its own cost plus the longest of the
 * stages that need it), graph order between equals. Stages are in graph
 * order, so one backward pass gives every chain. */
static void start_order(const struct progress *p, const struct recipe *r, size_t *order)
{
    size_t n = r->nstages;
    double *chain = xcalloc(n ? n : 1, sizeof *chain);
    for (size_t i = n; i-- > 0;) {
        chain[i] += stage_cost(p, r, i);
        const struct stage *st = r->stages[i];
        for (size_t d = 0; d < st->deps.n; d++)
            if (chain[i] > chain[st->dep_idx[d]])
                chain[st->dep_idx[d]] = chain[i];
    }
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && chain[order[j - 1]] < chain[i]; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    free(chain);
}

static void progress_clear(struct progress *p)
{
    for (; p->drawn > 0; p->drawn--)
        fputs("\033[1A\033[2K\r", stderr);
}

static void say(struct progress *p, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void say(struct progress *p, const char *fmt, ...)
{
    progress_clear(p);
    if (!p->tty) {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        fprintf(stderr, "[%02d:%02d:%02d] ", tm.tm_hour, tm.tm_min, tm.tm_sec);
    }
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* The last non-empty line of a log, read from its end only. */
static void last_log_line(const char *path, char *out, size_t outlen)
{
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[2048];
    off_t end = lseek(fd, 0, SEEK_END);
    off_t start = end > (off_t)sizeof buf - 1 ? end - (off_t)sizeof buf + 1 : 0;
    ssize_t n = pread(fd, buf, sizeof buf - 1, start);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = 0;
    char *line = strrchr(buf, '\n');
    line = line ? line + 1 : buf;
    size_t j = 0;
    for (size_t i = 0; line[i] && j + 1 < outlen; i++)
        if ((unsigned char)line[i] >= 32 && line[i] != 127)
            out[j++] = line[i];
    out[j] = 0;
}

/* Why a stage failed, from its log: the last "trillian: error: " line a
 * stage writes with cx_fail (without that prefix and "stage NAME: "), else
 * FALLBACK. New string. */
static char *failure_reason(const char *log, const char *fallback)
{
    char *tail = file_tail(log, 40), *why = NULL;
    for (char *line = tail, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        if (!strncmp(line, "trillian: error: ", 17)) {
            const char *m = line + 17;
            if (!strncmp(m, "stage ", 6) && strstr(m, ": "))
                m = strstr(m, ": ") + 2;
            free(why);
            why = xstrdup(m);
        }
    }
    free(tail);
    return why ? why : xstrdup(fallback);
}

/* Why a stage skipped itself (exit 77), from its log: its last line that is
 * neither a command ("$ ...") nor Trillian's own ("trillian: ..."), i.e.
 * what the stage or its command said. New string. */
static char *skip_reason(const char *log)
{
    char *tail = file_tail(log, 40), *why = NULL;
    for (char *line = tail, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        if (line[strspn(line, " \t\r")] && strncmp(line, "$ ", 2) &&
            strncmp(line, "trillian: ", 10)) {
            free(why);
            why = xstrdup(line);
        }
    }
    free(tail);
    return why ? why : xstrdup("exit status 77, saying nothing more");
}

/* The failed or skipped stage that keeps ST from running, or NULL. */
static const struct stage *blocker_of(const struct recipe *r, const struct stage *st)
{
    for (size_t d = 0; d < st->deps.n; d++) {
        const struct stage *ds = r->stages[st->dep_idx[d]];
        if (ds->state == ST_FAILED || ds->state == ST_SKIPPED)
            return ds;
        if (ds->state == ST_BLOCKED)
            return ds->blocker;
    }
    return NULL;
}

static void set_why(struct stage *st, char *why)
{
    free(st->why);
    st->why = why;
}

/* The first running stage from index I on (r->nstages if none), with its
 * log's last line in LAST. */
static size_t next_running(const struct recipe *r, const char *logs, size_t i, char *last,
                           size_t lastlen)
{
    for (; i < r->nstages && r->stages[i]->state != ST_RUNNING; i++)
        ;
    if (i < r->nstages) {
        char *log = xasprintf("%s/%s.log", logs, r->stages[i]->name);
        last_log_line(log, last, lastlen);
        free(log);
    }
    return i;
}

/* Not on a terminal (a CI log, a pipe): every p->interval seconds, a line
 * per running stage with its elapsed time and its log's last line. */
static void progress_beat(struct progress *p, struct recipe *r, const char *logs)
{
    double now = now_seconds();
    if (now - p->last_beat < p->interval)
        return;
    p->last_beat = now;
    char last[200];
    for (size_t i = 0; (i = next_running(r, logs, i, last, sizeof last)) < r->nstages; i++)
        say(p, "%s: running for %.0f s: %s", r->stages[i]->name, now - r->stages[i]->t_start,
            last);
    fflush(stderr);
}

static void progress_draw(struct progress *p, struct recipe *r, const char *logs)
{
    if (!p->tty) {
        progress_beat(p, r, logs);
        return;
    }
    progress_clear(p);
    struct winsize ws;
    int width = ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
    double now = now_seconds();
    size_t ndone = 0, nwanted = 0;
    for (size_t i = 0; i < r->nstages; i++) {
        nwanted += r->stages[i]->wanted;
        ndone += r->stages[i]->wanted && r->stages[i]->state == ST_DONE;
    }
    double left = time_left(p, r, now);
    char eta[64] = "no earlier build to estimate from";
    const char *from = p->estimated ? "estimate" : "last build's times";
    if (left >= 0 && left < 120)
        snprintf(eta, sizeof eta, "about %.0f s left (%s)", left, from);
    else if (left >= 0)
        snprintf(eta, sizeof eta, "about %.0f min left (%s)", left / 60 + 0.5, from);
    long el = (long)(now - p->t0);
    fprintf(stderr, "[%zu/%zu stages] %ld:%02ld elapsed, %s\n", ndone, nwanted, el / 60,
            el % 60, eta);
    p->drawn++;
    char last[512];
    for (size_t i = 0; (i = next_running(r, logs, i, last, sizeof last)) < r->nstages; i++) {
        struct stage *st = r->stages[i];
        char head[128];
        int hl = snprintf(head, sizeof head, "  %-16s %5.0fs  ", st->name, now - st->t_start);
        int room = width - hl - 1;
        fprintf(stderr, "%s%.*s\n", head, room > 0 ? room : 0, last);
        p->drawn++;
    }
    fflush(stderr);
}

/* ---- outputs ----------------------------------------------------------- */

static bool outputs_present(const struct stage *st, const char *outdir, struct buf *missing)
{
    bool ok = true;
    for (size_t i = 0; i < st->outputs.n; i++) {
        char *p = path_join(outdir, st->outputs.v[i]);
        if (!path_exists(p)) {
            buf_printf(missing, "%s%s", ok ? "" : ", ", st->outputs.v[i]);
            ok = false;
        }
        free(p);
    }
    return ok;
}

/* The failure block: what failed and why, the stage's own error line
 * (named first: a long command output must not push it out of the tail),
 * the last command, the log and its last lines. */
static void report_failure(struct progress *p, const struct stage *st, const char *log,
                           const char *why)
{
    char *cmd = runner_last_command(log);
    char *tail = file_tail(log, 20);
    char *err = failure_reason(log, why);
    progress_clear(p);
    fprintf(stderr, "\ntrillian: stage '%s' failed: %s\n", st->name, why);
    if (strcmp(err, why) != 0)
        fprintf(stderr, "  error: %s\n", err);
    free(err);
    if (cmd)
        fprintf(stderr, "  last command: %s\n", cmd);
    fprintf(stderr, "  log: %s\n  last lines of the log:\n", log);
    for (char *line = tail; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        fprintf(stderr, "  | %s\n", line);
        line = nl ? nl + 1 : NULL;
    }
    fputc('\n', stderr);
    free(cmd);
    free(tail);
}

/* Reuses ST's cache entry if it has one that is still what its build made:
 * true when ST is then done (or failed to publish). An entry whose files
 * changed is moved aside, said in one line, and ST is built again (false). */
static bool try_reuse(struct build *b, struct stage *st)
{
    const struct build_opts *o = b->o;
    struct progress *p = &b->prog;
    if (st->forced || st->kind->uncached || !cache_has(o->cache, st->key))
        return false;
    struct buf why = BUF_INIT;
    if (cache_verify(o->cache, st->key, false, &why) > 0) {
        char *to = cache_quarantine(o->cache, st->key);
        say(p, "%s: cache entry %.12s changed after it was built (%s); %s%s; building it again",
            st->name, st->key, why.p, to ? "moved aside to " : "cannot move it aside: ",
            to ? to : strerror(errno));
        free(to);
        buf_free(&why);
        return false;
    }
    st->t_start = st->t_end = now_seconds();
    char *entry = cache_entry(o->cache, st->key);
    free(st->outdir);
    st->outdir = path_join(entry, "out");
    cache_touch(o->cache, st->key);
    if (o->only_check) { /* trillian boot reads the cache entry; OUT is left alone */
        free(entry);
        st->state = ST_DONE;
        st->cached = true;
        say(p, "%s: cached", st->name);
        return true;
    }
    if (publish_same(&b->pub, o->out, st)) {
        char *dir = path_join(o->out, st->name);
        bool intact = cache_published_intact(o->cache, st->key, dir, &why);
        if (intact) {
            /* OUT already holds exactly this entry: a no-op */
            free(dir);
            free(entry);
            st->state = ST_DONE;
            st->cached = true;
            say(p, "%s: cached", st->name);
            return true;
        }
        say(p, "%s: %s/%s since it was published; publishing it again from the cache",
            st->name, dir, why.n ? why.p : "changed");
        free(dir);
    }
    buf_free(&why);
    char *clog = path_join(entry, "log");
    char *olog = xasprintf("%s/%s.log", b->logs, st->name);
    unlink(olog);
    copy_file(clog, olog); /* not a link: the next run truncates OUT's log */
    free(clog);
    free(olog);
    free(entry);
    if (publish_stage(o->out, st, st->outdir) < 0) {
        set_why(st, xasprintf("cannot publish its outputs into %s: %s (the cache keeps "
                              "them: free space or choose another -o)", o->out, strerror(errno)));
        say(p, "%s: %s", st->name, st->why);
        st->state = ST_FAILED;
        b->result = 1;
    } else {
        st->state = ST_DONE;
        st->cached = true;
        cache_save_inputs(o->cache, st);
        say(p, "%s: cached", st->name);
    }
    return true;
}

/* ---- the loop ---------------------------------------------------------- */

/* Fail fast: after FAILED failed, no stage starts; the running ones are
 * let finish because a finished stage is cached and the next build will not
 * redo it (the toolchain can take half an hour), and Ctrl-C is safe since
 * the cache only ever holds complete entries. Said once, so a long wait is
 * not a silent one. */
static void say_waiting(struct progress *p, const struct recipe *r, const char *failed)
{
    struct buf names = BUF_INIT;
    size_t n = 0;
    for (size_t i = 0; i < r->nstages; i++)
        if (r->stages[i]->state == ST_RUNNING)
            buf_printf(&names, "%s%s", n++ ? ", " : "", r->stages[i]->name);
    say(p, "trillian: '%s' failed, so no new stage starts (--keep-going would go on with "
        "stages that do not need it); waiting for %zu running stage%s (%s) to finish, so "
        "%s cached for the next build; Ctrl-C stops %s at once and is safe",
        failed, n, n == 1 ? "" : "s", names.p, n == 1 ? "its result is" : "their results are",
        n == 1 ? "it" : "them");
    buf_free(&names);
}


static void mark_wanted(struct recipe *r, struct stage *st)
{
    if (st->wanted)
        return;
    st->wanted = true;
    for (size_t d = 0; d < st->deps.n; d++)
        mark_wanted(r, r->stages[st->dep_idx[d]]);
}

static void stop_children(struct recipe *r)
{
    for (size_t i = 0; i < r->nstages; i++)
        if (r->stages[i]->state == ST_RUNNING)
            kill(-r->stages[i]->pid, SIGTERM);
    double deadline = now_seconds() + 10;
    for (;;) {
        bool any = false;
        for (size_t i = 0; i < r->nstages; i++) {
            struct stage *st = r->stages[i];
            if (st->state != ST_RUNNING)
                continue;
            int ws;
            pid_t w = waitpid(st->pid, &ws, WNOHANG);
            if (w == st->pid || (w < 0 && errno == ECHILD)) {
                kill(-st->pid, SIGKILL); /* stragglers in its group */
                st->state = ST_FAILED;
                st->t_end = now_seconds();
                set_why(st, xstrdup("interrupted"));
                rm_rf(st->tmp);
            } else {
                any = true;
                if (now_seconds() > deadline)
                    kill(-st->pid, SIGKILL);
            }
        }
        if (!any)
            break;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Marks the stages --force (and `trillian check`) force and those the build
 * wants; 2, a usage error, when --force names no stage. */
static int build_select(struct recipe *r, const struct build_opts *o)
{
    for (size_t i = 0; i < o->force.n; i++)
        if (!recipe_stage(r, o->force.v[i])) {
            fprintf(stderr, "trillian: --force %s: the recipe has no stage of that name "
                    "(`trillian plan` lists them)\n", o->force.v[i]);
            return 2;
        }
    for (size_t i = 0; i < r->nstages; i++) {
        struct stage *st = r->stages[i];
        st->lock_fd = st->keep_fd = -1;
        /* `trillian check` reruns checks that passed before */
        bool check = strcmp(st->section, "bootcheck") == 0 &&
                     (!o->only_check || strcmp(st->name, o->only_check) == 0);
        st->forced = strlist_contains(&o->force, st->name) || (o->checks_only && check);
        for (size_t d = 0; d < st->deps.n && !st->forced; d++)
            st->forced = r->stages[st->dep_idx[d]]->forced;
        if (!o->checks_only || check)
            mark_wanted(r, st);
    }
    return 0;
}

/* The cache first, with a file written (root passes every access() test,
 * not a read-only mount): OUT is not created for a build that cannot run.
 * Both are usage errors (2): nothing ran. */
static int build_dirs(struct build *b)
{
    const struct build_opts *o = b->o;
    char *probe = xasprintf("%s/.probe.%ld", b->tmproot, (long)getpid());
    int pfd = mkdir_p(b->tmproot, 0755) < 0 ? -1
              : open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (pfd < 0) {
        fprintf(stderr, "trillian: cannot write in the cache %s (%s: %s); choose another "
                "--cache or TRILLIAN_CACHE\n", o->cache, b->tmproot, strerror(errno));
        free(probe);
        return 2;
    }
    close(pfd);
    unlink(probe);
    free(probe);
    if (mkdir_p(b->logs, 0755) < 0) {
        fprintf(stderr, "trillian: cannot create the output directory %s (%s: %s); choose "
                "another -o\n", o->out, b->logs, strerror(errno));
        return 2;
    }
    cache_sweep_tmp(o->cache);
    return 0;
}

static int signals_catch(void)
{
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
    sigaction(SIGCHLD, &sa, NULL);
    return 0;
}

static void signals_restore(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    close(sig_pipe[0]);
    close(sig_pipe[1]);
    sig_pipe[0] = sig_pipe[1] = -1;
}

static void progress_init(struct build *b)
{
    struct progress *p = &b->prog;
    struct recipe *r = b->r;
    *p = (struct progress){.tty = isatty(2) && getenv("TERM") && strcmp(getenv("TERM"), "dumb"),
                           .t0 = now_seconds(), .interval = 60, .cache = b->o->cache,
                           .recipe = r->name};
    const char *iv = getenv("TRILLIAN_PROGRESS_INTERVAL");
    if (iv && atof(iv) > 0)
        p->interval = atof(iv);
    p->last_beat = p->t0;
    r->t_build = p->t0;
    p->expect = xcalloc(r->nstages ? r->nstages : 1, sizeof *p->expect);
    for (size_t i = 0; i < r->nstages; i++)
        p->expect[i] = stage_time_read(b->o->cache, r->name, r->stages[i]->name);
    b->order = xcalloc(r->nstages ? r->nstages : 1, sizeof *b->order);
    start_order(p, r, b->order);
}

static void say_duration(char *out, size_t n, double secs)
{
    if (secs < 120)
        snprintf(out, n, "%.0f s", secs);
    else
        snprintf(out, n, "%.0f min", secs / 60);
}

/* Stages this cache has no time for: before anything starts, roughly how
 * long they will take here (cold_estimate.h), and the faster way. The
 * progress line's estimate and the start order use the same figures. */
static void first_build_estimate(struct build *b)
{
    struct recipe *r = b->r;
    struct progress *p = &b->prog;
    bool *build = xcalloc(r->nstages ? r->nstages : 1, sizeof *build);
    for (size_t i = 0; i < r->nstages; i++) {
        const struct stage *st = r->stages[i];
        build[i] = st->wanted && !st->short_cut &&
                   (st->forced || st->kind->uncached || !cache_has(b->o->cache, st->key));
    }
    struct cold_estimate e;
    struct buf why = BUF_INIT;
    int rc = cold_estimate(r, build, p->expect, b->o->jobs, &e, &why);
    free(build);
    if (rc < 0)
        say(p, "no estimate of this first build's time: %s", why.p);
    buf_free(&why);
    if (rc <= 0)
        return;
    char total[32];
    say_duration(total, sizeof total, e.seconds);
    say(p, "first build of %zu stage%s here: roughly %s on this machine (%d job%s), from the CPU "
        "seconds a cold build of them took on a machine whose probe compile took %.2f s; "
        "here it took %.2f s", e.nnew, e.nnew == 1 ? "" : "s", total, e.jobs,
        e.jobs == 1 ? "" : "s", e.probe_ref, e.probe_here);
    if (e.nknown < e.nnew)
        say(p, "%zu of them %s no recorded cost and %s not counted", e.nnew - e.nknown,
            e.nnew - e.nknown == 1 ? "has" : "have", e.nnew - e.nknown == 1 ? "is" : "are");
    if (!subst_active(b->o->subst))
        say(p, "faster: --substituter URL|DIR downloads stages a `trillian publish` made "
            "instead of building them (docs/publish.md)");
    else
        say(p, "the substituters offered none of these stages: they are built here");
    for (size_t i = 0; i < r->nstages; i++)
        if (e.stage_secs[i] > 0) {
            p->expect[i] = e.stage_secs[i];
            p->estimated = true;
        }
    start_order(p, r, b->order);
    cold_estimate_free(&e);
}

/* A failure the build stops for, unless --keep-going. */
static void build_failed(struct build *b, const struct stage *st)
{
    if (!b->o->keep_going)
        b->stop = true;
    if (!b->first_failed)
        b->first_failed = st->name;
}

enum claim { CLAIMED, CLAIM_WAIT, CLAIM_REUSED };

/* Takes ST's cache locks: one builder per key, so another build on this
 * cache that builds it now is waited for and its entry reused (CLAIM_REUSED
 * once it is there); and CACHE/keep/RECIPE/STAGE (a kernel's O= tree),
 * which serves every key of the stage, one build at a time. */
static enum claim claim_locks(struct build *b, struct stage *st)
{
    const char *cache = b->o->cache;
    pid_t holder;
    if (st->kind->uncached)
        return CLAIMED;
    if (st->lock_fd < 0) {
        st->lock_fd = cache_lock(cache, st->key, &holder);
        if (st->lock_fd < 0 && holder > 0) {
            if (!st->waiting)
                say(&b->prog, "waiting for %s, being built by pid %ld", st->name, (long)holder);
            st->waiting = true;
            return CLAIM_WAIT;
        }
        st->waiting = false;
        if (try_reuse(b, st)) {
            cache_unlock(st->lock_fd);
            st->lock_fd = -1;
            return CLAIM_REUSED;
        }
    }
    if (st->keep_fd < 0) {
        char *name = xasprintf("keep.%s.%s", b->r->name, st->name);
        st->keep_fd = cache_lock(cache, name, &holder);
        free(name);
        if (st->keep_fd < 0 && holder > 0) {
            if (!st->waiting)
                say(&b->prog, "waiting for %s's build directory, used by pid %ld", st->name,
                    (long)holder);
            st->waiting = true;
            return CLAIM_WAIT;
        }
        st->waiting = false;
    }
    return CLAIMED;
}

/* A job slot for ST: the implicit one (no token), else a spare token or one
 * from the jobserver; false when none is free. */
static bool slot_take(struct build *b, struct stage *st)
{
    st->holds_token = false;
    if (!b->implicit_busy) {
        b->implicit_busy = true;
        return true;
    }
    if (b->spare > 0)
        b->spare--;
    else if (!jobserver_take(&b->js))
        return false;
    st->holds_token = true;
    return true;
}

/* Starts ST's build in CACHE/tmp/KEY.PID (samurai's jobstart); false if it
 * could not fork (ST failed). */
static bool job_start(struct build *b, struct stage *st)
{
    free(st->tmp);
    st->tmp = xasprintf("%s/%.40s.%ld", b->tmproot, st->key, (long)getpid());
    /* a stage never runs in what an earlier attempt left there */
    bool clear = rm_rf(st->tmp) == 0;
    char *log = xasprintf("%s/%s.log", b->logs, st->name);
    char *keep = cache_keep_dir(b->o->cache, b->r->name, st->name);
    st->t_start = now_seconds();
    st->pid = clear ? runner_start(st, b->o, &b->js, log, keep) : -1;
    free(keep);
    free(log);
    if (st->pid < 0) {
        int e = errno;
        cache_unlock(st->lock_fd);
        cache_unlock(st->keep_fd);
        st->lock_fd = st->keep_fd = -1;
        set_why(st, clear ? xasprintf("cannot fork: %s", strerror(e))
                          : xasprintf("cannot clear its build directory %s: %s (remove it by "
                                      "hand)", st->tmp, strerror(e)));
        say(&b->prog, "%s: %s", st->name, st->why);
        st->state = ST_FAILED;
        b->result = 1;
        build_failed(b, st);
        if (st->holds_token)
            jobserver_give(&b->js);
        else
            b->implicit_busy = false;
        return false;
    }
    st->state = ST_RUNNING;
    b->running++;
    say(&b->prog, "%s: started%s", st->name, st->forced ? " (forced)" : "");
    return true;
}

static void want_top_down(struct build *b, struct stage *st);

/* Moves ST on if it can: blocked by a failed need, reused from the cache,
 * or started. True when that may let another stage move. */
static bool stage_step(struct build *b, struct stage *st)
{
    const struct recipe *r = b->r;
    if (st->state != ST_PENDING || !st->wanted)
        return false;
    bool ready = true;
    for (size_t d = 0; d < st->deps.n; d++)
        ready &= r->stages[st->dep_idx[d]]->state == ST_DONE;
    if ((st->blocker = blocker_of(r, st))) {
        st->state = ST_BLOCKED;
        say(&b->prog, "%s: not run: blocked by '%s' (%s)", st->name, st->blocker->name,
            st->blocker->state == ST_SKIPPED ? "skipped" : "failed");
        return true;
    }
    if (!ready && !st->short_cut)
        return false;
    if (try_reuse(b, st))
        return true;
    if (st->short_cut) { /* its entry went bad since: it needs its inputs after all */
        st->short_cut = false;
        for (size_t d = 0; d < st->deps.n; d++)
            want_top_down(b, r->stages[st->dep_idx[d]]);
        return true;
    }
    /* A slot first, then the key: a stage queued for a slot holds no lock,
     * so another build on this cache with a slot free builds it meanwhile
     * (this one then waits for it and reuses its entry). Held while
     * queued, a stage two builds both need waited for this build's others. */
    if (!slot_take(b, st))
        return false;
    enum claim c = claim_locks(b, st);
    if (c != CLAIMED) {
        if (st->holds_token)
            b->spare++; /* start_ready hands spare tokens back */
        else
            b->implicit_busy = false;
        st->holds_token = false;
        return c == CLAIM_REUSED;
    }
    return job_start(b, st);
}

/* ---- substituters: top down ----------------------------------------------
 * With substituters, a build wants only what it needs: from the stages
 * nothing else needs (the images, the boot checks) down, stopping at a
 * stage whose entry is in the cache or comes from a substituter, whose
 * inputs it then does not need (a substituted disk needs no toolchain). */

static bool locally_intact(const struct build_opts *o, const struct stage *st)
{
    if (st->forced || !subst_eligible(st) || !cache_has(o->cache, st->key))
        return false;
    struct buf why = BUF_INIT;
    bool ok = cache_verify(o->cache, st->key, false, &why) == 0;
    buf_free(&why);
    return ok;
}

/* ST's entry from a substituter, under its key's lock (a build that holds
 * it builds the stage: this one waits for it in the loop, as ever). */
static bool substitute_one(struct build *b, struct stage *st)
{
    const struct build_opts *o = b->o;
    if (st->forced || !subst_eligible(st))
        return false;
    pid_t holder;
    int fd = cache_lock(o->cache, st->key, &holder);
    if (fd < 0 && holder > 0)
        return false;
    progress_clear(&b->prog);
    double t0 = now_seconds();
    const char *from = NULL;
    bool ok = subst_fetch(o->subst, st, &from, stderr) == 0;
    cache_unlock(fd);
    if (ok) {
        free(st->subst_from);
        st->subst_from = xstrdup(from);
        say(&b->prog, "%s: substituted from %s in %.1f s", st->name, from, now_seconds() - t0);
    } else {
        say(&b->prog, "%s: building it here", st->name);
    }
    return ok;
}

static void want_top_down(struct build *b, struct stage *st)
{
    if (st->wanted)
        return;
    st->wanted = true;
    if (locally_intact(b->o, st) || substitute_one(b, st)) {
        st->short_cut = true;
        return;
    }
    for (size_t d = 0; d < st->deps.n; d++)
        want_top_down(b, b->r->stages[st->dep_idx[d]]);
}

static void substitute_select(struct build *b)
{
    struct recipe *r = b->r;
    if (!subst_active(b->o->subst))
        return;
    bool *root = xcalloc(r->nstages ? r->nstages : 1, sizeof *root);
    for (size_t i = 0; i < r->nstages; i++)
        root[i] = r->stages[i]->wanted;
    for (size_t i = 0; i < r->nstages; i++)
        for (size_t d = 0; r->stages[i]->wanted && d < r->stages[i]->deps.n; d++)
            root[r->stages[i]->dep_idx[d]] = false;
    for (size_t i = 0; i < r->nstages; i++)
        r->stages[i]->wanted = false;
    for (size_t i = r->nstages; i-- > 0;)
        if (root[i])
            want_top_down(b, r->stages[i]);
    free(root);
}

/* Starts what can start, in start order, until a pass moves nothing. */
static void start_ready(struct build *b)
{
    bool progressed = true;
    while (progressed && !b->stop && !got_signal) {
        progressed = false;
        for (size_t oi = 0; oi < b->r->nstages; oi++)
            progressed |= stage_step(b, b->r->stages[b->order[oi]]);
    }
    for (; b->spare > 0; b->spare--)
        jobserver_give(&b->js);
}

/* Keeps what a finished job made (OUT, its tmp's out/): in the cache and
 * published into OUT; only in OUT for an uncached kind or a failure its
 * kind publishes. CODE as the job ended; -1 when keeping it failed. */
static int job_store(struct build *b, struct stage *st, const char *out, const char *log,
                     int code)
{
    const struct build_opts *o = b->o;
    if (st->kind->uncached || (code != 0 && st->kind->publish_failed)) {
        /* e.g. a failed boot check: its transcript belongs in OUT */
        if (!o->only_check)
            publish_stage(o->out, st, out);
        st->outdir = path_join(o->out, st->name);
        rm_rf(st->tmp);
        return code;
    }
    if (code != 0)
        return code;
    char *clog = path_join(st->tmp, "log");
    copy_file(log, clog);
    free(clog);
    if (cache_commit(o->cache, st->tmp, st->key) < 0) {
        set_why(st, xasprintf("cannot store its outputs in the cache %s: %s", o->cache,
                              strerror(errno)));
        say(&b->prog, "%s: %s", st->name, st->why);
        return -1;
    }
    char *entry = cache_entry(o->cache, st->key);
    st->outdir = path_join(entry, "out");
    free(entry);
    cache_save_inputs(o->cache, st);
    if (!o->only_check && publish_stage(o->out, st, st->outdir) < 0) {
        set_why(st, xasprintf("cannot publish its outputs into %s: %s (the cache keeps "
                              "them: free space or choose another -o)", o->out, strerror(errno)));
        say(&b->prog, "%s: %s", st->name, st->why);
        return -1;
    }
    return 0;
}

/* ST's state from how its job ended: done, skipped (exit 77) or failed,
 * and with a failure the build's exit code and the fail-fast stop. */
static void job_verdict(struct build *b, struct stage *st, const char *log, int code)
{
    if (code == 0) {
        st->state = ST_DONE;
        stage_time_write(b->o->cache, b->r->name, st->name, st->t_end - st->t_start, st->cpu);
        say(&b->prog, "%s: done in %.1f s (CPU %.1f s)", st->name, st->t_end - st->t_start,
            st->cpu);
        return;
    }
    if (code == STAGE_SKIPPED) {
        st->state = ST_SKIPPED;
        set_why(st, skip_reason(log));
        say(&b->prog, "%s: SKIPPED: %s", st->name, st->why);
        return;
    }
    st->state = ST_FAILED;
    if (code > 0) {
        char *status = code > 128 ? xasprintf("killed by signal %d", code - 128)
                                  : xasprintf("exit status %d", code);
        report_failure(&b->prog, st, log, status);
        set_why(st, failure_reason(log, status));
        free(status);
    }
    int want = st->kind->fail_exit ? st->kind->fail_exit : 1;
    if (b->result == 0 || (b->result == 3 && want == 1))
        b->result = want;
    build_failed(b, st);
}

/* ST's job ended with wait status WS (samurai's jobdone): its slot is
 * freed, its outputs checked and kept, its state set, its locks let go. */
static void job_done(struct build *b, struct stage *st, int ws, const struct rusage *ru)
{
    kill(-st->pid, SIGKILL); /* nothing of a finished stage may linger */
    b->running--;
    st->t_end = now_seconds();
    st->cpu = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
              (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
    if (st->holds_token)
        b->spare++;
    else
        b->implicit_busy = false;
    int code = runner_status(ws);
    char *log = xasprintf("%s/%s.log", b->logs, st->name);
    char *out = path_join(st->tmp, "out");
    char *work = path_join(st->tmp, "work");
    trash_remove_behind(&b->trash, work, b->tmproot);
    free(work);
    struct buf missing = BUF_INIT;
    if (code == 0 && !outputs_present(st, out, &missing)) {
        set_why(st, xasprintf("it did not produce its declared output %s (kind %s)",
                              missing.p, st->kind->name));
        report_failure(&b->prog, st, log, st->why);
        code = -1;
    }
    buf_free(&missing);
    code = job_store(b, st, out, log, code);
    job_verdict(b, st, log, code);
    if (st->state != ST_DONE)
        rm_rf(st->tmp);
    cache_unlock(st->lock_fd); /* after the commit: a waiting build reuses it */
    cache_unlock(st->keep_fd);
    st->lock_fd = st->keep_fd = -1;
    free(out);
    free(log);
}

/* Waits for a child to end, a signal or 200 ms (the progress lines), then
 * handles every child that ended. */
static void reap(struct build *b)
{
    struct pollfd pfd = {.fd = sig_pipe[0], .events = POLLIN};
    poll(&pfd, 1, 200);
    char drain[16];
    while (read(sig_pipe[0], drain, sizeof drain) > 0)
        ;
    int ws;
    pid_t pid;
    struct rusage ru;
    while ((pid = wait4(-1, &ws, WNOHANG, &ru)) > 0) {
        struct stage *st = NULL;
        for (size_t i = 0; i < b->r->nstages; i++)
            if (b->r->stages[i]->state == ST_RUNNING && b->r->stages[i]->pid == pid)
                st = b->r->stages[i];
        if (st)
            job_done(b, st, ws, &ru);
        else
            trash_reaped(&b->trash, pid);
    }
    if (b->stop && !b->told_wait && b->running > 0 && b->first_failed && !got_signal) {
        b->told_wait = true;
        say_waiting(&b->prog, b->r, b->first_failed);
    }
}

/* Whether a stage waits for another build's lock: the loop goes on for it
 * with nothing running. */
static bool any_waiting(const struct recipe *r)
{
    bool waiting = false;
    for (size_t i = 0; i < r->nstages; i++)
        waiting |= r->stages[i]->waiting && r->stages[i]->state == ST_PENDING;
    return waiting;
}

/* After the loop: stops the running stages if a signal came, restores the
 * signals, says which never-started stages were blocked, and records what
 * OUT now holds. */
static void build_finish(struct build *b)
{
    struct recipe *r = b->r;
    progress_clear(&b->prog);
    trash_wait(&b->trash);
    int sig = got_signal;
    if (sig) {
        fprintf(stderr, "trillian: interrupted (signal %d); stopping %d running stage%s\n", sig,
                b->running, b->running == 1 ? "" : "s");
        stop_children(r);
        b->result = 130;
    }
    signals_restore();
    jobserver_close(&b->js);

    /* Stages still pending were never started: blocked if a stage they
     * need failed or was skipped, else cut off by the stop (or signal). */
    for (size_t i = 0; i < r->nstages && !sig; i++) {
        struct stage *st = r->stages[i];
        if (st->wanted && st->state == ST_PENDING && (st->blocker = blocker_of(r, st)))
            st->state = ST_BLOCKED;
    }
    publish_save_keys(r, b->o->out);
}

/* The build record and the last lines: stages, boot checks, images, the
 * verdict. */
static void build_summarize(const struct build *b, double took)
{
    const struct build_opts *o = b->o;
    if (manifest_write(b->r, o, b->result) < 0)
        fprintf(stderr, "trillian: cannot write %s/manifest.json or SHA256SUMS: %s\n", o->out,
                strerror(errno));
    else
        report_write(o->out); /* OUT/report.html and OUT/junit.xml; says why if not */
    key_save_memo();
    if (report_summary(o->out, took, stderr) < 0)
        fprintf(stderr, "trillian: %s in %.1f s; outputs in %s\n", b->result == 0 ? "built" :
                b->result == 130 ? "interrupted" : "FAILED", took, o->out);
}

static void build_free(struct build *b)
{
    free(b->logs);
    free(b->tmproot);
    free(b->prog.expect);
    free(b->order);
    buf_free(&b->pub);
}

int build_run(struct recipe *r, const struct build_opts *o)
{
    keys_compute(r);
    if (build_select(r, o))
        return 2;
    struct build b = {.r = r, .o = o, .logs = path_join(o->out, "logs"),
                      .tmproot = path_join(o->cache, "tmp"), .pub = BUF_INIT};
    int rc = build_dirs(&b);
    if (rc == 0 && jobserver_init(&b.js, o->jobs) < 0) {
        fprintf(stderr, "trillian: cannot set up the jobserver: %s\n", strerror(errno));
        rc = 1;
    } else if (rc == 0 && signals_catch() < 0) {
        jobserver_close(&b.js);
        rc = 1;
    }
    if (rc) {
        build_free(&b);
        return rc;
    }
    progress_init(&b);
    substitute_select(&b);
    if (!o->only_check)
        first_build_estimate(&b);
    for (;;) {
        start_ready(&b);
        if (got_signal || (b.running == 0 && (!any_waiting(r) || b.stop)))
            break;
        progress_draw(&b.prog, r, b.logs);
        reap(&b);
    }
    build_finish(&b);
    double took = now_seconds() - b.prog.t0;
    if (o->only_check) /* trillian boot: no build record, the boot follows */
        key_save_memo();
    else
        build_summarize(&b, took);
    rc = b.result;
    build_free(&b);
    return rc;
}
