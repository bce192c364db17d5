/* Which machine a binary is for: the e_machine of an ELF file and the
 * Machine field of a PE/COFF (EFI) image. Stages use these to refuse an
 * input built for the wrong architecture (an x86-64 vmlinux in an ia64
 * bundle, an x64 loader on an Itanium ESP) with a clear message instead of
 * a silent boot failure in the emulator.
 *
 * Both functions read only the headers. On failure they return -1 and fill
 * `char err[BINFMT_ERRLEN]` with a one-line reason naming the file (not
 * found, too short, not an ELF/PE file, gzip-compressed, truncated). */
#ifndef TRILLIAN_BINFMT_H
#define TRILLIAN_BINFMT_H

#include <stddef.h>

#define BINFMT_ERRLEN 512

/* ELF e_machine values (elf.h's EM_*). */
enum {
    BINFMT_ELF_386 = 3,
    BINFMT_ELF_IA64 = 50,
    BINFMT_ELF_X86_64 = 62,
    BINFMT_ELF_AARCH64 = 183,
};

/* PE/COFF Machine values (IMAGE_FILE_MACHINE_*). */
enum {
    BINFMT_PE_I386 = 0x14c,
    BINFMT_PE_IA64 = 0x200,
    BINFMT_PE_AMD64 = 0x8664,
    BINFMT_PE_ARM64 = 0xaa64,
};

/* e_machine of the ELF file PATH (either class, either byte order). */
int binfmt_elf_machine(const char *path, char err[BINFMT_ERRLEN]);
/* Machine of the PE/COFF image PATH: "MZ", e_lfanew at 0x3c, "PE\0\0",
 * then the 16-bit little-endian Machine. */
int binfmt_pe_machine(const char *path, char err[BINFMT_ERRLEN]);
/* Subsystem of the PE/COFF image PATH (its optional header's, PE32 or
 * PE32+): BINFMT_PE_EFI_APPLICATION for an EFI program such as a loader. */
enum { BINFMT_PE_EFI_APPLICATION = 10 };
int binfmt_pe_subsystem(const char *path, char err[BINFMT_ERRLEN]);

/* The GNU ABI tag of an ELF file: the NT_GNU_ABI_TAG note ("GNU", type 1,
 * in .note.ABI-tag) that glibc puts into libc.so.6, ld.so and every program
 * it links: the OS (0 = Linux) and the oldest kernel it runs on, which is
 * glibc's --enable-kernel. Read from the PT_NOTE segments (from SHT_NOTE
 * sections when the file has no program headers). Returns 1 and fills *tag
 * if the file has the note, 0 if it has none (musl, freestanding programs),
 * -1 with err filled if the file cannot be read or is malformed (truncated
 * headers, a note running past its segment). */
struct binfmt_abi_tag {
    unsigned os; /* 0 Linux, 1 GNU/Hurd, 2 Solaris, 3 FreeBSD */
    unsigned major, minor, patch;
};
int binfmt_elf_abi_tag(const char *path, struct binfmt_abi_tag *tag, char err[BINFMT_ERRLEN]);

/* The program interpreter (PT_INTERP: "/lib/ld-linux-ia64.so.2") of a
 * dynamically linked ELF program, copied NUL-terminated into BUF (LEN bytes).
 * Returns 1, 0 for a program without one (static, shared library), or -1
 * with err filled (unreadable, truncated, longer than LEN - 1). */
int binfmt_elf_interp(const char *path, char *buf, size_t len, char err[BINFMT_ERRLEN]);

/* A kernel release ("6.1.0-13-mckinley", "6.1.76", "3.2") as major, minor,
 * patch (a missing patch is 0). Returns 0, or -1 if it does not start with
 * MAJOR.MINOR. */
int binfmt_parse_release(const char *release, unsigned v[3]);

/* The kernel-versus-C-library check every libc stage runs (glibc from
 * source, a Debian libc6 sysroot): does a kernel whose `make kernelrelease`
 * is RELEASE satisfy the minimum in LIBC's ABI tag (LIBC = the sysroot's
 * libc.so.6 or ld.so)? Fills min[] with the minimum as "X.Y.Z" when the tag
 * was read. Returns
 *   BINFMT_KERNEL_OK        the kernel is new enough;
 *   BINFMT_KERNEL_TOO_OLD   it is older: msg says "LIBC needs Linux >= MIN,
 *                           but the kernel is RELEASE" (the caller adds which
 *                           settings to change: its own libc minimum, or the
 *                           kernel's source);
 *   BINFMT_KERNEL_NO_TAG    LIBC has no ABI tag, or one for another OS
 *                           (nothing to compare; msg says which);
 *   -1                      LIBC unreadable or malformed, or RELEASE not a
 *                           version (msg says which). */
enum { BINFMT_KERNEL_OK = 0, BINFMT_KERNEL_TOO_OLD = 1, BINFMT_KERNEL_NO_TAG = 2 };
int binfmt_kernel_for_libc(const char *libc, const char *release, char min[32],
                           char msg[BINFMT_ERRLEN]);

/* Names for messages ("IA-64", "x86-64"); "an unknown machine" for values
 * the table does not know (print the number too). */
const char *binfmt_elf_machine_name(int machine);
const char *binfmt_pe_machine_name(int machine);

#endif
