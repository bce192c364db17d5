/* One way to apply a patch and say what did not apply (patch_apply.h). */
#define _GNU_SOURCE
#include "patch_apply.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* The file a line of patch's report names, unquoted (new string), or NULL:
 * "patching file F", or the header of a file patch cannot find. */
static char *named_file(const char *line)
{
    if (str_starts(line, "patching file ")) {
        char *f = xstrdup(line + 14);
        size_t n = strlen(f);
        if (n >= 2 && f[0] == '\'' && f[n - 1] == '\'') {
            memmove(f, f + 1, n - 2);
            f[n - 2] = 0;
        }
        return f;
    }
    if (str_starts(line, "|--- ") || str_starts(line, "|+++ ")) {
        const char *f = line + 5, *slash = strchr(f, '/');
        if (slash)
            f = slash + 1;
        return xstrndup(f, strcspn(f, "\t "));
    }
    return NULL;
}

/* What patch says of a file it could not patch. Not "can't find file to
 * patch": the header naming that file comes after it, then "No file to
 * patch" with the name known. */
static bool is_failure(const char *line)
{
    return strstr(line, "FAILED") || strstr(line, "Reversed") ||
           strstr(line, "No file to patch") || strstr(line, "malformed patch") ||
           strstr(line, "Only garbage");
}

int patch_apply(const struct stage_ctx *cx, const char *tree, const char *patch, char **why)
{
    const char *argv[] = {"patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch",
                          "-d", tree, "-i", patch, NULL};
    char *out = NULL;
    *why = NULL;
    int st = cx_capture(cx, argv, &out);
    if (out && out[0])
        cx_log(cx, "%s", out);
    if (st == 0) {
        if (out && strstr(out, "with fuzz"))
            cx_log(cx, "warning: %s applied with fuzz (refresh it)", patch);
        free(out);
        return 0;
    }
    struct buf b = BUF_INIT;
    char *file = NULL;
    for (char *l = out, *nl; l && *l; l = nl ? nl + 1 : NULL) {
        nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        char *f = named_file(l);
        if (f) {
            free(file);
            file = f;
        } else if (is_failure(l)) {
            buf_printf(&b, "%s%s: %s", b.n ? "; " : "", file ? file : "?", l);
        }
    }
    free(file);
    free(out);
    if (b.n)
        *why = buf_detach(&b);
    buf_free(&b);
    return st ? st : 1;
}
