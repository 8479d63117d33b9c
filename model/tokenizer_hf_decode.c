// tokenizer_hf_decode.c: tokenizer.json decoders (Sequence, ByteLevel, Metaspace, ByteFallback,
// Fuse, Strip, Replace), each a decode_chain over token strings as in the `tokenizers`
// library; the final strings are concatenated.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "model/tokenizer_hf_priv.h"

enum { D_SEQ, D_BYTELEVEL, D_METASPACE, D_BYTEFALLBACK, D_FUSE, D_STRIP, D_REPLACE };

struct hft_dec {
    int type;
    struct hft_dec **kids;  // (nkids,) Sequence
    size_t nkids;
    uint32_t ch;           // Metaspace replacement, Strip content
    int prepend_never;     // Metaspace
    size_t start, stop;    // Strip
    struct hft_regex re;    // Replace
    char *content;
    size_t content_len;
    int16_t char_byte[324];  // ByteLevel: byte of each code point < 324, -1 when none
};

void hft_dec_free(struct hft_dec *d) {
    if (!d) return;
    for (size_t i = 0; i < d->nkids; i++) hft_dec_free(d->kids[i]);
    free(d->kids);
    hft_regex_free(&d->re);
    free(d->content);
    free(d);
}

static int one_char(const char *s, uint32_t *cp) {
    size_t n = s ? strlen(s) : 0, i = 0;
    if (!n || n != hft_utf8_len((unsigned char)s[0]) || !hft_utf8_valid(s, n)) return -1;
    *cp = hft_utf8_next(s, n, &i);
    return 0;
}

int hft_dec_parse(struct hft_dec **out, const cJSON *j, const char *path, xsa_error *err) {
    *out = NULL;
    const char *type = hft_json_str(j, "type");
    if (!type) return xsa_fail(err, XSA_EBADINPUT, "%s: decoder without a \"type\"", path);
    struct hft_dec *d = xsa_calloc(1, sizeof *d);
    int rc = 0;
    if (!strcmp(type, "Sequence")) {
        d->type = D_SEQ;
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "decoders");
        if (!cJSON_IsArray(arr)) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: decoder Sequence without a \"decoders\" array", path);
        } else {
            size_t k = (size_t)cJSON_GetArraySize(arr);
            d->kids = xsa_calloc(k, sizeof *d->kids);
            const cJSON *e;
            cJSON_ArrayForEach(e, arr) {
                rc = hft_dec_parse(&d->kids[d->nkids], e, path, err);
                if (rc) break;
                d->nkids++;
            }
        }
    } else if (!strcmp(type, "ByteLevel")) {
        d->type = D_BYTELEVEL;
        for (int c = 0; c < 324; c++) d->char_byte[c] = -1;
        for (int b = 0; b < 256; b++) {  // the inverse of GPT-2's bytes_to_unicode()
            int cp;
            if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) cp = b;
            else if (b <= 32) cp = 256 + b;
            else if (b <= 160) cp = 289 + (b - 127);
            else cp = 323;
            d->char_byte[cp] = (int16_t)b;
        }
    } else if (!strcmp(type, "Metaspace")) {
        d->type = D_METASPACE;
        const char *scheme = hft_json_str(j, "prepend_scheme");
        if (one_char(hft_json_str(j, "replacement"), &d->ch))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: decoder Metaspace: \"replacement\" must be one character", path);
        d->prepend_never = scheme ? !strcmp(scheme, "never") : !hft_json_bool(j, "add_prefix_space", 1);
    } else if (!strcmp(type, "ByteFallback")) {
        d->type = D_BYTEFALLBACK;
    } else if (!strcmp(type, "Fuse")) {
        d->type = D_FUSE;
    } else if (!strcmp(type, "Strip")) {
        d->type = D_STRIP;
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "start"), *b = cJSON_GetObjectItemCaseSensitive(j, "stop");
        if (one_char(hft_json_str(j, "content"), &d->ch) || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) ||
            !(a->valuedouble >= 0 && a->valuedouble <= 1e9) || !(b->valuedouble >= 0 && b->valuedouble <= 1e9))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: decoder Strip needs one-character \"content\" and counts \"start\", \"stop\"",
                          path);
        else
            d->start = (size_t)a->valuedouble, d->stop = (size_t)b->valuedouble;
    } else if (!strcmp(type, "Replace")) {
        d->type = D_REPLACE;
        const char *c = hft_json_str(j, "content");
        if (!c) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: decoder Replace without \"content\"", path);
        } else {
            d->content = xsa_strdup(c);
            d->content_len = strlen(c);
            rc = hft_regex_from_json(&d->re, cJSON_GetObjectItemCaseSensitive(j, "pattern"), path, "decoder Replace", err);
        }
    } else {
        rc = xsa_fail(err, XSA_EBADINPUT,
                      "%s: unsupported decoder '%s' (supported: Sequence, ByteLevel, Metaspace, ByteFallback, Fuse, "
                      "Strip, Replace)",
                      path, type);
    }
    if (rc) {
        hft_dec_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

long hft_dec_byte_level_len(const struct hft_dec *d, const char *s, size_t len) {
    if (d && d->type == D_SEQ && d->nkids == 1) d = d->kids[0];
    if (!d || d->type != D_BYTELEVEL) return -1;
    size_t i = 0, n = 0;
    while (i < len) {
        uint32_t cp = hft_utf8_next(s, len, &i);
        if (cp >= 324 || d->char_byte[cp] < 0) return (long)len;  // as byte_level: the token's own bytes
        n++;
    }
    return (long)n;
}

static void byte_level(const struct hft_dec *d, const struct hft_pieces *in, struct hft_pieces *out) {
    struct sbuf raw = {0};
    for (size_t k = 0; k < in->n; k++) {
        const char *s = in->buf.s + in->v[k].off;
        size_t len = in->v[k].len, i = 0, mark = raw.n;
        int ok = 1;
        while (ok && i < len) {
            uint32_t cp = hft_utf8_next(s, len, &i);
            if (cp >= 324 || d->char_byte[cp] < 0) ok = 0;
            else {
                char b = (char)d->char_byte[cp];
                sbuf_append(&raw, &b, 1);
            }
        }
        if (!ok) {  // a character outside the byte alphabet: the token's own bytes
            raw.n = mark;
            sbuf_append(&raw, s, len);
        }
    }
    // String::from_utf8_lossy over the whole byte string.
    struct sbuf fixed = {0};
    hft_utf8_sanitize(raw.s ? raw.s : "", raw.n, &fixed);
    hft_pieces_push(out, fixed.s, fixed.n, -1, 0);
    sbuf_free(&raw);
    sbuf_free(&fixed);
}

static void metaspace(const struct hft_dec *d, const struct hft_pieces *in, struct hft_pieces *out) {
    for (size_t k = 0; k < in->n; k++) {
        const char *s = in->buf.s + in->v[k].off;
        size_t len = in->v[k].len, i = 0, off = out->buf.n;
        while (i < len) {
            size_t st = i;
            uint32_t cp = hft_utf8_next(s, len, &i);
            if (cp != d->ch) sbuf_append(&out->buf, s + st, i - st);
            else if (k > 0 || d->prepend_never) sbuf_append(&out->buf, " ", 1);  // in the first token: dropped, unless never prepended
        }
        hft_pieces_push_tail(out, off, -1, 0);
    }
}

static int parse_byte_token(const char *s, size_t len, unsigned char *b) {
    if (len != 6 || memcmp(s, "<0x", 3) || s[5] != '>') return 0;
    // u8::from_str_radix(&token[3..5], 16): two hex digits, or '+' and one digit.
    int v = 0;
    for (int k = 3; k < 5; k++) {
        char c = s[k];
        int x;
        if (k == 3 && c == '+') continue;
        if (c >= '0' && c <= '9') x = c - '0';
        else if (c >= 'a' && c <= 'f') x = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') x = c - 'A' + 10;
        else return 0;
        v = v * 16 + x;
    }
    *b = (unsigned char)v;
    return 1;
}

static void flush_bytes(struct sbuf *bytes, struct hft_pieces *out) {
    if (!bytes->n) return;
    if (hft_utf8_valid(bytes->s, bytes->n)) hft_pieces_push(out, bytes->s, bytes->n, -1, 0);
    else
        for (size_t k = 0; k < bytes->n; k++) hft_pieces_push(out, "\xEF\xBF\xBD", 3, -1, 0);
    bytes->n = 0;
}

static void byte_fallback(const struct hft_pieces *in, struct hft_pieces *out) {
    struct sbuf bytes = {0};
    for (size_t k = 0; k < in->n; k++) {
        const char *s = in->buf.s + in->v[k].off;
        unsigned char b;
        if (parse_byte_token(s, in->v[k].len, &b)) {
            sbuf_append(&bytes, (const char *)&b, 1);
        } else {
            flush_bytes(&bytes, out);
            hft_pieces_push(out, s, in->v[k].len, -1, 0);
        }
    }
    flush_bytes(&bytes, out);
    sbuf_free(&bytes);
}

static void strip(const struct hft_dec *d, const struct hft_pieces *in, struct hft_pieces *out) {
    for (size_t k = 0; k < in->n; k++) {
        const char *s = in->buf.s + in->v[k].off;
        size_t len = in->v[k].len, a = 0, b = len, i = 0;
        for (size_t c = 0; c < d->start && a < len; c++) {  // leading characters equal to content
            i = a;
            if (hft_utf8_next(s, len, &i) != d->ch) break;
            a = i;
        }
        for (size_t c = 0; c < d->stop && b > 0; c++) {  // trailing ones
            size_t st = b - 1;
            while (st > 0 && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
            i = st;
            if (hft_utf8_next(s, len, &i) != d->ch) break;
            b = st;
        }
        if (b < a) b = a;  // the library panics here; we give an empty token
        hft_pieces_push(out, s + a, b - a, -1, 0);
    }
}

static int decode_chain(const struct hft_dec *d, struct hft_pieces *io, struct hft_ctx *ctx, xsa_error *err) {
    if (d->type == D_SEQ) {
        for (size_t k = 0; k < d->nkids; k++) {
            int rc = decode_chain(d->kids[k], io, ctx, err);
            if (rc) return rc;
        }
        return 0;
    }
    struct hft_pieces out = {0};
    int rc = 0;
    switch (d->type) {
    case D_BYTELEVEL: byte_level(d, io, &out); break;
    case D_METASPACE: metaspace(d, io, &out); break;
    case D_BYTEFALLBACK: byte_fallback(io, &out); break;
    case D_STRIP: strip(d, io, &out); break;
    case D_FUSE: {
        size_t off = out.buf.n;
        for (size_t k = 0; k < io->n; k++) sbuf_append(&out.buf, io->buf.s + io->v[k].off, io->v[k].len);
        hft_pieces_push_tail(&out, off, -1, 0);
        break;
    }
    default:  // Replace
        for (size_t k = 0; !rc && k < io->n; k++) {
            size_t off = out.buf.n;
            rc = hft_regex_replace(&d->re, io->buf.s + io->v[k].off, io->v[k].len, d->content, d->content_len, ctx->md,
                                  &out.buf, err);
            if (!rc) hft_pieces_push_tail(&out, off, -1, 0);
        }
    }
    if (rc) {
        hft_pieces_free(&out);
        return rc;
    }
    hft_pieces_free(io);
    *io = out;
    return 0;
}

int hft_dec_apply(const struct hft_dec *d, struct hft_pieces *toks, struct sbuf *out, struct hft_ctx *ctx,
                 xsa_error *err) {
    int rc = d ? decode_chain(d, toks, ctx, err) : 0;
    if (rc) return rc;
    for (size_t k = 0; k < toks->n; k++) {
        if (!d && k) sbuf_append(out, " ", 1);  // no decoder: tokens joined by spaces
        sbuf_append(out, toks->buf.s + toks->v[k].off, toks->v[k].len);
    }
    sbuf_append(out, "", 0);
    return 0;
}

// ---- token by token: the bytes each token adds to decode's text (bits per byte) ----

#define DEC_FLAT_MAX 64

// The decoders in the order they run, Sequences opened; 0, or -1 past DEC_FLAT_MAX.
static int flatten(const struct hft_dec *d, const struct hft_dec **out, size_t *n) {
    if (d->type != D_SEQ) {
        if (*n >= DEC_FLAT_MAX) return -1;
        out[(*n)++] = d;
        return 0;
    }
    for (size_t k = 0; k < d->nkids; k++)
        if (flatten(d->kids[k], out, n)) return -1;
    return 0;
}

int hft_dec_token_map_check(const struct hft_dec *d, char *why, size_t why_n) {
    const struct hft_dec *f[DEC_FLAT_MAX];
    size_t n = 0;
    if (!d) return snprintf(why, why_n, "it has no decoder (decode joins the tokens with spaces)"), -1;
    if (flatten(d, f, &n)) return snprintf(why, why_n, "more than %d decoders", DEC_FLAT_MAX), -1;
    int fused = 0, fallback = 0, stripped = 0;
    for (size_t i = 0; i < n; i++) {
        const char *bad = NULL;
        switch (f[i]->type) {
        case D_BYTELEVEL: bad = "ByteLevel among other decoders"; break;
        case D_REPLACE:
            if (fallback) bad = "Replace after ByteFallback (its pattern could match inside a run of byte tokens, which decode reads as one string)";
            else if (fused) bad = "Replace after Fuse (its pattern could match across tokens)";
            break;
        case D_METASPACE:
            if (fused) bad = "Metaspace after Fuse (it would read the whole text as its first token)";
            break;
        case D_BYTEFALLBACK:
            if (fused) bad = "ByteFallback after Fuse";
            fallback = 1;
            break;
        case D_FUSE: fused = 1; break;
        default:  // Strip
            if (!fused && fallback) bad = "Strip between ByteFallback and Fuse (it strips a run of byte tokens as one string)";
            else if (fused && f[i]->stop) bad = "Strip of trailing characters after Fuse (where a document ends is not known token by token)";
            else if (fused && (f[i]->start > 1 || (f[i]->start && stripped)))
                bad = "Strip of more than one leading character after Fuse (it could reach past the first token)";
            if (fused && f[i]->start) stripped = 1;
        }
        if (bad) return snprintf(why, why_n, "its decoder has %s", bad), -1;
    }
    return 0;
}

// Strips up to `start` leading and `stop` trailing characters equal to ch from b (strip()'s rule).
static void strip_one(struct sbuf *b, uint32_t ch, size_t start, size_t stop) {
    struct hft_pieces in = {0}, out = {0};
    struct hft_dec d = {.type = D_STRIP, .ch = ch, .start = start, .stop = stop};
    hft_pieces_push(&in, b->s ? b->s : "", b->n, -1, 0);
    strip(&d, &in, &out);
    b->n = 0;
    sbuf_append(b, out.buf.s + out.v[0].off, out.v[0].len);
    hft_pieces_free(&in);
    hft_pieces_free(&out);
}

int hft_dec_token_len(const struct hft_dec *d, const char *s, size_t len, int first, long *bytes, int *first_empty,
                      struct hft_ctx *ctx, xsa_error *err) {
    const struct hft_dec *f[DEC_FLAT_MAX];
    size_t n = 0;
    struct sbuf cur = {0}, tmp = {0};
    int is_byte = 0, fused = 0, rc = 0;
    unsigned char byte = 0;
    *first_empty = 0;
    flatten(d, f, &n);  // (checked by hft_dec_token_map_check)
    sbuf_append(&cur, s, len);
    for (size_t i = 0; !rc && i < n; i++) {
        const struct hft_dec *x = f[i];
        switch (x->type) {
        case D_REPLACE:
            tmp.n = 0;
            rc = hft_regex_replace(&x->re, cur.s, cur.n, x->content, x->content_len, ctx->md, &tmp, err);
            cur.n = 0;
            if (!rc) sbuf_append(&cur, tmp.s ? tmp.s : "", tmp.n);
            break;
        case D_METASPACE:
            if (is_byte) break;  // a run of byte tokens: its characters (documented: no replacement character)
            tmp.n = 0;
            for (size_t k = 0; k < cur.n;) {
                size_t st = k;
                uint32_t cp = hft_utf8_next(cur.s, cur.n, &k);
                if (cp != x->ch) sbuf_append(&tmp, cur.s + st, k - st);
                else if (!first || x->prepend_never) sbuf_append(&tmp, " ", 1);  // the first token's are dropped
            }
            cur.n = 0;
            sbuf_append(&cur, tmp.s ? tmp.s : "", tmp.n);
            break;
        case D_BYTEFALLBACK:
            if (!is_byte && parse_byte_token(cur.s, cur.n, &byte)) {
                is_byte = 1;  // one byte of a run that spells UTF-8
                cur.n = 0;
                sbuf_append(&cur, (const char *)&byte, 1);
            }
            break;
        case D_FUSE: fused = 1; break;
        default:  // Strip: per token before Fuse; after it only the text's first character, if any
            if (!fused) strip_one(&cur, x->ch, x->start, x->stop);
            else if (first && x->start && !cur.n) *first_empty = 1;
            else if (first && x->start) {
                size_t k = 0;
                uint32_t cp = is_byte ? byte : hft_utf8_next(cur.s, cur.n, &k);
                if (is_byte ? byte < 0x80 && cp == x->ch : cp == x->ch) {
                    memmove(cur.s, cur.s + (is_byte ? 1 : k), cur.n - (is_byte ? 1 : k));
                    cur.n -= is_byte ? 1 : k;
                }
            }
        }
    }
    *bytes = (long)cur.n;
    sbuf_free(&cur);
    sbuf_free(&tmp);
    return rc;
}
