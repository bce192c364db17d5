/* Detached OpenSSH signatures through ssh-keygen (sshsig.h). */
#define _GNU_SOURCE
#include "sshsig.h"

#include <ctype.h>
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

/* The end of an allowed-signers field at P: the first blank outside
 * double quotes. */
static const char *field_end(const char *p)
{
    bool q = false;
    for (; *p && (q || (*p != ' ' && *p != '\t')); p++)
        q ^= *p == '"';
    return p;
}

static bool base64_word(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && (isalnum((unsigned char)p[i]) || p[i] == '+' || p[i] == '/' || p[i] == '='))
        i++;
    return n > 0 && i == n;
}

/* Line L of an allowed-signers or public-key file as a line for our own
 * allowed-signers file (into B), or nothing for a key restricted to other
 * namespaces (*OTHER counts them). -1 with *WHY for a line that is not one. */
static int trust_line(const char *file, int lineno, const char *l, struct buf *b, int *other,
                      char **why)
{
    struct buf opts = BUF_INIT;
    bool ours = true;
    if (!key_type(l)) { /* principals, then perhaps options */
        l = field_end(l);
        l += strspn(l, " \t");
    }
    if (*l && !key_type(l)) {
        const char *end = field_end(l);
        for (const char *o = l; o < end;) {
            const char *e = o;
            bool q = false;
            for (; e < end && (q || *e != ','); e++)
                q ^= *e == '"';
            size_t n = (size_t)(e - o);
            if (n > 12 && !strncmp(o, "namespaces=\"", 12) && o[n - 1] == '"') {
                ours = false; /* a list of patterns: ours if one is ours or "*" */
                for (const char *ns = o + 12; ns < o + n - 1;) {
                    size_t k = strcspn(ns, ",\"");
                    ours |= (k == strlen(SSHSIG_NAMESPACE) &&
                             !strncmp(ns, SSHSIG_NAMESPACE, k)) || (k == 1 && *ns == '*');
                    ns += k + (ns[k] == ',');
                }
            } else if ((n == 14 && !strncmp(o, "cert-authority", 14)) ||
                       (n > 13 && !strncmp(o, "valid-after=\"", 13)) ||
                       (n > 14 && !strncmp(o, "valid-before=\"", 14))) {
                buf_printf(&opts, ",%.*s", (int)n, o); /* ssh-keygen applies them */
            } else {
                *why = xasprintf("%s:%d: an option Trillian does not know (%.*s): a line may "
                                 "hold principals, then cert-authority, namespaces=\"…\", "
                                 "valid-after=\"…\" or valid-before=\"…\", then the key",
                                 file, lineno, (int)n, o);
                buf_free(&opts);
                return -1;
            }
            o = e + (e < end);
        }
        l = end + strspn(end, " \t");
    }
    const char *k64 = l + strcspn(l, " \t");
    k64 += strspn(k64, " \t");
    if (!key_type(l) || !base64_word(k64, strcspn(k64, " \t"))) {
        *why = xasprintf("%s:%d: not a public key (expected \"ssh-ed25519 AAAA… comment\", as "
                         "in KEY.pub, or an allowed-signers line: \"PRINCIPALS [OPTIONS] "
                         "ssh-ed25519 AAAA…\")", file, lineno);
        buf_free(&opts);
        return -1;
    }
    if (ours)
        buf_printf(b, SSHSIG_PRINCIPAL " namespaces=\"" SSHSIG_NAMESPACE "\"%s %s\n", opts.p, l);
    else
        (*other)++;
    buf_free(&opts);
    return 0;
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
        int lineno = 0, other = 0, rc = 0;
        for (char *l = text, *nl; rc == 0 && l; l = nl) {
            nl = strchr(l, '\n');
            if (nl)
                *nl++ = 0;
            lineno++;
            l += strspn(l, " \t");
            l[strcspn(l, "\r")] = 0;
            if (*l && *l != '#')
                rc = trust_line(trust[i], lineno, l, &b, &other, why);
        }
        free(text);
        if (rc == 0 && b.n == before)
            *why = xasprintf("the trusted key file %s holds no key for the namespace \"%s\" "
                             "(expected lines like \"ssh-ed25519 AAAA… comment\", as in "
                             "KEY.pub%s)", trust[i], SSHSIG_NAMESPACE,
                             other ? "; its keys are restricted to other namespaces" : "");
        if (*why) {
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
