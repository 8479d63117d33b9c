// ttt_lora.c: the 2026-04-10 records' eval_val_ttt_lora, one document at a time (ttt_lora.h).
#include "eval/ttt_lora.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timing.h"
#include "common/xalloc.h"
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

// One step of the record's optimizer over the adapters p[0..n): torch.optim.AdamW as its fused
// kernel computes it (weight decay first, then exp_avg.lerp_(g, 1 - beta1) as one fused
// multiply-add, exp_avg_sq, the bias corrections; each coefficient worked out in double, then
// rounded once: 1 - beta2 rounded from 0.999f would make every step 6e-6 larger) or
// torch.optim.SGD (g + wd p into the momentum buffer, its first step the gradient itself).
static void opt_step(const struct train_param *p, int n, struct opt *o, const struct ttt_settings *s) {
    o->step++;
    float lr = (float)s->lora_lr, wd = (float)s->weight_decay, b1 = (float)s->beta1, b2 = (float)s->beta2;
    float wt = (float)(1.0 - s->beta1), c2 = (float)(1.0 - s->beta2);
    double bc1 = 1.0 - pow(s->beta1, (double)o->step), bc2 = 1.0 - pow(s->beta2, (double)o->step);
    float step_size = (float)(s->lora_lr / bc1), bc2_sqrt = (float)sqrt(bc2), decay = (float)(1.0 - s->lora_lr * s->weight_decay);
    for (int i = 0; i < n; i++) {
        float *w = p[i].w, *g = p[i].grad, *m = o->m[i], *v = o->v[i];
        for (long k = 0; k < p[i].n; k++) {
            if (s->sgd) {
                float d = g[k] + wd * w[k];
                m[k] = o->step == 1 ? d : m[k] * b1 + d;
                w[k] -= lr * (b1 != 0 ? m[k] : d);
                continue;
            }
            if (wd != 0) w[k] *= decay;
            // (torch.lerp: start + w (end - start) below 0.5, else end + (w - 1)(end - start))
            m[k] = wt < 0.5f ? fmaf(wt, g[k] - m[k], m[k]) : fmaf(wt - 1.0f, g[k] - m[k], g[k]);
            v[k] = v[k] * b2 + c2 * g[k] * g[k];
            float denom = sqrtf(v[k]) / bc2_sqrt + 1e-10f;
            w[k] -= step_size * m[k] / denom;  // (as torch: (step_size m) / denom)
        }
    }
}

// Fresh adapters for document doc: A drawn, B, the gradients and the optimizer's state zero.
static void reset_adapters(const struct train_param *p, int n, struct opt *o, const struct ttt_settings *s, long doc, int rank) {
    for (int i = 0; i < n; i++) {
        size_t len = strlen(p[i].name);
        if (p[i].name[len - 1] == 'A') {
            long in = p[i].n / rank;
            ttt_lora_uniform(s->lora_seed, doc, i, p[i].n, 1.0 / sqrt((double)in), p[i].w);
        } else {
            memset(p[i].w, 0, (size_t)p[i].n * sizeof(float));
        }
        memset(o->m[i], 0, (size_t)p[i].n * sizeof(float));
        memset(o->v[i], 0, (size_t)p[i].n * sizeof(float));
    }
    o->step = 0;
}

int ttt_lora_score(struct model *m, int n_threads, const struct ppl_docs *d, int context, const struct ttt_settings *s, int progress,
                   struct ppl_scores *out, xsa_error *err) {
    memset(out, 0, sizeof *out);
    if (!d->stream || d->n_docs != 1 || d->split)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt trains on one token stream (--tokens-file), without --split-docs");
    int rc = cpu_train_check(m, err);
    if (rc) return rc;
    const int32_t *tok = d->tok.v + d->start[0];
    long n_tok = (long)(d->start[1] - d->start[0]), n_docs = 0;
    if (context < 1 || n_tok - 1 < context)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt: the stream has %ld tokens, fewer than one sequence of %d and its target", n_tok, context);
    n_tok = (n_tok - 1) / context * context + 1;  // load_validation_tokens
    for (long i = 0; i < n_tok; i++) n_docs += tok[i] == BOS;
    if (!n_docs)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt: the stream holds no BOS (token %d); eval_val_ttt_lora scores the documents "
                        "that begin at each one, as parameter-golf's shards hold them", BOS);
    long *doc_start = xsa_malloc((size_t)(n_docs + 1) * sizeof *doc_start), k = 0;
    for (long i = 0; i < n_tok; i++)
        if (tok[i] == BOS) doc_start[k++] = i;
    doc_start[n_docs] = n_tok - 1;  // the last document's targets run to the stream's end (_find_docs)
    size_t n_t = 0;
    for (long i = 0; i < n_docs; i++) n_t += (size_t)(doc_start[i + 1] - doc_start[i]);  // (through the next BOS)
    int S = s->eval_seq_len < n_tok ? s->eval_seq_len : (int)n_tok;
    struct cpu_trainer *tr = cpu_trainer_open(m, S, n_threads, err);
    struct cpu_lora_spec spec = {s->lora_rank, s->k_lora, s->mlp_lora, s->o_lora};
    if (!tr || cpu_trainer_lora(tr, &spec, err)) {
        cpu_trainer_close(tr);
        free(doc_start);
        return XSA_EBADINPUT;
    }
    ppl_scores_alloc(out, n_t);
    struct train_param *p;
    int np = cpu_trainer_lora_params(tr, &p);
    struct opt o = {xsa_calloc((size_t)np, sizeof(float *)), xsa_calloc((size_t)np, sizeof(float *)), 0};
    for (int i = 0; i < np; i++) o.m[i] = xsa_calloc((size_t)p[i].n, sizeof(float)), o.v[i] = xsa_calloc((size_t)p[i].n, sizeof(float));
    size_t t = 0;
    double bytes = 0, t_start = timing_now_s();
    int cs = s->chunk_size;
    for (long di = 0; di < n_docs && !rc; di++) {
        long start = doc_start[di], pred = doc_start[di + 1] - start;  // targets tok[start + 1 .. start + pred]
        if (pred < 1) continue;  // (a BOS that is the stream's last token starts no document)
        reset_adapters(p, np, &o, s, di, s->lora_rank);
        long nc = (pred + cs - 1) / cs;
        for (long ci = 0; ci < nc && !rc; ci++) {
            long end = ci == nc - 1 ? pred : (ci + 1) * cs, ws = end - s->eval_seq_len > 0 ? end - s->eval_seq_len : 0;
            int wlen = (int)(end - ws), off = (int)(ci * cs - ws), len = (int)(end - ci * cs), train = ci < nc - 1;
            const int32_t *x = tok + start + ws;
            cpu_trainer_chunk(tr, x, x + 1, wlen, off, len, train, out->nll + t, out->greedy + t);
            for (int j = 0; j < len; j++, t++) {
                size_t where = d->start[0] + (size_t)(start + ws + off + j + 1);
                if (!isfinite(out->nll[t])) {
                    rc = xsa_fail(err, XSA_ERUNTIME, "%s: the loss of token %d at position %zu of the stream is %g%s", m->path,
                                  d->tok.v[where], where, (double)out->nll[t],
                                  ci ? " after test-time training of its document's adapters: they diverged; lower TTT_LORA_LR"
                                     : ", before any training: the forward pass overflowed or the weights are damaged");
                    break;
                }
                out->ctx[t] = off + j + 1;
                out->unit[t] = (int32_t)di;
                out->where[t] = where;
                if (d->base_bytes || d->target_bytes) bytes += ppl_target_bytes(d, where);
            }
            for (int gi = 0; train && !rc && gi < s->grad_steps; gi++) {
                if (gi) cpu_trainer_chunk(tr, x, x + 1, wlen, off, len, 1, NULL, NULL);  // (the record's forward again)
                opt_step(p, np, &o, s);
            }
        }
        if (!rc && progress && ((di + 1) % 64 == 0 || di == n_docs - 1))
            ttt_progress("document", di + 1, n_docs, out->nll, t, bytes, t_start);
    }
    out->n = t;
    out->n_units = (int)n_docs;
    out->bytes = d->base_bytes || d->target_bytes ? bytes : d->bytes;
    for (int i = 0; i < np; i++) free(o.m[i]), free(o.v[i]);
    free(o.m), free(o.v);
    cpu_trainer_close(tr);
    free(doc_start);
    if (rc) ppl_scores_free(out);
    return rc;
}
