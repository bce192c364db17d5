/* ELF and PE/COFF machine fields (binfmt.h). */
#define _GNU_SOURCE
#include "binfmt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
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
