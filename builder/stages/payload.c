/* The `payload` initramfs: a boot-check payload of our own (a freestanding
 * init in assembly, firmware/payload/ARCH/) assembled and linked at build
 * time, packed as /init in a newc cpio with /dev/console, /proc and /sys.
 * It needs no libc and no busybox, so an ia64 kernel can be boot-checked
 * before any ia64 userland exists. Architectures are rows of a table. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/archive.h"
#include "stage.h"

struct payload_arch {
    const char *arch;
    const char *source;  /* below the data directory */
    const char *prefix;  /* binutils prefix (GNU target) */
};

static const struct payload_arch arches[] = {
    {"ia64", "firmware/payload/ia64/init.S", "ia64-linux-gnu-"},
    {NULL, NULL, NULL},
};

static const char *const compressions[] = {"gzip", "none", NULL};

static const struct field fields[] = {
    {"source", F_PATH, false, NULL, NULL,
     "the payload's assembly source (default: Trillian's firmware/payload/ARCH/init.S)"},
    {"compression", F_ENUM, false, compressions, "gzip", "compression of the cpio archive"},
    {0},
};

static const char *const outputs[] = {"initrd.img", "init", NULL};

static const struct payload_arch *arch_row(const char *arch)
{
    for (size_t i = 0; arches[i].arch; i++)
        if (strcmp(arches[i].arch, arch) == 0)
            return &arches[i];
    return NULL;
}

static char *source_path(const struct stage *st, const struct payload_arch *row)
{
    char *p = st_path(st, "source");
    return p ? p : trillian_data_path(row->source);
}

/* as/ld: from the toolchain stage's prefix when the recipe has one (at run
 * time), else the host's binutils for the target (Debian's
 * binutils-ia64-linux-gnu). */
static char *tool(const struct stage_ctx *cx, const struct payload_arch *row, const char *name)
{
    const char *tc = cx_dep(cx, "toolchain");
    if (tc) {
        char *p = xasprintf("%s/bin/%s%s", tc, row->prefix, name);
        if (access(p, X_OK) == 0)
            return p;
        free(p);
    }
    return xasprintf("%s%s", row->prefix, name);
}

static int declare(struct stage *st)
{
    const struct payload_arch *row = arch_row(st_arch(st));
    if (!row)
        return st_error(st, "kind", "there is no payload for arch %s (payloads exist for: ia64; "
                        "use kind = \"initramfs\")", st_arch(st));
    if (!st_str(st, "source")) {
        char *src = source_path(st, row);
        st_input_file(st, "payload source", src);
        free(src);
    }
    if (!st_want(st, "toolchain")) {
        char *as = xasprintf("%sas", row->prefix), *ld = xasprintf("%sld", row->prefix);
        st_tool(st, as);
        st_tool(st, ld);
        free(as);
        free(ld);
    }
    return 0;
}

static int run(struct stage_ctx *cx)
{
    const struct payload_arch *row = arch_row(cx->arch);
    char *src = source_path(cx->st, row);
    char *as = tool(cx, row, "as"), *ld = tool(cx, row, "ld");
    char *obj = path_join(cx->work, "init.o");
    char *root = path_join(cx->work, "root");
    char *init = path_join(root, "init");
    char *out_init = path_join(cx->out, "init");
    char *img = path_join(cx->out, "initrd.img");
    int rc = 1;

    /* -x: report IA-64 dependency violations; warnings are fatal */
    const char *asv[] = {as, "-x", "--fatal-warnings", "-o", obj, src, NULL};
    const char *ldv[] = {ld, "--fatal-warnings", "-static", "-e", "_start", "-o", init, obj, NULL};
    if (mkdir_p(root, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", root, strerror(errno));
        goto out;
    }
    if (cx_run(cx, asv) != 0 || cx_run(cx, ldv) != 0) {
        cx_fail(cx, "the payload %s did not assemble and link (initramfs.source)", src);
        goto out;
    }
    static const char *const dirs[] = {"dev", "proc", "sys"};
    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        char *d = path_join(root, dirs[i]);
        mkdir(d, 0755);
        free(d);
    }
    if (copy_file(init, out_init) < 0) {
        cx_fail(cx, "cannot copy %s: %s", init, strerror(errno));
        goto out;
    }
    /* a console for init's first writes, described rather than mknod-ed */
    struct arc_table meta = {0};
    arc_table_addf(&meta, "dev/console", ARC_CHR, 0600, 0, 0, 5, 1, NULL);
    arc_table_addf(&meta, "init", ARC_KEEP, 0755, 0, 0, 0, 0, NULL);
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.format = ARC_CPIO;
    const char *comp = cx_str(cx, "compression");
    o.filter = comp && strcmp(comp, "none") == 0 ? ARC_FILTER_NONE : ARC_GZIP;
    o.mtime = cx->source_date_epoch;
    o.meta = &meta;
    char err[ARC_ERRLEN];
    if (arc_write_tree(root, img, &o, err) < 0)
        cx_fail(cx, "cannot write the initramfs: %s", err);
    else
        rc = 0;
    arc_table_free(&meta);
out:
    free(src);
    free(as);
    free(ld);
    free(obj);
    free(root);
    free(init);
    free(out_init);
    free(img);
    return rc;
}

const struct stage_kind stage_payload = {
    .name = "payload",
    .section = "initramfs",
    .version = 1,
    .summary = "an initramfs whose /init is Trillian's boot-check payload, assembled for the "
               "recipe's arch (no libc, no busybox)",
    .fields = fields,
    .outputs = outputs,
    .declare = declare,
    .run = run,
};
