/* A recipe file's bytes before libconfig reads them (engine.h).
 *
 * libconfig hands strings back as C strings, so a NUL in a string is lost
 * without a word: a raw NUL byte cuts the string ("a<NUL>b" reads as "a"),
 * and libconfig 1.5 drops the escape \x00 (or \X00: its scanner takes either
 * case) altogether ("a\x00b" reads as "ab"). `\0` is no escape to libconfig
 * (it stays a backslash and a zero), so it is left alone. A raw NUL outside a
 * string is refused too: a recipe is text, and the line-based @include checks
 * in recipe.c stop reading at the first NUL. The states follow libconfig's
 * scanner (lib/scanner.l): strings, # and // to the end of the line,
 * block comments. */
#include "engine.h"

static bool is_hex_zero_escape(const char *p, const char *end)
{
    return end - p >= 4 && p[0] == '\\' && (p[1] == 'x' || p[1] == 'X') && p[2] == '0' &&
           p[3] == '0';
}

unsigned recipe_text_nul(const char *text, size_t len, bool *raw)
{
    enum { CODE, STRING, LINE_COMMENT, BLOCK_COMMENT } state = CODE;
    const char *p = text, *end = text + len;
    unsigned line = 1;
    for (; p < end; p++) {
        if (*p == 0) {
            *raw = true;
            return line;
        }
        if (*p == '\n')
            line++;
        switch (state) {
        case CODE:
            if (*p == '"')
                state = STRING;
            else if (*p == '#' || (*p == '/' && p + 1 < end && p[1] == '/'))
                state = LINE_COMMENT;
            else if (*p == '/' && p + 1 < end && p[1] == '*')
                state = BLOCK_COMMENT, p++;
            break;
        case STRING:
            if (is_hex_zero_escape(p, end)) {
                *raw = false;
                return line;
            }
            if (*p == '"')
                state = CODE;
            else if (*p == '\\' && p + 1 < end && p[1] != 0) /* \\ and \" are one character */
                line += *++p == '\n';
            break;
        case LINE_COMMENT:
            if (*p == '\n')
                state = CODE;
            break;
        case BLOCK_COMMENT:
            if (*p == '*' && p + 1 < end && p[1] == '/')
                state = CODE, p++;
            break;
        }
    }
    return 0;
}
