/* Debian binary packages (formats/deb.h, formats/shlibs.h, stages/pkg_deb.h):
 * names and versions by policy, the control text, Installed-Size as
 * dpkg-gencontrol computes it, ELF dynamic sections of both classes and
 * byte orders, the shlibs map and its errors, the split of a DESTDIR. */
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

#include "formats/deb.h"
#include "formats/shlibs.h"
#include "stages/pkg_deb.h"

static char dir[] = "/tmp/trillian-unit-deb-XXXXXX";

static void test_names(void **state)
{
    (void)state;
    char err[DEB_ERRLEN];
    const char *good[] = {"libtrtest1", "g++", "a.b-c", "0ad", NULL};
    for (int i = 0; good[i]; i++)
        assert_int_equal(deb_valid_name(good[i], err), 0);
    const char *bad[] = {"a", "", "Abc", "-ab", "a_b", "ab c", NULL};
    for (int i = 0; bad[i]; i++)
        assert_int_equal(deb_valid_name(bad[i], err), -1);
    deb_valid_name("Trtest", err);
    assert_non_null(strstr(err, "'Trtest' must start with a lower-case letter or a digit"));
    deb_valid_name("a_b", err);
    assert_non_null(strstr(err, "has '_'"));
}

static void test_versions(void **state)
{
    (void)state;
    char err[DEB_ERRLEN];
    const char *good[] = {"1.0", "1.0-1", "1:2.3-4", "2.0~rc1-1+b1", "1.0-2-3", "2:1:0-1", "0",
                          NULL};
    for (int i = 0; good[i]; i++)
        assert_int_equal(deb_valid_version(good[i], err), 0);
    const char *bad[] = {"", "a1.0", "1:", "x:1.0", "1.0-", "1.0-a_b", "1.0:2", "1.0_1",
                         ":1.0", "-1", NULL};
    for (int i = 0; bad[i]; i++) {
        if (deb_valid_version(bad[i], err) != -1)
            fail_msg("version '%s' was accepted", bad[i]);
    }
    deb_valid_version("a1.0-1", err);
    assert_non_null(strstr(err, "the upstream version must start with a digit"));
    deb_valid_version("x:1.0", err);
    assert_non_null(strstr(err, "the epoch before ':' must be digits"));
    assert_string_equal(deb_arch("ia64"), "ia64");
    assert_string_equal(deb_arch("x86_64"), "amd64");
    assert_null(deb_arch("sparc"));
    char *f = deb_file_name("foo", "1:2.0-1", "ia64");
    assert_string_equal(f, "foo_2.0-1_ia64.deb");
    free(f);
}

static void test_control(void **state)
{
    (void)state;
    struct deb_fields f = {.package = "trtest", .version = "1.0-1", .arch = "ia64",
                           .maintainer = "A B <a@example.org>", .section = "utils",
                           .priority = "optional", .essential = true,
                           .depends = "libc6.1 (>= 2.36)", .pre_depends = "",
                           .multi_arch = "foreign", .summary = "prints the answer",
                           .description = "First line.\n\nSecond.\n.\n", .installed_size = 27};
    char *c = deb_control(&f);
    assert_string_equal(c, "Package: trtest\nVersion: 1.0-1\nArchitecture: ia64\n"
                           "Essential: yes\nMaintainer: A B <a@example.org>\n"
                           "Installed-Size: 27\nDepends: libc6.1 (>= 2.36)\nSection: utils\n"
                           "Priority: optional\nMulti-Arch: foreign\n"
                           "Description: prints the answer\n First line.\n .\n Second.\n .\n");
    free(c);
    f = (struct deb_fields){.package = "x1", .version = "1", .arch = "amd64", .maintainer = "m",
                            .summary = "s", .installed_size = -1, .provides = "y",
                            .conflicts = "z", .replaces = "z", .breaks = "w",
                            .recommends = "r", .suggests = "s | t"};
    c = deb_control(&f);
    assert_string_equal(c, "Package: x1\nVersion: 1\nArchitecture: amd64\nMaintainer: m\n"
                           "Recommends: r\nSuggests: s | t\n"
                           "Breaks: w\nConflicts: z\nProvides: y\nReplaces: z\n"
                           "Description: s\n");
    free(c);
}

static void put_file(const char *rel, size_t n)
{
    char *p = path_join(dir, rel), *d = path_dirname(p);
    char *data = calloc(1, n + 1);
    assert_int_equal(mkdir_p(d, 0755), 0);
    assert_int_equal(write_file_atomic(p, data, n, 0644), 0);
    free(data);
    free(d);
    free(p);
}

static void test_installed_size(void **state)
{
    (void)state;
    char err[DEB_ERRLEN];
    /* root 1, a/ 1, 1 byte 1, 1024 bytes 1, 1025 bytes 2, empty 0, a symlink 1 */
    put_file("size/a/one", 1);
    put_file("size/a/kib", 1024);
    put_file("size/a/more", 1025);
    put_file("size/empty", 0);
    char *root = path_join(dir, "size"), *ln = path_join(dir, "size/link");
    assert_int_equal(symlink("a/one", ln), 0);
    assert_int_equal(deb_installed_size(root, err), 7);
    /* a hard link to a counted inode adds nothing */
    char *a = path_join(dir, "size/a/more"), *b = path_join(dir, "size/hard");
    assert_int_equal(link(a, b), 0);
    assert_int_equal(deb_installed_size(root, err), 7);
    char *none = path_join(dir, "none");
    assert_int_equal(deb_installed_size(none, err), -1);
    free(none);
    free(a);
    free(b);
    free(ln);
    free(root);
}

/* An ELF file with PT_LOAD (all of it at 0x1000) and PT_DYNAMIC: NEEDED
 * libc.so.6 and libm.so.6, SONAME libx.so.1 when SONAME. */
static void put(unsigned char *b, size_t off, uint64_t v, int n, bool be)
{
    for (int i = 0; i < n; i++)
        b[off + (size_t)(be ? n - 1 - i : i)] = (unsigned char)(v >> (8 * i));
}

static char *write_elf(const char *name, bool is64, bool be, int machine, bool soname,
                       size_t cut)
{
    unsigned char b[512] = {0};
    int w = is64 ? 8 : 4;
    size_t eh = is64 ? 64 : 52, phs = is64 ? 56 : 32, ph = eh, dyn = ph + 2 * phs;
    const char str[] = "\0libc.so.6\0libm.so.6\0libx.so.1";
    size_t ndyn = soname ? 6 : 5, strtab = dyn + ndyn * 2 * (size_t)w;
    size_t size = strtab + sizeof str;
    memcpy(b, "\177ELF", 4);
    b[4] = is64 ? 2 : 1;
    b[5] = be ? 2 : 1;
    b[6] = 1;
    put(b, 16, 3, 2, be); /* ET_DYN */
    put(b, 18, (uint64_t)machine, 2, be);
    put(b, is64 ? 32 : 28, ph, w, be);
    put(b, is64 ? 54 : 42, phs, 2, be);
    put(b, is64 ? 56 : 44, 2, 2, be);
    /* PT_LOAD: offset 0, vaddr 0x1000, filesz size */
    put(b, ph, 1, 4, be);
    put(b, ph + (is64 ? 16 : 8), 0x1000, w, be);
    put(b, ph + (is64 ? 32 : 16), size, w, be);
    /* PT_DYNAMIC */
    put(b, ph + phs, 2, 4, be);
    put(b, ph + phs + (is64 ? 8 : 4), dyn, w, be);
    put(b, ph + phs + (is64 ? 32 : 16), ndyn * 2 * (size_t)w, w, be);
    uint64_t ents[6][2] = {{1, 1}, {1, 11}, {5, 0x1000 + strtab}, {10, sizeof str}, {14, 21},
                           {0, 0}};
    if (!soname) {
        ents[4][0] = 0;
        ents[4][1] = 0;
    }
    for (size_t i = 0; i < ndyn; i++) {
        put(b, dyn + i * 2 * (size_t)w, ents[i][0], w, be);
        put(b, dyn + i * 2 * (size_t)w + (size_t)w, ents[i][1], w, be);
    }
    memcpy(b + strtab, str, sizeof str);
    char *p = path_join(dir, name);
    assert_int_equal(write_file_atomic(p, b, cut ? cut : size, 0644), 0);
    return p;
}

static void test_elf(void **state)
{
    (void)state;
    char err[SHLIBS_ERRLEN];
    struct elf_dynamic d;
    const struct {
        bool is64, be;
        int machine;
    } kinds[] = {{true, false, 62}, {true, true, 50}, {false, false, 3}, {false, true, 50}};
    for (size_t k = 0; k < 4; k++) {
        char *p = write_elf("lib.so", kinds[k].is64, kinds[k].be, kinds[k].machine, true, 0);
        assert_int_equal(elf_dynamic_read(p, &d, err), 1);
        assert_int_equal(d.machine, kinds[k].machine);
        assert_int_equal(d.needed.n, 2);
        assert_string_equal(d.needed.v[0], "libc.so.6");
        assert_string_equal(d.needed.v[1], "libm.so.6");
        assert_string_equal(d.soname, "libx.so.1");
        elf_dynamic_free(&d);
        free(p);
        p = write_elf("prog", kinds[k].is64, kinds[k].be, kinds[k].machine, false, 0);
        assert_int_equal(elf_dynamic_read(p, &d, err), 1);
        assert_null(d.soname);
        assert_int_equal(d.needed.n, 2);
        elf_dynamic_free(&d);
        free(p);
        /* the string table cut off */
        p = write_elf("cut", kinds[k].is64, kinds[k].be, kinds[k].machine, true, 150);
        assert_int_equal(elf_dynamic_read(p, &d, err), -1);
        assert_non_null(strstr(err, "cut: "));
        free(p);
    }
    put_file("text", 100);
    char *p = path_join(dir, "text");
    assert_int_equal(elf_dynamic_read(p, &d, err), 0);
    free(p);
    /* the host's own programs, when it has them */
    if (access("/bin/sh", R_OK) == 0 && elf_dynamic_read("/bin/sh", &d, err) == 1) {
        assert_true(strlist_contains(&d.needed, "libc.so.6") || d.needed.n > 0);
        elf_dynamic_free(&d);
    }
}

static void test_shlibs(void **state)
{
    (void)state;
    char err[SHLIBS_ERRLEN], *n, *v;
    assert_int_equal(shlibs_split("libfoo-2.0.so", &n, &v), 0);
    assert_string_equal(n, "libfoo");
    assert_string_equal(v, "2.0");
    free(n);
    free(v);
    assert_int_equal(shlibs_split("ld-linux-ia64.so.2", &n, &v), 0);
    assert_string_equal(n, "ld-linux-ia64");
    assert_string_equal(v, "2");
    free(n);
    free(v);
    assert_int_equal(shlibs_split("libplugin.so", &n, &v), -1);

    struct shlibs m = {0};
    assert_int_equal(shlibs_add(&m, "libtrtest.so.1", "libtrtest1 (>= 1.0-1)"), 0);
    assert_int_equal(shlibs_parse(&m, "# the C library\n\nlibc 6.1 libc6.1 (>= 2.36)\n"
                                      "udeb: libc 6.1 libc6.1-udeb (>= 2.36)\n"
                                      "libtrtest 1 other (>= 9)\n",
                                  "libc.shlibs", err), 0);
    assert_int_equal(m.n, 2); /* the udeb line skipped, the build's library wins */
    assert_string_equal(shlibs_find(&m, "libtrtest.so.1")->dep, "libtrtest1 (>= 1.0-1)");
    assert_string_equal(shlibs_find(&m, "libc.so.6.1")->package, "libc6.1");
    assert_int_equal(shlibs_parse(&m, "libz 1\n", "bad.shlibs", err), -1);
    assert_string_equal(err, "bad.shlibs:1: not a shlibs line (NAME VERSION DEPENDENCY, as "
                             "\"libc 6 libc6 (>= 2.36)\")");
    char *l = shlibs_line("libtrtest.so.1", "libtrtest1 (>= 1.0-1)");
    assert_string_equal(l, "libtrtest 1 libtrtest1 (>= 1.0-1)\n");
    free(l);

    struct strlist needed = {0}, deps = {0};
    strlist_push(&needed, "libtrtest.so.1");
    strlist_push(&needed, "libc.so.6.1");
    strlist_push(&needed, "libtrtest.so.1");
    assert_int_equal(shlibs_depends(&m, "trtest", "/usr/bin/trtest", &needed, &deps, err), 0);
    assert_int_equal(deps.n, 2);
    strlist_free(&deps);
    /* the library's own package: no self-dependency */
    assert_int_equal(shlibs_depends(&m, "libtrtest1", "/usr/lib/x", &needed, &deps, err), 0);
    assert_int_equal(deps.n, 1);
    assert_string_equal(deps.v[0], "libc6.1 (>= 2.36)");
    strlist_free(&deps);
    strlist_push(&needed, "libnone.so.3");
    assert_int_equal(shlibs_depends(&m, "trtest", "/usr/bin/trtest", &needed, &deps, err), -1);
    assert_string_equal(err, "/usr/bin/trtest (package trtest) needs libnone.so.3 "
                             "(DT_NEEDED), which no package of this build and no shlibs file "
                             "provides: add the package that ships it, or a shlibs line for it");
    strlist_free(&deps);
    strlist_free(&needed);
    shlibs_free(&m);
}

static void test_split(void **state)
{
    (void)state;
    const char *lib[] = {"usr/lib/libtrtest.so.*", NULL};
    const char *bin[] = {"/usr/bin", "etc/*.conf", NULL};
    struct pkg_deb debs[] = {{.name = "libtrtest1", .files = lib},
                             {.name = "trtest", .files = bin, .where = "r.cfg:9: packages.t.debs"},
                             {0}};
    struct pkg_debs d = {.debs = debs};
    struct strlist files = {0};
    strlist_push(&files, "etc/trtest.conf");
    strlist_push(&files, "usr/bin/sub/trtest");
    strlist_push(&files, "usr/lib/libtrtest.so.1");
    size_t owner[4];
    char err[512];
    const char *w = "r.cfg:3: packages.t.debs";
    assert_int_equal(pkg_debs_split(&d, &files, owner, w, err, sizeof err), 0);
    assert_int_equal(owner[0], 1);
    assert_int_equal(owner[1], 1);
    assert_int_equal(owner[2], 0);
    strlist_push(&files, "usr/lib/libtrtest.so");
    assert_int_equal(pkg_debs_split(&d, &files, owner, w, err, sizeof err), -1);
    assert_string_equal(err, "r.cfg:3: packages.t.debs: /usr/lib/libtrtest.so is in no binary "
                             "package: add it to one's files globs (or to not_installed, or do "
                             "not install it)");
    /* not_installed leaves it out, before the packages' globs */
    const char *ni[] = {"usr/lib/*.so", NULL};
    d.not_installed = ni;
    d.not_installed_where = "r.cfg:5: packages.t.not_installed";
    assert_int_equal(pkg_debs_split(&d, &files, owner, w, err, sizeof err), 0);
    assert_true(owner[1] == 1 && owner[3] == PKG_NOT_INSTALLED);
    /* a glob that takes no file, or takes only files not_installed leaves out */
    const char *ni2[] = {"usr/lib/*.so", "usr/share/locale", NULL};
    d.not_installed = ni2;
    assert_int_equal(pkg_debs_split(&d, &files, owner, w, err, sizeof err), -1);
    assert_string_equal(err, "r.cfg:5: packages.t.not_installed: not_installed's glob "
                             "'usr/share/locale' takes no file of DESTDIR (4 files): correct "
                             "it, or drop it if the build no longer installs those files");
    const char *ni3[] = {"usr/lib/*.so", "etc", NULL};
    d.not_installed = ni3;
    assert_int_equal(pkg_debs_split(&d, &files, owner, w, err, sizeof err), -1);
    assert_string_equal(err, "r.cfg:9: packages.t.debs: trtest's glob 'etc/*.conf' takes no "
                             "file of DESTDIR (4 files; those it matches, not_installed leaves "
                             "out): correct it, or drop it if the build no longer installs "
                             "those files");
    d.not_installed = NULL;
    strlist_free(&files);
    const char *greedy[] = {"usr", NULL};
    debs[0].files = greedy;
    strlist_push(&files, "usr/bin/trtest");
    assert_int_equal(pkg_debs_split(&d, &files, owner, w, err, sizeof err), -1);
    assert_string_equal(err, "r.cfg:9: packages.t.debs: /usr/bin/trtest is taken by two binary "
                             "packages, libtrtest1 and trtest: each file goes into one (narrow "
                             "their files globs)");
    strlist_free(&files);
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
        cmocka_unit_test(test_names),    cmocka_unit_test(test_versions),
        cmocka_unit_test(test_control),  cmocka_unit_test(test_installed_size),
        cmocka_unit_test(test_elf),      cmocka_unit_test(test_shlibs),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
