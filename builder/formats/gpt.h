/* GUID Partition Table fix-ups on image files: GUID text <-> on-disk bytes,
 * CRC32, reading a GPT back, and setting the disk GUID and partition GUIDs
 * that libparted (3.5) always picks at random. Both the primary and the
 * backup header and entry arrays are patched and their CRCs recomputed, so
 * a fixed recipe gives a byte-identical partition table. */
#ifndef TRILLIAN_GPT_H
#define TRILLIAN_GPT_H

#include <stddef.h>
#include <stdint.h>

#define GPT_MAX_PARTS 128

/* Partition type GUIDs (text). */
#define GPT_TYPE_ESP "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
#define GPT_TYPE_LINUX "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
#define GPT_TYPE_SWAP "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"

/* CRC-32 (IEEE 802.3, reflected, as UEFI uses). crc32_update continues a
 * running CRC: start with 0. */
uint32_t gpt_crc32_update(uint32_t crc, const void *data, size_t n);
uint32_t gpt_crc32(const void *data, size_t n);

/* "C12A7328-F81F-11D2-BA4B-00A0C93EC93B" <-> the 16 mixed-endian bytes GPT
 * stores (first three fields little-endian). Parsing is case-insensitive;
 * returns 0, or -1 if the text is not a GUID. Formatting is upper-case. */
int guid_parse(const char *text, uint8_t out[16]);
void guid_format(const uint8_t g[16], char out[37]);
/* A version-4-shaped GUID (lower-case text, as mke2fs -U and blkid print)
 * derived from SEED with SHA-256: the same seed gives the same GUID. */
void guid_derive(const char *seed, char out[37]);
/* Whether TEXT is a well-formed GUID. */
int guid_valid(const char *text);

struct gpt_part {
    unsigned index; /* 1-based entry number */
    uint8_t type[16], guid[16];
    uint64_t first_lba, last_lba, attrs;
    char name[73]; /* ASCII rendering of the UTF-16LE name */
};

struct gpt_info {
    uint8_t disk_guid[16];
    uint64_t first_usable, last_usable, backup_lba;
    uint32_t nentries, entry_size;
    size_t nparts; /* used entries */
    struct gpt_part parts[GPT_MAX_PARTS];
};

/* Reads and checks the GPT of an image file (signature, both header CRCs,
 * both entry-array CRCs, primary and backup agreeing). Returns 0, or -1 with
 * a message in err. */
int gpt_read(const char *path, unsigned sector, struct gpt_info *out, char *err, size_t errlen);

/* Sets the disk GUID and, for entries 1..nparts, the unique GUID of each
 * partition (a NULL row keeps it), in both copies, recomputing all CRCs.
 * type, if not NULL, likewise replaces type GUIDs per entry. */
int gpt_set_guids(const char *path, unsigned sector, const uint8_t disk_guid[16],
                  const uint8_t *const *part_guids, const uint8_t *const *part_types,
                  size_t nparts, char *err, size_t errlen);

#endif
