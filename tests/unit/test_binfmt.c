#define _GNU_SOURCE
/* binfmt: ELF e_machine and PE/COFF Machine from synthetic headers written
 * by the test (both byte orders, both classes, truncations, wrong magic,
 * compressed kernels), and from this very test program (an ELF for the
 * host's machine). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "binfmt.h"
#include "util.h"

static char dir[] = "/tmp/test_binfmt.XXXXXX";

static char *put(const char *name, const void *data, size_t n)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    return p;
}

/* A 64-byte ELF header: class, byte order, machine. */
static void elf_header(unsigned char h[64], int cls, int order, int machine)
{
    memset(h, 0, 64);
    memcpy(h, "\177ELF", 4);
    h[4] = (unsigned char)cls;
    h[5] = (unsigned char)order;
    h[6] = 1;
    h[16] = 2; /* ET_EXEC, little-endian low byte (unused by the check) */
    if (order == 1) {
        h[18] = (unsigned char)(machine & 0xff);
        h[19] = (unsigned char)(machine >> 8);
    } else {
        h[18] = (unsigned char)(machine >> 8);
        h[19] = (unsigned char)(machine & 0xff);
    }
}

static void test_elf_machines(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN];
    unsigned char h[64];
    elf_header(h, 2, 1, BINFMT_ELF_IA64);
    char *p = put("ia64.elf", h, sizeof h);
    assert_int_equal(binfmt_elf_machine(p, err), 50);
    assert_string_equal(binfmt_elf_machine_name(50), "IA-64");
    free(p);
    elf_header(h, 2, 1, BINFMT_ELF_X86_64);
    p = put("x86.elf", h, sizeof h);
    assert_int_equal(binfmt_elf_machine(p, err), 62);
    free(p);
    elf_header(h, 1, 2, 20); /* 32-bit big-endian PowerPC */
    p = put("ppc.elf", h, sizeof h);
    assert_int_equal(binfmt_elf_machine(p, err), 20);
    free(p);
    elf_header(h, 2, 2, BINFMT_ELF_AARCH64); /* big-endian, machine > 255 */
    p = put("be.elf", h, sizeof h);
    assert_int_equal(binfmt_elf_machine(p, err), 183);
    free(p);
}

static void test_elf_errors(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN];
    unsigned char h[64];

    char *p = put("empty", "", 0);
    assert_int_equal(binfmt_elf_machine(p, err), -1);
    assert_non_null(strstr(err, "not an ELF file"));
    assert_non_null(strstr(err, p)); /* names the file */
    free(p);

    elf_header(h, 2, 1, 50);
    p = put("short.elf", h, 19);
    assert_int_equal(binfmt_elf_machine(p, err), -1);
    assert_non_null(strstr(err, "truncated"));
    free(p);

    elf_header(h, 3, 1, 50);
    p = put("class.elf", h, sizeof h);
    assert_int_equal(binfmt_elf_machine(p, err), -1);
    assert_non_null(strstr(err, "class"));
    free(p);

    elf_header(h, 2, 0, 50);
    p = put("order.elf", h, sizeof h);
    assert_int_equal(binfmt_elf_machine(p, err), -1);
    assert_non_null(strstr(err, "byte order"));
    free(p);

    static const unsigned char gz[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3};
    p = put("vmlinux.gz", gz, sizeof gz);
    assert_int_equal(binfmt_elf_machine(p, err), -1);
    assert_non_null(strstr(err, "gzip-compressed"));
    free(p);

    p = put("text", "#!/bin/sh\necho hi\n", 18);
    assert_int_equal(binfmt_elf_machine(p, err), -1);
    assert_non_null(strstr(err, "no \\177ELF magic"));
    free(p);

    char *missing = NULL;
    assert_true(asprintf(&missing, "%s/does-not-exist", dir) > 0);
    assert_int_equal(binfmt_elf_machine(missing, err), -1);
    assert_non_null(strstr(err, "No such file"));
    assert_int_equal(binfmt_pe_machine(missing, err), -1);
    free(missing);
    assert_int_equal(binfmt_elf_machine(dir, err), -1); /* a directory */
    assert_non_null(strstr(err, "not a regular file"));
}

/* An EFI image header: MZ, e_lfanew = OFF, then PE\0\0 and MACHINE. */
static size_t pe_image(unsigned char *b, size_t cap, uint32_t off, int machine)
{
    memset(b, 0, cap);
    b[0] = 'M';
    b[1] = 'Z';
    b[0x3c] = (unsigned char)(off & 0xff);
    b[0x3d] = (unsigned char)(off >> 8);
    b[0x3e] = (unsigned char)(off >> 16);
    b[0x3f] = (unsigned char)(off >> 24);
    memcpy(b + off, "PE\0\0", 4);
    b[off + 4] = (unsigned char)(machine & 0xff);
    b[off + 5] = (unsigned char)(machine >> 8);
    return off + 24;
}

static void test_pe_machines(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN];
    unsigned char b[512];
    size_t n = pe_image(b, sizeof b, 0x80, BINFMT_PE_IA64);
    char *p = put("elilo.efi", b, n);
    assert_int_equal(binfmt_pe_machine(p, err), 0x200);
    assert_string_equal(binfmt_pe_machine_name(0x200), "IA-64 (Itanium)");
    free(p);
    n = pe_image(b, sizeof b, 0x100, BINFMT_PE_AMD64);
    p = put("bootx64.efi", b, n);
    assert_int_equal(binfmt_pe_machine(p, err), 0x8664);
    assert_string_equal(binfmt_pe_machine_name(0x8664), "x86-64");
    free(p);
}

static void test_pe_errors(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN];
    unsigned char b[512];

    /* e_lfanew beyond the end of the file */
    size_t n = pe_image(b, sizeof b, 0x80, BINFMT_PE_IA64);
    b[0x3d] = 0x10; /* 0x1080 */
    char *p = put("far.efi", b, n);
    assert_int_equal(binfmt_pe_machine(p, err), -1);
    assert_non_null(strstr(err, "beyond the end"));
    free(p);

    /* MZ without PE: an MS-DOS program */
    n = pe_image(b, sizeof b, 0x80, BINFMT_PE_IA64);
    b[0x80] = 'N';
    p = put("dos.exe", b, n);
    assert_int_equal(binfmt_pe_machine(p, err), -1);
    assert_non_null(strstr(err, "no PE signature"));
    free(p);

    /* PE signature cut short: lfanew + 6 > size */
    n = pe_image(b, sizeof b, 0x80, BINFMT_PE_IA64);
    p = put("cut.efi", b, 0x84);
    assert_int_equal(binfmt_pe_machine(p, err), -1);
    assert_non_null(strstr(err, "beyond the end"));
    free(p);

    /* short MZ header */
    p = put("mz", "MZ", 2);
    assert_int_equal(binfmt_pe_machine(p, err), -1);
    assert_non_null(strstr(err, "truncated MZ header"));
    free(p);

    /* an ELF file given where an EFI image belongs */
    unsigned char h[64];
    elf_header(h, 2, 1, 50);
    p = put("elf", h, sizeof h);
    assert_int_equal(binfmt_pe_machine(p, err), -1);
    assert_non_null(strstr(err, "an ELF file, not a PE/COFF"));
    free(p);
    (void)n;
}

/* This test program is an ELF for the host; its machine must be the
 * host's (x86-64 on the CI machines; checked only there). */
static void test_self(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN];
    int m = binfmt_elf_machine("/proc/self/exe", err);
#if defined(__x86_64__)
    assert_int_equal(m, BINFMT_ELF_X86_64);
#elif defined(__ia64__)
    assert_int_equal(m, BINFMT_ELF_IA64);
#else
    assert_true(m > 0);
#endif
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rm_rf(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elf_machines), cmocka_unit_test(test_elf_errors),
        cmocka_unit_test(test_pe_machines),  cmocka_unit_test(test_pe_errors),
        cmocka_unit_test(test_self),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
