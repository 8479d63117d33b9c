// ttt_lora.c: the 2026-04-10 records' eval_val_ttt_lora, documents side by side (ttt_lora.h).
#include "eval/ttt_lora.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timing.h"
#include "common/xalloc.h"
#include "eval/mt19937.h"
#include "eval/ttt_global.h"
#include "kernels/cpu/cpu_optim.h"
#include "kernels/cpu/cpu_pool.h"
#include "kernels/cpu/cpu_train.h"

#define BOS 1  // the records' BOS_ID (SentencePiece's <s>)

static uint64_t splitmix64(uint64_t x) {
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void ttt_lora_uniform(long seed, long doc, int tensor, long n, double bound, float *out) {
    uint64_t key = splitmix64(splitmix64(splitmix64((uint64_t)seed) ^ (uint64_t)doc) ^ (uint64_t)tensor);
    for (long i = 0; i < n; i++) {
        double u = ((double)(splitmix64(key + (uint64_t)i) >> 40) + 0.5) / (double)(1 << 24);
        out[i] = (float)((2.0 * u - 1.0) * bound);
    }
}

// The optimizer's state of one document's adapters.
struct opt {
    float **m, **v;  // per adapter tensor: AdamW's exp_avg and exp_avg_sq, or SGD's momentum buffer (m)
    long step;
};

// One step of the record's optimizer over the adapters of each slot in slots[0..n_slots):
// torch.optim.AdamW(fused=True) (cpu_adamw_step) or torch.optim.SGD (g + wd p into the momentum
// buffer, its first step the gradient itself). The values go in pieces of OPT_BLOCK over the
// trainer's workers: elementwise, so the same bits for any split or thread count. The slots are
// distinct, and every slot's adapters have slot 0's shapes.
#define OPT_BLOCK 32768
struct opt_piece {
    float *w, *g, *m, *v;
    long n;
    const struct cpu_adamw *c;  // its slot's coefficients
    int first;                  // its slot's first step
};
struct opt_job {
    const struct opt_piece *piece;
    const struct ttt_settings *s;
};

static void opt_task(void *ctx, int i, int w) {
    (void)w;
    const struct opt_job *j = ctx;
    const struct opt_piece *q = &j->piece[i];
    if (!j->s->sgd) {
        cpu_adamw_step(q->w, q->g, q->m, q->v, q->n, q->c);
        return;
    }
    float lr = (float)j->s->lora_lr, wd = (float)j->s->weight_decay, b1 = (float)j->s->beta1;
    for (long k = 0; k < q->n; k++) {
        float d = q->g[k] + wd * q->w[k];
        q->m[k] = q->first ? d : q->m[k] * b1 + d;
        q->w[k] -= lr * (b1 != 0 ? q->m[k] : d);
    }
}

static void opt_steps(struct cpu_trainer *tr, struct train_param **p, int np, struct opt *o, const int *slots, int n_slots,
                      const struct ttt_settings *s) {
    long n_piece = 0;
    for (int i = 0; i < np; i++) n_piece += (p[0][i].n + OPT_BLOCK - 1) / OPT_BLOCK;
    n_piece *= n_slots;
    struct opt_piece *piece = xsa_malloc((size_t)n_piece * sizeof *piece);
    struct cpu_adamw *c = xsa_calloc((size_t)n_slots, sizeof *c);
    long at = 0;
    for (int si = 0; si < n_slots; si++) {
        int sl = slots[si];
        struct opt *os = &o[sl];
        os->step++;
        cpu_adamw_coef(&c[si], s->lora_lr, s->beta1, s->beta2, s->weight_decay, os->step);
        for (int i = 0; i < np; i++)
            for (long k0 = 0; k0 < p[sl][i].n; k0 += OPT_BLOCK)
                piece[at++] = (struct opt_piece){p[sl][i].w + k0, p[sl][i].grad + k0, os->m[i] + k0, os->v[i] + k0,
                                                 p[sl][i].n - k0 < OPT_BLOCK ? p[sl][i].n - k0 : OPT_BLOCK, &c[si], os->step == 1};
    }
    struct opt_job j = {piece, s};
    cpu_pool_run(cpu_trainer_pool(tr), (int)at, opt_task, &j);
    free(c), free(piece);
}

static int is_a(const struct train_param *p) { return p->name[strlen(p->name) - 1] == 'A'; }

// Fresh adapters: A drawn under key (ttt_lora_uniform's doc) or, given a_from, its A tensors one
// after the other; B, the gradients and the optimizer's state zero.
static void reset_adapters(const struct train_param *p, int n, struct opt *o, const struct ttt_settings *s, long key, int rank,
                           const float *a_from) {
    for (int i = 0; i < n; i++) {
        if (is_a(&p[i]) && a_from) {
            memcpy(p[i].w, a_from, (size_t)p[i].n * sizeof(float));
            a_from += p[i].n;
        } else if (is_a(&p[i])) {
            long in = p[i].n / rank;
            ttt_lora_uniform(s->lora_seed, key, i, p[i].n, 1.0 / sqrt((double)in), p[i].w);
        } else {
            memset(p[i].w, 0, (size_t)p[i].n * sizeof(float));
        }
        memset(o->m[i], 0, (size_t)p[i].n * sizeof(float));
        memset(o->v[i], 0, (size_t)p[i].n * sizeof(float));
    }
    o->step = 0;
}

// The record's documents (_find_docs, then VAL_DOC_FRACTION's sample): start, number of targets
// and index among all the stream's documents (which draws its adapters) of each.
struct lora_docs {
    long n, *start, *pred, *id;
};

// _select_ttt_doc_entries: with VAL_DOC_FRACTION < 1, random.Random(SEED).sample of
// max(1, round(n * fraction)) documents (round: half to even), kept in stream order.
static void sample_docs(struct lora_docs *dc, const struct ttt_settings *s) {
    if (s->doc_fraction >= 1.0 || dc->n == 0) return;
    double want = nearbyint((double)dc->n * s->doc_fraction);
    size_t k = want < 1 ? 1 : (size_t)want, *pick = xsa_malloc(k * sizeof *pick);
    mt19937 r;
    mt19937_seed(&r, (uint64_t)s->doc_seed);
    mt19937_sample(&r, (size_t)dc->n, k, pick);
    char *keep = xsa_calloc((size_t)dc->n, 1);
    for (size_t i = 0; i < k; i++) keep[pick[i]] = 1;
    long n = 0;
    for (long i = 0; i < dc->n; i++)
        if (keep[i]) dc->start[n] = dc->start[i], dc->pred[n] = dc->pred[i], dc->id[n++] = dc->id[i];
    dc->n = n;
    free(keep);
    free(pick);
}

// A sort key and the place it breaks ties by: qsort on (key, at) is a stable sort by key.
struct keyed {
    long key, at;
};

static int by_key(const void *pa, const void *pb) {
    const struct keyed *a = pa, *b = pb;
    return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->at > b->at) - (a->at < b->at);
}

// _build_ttt_global_batches: documents sorted by length (stable), in batches of b; the batches
// taken longest first (stable). order gets the documents in the order they are scored,
// batch_of[k] the (length-sorted) batch of order[k].
static void record_queue(const struct lora_docs *dc, int b, long *order, long *batch_of) {
    long n = dc->n, nb = (n + b - 1) / b;
    struct keyed *by_len = xsa_malloc((size_t)(n ? n : 1) * sizeof *by_len), *q = xsa_malloc((size_t)(nb ? nb : 1) * sizeof *q);
    for (long i = 0; i < n; i++) by_len[i] = (struct keyed){dc->pred[i], i};
    qsort(by_len, (size_t)n, sizeof *by_len, by_key);
    for (long i = 0; i < nb; i++) q[i] = (struct keyed){-by_len[(i + 1) * b < n ? (i + 1) * b - 1 : n - 1].key, i};  // (its last is its longest)
    qsort(q, (size_t)nb, sizeof *q, by_key);
    long k = 0;
    for (long i = 0; i < nb; i++)
        for (long j = q[i].at * b; j < (q[i].at + 1) * b && j < n; j++) order[k] = by_len[j].at, batch_of[k++] = q[i].at;
    free(by_len);
    free(q);
}

// The first n documents scored (order[0..n), batch_of theirs) by batch, then place, into out.
static void by_batch(const long *order, const long *batch_of, long n, long *out) {
    struct keyed *k = xsa_malloc((size_t)(n ? n : 1) * sizeof *k);
    for (long j = 0; j < n; j++) k[j] = (struct keyed){batch_of[j], j};
    qsort(k, (size_t)n, sizeof *k, by_key);
    for (long j = 0; j < n; j++) out[j] = order[k[j].at];
    free(k);
}

// The phased TTT's pause: the first `take` documents of scored (by batch, then place),
// concatenated as the record's torch.cat of their tokens (each through the next document's BOS),
// trained on by ttt_global_sgd.
static int global_phase(struct model *m, int n_threads, const int32_t *tok, const struct lora_docs *dc, const long *scored,
                        long take, int seq_len, const struct ttt_settings *s, xsa_error *err) {
    long n = 0;
    for (long i = 0; i < take; i++) n += dc->pred[scored[i]] + 1;
    int32_t *cat = xsa_malloc((size_t)(n ? n : 1) * sizeof *cat);
    long k = 0;
    for (long i = 0; i < take; i++) {
        memcpy(cat + k, tok + dc->start[scored[i]], (size_t)(dc->pred[scored[i]] + 1) * sizeof *cat);
        k += dc->pred[scored[i]] + 1;
    }
    int rc = ttt_global_sgd(m, n_threads, cat, n, seq_len, BOS, s, err);
    free(cat);
    return rc;
}

// How many documents train side by side: the batch, within LORA_SLOT_BYTES of adapters, their
// gradients and AdamW's two moments (the record's batch of 64 at its shape would take 8 GiB).
#define LORA_SLOT_BYTES (1L << 30)
static int lora_slots(const struct model *m, const struct cpu_lora_spec *spec, int batch) {
    const struct model_config *c = &m->cfg;
    long C = c->d_model, Q = (long)c->n_head * c->head_dim, KV = (long)c->n_kv_head * c->head_dim, r = spec->rank;
    long per_layer = r * (C + Q) + r * (C + KV) + (spec->k ? r * (C + KV) : 0) + (spec->mlp ? 2 * r * C : 0) + (spec->o ? 2 * r * C : 0);
    long floats = r * (C + c->vocab_size) + (long)c->n_layer * per_layer, fit = LORA_SLOT_BYTES / (4 * floats * (long)sizeof(float));
    return (int)(fit < 1 ? 1 : fit < batch ? fit : batch);
}

// The windows w[0..n) in passes of consecutive windows of up to S rows in all.
static void run_windows(struct cpu_trainer *tr, struct cpu_window *w, int n, int grad, int S) {
    for (int i = 0, j; i < n; i = j) {
        int rows = w[i].n;
        for (j = i + 1; j < n && rows + w[j].n <= S; j++) rows += w[j].n;
        cpu_trainer_windows(tr, w + i, j - i, grad);
    }
}

int ttt_lora_score(struct model *m, int n_threads, const struct ppl_docs *d, int context, const struct ttt_settings *s, int progress,
                   struct ppl_scores *out, xsa_error *err) {
    memset(out, 0, sizeof *out);
    if (!d->stream || d->n_docs != 1 || d->split)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt trains on one token stream (--tokens-file), without --split-docs");
    int rc = cpu_train_check(m, err);
    if (rc) return rc;
    if (s->phased && (m->cfg.bigram_vocab || m->cfg.smear))
        return xsa_fail(err, XSA_EBADINPUT, "%s: PHASED_TTT_ENABLED=1: the phased TTT's global SGD cuts its batches at each BOS "
                        "as the records from 2026-04-13 do, whose GPTs have no bigram table or 2026-03 SmearGate, and this "
                        "model has one; score it without the phases", m->path);
    const int32_t *tok = d->tok.v + d->start[0];
    long n_tok = (long)(d->start[1] - d->start[0]), n_bos = 0;
    if (context < 1 || n_tok - 1 < context)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt: the stream has %ld tokens, fewer than one sequence of %d and its target", n_tok, context);
    n_tok = (n_tok - 1) / context * context + 1;  // load_validation_tokens
    for (long i = 0; i < n_tok; i++) n_bos += tok[i] == BOS;
    if (!n_bos)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt: the stream holds no BOS (token %d); eval_val_ttt_lora scores the documents "
                        "that begin at each one, as parameter-golf's shards hold them", BOS);
    // A document runs from its BOS through the next one (its last target), the last one to the
    // stream's end; a BOS that is the stream's last token starts none.
    struct lora_docs dc = {0, xsa_malloc((size_t)n_bos * sizeof(long)), xsa_malloc((size_t)n_bos * sizeof(long)),
                           xsa_malloc((size_t)n_bos * sizeof(long))};
    for (long i = 0, prev = -1; i <= n_tok; i++) {
        if (i < n_tok && tok[i] != BOS) continue;
        long end = i < n_tok ? i : n_tok - 1;
        if (prev >= 0 && end > prev) dc.start[dc.n] = prev, dc.pred[dc.n] = end - prev, dc.id[dc.n] = dc.n, dc.n++;
        prev = i;
    }
    sample_docs(&dc, s);
    size_t n_t = 0, *off = xsa_malloc((size_t)(dc.n ? dc.n : 1) * sizeof *off);  // each document's first score in out
    for (long i = 0; i < dc.n; i++) off[i] = n_t, n_t += (size_t)dc.pred[i];
    long *order = xsa_malloc((size_t)(dc.n ? dc.n : 1) * sizeof *order), *batch_of = xsa_malloc((size_t)(dc.n ? dc.n : 1) * sizeof *batch_of);
    record_queue(&dc, s->batch_size, order, batch_of);
    int S = s->eval_seq_len < n_tok ? s->eval_seq_len : (int)n_tok;
    struct cpu_lora_spec spec = {s->lora_rank, s->k_lora, s->mlp_lora, s->o_lora, s->lora_alpha};
    // Documents side by side: up to G of a batch's documents run their chunks in lockstep, each
    // with its own adapters (a trainer slot) and optimizer state, their windows packed into
    // passes of up to S rows that share each GEMM of the frozen model. Documents are independent,
    // so this changes no result beyond the GEMMs' rounding; G and the passes follow from the
    // settings and the documents' lengths alone, never from the thread count.
    int G = lora_slots(m, &spec, s->batch_size);
    struct cpu_trainer *tr = cpu_trainer_open(m, S, n_threads, err);
    if (!tr || cpu_trainer_lora(tr, &spec, G, err)) {
        cpu_trainer_close(tr);
        free(dc.start), free(dc.pred), free(dc.id), free(off), free(order), free(batch_of);
        return XSA_EBADINPUT;
    }
    ppl_scores_alloc(out, n_t);
    struct train_param **p = xsa_calloc((size_t)G, sizeof *p);
    struct opt *o = xsa_calloc((size_t)G, sizeof *o);
    int np = 0;
    for (int g = 0; g < G; g++) {
        np = cpu_trainer_lora_params(tr, g, &p[g]);
        o[g].m = xsa_calloc((size_t)np, sizeof(float *)), o[g].v = xsa_calloc((size_t)np, sizeof(float *));
        for (int i = 0; i < np; i++) o[g].m[i] = xsa_calloc((size_t)p[g][i].n, sizeof(float)), o[g].v[i] = xsa_calloc((size_t)p[g][i].n, sizeof(float));
    }
    struct cpu_window *win = xsa_malloc((size_t)G * sizeof *win);
    int *trained = xsa_malloc((size_t)G * sizeof *trained);  // the slots of a chunk's windows that train
    // The phases: after the batch that brings the documents scored to a boundary, the first
    // `boundary` of them (by batch, then place) train the base model (eval_val_ttt_phased).
    long limit = s->phased ? (s->prefix_docs < dc.n ? s->prefix_docs : dc.n) : 0;
    int phase = 0, phases_done = limit == 0;
    size_t t = 0;
    double bytes = 0, nll_sum = 0, t_start = timing_now_s();
    int cs = s->chunk_size;
    // TTT_WARM_START_A: each slot of a full batch keeps its A (slot_a) for the slot's next
    // document, drawn afresh when the adapters are rebuilt (at the start and after each phase:
    // generation gen); a short last batch draws its own.
    long a_total = 0, gen = 0;
    for (int i = 0; i < np; i++) a_total += is_a(&p[0][i]) ? p[0][i].n : 0;
    float **slot_a = s->warm_start_a ? xsa_calloc((size_t)s->batch_size, sizeof *slot_a) : NULL;
    for (long b0 = 0, b1; b0 < dc.n && !rc; b0 = b1) {
        long max_nc = 0;  // the batch [b0, b1): its longest document's chunks
        for (b1 = b0; b1 < dc.n && batch_of[b1] == batch_of[b0]; b1++)
            max_nc = (dc.pred[order[b1]] + cs - 1) / cs > max_nc ? (dc.pred[order[b1]] + cs - 1) / cs : max_nc;
        int full = b1 - b0 == s->batch_size;
        for (long g0 = b0, g1; g0 < b1 && !rc; g0 = g1) {
            g1 = g0 + G < b1 ? g0 + G : b1;
            long g_nc = 0;
            for (long k = g0; k < g1; k++) {
                long slot = k - b0, di = order[k];  // (slot: the document's place in its batch)
                struct train_param *pk = p[k - g0];
                if (!slot_a)
                    reset_adapters(pk, np, &o[k - g0], s, dc.id[di], s->lora_rank, NULL);
                else if (!full)
                    reset_adapters(pk, np, &o[k - g0], s, TTT_LORA_KEY_SHORT + batch_of[k] * TTT_LORA_KEY_STEP + slot, s->lora_rank, NULL);
                else
                    reset_adapters(pk, np, &o[k - g0], s, TTT_LORA_KEY_SLOT + gen * TTT_LORA_KEY_STEP + slot, s->lora_rank, slot_a[slot]);
                g_nc = (dc.pred[di] + cs - 1) / cs > g_nc ? (dc.pred[di] + cs - 1) / cs : g_nc;
            }
            for (long ci = 0; ci < g_nc && !rc; ci++) {
                // the group's windows for chunk ci: those that train (not a document's last chunk), then the others
                int nw = 0, n_train = 0;
                for (int pass = 0; pass < 2; pass++)
                    for (long k = g0; k < g1; k++) {
                        long di = order[k], pred = dc.pred[di], nc = (pred + cs - 1) / cs;
                        if (ci >= nc || (ci < nc - 1) != (pass == 0)) continue;
                        long end = ci == nc - 1 ? pred : (ci + 1) * cs, ws = end - s->eval_seq_len > 0 ? end - s->eval_seq_len : 0;
                        const int32_t *x = tok + dc.start[di] + ws;
                        size_t t0 = off[di] + (size_t)(ci * cs);
                        win[nw] = (struct cpu_window){x, x + 1, (int)(end - ws), (int)(ci * cs - ws), (int)(end - ci * cs),
                                                      (int)(k - g0), out->nll + t0, out->greedy + t0};
                        nw++, n_train += pass == 0;
                    }
                run_windows(tr, win, n_train, 1, S);
                run_windows(tr, win + n_train, nw - n_train, 0, S);
                for (int wi = 0; wi < nw && !rc; wi++) {
                    const struct cpu_window *w = &win[wi];
                    long di = order[g0 + w->slot], start = dc.start[di], ws = (long)(w->x - tok) - start;
                    for (int j = 0; j < w->count; j++, t++) {
                        size_t where = d->start[0] + (size_t)(start + ws + w->from + j + 1);
                        float nll = w->nll[j];
                        if (!isfinite(nll)) {
                            rc = xsa_fail(err, XSA_ERUNTIME, "%s: the loss of token %d at position %zu of the stream is %g%s", m->path,
                                          d->tok.v[where], where, (double)nll,
                                          ci ? " after test-time training of its document's adapters: they diverged; lower TTT_LORA_LR"
                                             : phase ? " after the phased TTT's global SGD: lower GLOBAL_TTT_LR"
                                                     : ", before any training: the forward pass overflowed or the weights are damaged");
                            break;
                        }
                        size_t at = (size_t)(w->nll - out->nll) + (size_t)j;
                        nll_sum += nll;
                        out->ctx[at] = w->from + j + 1;
                        out->unit[at] = (int32_t)di;  // (the interval's unit: among the documents scored)
                        out->where[at] = where;
                        if (d->base_bytes || d->target_bytes) bytes += ppl_target_bytes(d, where);
                    }
                }
                for (int gi = 0; !rc && gi < s->grad_steps && n_train; gi++) {
                    if (gi) {  // (the record's forward again)
                        for (int wi = 0; wi < n_train; wi++) win[wi].nll = NULL, win[wi].greedy = NULL;
                        run_windows(tr, win, n_train, 1, S);
                    }
                    for (int wi = 0; wi < n_train; wi++) trained[wi] = win[wi].slot;
                    opt_steps(tr, p, np, o, trained, n_train, s);
                }
            }
            for (long k = g0; slot_a && !rc && k < g1; k++) {  // the batch's other documents go on training: this slot's steps on a zero gradient
                struct train_param *pk = p[k - g0];
                long nc = (dc.pred[order[k]] + cs - 1) / cs, slot = k - b0;
                for (int i = 0; i < np; i++) memset(pk[i].grad, 0, (size_t)pk[i].n * sizeof(float));
                int sl = (int)(k - g0);
                for (long i = 0; i < (max_nc - nc) * s->grad_steps; i++) opt_steps(tr, p, np, o, &sl, 1, s);
                if (full) {
                    float *a = slot_a[slot] ? slot_a[slot] : (slot_a[slot] = xsa_malloc((size_t)a_total * sizeof(float)));
                    for (int i = 0; i < np; i++)
                        if (is_a(&pk[i])) memcpy(a, pk[i].w, (size_t)pk[i].n * sizeof(float)), a += pk[i].n;
                }
            }
            if (!rc && progress && (g1 / 64 > g0 / 64 || g1 == dc.n)) ttt_progress("document", g1, dc.n, nll_sum, t, bytes, t_start);
        }
        // After a batch, while phases remain: once the documents scored (all so far) reach the
        // phase's boundary, the first `boundary` of them by (batch, place) train the base model.
        if (!rc && !phases_done) {
            long boundary = limit * (phase + 1) / s->num_phases, n_scored = b1;
            if (n_scored >= boundary) {
                long *scored = xsa_malloc((size_t)n_scored * sizeof *scored);
                by_batch(order, batch_of, n_scored, scored);
                if (progress)
                    fprintf(stderr, "xsa-eval ppl: ttt phase %d/%d: global SGD on the first %ld of the %ld documents scored, %.1f s\n",
                            phase + 1, s->num_phases, boundary, n_scored, timing_now_s() - t_start);
                rc = global_phase(m, n_threads, tok, &dc, scored, boundary, context, s, err);
                free(scored);
                phases_done = ++phase >= s->num_phases;
                gen++;  // (the record builds its adapters again)
                for (int i = 0; slot_a && i < s->batch_size; i++) free(slot_a[i]), slot_a[i] = NULL;
            }
        }
    }
    out->n = t;
    out->n_units = (int)dc.n;
    out->bytes = d->base_bytes || d->target_bytes ? bytes : d->bytes;
    for (int g = 0; g < G; g++) {
        for (int i = 0; i < np; i++) free(o[g].m[i]), free(o[g].v[i]);
        free(o[g].m), free(o[g].v);
    }
    free(o), free(p), free(win), free(trained);
    for (int i = 0; slot_a && i < s->batch_size; i++) free(slot_a[i]);
    free(slot_a);
    cpu_trainer_close(tr);
    free(dc.start), free(dc.pred), free(dc.id), free(off), free(order), free(batch_of);
    if (rc) ppl_scores_free(out);
    return rc;
}
