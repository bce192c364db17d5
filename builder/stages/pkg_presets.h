/* Build presets of the generic package build (pkg_build.h): the steps an
 * autotools, CMake, Meson or plain-make package takes, as data, so that a
 * package names its preset and the few arguments that differ instead of
 * spelling out its steps. Every preset configures and builds in
 * ${work}/build (plain make: in the source tree, which has no other) and
 * installs into ${kind:destdir}, the tree the binary packages are split
 * from. The arguments that differ come from the package's list settings
 * `configure` and `make_args` (${list:configure}, ${list:make_args}).
 *
 * With the recipe's cross compiler (cross = true) autotools gets
 * --host=${target}, CMake the compilers and CMAKE_SYSTEM_NAME, Meson a cross
 * file written by its first step (${work}/meson-cross.ini), plain make
 * CC/CXX/AR; without it the host's tools build for the host. */
#ifndef TRILLIAN_STAGES_PKG_PRESETS_H
#define TRILLIAN_STAGES_PKG_PRESETS_H

#include "pkg_build.h"

/* The preset called NAME, its steps {0}-terminated, for a build with the
 * recipe's cross compiler (CROSS) or the host's; NULL if there is none. */
const struct pkg_step *pkg_preset_steps(const char *name, bool cross);

/* The names of the presets, NULL-terminated (the setting's choices). */
extern const char *const pkg_preset_names[];

/* Meson's cross file for the toolchain stage's compiler (${cross}) and the
 * recipe's arch: the first step of the meson preset when cross. */
int pkg_preset_meson_cross(const struct stage_ctx *cx, void *arg);

#endif
