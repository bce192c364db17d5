#define _GNU_SOURCE
/* binfmt: ELF e_machine and PE/COFF Machine from synthetic headers written
 * by the test (both byte orders, both classes, truncations, wrong magic,
 * compressed kernels), and from this very test program (an ELF for the
 * host's machine). The GNU ABI tag (glibc's minimum kernel) from synthetic
 * ELFs with good, truncated and absent notes, and from the host's libc;
 * the program interpreter (PT_INTERP) likewise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "formats/binfmt.h"
#include "base/util.h"

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

/* The optional header's Subsystem (offset 68, PE32+ magic 0x20b): an EFI
 * application is 10; a header too short for it, or without the magic, is
 * an error naming the file. */
static void test_pe_subsystem(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN];
    unsigned char b[512];
    size_t n = pe_image(b, sizeof b, 0x80, BINFMT_PE_IA64);
    b[n] = 0x0b; /* PE32+ */
    b[n + 1] = 0x02;
    b[n + 68] = BINFMT_PE_EFI_APPLICATION;
    char *p = put("elilo.efi", b, n + 240);
    assert_int_equal(binfmt_pe_subsystem(p, err), 10);
    free(p);
    p = put("short.efi", b, n + 20);
    assert_int_equal(binfmt_pe_subsystem(p, err), -1);
    assert_non_null(strstr(err, "no PE32/PE32+ optional header"));
    free(p);
    b[n] = 0; /* no magic */
    p = put("nomagic.efi", b, n + 240);
    assert_int_equal(binfmt_pe_subsystem(p, err), -1);
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

/* ---- GNU ABI tag --------------------------------------------------------- */

static void put_u(unsigned char *p, int size, uint64_t v, int le)
{
    for (int i = 0; i < size; i++)
        p[le ? i : size - 1 - i] = (unsigned char)(v >> (8 * i));
}

/* A note: name, type, 4-byte words of desc (ALIGN 4). Returns its size. */
static size_t note(unsigned char *p, const char *name, unsigned type, const unsigned *words,
                   unsigned nwords, int le)
{
    size_t namesz = strlen(name) + 1, o = 12;
    put_u(p, 4, namesz, le);
    put_u(p + 4, 4, nwords * 4, le);
    put_u(p + 8, 4, type, le);
    memcpy(p + o, name, namesz);
    o += (namesz + 3) & ~(size_t)3;
    for (unsigned i = 0; i < nwords; i++, o += 4)
        put_u(p + o, 4, words[i], le);
    return o;
}

/* An ELF file with one PT_NOTE program header (or, with SECTION, one
 * SHT_NOTE section and no program headers) over NOTES. cls 1 or 2, order 1
 * (LE) or 2 (BE). Returns the file size. */
static size_t elf_with_notes(unsigned char *b, size_t cap, int cls, int order, int section,
                             const unsigned char *notes, size_t nlen)
{
    int le = order == 1, is64 = cls == 2;
    size_t ehsz = is64 ? 64 : 52, entsz = section ? (is64 ? 64 : 40) : (is64 ? 56 : 32);
    size_t tab = ehsz, data = tab + entsz;
    memset(b, 0, cap);
    elf_header(b, cls, order, BINFMT_ELF_IA64);
    unsigned char *e = b + tab;
    if (is64) {
        put_u(b + (section ? 40 : 32), 8, tab, le);
        put_u(b + (section ? 58 : 54), 2, entsz, le);
        put_u(b + (section ? 60 : 56), 2, 1, le);
    } else {
        put_u(b + (section ? 32 : 28), 4, tab, le);
        put_u(b + (section ? 46 : 42), 2, entsz, le);
        put_u(b + (section ? 48 : 44), 2, 1, le);
    }
    if (section) {
        put_u(e + 4, 4, 7, le); /* SHT_NOTE */
        put_u(e + (is64 ? 24 : 16), is64 ? 8 : 4, data, le);
        put_u(e + (is64 ? 32 : 20), is64 ? 8 : 4, nlen, le);
        put_u(e + (is64 ? 48 : 32), is64 ? 8 : 4, 4, le);
    } else {
        put_u(e, 4, 4, le); /* PT_NOTE */
        put_u(e + (is64 ? 8 : 4), is64 ? 8 : 4, data, le);
        put_u(e + (is64 ? 32 : 16), is64 ? 8 : 4, nlen, le);
        put_u(e + (is64 ? 48 : 28), is64 ? 8 : 4, 4, le);
    }
    memcpy(b + data, notes, nlen);
    return data + nlen;
}

static const unsigned glibc_ia64_tag[] = {0, 3, 2, 18};
static const unsigned build_id[] = {0xdeadbeef, 0x12345678, 0x9abcdef0};

static void test_abi_tag_good(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN];
    unsigned char notes[128], b[512];
    struct binfmt_abi_tag t;
    for (int cls = 1; cls <= 2; cls++)
        for (int order = 1; order <= 2; order++)
            for (int section = 0; section <= 1; section++) {
                /* a build-id note first: the reader must skip it */
                size_t n = note(notes, "GNU", 3, build_id, 3, order == 1);
                n += note(notes + n, "GNU", 1, glibc_ia64_tag, 4, order == 1);
                size_t len = elf_with_notes(b, sizeof b, cls, order, section, notes, n);
                char *p = put("tagged.so", b, len);
                memset(&t, 0xff, sizeof t);
                assert_int_equal(binfmt_elf_abi_tag(p, &t, err), 1);
                assert_int_equal(t.os, 0);
                assert_int_equal(t.major, 3);
                assert_int_equal(t.minor, 2);
                assert_int_equal(t.patch, 18);
                free(p);
            }
}

static void test_abi_tag_absent(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN];
    unsigned char notes[128], b[512], min[32];
    struct binfmt_abi_tag t;
    /* only a build-id note */
    size_t n = note(notes, "GNU", 3, build_id, 3, 1);
    size_t len = elf_with_notes(b, sizeof b, 2, 1, 0, notes, n);
    char *p = put("no-tag.so", b, len);
    assert_int_equal(binfmt_elf_abi_tag(p, &t, err), 0);
    assert_int_equal(binfmt_kernel_for_libc(p, "6.1.0", (char *)min, err),
                     BINFMT_KERNEL_NO_TAG);
    assert_non_null(strstr(err, "no GNU ABI tag"));
    free(p);
    /* type 1 but another vendor's name: not the GNU tag */
    n = note(notes, "FreeBSD", 1, glibc_ia64_tag, 1, 1);
    len = elf_with_notes(b, sizeof b, 2, 1, 0, notes, n);
    p = put("bsd.so", b, len);
    assert_int_equal(binfmt_elf_abi_tag(p, &t, err), 0);
    free(p);
    /* no program headers and no sections at all */
    unsigned char h[64];
    elf_header(h, 2, 1, BINFMT_ELF_IA64);
    p = put("bare.elf", h, sizeof h);
    assert_int_equal(binfmt_elf_abi_tag(p, &t, err), 0);
    free(p);
    /* a tag for another OS: nothing to compare with a Linux release */
    static const unsigned hurd[] = {1, 0, 0, 6};
    n = note(notes, "GNU", 1, hurd, 4, 1);
    len = elf_with_notes(b, sizeof b, 2, 1, 0, notes, n);
    p = put("hurd.so", b, len);
    assert_int_equal(binfmt_elf_abi_tag(p, &t, err), 1);
    assert_int_equal(binfmt_kernel_for_libc(p, "6.1.0", (char *)min, err),
                     BINFMT_KERNEL_NO_TAG);
    assert_non_null(strstr(err, "GNU/Hurd"));
    free(p);
}

static void test_abi_tag_truncated(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN];
    unsigned char notes[128], b[512];
    struct binfmt_abi_tag t;
    size_t n = note(notes, "GNU", 1, glibc_ia64_tag, 4, 1);
    size_t len = elf_with_notes(b, sizeof b, 2, 1, 0, notes, n);
    /* the file ends inside the note segment */
    char *p = put("cut-note.so", b, len - 6);
    assert_int_equal(binfmt_elf_abi_tag(p, &t, err), -1);
    assert_non_null(strstr(err, "truncated"));
    assert_non_null(strstr(err, p));
    free(p);
    /* the file ends inside the program header table */
    p = put("cut-phdr.so", b, 64 + 20);
    assert_int_equal(binfmt_elf_abi_tag(p, &t, err), -1);
    assert_non_null(strstr(err, "program header table"));
    free(p);
    /* the note's descsz runs past its segment */
    unsigned char bad[128];
    memcpy(bad, notes, n);
    put_u(bad + 4, 4, 64, 1);
    len = elf_with_notes(b, sizeof b, 2, 1, 0, bad, n);
    p = put("long-desc.so", b, len);
    assert_int_equal(binfmt_elf_abi_tag(p, &t, err), -1);
    assert_non_null(strstr(err, "truncated ELF note"));
    free(p);
    /* an ABI tag with 8 bytes instead of 16 */
    n = note(notes, "GNU", 1, glibc_ia64_tag, 2, 1);
    len = elf_with_notes(b, sizeof b, 2, 1, 0, notes, n);
    p = put("short-tag.so", b, len);
    assert_int_equal(binfmt_elf_abi_tag(p, &t, err), -1);
    assert_non_null(strstr(err, "expected 16"));
    free(p);
    /* not an ELF file at all */
    p = put("libc.so", "/* GNU ld script */\n", 20);
    assert_int_equal(binfmt_elf_abi_tag(p, &t, err), -1);
    assert_non_null(strstr(err, "not an ELF file"));
    free(p);
}

static void test_release(void **state)
{
    (void)state;
    unsigned v[3];
    assert_int_equal(binfmt_parse_release("6.1.0-13-mckinley", v), 0);
    assert_true(v[0] == 6 && v[1] == 1 && v[2] == 0);
    assert_int_equal(binfmt_parse_release("6.1.76", v), 0);
    assert_true(v[0] == 6 && v[1] == 1 && v[2] == 76);
    assert_int_equal(binfmt_parse_release("3.2", v), 0);
    assert_true(v[0] == 3 && v[1] == 2 && v[2] == 0);
    assert_int_equal(binfmt_parse_release("5.10+", v), 0);
    assert_true(v[0] == 5 && v[1] == 10 && v[2] == 0);
    assert_int_equal(binfmt_parse_release("6", v), -1);
    assert_int_equal(binfmt_parse_release("v6.1", v), -1);
    assert_int_equal(binfmt_parse_release("", v), -1);
    assert_int_equal(binfmt_parse_release("99999999.1", v), -1);
}

static void test_kernel_for_libc(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN], min[32];
    unsigned char notes[128], b[512];
    size_t n = note(notes, "GNU", 1, glibc_ia64_tag, 4, 1);
    size_t len = elf_with_notes(b, sizeof b, 2, 1, 0, notes, n);
    char *p = put("libc.so.6", b, len);
    assert_int_equal(binfmt_kernel_for_libc(p, "6.1.0-13-mckinley", min, err), BINFMT_KERNEL_OK);
    assert_string_equal(min, "3.2.18");
    assert_int_equal(binfmt_kernel_for_libc(p, "3.2.18", min, err), BINFMT_KERNEL_OK);
    /* patch level decides */
    assert_int_equal(binfmt_kernel_for_libc(p, "3.2.17-rt", min, err), BINFMT_KERNEL_TOO_OLD);
    assert_non_null(strstr(err, "3.2.18"));
    assert_non_null(strstr(err, "3.2.17-rt"));
    /* minor beats patch: 3.1.99 < 3.2.18 < 3.10.0 */
    assert_int_equal(binfmt_kernel_for_libc(p, "3.1.99", min, err), BINFMT_KERNEL_TOO_OLD);
    assert_int_equal(binfmt_kernel_for_libc(p, "3.10.0", min, err), BINFMT_KERNEL_OK);
    assert_int_equal(binfmt_kernel_for_libc(p, "2.6.32", min, err), BINFMT_KERNEL_TOO_OLD);
    assert_non_null(strstr(err, "needs Linux >= 3.2.18, but the kernel is 2.6.32"));
    assert_int_equal(binfmt_kernel_for_libc(p, "mckinley", min, err), -1);
    assert_non_null(strstr(err, "not a version"));
    free(p);
    char *missing = NULL;
    assert_true(asprintf(&missing, "%s/nothing/libc.so.6", dir) > 0);
    assert_int_equal(binfmt_kernel_for_libc(missing, "6.1.0", min, err), -1);
    assert_non_null(strstr(err, "No such file"));
    free(missing);
}

/* The host's C library: a real glibc, whose tag says Linux and a minimum
 * of at least 2.6 (3.2.0 for Debian bookworm's x86-64 glibc). */
static void test_abi_tag_host_libc(void **state)
{
    (void)state;
    static const char *const libcs[] = {"/lib/x86_64-linux-gnu/libc.so.6",
                                        "/lib/aarch64-linux-gnu/libc.so.6",
                                        "/lib64/libc.so.6", NULL};
    const char *libc = NULL;
    for (size_t i = 0; libcs[i] && !libc; i++)
        if (access(libcs[i], R_OK) == 0)
            libc = libcs[i];
    if (!libc)
        skip();
    char err[BINFMT_ERRLEN], min[32];
    struct binfmt_abi_tag t;
    assert_int_equal(binfmt_elf_abi_tag(libc, &t, err), 1);
    assert_int_equal(t.os, 0);
    assert_true(t.major > 2 || (t.major == 2 && t.minor >= 6));
    /* the running kernel satisfies the libc that runs this test */
    FILE *f = fopen("/proc/sys/kernel/osrelease", "r");
    char rel[128] = "";
    if (f) {
        if (!fgets(rel, sizeof rel, f))
            rel[0] = 0;
        fclose(f);
        rel[strcspn(rel, "\n")] = 0;
    }
    if (rel[0])
        assert_int_equal(binfmt_kernel_for_libc(libc, rel, min, err), BINFMT_KERNEL_OK);
    assert_int_equal(binfmt_kernel_for_libc(libc, "2.4.0", min, err), BINFMT_KERNEL_TOO_OLD);
}

/* An ELF64 LE file with one PT_INTERP program header over TEXT (N bytes). */
static size_t elf_with_interp(unsigned char *b, size_t cap, const char *text, size_t n)
{
    memset(b, 0, cap);
    elf_header(b, 2, 1, BINFMT_ELF_IA64);
    put_u(b + 32, 8, 64, 1);
    put_u(b + 54, 2, 56, 1);
    put_u(b + 56, 2, 1, 1);
    put_u(b + 64, 4, 3, 1); /* PT_INTERP */
    put_u(b + 64 + 8, 8, 120, 1);
    put_u(b + 64 + 32, 8, n, 1);
    memcpy(b + 120, text, n);
    return 120 + n;
}

static void test_interp(void **state)
{
    (void)state;
    char err[BINFMT_ERRLEN], buf[64];
    unsigned char b[512];
    static const char ld[] = "/lib/ld-linux-ia64.so.2";
    size_t len = elf_with_interp(b, sizeof b, ld, sizeof ld);
    char *p = put("hello", b, len);
    assert_int_equal(binfmt_elf_interp(p, buf, sizeof buf, err), 1);
    assert_string_equal(buf, ld);
    /* too small a buffer */
    assert_int_equal(binfmt_elf_interp(p, buf, 8, err), -1);
    assert_non_null(strstr(err, "PT_INTERP of 24 bytes"));
    free(p);
    /* the file ends inside the interpreter's name */
    p = put("cut-interp", b, len - 4);
    assert_int_equal(binfmt_elf_interp(p, buf, sizeof buf, err), -1);
    assert_non_null(strstr(err, "truncated"));
    free(p);
    /* a static program: no PT_INTERP */
    unsigned char notes[64];
    size_t n = note(notes, "GNU", 1, glibc_ia64_tag, 4, 1);
    len = elf_with_notes(b, sizeof b, 2, 1, 0, notes, n);
    p = put("static", b, len);
    assert_int_equal(binfmt_elf_interp(p, buf, sizeof buf, err), 0);
    free(p);
    /* a host program: its interpreter is a path to an ld.so */
    if (access("/bin/sh", R_OK) == 0) {
        assert_int_equal(binfmt_elf_interp("/bin/sh", buf, sizeof buf, err), 1);
        assert_non_null(strstr(buf, "/ld"));
    }
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
        cmocka_unit_test(test_pe_subsystem),
        cmocka_unit_test(test_self),
        cmocka_unit_test(test_abi_tag_good), cmocka_unit_test(test_abi_tag_absent),
        cmocka_unit_test(test_abi_tag_truncated), cmocka_unit_test(test_release),
        cmocka_unit_test(test_kernel_for_libc), cmocka_unit_test(test_abi_tag_host_libc),
        cmocka_unit_test(test_interp),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
