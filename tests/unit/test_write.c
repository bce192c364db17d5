/* The stage API's writers (stage_write.c) and the JSON values of json.h: a
 * file written whole with its parents made, a failure reported, and a stage
 * manifest that stays UTF-8 JSON whatever bytes a file name holds. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "base/json_out.h"
#include "stage.h"

static char dir[] = "/tmp/trillian-unit-write-XXXXXX";

static struct stage_ctx ctx(void)
{
    return (struct stage_ctx){.name = "unit", .out = dir, .work = dir};
}

/* Whether the N bytes at S are well-formed UTF-8 (the same rules as
 * json.c's, checked independently: no overlong forms, no surrogates). */
static bool utf8_ok(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                                 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (!len || i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
        if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0) ||
            (c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] >= 0x90))
            return false;
        i += len;
    }
    return true;
}

static void test_write_makes_parents(void **state)
{
    (void)state;
    struct stage_ctx cx = ctx();
    assert_int_equal(cx_write(&cx, "a/b/c.conf", "x=1\n", 4), 0);
    char *p = path_join(dir, "a/b/c.conf"), *text = NULL;
    size_t n = 0;
    assert_int_equal(read_file(p, &text, &n), 0);
    assert_int_equal(n, 4);
    assert_string_equal(text, "x=1\n");
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0644);
    free(text);
    free(p);
    /* a script keeps its mode */
    assert_int_equal(cx_write_in(&cx, dir, "run.sh", "#!/bin/sh\n", 10, 0755), 0);
    p = path_join(dir, "run.sh");
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0755);
    free(p);
}

static void test_write_failure_is_reported(void **state)
{
    (void)state;
    struct stage_ctx cx = ctx();
    /* a regular file where a parent directory must go */
    assert_int_equal(cx_write(&cx, "plain", "", 0), 0);
    assert_int_not_equal(cx_write(&cx, "plain/below", "x", 1), 0);
    /* an absolute path is not below cx->out */
    assert_int_not_equal(cx_write(&cx, "/etc/trillian-unit", "x", 1), 0);
}

static void test_manifest_stays_utf8_json(void **state)
{
    (void)state;
    struct stage_ctx cx = ctx();
    struct strlist files = {0};
    strlist_push(&files, "EFI/BOOT/caf\xc3\xa9.conf");  /* UTF-8: kept */
    strlist_push(&files, "boot/f\xff\"\n.img");          /* a stray byte, a quote */
    strlist_push(&files, "x\xe2\x82");                    /* a truncated sequence */
    strlist_push(&files, "s\xed\xa0\x80");                /* a surrogate */
    json_object *m = json_object_new_object();
    json_add_str(m, "loader", "grub");
    json_object_object_add(m, "files", json_strlist(&files));
    json_object_object_add(m, "seconds", json_fixed(1.5, 3));
    json_add_str(m, "none", NULL);
    strlist_free(&files);
    assert_int_equal(cx_write_manifest(&cx, m), 0);

    char *p = path_join(dir, "stage-manifest.json"), *text = NULL;
    size_t n = 0;
    assert_int_equal(read_file(p, &text, &n), 0);
    free(p);
    assert_true(utf8_ok((const unsigned char *)text, n));
    assert_non_null(strstr(text, "\"seconds\": 1.500"));
    assert_non_null(strstr(text, "\"EFI/BOOT/caf\xc3\xa9.conf\"")); /* "/" as is */
    json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *back = json_tokener_parse_ex(tok, text, (int)n);
    assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
    json_tokener_free(tok);
    assert_non_null(back);
    json_object *f = json_object_object_get(back, "files");
    assert_int_equal(json_object_array_length(f), 4);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 0)),
                        "EFI/BOOT/caf\xc3\xa9.conf");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 1)),
                        "boot/f\xef\xbf\xbd\"\n.img");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 2)),
                        "x\xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(f, 3)),
                        "s\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(json_object_get_string(json_object_object_get(back, "none")), "");
    json_object_put(back);
    free(text);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_makes_parents),
        cmocka_unit_test(test_write_failure_is_reported),
        cmocka_unit_test(test_manifest_stays_utf8_json),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
