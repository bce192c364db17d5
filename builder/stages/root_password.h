/* The root password of a userland stage, hashed for /etc/shadow. Shared by
 * the userland kinds (debootstrap, minimal) so that both hash alike. */
#ifndef TRILLIAN_ROOT_PASSWORD_H
#define TRILLIAN_ROOT_PASSWORD_H

#include "stage.h"

/* SHA-512-crypt hash of PW ("$6$..."), from `openssl passwd -6` run through
 * the stage's log. The salt is derived from the password and the stage's
 * `hostname` setting, so the same recipe gives the same image. New string,
 * or NULL after cx_fail naming userland.root_password. */
char *root_password_hash(const struct stage_ctx *cx, const char *pw);

#endif
