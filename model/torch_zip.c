// torch_zip.c: central directory of a zip archive (zip64 included) over a mapping; deflated
// members through libzip.
#include "common/xalloc.h"
#include "model/torch_zip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define DEFLATE_MAX_RATIO 1032u  // deflate cannot expand more than this: bounds a claimed size

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

int torch_zip_magic(const unsigned char *data, size_t size) { return size >= 4 && rd32(data) == SIG_LOCAL; }

// Finds the end-of-central-directory record and the directory's (entries, offset, size).
static int find_directory(const struct torch_zip *z, uint64_t *entries, uint64_t *off, uint64_t *len, xsa_error *err) {
    const unsigned char *d = z->data;
    size_t n = z->size;
    if (n < 22) return xsa_fail(err, XSA_EBADINPUT, "%s: %zu bytes is too short for a zip archive; the file is truncated", z->path, n);
    size_t lo = n - 22 > 65535 ? n - 22 - 65535 : 0, at = n - 22 + 1;
    while (at-- > lo)
        if (rd32(d + at) == SIG_EOCD && at + 22 + rd16(d + at + 20) == n) break;
    if (at + 1 == lo || rd32(d + at) != SIG_EOCD)
        return xsa_fail(err, XSA_EBADINPUT, "%s: no zip end-of-central-directory record; the file is truncated or not written by torch.save", z->path);
    const unsigned char *e = d + at;
    if (rd16(e + 4) || rd16(e + 6))
        return xsa_fail(err, XSA_EBADINPUT, "%s: a multi-disk zip archive; torch.save writes one file", z->path);
    *entries = rd16(e + 10);
    *len = rd32(e + 12);
    *off = rd32(e + 16);
    if (*entries != 0xffff && *len != 0xffffffffu && *off != 0xffffffffu) return 0;
    // zip64: the locator sits just before the record and points at the zip64 record
    if (at < 20 || rd32(e - 20) != SIG_LOC64)
        return xsa_fail(err, XSA_EBADINPUT, "%s: zip64 sizes without a zip64 locator; the file is corrupt", z->path);
    uint64_t r = rd64(e - 20 + 8);
    if (r > n - 56 || n < 56 || rd32(d + r) != SIG_EOCD64)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the zip64 end-of-central-directory record is missing or out of the file; the file is corrupt", z->path);
    *entries = rd64(d + r + 32);
    *len = rd64(d + r + 40);
    *off = rd64(d + r + 48);
    return 0;
}

// The zip64 extra field replaces whichever of (size, comp_size, offset) read 0xffffffff.
static int zip64_extra(const unsigned char *x, size_t xlen, uint64_t *size, uint64_t *csize, uint64_t *loff) {
    while (xlen >= 4) {
        uint32_t id = rd16(x), n = rd16(x + 2);
        if (n > xlen - 4) return -1;
        if (id == 1) {
            const unsigned char *p = x + 4, *end = x + 4 + n;
            uint64_t *f[3] = {size, csize, loff};
            for (int i = 0; i < 3; i++) {
                if (*f[i] != 0xffffffffu) continue;
                if (end - p < 8) return -1;
                *f[i] = rd64(p);
                p += 8;
            }
            return 0;
        }
        x += 4 + n;
        xlen -= 4 + n;
    }
    return 0;
}

static int parse_entry(struct torch_zip *z, const unsigned char *c, size_t avail, size_t *used, xsa_error *err) {
    if (avail < 46 || rd32(c) != SIG_CENTRAL)
        return xsa_fail(err, XSA_EBADINPUT, "%s: zip central directory entry %d is malformed; the file is corrupt", z->path, z->n);
    size_t nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
    if (46 + nlen + xlen + clen > avail)
        return xsa_fail(err, XSA_EBADINPUT, "%s: zip central directory entry %d runs past the directory; the file is corrupt", z->path, z->n);
    *used = 46 + nlen + xlen + clen;
    struct tz_member *m = &z->members[z->n];
    memset(m, 0, sizeof *m);
    if (memchr(c + 46, 0, nlen))
        return xsa_fail(err, XSA_EBADINPUT, "%s: zip member %d has a NUL in its name; the file is corrupt", z->path, z->n);
    m->name = xsa_malloc(nlen + 1);
    memcpy(m->name, c + 46, nlen);
    m->name[nlen] = '\0';
    z->n++;  // counted now, so close() frees the name on any error below
    uint32_t flags = rd16(c + 8);
    m->method = (int)rd16(c + 10);
    uint64_t csize = rd32(c + 20), size = rd32(c + 24), loff = rd32(c + 42);
    if (zip64_extra(c + 46 + nlen, xlen, &size, &csize, &loff))
        return xsa_fail(err, XSA_EBADINPUT, "%s: zip member '%s' has a malformed zip64 extra field; the file is corrupt", z->path, m->name);
    if (flags & 1)
        return xsa_fail(err, XSA_EBADINPUT, "%s: zip member '%s' is encrypted; torch.save never encrypts", z->path, m->name);
    if (m->method != 0 && m->method != 8)
        return xsa_fail(err, XSA_EBADINPUT, "%s: zip member '%s' uses compression method %d; readable: stored (0) and deflated (8)", z->path, m->name, m->method);
    if (m->method == 0 && csize != size)
        return xsa_fail(err, XSA_EBADINPUT, "%s: stored zip member '%s' claims %llu bytes compressed but %llu uncompressed; the file is corrupt",
                        z->path, m->name, (unsigned long long)csize, (unsigned long long)size);
    if (m->method == 8 && size > csize * DEFLATE_MAX_RATIO + 1024)
        return xsa_fail(err, XSA_EBADINPUT, "%s: deflated zip member '%s' claims %llu bytes from %llu, more than deflate can produce; the file is corrupt",
                        z->path, m->name, (unsigned long long)size, (unsigned long long)csize);
    if (loff > z->size || z->size - loff < 30 || rd32(z->data + loff) != SIG_LOCAL)
        return xsa_fail(err, XSA_EBADINPUT, "%s: zip member '%s' has no local header at offset %llu; the file is truncated or corrupt",
                        z->path, m->name, (unsigned long long)loff);
    uint64_t start = loff + 30 + rd16(z->data + loff + 26) + rd16(z->data + loff + 28);
    if (start > z->size || csize > z->size - start)
        return xsa_fail(err, XSA_EBADINPUT, "%s: zip member '%s' (%llu bytes at offset %llu) runs past the %zu-byte file; the file is truncated",
                        z->path, m->name, (unsigned long long)csize, (unsigned long long)start, z->size);
    m->raw = z->data + start;
    m->size = size;
    m->comp_size = csize;
    return 0;
}

static int cmp_member(const void *a, const void *b) {
    return strcmp((*(struct tz_member *const *)a)->name, (*(struct tz_member *const *)b)->name);
}

// Sorts the names for torch_zip_find; two members of one name would make what is read
// depend on the reader (ours or libzip), so they are refused.
static int index_names(struct torch_zip *z, xsa_error *err) {
    z->by_name = xsa_malloc((size_t)(z->n ? z->n : 1) * sizeof *z->by_name);
    for (int i = 0; i < z->n; i++) z->by_name[i] = &z->members[i];
    qsort(z->by_name, (size_t)z->n, sizeof *z->by_name, cmp_member);
    for (int i = 1; i < z->n; i++)
        if (!strcmp(z->by_name[i]->name, z->by_name[i - 1]->name))
            return xsa_fail(err, XSA_EBADINPUT, "%s: the zip archive holds two members named '%.200s'; the file is corrupt", z->path, z->by_name[i]->name);
    return 0;
}

int torch_zip_open(struct torch_zip *z, const char *path, const unsigned char *data, size_t size, xsa_error *err) {
    memset(z, 0, sizeof *z);
    z->path = path;
    z->data = data;
    z->size = size;
    uint64_t entries = 0, off = 0, len = 0;
    int rc = find_directory(z, &entries, &off, &len, err);
    if (rc) return rc;
    if (off > size || len > size - off)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the zip central directory (%llu bytes at %llu) lies outside the %zu-byte file; the file is truncated",
                        path, (unsigned long long)len, (unsigned long long)off, size);
    if (entries > TZ_MAX_MEMBERS || entries > len / 46)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the zip directory claims %llu members in %llu bytes; the file is corrupt",
                        path, (unsigned long long)entries, (unsigned long long)len);
    z->members = xsa_calloc(entries ? entries : 1, sizeof *z->members);
    size_t at = (size_t)off, end = (size_t)(off + len);
    for (uint64_t i = 0; i < entries && !rc; i++) {
        size_t used = 0;
        rc = parse_entry(z, data + at, end - at, &used, err);
        at += used;
    }
    if (!rc) rc = index_names(z, err);
    if (rc) torch_zip_close(z);
    return rc;
}

struct tz_member *torch_zip_find(const struct torch_zip *z, const char *name) {
    struct tz_member key = {.name = (char *)name}, *kp = &key;
    struct tz_member **hit = z->n ? bsearch(&kp, z->by_name, (size_t)z->n, sizeof *z->by_name, cmp_member) : NULL;
    return hit ? *hit : NULL;
}

static int inflate_member(struct torch_zip *z, struct tz_member *m, xsa_error *err) {
    zip_error_t ze;
    zip_error_init(&ze);
    if (!z->za) {
        zip_source_t *src = zip_source_buffer_create(z->data, z->size, 0, &ze);
        if (src && !(z->za = zip_open_from_source(src, ZIP_RDONLY, &ze))) zip_source_free(src);
        if (!z->za) {
            int rc = xsa_fail(err, XSA_EBADINPUT, "%s: libzip cannot open the archive (%s); the file is corrupt", z->path, zip_error_strerror(&ze));
            zip_error_fini(&ze);
            return rc;
        }
    }
    zip_error_fini(&ze);
    zip_int64_t idx = zip_name_locate(z->za, m->name, ZIP_FL_ENC_RAW);
    zip_file_t *f = idx < 0 ? NULL : zip_fopen_index(z->za, (zip_uint64_t)idx, 0);
    if (!f) return xsa_fail(err, XSA_EBADINPUT, "%s: libzip cannot open member '%s' (%s); the file is corrupt", z->path, m->name, zip_strerror(z->za));
    if (!(m->inflated = malloc(m->size ? m->size : 1))) {
        zip_fclose(f);
        return xsa_fail(err, XSA_ERUNTIME, "out of memory inflating %s member '%s' (%llu bytes)", z->path, m->name, (unsigned long long)m->size);
    }
    zip_int64_t got = zip_fread(f, m->inflated, m->size);
    char extra;
    int more = got == (zip_int64_t)m->size && zip_fread(f, &extra, 1) != 0;  // a longer stream, or a CRC mismatch
    int rc = 0;
    if (got != (zip_int64_t)m->size || more)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: zip member '%s' does not inflate to its %llu bytes (%s); the file is corrupt",
                      z->path, m->name, (unsigned long long)m->size, zip_file_strerror(f));
    zip_fclose(f);
    if (rc) {
        free(m->inflated);
        m->inflated = NULL;
    }
    return rc;
}

int torch_zip_read(struct torch_zip *z, struct tz_member *m, const unsigned char **out, xsa_error *err) {
    if (m->method == 0) {
        *out = m->raw;
        return 0;
    }
    int rc = m->inflated ? 0 : inflate_member(z, m, err);
    *out = m->inflated;
    return rc;
}

void torch_zip_close(struct torch_zip *z) {
    for (int i = 0; i < z->n; i++) {
        free(z->members[i].name);
        free(z->members[i].inflated);
    }
    free(z->members);
    free(z->by_name);
    if (z->za) zip_discard(z->za);
    memset(z, 0, sizeof *z);
}
