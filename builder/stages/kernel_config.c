/* kernel, kind "source" (kernel_source.c): make and the configuration. The
 * make command line (out of tree with O=, ARCH, CROSS_COMPILE, the launcher's
 * CC, -j without the engine's jobserver), the toolchain's PATH and the
 * reproducible KBUILD_BUILD_* environment; then the .config: defconfig or
 * base_config, the fragments merged like scripts/kconfig/merge_config.sh,
 * make olddefconfig, and every option a fragment set checked. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/run_command.h"
#include "formats/kconfig.h"
#include "kernel_build.h"

/* ---- toolchain ------------------------------------------------------------ */

bool ksrc_is_host(const struct karch *k)
{
#if defined(__x86_64__)
    return strcmp(k->debian, "amd64") == 0;
#elif defined(__ia64__)
    return strcmp(k->debian, "ia64") == 0;
#else
    (void)k;
    return false;
#endif
}

/* ---- fragments ----------------------------------------------------------- */

static bool fragment_is_path(const char *f)
{
    return strchr(f, '/') || str_ends(f, ".config");
}

/* Where fragment F lives: a path relative to the recipe, or a name in the
 * data directory's kernel-config/. New string; NULL if F is a bare name that
 * is not there. */
char *ksrc_fragment_path(const char *recipe_dir, const char *f)
{
    if (fragment_is_path(f))
        return path_absolute(recipe_dir, f);
    char *rel = xasprintf("kernel-config/%s.config", f);
    char *p = trillian_data_path(rel);
    free(rel);
    if (path_exists(p))
        return p;
    free(p);
    return NULL;
}

/* The fragments to merge: the recipe's machine profile's (machine.h) first,
 * then the recipe's own `fragments`; one the recipe lists too is merged at
 * the recipe's place, so a recipe naming the same list keeps its key. */
void ksrc_all_fragments(const struct stage *st, struct strlist *out)
{
    struct strlist own = {0};
    st_list(st, "fragments", &own);
    const struct machine *m = st_machine(st);
    for (size_t i = 0; m && i < m->fragments.n; i++)
        if (!strlist_contains(&own, m->fragments.v[i]) &&
            !strlist_contains(out, m->fragments.v[i]))
            strlist_push(out, m->fragments.v[i]);
    for (size_t i = 0; i < own.n; i++)
        strlist_push(out, own.v[i]);
    strlist_free(&own);
}

bool ksrc_on_path(const char *dir, const char *program)
{
    char *found = run_find_program(program, dir, 0);
    bool ok = found != NULL;
    free(found);
    return ok;
}

/* ---- make ----------------------------------------------------------------- */

void ksrc_kbuild_free(struct kbuild *kb)
{
    free(kb->src);
    free(kb->bld);
    free(kb->cross);
    free(kb->cc);
    strlist_free(&kb->env);
}

void ksrc_make_argv(const struct kbuild *kb, struct strlist *a)
{
    strlist_push(a, "make");
    strlist_pushf(a, "--directory=%s", kb->src);
    strlist_pushf(a, "O=%s", kb->bld);
    strlist_pushf(a, "ARCH=%s", kb->k->arch);
    if (kb->cross)
        strlist_pushf(a, "CROSS_COMPILE=%s", kb->cross);
    if (kb->cc)
        strlist_push(a, kb->cc);
    if (!kb->jobserver && kb->cx->jobs > 0)
        strlist_pushf(a, "-j%d", kb->cx->jobs);
}

/* make TARGETS... (NULL-terminated) with extra VAR=VALUE arguments. */
int ksrc_make(const struct kbuild *kb, const char *const *args)
{
    struct strlist a = {0};
    ksrc_make_argv(kb, &a);
    for (size_t i = 0; args[i]; i++)
        strlist_push(&a, args[i]);
    int rc = cx_run_in(kb->cx, NULL, (const char *const *)kb->env.v,
                       (const char *const *)a.v);
    strlist_free(&a);
    return rc;
}

bool ksrc_have_jobserver(void)
{
    const char *mf = getenv("MAKEFLAGS");
    return mf && (strstr(mf, "--jobserver-auth") ||
                  strstr(mf, "--jobserver-fds"));
}

/* CROSS_COMPILE and PATH: the toolchain stage's bin/ goes first on PATH and
 * the prefix is TRIPLE-, so binutils may come from the toolchain or the
 * system; likewise for a cross_compile with a directory. */
int ksrc_setup_toolchain(struct kbuild *kb)
{
    const struct stage_ctx *cx = kb->cx;
    const char *cc = cx_str(cx, "cross_compile");
    char *bindir = NULL;
    const char *tc = cx_dep(cx, "toolchain");
    if (tc) {
        /* the toolchain stage names its target triplet in `target` */
        char *tfile = path_join(tc, "target"), *triple = NULL;
        size_t tlen;
        if (read_file(tfile, &triple, &tlen) == 0)
            triple[strcspn(triple, " \t\r\n")] = '\0';
        bindir = path_join(tc, "bin");
        kb->cross = xasprintf("%s-", triple && triple[0] ? triple
                                                         : kb->k->triple);
        free(triple);
        free(tfile);
    } else if (cc) {
        if (strchr(cc, '/')) {
            bindir = path_dirname(cc);
            kb->cross = xstrdup(path_basename(cc));
        } else {
            kb->cross = xstrdup(cc);
        }
    } else if (!ksrc_is_host(kb->k)) {
        kb->cross = xasprintf("%s-", kb->k->triple);
    }
    if (bindir) {
        strlist_push_owned(&kb->env, run_path_env("%s", bindir));
    }
    int rc = 0;
    if (kb->cross) {
        char *gcc = xasprintf("%sgcc", kb->cross);
        if (!ksrc_on_path(bindir, gcc))
            rc = cx_fail(cx, "%s: no %s%s%s (%s)",
                         tc ? "toolchain" : cc ? "kernel.cross_compile"
                                               : "kernel",
                         gcc, bindir ? " in " : " on PATH",
                         bindir ? bindir : "",
                         tc ? "the toolchain stage must produce "
                              "bin/TRIPLE-gcc"
                            : "add a toolchain section to the recipe or set "
                              "kernel.cross_compile");
        else
            cx_log(cx, "CROSS_COMPILE=%s%s%s", kb->cross,
                   bindir ? ", PATH starts with " : "", bindir ? bindir : "");
        free(gcc);
    }
    free(bindir);
    return rc;
}

/* KBUILD_BUILD_* from SOURCE_DATE_EPOCH, for a reproducible uts version. */
void ksrc_reproducible_env(struct kbuild *kb)
{
    time_t t = (time_t)kb->cx->source_date_epoch;
    struct tm tm;
    char when[64] = "Thu Jan  1 00:00:00 UTC 1970";
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%a %b %e %H:%M:%S UTC %Y", &tm);
    strlist_pushf(&kb->env, "KBUILD_BUILD_TIMESTAMP=%s", when);
    strlist_push(&kb->env, "KBUILD_BUILD_USER=trillian");
    strlist_push(&kb->env, "KBUILD_BUILD_HOST=trillian");
    strlist_push(&kb->env, "KBUILD_BUILD_VERSION=1");
}

/* ---- configuration -------------------------------------------------------- */

static int load_config(const struct stage_ctx *cx, const char *path,
                       const char *label, struct kconfig *kc)
{
    char *text = NULL;
    size_t len;
    if (read_file(path, &text, &len) < 0)
        return cx_fail(cx, "cannot read %s: %s", path, strerror(errno));
    struct buf err = BUF_INIT;
    int rc = 0;
    if (kconfig_parse(kc, text, label, &err) < 0)
        rc = cx_fail(cx, "%s", err.p);
    buf_free(&err);
    free(text);
    return rc;
}

int ksrc_configure(const struct kbuild *kb, json_object *desc)
{
    const struct stage_ctx *cx = kb->cx;
    char *dotconfig = path_join(kb->bld, ".config");
    struct kconfig base = {0}, want = {0}, final = {0};
    struct strlist frags = {0}, warnings = {0};
    int rc = 1;
    double t0 = now_seconds();

    char *base_config = cx_path(cx, "base_config");
    if (base_config) {
        if (copy_file(base_config, dotconfig) < 0) {
            cx_fail(cx, "kernel.base_config: cannot copy %s: %s", base_config,
                    strerror(errno));
            goto out;
        }
        json_add_str(desc, "base_config", path_basename(base_config));
    } else {
        const char *target = cx_str(cx, "defconfig");
        const char *args[] = {target, NULL};
        if (ksrc_make(kb, args) != 0) {
            cx_fail(cx, "kernel.defconfig: make %s failed for ARCH=%s (is it "
                    "a configuration target of this kernel? see arch/%s/"
                    "configs/)", target, kb->k->arch, kb->k->srcarch);
            goto out;
        }
        json_add_str(desc, "defconfig", target);
    }
    if (load_config(cx, dotconfig, "base .config", &base))
        goto out;

    ksrc_all_fragments(cx->st, &frags);
    json_object *flist = json_object_new_array();
    json_object_object_add(desc, "fragments", flist);
    for (size_t i = 0; i < frags.n; i++) {
        char *p = ksrc_fragment_path(cx->recipe_dir, frags.v[i]);
        if (!p) {
            cx_fail(cx, "kernel.fragments: no fragment '%s'", frags.v[i]);
            goto out;
        }
        struct kconfig f = {0};
        const char *label = fragment_is_path(frags.v[i])
                                ? frags.v[i]
                                : path_basename(p);
        int lrc = load_config(cx, p, label, &f);
        free(p);
        if (lrc) {
            kconfig_free(&f);
            goto out;
        }
        kconfig_merge(&want, &f, &warnings);
        kconfig_free(&f);
        json_object_array_add(flist, json_str(frags.v[i]));
    }
    for (size_t i = 0; i < warnings.n; i++)
        cx_log(cx, "warning: kernel.fragments: %s", warnings.v[i]);
    size_t changed = kconfig_merge(&base, &want, NULL);
    cx_log(cx, "fragments set %zu options (%zu differ from the base)", want.n,
           changed);
    struct buf text = BUF_INIT;
    kconfig_format(&base, &text);
    int w = write_file_atomic(dotconfig, text.p, text.n, 0644);
    buf_free(&text);
    if (w < 0) {
        cx_fail(cx, "cannot write %s: %s", dotconfig, strerror(errno));
        goto out;
    }
    const char *args[] = {"olddefconfig", NULL};
    if (ksrc_make(kb, args) != 0) {
        cx_fail(cx, "make olddefconfig failed (see the log above)");
        goto out;
    }
    if (load_config(cx, dotconfig, ".config", &final))
        goto out;

    struct kconfig_problem *probs = NULL;
    size_t n = kconfig_check(&want, &final, &probs);
    if (n) {
        struct buf all = BUF_INIT;
        for (size_t i = 0; i < n; i++) {
            char *t = kconfig_problem_text(&probs[i], kb->src,
                                           kb->k->srcarch);
            buf_printf(&all, "%s  %s", all.n ? "\n" : "", t);
            free(t);
        }
        cx_fail(cx, "kernel.fragments: %zu option%s the fragments set did "
                "not survive make olddefconfig (ARCH=%s):\n%s\nFix the "
                "fragments (add the missing dependencies, or drop the "
                "options)", n, n == 1 ? "" : "s", kb->k->arch, all.p);
        buf_free(&all);
        free(probs);
        goto out;
    }
    cx_log(cx, "configured in %.1f s: all %zu options the fragments set are "
           "in the final .config", now_seconds() - t0, want.n);
    rc = 0;
out:
    free(base_config);
    free(dotconfig);
    kconfig_free(&base);
    kconfig_free(&want);
    kconfig_free(&final);
    strlist_free(&frags);
    strlist_free(&warnings);
    return rc;
}

static long version_number(const char *v)
{
    unsigned a = 0, b = 0, c = 0;
    if (!v || sscanf(v, "%u.%u.%u", &a, &b, &c) < 1)
        return -1;
    return (long)a * 10000 + (long)b * 100 + (long)c;
}

/* The kernel names the oldest gcc it builds with (scripts/min-tool-version.sh,
 * since 5.15); a cross gcc older than that stops here, clearly, rather than
 * deep inside the build. */
int ksrc_check_min_gcc(const struct kbuild *kb)
{
    const struct stage_ctx *cx = kb->cx;
    char *script = path_join(kb->src, "scripts/min-tool-version.sh");
    if (!kb->cross || !path_exists(script)) {
        free(script);
        return 0;
    }
    const char *sargv[] = {"sh", script, "gcc", NULL};
    char *need = NULL, *have = NULL, *gcc = xasprintf("%sgcc", kb->cross);
    /* through env(1): the program is looked up in the toolchain's PATH,
     * which the spawn's own lookup (the parent's PATH) would miss */
    struct strlist a = {0};
    strlist_push(&a, "env");
    for (size_t i = 0; i < kb->env.n; i++)
        strlist_push(&a, kb->env.v[i]);
    strlist_push(&a, gcc);
    strlist_push(&a, "-dumpfullversion");
    int rc = 0;
    if (cx_capture(cx, sargv, &need) == 0 && cx_capture(cx, (const char *const *)a.v, &have) == 0) {
        need[strcspn(need, "\n")] = 0;
        have[strcspn(have, "\n")] = 0;
        long n = version_number(need), h = version_number(have);
        if (n > 0 && h > 0 && h < n)
            rc = cx_fail(cx, "%s: this kernel needs gcc %s or newer (its "
                         "scripts/min-tool-version.sh), but %s is gcc %s: build a newer "
                         "toolchain (toolchain.gcc) or choose an older kernel",
                         cx_dep(cx, "toolchain") ? "toolchain.gcc" : "kernel.cross_compile",
                         need, gcc, have);
        else if (n > 0 && h > 0)
            cx_log(cx, "gcc %s meets the kernel's minimum %s", have, need);
    }
    strlist_free(&a);
    free(need);
    free(have);
    free(gcc);
    free(script);
    return rc;
}

char *ksrc_kernel_release(const struct kbuild *kb)
{
    const struct stage_ctx *cx = kb->cx;
    struct strlist a = {0};
    ksrc_make_argv(kb, &a);
    strlist_push(&a, "-s");
    strlist_push(&a, "kernelrelease");
    char *relout = NULL;
    /* with the toolchain's PATH: arch/ia64's Makefile runs the compiler */
    int st = cx_capture_in(cx, (const char *const *)kb->env.v, (const char *const *)a.v, &relout);
    strlist_free(&a);
    char *release = NULL;
    if (st == 0 && relout) {
        /* the last non-empty line (make may print directory changes) */
        char *s = relout + strlen(relout);
        while (s > relout && isspace((unsigned char)s[-1]))
            *--s = '\0';
        char *nl = strrchr(relout, '\n');
        release = xstrdup(nl ? nl + 1 : relout);
    }
    free(relout);
    if (!release || !release[0] || strchr(release, ' ') ||
        strchr(release, '/')) {
        cx_fail(cx, "make kernelrelease gave no usable release ('%s')",
                release ? release : "");
        free(release);
        return NULL;
    }
    cx_log(cx, "kernel release %s", release);
    return release;
}
