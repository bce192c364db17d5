/* The command line: build, plan, check, list, clean. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "launcher.h"
#include "report.h"

enum { EXIT_OK = 0, EXIT_STAGE = 1, EXIT_USAGE = 2 };

static const char usage_main[] =
    "Usage: trillian COMMAND [OPTIONS] [RECIPE]\n"
    "\n"
    "Trillian turns a recipe into bootable Linux images for Itanium (ia64), and\n"
    "for amd64 as the reference pipeline that proves every stage end to end.\n"
    "\n"
    "Commands:\n"
    "  build [RECIPE]   run the recipe's stages, reusing cached ones; then its boot checks\n"
    "  plan [RECIPE]    show each stage, its cache key, cached or not, and what changed\n"
    "  check [RECIPE]   run only the boot checks (building what they need)\n"
    "  list             list the recipes shipped with Trillian\n"
    "  clean [RECIPE]   remove a build's output directory; --cache prunes the cache\n"
    "  cache verify [KEY...]  re-hash cache entries against their recorded sha256;\n"
    "                   --repair moves the bad ones aside\n"
    "  report OUT...    write a build's report.html and junit.xml again; --matrix [-o FILE]\n"
    "                   combines several builds (kernel x machine x loader)\n"
    "  help [COMMAND]   show help for a command; `help stages` lists every stage kind\n"
    "\n"
    "RECIPE is a path to a .cfg file or the name of a shipped recipe (`trillian list`);\n"
    "without one, the default recipe (%s) is used.\n"
    "\n"
    "Options for build, plan and check:\n"
    "  -o, --output DIR     output directory (default: out/NAME, NAME from the recipe)\n"
    "  -j, --jobs N         run up to N jobs at once, stages and make jobs together\n"
    "                       (default: the number of processors)\n"
    "      --cache DIR      cache directory (default: $TRILLIAN_CACHE, else\n"
    "                       $XDG_CACHE_HOME/trillian, else ~/.cache/trillian)\n"
    "      --set KEY=VALUE  override a recipe setting, e.g. --set kernel.kind=package;\n"
    "                       list entries by name: --set images.disk.size_mib=2048\n"
    "      --force STAGE    rebuild STAGE and everything after it, even if cached\n"
    "  -k, --keep-going     after a failure, go on with stages that do not need it\n"
    "      --ccache         compile the kernel and glibc through ccache (objects kept in\n"
    "                       CACHE/ccache/; the gcc stages always use it); not in any key\n"
    "      --mirror DIR|URL look for downloads here first, by sha256 through its\n"
    "                       SHA256SUMS, then by file name (repeatable; before\n"
    "                       $TRILLIAN_MIRRORS)\n"
    "      --offline        never download from an origin: only the cache and mirrors\n"
    "      --distcc HOSTS   spread the toolchain, kernel and glibc compiles over distcc\n"
    "                       HOSTS (\"host/4 host2:3632/8\"; each needs the same compiler\n"
    "                       at the same path); raise -j to the hosts' slots\n"
    "\n"
    "Options for clean:\n"
    "  -o, --output DIR     the output directory to remove (default: out/NAME)\n"
    "      --cache [DIR]    prune the cache instead (all of it, or with --older-than)\n"
    "      --older-than D   with --cache: only entries unused for more than D days\n"
    "\n"
    "Other options:\n"
    "  -h, --help           this help; `trillian help COMMAND` for one command\n"
    "  -V, --version        print the version\n"
    "\n"
    "Environment: TRILLIAN_CACHE (cache directory), TRILLIAN_DATA (directory with\n"
    "recipes/, kernel-config/, overlays/, firmware/), SOURCE_DATE_EPOCH (overrides the\n"
    "recipe's timestamp), TRILLIAN_QEMU_X86_64, TRILLIAN_QEMU_IA64, TRILLIAN_SKI,\n"
    "TRILLIAN_SKI_BOOTLOADER, TRILLIAN_SKI_EFI (emulators and Ski firmware for boot\n"
    "checks), TRILLIAN_PROGRESS_INTERVAL (seconds between progress lines when not on a\n"
    "terminal, default 60), TRILLIAN_CCACHE=1 and TRILLIAN_DISTCC_HOSTS (as --ccache and\n"
    "--distcc), TRILLIAN_MIRRORS (space-separated mirrors, as --mirror) and\n"
    "TRILLIAN_OFFLINE=1 (as --offline).\n"
    "\n"
    "Exit status: 0 success, 1 a stage failed, 2 usage or recipe error,\n"
    "3 a boot check failed, 130 interrupted.\n"
    "See trillian(1) and docs/ for recipes, stages and outputs.\n";

static const struct {
    const char *cmd, *text;
} usage_cmds[] = {
    {"build", "Usage: trillian build [RECIPE] [-o DIR] [-j N] [--cache DIR] [--set KEY=VALUE]...\n"
              "                      [--force STAGE]... [--keep-going] [--ccache] [--distcc HOSTS]\n\n"
              "Runs every stage of RECIPE in dependency order, up to -j at a time. A stage whose\n"
              "cache key (a sha256 of its settings, input files, tools and the keys of the stages\n"
              "it needs) is in the cache is not run again. Outputs appear in OUT/STAGE/, logs in\n"
              "OUT/logs/STAGE.log, and OUT/manifest.json lists every artifact with its sha256.\n"
              "Boot checks in the recipe run last. Exit: 0 ok, 1 stage failed, 2 recipe error,\n"
              "3 boot check failed, 130 interrupted.\n"},
    {"plan", "Usage: trillian plan [RECIPE] [--cache DIR] [--set KEY=VALUE]... [--force STAGE]...\n\n"
             "Validates RECIPE and prints each stage in the order it would run, its kind, its\n"
             "cache key, whether it is cached, and for stages that would run, which of their\n"
             "inputs changed since the last build. Runs nothing.\n"},
    {"check", "Usage: trillian check [RECIPE] [build options]\n\n"
              "Runs the recipe's boot checks, building (or taking from the cache) only the\n"
              "stages they need. Transcripts and JUnit XML go to OUT/CHECK/. Exit 3 if a check\n"
              "failed.\n"},
    {"list", "Usage: trillian list\n\nLists the recipes shipped with Trillian, with one-line "
             "descriptions.\n"},
    {"report", "Usage: trillian report OUT...\n"
               "       trillian report --matrix [-o FILE] OUT...\n\n"
               "Every build writes OUT/report.html (components with versions, patches and cache\n"
               "keys; boot checks with each step and the transcript; a stage timeline with the\n"
               "critical path; artifacts with sizes and sha256: one self-contained page) and\n"
               "OUT/junit.xml (stages and boot-check steps). The first form writes them again\n"
               "from each OUT/manifest.json. The second writes one page for several builds: a\n"
               "table of kernel x machine x loader with each boot check's result, then each\n"
               "build's report; to FILE, or standard output without -o.\n"},
    {"cache", "Usage: trillian cache verify [--cache DIR] [--repair] [KEY...]\n\n"
              "Re-hashes every file of the cache entries KEY (a key or a unique prefix of one,\n"
              "as `trillian plan` prints them; default: every entry) against the sha256\n"
              "recorded when its stage built it, and prints one line per entry: ok, or BAD and\n"
              "the first file that differs. With --repair, a bad entry is moved to CACHE/bad/\n"
              "(kept as evidence; `clean --cache` removes it) and the next build builds the\n"
              "stage again. Exit: 0 all ok, 1 an entry was bad (repaired or not), 2 usage\n"
              "error or no such key.\n"},
    {"clean", "Usage: trillian clean [RECIPE] [-o DIR]\n"
              "       trillian clean --cache [DIR] [--older-than DAYS]\n\n"
              "The first form removes a build's output directory (OUT, default out/NAME). The\n"
              "second prunes the cache: everything, or only entries not used for DAYS days.\n"},
};

static const char *field_type_doc(const struct field *f)
{
    switch (f->type) {
    case F_STRING: return "string";
    case F_INT: return "integer";
    case F_BOOL: return "boolean";
    case F_ENUM: return "one of";
    case F_STRING_LIST: return "list of strings";
    case F_PATH: return "path";
    case F_PATH_LIST: return "list of paths";
    case F_INPUT_LIST: return "list of paths and { url; sha256; } downloads";
    case F_GROUP: return "group";
    case F_LIST: return "list of groups";
    }
    return "?";
}

/* `trillian help stages`: every stage kind and its keys, from the same
 * tables the recipe validation uses (docs/stages.md embeds this). */
static void print_kinds(FILE *f)
{
    for (size_t i = 0; stage_kinds[i]; i++) {
        const struct stage_kind *k = stage_kinds[i];
        fprintf(f, "### `%s` kind `%s`\n\n%s.\n\n", k->section, k->name, k->summary);
        if (k->fields && k->fields[0].key) {
            fprintf(f, "| key | type | required | default | meaning |\n|---|---|---|---|---|\n");
            for (size_t j = 0; k->fields[j].key; j++) {
                const struct field *fl = &k->fields[j];
                fprintf(f, "| `%s` | %s", fl->key, field_type_doc(fl));
                for (size_t c = 0; fl->type == F_ENUM && fl->choices && fl->choices[c]; c++)
                    fprintf(f, "%s`%s`", c ? ", " : " ", fl->choices[c]);
                fprintf(f, " | %s | %s | %s |\n", fl->required ? "yes" : "", fl->def ? fl->def : "",
                        fl->help ? fl->help : "");
            }
            fputc('\n', f);
        }
        if (k->outputs && k->outputs[0]) {
            fprintf(f, "Outputs:");
            for (size_t j = 0; k->outputs[j]; j++)
                fprintf(f, "%s `%s`", j ? "," : "", k->outputs[j]);
            fprintf(f, ".\n\n");
        }
        if (k->tools && k->tools[0]) {
            fprintf(f, "Runs:");
            for (size_t j = 0; k->tools[j]; j++)
                fprintf(f, "%s `%s`", j ? "," : "", k->tools[j]);
            fprintf(f, ".\n\n");
        }
        if (k->uncached)
            fprintf(f, "Not cached: runs on every build.\n\n");
        if (k->publish_failed)
            fprintf(f, "Its outputs reach OUT even when it fails.\n\n");
    }
}

static void usage(FILE *f, const char *cmd)
{
    if (cmd && strcmp(cmd, "stages") == 0) {
        print_kinds(f);
        return;
    }
    if (cmd)
        for (size_t i = 0; i < ARRAY_LEN(usage_cmds); i++)
            if (strcmp(usage_cmds[i].cmd, cmd) == 0) {
                fputs(usage_cmds[i].text, f);
                return;
            }
    char *def = trillian_data_path("recipes");
    fprintf(f, usage_main, "recipes/reference-amd64.cfg");
    free(def);
}

/* The default recipe: the ia64 one once it exists, else the reference. */
static char *default_recipe(void)
{
    static const char *const order[] = {"recipes/ia64-minimal.cfg", "recipes/reference-amd64.cfg"};
    for (size_t i = 0; i < ARRAY_LEN(order); i++) {
        char *p = trillian_data_path(order[i]);
        if (path_exists(p))
            return p;
        free(p);
    }
    return trillian_data_path(order[1]);
}

static char *resolve_recipe(const char *arg)
{
    if (!arg)
        return default_recipe();
    if (path_exists(arg) || strchr(arg, '/'))
        return xstrdup(arg);
    char *rel = xasprintf("recipes/%s%s", arg, str_ends(arg, ".cfg") ? "" : ".cfg");
    char *p = trillian_data_path(rel);
    free(rel);
    if (path_exists(p))
        return p;
    free(p);
    return xstrdup(arg);
}

struct cli {
    struct build_opts b;
    struct strlist sets;
    const char *recipe;
    bool cache_prune;
    double older_than;
    bool have_older;
};

/* --mirror M: the command line's mirrors, in order, before TRILLIAN_MIRRORS's. */
static void mirror_add(const char *m)
{
    static struct buf cli;
    static char *env;
    if (!cli.n) {
        const char *e = getenv("TRILLIAN_MIRRORS");
        env = xstrdup(e ? e : "");
    }
    buf_printf(&cli, "%s%s", cli.n ? " " : "", m);
    char *v = *env ? xasprintf("%s %s", cli.p, env) : xstrdup(cli.p);
    setenv("TRILLIAN_MIRRORS", v, 1);
    free(v);
}

static int parse(int argc, char **argv, const char *cmd, struct cli *c)
{
    enum { O_CACHE = 1000, O_SET, O_FORCE, O_OLDER, O_CCACHE, O_DISTCC, O_MIRROR, O_OFFLINE };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"jobs", required_argument, NULL, 'j'},
        {"cache", optional_argument, NULL, O_CACHE}, {"set", required_argument, NULL, O_SET},
        {"force", required_argument, NULL, O_FORCE}, {"keep-going", no_argument, NULL, 'k'},
        {"older-than", required_argument, NULL, O_OLDER}, {"help", no_argument, NULL, 'h'},
        {"ccache", no_argument, NULL, O_CCACHE}, {"distcc", required_argument, NULL, O_DISTCC},
        {"mirror", required_argument, NULL, O_MIRROR}, {"offline", no_argument, NULL, O_OFFLINE},
        {0, 0, 0, 0},
    };
    bool is_clean = strcmp(cmd, "clean") == 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "o:j:kh", opts, NULL)) != -1) {
        switch (ch) {
        case 'o':
            if (!*optarg) {
                fprintf(stderr, "trillian %s: -o '': expected a directory\n", cmd);
                return EXIT_USAGE;
            }
            c->b.out = optarg;
            break;
        case 'j': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 1024) {
                fprintf(stderr, "trillian %s: -j %s: expected a number from 1 to 1024\n", cmd, optarg);
                return EXIT_USAGE;
            }
            c->b.jobs = (int)n;
            break;
        }
        case O_CACHE:
            if (is_clean && !optarg) {
                /* `clean --cache [DIR]`: DIR only if it is an existing directory */
                c->cache_prune = true;
                if (optind < argc && !argv[optind][0]) {
                    fprintf(stderr, "trillian clean: --cache '': expected a directory\n");
                    return EXIT_USAGE;
                }
                if (optind < argc && argv[optind][0] != '-' && is_dir(argv[optind]))
                    c->b.cache = argv[optind++];
                break;
            }
            if (!optarg) {
                if (optind < argc && argv[optind][0] != '-')
                    optarg = argv[optind++];
                else {
                    fprintf(stderr, "trillian %s: --cache needs a directory\n", cmd);
                    return EXIT_USAGE;
                }
            }
            if (!*optarg) {
                fprintf(stderr, "trillian %s: --cache '': expected a directory\n", cmd);
                return EXIT_USAGE;
            }
            if (is_clean)
                c->cache_prune = true;
            c->b.cache = optarg;
            break;
        case O_SET: strlist_push(&c->sets, optarg); break;
        case O_FORCE: strlist_push(&c->b.force, optarg); break;
        case 'k': c->b.keep_going = true; break;
        /* the stages read these from the environment (launcher.h) */
        case O_CCACHE: setenv("TRILLIAN_CCACHE", "1", 1); break;
        case O_DISTCC: setenv("TRILLIAN_DISTCC_HOSTS", optarg, 1); break;
        /* fetch.h reads these: --mirror goes before TRILLIAN_MIRRORS's own */
        case O_MIRROR: {
            if (!*optarg || strpbrk(optarg, " \t\n")) {
                fprintf(stderr, "trillian %s: --mirror '%s': expected one directory or URL "
                        "(no spaces; repeat --mirror for more)\n", cmd, optarg);
                return EXIT_USAGE;
            }
            char *abs = strstr(optarg, "://") ? xstrdup(optarg) : path_absolute(NULL, optarg);
            if (!strstr(optarg, "://") && !is_dir(abs)) {
                fprintf(stderr, "trillian %s: --mirror %s: not a directory (a mirror is a "
                        "directory or URL holding files and their SHA256SUMS)\n", cmd, optarg);
                free(abs);
                return EXIT_USAGE;
            }
            mirror_add(abs);
            free(abs);
            break;
        }
        case O_OFFLINE: setenv("TRILLIAN_OFFLINE", "1", 1); break;
        case O_OLDER: {
            char *end;
            c->older_than = strtod(optarg, &end);
            if (*end || c->older_than < 0) {
                fprintf(stderr, "trillian %s: --older-than %s: expected a number of days\n", cmd,
                        optarg);
                return EXIT_USAGE;
            }
            c->have_older = true;
            break;
        }
        case 'h': usage(stdout, cmd); exit(0);
        default:
            fprintf(stderr, "Try 'trillian help %s'.\n", cmd);
            return EXIT_USAGE;
        }
    }
    if (optind < argc)
        c->recipe = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "trillian %s: unexpected argument '%s' (one recipe at a time)\n", cmd,
                argv[optind]);
        return EXIT_USAGE;
    }
    if (!c->b.cache)
        c->b.cache = cache_default_dir();
    if (!c->b.jobs) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        c->b.jobs = n > 0 ? (int)n : 1;
    }
    return EXIT_OK;
}

static char *default_out(const struct recipe *r)
{
    return xasprintf("out/%s", r->name);
}

/* Which inputs differ from the last build of this stage. */
static char *plan_reason(const struct build_opts *o, const struct stage *st)
{
    char *prev = cache_load_inputs(o->cache, st);
    if (!prev)
        return xstrdup("never built with this recipe");
    struct buf why = {0};
    char prevkey[65] = "";
    sscanf(prev, "key %64s", prevkey);
    if (strcmp(prevkey, st->key) == 0) {
        free(prev);
        return xstrdup("same inputs as last time, but the cache entry is gone (pruned?)");
    }
    for (size_t i = 0; i < st->ninputs; i++) {
        const struct input *in = &st->inputs[i];
        char *needle = xasprintf("%s %s\n", in->hash, in->label);
        char *tail = xasprintf(" %s\n", in->label);
        if (!strstr(prev, needle)) {
            buf_printf(&why, "%s%s %s", why.n ? ", " : "", in->label,
                       strstr(prev, tail) ? "changed" : "new");
        }
        free(needle);
        free(tail);
    }
    free(prev);
    if (!why.p)
        buf_puts(&why, "an input was removed");
    return why.p;
}

static int cmd_plan(struct recipe *r, const struct build_opts *o)
{
    keys_compute(r);
    bool forced_any = false;
    for (size_t i = 0; i < o->force.n; i++)
        if (!recipe_stage(r, o->force.v[i])) {
            fprintf(stderr, "trillian: --force %s: the recipe has no stage of that name\n",
                    o->force.v[i]);
            return EXIT_USAGE;
        }
    printf("recipe %s (%s), %zu stages, cache %s\n", r->name, r->arch, r->nstages, o->cache);
    printf("%-18s %-24s %-12s %-7s %s\n", "STAGE", "KIND", "KEY", "STATUS", "WHY");
    for (size_t i = 0; i < r->nstages; i++) {
        struct stage *st = r->stages[i];
        st->forced = strlist_contains(&o->force, st->name);
        for (size_t d = 0; d < st->deps.n && !st->forced; d++)
            st->forced = r->stages[st->dep_idx[d]]->forced;
        forced_any |= st->forced;
        char *kind = xasprintf("%s/%s", st->section, st->kind->name);
        bool cached = !st->forced && !st->kind->uncached && cache_has(o->cache, st->key);
        char *why = cached ? xstrdup("") : st->kind->uncached ? xstrdup("boot checks always run")
                  : st->forced ? xstrdup("forced") : plan_reason(o, st);
        printf("%-18s %-24s %.12s %-7s %s\n", st->name, kind, st->key,
               cached ? "cached" : "build", why);
        free(why);
        free(kind);
    }
    key_save_memo();
    return EXIT_OK;
}

static int cmd_list(void)
{
    char *dir = trillian_data_path("recipes");
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "trillian list: cannot open %s: %s (set TRILLIAN_DATA)\n", dir,
                strerror(errno));
        free(dir);
        return EXIT_USAGE;
    }
    struct strlist names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (str_ends(e->d_name, ".cfg"))
            strlist_push(&names, e->d_name);
    closedir(d);
    strlist_sort(&names);
    for (size_t i = 0; i < names.n; i++) {
        char *p = path_join(dir, names.v[i]);
        config_t cfg;
        config_init(&cfg);
        config_set_include_dir(&cfg, dir);
        const char *desc = "(cannot be read: run `trillian plan` on it for details)";
        const char *arch = "?";
        if (config_read_file(&cfg, p)) {
            if (!config_lookup_string(&cfg, "description", &desc))
                desc = "";
            config_lookup_string(&cfg, "arch", &arch);
        }
        char *base = xstrndup(names.v[i], strlen(names.v[i]) - 4);
        printf("%-26s %-6s %s\n", base, arch, desc);
        free(base);
        config_destroy(&cfg);
        free(p);
    }
    strlist_free(&names);
    free(dir);
    return EXIT_OK;
}

static int cmd_clean(struct cli *c)
{
    if (c->cache_prune) {
        int n = cache_prune(c->b.cache, c->older_than, !c->have_older);
        if (c->have_older)
            printf("trillian: removed %d cache entr%s unused for more than %g days from %s\n", n,
                   n == 1 ? "y" : "ies", c->older_than, c->b.cache);
        else
            printf("trillian: removed the cache %s (%d entr%s)\n", c->b.cache, n,
                   n == 1 ? "y" : "ies");
        return EXIT_OK;
    }
    char *out = NULL;
    if (c->b.out) {
        out = xstrdup(c->b.out);
    } else {
        char *path = resolve_recipe(c->recipe);
        struct recipe *r = recipe_load(path, &c->sets);
        free(path);
        if (!r)
            return EXIT_USAGE;
        out = default_out(r);
        recipe_free(r);
    }
    if (!path_exists(out)) {
        printf("trillian: nothing to clean: %s does not exist\n", out);
        free(out);
        return EXIT_OK;
    }
    /* Only remove what looks like a build output, never an arbitrary tree. */
    char *m = path_join(out, "manifest.json"), *l = path_join(out, "logs");
    bool ours = path_exists(m) || is_dir(l);
    free(m);
    free(l);
    if (!ours) {
        fprintf(stderr, "trillian clean: %s does not look like a Trillian output directory (no "
                "manifest.json or logs/); not removing it\n", out);
        free(out);
        return EXIT_USAGE;
    }
    int rc = rm_rf(out);
    if (rc < 0)
        fprintf(stderr, "trillian clean: cannot remove %s: %s\n", out, strerror(errno));
    else
        printf("trillian: removed %s\n", out);
    free(out);
    return rc < 0 ? EXIT_STAGE : EXIT_OK;
}

/* trillian report [--matrix] [-o FILE] OUT... */
static int cmd_report(int argc, char **argv)
{
    bool matrix = false;
    const char *file = "-";
    struct strlist dirs = {0};
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--matrix")) {
            matrix = true;
        } else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "trillian: report: %s needs a file name\n", argv[i]);
                strlist_free(&dirs);
                return EXIT_USAGE;
            }
            file = argv[++i];
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout, "report");
            strlist_free(&dirs);
            return EXIT_OK;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "trillian: report: unknown option %s (see trillian help report)\n",
                    argv[i]);
            strlist_free(&dirs);
            return EXIT_USAGE;
        } else {
            strlist_push(&dirs, argv[i]);
        }
    }
    if (!dirs.n || (!matrix && strcmp(file, "-"))) {
        fprintf(stderr, "trillian: report: %s (see trillian help report)\n",
                !dirs.n ? "name at least one build output directory" :
                "-o goes with --matrix; a build's report is OUT/report.html");
        strlist_free(&dirs);
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    if (matrix) {
        rc = report_matrix((const char *const *)dirs.v, dirs.n, file) < 0 ? EXIT_STAGE : EXIT_OK;
    } else {
        for (size_t i = 0; i < dirs.n; i++) {
            if (report_write(dirs.v[i]) < 0)
                rc = EXIT_STAGE;
            else
                printf("%s/report.html\n%s/junit.xml\n", dirs.v[i], dirs.v[i]);
        }
    }
    strlist_free(&dirs);
    return rc;
}

/* trillian cache verify [--cache DIR] [--repair] [KEY...] */
static int cmd_cache(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "verify") != 0) {
        if (argc >= 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
            usage(stdout, "cache");
            return EXIT_OK;
        }
        fprintf(stderr, "trillian cache: expected 'verify' (see trillian help cache)\n");
        return EXIT_USAGE;
    }
    const char *cache = NULL;
    bool repair = false;
    struct strlist want = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repair")) {
            repair = true;
        } else if (!strcmp(argv[i], "--cache") && i + 1 < argc) {
            cache = argv[++i];
        } else if (str_starts(argv[i], "--cache=")) {
            cache = argv[i] + 8;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout, "cache");
            strlist_free(&want);
            return EXIT_OK;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "trillian cache verify: unknown option %s (see trillian help cache)\n",
                    argv[i]);
            strlist_free(&want);
            return EXIT_USAGE;
        } else {
            strlist_push(&want, argv[i]);
        }
    }
    if (!cache)
        cache = cache_default_dir();
    if (!*cache) {
        fprintf(stderr, "trillian cache verify: --cache '': expected a directory\n");
        strlist_free(&want);
        return EXIT_USAGE;
    }
    char *objects = path_join(cache, "objects");
    struct strlist all = {0}, keys = {0};
    dir_list(objects, &all);
    int rc = EXIT_OK;
    for (size_t i = 0; i < all.n; i++)
        if (all.v[i][0] != '.' && (!want.n))
            strlist_push(&keys, all.v[i]);
    for (size_t w = 0; w < want.n; w++) {
        const char *match = NULL;
        size_t n = 0;
        for (size_t i = 0; i < all.n; i++)
            if (all.v[i][0] != '.' && str_starts(all.v[i], want.v[w])) {
                match = all.v[i];
                n++;
            }
        if (n != 1) {
            fprintf(stderr, "trillian cache verify: %s: %s in %s\n", want.v[w],
                    n ? "more than one entry starts so (give more of the key)" : "no such entry",
                    objects);
            rc = EXIT_USAGE;
        } else {
            strlist_push(&keys, match);
        }
    }
    size_t nbad = 0;
    for (size_t i = 0; rc != EXIT_USAGE && i < keys.n; i++) {
        struct buf why = {0};
        int bad = cache_verify(cache, keys.v[i], true, &why);
        if (!bad) {
            printf("%s ok\n", keys.v[i]);
        } else {
            nbad++;
            char *to = repair ? cache_quarantine(cache, keys.v[i]) : NULL;
            printf("%s BAD: %s%s%s%s\n", keys.v[i], why.p, bad > 1 ? " (and more)" : "",
                   to ? "; moved aside to " : repair ? "; cannot move it aside: " : "",
                   to ? to : repair ? strerror(errno) : "");
            free(to);
        }
        buf_free(&why);
    }
    if (rc != EXIT_USAGE) {
        printf("trillian: %zu cache entr%s checked in %s, %zu bad%s\n", keys.n,
               keys.n == 1 ? "y" : "ies", cache, nbad,
               nbad && !repair ? " (--repair moves them aside)" : "");
        rc = nbad ? EXIT_STAGE : EXIT_OK;
    }
    strlist_free(&all);
    strlist_free(&keys);
    strlist_free(&want);
    free(objects);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr, NULL);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        usage(stdout, NULL);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "help")) {
        usage(stdout, argc > 2 ? argv[2] : NULL);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("trillian %s\n", TRILLIAN_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 2, argv + 2);
    if (!strcmp(cmd, "cache"))
        return cmd_cache(argc - 2, argv + 2);
    bool known = false;
    for (size_t i = 0; i < ARRAY_LEN(usage_cmds); i++)
        known |= strcmp(usage_cmds[i].cmd, cmd) == 0;
    if (!known) {
        fprintf(stderr, "trillian: unknown command '%s' (expected build, plan, check, list, "
                "clean, cache, report or help)\n", cmd);
        return EXIT_USAGE;
    }
    struct cli c = {0};
    int rc = parse(argc - 1, argv + 1, cmd, &c);
    if (rc != EXIT_OK)
        return rc;
    if (!strcmp(cmd, "list"))
        return cmd_list();
    if (!strcmp(cmd, "clean")) {
        rc = cmd_clean(&c);
        strlist_free(&c.sets);
        strlist_free(&c.b.force);
        return rc;
    }
    if (strcmp(cmd, "plan") != 0 && (rc = launcher_check()) != 0) {
        strlist_free(&c.sets);
        strlist_free(&c.b.force);
        return rc;
    }
    char *path = resolve_recipe(c.recipe);
    key_set_cache_dir(c.b.cache);
    struct recipe *r = recipe_load(path, &c.sets);
    free(path);
    if (!r) {
        strlist_free(&c.sets);
        strlist_free(&c.b.force);
        return EXIT_USAGE;
    }
    /* Absolute, since stages run in their own working directories. */
    char *out = c.b.out ? path_absolute(NULL, c.b.out) : NULL;
    if (!out) {
        char *rel = default_out(r);
        out = path_absolute(NULL, rel);
        free(rel);
    }
    c.b.out = out;
    char *cache = path_absolute(NULL, c.b.cache);
    c.b.cache = cache;
    if (!strcmp(cmd, "plan")) {
        rc = cmd_plan(r, &c.b);
    } else {
        c.b.checks_only = !strcmp(cmd, "check");
        rc = build_run(r, &c.b);
    }
    recipe_free(r);
    free(out);
    free(cache);
    strlist_free(&c.sets);
    strlist_free(&c.b.force);
    return rc;
}
