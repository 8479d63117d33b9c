// tokenizer_hf.c: Hugging Face tokenizer.json tokenizers with a BPE model, equal to the
// `tokenizers` library (v0.23) id for id. The pipeline of TokenizerImpl::encode:
//   1. added tokens with normalized=false are cut out of the raw text (leftmost-longest,
//      honouring single_word, lstrip, rstrip);
//   2. each remaining piece is normalized, then added tokens with normalized=true are cut out
//      of the normalized text;
//   3. the pre-tokenizer splits the pieces; 4. the BPE model encodes each piece;
//   5. with add_special, the post-processor (TemplateProcessing, Roberta/BertProcessing,
//      ByteLevel, Sequence) adds its special tokens.
// Input that is not valid UTF-8 is first repaired: each maximal ill-formed subpart becomes
// U+FFFD (as Python's bytes.decode("utf-8", errors="replace")), since the library takes str.
// `truncation` and `padding` are ignored, as transformers' fast tokenizers disable them.
// bos_id/adds_bos: the first token the post-processor puts before the text, when it puts one
// there; otherwise bos_id is the first of the added tokens <s>, <|begin_of_text|>, <bos>,
// <|startoftext|>, with adds_bos 0. eos_id: the first of </s>, <|endoftext|>,
// <|end_of_text|>, <eos>, <|eot_id|> among the added tokens, else -1.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"
#include "common/xalloc.h"
#include "model/tokenizer_hf_priv.h"
#include "model/tokenizer_impl.h"

#define HFT_MAX_ADDED (1 << 20)
#define HFT_MAX_TEMPLATE 64

struct hft_added {
    char *content;
    size_t len;
    int32_t id;
    int special, single_word, lstrip, rstrip, normalized;
    const char *dec;  // decoding form: the normalized content for normalized tokens
    size_t dec_len;
};

struct hft_pat {
    const char *s;  // pattern bytes (owned by hft_added or matcher->own)
    size_t len;
    int added;      // index into tok->added
};

struct hft_matcher {         // leftmost-longest literal matcher
    struct hft_pat *pats;    // (n,) sorted by first byte, then longest first
    size_t n;
    uint32_t start[257];    // pats[start[b]..start[b+1]) begin with byte b
    struct sbuf own;        // normalized pattern texts
};

struct hft_template {        // one post-processor step: ids, with -1 standing for the text
    int32_t items[HFT_MAX_TEMPLATE];
    size_t n;
};

struct hft_tok {
    struct hft_bpe bpe;
    struct hft_norm *norm;
    struct hft_pretok *pretok;
    struct hft_dec *dec;
    struct hft_added *added;
    size_t nadded;
    struct hft_matcher raw, normed;
    struct hft_template tmpl[8];
    size_t ntmpl;
    int32_t n_ids;            // largest id + 1
    int32_t *added_of_id;     // (n_ids,) index into added, -1 when none
    char path[4096];
};

// ---- added tokens ----

static int pat_cmp(const void *a, const void *b) {
    const struct hft_pat *x = a, *y = b;
    unsigned char cx = (unsigned char)x->s[0], cy = (unsigned char)y->s[0];
    if (cx != cy) return cx < cy ? -1 : 1;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->added - y->added;
}

static void matcher_build(struct hft_matcher *m) {
    qsort(m->pats, m->n, sizeof *m->pats, pat_cmp);
    size_t k = 0;
    for (int b = 0; b <= 256; b++) {
        while (k < m->n && (unsigned char)m->pats[k].s[0] < b) k++;
        m->start[b] = (uint32_t)k;
    }
}

static void matcher_free(struct hft_matcher *m) {
    free(m->pats);
    sbuf_free(&m->own);
}

// Longest pattern at s[i..len), or -1.
static int match_at(const struct hft_matcher *m, const char *s, size_t len, size_t i, size_t *mlen) {
    unsigned char c = (unsigned char)s[i];
    for (uint32_t k = m->start[c]; k < m->start[c + 1]; k++) {
        const struct hft_pat *p = &m->pats[k];
        if (p->len <= len - i && !memcmp(s + i, p->s, p->len)) {
            *mlen = p->len;
            return (int)k;
        }
    }
    return -1;
}

static int ends_with_word(const char *s, size_t end) {
    if (end == 0) return 0;
    size_t st = end - 1;
    while (st > 0 && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
    return hft_is_word_char(hft_utf8_next(s, end, &st));
}

static int starts_with_word(const char *s, size_t i, size_t len) {
    return i < len && hft_is_word_char(hft_utf8_next(s, len, &i));
}

// AddedVocabulary::find_matches + split: appends the pieces of s[0..len) to *out.
static void split_added(const struct hft_tok *t, const struct hft_matcher *m, const char *s, size_t len, int first,
                       struct hft_pieces *out) {
    size_t start_offset = 0;
    if (m->n) {
        for (size_t i = 0; i < len;) {
            if (m->start[(unsigned char)s[i]] == m->start[(unsigned char)s[i] + 1]) {
                i++;
                continue;
            }
            size_t ml;
            int k = match_at(m, s, len, i, &ml);
            if (k < 0) {
                i++;
                continue;
            }
            const struct hft_added *a = &t->added[m->pats[k].added];
            size_t start = i, stop = i + ml;
            i = stop;  // the next match starts after this one, even when this one is discarded
            if (a->single_word && ((start > 0 && ends_with_word(s, start)) || starts_with_word(s, stop, len))) continue;
            if (a->lstrip) {  // take the whitespace before it, not before the previous match's end
                size_t ns = start;
                while (ns > 0) {
                    size_t st = ns - 1;
                    while (st > 0 && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
                    size_t q = st;
                    if (!hft_is_whitespace(hft_utf8_next(s, len, &q))) break;
                    ns = st;
                }
                start = ns > start_offset ? ns : start_offset;
            }
            if (a->rstrip) {
                while (stop < len) {
                    size_t q = stop;
                    if (!hft_is_whitespace(hft_utf8_next(s, len, &q))) break;
                    stop = q;
                }
            }
            if (start_offset < start)
                hft_pieces_push(out, s + start_offset, start - start_offset, -1, first && start_offset == 0);
            if (stop > start) hft_pieces_push(out, s + start, stop - start, a->id, first && start == 0);
            start_offset = stop;
        }
    }
    if (start_offset < len) hft_pieces_push(out, s + start_offset, len - start_offset, -1, first && start_offset == 0);
}

static int parse_added(struct hft_tok *t, const cJSON *arr, const char *path, xsa_error *err) {
    if (!arr || cJSON_IsNull(arr)) return 0;
    if (!cJSON_IsArray(arr)) return xsa_fail(err, XSA_EBADINPUT, "%s: \"added_tokens\" must be an array", path);
    size_t n = (size_t)cJSON_GetArraySize(arr);
    if (n > HFT_MAX_ADDED) return xsa_fail(err, XSA_EBADINPUT, "%s: too many added tokens (%zu)", path, n);
    t->added = xsa_calloc(n, sizeof *t->added);
    // AddedVocabulary::add_tokens: a token in the model vocabulary keeps its id, others get the
    // next id after max(model size, largest added id).
    int32_t next_id = (int32_t)t->bpe.vocab.n;
    struct hft_strmap seen = {0};  // content -> index into t->added (a scan per token is quadratic)
    int rc = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        const char *c = hft_json_str(e, "content");
        if (!c) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: an added token has no \"content\"", path);
            break;
        }
        if (!*c) continue;  // the library ignores empty tokens
        struct hft_added a = {0};
        a.len = strlen(c);
        a.special = hft_json_bool(e, "special", 0);
        a.single_word = hft_json_bool(e, "single_word", 0);
        a.lstrip = hft_json_bool(e, "lstrip", 0);
        a.rstrip = hft_json_bool(e, "rstrip", 0);
        a.normalized = hft_json_bool(e, "normalized", !a.special);
        int32_t seen_at = hft_strmap_get(&seen, c, a.len);
        size_t dup = seen_at >= 0 ? (size_t)seen_at : t->nadded;
        int32_t id = dup < t->nadded ? t->added[dup].id : hft_strmap_get(&t->bpe.vocab, c, a.len);
        if (id < 0) id = next_id++;
        a.id = id;
        if (id + 1 > t->n_ids) t->n_ids = id + 1;
        if (dup < t->nadded) {  // the same content again: the later properties win
            a.content = t->added[dup].content;
            t->added[dup] = a;
            continue;
        }
        a.content = xsa_strdup(c);
        hft_strmap_put(&seen, c, a.len, (int32_t)t->nadded);
        t->added[t->nadded++] = a;
    }
    hft_strmap_free(&seen);
    return rc;
}

static struct hft_ctx hft_ctx_make(const char *path);  // PCRE2 match data allocated; the rest empty
static void hft_ctx_free(struct hft_ctx *ctx);

static int build_matchers(struct hft_tok *t, xsa_error *err) {
    t->raw.pats = xsa_calloc(t->nadded + 1, sizeof *t->raw.pats);
    t->normed.pats = xsa_calloc(t->nadded + 1, sizeof *t->normed.pats);
    struct hft_ctx ctx = hft_ctx_make(t->path);
    size_t *offs = xsa_calloc(t->nadded + 1, sizeof *offs), *lens = xsa_calloc(t->nadded + 1, sizeof *lens);
    int rc = 0;
    for (size_t k = 0; !rc && k < t->nadded; k++) {
        const struct hft_added *a = &t->added[k];
        if (!a->normalized) {
            t->raw.pats[t->raw.n++] = (struct hft_pat){a->content, a->len, (int)k};
            continue;
        }
        offs[k] = t->normed.own.n;
        if (t->norm) rc = hft_norm_apply(t->norm, a->content, a->len, &t->normed.own, &ctx, err);
        else sbuf_append(&t->normed.own, a->content, a->len);
        lens[k] = t->normed.own.n - offs[k];
    }
    for (size_t k = 0; !rc && k < t->nadded; k++) {  // pointers once the buffer stops moving
        struct hft_added *a = &t->added[k];
        a->dec = a->content;
        a->dec_len = a->len;
        if (!a->normalized) continue;
        a->dec = t->normed.own.s + offs[k];  // AddedVocabulary::simple_id_to_token
        a->dec_len = lens[k];
        if (lens[k]) t->normed.pats[t->normed.n++] = (struct hft_pat){a->dec, lens[k], (int)k};
    }
    free(offs);
    free(lens);
    hft_ctx_free(&ctx);
    if (rc) return rc;
    matcher_build(&t->raw);
    matcher_build(&t->normed);
    return 0;
}

// ---- post-processor ----

static int template_special(struct hft_template *tp, int32_t id, const char *path, xsa_error *err) {
    if (tp->n >= HFT_MAX_TEMPLATE) return xsa_fail(err, XSA_EBADINPUT, "%s: post_processor template too long", path);
    tp->items[tp->n++] = id;
    return 0;
}

static int parse_post(struct hft_tok *t, const cJSON *j, const char *path, xsa_error *err) {
    if (!j || cJSON_IsNull(j)) return 0;
    const char *type = hft_json_str(j, "type");
    if (!type) return xsa_fail(err, XSA_EBADINPUT, "%s: post_processor without a \"type\"", path);
    if (!strcmp(type, "Sequence")) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "processors"), *e;
        if (!cJSON_IsArray(arr))
            return xsa_fail(err, XSA_EBADINPUT, "%s: post_processor Sequence without a \"processors\" array", path);
        cJSON_ArrayForEach(e, arr) {
            int rc = parse_post(t, e, path, err);
            if (rc) return rc;
        }
        return 0;
    }
    if (!strcmp(type, "ByteLevel")) return 0;  // offsets only
    if (t->ntmpl >= sizeof t->tmpl / sizeof t->tmpl[0])
        return xsa_fail(err, XSA_EBADINPUT, "%s: too many post-processors", path);
    struct hft_template *tp = &t->tmpl[t->ntmpl];
    tp->n = 0;
    int rc = 0;
    if (!strcmp(type, "RobertaProcessing") || !strcmp(type, "BertProcessing")) {
        const cJSON *cls = cJSON_GetObjectItemCaseSensitive(j, "cls"), *sep = cJSON_GetObjectItemCaseSensitive(j, "sep");
        const cJSON *ci = cJSON_GetArrayItem(cls, 1), *si = cJSON_GetArrayItem(sep, 1);
        if (!cJSON_IsNumber(ci) || !cJSON_IsNumber(si) || !(ci->valuedouble >= 0 && ci->valuedouble < (1 << 24)) ||
            !(si->valuedouble >= 0 && si->valuedouble < (1 << 24)))
            return xsa_fail(err, XSA_EBADINPUT, "%s: post_processor %s needs \"cls\" and \"sep\" as [token, id] with ids below 2^24", path, type);
        rc = template_special(tp, (int32_t)ci->valuedouble, path, err);
        if (!rc) rc = template_special(tp, -1, path, err);
        if (!rc) rc = template_special(tp, (int32_t)si->valuedouble, path, err);
    } else if (!strcmp(type, "TemplateProcessing")) {
        const cJSON *single = cJSON_GetObjectItemCaseSensitive(j, "single");
        const cJSON *specials = cJSON_GetObjectItemCaseSensitive(j, "special_tokens"), *e;
        if (!cJSON_IsArray(single))
            return xsa_fail(err, XSA_EBADINPUT, "%s: TemplateProcessing without a \"single\" template", path);
        cJSON_ArrayForEach(e, single) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "SpecialToken");
            const cJSON *sq = cJSON_GetObjectItemCaseSensitive(e, "Sequence");
            if (sq) {
                const char *id = hft_json_str(sq, "id");
                if (!id || strcmp(id, "A"))
                    return xsa_fail(err, XSA_EBADINPUT, "%s: TemplateProcessing single template uses sequence '%s'",
                                    path, id ? id : "?");
                rc = template_special(tp, -1, path, err);
            } else if (st) {
                const char *name = hft_json_str(st, "id");
                const cJSON *sp = name ? cJSON_GetObjectItemCaseSensitive(specials, name) : NULL;
                const cJSON *ids = cJSON_GetObjectItemCaseSensitive(sp, "ids"), *x;
                if (!cJSON_IsArray(ids))
                    return xsa_fail(err, XSA_EBADINPUT, "%s: TemplateProcessing special token '%s' is not in special_tokens",
                                    path, name ? name : "?");
                cJSON_ArrayForEach(x, ids) {
                    if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble < (1 << 24)))
                        return xsa_fail(err, XSA_EBADINPUT, "%s: TemplateProcessing special token '%s' has a bad id",
                                        path, name);
                    if (!rc) rc = template_special(tp, (int32_t)x->valuedouble, path, err);
                }
            } else {
                return xsa_fail(err, XSA_EBADINPUT, "%s: TemplateProcessing item is neither SpecialToken nor Sequence",
                                path);
            }
            if (rc) return rc;
        }
    } else {
        return xsa_fail(err, XSA_EBADINPUT,
                        "%s: unsupported post_processor '%s' (supported: TemplateProcessing, ByteLevel, Sequence, "
                        "RobertaProcessing, BertProcessing)",
                        path, type);
    }
    if (rc) return rc;
    for (size_t k = 0; k < tp->n; k++)
        if (tp->items[k] + 1 > t->n_ids) t->n_ids = tp->items[k] + 1;
    t->ntmpl++;
    return 0;
}

// Applies the post-processor steps to ids[from..out->n).
static void post_process(const struct hft_tok *t, struct ivec *out, size_t from) {
    for (size_t s = 0; s < t->ntmpl; s++) {
        const struct hft_template *tp = &t->tmpl[s];
        size_t nseq = out->n - from, extra = 0;
        for (size_t k = 0; k < tp->n; k++) extra += tp->items[k] >= 0 ? 1 : nseq;
        ivec_reserve(out, out->n + extra);
        if (!extra && !nseq) continue;  // "$A" alone around no ids: nothing to do (and out->v may be NULL)
        int32_t *seq = xsa_malloc(nseq * sizeof *seq);
        if (nseq) memcpy(seq, out->v + from, nseq * sizeof *seq);
        out->n = from;
        for (size_t k = 0; k < tp->n; k++) {
            if (tp->items[k] >= 0) out->v[out->n++] = tp->items[k];
            else if (nseq) {
                memcpy(out->v + out->n, seq, nseq * sizeof *seq);
                out->n += nseq;
            }
        }
        free(seq);
    }
}

// ---- encode / decode ----

static struct hft_ctx hft_ctx_make(const char *path) {
    return (struct hft_ctx){.md = xsa_alloc_check(pcre2_match_data_create(1, NULL)), .path = path};
}

static void hft_ctx_free(struct hft_ctx *ctx) {
    if (ctx->md) pcre2_match_data_free(ctx->md);
    free(ctx->spans);
    sbuf_free(&ctx->tmp);
    sbuf_free(&ctx->tmp2);
    hft_pieces_free(&ctx->pa);
    hft_pieces_free(&ctx->pb);
    free(ctx->syms);
    xsa_heap_free(&ctx->heap);
    memset(ctx, 0, sizeof *ctx);
}

static int hft_encode(const void *impl, const char *text, size_t len, int add_special, struct ivec *out,
                     xsa_error *err) {
    const struct hft_tok *t = impl;
    struct hft_ctx ctx = hft_ctx_make(t->path);
    struct sbuf clean = {0};
    size_t from = out->n;
    int rc = 0;
    if (!hft_utf8_valid(text, len)) {
        hft_utf8_sanitize(text, len, &clean);
        text = clean.s;
        len = clean.n;
    }
    split_added(t, &t->raw, text, len, 1, &ctx.pa);
    // Normalize each text piece, then cut out the normalized added tokens.
    for (size_t k = 0; !rc && k < ctx.pa.n; k++) {
        const struct hft_piece *p = &ctx.pa.v[k];
        const char *s = ctx.pa.buf.s + p->off;
        if (p->id >= 0) {
            hft_pieces_push(&ctx.pb, s, p->len, p->id, p->first);
            continue;
        }
        if (t->norm) {
            ctx.tmp2.n = 0;
            sbuf_append(&ctx.tmp2, "", 0);
            rc = hft_norm_apply(t->norm, s, p->len, &ctx.tmp2, &ctx, err);
            if (rc) break;
            struct sbuf normed = ctx.tmp2;  // split_added may not touch tmp2; take it over
            ctx.tmp2 = (struct sbuf){0};
            split_added(t, &t->normed, normed.s, normed.n, p->first, &ctx.pb);
            sbuf_free(&normed);
        } else {
            split_added(t, &t->normed, s, p->len, p->first, &ctx.pb);
        }
    }
    if (!rc && t->pretok) rc = hft_pretok_apply(t->pretok, &ctx.pb, &ctx, err);
    for (size_t k = 0; !rc && k < ctx.pb.n; k++) {
        const struct hft_piece *p = &ctx.pb.v[k];
        if (p->id >= 0) ivec_push(out, p->id);
        else rc = hft_bpe_encode_word(&t->bpe, ctx.pb.buf.s + p->off, p->len, out, &ctx, err);
    }
    if (!rc && add_special) post_process(t, out, from);
    sbuf_free(&clean);
    hft_ctx_free(&ctx);
    if (rc) out->n = from;
    return rc;
}

static int hft_decode(const void *impl, const int32_t *ids, size_t n, struct sbuf *out, xsa_error *err) {
    const struct hft_tok *t = impl;
    struct hft_ctx ctx = hft_ctx_make(t->path);
    int rc = 0;
    struct hft_pieces toks = {0};
    for (size_t k = 0; !rc && k < n; k++) {
        int32_t id = ids[k];
        if (id < 0 || id >= t->n_ids) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: token id %d out of range", t->path, id);
            break;
        }
        const char *s = NULL;
        size_t len = 0;
        if (t->added_of_id[id] >= 0) {
            s = t->added[t->added_of_id[id]].dec;
            len = t->added[t->added_of_id[id]].dec_len;
        } else if (id < t->bpe.n_ids && t->bpe.id_str[id]) {
            s = t->bpe.id_str[id];
            len = strlen(s);
        }
        if (s) hft_pieces_push(&toks, s, len, -1, 0);
        // an id with no token is skipped, as the library does
    }
    if (!rc) rc = hft_dec_apply(t->dec, &toks, out, &ctx, err);
    hft_pieces_free(&toks);
    hft_ctx_free(&ctx);
    return rc;
}

static void hft_destroy(void *impl) {
    struct hft_tok *t = impl;
    if (!t) return;
    hft_bpe_free(&t->bpe);
    hft_norm_free(t->norm);
    hft_pretok_free(t->pretok);
    hft_dec_free(t->dec);
    for (size_t k = 0; k < t->nadded; k++) free(t->added[k].content);
    free(t->added);
    matcher_free(&t->raw);
    matcher_free(&t->normed);
    free(t->added_of_id);
    free(t);
}

static const struct tokenizer_ops hft_ops = {hft_encode, hft_decode, hft_destroy};

static int32_t added_named(const struct hft_tok *t, const char *const *names, size_t nn) {
    for (size_t i = 0; i < nn; i++)
        for (size_t k = 0; k < t->nadded; k++)
            if (!strcmp(t->added[k].content, names[i])) return t->added[k].id;
    return -1;
}

static int hft_build(struct hft_tok *t, const cJSON *root, const char *path, xsa_error *err) {
    if (!cJSON_IsObject(root)) return xsa_fail(err, XSA_EBADINPUT, "%s: not a JSON object", path);
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!cJSON_IsObject(model)) return xsa_fail(err, XSA_EBADINPUT, "%s: no \"model\" object; not a tokenizer.json", path);
    int rc = hft_bpe_parse(&t->bpe, model, path, err);
    if (rc) return rc;
    t->n_ids = t->bpe.n_ids;
    const cJSON *j;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "normalizer")) && !cJSON_IsNull(j) &&
        (rc = hft_norm_parse(&t->norm, j, path, err)))
        return rc;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer")) && !cJSON_IsNull(j) &&
        (rc = hft_pretok_parse(&t->pretok, j, path, err)))
        return rc;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "decoder")) && !cJSON_IsNull(j) &&
        (rc = hft_dec_parse(&t->dec, j, path, err)))
        return rc;
    if ((rc = parse_added(t, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), path, err))) return rc;
    if ((rc = parse_post(t, cJSON_GetObjectItemCaseSensitive(root, "post_processor"), path, err))) return rc;
    if ((rc = build_matchers(t, err))) return rc;
    t->added_of_id = xsa_calloc((size_t)t->n_ids, sizeof *t->added_of_id);
    for (int32_t i = 0; i < t->n_ids; i++) t->added_of_id[i] = -1;
    for (size_t k = 0; k < t->nadded; k++) t->added_of_id[t->added[k].id] = (int32_t)k;
    return 0;
}

int tokenizer_hf_decoder_byte_level(const struct tokenizer *tok) {
    const struct hft_tok *t = tok->kind == TOKENIZER_HF_JSON ? tok->impl : NULL;
    return t && hft_dec_byte_level_len(t->dec, "", 0) >= 0;
}

// The token string decode reads for id i (an added token's decoding form), or NULL: no token.
static const char *token_string(const struct hft_tok *t, int i, size_t *len, int *special) {
    int32_t k = i < t->n_ids ? t->added_of_id[i] : -1;
    *special = k >= 0 && t->added[k].special;
    if (k >= 0) return *len = t->added[k].dec_len, t->added[k].dec;
    const char *s = i < t->bpe.n_ids ? t->bpe.id_str[i] : NULL;
    *len = s ? strlen(s) : 0;
    return s;
}

// Any decoder but ByteLevel: each token's bytes as decode's first token (base_bytes) and the
// bytes it adds after another token (leading_space), from hft_dec_token_len.
static int decoded_luts(const struct hft_tok *t, int n, int16_t *base_bytes, uint8_t *leading_space, uint8_t *boundary,
                        xsa_error *err) {
    char why[300];
    if (hft_dec_token_map_check(t->dec, why, sizeof why))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s, so the bytes of its decoded text cannot be counted token by token; "
                        "for bits per byte pass a SentencePiece .model or a byte-level BPE tokenizer.json with --tokenizer, "
                        "or the text itself (--text, --jsonl)", t->path, why);
    struct hft_ctx ctx = hft_ctx_make(t->path);
    int rc = 0;
    for (int i = 0; !rc && i < n; i++) {
        size_t len;
        int special, empty = 0, unused;
        const char *str = token_string(t, i, &len, &special);
        long first = 0, rest = 0;
        boundary[i] = !str || special;  // special tokens are no text (decode(skip_special_tokens=True))
        if (!boundary[i] && !(rc = hft_dec_token_len(t->dec, str, len, 1, &first, &empty, &ctx, err)) &&
            !(rc = hft_dec_token_len(t->dec, str, len, 0, &rest, &unused, &ctx, err))) {
            if (empty)
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: token %d (%.40s) decodes to nothing at the start of a text, where "
                              "the decoder's Strip would strip the next token instead, so the bytes of its decoded text "
                              "cannot be counted token by token", t->path, i, str);
            else if (rest > INT16_MAX || rest - first > 255)
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: token %d decodes to %ld bytes (%ld more after another token); "
                              "bits per byte count tokens of at most 32767 bytes, 255 more", t->path, i, rest, rest - first);
        }
        base_bytes[i] = (int16_t)first;
        leading_space[i] = (uint8_t)(rest - first);
    }
    hft_ctx_free(&ctx);
    return rc;
}

int tokenizer_hf_byte_luts(const struct tokenizer *tok, int n, int16_t *base_bytes, uint8_t *leading_space,
                           uint8_t *boundary, xsa_error *err) {
    const struct hft_tok *t = tok->kind == TOKENIZER_HF_JSON ? tok->impl : NULL;
    if (!t)
        return xsa_fail(err, XSA_EBADINPUT, "%s: bits per byte of a token shard needs a SentencePiece .model or a "
                        "tokenizer.json; pass one with --tokenizer", tok->path);
    if (!tokenizer_hf_decoder_byte_level(tok)) return decoded_luts(t, n, base_bytes, leading_space, boundary, err);
    for (int i = 0; i < n; i++) {
        int32_t k = i < t->n_ids ? t->added_of_id[i] : -1;
        const char *str = k >= 0 ? t->added[k].content : i < t->bpe.n_ids ? t->bpe.id_str[i] : NULL;
        size_t len = k >= 0 ? t->added[k].len : str ? strlen(str) : 0;
        // special tokens are no text (decode(skip_special_tokens=True)); ids past the tokenizer's
        // and holes stand for nothing either
        boundary[i] = !str || (k >= 0 && t->added[k].special);
        long b = boundary[i] ? 0 : hft_dec_byte_level_len(t->dec, str, len);
        base_bytes[i] = (int16_t)(b > INT16_MAX ? INT16_MAX : b);
        leading_space[i] = 0;
    }
    return 0;
}

int32_t tokenizer_hf_token_id(const struct tokenizer *tok, const char *s, size_t len) {
    const struct hft_tok *t = tok->impl;
    for (size_t k = 0; k < t->nadded; k++)
        if (t->added[k].len == len && !memcmp(t->added[k].content, s, len)) return t->added[k].id;
    return hft_strmap_get(&t->bpe.vocab, s, len);
}

int tokenizer_hf_load(struct tokenizer *t, const char *path, const char *data, size_t len, xsa_error *err) {
    if (!hft_utf8_valid(data, len))
        return xsa_fail(err, XSA_EBADINPUT, "%s: not valid UTF-8; a tokenizer.json is UTF-8 JSON", path);
    cJSON *root = json_read_whole(data, len, JSON_KEYS_UNIQUE, path, err);
    if (!root) return XSA_EBADINPUT;
    static const char byte_level[] = "\"ByteLevel\"";  // transformers' test: the text holds it
    int rc = tokenizer_class_rebuild(t, root, path, memmem(data, len, byte_level, sizeof byte_level - 1) != NULL, err);
    if (!rc) rc = tokenizer_hf_load_root(t, root, path, err);
    cJSON_Delete(root);
    return rc;
}

int tokenizer_hf_load_root(struct tokenizer *t, const cJSON *root, const char *path, xsa_error *err) {
    struct hft_tok *h = xsa_calloc(1, sizeof *h);
    snprintf(h->path, sizeof h->path, "%s", path);
    int rc = hft_build(h, root, path, err);
    if (rc) {
        hft_destroy(h);
        return rc;
    }
    t->kind = TOKENIZER_HF_JSON;
    t->ops = &hft_ops;
    t->impl = h;
    t->vocab_size = h->n_ids;
    // BOS: what the post-processor puts before an empty text.
    struct ivec probe = {0};
    ivec_push(&probe, -1);
    post_process(h, &probe, 0);
    if (probe.n > 1 && probe.v[0] >= 0) {
        t->bos_id = probe.v[0];
        t->adds_bos = 1;
    } else {
        static const char *const bos_names[] = {"<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>"};
        t->bos_id = added_named(h, bos_names, 4);
        t->adds_bos = 0;
    }
    ivec_free(&probe);
    static const char *const eos_names[] = {"</s>", "<|endoftext|>", "<|end_of_text|>", "<eos>", "<|eot_id|>"};
    t->eos_id = added_named(h, eos_names, 5);
    return 0;
}
