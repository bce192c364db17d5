/* Unit tests for gpt.c: CRC-32 against known vectors, GUID text <-> on-disk
 * byte order, derived GUIDs, and the GUID fix-up on a GPT image built here
 * byte by byte (independently of gpt.c): both copies patched, all four CRCs
 * valid afterwards, damage detected. */
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

#include "formats/gpt.h"

static void test_crc32_vectors(void **state)
{
    (void)state;
    assert_int_equal(gpt_crc32("123456789", 9), 0xCBF43926u);
    assert_int_equal(gpt_crc32("", 0), 0);
    assert_int_equal(gpt_crc32("The quick brown fox jumps over the lazy dog", 43), 0x414FA339u);
    /* running CRC over pieces equals the CRC of the whole */
    uint32_t c = gpt_crc32_update(0, "1234", 4);
    assert_int_equal(gpt_crc32_update(c, "56789", 5), 0xCBF43926u);
}

static void test_guid_byte_order(void **state)
{
    (void)state;
    uint8_t g[16];
    assert_int_equal(guid_parse("C12A7328-F81F-11D2-BA4B-00A0C93EC93B", g), 0);
    /* the ESP type as it appears on disk */
    static const uint8_t esp[16] = {0x28, 0x73, 0x2A, 0xC1, 0x1F, 0xF8, 0xD2, 0x11,
                                    0xBA, 0x4B, 0x00, 0xA0, 0xC9, 0x3E, 0xC9, 0x3B};
    assert_memory_equal(g, esp, 16);
    char text[37];
    guid_format(g, text);
    assert_string_equal(text, "C12A7328-F81F-11D2-BA4B-00A0C93EC93B");
    assert_int_equal(guid_parse("c12a7328-f81f-11d2-ba4b-00a0c93ec93b", g), 0);
    assert_memory_equal(g, esp, 16);
}

static void test_guid_invalid(void **state)
{
    (void)state;
    uint8_t g[16];
    assert_int_equal(guid_parse("C12A7328F81F11D2BA4B00A0C93EC93B", g), -1);
    assert_int_equal(guid_parse("C12A7328-F81F-11D2-BA4B-00A0C93EC93", g), -1);
    assert_int_equal(guid_parse("G12A7328-F81F-11D2-BA4B-00A0C93EC93B", g), -1);
    assert_int_equal(guid_parse("C12A7328-F81F-11D2-BA4B-00A0C93EC93B0", g), -1);
    assert_false(guid_valid(NULL));
    assert_true(guid_valid("6a9d1c52-2f3e-4c1a-9d7b-3e5f8a1b2c4d"));
}

static void test_guid_derive(void **state)
{
    (void)state;
    char a[37], b[37], c[37];
    guid_derive("recipe/disk/esp", a);
    guid_derive("recipe/disk/esp", b);
    guid_derive("recipe/disk/root", c);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    assert_true(guid_valid(a));
    assert_int_equal(a[14], '4');                       /* version 4 */
    assert_non_null(strchr("89ab", a[19]));             /* RFC 4122 variant */
}

/* ---- a GPT image written here, without gpt.c ---------------------------- */

#define SECT 512
#define NSECT 2048 /* 1 MiB image */
#define NENT 128

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bitwise CRC-32, independent of gpt.c's table. */
static uint32_t crc_ref(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return ~c;
}

static void header(uint8_t *img, uint64_t my, uint64_t alt, uint64_t entries_lba,
                   const uint8_t *ents)
{
    uint8_t *h = img + my * SECT;
    memcpy(h, "EFI PART", 8);
    put32(h + 8, 0x00010000);
    put32(h + 12, 92);
    put64(h + 24, my);
    put64(h + 32, alt);
    put64(h + 40, 34);
    put64(h + 48, NSECT - 34);
    memset(h + 56, 0xAB, 16); /* disk GUID */
    put64(h + 72, entries_lba);
    put32(h + 80, NENT);
    put32(h + 84, 128);
    put32(h + 88, crc_ref(ents, NENT * 128));
    put32(h + 16, 0);
    put32(h + 16, crc_ref(h, 92));
}

static char *make_image(void)
{
    uint8_t *img = calloc(NSECT, SECT);
    uint8_t ents[NENT * 128];
    memset(ents, 0, sizeof ents);
    for (int i = 0; i < 2; i++) {
        uint8_t *e = ents + i * 128;
        memset(e, 0x10 + i, 16);      /* type */
        memset(e + 16, 0x20 + i, 16); /* unique GUID */
        put64(e + 32, 100 + 100 * (uint64_t)i);
        put64(e + 40, 199 + 100 * (uint64_t)i);
        e[56] = (uint8_t)('a' + i);
    }
    memcpy(img + 2 * SECT, ents, sizeof ents);
    memcpy(img + (NSECT - 33) * SECT, ents, sizeof ents);
    header(img, 1, NSECT - 1, 2, ents);
    header(img, NSECT - 1, 1, NSECT - 33, ents);
    char *path = strdup("/tmp/test_gpt.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, img, (size_t)NSECT * SECT), (ssize_t)NSECT * SECT);
    close(fd);
    free(img);
    return path;
}

static uint8_t *slurp(const char *path)
{
    uint8_t *img = malloc((size_t)NSECT * SECT);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(img, SECT, NSECT, f), NSECT);
    fclose(f);
    return img;
}

static void assert_crcs_valid(const uint8_t *img, uint64_t hdr_lba, uint64_t ent_lba)
{
    uint8_t h[92];
    memcpy(h, img + hdr_lba * SECT, 92);
    uint32_t want = get32(h + 16);
    put32(h + 16, 0);
    assert_int_equal(crc_ref(h, 92), want);
    assert_int_equal(crc_ref(img + ent_lba * SECT, NENT * 128), get32(h + 88));
}

static void test_read_synthetic(void **state)
{
    (void)state;
    char *path = make_image();
    struct gpt_info gi;
    char err[256] = "";
    assert_int_equal(gpt_read(path, SECT, &gi, err, sizeof err), 0);
    assert_int_equal(gi.nparts, 2);
    assert_int_equal(gi.parts[0].first_lba, 100);
    assert_int_equal(gi.parts[1].last_lba, 299);
    assert_string_equal(gi.parts[1].name, "b");
    assert_int_equal(gi.backup_lba, NSECT - 1);
    unlink(path);
    free(path);
}

static void test_set_guids_patches_both_copies(void **state)
{
    (void)state;
    char *path = make_image();
    uint8_t disk[16], p1[16], t2[16];
    guid_parse("11111111-2222-4333-8444-555555555555", disk);
    guid_parse("22222222-3333-4444-8555-666666666666", p1);
    guid_parse(GPT_TYPE_LINUX, t2);
    const uint8_t *guids[2] = {p1, NULL}; /* keep partition 2's GUID */
    const uint8_t *types[2] = {NULL, t2};
    char err[256] = "";
    assert_int_equal(gpt_set_guids(path, SECT, disk, guids, types, 2, err, sizeof err), 0);

    uint8_t *img = slurp(path);
    assert_crcs_valid(img, 1, 2);
    assert_crcs_valid(img, NSECT - 1, NSECT - 33);
    assert_memory_equal(img + SECT + 56, disk, 16);
    assert_memory_equal(img + (NSECT - 1) * SECT + 56, disk, 16);
    for (uint64_t ent = 2; ent != 0; ent = ent == 2 ? NSECT - 33 : 0) {
        const uint8_t *e = img + ent * SECT;
        assert_memory_equal(e + 16, p1, 16);     /* partition 1 GUID set */
        assert_int_equal(e[128 + 16], 0x21);     /* partition 2 GUID kept */
        assert_int_equal(e[0], 0x10);            /* partition 1 type kept */
        assert_memory_equal(e + 128, t2, 16);    /* partition 2 type set */
    }
    free(img);

    struct gpt_info gi;
    assert_int_equal(gpt_read(path, SECT, &gi, err, sizeof err), 0);
    char text[37];
    guid_format(gi.disk_guid, text);
    assert_string_equal(text, "11111111-2222-4333-8444-555555555555");
    guid_format(gi.parts[1].type, text);
    assert_string_equal(text, GPT_TYPE_LINUX);
    unlink(path);
    free(path);
}

static void test_damage_detected(void **state)
{
    (void)state;
    char err[256] = "";
    struct gpt_info gi;

    /* a flipped bit in an entry: entry CRC mismatch */
    char *path = make_image();
    FILE *f = fopen(path, "r+b");
    fseek(f, 2 * SECT + 40, SEEK_SET);
    fputc(0x7f, f);
    fclose(f);
    assert_int_equal(gpt_read(path, SECT, &gi, err, sizeof err), -1);
    assert_non_null(strstr(err, "CRC"));
    uint8_t disk[16] = {1};
    assert_int_equal(gpt_set_guids(path, SECT, disk, NULL, NULL, 0, err, sizeof err), -1);
    unlink(path);
    free(path);

    /* no signature */
    path = make_image();
    f = fopen(path, "r+b");
    fseek(f, SECT, SEEK_SET);
    fputc('X', f);
    fclose(f);
    assert_int_equal(gpt_read(path, SECT, &gi, err, sizeof err), -1);
    assert_non_null(strstr(err, "signature"));
    unlink(path);
    free(path);

    /* a damaged backup header is found too */
    path = make_image();
    f = fopen(path, "r+b");
    fseek(f, (long)(NSECT - 1) * SECT + 60, SEEK_SET);
    fputc(0x00, f);
    fclose(f);
    assert_int_equal(gpt_read(path, SECT, &gi, err, sizeof err), -1);
    assert_non_null(strstr(err, "backup"));
    unlink(path);
    free(path);

    assert_int_equal(gpt_read("/nonexistent/x.img", SECT, &gi, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32_vectors),
        cmocka_unit_test(test_guid_byte_order),
        cmocka_unit_test(test_guid_invalid),
        cmocka_unit_test(test_guid_derive),
        cmocka_unit_test(test_read_synthetic),
        cmocka_unit_test(test_set_guids_patches_both_copies),
        cmocka_unit_test(test_damage_detected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
