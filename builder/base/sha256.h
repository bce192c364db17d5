/* SHA-256 (FIPS 180-4), for cache keys and artifact hashes: libcrypto's
 * (EVP), which uses the CPU's SHA instructions where there are some. */
#ifndef TRILLIAN_SHA256_H
#define TRILLIAN_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct evp_md_ctx_st; /* OpenSSL's EVP_MD_CTX */

/* sha256_init allocates the libcrypto context; sha256_final (or
 * sha256_final_hex) frees it, and sha256_discard frees one abandoned
 * before its end. */
struct sha256 {
    struct evp_md_ctx_st *ctx;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
void sha256_final(struct sha256 *s, unsigned char out[32]);
void sha256_final_hex(struct sha256 *s, char hex[65]);
void sha256_discard(struct sha256 *s);
void sha256_hex(const void *data, size_t n, char hex[65]);
/* Hash a file's content; -1 with errno on failure. */
int sha256_file(const char *path, char hex[65]);

#endif
