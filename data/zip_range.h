// zip_range.h: one member of a remote zip archive read by HTTP Range requests: the end of the
// file (the end-of-central-directory record), the central directory, then only the member's
// local header and data, inflated with zlib and checked against its CRC-32. ARC's original zip is
// 680,841,265 bytes; its test members are about 1 MB. Only what such archives use is read (stored
// or deflated members, no zip64, no encryption); anything else is refused by name. Every size and
// offset in the archive is checked against the file's length and the caller's bound.
#ifndef XSA_DATA_ZIP_RANGE_H
#define XSA_DATA_ZIP_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "data/http.h"

#define ZIP_RANGE_TAIL (22 + 65535)          // the end record and the longest comment
#define ZIP_RANGE_MAX_CD ((size_t)64 << 20)  // central directory bytes read at most

struct zip_entry {             // one central-directory entry
    uint16_t method;           // 0 stored, 8 deflated
    uint32_t crc32, csize, usize, local_offset;
};

// The central directory's place from the last `len` bytes of a `total`-byte archive. XSA_ERUNTIME
// naming `where` when there is no end record, the archive is zip64 or spans disks, or the
// directory does not fit before the end record.
int zip_range_find_cd(const unsigned char *tail, size_t len, uint64_t total, const char *where, uint64_t *cd_offset,
                      uint64_t *cd_size, xsa_error *err);

// The entry named `member` in central directory bytes `cd`; XSA_ERUNTIME when it is absent,
// malformed, encrypted, zip64, or over `max_size` bytes (compressed or not).
int zip_range_find_member(const unsigned char *cd, size_t len, const char *member, size_t max_size, const char *where,
                          struct zip_entry *e, xsa_error *err);

// The member's bytes from `local` (its local header onwards): (e->usize) malloc'd into *out.
int zip_range_inflate(const unsigned char *local, size_t len, const struct zip_entry *e, const char *where,
                      unsigned char **out, xsa_error *err);

// The three steps over HTTP (2 or 3 requests): the member's bytes, (*len) malloc'd into *out
// (the caller stores them). *not_found is set on an HTTP 404. The server must answer Range
// requests with 206.
int zip_range_fetch(struct http_client *http, const char *url, const char *member, size_t max_size,
                    unsigned char **out, size_t *len, int *not_found, xsa_error *err);

#endif
