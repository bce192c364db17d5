/* The stage API's read-only views (stage.h): settings nodes, peers, recipe
 * facts, and st_need_file's plan-time check against the producer's outputs. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/engine.h"

static char dir[] = "/tmp/trillian-unit-api-XXXXXX";

static struct recipe *load(const char *text)
{
    char *p = path_join(dir, "r.cfg");
    assert_int_equal(write_file_atomic(p, text, strlen(text), 0644), 0);
    struct strlist sets = {0};
    struct recipe *r = recipe_load(p, &sets);
    free(p);
    return r;
}

/* "z" comes first in the file but last in graph order (it runs after "a"). */
static const char peers[] =
    "name = \"t\"; arch = \"amd64\"; root_uuid = \"01234567-89ab-cdef-0123-456789abcdef\";\n"
    "source_date_epoch = 42;\n"
    "stages = (\n"
    " { name = \"z\"; kind = \"command\"; argv = [\"true\", \"x\"]; outputs = [\"o\"]; "
    "after = [\"a\"]; },\n"
    " { name = \"a\"; kind = \"command\"; argv = [\"true\"]; outputs = []; }\n"
    ");\n";

static void test_peers_and_facts(void **state)
{
    (void)state;
    struct recipe *r = load(peers);
    assert_non_null(r);
    const struct stage *a = recipe_stage(r, "a");
    const struct stage *z = st_peer(a, "z");
    assert_non_null(z);
    assert_null(st_peer(a, "nope"));
    assert_string_equal(st_kind(z), "command");
    assert_string_equal(st_section(z), "stages");
    assert_true(st_has_output(z, "o"));
    assert_false(st_has_output(z, "p"));

    /* recipe order, not graph order; the kind filter */
    size_t it = 0;
    const struct stage *p = st_peers(a, "stages", NULL, &it);
    assert_ptr_equal(p, z);
    assert_ptr_equal(st_peers(a, "stages", NULL, &it), a);
    assert_null(st_peers(a, "stages", NULL, &it));
    it = 0;
    assert_null(st_peers(a, "stages", "grub", &it));
    it = 0;
    assert_null(st_peers(a, "images", NULL, &it));

    assert_string_equal(st_recipe_name(a), "t");
    assert_string_equal(st_root_uuid(a), "01234567-89ab-cdef-0123-456789abcdef");
    assert_int_equal(st_source_date_epoch(a), 42);
    assert_null(st_machine(a));
    recipe_free(r);
}

static void test_nodes(void **state)
{
    (void)state;
    struct recipe *r = load(peers);
    assert_non_null(r);
    const struct stage *z = recipe_stage(r, "z");
    assert_true(st_isset(z, "argv"));
    assert_false(st_isset(z, "env"));
    const struct st_node *argv = st_node(z, "argv");
    assert_int_equal(node_type(argv), NODE_LIST);
    assert_int_equal(node_len(argv), 2);
    assert_string_equal(node_str(node_elem(argv, 1)), "x");
    assert_null(node_elem(argv, 2));
    assert_int_equal(node_line(argv), 4);
    char *w = st_node_where(z, argv);
    assert_true(str_ends(w, "r.cfg:4"));
    free(w);
    /* absent nodes: every accessor takes NULL */
    const struct st_node *none = st_node(z, "env");
    assert_null(none);
    assert_int_equal(node_type(none), NODE_NONE);
    assert_int_equal(node_len(none), 0);
    assert_null(node_str(none));
    assert_int_equal(node_int(none, 7), 7);
    assert_true(node_bool(none, true));
    assert_null(node_member_str(argv, "x")); /* not a group */
    recipe_free(r);
}

/* Numbers as nodes: an integer is also a float (libconfig alone would give
 * 0.0 for it without auto-convert), a float is not an integer. */
static void test_node_numbers(void **state)
{
    (void)state;
    config_t cfg;
    config_init(&cfg);
    assert_int_equal(config_read_string(&cfg, "i = 120; b = 5000000000L; f = 2.5; s = \"x\";"),
                     CONFIG_TRUE);
    /* inside the engine a node is a libconfig setting (stage_api.c) */
    const struct st_node *i = (const struct st_node *)config_lookup(&cfg, "i");
    const struct st_node *b = (const struct st_node *)config_lookup(&cfg, "b");
    const struct st_node *f = (const struct st_node *)config_lookup(&cfg, "f");
    const struct st_node *s = (const struct st_node *)config_lookup(&cfg, "s");
    assert_int_equal(node_type(i), NODE_INT);
    assert_int_equal(node_type(b), NODE_INT);
    assert_int_equal(node_type(f), NODE_FLOAT);
    assert_true(node_float(i, -1) == 120.0);
    assert_true(node_float(b, -1) == 5000000000.0);
    assert_true(node_float(f, -1) == 2.5);
    assert_true(node_float(s, -1) == -1.0);
    assert_int_equal(node_int(b, 0), 5000000000LL);
    assert_int_equal(node_int(f, 7), 7);
    config_destroy(&cfg);
}

static const char need_file[] =
    "name = \"t\"; arch = \"amd64\";\n"
    "stages = ( { name = \"userland\"; kind = \"command\"; argv = [\"true\"]; outputs = [%s]; } );\n"
    "initramfs = { kind = \"rootfs\"; };\n";

static void test_need_file(void **state)
{
    (void)state;
    char *ok = xasprintf(need_file, "\"rootfs.tar\"");
    struct recipe *r = load(ok);
    assert_non_null(r); /* the producer declares rootfs.tar */
    recipe_free(r);
    free(ok);
    char *bad = xasprintf(need_file, "\"other.tar\"");
    assert_null(load(bad)); /* it does not: a recipe error at plan time */
    free(bad);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char *p = path_join(dir, "r.cfg");
    unlink(p);
    free(p);
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peers_and_facts),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_node_numbers),
        cmocka_unit_test(test_need_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
