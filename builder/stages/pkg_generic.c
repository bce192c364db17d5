/* packages, kind "package": the generic package build (pkg_build.h) with
 * its table read from the recipe instead of C, so that a recipe (and the
 * tests) can build a small program from one tarball pinned by sha256 and
 * ship it as Debian binary packages (pkg_deb.h). The kinds with their own
 * file (elilo, GRUB, ...) stay the way to add a package to Trillian; this
 * one is for a package a recipe brings itself.
 *
 *   packages = ( { kind = "package"; name = "trtest";
 *                  source_url = "file:///src/trtest-1.0.tar.gz"; source_sha256 = "...";
 *                  version = "1.0-1"; maintainer = "A B <a@example.org>";
 *                  steps = ( { label = "make"; argv = ["make"]; },
 *                            { label = "install";
 *                              argv = ["make", "install", "DESTDIR=${kind:destdir}"]; } );
 *                  debs = ( { name = "trtest"; files = ["usr/bin"]; summary = "...";
 *                             copyright = "${src:source}/COPYING"; } ); } );
 *
 * Or the source as a Debian source package: source_dsc (the .dsc's URL)
 * and source_dsc_sha256 instead of source_url and source_sha256; the files
 * the .dsc lists come from beside it, each checked against its
 * Checksums-Sha256, and ${src:source} is dpkg-source -x's tree (Debian's
 * patches applied, debian/ in it: "${src:source}/debian/copyright").
 *
 * Steps run in ${src:source} unless they give cwd; ${kind:destdir} is the
 * DESTDIR the binary packages are split from (WORK/destdir). Scripts and
 * copyright are templates; a plain relative path is the recipe's file (in
 * the cache key by content). Outputs: debs/ (pkg_deb.h), stage-manifest.json.
 *
 * Or, with destdir_from = "STAGE/DIR", no source and no compile: DESTDIR
 * starts as a copy of another stage's output (the glibc stage's sysroot,
 * the gcc stage's runtime), steps (optional) run in it, and it is split
 * the same way: packages of what a stage already built, as Debian's
 * packaging splits its build's install tree. `install` rows then add the
 * recipe's files (configuration the build does not install), before the
 * split; `not_installed`, `strip` and `shlibs_version` are pkg_debs's. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pkg_build.h"
#include "pkg_deb.h"
#include "pkg_presets.h"
#include "stage.h"

static const struct field fields[] = {
    PKG_SOURCE_FIELDS("source", "package's source", NULL, NULL, NULL),
    PKG_DSC_FIELDS("source", "package's source"),
    {.key = "version", .type = F_STRING, .required = true,
     .help = "the Debian version of its binary packages (1.0-1)"},
    {.key = "maintainer", .type = F_STRING, .required = true,
     .help = "their Maintainer: \"Name <address>\""},
    {.key = "preset", .type = F_ENUM, .choices = pkg_preset_names,
     .help = "the build system's steps (pkg_presets.h): autotools (configure --prefix=/usr, "
             "make, make install; --host=${target} with cross), cmake, meson or make; "
             "`steps`, if given too, run after them"},
    {.key = "configure", .type = F_STRING_LIST,
     .help = "arguments the preset adds to its configure step (${list:configure})"},
    {.key = "make_args", .type = F_STRING_LIST,
     .help = "arguments the preset adds to its make and make install (${list:make_args})"},
    {.key = "steps", .type = F_LIST,
     .help = "the build, without a preset or after its steps: ({ label; argv = [...]; cwd?; "
             "serial? }, ...), argv templates run in ${src:source} (or cwd) without a shell; "
             "install into ${kind:destdir}"},
    {.key = "cross", .type = F_BOOL, .def = "false",
     .help = "built with the toolchain stage's stage-1 cross compiler (${cross}; no C library: "
             "boot loaders, freestanding code)"},
    {.key = "target", .type = F_BOOL, .def = "false",
     .help = "target mode: built for the recipe's arch with the compiler stage's gcc against "
             "the libc stage's sysroot (CC, CXX with --sysroot, ${sysroot}; pkg_build.h)"},
    {.key = "compiler", .type = F_STRING,
     .help = "target mode: the compiler stage (default: the packages stage \"gcc\", else "
             "\"toolchain\")"},
    {.key = "libc", .type = F_STRING,
     .help = "target mode: the C library stage whose sysroot/ it builds against (default: "
             "\"glibc\", else the only C library stage)"},
    {.key = "build_depends", .type = F_STRING_LIST,
     .help = "target mode: -dev packages of other package stages it builds against "
             "(\"STAGE/PACKAGE\" or \"STAGE\"), unpacked into a copy of the sysroot"},
    {.key = "debs", .type = F_LIST, .required = true,
     .help = "its binary packages: ({ name; files = [globs]; summary; description?; section?; "
             "priority?; essential?; depends?; pre_depends?; recommends?; suggests?; provides?; "
             "conflicts?; replaces?; breaks?; multi_arch?; architecture?; preinst?; postinst?; "
             "prerm?; postrm?; copyright?; "
             "conffiles?; executables?; triggers?; shlibs_field?; dirs?; version? }, ...)"},
    {.key = "shlibs", .type = F_PATH_LIST,
     .help = "shlibs files resolving the DT_NEEDED no package of this build provides "
             "(\"libc 6 libc6 (>= 2.36)\")"},
    {.key = "shlibs_from", .type = F_STRING_LIST,
     .help = "package stages whose debs/shlibs resolve DT_NEEDED too"},
    {.key = "destdir_from", .type = F_STRING,
     .help = "\"STAGE/DIR\" (or \"STAGE\"): DESTDIR starts as a copy of that directory of "
             "another stage's output, to package what it built (no source, no compile)"},
    {.key = "install", .type = F_LIST,
     .help = "files added to DESTDIR after the steps: ({ from; to; }, ...), from a plain "
             "relative path (the recipe's file) or a template, to relative to DESTDIR"},
    {.key = "not_installed", .type = F_STRING_LIST,
     .help = "globs of DESTDIR left out of every package, on purpose (Debian's "
             "debian/not-installed), before the packages' globs; each must take a file"},
    {.key = "strip", .type = F_BOOL, .def = "false",
     .help = "strip the packages' ELF files as dh_strip does (${cross}strip, or the host's)"},
    {.key = "shlibs_version", .type = F_STRING,
     .help = "the version in the shlibs lines of its libraries (dh_makeshlibs -V; default: "
             "version)"},
    {0},
};

/* Added after the kind shipped: in the key only when set (stage.h). */
static const char *const late_fields[] = {"destdir_from", "install", "not_installed", "strip",
                                          "shlibs_version", "build_depends", "source_dsc",
                                          "source_dsc_sha256", NULL};

static const char *const tools[] = {"dpkg-deb", NULL};
static const char *const outputs[] = {"stage-manifest.json", NULL};

/* The table, built from the settings (the nodes' strings are the recipe's). */
struct gen {
    struct pkg_source src[2];
    struct pkg_step *steps;
    struct pkg_deb *debs;
    struct pkg_file install[1];
    struct pkg_debs pd;
    struct pkg_desc desc;
    struct strlist owned;   /* strings made here */
    void **arrays;          /* arrays made here */
    size_t narrays;
    char *destdir;          /* run time: ${kind:destdir} */
    char *from_stage;       /* destdir_from's STAGE, or NULL */
    const char *from_dir;   /* its DIR ("" for the whole output) */
    const struct st_node *install_rows; /* `install`, or NULL */
    const char **inst_from; /* each row's from: a template or an absolute path */
};

static void *keep_array(struct gen *g, size_t n, size_t size)
{
    g->arrays = xrealloc(g->arrays, (g->narrays + 1) * sizeof *g->arrays);
    return g->arrays[g->narrays++] = xcalloc(n + 1, size);
}

/* A string-list setting as the tables want it: a NULL-terminated array
 * whose strings g owns, or NULL when the list is empty or unset. */
static const char *const *setting_list(struct gen *g, const struct stage *st, const char *key)
{
    struct strlist l = {0};
    st_list(st, key, &l);
    const char **a = l.n ? keep_array(g, l.n, sizeof *a) : NULL;
    for (size_t i = 0; i < l.n; i++) {
        strlist_push(&g->owned, l.v[i]);
        a[i] = g->owned.v[g->owned.n - 1];
    }
    strlist_free(&l);
    return a;
}

static void gen_free(struct gen *g)
{
    for (size_t i = 0; i < g->narrays; i++)
        free(g->arrays[i]);
    free(g->arrays);
    strlist_free(&g->owned);
    free(g->destdir);
    free(g->from_stage);
}

/* A list of strings as a NULL-terminated array; -1 if NODE is not one. */
static int str_array(struct gen *g, const struct st_node *n, const char *const **out)
{
    *out = NULL;
    if (!n)
        return 0;
    if (node_type(n) != NODE_LIST)
        return -1;
    const char **a = keep_array(g, node_len(n), sizeof *a);
    for (size_t i = 0; i < node_len(n); i++)
        if (!(a[i] = node_str(node_elem(n, i))))
            return -1;
    *out = a;
    return 0;
}

/* A script or copyright setting: a template as it is, a plain path the
 * recipe's file (absolute, and an input at plan time). */
static const char *recipe_file(struct stage *st, struct gen *g, const char *v, bool plan)
{
    if (!v || strstr(v, "${"))
        return v;
    char *p = path_absolute(st_recipe_dir(st), v);
    if (plan) {
        char *label = xasprintf("file:%s", v);
        st_input_file(st, label, p);
        free(label);
    }
    strlist_push_owned(&g->owned, p);
    return p;
}

static const char *const deb_keys[] = {
    "name", "files", "section", "priority", "essential", "summary", "description", "depends",
    "pre_depends", "provides", "conflicts", "replaces", "breaks", "recommends", "suggests",
    "multi_arch", "architecture", "preinst", "postinst", "prerm", "postrm", "copyright",
    "conffiles", "executables", "triggers", "shlibs_field", "dirs", "version", NULL};
static const char *const install_keys[] = {"from", "to", NULL};
static const char *const step_keys[] = {"label", "argv", "cwd", "serial", NULL};

static bool known(const char *const *keys, const char *k)
{
    for (size_t i = 0; keys[i]; i++)
        if (!strcmp(keys[i], k))
            return true;
    return false;
}

/* The first step with destdir_from: DESTDIR becomes a copy of the other
 * stage's directory (a copy, not links: a step may change its files, and
 * the cache's must stay as they are). */
static int copy_from(const struct stage_ctx *cx, void *arg)
{
    struct gen *g = arg;
    char *src = path_join(cx_dep(cx, g->from_stage), g->from_dir);
    int rc = 0;
    if (!is_dir(src)) {
        char *where = cx_where(cx, "destdir_from");
        rc = cx_fail(cx, "%s: stage %s's output has no directory %s (%s): name one it makes",
                     where, g->from_stage, *g->from_dir ? g->from_dir : ".", src);
        free(where);
    } else if (copy_tree(src, g->destdir, false) < 0) {
        rc = cx_fail(cx, "cannot copy %s into %s: %s", src, g->destdir, strerror(errno));
    } else {
        tree_owner_writable(g->destdir, true); /* the cache's files are read-only */
        cx_log(cx, "DESTDIR: a copy of %s", src);
    }
    free(src);
    return rc;
}

/* The last step with `install` rows: the recipe's files into DESTDIR, none
 * over a file the build installed. */
static int install_rows(const struct pkg_vars *v)
{
    struct gen *g = v->arg;
    const struct st_node *rows = g->install_rows;
    int rc = 0;
    for (size_t i = 0; !rc && i < node_len(rows); i++) {
        const struct st_node *e = node_elem(rows, i);
        const char *fr = g->inst_from[i], *rel = node_member_str(e, "to");
        char *from = pkg_expand(v, fr), *to = path_join(g->destdir, rel);
        char *dir = path_dirname(to), *where = st_node_where(v->cx->st, e);
        struct stat sb;
        if (!from)
            rc = 1;
        else if (lstat(to, &sb) == 0)
            rc = cx_fail(v->cx, "%s: %s.%s.install: /%s is already in DESTDIR (the build "
                         "installs it): leave the row out, or give another path", where,
                         st_section(v->cx->st), v->cx->name, rel);
        else if (mkdir_p(dir, 0755) < 0 || copy_file(from, to) < 0)
            rc = cx_fail(v->cx, "%s: %s.%s.install: cannot copy %s to /%s: %s", where,
                         st_section(v->cx->st), v->cx->name, from, rel, strerror(errno));
        free(where);
        free(dir);
        free(to);
        free(from);
    }
    return rc;
}

/* A relative path inside a tree: no leading '/', no "..". */
static bool inside(const char *p)
{
    if (!p || !*p || p[0] == '/')
        return false;
    for (const char *q = p; (q = strstr(q, "..")); q += 2)
        if ((q == p || q[-1] == '/') && (!q[2] || q[2] == '/'))
            return false;
    return true;
}

/* Reads the settings into G; at plan time (PLAN) errors are recipe errors
 * (st_error), and the recipe's files inputs. -1 after errors. */
static int gen_read(struct stage *st, struct gen *g, bool plan)
{
    int bad = 0;
    const char *from = st_str(st, "destdir_from");
    if (from) { /* another stage's tree: no source of its own */
        const char *sl = strchr(from, '/');
        g->from_stage = sl ? xstrndup(from, (size_t)(sl - from)) : xstrdup(from);
        g->from_dir = sl ? sl + 1 : "";
        while (*g->from_dir == '/')
            g->from_dir++;
    } else {
        g->src[0] = (struct pkg_source){.name = "source", .key = "source", .dsc = true};
    }
    if (plan && from) {
        static const char *const own[] = {"source_url", "source_file", "source_sha256",
                                          "source_dsc", "source_dsc_sha256", "source_patches",
                                          "preset", NULL};
        if (!*g->from_stage || !strcmp(g->from_stage, st_name(st)) ||
            !st_has_stage(st, g->from_stage))
            bad |= st_error(st, "destdir_from", "'%s': no other stage named '%s' in the "
                            "recipe (give \"STAGE/DIR\": a stage and a directory of its "
                            "output, e.g. \"glibc/sysroot\")", from, g->from_stage);
        else if (*g->from_dir && !inside(g->from_dir))
            bad |= st_error(st, "destdir_from", "'%s': the directory must be inside the "
                            "stage's output (relative, without '..')", from);
        else
            st_need(st, g->from_stage);
        for (size_t i = 0; own[i]; i++)
            if (st_isset(st, own[i]))
                bad |= st_error(st, own[i], "destdir_from packages another stage's output: "
                                "there is no source to fetch or configure (drop %s)", own[i]);
    }
    const struct st_node *steps = st_node(st, "steps"), *debs = st_node(st, "debs");
    const struct st_node *inst = st_node(st, "install");
    size_t ns = node_len(steps), nd = node_len(debs), np = 0, ni = node_len(inst);
    bool cross = st_bool(st, "cross", false), target = st_bool(st, "target", false);
    if (plan && cross && target)
        bad |= st_error(st, "target", "cross (the stage-1 compiler, no C library) and target "
                        "(the compiler stage against the C library) exclude each other");
    if (plan && !target && (st_isset(st, "compiler") || st_isset(st, "libc")))
        bad |= st_error(st, st_isset(st, "compiler") ? "compiler" : "libc",
                        "only target mode uses it: set target = true");
    const struct pkg_step *preset = pkg_preset_steps(
        st_str(st, "preset"), target ? PKG_TARGET : cross ? PKG_CROSS : PKG_NATIVE);
    while (preset && preset[np].label)
        np++;
    /* DESTDIR's copy, the preset's steps, then the recipe's, then `install` */
    struct pkg_step *all = keep_array(g, np + ns + 2, sizeof *all);
    size_t first = 0;
    if (from)
        all[first++] = (struct pkg_step){.label = "copy destdir_from", .fn = copy_from};
    for (size_t i = 0; i < np; i++)
        all[first + i] = preset[i];
    np += first; /* the recipe's steps come after these */
    g->steps = all;
    g->debs = keep_array(g, nd, sizeof *g->debs);
    if (plan && steps && node_type(steps) != NODE_LIST)
        bad |= st_error(st, "steps", "a list of steps: ({ label = \"make\"; argv = "
                        "[\"make\"]; }, ...)");
    else if (plan && !np && !ns && !from)
        bad |= st_error(st, "steps", "give a preset (preset = \"autotools\", \"cmake\", "
                        "\"meson\" or \"make\") or the build's steps: ({ label = \"make\"; "
                        "argv = [\"make\"]; }, ...)");
    if (plan && !preset && (st_isset(st, "configure") || st_isset(st, "make_args")))
        bad |= st_error(st, st_isset(st, "configure") ? "configure" : "make_args",
                        "only a preset uses it: set preset (or put the arguments in steps)");
    if (plan && preset) /* the build system's programs, in the cache key */
        for (size_t i = first; i < np; i++)
            if (all[i].argv && !strchr(all[i].argv[0], '$'))
                st_tool(st, all[i].argv[0]);
    if (plan && (node_type(debs) != NODE_LIST || !nd))
        bad |= st_error(st, "debs", "give its binary packages: ({ name = \"...\"; files = "
                        "[\"usr/bin\"]; summary = \"...\"; }, ...)");
    for (size_t i = 0; i < ns; i++) {
        const struct st_node *e = node_elem(steps, i);
        struct pkg_step *s = &all[np + i];
        for (size_t k = 0; plan && k < node_len(e); k++)
            if (!known(step_keys, node_name(node_elem(e, k))))
                bad |= st_error(st, "steps", "step %zu: unknown key '%s' (known: label, argv, "
                                "cwd, serial)", i + 1, node_name(node_elem(e, k)));
        s->label = node_member_str(e, "label");
        s->cwd = node_member_str(e, "cwd") ? node_member_str(e, "cwd")
                 : from                     ? "${kind:destdir}"
                                            : "${src:source}";
        s->serial = node_bool(node_member(e, "serial"), false);
        s->hint = "the recipe's step: see its output above";
        if (str_array(g, node_member(e, "argv"), &s->argv) < 0 || !s->argv || !s->argv[0] ||
            !s->label) {
            if (plan)
                bad |= st_error(st, "steps", "step %zu: give label (a string) and argv (a "
                                "list of strings, the program first)", i + 1);
            s->argv = NULL;
            s->label = s->label ? s->label : "step";
            s->fn = NULL;
        }
    }
    for (size_t i = 0; i < nd; i++) {
        const struct st_node *e = node_elem(debs, i);
        struct pkg_deb *p = &g->debs[i];
        for (size_t k = 0; plan && k < node_len(e); k++)
            if (!known(deb_keys, node_name(node_elem(e, k))))
                bad |= st_error(st, "debs", "binary package %zu: unknown key '%s'", i + 1,
                                node_name(node_elem(e, k)));
        p->name = node_member_str(e, "name");
        if (!p->name) {
            if (plan)
                bad |= st_error(st, "debs", "binary package %zu has no name", i + 1);
            p->name = "?";
        }
        if (str_array(g, node_member(e, "files"), &p->files) < 0 ||
            str_array(g, node_member(e, "conffiles"), &p->conffiles) < 0)
            bad |= plan ? st_error(st, "debs", "%s: files and conffiles are lists of strings",
                                   p->name) : -1;
        p->section = node_member_str(e, "section");
        p->priority = node_member_str(e, "priority");
        p->essential = node_bool(node_member(e, "essential"), false);
        p->summary = node_member_str(e, "summary");
        p->description = node_member_str(e, "description");
        p->depends = node_member_str(e, "depends");
        p->pre_depends = node_member_str(e, "pre_depends");
        p->provides = node_member_str(e, "provides");
        p->conflicts = node_member_str(e, "conflicts");
        p->replaces = node_member_str(e, "replaces");
        p->breaks = node_member_str(e, "breaks");
        p->recommends = node_member_str(e, "recommends");
        p->suggests = node_member_str(e, "suggests");
        p->multi_arch = node_member_str(e, "multi_arch");
        p->arch = node_member_str(e, "architecture");
        p->version = node_member_str(e, "version");
        static const char *const sn[4] = {"preinst", "postinst", "prerm", "postrm"};
        for (int s = 0; s < 4; s++)
            p->scripts[s] = recipe_file(st, g, node_member_str(e, sn[s]), plan);
        p->copyright = recipe_file(st, g, node_member_str(e, "copyright"), plan);
        if (str_array(g, node_member(e, "executables"), &p->executables) < 0)
            bad |= plan ? st_error(st, "debs", "%s: executables is a list of globs", p->name)
                        : -1;
        const char *sf = node_member_str(e, "shlibs_field");
        p->shlibs_pre = sf && !strcmp(sf, "pre_depends");
        if (plan && sf && !p->shlibs_pre && strcmp(sf, "depends") != 0)
            bad |= st_error(st, "debs", "%s: shlibs_field '%s': the field the libraries' "
                            "dependencies go into is \"depends\" (the default) or "
                            "\"pre_depends\" (as Debian's Essential packages)", p->name, sf);
        if (str_array(g, node_member(e, "triggers"), &p->triggers) < 0)
            bad |= plan ? st_error(st, "debs", "%s: triggers is a list of lines "
                                   "(\"interest-noawait ldconfig\")", p->name) : -1;
        if (str_array(g, node_member(e, "dirs"), &p->dirs) < 0)
            bad |= plan ? st_error(st, "debs", "%s: dirs is a list of \"PATH\" or \"PATH "
                                   "MODE\" (\"tmp 1777\")", p->name) : -1;
        char *loc = st_node_where(st, e);
        strlist_push_owned(&g->owned, xasprintf("%s: %s.%s.debs", loc, st_section(st),
                                                st_name(st)));
        free(loc);
        p->where = g->owned.v[g->owned.n - 1];
    }
    /* `install`: the recipe's files into DESTDIR, after the steps */
    if (plan && inst && node_type(inst) != NODE_LIST)
        bad |= st_error(st, "install", "a list of files: ({ from = \"FILE\"; to = "
                        "\"etc/FILE\"; }, ...)");
    g->inst_from = keep_array(g, ni, sizeof *g->inst_from);
    for (size_t i = 0; i < ni; i++) {
        const struct st_node *e = node_elem(inst, i);
        for (size_t k = 0; plan && k < node_len(e); k++)
            if (!known(install_keys, node_name(node_elem(e, k))))
                bad |= st_error(st, "install", "row %zu: unknown key '%s' (known: from, to)",
                                i + 1, node_name(node_elem(e, k)));
        const char *fr = node_member_str(e, "from"), *to = node_member_str(e, "to");
        if (plan && (!fr || !inside(to)))
            bad |= st_error(st, "install", "row %zu: give from (a file) and to (a path "
                            "inside DESTDIR: relative, without '..')", i + 1);
        g->inst_from[i] = fr ? recipe_file(st, g, fr, plan) : "";
    }
    if (ni) {
        g->install_rows = inst;
        all[np + ns] = (struct pkg_step){.label = "install", .vfn = install_rows};
    }
    struct strlist l = {0};
    st_list(st, "shlibs", &l);
    const char **sf = keep_array(g, l.n, sizeof *sf);
    for (size_t i = 0; i < l.n; i++) {
        char *p = path_absolute(st_recipe_dir(st), l.v[i]);
        strlist_push_owned(&g->owned, p);
        sf[i] = p;
    }
    strlist_free(&l);
    char *niw = st_node_where(st, st_node(st, "not_installed"));
    char *ni_where = xasprintf("%s: %s.%s.not_installed", niw, st_section(st), st_name(st));
    strlist_push_owned(&g->owned, ni_where);
    free(niw);
    g->pd = (struct pkg_debs){.destdir = "${kind:destdir}", .version = st_str(st, "version"),
                              .maintainer = st_str(st, "maintainer"), .debs = g->debs,
                              .shlibs_files = sf,
                              .shlibs_stages = setting_list(g, st, "shlibs_from"),
                              .not_installed = setting_list(g, st, "not_installed"),
                              .not_installed_where = ni_where,
                              .shlibs_version = st_str(st, "shlibs_version"),
                              .strip = st_bool(st, "strip", false)};
    g->desc = (struct pkg_desc){.what = st_name(st), .sources = g->src, .steps = g->steps,
                                .install = g->install, .cross = cross && !target,
                                .target = target, .map_paths = !from, /* a compile */
                                .debs = &g->pd,
                                .build_depends = setting_list(g, st, "build_depends")};
    return bad ? -1 : 0;
}

static const char *var(void *arg, const char *name)
{
    const struct gen *g = arg;
    return !strcmp(name, "destdir") ? g->destdir : NULL;
}

static int declare(struct stage *st)
{
    struct gen g = {0};
    int bad = gen_read(st, &g, true);
    g.desc.var = var;
    if (pkg_declare(st, &g.desc) < 0)
        bad = -1;
    gen_free(&g);
    return bad;
}

static int run(struct stage_ctx *cx)
{
    struct gen g = {0};
    gen_read((struct stage *)cx->st, &g, false);
    g.desc.var = var;
    g.destdir = path_join(cx->work, "destdir");
    int rc = mkdir_p(g.destdir, 0755) < 0 ? cx_fail(cx, "cannot create %s", g.destdir) : 0;
    if (!rc)
        rc = pkg_build(cx, &g.desc, &g);
    json_object *extra = NULL;
    if (g.from_stage) {
        extra = json_object_new_object();
        json_add_str(extra, "destdir_from", cx_str(cx, "destdir_from"));
    }
    if (!rc)
        rc = pkg_manifest(cx, &g.desc, extra);
    else if (extra)
        json_object_put(extra);
    gen_free(&g);
    return rc;
}

static const char *const patch_fields[] = {"source_patches", NULL};

const struct stage_kind stage_pkg_generic = {
    .name = "package",
    .section = "packages",
    .version = 1,
    .summary = "a program the recipe describes (one tarball, or a Debian source package's "
               ".dsc, pinned by sha256; argv steps installing into ${kind:destdir}) made into "
               "Debian binary packages (debs/)",
    .fields = fields,
    .patch_fields = patch_fields,
    .tools = tools,
    .outputs = outputs,
    .late_fields = late_fields,
    .declare = declare,
    .run = run,
};
