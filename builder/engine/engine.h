/* The engine's own view of recipes and stages. Stage modules use stage.h;
 * only the engine (recipe, graph, keys, cache, build, CLI) includes this.
 * The layers of builder/ and what may include what: docs/engine.md ("The
 * source's layers"), checked by tools/check-layers. */
#ifndef TRILLIAN_ENGINE_H
#define TRILLIAN_ENGINE_H

#include <libconfig.h>
#include <stdbool.h>
#include <sys/types.h>

#include "stage.h"
#include "base/util.h"

/* What goes into a stage's cache key, one labelled component at a time, so
 * `trillian plan` can say which input changed. */
struct input {
    char *label; /* "setting", "file:PATH", "dep:NAME", "tool:PROG", … */
    char hash[65];
};

/* ST_BLOCKED: never started because a stage it needs failed, was skipped or
 * was itself blocked; ST_PENDING at the end of a build: not started (the
 * build stopped first). */
enum stage_state { ST_PENDING, ST_RUNNING, ST_DONE, ST_FAILED, ST_SKIPPED, ST_BLOCKED };

struct recipe;

struct stage {
    char *name;
    const struct stage_kind *kind;
    config_setting_t *cfg;
    char *section;
    char *keypath; /* "kernel", "images.disk": prefix of messages */
    struct recipe *recipe;

    struct strlist deps; /* names, as declared */
    size_t *dep_idx;     /* resolved, same order */
    struct input *inputs;
    size_t ninputs, cap_inputs;
    struct strlist outputs;
    struct strlist need_files; /* st_need_file: "STAGE\tFILE" */
    struct strlist remote_urls; /* st_remote with a key: "KEY\tURL", for patch_sources */
    char key[65];
    bool key_ok;

    /* build-time state */
    enum stage_state state;
    bool cached, forced, wanted;
    pid_t pid;
    bool holds_token; /* holds a jobserver token (else the implicit slot) */
    double t_start, t_end;
    double cpu; /* user + system CPU seconds of its job and the children it waited for */
    char *tmp;     /* CACHE/tmp/KEY.PID while running */
    int lock_fd;   /* CACHE/locks/KEY while this build builds it, else -1 */
    int keep_fd;   /* CACHE/locks/keep.RECIPE.STAGE (its keep/ tree), else -1 */
    bool waiting;  /* another build holds its lock */
    char *outdir;  /* where its outputs are now (cache entry) */
    char *why;     /* failed or skipped: why, in a line (exit status, skip reason) */
    const struct stage *blocker; /* ST_BLOCKED: the failed or skipped stage behind it */
    /* with substituters: its entry is here (cached or substituted), so the
     * stages it needs are not (top down); subst_from: where it came from */
    bool short_cut;
    char *subst_from;
};

struct recipe {
    char *file; /* as given */
    char *dir;  /* absolute directory of the recipe */
    char *name, *arch, *description;
    long long source_date_epoch;
    char *root_uuid;          /* NULL if unset */
    struct machine *machine;  /* the `machine` profile, read once; NULL if none */
    config_t cfg;
    struct stage **stages;
    size_t nstages;
    struct strlist overrides; /* --set, as given */
    int nerrors;
    /* @include files found in the data directory's recipes/, not the
     * recipe's: "NAME\tREALPATH", NAME as libconfig names the file */
    struct strlist include_map;
    /* downloads the stages declared (st_remote): "SHA\tNAME\tURL\tWHERE" */
    struct strlist remotes;
    double t_build; /* when build_run started (now_seconds), for the timeline */
};

/* ---- recipe.c ---- */
/* Loads, applies overrides, validates and declares all stages. On recipe
 * errors, prints them (FILE:LINE: key: message) and returns NULL. */
struct recipe *recipe_load(const char *path, const struct strlist *overrides);
void recipe_free(struct recipe *r);
struct stage *recipe_stage(const struct recipe *r, const char *name);
/* Report a recipe error at a setting (or the recipe itself when s is NULL). */
/* "FILE:LINE" of a setting (or "--set KEY=VALUE" for an override); new string. */
char *recipe_location(const struct recipe *r, const config_setting_t *s);
void recipe_error(struct recipe *r, const config_setting_t *s, const char *keypath,
                  const char *fmt, ...) PRINTF_LIKE(4, 5);
/* --offline: one error per declared download that neither CACHE/downloads
 * nor a local mirror has; returns how many (0: all there). */
int recipe_check_offline(const struct recipe *r, const char *cache_dir);
/* The candidate closest to WORD if it is close enough to be a typo of it,
 * else NULL: for "did you mean" in every message about a misspelt name. */
const char *did_you_mean(const char *word, const char *const *cands, size_t n);
/* Every KEY `--set KEY=VALUE` accepts for R: the top-level settings, then
 * each stage's keys as --set addresses them ("kernel.kind",
 * "stages.greet.argv"). For plan --json and shell completion. */
void recipe_settable_keys(const struct recipe *r, struct strlist *out);
/* Canonical text of a setting tree, for hashing. */
void setting_canonical(const config_setting_t *s, struct buf *b);

/* ---- recipe_text.c ---- */
/* The line of the first NUL in a recipe file's TEXT (LEN bytes) that
 * libconfig would lose silently: a raw NUL byte anywhere (*RAW set), or
 * \x00 in a string (*RAW cleared); 0 if none. */
unsigned recipe_text_nul(const char *text, size_t len, bool *raw);

/* ---- stage_api.c ---- */
/* After every declare(): each st_need_file's file is among its producer's
 * outputs, else a recipe error at the consumer. */
void stages_check_files(struct recipe *r);

/* ---- graph.c ---- */
/* Resolves dependency names and orders stages so every stage comes after its
 * dependencies. Reports unknown references and cycles; returns 0 if sound. */
int graph_resolve(struct recipe *r);

/* ---- key.c ---- */
void key_set_cache_dir(const char *cache_dir); /* enables the file-hash memo */
/* ---- answers.c ---- */
void answers_set_cache_dir(const char *cache_dir); /* enables st_recall, st_remember */
void key_save_memo(void);
/* An input tree is hashed whole into its stage's key before anything runs:
 * without bounds, a directory mounted inside itself, or an overlay that
 * names /, would walk for ever or for hours. Generous: the shipped input
 * trees (GRUB's modules, overlays/) have at most 300 entries, 5 deep. */
#define TREE_MAX_DEPTH 64          /* directories below the tree's top */
#define TREE_MAX_ENTRIES 1000000   /* files, directories and links in all */
/* A file or a tree (within the bounds above), by content; -1 with *WHY
 * (when not NULL; a new string saying what to do) if it cannot be hashed. */
int hash_path(const char *path, char hex[65], char **why);
/* A tree within the given bounds, for tests of them. */
int hash_tree_bounded(const char *dir, int max_depth, size_t max_entries, char hex[65],
                      char **why);
int tool_version_hash(const char *program, bool ask_version, char hex[65]);
void stage_add_input(struct stage *st, const char *label, const char *hash);
/* Computes every stage's key (in graph order). */
void keys_compute(struct recipe *r);

/* ---- cache.c ---- */
const char *cache_default_dir(void);
char *cache_entry(const char *cache, const char *key);   /* objects/KEY */
bool cache_has(const char *cache, const char *key);
void cache_touch(const char *cache, const char *key);
char *cache_keep_dir(const char *cache, const char *recipe, const char *stage);
/* Moves a finished tmp dir into the cache as KEY (replacing an older entry). */
int cache_commit(const char *cache, const char *tmp, const char *key);
void cache_sweep_tmp(const char *cache); /* remove tmp dirs of dead builds */
/* Whether KEY's files are still what its build made: compared with their
 * identities at commit (size, mtime, ctime, inode), hashed against the
 * recorded sha256 where those differ (every file when ALL). Returns the
 * number of bad files, the first described in WHY. */
int cache_verify(const char *cache, const char *key, bool all, struct buf *why);
/* Takes the lock of KEY (CACHE/locks/KEY) without waiting: its fd, or -1
 * with *HOLDER the pid of the build that holds it (0: locks do not work
 * here, so build unlocked). */
int cache_lock(const char *cache, const char *key, pid_t *holder);
void cache_unlock(int fd);
void cache_locks_forget(void); /* in a forked child: close inherited locks */
/* Moves KEY's entry to CACHE/bad/KEY.TIME; returns that path, or NULL. */
char *cache_quarantine(const char *cache, const char *key);
/* Whether DIR (OUT/STAGE) still holds KEY's files as published: the same
 * names, and files of the same size and mtime. WHY says what differs. */
bool cache_published_intact(const char *cache, const char *key, const char *dir,
                            struct buf *why);
int cache_prune(const char *cache, double older_than_days, bool all);
/* The inputs list of the last build of a recipe's stage, for `plan`. */
void cache_save_inputs(const char *cache, const struct stage *st);
char *cache_load_inputs(const char *cache, const struct stage *st);

/* ---- jobserver.c ---- */
struct jobserver {
    int rfd, wfd;  /* the pipe children see (inherited) */
    int rfd_nb;    /* our non-blocking view of the read end */
    int jobs;
};
int jobserver_init(struct jobserver *js, int jobs);
bool jobserver_take(struct jobserver *js); /* non-blocking */
void jobserver_give(struct jobserver *js);
char *jobserver_makeflags(const struct jobserver *js);
void jobserver_close(struct jobserver *js);

/* ---- build.c ---- */
struct build_opts {
    const char *cache;
    const char *out;
    int jobs;
    bool keep_going;
    struct strlist force;
    bool checks_only; /* `trillian check`: boot checks and what they need */
    /* `trillian boot`: only this check and what it needs; nothing is
     * published into OUT and no manifest or report is written (the stages
     * are read from the cache, the check only prepares the emulator's line) */
    const char *only_check;
    /* substituters to ask before building a stage (substitute.h), or NULL */
    const struct substituters *subst;
};
/* Runs the plan; returns trillian's exit status. */
int build_run(struct recipe *r, const struct build_opts *o);

/* ---- runner.c ---- */
/* Runs a stage's run() in a forked child; returns the pid. */
pid_t runner_start(struct stage *st, const struct build_opts *o, const struct jobserver *js,
                   const char *log_path, const char *keep_dir);
/* Turns a child's wait status into an exit code, naming signals. */
int runner_status(int wstatus);
/* The last command a stage log records ("$ …" lines). */
char *runner_last_command(const char *log_path);

/* ---- manifest.c ---- */
/* OUT/manifest.json, and OUT/SHA256SUMS: every file of the build's images
 * stages (built or cached), sorted, in sha256sum's format with paths
 * relative to OUT (removed when there are none, so it never describes an
 * older build). */
int manifest_write(const struct recipe *r, const struct build_opts *o, int result);
/* In a stage's process, as it ends well: the hashes of OUTDIR's files into
 * SUMS (beside out/ in the cache entry), which manifest_write reuses and
 * cache_verify checks against. -1 with errno when a file cannot be listed
 * or read (a tree deeper than PATH_MAX): nothing is written then. */
int manifest_sums_write(const char *outdir, const char *sums);

/* ---- patch_sources.c ---- */
/* The stage's "patch_sources": where the patches of its kind's patch
 * settings (stage.h, patch_fields) come from, one object per origin in the
 * order they apply: "origin", "series" (the manifest file listing them,
 * when one does), "patches" (how many; null for a directory) and "setting".
 * An empty array when it has none; NULL for a kind without patch settings. */
struct json_object;
struct json_object *patch_sources_json(const struct stage *st);
/* A download's origin: "OWNER/REPO@COMMIT12" for a forge's raw file
 * (GitHub, GitLab's /-/raw/), else the URL's host and directory without
 * the scheme. New string. */
char *patch_origin_url(const char *url);
/* A local directory's: "Trillian (REL)" below DATA_DIR, else "local (DIR)".
 * New string. */
char *patch_origin_dir(const char *dir, const char *data_dir);

#endif
