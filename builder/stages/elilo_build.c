/* packages, kind "elilo": elilo 3.16 (the Itanium EFI Linux loader) built
 * from source with the recipe's ia64 toolchain, against gnu-efi 3.0.15
 * built in the same stage. A bootloader of kind "elilo" takes elilo.efi
 * from this stage when the recipe has one (esp.c), as a bootloader of kind
 * "grub" takes GRUB's image from a packages stage of kind "grub".
 *
 * A generic source package (pkg_build.h): the table below is the whole
 * build. Sources, pinned by sha256 (settings gnu_efi_* and elilo_*):
 *   - gnu-efi 3.0.15: Debian's orig tarball (Debian's .dsc has this hash),
 *     from deb.debian.org or a mirror;
 *   - elilo 3.16 (the last release, 2013): the git tree at 9351a61 repacked
 *     reproducibly; no origin serves a tarball, so only mirrors have it
 *     (../shared/mirror/README.md, "elilo").
 * Steps:
 *   1. gnu-efi: make lib gnuefi inc with CROSS_COMPILE=the toolchain's
 *      prefix (gnu-efi takes ARCH from the compiler's -dumpmachine);
 *      freestanding (-ffreestanding is gnu-efi's own), no libc needed;
 *   2. its make install into WORK/gnu-efi-root (PREFIX=/usr): include/efi,
 *      lib/{libefi.a,libgnuefi.a,crt0-efi-ia64.o,elf_ia64_efi.lds};
 *   3. elilo, patched first with the patches in firmware/elilo/ (the first: gnu-efi
 *      3.0.15 has its own StrnCpy, which elilo's conflicts with; elilo then
 *      uses gnu-efi's): make with ARCH=ia64 (its Make.defaults would ask
 *      dpkg-architecture for the host's), prefix=the toolchain's prefix (its
 *      CC is $(prefix)gcc), EFIINC/GNUEFILIB/EFILIB/EFICRT0 at step 2's
 *      tree, and SUBDIRS without tools/ (eliloalt, a Linux program that
 *      needs a C library, not part of the loader). Two flags are added,
 *      through OPTIMFLAGS (a part of elilo's CFLAGS, so its own flags stay):
 *      -ffreestanding, because gnu-efi's ia64 efibind.h includes
 *      <stdint.h>, which a stage-1 gcc without a C library provides only
 *      freestanding; and -std=gnu17, the 2013 code's dialect (it names a
 *      variable `bool`, a keyword in C23, gcc 15's default; gnu17 is gcc
 *      12's, so its output is unchanged there). A second own patch makes
 *      Make.rules' objcopy name only the output's format (-O, not
 *      --target, which binutils 2.47 also applies to the ELF input and then
 *      refuses it; with 2.40 the image is the same). gcc 12 warns four times (variables set but not used)
 *      and ld once (an RWX segment, as every EFI image linked this way):
 *      left as warnings. elilo's Makefile builds its subdirectories as
 *      prerequisites that elilo.so's objects race under -j: it runs with
 *      -j1 (about 10 s).
 * elilo.so is made an EFI application by objcopy --target=efi-app-ia64
 * (its PE time stamp is 0; no build path gets into the image; every step
 * has SOURCE_DATE_EPOCH all the same).
 *
 * Check: elilo.efi's PE machine is IA-64 (0x200) and its subsystem EFI
 * application (10).
 *
 * Outputs: elilo.efi, stage-manifest.json {"sources": [gnu-efi, elilo: name,
 * version, file, url, sha256, patches (their file names)], "pe_machine",
 * "pe_subsystem"}. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "formats/binfmt.h"
#include "pkg_build.h"
#include "stage.h"

/* The pins: a recipe overrides them with gnu_efi_url, elilo_sha256, ... */
static const struct field fields[] = {
    PKG_SOURCE_FIELDS("gnu_efi", "gnu-efi",
                      "http://deb.debian.org/debian/pool/main/g/gnu-efi/gnu-efi_3.0.15.orig.tar.bz2",
                      NULL, "931a257b9c5c1ba65ff519f18373c438a26825f2db7866b163e96d1b168f20ea"),
    PKG_SOURCE_FIELDS("elilo", "elilo", NULL, "elilo-3.16-9351a61.tar.xz",
                      "2fc32d2d24dbebdcffe672f47d1caa8449f6fe67714de007ed09d219dd3783bd"),
    {0},
};

static const char *const tools[] = {"make", NULL};
static const char *const outputs[] = {"elilo.efi", "stage-manifest.json", NULL};

static const char *const elilo_patches[] = {"firmware/elilo/elilo-3.16-gnu-efi-StrnCpy.patch",
                                            "firmware/elilo/elilo-3.16-objcopy-output-format.patch",
                                            NULL};

static const struct pkg_source sources[] = {
    {.name = "gnu-efi", .key = "gnu_efi", .version = "3.0.15"},
    {.name = "elilo", .key = "elilo", .version = "3.16", .patches = elilo_patches},
    {0},
};

#define EFI_ROOT "INSTALLROOT=${work}/gnu-efi-root"
static const char *const gnu_efi_make[] = {"make", "CROSS_COMPILE=${cross}", "PREFIX=/usr",
                                           "LIBDIR=/usr/lib", EFI_ROOT, "lib", "gnuefi", "inc",
                                           NULL};
static const char *const gnu_efi_install[] = {"make", "CROSS_COMPILE=${cross}", "PREFIX=/usr",
                                              "LIBDIR=/usr/lib", EFI_ROOT, "install", NULL};
#define EFI_LIB "${work}/gnu-efi-root/usr/lib"
static const char *const elilo_make[] = {
    "make", "ARCH=ia64", "prefix=${cross}", "EFIINC=${work}/gnu-efi-root/usr/include/efi",
    "GNUEFILIB=" EFI_LIB, "EFILIB=" EFI_LIB, "EFICRT0=" EFI_LIB,
    "OPTIMFLAGS=-O2 -ffreestanding -std=gnu17", "SUBDIRS=fs choosers devschemes ia64", NULL};

static const struct pkg_step steps[] = {
    {.label = "gnu-efi", .cwd = "${src:gnu-efi}", .argv = gnu_efi_make,
     .hint = "gnu-efi is built with the toolchain stage's ia64 gcc"},
    {.label = "gnu-efi-install", .cwd = "${src:gnu-efi}", .argv = gnu_efi_install,
     .hint = "gnu-efi's make install into the scratch directory"},
    {.label = "elilo", .cwd = "${src:elilo}", .argv = elilo_make, .serial = true,
     .hint = "elilo is built with the toolchain stage's ia64 gcc against the gnu-efi built above"},
    {0},
};

static const struct pkg_file install[] = {
    {.from = "${src:elilo}/elilo.efi", .to = "elilo.efi"},
    {0},
};

static const struct pkg_desc desc = {
    .what = "elilo", .sources = sources, .steps = steps, .install = install, .cross = true,
};

static int declare(struct stage *st)
{
    if (strcmp(st_arch(st), "ia64") != 0)
        return st_error(st, "kind", "elilo is built here for ia64 only (the recipe's arch is "
                        "%s); amd64 recipes boot with systemd-boot or grub", st_arch(st));
    return pkg_declare(st, &desc);
}

static int run(struct stage_ctx *cx)
{
    if (pkg_build(cx, &desc, NULL))
        return 1;
    char *efi = path_join(cx->out, "elilo.efi");
    char err[BINFMT_ERRLEN];
    int m = binfmt_pe_machine(efi, err), sub = m < 0 ? -1 : binfmt_pe_subsystem(efi, err);
    int rc = 0;
    if (m < 0 || sub < 0)
        rc = cx_fail(cx, "the built elilo.efi is not a PE image: %s (see the objcopy step in "
                     "the log)", err);
    else if (m != BINFMT_PE_IA64 || sub != BINFMT_PE_EFI_APPLICATION)
        rc = cx_fail(cx, "the built elilo.efi is a PE image for %s (0x%x), subsystem %d, not an "
                     "IA-64 (0x200) EFI application (10): the toolchain stage is not an ia64 "
                     "one", binfmt_pe_machine_name(m), (unsigned)m, sub);
    else
        cx_log(cx, "elilo.efi: PE32+ for IA-64 (0x200), EFI application (subsystem 10)");
    free(efi);
    if (rc)
        return rc;
    json_object *extra = json_object_new_object();
    json_object_object_add(extra, "pe_machine", json_object_new_int(m));
    json_object_object_add(extra, "pe_subsystem", json_object_new_int(sub));
    return pkg_manifest(cx, &desc, extra);
}

/* What the stage is, for the report and the SBOM (stage.h): the loader of a
 * bootloader of kind "elilo", then what it was built against; both from
 * pkg_manifest's "sources". No licence: the SBOM says NOASSERTION. */
static const struct stage_component made[] = {
    {.name = "elilo", .in_sources = true, .role = COMPONENT_LOADER, .loader = "elilo"},
    {.name = "gnu-efi", .in_sources = true, .role = COMPONENT_LOADER},
    {0},
};

static const char *const patch_fields[] = {"gnu_efi_patches", "elilo_patches", NULL};

const struct stage_kind stage_elilo_build = {
    .name = "elilo",
    .section = "packages",
    .version = 1,
    .summary = "elilo 3.16 (EFI/BOOT/BOOTIA64.EFI for Itanium) built with gnu-efi 3.0.15 by "
               "the recipe's ia64 toolchain, both pinned by sha256",
    .fields = fields,
    .patch_fields = patch_fields,
    .tools = tools,
    .outputs = outputs,
    .components = made,
    .declare = declare,
    .run = run,
};
