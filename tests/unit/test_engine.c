/* The engine's pure parts: utilities, graph ordering, and cache keys (same
 * inputs, same key; any one input changed, a new key). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/json_out.h"
#include "engine/engine.h"

static char dir[] = "/tmp/trillian-unit-XXXXXX";

static void write_text(const char *name, const char *text)
{
    char *p = path_join(dir, name);
    assert_int_equal(write_file_atomic(p, text, strlen(text), 0644), 0);
    free(p);
}

static struct recipe *load(const char *text, const char *set)
{
    write_text("r.cfg", text);
    char *p = path_join(dir, "r.cfg");
    struct strlist sets = {0};
    if (set)
        strlist_push(&sets, set);
    struct recipe *r = recipe_load(p, &sets);
    strlist_free(&sets);
    free(p);
    if (r)
        keys_compute(r);
    return r;
}

static const char chain[] =
    "name = \"t\"; arch = \"amd64\";\n"
    "stages = (\n"
    " { name = \"c\"; kind = \"command\"; argv = [\"true\"]; outputs = []; after = [\"b\"]; },\n"
    " { name = \"a\"; kind = \"command\"; argv = [\"true\"]; outputs = []; inputs = [\"in.txt\"]; },\n"
    " { name = \"b\"; kind = \"command\"; argv = [\"true\"]; outputs = []; after = [\"a\"]; },\n"
    " { name = \"d\"; kind = \"command\"; argv = [\"true\"]; outputs = []; }\n"
    ");\n";

static const char *key_of(struct recipe *r, const char *name)
{
    struct stage *st = recipe_stage(r, name);
    assert_non_null(st);
    return st->key;
}

/* struct buf: a string from BUF_INIT on, empty again after buf_free, and
 * buf_detach hands over a string the caller frees (a new "" when empty). */
static void test_buf(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    assert_non_null(b.p);
    assert_string_equal(b.p, "");
    char *s = buf_detach(&b); /* empty: a new string, not the shared "" */
    assert_string_equal(s, "");
    free(s);
    buf_puts(&b, "ab");
    buf_printf(&b, "%d", 12);
    buf_add(&b, "", 0);
    assert_int_equal(b.n, 4);
    assert_string_equal(b.p, "ab12");
    buf_free(&b);
    assert_string_equal(b.p, "");
    assert_int_equal(b.n, 0);
    buf_free(&b); /* twice is harmless */
    for (int i = 0; i < 100; i++)
        buf_puts(&b, "0123456789");
    assert_int_equal(b.n, 1000);
    assert_int_equal(strlen(b.p), 1000);
    s = buf_detach(&b);
    assert_int_equal(strlen(s), 1000);
    free(s);
    assert_string_equal(b.p, "");
    struct buf z; /* buf_init, for a buf inside a struct */
    buf_init(&z);
    assert_string_equal(z.p, "");
    buf_puts(&z, "x");
    s = buf_detach(&z);
    assert_string_equal(s, "x");
    free(s);
    /* a zeroed buf (in a calloc'd struct): every function takes it and
     * leaves P a string */
    struct buf zero = {0};
    s = buf_detach(&zero);
    assert_string_equal(s, "");
    free(s);
    assert_string_equal(zero.p, "");
    zero = (struct buf){0};
    buf_free(&zero);
    assert_string_equal(zero.p, "");
    zero = (struct buf){0};
    buf_printf(&zero, "%s", "");
    assert_string_equal(zero.p, "");
    buf_free(&zero);
}

static void test_util(void **state)
{
    (void)state;
    assert_int_equal(edit_distance("outptus", "outputs"), 2);
    assert_int_equal(edit_distance("", "abc"), 3);
    assert_int_equal(edit_distance("same", "same"), 0);
    char *j = path_join("/a/b", "c");
    assert_string_equal(j, "/a/b/c");
    free(j);
    j = path_join("/a/b/", "/abs");
    assert_string_equal(j, "/abs");
    free(j);
    j = path_dirname("/x/y/z.cfg");
    assert_string_equal(j, "/x/y");
    free(j);
    assert_string_equal(path_basename("/x/y/z.cfg"), "z.cfg");
    const char *const plain[] = {"/usr/sbin/mke2fs", "-q", NULL};
    const char *const env[] = {"env", "A=1", "B=2", "debugfs", "-w", NULL};
    const char *const bare[] = {"env", "A=1", NULL};
    assert_string_equal(argv_program(plain), "mke2fs");
    assert_string_equal(argv_program(env), "debugfs");
    assert_string_equal(argv_program(bare), "env");
    struct buf b = {0};
    buf_printf(&b, "%d-%s", 7, "x");
    json_object *js = json_str("q\"\n\x01"); /* escaped as JSON wants */
    buf_puts(&b, json_object_to_json_string_ext(js, JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(js);
    assert_string_equal(b.p, "7-x\"q\\\"\\n\\u0001\"");
    buf_free(&b);
    /* write_file_atomic replaces a regular file but never a device or FIFO
     * (it once turned /dev/null into a file). */
    char *fifo = path_join(dir, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(write_file_atomic(fifo, "x", 1, 0644), -1);
    struct stat sb;
    assert_int_equal(lstat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    unlink(fifo);
    free(fifo);
    write_text("version.h", "/* v */\n#define VERSION \"2.36\"\n");
    char *vh = path_join(dir, "version.h");
    char *v = file_text_after(vh, "#define VERSION \"", "\"");
    assert_non_null(v);
    assert_string_equal(v, "2.36");
    free(v);
    assert_null(file_text_after(vh, "AC_INIT([GRUB],[", "]"));
    free(vh);
    char *missing = path_join(dir, "no-such-file");
    assert_null(file_text_after(missing, "x", "y"));
    free(missing);
}

static void test_graph_order(void **state)
{
    (void)state;
    write_text("in.txt", "one\n");
    struct recipe *r = load(chain, NULL);
    assert_non_null(r);
    size_t pos[4];
    const char *names[] = {"a", "b", "c", "d"};
    for (size_t i = 0; i < r->nstages; i++)
        for (size_t n = 0; n < 4; n++)
            if (!strcmp(r->stages[i]->name, names[n]))
                pos[n] = i;
    assert_true(pos[0] < pos[1]);
    assert_true(pos[1] < pos[2]);
    recipe_free(r);
}

static void test_keys(void **state)
{
    (void)state;
    write_text("in.txt", "one\n");
    struct recipe *r1 = load(chain, NULL), *r2 = load(chain, NULL);
    assert_non_null(r1);
    assert_non_null(r2);
    const char *names[] = {"a", "b", "c", "d"};
    for (size_t n = 0; n < 4; n++)
        assert_string_equal(key_of(r1, names[n]), key_of(r2, names[n]));
    /* all four keys differ from each other */
    for (size_t n = 0; n < 4; n++)
        for (size_t m = n + 1; m < 4; m++)
            assert_string_not_equal(key_of(r1, names[n]), key_of(r1, names[m]));

    /* input file content: a, and through it b and c, change; d does not */
    write_text("in.txt", "two\n");
    struct recipe *r3 = load(chain, NULL);
    assert_string_not_equal(key_of(r1, "a"), key_of(r3, "a"));
    assert_string_not_equal(key_of(r1, "b"), key_of(r3, "b"));
    assert_string_not_equal(key_of(r1, "c"), key_of(r3, "c"));
    assert_string_equal(key_of(r1, "d"), key_of(r3, "d"));
    write_text("in.txt", "one\n");

    /* a setting */
    struct recipe *r4 = load(chain, "stages.d.argv=true,x");
    assert_string_not_equal(key_of(r1, "d"), key_of(r4, "d"));
    assert_string_equal(key_of(r1, "a"), key_of(r4, "a"));

    /* the recipe's timestamp and arch reach every stage */
    struct recipe *r5 = load(chain, "source_date_epoch=5");
    assert_string_not_equal(key_of(r1, "d"), key_of(r5, "d"));
    struct recipe *r6 = load(chain, "arch=ia64");
    assert_string_not_equal(key_of(r1, "d"), key_of(r6, "d"));

    /* order of keys in a group does not matter */
    static const char reordered[] =
        "arch = \"amd64\"; name = \"t\";\n"
        "stages = (\n"
        " { outputs = []; argv = [\"true\"]; kind = \"command\"; name = \"d\"; }\n"
        ");\n";
    struct recipe *r7 = load(reordered, NULL);
    assert_non_null(r7);
    assert_string_equal(key_of(r1, "d"), key_of(r7, "d"));

    recipe_free(r1);
    recipe_free(r2);
    recipe_free(r3);
    recipe_free(r4);
    recipe_free(r5);
    recipe_free(r6);
    recipe_free(r7);
}

/* A kind with a base (userland): the engine adds userland-base, keyed on the
 * package settings only; the configuration (overlays, hostname) changes the
 * userland stage's key alone. */
static void test_base_stage(void **state)
{
    (void)state;
    static const char text[] =
        "name = \"t\"; arch = \"amd64\";\n"
        "userland = { kind = \"debootstrap\"; keyring = \"k.gpg\"; overlays = [\"ov\"];\n"
        "  autologin = false; };\n";
    write_text("k.gpg", "keyring\n");
    char *ov = path_join(dir, "ov/etc");
    assert_int_equal(mkdir_p(ov, 0755), 0);
    free(ov);
    write_text("ov/etc/motd", "one\n");
    struct recipe *r1 = load(text, NULL);
    assert_non_null(r1);
    struct stage *u = recipe_stage(r1, "userland"), *b = recipe_stage(r1, "userland-base");
    assert_non_null(u);
    assert_non_null(b);
    assert_string_equal(b->kind->name, "debootstrap-base");
    assert_true(strlist_contains(&u->deps, "userland-base"));
    struct strlist keys = {0};
    recipe_settable_keys(r1, &keys);
    size_t n = 0;
    for (size_t i = 0; i < keys.n; i++)
        n += !strcmp(keys.v[i], "userland.suite");
    assert_int_equal(n, 1);
    strlist_free(&keys);

    write_text("ov/etc/motd", "two\n"); /* an overlay file */
    struct recipe *r2 = load(text, NULL);
    assert_string_equal(key_of(r1, "userland-base"), key_of(r2, "userland-base"));
    assert_string_not_equal(key_of(r1, "userland"), key_of(r2, "userland"));
    write_text("ov/etc/motd", "one\n");
    struct recipe *r3 = load(text, "userland.hostname=other"); /* a configuration setting */
    assert_string_equal(key_of(r1, "userland-base"), key_of(r3, "userland-base"));
    assert_string_not_equal(key_of(r1, "userland"), key_of(r3, "userland"));
    struct recipe *r4 = load(text, "userland.include=less"); /* a package setting */
    assert_string_not_equal(key_of(r1, "userland-base"), key_of(r4, "userland-base"));
    assert_string_not_equal(key_of(r1, "userland"), key_of(r4, "userland"));
    recipe_free(r1);
    recipe_free(r2);
    recipe_free(r3);
    recipe_free(r4);
}

static void test_errors_return_null(void **state)
{
    (void)state;
    /* stderr is noise here; the messages are asserted by the shell tests */
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    assert_null(load("name = \"t\"; arch = \"amd64\"; bogus = 1;", NULL));
    assert_null(load("name = \"t\"; arch = \"amd64\";\n"
                     "stages = ( { name = \"a\"; kind = \"command\"; argv = [\"true\"]; "
                     "outputs = []; after = [\"a\"]; } );", NULL));
    assert_null(load(chain, "stages.d.argv=")); /* an empty argv is refused */
    fclose(stderr);
    stderr = saved;
}

/* recipe_text_nul: the line of a NUL libconfig would lose (a raw byte
 * anywhere; \x00 or \X00 in a string), not of text that only looks like
 * one (\0, \\x00, \x00 in a comment or outside a string). */
static void test_recipe_text_nul(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t len;
        unsigned line;
        bool raw;
    } cases[] = {
#define T(s, line, raw) {s, sizeof s - 1, line, raw}
        T("a = \"x\";\nb = \"y\\x00z\";\n", 2, false),
        T("a = \"\\X00\";", 1, false),
        T("a = \"x\" \"\\x00\";", 1, false),
        T("a = \"multi\nline\\x00\";", 2, false),
        T("a = \"\\\"\\x00\";", 1, false),         /* \" does not end the string */
        T("a = \"x\0y\";", 1, true),
        T("# c\n# \0\n", 2, true),                    /* raw: refused even in a comment */
        T("a = 1;\0", 1, true),
        T("a = \"\\\0\";", 1, true),                /* a backslash does not hide it */
        T("a = \"\\0\";", 0, false),                  /* \0 is two characters to libconfig */
        T("a = \"\\\\x00\";", 0, false),            /* \\ then x00 */
        T("a = \"\\x0\";", 0, false),
        T("# \"\\x00\"\n// \\x00\n/* \"\\x00\" */ a = 1;", 0, false),
        T("a = \"/* \"; b = \"\\x00\";", 1, false), /* no comment inside a string */
        T("a = \"# \"; b = \"\\x00\";", 1, false),
        T("a = 1; b = \"\\x00", 1, false),            /* unterminated: libconfig's error */
#undef T
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool raw = !cases[i].raw;
        unsigned line = recipe_text_nul(cases[i].text, cases[i].len, &raw);
        if (line != cases[i].line || (line && raw != cases[i].raw))
            fail_msg("case %zu: line %u raw %d, expected line %u raw %d", i, line, raw,
                     cases[i].line, cases[i].raw);
    }
}

/* An input tree's bounds (key.c): at the bound it hashes as without one,
 * one past it fails saying which bound and what to do; links are never
 * followed, so a loop of them ends. */
static void test_tree_bounds(void **state)
{
    (void)state;
    char *t = path_join(dir, "tree"), *deep = path_join(t, "a/b/c");
    assert_int_equal(mkdir_p(deep, 0755), 0);
    write_text("tree/a/b/c/f", "x");             /* a/b/c/f: depth 4 */
    write_text("tree/g", "y");                   /* with l: 6 entries */
    char *l = path_join(t, "l");
    assert_int_equal(symlink(".", l), 0);        /* a loop, if it were followed */
    char full[65], hex[65], *why = NULL;
    assert_int_equal(hash_path(t, full, NULL), 0);
    assert_int_equal(hash_tree_bounded(t, 4, 6, hex, &why), 0);
    assert_string_equal(hex, full);
    assert_int_equal(hash_tree_bounded(t, 3, 6, hex, &why), -1);
    assert_non_null(strstr(why, "is more than 3 directories deep"));
    assert_non_null(strstr(why, "a/b/c has entries at depth 4"));
    free(why);
    why = NULL;
    assert_int_equal(hash_tree_bounded(t, 4, 5, hex, &why), -1);
    assert_non_null(strstr(why, "has more than 5 entries"));
    assert_non_null(strstr(why, "pack the tree into a tarball"));
    free(why);
    free(l);
    free(deep);
    free(t);
}

/* Where patches come from (patch_sources.c): a forge's raw file names its
 * repository and commit; another URL its host and directory; a local
 * directory is Trillian's below the data directory. And every kind's
 * patch settings are settings of its own table that hold paths or URLs. */
static void test_patch_origins(void **state)
{
    (void)state;
    static const char *const urls[][2] = {
        {"https://raw.githubusercontent.com/rxrbln/t2sde/115094e56d3a4bb5a0f3e7ef79364029bbae9acd/"
         "package/kernel/linux/0000.patch.ia64", "rxrbln/t2sde@115094e56d3a"},
        {"https://github.com/o/r/raw/v1.2/x.patch", "o/r@v1.2"},
        {"https://github.com/linux-ia64/glibc-ia64/compare/dae425b554207f7c4599c7fac707ad4c08545674"
         "...d16d4431e96a0131c0dcebb4ef30ba7ee086a05f.diff",
         "linux-ia64/glibc-ia64@dae425b55420...d16d4431e96a"},
        {"https://github.com/o/r/commit/0123456789abcdef0123456789abcdef01234567.patch",
         "o/r@0123456789ab"},
        {"https://github.com/o/r/compare/v2.40...v2.41.diff", "o/r@v2.40...v2.41"},
        {"https://gitlab.com/g/sub/r/-/raw/0123456789abcdef0123/p/x.patch?inline=false",
         "gitlab.com/g/sub/r@0123456789ab"},
        {"http://deb.debian.org/debian/pool/main/l/linux/x.patch", "deb.debian.org/debian/pool/main/l/linux"},
        {"file:///srv/mirror/pool/x.patch", "/srv/mirror/pool"},
        {"https://example.org/x.patch", "example.org"},
    };
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        char *o = patch_origin_url(urls[i][0]);
        assert_string_equal(o, urls[i][1]);
        free(o);
    }
    char *sub = path_join(dir, "kernel-config/patches");
    assert_int_equal(mkdir_p(sub, 0755), 0);
    char *o = patch_origin_dir(sub, dir);
    assert_string_equal(o, "Trillian (kernel-config/patches)");
    free(o);
    o = patch_origin_dir(sub, "/nonexistent-data-dir");
    assert_true(str_starts(o, "local (/") && str_ends(o, "/kernel-config/patches)"));
    free(o);
    free(sub);
    size_t with = 0;
    for (size_t i = 0; stage_kinds[i]; i++) {
        const struct stage_kind *k = stage_kinds[i];
        for (size_t j = 0; k->patch_fields && k->patch_fields[j]; j++, with++) {
            const struct field *f = NULL;
            for (size_t n = 0; k->fields && k->fields[n].key; n++)
                if (!strcmp(k->fields[n].key, k->patch_fields[j]))
                    f = &k->fields[n];
            assert_non_null(f);
            assert_true(f->type == F_PATH || f->type == F_PATH_LIST ||
                        f->type == F_INPUT_LIST || f->type == F_LIST);
        }
    }
    assert_true(with >= 4);
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
        cmocka_unit_test(test_util),
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_graph_order),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_base_stage),
        cmocka_unit_test(test_errors_return_null),
        cmocka_unit_test(test_recipe_text_nul),
        cmocka_unit_test(test_tree_bounds),
        cmocka_unit_test(test_patch_origins),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
