/* kernel, kind "source": Linux built from source.
 *
 * Source: a local tarball (`tarball`), a downloaded one (`url` + `sha256`,
 * kept under CACHE/downloads/), the orig tarball of Debian's `linux` source
 * package (`debian_version` + `debian_suite`, hashes from the suite's signed
 * Sources index, kept under CACHE/downloads/sources/) or a git branch or tag
 * (`git` + `ref`). The unpacked and patched tree is kept in KEEP/src-ID,
 * where ID hashes the tarball's content (or the git URL and ref) and the
 * patches, so rebuilds skip the minute of unpacking. Patches apply in order
 * with `patch -p1 --forward --batch` (and --fuzz=`fuzz` when set): a
 * `series` directory, a `series_file` manifest (SHA256 NAME lines, fetched
 * from `series_base`), `series_urls` (downloads pinned by sha256), then
 * `patches`; one that does not apply fails the stage naming the patch, the
 * file and the hunk.
 *
 * Configuration: `make DEFCONFIG` (or a whole `base_config` file), then the
 * `fragments` merged on top like scripts/kconfig/merge_config.sh (later ones
 * win, with a warning when they disagree), then `make olddefconfig`. Every
 * option a fragment set is checked in the final .config; any that did not
 * survive fails the stage, named with the fragment line that set it and the
 * reason (no such symbol, unmet dependencies, another architecture's).
 *
 * Build: out of tree in KEEP/build-ID (O=), so a configuration change
 * rebuilds incrementally; ARCH from the recipe's arch; CROSS_COMPILE from the
 * toolchain stage (TOOLCHAIN/bin/TRIPLE-gcc) or `cross_compile`. make runs
 * under the engine's jobserver (MAKEFLAGS), or with -j JOBS without one.
 *
 * Outputs: vmlinux, vmlinuz (x86: bzImage; ia64: vmlinux.gz, the gzip -9n of
 * the stripped vmlinux that elilo loads), System.map, config, release,
 * modules/lib/modules/RELEASE (with modules.dep from depmod -b), headers/
 * (headers_install), stage-manifest.json. With config_only = true: config
 * and release only.
 *
 * This file declares the stage and runs its steps in order; the steps are in
 * kernel_tree.c (source, patches), kernel_config.c (make, configuration) and
 * kernel_install.c (build, outputs), sharing kernel_build.h. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_out.h"
#include "drivers/fetch.h"
#include "drivers/launcher.h"
#include "formats/kconfig.h"
#include "kernel_build.h"

static const struct field fields[] = {
    {"tarball", F_PATH, false, NULL, NULL,
     "local kernel source tarball (e.g. /usr/src/linux-source-6.1.tar.xz)"},
    {"url", F_STRING, false, NULL, NULL,
     "URL of a kernel source tarball to download (needs sha256)"},
    {"sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the tarball at url"},
    {"git", F_STRING, false, NULL, NULL,
     "git repository URL to clone (needs ref)"},
    {"ref", F_STRING, false, NULL, NULL,
     "git branch, tag or full commit id to build"},
    {"debian_version", F_STRING, false, NULL, NULL,
     "version of Debian's `linux` source package whose orig tarball (the upstream "
     "source, without Debian's patches) is built; needs debian_suite"},
    {"debian_suite", F_STRING, false, NULL, NULL,
     "suite whose signed Sources index carries debian_version (trixie, sid, ...)"},
    {"debian_mirror", F_STRING, false, NULL, NULL,
     "Debian mirror for debian_version (unset: " KERNEL_DEBIAN_MIRROR ")"},
    {"debian_keyring", F_STRING, false, NULL, NULL,
     "keyring that signs debian_suite's Release file (unset: " KERNEL_DEBIAN_KEYRING ")"},
    {"series", F_PATH, false, NULL, NULL,
     "directory of a patch series, applied first: the order of its `series` file "
     "(quilt), else *.patch and *.diff by name"},
    {"series_file", F_PATH, false, NULL, NULL,
     "a pinned series manifest, applied after series: one `SHA256  NAME` line per "
     "patch, in order, each downloaded from series_base + NAME (or a mirror, by sha256)"},
    {"series_base", F_STRING, false, NULL, NULL,
     "the URL (ending in /) the names of series_file are under, at a pinned commit"},
    {"series_urls", F_LIST, false, NULL, NULL,
     "patches to download, applied after series and series_file: "
     "({ url = \"...\"; sha256 = \"...\"; }, ...)"},
    {"fuzz", F_INT, false, NULL, NULL,
     "the most fuzz a patch may need (patch --fuzz; unset: patch's own 2); 0 fails "
     "a patch whose context moved, naming the hunk"},
    {"patches", F_INPUT_LIST, false, NULL, NULL,
     "patches applied in order with patch -p1, after series, series_file and series_urls: "
     "paths, or "
     "downloads pinned by sha256 ({ url = \"https://...\"; sha256 = \"...\"; })"},
    {"defconfig", F_STRING, false, NULL, "defconfig",
     "make target giving the base configuration (defconfig, tinyconfig, "
     "generic_defconfig, ...)"},
    {"base_config", F_PATH, false, NULL, NULL,
     "a whole .config to start from instead of defconfig"},
    {"fragments", F_STRING_LIST, false, NULL, NULL,
     "config fragments merged in order, later ones winning: NAME "
     "(kernel-config/NAME.config) or a path (with a / or ending in .config)"},
    {"cross_compile", F_STRING, false, NULL, NULL,
     "CROSS_COMPILE prefix when the recipe has no toolchain stage "
     "(ia64-linux-gnu- or /opt/x/bin/ia64-linux-gnu-)"},
    {"strip_modules", F_BOOL, false, NULL, "true",
     "strip debug symbols from installed modules (INSTALL_MOD_STRIP=1)"},
    {"config_only", F_BOOL, false, NULL, "false",
     "stop after the checked .config (outputs config and release)"},
    {0},
};

static const char *const tools[] = {"make", "gcc", "patch", "depmod", NULL};

/* ---- architectures ------------------------------------------------------- */

static const struct karch karchs[] = {
    {"amd64", "x86_64", "x86", "x86_64-linux-gnu", "bzImage",
     "arch/x86/boot/bzImage", 62 /* EM_X86_64 */},
    {"ia64", "ia64", "ia64", "ia64-linux-gnu", "vmlinux.gz", "vmlinux.gz", 50 /* EM_IA_64 */},
    {0},
};

static const struct karch *karch_of(const char *debian)
{
    for (const struct karch *k = karchs; k->debian; k++)
        if (debian && strcmp(k->debian, debian) == 0)
            return k;
    return NULL;
}

static bool valid_target(const char *s)
{
    if (!s || !str_ends(s, "config") || s[0] == '-')
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
            return false;
    return true;
}

/* ---- plan time ------------------------------------------------------------ */

/* Exactly one source, with the settings that go with it (and no others). */
static int declare_source(struct stage *st)
{
    const char *tarball = st_str(st, "tarball"), *url = st_str(st, "url"),
               *git = st_str(st, "git"), *dver = st_str(st, "debian_version");
    int nsrc = !!tarball + !!url + !!git + !!dver;
    if (nsrc != 1)
        return st_error(st, nsrc ? (tarball ? "tarball" : url ? "url" : "git") : NULL,
                        "%s (set exactly one of tarball, url + sha256, git + ref, or "
                        "debian_version + debian_suite)", nsrc ? "has more than one source"
                                                               : "has no source");
    if (dver) {
        if (!st_str(st, "debian_suite"))
            return st_error(st, "debian_version", "needs kernel.debian_suite (the suite "
                            "carrying linux %s: trixie, sid, ...)", dver);
        if (!dver[0] || dver[0] == '-' || strspn(dver, "0123456789.:~+-abcdefghijklmnopqrstuvwxyz"
                                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(dver))
            return st_error(st, "debian_version", "'%s' is not a Debian version (like "
                            "6.12.8-1; apt-cache showsrc linux lists them)", dver);
        const char *kr = st_str(st, "debian_keyring") ? st_str(st, "debian_keyring")
                                                      : KERNEL_DEBIAN_KEYRING;
        if (!path_exists(kr))
            return st_error(st, st_str(st, "debian_keyring") ? "debian_keyring" : "debian_version",
                            "the keyring %s does not exist (apt-get install "
                            "debian-archive-keyring, or set kernel.debian_keyring)", kr);
        st_tool(st, "apt-get");
    } else {
        static const char *const only[] = {"debian_suite", "debian_mirror", "debian_keyring", NULL};
        for (size_t i = 0; only[i]; i++)
            if (st_isset(st, only[i]))
                return st_error(st, only[i], "only goes with kernel.debian_version");
    }
    if (url) {
        if (!st_isset(st, "sha256"))
            return st_error(st, "url", "needs kernel.sha256 (the SHA-256 of "
                            "the tarball, as sha256sum prints it)");
        if (!fetch_valid_sha256(st_str(st, "sha256")))
            return st_error(st, "sha256", "must be 64 hex digits");
        if (!fetch_valid_url(url))
            return st_error(st, "url", "must be an http(s), ftp or file URL");
        st_remote(st, "sha256", url, NULL, st_str(st, "sha256"));
        st_tool(st, "curl");
    } else if (st_isset(st, "sha256")) {
        return st_error(st, "sha256", "only goes with kernel.url");
    }
    if (git) {
        if (!st_str(st, "ref") || !st_str(st, "ref")[0])
            return st_error(st, "git", "needs kernel.ref (a branch, tag or commit id)");
        if (git[0] == '-' || st_str(st, "ref")[0] == '-')
            return st_error(st, "ref", "must not start with '-'");
        st_tool(st, "git");
    } else if (st_isset(st, "ref")) {
        return st_error(st, "ref", "only goes with kernel.git");
    }
    if (tarball) {
        char *p = st_path(st, "tarball");
        bool ok = path_exists(p) && !is_dir(p);
        free(p);
        if (!ok)
            return st_error(st, "tarball", "'%s' is not a file (install "
                            "linux-source-6.1 for /usr/src/linux-source-6.1."
                            "tar.xz, or fix the path)", tarball);
    }
    return 0;
}

/* The `series` directory (listable now) and the `series_urls`, pinned by
 * their sha256 in the key. */
static int declare_series(struct stage *st)
{
    if (st_str(st, "series")) {
        char *dir = st_path(st, "series"), *why = NULL;
        struct strlist l = {0};
        int n = is_dir(dir) ? ksrc_series_dir_list(dir, &l, &why) : -1;
        if (n < 0 && !why)
            why = xasprintf("'%s' is not a directory (a patch series: its `series` "
                            "file or *.patch files)", st_str(st, "series"));
        strlist_free(&l);
        free(dir);
        if (n < 0) {
            st_error(st, "series", "%s", why);
            free(why);
            return -1;
        }
    }
    const struct st_node *urls = st_node(st, "series_urls");
    for (size_t i = 0; i < node_len(urls); i++) {
        const struct st_node *e = node_elem(urls, i);
        const char *u = node_member_str(e, "url"), *h = node_member_str(e, "sha256");
        if (!u || !h)
            return st_error(st, "series_urls", "entry %zu needs url and sha256: "
                            "{ url = \"https://...\"; sha256 = \"...\"; }", i + 1);
        if (!fetch_valid_sha256(h))
            return st_error(st, "series_urls", "entry %zu: sha256 must be 64 hex digits", i + 1);
        if (!fetch_valid_url(u))
            return st_error(st, "series_urls", "entry %zu: url must be an http(s), ftp or "
                            "file URL", i + 1);
    }
    const char *base = st_str(st, "series_base");
    if (st_isset(st, "series_file") != !!base)
        return st_error(st, base ? "series_base" : "series_file", "%s",
                        base ? "only goes with kernel.series_file (the manifest of names "
                               "and sha256 under it)"
                             : "needs kernel.series_base (the URL, at a pinned commit and "
                               "ending in /, that the manifest's names are under)");
    if (base && (!fetch_valid_url(base) || !str_ends(base, "/")))
        return st_error(st, "series_base", "'%s' must be an http(s), ftp or file URL "
                        "ending in /", base);
    if (st_isset(st, "fuzz") && (st_int(st, "fuzz", 0) < 0 || st_int(st, "fuzz", 0) > 20))
        return st_error(st, "fuzz", "must be 0 to 20 (the context lines a hunk may "
                        "ignore; 0 allows none)");
    /* the manifest's entries and the series_urls, each pinned by its sha256:
       that is what the key needs */
    struct ksrc_pins pins = {0};
    char *why = NULL;
    if (ksrc_series_pins(st, &pins, &why) < 0) {
        st_error(st, "series_file", "%s", why);
        free(why);
        ksrc_pins_free(&pins);
        return -1;
    }
    for (size_t i = 0; i < pins.url.n; i++) {
        char *t = xasprintf("%s %s", pins.sha.v[i], pins.url.v[i]);
        st_input_text(st, "series_url", t);
        free(t);
        st_remote(st, pins.key.v[i], pins.url.v[i], NULL, pins.sha.v[i]);
        st_tool(st, "curl");
    }
    ksrc_pins_free(&pins);
    return 0;
}

/* defconfig or base_config, and the fragments. */
static int declare_config(struct stage *st)
{
    const char *defconfig = st_str(st, "defconfig");
    if (st_isset(st, "base_config") && st_isset(st, "defconfig"))
        return st_error(st, "base_config", "give either defconfig or "
                        "base_config, not both");
    if (!st_isset(st, "base_config") && !valid_target(defconfig))
        return st_error(st, "defconfig", "'%s' is not a configuration target "
                        "(expected a make target ending in 'config', like "
                        "defconfig, tinyconfig or generic_defconfig)",
                        defconfig ? defconfig : "");

    /* fragments: found, readable and well-formed now, by content in the key */
    struct strlist frags = {0};
    ksrc_all_fragments(st, &frags);
    int rc = 0;
    for (size_t i = 0; i < frags.n; i++) {
        char *p = ksrc_fragment_path(st_recipe_dir(st), frags.v[i]);
        if (!p) {
            char *dir = trillian_data_path("kernel-config");
            rc = st_error(st, "fragments", "no fragment '%s' (looked for "
                          "%s/%s.config; give a path to use another file)",
                          frags.v[i], dir, frags.v[i]);
            free(dir);
            continue;
        }
        char *text = NULL;
        size_t len;
        if (read_file(p, &text, &len) < 0) {
            rc = st_error(st, "fragments", "cannot read fragment %s: %s", p,
                          strerror(errno));
            free(p);
            continue;
        }
        struct kconfig kc = {0};
        struct buf err = BUF_INIT;
        if (kconfig_parse(&kc, text, p, &err) < 0)
            rc = st_error(st, "fragments", "%s", err.p);
        else
            st_input_file(st, frags.v[i], p);
        buf_free(&err);
        kconfig_free(&kc);
        free(text);
        free(p);
    }
    strlist_free(&frags);
    return rc;
}

/* The cross compiler, when the recipe has no toolchain stage. */
static int declare_compiler(struct stage *st, const struct karch *k)
{
    const char *cc = st_str(st, "cross_compile");
    if (st_want(st, "toolchain")) {
        if (cc)
            return st_error(st, "cross_compile", "the recipe has a toolchain "
                            "stage; drop cross_compile (or the toolchain)");
    } else if (cc || !ksrc_is_host(k)) {
        char *gcc = cc ? xasprintf("%sgcc", cc) : xasprintf("%s-gcc", k->triple);
        if (!ksrc_on_path(NULL, gcc)) {
            int rc = st_error(st, cc ? "cross_compile" : NULL,
                              "needs the C compiler %s for arch %s, which is not "
                              "%s (add a toolchain section to the recipe, or set "
                              "kernel.cross_compile to the prefix of one)", gcc,
                              k->debian, strchr(gcc, '/') ? "there" : "on PATH");
            free(gcc);
            return rc;
        }
        st_tool(st, gcc);
        free(gcc);
    }
    return 0;
}

static int declare(struct stage *st)
{
    const struct karch *k = karch_of(st_arch(st));
    if (!k)
        return st_error(st, NULL, "kind \"source\" builds for arch amd64 or "
                        "ia64, not '%s'", st_arch(st) ? st_arch(st) : "?");
    int rc = declare_source(st);
    if (!rc)
        rc = declare_series(st);
    if (!rc)
        rc = declare_config(st);
    if (!rc)
        rc = declare_compiler(st, k);
    if (rc)
        return rc;

    if (st_bool(st, "config_only", false)) {
        st_output(st, "config");
        st_output(st, "release");
    } else {
        static const char *const outs[] = {"vmlinux", "vmlinuz", "System.map",
                                           "config", "release", "modules",
                                           "headers", NULL};
        for (size_t i = 0; outs[i]; i++)
            st_output(st, outs[i]);
    }
    return 0;
}

/* ---- run time ------------------------------------------------------------- */

/* stage-manifest.json: the release, what was built from (DESC: the source,
 * patches, base configuration and fragments), ARCH, CROSS_COMPILE, and
 * whether there are modules. */
static int write_manifest(const struct kbuild *kb, const char *release, json_object *desc,
                          bool modules)
{
    json_object *m = json_object_new_object();
    json_add_str(m, "release", release);
    json_object_object_foreach(desc, key, val)
        json_object_object_add(m, key, json_object_get(val));
    json_add_str(m, "arch", kb->k->arch);
    if (kb->cross)
        json_add_str(m, "cross_compile", kb->cross);
    json_object_object_add(m, "modules", json_object_new_boolean(modules));
    return cx_write_manifest(kb->cx, m);
}

static int run(struct stage_ctx *cx)
{
    const struct karch *k = karch_of(cx->arch);
    if (!k)
        return cx_fail(cx, "arch %s is not supported by kernel kind source",
                       cx->arch);
    struct kbuild kb = {.cx = cx, .k = k, .jobserver = ksrc_have_jobserver()};
    json_object *desc = json_object_new_object();
    char *release = NULL;
    int rc = 1;
    double t0 = now_seconds();
    if (ksrc_setup_toolchain(&kb))
        goto out;
    ksrc_reproducible_env(&kb);
    /* the tree and its build directory are both below KEEP */
    char *launch = launcher_prefix(cx, "kernel", cx->keep, false, &kb.env);
    if (launch)
        kb.cc = xasprintf("CC=%s %sgcc", launch, kb.cross ? kb.cross : "");
    free(launch);

    kb.src = ksrc_prepare_source(cx, desc);
    if (!kb.src || ksrc_check_min_gcc(&kb))
        goto out;
    {
        const char *id = path_basename(kb.src) + 4; /* after "src-" */
        char *b = xasprintf("build-%s", id);
        kb.bld = path_join(cx->keep, b);
        free(b);
    }
    if (mkdir_p(kb.bld, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", kb.bld, strerror(errno));
        goto out;
    }
    cx_log(cx, "building in %s (ARCH=%s, %s)", kb.bld, k->arch,
           kb.jobserver ? "make jobserver from trillian" : "no jobserver");
    if (ksrc_configure(&kb, desc))
        goto out;
    release = ksrc_kernel_release(&kb);
    if (!release)
        goto out;

    char *dotconfig = path_join(kb.bld, ".config");
    bool modules = ksrc_config_has(dotconfig, "CONFIG_MODULES");
    free(dotconfig);
    char *reltext = xasprintf("%s\n", release);
    int wr = cx_write(cx, "release", reltext, strlen(reltext));
    free(reltext);
    if (wr || ksrc_copy_out(&kb, ".config", "config"))
        goto out;
    if (cx_bool(cx, "config_only", false))
        cx_log(cx, "config_only: stopping after the configuration");
    else if (ksrc_build_install(&kb, release, modules))
        goto out;
    if (write_manifest(&kb, release, desc, modules))
        goto out;
    cx_log(cx, "kernel %s done in %.0f s", release, now_seconds() - t0);
    rc = 0;
out:
    free(release);
    json_object_put(desc);
    ksrc_kbuild_free(&kb);
    return rc;
}

/* added after 6.1 kernels were cached: unset, they leave keys as they were */
static const char *const late_fields[] = {"series", "series_urls", "debian_version",
                                          "debian_suite", "debian_mirror",
                                          "debian_keyring", "series_file", "series_base",
                                          "fuzz", NULL};

/* in the order all_patches() applies them */
static const char *const patch_fields[] = {"series", "series_file", "series_urls", "patches", NULL};

const struct stage_kind stage_kernel_source = {
    .name = "source",
    .section = "kernel",
    .version = 1,
    .summary = "Linux built from a tarball, Debian's source package or git, with "
               "patch series and config fragments",
    .fields = fields,
    .tools = tools,
    .outputs = NULL, /* declare() states them: they depend on config_only */
    .late_fields = late_fields,
    .patch_fields = patch_fields,
    .declare = declare,
    .run = run,
    .cost_hint = 900,
    .patch_check = ksrc_patch_check,
};
