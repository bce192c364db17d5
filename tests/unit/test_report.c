/* The report's HTML escaping and its critical path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/report.h"

static void escapes_markup_and_drops_control_characters(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    html_escape(&b, "<a href=\"x\">&'</a>\x1b[0m\tend\n");
    assert_string_equal(b.p, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;[0m\tend\n");
    buf_free(&b);
    html_escape(&b, NULL); /* adds nothing: B stays empty (a buf is never NULL) */
    assert_int_equal(b.n, 0);
    assert_string_equal(b.p, "");
}

/* a -> b -> d and a -> c -> d: c ends later, so the path runs through it */
static void critical_path_follows_the_latest_dependency(void **state)
{
    (void)state;
    static const size_t da[] = {0}, dd[] = {1, 2};
    struct report_span s[] = {
        {0, 10, NULL, 0},  /* a */
        {10, 20, da, 1},   /* b */
        {10, 40, da, 1},   /* c */
        {40, 45, dd, 2},   /* d */
        {0, 5, NULL, 0},   /* e: independent and short */
    };
    size_t path[5];
    size_t n = critical_path(s, 5, path);
    assert_int_equal(n, 3);
    assert_int_equal(path[0], 0);
    assert_int_equal(path[1], 2);
    assert_int_equal(path[2], 3);
}

static void critical_path_of_nothing_and_of_one(void **state)
{
    (void)state;
    size_t path[1];
    assert_int_equal(critical_path(NULL, 0, path), 0);
    struct report_span one = {3, 7, NULL, 0};
    assert_int_equal(critical_path(&one, 1, path), 1);
    assert_int_equal(path[0], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escapes_markup_and_drops_control_characters),
        cmocka_unit_test(critical_path_follows_the_latest_dependency),
        cmocka_unit_test(critical_path_of_nothing_and_of_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
