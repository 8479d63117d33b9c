// zip_range.c: a zip member by HTTP Range (see zip_range.h). Layout: APPNOTE.TXT 4.3.7 (local
// header), 4.3.12 (central directory header), 4.3.16 (end of central directory record).
#include "data/zip_range.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/xalloc.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int zip_range_find_cd(const unsigned char *tail, size_t len, uint64_t total, const char *where, uint64_t *cd_offset,
                      uint64_t *cd_size, xsa_error *err) {
    if (len < 22 || len > total)
        return xsa_fail(err, XSA_ERUNTIME, "%s: %zu bytes at the end of a %llu-byte file: too short for a zip archive",
                        where, len, (unsigned long long)total);
    // The last end record whose comment runs exactly to the end of the file.
    for (size_t at = len - 22 + 1; at-- > 0;) {
        const unsigned char *p = tail + at;
        if (rd32(p) != SIG_END || at + 22 + rd16(p + 20) != len) continue;
        uint64_t end_pos = total - len + at;  // of the end record, in the file
        uint16_t disk = rd16(p + 4), cd_disk = rd16(p + 6), here = rd16(p + 8), entries = rd16(p + 10);
        uint32_t size = rd32(p + 12), off = rd32(p + 16);
        if (entries == 0xffff || size == 0xffffffffu || off == 0xffffffffu)
            return xsa_fail(err, XSA_ERUNTIME, "%s: a zip64 archive, which is not read by Range requests", where);
        if (disk || cd_disk || here != entries)
            return xsa_fail(err, XSA_ERUNTIME, "%s: a multi-disk zip archive, which is not read", where);
        if ((uint64_t)off + size > end_pos || size > ZIP_RANGE_MAX_CD)
            return xsa_fail(err, XSA_ERUNTIME, "%s: central directory of %u bytes at %u does not fit before the end "
                            "record at %llu (or is over %zu bytes)", where, size, off, (unsigned long long)end_pos,
                            ZIP_RANGE_MAX_CD);
        *cd_offset = off;
        *cd_size = size;
        return 0;
    }
    return xsa_fail(err, XSA_ERUNTIME, "%s: no zip end-of-central-directory record in its last %zu bytes: not a zip "
                    "archive", where, len);
}

int zip_range_find_member(const unsigned char *cd, size_t len, const char *member, size_t max_size, const char *where,
                          struct zip_entry *e, xsa_error *err) {
    size_t want = strlen(member);
    for (size_t at = 0; at < len;) {
        if (len - at < 46 || rd32(cd + at) != SIG_CENTRAL)
            return xsa_fail(err, XSA_ERUNTIME, "%s: central directory entry at byte %zu is malformed", where, at);
        const unsigned char *p = cd + at;
        size_t n = rd16(p + 28), x = rd16(p + 30), c = rd16(p + 32);
        if (46 + n + x + c > len - at)
            return xsa_fail(err, XSA_ERUNTIME, "%s: central directory entry at byte %zu runs past its end", where, at);
        if (n == want && !memcmp(p + 46, member, n)) {
            e->method = rd16(p + 10);
            e->crc32 = rd32(p + 16);
            e->csize = rd32(p + 20);
            e->usize = rd32(p + 24);
            e->local_offset = rd32(p + 42);
            if (rd16(p + 8) & 1) return xsa_fail(err, XSA_ERUNTIME, "%s: member %s is encrypted", where, member);
            if (e->csize == 0xffffffffu || e->usize == 0xffffffffu || e->local_offset == 0xffffffffu)
                return xsa_fail(err, XSA_ERUNTIME, "%s: member %s has zip64 sizes, which are not read", where, member);
            if (e->method != 0 && e->method != 8)
                return xsa_fail(err, XSA_ERUNTIME, "%s: member %s uses compression method %u (only stored and deflate "
                                "are read)", where, member, e->method);
            if (e->usize > max_size || e->csize > max_size || (e->method == 0 && e->csize != e->usize))
                return xsa_fail(err, XSA_ERUNTIME, "%s: member %s: sizes %u (compressed) and %u are inconsistent or "
                                "over the %zu-byte limit", where, member, e->csize, e->usize, max_size);
            return 0;
        }
        at += 46 + n + x + c;
    }
    return xsa_fail(err, XSA_ERUNTIME, "%s: archive has no member %s", where, member);
}

int zip_range_inflate(const unsigned char *local, size_t len, const struct zip_entry *e, const char *where,
                      unsigned char **out, xsa_error *err) {
    *out = NULL;
    if (len < 30 || rd32(local) != SIG_LOCAL)
        return xsa_fail(err, XSA_ERUNTIME, "%s: no local file header at byte %u", where, e->local_offset);
    size_t data = 30 + (size_t)rd16(local + 26) + rd16(local + 28);
    if (data > len || e->csize > len - data)
        return xsa_fail(err, XSA_ERUNTIME, "%s: member data at byte %u runs past the bytes received", where,
                        e->local_offset);
    unsigned char *buf = xsa_malloc(e->usize ? e->usize : 1);
    int rc = 0;
    if (e->method == 0) {
        memcpy(buf, local + data, e->usize);
    } else {
        z_stream z;
        memset(&z, 0, sizeof z);
        int zr = inflateInit2(&z, -MAX_WBITS);  // raw deflate, as zip stores it
        z.next_in = (unsigned char *)local + data;
        z.avail_in = e->csize;
        z.next_out = buf;
        z.avail_out = e->usize;
        if (zr == Z_OK) zr = inflate(&z, Z_FINISH);
        if (zr != Z_STREAM_END || z.total_out != e->usize)
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: member at byte %u does not inflate to its %u bytes (zlib %d)", where,
                          e->local_offset, e->usize, zr);
        inflateEnd(&z);
    }
    if (!rc && (uint32_t)crc32(0L, buf, e->usize) != e->crc32)
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: member at byte %u fails its CRC-32 check: damaged", where, e->local_offset);
    if (rc) free(buf);
    else *out = buf;
    return rc;
}

// GET one byte range of `url` into memory.
static int get_range(struct http_client *http, const char *url, const char *range, size_t max, struct http_request *q,
                     int *not_found, xsa_error *err) {
    *q = (struct http_request){.url = url, .range = range, .max_bytes = max};
    return http_fetch(http, q, 1, not_found, err);
}

int zip_range_fetch(struct http_client *http, const char *url, const char *member, size_t max_size,
                    unsigned char **out, size_t *len, int *not_found, xsa_error *err) {
    *out = NULL;
    *len = 0;
    struct http_request tail = {0}, cdq = {0}, loc = {0};
    char range[64];
    snprintf(range, sizeof range, "-%d", ZIP_RANGE_TAIL);
    uint64_t cd_off = 0, cd_size = 0;
    int rc = get_range(http, url, range, ZIP_RANGE_TAIL, &tail, not_found, err);
    if (!rc && tail.range_total < (long long)tail.len)
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: the answer to a Range request names no file size", url);
    if (!rc) rc = zip_range_find_cd((unsigned char *)tail.body, tail.len, (uint64_t)tail.range_total, url, &cd_off,
                                    &cd_size, err);
    const unsigned char *cd = NULL;
    uint64_t tail_at = rc ? 0 : (uint64_t)tail.range_total - tail.len;
    if (!rc && cd_off >= tail_at) {  // the directory is in the bytes at hand (small archives)
        cd = (unsigned char *)tail.body + (cd_off - tail_at);
    } else if (!rc) {
        snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)cd_off,
                 (unsigned long long)(cd_off + cd_size - 1));
        if (!(rc = get_range(http, url, range, cd_size, &cdq, not_found, err)) && cdq.len != cd_size)
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: central directory: %zu bytes received of %llu", url, cdq.len,
                          (unsigned long long)cd_size);
        cd = (unsigned char *)cdq.body;
    }
    struct zip_entry e;
    if (!rc) rc = zip_range_find_member(cd, cd_size, member, max_size, url, &e, err);
    unsigned char *data = NULL;
    if (!rc) {
        // The local header's name and extra field may differ in length from the directory's: allow the most.
        uint64_t end = (uint64_t)e.local_offset + 30 + 2 * 65535 + e.csize;
        if (end > (uint64_t)tail.range_total) end = (uint64_t)tail.range_total;
        snprintf(range, sizeof range, "%u-%llu", e.local_offset, (unsigned long long)(end - 1));
        rc = get_range(http, url, range, (size_t)(end - e.local_offset), &loc, not_found, err);
    }
    char what[1200];
    snprintf(what, sizeof what, "%.1000s!%.150s", url, member);
    if (!rc) rc = zip_range_inflate((unsigned char *)loc.body, loc.len, &e, what, &data, err);
    if (!rc) {
        *out = data;
        *len = e.usize;
    }
    http_requests_free(&tail, 1);
    http_requests_free(&cdq, 1);
    http_requests_free(&loc, 1);
    return rc;
}
