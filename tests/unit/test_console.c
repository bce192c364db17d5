#define _GNU_SOURCE /* memmem, setenv */
/* Unit tests for the boot-check console driver (text cleaning, matching,
 * step parsing, profiles, the step runner on small real children) and the
 * emulator table's argv templates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <libconfig.h>

#include "drivers/console.h"
#include "drivers/emulator.h"

static void feed(struct console *c, const char *s) { console_feed(c, s, strlen(s)); }

static regex_t re_of(const char *p)
{
    regex_t re;
    char *err = NULL;
    assert_int_equal(console_compile(&re, p, &err), 0);
    return re;
}

static void test_clean_text(void **state)
{
    (void)state;
    struct console c;
    console_init(&c);
    feed(&c, "\x1b[0;32m[  OK  ]\x1b[0m Started\r\nroot@h:~# \x1b[?2004");
    feed(&c, "h\x1b]0;title\x07x86_64\r\n\x1b");
    feed(&c, "[1mbold\x1b[0m\0z");
    assert_string_equal(c.text.p, "[  OK  ] Started\nroot@h:~# x86_64\nbold");
    /* The raw transcript keeps every byte. */
    assert_true(c.raw.n > c.text.n);
    assert_non_null(memmem(c.raw.p, c.raw.n, "\x1b[0;32m", 7));
    console_close(&c);
}

static void test_match_since_last(void **state)
{
    (void)state;
    struct console c;
    console_init(&c);
    regex_t login = re_of("login:"), mach = re_of("^x86_64$");
    char *m = NULL;
    assert_false(console_match(&c, &login, NULL));
    feed(&c, "Debian\nhost log");
    assert_false(console_match(&c, &login, NULL));
    feed(&c, "in: ");
    assert_true(console_match(&c, &login, &m));
    assert_string_equal(m, "login:");
    free(m);
    /* Consumed: the same text does not match twice. */
    assert_false(console_match(&c, &login, NULL));
    /* "^" is a line start, not the start of the unmatched text. */
    feed(&c, "x86_64\n");
    assert_false(console_match(&c, &mach, NULL));
    feed(&c, "uname -m\nx86_64\nroot# ");
    assert_true(console_match(&c, &mach, NULL));
    /* "$" matches at the end of a line, also at the end of the text. */
    regex_t prompt = re_of("[#$] ?$");
    assert_true(console_match(&c, &prompt, NULL));
    /* The default prompt also matches when a kernel message follows it. */
    regex_t dp = re_of(PROFILE_PROMPT);
    feed(&c, "root@trillian:~# [   20.123456] random: crng init done\n");
    assert_true(console_match(&c, &dp, NULL));
    feed(&c, "Linux trillian 6.1.0-57-cloud-amd64 #1 SMP PREEMPT_DYNAMIC\n");
    assert_false(console_match(&c, &dp, NULL));
    feed(&c, "$ ");
    assert_true(console_match(&c, &dp, NULL));
    regfree(&dp);
    /* Skip forgets unmatched text. */
    feed(&c, "login: ");
    console_skip(&c);
    assert_false(console_match(&c, &login, NULL));
    regfree(&login);
    regfree(&mach);
    regfree(&prompt);
    console_close(&c);
}

static void test_scan_split_and_tail(void **state)
{
    (void)state;
    struct console c;
    console_init(&c);
    regex_t panic = re_of("Kernel panic - not syncing");
    char *line = NULL;
    feed(&c, "a\nb\n[ 1.0] Kernel pa");
    assert_false(console_scan(&c, &panic, &line));
    feed(&c, "nic - not syncing: VFS\nmore");
    assert_true(console_scan(&c, &panic, &line));
    assert_string_equal(line, "[ 1.0] Kernel panic - not syncing: VFS");
    free(line);
    /* Already scanned text is not reported again. */
    assert_false(console_scan(&c, &panic, NULL));
    char *t = console_tail(&c, 2);
    assert_string_equal(t, "[ 1.0] Kernel panic - not syncing: VFS\nmore");
    free(t);
    t = console_tail(&c, 20);
    assert_string_equal(t, "a\nb\n[ 1.0] Kernel panic - not syncing: VFS\nmore");
    free(t);
    regfree(&panic);
    console_close(&c);

    char *err = NULL;
    regex_t bad;
    assert_int_equal(console_compile(&bad, "(unclosed", &err), -1);
    assert_non_null(strstr(err, "(unclosed"));
    free(err);
}

static int parse(const char *text, struct steps *s, char **err)
{
    config_t cfg;
    config_init(&cfg);
    assert_int_equal(config_read_string(&cfg, text), CONFIG_TRUE);
    /* A stage API node is a libconfig setting of the recipe (stage_api.c). */
    int rc = steps_parse_node((const struct st_node *)config_lookup(&cfg, "steps"), s, err);
    config_destroy(&cfg);
    return rc;
}

static void test_parse_steps(void **state)
{
    (void)state;
    struct steps s;
    char *err = NULL;
    assert_int_equal(parse("steps = ( { wait = \"login:\"; timeout = 120; },"
                           "{ send = \"root\"; }, { send = \"pw\"; secret = true; newline = false; },"
                           "{ expect = \"^x86_64$\"; timeout = 2.5; name = \"arch\"; fail = \"oops\"; },"
                           "{ exit = true; kill = true; } );",
                           &s, &err),
                     0);
    assert_int_equal(s.n, 5);
    assert_int_equal(s.v[0].kind, STEP_WAIT);
    assert_true(s.v[0].timeout == 120);
    assert_int_equal(s.v[1].kind, STEP_SEND);
    assert_true(s.v[1].newline);
    assert_true(s.v[2].secret);
    assert_false(s.v[2].newline);
    assert_int_equal(s.v[3].kind, STEP_EXPECT);
    assert_true(s.v[3].timeout == 2.5);
    assert_string_equal(s.v[3].name, "arch");
    assert_true(s.v[3].fail_re_ok);
    assert_int_equal(s.v[4].kind, STEP_EXIT);
    assert_true(s.v[4].kill);
    assert_true(s.v[4].timeout == STEP_EXIT_TIMEOUT);
    char *d = step_describe(&s.v[2]);
    assert_null(strstr(d, "pw"));
    free(d);
    steps_free(&s);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"steps = ( { wiat = \"x\"; } );", "did you mean `wait`"},
        {"steps = ( { wait = \"x\"; send = \"y\"; } );", "only one of"},
        {"steps = ( { timeout = 3; } );", "needs one of"},
        {"steps = ( { send = \"x\"; timeout = 3; } );", "a send does not wait"},
        {"steps = ( { wait = \"(x\"; } );", "bad regular expression"},
        {"steps = ( { wait = \"x\"; timeout = -1; } );", "0 < timeout"},
        {"steps = ( { wait = \"x\"; }, { exit = false; } );", "steps.[1].exit"},
        {"steps = ( { expect = \"x\"; secret = true; } );", "only a send step"},
        {"steps = ( \"login:\" );", "must be a group"},
        {"steps = ( );", "empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err = NULL;
        assert_int_equal(parse(bad[i].text, &s, &err), -1);
        assert_non_null(err);
        if (!strstr(err, bad[i].want))
            fail_msg("%s: got \"%s\", want \"%s\"", bad[i].text, err, bad[i].want);
        free(err);
    }
}

static void test_profiles(void **state)
{
    (void)state;
    struct steps s;
    char *err = NULL;
    char *osr = os_release_regex("unstable");
    assert_string_equal(osr, "^(VERSION_CODENAME|PRETTY_NAME|VERSION)=.*sid");
    struct profile_opts o = {.password = "secret", .machine = "x86_64", .os_release = osr,
                             .systemd = true};
    assert_int_equal(steps_profile("debian-login", &o, &s, &err), 0);
    /* login, user, password prompt, password, prompt, 3 x (send, expect,
     * prompt), poweroff, exit */
    assert_int_equal(s.n, 5 + 9 + 2);
    assert_int_equal(s.v[0].kind, STEP_WAIT);
    assert_true(s.v[3].secret);
    assert_string_equal(s.v[3].arg, "secret");
    assert_string_equal(s.v[6].arg, "^x86_64$");
    assert_string_equal(s.v[14].arg, "poweroff");
    assert_int_equal(s.v[15].kind, STEP_EXIT);
    assert_false(s.v[15].kill);
    steps_free(&s);
    free(osr);

    struct profile_opts min = {.poweroff = "echo o > /proc/sysrq-trigger"};
    assert_int_equal(steps_profile("debian-login", &min, &s, &err), 0);
    assert_int_equal(s.n, 3 + 2); /* no password, no checks */
    assert_string_equal(s.v[3].arg, "echo o > /proc/sysrq-trigger");
    steps_free(&s);

    struct profile_opts al = {.autologin = true, .password = "ignored", .machine = "ia64"};
    assert_int_equal(steps_profile("debian-login", &al, &s, &err), 0);
    assert_int_equal(s.n, 2 + 3 + 2); /* login, prompt, machine x3, poweroff, exit */
    assert_int_equal(s.v[1].kind, STEP_WAIT);
    for (size_t i = 0; i < s.n; i++)
        assert_false(s.v[i].kind == STEP_SEND && s.v[i].secret);
    /* A command check fails at once when the prompt comes back without it. */
    assert_true(s.v[3].kind == STEP_EXPECT && s.v[3].fail_re_ok);
    steps_free(&s);

    /* sysvinit: runlevel in place of systemd's state */
    struct profile_opts sv = {.autologin = true, .machine = "ia64", .sysvinit = true};
    assert_int_equal(steps_profile("debian-login", &sv, &s, &err), 0);
    assert_int_equal(s.n, 2 + 3 + 3 + 2);
    assert_string_equal(s.v[5].arg, "/sbin/runlevel");
    assert_string_equal(s.v[6].arg, "^N [2-5]$");
    assert_string_equal(s.v[6].name, "sysvinit runlevel: expect");
    steps_free(&s);

    struct profile_opts mk = {.marker = "HELLO-[0-9]+"};
    assert_int_equal(steps_profile("marker", &mk, &s, &err), 0);
    assert_int_equal(s.n, 2);
    assert_true(s.v[1].kill);
    steps_free(&s);

    assert_int_equal(steps_profile("nope", &mk, &s, &err), -1);
    assert_non_null(strstr(err, "debian-login"));
    free(err);
}

/* A tiny guest: a login prompt, then answers one command. */
static const char *const guest_sh =
    "printf 'boot\\r\\nhost login: '; read u; printf '%s\\r\\n' \"$u\";"
    "printf '# '; read c; printf '%s\\r\\n' \"$c\";"
    "[ \"$c\" = 'uname -m' ] && printf 'x86_64\\r\\n';"
    "printf '# '; read c; [ \"$c\" = poweroff ] && { echo 'reboot: Power down'; "
    "[ -n \"$SPIN\" ] && while :; do sleep 1; done; exit 0; }; exit 3";

static long run_guest(bool pty, const char *spin, const char *steps_text, struct steps *s,
                      struct step_result **res, struct console *c, const struct run_opts *o)
{
    char *err = NULL;
    assert_int_equal(parse(steps_text, s, &err), 0);
    setenv("SPIN", spin, 1);
    const char *argv[] = {"/bin/sh", "-c", guest_sh, NULL};
    console_init(c);
    char log[] = "/tmp/test_console.XXXXXX";
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(console_start(c, argv, pty, log, &err), 0);
    *res = calloc(s->n, sizeof **res);
    long f = steps_run(c, s, o, *res);
    /* The log has the raw transcript. */
    char *data;
    size_t len;
    assert_int_equal(read_file(log, &data, &len), 0);
    assert_non_null(strstr(data, "login: "));
    free(data);
    unlink(log);
    return f;
}

static const char *const good_steps =
    "steps = ( { wait = \"login: $\"; timeout = 5; }, { send = \"root\"; },"
    "{ wait = \"# $\"; timeout = 5; }, { send = \"uname -m\"; },"
    "{ expect = \"^x86_64$\"; timeout = 5; }, { wait = \"# $\"; timeout = 5; },"
    "{ send = \"poweroff\"; }, { exit = true; timeout = 5; } );";

static void test_run_pipe_and_pty(void **state)
{
    (void)state;
    for (int pty = 0; pty < 2; pty++) {
        struct steps s;
        struct step_result *res;
        struct console c;
        struct run_opts o = {.total_timeout = 20, .exits_on_poweroff = true};
        long f = run_guest(pty, "", good_steps, &s, &res, &c, &o);
        if (f >= 0)
            fail_msg("pty=%d: step %ld failed: %s\n%s", pty, f, res[f].message, res[f].tail);
        assert_int_equal(res[4].status, STEP_PASSED);
        assert_string_equal(res[4].matched, "x86_64");
        assert_true(c.exited);
        assert_false(c.killed);
        assert_true(WIFEXITED(c.wstatus) && WEXITSTATUS(c.wstatus) == 0);
        step_results_free(res, s.n);
        free(res);
        steps_free(&s);
        console_close(&c);
    }
}

static void test_run_wrong_expectation(void **state)
{
    (void)state;
    struct steps s;
    struct step_result *res;
    struct console c;
    struct run_opts o = {.total_timeout = 20, .exits_on_poweroff = true};
    double t0 = now_seconds();
    long f = run_guest(false, "",
                       "steps = ( { wait = \"login: $\"; }, { send = \"root\"; },"
                       "{ wait = \"# $\"; }, { send = \"uname -m\"; },"
                       "{ expect = \"^ia64$\"; timeout = 0.5; }, { send = \"poweroff\"; } );",
                       &s, &res, &c, &o);
    assert_int_equal(f, 4);
    assert_true(now_seconds() - t0 < 5);
    assert_int_equal(res[4].status, STEP_FAILED);
    assert_non_null(strstr(res[4].message, "expected /^ia64$/"));
    assert_non_null(strstr(res[4].tail, "x86_64"));
    assert_int_equal(res[5].status, STEP_NOT_RUN);
    /* The emulator was stopped, not left behind. */
    assert_true(c.exited);
    assert_true(c.killed);
    step_results_free(res, s.n);
    free(res);
    steps_free(&s);
    console_close(&c);
}

static void test_run_halt_kill_and_total(void **state)
{
    (void)state;
    /* A Ski-like emulator that spins after the guest halts: the exit step
     * ends at the halt line and kills it. */
    regex_t halt = re_of("reboot: Power down");
    struct steps s;
    struct step_result *res;
    struct console c;
    struct run_opts o = {.total_timeout = 20, .halt_re = &halt, .exits_on_poweroff = false};
    long f = run_guest(true, "1", good_steps, &s, &res, &c, &o);
    if (f >= 0)
        fail_msg("step %ld failed: %s", f, res[f].message);
    assert_true(c.killed);
    step_results_free(res, s.n);
    free(res);
    steps_free(&s);
    console_close(&c);

    /* A Ski-like guest that goes down before a wait matches fails at once. */
    struct run_opts oh = {.total_timeout = 20, .halt_re = &halt, .exits_on_poweroff = false};
    double th = now_seconds();
    f = run_guest(true, "1",
                  "steps = ( { wait = \"login: $\"; timeout = 5; }, { send = \"root\"; },"
                  "{ wait = \"# $\"; timeout = 5; }, { send = \"uname -m\"; },"
                  "{ wait = \"# $\"; timeout = 5; }, { send = \"poweroff\"; },"
                  "{ wait = \"never\"; timeout = 30; } );",
                  &s, &res, &c, &oh);
    if (f != 6)
        fail_msg("step %ld failed: %s", f, f >= 0 ? res[f].message : "none");
    assert_true(now_seconds() - th < 10);
    assert_non_null(strstr(res[6].message, "went down first"));
    step_results_free(res, s.n);
    free(res);
    steps_free(&s);
    console_close(&c);

    /* Without the halt pattern, a strict exit step times out and fails. */
    struct run_opts o2 = {.total_timeout = 20, .exits_on_poweroff = true};
    char *txt = xstrdup(good_steps);
    char *p = strstr(txt, "timeout = 5; } );");
    memcpy(p, "timeout = 1; } );", 17);
    f = run_guest(false, "1", txt, &s, &res, &c, &o2);
    assert_int_equal(f, 7);
    assert_non_null(strstr(res[7].message, "did not exit"));
    step_results_free(res, s.n);
    free(res);
    steps_free(&s);
    console_close(&c);

    /* timeout_total bounds a long step. */
    struct run_opts o3 = {.total_timeout = 0.7, .exits_on_poweroff = true};
    double t0 = now_seconds();
    f = run_guest(false, "", "steps = ( { wait = \"never\"; timeout = 100; } );", &s, &res, &c,
                  &o3);
    assert_int_equal(f, 0);
    assert_true(now_seconds() - t0 < 5);
    assert_non_null(strstr(res[0].message, "timeout_total"));
    step_results_free(res, s.n);
    free(res);
    steps_free(&s);
    console_close(&c);
    free(txt);
    regfree(&halt);
}

static void test_run_panic_and_exit_early(void **state)
{
    (void)state;
    regex_t panic = re_of("Kernel panic - not syncing");
    struct console c;
    console_init(&c);
    char *err = NULL;
    const char *argv[] = {"/bin/sh", "-c",
                          "echo booting; echo 'Kernel panic - not syncing: VFS'; sleep 30", NULL};
    assert_int_equal(console_start(&c, argv, false, NULL, &err), 0);
    struct steps s = {0};
    steps_add(&s, STEP_WAIT, "login:", 30);
    assert_int_equal(steps_compile(&s, &err), 0);
    struct step_result res[1];
    struct run_opts o = {.fail_re = &panic, .fail_pattern = "Kernel panic - not syncing"};
    double t0 = now_seconds();
    assert_int_equal(steps_run(&c, &s, &o, res), 0);
    assert_true(now_seconds() - t0 < 10);
    assert_non_null(strstr(res[0].message, "Kernel panic - not syncing: VFS"));
    step_results_free(res, 1);
    console_close(&c);

    /* An emulator that ends before the pattern fails at once. */
    const char *argv2[] = {"/bin/sh", "-c", "echo bye; exit 4", NULL};
    console_init(&c);
    assert_int_equal(console_start(&c, argv2, false, NULL, &err), 0);
    t0 = now_seconds();
    assert_int_equal(steps_run(&c, &s, &o, res), 0);
    assert_true(now_seconds() - t0 < 10);
    assert_non_null(strstr(res[0].message, "exit status 4"));
    step_results_free(res, 1);
    console_close(&c);
    steps_free(&s);
    regfree(&panic);

    /* A program that cannot run is reported at start. */
    const char *argv3[] = {"/nonexistent/qemu", NULL};
    console_init(&c);
    assert_int_equal(console_start(&c, argv3, false, NULL, &err), -1);
    assert_non_null(strstr(err, "/nonexistent/qemu"));
    free(err);
    console_close(&c);
}

/* The qemu-ia64 row: the itanium2-vpc machine with its firmware by -bios on
 * the serial console, a 64 KiB NVRAM file, the disk on the default
 * controller (no virtio in that QEMU); no kernel mode; netboot from a
 * stand-in disk with the board's e1000 on the server's tap. */
static void test_emulator_qemu_ia64(void **state)
{
    (void)state;
    const struct emulator *q = emulator_find("qemu-ia64");
    assert_non_null(q);
    assert_int_equal(q->nvram_kib, 64);
    assert_null(q->mode[BOOT_KERNEL]);
    assert_non_null(q->mode[BOOT_NETBOOT]);
    assert_true(q->netboot_standin);
    assert_non_null(strstr(q->why_not[BOOT_KERNEL], "-kernel"));
    assert_int_equal(emulator_needs(q, BOOT_NETBOOT, "image"), 2);
    assert_int_equal(emulator_needs(q, BOOT_NETBOOT, "tftp"), 0);
    assert_string_equal(q->stage_kind, "qemu-ia64");
    assert_int_equal(emulator_needs(q, BOOT_DISK, "firmware"), 2);
    assert_int_equal(emulator_needs(q, BOOT_DISK, "nvram"), 2);

    struct emu_vars v = {0};
    emu_vars_set(&v, "memory", "1024");
    emu_vars_set(&v, "accel", "tcg");
    emu_vars_set(&v, "firmware", "/s/share/qemu/ia64-firmware.bin");
    emu_vars_set(&v, "nvram", "/w/nvram.bin");
    emu_vars_set(&v, "image", "/o/disk,1.img");
    emu_vars_set(&v, "snapshot", "on");
    struct strlist argv = {0};
    char *err = NULL;
    assert_int_equal(emulator_argv(q, BOOT_DISK, "/s/bin/qemu-system-ia64", &v, NULL, &argv,
                                   &err), 0);
    const char *want[] = {"/s/bin/qemu-system-ia64", "-display", "none", "-serial", "stdio",
                          "-monitor", "none", "-parallel", "none", "-no-reboot", "-m", "1024",
                          "-accel", "tcg", "-machine",
                          "itanium2-vpc,nvram=/w/nvram.bin,firmware-console=serial", "-bios",
                          "/s/share/qemu/ia64-firmware.bin", "-nic", "none", "-drive",
                          "file=/o/disk,,1.img,format=raw,snapshot=on"};
    assert_int_equal(argv.n, ARRAY_LEN(want));
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        assert_string_equal(argv.v[i], want[i]);
    for (size_t i = 0; i < argv.n; i++)
        assert_null(strstr(argv.v[i], "virtio"));
    strlist_free(&argv);
    /* netboot: the stand-in disk as {image}, the e1000 on the tap trl0 */
    assert_int_equal(emulator_argv(q, BOOT_NETBOOT, "/s/bin/qemu-system-ia64", &v, NULL, &argv,
                                   &err), 0);
    const char *nwant[] = {"-machine", "itanium2-vpc,nvram=/w/nvram.bin,firmware-console=serial",
                           "-bios", "/s/share/qemu/ia64-firmware.bin", "-nic",
                           "tap,model=e1000,ifname=trl0,script=no,downscript=no,"
                           "mac=52:54:00:12:34:56",
                           "-drive", "file=/o/disk,,1.img,format=raw,snapshot=on"};
    assert_int_equal(argv.n, 14 + ARRAY_LEN(nwant));
    for (size_t i = 0; i < ARRAY_LEN(nwant); i++)
        assert_string_equal(argv.v[14 + i], nwant[i]);
    strlist_free(&argv);

    /* an ISO goes in as a CD-ROM, read-only */
    assert_int_equal(emulator_argv(q, BOOT_ISO, "qemu-system-ia64", &v, NULL, &argv, &err), 0);
    assert_string_equal(argv.v[argv.n - 1],
                        "file=/o/disk,,1.img,media=cdrom,readonly=on,format=raw");
    strlist_free(&argv);
    /* no kernel boot: the mode is refused */
    emu_vars_set(&v, "kernel", "/k/vmlinuz");
    assert_int_equal(emulator_argv(q, BOOT_KERNEL, "qemu-system-ia64", &v, NULL, &argv, &err),
                     -1);
    assert_non_null(strstr(err, "cannot do a kernel boot"));
    free(err);
    strlist_free(&argv);
    emu_vars_free(&v);
}

/* `http`: qemu-ia64 swaps -nic none for the board's e1000 on the user-mode
 * network, qemu-x86_64 adds a virtio NIC; {http} is one word with its
 * commas doubled; Ski has no network. */
static void test_emulator_http(void **state)
{
    (void)state;
    struct emu_vars v = {0};
    emu_vars_set(&v, "memory", "1024");
    emu_vars_set(&v, "accel", "tcg");
    emu_vars_set(&v, "firmware", "/fw");
    emu_vars_set(&v, "nvram", "/w/nvram.bin");
    emu_vars_set(&v, "image", "/o/disk.img");
    emu_vars_set(&v, "snapshot", "on");
    emu_vars_set(&v, "http", "'/bin/trillian' '__http-serve' '--log' '/l' '/a b,c'");
    struct strlist argv = {0};
    char *err = NULL;
    const char *fwd = "restrict=on,guestfwd=tcp:10.0.2.100:80-cmd:'/bin/trillian' "
                      "'__http-serve' '--log' '/l' '/a b,,c'";
    for (int iso = 0; iso < 2; iso++) {
        const struct emulator *q = emulator_find("qemu-ia64");
        assert_int_equal(emulator_argv(q, iso ? BOOT_ISO : BOOT_DISK, "q", &v, NULL, &argv,
                                       &err), 0);
        size_t nics = 0;
        for (size_t i = 0; i < argv.n; i++) {
            if (strcmp(argv.v[i], "-nic") == 0) {
                nics++;
                char *want = xasprintf("user,%s,model=e1000,mac=52:54:00:12:34:56", fwd);
                assert_string_equal(argv.v[i + 1], want);
                free(want);
            }
        }
        assert_int_equal(nics, 1);
        strlist_free(&argv);
    }
    const struct emulator *x = emulator_find("qemu-x86_64");
    emu_vars_set(&v, "kernel", "/k/vmlinuz");
    emu_vars_set(&v, "append", "console=ttyS0");
    emu_vars_set(&v, "image", "");
    assert_int_equal(emulator_argv(x, BOOT_KERNEL, "q", &v, NULL, &argv, &err), 0);
    char *want = xasprintf("user,%s,id=h0", fwd);
    assert_string_equal(argv.v[argv.n - 4], "-netdev");
    assert_string_equal(argv.v[argv.n - 3], want);
    assert_string_equal(argv.v[argv.n - 1], "virtio-net-pci,netdev=h0,romfile=");
    free(want);
    strlist_free(&argv);
    emu_vars_set(&v, "firmware", "/ski-bootloader");
    assert_int_equal(emulator_argv(emulator_find("ski"), BOOT_KERNEL, "bski", &v, NULL, &argv,
                                   &err), -1);
    assert_non_null(strstr(err, "no network"));
    free(err);
    strlist_free(&argv);
    emu_vars_free(&v);
}

/* Where a binary and firmware come from: env, setting, the emulators
 * stage's output, then PATH (firmware: the row's default). */
static void test_emulator_stage_lookup(void **state)
{
    (void)state;
    char dir[] = "/tmp/trillian-emu-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *bin = path_join(dir, "bin"), *fwdir = path_join(dir, "share/ski");
    assert_int_equal(mkdir_p(bin, 0755), 0);
    assert_int_equal(mkdir_p(fwdir, 0755), 0);
    char *bski = path_join(bin, "bski"), *efi = path_join(fwdir, "ski-efi");
    assert_int_equal(write_file_atomic(bski, "#!/bin/sh\n", 10, 0755), 0);
    assert_int_equal(write_file_atomic(efi, "x", 1, 0644), 0);
    const struct emulator *se = emulator_find("ski-efi");
    const char *how;
    unsetenv("TRILLIAN_SKI");
    unsetenv("TRILLIAN_SKI_EFI");
    char *b = emulator_binary(se, NULL, dir, &how);
    assert_string_equal(b, bski);
    assert_string_equal(how, "the recipe's emulators stage");
    free(b);
    b = emulator_binary(se, "sh", dir, &how); /* the setting wins over the stage */
    assert_string_equal(how, "setting `binary`");
    free(b);
    setenv("TRILLIAN_SKI", "/bin/sh", 1); /* the env over both */
    b = emulator_binary(se, "sh", dir, &how);
    assert_string_equal(b, "/bin/sh");
    free(b);
    unsetenv("TRILLIAN_SKI");
    char *f = emulator_firmware(se, NULL, dir, &how);
    assert_string_equal(f, efi);
    free(f);
    f = emulator_firmware(se, "/etc/hostname-nonexistent", dir, &how);
    assert_null(f);
    assert_string_equal(how, "bootloader");
    /* a stage without the file: not found (no silent PATH fallback for firmware) */
    assert_null(emulator_firmware(emulator_find("ski"), NULL, dir, &how));
    rm_rf(dir);
    free(bin);
    free(fwdir);
    free(bski);
    free(efi);
}

static void test_emulator_templates(void **state)
{
    (void)state;
    const struct emulator *q = emulator_find("qemu-x86_64");
    assert_non_null(q);
    assert_null(emulator_find("bochs"));
    assert_int_equal(emulator_needs(q, BOOT_KERNEL, "initrd"), 1);
    assert_int_equal(emulator_needs(q, BOOT_DISK, "firmware"), 2);
    assert_int_equal(emulator_needs(q, BOOT_KERNEL, "firmware"), 0);

    struct emu_vars v = {0};
    emu_vars_set(&v, "memory", "512");
    emu_vars_set(&v, "accel", "tcg");
    emu_vars_set(&v, "kernel", "/k/vmlinuz");
    emu_vars_set(&v, "append", "console=ttyS0 quiet");
    struct strlist argv = {0}, extra = {0};
    strlist_push(&extra, "-smp");
    strlist_push(&extra, "2");
    char *err = NULL;
    assert_int_equal(emulator_argv(q, BOOT_KERNEL, "/usr/bin/qemu", &v, &extra, &argv, &err), 0);
    /* No initrd: the optional entry is dropped. The append stays one word. */
    const char *want[] = {"/usr/bin/qemu", "-display", "none", "-serial", "stdio", "-monitor",
                          "none", "-parallel", "none", "-no-reboot", "-m", "512", "-accel", "tcg",
                          "-kernel", "/k/vmlinuz", "-append", "console=ttyS0 quiet", "-smp", "2"};
    assert_int_equal(argv.n, ARRAY_LEN(want));
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        assert_string_equal(argv.v[i], want[i]);
    strlist_free(&argv);

    /* A disk boot quotes commas for qemu and needs the firmware. */
    emu_vars_set(&v, "kernel", "");
    emu_vars_set(&v, "image", "/c/a,b.img");
    emu_vars_set(&v, "snapshot", "on");
    assert_int_equal(emulator_argv(q, BOOT_DISK, "qemu", &v, NULL, &argv, &err), -1);
    assert_non_null(strstr(err, "{firmware}"));
    free(err);
    strlist_free(&argv);
    emu_vars_set(&v, "firmware", "/fw/CODE.fd");
    emu_vars_set(&v, "vars", "/w/VARS.fd");
    assert_int_equal(emulator_argv(q, BOOT_DISK, "qemu", &v, NULL, &argv, &err), 0);
    assert_true(strlist_contains(&argv, "file=/c/a,,b.img,format=raw,if=virtio,snapshot=on"));
    assert_true(strlist_contains(&argv, "if=pflash,format=raw,file=/w/VARS.fd"));
    strlist_free(&argv);

    /* Ski: no initrd, no netboot; the disk goes through the link in work. */
    const struct emulator *ski = emulator_find("ski");
    assert_non_null(ski);
    assert_true(ski->console_pty && !ski->exits_on_poweroff && ski->halt_regex);
    struct emu_vars sv = {0};
    emu_vars_set(&sv, "firmware", "/s/bootloader");
    emu_vars_set(&sv, "kernel", "/k/vmlinux");
    emu_vars_set(&sv, "append", "root=/dev/sda2 console=ttyS0");
    emu_vars_set(&sv, "work", "/w");
    emu_vars_set(&sv, "image", "/w/sda");
    emu_vars_set(&sv, "initrd", "/i/initrd");
    assert_int_equal(emulator_argv(ski, BOOT_KERNEL, "bski", &sv, NULL, &argv, &err), 0);
    const char *kwant[] = {"bski", "-noconsole", "-initramfs", "/i/initrd", "/s/bootloader",
                           "/k/vmlinux", "root=/dev/sda2 console=ttyS0"};
    assert_int_equal(argv.n, ARRAY_LEN(kwant));
    for (size_t i = 0; i < ARRAY_LEN(kwant); i++)
        assert_string_equal(argv.v[i], kwant[i]);
    strlist_free(&argv);
    /* A disk boot has no initramfs: asking for one is an error. */
    assert_int_equal(emulator_argv(ski, BOOT_DISK, "bski", &sv, NULL, &argv, &err), -1);
    assert_non_null(strstr(err, "initrd"));
    free(err);
    strlist_free(&argv);
    emu_vars_set(&sv, "initrd", "");
    assert_int_equal(emulator_argv(ski, BOOT_DISK, "bski", &sv, NULL, &argv, &err), 0);
    const char *swant[] = {"bski", "-noconsole", "/s/bootloader", "/k/vmlinux", "simscsi=/w/sd",
                           "root=/dev/sda2 console=ttyS0"};
    assert_int_equal(argv.n, ARRAY_LEN(swant));
    for (size_t i = 0; i < ARRAY_LEN(swant); i++)
        assert_string_equal(argv.v[i], swant[i]);
    strlist_free(&argv);
    assert_int_equal(emulator_argv(ski, BOOT_NETBOOT, "bski", &sv, NULL, &argv, &err), -1);
    assert_non_null(strstr(err, "cannot do a netboot"));
    free(err);
    strlist_free(&argv);

    /* Binary lookup: the env override wins. */
    const char *how;
    setenv("TRILLIAN_SKI", "/bin/sh", 1);
    char *b = emulator_binary(ski, "/nonexistent", "/nonexistent-stage", &how);
    assert_string_equal(b, "/bin/sh");
    assert_string_equal(how, "TRILLIAN_SKI");
    free(b);
    setenv("TRILLIAN_SKI", "/nonexistent/bski", 1);
    assert_null(emulator_binary(ski, NULL, NULL, &how));
    unsetenv("TRILLIAN_SKI");
    b = emulator_binary(ski, "sh", NULL, &how);
    assert_non_null(b);
    assert_string_equal(how, "setting `binary`");
    free(b);

    emu_vars_free(&v);
    emu_vars_free(&sv);
    strlist_free(&extra);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_text),
        cmocka_unit_test(test_match_since_last),
        cmocka_unit_test(test_scan_split_and_tail),
        cmocka_unit_test(test_parse_steps),
        cmocka_unit_test(test_profiles),
        cmocka_unit_test(test_run_pipe_and_pty),
        cmocka_unit_test(test_run_wrong_expectation),
        cmocka_unit_test(test_run_halt_kill_and_total),
        cmocka_unit_test(test_run_panic_and_exit_early),
        cmocka_unit_test(test_emulator_templates),
        cmocka_unit_test(test_emulator_qemu_ia64),
        cmocka_unit_test(test_emulator_http),
        cmocka_unit_test(test_emulator_stage_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
