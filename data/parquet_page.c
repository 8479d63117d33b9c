// parquet_page.c: one column chunk's pages (dictionary, data v1, data v2) decompressed and
// decoded into levels and values. Values of uncompressed pages point into the file; the
// buffers of decompressed pages are kept in the column until it is freed.
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "common/grow.h"
#include "common/xalloc.h"
#include "data/parquet_int.h"
#include "data/thrift.h"

enum { PAGE_DATA = 0, PAGE_INDEX = 1, PAGE_DICT = 2, PAGE_DATA_V2 = 3 };
enum { ENC_PLAIN = 0, ENC_PLAIN_DICT = 2, ENC_RLE = 3, ENC_BIT_PACKED = 4, ENC_RLE_DICT = 8 };

static const char *const encoding_names[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
                                             "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                             "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
static const char *const page_names[] = {"DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"};
#define NAME_OF(tab, i) ((i) >= 0 && (size_t)(i) < sizeof tab / sizeof tab[0] ? tab[i] : "unknown")

struct page_header {
    int32_t type, usize, csize, crc;
    int has_crc;
    int32_t sub[8];           // the fields of the one sub-header present, by id (bools as 0/1)
    int has_sub;
};

struct page_ctx {             // what errors name
    const char *where;
    char path[512];
    int64_t offset;           // of the page header in the file
    xsa_error *err;
    struct pq_budget *budget;  // the file's, shared by its columns
};

static int page_fail(const struct page_ctx *pc, const char *what) {
    return xsa_fail(pc->err, XSA_EBADINPUT, "%s: column '%s', page at byte %lld: %s", pc->where, pc->path,
                    (long long)pc->offset, what);
}

// Takes n from a budget (values or bytes); 1 with the error set when the file has spent it.
static int spend(const struct page_ctx *pc, int64_t *left, int64_t n, const char *what) {
    if (n <= *left) {
        *left -= n;
        return 0;
    }
    char msg[256];
    size_t fb = pc->budget->file_bytes;
    long long cap = what[0] == 'v' ? PQ_BUDGET_VALUES(fb) : PQ_BUDGET_BYTES(fb);
    snprintf(msg, sizeof msg, "its pages claim more %s than a Parquet file of %zu bytes holds (over %lld): the file "
             "is damaged or crafted; download it again", what, fb, cap);
    page_fail(pc, msg);
    return 1;
}

// A sub-header (DataPageHeader, DictionaryPageHeader, DataPageHeaderV2): integer and bool
// fields by id; statistics and the rest are skipped.
static int sub_field(void *ctx, struct thrift_reader *r, int16_t id, int t) {
    int32_t *sub = ctx;
    if (id > 0 && id < 8 && (t == THRIFT_TRUE || t == THRIFT_FALSE)) sub[id] = t == THRIFT_TRUE;
    else if (id > 0 && id < 8 && t == THRIFT_I32) return thrift_i32(r, t, &sub[id]);
    else return thrift_skip(r, t);
    return 0;
}

static int page_header_field(void *ctx, struct thrift_reader *r, int16_t id, int t) {
    struct page_header *h = ctx;
    if (id >= 1 && id <= 4 && t == THRIFT_I32) {
        int32_t *dst[] = {&h->type, &h->usize, &h->csize, &h->crc};
        h->has_crc |= id == 4;
        return thrift_i32(r, t, dst[id - 1]);
    }
    if ((id == 5 || id == 7 || id == 8) && t == THRIFT_STRUCT && !h->has_sub) {
        h->has_sub = id;
        return thrift_struct(r, sub_field, h->sub);
    }
    return thrift_skip(r, t);
}

static int read_page_header(struct thrift_reader *r, struct page_header *h) {
    memset(h, 0, sizeof *h);
    h->type = h->usize = h->csize = -1;
    h->sub[7] = 1;  // DataPageHeaderV2.is_compressed defaults to true
    return thrift_struct(r, page_header_field, h);
}

// Decompresses src (sn bytes) into exactly dn bytes; *out is src itself when uncompressed.
static int decompress(const struct page_ctx *pc, int codec, const unsigned char *src, size_t sn, size_t dn,
                      struct pq_column *col, const unsigned char **out) {
    if (codec == 0) {
        if (sn != dn) return page_fail(pc, "uncompressed page whose two sizes differ");
        *out = src;
        return 0;
    }
    if (col->n_bufs == col->cap_bufs) {
        int cap = col->cap_bufs ? col->cap_bufs * 2 : 8;
        col->bufs = xsa_realloc(col->bufs, (size_t)cap * sizeof *col->bufs);
        col->cap_bufs = cap;
    }
    if (spend(pc, &pc->budget->bytes, (int64_t)dn, "decompressed bytes")) return XSA_EBADINPUT;
    unsigned char *dst = xsa_malloc(dn ? dn : 1);
    col->bufs[col->n_bufs++] = dst;
    int ok = 0;
    if (codec == 1) {  // SNAPPY
        size_t ulen = 0, got = dn;
        ok = snappy_uncompressed_length((const char *)src, sn, &ulen) == SNAPPY_OK && ulen == dn &&
             snappy_uncompress((const char *)src, sn, (char *)dst, &got) == SNAPPY_OK && got == dn;
    } else if (codec == 2) {  // GZIP (zlib also accepted: windowBits 15 + 32 detects the header)
        z_stream z = {0};
        if (inflateInit2(&z, 15 + 32) == Z_OK) {
            z.next_in = (Bytef *)src;
            z.avail_in = (uInt)sn;
            z.next_out = dst;
            z.avail_out = (uInt)dn;
            ok = inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out == dn;
            inflateEnd(&z);
        }
    } else if (codec == 6) {  // ZSTD
        size_t got = ZSTD_decompress(dst, dn, src, sn);
        ok = !ZSTD_isError(got) && got == dn;
    }
    if (!ok) return page_fail(pc, "the compressed page is damaged or its declared size is wrong");
    *out = dst;
    return 0;
}

// The bw-bit value at bit offset `bit` of p[0..nbytes) (bit-packed, least significant bit first).
static uint32_t bits_at(const unsigned char *p, size_t nbytes, uint64_t bit, int bw) {
    uint64_t acc = 0;
    size_t b = (size_t)(bit >> 3);
    for (int i = 0; i < 5 && b + (size_t)i < nbytes; i++) acc |= (uint64_t)p[b + (size_t)i] << (8 * i);
    return (uint32_t)((acc >> (bit & 7)) & ((1ull << bw) - 1));
}

// The RLE / bit-packed hybrid: exactly `count` values of bw bits (0..32), each at most `max`.
static int rle_decode(const struct page_ctx *pc, const unsigned char *p, size_t n, int bw, uint32_t max, size_t count,
                      uint32_t *out) {
    const unsigned char *end = p + n;
    size_t k = 0, vbytes = ((size_t)bw + 7) / 8;
    while (k < count) {
        uint64_t h = 0;
        int shift = 0;
        for (;;) {
            if (p >= end || shift > 56) return page_fail(pc, "levels or indices end early (truncated RLE run)");
            h |= (uint64_t)(*p & 0x7f) << shift;
            shift += 7;
            if (!(*p++ & 0x80)) break;
        }
        if (h & 1) {
            uint64_t groups = h >> 1;
            if (bw && groups > (uint64_t)(end - p) / (uint64_t)bw)
                return page_fail(pc, "a bit-packed run goes past the end of its page");
            size_t bytes = (size_t)groups * (size_t)bw;
            size_t take = groups * 8 < count - k ? (size_t)groups * 8 : count - k;
            for (size_t j = 0; j < take; j++) {
                uint32_t v = bw ? bits_at(p, bytes, (uint64_t)j * (uint64_t)bw, bw) : 0;
                if (v > max) return page_fail(pc, "a level or index is out of range");
                out[k + j] = v;
            }
            p += bytes;
            k += take;
        } else {
            uint64_t run = h >> 1;
            if (vbytes > (size_t)(end - p)) return page_fail(pc, "an RLE run goes past the end of its page");
            uint32_t v = 0;
            for (size_t j = 0; j < vbytes; j++) v |= (uint32_t)p[j] << (8 * j);
            if (v > max) return page_fail(pc, "a level or index is out of range");
            size_t take = run < count - k ? (size_t)run : count - k;
            for (size_t j = 0; j < take; j++) out[k + j] = v;
            p += vbytes;
            k += take;
        }
    }
    return 0;
}

static int bit_width(uint32_t max) {
    int b = 0;
    while (b < 32 && (1ull << b) <= max) b++;
    return b;
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// `count` PLAIN values of `type` from p[0..n).
static int plain_decode(const struct page_ctx *pc, int type, const unsigned char *p, size_t n, size_t count,
                        struct pq_value *out) {
    size_t width = type == PQ_INT32 || type == PQ_FLOAT ? 4 : type == PQ_INT64 || type == PQ_DOUBLE ? 8 : 0;
    if (width && count > n / width) return page_fail(pc, "fewer PLAIN values than the page declares");
    if (type == PQ_BOOLEAN && count > (size_t)n * 8) return page_fail(pc, "fewer PLAIN values than the page declares");
    size_t off = 0;
    for (size_t k = 0; k < count; k++) {
        struct pq_value *v = &out[k];
        v->s = NULL;
        switch (type) {
        case PQ_BYTE_ARRAY: {
            if (n - off < 4) return page_fail(pc, "a string's length goes past the end of its page");
            uint32_t len = le32(p + off);
            off += 4;
            if (len > n - off) return page_fail(pc, "a string goes past the end of its page");
            v->s = p + off;
            v->u.len = len;
            off += len;
            break;
        }
        case PQ_INT32: v->u.i = (int32_t)le32(p + 4 * k); break;
        case PQ_INT64: v->u.i = (int64_t)((uint64_t)le32(p + 8 * k) | (uint64_t)le32(p + 8 * k + 4) << 32); break;
        case PQ_FLOAT: {
            float f;
            memcpy(&f, p + 4 * k, 4);
            v->u.d = f;
            break;
        }
        case PQ_DOUBLE: memcpy(&v->u.d, p + 8 * k, 8); break;
        case PQ_BOOLEAN: v->u.i = (p[k >> 3] >> (k & 7)) & 1; break;
        default: return page_fail(pc, "unsupported physical type");
        }
    }
    return 0;
}

// The values of a data page (its levels already read): `nn` non-null values in `enc`.
static int page_values(const struct page_ctx *pc, int type, int enc, const unsigned char *p, size_t n, size_t nn,
                       struct pq_column *col) {
    struct pq_value *out = col->vals + col->n_vals;
    if (enc == ENC_PLAIN) return plain_decode(pc, type, p, n, nn, out);
    if (enc == ENC_RLE && type == PQ_BOOLEAN) {
        if (n < 4 || le32(p) > n - 4) return page_fail(pc, "RLE booleans longer than their page");
        uint32_t *idx = xsa_malloc((nn ? nn : 1) * sizeof *idx);
        int rc = rle_decode(pc, p + 4, le32(p), 1, 1, nn, idx);
        for (size_t k = 0; !rc && k < nn; k++) out[k] = (struct pq_value){.u.i = idx[k]};
        free(idx);
        return rc;
    }
    if (enc == ENC_PLAIN_DICT || enc == ENC_RLE_DICT) {
        if (!col->dict) return page_fail(pc, "dictionary-encoded page without a dictionary page");
        if (nn && (n < 1 || p[0] > 32)) return page_fail(pc, "bad dictionary index bit width");
        uint32_t *idx = xsa_malloc((nn ? nn : 1) * sizeof *idx);
        int rc = nn ? rle_decode(pc, p + 1, n - 1, p[0], col->n_dict ? (uint32_t)(col->n_dict - 1) : 0, nn, idx) : 0;
        if (!rc && nn && !col->n_dict) rc = page_fail(pc, "index into an empty dictionary");
        for (size_t k = 0; !rc && k < nn; k++) out[k] = col->dict[idx[k]];
        free(idx);
        return rc;
    }
    char what[160];
    snprintf(what, sizeof what, "encoding %s is not supported (supported: PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY)",
             NAME_OF(encoding_names, enc));
    return page_fail(pc, what);
}

// One level stream (v1: after its 4-byte length; v2: raw) into levels[0..count).
static int page_levels(const struct page_ctx *pc, const unsigned char *p, size_t n, uint32_t max, size_t count,
                       uint32_t *levels) {
    if (!max) {
        memset(levels, 0, count * sizeof *levels);
        return 0;
    }
    return rle_decode(pc, p, n, bit_width(max), max, count, levels);
}

static int data_page(const struct page_ctx *pc, const struct page_header *h, const struct pq_node *nd, int codec,
                     const unsigned char *page, int64_t want, struct pq_column *col) {
    int v2 = h->type == PAGE_DATA_V2;
    int32_t nv = h->sub[1];
    int enc = v2 ? h->sub[4] : h->sub[2];
    if (nv < 0 || nv > want - (int64_t)col->n) return page_fail(pc, "more values than the column chunk declares");
    size_t count = (size_t)nv;
    if (spend(pc, &pc->budget->values, nv, "values")) return XSA_EBADINPUT;
    size_t old_cap = col->cap;
    XSA_GROW(col->def, col->cap, col->n + count + 1);  // + 1: never NULL, even for a page of no values
    if (col->cap != old_cap || !col->rep)  // rep has def's capacity
        col->rep = xsa_realloc(col->rep, col->cap * sizeof *col->rep);
    uint32_t *rep = col->rep + col->n, *def = col->def + col->n;
    uint32_t max_rep = (uint32_t)nd->rep, max_def = (uint32_t)nd->def;
    const unsigned char *body;
    size_t blen;
    int rc;
    if (!v2) {
        if ((!max_rep || h->sub[4] == ENC_RLE) + (!max_def || h->sub[3] == ENC_RLE) != 2)
            return page_fail(pc, "level encoding BIT_PACKED (or another non-RLE) is not supported");
        const unsigned char *d;
        if ((rc = decompress(pc, codec, page, (size_t)h->csize, (size_t)h->usize, col, &d))) return rc;
        size_t off = 0, n = (size_t)h->usize;
        for (int pass = 0; pass < 2; pass++) {
            uint32_t max = pass ? max_def : max_rep;
            uint32_t *lv = pass ? def : rep;
            if (!max) {
                memset(lv, 0, count * sizeof *lv);
                continue;
            }
            if (n - off < 4 || le32(d + off) > n - off - 4) return page_fail(pc, "levels longer than their page");
            uint32_t len = le32(d + off);
            if ((rc = page_levels(pc, d + off + 4, len, max, count, lv))) return rc;
            off += 4 + (size_t)len;
        }
        body = d + off;
        blen = n - off;
    } else {
        int32_t dl = h->sub[5], rl = h->sub[6];
        if (dl < 0 || rl < 0 || (int64_t)dl + rl > h->csize || (int64_t)dl + rl > h->usize)
            return page_fail(pc, "level lengths past the end of the page");
        if ((rc = page_levels(pc, page, (size_t)rl, max_rep, count, rep)) ||
            (rc = page_levels(pc, page + rl, (size_t)dl, max_def, count, def)))
            return rc;
        size_t lv = (size_t)rl + (size_t)dl;
        if ((rc = decompress(pc, h->sub[7] ? codec : 0, page + lv, (size_t)h->csize - lv, (size_t)h->usize - lv, col,
                             &body)))
            return rc;
        blen = (size_t)h->usize - lv;
    }
    size_t nn = 0;
    for (size_t k = 0; k < count; k++) nn += def[k] == max_def;
    XSA_GROW(col->vals, col->vcap, col->n_vals + nn + 1);  // + 1: never NULL (vals + n_vals is taken)
    if ((rc = page_values(pc, nd->type, enc, body, blen, nn, col))) return rc;
    col->n += count;
    col->n_vals += nn;
    return 0;
}

static int dict_page(const struct page_ctx *pc, const struct page_header *h, const struct pq_node *nd, int codec,
                     const unsigned char *page, struct pq_column *col) {
    if (col->dict || col->n) return page_fail(pc, "a second dictionary page, or one after data pages");
    int enc = h->sub[2];
    if (enc != ENC_PLAIN && enc != ENC_PLAIN_DICT) {
        char what[128];
        snprintf(what, sizeof what, "dictionary encoding %s is not supported (supported: PLAIN)",
                 NAME_OF(encoding_names, enc));
        return page_fail(pc, what);
    }
    int32_t nv = h->sub[1];
    // Each PLAIN value takes at least its width (a string: its 4-byte length; a boolean: 1 bit).
    int64_t width = nd->type == PQ_INT64 || nd->type == PQ_DOUBLE ? 8 : 4;
    int64_t fits = nd->type == PQ_BOOLEAN ? (int64_t)h->usize * 8 : (int64_t)h->usize / width;
    if (nv < 0 || nv > fits) return page_fail(pc, "more dictionary entries than the page can hold");
    if (spend(pc, &pc->budget->values, nv, "values")) return XSA_EBADINPUT;
    const unsigned char *d;
    int rc = decompress(pc, codec, page, (size_t)h->csize, (size_t)h->usize, col, &d);
    if (rc) return rc;
    col->dict = xsa_malloc((nv ? (size_t)nv : 1) * sizeof *col->dict);
    col->n_dict = (size_t)nv;
    return plain_decode(pc, nd->type, d, (size_t)h->usize, (size_t)nv, col->dict);
}

int pq_column_read(const unsigned char *buf, size_t len, const char *where, const struct pq_meta *m, int g, int leaf,
                   struct pq_column *col, struct pq_budget *budget, xsa_error *err) {
    memset(col, 0, sizeof *col);
    const struct pq_chunk *c = &m->chunks[(size_t)g * (size_t)m->n_leaves + (size_t)leaf];
    const struct pq_node *nd = &m->nodes[m->leaves[leaf]];
    struct page_ctx pc = {.where = where, .err = err, .budget = budget};
    pq_column_path(m, leaf, pc.path, sizeof pc.path);
    if (c->num_values == 0) return 0;  // nothing to read (Arrow writes such a chunk's data offset as 0)
    int64_t start = c->data_offset;
    if (c->has_dict && c->dict_offset >= 4 && c->dict_offset < start) start = c->dict_offset;
    int64_t limit = m->data_end;  // the pages lie between the leading magic and the footer
    if (start < 4 || c->size < 0 || start > limit || c->size > limit - start) {
        return xsa_fail(err, XSA_EBADINPUT, "%s: column '%s', row group %d: pages at bytes %lld..%lld lie outside the "
                        "file (%zu bytes)", where, pc.path, g, (long long)start, (long long)(start + c->size), len);
    }
    const unsigned char *p = buf + start, *end = p + c->size;
    int rc = 0;
    while (!rc && (int64_t)col->n < c->num_values) {
        pc.offset = p - buf;
        if (p >= end) {
            char what[128];
            snprintf(what, sizeof what, "the column chunk ends after %zu of its %lld values", col->n,
                     (long long)c->num_values);
            rc = page_fail(&pc, what);
            break;
        }
        struct thrift_reader r = {.p = p, .end = end};
        struct page_header h;
        if (read_page_header(&r, &h)) {
            rc = page_fail(&pc, r.error ? r.error : "damaged page header");
            break;
        }
        p = r.p;
        if (h.csize < 0 || h.csize > end - p || h.usize < 0 || (size_t)h.usize > PARQUET_MAX_PAGE) {
            rc = page_fail(&pc, "page size past the end of the column chunk or over 256 MiB");
            break;
        }
        const unsigned char *page = p;
        p += h.csize;
        if (h.has_crc && (uint32_t)h.crc != (uint32_t)crc32(0L, page, (uInt)h.csize)) {
            rc = page_fail(&pc, "CRC mismatch (the file is damaged)");
            break;
        }
        int want_sub = h.type == PAGE_DATA ? 5 : h.type == PAGE_DICT ? 7 : h.type == PAGE_DATA_V2 ? 8 : 0;
        if (!want_sub) {
            char what[96];
            snprintf(what, sizeof what, "page type %s is not supported", NAME_OF(page_names, h.type));
            rc = page_fail(&pc, what);
        } else if (h.has_sub != want_sub) {
            rc = page_fail(&pc, "page header without its sub-header");
        } else if (h.type == PAGE_DICT) {
            rc = dict_page(&pc, &h, nd, c->codec, page, col);
        } else {
            rc = data_page(&pc, &h, nd, c->codec, page, c->num_values, col);
        }
    }
    if (rc) pq_column_free(col);
    return rc;
}

void pq_column_free(struct pq_column *col) {
    for (int i = 0; i < col->n_bufs; i++) free(col->bufs[i]);
    free(col->bufs);
    free(col->def);
    free(col->rep);
    free(col->vals);
    free(col->dict);
    memset(col, 0, sizeof *col);
}
