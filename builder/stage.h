/* The stage interface. A stage kind is a module with a table of the recipe
 * keys it accepts, a declare() that states its inputs, dependencies and
 * outputs at plan time, and a run() that fills an output directory. Adding a
 * kind is one new file in builder/stages/ and one row in registry.c.
 *
 * Plan time (declare): no side effects; errors are recipe errors (exit 2).
 * Run time (run): runs in a forked child whose stdout and stderr are the
 * stage's log, with the current directory set to cx->work. run() returns 0 on
 * success; anything else fails the stage. It must write only below cx->out,
 * cx->work and cx->keep. run() may return STAGE_SKIPPED (77) when it could
 * not run for a reason outside the recipe (an emulator not installed): the
 * engine reports it as skipped, not failed. A stage may write a JSON object
 * to cx->out/stage-manifest.json (packages, component versions); the engine
 * embeds it in OUT/manifest.json under the stage's "details". */
#ifndef TRILLIAN_STAGE_H
#define TRILLIAN_STAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

enum field_type {
    F_STRING,
    F_INT,
    F_BOOL,
    F_ENUM,        /* a string from field.choices */
    F_STRING_LIST, /* ["a", "b"] */
    F_PATH,        /* a file or directory, relative to the recipe; its
                      content (not its name) goes into the cache key */
    F_PATH_LIST,
    F_INPUT_LIST,  /* paths and pinned downloads, in order: ["a.patch",
                      { url = "https://..."; sha256 = "..."; }]; a download
                      enters the key by its sha256, as a file with those
                      bytes would; read with cx_inputs() */
    F_GROUP,       /* free-form group; validated by the kind's declare() */
    F_LIST,        /* free-form list of groups; validated by declare() */
};

#define STAGE_SKIPPED 77

struct field {
    const char *key;
    enum field_type type;
    bool required;
    const char *const *choices; /* F_ENUM: NULL-terminated */
    const char *def;            /* default, as text, for docs and --help */
    const char *help;           /* one line */
};

struct stage;
struct stage_ctx;

/* What a kind's stage is made of, as the manifest's "components", the
 * report, the SBOM and a minimal root's packages.tsv name it: read from the
 * stage's details (its stage-manifest.json) by the keys below, so that the
 * engine knows no kind by name and a new package is one table
 * (docs/packages.md). A key the details lack gives null ("unknown"). */
enum component_role {
    COMPONENT_OTHER,  /* the build's own (SBOM: the build CONTAINS it) */
    COMPONENT_ROOT,   /* in the root file system */
    COMPONENT_LOADER, /* in the images, as their boot loader */
};

struct stage_component {
    const char *name;    /* "busybox", "GRUB", "gcc (stage 2)" */
    /* Or the entry of the details' "sources" list (pkg_manifest) named
     * NAME: its version, url (else file) and sha256. */
    bool in_sources;
    const char *version; /* details key of the version */
    const char *commit;  /* or of a git commit: version "git " + 12 digits */
    const char *source;  /* details key of the source (file name or URL) */
    const char *sha256;  /* details key of that source's sha256 */
    /* Taken from a Debian binary package instead: its name, and the
     * details key of its version. */
    const char *package, *package_version;
    const char *extra;   /* details key copied as is when present */
    const char *licence; /* SPDX, as the project declares it; NULL: NOASSERTION */
    enum component_role role;
    const char *loader;  /* the bootloader kind that boots with it ("grub") */
    /* In a minimal root (its packages.tsv, os-release): the name, and
     * where the version is, in order of preference: details keys, or
     * "@FILE", the first line of the output file FILE. */
    const char *root_name;
    const char *root_version[3];
};

struct stage_kind {
    const char *name;      /* value of `kind` in the recipe */
    const char *section;   /* recipe section it lives in ("kernel", "images") */
    unsigned version;      /* bump when output changes for the same inputs */
    const char *summary;   /* one line for docs */
    const struct field *fields; /* terminated by {0}; common keys are implicit */
    const char *const *tools;   /* programs whose --version enters the key */
    const char *const *outputs; /* files run() must produce (relative) */
    const char *const *late_fields; /* fields added after the kind shipped:
                                       each enters the cache key only when
                                       set, so older entries stay valid */
    /* Its settings that hold patches, in the order it applies them: the
       manifest's patch_sources (where the stage's patches come from) reads
       them from the recipe at build time, so no output or key changes
       (patch_sources.c). A list (F_INPUT_LIST, F_PATH_LIST, an F_LIST of
       { url; } groups): each path or URL; a file (F_PATH): a manifest of
       the downloads declare() gave st_remote under that key, else one
       patch; a directory: a local series. NULL-terminated, or NULL. */
    const char *const *patch_fields;
    bool uncached;         /* run every time, never stored */
    bool in_stages;        /* may also be an entry of the recipe's `stages` list
                              (a second root there: an install ISO's live
                              system beside the userland it installs) */
    bool publish_failed;   /* its outputs reach OUT even when it fails or
                              is skipped (boot-check transcripts) */
    int fail_exit;         /* trillian's exit status when it fails (0 = 1);
                              boot checks use 3 */
    /* The engine adds an implicit stage NAME-base of this kind, on the same
       recipe group but keyed on the base kind's own fields only, and makes
       this stage need it (userland: the package install, cached apart from
       the configuration step that this kind's run() applies to its copy). */
    const struct stage_kind *base;
    /* What it builds or takes, {0}-terminated; NULL for a kind that
     * assembles parts (the report lists those by section). */
    const struct stage_component *components;
    /* Rough seconds a cold run takes on 2 cores (0: about none): only the
     * order matters, to start the longest chain first (build.c). */
    double cost_hint;
    int (*declare)(struct stage *st);
    int (*run)(struct stage_ctx *cx);
    /* `trillian kernel-bump`: the stage's patches tried on another source
       TARBALL, one line per patch on stdout (applies, applies with fuzz,
       fails with its first rejected hunk); returns how many did not apply,
       or -1 after cx_fail. NULL for kinds without patches. */
    int (*patch_check)(struct stage_ctx *cx, const char *tarball);
};

/* ---- plan time: used from declare() ------------------------------------ */

/* Settings, with defaults from the kind's field table applied. */
const char *st_str(const struct stage *st, const char *key);   /* NULL if unset */
long long st_int(const struct stage *st, const char *key, long long def);
bool st_bool(const struct stage *st, const char *key, bool def);
size_t st_list(const struct stage *st, const char *key, struct strlist *out);
char *st_path(const struct stage *st, const char *key); /* absolute, or NULL */
/* Whether the recipe (or --set) gives KEY, as opposed to its default. */
bool st_isset(const struct stage *st, const char *key);
const char *st_name(const struct stage *st);
const char *st_kind(const struct stage *st);        /* its kind's name */
const struct stage_kind *st_kind_def(const struct stage *st); /* its kind's table */
const char *st_section(const struct stage *st);     /* "kernel", "images", ... */
const char *st_arch(const struct stage *st);        /* recipe's arch */
const char *st_recipe_dir(const struct stage *st);

/* ---- free-form settings: a read-only view ------------------------------
 * F_GROUP and F_LIST values (and their entries) are nodes. A node is owned
 * by the recipe and lives as long as it; NULL stands for "absent" and every
 * accessor takes it (returning NULL, 0 or DEF). */
struct st_node;
enum node_type { NODE_NONE, NODE_GROUP, NODE_LIST, NODE_STRING, NODE_INT, NODE_FLOAT, NODE_BOOL };
const struct st_node *st_node(const struct stage *st, const char *key); /* NULL if unset */
enum node_type node_type(const struct st_node *n); /* a list or an array: NODE_LIST */
const char *node_str(const struct st_node *n);     /* NULL unless a string */
long long node_int(const struct st_node *n, long long def);  /* an integer, else DEF */
double node_float(const struct st_node *n, double def);      /* a number, else DEF */
bool node_bool(const struct st_node *n, bool def);           /* a boolean, else DEF */
size_t node_len(const struct st_node *n);  /* entries of a list or group, else 0 */
const struct st_node *node_elem(const struct st_node *n, size_t i); /* NULL past the end */
const struct st_node *node_member(const struct st_node *n, const char *key); /* groups */
const char *node_member_str(const struct st_node *n, const char *key); /* string member */
const char *node_name(const struct st_node *n); /* a group member's key, else NULL */
unsigned node_line(const struct st_node *n);    /* its line in its file; 0 if unknown */
/* "FILE:LINE" of a node of ST's recipe (or "--set K=V"), for messages; new string. */
char *st_node_where(const struct stage *st, const struct st_node *n);

/* ---- the other stages of the recipe (peers) ----------------------------
 * A peer is read-only: the settings accessors above (st_str, st_isset,
 * st_node, st_kind, ...) work on it with its own kind's defaults. */
/* The stage named NAME ("kernel", "userland", an image's name), or NULL. */
const struct stage *st_peer(const struct stage *st, const char *name);
/* The stages of SECTION ("packages", "images"), of kind KIND unless NULL, in
 * recipe order: for (size_t i = 0; (p = st_peers(st, "images", NULL, &i));) */
const struct stage *st_peers(const struct stage *st, const char *section, const char *kind,
                             size_t *iter);
/* Whether a stage declares FILE among its outputs (the kind's table and
 * what its declare() added: complete once every stage has declared). */
bool st_has_output(const struct stage *st, const char *file);

/* ---- recipe facts -------------------------------------------------------- */
const char *st_recipe_name(const struct stage *st);  /* top-level `name` */
const char *st_root_uuid(const struct stage *st);    /* `root_uuid`, NULL if unset */
long long st_source_date_epoch(const struct stage *st);
/* The recipe's machine profile (firmware/machines.cfg, parsed by the engine's
 * machine.c), read once with the recipe; NULL when the recipe names no
 * `machine`. */
struct machine {
    char *name;
    char *arch;            /* the recipe arch it is for */
    char *description;     /* one line */
    char *console;         /* console= value; "" = none (the platform's own) */
    char *cmdline;         /* more kernel command-line words, or "" */
    struct strlist fragments; /* kernel-config fragment names, in order */
};
const struct machine *st_machine(const struct stage *st);

/* Depend on another stage by name ("kernel", "userland", an image name).
 * A missing stage is a recipe error at this stage's location. */
void st_need(struct stage *st, const char *stage_name);
/* Depend on a stage only if the recipe has it; returns whether it did. */
bool st_want(struct stage *st, const char *stage_name);
bool st_has_stage(const struct stage *st, const char *stage_name);
/* st_need, and a use of FILE among its outputs (read with cx_dep_file): a
 * recipe error, once all stages have declared, if that stage does not
 * declare FILE as an output. */
void st_need_file(struct stage *st, const char *stage_name, const char *file);
/* Inputs that enter the cache key. Files and trees are hashed by content. */
void st_input_text(struct stage *st, const char *label, const char *text);
void st_input_file(struct stage *st, const char *label, const char *path);
void st_input_tree(struct stage *st, const char *label, const char *dir);
void st_tool(struct stage *st, const char *program);
/* A file the stage will download (fetch.h) at run time, pinned by SHA256:
 * --offline checks at plan time that a mirror or the cache has it. KEY is
 * the setting it comes from (for FILE:LINE); URL or NAME may be NULL. */
void st_remote(struct stage *st, const char *key, const char *url, const char *name,
               const char *sha256);
void st_output(struct stage *st, const char *relpath);
/* A recipe error at KEY of this stage (or at the stage if KEY is NULL):
 * "FILE:LINE: section.key: message". Returns -1 for `return st_error(...)`. */
int st_error(struct stage *st, const char *key, const char *fmt, ...)
    PRINTF_LIKE(3, 4);

/* ---- answers remembered across builds -----------------------------------
 * For a question whose answer costs a program run and follows from a few
 * files (apt-cache show, from apt's lists and configuration): the engine
 * keeps the answer in the cache (CACHE/answers/) with STATE, the digest of
 * those files' identities that st_files_state gives, and st_recall gives it
 * back only while STATE is the same. Usable at plan and at run time. */
/* A digest of each path's identity: type, size, mtime, ctime and inode, a
 * directory's entries' too, recursively, and absence; no content is read, so
 * it is cheap, and any write or replacement changes it. New string. */
char *st_files_state(const char *const *paths);
/* The answer remembered for QUESTION (one line) under STATE (new string), or
 * NULL: ask, then st_remember it. */
char *st_recall(const char *question, const char *state);
void st_remember(const char *question, const char *state, const char *answer);

/* ---- run time: used from run() ------------------------------------------ */

struct stage_ctx {
    const struct stage *st;
    const char *name;      /* stage name */
    const char *out;       /* empty directory: everything the stage outputs */
    const char *work;      /* scratch directory, removed afterwards */
    const char *keep;      /* persistent build directory for this stage name
                              and recipe (incremental builds); may be reused */
    const char *recipe_dir;
    const char *arch;
    const char *cache_dir; /* the cache root, for shared downloads */
    int jobs;              /* -j, for tools that take a job count */
    long long source_date_epoch;
};

/* Output directory of a stage this one declared with st_need/st_want. */
const char *cx_dep(const struct stage_ctx *cx, const char *stage_name);
/* The path of FILE in the output of STAGE, declared with st_need_file (new
 * string); NULL, logged as an engine error, for a use not declared so. */
char *cx_dep_file(const struct stage_ctx *cx, const char *stage_name, const char *file);
/* The stage's kind name ("grub" for a bootloader of kind grub). */
#define cx_kind(cx) st_kind((cx)->st)
/* Run a child from an argv array (never through a shell); its output goes to
 * the log. Returns its exit status (0 = success), or -1 if it could not be
 * started. The command line is logged first. cwd NULL = cx->work. env is a
 * NULL-terminated list of "K=V" added to the environment, or NULL. */
int cx_run(const struct stage_ctx *cx, const char *const *argv);
/* cx_run with the child's stdout on OUT_FD (stderr still to the log). */
int cx_run_to(const struct stage_ctx *cx, const char *const *argv, int out_fd);
int cx_run_in(const struct stage_ctx *cx, const char *cwd,
              const char *const *env, const char *const *argv);
/* Same, capturing stdout into *out (caller frees); stderr goes to the log. */
int cx_capture(const struct stage_ctx *cx, const char *const *argv, char **out);
/* cx_capture with ENV ("K=V" list, NULL-terminated) added to the child's
 * environment; the program itself is found on this process's PATH. */
int cx_capture_in(const struct stage_ctx *cx, const char *const *env, const char *const *argv,
                  char **out);
/* The files of an F_INPUT_LIST setting, in order, as absolute paths: local
 * ones relative to the recipe, downloads fetched (fetch.h) into the cache.
 * Returns the count, or -1 after logging which entry could not be had. */
int cx_inputs(const struct stage_ctx *cx, const char *key, struct strlist *out);
/* "FILE:LINE: section.key" of a setting, for run-time messages (new string). */
char *cx_where(const struct stage_ctx *cx, const char *key);
/* Log a line to the stage log. */
void cx_log(const struct stage_ctx *cx, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Log an error naming the stage and what to do; returns 1 for `return`. */
int cx_fail(const struct stage_ctx *cx, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* Writes LEN bytes of DATA to REL, a path relative to cx->out, mode 0644:
 * parent directories made, written under a temporary name and renamed, so
 * nothing sees half a file. A failure is logged (cx_fail) with the full
 * path; returns 0, else 1 (for `return cx_write(...)`). stage_write.c. */
int cx_write(const struct stage_ctx *cx, const char *rel, const void *data, size_t len);
/* The same below DIR (cx->work, or a tree the stage assembles before it
 * renames it into cx->out) with MODE (0755 for a script). */
int cx_write_in(const struct stage_ctx *cx, const char *dir, const char *rel, const void *data,
                size_t len, mode_t mode);
/* Writes MANIFEST, a json-c object the stage built (json_out.h; taken), to
 * cx->out/stage-manifest.json, as cx_write does. */
struct json_object;
int cx_write_manifest(const struct stage_ctx *cx, struct json_object *manifest);

/* Settings are readable at run time too, through the stage. */
#define cx_str(cx, k) st_str((cx)->st, (k))
#define cx_int(cx, k, d) st_int((cx)->st, (k), (d))
#define cx_bool(cx, k, d) st_bool((cx)->st, (k), (d))
#define cx_list(cx, k, o) st_list((cx)->st, (k), (o))
#define cx_path(cx, k) st_path((cx)->st, (k))
#define cx_isset(cx, k) st_isset((cx)->st, (k))
#define cx_node(cx, k) st_node((cx)->st, (k))

/* The directory holding recipes/, kernel-config/, overlays/ and firmware/:
 * TRILLIAN_DATA if set, else the source tree the binary runs from, else the
 * installed share directory. */
const char *trillian_data_dir(void);
/* Where trillian_data_dir() came from ("TRILLIAN_DATA", "the source tree
 * ...", "installed: ...", "built in ..."), and whether it exists. */
const char *trillian_data_source(void);
bool trillian_data_present(void);
/* A file below the data directory ("kernel-config/ext4.config"); new string. */
char *trillian_data_path(const char *rel);

/* The table of all stage kinds (registry.c). */
extern const struct stage_kind *const stage_kinds[];
const struct stage_kind *stage_kind_find(const char *section, const char *name);
/* The kind a manifest names as "SECTION/NAME", or NULL. */
const struct stage_kind *stage_kind_named(const char *section_name);

#endif
