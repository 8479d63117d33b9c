// tokenizer_hf_pretok.c: tokenizer.json pre-tokenizers (Sequence, ByteLevel, Split, Metaspace,
// Digits), each splitting pieces as the `tokenizers` library's NormalizedString::split does
// (behaviours Removed, Isolated, Contiguous, MergedWithPrevious, MergedWithNext; empty pieces
// dropped).
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/xalloc.h"
#include "model/tokenizer_hf_priv.h"

#define GPT2_PATTERN "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

enum { P_SEQ, P_BYTELEVEL, P_SPLIT, P_METASPACE, P_DIGITS };
enum { B_REMOVED, B_ISOLATED, B_CONTIGUOUS, B_MERGED_PREV, B_MERGED_NEXT };
enum { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER };

struct hft_pretok {
    int type;
    struct hft_pretok **kids;  // (nkids,) Sequence
    size_t nkids;
    struct hft_regex re;       // Split pattern; ByteLevel's GPT-2 regex
    int behavior, invert;     // Split
    int add_prefix_space, use_regex;  // ByteLevel
    char byte_chars[256][2];  // ByteLevel: UTF-8 of the character standing for each byte
    uint8_t byte_nchars[256];
    char repl[8];             // Metaspace replacement character (UTF-8)
    size_t repl_len;
    int prepend, split;       // Metaspace
    int individual;           // Digits
};

struct seg {
    size_t s, e;
    int m;  // is a match
};

void hft_pretok_free(struct hft_pretok *p) {
    if (!p) return;
    for (size_t i = 0; i < p->nkids; i++) hft_pretok_free(p->kids[i]);
    free(p->kids);
    hft_regex_free(&p->re);
    free(p);
}

static int parse_behavior(const char *b) {
    static const char *names[] = {"Removed", "Isolated", "Contiguous", "MergedWithPrevious", "MergedWithNext"};
    for (int i = 0; i < 5; i++)
        if (b && !strcmp(b, names[i])) return i;
    return -1;
}

// GPT-2's bytes_to_unicode(): printable bytes stand for themselves, the rest for 256 + n.
static void byte_level_table(struct hft_pretok *p) {
    for (int b = 0; b < 256; b++) {
        uint32_t cp;
        if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) cp = (uint32_t)b;
        else if (b <= 32) cp = 256 + (uint32_t)b;
        else if (b <= 160) cp = 289 + (uint32_t)(b - 127);
        else cp = 323;  // 173
        if (cp < 0x80) {
            p->byte_chars[b][0] = (char)cp;
            p->byte_nchars[b] = 1;
        } else {
            p->byte_chars[b][0] = (char)(0xC0 | (cp >> 6));
            p->byte_chars[b][1] = (char)(0x80 | (cp & 0x3F));
            p->byte_nchars[b] = 2;
        }
    }
}

int hft_pretok_parse(struct hft_pretok **out, const cJSON *j, const char *path, xsa_error *err) {
    *out = NULL;
    const char *type = hft_json_str(j, "type");
    if (!type) return xsa_fail(err, XSA_EBADINPUT, "%s: pre_tokenizer without a \"type\"", path);
    struct hft_pretok *p = xsa_calloc(1, sizeof *p);
    int rc = 0;
    if (!strcmp(type, "Sequence")) {
        p->type = P_SEQ;
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "pretokenizers");
        if (!cJSON_IsArray(arr)) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: pre_tokenizer Sequence without a \"pretokenizers\" array", path);
        } else {
            size_t k = (size_t)cJSON_GetArraySize(arr);
            p->kids = xsa_calloc(k, sizeof *p->kids);
            const cJSON *e;
            cJSON_ArrayForEach(e, arr) {
                rc = hft_pretok_parse(&p->kids[p->nkids], e, path, err);
                if (rc) break;
                p->nkids++;
            }
        }
    } else if (!strcmp(type, "ByteLevel")) {
        p->type = P_BYTELEVEL;
        p->add_prefix_space = hft_json_bool(j, "add_prefix_space", 1);
        p->use_regex = hft_json_bool(j, "use_regex", 1);
        byte_level_table(p);
        if (p->use_regex) rc = hft_regex_compile(&p->re, GPT2_PATTERN, path, err);
    } else if (!strcmp(type, "Split")) {
        p->type = P_SPLIT;
        p->behavior = parse_behavior(hft_json_str(j, "behavior"));
        p->invert = hft_json_bool(j, "invert", 0);
        if (p->behavior < 0)
            rc = xsa_fail(err, XSA_EBADINPUT,
                          "%s: pre_tokenizer Split: unknown \"behavior\" (expected Removed, Isolated, Contiguous, "
                          "MergedWithPrevious or MergedWithNext)",
                          path);
        else
            rc = hft_regex_from_json(&p->re, cJSON_GetObjectItemCaseSensitive(j, "pattern"), path,
                                    "pre_tokenizer Split", err);
    } else if (!strcmp(type, "Metaspace")) {
        p->type = P_METASPACE;
        const char *r = hft_json_str(j, "replacement");
        const char *scheme = hft_json_str(j, "prepend_scheme");
        p->split = hft_json_bool(j, "split", 1);
        if (!r || !*r || strlen(r) != hft_utf8_len((unsigned char)r[0]) || strlen(r) >= sizeof p->repl) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: pre_tokenizer Metaspace: \"replacement\" must be one character", path);
        } else {
            p->repl_len = strlen(r);
            memcpy(p->repl, r, p->repl_len);
            if (!scheme) p->prepend = hft_json_bool(j, "add_prefix_space", 1) ? PREPEND_ALWAYS : PREPEND_NEVER;
            else if (!strcmp(scheme, "always")) p->prepend = PREPEND_ALWAYS;
            else if (!strcmp(scheme, "first")) p->prepend = PREPEND_FIRST;
            else if (!strcmp(scheme, "never")) p->prepend = PREPEND_NEVER;
            else rc = xsa_fail(err, XSA_EBADINPUT, "%s: pre_tokenizer Metaspace: unknown prepend_scheme '%s'", path, scheme);
        }
    } else if (!strcmp(type, "Digits")) {
        p->type = P_DIGITS;
        p->individual = hft_json_bool(j, "individual_digits", 0);
    } else {
        rc = xsa_fail(err, XSA_EBADINPUT,
                      "%s: unsupported pre_tokenizer '%s' (supported: Sequence, ByteLevel, Split, Metaspace, Digits)",
                      path, type);
    }
    if (rc) {
        hft_pretok_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

static void seg_push(struct seg **v, size_t *n, size_t *cap, size_t s, size_t e, int m) {
    XSA_GROW(*v, *cap, *n + 1);
    (*v)[(*n)++] = (struct seg){s, e, m};
}

// Pattern::find_matches: matches and the gaps between them, covering s[0..len).
static void segs_from_spans(const struct hft_span *sp, size_t n, size_t len, int invert, struct seg **v, size_t *nv,
                            size_t *cap) {
    if (len == 0) {
        seg_push(v, nv, cap, 0, 0, invert);
        return;
    }
    size_t prev = 0;
    for (size_t k = 0; k < n; k++) {
        if (sp[k].s != prev) seg_push(v, nv, cap, prev, sp[k].s, invert);
        seg_push(v, nv, cap, sp[k].s, sp[k].e, !invert);
        prev = sp[k].e;
    }
    if (prev != len) seg_push(v, nv, cap, prev, len, invert);
}

// Folds the segments by the delimiter behaviour (in place) and returns the new count.
static size_t segs_fold(struct seg *v, size_t n, int behavior) {
    size_t m = 0;
    int prev = 0;
    switch (behavior) {
    case B_REMOVED:
        for (size_t k = 0; k < n; k++)
            if (!v[k].m) v[m++] = v[k];
        return m;
    case B_ISOLATED:
        return n;
    case B_CONTIGUOUS:
        for (size_t k = 0; k < n; k++) {
            if (v[k].m == prev && m) v[m - 1].e = v[k].e;
            else v[m++] = v[k];
            prev = v[k].m;
        }
        return m;
    case B_MERGED_PREV:
        for (size_t k = 0; k < n; k++) {
            if (v[k].m && !prev && m) v[m - 1].e = v[k].e;
            else v[m++] = v[k];
            prev = v[k].m;
        }
        return m;
    default: {  // MergedWithNext: the same fold from the right
        size_t w = n;  // output grows downwards into v[w..n)
        for (size_t k = n; k-- > 0;) {
            if (v[k].m && !prev && w < n) v[w].s = v[k].s;
            else v[--w] = v[k];
            prev = v[k].m;
        }
        memmove(v, v + w, (n - w) * sizeof *v);
        return n - w;
    }
    }
}

// Appends the non-empty segments of s as pieces.
static void emit_segs(const char *s, const struct seg *v, size_t n, int first, struct hft_pieces *out) {
    for (size_t k = 0; k < n; k++)
        if (v[k].e > v[k].s) hft_pieces_push(out, s + v[k].s, v[k].e - v[k].s, -1, first && v[k].s == 0);
}

static int split_piece(const struct hft_pretok *p, const char *s, size_t len, int first, struct hft_pieces *out,
                       struct hft_ctx *ctx, xsa_error *err) {
    ctx->nspans = 0;
    int rc = hft_regex_find_all(&p->re, s, len, ctx->md, &ctx->spans, &ctx->nspans, &ctx->capspans, err);
    if (rc) return rc;
    struct seg *v = NULL;
    size_t n = 0, cap = 0;
    segs_from_spans(ctx->spans, ctx->nspans, len, p->invert, &v, &n, &cap);
    n = segs_fold(v, n, p->behavior);
    emit_segs(s, v, n, first, out);
    free(v);
    return 0;
}

static int byte_level_piece(const struct hft_pretok *p, const char *s, size_t len, int first, struct hft_pieces *out,
                            struct hft_ctx *ctx, xsa_error *err) {
    struct sbuf *t = &ctx->tmp;
    t->n = 0;
    if (p->add_prefix_space && (len == 0 || s[0] != ' ')) sbuf_append(t, " ", 1);
    sbuf_append(t, s, len);
    struct seg whole = {0, t->n, 0}, *v = &whole;
    size_t nv = 1, cap = 0;
    if (p->use_regex) {  // Isolated split: matches and the gaps between them
        ctx->nspans = 0;
        int rc = hft_regex_find_all(&p->re, t->s, t->n, ctx->md, &ctx->spans, &ctx->nspans, &ctx->capspans, err);
        if (rc) return rc;
        v = NULL;
        nv = 0;
        segs_from_spans(ctx->spans, ctx->nspans, t->n, 0, &v, &nv, &cap);
    }
    for (size_t k = 0; k < nv; k++) {
        if (v[k].e == v[k].s) continue;
        // Each byte becomes its character, written straight into the output buffer.
        size_t off = out->buf.n;
        for (size_t i = v[k].s; i < v[k].e; i++) {
            unsigned char b = (unsigned char)t->s[i];
            sbuf_append(&out->buf, p->byte_chars[b], p->byte_nchars[b]);
        }
        hft_pieces_push_tail(out, off, -1, first && v[k].s == 0);
    }
    if (v != &whole) free(v);
    return 0;
}

static int metaspace_piece(const struct hft_pretok *p, const char *s, size_t len, int first, struct hft_pieces *out,
                           struct hft_ctx *ctx, xsa_error *err) {
    struct sbuf *t = &ctx->tmp;
    t->n = 0;
    int starts = len >= p->repl_len && !memcmp(s, p->repl, p->repl_len);
    if (len && s[0] == ' ') starts = 1;  // the space becomes the replacement first
    if (!starts && (p->prepend == PREPEND_ALWAYS || (p->prepend == PREPEND_FIRST && first)))
        sbuf_append(t, p->repl, p->repl_len);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ') sbuf_append(t, p->repl, p->repl_len);
        else sbuf_append(t, s + i, 1);
    }
    if (!p->split) {
        hft_pieces_push(out, t->s, t->n, -1, first);
        return 0;
    }
    // Split on the replacement, MergedWithNext.
    struct seg *v = NULL;
    size_t n = 0, cap = 0;
    struct hft_span *sp = NULL;
    size_t ns = 0, caps = 0;
    struct hft_regex lit = {NULL, p->repl_len ? (char *)p->repl : NULL, p->repl_len};
    int rc = hft_regex_find_all(&lit, t->s, t->n, NULL, &sp, &ns, &caps, err);
    if (!rc) {
        segs_from_spans(sp, ns, t->n, 0, &v, &n, &cap);
        n = segs_fold(v, n, B_MERGED_NEXT);
        emit_segs(t->s, v, n, first, out);
    }
    free(v);
    free(sp);
    return rc;
}

static void digits_piece(const struct hft_pretok *p, const char *s, size_t len, int first, struct hft_pieces *out) {
    struct seg *v = NULL;
    size_t n = 0, cap = 0;
    if (len == 0) seg_push(&v, &n, &cap, 0, 0, 0);
    // Pattern for a char predicate: every matching character is its own match.
    size_t gap = 0;
    for (size_t i = 0; i < len;) {
        size_t st = i;
        uint32_t cp = hft_utf8_next(s, len, &i);
        if (hft_is_numeric(cp)) {
            if (gap < st) seg_push(&v, &n, &cap, gap, st, 0);
            seg_push(&v, &n, &cap, st, i, 1);
            gap = i;
        }
    }
    if (len && gap < len) seg_push(&v, &n, &cap, gap, len, 0);
    n = segs_fold(v, n, p->individual ? B_ISOLATED : B_CONTIGUOUS);
    emit_segs(s, v, n, first, out);
    free(v);
}

int hft_pretok_apply(const struct hft_pretok *p, struct hft_pieces *io, struct hft_ctx *ctx, xsa_error *err) {
    if (p->type == P_SEQ) {
        for (size_t k = 0; k < p->nkids; k++) {
            int rc = hft_pretok_apply(p->kids[k], io, ctx, err);
            if (rc) return rc;
        }
        return 0;
    }
    struct hft_pieces out = {0};
    int rc = 0;
    for (size_t k = 0; !rc && k < io->n; k++) {
        const struct hft_piece *pc = &io->v[k];
        const char *s = io->buf.s + pc->off;
        if (pc->id >= 0) {
            hft_pieces_push(&out, s, pc->len, pc->id, pc->first);
            continue;
        }
        switch (p->type) {
        case P_BYTELEVEL: rc = byte_level_piece(p, s, pc->len, pc->first, &out, ctx, err); break;
        case P_SPLIT: rc = split_piece(p, s, pc->len, pc->first, &out, ctx, err); break;
        case P_METASPACE: rc = metaspace_piece(p, s, pc->len, pc->first, &out, ctx, err); break;
        default: digits_piece(p, s, pc->len, pc->first, &out); break;
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
