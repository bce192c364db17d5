/* Unit tests for builder/formats/archive.c: reproducible tree archives, metadata
 * tables, extraction round trips and Debian packages. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "formats/archive.h"
#include "base/util.h"

extern char **environ;

static char *scratch; /* fresh per test */

static int setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/test_archive.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    scratch = xstrdup(tmpl);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rm_rf(scratch);
    free(scratch);
    return 0;
}

static char *sp(const char *rel) { return path_join(scratch, rel); }

static void put(const char *path, const char *text, mode_t mode, time_t mtime)
{
    assert_int_equal(write_file_atomic(path, text, strlen(text), mode), 0);
    assert_int_equal(chmod(path, mode), 0);
    struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static bool have_xattr;

/* A small tree below ROOT; MT varies the mtimes (which the archive must not
 * show when a fixed mtime is asked for). */
static void make_tree(const char *root, time_t mt)
{
    char *p;
    assert_int_equal(mkdir_p(root, 0755), 0);
    const char *dirs[] = {"bin", "dev", "etc", "usr/lib", "a-b"};
    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        p = path_join(root, dirs[i]);
        assert_int_equal(mkdir_p(p, 0755), 0);
        free(p);
    }
    p = path_join(root, "bin/busybox");
    put(p, "#!/bin/sh\necho busybox\n", 04755, mt);
    char *l = path_join(root, "bin/ls");
    assert_int_equal(link(p, l), 0);
    free(l);
    free(p);
    p = path_join(root, "etc/shadow");
    put(p, "root:*:19000:0:99999:7:::\n", 0640, mt + 1);
    have_xattr = setxattr(p, "user.trillian", "yes", 3, 0) == 0;
    free(p);
    p = path_join(root, "etc/os-release");
    put(p, "ID=debian\n", 0644, mt + 2);
    free(p);
    p = path_join(root, "a-b/x");
    put(p, "x\n", 0600, mt);
    free(p);
    p = path_join(root, "bin/sh");
    assert_int_equal(symlink("busybox", p), 0);
    free(p);
    p = path_join(root, "usr/lib/fifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    free(p);
}

static void meta_table(struct arc_table *t)
{
    arc_table_addf(t, "dev/console", ARC_CHR, 0600, 0, 5, 5, 1, NULL);
    arc_table_addf(t, "dev/null", ARC_CHR, 0666, 0, 0, 1, 3, NULL);
    arc_table_addf(t, "etc/shadow", ARC_KEEP, -1, 0, 42, 0, 0, NULL);
    arc_table_addf(t, "dev/pts", ARC_DIR, 0755, 0, 0, 0, 0, NULL);
    arc_table_addf(t, "init", ARC_SYMLINK, -1, 0, 0, 0, 0, "bin/busybox");
    /* a later row replaces an earlier one */
    arc_table_addf(t, "dev/null", ARC_CHR, 0666, 0, 0, 1, 3, NULL);
}

struct listing {
    struct arc_table t; /* entries in archive order */
};

static int collect(const struct arc_entry *e, void *ud)
{
    struct listing *l = ud;
    arc_table_add(&l->t, e);
    l->t.v[l->t.n - 1].size = e->size;
    l->t.v[l->t.n - 1].mtime = e->mtime;
    return 0;
}

static void list(const char *archive, struct listing *l)
{
    char err[ARC_ERRLEN];
    memset(l, 0, sizeof *l);
    int rc = arc_list(archive, collect, l, err);
    if (rc)
        fail_msg("arc_list: %s", err);
}

static const struct arc_entry *get(const struct listing *l, const char *path)
{
    const struct arc_entry *e = arc_table_find(&l->t, path);
    if (!e)
        fail_msg("%s missing from the archive", path);
    return e;
}

static char *sha_of(const char *path)
{
    char *data;
    size_t len;
    assert_int_equal(read_file(path, &data, &len), 0);
    /* cheap content fingerprint: length + FNV-1a */
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)data[i]) * 1099511628211ULL;
    free(data);
    return xasprintf("%zu:%016llx", len, (unsigned long long)h);
}

static void test_write_tar(void **state)
{
    (void)state;
    char *root = sp("tree"), *out = sp("out.tar");
    make_tree(root, 1500000000);
    struct arc_table meta = {0};
    meta_table(&meta);
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.mtime = 1700000000;
    o.meta = &meta;
    char err[ARC_ERRLEN];
    if (arc_write_tree(root, out, &o, err))
        fail_msg("arc_write_tree: %s", err);

    struct listing l;
    list(out, &l);
    /* sorted bytewise by path, parents before children */
    for (size_t i = 1; i < l.t.n; i++)
        if (strcmp(l.t.v[i - 1].path, l.t.v[i].path) >= 0)
            fail_msg("not sorted: %s before %s", l.t.v[i - 1].path,
                     l.t.v[i].path);
    assert_string_equal(l.t.v[0].path, "a-b");
    for (size_t i = 0; i < l.t.n; i++) {
        assert_int_equal(l.t.v[i].mtime, 1700000000);
        if (strcmp(l.t.v[i].path, "etc/shadow") && strcmp(l.t.v[i].path,
                                                          "dev/console")) {
            assert_int_equal(l.t.v[i].uid, 0);
            assert_int_equal(l.t.v[i].gid, 0);
        }
    }
    const struct arc_entry *e = get(&l, "etc/shadow");
    assert_int_equal(e->gid, 42);
    assert_int_equal(e->mode, 0640);
    assert_int_equal(e->type, ARC_FILE);
    e = get(&l, "dev/console");
    assert_int_equal(e->type, ARC_CHR);
    assert_int_equal(e->rmajor, 5);
    assert_int_equal(e->rminor, 1);
    assert_int_equal(e->gid, 5);
    assert_int_equal(e->mode, 0600);
    e = get(&l, "dev/null");
    assert_int_equal(e->rmajor, 1);
    assert_int_equal(e->rminor, 3);
    assert_int_equal(get(&l, "dev/pts")->type, ARC_DIR);
    e = get(&l, "bin/sh");
    assert_int_equal(e->type, ARC_SYMLINK);
    assert_string_equal(e->target, "busybox");
    e = get(&l, "init");
    assert_int_equal(e->type, ARC_SYMLINK);
    assert_string_equal(e->target, "bin/busybox");
    /* bin/busybox sorts first: it has the data, bin/ls links to it */
    e = get(&l, "bin/busybox");
    assert_int_equal(e->type, ARC_FILE);
    assert_int_equal(e->mode, 04755);
    assert_int_equal(e->size, 23);
    e = get(&l, "bin/ls");
    assert_int_equal(e->type, ARC_HARDLINK);
    assert_string_equal(e->target, "bin/busybox");
    assert_int_equal(get(&l, "usr/lib/fifo")->type, ARC_FIFO);
    assert_null(arc_table_find(&l.t, "."));

    /* the same tree elsewhere, other mtimes and inodes: same bytes */
    char *root2 = sp("tree2"), *out2 = sp("out2.tar");
    make_tree(root2, 1600000000);
    if (arc_write_tree(root2, out2, &o, err))
        fail_msg("arc_write_tree: %s", err);
    char *h1 = sha_of(out), *h2 = sha_of(out2);
    assert_string_equal(h1, h2);
    free(h1);
    free(h2);

    /* no tmp file left behind */
    char *tmp = sp("out.tar.tmp");
    assert_false(path_exists(tmp));
    free(tmp);
    arc_table_free(&l.t);
    arc_table_free(&meta);
    free(root);
    free(root2);
    free(out);
    free(out2);
}

static void test_tree_mtimes_and_owners(void **state)
{
    (void)state;
    char *root = sp("tree"), *out = sp("out.tar");
    make_tree(root, 1500000000);
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT; /* keep mtimes */
    char err[ARC_ERRLEN];
    if (arc_write_tree(root, out, &o, err))
        fail_msg("arc_write_tree: %s", err);
    struct listing l;
    list(out, &l);
    assert_int_equal(get(&l, "etc/os-release")->mtime, 1500000002);
    assert_int_equal(get(&l, "etc/shadow")->gid, 0); /* forced 0:0 */
    assert_null(arc_table_find(&l.t, "dev/console"));
    arc_table_free(&l.t);
    free(root);
    free(out);
}

static void test_xattr_kept(void **state)
{
    (void)state;
    char *root = sp("tree"), *out = sp("out.tar.zst"), *x = sp("x");
    make_tree(root, 1500000000);
    if (!have_xattr) {
        free(root);
        free(out);
        free(x);
        skip(); /* the scratch filesystem has no user xattrs */
    }
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.filter = ARC_ZSTD;
    o.mtime = 0;
    char err[ARC_ERRLEN];
    if (arc_write_tree(root, out, &o, err))
        fail_msg("arc_write_tree: %s", err);
    assert_int_equal(mkdir(x, 0755), 0);
    if (arc_extract(out, x, ARC_X_NO_OWNERS, NULL, err))
        fail_msg("arc_extract: %s", err);
    char *f = path_join(x, "etc/shadow");
    char v[8] = {0};
    assert_int_equal(getxattr(f, "user.trillian", v, sizeof v), 3);
    assert_string_equal(v, "yes");
    free(f);
    free(root);
    free(out);
    free(x);
}

static void test_cpio_roundtrip(void **state)
{
    (void)state;
    char *root = sp("tree"), *out = sp("initrd.cpio.gz");
    make_tree(root, 1500000000);
    struct arc_table meta = {0};
    meta_table(&meta);
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.format = ARC_CPIO;
    o.filter = ARC_GZIP;
    o.mtime = 1700000000;
    o.meta = &meta;
    char err[ARC_ERRLEN];
    if (arc_write_tree(root, out, &o, err))
        fail_msg("arc_write_tree: %s", err);
    struct listing l;
    list(out, &l);
    for (size_t i = 1; i < l.t.n; i++)
        assert_true(strcmp(l.t.v[i - 1].path, l.t.v[i].path) < 0);
    assert_int_equal(get(&l, "dev/console")->type, ARC_CHR);
    /* both names of the hard link are there, bin/ls with the data */
    assert_int_equal(get(&l, "bin/ls")->size, 23);

    /* extract (recording owners and devices), then write again with the
     * record as the table: the same archive comes out */
    char *x = sp("x"), *again = sp("again.cpio.gz");
    assert_int_equal(mkdir(x, 0755), 0);
    struct arc_table rec = {0};
    if (arc_extract(out, x, ARC_X_NO_OWNERS, &rec, err))
        fail_msg("arc_extract: %s", err);
    assert_int_equal(get(&l, "etc/shadow")->gid, 42);
    assert_int_equal(arc_table_find(&rec, "etc/shadow")->gid, 42);
    char *busy = path_join(x, "bin/busybox"), *ls = path_join(x, "bin/ls");
    struct stat a, b;
    assert_int_equal(stat(busy, &a), 0);
    assert_int_equal(stat(ls, &b), 0);
    assert_int_equal(a.st_ino, b.st_ino);
    assert_int_equal(a.st_size, 23);
    o.meta = &rec;
    /* as root the device nodes exist in x; otherwise the record adds them */
    if (arc_write_tree(x, again, &o, err))
        fail_msg("arc_write_tree again: %s", err);
    char *h1 = sha_of(out), *h2 = sha_of(again);
    assert_string_equal(h1, h2);
    free(h1);
    free(h2);
    free(busy);
    free(ls);
    arc_table_free(&rec);
    arc_table_free(&l.t);
    arc_table_free(&meta);
    free(x);
    free(again);
    free(root);
    free(out);
}

static void test_table_text(void **state)
{
    (void)state;
    struct arc_table t = {0};
    char err[ARC_ERRLEN];
    const char *text = "# comment\n"
                       "dev/console char 0600 0 5 5 1\n"
                       "\n"
                       "etc/shadow keep - 0 42\n"
                       "my\\040dir dir 0755 - -\n"
                       "bin/sh slink 0777 0 0 busybox\n";
    if (arc_table_parse(&t, text, "t.txt", err))
        fail_msg("parse: %s", err);
    assert_int_equal(t.n, 4);
    const struct arc_entry *e = arc_table_find(&t, "my dir");
    assert_non_null(e);
    assert_int_equal(e->uid, -1);
    assert_int_equal(arc_table_find(&t, "etc/shadow")->mode, -1);
    char *f = arc_table_format(&t);
    assert_string_equal(f, "bin/sh slink 0777 0 0 busybox\n"
                           "dev/console char 0600 0 5 5 1\n"
                           "etc/shadow keep - 0 42\n"
                           "my\\040dir dir 0755 - -\n");
    struct arc_table t2 = {0};
    assert_int_equal(arc_table_parse(&t2, f, "f", err), 0);
    char *f2 = arc_table_format(&t2);
    assert_string_equal(f, f2);
    free(f);
    free(f2);
    arc_table_free(&t2);

    assert_int_equal(arc_table_parse(&t, "dev/x char 0600 0 0 5\n", "bad",
                                     err), -1);
    assert_non_null(strstr(err, "bad:1:"));
    assert_int_equal(arc_table_parse(&t, "x\ny wibble 0 0 0\n", "bad", err),
                     -1);
    assert_non_null(strstr(err, "bad:1:"));
    assert_int_equal(arc_table_parse(&t, "../x dir 0755 0 0\n", "bad", err),
                     -1);
    assert_non_null(strstr(err, "bad path"));
    assert_int_equal(arc_table_parse(&t, "x dir 9755 0 0\n", "bad", err), -1);
    assert_non_null(strstr(err, "bad mode"));
    arc_table_free(&t);
}

static void test_write_errors(void **state)
{
    (void)state;
    char *root = sp("tree"), *out = sp("out.tar");
    make_tree(root, 1500000000);
    char err[ARC_ERRLEN];
    struct arc_table t = {0};
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.meta = &t;
    /* a file row for a path the tree lacks */
    arc_table_addf(&t, "etc/missing", ARC_FILE, 0644, 0, 0, 0, 0, NULL);
    assert_int_equal(arc_write_tree(root, out, &o, err), -1);
    assert_non_null(strstr(err, "etc/missing"));
    assert_false(path_exists(out));
    arc_table_free(&t);
    /* a device whose parent does not exist */
    arc_table_addf(&t, "nodir/null", ARC_CHR, 0666, 0, 0, 1, 3, NULL);
    assert_int_equal(arc_write_tree(root, out, &o, err), -1);
    assert_non_null(strstr(err, "parent"));
    arc_table_free(&t);
    /* a type clash */
    arc_table_addf(&t, "etc", ARC_FILE, 0644, 0, 0, 0, 0, NULL);
    assert_int_equal(arc_write_tree(root, out, &o, err), -1);
    assert_non_null(strstr(err, "etc is a dir"));
    arc_table_free(&t);
    char *nodir = sp("nope");
    assert_int_equal(arc_write_tree(nodir, out, NULL, err), -1);
    assert_false(path_exists(out));
    char *tmp = sp("out.tar.tmp");
    assert_false(path_exists(tmp));
    /* not an archive */
    char *junk = sp("junk");
    put(junk, "this is not an archive at all, not even close\n", 0644, 0);
    struct listing l = {0};
    assert_int_equal(arc_list(junk, collect, &l, err), -1);
    assert_int_equal(arc_extract(junk, root, 0, NULL, err), -1);
    struct deb_info d;
    assert_int_equal(arc_deb_info(junk, &d, err), -1);
    assert_non_null(strstr(err, "junk"));
    free(junk);
    free(tmp);
    free(nodir);
    free(root);
    free(out);
}

static int run_argv(char *const argv[])
{
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_deb(void **state)
{
    (void)state;
    char *pkg = sp("pkg"), *deb = sp("hello.deb"), *x = sp("x");
    char *p = path_join(pkg, "DEBIAN");
    assert_int_equal(mkdir_p(p, 0755), 0);
    free(p);
    p = path_join(pkg, "DEBIAN/control");
    put(p,
        "Package: trillian-hello\n"
        "Version: 1.2-3\n"
        "Architecture: amd64\n"
        "Maintainer: Trillian <trillian@example.org>\n"
        "Description: test package\n"
        " with a long description.\n",
        0644, 1600000000);
    free(p);
    p = path_join(pkg, "usr/share/hello");
    assert_int_equal(mkdir_p(p, 0755), 0);
    free(p);
    p = path_join(pkg, "usr/share/hello/greeting");
    put(p, "hello, world\n", 0644, 1600000000);
    free(p);
    p = path_join(pkg, "usr/share/hello/link");
    assert_int_equal(symlink("greeting", p), 0);
    free(p);
    char *argv[] = {"dpkg-deb", "--root-owner-group", "-Zxz", "--build",
                    pkg, deb, NULL};
    int rc = run_argv(argv);
    if (rc == -1) {
        free(pkg);
        free(deb);
        free(x);
        skip(); /* dpkg-deb is not installed */
    }
    assert_int_equal(rc, 0);

    char err[ARC_ERRLEN];
    struct deb_info d;
    if (arc_deb_info(deb, &d, err))
        fail_msg("arc_deb_info: %s", err);
    assert_string_equal(d.package, "trillian-hello");
    assert_string_equal(d.version, "1.2-3");
    assert_string_equal(d.architecture, "amd64");
    char *desc = deb_control_field(d.control, "description");
    assert_string_equal(desc, "test package\nwith a long description.");
    free(desc);
    assert_null(deb_control_field(d.control, "Depends"));
    deb_info_free(&d);

    assert_int_equal(mkdir(x, 0755), 0);
    struct arc_table rec = {0};
    if (arc_deb_extract(deb, x, 0, &rec, err))
        fail_msg("arc_deb_extract: %s", err);
    p = path_join(x, "usr/share/hello/greeting");
    char *data;
    size_t len;
    assert_int_equal(read_file(p, &data, &len), 0);
    assert_string_equal(data, "hello, world\n");
    free(data);
    free(p);
    p = path_join(x, "usr/share/hello/link");
    char buf[64] = {0};
    assert_int_equal(readlink(p, buf, sizeof buf - 1), 8);
    assert_string_equal(buf, "greeting");
    free(p);
    const struct arc_entry *e = arc_table_find(&rec, "usr/share/hello/greeting");
    assert_non_null(e);
    assert_int_equal(e->uid, 0);
    assert_int_equal(e->mode, 0644);
    p = path_join(x, "DEBIAN");
    assert_false(path_exists(p)); /* control files are not data */
    free(p);
    arc_table_free(&rec);

    /* ARC_X_DIRS_STAY: a link member where the tree has a real directory is
     * left out, unrecorded, and the directory kept (base-files' /bin link
     * over a root whose /bin is a directory); the other members go in */
    char *y = sp("y");
    p = path_join(y, "usr/share/hello/link");
    assert_int_equal(mkdir_p(p, 0755), 0);
    struct arc_table rec2 = {0};
    if (arc_deb_extract(deb, y, ARC_X_DIRS_STAY, &rec2, err))
        fail_msg("arc_deb_extract (ARC_X_DIRS_STAY): %s", err);
    struct stat sb;
    assert_int_equal(lstat(p, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_null(arc_table_find(&rec2, "usr/share/hello/link"));
    assert_non_null(arc_table_find(&rec2, "usr/share/hello/greeting"));
    free(p);
    arc_table_free(&rec2);
    free(y);

    /* a tar is not a .deb */
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    char *tar = sp("x.tar");
    assert_int_equal(arc_write_tree(x, tar, &o, err), 0);
    assert_int_equal(arc_deb_extract(tar, x, 0, NULL, err), -1);
    assert_non_null(strstr(err, "not a Debian package"));
    free(tar);
    free(pkg);
    free(deb);
    free(x);
}

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(arc_format_from_name("tar"), ARC_TAR);
    assert_int_equal(arc_format_from_name("cpio"), ARC_CPIO);
    assert_int_equal(arc_format_from_name("zip"), -1);
    assert_int_equal(arc_filter_from_name("zstd"), ARC_ZSTD);
    assert_int_equal(arc_filter_from_name("none"), ARC_FILTER_NONE);
    assert_int_equal(arc_filter_from_name("lz4"), -1);
    assert_string_equal(arc_type_name(ARC_BLK), "block");
}

/* arc_read_files: members by path below the top directory, from an xz tar;
 * an absent name stays NULL; a member over MAX is an error. */
static void test_read_files(void **state)
{
    (void)state;
    char *root = sp("src"), *out = sp("src.tar.xz"), *p;
    assert_int_equal(mkdir_p(root, 0755), 0);
    p = sp("src/top-1.0/sub");
    assert_int_equal(mkdir_p(p, 0755), 0);
    free(p);
    p = sp("src/top-1.0/COPYING");
    put(p, "the licence\n", 0644, 1500000000);
    free(p);
    p = sp("src/top-1.0/sub/COPYING");
    put(p, "not this one\n", 0644, 1500000000);
    free(p);
    p = sp("src/top-1.0/sub/f.c");
    put(p, "int x;\n", 0644, 1500000000);
    free(p);
    struct arc_write_opts o = ARC_WRITE_OPTS_INIT;
    o.filter = ARC_XZ;
    char err[ARC_ERRLEN];
    if (arc_write_tree(root, out, &o, err))
        fail_msg("arc_write_tree: %s", err);

    const char *names[] = {"sub/f.c", "COPYING", "absent", NULL};
    char *data[3];
    size_t len[3];
    if (arc_read_files(out, 1, names, data, len, 1024, err))
        fail_msg("arc_read_files: %s", err);
    assert_string_equal(data[0], "int x;\n");
    assert_int_equal(len[0], 7);
    assert_string_equal(data[1], "the licence\n");
    assert_null(data[2]);
    assert_int_equal(len[2], 0);
    free(data[0]);
    free(data[1]);
    /* without stripping, the names are the full paths */
    const char *full[] = {"top-1.0/sub/COPYING", NULL};
    if (arc_read_files(out, 0, full, data, len, 1024, err))
        fail_msg("arc_read_files: %s", err);
    assert_string_equal(data[0], "not this one\n");
    free(data[0]);
    /* too large */
    assert_int_equal(arc_read_files(out, 1, names, data, len, 4, err), -1);
    assert_non_null(strstr(err, "more than the 4 expected"));
    assert_null(data[0]);
    assert_null(data[1]);
    /* not an archive */
    assert_int_equal(arc_read_files(root, 1, names, data, len, 1024, err), -1);
    free(root);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_tar, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree_mtimes_and_owners, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_xattr_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpio_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_files, setup, teardown),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
