/* Source, environment and install helpers of the `emulators` kinds
 * (emu_build.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drivers/fetch.h"
#include "drivers/launcher.h"
#include "base/run_command.h"
#include "emu_build.h"
#include "toolchain.h"

static bool valid_commit(const char *s)
{
    return s && strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

static bool file_present(const char *pattern)
{
    glob_t g;
    bool ok = glob(pattern, GLOB_NOSORT, NULL, &g) == 0 && g.gl_pathc > 0;
    globfree(&g);
    return ok;
}

int emu_declare(struct stage *st, const struct emu_file_dep *files)
{
    int bad = 0;
    const char *url = st_str(st, "url"), *name = st_str(st, "file");
    const char *sha = st_str(st, "sha256"), *git = st_str(st, "git");
    const char *commit = st_str(st, "commit");
    if (!fetch_valid_sha256(sha))
        bad |= st_error(st, "sha256", "'%s' is not a SHA-256 (64 hex digits of the source "
                        "tarball: sha256sum FILE)", sha ? sha : "");
    if (url && !fetch_valid_url(url))
        bad |= st_error(st, "url", "'%s' is not an http(s), ftp or file URL", url);
    if (!url && !(name && *name))
        bad |= st_error(st, NULL, "give `file` (the tarball's file name in a mirror) or `url` "
                        "(its origin)");
    if (name && strchr(name, '/'))
        bad |= st_error(st, "file", "'%s' must be a file name, without '/'", name);
    if (!git != !commit)
        bad |= st_error(st, git ? "git" : "commit", "`git` and `commit` go together: the "
                        "clone is checked out at that commit and verified");
    if (commit && !valid_commit(commit))
        bad |= st_error(st, "commit", "'%s' is not a full commit id (40 lowercase hex "
                        "digits: git rev-parse COMMIT)", commit);
    if (git)
        st_tool(st, "git");
    if (url)
        st_tool(st, "curl");
    /* the ia64 parts (firmware, boot loaders) are built with it */
    st_need(st, "toolchain");
    for (size_t i = 0; files && files[i].glob; i++)
        if (!file_present(files[i].glob))
            bad |= st_error(st, NULL, "the build needs %s, which is missing (apt-get install "
                            "%s; tools/install-deps installs it)", files[i].glob,
                            files[i].package);
    return bad ? -1 : 0;
}

static char *rkey(const struct stage_ctx *cx)
{
    return xasprintf("emulators.%s", cx->name);
}

/* git clone GIT, check out COMMIT, verify HEAD. The tree (new string) or
 * NULL after cx_fail. */
static char *clone_source(const struct stage_ctx *cx)
{
    const char *git = cx_str(cx, "git"), *commit = cx_str(cx, "commit");
    char *dir = path_join(cx->work, "src"), *head = NULL, *where = cx_where(cx, "git");
    const char *clone[] = {"git", "clone", "--quiet", "--no-checkout", git, dir, NULL};
    const char *co[] = {"git", "-C", dir, "-c", "advice.detachedHead=false", "checkout",
                        "--quiet", "--detach", commit, NULL};
    const char *rev[] = {"git", "-C", dir, "rev-parse", "HEAD", NULL};
    bool ok = false;
    if (tc_run_step(cx, cx->work, NULL, clone, "clone") != 0)
        cx_fail(cx, "%s: git clone %s failed (see the log; offline? then put the tarball in a "
                "mirror, --mirror DIR)", where, git);
    else if (tc_run_step(cx, cx->work, NULL, co, "checkout") != 0)
        cx_fail(cx, "%s: %s has no commit %s (see the log; check `commit`)", where, git,
                commit);
    else if (cx_capture(cx, rev, &head) != 0 || strncmp(head, commit, 40) != 0)
        cx_fail(cx, "%s: the clone's HEAD is %.40s, not %s: refusing to build it", where,
                head ? head : "?", commit);
    else
        ok = true;
    free(head);
    free(where);
    if (!ok) {
        free(dir);
        return NULL;
    }
    cx_log(cx, "built from %s at %s (a git clone: the tarball was not available)", git, commit);
    return dir;
}

char *emu_source(const struct stage_ctx *cx, bool *from_git)
{
    const char *url = cx_str(cx, "url"), *name = cx_str(cx, "file");
    const char *sha = cx_str(cx, "sha256"), *git = cx_str(cx, "git");
    const char *mirrors = getenv("TRILLIAN_MIRRORS");
    *from_git = false;
    /* Without a chance at the tarball, clone at once (no failed-fetch
     * message first); with one, the tarball wins: its bytes are pinned. */
    bool try_tarball = !git || fetch_available(cx->cache_dir, url, name, sha) ||
                       (!fetch_offline() && (url || (mirrors && strstr(mirrors, "://"))));
    char *tarball = NULL;
    if (try_tarball) {
        char *where = cx_where(cx, "sha256");
        double t0 = now_seconds();
        tarball = fetch_pinned(cx, url, name, sha, where);
        cx_log(cx, "fetch: %.1f s", now_seconds() - t0);
        free(where);
    }
    if (!tarball) {
        if (!git)
            return NULL; /* fetch_pinned said what to do */
        if (fetch_offline()) {
            char *where = cx_where(cx, "git");
            cx_fail(cx, "%s: the tarball (sha256 %s) is in no mirror and --offline forbids "
                    "cloning %s: put the tarball in a mirror (--mirror DIR)", where, sha, git);
            free(where);
            return NULL;
        }
        if (try_tarball)
            cx_log(cx, "no copy of the tarball: cloning %s instead", git);
        *from_git = true;
        return clone_source(cx);
    }
    char *dir = path_join(cx->work, "src"), *rk = rkey(cx);
    double t0 = now_seconds();
    char *src = tc_unpack(cx, rk, "sha256", tarball, dir);
    cx_log(cx, "unpack: %.1f s", now_seconds() - t0);
    free(rk);
    free(dir);
    free(tarball);
    return src;
}

char *emu_env(const struct stage_ctx *cx, const char *area, struct strlist *env)
{
    const char *tc = cx_dep(cx, "toolchain");
    strlist_push_owned(env, run_path_env("%s/bin", tc));
    strlist_push(env, "LC_ALL=C");
    strlist_pushf(env, "SOURCE_DATE_EPOCH=%lld", cx->source_date_epoch);
    return launcher_prefix(cx, area, cx->work, true, env);
}

int emu_move_install(const struct stage_ctx *cx, const char *dest, const char *prefix)
{
    char *from = path_join(dest, prefix);
    struct strlist names = {0};
    int rc = 0;
    if (dir_list(from, &names) < 0)
        rc = cx_fail(cx, "make install put nothing in %s: %s (see the log)", from,
                     strerror(errno));
    for (size_t i = 0; !rc && i < names.n; i++) {
        char *a = path_join(from, names.v[i]), *b = path_join(cx->out, names.v[i]);
        if (rename(a, b) < 0 && copy_tree(a, b, false) < 0)
            rc = cx_fail(cx, "cannot move %s to %s: %s", a, b, strerror(errno));
        free(a);
        free(b);
    }
    strlist_free(&names);
    free(from);
    return rc;
}

int emu_manifest(const struct stage_ctx *cx, bool from_git, json_object *extra)
{
    json_object *m = json_object_new_object();
    const char *url = cx_str(cx, "url"), *name = cx_str(cx, "file");
    json_add_str(m, "source", name ? name : path_basename(url));
    json_add_str(m, "sha256", cx_str(cx, "sha256"));
    json_add_str(m, "from", from_git ? "git" : "tarball");
    if (from_git)
        json_add_str(m, "git", cx_str(cx, "git"));
    /* the version the report names: the pinned commit (a tarball is the
     * recipe's repack of the tree at that commit) */
    if (cx_str(cx, "commit"))
        json_add_str(m, "commit", cx_str(cx, "commit"));
    if (extra) {
        json_object_object_foreach(extra, k, v)
            json_object_object_add(m, k, json_object_get(v));
        json_object_put(extra);
    }
    return cx_write_manifest(cx, m);
}

int emu_move_install_step(const struct stage_ctx *cx, void *arg)
{
    (void)arg;
    char *dest = path_join(cx->work, "dest");
    int rc = emu_move_install(cx, dest, "usr");
    free(dest);
    return rc;
}
