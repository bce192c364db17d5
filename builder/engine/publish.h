/* Publishing a stage's outputs into OUT/STAGE, and OUT/.keys: which entry
 * each OUT/STAGE holds, so a warm rebuild leaves OUT alone. */
#ifndef TRILLIAN_PUBLISH_H
#define TRILLIAN_PUBLISH_H

#include "engine.h"

/* Whether OUT/.keys (read once into PUB) says OUT/STAGE holds ST's key; the
 * caller still checks the files (cache_published_intact). */
bool publish_same(struct buf *pub, const char *outroot, const struct stage *st);

/* Writes OUT/.keys for the stages of R that are done. */
void publish_save_keys(const struct recipe *r, const char *outroot);

/* Publishes the tree SRC as OUT/STAGE: -1 with errno on failure. */
int publish_stage(const char *outroot, const struct stage *st, const char *src);

/* Puts the tree TMP in DST's place in one step (renameat2 RENAME_EXCHANGE;
 * where the file system cannot, the old tree is renamed aside first); the
 * old tree is left at TMP. -1 with errno. */
int publish_swap_in(const char *tmp, const char *dst);

#endif
