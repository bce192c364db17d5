#define _GNU_SOURCE
/* SHA-256 against the FIPS 180-4 / NIST test vectors, including inputs that
 * straddle block boundaries and incremental updates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "base/sha256.h"

static void hex_of(const char *msg, char out[65]) { sha256_hex(msg, strlen(msg), out); }

static void test_vectors(void **state)
{
    (void)state;
    char h[65];
    hex_of("", h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_million_a_incremental(void **state)
{
    (void)state;
    struct sha256 s;
    sha256_init(&s);
    char chunk[1001];
    memset(chunk, 'a', sizeof chunk);
    for (int i = 0; i < 1000; i++)
        sha256_update(&s, chunk, i % 2 ? 999 : 1001); /* odd sizes cross blocks */
    char h[65];
    sha256_final_hex(&s, h);
    assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_file(void **state)
{
    (void)state;
    char path[] = "/tmp/trillian-sha-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "abc", 3), 3);
    close(fd);
    char h[65];
    assert_int_equal(sha256_file(path, h), 0);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    unlink(path);
    assert_int_equal(sha256_file(path, h), -1);
}

/* sha256_file (libcrypto, 1 MiB reads) and the incremental code agree on a
 * 3 MiB + 7 bytes file of varied bytes. */
static void test_file_large(void **state)
{
    (void)state;
    char path[] = "/tmp/trillian-sha-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = (3u << 20) + 7;
    unsigned char *d = malloc(n);
    assert_non_null(d);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        d[i] = (unsigned char)(x >> 16);
    }
    assert_int_equal(write(fd, d, n), (ssize_t)n);
    close(fd);
    char want[65], got[65];
    sha256_hex(d, n, want);
    assert_int_equal(sha256_file(path, got), 0);
    assert_string_equal(got, want);
    unlink(path);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_million_a_incremental),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_file_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
