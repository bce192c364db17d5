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
 * the scratch directory. The steps are those of bench/grub-ia64-by-hand.sh,
 * as a table for the generic source-package build (pkg_build.h): the
 * source by the kind's get hook, `patches` applied by pkg_build
 * (patches_key), the version read from configure.ac (a function step),
 * autogen, configure, make and make install (table steps; the toolchain's
 * TARGET_* tools as `?` arguments, left out for the host's gcc), the
 * modules checked and the image made and checked (a function step), then
 * bin/grub-mkimage, lib/grub/PLATFORM/ and the image as install rows.
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
#include <stdlib.h>
#include <string.h>

#include "formats/binfmt.h"
#include "drivers/debfetch.h"
#include "base/sha256.h"
#include "base/run_command.h"
#include "pkg_build.h"
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

/* The build (pkg_build.h): the source by get_source, the recipe's `patches`
 * by pkg_build (patches_key), then the version read (a function step),
 * autogen, configure, make and make install into WORK/dest as table steps,
 * the modules checked and the image made with the grub-mkimage just built
 * and checked (function steps), and bin/grub-mkimage, the module directory
 * and the image copied into the output (install rows). */
struct grub_state {
    const struct grub_platform *p;
    char *rkey;       /* "packages.grub" */
    const char *tc;   /* the toolchain stage's output (ia64-efi), else NULL */
    char *target;     /* TARGET of configure --target */
    char *path_env;   /* PATH=, the toolchain's bin/ first: its gcc finds as and ld there */
    char *sde;        /* SOURCE_DATE_EPOCH= */
    char *tc_bin;     /* TOOLCHAIN/bin/TARGET- (ia64-efi), else NULL */
    char *src;        /* the source tree (pkg_build's, borrowed) */
    char *origin, *dver, *version;
    size_t series;
    char sha[65];
    struct strlist mods;
    int machine;
};

/* Unpacked source tree (new string) or NULL after cx_fail; fills the
 * state's origin, dver (Debian version or NULL), series and sha (the sha256
 * of the tarball or .dsc, for the manifest; empty when unreadable). */
static char *get_source(const struct stage_ctx *cx, void *arg)
{
    struct grub_state *s = arg;
    const char *rkey = s->rkey;
    const char *source = cx_str(cx, "source");
    char *src = NULL, *dsc = NULL;
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
        s->origin = xstrdup(path_basename(tarball));
        if (sha256_file(tarball, s->sha) < 0)
            s->sha[0] = 0;
        free(tarball);
        return s->src = src;
    }
    if (k == SRC_DEBIAN) {
        double t0 = now_seconds();
        if (!(dsc = fetch_debian(cx, rkey, &s->dver)))
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
        s->dver = us ? xstrndup(us + 1, strlen(us + 1) - 4) : NULL;
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
    s->series = series_length(src);
    if (sha256_file(dsc, s->sha) < 0)
        s->sha[0] = 0;
    s->origin = xasprintf("%s (Debian series: %zu patches)", path_basename(dsc), s->series);
    free(dsc);
    return s->src = src;
}

static const char *var(void *arg, const char *name)
{
    const struct grub_state *s = arg;
    if (strcmp(name, "target") == 0)
        return s->target;
    if (strcmp(name, "tc") == 0)
        return s->tc_bin; /* NULL for the host's gcc: the TARGET_* flags left out */
    if (strcmp(name, "platform") == 0)
        return s->p->platform;
    if (strcmp(name, "image") == 0)
        return s->p->image;
    return NULL;
}

/* PATH with the toolchain's bin/ first (also for the host's gcc: pkg_build
 * adds it for cross kinds only, and GRUB is one on ia64 alone) */
static void setup_env(const struct stage_ctx *cx, struct strlist *env, void *arg)
{
    (void)cx;
    const struct grub_state *s = arg;
    strlist_push(env, s->path_env);
}

/* GRUB's version from configure.ac, before anything is built. */
static int version_step(const struct stage_ctx *cx, void *arg)
{
    struct grub_state *s = arg;
    if (!(s->version = grub_version(s->src)))
        return cx_fail(cx, "%s.source: %s has no configure.ac with AC_INIT([GRUB],[VERSION]): "
                       "not a GRUB source", s->rkey, s->origin);
    cx_log(cx, "GRUB %s%s%s for %s (%s), from %s", s->version, s->dver ? ", Debian " : "",
           s->dver ? s->dver : "", s->p->platform, s->target, s->origin);
    return 0;
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

/* The installed modules checked, the image made by the grub-mkimage just
 * built (from the install in WORK/dest) and checked to be a PE file for the
 * platform's machine. */
static int mkimage_step(const struct stage_ctx *cx, void *arg)
{
    struct grub_state *s = arg;
    const struct grub_platform *p = s->p;
    char *moddir = xasprintf("%s/dest/usr/lib/grub/%s", cx->work, p->platform);
    char *mkimage = path_join(cx->work, "dest/usr/bin/grub-mkimage");
    char *img = path_join(cx->work, p->image);
    struct strlist argv = {0};
    int rc = 1;
    modules_of(cx->st, &s->mods);
    if (check_modules(cx, s->rkey, moddir, p->platform, &s->mods))
        goto out;
    const char *head[] = {mkimage, "-d", moddir, "-O", p->platform, "-p", cx_str(cx, "prefix"),
                          "-o", img};
    for (size_t i = 0; i < ARRAY_LEN(head); i++)
        strlist_push(&argv, head[i]);
    for (size_t i = 0; i < s->mods.n; i++)
        strlist_push(&argv, s->mods.v[i]);
    const char *env[] = {s->path_env, s->sde, "PYTHON=python3", "LC_ALL=C", NULL};
    if (tc_run_step(cx, cx->work, env, (const char *const *)argv.v, "mkimage") != 0) {
        cx_fail(cx, "%s: grub-mkimage failed making %s (see the log; check %s.modules)",
                s->rkey, p->image, s->rkey);
        goto out;
    }
    char err[BINFMT_ERRLEN];
    int m = binfmt_pe_machine(img, err);
    if (m != p->pe_machine) {
        if (m < 0)
            cx_fail(cx, "%s: grub-mkimage made no PE image: %s", s->rkey, err);
        else
            cx_fail(cx, "%s: %s is a PE image for %s (machine 0x%x), not %s (0x%x): the "
                    "toolchain stage's compiler built GRUB for the wrong machine", s->rkey,
                    p->image, binfmt_pe_machine_name(m), (unsigned)m,
                    binfmt_pe_machine_name(p->pe_machine), (unsigned)p->pe_machine);
        goto out;
    }
    s->machine = m;
    rc = 0;
out:
    strlist_free(&argv);
    free(moddir);
    free(mkimage);
    free(img);
    return rc;
}

static const struct pkg_source sources[] = {
    {.name = "grub", .get = get_source, .patches_key = "patches"},
    {0},
};

static const char *const autogen[] = {"${src:grub}/autogen.sh", NULL};
/* --program-prefix=: a cross build would name its tools TARGET-grub-*.
 * Not needed in a loader image: NLS, efiemu (i386 only), grub-mount (fuse),
 * themes and fonts (no gfxterm on a serial console), device-mapper, ZFS,
 * liblzma. gcc 12 warns on some 2.06 code. CFLAGS: the scratch directory
 * mapped away: __FILE__ (asserts in mpi, regexp, the relocator) would carry
 * its path into the modules; GRUB adds CFLAGS (default empty) to its own
 * -Os target flags and host flags alike. The TARGET_* tools: the toolchain
 * stage's (ia64-efi), left out for the host's gcc. */
static const char *const configure[] = {
    "${src:grub}/configure", "--target=${kind:target}", "--prefix=/usr", "--libdir=/usr/lib",
    "--with-platform=efi", "--program-prefix=", "--disable-werror", "--disable-nls",
    "--disable-efiemu", "--disable-grub-mount", "--disable-grub-themes",
    "--disable-grub-mkfont", "--disable-device-mapper", "--disable-libzfs",
    "--disable-liblzma", "CFLAGS=-ffile-prefix-map=${work}=.", "?TARGET_CC=${kind:tc}gcc",
    "?TARGET_OBJCOPY=${kind:tc}objcopy", "?TARGET_STRIP=${kind:tc}strip",
    "?TARGET_NM=${kind:tc}nm", "?TARGET_RANLIB=${kind:tc}ranlib", "${list:configure}", NULL};
/* MAKEINFO=true: no texinfo needed (the manual is not installed) */
static const char *const make[] = {"make", "MAKEINFO=true", NULL};
static const char *const make_install[] = {"make", "install", "DESTDIR=${work}/dest",
                                           "MAKEINFO=true", NULL};

static const struct pkg_step steps[] = {
    {.label = "version", .fn = version_step},
    {.label = "autogen", .cwd = "${src:grub}", .argv = autogen,
     .hint = "GRUB's autogen.sh needs python3, autoconf, automake and autopoint: "
             "tools/install-deps"},
    {.label = "configure", .cwd = "${work}/obj", .argv = configure,
     .hint = "GRUB's configure: see obj/config.log in the stage's scratch directory, and check "
             "the recipe's configure flags"},
    {.label = "make", .cwd = "${work}/obj", .argv = make},
    {.label = "install", .cwd = "${work}/obj", .argv = make_install},
    {.label = "mkimage", .fn = mkimage_step},
    {0},
};

static const struct pkg_file install[] = {
    {.from = "${work}/dest/usr/bin/grub-mkimage", .to = "bin/grub-mkimage"},
    {.from = "${work}/dest/usr/lib/grub/${kind:platform}", .to = "lib/grub/${kind:platform}",
     .tree = true},
    {.from = "${work}/${kind:image}", .to = "${kind:image}"},
    {0},
};

static const char *const env[] = {"PYTHON=python3", NULL};

static const struct pkg_desc desc = {
    .what = "GRUB", .sources = sources, .steps = steps, .install = install, .env = env,
    .setup_env = setup_env, .var = var,
};

static int write_manifest(const struct stage_ctx *cx, const struct grub_state *s,
                          size_t npatches)
{
    json_object *m = json_object_new_object();
    json_add_str(m, "grub", s->version);
    json_object_object_add(m, "debian_version", s->dver ? json_str(s->dver) : NULL);
    json_add_str(m, "platform", s->p->platform);
    json_add_str(m, "target", s->target);
    json_add_str(m, "image", s->p->image);
    json_add_str(m, "prefix", cx_str(cx, "prefix"));
    json_object_object_add(m, "modules", json_strlist(&s->mods));
    json_add_str(m, "source", s->origin);
    if (s->sha[0])
        json_add_str(m, "sha256", s->sha);
    json_object_object_add(m, "debian_patches", json_object_new_int64((int64_t)s->series));
    json_object_object_add(m, "patches", json_object_new_int64((int64_t)npatches));
    char pe[16];
    snprintf(pe, sizeof pe, "0x%x", (unsigned)s->machine);
    json_add_str(m, "pe_machine", pe);
    return cx_write_manifest(cx, m);
}

static int run(struct stage_ctx *cx)
{
    const struct grub_platform *p = platform_of(cx->st);
    struct grub_state s = {.p = p, .rkey = rkey_of(cx),
                           .tc = p->cross ? cx_dep(cx, "toolchain") : NULL};
    struct strlist patches = {0};
    int rc = 1;
    if (s.tc ? !(s.target = tc_read_target(cx, s.tc))
             : !(s.target = xstrdup(tc_default_target(cx->arch))))
        goto out;
    if (s.tc)
        s.tc_bin = xasprintf("%s/bin/%s-", s.tc, s.target);
    s.path_env = run_path_env("%s%s", s.tc ? s.tc : "", s.tc ? "/bin" : "");
    s.sde = xasprintf("SOURCE_DATE_EPOCH=%lld", cx->source_date_epoch);
    if (pkg_build(cx, &desc, &s))
        goto out;
    cx_list(cx, "patches", &patches);
    if (write_manifest(cx, &s, patches.n))
        goto out;
    cx_log(cx, "%s: GRUB %s %s image, PE machine 0x%x (%s), %zu modules", p->image, s.version,
           p->platform, (unsigned)s.machine, binfmt_pe_machine_name(s.machine), s.mods.n);
    rc = 0;
out:
    strlist_free(&s.mods);
    strlist_free(&patches);
    free(s.rkey);
    free(s.target);
    free(s.path_env);
    free(s.sde);
    free(s.tc_bin);
    free(s.origin);
    free(s.dver);
    free(s.version);
    return rc;
}

/* What the stage is, for the report, the SBOM and a minimal root (stage.h):
 * the loader of a bootloader of kind "grub". */
static const struct stage_component made[] = {
    {.name = "GRUB", .version = "grub", .source = "source", .sha256 = "sha256",
     .extra = "debian_version", .licence = "GPL-3.0-or-later", .role = COMPONENT_LOADER,
     .loader = "grub", .root_name = "grub", .root_version = {"debian_version", "grub"}},
    {0},
};

static const char *const patch_fields[] = {"patches", NULL};

const struct stage_kind stage_grub_build = {
    .name = "grub",
    .section = "packages",
    .version = 3, /* 3: build paths mapped out of the modules (not bumped for dropping
                     the step times from the manifest: docs/engine.md) */
    .summary = "GRUB built from Debian's grub2 source package for the recipe's EFI platform "
               "(ia64-efi with the toolchain stage's gcc) and its EFI image",
    .fields = fields,
    .patch_fields = patch_fields,
    .tools = tools,
    .outputs = outputs,
    .components = made,
    .declare = declare,
    .run = run,
    .cost_hint = 450,
};
