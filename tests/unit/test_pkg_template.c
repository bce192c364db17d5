/* pkg_build's template language (pkg_build.h): the ${...} variables a
 * package table's steps, install rows and env use, ${list:KEY},
 * ${kindlist:NAME} and the optional '?' argv element, and the steps' hints, against a stage of a
 * loaded recipe. */
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
#include "stages/pkg_build.h"

static char dir[] = "/tmp/trillian-unit-pkg-XXXXXX";

static const char recipe[] =
    "name = \"t\"; arch = \"amd64\";\n"
    "stages = ( { name = \"s\"; kind = \"command\"; argv = [\"cc\", \"-O2\"]; outputs = [];\n"
    "             description = \"a b\"; } );\n";

static const struct pkg_source sources[] = {
    {.name = "gnu-efi", .key = "gnu_efi"},
    {.name = "elilo", .key = "elilo"},
    {0},
};

static const char *kind_var(void *arg, const char *name)
{
    return !strcmp(name, "platform") ? (const char *)arg : NULL;
}

/* ${kindlist:flags}: two arguments, one with a space */
static const struct strlist *kind_list(void *arg, const char *name)
{
    (void)arg;
    static char *flags[] = {"--prefix=/o", "--with-x=a b", NULL};
    static const struct strlist l = {.v = flags, .n = 2};
    return !strcmp(name, "flags") ? &l : NULL;
}

static const struct pkg_desc desc = {.what = "unit", .sources = sources, .var = kind_var,
                                     .list = kind_list};

struct fixture {
    struct recipe *r;
    struct stage_ctx cx;
    char *src[3];
    struct pkg_vars v;
};

static int setup(void **state)
{
    if (!mkdtemp(dir))
        return -1;
    struct fixture *f = calloc(1, sizeof *f);
    char *p = path_join(dir, "r.cfg");
    if (write_file_atomic(p, recipe, strlen(recipe), 0644) < 0)
        return -1;
    struct strlist sets = {0};
    f->r = recipe_load(p, &sets);
    free(p);
    if (!f->r)
        return -1;
    f->cx = (struct stage_ctx){.st = recipe_stage(f->r, "s"), .name = "s", .out = "/o",
                               .work = "/w", .source_date_epoch = 42};
    f->src[0] = "/w/gnu-efi-3.0.15"; /* elilo's tree is not unpacked: NULL */
    f->v = (struct pkg_vars){.cx = &f->cx, .d = &desc, .arg = "ia64-efi", .src = f->src};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    recipe_free(f->r);
    free(f);
    char *p = path_join(dir, "r.cfg");
    unlink(p);
    free(p);
    return rmdir(dir);
}

/* T expands to WANT (NULL: refused). */
static void expands(const struct pkg_vars *v, const char *t, const char *want)
{
    char *got = pkg_expand(v, t);
    if (want)
        assert_string_equal(got, want);
    else
        assert_null(got);
    free(got);
}

static void test_variables(void **state)
{
    struct fixture *f = *state;
    const struct pkg_vars *v = &f->v;
    expands(v, "plain", "plain");
    expands(v, "", "");
    expands(v, "${work}/obj", "/w/obj");
    expands(v, "DESTDIR=${out}", "DESTDIR=/o");
    expands(v, "${epoch}", "42");
    expands(v, "${src:gnu-efi}/lib", "/w/gnu-efi-3.0.15/lib");
    expands(v, "${set:description}", "a b");
    expands(v, "${set:kind}", "command");
    expands(v, "lib/grub/${kind:platform}", "lib/grub/ia64-efi");
    /* several, adjacent, and text between them */
    expands(v, "${work}${out}-${epoch}.${set:kind}", "/w/o-42.command");
    /* no closing brace: the text as it is */
    expands(v, "x${work", "x${work");
}

static void test_unknown_refused(void **state)
{
    struct fixture *f = *state;
    const struct pkg_vars *v = &f->v;
    expands(v, "${src:elilo}", NULL);    /* a source not unpacked */
    expands(v, "${src:grub}", NULL);     /* not a source of the table */
    expands(v, "${kind:image}", NULL);   /* the kind's hook has no value */
    expands(v, "${set:description}${nope}", NULL);
    expands(v, "${cross}gcc", NULL);     /* not a cross kind */
    expands(v, "${target}", NULL);
    expands(v, "${toolchain}", NULL);
    expands(v, "${}", NULL);

    struct pkg_vars cross = *v;
    cross.cross = "/tc/bin/ia64-linux-gnu-";
    cross.target = "ia64-linux-gnu";
    cross.toolchain = "/tc";
    expands(&cross, "CROSS_COMPILE=${cross}", "CROSS_COMPILE=/tc/bin/ia64-linux-gnu-");
    expands(&cross, "--host=${target}", "--host=ia64-linux-gnu");
    expands(&cross, "${toolchain}/bin", "/tc/bin");
}

/* Pushes TEMPLATES (NULL-terminated) onto ARGV until one fails; its result. */
static int push_all(const struct pkg_vars *v, const char *const *templates, struct strlist *argv)
{
    int rc = 0;
    for (size_t i = 0; templates[i] && rc == 0; i++)
        rc = pkg_push_arg(v, argv, templates[i]);
    return rc;
}

static void test_argv(void **state)
{
    struct fixture *f = *state;
    struct strlist argv = {0};
    /* a list setting's entries, an unset list as none, '?' with and
     * without its variable */
    static const char *const t[] = {"make", "${list:argv}", "${list:env}", "?--cc=${cross}",
                                    "?--doc=${set:description}", "-j1", NULL};
    assert_int_equal(push_all(&f->v, t, &argv), 0);
    assert_int_equal(argv.n, 5);
    assert_string_equal(argv.v[0], "make");
    assert_string_equal(argv.v[1], "cc");
    assert_string_equal(argv.v[2], "-O2");
    assert_string_equal(argv.v[3], "--doc=a b"); /* one element, spaces and all */
    assert_string_equal(argv.v[4], "-j1");
    strlist_free(&argv);

    /* ${kindlist:NAME}: the kind's own list, each entry one element */
    static const char *const kl[] = {"../configure", "${kindlist:flags}", "-q", NULL};
    assert_int_equal(push_all(&f->v, kl, &argv), 0);
    assert_int_equal(argv.n, 4);
    assert_string_equal(argv.v[1], "--prefix=/o");
    assert_string_equal(argv.v[2], "--with-x=a b");
    assert_string_equal(argv.v[3], "-q");
    strlist_free(&argv);
    /* a list the kind does not have is a bug in its table: refused */
    static const char *const kbad[] = {"${kindlist:nope}", NULL};
    assert_int_equal(push_all(&f->v, kbad, &argv), -1);
    assert_int_equal(argv.n, 0);

    /* ${list:KEY} inside other text is no list: an unknown variable */
    static const char *const bad[] = {"x${list:argv}", NULL};
    assert_int_equal(push_all(&f->v, bad, &argv), -1);
    assert_int_equal(argv.n, 0);
    /* without '?', a missing value fails the step */
    static const char *const bad2[] = {"--cc=${cross}", NULL};
    assert_int_equal(push_all(&f->v, bad2, &argv), -1);
    assert_int_equal(argv.n, 0);
    strlist_free(&argv);
}

/* ${cc}, ${cxx}: the mode's compiler, target mode's behind the launcher and
 * with --sysroot, then the path maps (${prefix_maps}, empty without) */
static void test_compilers(void **state)
{
    struct fixture *f = *state;
    struct pkg_vars v = f->v;
    expands(&v, "CC=${cc}", "CC=gcc");
    expands(&v, "${cxx}", "g++");
    expands(&v, "[${prefix_maps}]", "[]");
    strlist_push(&v.maps, "-ffile-prefix-map=/w=.");
    strlist_push(&v.maps, "-ffile-prefix-map=/s/=/");
    expands(&v, "${cc}", "gcc -ffile-prefix-map=/w=. -ffile-prefix-map=/s/=/");
    expands(&v, "${prefix_maps}", "-ffile-prefix-map=/w=. -ffile-prefix-map=/s/=/");
    v.cross = "/tc/bin/ia64-linux-gnu-";
    expands(&v, "${cxx}", "/tc/bin/ia64-linux-gnu-g++ -ffile-prefix-map=/w=. "
                          "-ffile-prefix-map=/s/=/");
    v.sysroot = "/s";
    v.launcher = "/usr/bin/ccache";
    expands(&v, "${cc}", "/usr/bin/ccache /tc/bin/ia64-linux-gnu-gcc --sysroot=/s "
                         "-ffile-prefix-map=/w=. -ffile-prefix-map=/s/=/");
    strlist_free(&v.maps);
}

/* pkg_path_maps: only with map_paths; toolchain, work, sysroot in that order
 * (GCC takes the last that matches), and a path's real path too when a
 * symlink leads there */
static void test_path_maps(void **state)
{
    struct fixture *f = *state;
    struct pkg_vars v = f->v;
    pkg_path_maps(&v);
    assert_int_equal(v.maps.n, 0); /* the kind does not map */

    static const struct pkg_desc mapping = {.what = "unit", .sources = sources,
                                            .map_paths = true};
    char *real = path_join(dir, "real"), *link = path_join(dir, "link");
    assert_int_equal(mkdir_p(real, 0755), 0);
    assert_int_equal(symlink("real", link), 0);
    struct stage_ctx cx = f->cx;
    cx.work = link;
    v.cx = &cx;
    v.d = &mapping;
    v.toolchain = "/nonexistent/tc";
    v.sysroot = "/nonexistent/sysroot";
    pkg_path_maps(&v);
    char *w = xasprintf("-ffile-prefix-map=%s=.", link);
    char *r = xasprintf("-ffile-prefix-map=%s=.", real);
    assert_int_equal(v.maps.n, 4);
    assert_string_equal(v.maps.v[0], "-ffile-prefix-map=/nonexistent/tc/=/usr/");
    assert_string_equal(v.maps.v[1], w);
    assert_string_equal(v.maps.v[2], r);
    assert_string_equal(v.maps.v[3], "-ffile-prefix-map=/nonexistent/sysroot/=/");
    strlist_free(&v.maps);
    free(w);
    free(r);
    unlink(link);
    rmdir(real);
    free(link);
    free(real);
}

/* A failing step's hint: expanded like an argv element, but a variable
 * without a value leaves the hint as written (a message never fails). */
static void test_hint(void **state)
{
    struct fixture *f = *state;
    char *h = pkg_hint(&f->v, "see ${work}/obj/config.log; check ${set:kind}");
    assert_string_equal(h, "see /w/obj/config.log; check command");
    free(h);
    h = pkg_hint(&f->v, "check ${kind:image} in ${work}");
    assert_string_equal(h, "check ${kind:image} in ${work}");
    free(h);
    h = pkg_hint(&f->v, "plain words");
    assert_string_equal(h, "plain words");
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variables),
        cmocka_unit_test(test_unknown_refused),
        cmocka_unit_test(test_argv),
        cmocka_unit_test(test_compilers),
        cmocka_unit_test(test_path_maps),
        cmocka_unit_test(test_hint),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
