/* packages, kind "grub": GRUB built from source for the recipe's EFI
 * platform, and its EFI image made with the grub-mkimage it built. This is
 * how ia64 recipes get a real IA-64 EFI loader offline: Debian's archive has
 * no ia64 GRUB modules (grub-efi-ia64-bin lives in debian-ports).
 *
 * Platforms are rows of `platforms`: ia64-efi (arch ia64; the target code is
 * compiled with the toolchain stage's stage-1 gcc, TARGET from its `target`
 * file) and x86_64-efi (arch amd64; the host gcc). The host tools
 * (grub-mkimage) are always built with the host gcc.
 *
 * Source (`source`): "debian" (default) is Debian's grub2 source package
 * `version` from `mirror` `suite`, fetched with a private apt
 * (debfetch_apt_source: its files' SHA-256 come from the signed Sources
 * index) and kept in CACHE/downloads/sources/; a path to a .dsc is such a
 * package already downloaded (files beside it, `sha256` of the .dsc checked
 * when set); anything else is a GRUB tarball (path or URL with `sha256`).
 * Source packages are unpacked with dpkg-source -x, which checks the .dsc's
 * hashes of the orig and debian tarballs and applies Debian's whole patch
 * series (206 patches in 2.06-13+deb12u2: CVE fixes in fonts, image readers,
 * net and file systems, gcc 12 build fixes; the rest concern other platforms
 * or grub-install and are inert here). Then `patches` (patch -p1), then
 * ./autogen.sh as Debian's build does (the series changes configure.ac and
 * Makefile.*.def), configure --target=TARGET --with-platform=efi with
 * everything a loader image does not need disabled, make, make install into
 * the scratch directory. The steps are those of bench/grub-ia64-by-hand.sh.
 *
 * Checks: every module in `modules` exists for the platform (a missing one
 * is named, with the module directory to look in), and the image is a PE
 * file for the platform's machine (binfmt_pe_machine: 0x200 on ia64).
 *
 * Outputs: the image (grubia64.efi / grubx64.efi, grub-install's names) with
 * prefix `prefix` on the device it was loaded from, bin/grub-mkimage and
 * lib/grub/PLATFORM/ (the modules; grub-mkimage -d DIR can make other images
 * from them, e.g. with an embedded configuration), stage-manifest.json
 * {"grub", "debian_version", "platform", "target", "prefix", "modules",
 * "source", "sha256" (of the tarball or .dsc), "debian_patches", "patches", "pe_machine"}.
 * A bootloader of kind "grub" takes its image from this stage (esp.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/binfmt.h"
#include "drivers/debfetch.h"
#include "base/sha256.h"
#include "base/run_command.h"
#include "stage.h"
#include "toolchain.h"

#define GRUB_DEBIAN_VERSION "2.06-13+deb12u2"

struct grub_platform {
    const char *platform; /* grub-mkimage -O, and the module directory's name */
    const char *arch;     /* the recipe's arch */
    const char *image;    /* output file name (grub-install's) */
    int pe_machine;
    bool cross; /* target code from the toolchain stage's gcc, else the host's */
};

static const struct grub_platform platforms[] = {
    {"ia64-efi", "ia64", "grubia64.efi", BINFMT_PE_IA64, true},
    {"x86_64-efi", "amd64", "grubx64.efi", BINFMT_PE_AMD64, false},
    {0},
};

static const char *const platform_choices[] = {"ia64-efi", "x86_64-efi", NULL};

/* Booting Linux from GPT/MBR disks with FAT or ext2/3/4, on a serial or EFI
 * console, with a menu from grub.cfg. */
#define DEFAULT_MODULES                                                                     \
    "part_gpt part_msdos fat ext2 linux normal configfile echo test serial terminal "      \
    "search search_fs_uuid search_fs_file search_label ls cat reboot halt gzio"

static const struct field fields[] = {
    {"source", F_STRING, false, NULL, "debian",
     "\"debian\": Debian's grub2 source package (version, mirror, suite); or a path to a "
     "grub2 .dsc with its files beside it; or a GRUB tarball path or http(s) URL"},
    {"version", F_STRING, false, NULL, GRUB_DEBIAN_VERSION,
     "version of Debian's grub2 source package (source = \"debian\")"},
    {"mirror", F_STRING, false, NULL, "http://deb.debian.org/debian",
     "Debian archive for source = \"debian\""},
    {"suite", F_STRING, false, NULL, "bookworm", "suite carrying that version"},
    {"keyring", F_STRING, false, NULL, "/usr/share/keyrings/debian-archive-keyring.gpg",
     "keyring that signs the suite's Release file"},
    {"sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the .dsc or tarball (required for a URL, checked for a path)"},
    {"patches", F_PATH_LIST, false, NULL, NULL,
     "patches applied with patch -p1 after Debian's series"},
    {"platform", F_ENUM, false, platform_choices, NULL,
     "GRUB platform; must match the arch (default: ia64-efi on ia64, x86_64-efi on amd64)"},
    {"modules", F_STRING_LIST, false, NULL, DEFAULT_MODULES,
     "modules built into the image (space-separated default shown)"},
    {"prefix", F_STRING, false, NULL, "/EFI/BOOT",
     "where the image looks for grub.cfg and modules on its own device (the ESP stage "
     "needs /EFI/BOOT)"},
    {"configure", F_STRING_LIST, false, NULL, NULL,
     "extra configure flags, after Trillian's"},
    {0},
};

static const char *const tools[] = {"make", "gcc", "bison", "flex", "python3", "autoreconf",
                                    "autopoint", NULL};
static const char *const outputs[] = {"bin/grub-mkimage", "lib/grub", "stage-manifest.json",
                                      NULL};

static const struct grub_platform *platform_of(const struct stage *st)
{
    const char *p = st_str(st, "platform");
    for (const struct grub_platform *r = platforms; r->platform; r++)
        if (p ? strcmp(r->platform, p) == 0 : strcmp(r->arch, st_arch(st)) == 0)
            return r;
    return NULL;
}

enum src_kind { SRC_DEBIAN, SRC_DSC, SRC_TARBALL };

static enum src_kind source_kind(const char *source)
{
    return strcmp(source, "debian") == 0 ? SRC_DEBIAN
           : str_ends(source, ".dsc")    ? SRC_DSC
                                         : SRC_TARBALL;
}

static void default_modules(struct strlist *out)
{
    char *all = xstrdup(DEFAULT_MODULES), *save = NULL;
    for (char *w = strtok_r(all, " ", &save); w; w = strtok_r(NULL, " ", &save))
        strlist_push(out, w);
    free(all);
}

static void modules_of(const struct stage *st, struct strlist *out)
{
    if (st_isset(st, "modules"))
        st_list(st, "modules", out);
    else
        default_modules(out);
}

static int declare(struct stage *st)
{
    const struct grub_platform *p = platform_of(st);
    if (!p)
        return st_error(st, NULL, "GRUB has no EFI platform for arch \"%s\" here (platforms: "
                        "ia64-efi, x86_64-efi)", st_arch(st));
    if (strcmp(p->arch, st_arch(st)) != 0) {
        const struct grub_platform *want = NULL;
        for (const struct grub_platform *r = platforms; r->platform; r++)
            if (strcmp(r->arch, st_arch(st)) == 0)
                want = r;
        return st_error(st, "platform", "%s is for arch %s, but the recipe's arch is %s: set "
                        "platform = \"%s\" or leave it out", p->platform, p->arch,
                        st_arch(st), want ? want->platform : "?");
    }
    if (p->cross)
        st_need(st, "toolchain");

    int bad = 0;
    const char *source = st_str(st, "source");
    switch (source_kind(source)) {
    case SRC_DEBIAN:
        if (st_isset(st, "sha256"))
            bad |= st_error(st, "sha256", "is for a .dsc or tarball source; with source = "
                            "\"debian\" the hashes come from the archive's signed Sources "
                            "index");
        if (!path_exists(st_str(st, "keyring")))
            bad |= st_error(st, "keyring", "%s does not exist (apt-get install "
                            "debian-archive-keyring, or set keyring)", st_str(st, "keyring"));
        st_tool(st, "apt-get");
        st_tool(st, "dpkg-source");
        break;
    case SRC_DSC: {
        char *path = st_path(st, "source");
        if (!path_exists(path) || is_dir(path))
            bad |= st_error(st, "source", "%s is not a file (a grub2 .dsc with its tarballs "
                            "beside it; or \"debian\" to fetch it)", path);
        else
            st_input_file(st, "source", path);
        free(path);
        const char *sha = st_str(st, "sha256");
        if (sha && (strlen(sha) != 64 || strspn(sha, "0123456789abcdef") != 64))
            bad |= st_error(st, "sha256", "'%s' is not a SHA-256 (expected 64 lowercase hex "
                            "digits)", sha);
        st_tool(st, "dpkg-source");
        break;
    }
    case SRC_TARBALL: {
        char *path = st_path(st, "source");
        if (!tc_is_url(source) && (!path_exists(path) || is_dir(path)))
            bad |= st_error(st, "source", "%s is not a file (expected \"debian\", a grub2 "
                            ".dsc, or a GRUB tarball path or URL)", path);
        else
            tc_declare_source(st, "source", "sha256");
        free(path);
        if (tc_is_url(source))
            st_tool(st, "curl");
        break;
    }
    }
    struct strlist l = {0};
    modules_of(st, &l);
    if (!l.n)
        bad |= st_error(st, "modules", "is empty: the image needs at least normal and linux");
    for (size_t i = 0; i < l.n; i++)
        if (!l.v[i][0] || strspn(l.v[i], "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
                              strlen(l.v[i]))
            bad |= st_error(st, "modules", "'%s' is not a GRUB module name", l.v[i]);
    strlist_free(&l);
    const char *prefix = st_str(st, "prefix");
    if (prefix[0] != '/' && prefix[0] != '(')
        bad |= st_error(st, "prefix", "'%s' must be absolute (/EFI/BOOT) or name a device "
                        "((hd0,gpt1)/boot/grub)", prefix);
    st_list(st, "configure", &l);
    static const char *const ours[] = {"--target", "--with-platform", "--prefix",
                                       "TARGET_CC", NULL};
    for (size_t i = 0; i < l.n; i++)
        for (size_t j = 0; ours[j]; j++)
            if (str_starts(l.v[i], ours[j]))
                bad |= st_error(st, "configure", "'%s': Trillian sets %s itself (from "
                                "platform and the toolchain stage)", l.v[i], ours[j]);
    strlist_free(&l);
    if (st_list(st, "patches", &l))
        st_tool(st, "patch");
    strlist_free(&l);
    st_output(st, p->image);
    return bad ? -1 : 0;
}

static char *rkey_of(const struct stage_ctx *cx)
{
    return xasprintf("packages.%s", cx->name);
}

/* source = "debian": the .dsc's path (files beside it), *dver the version. */
static char *fetch_debian(const struct stage_ctx *cx, const char *rkey, char **dver)
{
    char *setting = xasprintf("%s.version", rkey);
    char *dsc = debfetch_source(cx, cx_str(cx, "mirror"), cx_str(cx, "suite"),
                                cx_str(cx, "keyring"), rkey, "grub2", cx_str(cx, "version"),
                                setting, dver);
    free(setting);
    return dsc;
}

/* Patches in a Debian source tree's series (quilt): non-comment lines. */
static size_t series_length(const char *src)
{
    char *p = path_join(src, "debian/patches/series"), *text = NULL;
    size_t n = 0;
    if (read_file(p, &text, NULL) == 0)
        for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
            if (*l != '#' && *l != '\n')
                n++;
    free(text);
    free(p);
    return n;
}

/* "2.06" from configure.ac's AC_INIT([GRUB],[2.06],...); new string or NULL. */
static char *grub_version(const char *src)
{
    char *p = path_join(src, "configure.ac");
    char *v = file_text_after(p, "AC_INIT([GRUB],[", "]");
    free(p);
    return v;
}

/* Unpacked, patched source tree (new string) or NULL after cx_fail; fills
 * *origin, *dver (Debian version or NULL), *series and SHA (the sha256 of
 * the tarball or .dsc, for the manifest; empty when unreadable). */
static char *get_source(const struct stage_ctx *cx, const char *rkey, char **origin, char **dver,
                        size_t *series, char sha[65])
{
    const char *source = cx_str(cx, "source");
    char *src = NULL, *dsc = NULL;
    *dver = NULL;
    *series = 0;
    enum src_kind k = source_kind(source);
    if (k == SRC_TARBALL) {
        char *tarball = tc_get_source(cx, rkey, "source", "sha256");
        if (!tarball)
            return NULL;
        double t0 = now_seconds();
        char *dir = path_join(cx->work, "src");
        src = tc_unpack(cx, rkey, "source", tarball, dir);
        free(dir);
        cx_log(cx, "unpack: %.1f s", now_seconds() - t0);
        *origin = xstrdup(path_basename(tarball));
        if (sha256_file(tarball, sha) < 0)
            sha[0] = 0;
        free(tarball);
        if (!src)
            return NULL;
    } else {
        if (k == SRC_DEBIAN) {
            double t0 = now_seconds();
            if (!(dsc = fetch_debian(cx, rkey, dver)))
                return NULL;
            cx_log(cx, "fetch: %.1f s", now_seconds() - t0);
        } else {
            /* the sha256 check and error wording of a tarball path */
            char *p = cx_path(cx, "source");
            dsc = tc_get_source_value(cx, rkey, "source", "sha256", p, p, cx_str(cx, "sha256"));
            free(p);
            if (!dsc)
                return NULL;
            const char *us = strchr(path_basename(dsc), '_');
            *dver = us ? xstrndup(us + 1, strlen(us + 1) - 4) : NULL;
        }
        src = path_join(cx->work, "src");
        /* without --no-check: the .dsc's hashes of its tarballs are checked
         * (its signature cannot be, without Debian's developer keyring: the
         * .dsc itself is vouched for by the Sources index or `sha256`) */
        const char *argv[] = {"dpkg-source", "--no-copy", "-x", dsc, src, NULL};
        if (tc_run_step(cx, cx->work, NULL, argv, "unpack") != 0) {
            cx_fail(cx, "%s.source: dpkg-source -x %s failed (a file missing beside it or "
                    "not matching its hashes? see the log)", rkey, dsc);
            free(src);
            free(dsc);
            return NULL;
        }
        *series = series_length(src);
        if (sha256_file(dsc, sha) < 0)
            sha[0] = 0;
        *origin = xasprintf("%s (Debian series: %zu patches)", path_basename(dsc), *series);
        free(dsc);
    }
    struct strlist patches = {0};
    cx_list(cx, "patches", &patches);
    for (size_t i = 0; i < patches.n; i++) {
        char *p = path_absolute(cx->recipe_dir, patches.v[i]);
        const char *pa[] = {"patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch",
                            "-d", src, "-i", p, NULL};
        int r = cx_run(cx, pa);
        if (r != 0)
            cx_fail(cx, "%s.patches: %s does not apply (patch exit %d; see the log for the "
                    "failed hunks)", rkey, p, r);
        free(p);
        if (r != 0) {
            strlist_free(&patches);
            free(src);
            return NULL;
        }
    }
    strlist_free(&patches);
    return src;
}

/* MODDIR/NAME.mod for every module; 0, or 1 after cx_fail naming the absent. */
static int check_modules(const struct stage_ctx *cx, const char *rkey, const char *moddir,
                         const char *platform, const struct strlist *mods)
{
    struct buf missing = BUF_INIT;
    for (size_t i = 0; i < mods->n; i++) {
        char *f = xasprintf("%s/%s.mod", moddir, mods->v[i]);
        if (!path_exists(f))
            buf_printf(&missing, "%s%s", missing.n ? ", " : "", mods->v[i]);
        free(f);
    }
    int rc = 0;
    if (missing.n)
        rc = cx_fail(cx, "%s.modules: GRUB has no %s module %s (the modules it built are the "
                     "*.mod files in %s); remove %s from %s.modules", rkey, platform, missing.p,
                     moddir, strchr(missing.p, ',') ? "them" : "it", rkey);
    buf_free(&missing);
    return rc;
}

static int write_manifest(const struct stage_ctx *cx, const char *version, const char *dver,
                          const struct grub_platform *p, const char *target,
                          const struct strlist *mods, const char *origin, size_t series,
                          size_t npatches, int machine, const char *sha)
{
    json_object *m = json_object_new_object();
    json_add_str(m, "grub", version);
    json_object_object_add(m, "debian_version", dver ? json_str(dver) : NULL);
    json_add_str(m, "platform", p->platform);
    json_add_str(m, "target", target);
    json_add_str(m, "image", p->image);
    json_add_str(m, "prefix", cx_str(cx, "prefix"));
    json_object_object_add(m, "modules", json_strlist(mods));
    json_add_str(m, "source", origin);
    if (sha[0])
        json_add_str(m, "sha256", sha);
    json_object_object_add(m, "debian_patches", json_object_new_int64((int64_t)series));
    json_object_object_add(m, "patches", json_object_new_int64((int64_t)npatches));
    char pe[16];
    snprintf(pe, sizeof pe, "0x%x", (unsigned)machine);
    json_add_str(m, "pe_machine", pe);
    return cx_write_manifest(cx, m);
}

static int run(struct stage_ctx *cx)
{
    const struct grub_platform *p = platform_of(cx->st);
    char *rkey = rkey_of(cx), *target = NULL, *src = NULL, *origin = NULL, *dver = NULL;
    char srcsha[65] = "";
    char *version = NULL, *obj = path_join(cx->work, "obj"), *dest = path_join(cx->work, "dest");
    char *env_path = NULL, *sde = xasprintf("SOURCE_DATE_EPOCH=%lld", cx->source_date_epoch);
    char *moddir = NULL, *mkimage = NULL, *img = NULL;
    struct strlist argv = {0}, mods = {0}, patches = {0};
    size_t series = 0;
    int rc = 1;
    const char *tc = p->cross ? cx_dep(cx, "toolchain") : NULL;

    if (tc ? !(target = tc_read_target(cx, tc)) : !(target = xstrdup(tc_default_target(cx->arch))))
        goto out;
    if (!(src = get_source(cx, rkey, &origin, &dver, &series, srcsha)))
        goto out;
    if (!(version = grub_version(src))) {
        cx_fail(cx, "%s.source: %s has no configure.ac with AC_INIT([GRUB],[VERSION]): not a "
                "GRUB source", rkey, origin);
        goto out;
    }
    cx_log(cx, "GRUB %s%s%s for %s (%s), from %s", version, dver ? ", Debian " : "",
           dver ? dver : "", p->platform, target, origin);

    /* the toolchain's bin/ first: its gcc finds as and ld there */
    env_path = run_path_env("%s%s", tc ? tc : "", tc ? "/bin" : "");
    const char *env[] = {env_path, sde, "PYTHON=python3", "LC_ALL=C", NULL};
    char *autogen = path_join(src, "autogen.sh");
    const char *ag[] = {autogen, NULL};
    int r = tc_run_step(cx, src, env, ag, "autogen");
    free(autogen);
    if (r != 0) {
        cx_fail(cx, "%s: GRUB's autogen.sh failed (see the log; it needs python3, autoconf, "
                "automake and autopoint: tools/install-deps)", rkey);
        goto out;
    }

    if (mkdir_p(obj, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", obj, strerror(errno));
        goto out;
    }
    strlist_pushf(&argv, "%s/configure", src);
    /* --program-prefix=: a cross build would name its tools TARGET-grub-*.
     * Not needed in a loader image: NLS, efiemu (i386 only), grub-mount
     * (fuse), themes and fonts (no gfxterm on a serial console),
     * device-mapper, ZFS, liblzma. gcc 12 warns on some 2.06 code. */
    static const char *const flags[] = {
        "--prefix=/usr", "--libdir=/usr/lib", "--with-platform=efi", "--program-prefix=",
        "--disable-werror", "--disable-nls", "--disable-efiemu", "--disable-grub-mount",
        "--disable-grub-themes", "--disable-grub-mkfont", "--disable-device-mapper",
        "--disable-libzfs", "--disable-liblzma", NULL};
    strlist_pushf(&argv, "--target=%s", target);
    for (size_t i = 0; flags[i]; i++)
        strlist_push(&argv, flags[i]);
    /* The scratch directory mapped away: __FILE__ (asserts in mpi, regexp,
     * the relocator) would carry its path into the modules. GRUB adds CFLAGS
     * (default empty) to its own -Os target flags and host flags alike. */
    strlist_pushf(&argv, "CFLAGS=-ffile-prefix-map=%s=.", cx->work);
    if (tc) {
        static const char *const tv[] = {"CC=gcc", "OBJCOPY=objcopy", "STRIP=strip",
                                         "NM=nm", "RANLIB=ranlib", NULL};
        for (size_t i = 0; tv[i]; i++) {
            const char *eq = strchr(tv[i], '=');
            strlist_pushf(&argv, "TARGET_%.*s=%s/bin/%s-%s", (int)(eq - tv[i]), tv[i], tc,
                          target, eq + 1);
        }
    }
    cx_list(cx, "configure", &argv);
    if (tc_run_step(cx, obj, env, (const char *const *)argv.v, "configure") != 0) {
        cx_fail(cx, "%s: GRUB's configure failed (see the log and %s/config.log; check %s"
                ".configure)", rkey, obj, rkey);
        goto out;
    }
    strlist_free(&argv);
    /* MAKEINFO=true: no texinfo needed (the manual is not installed) */
    static const char *const margs[] = {"MAKEINFO=true", NULL};
    tc_make_argv(cx, &argv, margs);
    if (tc_run_step(cx, obj, env, (const char *const *)argv.v, "make") != 0) {
        cx_fail(cx, "%s: make failed (see the log above)", rkey);
        goto out;
    }
    strlist_free(&argv);
    char *dd = xasprintf("DESTDIR=%s", dest);
    const char *iargs[] = {"install", dd, "MAKEINFO=true", NULL};
    tc_make_argv(cx, &argv, iargs);
    free(dd);
    if (tc_run_step(cx, obj, env, (const char *const *)argv.v, "install") != 0) {
        cx_fail(cx, "%s: make install failed (see the log above)", rkey);
        goto out;
    }
    strlist_free(&argv);

    /* bin/grub-mkimage and lib/grub/PLATFORM into OUT */
    char *from_mods = xasprintf("%s/usr/lib/grub/%s", dest, p->platform);
    char *from_mk = path_join(dest, "usr/bin/grub-mkimage");
    char *bindir = path_join(cx->out, "bin"), *libdir = path_join(cx->out, "lib/grub");
    moddir = path_join(libdir, p->platform);
    mkimage = path_join(bindir, "grub-mkimage");
    int cr = 0;
    if (mkdir_p(bindir, 0755) < 0 || mkdir_p(libdir, 0755) < 0 ||
        copy_file(from_mk, mkimage) < 0 || copy_tree(from_mods, moddir, false) < 0)
        cr = cx_fail(cx, "%s: cannot copy the installed grub-mkimage and %s modules (%s, %s) "
                     "into %s: %s", rkey, p->platform, from_mk, from_mods, cx->out,
                     strerror(errno));
    free(from_mods);
    free(from_mk);
    free(bindir);
    free(libdir);
    if (cr)
        goto out;

    modules_of(cx->st, &mods);
    if (check_modules(cx, rkey, moddir, p->platform, &mods))
        goto out;
    img = path_join(cx->work, p->image);
    const char *head[] = {mkimage, "-d", moddir, "-O", p->platform, "-p", cx_str(cx, "prefix"),
                          "-o", img};
    for (size_t i = 0; i < ARRAY_LEN(head); i++)
        strlist_push(&argv, head[i]);
    for (size_t i = 0; i < mods.n; i++)
        strlist_push(&argv, mods.v[i]);
    if (tc_run_step(cx, cx->work, env, (const char *const *)argv.v, "mkimage") != 0) {
        cx_fail(cx, "%s: grub-mkimage failed making %s (see the log; check %s.modules)", rkey,
                p->image, rkey);
        goto out;
    }
    char err[BINFMT_ERRLEN];
    int m = binfmt_pe_machine(img, err);
    if (m != p->pe_machine) {
        if (m < 0)
            cx_fail(cx, "%s: grub-mkimage made no PE image: %s", rkey, err);
        else
            cx_fail(cx, "%s: %s is a PE image for %s (machine 0x%x), not %s (0x%x): the "
                    "toolchain stage's compiler built GRUB for the wrong machine", rkey,
                    p->image, binfmt_pe_machine_name(m), (unsigned)m,
                    binfmt_pe_machine_name(p->pe_machine), (unsigned)p->pe_machine);
        goto out;
    }
    char *final = path_join(cx->out, p->image);
    int mv = rename(img, final);
    free(final);
    if (mv < 0) {
        cx_fail(cx, "cannot move %s into %s: %s", img, cx->out, strerror(errno));
        goto out;
    }
    cx_list(cx, "patches", &patches);
    if (write_manifest(cx, version, dver, p, target, &mods, origin, series, patches.n, m, srcsha))
        goto out;
    cx_log(cx, "%s: GRUB %s %s image, PE machine 0x%x (%s), %zu modules", p->image, version,
           p->platform, (unsigned)m, binfmt_pe_machine_name(m), mods.n);
    rc = 0;
out:
    strlist_free(&argv);
    strlist_free(&mods);
    strlist_free(&patches);
    free(rkey);
    free(target);
    free(src);
    free(origin);
    free(dver);
    free(version);
    free(obj);
    free(dest);
    free(env_path);
    free(sde);
    free(moddir);
    free(mkimage);
    free(img);
    return rc;
}

const struct stage_kind stage_grub_build = {
    .name = "grub",
    .section = "packages",
    .version = 3, /* 3: build paths mapped out of the modules (not bumped for dropping
                     the step times from the manifest: docs/engine.md) */
    .summary = "GRUB built from Debian's grub2 source package for the recipe's EFI platform "
               "(ia64-efi with the toolchain stage's gcc) and its EFI image",
    .fields = fields,
    .tools = tools,
    .outputs = outputs,
    .declare = declare,
    .run = run,
};
