// tokenizer_hf_bpe.c: the BPE model of tokenizer.json, equal to the `tokenizers` library's
// models/bpe (merge_word + Word::merge_all: a priority queue by (rank, position), stale
// entries skipped when the pair no longer yields the same token). Also a string -> id hash.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hash.h"
#include "common/xalloc.h"
#include "model/tokenizer_hf_priv.h"

#define HFT_MAX_ID (1 << 24)

struct hft_sym {
    int32_t c;           // token id
    int32_t prev, next;  // neighbours, -1 at the ends
    uint32_t len;        // bytes covered; 0 once merged into the left neighbour
};

struct hft_mrg {
    uint32_t rank, pos;
    int32_t new_id;
};

const char *hft_json_str(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int hft_json_bool(const cJSON *o, const char *key, int dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

// ---- string map ----

static void strmap_grow(struct hft_strmap *m) {
    size_t nc = m->cap ? m->cap * 2 : 1024;
    uint32_t *slots = xsa_calloc(nc, sizeof *slots);
    for (size_t e = 0; e < m->n; e++) {
        size_t h = (size_t)xsa_hash(m->keys.s + m->offs[e], m->lens[e]) & (nc - 1);
        while (slots[h]) h = (h + 1) & (nc - 1);
        slots[h] = (uint32_t)e + 1;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = nc;
}

int32_t hft_strmap_get(const struct hft_strmap *m, const char *k, size_t len) {
    if (!m->cap) return -1;
    size_t h = (size_t)xsa_hash(k, len) & (m->cap - 1);
    for (;;) {
        uint32_t e = m->slots[h];
        if (!e) return -1;
        e--;
        if (m->lens[e] == len && !memcmp(m->keys.s + m->offs[e], k, len)) return m->vals[e];
        h = (h + 1) & (m->cap - 1);
    }
}

int hft_strmap_put(struct hft_strmap *m, const char *k, size_t len, int32_t v) {
    if ((m->n + 1) * 2 > m->cap) strmap_grow(m);
    size_t h = (size_t)xsa_hash(k, len) & (m->cap - 1);
    for (;;) {
        uint32_t e = m->slots[h];
        if (!e) break;
        e--;
        if (m->lens[e] == len && !memcmp(m->keys.s + m->offs[e], k, len)) {
            m->vals[e] = v;
            return 1;
        }
        h = (h + 1) & (m->cap - 1);
    }
    if (m->n == m->ncap) {  // three parallel arrays, one capacity
        size_t nc = xsa_grow_cap(m->ncap, m->n + 1);
        m->offs = xsa_realloc_array(m->offs, nc, sizeof *m->offs);
        m->lens = xsa_realloc_array(m->lens, nc, sizeof *m->lens);
        m->vals = xsa_realloc_array(m->vals, nc, sizeof *m->vals);
        m->ncap = nc;
    }
    m->offs[m->n] = m->keys.n;
    sbuf_append(&m->keys, k, len);
    sbuf_append(&m->keys, "", 1);  // keys stay NUL-separated
    m->lens[m->n] = (uint32_t)len;
    m->vals[m->n] = v;
    m->slots[h] = (uint32_t)++m->n;
    return 0;
}

void hft_strmap_free(struct hft_strmap *m) {
    free(m->slots);
    free(m->offs);
    free(m->lens);
    free(m->vals);
    sbuf_free(&m->keys);
    memset(m, 0, sizeof *m);
}

// ---- merges ----

static size_t merge_slot(const struct hft_bpe *b, uint64_t key) {
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (b->mcap - 1);
    while (b->mkeys[h] && b->mkeys[h] != key + 1) h = (h + 1) & (b->mcap - 1);
    return h;
}

static int merge_get(const struct hft_bpe *b, int32_t x, int32_t y, uint32_t *rank, int32_t *new_id) {
    if (!b->mcap) return 0;
    size_t h = merge_slot(b, ((uint64_t)(uint32_t)x << 32) | (uint32_t)y);
    if (!b->mkeys[h]) return 0;
    *rank = b->mrank[h];
    *new_id = (int32_t)b->mnew[h];
    return 1;
}

static int add_merge(struct hft_bpe *b, const char *x, size_t xl, const char *y, size_t yl, uint32_t rank,
                     const char *path, xsa_error *err) {
    int32_t a = hft_strmap_get(&b->vocab, x, xl), c = hft_strmap_get(&b->vocab, y, yl);
    if (a < 0 || c < 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: merge %u refers to token '%.*s' that is not in the vocabulary", path,
                        rank + 1, (int)(a < 0 ? xl : yl), a < 0 ? x : y);
    size_t pl = b->prefix ? strlen(b->prefix) : 0;
    if (yl < pl) pl = 0;  // Rust would panic on the slice; treat as no prefix
    char stackbuf[256];
    size_t nl = xl + yl - pl;
    char *buf = nl <= sizeof stackbuf ? stackbuf : xsa_malloc(nl);
    memcpy(buf, x, xl);
    memcpy(buf + xl, y + pl, yl - pl);
    int32_t n = hft_strmap_get(&b->vocab, buf, nl);
    if (n < 0) {
        int rc = xsa_fail(err, XSA_EBADINPUT, "%s: merge %u makes token '%.*s' that is not in the vocabulary", path,
                          rank + 1, (int)(nl > 200 ? 200 : nl), buf);
        if (buf != stackbuf) free(buf);
        return rc;
    }
    if (buf != stackbuf) free(buf);
    size_t h = merge_slot(b, ((uint64_t)(uint32_t)a << 32) | (uint32_t)c);
    if (!b->mkeys[h]) b->nmerges++;
    b->mkeys[h] = (((uint64_t)(uint32_t)a << 32) | (uint32_t)c) + 1;
    b->mrank[h] = rank;  // a repeated pair keeps its last rank, as the library's HashMap does
    b->mnew[h] = (uint32_t)n;
    return 0;
}

static int parse_merges(struct hft_bpe *b, const cJSON *merges, const char *path, xsa_error *err) {
    size_t n = (size_t)cJSON_GetArraySize(merges);
    b->mcap = 1024;
    while (b->mcap < n * 2 + 2) b->mcap *= 2;
    b->mkeys = xsa_calloc(b->mcap, sizeof *b->mkeys);
    b->mrank = xsa_calloc(b->mcap, sizeof *b->mrank);
    b->mnew = xsa_calloc(b->mcap, sizeof *b->mnew);
    uint32_t rank = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, merges) {
        int rc;
        if (cJSON_IsString(m)) {
            const char *s = m->valuestring;
            if (!strncmp(s, "#version", 8)) continue;
            const char *sp = strchr(s, ' ');
            if (!sp || strchr(sp + 1, ' '))
                return xsa_fail(err, XSA_EBADINPUT, "%s: merge %u '%.100s' is not two tokens separated by one space",
                                path, rank + 1, s);
            rc = add_merge(b, s, (size_t)(sp - s), sp + 1, strlen(sp + 1), rank, path, err);
        } else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 && cJSON_IsString(cJSON_GetArrayItem(m, 0)) &&
                   cJSON_IsString(cJSON_GetArrayItem(m, 1))) {
            const char *x = cJSON_GetArrayItem(m, 0)->valuestring, *y = cJSON_GetArrayItem(m, 1)->valuestring;
            rc = add_merge(b, x, strlen(x), y, strlen(y), rank, path, err);
        } else {
            return xsa_fail(err, XSA_EBADINPUT, "%s: merge %u is neither \"a b\" nor [\"a\", \"b\"]", path, rank + 1);
        }
        if (rc) return rc;
        rank++;
    }
    return 0;
}

static char *dup_opt(const cJSON *model, const char *key) {
    const char *s = hft_json_str(model, key);
    return s ? xsa_strdup(s) : NULL;
}

int hft_bpe_parse(struct hft_bpe *b, const cJSON *model, const char *path, xsa_error *err) {
    memset(b, 0, sizeof *b);
    b->unk_id = -1;
    const char *type = hft_json_str(model, "type");
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (!type && cJSON_IsArray(merges)) type = "BPE";  // old files omit the model type
    if (!type || strcmp(type, "BPE"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: unsupported model type '%s' (only BPE tokenizers are supported)", path,
                        type ? type : "(none)");
    if (!cJSON_IsObject(vocab) || !cJSON_IsArray(merges))
        return xsa_fail(err, XSA_EBADINPUT, "%s: BPE model needs a \"vocab\" object and a \"merges\" array", path);
    const cJSON *drop = cJSON_GetObjectItemCaseSensitive(model, "dropout");
    if (cJSON_IsNumber(drop) && drop->valuedouble > 0.0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: BPE dropout %g makes encoding random; set \"dropout\": null", path,
                        drop->valuedouble);
    b->fuse_unk = hft_json_bool(model, "fuse_unk", 0);
    b->byte_fallback = hft_json_bool(model, "byte_fallback", 0);
    b->ignore_merges = hft_json_bool(model, "ignore_merges", 0);
    b->prefix = dup_opt(model, "continuing_subword_prefix");
    b->suffix = dup_opt(model, "end_of_word_suffix");
    const cJSON *e;
    int32_t max_id = -1;
    cJSON_ArrayForEach(e, vocab) {
        double d = e->valuedouble;
        if (!cJSON_IsNumber(e) || d < 0 || d >= HFT_MAX_ID || d != (double)(int32_t)d)
            return xsa_fail(err, XSA_EBADINPUT, "%s: vocab entry '%.100s' has no valid id (an integer in [0, %d))", path,
                            e->string ? e->string : "", HFT_MAX_ID);
        int32_t id = (int32_t)d;
        hft_strmap_put(&b->vocab, e->string, strlen(e->string), id);
        if (id > max_id) max_id = id;
    }
    b->n_ids = max_id + 1;
    b->id_str = xsa_calloc((size_t)b->n_ids, sizeof *b->id_str);
    for (size_t k = 0; k < b->vocab.n; k++) b->id_str[b->vocab.vals[k]] = b->vocab.keys.s + b->vocab.offs[k];
    int rc = parse_merges(b, merges, path, err);
    if (rc) return rc;
    const char *unk = hft_json_str(model, "unk_token");
    if (unk) {
        b->unk_id = hft_strmap_get(&b->vocab, unk, strlen(unk));
        if (b->unk_id < 0)  // the library fails only when the unknown token is needed; so do we
            b->unk_id = -2;
    }
    for (int x = 0; x < 256; x++) {
        char code[8];
        snprintf(code, sizeof code, "<0x%02X>", x);
        b->byte_ids[x] = hft_strmap_get(&b->vocab, code, 6);
    }
    if (!b->prefix && !b->suffix) {  // a direct table for one-character tokens
        b->cp_ids = xsa_malloc(HFT_CP_TABLE * sizeof *b->cp_ids);
        struct sbuf t = {0};
        for (uint32_t cp = 0; cp < HFT_CP_TABLE; cp++) {
            t.n = 0;
            hft_utf8_put(&t, cp);
            b->cp_ids[cp] = hft_strmap_get(&b->vocab, t.s, t.n);
        }
        sbuf_free(&t);
    }
    return 0;
}

void hft_bpe_free(struct hft_bpe *b) {
    hft_strmap_free(&b->vocab);
    free(b->id_str);
    free(b->mkeys);
    free(b->mrank);
    free(b->mnew);
    free(b->prefix);
    free(b->suffix);
    free(b->cp_ids);
    memset(b, 0, sizeof *b);
}

// ---- encoding one word ----

static void sym_add(struct hft_ctx *ctx, size_t *n, int32_t c, uint32_t len) {
    XSA_GROW(ctx->syms, ctx->capsyms, *n + 1);
    struct hft_sym *s = ctx->syms;
    if (*n) s[*n - 1].next = (int32_t)*n;
    s[*n] = (struct hft_sym){c, (int32_t)*n - 1, -1, len};
    (*n)++;
}

// The library's queue order: lowest rank first, then the leftmost.
static int mrg_less(const void *pa, const void *pb) {
    const struct hft_mrg *a = pa, *b = pb;
    return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static void mrg_push(struct hft_ctx *ctx, uint32_t rank, uint32_t pos, int32_t new_id) {
    struct hft_mrg m = {rank, pos, new_id};
    xsa_heap_push(&ctx->heap, &m, sizeof m, mrg_less);
}

// Id of the token for one character (with the subword prefix / word suffix when they apply).
static int32_t char_id(const struct hft_bpe *b, const char *s, size_t st, size_t en, size_t len, uint32_t cp,
                       struct hft_ctx *ctx, const char **str, size_t *slen) {
    *str = s + st;
    *slen = en - st;
    if (b->cp_ids) return cp < HFT_CP_TABLE ? b->cp_ids[cp] : hft_strmap_get(&b->vocab, s + st, en - st);
    struct sbuf *t = &ctx->tmp2;
    t->n = 0;
    if (st > 0 && b->prefix) sbuf_puts(t, b->prefix);
    sbuf_append(t, s + st, en - st);
    if (en == len && b->suffix) sbuf_puts(t, b->suffix);
    *str = t->s;
    *slen = t->n;
    return hft_strmap_get(&b->vocab, t->s, t->n);
}

int hft_bpe_encode_word(const struct hft_bpe *b, const char *s, size_t len, struct ivec *out, struct hft_ctx *ctx,
                       xsa_error *err) {
    if (len == 0) return 0;
    if (b->ignore_merges) {
        int32_t id = hft_strmap_get(&b->vocab, s, len);
        if (id >= 0) {
            ivec_push(out, id);
            return 0;
        }
    }
    size_t n = 0;
    int32_t unk = -1;
    uint32_t unk_len = 0;
    for (size_t i = 0; i < len;) {
        size_t st = i;
        uint32_t cp = hft_utf8_next(s, len, &i);
        const char *str;
        size_t slen;
        int32_t id = char_id(b, s, st, i, len, cp, ctx, &str, &slen);
        if (id >= 0) {
            if (unk >= 0) sym_add(ctx, &n, unk, unk_len);
            unk = -1;
            sym_add(ctx, &n, id, (uint32_t)(i - st));
            continue;
        }
        if (b->byte_fallback) {
            size_t k = 0;
            while (k < slen && b->byte_ids[(unsigned char)str[k]] >= 0) k++;
            if (k == slen) {
                // The library adds the byte tokens without flushing a pending unknown token.
                for (k = 0; k < slen; k++) sym_add(ctx, &n, b->byte_ids[(unsigned char)str[k]], 1);
                continue;
            }
        }
        if (b->unk_id == -1) continue;  // no unk_token: the character is dropped, as in the library
        if (b->unk_id == -2)
            return xsa_fail(err, XSA_EBADINPUT, "%s: unk_token of the BPE model is not in its vocabulary", ctx->path);
        if (unk >= 0 && b->fuse_unk) {
            unk_len += (uint32_t)(i - st);
        } else {
            if (unk >= 0) sym_add(ctx, &n, unk, unk_len);
            unk = b->unk_id;
            unk_len = (uint32_t)(i - st);
        }
    }
    if (unk >= 0) sym_add(ctx, &n, unk, unk_len);

    struct hft_sym *sy = ctx->syms;
    ctx->heap.n = 0;
    for (size_t k = 0; k + 1 < n; k++) {
        uint32_t rank;
        int32_t nid;
        if (merge_get(b, sy[k].c, sy[k + 1].c, &rank, &nid)) mrg_push(ctx, rank, (uint32_t)k, nid);
    }
    while (ctx->heap.n) {
        struct hft_mrg top;
        xsa_heap_pop(&ctx->heap, &top, sizeof top, mrg_less);
        struct hft_sym *cur = &sy[top.pos];
        if (cur->len == 0 || cur->next == -1) continue;
        int32_t next_pos = cur->next;
        struct hft_sym right = sy[next_pos];
        uint32_t rank;
        int32_t nid;
        if (!merge_get(b, cur->c, right.c, &rank, &nid) || nid != top.new_id) continue;  // stale entry
        cur->c = top.new_id;
        cur->len += right.len;
        cur->next = right.next;
        sy[next_pos].len = 0;
        if (right.next > -1 && (size_t)right.next < n) sy[right.next].prev = (int32_t)top.pos;
        if (cur->prev >= 0 && merge_get(b, sy[cur->prev].c, cur->c, &rank, &nid))
            mrg_push(ctx, rank, (uint32_t)cur->prev, nid);
        if (cur->next >= 0 && (size_t)cur->next < n && merge_get(b, cur->c, sy[cur->next].c, &rank, &nid))
            mrg_push(ctx, rank, top.pos, nid);
    }
    for (size_t k = 0; k < n; k++)
        if (ctx->syms[k].len) ivec_push(out, ctx->syms[k].c);
    return 0;
}
