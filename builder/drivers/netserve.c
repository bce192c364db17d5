/* The netboot check's server and stand-in disk check; see netserve.h. */
#define _GNU_SOURCE
#include "netserve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/run_command.h"
#include "base/sha256.h"
#include "base/util.h"

#define SAY(...) (printf("netboot server: " __VA_ARGS__), printf("\n"), fflush(stdout))

static int fail(const char *fmt, ...) PRINTF_LIKE(1, 2);
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("netboot server: FAILED: ");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    return 4;
}

/* Runs ARGV quietly (its output captured); 0 or its status, *out the text. */
static int quiet(const char *const *argv, char **out)
{
    static const char *const env[] = {"MTOOLS_SKIP_CHECK=1", "TZ=UTC", NULL};
    struct run_command c = {.argv = argv, .env = env, .out = RUN_OUT_CAPTURE,
                            .err = RUN_ERR_TO_OUT};
    int st = run_command(&c);
    if (out)
        *out = c.output ? c.output : xstrdup("");
    else
        free(c.output);
    return st;
}

/* ---- 1. the stand-in disk ------------------------------------------------ */

static int check_standin(const char *work, const char *img, const struct strlist *files)
{
    /* every file on the disk, by mtools' recursive bare listing */
    char *list = NULL;
    char *spec = xasprintf("%s", img);
    const char *mdir[] = {"mdir", "-/", "-b", "-i", spec, "::", NULL};
    if (quiet(mdir, &list) != 0) {
        int rc = fail("stand-in disk %s: mdir cannot list it: %s", img, list);
        free(list);
        free(spec);
        return rc;
    }
    size_t on_disk = 0;
    for (char *l = list, *nl; l && *l; l = nl ? nl + 1 : NULL) {
        nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        size_t n = strlen(l);
        if (n && l[n - 1] != '/') /* mdir -b marks directories with a trailing / */
            on_disk++;
        if (!nl)
            break;
    }
    free(list);
    int rc = 0;
    char *back = path_join(work, "standin-readback");
    for (size_t i = 0; i < files->n && !rc; i++) {
        char *eq = strchr(files->v[i], '=');
        char *disk = xstrndup(files->v[i], (size_t)(eq - files->v[i]));
        const char *tree = eq + 1;
        char *src = xasprintf("::%s", disk);
        unlink(back);
        const char *mcopy[] = {"mcopy", "-n", "-i", spec, src, back, NULL};
        char *out = NULL, *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        if (quiet(mcopy, &out) != 0)
            rc = fail("stand-in disk: cannot read %s back: %s", disk, out);
        else if (read_file(back, &a, &na) < 0 || read_file(tree, &b, &nb) < 0)
            rc = fail("stand-in disk: cannot read %s or %s: %s", back, tree, strerror(errno));
        else if (na != nb || memcmp(a, b, na) != 0)
            rc = fail("stand-in disk: %s (%zu bytes) differs from the tree's %s (%zu bytes)",
                      disk, na, tree, nb);
        if (!rc) {
            char hex[65];
            sha256_hex(a, na, hex);
            printf("stand-in disk: %s = %s (%zu bytes, sha256 %.16s...): identical\n", disk,
                   tree, na, hex);
        }
        free(a);
        free(b);
        free(out);
        free(src);
        free(disk);
    }
    unlink(back);
    free(back);
    free(spec);
    if (rc)
        return rc;
    if (on_disk != files->n)
        return fail("stand-in disk: it holds %zu files, expected exactly the %zu above", on_disk,
                    files->n);
    printf("stand-in disk: %zu files, each identical to the tree's, and nothing else on it\n",
           files->n);
    fflush(stdout);
    return 0;
}

/* ---- 2. the namespace, the tap, dnsmasq ------------------------------------ */

static int write_proc(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

static uid_t g_real_uid; /* before the namespace */

static int enter_namespace(void)
{
    uid_t uid = geteuid();
    g_real_uid = uid;
    gid_t gid = getegid();
    if (uid == 0) {
        if (unshare(CLONE_NEWNET) == 0)
            return 0;
        return fail("cannot make a network namespace (unshare: %s)", strerror(errno));
    }
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
        return fail("cannot make a user and network namespace as uid %u (unshare: %s): run as "
                    "root, or allow unprivileged user namespaces (sysctl "
                    "kernel.unprivileged_userns_clone=1)", (unsigned)uid, strerror(errno));
    char *um = xasprintf("0 %u 1\n", (unsigned)uid), *gm = xasprintf("0 %u 1\n", (unsigned)gid);
    int rc = 0;
    if (write_proc("/proc/self/setgroups", "deny") < 0 ||
        write_proc("/proc/self/uid_map", um) < 0 || write_proc("/proc/self/gid_map", gm) < 0)
        rc = fail("cannot map uid %u in the new user namespace: %s", (unsigned)uid,
                  strerror(errno));
    free(um);
    free(gm);
    return rc;
}

/* The server's address: x.y.z.1 of the conf's dhcp-range (x.y.z.254 when
 * the range starts at .1). */
static int server_address(const char *conf, char out[16])
{
    const char *p = strncmp(conf, "dhcp-range=", 11) == 0 ? conf : strstr(conf, "\ndhcp-range=");
    if (p && *p == '\n')
        p++;
    unsigned a, b, c, d;
    if (!p || sscanf(p + 11, "%3u.%3u.%3u.%3u", &a, &b, &c, &d) != 4 || a > 255 || b > 255 ||
        c > 255 || d > 255)
        return -1;
    snprintf(out, 16, "%u.%u.%u.%u", a, b, c, d == 1 ? 254u : 1u);
    return 0;
}

/* The tree's dnsmasq.conf with tftp-root and interface set for this run. */
static char *adapt_conf(const char *conf, const char *tftp)
{
    struct buf b = BUF_INIT;
    for (const char *l = conf; *l;) {
        size_t n = strcspn(l, "\n");
        bool drop = (n >= 10 && strncmp(l, "tftp-root=", 10) == 0) ||
                    (n >= 10 && strncmp(l, "interface=", 10) == 0) ||
                    (n == 15 && strncmp(l, "bind-interfaces", 15) == 0);
        if (!drop)
            buf_add(&b, l, n), buf_puts(&b, "\n");
        l += n + (l[n] ? 1 : 0);
    }
    buf_printf(&b, "# set by the boot check (trillian __netboot-serve):\n"
               "interface=%s\nbind-interfaces\ntftp-root=%s\n", NETSERVE_TAP, tftp);
    return buf_detach(&b);
}

static int ip(const char *const *argv)
{
    char *out = NULL;
    int st = quiet(argv, &out);
    if (st != 0) {
        struct buf b = BUF_INIT;
        for (size_t i = 0; argv[i]; i++)
            buf_printf(&b, "%s%s", i ? " " : "", argv[i]);
        fail("%s: exit %d: %s", b.p, st, out);
        buf_free(&b);
    }
    free(out);
    return st ? 4 : 0;
}

/* Whether something listens on UDP ADDR:PORT (our bind is refused). */
static bool udp_taken(const char *addr, int port)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return false;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, addr, &sa.sin_addr);
    bool taken = bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 && errno == EADDRINUSE;
    close(s);
    return taken;
}

const char *netserve_dnsmasq(void)
{
    const char *d = getenv("TRILLIAN_DNSMASQ");
    return d && *d ? d : "dnsmasq";
}

static volatile sig_atomic_t g_emulator = 0;

static void forward(int sig)
{
    if (g_emulator > 0)
        kill((pid_t)g_emulator, sig);
}

int netserve_main(int argc, char **argv)
{
    const char *work = NULL, *tftp = NULL, *confp = NULL, *img = NULL;
    struct strlist files = {0};
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (i + 1 >= argc)
            break;
        if (strcmp(a, "--work") == 0)
            work = argv[++i];
        else if (strcmp(a, "--tftp") == 0)
            tftp = argv[++i];
        else if (strcmp(a, "--conf") == 0)
            confp = argv[++i];
        else if (strcmp(a, "--standin") == 0)
            img = argv[++i];
        else if (strcmp(a, "--file") == 0 && strchr(argv[i + 1], '='))
            strlist_push(&files, argv[++i]);
        else
            break;
    }
    if (!work || !tftp || !confp || !img || i >= argc || !files.n) {
        fprintf(stderr, "usage: trillian " NETSERVE_COMMAND " --work DIR --tftp DIR --conf "
                "FILE --standin IMAGE --file DISKPATH=TREEFILE... -- EMULATOR ARGS...\n"
                "(run by a netboot boot check; see builder/drivers/netserve.h)\n");
        strlist_free(&files);
        return 2;
    }
    char **emu = argv + i;
    setvbuf(stdout, NULL, _IOLBF, 0);

    int rc = check_standin(work, img, &files);
    strlist_free(&files);
    if (rc)
        return rc;

    char *conf = NULL;
    if (read_file(confp, &conf, NULL) < 0)
        return fail("cannot read the tree's dnsmasq configuration %s: %s", confp,
                    strerror(errno));
    char server[16];
    if (server_address(conf, server) < 0) {
        free(conf);
        return fail("%s has no dhcp-range=A.B.C.D,... line to put the server on", confp);
    }
    if ((rc = enter_namespace()) != 0) {
        free(conf);
        return rc;
    }
    if (g_real_uid != 0 && access("/dev/net/tun", R_OK | W_OK) != 0) {
        free(conf);
        return fail("uid %u cannot open /dev/net/tun (%s) to make the tap %s: run the check as "
                    "root, or give the device mode 0666 (Debian's default)",
                    (unsigned)g_real_uid, strerror(errno), NETSERVE_TAP);
    }
    char *cidr = xasprintf("%s/24", server);
    const char *lo[] = {"ip", "link", "set", "lo", "up", NULL};
    const char *tap[] = {"ip", "tuntap", "add", "dev", NETSERVE_TAP, "mode", "tap", NULL};
    const char *addr[] = {"ip", "addr", "add", cidr, "dev", NETSERVE_TAP, NULL};
    const char *up[] = {"ip", "link", "set", NETSERVE_TAP, "up", NULL};
    rc = ip(lo) || ip(tap) || ip(addr) || ip(up) ? 4 : 0;
    free(cidr);
    if (rc) {
        free(conf);
        return rc;
    }
    SAY("own network namespace, tap %s at %s/24 (nothing on the host's network)",
        NETSERVE_TAP, server);

    char *mine = adapt_conf(conf, tftp);
    free(conf);
    char *myconf = path_join(work, "dnsmasq.conf");
    char *leases = path_join(work, "dnsmasq.leases");
    if (write_file_atomic(myconf, mine, strlen(mine), 0644) < 0) {
        rc = fail("cannot write %s: %s", myconf, strerror(errno));
        free(mine);
        free(myconf);
        free(leases);
        return rc;
    }
    free(mine);
    SAY("dnsmasq with the tree's %s (tftp-root %s, interface %s)", confp, tftp, NETSERVE_TAP);
    char *conf_arg = xasprintf("--conf-file=%s", myconf);
    char *lease_arg = xasprintf("--dhcp-leasefile=%s", leases);
    /* dnsmasq keeps this process's user instead of becoming nobody, who
     * could not read a tree in a cache private to the caller: as root,
     * --user/--group root; in a user namespace, where it cannot change its
     * groups at all, --no-daemon (debug mode: the same, but its log comes
     * later and with time stamps) */
    bool userns = g_real_uid != 0; /* enter_namespace made a user namespace */
    const char *dargv[] = {netserve_dnsmasq(), userns ? "--no-daemon" : "--keep-in-foreground",
                           conf_arg, "--log-facility=-", lease_arg, "--pid-file=", "--no-ping",
                           userns ? NULL : "--user=root", "--group=root", NULL};
    struct run_command d = {.argv = dargv, .err = RUN_ERR_TO_OUT, .pdeathsig = SIGKILL};
    if (run_start(&d) < 0) {
        rc = fail("cannot start %s: %s (apt-get install dnsmasq-base)", netserve_dnsmasq(),
                  strerror(d.start_errno));
        goto out;
    }
    /* up when its TFTP port is taken; gone if it exited */
    double t0 = now_seconds();
    for (;;) {
        int ws;
        pid_t w = waitpid(d.pid, &ws, WNOHANG);
        if (w == d.pid) {
            d.pid = 0;
            rc = fail("dnsmasq exited (%s %d) before serving: %s", WIFEXITED(ws) ? "status"
                      : "signal", WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws),
                      "its own message is the line above");
            goto out;
        }
        if (udp_taken(server, 69))
            break;
        if (now_seconds() - t0 > 10) {
            rc = fail("dnsmasq did not open TFTP on %s:69 within 10 s", server);
            goto out;
        }
        usleep(50000);
    }
    SAY("dnsmasq is up (DHCP and TFTP on %s); starting %s", server, emu[0]);

    struct sigaction sa = {.sa_handler = forward};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    struct run_command q = {.argv = (const char *const *)emu, .in = RUN_IN_INHERIT,
                            .err = RUN_ERR_TO_OUT, .pdeathsig = SIGKILL};
    if (run_start(&q) < 0) {
        rc = fail("cannot start %s: %s", emu[0], strerror(q.start_errno));
        goto out;
    }
    g_emulator = q.pid;
    rc = run_finish(&q);
    g_emulator = 0;
    SAY("%s exited (%d); stopping dnsmasq", emu[0], rc);
out:
    if (d.pid > 0) {
        kill(d.pid, SIGTERM);
        waitpid(d.pid, NULL, 0);
    }
    free(conf_arg);
    free(lease_arg);
    free(myconf);
    free(leases);
    return rc;
}
