/* The stage graph: resolves dependency names, finds cycles and orders the
 * stages so that each comes after everything it depends on. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static size_t index_of(const struct recipe *r, const char *name)
{
    for (size_t i = 0; i < r->nstages; i++)
        if (strcmp(r->stages[i]->name, name) == 0)
            return i;
    return (size_t)-1;
}

enum { WHITE, GREY, BLACK };

/* Depth-first visit; appends to order in post-order. Returns false on a
 * cycle, with the cycle's members on the stack. */
static bool visit(struct recipe *r, size_t i, int *color, size_t *stack, size_t depth,
                  struct stage **order, size_t *norder)
{
    color[i] = GREY;
    stack[depth] = i;
    struct stage *st = r->stages[i];
    for (size_t d = 0; d < st->deps.n; d++) {
        size_t j = st->dep_idx[d];
        if (color[j] == GREY) {
            /* report the cycle from j back to j */
            struct buf b = BUF_INIT;
            size_t from = 0;
            while (stack[from] != j)
                from++;
            for (size_t k = from; k <= depth; k++)
                buf_printf(&b, "%s -> ", r->stages[stack[k]]->name);
            buf_puts(&b, r->stages[j]->name);
            recipe_error(r, st->cfg, st->keypath, "dependency cycle: %s (expected stages to "
                         "form a graph without cycles; check `after`)", b.p);
            buf_free(&b);
            return false;
        }
        if (color[j] == WHITE && !visit(r, j, color, stack, depth + 1, order, norder))
            return false;
    }
    color[i] = BLACK;
    order[(*norder)++] = st;
    return true;
}

int graph_resolve(struct recipe *r)
{
    for (size_t i = 0; i < r->nstages; i++) {
        struct stage *st = r->stages[i];
        free(st->dep_idx);
        st->dep_idx = xcalloc(st->deps.n + 1, sizeof *st->dep_idx);
        for (size_t d = 0; d < st->deps.n; d++) {
            size_t j = index_of(r, st->deps.v[d]);
            if (j == (size_t)-1) {
                recipe_error(r, st->cfg, st->keypath, "unknown stage '%s'", st->deps.v[d]);
                return -1;
            }
            st->dep_idx[d] = j;
        }
    }
    int *color = xcalloc(r->nstages + 1, sizeof *color);
    size_t *stack = xcalloc(r->nstages + 1, sizeof *stack);
    struct stage **order = xcalloc(r->nstages + 1, sizeof *order);
    size_t norder = 0;
    int rc = 0;
    for (size_t i = 0; i < r->nstages && rc == 0; i++)
        if (color[i] == WHITE && !visit(r, i, color, stack, 0, order, &norder))
            rc = -1;
    if (rc == 0) {
        memcpy(r->stages, order, r->nstages * sizeof *order);
        /* indices changed: resolve again against the new order */
        for (size_t i = 0; i < r->nstages; i++)
            for (size_t d = 0; d < r->stages[i]->deps.n; d++)
                r->stages[i]->dep_idx[d] = index_of(r, r->stages[i]->deps.v[d]);
    }
    free(color);
    free(stack);
    free(order);
    return rc;
}
