/* Machine profiles: what a recipe's top-level `machine = "NAME";` means. A
 * profile names a machine (an HP Integrity model, an emulator) and says
 * which console the kernel command line gets and which kernel-config
 * fragments the kernel needs there. The profiles live in the data file
 * firmware/machines.cfg (libconfig, a list `machines`), so adding a machine
 * is a few lines there, not code.
 *
 * The recipe reader (recipe.c) reads the profile once into struct recipe,
 * refusing an unknown profile, or one for another arch, at the `machine`
 * line; stages get it by st_machine() (stage.h): the ESP stage takes the
 * console from it and the kernel source stage the fragments, both only when
 * the recipe names a machine (recipes without one keep their cache keys).
 * struct machine is in stage.h (a recipe fact); this header is the parser. */
#ifndef TRILLIAN_MACHINE_H
#define TRILLIAN_MACHINE_H

#include <stdbool.h>

#include "stage.h" /* struct machine */

/* Parses the profiles in TEXT (ORIGIN names it in messages) into *out
 * (*n of them, sorted by name). Returns 0, or -1 with *err (a new string)
 * naming the line and the key: a syntax error, a missing or unknown key, a
 * wrong type, a name given twice. */
int machine_parse(const char *text, const char *origin, struct machine **out, size_t *n,
                  char **err);
void machines_free(struct machine *m, size_t n);

/* The profile NAME from the data file into *out. Returns 0, or -1 with *err
 * (a new string): the file's own error, or "no machine profile 'NAME'
 * (known: …, in FILE)". */
int machine_find(const char *name, struct machine *out, char **err);
void machine_free(struct machine *m);

#endif
