/* `trillian publish OUT... --to DIR [--sign KEY]`: a static directory any
 * web server can serve as it is (docs/publish.md):
 *   index.html           the matrix of the builds (report --matrix), with
 *                        each build's downloads, readable without scripts
 *   builds/RECIPE/       each build's manifest, report, boot transcripts and
 *                        images (compressed: NAME.img.zst; ISOs and
 *                        archives as they are), downloads.json; each
 *                        apt-archive stage's tree as it is, apt.json
 *   SHA256SUMS(.sig)     every file of index.html and builds/, signed
 *   signing-key.pub      the public half of KEY
 *   cache/KEY.json(.sig) a stage entry's metadata (key, stage, kind, files
 *                        with sha256 and size, payload) and its signature
 *   cache/KEY.tar.zst    its files
 * An entry already in DIR/cache is left as it is (keys are immutable);
 * every file appears by rename or link, whole. */
#ifndef TRILLIAN_RELEASE_H
#define TRILLIAN_RELEASE_H

#include <stddef.h>

struct release_opts {
    const char *const *outs; /* build output directories */
    size_t nouts;
    const char *to;          /* DIR */
    const char *sign;        /* KEY (private, or .pub with ssh-agent), or NULL */
    const char *cache;       /* where the builds' entries are */
};

/* Returns trillian's exit status: 0, 1 (something could not be
 * published, said on stderr), 2 (usage: an OUT without a manifest). */
int release_publish(const struct release_opts *o);

/* The cache entry's metadata format, written and checked. */
#define RELEASE_FORMAT "trillian-cache-entry-1"

#endif
