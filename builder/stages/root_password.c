/* See root_password.h. */
#define _GNU_SOURCE
#include "root_password.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sha256.h"

char *root_password_hash(const struct stage_ctx *cx, const char *pw)
{
    char hex[65];
    char *seed = xasprintf("trillian-salt:%s:%s", cx_str(cx, "hostname"), pw);
    sha256_hex(seed, strlen(seed), hex);
    free(seed);
    hex[16] = 0;
    /* the password goes to openssl in a file, never on a command line */
    if (cx_write_in(cx, cx->work, "password", pw, strlen(pw), 0600))
        return NULL;
    char *file = path_join(cx->work, "password");
    const char *argv[] = {"openssl", "passwd", "-6", "-salt", hex, "-in", file, NULL};
    char *out = NULL;
    int rc = cx_capture(cx, argv, &out);
    unlink(file);
    free(file);
    if (rc != 0 || !out || !str_starts(out, "$6$")) {
        free(out);
        cx_fail(cx, "userland.root_password: `openssl passwd -6` failed (is openssl "
                "installed?)");
        return NULL;
    }
    out[strcspn(out, "\r\n")] = 0;
    return out;
}
