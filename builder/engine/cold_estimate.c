/* The first build's estimate (cold_estimate.h). CPU seconds, not wall
 * seconds, are what the table keeps: a cold build is bound by the CPU, and a
 * stage's CPU seconds move much less with the machine's load than its wall
 * time does (docs/testing.md measured both). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/run_command.h"
#include "cold_estimate.h"

/* Per recipe, the reference machine's probe and how busy its cold build
 * kept the cores; per stage, the CPU seconds it took there. */
struct cost_table {
    struct strlist rname;
    double *probe, *busy;
    size_t nr;
    struct strlist recipe, stage;
    double *cpu;
    size_t n;
};

static void table_free(struct cost_table *t)
{
    strlist_free(&t->rname);
    free(t->probe);
    free(t->busy);
    strlist_free(&t->recipe);
    strlist_free(&t->stage);
    free(t->cpu);
}

static bool positive(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = s ? strtod(s, &end) : 0;
    return s && end != s && !*end && !errno && *v > 0;
}

/* "recipe NAME probe=SECONDS busy=FRACTION" and "stage RECIPE STAGE
 * CPU-SECONDS" lines; '#' to the end of a line is a comment. */
static int table_read(const char *path, struct cost_table *t, struct buf *why)
{
    char *text = NULL;
    if (read_file(path, &text, NULL) < 0) {
        buf_printf(why, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0, line = 0;
    for (char *l = text, *next; l && !rc; l = next) {
        line++;
        next = strchr(l, '\n');
        if (next)
            *next++ = 0;
        char *hash = strchr(l, '#');
        if (hash)
            *hash = 0;
        char *f[6] = {0}, *s2 = NULL;
        int nf = 0;
        for (char *w = strtok_r(l, " \t", &s2); w; w = strtok_r(NULL, " \t", &s2))
            f[nf < 6 ? nf++ : 5] = w;
        if (nf == 0)
            continue;
        double v, w;
        if (!strcmp(f[0], "recipe") && nf == 4 && str_starts(f[2], "probe=") &&
            positive(f[2] + 6, &v) && str_starts(f[3], "busy=") && positive(f[3] + 5, &w) && w <= 1) {
            strlist_push(&t->rname, f[1]);
            t->probe = xrealloc(t->probe, (t->nr + 1) * sizeof *t->probe);
            t->busy = xrealloc(t->busy, (t->nr + 1) * sizeof *t->busy);
            t->probe[t->nr] = v;
            t->busy[t->nr++] = w;
        } else if (!strcmp(f[0], "stage") && nf == 4 && positive(f[3], &v)) {
            strlist_push(&t->recipe, f[1]);
            strlist_push(&t->stage, f[2]);
            t->cpu = xrealloc(t->cpu, (t->n + 1) * sizeof *t->cpu);
            t->cpu[t->n++] = v;
        } else {
            buf_printf(why, "%s:%d: not \"recipe NAME probe=SECONDS busy=FRACTION\" or \"stage "
                       "RECIPE STAGE CPU-SECONDS\"; rewrite it with bench/stage-costs", path, line);
            rc = -1;
        }
    }
    free(text);
    return rc;
}

static double table_cpu(const struct cost_table *t, const char *recipe, const char *stage)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->recipe.v[i], recipe) && !strcmp(t->stage.v[i], stage))
            return t->cpu[i];
    return -1;
}

static double rusage_children(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The probe: the compiler on PROBE_C; its CPU seconds, or -1 (why in WHY). */
static double cold_probe(const char *probe_c, struct buf *why)
{
    /* the compiler the builds' host parts use; the object is thrown away.
     * The least of two runs: noise (another process, a cold page cache)
     * only ever adds time, and one run varied by 15% on an idle machine. */
    const char *argv[] = {"cc", "-O2", "-c", probe_c, "-o", "/dev/null", NULL};
    double best = -1;
    for (int i = 0; i < 2; i++) {
        struct run_command cmd = {.argv = argv, .out = RUN_OUT_NULL, .err = RUN_ERR_NULL};
        double before = rusage_children();
        int rc = run_command(&cmd);
        double cpu = rusage_children() - before;
        if (rc != 0) {
            buf_printf(why, "the probe compile (cc -O2 -c %s) %s", probe_c,
                       rc < 0 ? "could not start" : "failed");
            return -1;
        }
        if (best < 0 || cpu < best)
            best = cpu;
    }
    return best;
}

int cold_estimate(const struct recipe *r, const bool *build, const double *kept, int jobs,
                  struct cold_estimate *e, struct buf *why)
{
    *e = (struct cold_estimate){.jobs = jobs};
    for (size_t i = 0; i < r->nstages; i++)
        e->nnew += build[i] && kept[i] < 0;
    if (!e->nnew)
        return 0;
    const char *env = getenv("TRILLIAN_COSTS");
    char *path = env && *env ? xstrdup(env) : trillian_data_path("recipes/costs/stages");
    struct cost_table t = {0};
    int rc = 0;
    if (!env && !path_exists(path)) { /* a data directory without the table */
        free(path);
        return 0;
    }
    if (table_read(path, &t, why) < 0) {
        rc = -1;
        goto out;
    }
    e->stage_secs = xmalloc(r->nstages * sizeof *e->stage_secs);
    for (size_t i = 0; i < r->nstages; i++) {
        double c = build[i] && kept[i] < 0 ? table_cpu(&t, r->name, r->stages[i]->name) : -1;
        e->stage_secs[i] = c;
        if (c > 0) {
            e->nknown++;
            e->cpu_ref += c;
        }
    }
    size_t ri = 0;
    while (ri < t.nr && strcmp(t.rname.v[ri], r->name))
        ri++;
    if (e->nknown && ri == t.nr) {
        buf_printf(why, "%s: stage costs for %s but no \"recipe %s probe=SECONDS busy=FRACTION\" "
                   "line; rewrite it with bench/stage-costs", path, r->name, r->name);
        rc = -1;
        goto out;
    }
    if (!e->nknown)
        goto out;
    e->probe_ref = t.probe[ri];
    e->busy = t.busy[ri];
    const char *fixed = getenv("TRILLIAN_PROBE_SECONDS");
    if (fixed && *fixed) {
        if (!positive(fixed, &e->probe_here)) {
            buf_printf(why, "TRILLIAN_PROBE_SECONDS=%s is not a positive number of seconds",
                       fixed);
            rc = -1;
            goto out;
        }
    } else {
        char *dir = path_dirname(path), *probe = path_join(dir, "probe.c");
        e->probe_here = cold_probe(probe, why);
        free(probe);
        free(dir);
        if (e->probe_here <= 0) {
            rc = -1;
            goto out;
        }
    }
    /* The work spreads over the job slots as well as it did on the reference
     * machine (busy), and never over more cores than this machine has. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 0 && e->jobs > cores)
        e->jobs = (int)cores;
    if (e->jobs < 1)
        e->jobs = 1;
    double scale = e->probe_here / e->probe_ref, per = scale / (e->jobs * e->busy);
    e->seconds = e->cpu_ref * per;
    for (size_t i = 0; i < r->nstages; i++)
        if (e->stage_secs[i] > 0)
            e->stage_secs[i] *= per;
    rc = 1;
out:
    if (rc != 1) {
        free(e->stage_secs);
        e->stage_secs = NULL;
    }
    table_free(&t);
    free(path);
    return rc;
}

void cold_estimate_free(struct cold_estimate *e)
{
    free(e->stage_secs);
    e->stage_secs = NULL;
}
