/* toolchain, kind "host": the build host's own TARGET-gcc and binutils
 * (Debian's gcc and binutils for amd64 on an amd64 host, or an installed
 * cross compiler such as gcc-ia64-linux-gnu), presented as a toolchain
 * prefix so that stages needing one (busybox, the kernel) work the same as
 * with a built or external toolchain.
 *
 * The output prefix holds only symlinks: bin/TARGET-X -> the host's
 * /usr/bin/TARGET-X (found on PATH) for the compiler drivers and binutils,
 * and TARGET/bin/X for the assembler and linker. The host programs enter the
 * cache key (st_tool: binary hash and --version), so an upgraded host gcc is
 * a new key. The same check as the other kinds runs before the output is
 * cached: bin/TARGET-gcc must compile and link a freestanding program for
 * the recipe's machine (tc_check_compiler).
 *
 * Outputs: bin/TARGET-gcc (and the rest), `target`, stage-manifest.json. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/run_command.h"
#include "stage.h"
#include "toolchain.h"

static const struct field fields[] = {
    {"target", F_STRING, false, NULL, NULL,
     "GNU target triplet of the host's compiler to use (default from arch: "
     "x86_64-linux-gnu, ia64-linux-gnu)"},
    {0},
};

static const char *const outputs[] = {"target", NULL};

/* Programs linked into the prefix; gcc, as and ld must exist. */
struct prog {
    const char *name;
    bool required, in_target_bin;
};
static const struct prog progs[] = {
    {"gcc", true, false},      {"cpp", false, false},    {"as", true, true},
    {"ld", true, true},        {"ld.bfd", false, true},  {"ar", true, true},
    {"nm", false, true},       {"objcopy", true, true},  {"objdump", false, true},
    {"ranlib", false, true},   {"readelf", false, true}, {"strip", true, true},
    {"size", false, false},    {"strings", false, false}, {"addr2line", false, false},
    {"gcc-ar", false, false},  {"gcc-nm", false, false}, {"gcc-ranlib", false, false},
    {0},
};

static const char *target_of(const struct stage *st)
{
    const char *t = st_str(st, "target");
    return t ? t : tc_default_target(st_arch(st));
}

/* TARGET-NAME on PATH (absolute), or NULL. */
static char *find_on_path(const char *prog)
{
    return run_find_program(prog, NULL, 0);
}

static int declare(struct stage *st)
{
    const char *target = target_of(st);
    if (!target)
        return st_error(st, "target", "no default target for arch \"%s\": set target",
                        st_arch(st));
    if (tc_arch_machine(st_arch(st)) < 0)
        return st_error(st, NULL, "arch \"%s\" has no known ELF machine to check the "
                        "toolchain against", st_arch(st));
    for (const struct prog *p = progs; p->name; p++) {
        char *name = xasprintf("%s-%s", target, p->name);
        char *found = find_on_path(name);
        if (found)
            st_tool(st, name);
        else if (p->required)
            st_error(st, NULL, "the host has no %s on PATH: install the host's compiler "
                     "for %s (gcc and binutils on a %s host, or gcc-%s), or use kind "
                     "\"build\" or \"external\"", name, target, target, target);
        free(found);
        free(name);
    }
    char *o = xasprintf("bin/%s-gcc", target);
    st_output(st, o);
    free(o);
    return 0;
}

static int run(struct stage_ctx *cx)
{
    const char *target = target_of(cx->st);
    char *bin = path_join(cx->out, "bin");
    char *tbin = xasprintf("%s/%s/bin", cx->out, target);
    struct tc_probe pr = {0};
    int rc = 0;
    if (mkdir_p(bin, 0755) < 0 || mkdir_p(tbin, 0755) < 0)
        rc = cx_fail(cx, "cannot create %s: %s", tbin, strerror(errno));
    for (const struct prog *p = progs; p->name && rc == 0; p++) {
        char *name = xasprintf("%s-%s", target, p->name);
        char *found = find_on_path(name);
        if (!found) {
            if (p->required)
                rc = cx_fail(cx, "toolchain: %s is no longer on PATH (install it again)",
                             name);
            free(name);
            continue;
        }
        char *l1 = path_join(bin, name);
        if (symlink(found, l1) < 0)
            rc = cx_fail(cx, "cannot link %s: %s", l1, strerror(errno));
        if (rc == 0 && p->in_target_bin) {
            char *l2 = path_join(tbin, p->name);
            if (symlink(found, l2) < 0)
                rc = cx_fail(cx, "cannot link %s: %s", l2, strerror(errno));
            free(l2);
        }
        free(l1);
        free(found);
        free(name);
    }
    if (rc == 0)
        rc = tc_check_compiler(cx, "toolchain", "the host", cx->out, target, &pr);
    json_object *details = json_object_new_object();
    json_add_str(details, "kind", "host");
    if (rc == 0) {
        /* for the build report's components: the binutils in use */
        char *as = xasprintf("%s/%s-as", bin, target), *o = NULL;
        const char *v[] = {as, "--version", NULL};
        if (cx_capture(cx, v, &o) == 0 && o) {
            o[strcspn(o, "\n")] = 0;
            json_add_str(details, "binutils_version", o);
        }
        free(o);
        free(as);
    }
    if (rc == 0)
        rc = tc_finish(cx, target, &pr, details);
    else
        json_object_put(details);
    tc_probe_free(&pr);
    free(bin);
    free(tbin);
    return rc;
}

const struct stage_kind stage_toolchain_host = {
    .name = "host",
    .section = "toolchain",
    .version = 1,
    .summary = "the build host's own TARGET-gcc and binutils, symlinked into a toolchain "
               "prefix and checked like the other kinds",
    .fields = fields,
    .outputs = outputs,
    .declare = declare,
    .run = run,
    .cost_hint = 1100,
};
