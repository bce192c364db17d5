/* Kernel module dependency resolution from depmod's text files. Given the
 * contents of modules.dep (and optionally modules.builtin) and a list of
 * module names, gives the module files to ship in load order: every module
 * after the modules it depends on. Names compare like modprobe does: '-' and
 * '_' are the same, and "ext4", "ext4.ko" and "ext4.ko.xz" name one module. */
#ifndef TRILLIAN_MODULES_DEP_H
#define TRILLIAN_MODULES_DEP_H

#include "base/util.h"

struct modules_dep;

/* Parses modules.dep text ("path.ko: dep.ko dep2.ko" per line) and, when
 * builtin is not NULL, modules.builtin text (one path per line). Returns NULL
 * and sets *err (caller frees) on malformed input. */
struct modules_dep *modules_dep_parse(const char *dep_text, const char *builtin_text,
                                      char **err);
void modules_dep_free(struct modules_dep *d);

/* Number of modules modules.dep lists. */
size_t modules_dep_count(const struct modules_dep *d);

/* The canonical name of a module given as a name or a path:
 * "kernel/fs/fuse/fuse.ko.xz" -> "fuse", "virtio-blk" -> "virtio_blk". */
char *modules_dep_name(const char *name_or_path);

/* Resolves names into load_order (paths as modules.dep writes them, deps
 * first, each once). Names of built-in modules go to builtin (may be NULL)
 * and add no file. An unknown name, or a dependency cycle, fails with -1 and
 * *err naming it (caller frees). */
int modules_dep_resolve(struct modules_dep *d, const struct strlist *names,
                        struct strlist *load_order, struct strlist *builtin, char **err);

#endif
