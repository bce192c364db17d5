/* JSON string escaping for the manifest and JUnit-free reports. */
#include <stdio.h>

#include "util.h"

/* The length of the well-formed UTF-8 sequence at P (RFC 3629: no overlong
 * forms, no surrogates, at most U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p)
{
    size_t n;
    unsigned long c;
    if (*p >= 0xc2 && *p <= 0xdf)
        n = 2, c = *p & 0x1f;
    else if (*p >= 0xe0 && *p <= 0xef)
        n = 3, c = *p & 0x0f;
    else if (*p >= 0xf0 && *p <= 0xf4)
        n = 4, c = *p & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
        (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return n;
}

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
            if (*p < 0x20) {
                buf_printf(b, "\\u%04x", *p);
            } else if (*p < 0x80) {
                buf_add(b, p, 1);
            } else {
                /* JSON is UTF-8: a byte that does not start a well-formed
                 * sequence (a recipe's text, a file name) becomes U+FFFD,
                 * so one stray byte cannot make the manifest unreadable */
                size_t n = utf8_len(p);
                if (n) {
                    buf_add(b, p, n);
                    p += n - 1;
                } else {
                    buf_puts(b, "\\ufffd");
                }
            }
        }
    }
    buf_puts(b, "\"");
}
