/* The stage API's writers (stage.h): a stage's small generated files
 * (configs, scripts, version files, its manifest) in one call each, parents
 * made, renamed into place, a failure logged with the path. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_out.h"
#include "stage.h"

int cx_write_in(const struct stage_ctx *cx, const char *dir, const char *rel, const void *data,
                size_t len, mode_t mode)
{
    if (!dir || !rel || !*rel || rel[0] == '/')
        return cx_fail(cx, "internal error: cx_write of '%s' needs a relative path below "
                       "a directory of the stage", rel ? rel : "(null)");
    char *path = path_join(dir, rel), *parent = path_dirname(path);
    int rc = 0;
    if (mkdir_p(parent, 0755) < 0 || write_file_atomic(path, data, len, mode) < 0)
        rc = cx_fail(cx, "cannot write %s: %s", path, strerror(errno));
    free(parent);
    free(path);
    return rc;
}

int cx_write(const struct stage_ctx *cx, const char *rel, const void *data, size_t len)
{
    return cx_write_in(cx, cx->out, rel, data, len, 0644);
}

int cx_write_manifest(const struct stage_ctx *cx, struct json_object *manifest)
{
    const char *text = json_object_to_json_string_ext(manifest, JSON_FLAGS);
    char *doc = xasprintf("%s\n", text);
    int rc = cx_write(cx, "stage-manifest.json", doc, strlen(doc));
    free(doc);
    json_object_put(manifest);
    return rc;
}
