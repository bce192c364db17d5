#define _GNU_SOURCE
/* SHA-256 through libcrypto's EVP interface; the standard test vectors are
 * in tests/unit/test_sha256.c. */
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "util.h"

/* libcrypto fails here only without memory (or with a broken provider
 * configuration): no caller could do anything but stop. */
static void crypto_failed(const char *what)
{
    fprintf(stderr, "trillian: libcrypto's SHA-256 failed (%s): out of memory, or a broken "
            "OpenSSL configuration (check OPENSSL_CONF)\n", what);
    abort(); /* as util.c does when out of memory */
}

void sha256_init(struct sha256 *s)
{
    s->ctx = EVP_MD_CTX_new();
    if (!s->ctx || EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL) != 1)
        crypto_failed("init");
}

void sha256_update(struct sha256 *s, const void *data, size_t n)
{
    if (n && EVP_DigestUpdate(s->ctx, data, n) != 1)
        crypto_failed("update");
}

void sha256_final(struct sha256 *s, unsigned char out[32])
{
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(s->ctx, out, &len) != 1 || len != 32)
        crypto_failed("final");
    sha256_discard(s);
}

void sha256_discard(struct sha256 *s)
{
    int e = errno; /* callers on an error path report it */
    EVP_MD_CTX_free(s->ctx);
    s->ctx = NULL;
    errno = e;
}

static void to_hex(const unsigned char d[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = 0;
}

void sha256_final_hex(struct sha256 *s, char hex[65])
{
    unsigned char d[32];
    sha256_final(s, d);
    to_hex(d, hex);
}

void sha256_hex(const void *data, size_t n, char hex[65])
{
    struct sha256 s;
    sha256_init(&s);
    sha256_update(&s, data, n);
    sha256_final_hex(&s, hex);
}

/* Files can be gigabytes (disk images): read in 1 MiB pieces. */
int sha256_file(const char *path, char hex[65])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char *buf = xmalloc(1 << 20);
    struct sha256 s;
    sha256_init(&s);
    ssize_t n;
    while ((n = read(fd, buf, 1 << 20)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            sha256_discard(&s);
            free(buf);
            close(fd);
            errno = e;
            return -1;
        }
        sha256_update(&s, buf, (size_t)n);
    }
    sha256_final_hex(&s, hex);
    free(buf);
    close(fd);
    return 0;
}
