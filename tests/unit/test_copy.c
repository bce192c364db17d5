/* copy_file (base/util.c) on files with holes, as a disk image is: the same
 * bytes, the holes kept as holes (a 1 GiB image with little data in it
 * stays small on disk), and files with no data or no hole at all. */
#define _GNU_SOURCE
#include <fcntl.h>
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

#include "base/util.h"

static char dir[] = "/tmp/trillian-unit-copy-XXXXXX";

/* PATH of SIZE bytes with LEN bytes of BYTE at each offset of AT (N of them). */
static void make(const char *path, off_t size, const off_t *at, size_t n, size_t len, int byte)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    char *buf = malloc(len ? len : 1);
    memset(buf, byte, len);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pwrite(fd, buf, len, at[i]), (ssize_t)len);
    assert_int_equal(ftruncate(fd, size), 0);
    free(buf);
    close(fd);
}

static void same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    assert_non_null(fa);
    assert_non_null(fb);
    int ca, cb;
    long pos = 0;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
        if (ca != cb)
            fail_msg("%s and %s differ at byte %ld", a, b, pos);
        pos++;
    } while (ca != EOF);
    fclose(fa);
    fclose(fb);
}

static off_t allocated(const char *path)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    return (off_t)sb.st_blocks * 512;
}

static void test_holes_kept(void **state)
{
    (void)state;
    char *src = path_join(dir, "sparse.img"), *dst = path_join(dir, "copy.img");
    const off_t at[] = {0, 8 << 20, (32 << 20) - 4096};
    make(src, 32 << 20, at, 3, 4096, 'x');
    if (allocated(src) >= (1 << 20))
        skip(); /* this file system keeps no holes: nothing to keep */
    assert_int_equal(copy_file(src, dst), 0);
    same_bytes(src, dst);
    struct stat sb;
    assert_int_equal(stat(dst, &sb), 0);
    assert_int_equal(sb.st_size, 32 << 20);
    assert_true(allocated(dst) < (1 << 20));
    free(src);
    free(dst);
}

static void test_no_hole_and_no_data(void **state)
{
    (void)state;
    char *full = path_join(dir, "full.img"), *empty = path_join(dir, "empty.img");
    char *c1 = path_join(dir, "full.copy"), *c2 = path_join(dir, "empty.copy");
    const off_t at[] = {0};
    make(full, 1 << 20, at, 1, 1 << 20, 'y');
    make(empty, 4 << 20, at, 0, 0, 0);
    assert_int_equal(copy_file(full, c1), 0);
    assert_int_equal(copy_file(empty, c2), 0);
    same_bytes(full, c1);
    same_bytes(empty, c2);
    struct stat sb;
    assert_int_equal(stat(c2, &sb), 0);
    assert_int_equal(sb.st_size, 4 << 20);
    free(full);
    free(empty);
    free(c1);
    free(c2);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rm_rf(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holes_kept),
        cmocka_unit_test(test_no_hole_and_no_data),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
