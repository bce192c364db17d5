/* kernel, kind "source": what its steps share. kernel_source.c declares the
 * stage and runs the steps in order; kernel_tree.c gets the source and
 * patches it (KEEP/src-ID); kernel_config.c sets up make (toolchain,
 * environment) and configures; kernel_install.c builds and copies the
 * outputs. Private to those four files. */
#ifndef TRILLIAN_KERNEL_BUILD_H
#define TRILLIAN_KERNEL_BUILD_H

#include <stdbool.h>

#include "base/json_out.h"
#include "base/util.h"
#include "stage.h"

#define KERNEL_DEBIAN_MIRROR "http://deb.debian.org/debian"
#define KERNEL_DEBIAN_KEYRING "/usr/share/keyrings/debian-archive-keyring.gpg"

struct karch {
    const char *debian;  /* recipe arch */
    const char *arch;    /* ARCH= */
    const char *srcarch; /* arch/ directory */
    const char *triple;  /* CROSS_COMPILE without the dash */
    const char *image;   /* make target of the boot image */
    const char *image_path; /* built image, relative to the build dir */
    int em;              /* ELF e_machine vmlinux must have */
};

/* One build: the source tree, its out-of-tree build directory and how make
 * runs there. */
struct kbuild {
    const struct stage_ctx *cx;
    const struct karch *k;
    char *src, *bld;
    char *cross; /* CROSS_COMPILE, or NULL */
    char *cc;    /* CC=... with ccache or distcc in front (launcher.h), or NULL */
    struct strlist env;
    bool jobserver;
};

/* ---- kernel_tree.c: the source and its patches ---------------------------- */

/* The patches of a series directory, in order: the names its `series`
 * file lists (quilt's format: one per line, # comments, options after the
 * name ignored), else every *.patch and *.diff sorted by name. Returns
 * the count, or -1 with *why set (caller frees). */
int ksrc_series_dir_list(const char *dir, struct strlist *out, char **why);
/* The patches a stage downloads, pinned by sha256, in order: the entries of
 * the `series_file` manifest (under `series_base`), then the `series_urls`.
 * Four parallel lists: URL and SHA256 ("" when a series_urls entry lacks
 * one: declare() reports it), the setting each comes from (KEY) and what
 * follows "FILE:LINE: kernel.KEY" in messages (LABEL: "[2]", or
 * " (NAME, MANIFEST:LINE)"). */
struct ksrc_pins {
    struct strlist url, sha, key, label;
};
/* Fills PINS from the stage's settings; -1 with *why (caller frees) when the
 * manifest cannot be read or a line is not "SHA256  NAME". */
int ksrc_series_pins(const struct stage *st, struct ksrc_pins *pins, char **why);
void ksrc_pins_free(struct ksrc_pins *pins);
/* stage_kind.patch_check: unpacks TARBALL into cx->work and applies the
 * stage's patches there in order, printing each one's fate. */
int ksrc_patch_check(struct stage_ctx *cx, const char *tarball);
/* Unpacks (or clones) and patches the source into KEEP/src-ID, unless it is
 * there already. Returns the tree's path, or NULL after cx_fail; adds what
 * was built from (source, series, patches, commit) to DESC for the
 * manifest. */
char *ksrc_prepare_source(const struct stage_ctx *cx, json_object *desc);

/* ---- kernel_config.c: make and the configuration ------------------------- */

/* Whether K is the architecture this program runs on (no cross compiler). */
bool ksrc_is_host(const struct karch *k);
/* Looks PROGRAM up on PATH (with DIR first when not NULL). */
bool ksrc_on_path(const char *dir, const char *program);
/* Where fragment F lives: a path relative to the recipe, or a name in the
 * data directory's kernel-config/. New string; NULL if F is a bare name that
 * is not there. */
char *ksrc_fragment_path(const char *recipe_dir, const char *f);
/* The fragments to merge: the recipe's machine profile's first, then the
 * recipe's own `fragments`. */
void ksrc_all_fragments(const struct stage *st, struct strlist *out);

void ksrc_kbuild_free(struct kbuild *kb);
/* make, its directories, ARCH, CROSS_COMPILE, CC and -j. */
void ksrc_make_argv(const struct kbuild *kb, struct strlist *a);
/* make TARGETS... (NULL-terminated) with extra VAR=VALUE arguments. */
int ksrc_make(const struct kbuild *kb, const char *const *args);
bool ksrc_have_jobserver(void);
/* CROSS_COMPILE and PATH (kb->cross, kb->env); nonzero after cx_fail. */
int ksrc_setup_toolchain(struct kbuild *kb);
/* KBUILD_BUILD_* from SOURCE_DATE_EPOCH, for a reproducible uts version. */
void ksrc_reproducible_env(struct kbuild *kb);
/* A cross gcc older than the kernel's minimum fails here (nonzero). */
int ksrc_check_min_gcc(const struct kbuild *kb);
/* The .config in kb->bld: defconfig or base_config, the fragments, make
 * olddefconfig, every fragment option checked. Adds the base and the
 * fragments to DESC. Nonzero after cx_fail. */
int ksrc_configure(const struct kbuild *kb, json_object *desc);
/* The release, as make kernelrelease computes it (new string), or NULL
 * after cx_fail. */
char *ksrc_kernel_release(const struct kbuild *kb);

/* ---- kernel_install.c: the outputs ---------------------------------------- */

/* Copies FROM in the build directory to TO in cx->out; nonzero after cx_fail. */
int ksrc_copy_out(const struct kbuild *kb, const char *from, const char *to);
/* Whether option NAME is y in the .config at DOTCONFIG. */
bool ksrc_config_has(const char *dotconfig, const char *name);
/* Builds vmlinux, the boot image and (with MODULES) the modules, and
 * installs vmlinux, vmlinuz, System.map, modules/ and headers/ into
 * cx->out. Nonzero after cx_fail. */
int ksrc_build_install(const struct kbuild *kb, const char *release, bool modules);

#endif
