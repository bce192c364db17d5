/* One Debian binary package, pinned at plan time and fetched at run time.
 *
 * debfetch_resolve asks `apt-cache show --no-all-versions` for apt's
 * candidate (or an exact version) and returns its version, archive SHA256
 * and pool file name: a stage puts those into its cache key, so a new upload
 * to the archive is a new key and the same one is a cache hit.
 * debfetch_get downloads it with `apt-get download` into
 * CACHE/downloads/apt/ (kept across builds, shared by stages), checks the
 * SHA256, and returns the path; a verified copy already there is reused.
 * Used by the initramfs stage (busybox-static) and the ESP stage
 * (systemd-boot-efi); the same code path serves any architecture apt knows. */
#ifndef TRILLIAN_DEBFETCH_H
#define TRILLIAN_DEBFETCH_H

#include "stage.h"

struct deb_pin {
    char *package, *arch, *version, *sha256, *filename;
};

/* Plan time (no stage context: spawns apt-cache itself, argv only). ARCH is
 * the Debian architecture ("amd64"); VERSION may be NULL for the candidate.
 * Returns 0, or -1 with a one-line reason in *err (caller frees). */
int debfetch_resolve(const char *package, const char *arch, const char *version,
                     struct deb_pin *pin, char **err);
/* Run time: the verified .deb's path (new string), or NULL after cx_fail
 * naming SETTING (the recipe key to change). */
char *debfetch_get(const struct stage_ctx *cx, const struct deb_pin *pin,
                   const char *setting);
void deb_pin_free(struct deb_pin *pin);

#endif
