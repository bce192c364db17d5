/* What `trillian plan` can tell before anything runs: a boot check whose
 * emulator or firmware is missing (it will skip, or fail), a stage that
 * needs root, one that needs the network. The checks are the ones the
 * stages make at run time, made early, so a user learns in a second what
 * they would otherwise learn an hour into a build. */
#ifndef TRILLIAN_PREDICT_H
#define TRILLIAN_PREDICT_H

#include "engine.h"

enum outcome { PR_SKIP, PR_FAIL, PR_ROOT, PR_NETWORK };
extern const char *const outcome_names[]; /* "skip", "fail", "root", "network" */

struct prediction {
    enum outcome what;
    char *why; /* one line, what to do included */
};
struct predictions {
    struct prediction *v;
    size_t n;
};

/* Appends what is known of stage ST's run to OUT (nothing for a stage
 * that will run as planned). CACHE is the cache directory (downloads). */
void predict_stage(const struct stage *st, const char *cache, struct predictions *out);
void predictions_free(struct predictions *p);
/* Whether the recipe has a stage of SECTION ("bootcheck", "emulators"). */
bool recipe_has_section(const struct recipe *r, const char *section);

#endif
