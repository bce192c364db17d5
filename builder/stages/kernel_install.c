/* kernel, kind "source" (kernel_source.c): the build and its outputs.
 * vmlinux, the boot image and the modules built; vmlinux, vmlinuz,
 * System.map, modules/lib/modules/RELEASE (modules.dep from depmod -b, an
 * empty tree without CONFIG_MODULES) and headers/ copied into the output. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/binfmt.h"
#include "formats/kconfig.h"
#include "kernel_build.h"

int ksrc_copy_out(const struct kbuild *kb, const char *from,
                    const char *to)
{
    char *src = path_join(kb->bld, from);
    char *dst = path_join(kb->cx->out, to);
    int rc = 0;
    if (copy_file(src, dst) < 0)
        rc = cx_fail(kb->cx, "the build made no %s (%s)", src,
                     strerror(errno));
    free(src);
    free(dst);
    return rc;
}

bool ksrc_config_has(const char *dotconfig, const char *name)
{
    struct kconfig kc = {0};
    char *text = NULL;
    size_t len;
    bool on = false;
    if (read_file(dotconfig, &text, &len) == 0 &&
        kconfig_parse(&kc, text, ".config", NULL) == 0) {
        const struct kconfig_entry *e = kconfig_get(&kc, name);
        on = e && e->value && strcmp(e->value, "y") == 0;
    }
    kconfig_free(&kc);
    free(text);
    return on;
}

static int install_modules(const struct kbuild *kb, const char *release,
                           bool modules)
{
    const struct stage_ctx *cx = kb->cx;
    char *modroot = path_join(cx->out, "modules");
    char *sub = xasprintf("lib/modules/%s", release);
    char *moddir = path_join(modroot, sub);
    int rc = 1;
    if (modules) {
        char *a1 = xasprintf("INSTALL_MOD_PATH=%s", modroot);
        const char *args[] = {"modules_install", a1, "DEPMOD=true",
                              cx_bool(cx, "strip_modules", true)
                                  ? "INSTALL_MOD_STRIP=1"
                                  : NULL,
                              NULL};
        int st = ksrc_make(kb, args);
        free(a1);
        if (st != 0) {
            cx_fail(cx, "make modules_install failed (see the log above)");
            goto out;
        }
        /* links back into the build directory mean nothing in an image */
        char *l1 = path_join(moddir, "build"), *l2 = path_join(moddir,
                                                                "source");
        unlink(l1);
        unlink(l2);
        free(l1);
        free(l2);
    } else {
        /* no CONFIG_MODULES: an empty tree, still with modules.dep */
        if (mkdir_p(moddir, 0755) < 0) {
            cx_fail(cx, "cannot create %s: %s", moddir, strerror(errno));
            goto out;
        }
        static const char *const lists[] = {"modules.builtin",
                                            "modules.builtin.modinfo", NULL};
        for (size_t i = 0; lists[i]; i++) {
            char *s = path_join(kb->bld, lists[i]);
            char *d = path_join(moddir, lists[i]);
            if (path_exists(s))
                copy_file(s, d);
            free(s);
            free(d);
        }
    }
    const char *dargv[] = {"depmod", "-b", modroot, release, NULL};
    if (cx_run(cx, dargv) != 0) {
        cx_fail(cx, "depmod -b %s %s failed (see the log above)", modroot,
                release);
        goto out;
    }
    char *dep = path_join(moddir, "modules.dep");
    bool ok = path_exists(dep);
    free(dep);
    if (!ok) {
        cx_fail(cx, "depmod wrote no modules.dep in %s", moddir);
        goto out;
    }
    rc = 0;
out:
    free(modroot);
    free(sub);
    free(moddir);
    return rc;
}

/* kernel_build.h */
int ksrc_build_install(const struct kbuild *kb, const char *release, bool modules)
{
    const struct stage_ctx *cx = kb->cx;
    const struct karch *k = kb->k;
    double tb = now_seconds();
    const char *targets[] = {"vmlinux", k->image,
                             modules ? "modules" : NULL, NULL};
    if (ksrc_make(kb, targets) != 0)
        return cx_fail(cx, "the kernel build failed: make %s%s (see the errors "
                       "above in the log)", k->image,
                       modules ? " modules" : "");
    cx_log(cx, "built in %.0f s", now_seconds() - tb);
    if (ksrc_copy_out(kb, "vmlinux", "vmlinux") ||
        ksrc_copy_out(kb, k->image_path, "vmlinuz") ||
        ksrc_copy_out(kb, "System.map", "System.map"))
        return 1;
    /* a wrong CROSS_COMPILE must not reach the cache as this arch's kernel */
    char *vml = path_join(cx->out, "vmlinux");
    char berr[BINFMT_ERRLEN];
    int em = binfmt_elf_machine(vml, berr);
    free(vml);
    if (em != k->em) {
        if (em < 0)
            return cx_fail(cx, "vmlinux is not an ELF file: %s", berr);
        return cx_fail(cx, "vmlinux is built for %s, not %s: check the toolchain stage's "
                       "target", binfmt_elf_machine_name(em), cx->arch);
    }
    if (install_modules(kb, release, modules))
        return 1;
    char *hdr = path_join(cx->out, "headers");
    char *a1 = xasprintf("INSTALL_HDR_PATH=%s", hdr);
    const char *hargs[] = {"headers_install", a1, NULL};
    int st = ksrc_make(kb, hargs);
    free(a1);
    free(hdr);
    if (st != 0)
        return cx_fail(cx, "make headers_install failed (see the log above)");
    return 0;
}
