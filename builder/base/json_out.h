/* JSON values through json-c, for OUT/manifest.json and the stages'
 * manifests (and the two readers the report needs): strings that stay valid UTF-8 whatever bytes a file name
 * holds, numbers with a fixed number of decimals, one-line entries. */
#ifndef TRILLIAN_JSON_OUT_H
#define TRILLIAN_JSON_OUT_H

#include <json-c/json.h>

#include "util.h"

/* How Trillian writes a document: indented, "key": value, "/" as is. */
#define JSON_FLAGS \
    (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* S as a JSON string, each byte that does not start a well-formed UTF-8
 * sequence replaced by U+FFFD (json-c copies bytes as they are); NULL
 * gives "". */
json_object *json_str(const char *s);
/* The strings of L as an array of json_str. */
json_object *json_strlist(const struct strlist *l);
/* V written with DECIMALS digits after the point ("%.3f"). */
json_object *json_fixed(double v, int decimals);
/* O[KEY] = json_str(S). */
void json_add_str(json_object *o, const char *key, const char *s);
/* O, once complete, prints on one line ({ "a": 1, "b": [ 2 ] }) inside an
 * indented document: one line per entry of a long list. */
void json_one_line(json_object *o);
/* Reading: O[KEY], or NULL when O is NULL or has no KEY. */
json_object *json_member(json_object *o, const char *key);
/* O[KEY] when it is a string, else NULL (the string is O's). */
const char *json_member_str(json_object *o, const char *key);

#endif
