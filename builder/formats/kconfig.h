/* Kernel .config fragments: parse them, merge them the way the kernel's
 * scripts/kconfig/merge_config.sh does (later files override earlier ones,
 * with a warning when a value changes), and check that every option the
 * fragments asked for survived `make olddefconfig`. Used by the kernel
 * "source" stage; no I/O except kconfig_find_symbol(). */
#ifndef TRILLIAN_KCONFIG_H
#define TRILLIAN_KCONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct kconfig_entry {
    char *name;   /* "CONFIG_FOO" */
    char *value;  /* "y", "m", "\"text\"", "0x10", "42"; NULL = is not set */
    char *origin; /* "fragment.config:12": where the value came from */
};

/* Entries in the order they were first set. */
struct kconfig {
    struct kconfig_entry *v;
    size_t n, cap;
};

/* Parses .config text: `CONFIG_X=V`, `# CONFIG_X is not set`, comments and
 * blank lines; `CONFIG_X=n` means not set. LABEL names the file in origins
 * and errors. A later line for the same option replaces an earlier one.
 * Returns 0, or -1 with "LABEL:LINE: what is wrong" appended to err. */
int kconfig_parse(struct kconfig *kc, const char *text, const char *label,
                  struct buf *err);
const struct kconfig_entry *kconfig_get(const struct kconfig *kc,
                                        const char *name);
/* Sets NAME (value NULL = not set), replacing an existing entry in place. */
void kconfig_set(struct kconfig *kc, const char *name, const char *value,
                 const char *origin);
/* Merges SRC into DST; SRC wins. When WARNINGS is not NULL, each option
 * whose value changes gets a line naming both origins and values. Returns
 * the number of changed values. */
size_t kconfig_merge(struct kconfig *dst, const struct kconfig *src,
                     struct strlist *warnings);
/* Writes .config text (one line per entry, in order). */
void kconfig_format(const struct kconfig *kc, struct buf *out);
void kconfig_free(struct kconfig *kc);

/* One requested option that the final configuration does not honour. */
struct kconfig_problem {
    const struct kconfig_entry *want; /* points into the WANT set */
    const char *got;                  /* final value, NULL = not set */
    bool absent;                      /* the final .config lacks it entirely */
};

/* Compares every entry of WANT with FINAL. A requested "not set" is met by
 * an absent or unset option. Returns the number of problems, and an array
 * (caller frees; entries point into WANT and FINAL) in *problems. */
size_t kconfig_check(const struct kconfig *want, const struct kconfig *final,
                     struct kconfig_problem **problems);

/* Looks for `config NAME` (NAME without CONFIG_) in the Kconfig files under
 * SRCTREE. Returns the relative paths of the files that define it, sorted,
 * in OUT (empty when the symbol does not exist in this kernel). */
int kconfig_find_symbol(const char *srctree, const char *name,
                        struct strlist *out);

/* A sentence about a problem, for the log and the error: names the option,
 * the fragment that set it and why it is not in the final configuration.
 * SRCTREE (may be NULL) is searched for the symbol when it was dropped;
 * SRCARCH ("x86", "ia64") tells other architectures' symbols apart. */
char *kconfig_problem_text(const struct kconfig_problem *p,
                           const char *srctree, const char *srcarch);

#endif
