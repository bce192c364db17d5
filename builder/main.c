/* The command line: build, plan, check, list, clean. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/debfetch.h"
#include "drivers/emulator.h"
#include "engine/engine.h"
#include "drivers/fetch.h"
#include "drivers/launcher.h"
#include "drivers/httpserve.h"
#include "drivers/netserve.h"
#include "engine/bump.h"
#include "engine/predict.h"
#include "engine/release.h"
#include "engine/report.h"
#include "engine/substitute.h"
#include "base/json_out.h"
#include "base/run_command.h"

#ifndef TRILLIAN_COMMIT /* the Makefile's: git rev-parse --short HEAD */
#define TRILLIAN_COMMIT "unknown"
#endif

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
    "  boot [RECIPE] [CHECK]  start a built image in its emulator on this terminal\n"
    "  fetch [RECIPE]   download the recipe's pinned inputs; --to DIR writes a mirror\n"
    "  clean [RECIPE]   remove a build's output directory; --cache prunes the cache\n"
    "  cache verify [KEY...]  re-hash cache entries against their recorded sha256;\n"
    "                   --repair moves the bad ones aside\n"
    "  report OUT...    write a build's report.html, junit.xml and sbom.spdx.json again;\n"
    "                   --matrix [-o FILE]\n"
    "                   combines several builds (kernel x machine x loader)\n"
    "  publish OUT... --to DIR [--sign KEY]  write a static directory to serve: the\n"
    "                   matrix page, compressed images, signed SHA256SUMS and the\n"
    "                   builds' stage entries (cache/) for --substituter\n"
    "  kernel-bump RECIPE VERSION  move the recipe's kernel to another release: the new\n"
    "                   source downloaded, every patch tried on it, the recipe rewritten\n"
    "                   only if all apply (--force: anyway)\n"
    "  help [COMMAND]   show help for a command; `help stages` lists every stage kind\n"
    "\n"
    "RECIPE is a path to a .cfg file or the name of a shipped recipe (`trillian list`);\n"
    "without one, the default recipe (%s) is used.\n"
    "A recipe's @include names are looked up beside it, then in the data directory's\n"
    "recipes/.\n"
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
    "                       (default: start no new stage, let the running ones finish\n"
    "                       and be cached; Ctrl-C stops them at once)\n"
    "      --ccache         compile the kernel and glibc through ccache (objects kept in\n"
    "                       CACHE/ccache/; the gcc stages always use it); not in any key\n"
    "      --mirror DIR|URL look for downloads here first, by sha256 through its\n"
    "                       SHA256SUMS, then by file name (repeatable; before\n"
    "                       $TRILLIAN_MIRRORS)\n"
    "      --offline        never download from an origin: only the cache and mirrors\n"
    "      --substituter URL|DIR  before building a stage that is not cached, take its\n"
    "                       entry from this `trillian publish` directory (http(s),\n"
    "                       file:// or a path) if it is signed by a trusted key and\n"
    "                       every file matches (repeatable; before $TRILLIAN_SUBSTITUTERS)\n"
    "      --trust FILE     trust the signing key(s) in FILE (a publisher's\n"
    "                       signing-key.pub; repeatable; also\n"
    "                       ~/.config/trillian/trusted-keys)\n"
    "      --distcc HOSTS   spread the toolchain, kernel and glibc compiles over distcc\n"
    "                       HOSTS (\"host/4 host2:3632/8\"; each needs the same compiler\n"
    "                       at the same path); raise -j to the hosts' slots\n"
    "\n"
    "Options for clean:\n"
    "  -o, --output DIR     the output directory to remove (default: out/NAME)\n"
    "      --cache [DIR]    prune the cache instead (all of it, or with --older-than)\n"
    "      --older-than D   with --cache: only entries unused for more than D days\n"
    "\n"
    "Options for plan and list:\n"
    "      --json           print JSON: plan's stages (key, status, why, what they need,\n"
    "                       predicted outcomes) and the keys --set accepts; list's recipes\n"
    "\n"
    "Other options:\n"
    "  -h, --help           this help; `trillian help COMMAND` for one command\n"
    "  -V, --version        print the version, the git commit it was built from and the\n"
    "                       data directory in use (and why that one)\n"
    "\n"
    "%s"
    "\n"
    "Exit status: 0 success, 1 a stage failed, 2 usage or recipe error,\n"
    "3 a boot check failed, 130 interrupted.\n"
    "See trillian(1) and docs/ for recipes, stages and outputs.\n";

static const struct {
    const char *cmd, *text;
} usage_cmds[] = {
    {"build", "Usage: trillian build [RECIPE] [-o DIR] [-j N] [--cache DIR] [--set KEY=VALUE]...\n"
              "                      [--force STAGE]... [--keep-going] [--ccache] [--distcc HOSTS]\n"
              "                      [--substituter URL|DIR]... [--trust FILE]...\n\n"
              "Runs every stage of RECIPE in dependency order, up to -j at a time. A stage whose\n"
              "cache key (a sha256 of its settings, input files, tools and the keys of the stages\n"
              "it needs) is in the cache is not run again. Outputs appear in OUT/STAGE/, logs in\n"
              "OUT/logs/STAGE.log, and OUT/manifest.json lists every artifact with its sha256.\n"
              "Boot checks in the recipe run last. After a stage fails, no new stage starts\n"
              "(unless --keep-going): the running ones finish and are cached, and Ctrl-C stops\n"
              "them at once. With --substituter, a stage not in the cache is first asked of each\n"
              "substituter (a `trillian publish` directory) and taken if its entry is signed by a\n"
              "--trust'ed key and every file matches, top down: its inputs are then not needed;\n"
              "otherwise one line says why and it is built (docs/publish.md).\n"
              "Exit: 0 ok, 1 stage failed, 2 recipe error,\n"
              "3 boot check failed, 130 interrupted.\n"},
    {"plan", "Usage: trillian plan [RECIPE] [--cache DIR] [--set KEY=VALUE]... [--force STAGE]...\n"
             "                     [--substituter URL|DIR]... [--trust FILE]... [--json]\n\n"
             "Validates RECIPE and prints each stage in the order it would run, its kind, its\n"
             "cache key, whether it is cached, and for stages that would run, which of their\n"
             "inputs changed since the last build. Under a stage that would run, it says what\n"
             "it can foresee: a boot check that will be skipped or fail (its emulator or\n"
             "firmware is missing), a stage that needs root, or the network (pinned downloads\n"
             "neither the cache nor a local mirror has, a debootstrap mirror); and whether the\n"
             "recipe has no boot checks. With substituters, a stage a build would take from one\n"
             "is `substitute` with its download size, the stages below it `unneeded`.\n"
             "Runs nothing. With --json, the same as one JSON object,\n"
             "with the keys --set accepts.\n"},
    {"check", "Usage: trillian check [RECIPE] [build options]\n\n"
              "Runs the recipe's boot checks, building (or taking from the cache) only the\n"
              "stages they need. Transcripts and JUnit XML go to OUT/CHECK/. Exit 3 if a check\n"
              "failed. A recipe without boot checks is an error (exit 2).\n"},
    {"boot", "Usage: trillian boot [RECIPE] [CHECK|IMAGE] [--persistent] [build options]\n\n"
             "Starts a built image in its emulator on this terminal, with the emulator line of\n"
             "the recipe's boot check CHECK (or the check that boots IMAGE; default: the first\n"
             "boot check), building what it needs first. A disk is booted with snapshot=on:\n"
             "nothing the guest writes is kept, and the cache and OUT are never written. With\n"
             "--persistent the image is copied once into OUT/boot-CHECK/ and booted from there\n"
             "with its writes kept (so is the firmware's NVRAM). The serial console is this\n"
             "terminal; powering the guest off, or Ctrl-C, ends the emulator and the command.\n"},
    {"fetch", "Usage: trillian fetch [RECIPE] [--to DIR] [--cache DIR] [--mirror DIR|URL]...\n\n"
              "Downloads every input RECIPE names by URL and sha256 (kernel tarballs and patches,\n"
              "emulator sources; a Debian source package's .dsc and the files it lists, each\n"
              "checked against it) into the cache, from mirrors first, each checked. With --to,\n"
              "also copies them into DIR and writes DIR/SHA256SUMS: a mirror to carry to an\n"
              "offline machine (trillian build --offline --mirror DIR). Exit 1 if any failed.\n"},
    {"list", "Usage: trillian list [--json]\n\nLists the recipes shipped with Trillian, with "
             "their architecture and one-line\ndescriptions; with --json, as a JSON array.\n"},
    {"report", "Usage: trillian report OUT...\n"
               "       trillian report --matrix [-o FILE] OUT...\n\n"
               "Every build writes OUT/report.html (components with versions, patches and cache\n"
               "keys; boot checks with each step and the transcript; a stage timeline with the\n"
               "critical path; artifacts with sizes and sha256: one self-contained page),\n"
               "OUT/junit.xml (stages and boot-check steps) and OUT/sbom.spdx.json (an SPDX 2.3\n"
               "software bill of materials: images, root, kernel, loader, toolchain and their\n"
               "versions, sources, sha256, licences). The first form writes them again\n"
               "from each OUT/manifest.json. The second writes one page for several builds: a\n"
               "table of kernel x machine x loader with each boot check's result, then each\n"
               "build's report; to FILE, or standard output without -o.\n"},
    {"kernel-bump", "Usage: trillian kernel-bump RECIPE VERSION [--url URL] [--sha256 HEX] [--force]\n"
                    "                             [--cache DIR] [--mirror DIR|URL]...\n\n"
                    "Moves RECIPE's kernel (kind source, set by url + sha256) to Linux VERSION:\n"
                    "downloads Debian's orig tarball for it (pool/main/l/linux/linux_VERSION.orig.tar.xz\n"
                    "on deb.debian.org; --url gives another), checked against --sha256 when given,\n"
                    "into CACHE/downloads/; applies the kernel's patches (series, series_file,\n"
                    "series_urls, patches) to it in order in a scratch tree and prints one line per\n"
                    "patch: applies, applies with fuzz (the hunk), or fails (its first rejected\n"
                    "hunk). Only if every patch applies (or with --force) does it rewrite the\n"
                    "kernel.url and kernel.sha256 lines where the recipe or its include sets them.\n"
                    "The sha256 written is the download's: check it against Debian's Sources.\n"
                    "Exit: 0 written, 1 a patch does not apply (nothing written), 2 usage error or\n"
                    "no tarball at the URL.\n"},
    {"cache", "Usage: trillian cache verify [--cache DIR] [--repair] [KEY...]\n\n"
              "Re-hashes every file of the cache entries KEY (a key or a unique prefix of one,\n"
              "as `trillian plan` prints them; default: every entry) against the sha256\n"
              "recorded when its stage built it, and prints one line per entry: ok, or BAD and\n"
              "the first file that differs. With --repair, a bad entry is moved to CACHE/bad/\n"
              "(kept as evidence; `clean --cache` removes it) and the next build builds the\n"
              "stage again. Exit: 0 all ok, 1 an entry was bad (repaired or not), 2 usage\n"
              "error or no such key.\n"},
    {"publish", "Usage: trillian publish OUT... --to DIR [--sign KEY] [--cache DIR]\n\n"
                "Writes DIR, a static directory any web server can serve as it is: index.html\n"
                "(the report --matrix page over the builds OUT..., readable without scripts,\n"
                "each build's images with sizes and sha256), builds/RECIPE/ (manifest, report,\n"
                "boot transcripts, images: disks as NAME.img.zst, ISOs and archives as they\n"
                "are), SHA256SUMS over all of them, and cache/: every stage entry of the builds\n"
                "by key (KEY.json: key, stage, kind, files with sha256 and size; KEY.json.sig;\n"
                "KEY.tar.zst), which `build --substituter DIR-or-its-URL` takes. With --sign KEY\n"
                "(an OpenSSH private key, or KEY.pub with the key in ssh-agent) SHA256SUMS and\n"
                "every entry's metadata are signed (ssh-keygen -Y sign, namespace trillian) and\n"
                "DIR/signing-key.pub holds the public key; the private key is never written\n"
                "into DIR. Publishing again adds entries and never rewrites one. Check a\n"
                "download by hand (docs/publish.md):\n"
                "  echo \"trillian $(cat signing-key.pub)\" > allowed_signers\n"
                "  ssh-keygen -Y verify -f allowed_signers -I trillian -n trillian \\\n"
                "      -s SHA256SUMS.sig < SHA256SUMS && sha256sum -c --ignore-missing SHA256SUMS\n"
                "Exit: 0 ok, 1 something could not be published, 2 usage error.\n"},
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
        if (k->base) {
            fprintf(f, "Two stages: the engine adds `%s-base` (kind `%s`), keyed on",
                    k->section, k->base->name);
            for (size_t j = 0; k->base->fields && k->base->fields[j].key; j++)
                fprintf(f, "%s `%s`", j ? "," : "", k->base->fields[j].key);
            fprintf(f, " only; this stage applies the other settings to a copy of its root.\n\n");
        }
        const char *const *tools = k->tools ? k->tools : k->base ? k->base->tools : NULL;
        if (tools && tools[0]) {
            fprintf(f, "Runs:");
            for (size_t j = 0; tools[j]; j++)
                fprintf(f, "%s `%s`", j ? "," : "", tools[j]);
            fprintf(f, ".\n\n");
        }
        if (k->in_stages)
            fprintf(f, "Also an entry of the `stages` list (a second root beside the userland, "
                    "its base stage `NAME-base`): an install ISO's live system (`live_from`).\n\n");
        if (k->uncached)
            fprintf(f, "Not cached: runs on every build.\n\n");
        if (k->publish_failed)
            fprintf(f, "Its outputs reach OUT even when it fails.\n\n");
    }
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

/* The environment block of --help. The emulator variables come from the
 * emulator table itself, so the help cannot name one the code does not read
 * (or miss one it does). */
static char *environment_help(void)
{
    struct buf b = BUF_INIT;
    buf_puts(&b,
        "Environment:\n"
        "  TRILLIAN_CACHE       cache directory (else $XDG_CACHE_HOME/trillian, else\n"
        "                       ~/.cache/trillian)\n"
        "  TRILLIAN_DATA        directory with recipes/, kernel-config/, overlays/, firmware/\n"
        "                       (default: the source tree the binary sits in, else\n"
        "                       PREFIX/share/trillian beside PREFIX/bin; now ");
    buf_printf(&b, "%s)\n", trillian_data_dir());
    buf_puts(&b,
        "  SOURCE_DATE_EPOCH    overrides the recipe's source_date_epoch\n"
        "  TRILLIAN_CCACHE      1: as --ccache (set and not 0); 0: no ccache at all, not even\n"
        "                       for the gcc stages and the emulators\n"
        "  TRILLIAN_DISTCC_HOSTS  as --distcc HOSTS\n"
        "  TRILLIAN_MIRRORS     space-separated mirrors, tried after those of --mirror\n"
        "  TRILLIAN_OFFLINE     1: as --offline (set and not 0)\n"
        "  TRILLIAN_SUBSTITUTERS  space-separated substituters, asked after --substituter's\n"
        "  TRILLIAN_SUBSTITUTER_TIMEOUT  seconds a substituter may send less than 1 KiB/s\n"
        "                       before a download is given up (default 30)\n"
        "  TRILLIAN_SUBSTITUTER_MAX_TIME  seconds one entry may take from a substituter\n"
        "                       in all: metadata, signature, payload (default 1800)\n"
        "  TRILLIAN_PROGRESS_INTERVAL  seconds between progress lines when standard error\n"
        "                       is not a terminal (default 60)\n"
        "  TRILLIAN_COSTS       the stage-costs table of the first build's estimate (default:\n"
        "                       the data directory's recipes/costs/stages)\n"
        "  TRILLIAN_PROBE_SECONDS  the probe compile's CPU seconds, instead of timing it\n"
        "  TRILLIAN_APT_STATE   colon-separated paths whose identity stands for the host\n"
        "                       apt's state, replacing /var/lib/apt/lists, /etc/apt and\n"
        "                       dpkg's status and arch (an apt configured elsewhere)\n"
        "  http_proxy, https_proxy, no_proxy  for downloads (curl reads them)\n"
        "  TRILLIAN_BOOT_INTO, TRILLIAN_BOOT_PERSISTENT  set by `trillian boot` for the boot\n"
        "                       check it prepares (not for users)\n"
        "  TRILLIAN_TEST_FAULT  ACTION@POINT, for the test suite only: stop (SIGSTOP) or\n"
        "                       fail as a full disk (enospc) at commit, publish or published\n"
        "Boot-check emulators and their firmware (these win over the recipe and PATH):\n");
    for (size_t i = 0; i < n_emulators; i++) {
        const struct emulator *e = &emulators[i];
        bool seen = false; /* rows share a binary (ski, ski-efi) */
        for (size_t j = 0; j < i && e->env; j++)
            seen |= emulators[j].env && !strcmp(emulators[j].env, e->env);
        if (e->env && !seen)
            buf_printf(&b, "  %-23s %s (emulator %s)\n", e->env, e->program, e->name);
        if (e->firmware_env)
            buf_printf(&b, "  %-23s firmware of emulator %s%s%s\n", e->firmware_env, e->name,
                       e->firmware_default ? ",\n                          default " : "",
                       e->firmware_default ? e->firmware_default : "");
    }
    buf_puts(&b, "  TRILLIAN_DNSMASQ        the dnsmasq a netboot check in qemu-system-ia64 runs\n"
                 "                          (default: dnsmasq on PATH)\n");
    return buf_detach(&b);
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
    /* the recipe `build` would pick, shown as the data directory names it */
    char *def = default_recipe(), *env = environment_help();
    const char *dd = trillian_data_dir();
    size_t n = strlen(dd);
    const char *shown = !strncmp(def, dd, n) && def[n] == '/' ? def + n + 1 : def;
    fprintf(f, usage_main, shown, env);
    free(env);
    free(def);
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

static bool recipe_exists_or_say(const char *arg, const char *path);

struct cli {
    struct build_opts b;
    struct strlist sets;
    const char *recipe;
    bool cache_prune;
    double older_than;
    bool have_older;
    const char *to; /* fetch --to */
    const char *check; /* boot: the check (or image) to boot */
    bool persistent;   /* boot --persistent */
    bool json;      /* plan and list --json */
    struct strlist substs, trust; /* --substituter, --trust */
};

/* --mirror M: the command line's mirrors, in order, before TRILLIAN_MIRRORS's. */
static void mirror_add(const char *m)
{
    static struct buf cli = BUF_INIT;
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
    enum { O_CACHE = 1000, O_SET, O_FORCE, O_OLDER, O_CCACHE, O_DISTCC, O_MIRROR, O_OFFLINE, O_TO,
           O_JSON, O_PERSISTENT, O_SUBST, O_TRUST };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"jobs", required_argument, NULL, 'j'},
        {"cache", optional_argument, NULL, O_CACHE}, {"set", required_argument, NULL, O_SET},
        {"force", required_argument, NULL, O_FORCE}, {"keep-going", no_argument, NULL, 'k'},
        {"older-than", required_argument, NULL, O_OLDER}, {"help", no_argument, NULL, 'h'},
        {"ccache", no_argument, NULL, O_CCACHE}, {"distcc", required_argument, NULL, O_DISTCC},
        {"mirror", required_argument, NULL, O_MIRROR}, {"offline", no_argument, NULL, O_OFFLINE},
        {"to", required_argument, NULL, O_TO}, {"json", no_argument, NULL, O_JSON},
        {"persistent", no_argument, NULL, O_PERSISTENT},
        {"substituter", required_argument, NULL, O_SUBST},
        {"trust", required_argument, NULL, O_TRUST},
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
        case O_SUBST:
        case O_TRUST:
            if (strcmp(cmd, "build") && strcmp(cmd, "check") && strcmp(cmd, "plan") &&
                strcmp(cmd, "boot")) {
                fprintf(stderr, "trillian %s: --substituter and --trust go with build, check, "
                        "plan and boot\n", cmd);
                return EXIT_USAGE;
            }
            if (ch == O_SUBST) {
                strlist_push(&c->substs, optarg);
                break;
            }
            if (!*optarg) {
                fprintf(stderr, "trillian %s: --trust '': expected a public key file\n", cmd);
                return EXIT_USAGE;
            }
            strlist_push(&c->trust, optarg);
            break;
        case O_PERSISTENT:
            if (strcmp(cmd, "boot") != 0) {
                fprintf(stderr, "trillian %s: --persistent goes with `trillian boot`\n", cmd);
                return EXIT_USAGE;
            }
            c->persistent = true;
            break;
        case O_TO:
            if (strcmp(cmd, "fetch") != 0 || !*optarg) {
                fprintf(stderr, "trillian %s: --to DIR goes with `trillian fetch`\n", cmd);
                return EXIT_USAGE;
            }
            c->to = optarg;
            break;
        case O_JSON:
            if (strcmp(cmd, "plan") && strcmp(cmd, "list")) {
                fprintf(stderr, "trillian %s: --json goes with `trillian plan` and `trillian "
                        "list`\n", cmd);
                return EXIT_USAGE;
            }
            c->json = true;
            break;
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
    if (optind < argc && strcmp(cmd, "boot") == 0)
        c->check = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "trillian %s: unexpected argument '%s' (one recipe at a time)\n", cmd,
                argv[optind]);
        return EXIT_USAGE;
    }
    if (c->have_older && !c->cache_prune) {
        fprintf(stderr, "trillian %s: --older-than goes with `trillian clean --cache`: "
                "it prunes cache entries, not output directories\n", cmd);
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
    struct buf why = BUF_INIT;
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
    if (!why.n)
        buf_puts(&why, "an input was removed");
    return buf_detach(&why);
}

/* What the build's verified reuse will find (try_reuse: the same cache_verify,
 * an lstat per file, a hash where one changed): an entry whose files changed
 * after it was built is moved aside and built again, so plan says so. NULL
 * when the entry is intact. */
static char *plan_changed(const char *cache, const struct stage *st)
{
    struct buf why = BUF_INIT;
    char *r = cache_verify(cache, st->key, false, &why) > 0
                  ? xasprintf("changed, will rebuild (%s)", why.p)
                  : NULL;
    buf_free(&why);
    return r;
}

/* Under a stage's plan line: what will happen that the plan can foresee
 * (predict.h), one indented line each. */
static void plan_print_predictions(const struct stage *st, const char *cache, size_t *count)
{
    static const char *const shown[] = {"will be SKIPPED", "will FAIL", "needs root",
                                        "needs the network"};
    struct predictions p = {0};
    predict_stage(st, cache, &p);
    for (size_t i = 0; i < p.n; i++)
        printf("  %s %s: %s\n", st->name, shown[p.v[i].what], p.v[i].why);
    *count += p.n;
    predictions_free(&p);
}

static void json_print(json_object *o)
{
    puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                           JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

/* plan --json: what the table says, per stage, plus the predictions, the
 * keys --set accepts and whether the recipe has boot checks. */
static json_object *plan_json_stage(const struct stage *st, const char *kind, const char *status,
                                    const char *why, const char *cache)
{
    bool cached = strcmp(status, "build") != 0;
    json_object *j = json_object_new_object();
    json_add_str(j, "name", st->name);
    json_add_str(j, "kind", kind);
    json_add_str(j, "key", st->key);
    json_add_str(j, "status", status);
    json_add_str(j, "why", why);
    json_object_object_add(j, "forced", json_object_new_boolean(st->forced));
    json_object_object_add(j, "needs", json_strlist(&st->deps));
    json_object *pa = json_object_new_array();
    struct predictions p = {0};
    if (!cached)
        predict_stage(st, cache, &p);
    for (size_t i = 0; i < p.n; i++) {
        json_object *pj = json_object_new_object();
        json_add_str(pj, "outcome", outcome_names[p.v[i].what]);
        json_add_str(pj, "why", p.v[i].why);
        json_object_array_add(pa, pj);
    }
    predictions_free(&p);
    json_object_object_add(j, "predicted", pa);
    return j;
}

/* plan with substituters: what a build would do, top down (build.c's
 * want_top_down): a stage in the cache or on a substituter stops the walk,
 * and stages below it are not needed. */
enum plan_how { PH_UNNEEDED, PH_CACHED, PH_SUBST, PH_BUILD };
struct plan_subst {
    enum plan_how *how;
    struct subst_offer *offer;
};

static void plan_visit(const struct recipe *r, const struct build_opts *o, size_t i,
                       struct plan_subst *ps)
{
    struct stage *st = r->stages[i];
    if (ps->how[i] != PH_UNNEEDED)
        return;
    ps->how[i] = PH_BUILD;
    if (!st->forced && subst_eligible(st) && cache_has(o->cache, st->key)) {
        char *changed = plan_changed(o->cache, st);
        free(changed);
        if (!changed) {
            ps->how[i] = PH_CACHED;
            return;
        }
    }
    if (!st->forced && subst_query(o->subst, st, &ps->offer[i], stderr)) {
        ps->how[i] = PH_SUBST;
        return;
    }
    for (size_t d = 0; d < st->deps.n; d++)
        plan_visit(r, o, st->dep_idx[d], ps);
}

static void plan_subst_walk(const struct recipe *r, const struct build_opts *o,
                            struct plan_subst *ps)
{
    size_t n = r->nstages ? r->nstages : 1;
    ps->how = xcalloc(n, sizeof *ps->how);
    ps->offer = xcalloc(n, sizeof *ps->offer);
    bool *root = xcalloc(n, sizeof *root);
    for (size_t i = 0; i < r->nstages; i++)
        root[i] = true;
    for (size_t i = 0; i < r->nstages; i++)
        for (size_t d = 0; d < r->stages[i]->deps.n; d++)
            root[r->stages[i]->dep_idx[d]] = false;
    for (size_t i = r->nstages; i-- > 0;)
        if (root[i])
            plan_visit(r, o, i, ps);
    free(root);
}

static char *mib(long long n)
{
    return xasprintf("%.1f MiB", (double)n / (1024.0 * 1024.0));
}

static int cmd_plan(struct recipe *r, const struct build_opts *o, bool json)
{
    size_t npred = 0;
    keys_compute(r);
    for (size_t i = 0; i < o->force.n; i++)
        if (!recipe_stage(r, o->force.v[i])) {
            fprintf(stderr, "trillian: --force %s: the recipe has no stage of that name\n",
                    o->force.v[i]);
            return EXIT_USAGE;
        }
    json_object *jr = NULL, *jstages = NULL;
    if (json) {
        jr = json_object_new_object();
        json_add_str(jr, "recipe", r->name);
        json_add_str(jr, "file", r->file);
        json_add_str(jr, "arch", r->arch);
        json_object_object_add(jr, "description",
                               r->description ? json_str(r->description) : NULL);
        json_add_str(jr, "cache", o->cache);
        json_object_object_add(jr, "bootchecks",
                               json_object_new_boolean(recipe_has_section(r, "bootcheck")));
        jstages = json_object_new_array();
    } else {
        printf("recipe %s (%s), %zu stages, cache %s\n", r->name, r->arch, r->nstages, o->cache);
        printf("%-18s %-24s %-12s %-7s %s\n", "STAGE", "KIND", "KEY", "STATUS", "WHY");
    }
    for (size_t i = 0; i < r->nstages; i++) {
        struct stage *st = r->stages[i];
        st->forced = strlist_contains(&o->force, st->name);
        for (size_t d = 0; d < st->deps.n && !st->forced; d++)
            st->forced = r->stages[st->dep_idx[d]]->forced;
    }
    struct plan_subst ps = {0};
    long long download = 0;
    if (subst_active(o->subst))
        plan_subst_walk(r, o, &ps);
    for (size_t i = 0; i < r->nstages; i++) {
        struct stage *st = r->stages[i];
        char *kind = xasprintf("%s/%s", st->section, st->kind->name);
        bool cached = !st->forced && !st->kind->uncached && cache_has(o->cache, st->key);
        char *changed = cached ? plan_changed(o->cache, st) : NULL;
        cached = cached && !changed;
        char *why = changed ? changed : cached ? xstrdup("")
                  : st->kind->uncached ? xstrdup("boot checks always run")
                  : st->forced ? xstrdup("forced") : plan_reason(o, st);
        const char *status = cached ? "cached" : "build";
        if (ps.how && ps.how[i] == PH_SUBST) {
            const struct subst_offer *of = &ps.offer[i];
            char *a = mib(of->payload_size), *b = mib(of->files_size);
            free(why);
            why = xasprintf("from %s: download %s (%s unpacked)", o->subst->shown.v[of->from], a, b);
            free(a);
            free(b);
            status = "substitute";
            download += of->payload_size;
        } else if (ps.how && ps.how[i] == PH_UNNEEDED) {
            free(why);
            why = xstrdup("not needed: the stages that need it are cached or substituted");
            status = "unneeded";
        }
        if (json) {
            json_object *js = plan_json_stage(st, kind, status, why, o->cache);
            if (ps.how && ps.how[i] == PH_SUBST) {
                json_add_str(js, "substituter", o->subst->shown.v[ps.offer[i].from]);
                json_object_object_add(js, "download_bytes",
                                       json_object_new_int64(ps.offer[i].payload_size));
                json_object_object_add(js, "unpacked_bytes",
                                       json_object_new_int64(ps.offer[i].files_size));
            }
            json_object_array_add(jstages, js);
        } else {
            printf("%-18s %-24s %.12s %-7s %s\n", st->name, kind, st->key, status, why);
            if (!strcmp(status, "build"))
                plan_print_predictions(st, o->cache, &npred);
        }
        free(why);
        free(kind);
    }
    if (ps.how && !json) {
        char *d = mib(download);
        printf("substituters: %s to download\n", d);
        free(d);
    }
    free(ps.how);
    free(ps.offer);
    if (json) {
        json_object_object_add(jr, "stages", jstages);
        struct strlist keys = {0};
        recipe_settable_keys(r, &keys);
        json_object_object_add(jr, "set_keys", json_strlist(&keys));
        strlist_free(&keys);
        json_print(jr);
    } else if (!recipe_has_section(r, "bootcheck")) {
        printf("note: the recipe has no boot checks: nothing boots what it builds, and "
               "`trillian check` has nothing to run\n");
    } else if (npred) {
        printf("%zu predicted outcome%s above: a boot check that will skip or fail, a stage that "
               "needs root or the network\n", npred, npred == 1 ? "" : "s");
    }
    key_save_memo();
    return EXIT_OK;
}

static int cmd_list(bool json)
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
    json_object *jl = json ? json_object_new_array() : NULL;
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
        if (json) {
            json_object *j = json_object_new_object();
            json_add_str(j, "name", base);
            json_add_str(j, "arch", arch);
            json_add_str(j, "description", desc);
            json_add_str(j, "file", p);
            json_object_array_add(jl, j);
        } else {
            printf("%-26s %-6s %s\n", base, arch, desc);
        }
        free(base);
        config_destroy(&cfg);
        free(p);
    }
    if (jl)
        json_print(jl);
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
        struct recipe *r = c->recipe && !recipe_exists_or_say(c->recipe, path) ? NULL
                         : recipe_load(path, &c->sets);
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
                printf("%s/report.html\n%s/junit.xml\n%s/sbom.spdx.json\n", dirs.v[i], dirs.v[i],
                       dirs.v[i]);
        }
    }
    strlist_free(&dirs);
    return rc;
}

/* `trillian kernel-bump RECIPE VERSION` (engine/bump.c). */
static char *joined(const struct strlist *l);

static int cmd_kernel_bump(int argc, char **argv)
{
    struct bump_opts o = {0};
    const char *recipe = NULL;
    struct strlist mirrors = {0};
    int rc = EXIT_USAGE;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool val = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout, "kernel-bump");
            strlist_free(&mirrors);
            return EXIT_OK;
        } else if (!strcmp(a, "--force")) {
            o.force = true;
        } else if (val && !strcmp(a, "--url")) {
            o.url = argv[++i];
        } else if (val && !strcmp(a, "--sha256")) {
            o.sha256 = argv[++i];
        } else if (val && !strcmp(a, "--cache")) {
            o.cache = argv[++i];
        } else if (val && !strcmp(a, "--mirror")) {
            a = argv[++i];
            strlist_push_owned(&mirrors, strstr(a, "://") ? xstrdup(a) : path_absolute(NULL, a));
        } else if (a[0] == '-' || (recipe && o.version)) {
            fprintf(stderr, "trillian kernel-bump: unexpected %s (see trillian help "
                    "kernel-bump)\n", a);
            strlist_free(&mirrors);
            return EXIT_USAGE;
        } else if (!recipe) {
            recipe = a;
        } else {
            o.version = a;
        }
    }
    if (!o.version || (o.sha256 && !fetch_valid_sha256(o.sha256))) {
        fprintf(stderr, "trillian kernel-bump: %s (see trillian help kernel-bump)\n",
                !o.version ? "expected RECIPE VERSION" : "--sha256: expected 64 hex digits");
        strlist_free(&mirrors);
        return EXIT_USAGE;
    }
    if (mirrors.n) { /* before $TRILLIAN_MIRRORS, as build's --mirror */
        char *all = joined(&mirrors), *env = getenv("TRILLIAN_MIRRORS");
        char *v = env && *env ? xasprintf("%s %s", all, env) : xstrdup(all);
        setenv("TRILLIAN_MIRRORS", v, 1);
        free(v);
        free(all);
    }
    strlist_free(&mirrors);
    char *cache = path_absolute(NULL, o.cache ? o.cache : cache_default_dir());
    o.cache = cache;
    key_set_cache_dir(cache);
    char *path = resolve_recipe(recipe);
    struct recipe *r = recipe_exists_or_say(recipe, path) ? recipe_load(path, NULL) : NULL;
    if (r)
        rc = bump_kernel(r, &o);
    recipe_free(r);
    free(path);
    free(cache);
    return rc;
}

/* `trillian boot`: the check's stage prepares the emulator's line in
 * OUT/boot-CHECK/ (bootcheck.c, TRILLIAN_BOOT_INTO) from the cache, without
 * publishing anything, and this process becomes that emulator. */
static int cmd_boot(struct recipe *r, struct build_opts *o, const char *want, bool persistent)
{
    const struct stage *check = NULL;
    struct strlist names = {0};
    for (size_t i = 0; i < r->nstages; i++) {
        const struct stage *st = r->stages[i];
        if (strcmp(st->section, "bootcheck") != 0)
            continue;
        strlist_push(&names, st->name);
        const char *img = st_str(st, "image");
        if (!check && (!want || !strcmp(st->name, want) || (img && !strcmp(img, want))))
            check = st;
    }
    if (!check) {
        if (names.n)
            fprintf(stderr, "trillian boot: recipe %s has no boot check or image '%s' (its "
                    "checks: %s%s)\n", r->name, want, names.v[0], names.n > 1 ? ", …" : "");
        else
            fprintf(stderr, "trillian boot: recipe %s has no boot checks, so Trillian does not "
                    "know how to start its images; add a bootcheck entry (docs/bootcheck.md)\n",
                    r->name);
        strlist_free(&names);
        return EXIT_USAGE;
    }
    strlist_free(&names);
    char *dir = xasprintf("%s/boot-%s", o->out, check->name);
    char *argvf = path_join(dir, "argv");
    if (mkdir_p(dir, 0755) < 0) {
        fprintf(stderr, "trillian boot: cannot create %s: %s\n", dir, strerror(errno));
        free(dir);
        free(argvf);
        return EXIT_USAGE;
    }
    unlink(argvf);
    setenv("TRILLIAN_BOOT_INTO", dir, 1);
    setenv("TRILLIAN_BOOT_PERSISTENT", persistent ? "1" : "0", 1);
    o->checks_only = true;
    o->only_check = check->name;
    o->out = dir; /* its logs; the stages stay in the cache */
    int rc = build_run(r, o);
    char *text = NULL;
    size_t len = 0;
    if (rc != 0 || read_file(argvf, &text, &len) < 0 || !len) {
        fprintf(stderr, "trillian boot: %s could not be prepared (exit %d); the logs are in "
                "%s/logs/\n", check->name, rc, dir);
        free(text);
        free(dir);
        free(argvf);
        return rc ? rc : EXIT_STAGE;
    }
    struct strlist argv = {0};
    for (size_t off = 0; off < len; off += strlen(text + off) + 1)
        strlist_push(&argv, text + off);
    free(text);
    fprintf(stderr, "trillian boot: %s%s; the console is this terminal, powering the guest "
            "off or Ctrl-C ends it\n", persistent ? "the image's writes are kept in " : "the "
            "image is booted read-only (snapshot)", persistent ? dir : "");
    run_log_argv((const char *const *)argv.v);
    if (chdir(dir) < 0) {
        fprintf(stderr, "trillian boot: cannot enter %s: %s\n", dir, strerror(errno));
        return EXIT_STAGE;
    }
    /* exec, not spawn: the emulator gets the terminal and Ctrl-C alone */
    struct run_command cmd = {.argv = (const char *const *)argv.v, .in = RUN_IN_INHERIT};
    run_exec(&cmd);
    fprintf(stderr, "trillian boot: cannot run %s: %s\n", argv.v[0], strerror(cmd.start_errno));
    strlist_free(&argv);
    free(dir);
    free(argvf);
    return EXIT_STAGE;
}

/* A file `trillian fetch` got (GOT, in the cache, pinned by SHA): printed,
 * and with TO copied there and listed in SUMS. 0, or 1 when it cannot be
 * copied. */
static int fetched(const char *got, const char *sha, const char *to, struct buf *sums)
{
    int bad = 0;
    if (to) { /* the cache's name: SHA16- keeps same-named files apart */
        const char *base = path_basename(got);
        char *dst = path_join(to, base);
        if (!path_exists(dst) && copy_file(got, dst) < 0) {
            fprintf(stderr, "trillian fetch: cannot copy %s to %s: %s\n", got, dst,
                    strerror(errno));
            bad = 1;
        } else {
            buf_printf(sums, "%s  %s\n", sha, base);
        }
        free(dst);
    }
    printf("%s\n", got);
    return bad;
}

/* `trillian fetch`: every download the stages declared (st_remote), through
 * the same fetch module a build uses; with --to, a mirror of them. A .dsc
 * brings the files it lists (a source package is all of them). */
static int cmd_fetch(const struct recipe *r, const char *cache, const char *to)
{
    struct stage_ctx cx = {.name = "fetch", .cache_dir = cache, .work = cache};
    if (mkdir_p(cache, 0755) < 0 || (to && mkdir_p(to, 0755) < 0)) {
        fprintf(stderr, "trillian fetch: cannot create %s: %s\n", to ? to : cache,
                strerror(errno));
        return EXIT_USAGE;
    }
    struct buf sums = BUF_INIT;
    int bad = 0;
    size_t listed = 0;
    for (size_t i = 0; i < r->remotes.n; i++) {
        char *f[4] = {0}, *copy = xstrdup(r->remotes.v[i]), *p = copy;
        for (int j = 0; j < 4 && p; j++) { /* SHA, NAME, URL, WHERE */
            f[j] = p;
            if ((p = j < 3 ? strchr(p, '\t') : NULL))
                *p++ = 0;
        }
        char *got = f[3] ? fetch_pinned(&cx, *f[2] ? f[2] : NULL, *f[1] ? f[1] : NULL, f[0],
                                        f[3]) : NULL;
        if (!got) {
            bad++;
        } else {
            bad += fetched(got, f[0], to, &sums);
            struct dsc_info info = {0};
            struct strlist paths = {0};
            if (*f[2] && str_ends(f[2], ".dsc") &&
                debfetch_dsc_files(&cx, got, f[2], f[3], &info, &paths))
                bad++;
            for (size_t j = 0; j < paths.n; j++, listed++)
                bad += fetched(paths.v[j], info.files[j].sha256, to, &sums);
            dsc_info_free(&info);
            strlist_free(&paths);
        }
        free(got);
        free(copy);
    }
    if (to && sums.n) { /* merged with what DIR listed before, one line per file */
        char *path = path_join(to, "SHA256SUMS"), *old = NULL;
        size_t len;
        struct strlist lines = {0};
        if (read_file(path, &old, &len) == 0)
            buf_puts(&sums, old);
        free(old);
        for (char *line = strtok(sums.p, "\n"); line; line = strtok(NULL, "\n"))
            if (!strlist_contains(&lines, line))
                strlist_push(&lines, line);
        strlist_sort(&lines);
        struct buf out = BUF_INIT;
        for (size_t i = 0; i < lines.n; i++)
            buf_printf(&out, "%s\n", lines.v[i]);
        if (write_file_atomic(path, out.p, out.n, 0644) < 0) {
            fprintf(stderr, "trillian fetch: cannot write %s: %s\n", path, strerror(errno));
            bad++;
        } else {
            printf("%s\n", path);
        }
        buf_free(&out);
        strlist_free(&lines);
        free(path);
    }
    buf_free(&sums);
    printf("%zu inputs, %d failed\n", r->remotes.n + listed, bad);
    return bad ? EXIT_STAGE : EXIT_OK;
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
        struct buf why = BUF_INIT;
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

/* trillian publish OUT... --to DIR [--sign KEY] [--cache DIR] */
static int cmd_publish(int argc, char **argv)
{
    struct release_opts o = {0};
    struct strlist outs = {0};
    int rc = EXIT_OK;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        const char *a = argv[i];
        const char **dst = !strcmp(a, "--to") ? &o.to : !strcmp(a, "--sign") ? &o.sign
                         : !strcmp(a, "--cache") ? &o.cache : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout, "publish");
            strlist_free(&outs);
            return EXIT_OK;
        } else if (dst) {
            if (i + 1 >= argc || !*argv[i + 1]) {
                fprintf(stderr, "trillian publish: %s needs a value (see trillian help publish)\n", a);
                rc = EXIT_USAGE;
            } else {
                *dst = argv[++i];
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "trillian publish: unknown option %s (see trillian help publish)\n", a);
            rc = EXIT_USAGE;
        } else {
            strlist_push(&outs, a);
        }
    }
    if (rc == EXIT_OK && (!outs.n || !o.to)) {
        fprintf(stderr, "trillian publish: %s (see trillian help publish)\n",
                !outs.n ? "name at least one build output directory" : "--to DIR is required");
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK && o.sign && !path_exists(o.sign)) {
        fprintf(stderr, "trillian publish: --sign %s: no such file (an OpenSSH private key: "
                "ssh-keygen -t ed25519 -f KEY)\n", o.sign);
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK) {
        o.outs = (const char *const *)outs.v;
        o.nouts = outs.n;
        if (!o.cache)
            o.cache = cache_default_dir();
        rc = release_publish(&o);
    }
    strlist_free(&outs);
    return rc;
}

/* The substituters of --substituter and TRILLIAN_SUBSTITUTERS, trusting
 * the keys of --trust and the config file. -1: a usage error, said. */
static int subst_setup(struct cli *c, const char *cache, struct substituters *s)
{
    struct strlist urls = {0}, trust = {0};
    for (size_t i = 0; i < c->substs.n; i++)
        strlist_push(&urls, c->substs.v[i]);
    const char *env = getenv("TRILLIAN_SUBSTITUTERS");
    char *copy = xstrdup(env ? env : ""), *save = NULL;
    for (char *u = strtok_r(copy, " \t\n", &save); u; u = strtok_r(NULL, " \t\n", &save))
        strlist_push(&urls, u);
    free(copy);
    for (size_t i = 0; i < c->trust.n; i++)
        strlist_push(&trust, c->trust.v[i]);
    char *conf = subst_config_trust();
    if (path_exists(conf))
        strlist_push(&trust, conf);
    free(conf);
    int rc = subst_init(s, &urls, &trust, cache, stderr);
    c->b.subst = rc == 0 && subst_active(s) ? s : NULL;
    strlist_free(&urls);
    strlist_free(&trust);
    return rc;
}

/* ---- misspelt names: one line saying what is wrong and what is right -- */

/* The commands, for messages and completion: those with a usage text, and
 * help. */
static void command_names(struct strlist *out)
{
    for (size_t i = 0; i < ARRAY_LEN(usage_cmds); i++)
        strlist_push(out, usage_cmds[i].cmd);
    strlist_push(out, "help");
}

static char *joined(const struct strlist *l)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < l->n; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", l->v[i]);
    return buf_detach(&b);
}

/* ", did you mean 'X'?" or "" (static storage, one message at a time). */
static const char *dym_text(const char *word, const struct strlist *cands)
{
    static char text[256];
    const char *d = did_you_mean(word, (const char *const *)cands->v, cands->n);
    snprintf(text, sizeof text, d ? "did you mean '%s'? " : "%s", d ? d : "");
    return text;
}

static void unknown_command(const char *cmd)
{
    struct strlist names = {0};
    command_names(&names);
    char *all = joined(&names);
    fprintf(stderr, "trillian: unknown command '%s' (%sexpected one of: %s)\n", cmd,
            dym_text(cmd, &names), all);
    free(all);
    strlist_free(&names);
}

/* `help TOPIC`: a command, or `stages`; anything else is a usage error. */
static bool help_topic_known(const char *topic)
{
    struct strlist names = {0};
    command_names(&names);
    strlist_push(&names, "stages");
    bool ok = strlist_contains(&names, topic);
    if (!ok) {
        char *all = joined(&names);
        fprintf(stderr, "trillian help: no help on '%s' (%sexpected one of: %s)\n", topic,
                dym_text(topic, &names), all);
        free(all);
    }
    strlist_free(&names);
    return ok;
}

/* The shipped recipes' names (recipes/NAME.cfg in the data directory). */
static void shipped_recipes(struct strlist *out)
{
    char *dir = trillian_data_path("recipes");
    struct strlist files = {0};
    dir_list(dir, &files);
    for (size_t i = 0; i < files.n; i++)
        if (str_ends(files.v[i], ".cfg"))
            strlist_push_owned(out, xstrndup(files.v[i], strlen(files.v[i]) - 4));
    strlist_sort(out);
    strlist_free(&files);
    free(dir);
}

/* A RECIPE argument that is neither a file nor a shipped recipe's name. */
static bool recipe_exists_or_say(const char *arg, const char *path)
{
    if (path_exists(path))
        return true;
    if (strchr(arg, '/')) /* a path: recipe_load says it is not there */
        return true;
    struct strlist names = {0};
    shipped_recipes(&names);
    char *base = str_ends(arg, ".cfg") ? xstrndup(arg, strlen(arg) - 4) : xstrdup(arg);
    fprintf(stderr, "trillian: %s: recipe not found: no such file, and no shipped recipe of "
            "that name (%s`trillian list` shows them)\n", arg, dym_text(base, &names));
    free(base);
    strlist_free(&names);
    return false;
}

/* --force STAGE must name a stage of the recipe. */
static bool force_ok(const struct recipe *r, const struct strlist *force)
{
    for (size_t i = 0; i < force->n; i++) {
        if (recipe_stage(r, force->v[i]))
            continue;
        struct strlist names = {0};
        for (size_t j = 0; j < r->nstages; j++)
            strlist_push(&names, r->stages[j]->name);
        fprintf(stderr, "trillian: --force %s: recipe %s has no stage of that name (%s"
                "`trillian plan` lists them)\n", force->v[i], r->name,
                dym_text(force->v[i], &names));
        strlist_free(&names);
        return false;
    }
    return true;
}

/* ---- shell completion ---------------------------------------------------- */

/* The long options each command takes, for completion (parse() accepts the
 * build options for plan, check and fetch too; these are the ones that mean
 * something there). */
static const struct {
    const char *cmd, *opts;
} complete_opts[] = {
    {"build", "--output --jobs --cache --set --force --keep-going --ccache --distcc --mirror "
              "--offline --substituter --trust --help"},
    {"check", "--output --jobs --cache --set --force --keep-going --ccache --distcc --mirror "
              "--offline --substituter --trust --help"},
    {"plan", "--cache --set --force --mirror --offline --substituter --trust --json --help"},
    {"publish", "--to --sign --cache --help"},
    {"fetch", "--to --cache --set --mirror --offline --help"},
    {"list", "--json --help"},
    {"clean", "--output --cache --older-than --set --help"},
    {"report", "--matrix --output --help"},
    {"cache", "--cache --repair --help"}, /* after `cache verify` */
    {"kernel-bump", "--url --sha256 --force --cache --mirror --help"},
};

/* `trillian __complete WHAT [ARG]`, hidden, for tools/trillian.bash: one
 * candidate a line. WHAT: commands, help (topics), recipes, options CMD,
 * stages [RECIPE], keys [RECIPE] (RECIPE as the command line gives it,
 * default the default recipe). A recipe with errors gives nothing. */
static int cmd_complete(int argc, char **argv)
{
    const char *what = argc > 0 ? argv[0] : "", *arg = argc > 1 ? argv[1] : NULL;
    struct strlist out = {0};
    int rc = EXIT_OK;
    if (!strcmp(what, "commands") || !strcmp(what, "help")) {
        command_names(&out);
        if (!strcmp(what, "help"))
            strlist_push(&out, "stages");
    } else if (!strcmp(what, "recipes")) {
        shipped_recipes(&out);
    } else if (!strcmp(what, "options")) {
        for (size_t i = 0; arg && i < ARRAY_LEN(complete_opts); i++) {
            if (strcmp(complete_opts[i].cmd, arg))
                continue;
            char *o = xstrdup(complete_opts[i].opts), *t = o, *w;
            while ((w = strsep(&t, " ")))
                strlist_push(&out, w);
            free(o);
        }
    } else if (!strcmp(what, "stages") || !strcmp(what, "keys")) {
        char *path = resolve_recipe(arg);
        int err = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0) /* a half-typed command line: its recipe errors are noise here */
            dup2(null, 2);
        struct recipe *r = path_exists(path) ? recipe_load(path, NULL) : NULL;
        if (err >= 0) {
            dup2(err, 2);
            close(err);
        }
        if (null >= 0)
            close(null);
        for (size_t i = 0; r && !strcmp(what, "stages") && i < r->nstages; i++)
            strlist_push(&out, r->stages[i]->name);
        if (r && !strcmp(what, "keys"))
            recipe_settable_keys(r, &out);
        recipe_free(r);
        free(path);
    } else {
        fprintf(stderr, "trillian __complete: '%s': expected commands, help, recipes, options "
                "CMD, stages [RECIPE] or keys [RECIPE]\n", what);
        rc = EXIT_USAGE;
    }
    for (size_t i = 0; i < out.n; i++)
        puts(out.v[i]);
    strlist_free(&out);
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
        if (argc > 2 && !help_topic_known(argv[2]))
            return EXIT_USAGE;
        usage(stdout, argc > 2 ? argv[2] : NULL);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("trillian %s (commit %s)\n", TRILLIAN_VERSION, TRILLIAN_COMMIT);
        printf("data: %s (%s%s)\n", trillian_data_dir(), trillian_data_source(),
               trillian_data_present() ? "" : "; missing");
        return EXIT_OK;
    }
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 2, argv + 2);
    if (!strcmp(cmd, "cache"))
        return cmd_cache(argc - 2, argv + 2);
    if (!strcmp(cmd, "kernel-bump"))
        return cmd_kernel_bump(argc - 2, argv + 2);
    if (!strcmp(cmd, "publish"))
        return cmd_publish(argc - 2, argv + 2);
    if (!strcmp(cmd, "__complete"))
        return cmd_complete(argc - 2, argv + 2);
    if (!strcmp(cmd, NETSERVE_COMMAND)) /* a netboot check's server (bootcheck.c) */
        return netserve_main(argc - 2, argv + 2);
    if (!strcmp(cmd, HTTPSERVE_COMMAND)) /* a boot check's HTTP server (`http`) */
        return http_serve_main(argc - 2, argv + 2);
    bool known = false;
    for (size_t i = 0; i < ARRAY_LEN(usage_cmds); i++)
        known |= strcmp(usage_cmds[i].cmd, cmd) == 0;
    if (!known) {
        unknown_command(cmd);
        return EXIT_USAGE;
    }
    struct cli c = {0};
    int rc = parse(argc - 1, argv + 1, cmd, &c);
    if (rc != EXIT_OK)
        return rc;
    if (!trillian_data_present()) {
        /* every command here reads recipes, fragments or firmware from it */
        fprintf(stderr, "trillian: the data directory %s (%s) is missing: reinstall Trillian "
                "(make install, or apt install --reinstall trillian) or set TRILLIAN_DATA to a "
                "directory with recipes/, kernel-config/, overlays/ and firmware/\n",
                trillian_data_dir(), trillian_data_source());
        strlist_free(&c.sets);
        strlist_free(&c.b.force);
        return EXIT_USAGE;
    }
    if (!strcmp(cmd, "list"))
        return cmd_list(c.json);
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
    answers_set_cache_dir(c.b.cache);
    struct recipe *r = c.recipe && !recipe_exists_or_say(c.recipe, path) ? NULL
                     : recipe_load(path, &c.sets);
    free(path);
    if (r && !force_ok(r, &c.b.force)) {
        recipe_free(r);
        r = NULL;
    }
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
    struct substituters subst = {0};
    bool substitutes = !strcmp(cmd, "build") || !strcmp(cmd, "check") || !strcmp(cmd, "plan") ||
                       !strcmp(cmd, "boot");
    if (substitutes && subst_setup(&c, cache, &subst) < 0) {
        rc = EXIT_USAGE;
    } else if (fetch_offline() && strcmp(cmd, "fetch") != 0 && recipe_check_offline(r, cache) > 0) {
        fprintf(stderr, "trillian %s: offline, and the inputs above are missing: nothing was "
                "built\n", cmd);
        rc = EXIT_USAGE;
    } else if (!strcmp(cmd, "boot")) {
        rc = cmd_boot(r, &c.b, c.check, c.persistent);
    } else if (!strcmp(cmd, "fetch")) {
        rc = cmd_fetch(r, cache, c.to);
    } else if (!strcmp(cmd, "plan")) {
        rc = cmd_plan(r, &c.b, c.json);
    } else if (!strcmp(cmd, "check") && !recipe_has_section(r, "bootcheck")) {
        /* else it would print "ok: 0 stages" and exit 0: a pass for nothing */
        fprintf(stderr, "trillian check: recipe %s (%s) has no boot checks: nothing to run (add a "
                "bootcheck section, see `trillian help stages`; `trillian build` builds it)\n",
                r->name, r->file);
        rc = EXIT_USAGE;
    } else {
        c.b.checks_only = !strcmp(cmd, "check");
        rc = build_run(r, &c.b);
    }
    subst_free(&subst);
    strlist_free(&c.substs);
    strlist_free(&c.trust);
    recipe_free(r);
    free(out);
    free(cache);
    strlist_free(&c.sets);
    strlist_free(&c.b.force);
    return rc;
}
