/* Unit tests for builder/formats/kconfig.c: parsing .config fragments, merging them
 * like merge_config.sh, and finding options that olddefconfig dropped. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "formats/kconfig.h"
#include "base/util.h"

static void test_parse_forms(void **state)
{
    (void)state;
    struct kconfig kc = {0};
    struct buf err = {0};
    const char *text = "# a comment\n"
                       "\n"
                       "CONFIG_A=y\n"
                       "CONFIG_B=m\n"
                       "# CONFIG_C is not set\n"
                       "CONFIG_D=\"console=ttyS0 quiet\"\n"
                       "  CONFIG_E=0x1000  \r\n"
                       "CONFIG_F=n\n"
                       "#CONFIG_G is not set\n";
    assert_int_equal(kconfig_parse(&kc, text, "frag.config", &err), 0);
    assert_null(err.p);
    assert_int_equal(kc.n, 7);
    assert_string_equal(kconfig_get(&kc, "CONFIG_A")->value, "y");
    assert_string_equal(kconfig_get(&kc, "CONFIG_B")->value, "m");
    assert_null(kconfig_get(&kc, "CONFIG_C")->value);
    assert_string_equal(kconfig_get(&kc, "CONFIG_D")->value,
                        "\"console=ttyS0 quiet\"");
    assert_string_equal(kconfig_get(&kc, "CONFIG_E")->value, "0x1000");
    assert_null(kconfig_get(&kc, "CONFIG_F")->value); /* =n is not set */
    assert_non_null(kconfig_get(&kc, "CONFIG_G"));
    assert_null(kconfig_get(&kc, "CONFIG_H"));
    assert_string_equal(kconfig_get(&kc, "CONFIG_B")->origin, "frag.config:4");
    kconfig_free(&kc);
}

static void test_parse_errors_name_line(void **state)
{
    (void)state;
    struct kconfig kc = {0};
    struct buf err = {0};
    assert_int_equal(kconfig_parse(&kc, "CONFIG_A=y\nSERIAL=y\n", "x.config",
                                   &err), -1);
    assert_non_null(strstr(err.p, "x.config:2:"));
    assert_non_null(strstr(err.p, "SERIAL=y"));
    buf_free(&err);

    err = (struct buf){0};
    assert_int_equal(kconfig_parse(&kc, "CONFIG_Q=\"unterminated\n", "q",
                                   &err), -1);
    assert_non_null(strstr(err.p, "q:1: bad value"));
    buf_free(&err);

    err = (struct buf){0};
    assert_int_equal(kconfig_parse(&kc, "CONFIG_Z=\n", "z", &err), -1);
    assert_non_null(strstr(err.p, "z:1:"));
    buf_free(&err);
    kconfig_free(&kc);
}

static void test_parse_later_line_wins(void **state)
{
    (void)state;
    struct kconfig kc = {0};
    assert_int_equal(
        kconfig_parse(&kc, "CONFIG_A=y\nCONFIG_B=y\nCONFIG_A=m\n", "f", NULL),
        0);
    assert_int_equal(kc.n, 2);
    assert_string_equal(kc.v[0].name, "CONFIG_A"); /* keeps first position */
    assert_string_equal(kc.v[0].value, "m");
    assert_string_equal(kc.v[0].origin, "f:3");
    kconfig_free(&kc);
}

static void test_merge_overrides_warn(void **state)
{
    (void)state;
    struct kconfig want = {0}, a = {0}, b = {0};
    assert_int_equal(kconfig_parse(&a, "CONFIG_X=y\nCONFIG_Y=y\n"
                                       "# CONFIG_Z is not set\n",
                                   "a.config", NULL), 0);
    assert_int_equal(kconfig_parse(&b, "CONFIG_X=m\nCONFIG_Y=y\nCONFIG_Z=y\n"
                                       "CONFIG_W=\"s\"\n",
                                   "b.config", NULL), 0);
    struct strlist warn = {0};
    assert_int_equal(kconfig_merge(&want, &a, &warn), 0);
    assert_int_equal(warn.n, 0);
    assert_int_equal(kconfig_merge(&want, &b, &warn), 2);
    assert_int_equal(warn.n, 2); /* X changed, Z changed; Y same: silent */
    assert_non_null(strstr(warn.v[0], "CONFIG_X=m (b.config:1) overrides "
                                      "CONFIG_X=y (a.config:1)"));
    assert_non_null(strstr(warn.v[1], "# CONFIG_Z is not set (a.config:3)"));
    assert_string_equal(kconfig_get(&want, "CONFIG_X")->value, "m");
    assert_string_equal(kconfig_get(&want, "CONFIG_W")->origin, "b.config:4");
    assert_int_equal(want.n, 4);

    struct buf out = {0};
    kconfig_format(&want, &out);
    assert_string_equal(out.p, "CONFIG_X=m\nCONFIG_Y=y\nCONFIG_Z=y\n"
                               "CONFIG_W=\"s\"\n");
    buf_free(&out);
    strlist_free(&warn);
    kconfig_free(&want);
    kconfig_free(&a);
    kconfig_free(&b);
}

static void test_merge_big_set(void **state)
{
    (void)state;
    /* a distribution-sized base: the hash index must find every entry */
    struct buf text = {0};
    for (int i = 0; i < 9000; i++)
        buf_printf(&text, "CONFIG_OPT_%d=%s\n", i, i % 3 ? "y" : "m");
    struct kconfig base = {0}, frag = {0};
    assert_int_equal(kconfig_parse(&base, text.p, "base", NULL), 0);
    assert_int_equal(base.n, 9000);
    assert_int_equal(kconfig_parse(&frag, "CONFIG_OPT_8999=y\n"
                                          "CONFIG_OPT_0=y\nCONFIG_NEW=y\n",
                                   "f", NULL), 0);
    assert_int_equal(kconfig_merge(&base, &frag, NULL), 1);
    assert_int_equal(base.n, 9001);
    assert_string_equal(kconfig_get(&base, "CONFIG_OPT_0")->value, "y");
    buf_free(&text);
    kconfig_free(&base);
    kconfig_free(&frag);
}

static void test_check_finds_dropped(void **state)
{
    (void)state;
    struct kconfig want = {0}, final = {0};
    assert_int_equal(kconfig_parse(&want,
                                   "CONFIG_OK=y\n"
                                   "CONFIG_GONE=y\n"
                                   "CONFIG_MOD=y\n"
                                   "# CONFIG_OFF is not set\n"
                                   "# CONFIG_ABSENT_OFF is not set\n"
                                   "# CONFIG_SELECTED is not set\n"
                                   "CONFIG_STR=\"a\"\n",
                                   "frag.config", NULL), 0);
    assert_int_equal(kconfig_parse(&final,
                                   "CONFIG_OK=y\n"
                                   "CONFIG_MOD=m\n"
                                   "# CONFIG_OFF is not set\n"
                                   "CONFIG_SELECTED=y\n"
                                   "CONFIG_STR=\"b\"\n",
                                   ".config", NULL), 0);
    struct kconfig_problem *p = NULL;
    size_t n = kconfig_check(&want, &final, &p);
    assert_int_equal(n, 4);
    assert_string_equal(p[0].want->name, "CONFIG_GONE");
    assert_true(p[0].absent);
    assert_null(p[0].got);
    assert_string_equal(p[1].want->name, "CONFIG_MOD");
    assert_string_equal(p[1].got, "m");
    assert_string_equal(p[2].want->name, "CONFIG_SELECTED");
    assert_string_equal(p[3].want->name, "CONFIG_STR");

    char *t = kconfig_problem_text(&p[0], NULL, NULL);
    assert_non_null(strstr(t, "CONFIG_GONE=y (set by frag.config:2)"));
    assert_non_null(strstr(t, "dropped"));
    free(t);
    t = kconfig_problem_text(&p[1], NULL, NULL);
    assert_non_null(strstr(t, "CONFIG_MOD=m"));
    free(t);
    t = kconfig_problem_text(&p[2], NULL, NULL);
    assert_non_null(strstr(t, "# CONFIG_SELECTED is not set (set by "
                              "frag.config:6)"));
    free(t);
    free(p);

    /* all good: no problems, no array */
    struct kconfig ok = {0};
    assert_int_equal(kconfig_parse(&ok, "CONFIG_OK=y\n", "f", NULL), 0);
    assert_int_equal(kconfig_check(&ok, &final, &p), 0);
    assert_null(p);
    kconfig_free(&ok);
    kconfig_free(&want);
    kconfig_free(&final);
}

/* A fake source tree with Kconfig files tells unknown symbols from ones
 * whose dependencies are unmet or that belong to another architecture. */
static void test_problem_text_searches_kconfig(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/test_kconfig.XXXXXX";
    char *root = mkdtemp(tmpl);
    assert_non_null(root);
    char *d1 = path_join(root, "drivers/tty");
    char *d2 = path_join(root, "arch/ia64");
    char *d3 = path_join(root, "arch/x86");
    assert_int_equal(mkdir_p(d1, 0755), 0);
    assert_int_equal(mkdir_p(d2, 0755), 0);
    assert_int_equal(mkdir_p(d3, 0755), 0);
    char *k1 = path_join(d1, "Kconfig");
    char *k2 = path_join(d2, "Kconfig");
    char *k3 = path_join(d3, "Kconfig");
    const char *t1 = "menuconfig TTY\n\tbool \"tty\"\n\nconfig SERIAL_X\n"
                     "\tdepends on TTY\n# config COMMENTED\n";
    const char *t2 = "config IA64_THING\n\tbool\n";
    const char *t3 = "  config X86_THING\n\tbool\nconfig X86_THINGY\n";
    assert_int_equal(write_file_atomic(k1, t1, strlen(t1), 0644), 0);
    assert_int_equal(write_file_atomic(k2, t2, strlen(t2), 0644), 0);
    assert_int_equal(write_file_atomic(k3, t3, strlen(t3), 0644), 0);

    struct strlist where = {0};
    assert_int_equal(kconfig_find_symbol(root, "CONFIG_SERIAL_X", &where), 0);
    assert_int_equal(where.n, 1);
    assert_string_equal(where.v[0], "drivers/tty/Kconfig");
    strlist_free(&where);
    assert_int_equal(kconfig_find_symbol(root, "TTY", &where), 0);
    assert_int_equal(where.n, 1);
    strlist_free(&where);
    assert_int_equal(kconfig_find_symbol(root, "COMMENTED", &where), 0);
    assert_int_equal(where.n, 0);
    assert_int_equal(kconfig_find_symbol(root, "SERIAL", &where), 0);
    assert_int_equal(where.n, 0); /* a prefix of SERIAL_X is not a match */
    assert_int_equal(kconfig_find_symbol(root, "X86_THING", &where), 0);
    assert_int_equal(where.n, 1);
    strlist_free(&where);

    struct kconfig want = {0};
    assert_int_equal(kconfig_parse(&want, "CONFIG_SERIAL_X=y\n"
                                          "CONFIG_NO_SUCH=y\n"
                                          "CONFIG_X86_THING=y\n"
                                          "CONFIG_IA64_THING=y\n",
                                   "f.config", NULL), 0);
    struct kconfig final = {0};
    struct kconfig_problem *p = NULL;
    assert_int_equal(kconfig_check(&want, &final, &p), 4);
    char *s = kconfig_problem_text(&p[0], root, "ia64");
    assert_non_null(strstr(s, "dependencies are not met"));
    assert_non_null(strstr(s, "drivers/tty/Kconfig"));
    free(s);
    s = kconfig_problem_text(&p[1], root, "ia64");
    assert_non_null(strstr(s, "NO_SUCH is not a Kconfig symbol"));
    free(s);
    s = kconfig_problem_text(&p[2], root, "ia64");
    assert_non_null(strstr(s, "other architectures (arch/x86/Kconfig)"));
    free(s);
    s = kconfig_problem_text(&p[3], root, "ia64");
    assert_non_null(strstr(s, "dependencies are not met"));
    free(s);
    free(p);
    kconfig_free(&want);

    assert_int_equal(rm_rf(root), 0);
    free(d1), free(d2), free(d3), free(k1), free(k2), free(k3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_forms),
        cmocka_unit_test(test_parse_errors_name_line),
        cmocka_unit_test(test_parse_later_line_wins),
        cmocka_unit_test(test_merge_overrides_warn),
        cmocka_unit_test(test_merge_big_set),
        cmocka_unit_test(test_check_finds_dropped),
        cmocka_unit_test(test_problem_text_searches_kconfig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
