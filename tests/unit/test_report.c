/* The report's HTML escaping, its critical path and the components a
 * build names (manifest.json's "components"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

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

static const char *cstr(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !v)
        return NULL;
    return json_object_get_string(v);
}

/* From the stages' details: gcc built here with its tarball's sha256;
 * binutils from Debian's package; a glibc entry from before its stage
 * recorded the sha256 (null); elilo before gnu-efi; a failed kernel is not
 * built here; a stage of no component kind gives nothing. */
static void components_from_stage_manifests(void **state)
{
    (void)state;
    json_object *stages = json_tokener_parse(
        "[{\"name\": \"toolchain\", \"kind\": \"toolchain/build\", \"status\": \"cached\","
        "  \"details\": {\"target\": \"ia64-linux-gnu\", \"gcc_version\": \"12.2.0\","
        "   \"gcc_source\": \"gcc-12.2.0-dfsg.tar.xz\", \"gcc_sha256\": \"ab\","
        "   \"binutils\": \"system\", \"binutils_version\": \"GNU assembler 2.40\","
        "   \"binutils_package\": \"binutils-ia64-linux-gnu\","
        "   \"binutils_debian_version\": \"2.40-2\"}},"
        " {\"name\": \"glibc\", \"kind\": \"packages/glibc\", \"status\": \"built\","
        "  \"details\": {\"glibc\": \"2.36\", \"source\": \"glibc-2.36.tar.xz\"}},"
        " {\"name\": \"elilo\", \"kind\": \"packages/elilo\", \"status\": \"built\","
        "  \"details\": {\"sources\": [{\"name\": \"gnu-efi\", \"version\": \"3.0.15\","
        "   \"file\": \"g.tar.bz2\", \"sha256\": \"cd\"}, {\"name\": \"elilo\","
        "   \"version\": \"3.16\", \"file\": \"e.tar.xz\", \"sha256\": \"ef\"}]}},"
        " {\"name\": \"kernel\", \"kind\": \"kernel/source\", \"status\": \"failed\"},"
        " {\"name\": \"disk\", \"kind\": \"images/disk\", \"status\": \"built\","
        "  \"details\": {\"bytes\": 1}}]");
    assert_non_null(stages);
    json_object *c = report_components(stages);
    assert_int_equal(json_object_array_length(c), 6);
    static const char *const want[][6] = {
        /* component, version, origin, source, sha256, status */
        {"gcc", "12.2.0", "source", "gcc-12.2.0-dfsg.tar.xz", "ab", "cached"},
        {"binutils", "2.40", "debian-package", NULL, NULL, "cached"},
        {"glibc", "2.36", "source", "glibc-2.36.tar.xz", NULL, "built"},
        {"elilo", "3.16", "source", "e.tar.xz", "ef", "built"},
        {"gnu-efi", "3.0.15", "source", "g.tar.bz2", "cd", "built"},
        {"Linux", NULL, "source", NULL, NULL, "failed"},
    };
    static const char *const keys[] = {"component", "version", "origin", "source", "sha256",
                                       "status"};
    for (size_t i = 0; i < 6; i++) {
        json_object *o = json_object_array_get_idx(c, i);
        for (size_t k = 0; k < 6; k++) {
            if (want[i][k])
                assert_string_equal(cstr(o, keys[k]), want[i][k]);
            else
                assert_null(cstr(o, keys[k]));
        }
        json_object *b = NULL;
        assert_true(json_object_object_get_ex(o, "built_here", &b));
        assert_int_equal(json_object_get_boolean(b), i != 1 && i != 5);
    }
    json_object *bu = json_object_array_get_idx(c, 1);
    assert_string_equal(cstr(bu, "package"), "binutils-ia64-linux-gnu");
    assert_string_equal(cstr(bu, "package_version"), "2.40-2");
    json_object_put(c);
    json_object_put(stages);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escapes_markup_and_drops_control_characters),
        cmocka_unit_test(critical_path_follows_the_latest_dependency),
        cmocka_unit_test(critical_path_of_nothing_and_of_one),
        cmocka_unit_test(components_from_stage_manifests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
