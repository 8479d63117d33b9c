// ttt.c: score-first test-time training over a token stream (ttt.h), in the order of the
// record's eval_val_sliding_ttt: windows, their chunks, then per chunk score, train.
#include "eval/ttt.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timing.h"
#include "common/xalloc.h"
#include "eval/ttt_lora.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_train.h"

int ttt_recipe_of(const struct model *m) {
    // (2026-04-23's sparse gates mark its recipe: attn_gate_w on the first inputs only, at any
    // SPARSE_ATTN_GATE_SCALE; its runs and 2026-04-29's leave the scale at 1)
    if (m->cfg.lanes_together)
        return m->layers[0].attn_gate_w && m->cfg.attn_gate_mult == 1 && m->cfg.attn_gate_window < m->cfg.d_model
                   ? TTT_2026_04_23 : TTT_2026_04_10;
    // (gated skips: 2026-03-31 on; 2026-03-31's GPT, the last with the 2026-03 SmearGate, runs
    // 2026-03-23's eval_val_sliding_ttt)
    return m->cfg.layer_loops ? TTT_2026_04 : m->skip_gates && !m->smear_gate ? TTT_2026_04_04 : TTT_2026_03;
}

int ttt_is_lora(int recipe) { return recipe == TTT_2026_04_10 || recipe == TTT_2026_04_23; }

const char *ttt_recipe_source(int recipe) {
    return recipe == TTT_2026_04_23   ? "eval_val_ttt_phased of 2026-04-23 on"
           : recipe == TTT_2026_04_10 ? "eval_val_ttt_lora of 2026-04-10"
           : recipe == TTT_2026_04    ? "eval_val_sliding_ttt of 2026-04-06 and 2026-04-08, eval_val_ttt of 2026-04-09"
           : recipe == TTT_2026_04_04 ? "eval_val_ttt of 2026-04-04"
                                      : "eval_val_sliding_ttt of 2026-03-23, 2026-03-29 and 2026-03-31";
}

const char *ttt_settings_source(const struct ttt_settings *s) {
    return s->recipe == TTT_2026_04_10 && s->phased ? "eval_val_ttt_phased of 2026-04-13 and 2026-04-14" : ttt_recipe_source(s->recipe);
}

void ttt_settings_init(struct ttt_settings *s, int recipe) {
    *s = (struct ttt_settings){.recipe = recipe, .lr = recipe == TTT_2026_04 ? 0.005 : 0.002, .momentum = 0.9,
                               .grad_clip = 1.0, .epochs = 3, .chunk_tokens = 32768,
                               .freeze_blocks = recipe == TTT_2026_03 ? 2 : 0, .batch_seqs = 32, .qat = recipe == TTT_2026_03,
                               .lora_rank = 96, .chunk_size = 32, .eval_seq_len = 2048, .batch_size = 64, .grad_steps = 1,
                               .k_lora = 1, .mlp_lora = 1, .o_lora = 1, .lora_lr = 0.0001, .weight_decay = 0.5, .beta1 = 0,
                               .beta2 = 0.999, .lora_seed = 1337, .lora_alpha = recipe == TTT_2026_04_23 ? 144 : 0,
                               .warm_start_a = recipe == TTT_2026_04_23, .doc_fraction = 1.0, .doc_seed = 1337, .prefix_docs = 2000, .num_phases = 1, .g_lr = 0.001,
                               .g_momentum = 0.9, .g_epochs = 1, .g_chunk_tokens = 32768, .g_batch_seqs = 32, .g_grad_clip = 1.0,
                               .g_respect_docs = 1};
    if (recipe == TTT_2026_04_23)  // (2026-04-27's defaults; its only function is the phased one)
        s->chunk_size = 48, s->weight_decay = 1.0, s->phased = 1;
}

void ttt_settings_of_model(struct ttt_settings *s, const struct model *m) {
    ttt_settings_init(s, ttt_recipe_of(m));
    if (m->skip_gates) s->qat = 0;  // (2026-03-31's GPT: its QAT rounds softly, at a rate its run reached)
    if (s->recipe != TTT_2026_04_10 || !m->layers[0].attn_gate_w) return;
    // Gates tell the records apart: 2026-04-16's output gate (its code's TTT_CHUNK_SIZE 48), and
    // 2026-04-19/22's dense gate, whose only function is the phased one (chunks of 48 too).
    s->chunk_size = 48;
    if (m->cfg.attn_gate_mult == 1 && m->cfg.attn_gate_window == m->cfg.d_model) s->phased = 1;
}

// The settings by name: kind 0 the full-parameter recipes', 1 2026-04-10's, 2 either; whole numbers
// from lo; a flag (0 or 1); hi exclusive for the betas.
enum { S_LR, S_EPOCHS, S_CHUNK, S_FREEZE, S_MOMENTUM, S_BATCH, S_CLIP, S_ENABLED, S_RANK, S_LORA_LR, S_CHUNK_SIZE,
       S_SEQ, S_BATCH_SIZE, S_STEPS, S_WD, S_BETA1, S_BETA2, S_K, S_MLP, S_O, S_OPT, S_SEED, S_PHASED, S_PREFIX, S_PHASES,
       S_G_LR, S_G_MOMENTUM, S_G_EPOCHS, S_G_CHUNK, S_G_BATCH, S_G_WARM_LR, S_G_WARM, S_G_CLIP, S_G_RESPECT, S_FRACTION, S_DOC_SEED, S_ALPHA, S_WARM, S_QAT, S_N };
static const struct { const char *name; int kind, whole, flag; double lo; } spec_of[S_N] = {
    {"TTT_LR", 0, 0, 0, 0}, {"TTT_EPOCHS", 0, 1, 0, 0}, {"TTT_CHUNK_TOKENS", 0, 1, 0, 1}, {"TTT_FREEZE_BLOCKS", 0, 1, 0, 0},
    {"TTT_MOMENTUM", 0, 0, 0, 0}, {"TTT_BATCH_SEQS", 0, 1, 0, 1}, {"TTT_GRAD_CLIP", 0, 0, 0, 0}, {"TTT_ENABLED", 2, 1, 1, 0},
    {"TTT_LORA_RANK", 1, 1, 0, 1}, {"TTT_LORA_LR", 1, 0, 0, 0}, {"TTT_CHUNK_SIZE", 1, 1, 0, 1}, {"TTT_EVAL_SEQ_LEN", 1, 1, 0, 1},
    {"TTT_BATCH_SIZE", 1, 1, 0, 1}, {"TTT_GRAD_STEPS", 1, 1, 0, 1}, {"TTT_WEIGHT_DECAY", 1, 0, 0, 0}, {"TTT_BETA1", 1, 0, 0, 0},
    {"TTT_BETA2", 1, 0, 0, 0}, {"TTT_K_LORA", 1, 1, 1, 0}, {"TTT_MLP_LORA", 1, 1, 1, 0}, {"TTT_O_LORA", 1, 1, 1, 0},
    {"TTT_OPTIMIZER", 1, 0, 0, 0}, {"TTT_LORA_SEED", 1, 1, 0, 0}, {"PHASED_TTT_ENABLED", 1, 1, 1, 0},
    {"PHASED_TTT_PREFIX_DOCS", 1, 1, 0, 0}, {"PHASED_TTT_NUM_PHASES", 1, 1, 0, 1},
    {"GLOBAL_TTT_LR", 1, 0, 0, 0}, {"GLOBAL_TTT_MOMENTUM", 1, 0, 0, 0}, {"GLOBAL_TTT_EPOCHS", 1, 1, 0, 0},
    {"GLOBAL_TTT_CHUNK_TOKENS", 1, 1, 0, 1}, {"GLOBAL_TTT_BATCH_SEQS", 1, 1, 0, 1}, {"GLOBAL_TTT_WARMUP_START_LR", 1, 0, 0, 0},
    {"GLOBAL_TTT_WARMUP_CHUNKS", 1, 1, 0, 0}, {"GLOBAL_TTT_GRAD_CLIP", 1, 0, 0, 0}, {"GLOBAL_TTT_RESPECT_DOC_BOUNDARIES", 1, 1, 1, 0},
    {"VAL_DOC_FRACTION", 1, 0, 0, 0}, {"SEED", 1, 1, 0, 0}, {"TTT_LORA_ALPHA", 1, 0, 0, 0}, {"TTT_WARM_START_A", 1, 1, 1, 0},
    {"LATE_QAT", 0, 1, 1, 0}};

int ttt_settings_parse(struct ttt_settings *s, const char *spec, xsa_error *err) {
    const char *p = spec;
    int lora = ttt_is_lora(s->recipe);
    while (*p) {
        while (*p && strchr(" ,\t\r\n", *p)) p++;
        if (!*p) break;
        const char *e = p;
        while (*e && !strchr(" ,\t\r\n", *e)) e++;
        const char *eq = memchr(p, '=', (size_t)(e - p));
        int k = 0;
        while (eq && k < S_N && !((size_t)(eq - p) == strlen(spec_of[k].name) && !strncmp(p, spec_of[k].name, (size_t)(eq - p)))) k++;
        if (!eq || k == S_N || spec_of[k].kind == !lora)
            return xsa_fail(err, XSA_EBADINPUT, "--ttt-set: \"%.*s\" is not NAME=VALUE with NAME one of %s%s", (int)(e - p), p,
                            lora ? "TTT_LORA_RANK, TTT_LORA_LR, TTT_CHUNK_SIZE, TTT_EVAL_SEQ_LEN, TTT_BATCH_SIZE, TTT_GRAD_STEPS, "
                                   "TTT_WEIGHT_DECAY, TTT_BETA1, TTT_BETA2, TTT_K_LORA, TTT_MLP_LORA, TTT_O_LORA, TTT_OPTIMIZER, TTT_LORA_SEED, "
                                   "PHASED_TTT_ENABLED, PHASED_TTT_PREFIX_DOCS, PHASED_TTT_NUM_PHASES, GLOBAL_TTT_LR, "
                                   "GLOBAL_TTT_MOMENTUM, GLOBAL_TTT_EPOCHS, GLOBAL_TTT_CHUNK_TOKENS, GLOBAL_TTT_BATCH_SEQS, "
                                   "GLOBAL_TTT_WARMUP_START_LR, GLOBAL_TTT_WARMUP_CHUNKS, GLOBAL_TTT_GRAD_CLIP, GLOBAL_TTT_RESPECT_DOC_BOUNDARIES, "
                                   "VAL_DOC_FRACTION, SEED, TTT_LORA_ALPHA, TTT_WARM_START_A"
                                 : "TTT_LR, TTT_EPOCHS, TTT_CHUNK_TOKENS, TTT_FREEZE_BLOCKS, TTT_MOMENTUM, TTT_BATCH_SEQS, TTT_GRAD_CLIP, "
                                   "LATE_QAT",
                            k < S_N && eq ? lora ? " (this model's records train LoRA adapters: eval_val_ttt_lora of 2026-04-10)"
                                                 : " (LoRA settings are the 2026-04-10 records'; this model's train every weight)"
                                          : "");
        char val[64];
        snprintf(val, sizeof val, "%.*s", (int)(e - eq - 1 < 63 ? e - eq - 1 : 63), eq + 1);
        if (k == S_OPT) {
            if (strcmp(val, "adam") && strcmp(val, "sgd"))
                return xsa_fail(err, XSA_EBADINPUT, "--ttt-set: TTT_OPTIMIZER=%s: expected adam or sgd (the record's two)", val);
            s->sgd = !strcmp(val, "sgd");
            p = e;
            continue;
        }
        char *end;
        double v = strtod(val, &end);
        int whole = spec_of[k].whole, beta = k == S_MOMENTUM || k == S_BETA1 || k == S_BETA2 || k == S_G_MOMENTUM;
        double lo = spec_of[k].lo, hi = spec_of[k].flag ? 1 : beta ? 1 : whole ? (1 << 30) : 1e6;
        if (k == S_FRACTION) hi = 1;
        if (!val[0] || *end || !isfinite(v) || v < lo || v > hi || (whole && v != floor(v)) || (beta && v >= 1) ||
            ((k == S_CLIP || k == S_FRACTION) && v <= 0))
            return xsa_fail(err, XSA_EBADINPUT, "--ttt-set: %s=%s: expected %s", spec_of[k].name, val,
                            beta ? "a number in [0, 1)" : k == S_CLIP ? "a number above 0" : spec_of[k].flag ? "0 or 1"
                            : k == S_FRACTION ? "a number in (0, 1]"
                            : lo == 1 ? "a whole number from 1" : whole ? "a whole number from 0" : "a non-negative number");
        if (k == S_ENABLED && v != 1)
            return xsa_fail(err, XSA_EBADINPUT, "--ttt-set: TTT_ENABLED=%s: --ttt turns test-time training on; drop --ttt to score without it", val);
        switch (k) {
        case S_LR: s->lr = v; break;
        case S_EPOCHS: s->epochs = (int)v; break;
        case S_CHUNK: s->chunk_tokens = (int)v; break;
        case S_FREEZE: s->freeze_blocks = (int)v; break;
        case S_MOMENTUM: s->momentum = v; break;
        case S_BATCH: s->batch_seqs = (int)v; break;
        case S_CLIP: s->grad_clip = v; break;
        case S_RANK: s->lora_rank = (int)v; break;
        case S_LORA_LR: s->lora_lr = v; break;
        case S_CHUNK_SIZE: s->chunk_size = (int)v; break;
        case S_SEQ: s->eval_seq_len = (int)v; break;
        case S_BATCH_SIZE: s->batch_size = (int)v; break;
        case S_STEPS: s->grad_steps = (int)v; break;
        case S_WD: s->weight_decay = v; break;
        case S_BETA1: s->beta1 = v; break;
        case S_BETA2: s->beta2 = v; break;
        case S_K: s->k_lora = (int)v; break;
        case S_MLP: s->mlp_lora = (int)v; break;
        case S_O: s->o_lora = (int)v; break;
        case S_SEED: s->lora_seed = (long)v; break;
        case S_PHASED: s->phased = (int)v; break;
        case S_PREFIX: s->prefix_docs = (int)v; break;
        case S_PHASES: s->num_phases = (int)v; break;
        case S_G_LR: s->g_lr = v; break;
        case S_G_MOMENTUM: s->g_momentum = v; break;
        case S_G_EPOCHS: s->g_epochs = (int)v; break;
        case S_G_CHUNK: s->g_chunk_tokens = (int)v; break;
        case S_G_BATCH: s->g_batch_seqs = (int)v; break;
        case S_G_WARM_LR: s->g_warmup_start_lr = v; break;
        case S_G_WARM: s->g_warmup_chunks = (int)v; break;
        case S_G_CLIP: s->g_grad_clip = v; break;
        case S_G_RESPECT: s->g_respect_docs = (int)v; break;
        case S_FRACTION: s->doc_fraction = v; break;
        case S_DOC_SEED: s->doc_seed = (long)v; break;
        case S_ALPHA: s->lora_alpha = v; break;
        case S_WARM: s->warm_start_a = (int)v; break;
        case S_QAT: s->qat = (int)v; break;
        }
        p = e;
    }
    return 0;
}

void ttt_settings_describe(const struct ttt_settings *s, char *out, size_t n) {
    if (!ttt_is_lora(s->recipe)) {
        snprintf(out, n, "TTT_LR=%g TTT_EPOCHS=%d TTT_CHUNK_TOKENS=%d TTT_FREEZE_BLOCKS=%d TTT_MOMENTUM=%g TTT_BATCH_SEQS=%d "
                 "TTT_GRAD_CLIP=%g%s", s->lr, s->epochs, s->chunk_tokens, s->freeze_blocks, s->momentum, s->batch_seqs, s->grad_clip,
                 s->recipe == TTT_2026_03 ? s->qat ? " LATE_QAT=1" : " LATE_QAT=0" : "");
        return;
    }
    int k = snprintf(out, n, "TTT_LORA_RANK=%d TTT_LORA_LR=%g TTT_CHUNK_SIZE=%d TTT_EVAL_SEQ_LEN=%d TTT_BATCH_SIZE=%d "
                     "TTT_GRAD_STEPS=%d TTT_WEIGHT_DECAY=%g TTT_BETA1=%g TTT_BETA2=%g TTT_K_LORA=%d TTT_MLP_LORA=%d TTT_O_LORA=%d "
                     "TTT_OPTIMIZER=%s TTT_LORA_SEED=%ld", s->lora_rank, s->lora_lr, s->chunk_size, s->eval_seq_len, s->batch_size,
                     s->grad_steps, s->weight_decay, s->beta1, s->beta2, s->k_lora, s->mlp_lora, s->o_lora, s->sgd ? "sgd" : "adam",
                     s->lora_seed);
    if ((s->lora_alpha > 0 || s->warm_start_a) && k > 0 && (size_t)k < n)
        k += snprintf(out + k, n - (size_t)k, " TTT_LORA_ALPHA=%g TTT_WARM_START_A=%d", s->lora_alpha, s->warm_start_a);
    if (s->doc_fraction < 1 && k > 0 && (size_t)k < n)
        k += snprintf(out + k, n - (size_t)k, " VAL_DOC_FRACTION=%g SEED=%ld", s->doc_fraction, s->doc_seed);
    if (s->phased && k > 0 && (size_t)k < n)
        snprintf(out + k, n - (size_t)k, " PHASED_TTT_ENABLED=1 PHASED_TTT_PREFIX_DOCS=%d PHASED_TTT_NUM_PHASES=%d GLOBAL_TTT_LR=%g "
                 "GLOBAL_TTT_MOMENTUM=%g GLOBAL_TTT_EPOCHS=%d GLOBAL_TTT_CHUNK_TOKENS=%d GLOBAL_TTT_BATCH_SEQS=%d "
                 "GLOBAL_TTT_WARMUP_START_LR=%g GLOBAL_TTT_WARMUP_CHUNKS=%d GLOBAL_TTT_GRAD_CLIP=%g GLOBAL_TTT_RESPECT_DOC_BOUNDARIES=%d",
                 s->prefix_docs, s->num_phases, s->g_lr, s->g_momentum, s->g_epochs, s->g_chunk_tokens, s->g_batch_seqs,
                 s->g_warmup_start_lr, s->g_warmup_chunks, s->g_grad_clip, s->g_respect_docs);
}

struct ttt_window {
    long ws, wlen, s;  // start, length, first scored position (targets tok[ws + s + 1 .. ws + wlen])
};

// The windows the recipe's code makes, starting every `stride` tokens. 2026-03: those holding at
// least `stride` tokens (or starting at 0), each scoring its last `stride` targets (all at 0).
// 2026-04: those reaching past context = seq_len - stride, each scoring from there (all at 0).
static struct ttt_window *plan(int recipe, long total, int seq_len, int stride, long *n) {
    long cap = total / stride + 2, k = 0, context = seq_len - stride;
    struct ttt_window *w = xsa_malloc((size_t)cap * sizeof *w);
    for (long ws = 0; ws < total; ws += stride) {
        long end = ws + seq_len < total ? ws + seq_len : total, wlen = end - ws, s;
        if (recipe == TTT_2026_04) {
            if (ws + context >= total) continue;
            s = ws == 0 ? 0 : context;
        } else {
            if (wlen < stride && ws) continue;
            s = ws == 0 ? 0 : wlen - stride > 0 ? wlen - stride : 0;
        }
        w[k++] = (struct ttt_window){ws, wlen, s};
    }
    *n = k;
    return w;
}

// Scores windows [w0, w1) (those of one chunk) with the model's weights now, into out at *t: one
// forward per window (padded to the sequence length as the record pads its x_batch with zeros).
static int score_windows(struct cpu_trainer *tr, const struct model *m, const struct ppl_docs *d, int seq_len,
                         const struct ttt_window *w, long w0, long w1, int trained, struct ppl_scores *out, size_t *t,
                         double *bytes, xsa_error *err) {
    int32_t *x = xsa_calloc((size_t)seq_len * 2, sizeof *x), *y = x + seq_len;
    const int32_t *tok = d->tok.v;
    for (long i = w0; i < w1; i++) {
        memset(x, 0, (size_t)seq_len * 2 * sizeof *x);
        memcpy(x, tok + w[i].ws, (size_t)w[i].wlen * sizeof *x);
        memcpy(y, tok + w[i].ws + 1, (size_t)w[i].wlen * sizeof *y);
        size_t t0 = *t;
        cpu_trainer_score(tr, x, y, (int)w[i].s, (int)w[i].wlen, out->nll + t0, out->greedy + t0);
        for (long j = w[i].s; j < w[i].wlen; j++, (*t)++) {
            size_t where = (size_t)(w[i].ws + j + 1);
            if (!isfinite(out->nll[*t])) {
                free(x);
                return xsa_fail(err, XSA_ERUNTIME, "%s: the loss of token %d at position %zu of the stream is %g%s", m->path,
                                tok[where], where, (double)out->nll[*t],
                                trained ? " after test-time training: the weights diverged; lower TTT_LR or TTT_GRAD_CLIP"
                                        : ", before any training: the forward pass overflowed or the weights are damaged");
            }
            out->ctx[*t] = (int32_t)(j + 1);
            out->unit[*t] = (int32_t)i;
            out->where[*t] = where;
            if (d->base_bytes || d->target_bytes) *bytes += ppl_target_bytes(d, where);
        }
    }
    free(x);
    return 0;
}

void ttt_sgd_step(const struct train_param *p, const int *live, int n, float **mom, double clip, double momentum, double lr) {
    double ss = 0;
    for (int i = 0; i < n; i++)
        for (long k = 0; k < p[live[i]].n; k++) ss += (double)p[live[i]].grad[k] * p[live[i]].grad[k];
    double coef = clip > 0 ? clip / (sqrt(ss) + 1e-6) : 1;
    float c = coef < 1 ? (float)coef : 1.0f, mu = (float)momentum, a = (float)-lr;
    for (int i = 0; i < n; i++) {
        const struct train_param *q = &p[live[i]];
        float *g = q->grad, *b = mom[i], *w = q->w;
        if (c != 1.0f)
            for (long k = 0; k < q->n; k++) g[k] *= c;
        for (long k = 0; k < q->n; k++) {
            b[k] = b[k] * mu + g[k];
            w[k] += a * b[k];
        }
    }
}

int ttt_check(const struct model *m, xsa_error *err) { return cpu_train_check(m, err); }

const char *ttt_blas_core_to_force(void) { return cpu_gemm_blas_core_to_force(); }

void ttt_progress(const char *what, long i, long n, double sum, size_t t, double bytes, double t_start) {
    char bpb[48] = "";
    if (bytes > 0) snprintf(bpb, sizeof bpb, ", %.6f bits/byte", sum / log(2.0) / bytes);
    fprintf(stderr, "xsa-eval ppl: ttt %s %ld/%ld: %zu targets, %.6f nats/token%s, %.1f s\n", what, i, n, t,
            sum / (double)(t ? t : 1), bpb, timing_now_s() - t_start);
}

int ttt_score(struct model *m, int n_threads, const struct ppl_docs *d, int context, int stride, const struct ttt_settings *s,
              int progress, struct ppl_scores *out, xsa_error *err) {
    memset(out, 0, sizeof *out);
    model_set_window(m, context);  // (an NTK-aware Rotary: the base of the TTT's windows, as `ppl --context` sets it)
    if (ttt_is_lora(s->recipe)) return ttt_lora_score(m, n_threads, d, context, s, progress, out, err);
    if (!d->stream || d->n_docs != 1 || d->split)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt trains on one token stream (--tokens-file), without --split-docs");
    if (stride < 1 || stride > context)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt: --stride %d must be from 1 to --context %d", stride, context);
    if (s->qat && (s->recipe != TTT_2026_03 || m->skip_gates))
        return xsa_fail(err, XSA_EBADINPUT, "--ttt-set: LATE_QAT=1: %s trains as the %s, %s; drop LATE_QAT", m->path,
                        ttt_recipe_source(s->recipe), m->skip_gates && s->recipe == TTT_2026_03
                        ? "2026-03-31's GPT, whose QAT (soft rounding at a rate its run reached) xsa-eval does not run"
                        : "whose code has no QAT");
    int rc = cpu_train_check(m, err);
    if (rc) return rc;
    long n_tok = (long)(d->start[1] - d->start[0]);
    long total = (n_tok - 1) / context * context;  // load_validation_tokens keeps whole sequences
    if (total < context)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt: the stream has %ld tokens, fewer than one sequence of %d and its target",
                        n_tok, context);
    long n_win;
    struct ttt_window *w = plan(s->recipe, total, context, stride, &n_win);
    long n_chunks = (total + s->chunk_tokens - 1) / s->chunk_tokens;
    long *first = xsa_calloc((size_t)n_chunks + 1, sizeof *first);  // windows of chunk c: [first[c], first[c + 1])
    size_t n_t = 0;
    for (long i = 0; i < n_win; i++) {
        long c = (w[i].ws + w[i].s) / s->chunk_tokens;
        first[(c < n_chunks - 1 ? c : n_chunks - 1) + 1]++;
        n_t += (size_t)(w[i].wlen - w[i].s);
    }
    for (long c = 0; c < n_chunks; c++) first[c + 1] += first[c];  // (windows are in start order, so chunk order)
    ppl_scores_alloc(out, n_t);
    struct cpu_trainer *tr = cpu_trainer_open(m, context, n_threads, err);
    if (!tr) {
        free(w);
        free(first);
        return XSA_EBADINPUT;
    }
    cpu_trainer_qat(tr, s->qat);
    struct train_param *p;
    int np = cpu_trainer_params(tr, &p);
    int *live = xsa_calloc((size_t)np, sizeof *live), n_live = 0;  // the parameters trained, and their momentum
    // TTT_FREEZE_BLOCKS freezes the parameters of Blocks 0 .. N - 1. The GPTs of the 2026-03
    // recipe's records (2026-03-23 to 2026-03-31, the only ones whose code has it) hold their
    // matrices in banks, outside the Blocks, so these never freeze: in their final_model.pt (its
    // banks are no block's, as cpu_trainer_params names them) and in their int6 dicts, which name
    // them blocks.N.* and which the records rebank before their TTT. (An unbanked final_model.pt,
    // 2026-03-20 to 2026-03-22's, keeps its matrices in its Blocks.)
    int int6 = !strncmp(m->format, "pgolf-int6", 10);
    for (int i = 0; i < np; i++) {
        int in_block = p[i].block >= 0 && !(s->recipe == TTT_2026_03 && int6 && p[i].matrix);
        if (!(in_block && p[i].block < s->freeze_blocks)) live[n_live++] = i;
    }
    float **mom = xsa_calloc((size_t)(n_live ? n_live : 1), sizeof *mom);
    for (int i = 0; i < n_live; i++) mom[i] = xsa_calloc((size_t)p[live[i]].n, sizeof(float));
    size_t t = 0;
    long steps = 0;
    double bytes = 0, t_start = timing_now_s();
    const int32_t *tok = d->tok.v;
    for (long c = 0; c < n_chunks && !rc; c++) {
        if (first[c] == first[c + 1]) continue;
        rc = score_windows(tr, m, d, context, w, first[c], first[c + 1], steps > 0, out, &t, &bytes, err);
        long cs = c * s->chunk_tokens, ce = (c + 1) * s->chunk_tokens < total ? (c + 1) * s->chunk_tokens : total;
        long seqs = (ce - cs) / context;
        if (!rc && c < n_chunks - 1 && s->epochs > 0 && seqs > 0) {
            double lr = s->lr * 0.5 * (1.0 + cos(M_PI * (double)c / (double)(n_chunks - 1 > 1 ? n_chunks - 1 : 1)));
            for (int ep = 0; ep < s->epochs && !rc; ep++)
                for (long bs = 0; bs < seqs && !rc; bs += s->batch_seqs) {
                    long be = bs + s->batch_seqs < seqs ? bs + s->batch_seqs : seqs;
                    if (cs + be * context + 1 > n_tok) continue;
                    double loss = cpu_trainer_grad(tr, tok + cs + bs * context, (int)(be - bs));
                    if (!isfinite(loss))
                        rc = xsa_fail(err, XSA_ERUNTIME, "%s: test-time training's loss is %g at chunk %ld: the weights "
                                      "diverged; lower TTT_LR", m->path, loss, c + 1);
                    else ttt_sgd_step(p, live, n_live, mom, s->grad_clip, s->momentum, lr), steps++;
                }
        }
        if (!rc && progress && (c % 10 == 0 || c == n_chunks - 1)) {
            double sum = 0;
            for (size_t k = 0; k < t; k++) sum += out->nll[k];
            ttt_progress("chunk", c + 1, n_chunks, sum, t, bytes, t_start);
        }
    }
    out->n_units = (int)n_win;
    out->bytes = d->base_bytes || d->target_bytes ? bytes : d->bytes;
    for (int i = 0; i < n_live; i++) free(mom[i]);
    free(mom);
    free(live);
    cpu_trainer_close(tr);
    free(w);
    free(first);
    if (rc) ppl_scores_free(out);
    return rc;
}
