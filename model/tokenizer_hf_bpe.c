// tokenizer_hf_bpe.c: the BPE model of tokenizer.json, equal to the `tokenizers` library's
// models/bpe (merge_word + Word::merge_all: a priority queue by (rank, position), stale
// entries skipped when the pair no longer yields the same token). Also a string -> id hash.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static uint64_t hash_bytes(const char *k, size_t len) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int strmap_grow(struct hft_strmap *m) {
    size_t nc = m->cap ? m->cap * 2 : 1024;
    uint32_t *slots = calloc(nc, sizeof *slots);
    if (!slots) return -1;
    for (size_t e = 0; e < m->n; e++) {
        size_t h = (size_t)hash_bytes(m->keys.s + m->offs[e], m->lens[e]) & (nc - 1);
        while (slots[h]) h = (h + 1) & (nc - 1);
        slots[h] = (uint32_t)e + 1;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = nc;
    return 0;
}

int32_t hft_strmap_get(const struct hft_strmap *m, const char *k, size_t len) {
    if (!m->cap) return -1;
    size_t h = (size_t)hash_bytes(k, len) & (m->cap - 1);
    for (;;) {
        uint32_t e = m->slots[h];
        if (!e) return -1;
        e--;
        if (m->lens[e] == len && !memcmp(m->keys.s + m->offs[e], k, len)) return m->vals[e];
        h = (h + 1) & (m->cap - 1);
    }
}

int hft_strmap_put(struct hft_strmap *m, const char *k, size_t len, int32_t v) {
    if ((m->n + 1) * 2 > m->cap && strmap_grow(m)) return -1;
    size_t h = (size_t)hash_bytes(k, len) & (m->cap - 1);
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
    if (m->n == m->ncap) {
        size_t nc = m->ncap ? m->ncap * 2 : 1024;
        size_t *o = realloc(m->offs, nc * sizeof *o);
        if (!o) return -1;
        m->offs = o;
        uint32_t *l = realloc(m->lens, nc * sizeof *l);
        if (!l) return -1;
        m->lens = l;
        int32_t *vv = realloc(m->vals, nc * sizeof *vv);
        if (!vv) return -1;
        m->vals = vv;
        m->ncap = nc;
    }
    m->offs[m->n] = m->keys.n;
    if (sbuf_append(&m->keys, k, len) || sbuf_append(&m->keys, "", 1)) return -1;  // keys stay NUL-separated
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
    char *buf = nl <= sizeof stackbuf ? stackbuf : malloc(nl);
    if (!buf) return xsa_fail(err, XSA_ERUNTIME, "out of memory");
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
    b->mkeys = calloc(b->mcap, sizeof *b->mkeys);
    b->mrank = calloc(b->mcap, sizeof *b->mrank);
    b->mnew = calloc(b->mcap, sizeof *b->mnew);
    if (!b->mkeys || !b->mrank || !b->mnew) return xsa_fail(err, XSA_ERUNTIME, "out of memory");
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

static int dup_opt(char **dst, const cJSON *model, const char *key) {
    const char *s = hft_json_str(model, key);
    if (!s) return 0;
    *dst = strdup(s);
    return *dst ? 0 : -1;
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
    if (dup_opt(&b->prefix, model, "continuing_subword_prefix") || dup_opt(&b->suffix, model, "end_of_word_suffix"))
        return xsa_fail(err, XSA_ERUNTIME, "out of memory");
    const cJSON *e;
    int32_t max_id = -1;
    cJSON_ArrayForEach(e, vocab) {
        double d = e->valuedouble;
        if (!cJSON_IsNumber(e) || d < 0 || d >= HFT_MAX_ID || d != (double)(int32_t)d)
            return xsa_fail(err, XSA_EBADINPUT, "%s: vocab entry '%.100s' has no valid id (an integer in [0, %d))", path,
                            e->string ? e->string : "", HFT_MAX_ID);
        int32_t id = (int32_t)d;
        if (hft_strmap_put(&b->vocab, e->string, strlen(e->string), id) < 0)
            return xsa_fail(err, XSA_ERUNTIME, "out of memory");
        if (id > max_id) max_id = id;
    }
    b->n_ids = max_id + 1;
    b->id_str = calloc((size_t)(b->n_ids ? b->n_ids : 1), sizeof *b->id_str);
    if (!b->id_str) return xsa_fail(err, XSA_ERUNTIME, "out of memory");
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
        b->cp_ids = malloc(HFT_CP_TABLE * sizeof *b->cp_ids);
        if (!b->cp_ids) return xsa_fail(err, XSA_ERUNTIME, "out of memory");
        for (uint32_t cp = 0; cp < HFT_CP_TABLE; cp++) {
            struct sbuf t = {0};
            char tmp[4];
            size_t n = 0;
            if (hft_utf8_put(&t, cp)) return xsa_fail(err, XSA_ERUNTIME, "out of memory");
            n = t.n;
            memcpy(tmp, t.s, n);
            sbuf_free(&t);
            b->cp_ids[cp] = hft_strmap_get(&b->vocab, tmp, n);
        }
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

static int sym_add(struct hft_ctx *ctx, size_t *n, int32_t c, uint32_t len) {
    if (*n == ctx->capsyms) {
        size_t nc = ctx->capsyms ? ctx->capsyms * 2 : 256;
        struct hft_sym *s = realloc(ctx->syms, nc * sizeof *s);
        if (!s) return -1;
        ctx->syms = s;
        ctx->capsyms = nc;
    }
    struct hft_sym *s = ctx->syms;
    if (*n) s[*n - 1].next = (int32_t)*n;
    s[*n] = (struct hft_sym){c, (int32_t)*n - 1, -1, len};
    (*n)++;
    return 0;
}

static int mrg_less(const struct hft_mrg *a, const struct hft_mrg *b) {
    return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static int heap_push(struct hft_ctx *ctx, size_t *n, struct hft_mrg m) {
    if (*n == ctx->capheap) {
        size_t nc = ctx->capheap ? ctx->capheap * 2 : 256;
        struct hft_mrg *h = realloc(ctx->heap, nc * sizeof *h);
        if (!h) return -1;
        ctx->heap = h;
        ctx->capheap = nc;
    }
    struct hft_mrg *h = ctx->heap;
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!mrg_less(&m, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = m;
    return 0;
}

static struct hft_mrg heap_pop(struct hft_ctx *ctx, size_t *n) {
    struct hft_mrg *h = ctx->heap, top = h[0], last = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && mrg_less(&h[c + 1], &h[c])) c++;
        if (!mrg_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

// Id of the token for one character (with the subword prefix / word suffix when they apply).
static int32_t char_id(const struct hft_bpe *b, const char *s, size_t st, size_t en, size_t len, uint32_t cp,
                       struct hft_ctx *ctx, const char **str, size_t *slen) {
    *str = s + st;
    *slen = en - st;
    if (b->cp_ids) return cp < HFT_CP_TABLE ? b->cp_ids[cp] : hft_strmap_get(&b->vocab, s + st, en - st);
    struct sbuf *t = &ctx->tmp2;
    t->n = 0;
    if ((st > 0 && b->prefix && sbuf_append(t, b->prefix, strlen(b->prefix))) || sbuf_append(t, s + st, en - st) ||
        (en == len && b->suffix && sbuf_append(t, b->suffix, strlen(b->suffix))))
        return -3;
    *str = t->s;
    *slen = t->n;
    return hft_strmap_get(&b->vocab, t->s, t->n);
}

int hft_bpe_encode_word(const struct hft_bpe *b, const char *s, size_t len, struct ivec *out, struct hft_ctx *ctx,
                       xsa_error *err) {
    if (len == 0) return 0;
    if (b->ignore_merges) {
        int32_t id = hft_strmap_get(&b->vocab, s, len);
        if (id >= 0) return ivec_push(out, id) ? xsa_fail(err, XSA_ERUNTIME, "out of memory") : 0;
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
        if (id == -3) goto oom;
        if (id >= 0) {
            if (unk >= 0 && sym_add(ctx, &n, unk, unk_len)) goto oom;
            unk = -1;
            if (sym_add(ctx, &n, id, (uint32_t)(i - st))) goto oom;
            continue;
        }
        if (b->byte_fallback) {
            size_t k = 0;
            while (k < slen && b->byte_ids[(unsigned char)str[k]] >= 0) k++;
            if (k == slen) {
                // The library adds the byte tokens without flushing a pending unknown token.
                for (k = 0; k < slen; k++)
                    if (sym_add(ctx, &n, b->byte_ids[(unsigned char)str[k]], 1)) goto oom;
                continue;
            }
        }
        if (b->unk_id == -1) continue;  // no unk_token: the character is dropped, as in the library
        if (b->unk_id == -2)
            return xsa_fail(err, XSA_EBADINPUT, "%s: unk_token of the BPE model is not in its vocabulary", ctx->path);
        if (unk >= 0 && b->fuse_unk) {
            unk_len += (uint32_t)(i - st);
        } else {
            if (unk >= 0 && sym_add(ctx, &n, unk, unk_len)) goto oom;
            unk = b->unk_id;
            unk_len = (uint32_t)(i - st);
        }
    }
    if (unk >= 0 && sym_add(ctx, &n, unk, unk_len)) goto oom;

    struct hft_sym *sy = ctx->syms;
    size_t nh = 0;
    for (size_t k = 0; k + 1 < n; k++) {
        uint32_t rank;
        int32_t nid;
        if (merge_get(b, sy[k].c, sy[k + 1].c, &rank, &nid) &&
            heap_push(ctx, &nh, (struct hft_mrg){rank, (uint32_t)k, nid}))
            goto oom;
    }
    while (nh) {
        struct hft_mrg top = heap_pop(ctx, &nh);
        sy = ctx->syms;
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
        if (cur->prev >= 0 && merge_get(b, sy[cur->prev].c, cur->c, &rank, &nid) &&
            heap_push(ctx, &nh, (struct hft_mrg){rank, (uint32_t)cur->prev, nid}))
            goto oom;
        sy = ctx->syms;
        cur = &sy[top.pos];
        if (cur->next >= 0 && (size_t)cur->next < n && merge_get(b, cur->c, sy[cur->next].c, &rank, &nid) &&
            heap_push(ctx, &nh, (struct hft_mrg){rank, top.pos, nid}))
            goto oom;
    }
    for (size_t k = 0; k < n; k++)
        if (ctx->syms[k].len && ivec_push(out, ctx->syms[k].c)) goto oom;
    return 0;
oom:
    return xsa_fail(err, XSA_ERUNTIME, "out of memory");
}
