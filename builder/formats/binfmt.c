/* ELF and PE/COFF machine fields (binfmt.h). */
#define _GNU_SOURCE
#include "binfmt.h"

#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens PATH and reads up to N bytes at OFF into BUF. Returns the count
 * read, or -1 with err filled. *size gets the file's size. */
static long read_at(const char *path, long long off, void *buf, size_t n, long long *size,
                    char err[BINFMT_ERRLEN])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, BINFMT_ERRLEN, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, BINFMT_ERRLEN, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (size)
        *size = (long long)sb.st_size;
    ssize_t r = pread(fd, buf, n, (off_t)off);
    int e = errno;
    close(fd);
    if (r < 0) {
        snprintf(err, BINFMT_ERRLEN, "%s: %s", path, strerror(e));
        return -1;
    }
    return (long)r;
}

static const char *compressed(const unsigned char *b, long n)
{
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return "gzip";
    if (n >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
        return "zstd";
    if (n >= 6 && memcmp(b, "\xfd" "7zXZ", 5) == 0)
        return "xz";
    return NULL;
}

int binfmt_elf_machine(const char *path, char err[BINFMT_ERRLEN])
{
    unsigned char h[20];
    long n = read_at(path, 0, h, sizeof h, NULL, err);
    if (n < 0)
        return -1;
    const char *z = compressed(h, n);
    if (z) {
        snprintf(err, BINFMT_ERRLEN,
                 "%s: %s-compressed, not an ELF file (give the uncompressed vmlinux)", path, z);
        return -1;
    }
    if (n < 4 || memcmp(h, "\177ELF", 4) != 0) {
        snprintf(err, BINFMT_ERRLEN, "%s: not an ELF file (no \\177ELF magic)", path);
        return -1;
    }
    if (n < 20) {
        snprintf(err, BINFMT_ERRLEN, "%s: truncated ELF header (%ld bytes)", path, n);
        return -1;
    }
    if (h[4] != 1 && h[4] != 2) {
        snprintf(err, BINFMT_ERRLEN, "%s: bad ELF class %u", path, h[4]);
        return -1;
    }
    if (h[5] == 1)
        return h[18] | h[19] << 8;
    if (h[5] == 2)
        return h[18] << 8 | h[19];
    snprintf(err, BINFMT_ERRLEN, "%s: bad ELF byte order %u", path, h[5]);
    return -1;
}

int binfmt_pe_machine(const char *path, char err[BINFMT_ERRLEN])
{
    unsigned char h[64];
    long long size = 0;
    long n = read_at(path, 0, h, sizeof h, &size, err);
    if (n < 0)
        return -1;
    if (n < 2 || h[0] != 'M' || h[1] != 'Z') {
        if (n >= 4 && memcmp(h, "\177ELF", 4) == 0)
            snprintf(err, BINFMT_ERRLEN, "%s: an ELF file, not a PE/COFF (EFI) image", path);
        else
            snprintf(err, BINFMT_ERRLEN, "%s: not a PE/COFF (EFI) image (no MZ header)", path);
        return -1;
    }
    if (n < 64) {
        snprintf(err, BINFMT_ERRLEN, "%s: truncated MZ header (%ld bytes)", path, n);
        return -1;
    }
    uint32_t lfanew = (uint32_t)h[0x3c] | (uint32_t)h[0x3d] << 8 | (uint32_t)h[0x3e] << 16 |
                      (uint32_t)h[0x3f] << 24;
    if ((long long)lfanew + 6 > size) {
        snprintf(err, BINFMT_ERRLEN,
                 "%s: PE header offset 0x%x is beyond the end of the file (%lld bytes)", path,
                 (unsigned)lfanew, size);
        return -1;
    }
    unsigned char pe[6];
    n = read_at(path, lfanew, pe, sizeof pe, NULL, err);
    if (n < 0)
        return -1;
    if (n < 6 || memcmp(pe, "PE\0\0", 4) != 0) {
        snprintf(err, BINFMT_ERRLEN, "%s: no PE signature at offset 0x%x (an MS-DOS program?)",
                 path, (unsigned)lfanew);
        return -1;
    }
    return pe[4] | pe[5] << 8;
}

int binfmt_pe_subsystem(const char *path, char err[BINFMT_ERRLEN])
{
    if (binfmt_pe_machine(path, err) < 0)
        return -1;
    unsigned char h[64], opt[70];
    if (read_at(path, 0, h, sizeof h, NULL, err) < 64)
        return -1;
    uint32_t lfanew = (uint32_t)h[0x3c] | (uint32_t)h[0x3d] << 8 | (uint32_t)h[0x3e] << 16 |
                      (uint32_t)h[0x3f] << 24;
    /* the optional header follows the 4-byte signature and the 20-byte COFF
     * header; Subsystem is at offset 68 in PE32 and PE32+ alike */
    long n = read_at(path, (long long)lfanew + 24, opt, sizeof opt, NULL, err);
    if (n < 0)
        return -1;
    if (n < 70 || !((opt[0] == 0x0b && (opt[1] == 1 || opt[1] == 2)))) {
        snprintf(err, BINFMT_ERRLEN, "%s: no PE32/PE32+ optional header at offset 0x%x", path,
                 (unsigned)lfanew + 24);
        return -1;
    }
    return opt[68] | opt[69] << 8;
}

/* ---- the GNU ABI tag ---------------------------------------------------- */

static uint64_t get_u(const unsigned char *p, int size, bool le)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++)
        v |= (uint64_t)p[le ? i : size - 1 - i] << (8 * i);
    return v;
}

/* Walks the notes in BUF[0..N) (ALIGN 4 or 8). Returns 1 with *tag filled
 * when the GNU ABI tag is there, 0 if not, -1 if a note runs past the end. */
static int scan_notes(const char *path, const unsigned char *buf, uint64_t n, uint64_t align,
                      bool le, struct binfmt_abi_tag *tag, char err[BINFMT_ERRLEN])
{
    uint64_t off = 0;
    align = align == 8 ? 8 : 4;
    while (off + 12 <= n) {
        uint64_t namesz = get_u(buf + off, 4, le), descsz = get_u(buf + off + 4, 4, le);
        uint64_t type = get_u(buf + off + 8, 4, le);
        uint64_t name = off + 12;
        /* padding aligns offsets within the area (8 for .note.gnu.property) */
        uint64_t desc = (name + namesz + align - 1) & ~(align - 1);
        uint64_t next = (desc + descsz + align - 1) & ~(align - 1);
        if (namesz > n || descsz > n || desc > n || desc + descsz > n) {
            snprintf(err, BINFMT_ERRLEN, "%s: truncated ELF note at offset %llu of a note "
                     "area of %llu bytes", path, (unsigned long long)off,
                     (unsigned long long)n);
            return -1;
        }
        if (namesz == 4 && memcmp(buf + name, "GNU", 4) == 0 && type == 1 /* NT_GNU_ABI_TAG */) {
            if (descsz < 16) {
                snprintf(err, BINFMT_ERRLEN, "%s: GNU ABI tag note has %llu bytes (expected 16)",
                         path, (unsigned long long)descsz);
                return -1;
            }
            tag->os = (unsigned)get_u(buf + desc, 4, le);
            tag->major = (unsigned)get_u(buf + desc + 4, 4, le);
            tag->minor = (unsigned)get_u(buf + desc + 8, 4, le);
            tag->patch = (unsigned)get_u(buf + desc + 12, 4, le);
            return 1;
        }
        off = next;
    }
    return 0;
}

/* Reads the area [OFF, OFF+SIZE) of PATH (a note segment or section) and
 * scans it. */
static int note_area(const char *path, uint64_t off, uint64_t size, uint64_t align,
                     long long fsize, bool le, struct binfmt_abi_tag *tag,
                     char err[BINFMT_ERRLEN])
{
    if (size == 0)
        return 0;
    if (off > (uint64_t)fsize || size > (uint64_t)fsize - off) {
        snprintf(err, BINFMT_ERRLEN, "%s: truncated: a note area at offset %llu (%llu bytes) "
                 "goes past the end of the file (%lld bytes)", path, (unsigned long long)off,
                 (unsigned long long)size, fsize);
        return -1;
    }
    if (size > (1u << 20)) {
        snprintf(err, BINFMT_ERRLEN, "%s: implausible note area of %llu bytes", path,
                 (unsigned long long)size);
        return -1;
    }
    unsigned char *buf = malloc(size);
    if (!buf) {
        snprintf(err, BINFMT_ERRLEN, "%s: out of memory", path);
        return -1;
    }
    long r = read_at(path, (long long)off, buf, size, NULL, err);
    int rc = r < 0 ? -1 : scan_notes(path, buf, (uint64_t)r, align, le, tag, err);
    free(buf);
    return rc;
}

/* What the ELF header says about the program and section header tables. */
struct elf_tables {
    bool is64, le;
    long long fsize;
    uint64_t phoff, shoff;
    unsigned phentsize, phnum, shentsize, shnum;
};

static int elf_tables(const char *path, struct elf_tables *t, char err[BINFMT_ERRLEN])
{
    unsigned char h[64];
    if (binfmt_elf_machine(path, err) < 0)
        return -1;
    long n = read_at(path, 0, h, sizeof h, &t->fsize, err);
    if (n < 0)
        return -1;
    t->is64 = h[4] == 2;
    t->le = h[5] == 1;
    if (n < (t->is64 ? 64 : 52)) {
        snprintf(err, BINFMT_ERRLEN, "%s: truncated ELF header (%ld bytes)", path, n);
        return -1;
    }
    bool is64 = t->is64, le = t->le;
    t->phoff = is64 ? get_u(h + 32, 8, le) : get_u(h + 28, 4, le);
    t->shoff = is64 ? get_u(h + 40, 8, le) : get_u(h + 32, 4, le);
    t->phentsize = (unsigned)get_u(h + (is64 ? 54 : 42), 2, le);
    t->phnum = (unsigned)get_u(h + (is64 ? 56 : 44), 2, le);
    t->shentsize = (unsigned)get_u(h + (is64 ? 58 : 46), 2, le);
    t->shnum = (unsigned)get_u(h + (is64 ? 60 : 48), 2, le);
    return 0;
}

/* Checks that table USE_PH (else the section header table) lies inside the
 * file and has entries big enough. */
static int table_ok(const char *path, const struct elf_tables *t, bool use_ph,
                    char err[BINFMT_ERRLEN])
{
    uint64_t tab = use_ph ? t->phoff : t->shoff;
    unsigned ent = use_ph ? t->phentsize : t->shentsize, num = use_ph ? t->phnum : t->shnum;
    unsigned want = use_ph ? (t->is64 ? 56 : 32) : (t->is64 ? 64 : 40);
    if (ent < want || tab > (uint64_t)t->fsize || (uint64_t)ent * num > (uint64_t)t->fsize - tab) {
        snprintf(err, BINFMT_ERRLEN, "%s: truncated ELF file: its %s table (%u entries of %u "
                 "bytes at offset %llu) goes past the end (%lld bytes)", path,
                 use_ph ? "program header" : "section header", num, ent,
                 (unsigned long long)tab, t->fsize);
        return -1;
    }
    return 0;
}

/* Program header I: type, file offset, file size, alignment. */
static int phdr(const char *path, const struct elf_tables *t, unsigned i, uint64_t *type,
                uint64_t *off, uint64_t *size, uint64_t *align, char err[BINFMT_ERRLEN])
{
    unsigned char e[64] = {0};
    if (read_at(path, (long long)(t->phoff + (uint64_t)i * t->phentsize), e, sizeof e, NULL,
                err) < 0)
        return -1;
    bool is64 = t->is64, le = t->le;
    *type = get_u(e, 4, le);
    *off = is64 ? get_u(e + 8, 8, le) : get_u(e + 4, 4, le);
    *size = is64 ? get_u(e + 32, 8, le) : get_u(e + 16, 4, le);
    *align = is64 ? get_u(e + 48, 8, le) : get_u(e + 28, 4, le);
    return 0;
}

int binfmt_elf_abi_tag(const char *path, struct binfmt_abi_tag *tag, char err[BINFMT_ERRLEN])
{
    struct elf_tables t;
    if (elf_tables(path, &t, err) < 0)
        return -1;
    bool use_ph = t.phnum > 0;
    unsigned num = use_ph ? t.phnum : t.shnum;
    if (num == 0)
        return 0;
    if (table_ok(path, &t, use_ph, err) < 0)
        return -1;
    for (unsigned i = 0; i < num; i++) {
        uint64_t type, off, size, align;
        if (use_ph) {
            if (phdr(path, &t, i, &type, &off, &size, &align, err) < 0)
                return -1;
            if (type != 4 /* PT_NOTE */)
                continue;
        } else {
            unsigned char e[64] = {0};
            if (read_at(path, (long long)(t.shoff + (uint64_t)i * t.shentsize), e, sizeof e,
                        NULL, err) < 0)
                return -1;
            if (get_u(e + 4, 4, t.le) != 7 /* SHT_NOTE */)
                continue;
            off = t.is64 ? get_u(e + 24, 8, t.le) : get_u(e + 16, 4, t.le);
            size = t.is64 ? get_u(e + 32, 8, t.le) : get_u(e + 20, 4, t.le);
            align = t.is64 ? get_u(e + 48, 8, t.le) : get_u(e + 32, 4, t.le);
        }
        int r = note_area(path, off, size, align, t.fsize, t.le, tag, err);
        if (r != 0)
            return r;
    }
    return 0;
}

int binfmt_elf_interp(const char *path, char *buf, size_t len, char err[BINFMT_ERRLEN])
{
    struct elf_tables t;
    if (elf_tables(path, &t, err) < 0)
        return -1;
    if (t.phnum == 0)
        return 0;
    if (table_ok(path, &t, true, err) < 0)
        return -1;
    for (unsigned i = 0; i < t.phnum; i++) {
        uint64_t type, off, size, align;
        if (phdr(path, &t, i, &type, &off, &size, &align, err) < 0)
            return -1;
        if (type != 3 /* PT_INTERP */)
            continue;
        if (off > (uint64_t)t.fsize || size > (uint64_t)t.fsize - off) {
            snprintf(err, BINFMT_ERRLEN, "%s: truncated: PT_INTERP at offset %llu (%llu bytes) "
                     "goes past the end of the file (%lld bytes)", path,
                     (unsigned long long)off, (unsigned long long)size, t.fsize);
            return -1;
        }
        if (size == 0 || size >= len) {
            snprintf(err, BINFMT_ERRLEN, "%s: PT_INTERP of %llu bytes (expected 1 to %zu)",
                     path, (unsigned long long)size, len - 1);
            return -1;
        }
        long r = read_at(path, (long long)off, buf, size, NULL, err);
        if (r < 0)
            return -1;
        buf[r] = 0; /* the segment's own NUL, or ours */
        return 1;
    }
    return 0;
}

int binfmt_parse_release(const char *release, unsigned v[3])
{
    const char *p = release;
    v[0] = v[1] = v[2] = 0;
    for (int i = 0; i < 3; i++) {
        if (*p < '0' || *p > '9')
            return i >= 2 ? 0 : -1;
        unsigned long x = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            if ((x = x * 10 + (unsigned long)(*p - '0')) > 65535)
                return -1;
        v[i] = (unsigned)x;
        if (i < 2) {
            if (*p != '.')
                return i >= 1 ? 0 : -1;
            p++;
        }
    }
    return 0;
}

static const char *os_name(unsigned os)
{
    static const char *const names[] = {"Linux", "GNU/Hurd", "Solaris", "FreeBSD"};
    return os < ARRAY_LEN(names) ? names[os] : "an unknown OS";
}

int binfmt_kernel_for_libc(const char *libc, const char *release, char min[32],
                           char msg[BINFMT_ERRLEN])
{
    struct binfmt_abi_tag t;
    unsigned k[3];
    min[0] = 0;
    int r = binfmt_elf_abi_tag(libc, &t, msg);
    if (r < 0)
        return -1;
    if (r == 0) {
        snprintf(msg, BINFMT_ERRLEN, "%s has no GNU ABI tag note (.note.ABI-tag): no minimum "
                 "kernel to check", libc);
        return BINFMT_KERNEL_NO_TAG;
    }
    snprintf(min, 32, "%u.%u.%u", t.major, t.minor, t.patch);
    if (t.os != 0) {
        snprintf(msg, BINFMT_ERRLEN, "%s's ABI tag is for %s (OS %u), not Linux", libc,
                 os_name(t.os), t.os);
        return BINFMT_KERNEL_NO_TAG;
    }
    if (binfmt_parse_release(release, k) < 0) {
        snprintf(msg, BINFMT_ERRLEN, "kernel release '%s' is not a version (expected "
                 "MAJOR.MINOR[.PATCH...])", release);
        return -1;
    }
    unsigned long have = (unsigned long)k[0] << 32 | (unsigned long)k[1] << 16 | k[2];
    unsigned long need = (unsigned long)t.major << 32 | (unsigned long)t.minor << 16 | t.patch;
    if (have < need) {
        snprintf(msg, BINFMT_ERRLEN, "%s needs Linux >= %s, but the kernel is %s", libc, min,
                 release);
        return BINFMT_KERNEL_TOO_OLD;
    }
    snprintf(msg, BINFMT_ERRLEN, "%s needs Linux >= %s; the kernel is %s", libc, min, release);
    return BINFMT_KERNEL_OK;
}

const char *binfmt_elf_machine_name(int m)
{
    switch (m) {
    case BINFMT_ELF_386: return "i386";
    case BINFMT_ELF_IA64: return "IA-64";
    case BINFMT_ELF_X86_64: return "x86-64";
    case BINFMT_ELF_AARCH64: return "AArch64";
    case 40: return "ARM";
    case 20: return "PowerPC";
    case 21: return "PowerPC64";
    case 22: return "S/390";
    case 243: return "RISC-V";
    case 8: return "MIPS";
    case 2: return "SPARC";
    case 43: return "SPARC V9";
    case 15: return "PA-RISC";
    case 9026: return "Alpha";
    default: return "an unknown machine";
    }
}

const char *binfmt_pe_machine_name(int m)
{
    switch (m) {
    case BINFMT_PE_I386: return "i386";
    case BINFMT_PE_IA64: return "IA-64 (Itanium)";
    case BINFMT_PE_AMD64: return "x86-64";
    case BINFMT_PE_ARM64: return "ARM64";
    case 0x1c2: return "ARM Thumb";
    case 0x1c4: return "ARMv7";
    case 0x5064: return "RISC-V 64";
    case 0xebc: return "EFI byte code";
    default: return "an unknown machine";
    }
}
