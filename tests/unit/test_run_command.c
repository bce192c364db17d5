/* run_command.h: capture, exit status, a program that is not there, cwd,
 * env, stderr merged or not, the log lines, and the PATH lookup. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/run_command.h"
#include "base/util.h"

/* Runs CMD with stderr on a file and returns what went there (new string). */
static char *stderr_of(struct run_command *cmd, int *rc)
{
    char tmpl[] = "/tmp/test-run-command-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    unlink(tmpl);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    *rc = run_command(cmd);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    struct buf b = {0};
    char tmp[4096];
    ssize_t n;
    while ((n = read(fd, tmp, sizeof tmp)) > 0)
        buf_add(&b, tmp, (size_t)n);
    close(fd);
    buf_add(&b, "", 0);
    return b.p;
}

static void captures_stdout(void **state)
{
    (void)state;
    const char *argv[] = {"printf", "one\\ntwo\\n", NULL};
    struct run_command cmd = {.argv = argv, .out = RUN_OUT_CAPTURE};
    assert_int_equal(run_command(&cmd), 0);
    assert_string_equal(cmd.output, "one\ntwo\n");
    run_command_clear(&cmd);
    assert_null(cmd.output);

    /* no output is "", not NULL */
    const char *t[] = {"true", NULL};
    struct run_command c2 = {.argv = t, .out = RUN_OUT_CAPTURE};
    assert_int_equal(run_command(&c2), 0);
    assert_string_equal(c2.output, "");
    run_command_clear(&c2);

    /* more than a pipe holds: the capture must not deadlock */
    const char *big[] = {"head", "-c", "300000", "/dev/zero", NULL};
    struct run_command c3 = {.argv = big, .out = RUN_OUT_CAPTURE};
    assert_int_equal(run_command(&c3), 0);
    run_command_clear(&c3);
}

static void reports_exit_status_and_signal(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "exit 7", NULL};
    struct run_command cmd = {.argv = argv};
    assert_int_equal(run_command(&cmd), 7);
    assert_true(WIFEXITED(cmd.wstatus));
    run_command_clear(&cmd);

    const char *sig[] = {"sh", "-c", "kill -TERM $$", NULL};
    struct run_command c2 = {.argv = sig};
    assert_int_equal(run_command(&c2), 128 + SIGTERM);
    run_command_clear(&c2);

    char *out = NULL;
    const char *q[] = {"sh", "-c", "echo hi; echo err >&2; exit 3", NULL};
    assert_int_equal(run_capture_quiet(q, &out), 3);
    assert_string_equal(out, "hi\n");
    free(out);
    assert_int_equal(run_capture_quiet(sig, &out), -1);
    assert_string_equal(out, "");
    free(out);
}

static void a_missing_program_does_not_start(void **state)
{
    (void)state;
    const char *argv[] = {"trillian-no-such-program", "x", NULL};
    struct run_command cmd = {.argv = argv, .out = RUN_OUT_CAPTURE};
    assert_int_equal(run_start(&cmd), -1);
    assert_int_equal(cmd.start_errno, ENOENT);
    assert_int_equal(run_finish(&cmd), -1);
    assert_string_equal(cmd.output, "");
    run_command_clear(&cmd);

    /* with ->log: the command line, then what to do about it */
    struct run_command c2 = {.argv = argv, .log = true};
    int rc;
    char *err = stderr_of(&c2, &rc);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "$ trillian-no-such-program x\n"));
    assert_non_null(strstr(err, "cannot run trillian-no-such-program: No such file or directory "
                                "(is it installed?"));
    free(err);
    run_command_clear(&c2);

    char *out = NULL;
    assert_int_equal(run_capture_quiet(argv, &out), -1);
    free(out);

    /* a cwd that is not there is a start failure too */
    const char *t[] = {"true", NULL};
    struct run_command c3 = {.argv = t, .cwd = "/nonexistent/dir"};
    assert_int_equal(run_command(&c3), -1);
    assert_int_equal(c3.start_errno, ENOENT);
    run_command_clear(&c3);
}

static void logs_the_command_once_and_its_failure(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "echo out; exit 2", "a b", NULL};
    struct run_command cmd = {.argv = argv, .log = true, .out = RUN_OUT_CAPTURE};
    int rc;
    char *err = stderr_of(&cmd, &rc);
    assert_int_equal(rc, 2);
    assert_string_equal(cmd.output, "out\n");
    const char *line = "$ sh -c 'echo out; exit 2' 'a b'\n";
    char *first = strstr(err, line);
    assert_non_null(first);
    assert_null(strstr(first + 1, "$ sh")); /* once */
    assert_non_null(strstr(err, "trillian: command failed (exit status 2): sh -c"));
    free(err);
    run_command_clear(&cmd);

    char *text = run_argv_text(argv);
    assert_string_equal(text, "sh -c 'echo out; exit 2' 'a b'");
    free(text);
}

static void runs_in_cwd(void **state)
{
    (void)state;
    const char *argv[] = {"pwd", NULL};
    struct run_command cmd = {.argv = argv, .cwd = "/tmp", .out = RUN_OUT_CAPTURE};
    assert_int_equal(run_command(&cmd), 0);
    char *real = realpath("/tmp", NULL);
    char *want = xasprintf("%s\n", real);
    assert_string_equal(cmd.output, want);
    free(want);
    free(real);
    run_command_clear(&cmd);
}

static void adds_and_overrides_env(void **state)
{
    (void)state;
    setenv("TRILLIAN_TEST_KEEP", "kept", 1);
    setenv("TRILLIAN_TEST_OVER", "old", 1);
    const char *env[] = {"TRILLIAN_TEST_OVER=new", "TRILLIAN_TEST_ADD=added", NULL};
    const char *argv[] = {"sh", "-c",
                          "echo $TRILLIAN_TEST_KEEP $TRILLIAN_TEST_OVER $TRILLIAN_TEST_ADD", NULL};
    struct run_command cmd = {.argv = argv, .env = env, .out = RUN_OUT_CAPTURE};
    assert_int_equal(run_command(&cmd), 0);
    assert_string_equal(cmd.output, "kept new added\n");
    run_command_clear(&cmd);
    assert_string_equal(getenv("TRILLIAN_TEST_OVER"), "old"); /* the caller's is untouched */
    unsetenv("TRILLIAN_TEST_KEEP");
    unsetenv("TRILLIAN_TEST_OVER");
}

static void merges_stderr_or_not(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "echo a; echo b >&2; echo c", NULL};
    struct run_command cmd = {.argv = argv, .out = RUN_OUT_CAPTURE, .err = RUN_ERR_TO_OUT};
    assert_int_equal(run_command(&cmd), 0);
    assert_string_equal(cmd.output, "a\nb\nc\n");
    run_command_clear(&cmd);

    struct run_command c2 = {.argv = argv, .out = RUN_OUT_CAPTURE, .err = RUN_ERR_NULL};
    assert_int_equal(run_command(&c2), 0);
    assert_string_equal(c2.output, "a\nc\n");
    run_command_clear(&c2);

    /* not merged: stderr stays the caller's */
    struct run_command c3 = {.argv = argv, .out = RUN_OUT_CAPTURE};
    int rc;
    char *err = stderr_of(&c3, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(c3.output, "a\nc\n");
    assert_string_equal(err, "b\n");
    free(err);
    run_command_clear(&c3);
}

static void stdin_is_null_or_an_fd(void **state)
{
    (void)state;
    const char *argv[] = {"cat", NULL};
    struct run_command cmd = {.argv = argv, .out = RUN_OUT_CAPTURE};
    assert_int_equal(run_command(&cmd), 0);
    assert_string_equal(cmd.output, "");
    run_command_clear(&cmd);

    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "piped\n", 6), 6);
    close(p[1]);
    struct run_command c2 = {.argv = argv, .in = RUN_IN_FD, .in_fd = p[0],
                             .out = RUN_OUT_CAPTURE};
    assert_int_equal(run_start(&c2), 0);
    close(p[0]);
    assert_true(c2.pid > 0);
    assert_int_equal(run_finish(&c2), 0);
    assert_string_equal(c2.output, "piped\n");
    run_command_clear(&c2);

    /* stdout on an fd */
    char tmpl[] = "/tmp/test-run-command-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    const char *e[] = {"echo", "to fd", NULL};
    struct run_command c3 = {.argv = e, .out = RUN_OUT_FD, .out_fd = fd};
    assert_int_equal(run_command(&c3), 0);
    close(fd);
    char *text = NULL;
    assert_int_equal(read_file(tmpl, &text, NULL), 0);
    assert_string_equal(text, "to fd\n");
    free(text);
    unlink(tmpl);
    run_command_clear(&c3);
}

/* run_exec replaces the process, so it is tried in a forked child. */
static void exec_replaces_the_process(void **state)
{
    (void)state;
    const char *env[] = {"TRILLIAN_TEST_CODE=5", NULL};
    const char *argv[] = {"sh", "-c", "exit $TRILLIAN_TEST_CODE", NULL};
    const char *missing[] = {"trillian-no-such-program", NULL};
    for (int i = 0; i < 2; i++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            struct run_command cmd = {.argv = i ? missing : argv, .env = env,
                                      .in = RUN_IN_INHERIT};
            run_exec(&cmd);
            _exit(cmd.start_errno == ENOENT ? 99 : 98);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), i ? 99 : 5);
    }
}

static void finds_programs(void **state)
{
    (void)state;
    char dir[] = "/tmp/test-run-command-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *prog = path_join(dir, "trillian-test-tool");
    assert_int_equal(write_file_atomic(prog, "#!/bin/sh\n", 10, 0755), 0);
    char *sub = path_join(dir, "trillian-test-dir");
    assert_int_equal(mkdir(sub, 0755), 0);

    char *old = xstrdup(getenv("PATH"));
    char *path = xasprintf("relative:%s:%s", dir, old);
    setenv("PATH", path, 1);
    char *f = run_find_program("trillian-test-tool", NULL, 0);
    assert_non_null(f);
    assert_string_equal(f, prog);
    free(f);
    /* a directory is not a program */
    assert_null(run_find_program("trillian-test-dir", NULL, 0));
    /* FIRST_DIR comes before PATH */
    setenv("PATH", old, 1);
    assert_null(run_find_program("trillian-test-tool", NULL, 0));
    f = run_find_program("trillian-test-tool", dir, 0);
    assert_string_equal(f, prog);
    free(f);
    /* a path is taken as it is */
    f = run_find_program(prog, NULL, 0);
    assert_string_equal(f, prog);
    free(f);
    assert_null(run_find_program("/nonexistent/tool", NULL, 0));
    assert_null(run_find_program("", NULL, 0));
    /* relative PATH entries are skipped */
    char *cwd = getcwd(NULL, 0);
    assert_int_equal(chdir(dir), 0);
    setenv("PATH", ".:trillian-test-dir", 1);
    assert_null(run_find_program("trillian-test-tool", NULL, 0));
    assert_int_equal(chdir(cwd), 0);
    free(cwd);
    setenv("PATH", "/nonexistent", 1);
    assert_null(run_find_program("sh", NULL, 0));

    /* PATH=DIR:$PATH */
    char *e = run_path_env("%s/bin", "/opt/tc");
    assert_string_equal(e, "PATH=/opt/tc/bin:/nonexistent");
    free(e);
    e = run_path_env("%s", "");
    assert_string_equal(e, "PATH=/nonexistent");
    free(e);
    setenv("PATH", old, 1);

    free(path);
    free(old);
    rm_rf(dir);
    free(prog);
    free(sub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(captures_stdout),
        cmocka_unit_test(reports_exit_status_and_signal),
        cmocka_unit_test(a_missing_program_does_not_start),
        cmocka_unit_test(logs_the_command_once_and_its_failure),
        cmocka_unit_test(runs_in_cwd),
        cmocka_unit_test(adds_and_overrides_env),
        cmocka_unit_test(merges_stderr_or_not),
        cmocka_unit_test(stdin_is_null_or_an_fd),
        cmocka_unit_test(exec_replaces_the_process),
        cmocka_unit_test(finds_programs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
