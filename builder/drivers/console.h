/* The console driver for boot checks: runs an emulator as a child with its
 * serial console on a pipe pair or a pty, keeps the whole transcript, matches
 * POSIX extended regexes against what arrived since the last match, sends
 * lines, and runs a list of steps (wait / expect / send / exit) from the
 * recipe or from a named profile.
 *
 * Matching works on a cleaned copy of the console text: carriage returns,
 * NUL bytes and ANSI escape sequences (CSI "ESC [ ... final", OSC
 * "ESC ] ... BEL/ST" and two-byte "ESC x") are dropped, so "^x86_64$" matches
 * a line the guest printed as "x86_64\r\n". Regexes are compiled with
 * REG_EXTENDED | REG_NEWLINE: '^' and '$' match at line starts and ends, '.'
 * does not match a newline. The text searched starts after the previous
 * match; a send also moves that start to the end of what has arrived, so an
 * expectation after a send only sees output that came after it. The raw
 * transcript (every byte the emulator wrote, stdout and stderr) is written to
 * the log file as it arrives. */
#ifndef TRILLIAN_CONSOLE_H
#define TRILLIAN_CONSOLE_H

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/util.h"

struct console {
    pid_t pid;     /* leader of its own process group; 0 when none */
    int rfd, wfd;  /* our ends (the same fd for a pty) */
    int logfd;     /* raw transcript, -1 for none */
    struct buf raw;  /* everything received */
    struct buf text; /* cleaned text (see above) */
    size_t mark;     /* text before this is consumed */
    size_t fail_mark; /* failure patterns were checked up to here */
    int esc;         /* escape-filter state */
    bool eof;        /* console closed */
    bool exited;     /* child reaped */
    int wstatus;
    bool killed;     /* we had to kill it */
    double last_rx;  /* when bytes last arrived (monotonic seconds) */
    double settle;   /* a match that ends a still-growing partial line is
                        accepted only after this many quiet seconds */
};

void console_init(struct console *c);
/* Appends received bytes: transcript, log file, cleaned text. */
void console_feed(struct console *c, const char *data, size_t n);
/* Compiles PATTERN (ERE, REG_NEWLINE); on error *err says why. */
int console_compile(regex_t *re, const char *pattern, char **err);
/* Searches the text since the mark. On a match, moves the mark past it and
 * returns true; *matched (if not NULL) gets a copy of the matched text.
 * A match that ends at the end of an unfinished last line (a prompt, or
 * "… #" of "#1 SMP" cut by a read) counts only once the console has been
 * quiet for c->settle seconds: a real prompt waits, a cut line goes on. */
bool console_match(struct console *c, const regex_t *re, char **matched);
/* Like console_match but does not move the mark (for failure patterns,
 * which are searched in all text since the last check). */
bool console_scan(struct console *c, const regex_t *re, char **matched);
/* Forgets unmatched text: the next match starts at the end of the text. */
void console_skip(struct console *c);
/* The last N lines of the cleaned text. Caller frees. */
char *console_tail(const struct console *c, int n);

/* Starts ARGV (run_command.h; "$ ARGV" on stderr) in a new session. Its
 * stdin, stdout and stderr are the console (a pty in raw mode if PTY, else
 * pipes). LOG_PATH gets the raw
 * transcript (created or truncated). Ignores SIGPIPE in the caller. */
int console_start(struct console *c, const char *const *argv, bool pty, const char *log_path,
                  char **err);
/* Reads what arrives within TIMEOUT seconds (returns after the first read).
 * Returns the number of bytes read, 0 on timeout, -1 once the console is
 * closed. Reaps the child if it exited. */
int console_pump(struct console *c, double timeout);
/* Sends S (plus "\n" if NEWLINE). Returns 0, or -1 if the console is closed. */
int console_send(struct console *c, const char *s, bool newline);
/* Non-blocking check whether the child exited; reaps it. */
bool console_reap(struct console *c);
/* SIGTERM to the process group, SIGKILL after GRACE seconds; reaps. */
void console_kill(struct console *c, double grace);
/* The emulator runs in its own process group, so a signal to the stage's
 * group does not reach it. After console_guard, SIGTERM, SIGINT or SIGHUP
 * to this process kill the emulator's group first, then this process dies
 * of the signal. One console at a time; console_close undoes it. */
void console_guard(const struct console *c);
/* Kills the child if it still runs, closes the fds, frees the buffers. */
void console_close(struct console *c);
/* "exit status N" / "killed by signal N" / "still running". Static buffer. */
const char *console_status(const struct console *c);

/* ---- steps -------------------------------------------------------------- */

enum step_kind { STEP_WAIT, STEP_EXPECT, STEP_SEND, STEP_EXIT };

struct step {
    enum step_kind kind;
    char *name;      /* for reports; generated when the recipe sets none */
    char *arg;       /* regex (wait, expect), text (send), NULL (exit) */
    char *fail;      /* wait/expect: regex that fails the step, or NULL */
    double timeout;  /* seconds (wait, expect, exit) */
    bool newline;    /* send: append "\n" */
    bool secret;     /* send: do not show the text in logs and reports */
    bool kill;       /* exit: at the timeout kill the emulator and pass */
    regex_t re, fail_re;
    bool re_ok, fail_re_ok;
};

struct steps {
    struct step *v;
    size_t n;
};

#define STEP_WAIT_TIMEOUT 300
#define STEP_EXPECT_TIMEOUT 30
#define STEP_EXIT_TIMEOUT 120

/* Parses a recipe list of steps, a stage's `steps` setting as the stage API
 * shows it (stage.h). On error returns -1 and *err names the entry and key
 * ("steps.[2].timeout (line 7): ..."); caller frees it. */
struct st_node;
int steps_parse_node(const struct st_node *list, struct steps *out, char **err);
void steps_add(struct steps *s, enum step_kind kind, const char *arg, double timeout);
/* Compiles the regexes (done by steps_parse_node; needed after steps_add). */
int steps_compile(struct steps *s, char **err);
void steps_free(struct steps *s);

/* The default shell prompt: '#' or '$' at the end of a line, or followed by
 * a kernel message that the console printed right after it. */
#define PROFILE_PROMPT "[#$] ?(\\[ *[0-9]+\\.[0-9]+\\].*)?$"

/* Settings the profiles use. NULL strings and zero timeouts take defaults. */
struct profile_opts {
    const char *user;       /* "root" */
    const char *password;   /* NULL: no password prompt */
    bool autologin;         /* the getty logs root in: no user, no password */
    const char *prompt;     /* shell prompt regex; PROFILE_PROMPT */
    const char *machine;    /* expected `uname -m`, or NULL to skip */
    const char *os_release; /* regex on /etc/os-release, or NULL to skip */
    bool systemd;           /* check `systemctl is-system-running --wait` */
    bool sysvinit;          /* check sysvinit's `runlevel` (a multi-user runlevel) */
    const char *poweroff;   /* command; "poweroff" */
    const char *marker;     /* "marker" profile: regex; "TRILLIAN-BOOT-OK" */
    double boot_timeout;    /* until the login prompt / marker; 600 */
    double command_timeout; /* each command; 60 */
    double exit_timeout;    /* power-off to emulator exit; 120 */
};

extern const char *const profile_names[]; /* "debian-login", "marker", NULL */
/* Generates the steps of a profile. Returns -1 with *err if unknown. */
int steps_profile(const char *profile, const struct profile_opts *o, struct steps *out,
                  char **err);
/* Regex for /etc/os-release of Debian SUITE ("unstable" means "sid"). */
char *os_release_regex(const char *suite);

enum step_status { STEP_NOT_RUN, STEP_PASSED, STEP_FAILED };

struct step_result {
    enum step_status status;
    double seconds;
    char *message; /* failure: what was expected and what happened */
    char *matched; /* wait/expect: the text that matched */
    char *tail;    /* failure: the last console lines at that moment */
};

struct run_opts {
    double total_timeout;        /* whole run, seconds; 0 = none */
    const regex_t *fail_re;      /* console text that fails any step (panic) */
    const char *fail_pattern;    /* its source, for messages */
    const regex_t *halt_re;      /* text meaning the guest is down (Ski) */
    bool exits_on_poweroff;      /* else an exit step ends at halt_re */
    FILE *log;                   /* progress lines, or NULL */
};

/* Runs the steps in order; stops at the first failure and marks the rest
 * STEP_NOT_RUN. Kills the emulator if it still runs after the last step.
 * RES has s->n entries. Returns the index of the failed step, or -1. */
long steps_run(struct console *c, const struct steps *s, const struct run_opts *o,
               struct step_result *res);
void step_results_free(struct step_result *res, size_t n);
/* "wait /login:/", "send \"root\"", "exit" (secret sends are masked). */
char *step_describe(const struct step *st);

#endif
