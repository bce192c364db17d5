/* Build presets of the generic package build (pkg_build.h): the steps an
 * autotools, CMake, Meson or plain-make package takes, as data, so that a
 * package names its preset and the few arguments that differ instead of
 * spelling out its steps. Every preset configures and builds in
 * ${work}/build (plain make: in the source tree, which has no other) and
 * installs into ${kind:destdir}, the tree the binary packages are split
 * from. The arguments that differ come from the package's list settings
 * `configure` and `make_args` (${list:configure}, ${list:make_args}).
 *
 * Built for another machine (the kind's cross or target mode) autotools
 * gets --host=${target}, CMake the compilers, CMAKE_SYSTEM_NAME and (target
 * mode) CMAKE_SYSROOT, Meson a cross file written by its first step
 * (${work}/meson-cross.ini), plain make AR; otherwise the host's tools
 * build for the host. The build's compilers (${cc}, ${cxx}, pkg_build.h:
 * target mode's with --sysroot, and the path maps) are CC and CXX in the
 * environment, which autotools, CMake and Meson read on the host, and on
 * plain make's command line in every mode; CMake's cross compilers and
 * Meson's cross file carry the path maps too. */
#ifndef TRILLIAN_STAGES_PKG_PRESETS_H
#define TRILLIAN_STAGES_PKG_PRESETS_H

#include "pkg_build.h"

enum pkg_mode { PKG_NATIVE, PKG_CROSS, PKG_TARGET };

/* The preset called NAME, its steps {0}-terminated, for a build with the
 * host's compiler (PKG_NATIVE), the stage-1 cross compiler (PKG_CROSS) or
 * the compiler stage against the sysroot (PKG_TARGET); NULL if there is
 * none. */
const struct pkg_step *pkg_preset_steps(const char *name, enum pkg_mode mode);

/* The names of the presets, NULL-terminated (the setting's choices). */
extern const char *const pkg_preset_names[];

/* Meson's cross file for the build's compiler (${cross}, with --sysroot in
 * target mode) and the recipe's arch: the first step of the meson preset
 * when cross. */
int pkg_preset_meson_cross(const struct pkg_vars *v);

#endif
