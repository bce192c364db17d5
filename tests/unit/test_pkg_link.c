/* pkg_link_target (pkg_deb.h): symlinks in binary packages as dh_link
 * writes them (policy 10.5), absolute between top-level directories,
 * relative and short within one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "stages/pkg_deb.h"

static void check(const char *rel, const char *target, const char *want)
{
    char *got = pkg_link_target(rel, target);
    assert_string_equal(got, want);
    free(got);
}

static void test_link_targets(void **state)
{
    (void)state;
    /* glibc's install: relative across /usr/lib and /lib */
    check("usr/lib/libm.so", "../../lib/libm.so.6.1", "/lib/libm.so.6.1");
    check("usr/bin/ld.so", "../../lib/ld-linux-ia64.so.2", "/lib/ld-linux-ia64.so.2");
    /* within one directory, or one top-level directory: relative */
    check("usr/lib/ia64-linux-gnu/libz.so", "libz.so.1.3.1", "libz.so.1.3.1");
    check("usr/lib/x/libz.so", "/usr/lib/x/libz.so.1", "libz.so.1");
    check("usr/share/doc/a/copyright", "/usr/share/doc/b/copyright", "../b/copyright");
    check("usr/bin/x", "/usr/lib/x/x", "../lib/x/x");
    check("usr/lib/a/b", "./../a/./c", "c");
    /* absolute across top-level directories, whatever was written */
    check("lib/libc.so", "/usr/lib/libc.so.6", "/usr/lib/libc.so.6");
    check("sbin/init", "../bin/busybox", "/bin/busybox");
    /* a link in the root directory: relative to it */
    check("lib64", "usr/lib64", "usr/lib64");
    /* to a directory that is its own parent, or to / */
    check("usr/lib/here", ".", ".");
    check("usr/lib/root", "/", "/");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link_targets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
