// ppl.c: windows over documents, packed into batches, scored by one or two backends (ppl.h).
#include "eval/ppl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/xalloc.h"
#include "kernels/batch.h"
#include "model/model.h"
#include "model/tokenizer.h"

#define PPL_KL_MAX_FLOATS (1L << 26)  // model A's distributions held per batch for --kl (256 MiB)

int ppl_prefix_token(const struct tokenizer *tk, const struct model *m) {
    int c[4] = {tk ? tokenizer_bos_id(tk) : -1, tk ? tokenizer_eos_id(tk) : -1, m->cfg.bos_id, m->cfg.eos_id};
    for (int i = 0; i < 4; i++)
        if (c[i] >= 0 && c[i] < m->cfg.vocab_size) return c[i];
    return -1;
}

void ppl_docs_free(struct ppl_docs *d) {
    ivec_free(&d->tok);
    free(d->start);
    free(d->input);
    free(d->base_bytes);
    free(d->leading_space);
    free(d->boundary);
    free(d->target_bytes);
    free(d->data);
    memset(d, 0, sizeof *d);
}

static void alloc_luts(struct ppl_docs *d, int vocab) {
    d->lut_n = vocab;
    d->base_bytes = xsa_malloc((size_t)vocab * sizeof *d->base_bytes);
    d->leading_space = xsa_calloc((size_t)vocab, 1);
    d->boundary = xsa_malloc((size_t)vocab);
}

int ppl_docs_sp_bytes(struct ppl_docs *d, const struct tokenizer *tk, int vocab, xsa_error *err) {
    alloc_luts(d, vocab);
    return tokenizer_sp_byte_luts(tk, vocab, d->base_bytes, d->leading_space, d->boundary, err);
}

int ppl_docs_hf_bytes(struct ppl_docs *d, const struct tokenizer *tk, int vocab, xsa_error *err) {
    alloc_luts(d, vocab);
    int rc = tokenizer_hf_byte_luts(tk, vocab, d->base_bytes, d->leading_space, d->boundary, err);
    if (rc) {  // no tables: bytes unknown
        free(d->base_bytes), free(d->leading_space), free(d->boundary);
        d->base_bytes = NULL, d->leading_space = d->boundary = NULL, d->lut_n = 0;
    }
    return rc;
}

int ppl_docs_add(struct ppl_docs *d, const int32_t *tok, size_t n, xsa_error *err) {
    int given = d->n_given++;
    if (n < 2) return d->n_short++, 0;
    if (d->tok.n + n > (size_t)1 << 30)
        return xsa_fail(err, XSA_EBADINPUT, "more than 2^30 tokens in all; score less text at once");
    XSA_GROW(d->start, d->cap, (size_t)d->n_docs + 2);
    XSA_GROW(d->input, d->input_cap, (size_t)d->n_docs + 1);
    d->input[d->n_docs] = given;
    if (!d->n_docs) d->start[0] = d->tok.n;
    ivec_append(&d->tok, tok, n);
    d->start[++d->n_docs] = d->tok.n;
    return 0;
}

void ppl_scores_free(struct ppl_scores *s) {
    free(s->nll);
    free(s->greedy);
    free(s->ctx);
    free(s->unit);
    free(s->where);
    memset(s, 0, sizeof *s);
}

void ppl_probe_free(struct ppl_probe *p) {
    free(p->sum);
    memset(p, 0, sizeof *p);
}

void ppl_probe_stat(const struct ppl_probe *p, int layer, int head, int k, double *mean, double *sd) {
    double s = 0, s2 = 0;
    int h0 = head < 0 ? 0 : head, h1 = head < 0 ? p->n_head : head + 1;
    for (int h = h0; h < h1; h++) {
        const double *x = p->sum + ((size_t)layer * p->n_head + h) * PPL_PROBE_SUMS + 2 * k;
        s += x[0], s2 += x[1];
    }
    double n = (double)p->n * (h1 - h0);
    *mean = n > 0 ? s / n : NAN;
    *sd = n > 0 ? sqrt(fmax(0, s2 / n - *mean * *mean)) : NAN;
}

// Adds the batch's statistics (S, L, H, BACKEND_PROBE_STATS), entries in target order.
static void probe_add(struct ppl_probe *p, const float *x, int S) {
    long per = (long)p->n_layer * p->n_head;
    for (int e = 0; e < S; e++)
        for (long i = 0; i < per; i++)
            for (int k = 0; k < BACKEND_PROBE_STATS; k++) {
                double v = x[((long)e * per + i) * BACKEND_PROBE_STATS + k];
                p->sum[i * PPL_PROBE_SUMS + 2 * k] += v;
                p->sum[i * PPL_PROBE_SUMS + 2 * k + 1] += v * v;
            }
    p->n += S;
}

void ppl_kl_free(struct ppl_kl *k) {
    free(k->kl);
    free(k->top_a);
    free(k->top_b);
    memset(k, 0, sizeof *k);
}

struct window {                 // inputs tok[b, e) of a document; targets (first, e] are new
    size_t doc0;                // docs.tok index of the document's token 0
    long b, e, first;
    int unit;
    int after;                  // the row continues its text from tok[b - 1] (batch_add_row_after)
    int docs;                   // the row holds documents, cut at doc_start (batch_add_row_docs)
};

struct plan {
    struct window *w;
    size_t n, cap, targets;     // windows, their new targets
};

static void plan_add(struct plan *p, struct window w) {
    XSA_GROW(p->w, p->cap, p->n + 1);
    p->w[p->n++] = w;
    p->targets += (size_t)(w.e - w.first);
}

// Targets of document d that are scored: all but token 0; a stream keeps whole windows only
// (eval_val's and eval_val_sliding's `usable`).
static long doc_last_target(const struct ppl_docs *d, int doc, int context) {
    long n = (long)(d->start[doc + 1] - d->start[doc]);
    return d->stream ? (n - 1) / context * context : n - 1;
}

static int is_doc_start(const struct ppl_docs *d, size_t doc0, long i) {
    return d->tok.v[doc0 + (size_t)i] == d->doc_start;
}

// The window, cut where a document starts inside it; pieces without new targets are dropped.
static void add_split(const struct ppl_docs *d, struct plan *p, struct window w) {
    for (long s = w.b; s < w.e;) {
        long s2 = s + 1;
        while (s2 < w.e && !is_doc_start(d, w.doc0, s2)) s2++;
        if (s2 > w.first) plan_add(p, (struct window){w.doc0, s, s2, s > w.first ? s : w.first, w.unit, s > w.b, 0});
        s = s2;
    }
}

// Sliding or disjoint windows of every document in order. A stream's window ending at target
// e reads from e_nominal - context, as eval_val_sliding's last, shorter windows do.
static void plan_windows(const struct ppl_docs *d, int context, int stride, struct plan *p) {
    int unit = 0;
    for (int doc = 0; doc < d->n_docs; doc++) {
        long last = doc_last_target(d, doc, context), e = 0, nominal = 0;
        while (e < last) {
            nominal += e == 0 ? context : stride;
            long e2 = nominal < last ? nominal : last, b = (d->stream ? nominal : e2) - context;
            struct window w = {d->start[doc], b > 0 ? b : 0, e2, e, d->stream ? unit++ : doc, 0, 0};
            if (d->split) add_split(d, p, w);
            else plan_add(p, w);
            e = e2;
        }
        if (!d->stream) unit = doc + 1;
    }
}

// parameter-golf's eval_val from 2026-04-10 (VarLenAttn) over a stream: rank r of `ranks` scores
// windows [n r / ranks, n (r + 1) / ranks) of the n = usable / context, in batches of rank_batch /
// context windows, its last partial batch dropped ("TODO: Don't truncate this"); in a batch, a
// document runs from its start (or the batch's) and is cut every `context` tokens.
static int plan_eval_val(const struct ppl_docs *d, int context, struct plan *p, xsa_error *err) {
    long n = doc_last_target(d, 0, context) / context, per = d->rank_batch / context;
    if (per < 1)
        return xsa_fail(err, XSA_EBADINPUT, "a rank's batch of %ld tokens (--val-batch-tokens / 8) holds no "
                        "window of %d; eval_val needs at least one", d->rank_batch, context);
    size_t doc0 = d->start[0];
    int unit = -1;
    long unit_at = -1;
    for (int r = 0; r < d->ranks; r++) {
        long s0 = n * r / d->ranks, s1 = n * (r + 1) / d->ranks;
        s1 = s0 + (s1 - s0) / per * per;
        for (long bs = s0; bs < s1; bs += per) {
            long raw0 = bs * context, raw1 = (bs + per) * context;
            for (long s = raw0; s < raw1;) {
                long s2 = s + 1;
                while (s2 < raw1 && !is_doc_start(d, doc0, s2)) s2++;
                for (long c = s; c < s2; c += context) {
                    if (c / context != unit_at) unit_at = c / context, unit++;  // units: eval_val's windows
                    plan_add(p, (struct window){doc0, c, c + context < s2 ? c + context : s2, c, unit, c > raw0, 0});
                }
                s = s2;
            }
        }
    }
    if (!p->n)
        return xsa_fail(err, XSA_EBADINPUT, "eval_val over %d rank%s scores nothing of the %ld windows: a rank's "
                        "share (%ld at most) is under one batch of %ld windows; give a smaller --val-batch-tokens "
                        "(or fewer --ranks) for a shard this short", d->ranks, d->ranks > 1 ? "s" : "", n,
                        (n + d->ranks - 1) / d->ranks, per);
    return 0;
}

// modded-nanogpt's validation loop over a stream (PPL_SPLIT_CHUNKS): step s of val_tokens /
// val_batch_size gives rank r the tokens from (s ranks + r) chunk, as distributed_data_generator
// (align_to_bos=False) does for any world size, so the chunks are simply consecutive; its loader
// moves to the next shard when a step would end at or past the last token.
static int plan_chunks(const struct ppl_docs *d, struct plan *p, xsa_error *err) {
    long L = d->rank_batch, n = d->val_tokens / L, have = (long)(d->start[1] - d->start[0]);
    if (L < 16 || L % 16 || n < 1 || d->val_tokens % L)
        return xsa_fail(err, XSA_EBADINPUT, "%ld validation tokens in chunks of %ld: the record's val loss needs "
                        "whole chunks of a multiple of 16 tokens", d->val_tokens, L);
    if (have < d->val_tokens + 2)
        return xsa_fail(err, XSA_EBADINPUT, "the shards hold %ld tokens; modded-nanogpt's val loss over %ld tokens "
                        "reads %ld (one past the last target, and its loader needs one more); give a smaller "
                        "--val-tokens (a multiple of --val-batch-tokens)", have, d->val_tokens, d->val_tokens + 2);
    for (long c = 0; c < n; c++) plan_add(p, (struct window){d->start[0], c * L, c * L + L, c * L, (int)c, 0, 1});
    return 0;
}

struct kl_state {               // one batch's distributions: A's kept, B's folded into per-chunk sums
    int V, n_chunks;
    float *lp_a;                // (S, V) A's log-probabilities
    double *part;               // (S, n_chunks) sum over the chunk of p_A (log p_A - log p_B)
    float *max_b;               // (S, n_chunks) B's largest log-probability in the chunk
    int32_t *arg_b;             // (S, n_chunks) its lowest id
    uint8_t *seen;              // (S, n_chunks) 1 once the model being scored handed that chunk over
};

// Marks a whole, aligned chunk as handed over; anything else stays unmarked, so that a backend
// that skips or cuts chunks is caught (kl_check_seen) instead of folding stale memory into the KL.
static void kl_mark(struct kl_state *k, int entry, int v0, int nv) {
    int full = k->V - v0 < BACKEND_DIST_CHUNK ? k->V - v0 : BACKEND_DIST_CHUNK;
    if (v0 % BACKEND_DIST_CHUNK == 0 && nv == full) k->seen[(size_t)entry * k->n_chunks + v0 / BACKEND_DIST_CHUNK] = 1;
}

static void sink_keep_a(void *ctx, int entry, int v0, int nv, const float *lp) {
    struct kl_state *k = ctx;
    memcpy(k->lp_a + (size_t)entry * k->V + v0, lp, (size_t)nv * sizeof *lp);
    kl_mark(k, entry, v0, nv);
}

static void sink_fold_b(void *ctx, int entry, int v0, int nv, const float *lp) {
    struct kl_state *k = ctx;
    const float *a = k->lp_a + (size_t)entry * k->V + v0;
    double s = 0;
    float mx = lp[0];
    int32_t am = 0;
    for (int j = 0; j < nv; j++) {
        // p_A = 0 (log-probability -inf) adds nothing (0 log 0 = 0), where the product would be NaN;
        // a NaN anywhere still makes the sum NaN, which score_batch_all refuses
        if (a[j] != -INFINITY) s += exp((double)a[j]) * ((double)a[j] - (double)lp[j]);
        if (lp[j] > mx) mx = lp[j], am = j;
    }
    size_t slot = (size_t)entry * k->n_chunks + v0 / BACKEND_DIST_CHUNK;
    k->part[slot] = s;
    k->max_b[slot] = mx;
    k->arg_b[slot] = v0 + am;
    kl_mark(k, entry, v0, nv);
}

// Every chunk of every entry from the model just scored, or exit 3 naming the model: a backend
// that scores without handing over its distributions must not make a KL of uninitialised memory.
static int kl_check_seen(struct kl_state *k, int S, const struct backend *be, xsa_error *err) {
    size_t n = (size_t)S * k->n_chunks, got = 0;
    for (size_t i = 0; i < n; i++) got += k->seen[i];
    memset(k->seen, 0, n);
    if (got == n) return 0;
    return xsa_fail(err, XSA_ERUNTIME, "%s: the %s backend handed over %zu of the %zu vocabulary chunks --kl needs "
                    "(an xsa-eval bug: please report it); compare these models without --kl",
                    be->model->path, be->name, got, n);
}

// Per entry of the batch: KL and both argmaxes, into kl at target offset t0.
static void kl_reduce(const struct kl_state *k, int S, struct ppl_kl *kl, size_t t0) {
    for (int e = 0; e < S; e++) {
        const double *p = k->part + (size_t)e * k->n_chunks;
        const float *mb = k->max_b + (size_t)e * k->n_chunks, *a = k->lp_a + (size_t)e * k->V;
        double s = 0;
        int cb = 0;
        for (int c = 0; c < k->n_chunks; c++) {
            s += p[c];
            if (mb[c] > mb[cb]) cb = c;
        }
        int32_t ta = 0;
        for (int v = 1; v < k->V; v++)
            if (a[v] > a[ta]) ta = v;
        kl->kl[t0 + e] = s;
        kl->top_a[t0 + e] = ta;
        kl->top_b[t0 + e] = k->arg_b[(size_t)e * k->n_chunks + cb];
    }
}

void ppl_scores_alloc(struct ppl_scores *s, size_t n) {
    memset(s, 0, sizeof *s);
    size_t m = n ? n : 1;
    s->nll = xsa_malloc(m * sizeof *s->nll);
    s->greedy = xsa_malloc(m);
    s->ctx = xsa_malloc(m * sizeof *s->ctx);
    s->unit = xsa_malloc(m * sizeof *s->unit);
    s->where = xsa_malloc(m * sizeof *s->where);
    s->n = n;
}

// Scores the batch in bb on every model; targets land at offset t0 of each out[m].
static int score_batch_all(struct backend *const *be, int n_models, const struct ppl_docs *d, struct batch_builder *bb, size_t t0,
                           float *lp, uint8_t *gr, struct ppl_scores *out, struct kl_state *k, struct ppl_kl *kl,
                           struct ppl_probe *probe, float *probe_buf, xsa_error *err) {
    struct score_batch b = batch_view(bb);
    struct backend_dist_sink sink[2] = {{sink_keep_a, k}, {sink_fold_b, k}};
    for (int m = 0; m < n_models; m++) {
        b.dist = k ? &sink[m] : NULL;
        b.probe = probe ? probe_buf : NULL;
        int rc = backend_score(be[m], &b, lp, gr, err);
        if (!rc && k) rc = kl_check_seen(k, b.n_entries, be[m], err);
        if (rc) return rc;
        if (probe) probe_add(&probe[m], probe_buf, b.n_entries);
        for (int e = 0; e < b.n_entries; e++) {
            if (!isfinite(lp[e])) {  // nothing non-finite is ever reported as a score
                size_t where = out[0].where[t0 + e], doc0 = d->start[d->stream ? 0 : out[0].unit[t0 + e]];
                return xsa_fail(err, XSA_ERUNTIME, "%s: the log-probability of token %d at position %zu is %g: the "
                                "forward pass overflowed or the weights are damaged", be[m]->model->path,
                                d->tok.v[where], where - doc0, (double)lp[e]);
            }
            out[m].nll[t0 + e] = -lp[e];
            out[m].greedy[t0 + e] = gr[e];
        }
    }
    if (k) kl_reduce(k, b.n_entries, kl, t0);
    for (int e = 0; k && e < b.n_entries; e++)
        if (!isfinite(kl->kl[t0 + e])) {  // as the scores: nothing non-finite is reported
            size_t where = out[0].where[t0 + e], doc0 = d->start[d->stream ? 0 : out[0].unit[t0 + e]];
            return xsa_fail(err, XSA_ERUNTIME, "KL(%s || %s) of token %d at position %zu is %g: %s gives probability 0 "
                            "to a token %s does not, or a forward pass overflowed; compare these models without --kl",
                            be[0]->model->path, be[1]->model->path, d->tok.v[where], where - doc0,
                            kl->kl[t0 + e], be[1]->model->path, be[0]->model->path);
        }
    return 0;
}

int ppl_units_documents(const struct ppl_docs *d, int32_t bos, struct ppl_scores *out, int n_models) {
    if (bos < 0 || !d->tok.n) return 0;
    // starts[k]: docs.tok index of document k's first token (a BOS, or the stream's start)
    size_t *starts = NULL, n = 0, cap = 0;
    for (size_t i = 0; i < d->tok.n; i++)
        if (d->tok.v[i] == bos || (i == 0 && d->tok.v[0] != bos)) {
            XSA_GROW(starts, cap, n + 1);
            starts[n++] = i;
        }
    int has_bos = n > 1 || d->tok.v[0] == bos;
    if (!has_bos || n > INT32_MAX) {
        free(starts);
        return 0;
    }
    size_t lo = 0;
    for (size_t t = 0; t < out[0].n; t++) {
        size_t w = out[0].where[t], hi = lo + 1;
        // the last start <= w (starts[lo] <= w < starts[hi]): the previous target's document, as
        // targets come in stream order, else by bisection
        if (!(starts[lo] <= w && (hi == n || w < starts[hi]))) lo = 0, hi = n;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (starts[mid] <= w) lo = mid;
            else hi = mid;
        }
        for (int m = 0; m < n_models; m++) out[m].unit[t] = (int32_t)lo;
    }
    for (int m = 0; m < n_models; m++) out[m].n_units = (int)n;
    free(starts);
    return (int)n;
}

double ppl_target_bytes(const struct ppl_docs *d, size_t where) {
    if (d->target_bytes) return d->target_bytes[where];
    int32_t t = d->tok.v[where], prev = d->tok.v[where - 1];
    if (t >= d->lut_n || prev >= d->lut_n) return 0;
    return d->base_bytes[t] + (d->boundary[prev] ? 0 : d->leading_space[t]);
}

int ppl_score(struct backend *const *be, int n_models, const struct ppl_docs *d, int context, int stride,
              struct ppl_scores *out, struct ppl_kl *kl, struct ppl_probe *probe, xsa_error *err) {
    if (n_models < 1 || n_models > 2 || context < 1 || stride < 1 || stride > context)
        return xsa_fail(err, XSA_EBADINPUT, "--stride %d must be from 1 to --context %d", stride, context);
    if (kl && n_models != 2) return xsa_fail(err, XSA_EBADINPUT, "--kl needs two models");
    int V = be[0]->model->cfg.vocab_size;
    if (n_models == 2 && be[1]->model->cfg.vocab_size != V)
        return xsa_fail(err, XSA_EBADINPUT, "the models' vocabularies differ (%d and %d ids); per-token scores "
                        "need one tokenizer", V, be[1]->model->cfg.vocab_size);
    if (d->split && (!d->stream || d->n_docs != 1 || (d->split == PPL_SPLIT_EVAL_VAL && d->ranks < 1)))
        return xsa_fail(err, XSA_EBADINPUT, "documents are split in one token stream (--tokens-file) over one "
                        "rank or more");
    if (d->split == PPL_SPLIT_CHUNKS && (context != d->rank_batch || stride != context))
        return xsa_fail(err, XSA_EBADINPUT, "modded-nanogpt's val chunks are scored whole (context %ld)", d->rank_batch);
    if (kl && d->split == PPL_SPLIT_CHUNKS && (long)context + 1 > PPL_KL_MAX_FLOATS / V)
        return xsa_fail(err, XSA_EBADINPUT, "--kl would hold model A's distributions over a whole chunk of %d "
                        "tokens (%d ids each), more than %ld floats; compare the models without --split-docs",
                        context, V, PPL_KL_MAX_FLOATS);
    struct plan p = {0};
    int rc = d->split == PPL_SPLIT_CHUNKS ? plan_chunks(d, &p, err)
             : d->split && stride == context ? plan_eval_val(d, context, &p, err)
                                             : (plan_windows(d, context, stride, &p), 0);
    if (rc) {
        free(p.w);
        return rc;
    }
    size_t n_win = p.n, n_t = p.targets;
    struct window *w = p.w;
    for (int m = 0; m < n_models; m++) ppl_scores_alloc(&out[m], n_t);
    long cap = be[0]->batch_tokens;
    if (n_models == 2 && be[1]->batch_tokens < cap) cap = be[1]->batch_tokens;
    struct kl_state k = {0}, *kp = NULL;
    if (kl) {
        size_t m = n_t ? n_t : 1;
        kl->kl = xsa_malloc(m * sizeof *kl->kl);
        kl->top_a = xsa_malloc(m * sizeof *kl->top_a);
        kl->top_b = xsa_malloc(m * sizeof *kl->top_b);
        if (cap > PPL_KL_MAX_FLOATS / V) cap = PPL_KL_MAX_FLOATS / V;
        kp = &k;
    }
    if (cap < context + 1) cap = context + 1;  // one window (and the token before it) always fits
    if (kl) {
        k.V = V;
        k.n_chunks = (V + BACKEND_DIST_CHUNK - 1) / BACKEND_DIST_CHUNK;
        k.lp_a = xsa_malloc((size_t)cap * V * sizeof *k.lp_a);
        k.part = xsa_malloc((size_t)cap * k.n_chunks * sizeof *k.part);
        k.max_b = xsa_malloc((size_t)cap * k.n_chunks * sizeof *k.max_b);
        k.arg_b = xsa_malloc((size_t)cap * k.n_chunks * sizeof *k.arg_b);
        k.seen = xsa_calloc((size_t)cap * k.n_chunks, 1);
    }
    float *probe_buf = NULL;  // (cap, L, H, BACKEND_PROBE_STATS) for the larger model
    size_t probe_n = 0;
    for (int m = 0; probe && m < n_models; m++) {
        const struct model_config *c = &be[m]->model->cfg;
        size_t per = (size_t)c->n_layer * c->n_head;
        probe[m] = (struct ppl_probe){c->n_layer, c->n_head, 0, xsa_calloc(per * PPL_PROBE_SUMS, sizeof(double))};
        if (per * BACKEND_PROBE_STATS * (size_t)cap > probe_n) probe_n = per * BACKEND_PROBE_STATS * (size_t)cap;
    }
    if (probe) probe_buf = xsa_malloc(probe_n * sizeof *probe_buf);
    float *lp = xsa_malloc((size_t)cap * sizeof *lp);
    uint8_t *gr = xsa_malloc((size_t)cap);
    struct batch_builder bb;
    batch_init(&bb);
    size_t t = 0, t0 = 0;
    double bytes = 0;
    for (size_t i = 0; i <= n_win && !rc; i++) {
        long need = i < n_win ? w[i].e - w[i].b + w[i].after : 0;
        if (batch_n_tokens(&bb) > 0 && (i == n_win || batch_n_tokens(&bb) + need > cap)) {
            rc = score_batch_all(be, n_models, d, &bb, t0, lp, gr, out, kp, kl, probe, probe_buf, err);
            batch_reset(&bb);
            t0 = t;
        }
        if (i == n_win || rc) break;
        int first;
        const int32_t *row = d->tok.v + w[i].doc0 + w[i].b;
        rc = w[i].after ? batch_add_row_after(&bb, row[-1], row, (int)(need - 1), &first, err)
             : w[i].docs ? batch_add_row_docs(&bb, row, (int)need, d->doc_start, &first, err)
                         : batch_add_row(&bb, row, (int)need, &first, err);
        long from = w[i].b;  // where the target's document starts in the row
        for (long j = w[i].first + 1; !rc && j <= w[i].e; j++, t++) {
            size_t where = w[i].doc0 + (size_t)j;
            if (w[i].docs && d->tok.v[where - 1] == d->doc_start) from = j - 1;
            rc = batch_add_entry(&bb, first + (int)(j - 1 - w[i].b), d->tok.v[where], err);
            for (int m = 0; m < n_models; m++) {
                out[m].ctx[t] = (int32_t)(j - from);
                out[m].unit[t] = w[i].unit;
                out[m].where[t] = where;
            }
            if (d->base_bytes || d->target_bytes) bytes += ppl_target_bytes(d, where);
        }
    }
    for (int m = 0; m < n_models; m++) {
        out[m].n_units = n_win ? w[n_win - 1].unit + 1 : 0;
        out[m].bytes = d->base_bytes || d->target_bytes ? bytes : d->bytes;
    }
    batch_free(&bb);
    free(probe_buf);
    free(lp);
    free(gr);
    free(w);
    free(k.lp_a);
    free(k.part);
    free(k.max_b);
    free(k.arg_b);
    free(k.seen);
    return rc;
}
