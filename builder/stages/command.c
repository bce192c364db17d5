/* The generic `command` stage: runs a user's argv with declared input files
 * and outputs, so recipes can add their own steps to the graph.
 * In argv and env, ${out}, ${work}, ${keep}, ${recipe_dir}, ${jobs} and
 * ${stage:NAME} (the output directory of stage NAME, which becomes a
 * dependency) are replaced by Trillian; nothing goes through a shell. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "stage.h"

static const struct field fields[] = {
    {"argv", F_STRING_LIST, true, NULL, NULL, "the program and its arguments"},
    {"inputs", F_PATH_LIST, false, NULL, NULL, "input files or trees, hashed into the key"},
    {"outputs", F_STRING_LIST, true, NULL, NULL, "files the command creates below ${out}"},
    {"env", F_STRING_LIST, false, NULL, NULL, "extra environment, \"NAME=value\""},
    {0},
};

/* Calls fn for every ${stage:NAME} reference in s. */
static void each_stage_ref(const char *s, void (*fn)(void *, const char *), void *arg)
{
    for (const char *p = strstr(s, "${stage:"); p; p = strstr(p + 1, "${stage:")) {
        const char *name = p + 8, *end = strchr(name, '}');
        if (!end)
            return;
        char *n = strndup(name, (size_t)(end - name));
        fn(arg, n);
        free(n);
    }
}

static void need_ref(void *st, const char *name) { st_need(st, name); }

static int declare(struct stage *st)
{
    struct strlist l = {0};
    if (st_list(st, "argv", &l) == 0) {
        strlist_free(&l);
        return st_error(st, "argv", "empty (expected at least the program to run)");
    }
    size_t nargv = l.n; /* l: argv, then env */
    st_list(st, "env", &l);
    for (size_t i = 0; i < l.n; i++) {
        each_stage_ref(l.v[i], need_ref, st);
        if (i >= nargv && (!strchr(l.v[i], '=') || l.v[i][0] == '='))
            st_error(st, "env", "'%s' is not NAME=value", l.v[i]);
        if (strstr(l.v[i], "${") && !strstr(l.v[i], "${out}") && !strstr(l.v[i], "${work}") &&
            !strstr(l.v[i], "${keep}") && !strstr(l.v[i], "${recipe_dir}") &&
            !strstr(l.v[i], "${jobs}") && !strstr(l.v[i], "${stage:"))
            st_error(st, "argv", "'%s' has an unknown ${…} (expected ${out}, ${work}, ${keep}, "
                     "${recipe_dir}, ${jobs} or ${stage:NAME})", l.v[i]);
    }
    strlist_free(&l);
    /* The program itself is an input: a different binary, a different key. */
    struct strlist argv = {0};
    st_list(st, "argv", &argv);
    if (argv.n && !strstr(argv.v[0], "${"))
        st_tool(st, argv.v[0]);
    strlist_free(&argv);
    struct strlist outs = {0};
    st_list(st, "outputs", &outs);
    for (size_t i = 0; i < outs.n; i++) {
        /* "" and "." name ${out} itself: always present, so never checked */
        const char *o = outs.v[i];
        if (o[0] == '/' || strstr(o, "..") || !o[0] || !strcmp(o, ".") || str_starts(o, "./") ||
            strstr(o, "/./") || str_ends(o, "/.") || strstr(o, "//"))
            st_error(st, "outputs", "'%s' must be a relative path below ${out}, naming a file "
                     "(not \"\" or \".\")", o);
        st_output(st, outs.v[i]);
    }
    strlist_free(&outs);
    return 0;
}

static char *expand(const struct stage_ctx *cx, const char *s)
{
    struct buf b = BUF_INIT;
    while (*s) {
        if (s[0] == '$' && s[1] == '{') {
            const char *end = strchr(s, '}');
            if (end) {
                char *name = strndup(s + 2, (size_t)(end - s - 2));
                const char *val = NULL;
                char jobs[16];
                if (!strcmp(name, "out"))
                    val = cx->out;
                else if (!strcmp(name, "work"))
                    val = cx->work;
                else if (!strcmp(name, "keep"))
                    val = cx->keep;
                else if (!strcmp(name, "recipe_dir"))
                    val = cx->recipe_dir;
                else if (!strcmp(name, "jobs")) {
                    snprintf(jobs, sizeof jobs, "%d", cx->jobs);
                    val = jobs;
                } else if (!strncmp(name, "stage:", 6))
                    val = cx_dep(cx, name + 6);
                free(name);
                if (val) {
                    buf_puts(&b, val);
                    s = end + 1;
                    continue;
                }
            }
        }
        buf_add(&b, s, 1);
        s++;
    }
    return buf_detach(&b);
}

static int run(struct stage_ctx *cx)
{
    struct strlist raw = {0}, argv = {0}, rawenv = {0}, env = {0};
    cx_list(cx, "argv", &raw);
    cx_list(cx, "env", &rawenv);
    for (size_t i = 0; i < raw.n; i++)
        strlist_push_owned(&argv, expand(cx, raw.v[i]));
    for (size_t i = 0; i < rawenv.n; i++)
        strlist_push_owned(&env, expand(cx, rawenv.v[i]));
    int rc = cx_run_in(cx, cx->work, (const char *const *)env.v, (const char *const *)argv.v);
    strlist_free(&raw);
    strlist_free(&argv);
    strlist_free(&rawenv);
    strlist_free(&env);
    if (rc == STAGE_SKIPPED) {
        /* not an error: the engine shows the command's last line as the reason */
        cx_log(cx, "stage %s: the command exited 77: skipped", cx->name);
        return rc;
    }
    if (rc != 0) {
        char *how = rc < 0 ? xstrdup("could not be started")
                    : rc > 128 ? xasprintf("was killed by signal %d", rc - 128)
                               : xasprintf("exited with status %d", rc);
        /* the error line alone is the build summary's reason; the advice after it */
        cx_fail(cx, "the command %s", how);
        cx_log(cx, "see the log above; fix the recipe's argv or its inputs");
        free(how);
        return rc > 0 && rc < 128 ? rc : 1;
    }
    return 0;
}

const struct stage_kind stage_command = {
    .name = "command",
    .section = "stages",
    .version = 1,
    .summary = "run a program from an argv list, with declared inputs and outputs",
    .fields = fields,
    .declare = declare,
    .run = run,
};
