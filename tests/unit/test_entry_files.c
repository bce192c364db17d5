/* Unit tests for builder/engine/entry_files.c: which names and symlinks a
 * substituted entry may hold, and how its file list is compared; and the
 * helpers a refused entry relies on: str_printable, rm_rf at any depth. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/entry_files.h"

static void test_path_ok(void **state)
{
    (void)state;
    assert_true(efiles_path_ok("a"));
    assert_true(efiles_path_ok("bin/gcc"));
    assert_true(efiles_path_ok(".hidden/x..y"));
    assert_false(efiles_path_ok(""));
    assert_false(efiles_path_ok(NULL));
    assert_false(efiles_path_ok("/etc/passwd"));
    assert_false(efiles_path_ok("../x"));
    assert_false(efiles_path_ok("a/../../x"));
    assert_false(efiles_path_ok("a/./b"));
    assert_false(efiles_path_ok("a//b"));
    assert_false(efiles_path_ok("a/"));
    assert_false(efiles_path_ok("a\nb"));
    char long_name[EFILES_PATH_MAX + 2];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[EFILES_PATH_MAX] = 0;
    assert_true(efiles_path_ok(long_name));
    long_name[EFILES_PATH_MAX] = 'a';
    long_name[EFILES_PATH_MAX + 1] = 0;
    assert_false(efiles_path_ok(long_name));
}

static void test_printable(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"bin/gcc", "bin/gcc"},
        {"b.txt\ntree: forged", "b.txt\\ntree: forged"},
        {"a\tb\\c", "a\\tb\\\\c"},
        {"\x1b[31mred", "\\x1b[31mred"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},           /* UTF-8 kept */
        {"\xc2\x9b" "2J", "\\xc2\\x9b2J"},           /* a C1 CSI is not */
        {"\xff\xc3", "\\xff\\xc3"},               /* nor bytes that are not UTF-8 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = str_printable(cases[i][0]);
        assert_string_equal(p, cases[i][1]);
        free(p);
    }
}

/* A tree deeper than PATH_MAX, read-only directories included, goes. */
static void test_rm_rf_deep(void **state)
{
    (void)state;
    char top[] = "/tmp/trillian-rmrf.XXXXXX";
    assert_non_null(mkdtemp(top));
    int fd = open(top, O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < 1600 && fd >= 0; i++) {
        assert_int_equal(mkdirat(fd, "ddd", 0755), 0);
        int sub = openat(fd, "ddd", O_RDONLY | O_DIRECTORY);
        if (i % 100 == 0)
            fchmod(fd, 0555);
        close(fd);
        fd = sub;
    }
    assert_true(fd >= 0);
    int f = openat(fd, "f", O_WRONLY | O_CREAT, 0444);
    assert_true(f >= 0);
    close(f);
    close(fd);
    assert_int_equal(rm_rf(top), 0);
    assert_false(path_exists(top));
}

static void test_link_inside(void **state)
{
    (void)state;
    assert_true(efiles_link_inside("bin/cc", "gcc"));
    assert_true(efiles_link_inside("bin/cc", "../lib/x"));
    assert_true(efiles_link_inside("a/b/c", "../../d"));
    assert_true(efiles_link_inside("a/b/c", "./d"));
    assert_false(efiles_link_inside("bin/cc", "/usr/bin/gcc"));
    assert_false(efiles_link_inside("cc", "../x"));
    assert_false(efiles_link_inside("a/b/c", "../../../d"));
    /* ".." after a name could climb through another symlink */
    assert_false(efiles_link_inside("a/b", "x/../.."));
    assert_false(efiles_link_inside("a/b", "l/.."));
    assert_false(efiles_link_inside("a", ""));
}

static struct efile file(const char *path, const char *sha, long long size, unsigned mode)
{
    struct efile e = {.path = (char *)path, .type = 'f', .size = size, .mode = mode};
    strcpy(e.sha, sha);
    return e;
}

static void test_diff(void **state)
{
    (void)state;
    const char *s1 = "1111111111111111111111111111111111111111111111111111111111111111";
    const char *s2 = "2222222222222222222222222222222222222222222222222222222222222222";
    struct efile w[2] = {file("a", s1, 3, 0444), file("b", s1, 3, 0555)};
    struct efile h[2] = {file("a", s1, 3, 0644), file("b", s1, 3, 0755)};
    struct efiles want = {w, 2, 2}, have = {h, 2, 2};
    assert_null(efiles_diff(&want, &have));
    strcpy(h[1].sha, s2);
    char *d = efiles_diff(&want, &have);
    assert_non_null(d);
    assert_non_null(strstr(d, "b: sha256"));
    free(d);
    strcpy(h[1].sha, s1);
    h[1].mode = 0644;
    d = efiles_diff(&want, &have);
    assert_non_null(strstr(d, "b: mode"));
    free(d);
    h[1].mode = 0755;
    have.n = 1;
    d = efiles_diff(&want, &have);
    assert_non_null(strstr(d, "b: missing"));
    free(d);
    want.n = 1;
    have.n = 2;
    d = efiles_diff(&want, &have);
    assert_non_null(strstr(d, "b: in the payload but not in its metadata"));
    free(d);
}

static void test_from_json(void **state)
{
    (void)state;
    struct efiles f;
    char *why = NULL;
    json_object *ok = json_tokener_parse(
        "[{\"path\":\"a\",\"type\":\"file\",\"mode\":\"0444\",\"size\":1,\"sha256\":"
        "\"1111111111111111111111111111111111111111111111111111111111111111\"},"
        "{\"path\":\"b\",\"type\":\"symlink\",\"target\":\"a\"},{\"path\":\"c\",\"type\":\"directory\"}]");
    assert_int_equal(efiles_from_json(ok, &f, &why), 0);
    assert_int_equal(f.n, 3);
    efiles_free(&f);
    json_object_put(ok);
    static const char *const bad[] = {
        "{}",
        "[{\"path\":\"../a\",\"type\":\"directory\"}]",
        "[{\"path\":\"b\",\"type\":\"symlink\",\"target\":\"/etc\"}]",
        "[{\"path\":\"a\",\"type\":\"file\",\"mode\":\"0444\",\"size\":1,\"sha256\":\"xyz\"}]",
        "[{\"path\":\"a\",\"type\":\"fifo\"}]",
        "[{\"path\":\"b\",\"type\":\"directory\"},{\"path\":\"a\",\"type\":\"directory\"}]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_object *j = json_tokener_parse(bad[i]);
        why = NULL;
        assert_int_equal(efiles_from_json(j, &f, &why), -1);
        assert_non_null(why);
        free(why);
        json_object_put(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_ok),
        cmocka_unit_test(test_printable),
        cmocka_unit_test(test_rm_rf_deep),
        cmocka_unit_test(test_link_inside),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_from_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
