/* The first build's time, said before it starts: the stages a build will
 * run that this cache has no kept time for, at the CPU seconds a cold build
 * of the same recipe took on a reference machine (the costs table,
 * recipes/costs/stages, written by bench/stage-costs), scaled by how long
 * this machine takes for the probe compile (recipes/costs/probe.c) that the
 * reference machine timed too. */
#ifndef TRILLIAN_COLD_ESTIMATE_H
#define TRILLIAN_COLD_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"

struct cold_estimate {
    size_t nnew;       /* stages to build with no kept time */
    size_t nknown;     /* of those, with a recorded cost */
    double cpu_ref;    /* their recorded CPU seconds, summed */
    double probe_ref;  /* the probe's CPU seconds on the reference machine */
    double probe_here; /* and on this one */
    double busy;       /* the reference build's CPU seconds / (cores x wall) */
    int jobs;          /* the job slots the estimate divides the work over */
    double seconds;    /* the estimated wall time here */
    double *stage_secs; /* per stage: its estimated wall seconds alone, or -1 */
};

/* Fills E for recipe R's stages for which BUILD[i] is true and KEPT[i] < 0
 * (no time kept in the cache). Returns 1 when there is an estimate, 0 when
 * there is none to make (no such stage, or none of them in the table: the
 * probe is not run then), -1 when the table or the probe failed (one line
 * in WHY). JOBS: the build's job slots. The table is TRILLIAN_COSTS or the
 * data directory's recipes/costs/stages; TRILLIAN_PROBE_SECONDS stands for
 * the probe's figure here (for the tests). */
int cold_estimate(const struct recipe *r, const bool *build, const double *kept, int jobs,
                  struct cold_estimate *e, struct buf *why);
void cold_estimate_free(struct cold_estimate *e);

#endif
