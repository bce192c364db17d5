/* JSON values through json-c (json_out.h). */
#include <stdio.h>
#include <stdlib.h>

#include "json_out.h"

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

/* An ASCII byte, or the UTF-8 sequence starting at P: its length, or 0. */
static size_t char_len(const unsigned char *p)
{
    return *p < 0x80 ? 1 : utf8_len(p);
}

json_object *json_str(const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : ""), *q = p;
    size_t n;
    while (*q && (n = char_len(q)) > 0)
        q += n;
    if (!*q) /* the common case: UTF-8 already */
        return json_object_new_string((const char *)p);
    /* JSON is UTF-8: a byte that does not start a well-formed sequence (a
     * recipe's text, a file name) becomes U+FFFD, so one stray byte cannot
     * make the manifest unreadable */
    struct buf b = BUF_INIT;
    buf_add(&b, p, (size_t)(q - p));
    for (; *q; q += n ? n : 1) {
        n = char_len(q);
        if (n)
            buf_add(&b, q, n);
        else
            buf_puts(&b, "\xef\xbf\xbd");
    }
    json_object *o = json_object_new_string(b.p);
    buf_free(&b);
    return o;
}

json_object *json_strlist(const struct strlist *l)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < l->n; i++)
        json_object_array_add(a, json_str(l->v[i]));
    return a;
}

json_object *json_fixed(double v, int decimals)
{
    char text[64];
    snprintf(text, sizeof text, "%.*f", decimals, v);
    return json_object_new_double_s(v, text);
}

void json_add_str(json_object *o, const char *key, const char *s)
{
    json_object_object_add(o, key, json_str(s));
}

void json_one_line(json_object *o)
{
    /* json-c's own hook for a value serialized ahead: the text is kept as
     * the object's user data and printed as is */
    const char *text = json_object_to_json_string_ext(o, JSON_FLAGS & ~JSON_C_TO_STRING_PRETTY);
    json_object_set_serializer(o, json_object_userdata_to_json_string, xstrdup(text),
                               json_object_free_userdata);
}

json_object *json_member(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

const char *json_member_str(json_object *o, const char *key)
{
    json_object *v = json_member(o, key);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}
