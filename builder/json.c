/* JSON string escaping for the manifest and JUnit-free reports. */
#include <stdio.h>

#include "util.h"

void json_string(struct buf *b, const char *s)
{
    buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        switch (*p) {
        case '"': buf_puts(b, "\\\""); break;
        case '\\': buf_puts(b, "\\\\"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\r': buf_puts(b, "\\r"); break;
        case '\t': buf_puts(b, "\\t"); break;
        default:
            if (*p < 0x20)
                buf_printf(b, "\\u%04x", *p);
            else
                buf_add(b, p, 1);
        }
    }
    buf_puts(b, "\"");
}
