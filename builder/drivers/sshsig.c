/* Detached OpenSSH signatures through ssh-keygen (sshsig.h). */
#define _GNU_SOURCE
#include "sshsig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/run_command.h"
#include "base/util.h"

/* The first line of TEXT (new string), for a message. */
static char *first_line(const char *text)
{
    while (text && (*text == '\n' || *text == ' '))
        text++;
    if (!text || !*text)
        return xstrdup("no message");
    return xstrndup(text, strcspn(text, "\n"));
}

static bool key_type(const char *w)
{
    return str_starts(w, "ssh-") || str_starts(w, "ecdsa-") || str_starts(w, "sk-");
}

int sshsig_sign(const char *key, const char *file, const char *sig, char **why)
{
    *why = NULL;
    /* ssh-keygen writes FILE.sig beside FILE: sign a copy named for us */
    char *tmp = xasprintf("%s.signing.%ld", sig, (long)getpid());
    char *tmpsig = xasprintf("%s.sig", tmp);
    int rc = -1;
    if (copy_file(file, tmp) < 0) {
        *why = xasprintf("cannot copy %s to %s: %s", file, tmp, strerror(errno));
    } else {
        const char *argv[] = {"ssh-keygen", "-q", "-Y", "sign", "-f", key, "-n",
                              SSHSIG_NAMESPACE, tmp, NULL};
        struct run_command cmd = {.argv = argv, .out = RUN_OUT_CAPTURE, .err = RUN_ERR_TO_OUT,
                                  .in = RUN_IN_INHERIT};
        int st = run_command(&cmd);
        if (st != 0) {
            char *l = first_line(cmd.output);
            *why = st < 0 ? xstrdup("ssh-keygen is not installed (package openssh-client)")
                          : xasprintf("ssh-keygen -Y sign -f %s: %s", key, l);
            free(l);
        } else if (rename(tmpsig, sig) < 0) {
            *why = xasprintf("cannot rename %s to %s: %s", tmpsig, sig, strerror(errno));
        } else {
            rc = 0;
        }
        run_command_clear(&cmd);
    }
    unlink(tmp);
    unlink(tmpsig);
    free(tmp);
    free(tmpsig);
    return rc;
}

char *sshsig_public(const char *key, char **why)
{
    *why = NULL;
    if (str_ends(key, ".pub")) {
        char *text = NULL;
        if (read_file(key, &text, NULL) < 0) {
            *why = xasprintf("cannot read %s: %s", key, strerror(errno));
            return NULL;
        }
        char *l = first_line(text);
        free(text);
        return l;
    }
    const char *argv[] = {"ssh-keygen", "-y", "-f", key, NULL};
    char *out = NULL;
    int st = run_capture_quiet(argv, &out);
    if (st != 0 || !out || !key_type(out)) {
        *why = xasprintf("ssh-keygen -y -f %s could not read the key (a private key in "
                         "OpenSSH's format, readable, without a passphrase, or its .pub "
                         "with the key in ssh-agent)", key);
        free(out);
        return NULL;
    }
    char *l = first_line(out);
    free(out);
    return l;
}

char *sshsig_allowed(const char *const *trust, int n, char **why)
{
    *why = NULL;
    struct buf b = BUF_INIT;
    for (int i = 0; i < n; i++) {
        char *text = NULL;
        if (read_file(trust[i], &text, NULL) < 0) {
            *why = xasprintf("cannot read the trusted key file %s: %s", trust[i],
                             strerror(errno));
            buf_free(&b);
            return NULL;
        }
        size_t before = b.n;
        char *save = NULL;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            l += strspn(l, " \t");
            if (!*l || *l == '#')
                continue;
            const char *rest = l;
            if (!key_type(l)) { /* allowed-signers: drop the principal */
                rest = l + strcspn(l, " \t");
                rest += strspn(rest, " \t");
            }
            if (*rest)
                buf_printf(&b, SSHSIG_PRINCIPAL " namespaces=\"" SSHSIG_NAMESPACE "\" %s\n",
                           rest);
        }
        free(text);
        if (b.n == before) {
            *why = xasprintf("the trusted key file %s holds no key (expected lines like "
                             "\"ssh-ed25519 AAAA… comment\", as in KEY.pub)", trust[i]);
            buf_free(&b);
            return NULL;
        }
    }
    return buf_detach(&b);
}

bool sshsig_verify(const char *allowed, const char *file, const char *sig, char **why)
{
    *why = NULL;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = xasprintf("cannot open %s: %s", file, strerror(errno));
        return false;
    }
    const char *argv[] = {"ssh-keygen", "-Y", "verify", "-f", allowed, "-I", SSHSIG_PRINCIPAL,
                          "-n", SSHSIG_NAMESPACE, "-s", sig, NULL};
    struct run_command cmd = {.argv = argv, .in = RUN_IN_FD, .in_fd = fd,
                              .out = RUN_OUT_CAPTURE, .err = RUN_ERR_TO_OUT};
    int st = run_command(&cmd);
    close(fd);
    bool ok = st == 0;
    if (!ok) {
        char *l = first_line(cmd.output);
        *why = st < 0 ? xstrdup("ssh-keygen is not installed (package openssh-client)")
                      : xasprintf("not signed by a trusted key, or the signature does not "
                                  "match (ssh-keygen -Y verify: %s)", l);
        free(l);
    }
    run_command_clear(&cmd);
    return ok;
}
