/* Detached signatures in OpenSSH's format (`ssh-keygen -Y sign` and
 * `-Y verify`, OpenSSH 8.1 or later), so anyone can check a published file
 * without Trillian:
 *     ssh-keygen -Y verify -f ALLOWED_SIGNERS -I trillian -n trillian \
 *         -s FILE.sig < FILE
 * Every signature Trillian makes or checks uses the namespace "trillian"
 * and the principal "trillian" (docs/publish.md). */
#ifndef TRILLIAN_SSHSIG_H
#define TRILLIAN_SSHSIG_H

#include <stdbool.h>

#define SSHSIG_NAMESPACE "trillian"
#define SSHSIG_PRINCIPAL "trillian"

/* Signs FILE with the private key KEY (or a public key whose private half
 * ssh-agent holds) into SIG (written whole, then renamed: an existing SIG
 * is replaced only by a complete one). 0, or -1 with *WHY (new string). */
int sshsig_sign(const char *key, const char *file, const char *sig, char **why);

/* The public key of KEY, one line "TYPE BASE64 COMMENT" (new string), or
 * NULL with *WHY. Never the private key. */
char *sshsig_public(const char *key, char **why);

/* An allowed-signers file's text for the keys in the files TRUST (each a
 * public key file, "TYPE BASE64 [COMMENT]" a line, or an allowed-signers
 * file whose principals are then replaced by "trillian"). NULL with *WHY
 * when a file cannot be read or holds no key. */
char *sshsig_allowed(const char *const *trust, int n, char **why);

/* Whether SIG is a good signature of FILE by a key of the allowed-signers
 * file ALLOWED. false with *WHY (new string) otherwise. */
bool sshsig_verify(const char *allowed, const char *file, const char *sig, char **why);

#endif
