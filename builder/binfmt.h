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

/* Names for messages ("IA-64", "x86-64"); "an unknown machine" for values
 * the table does not know (print the number too). */
const char *binfmt_elf_machine_name(int machine);
const char *binfmt_pe_machine_name(int machine);

#endif
