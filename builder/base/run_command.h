/* Running other programs: the one place Trillian spawns a command (from an
 * argv array, never through a shell) and the one place it looks a program
 * up on PATH.
 *
 * Fill a struct run_command (zero means the default for every field), then
 * either run_command() for start-and-wait, or run_start() and later
 * run_finish() (or, for a child that talks over a pty or pipes and is
 * reaped by its owner, run_start() alone). */
#ifndef TRILLIAN_RUN_COMMAND_H
#define TRILLIAN_RUN_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

enum run_in {
    RUN_IN_NULL,    /* /dev/null (default) */
    RUN_IN_FD,      /* in_fd */
    RUN_IN_INHERIT, /* the caller's stdin (a terminal the command is to use) */
};

enum run_out {
    RUN_OUT_INHERIT, /* the caller's stdout (in a stage: its log) */
    RUN_OUT_FD,      /* out_fd */
    RUN_OUT_CAPTURE, /* into ->output, a NUL-terminated string */
    RUN_OUT_NULL,    /* /dev/null */
};

enum run_err {
    RUN_ERR_INHERIT, /* the caller's stderr (in a stage: its log) */
    RUN_ERR_TO_OUT,  /* wherever stdout goes, captured text included */
    RUN_ERR_NULL,    /* /dev/null */
};

struct run_command {
    /* ---- set by the caller ---- */
    const char *const *argv; /* argv[0] is looked up on the caller's PATH */
    const char *cwd;         /* NULL: the caller's */
    const char *const *env;  /* "K=V" entries added to (or replacing in) the
                                caller's environment; NULL-terminated, or NULL */
    enum run_in in;
    int in_fd;
    enum run_out out;
    int out_fd;
    enum run_err err;
    /* "$ ARGV" (quoted so it can be pasted into a shell) on stderr before
     * the start, and on stderr after: why it could not start, how long it
     * took when that is a second or more, its failure. In a stage stderr is
     * the log, and the last "$ " line there names the failing command. */
    bool log;
    bool new_session;  /* setsid(): a process group of its own, no terminal */
    bool ctty;         /* with new_session: stdin becomes its controlling tty */
    int pdeathsig;     /* signal it gets when the caller dies (and it does not
                          start at all when the caller is already gone); 0: none */

    /* ---- results ---- */
    pid_t pid;         /* after run_start */
    int start_errno;   /* why it could not start (run_start returned -1) */
    int wstatus;       /* waitpid status, after run_finish */
    char *output;      /* RUN_OUT_CAPTURE: after run_finish, always a string
                          (possibly ""); the caller frees it */

    /* ---- private ---- */
    int capture_fd;
    char *text;
    double t0;
};

/* Starts the command. 0, or -1 with start_errno set (also logged with
 * ->log): no such program, a cwd that is not there, no fork. */
int run_start(struct run_command *cmd);
/* Waits for a started command (collecting captured output). Returns its exit
 * status, 128 + N when signal N ended it, or -1 when it did not start. */
int run_finish(struct run_command *cmd);
/* run_start, then run_finish. */
int run_command(struct run_command *cmd);
/* Replaces this process with the command (exec, no fork), set up as
 * run_start would set up the child. Returns only when that failed: -1 with
 * start_errno set (and logged with ->log). */
int run_exec(struct run_command *cmd);
/* Frees what the struct holds (->output included). */
void run_command_clear(struct run_command *cmd);

/* A query at plan time, where there is no stage log: stdin and stderr on
 * /dev/null, stdout into *OUT (a string, possibly "", even on failure).
 * Returns the exit status, or -1 when it did not run or a signal ended it. */
int run_capture_quiet(const char *const *argv, char **out);

/* Prints "$ ARGV" on stderr as ->log does, for a command that is started
 * with ->log off because its owner reports start failures itself. */
void run_log_argv(const char *const *argv);
/* ARGV as one line a shell would read back the same (new string). */
char *run_argv_text(const char *const *argv);
/* A wait status as a shell reports it: the exit status, or 128 + signal. */
int run_status(int wstatus);

/* Where PROGRAM is: a name with a '/' is taken as it is; any other is
 * looked for in FIRST_DIR (when not NULL), then each directory of $PATH
 * (/usr/local/bin:/usr/bin:/bin when it is unset or empty), then, with
 * RUN_FIND_SBIN, /usr/sbin and /sbin (mkfs and friends, which a plain user's
 * PATH often lacks). Relative PATH entries are skipped: the current
 * directory at plan time is not the one at run time. The first executable
 * regular file wins. Returns its absolute path (new string) or NULL. */
#define RUN_FIND_SBIN 1u
char *run_find_program(const char *program, const char *first_dir, unsigned flags);

/* "PATH=DIR:$PATH" (DIR formatted from FMT; $PATH /usr/bin:/bin when unset),
 * for a command's env; an empty DIR gives "PATH=$PATH". New string. */
char *run_path_env(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
