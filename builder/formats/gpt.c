/* GPT fix-ups on image files; see gpt.h. */
#define _GNU_SOURCE
#include "gpt.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "base/sha256.h"
#include "base/util.h"

/* ---- CRC32 ------------------------------------------------------------- */

/* zlib's crc32 is the same CRC (IEEE 802.3, reflected, inverted). */
uint32_t gpt_crc32_update(uint32_t crc, const void *data, size_t n)
{
    return (uint32_t)crc32_z(crc, data, n);
}

uint32_t gpt_crc32(const void *data, size_t n) { return gpt_crc32_update(0, data, n); }

/* ---- GUIDs ------------------------------------------------------------- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int guid_valid(const char *t)
{
    if (!t || strlen(t) != 36)
        return 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (t[i] != '-')
                return 0;
        } else if (hexval((unsigned char)t[i]) < 0) {
            return 0;
        }
    }
    return 1;
}

int guid_parse(const char *t, uint8_t out[16])
{
    if (!guid_valid(t))
        return -1;
    uint8_t be[16];
    int k = 0;
    for (int i = 0; i < 36 && k < 16; i++) {
        if (t[i] == '-')
            continue;
        be[k++] = (uint8_t)(hexval((unsigned char)t[i]) << 4 | hexval((unsigned char)t[i + 1]));
        i++;
    }
    /* Text order is big-endian; GPT stores the first three fields LE. */
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    for (int i = 0; i < 16; i++)
        out[i] = be[order[i]];
    return 0;
}

void guid_format(const uint8_t g[16], char out[37])
{
    snprintf(out, 37, "%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X",
             g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12],
             g[13], g[14], g[15]);
}

void guid_derive(const char *seed, char out[37])
{
    struct sha256 s;
    unsigned char h[32];
    sha256_init(&s);
    sha256_update(&s, "trillian-guid:", 14);
    sha256_update(&s, seed, strlen(seed));
    sha256_final(&s, h);
    h[6] = (unsigned char)((h[6] & 0x0f) | 0x40); /* version 4 */
    h[8] = (unsigned char)((h[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", h[0],
             h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11], h[12], h[13],
             h[14], h[15]);
}

/* ---- on-disk structures --------------------------------------------------- */

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

#define H_CRC 16
#define H_MY_LBA 24
#define H_ALT_LBA 32
#define H_FIRST 40
#define H_LAST 48
#define H_GUID 56
#define H_ENTRIES_LBA 72
#define H_NENTRIES 80
#define H_ENTRY_SIZE 84
#define H_ENTRIES_CRC 88

static void seterr(char *err, size_t len, const char *fmt, ...) PRINTF_LIKE(3, 4);
static void seterr(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

static int pread_all(int fd, void *buf, size_t n, off_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, off + (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}

static int pwrite_all(int fd, const void *buf, size_t n, off_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pwrite(fd, (const char *)buf + done, n - done, off + (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}

struct copy {
    uint8_t *hdr;   /* one sector */
    uint8_t *ents;  /* nentries * entry_size */
    uint64_t lba, entries_lba;
    size_t ents_len;
};

static void copy_free(struct copy *c)
{
    free(c->hdr);
    free(c->ents);
    c->hdr = c->ents = NULL;
}

/* Loads and checks the header at LBA and its entries. */
static int load_copy(int fd, unsigned sector, uint64_t lba, struct copy *c, const char *which,
                     char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->hdr = xmalloc(sector);
    c->lba = lba;
    if (pread_all(fd, c->hdr, sector, (off_t)(lba * sector)) < 0) {
        seterr(err, errlen, "%s GPT header: cannot read LBA %llu", which, (unsigned long long)lba);
        return -1;
    }
    if (memcmp(c->hdr, "EFI PART", 8) != 0) {
        seterr(err, errlen, "%s GPT header: no 'EFI PART' signature at LBA %llu", which,
               (unsigned long long)lba);
        return -1;
    }
    uint32_t hsize = le32(c->hdr + 12);
    if (hsize < 92 || hsize > sector) {
        seterr(err, errlen, "%s GPT header: bad header size %u", which, hsize);
        return -1;
    }
    uint32_t want = le32(c->hdr + H_CRC);
    put32(c->hdr + H_CRC, 0);
    uint32_t got = gpt_crc32(c->hdr, hsize);
    put32(c->hdr + H_CRC, want);
    if (got != want) {
        seterr(err, errlen, "%s GPT header: CRC mismatch (stored %08x, computed %08x)", which,
               want, got);
        return -1;
    }
    if (le64(c->hdr + H_MY_LBA) != lba) {
        seterr(err, errlen, "%s GPT header: claims to be at LBA %llu, found at %llu", which,
               (unsigned long long)le64(c->hdr + H_MY_LBA), (unsigned long long)lba);
        return -1;
    }
    uint32_t n = le32(c->hdr + H_NENTRIES), esz = le32(c->hdr + H_ENTRY_SIZE);
    if (n == 0 || n > 4096 || esz < 128 || esz > 4096 || esz % 8) {
        seterr(err, errlen, "%s GPT header: implausible entry array (%u entries of %u bytes)",
               which, n, esz);
        return -1;
    }
    c->entries_lba = le64(c->hdr + H_ENTRIES_LBA);
    c->ents_len = (size_t)n * esz;
    c->ents = xmalloc(c->ents_len);
    if (pread_all(fd, c->ents, c->ents_len, (off_t)(c->entries_lba * sector)) < 0) {
        seterr(err, errlen, "%s GPT entries: cannot read at LBA %llu", which,
               (unsigned long long)c->entries_lba);
        return -1;
    }
    if (gpt_crc32(c->ents, c->ents_len) != le32(c->hdr + H_ENTRIES_CRC)) {
        seterr(err, errlen, "%s GPT entries: CRC mismatch", which);
        return -1;
    }
    return 0;
}

static void reseal(struct copy *c)
{
    uint32_t hsize = le32(c->hdr + 12);
    put32(c->hdr + H_ENTRIES_CRC, gpt_crc32(c->ents, c->ents_len));
    put32(c->hdr + H_CRC, 0);
    put32(c->hdr + H_CRC, gpt_crc32(c->hdr, hsize));
}

static int open_both(const char *path, int flags, unsigned sector, struct copy *pri,
                     struct copy *bak, int *fdp, char *err, size_t errlen)
{
    memset(pri, 0, sizeof *pri);
    memset(bak, 0, sizeof *bak);
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0) {
        seterr(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    *fdp = fd;
    if (load_copy(fd, sector, 1, pri, "primary", err, errlen) < 0)
        return -1;
    uint64_t alt = le64(pri->hdr + H_ALT_LBA);
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < 0 || alt != (uint64_t)size / sector - 1) {
        seterr(err, errlen, "primary GPT header: backup LBA %llu is not the last sector of "
               "the image (%lld bytes)", (unsigned long long)alt, (long long)size);
        return -1;
    }
    if (load_copy(fd, sector, alt, bak, "backup", err, errlen) < 0)
        return -1;
    if (le64(bak->hdr + H_ALT_LBA) != 1 || memcmp(pri->hdr + H_GUID, bak->hdr + H_GUID, 16) ||
        pri->ents_len != bak->ents_len || memcmp(pri->ents, bak->ents, pri->ents_len)) {
        seterr(err, errlen, "primary and backup GPT disagree");
        return -1;
    }
    return 0;
}

int gpt_read(const char *path, unsigned sector, struct gpt_info *out, char *err, size_t errlen)
{
    struct copy pri, bak;
    int fd = -1, rc = -1;
    memset(out, 0, sizeof *out);
    if (open_both(path, O_RDONLY, sector, &pri, &bak, &fd, err, errlen) < 0)
        goto done;
    memcpy(out->disk_guid, pri.hdr + H_GUID, 16);
    out->first_usable = le64(pri.hdr + H_FIRST);
    out->last_usable = le64(pri.hdr + H_LAST);
    out->backup_lba = le64(pri.hdr + H_ALT_LBA);
    out->nentries = le32(pri.hdr + H_NENTRIES);
    out->entry_size = le32(pri.hdr + H_ENTRY_SIZE);
    static const uint8_t zero[16];
    for (uint32_t i = 0; i < out->nentries && out->nparts < GPT_MAX_PARTS; i++) {
        const uint8_t *e = pri.ents + (size_t)i * out->entry_size;
        if (memcmp(e, zero, 16) == 0)
            continue;
        struct gpt_part *p = &out->parts[out->nparts++];
        p->index = i + 1;
        memcpy(p->type, e, 16);
        memcpy(p->guid, e + 16, 16);
        p->first_lba = le64(e + 32);
        p->last_lba = le64(e + 40);
        p->attrs = le64(e + 48);
        size_t k = 0;
        for (int j = 0; j < 36; j++) {
            unsigned c = (unsigned)e[56 + 2 * j] | (unsigned)e[57 + 2 * j] << 8;
            if (!c)
                break;
            p->name[k++] = c < 128 ? (char)c : '?';
        }
        p->name[k] = 0;
    }
    rc = 0;
done:
    if (fd >= 0)
        close(fd);
    copy_free(&pri);
    copy_free(&bak);
    return rc;
}

int gpt_set_guids(const char *path, unsigned sector, const uint8_t disk_guid[16],
                  const uint8_t *const *part_guids, const uint8_t *const *part_types,
                  size_t nparts, char *err, size_t errlen)
{
    struct copy pri, bak;
    int fd = -1, rc = -1;
    if (open_both(path, O_RDWR, sector, &pri, &bak, &fd, err, errlen) < 0)
        goto done;
    uint32_t n = le32(pri.hdr + H_NENTRIES), esz = le32(pri.hdr + H_ENTRY_SIZE);
    if (nparts > n) {
        seterr(err, errlen, "GPT has only %u entries, asked to patch %zu", n, nparts);
        goto done;
    }
    struct copy *both[2] = {&pri, &bak};
    for (int k = 0; k < 2; k++) {
        struct copy *c = both[k];
        if (disk_guid)
            memcpy(c->hdr + H_GUID, disk_guid, 16);
        for (size_t i = 0; i < nparts; i++) {
            uint8_t *e = c->ents + i * esz;
            if (part_types && part_types[i])
                memcpy(e, part_types[i], 16);
            if (part_guids && part_guids[i])
                memcpy(e + 16, part_guids[i], 16);
        }
        reseal(c);
    }
    for (int k = 0; k < 2; k++) {
        struct copy *c = both[k];
        if (pwrite_all(fd, c->ents, c->ents_len, (off_t)(c->entries_lba * sector)) < 0 ||
            pwrite_all(fd, c->hdr, sector, (off_t)(c->lba * sector)) < 0) {
            seterr(err, errlen, "cannot write GPT to %s: %s", path, strerror(errno));
            goto done;
        }
    }
    if (fsync(fd) < 0) {
        seterr(err, errlen, "cannot sync %s: %s", path, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    if (fd >= 0 && close(fd) < 0 && rc == 0) {
        seterr(err, errlen, "cannot close %s: %s", path, strerror(errno));
        rc = -1;
    }
    copy_free(&pri);
    copy_free(&bak);
    return rc;
}
