// cpu_forward.c: the fp32 forward pass over a packed batch, then log-softmax at the scored
// rows only. Row-wise steps run as tasks of CPU_GEMM_ROWS rows; every step computes a row
// from that row alone (attention: from the row's own key spans), so a request's scores do not
// depend on its neighbours in the batch. The last block runs only on the scored tokens
// (after K and V for all), since its output feeds nothing else.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "kernels/cpu/cpu_attention.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_state.h"
#include "kernels/cuda/cuda_math.h"

enum rows_op { OP_EMBED, OP_NORM, OP_ROPE, OP_QK_NORM, OP_POST_NORM, OP_SMEAR, OP_MIX, OP_VE };

struct rows_job {
    enum rows_op op;
    const struct model *m;
    const struct score_batch *b;
    int T;
    float scale;                 // OP_NORM: the normed rows times it (LN_SCALE; 0: 1)
    const float *in, *w, *bias;  // OP_NORM: x, gain (NULL: a copy, no norm, unless norm_weightless), bias; OP_QK_NORM: gain, bias;
                                 //   OP_POST_NORM: the sublayer's rows (normed in place), gain
    float *out;                  // OP_QK_NORM: q or k rows, normed in place; OP_POST_NORM: residual rows (+=)
    int width;                   // OP_QK_NORM: floats per norm (head_dim, or the whole projection)
    long ld;                     // OP_QK_NORM: floats per token row of out
    float *p2;                   // OP_ROPE: k
    const float *cos_t, *sin_t;
    const int32_t *idx;          // OP_ROPE: row r of out (q) is token idx[r] (NULL: token r)
    const struct layer_weights *lw;  // OP_ROPE: q/k norms and q_gain; OP_MIX: resid_mix; OP_VE: ve_scale
};

int cpu_prev_token(const struct score_batch *b, int t) {
    if (b->before && b->before[t] >= 0) return b->before[t];
    if (b->pos[t] == 0) return -1;
    if (b->span1_hi[t] > b->span1_lo[t] && t == b->span1_lo[t]) return b->span0_hi[t] - 1;
    return t - 1;
}

// out[t] += up(down(in[t])) for rows 0..n-1: a rank-r LoRA (down (r, C), up (D, r)), summed in
// double per row, so a row's result does not depend on the batch.
static void add_lora(const float *in, int n, int C, const float *down, const float *up, int r, int D, float *out) {
    double mid[64];
    for (int t = 0; t < n; t++) {
        const float *x = in + (long)t * C;
        for (int k = 0; k < r; k++) {
            double s = 0;
            for (int i = 0; i < C; i++) s += (double)down[(long)k * C + i] * x[i];
            mid[k] = (float)s;  // (the record's down projection is a float tensor)
        }
        for (int o = 0; o < D; o++) {
            double s = 0;
            for (int k = 0; k < r; k++) s += (double)up[(long)o * r + k] * mid[k];
            out[(long)t * D + o] += (float)s;
        }
    }
}

// x += scale * proj(bigram_emb[hash(t, t_prev)]): parameter-golf's BigramHashEmbedding, whose
// hash is (36313 t xor 27191 t_prev) mod (V_b - 1), V_b - 1 itself at position 0. TRIGRAM adds
// the row of (36313 t xor 27191 t_prev xor 51497 t_prev2) mod (V_b - 1) (V_b - 1 at positions
// 0 and 1) before the projection.
static void add_bigram(const struct model *m, const struct score_batch *b, int t, float *x) {
    const struct model_config *c = &m->cfg;
    int mod = c->bigram_vocab - 1, p = cpu_prev_token(b, t), D = c->bigram_dim;
    int32_t h = p < 0 ? mod : cpu_hash_row(((uint32_t)36313 * (uint32_t)b->token[t]) ^ ((uint32_t)27191 * (uint32_t)b->token[p]), mod);
    if (c->bigram_mul_hash)  // RecurrentGPT: (1000003 t_prev + t) mod V_b, t_prev = t at the first token
        h = (int32_t)(((uint64_t)(uint32_t)b->token[p < 0 ? t : p] * 1000003u + (uint32_t)b->token[t]) % (uint64_t)c->bigram_vocab);
    const float *e = m->bigram_emb + (long)h * D, *e3 = NULL;
    if (c->trigram) {
        int pp = p < 0 ? -1 : cpu_prev_token(b, p);  // -1 at positions 0 and 1
        int32_t h3 = pp < 0 ? mod
                            : cpu_hash_row(((uint32_t)36313 * (uint32_t)b->token[t]) ^ ((uint32_t)27191 * (uint32_t)b->token[p]) ^
                                           ((uint32_t)51497 * (uint32_t)b->token[pp]), mod);
        e3 = m->bigram_emb + (long)h3 * D;
    }
    for (int o = 0; o < c->d_model; o++) {
        float acc = e3 ? e[o % D] + e3[o % D] : e[o % D];
        if (m->bigram_proj) {
            const float *w = m->bigram_proj + (long)o * D;
            double s = 0;
            for (int i = 0; i < D; i++) s += (double)w[i] * (e3 ? e[i] + e3[i] : e[i]);
            acc = (float)s;
        }
        x[o] += acc * m->bigram_scale;
    }
}

// v += ls * (s * proj(ve_emb[token])): parameter-golf's ValueEmbedding (scale s) times the
// layer's ve_layer_scales entry ls, added to the token's v row (all kv heads).
static void add_value_embedding(const struct model *m, const struct layer_weights *lw, int32_t token, float *v) {
    const struct model_config *c = &m->cfg;
    int KV = c->n_kv_head * c->head_dim, D = c->ve_dim;
    const float *e = m->ve_emb + (long)token * D;
    for (int o = 0; o < KV; o++) {
        float h = e[o];
        if (m->ve_proj) {
            const float *w = m->ve_proj + (long)o * D;
            double s = 0;
            for (int i = 0; i < D; i++) s += (double)w[i] * e[i];
            h = (float)s;
        }
        v[o] += h * m->ve_scale * lw->ve_scale[0];
    }
}

// mult sigmoid(scale (w . x[:n]) + b) of one row x: the records' nn.Linear gates (attention gates,
// dtg_gate, the smear's).
static float linear_gate(const float *w, float b, const float *x, int n, float scale, float mult) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)w[i] * x[i];
    return mult / (1.0f + expf(-(scale * (float)s + b)));
}

// x_t += lambda sigmoid(w . e_t[:W]) e_p, e the raw embedding rows of t and its previous token p:
// 2026-04-16's SmearGate (none at a request's first position; with the BOS fix, none at a BOS).
static void add_token_smear(const struct model *m, const struct score_batch *b, int t, float *x) {
    const struct model_config *c = &m->cfg;
    int p = cpu_prev_token(b, t), C = c->d_model;
    if (p < 0 || (c->smear_fwd_bos_fix && b->token[t] == c->bos_id)) return;
    const float *e = m->tok_emb + (long)b->token[t] * C, *ep = m->tok_emb + (long)b->token[p] * C;
    float g = m->smear_fwd_lambda * linear_gate(m->smear_fwd_w, 0, e, c->smear_fwd_window, 1, 1);
    for (int i = 0; i < C; i++) x[i] += g * ep[i];
}

// VALUE_RESIDUAL on the T rows of v: layer 0 keeps its v as v0, the later layers mix it in
// (2026-03-25: v + sigmoid(alpha) v0; 2026-03-23: lambda0 v0 + lambda1 v).
static void value_residual(struct cpu_state *st, const struct layer_weights *w, int l, int T) {
    long n = (long)T * st->m->cfg.n_kv_head * st->m->cfg.head_dim;
    float *v = st->v;
    const float *v0 = st->v0;
    if (l == 0) {
        memcpy(st->v0, v, (size_t)n * sizeof(float));
    } else if (w->vrl_alpha) {
        float a = 1.0f / (1.0f + expf(-w->vrl_alpha[0]));
        for (long i = 0; i < n; i++) v[i] = v[i] + a * v0[i];
    } else if (w->vr_lambda) {
        for (long i = 0; i < n; i++) v[i] = w->vr_lambda[0] * v0[i] + w->vr_lambda[1] * v[i];
    }
}

// q/k heads of rows [r0, r0 + n) after their norms: RoPE, then q_gain (parameter golf).
static void prep_heads(const struct rows_job *j, float *x, int r0, int n, int nh, int is_q) {
    const struct model_config *c = &j->m->cfg;
    const struct layer_weights *lw = j->lw;
    int hd = c->head_dim, h2 = model_rope_dims(c) / 2, ld = nh * hd, half = c->rope != ROPE_ADJACENT;
    for (int r = r0; r < r0 + n; r++) {
        float *row = x + (long)r * ld;
        int tok = is_q && j->idx ? j->idx[r] : r;
        if (c->rope != ROPE_NONE)
            cpu_rope_apply(row, 1, ld, nh, hd, 2 * h2, half, j->cos_t + (long)tok * h2, j->sin_t + (long)tok * h2);
        if (is_q && lw->q_gain)
            for (int h = 0; h < nh; h++)
                for (int d = 0; d < hd; d++) row[(long)h * hd + d] *= lw->q_gain[h];
    }
}

static void rows_task(void *ctx, int i, int w) {
    (void)w;
    const struct rows_job *j = ctx;
    const struct model_config *c = &j->m->cfg;
    int r0 = i * CPU_GEMM_ROWS, n = j->T - r0 < CPU_GEMM_ROWS ? j->T - r0 : CPU_GEMM_ROWS;
    int C = c->d_model;
    switch (j->op) {
    case OP_EMBED:
        for (int t = r0; t < r0 + n; t++) {
            float *x = j->out + (long)t * C;
            if (!j->m->proj_in)  // (opt's project_in: x holds the projected embedding already)
                memcpy(x, j->m->tok_emb + (long)j->b->token[t] * C, (size_t)C * sizeof *x);
            if (c->embed_scale != 0)  // (gemma: the embedding times sqrt(C), before anything is added)
                for (int i = 0; i < C; i++) x[i] *= c->embed_scale;
            if (j->m->pos_emb) cpu_add_inplace(x, j->m->pos_emb + (long)j->b->pos[t] * C, C);
            if (j->m->bigram_emb) add_bigram(j->m, j->b, t, x);
            if (j->m->smear_fwd_w) add_token_smear(j->m, j->b, t, x);
            if (c->embed_norm) cpu_norm_rows(x, x, 1, C, NULL, NULL, c->norm_eps);
        }
        break;
    case OP_NORM:
        if (j->w || c->norm_weightless)  // weightless: RMSNorm without a gain (parameter golf)
            cpu_norm_rows(j->in + (long)r0 * C, j->out + (long)r0 * C, n, C, j->w, j->bias, c->norm_eps);
        else  // no pre-norm (olmo2): the block reads the residual rows as they are
            memcpy(j->out + (long)r0 * C, j->in + (long)r0 * C, (size_t)n * C * sizeof(float));
        if (j->scale)
            for (long i = (long)r0 * C; i < (long)(r0 + n) * C; i++) j->out[i] *= j->scale;
        break;
    case OP_VE:  // v rows (out, KV floats each)
        for (int t = r0; t < r0 + n; t++)
            add_value_embedding(j->m, j->lw, j->b->token[t], j->out + (long)t * c->n_kv_head * c->head_dim);
        break;
    case OP_QK_NORM:  // token rows [r0, r0 + n) of out: ld / width norm rows each (per head, or one)
        if (c->qk_norm == QK_NORM_HEAD_LN) {  // (stablelm: a LayerNorm per head, head h's gain w[h hd ..])
            for (int r = r0; r < r0 + n; r++)
                for (int h = 0; h < j->ld / j->width; h++)
                    cpu_layer_norm_rows(j->out + r * j->ld + (long)h * j->width, j->out + r * j->ld + (long)h * j->width, 1,
                                        j->width, j->w + (long)h * j->width, NULL, c->norm_eps);
            break;
        }
        cpu_norm_rows(j->out + r0 * j->ld, j->out + r0 * j->ld, (int)(n * (j->ld / j->width)), j->width, j->w, j->bias,
                      c->norm_eps);  // (a bias: LayerNorm, phi's qk_layernorm)
        break;
    case OP_POST_NORM:
        for (int r = r0; r < r0 + n; r++) {
            float *o = (float *)j->in + (long)r * C;
            cpu_norm_rows(o, o, 1, C, j->w, NULL, c->norm_eps);
            cpu_add_inplace(j->out + (long)r * C, o, C);
        }
        break;
    case OP_ROPE: {  // q rows (out, unless NULL) and k rows (p2, unless NULL)
        int hd = c->head_dim, rd = model_rope_dims(c), h2 = rd / 2, half = c->rope != ROPE_ADJACENT, Q = c->n_head * hd;
        if (j->lw && j->lw->q_gain) {  // the parameter-golf family: RoPE, then q_gain, row by row
            if (j->out) prep_heads(j, j->out, r0, n, c->n_head, 1);
            if (j->p2) prep_heads(j, j->p2, r0, n, c->n_kv_head, 0);
            break;
        }
        const float *co = j->cos_t + (long)r0 * h2, *si = j->sin_t + (long)r0 * h2;
        if (j->out && !j->idx) cpu_rope_apply(j->out + (long)r0 * Q, n, Q, c->n_head, hd, rd, half, co, si);
        if (j->out && j->idx)
            for (int r = r0; r < r0 + n; r++)
                cpu_rope_apply(j->out + (long)r * Q, 1, Q, c->n_head, hd, rd, half, j->cos_t + (long)j->idx[r] * h2,
                               j->sin_t + (long)j->idx[r] * h2);
        if (j->p2) cpu_rope_apply(j->p2 + (long)r0 * c->n_kv_head * hd, n, c->n_kv_head * hd, c->n_kv_head, hd, rd, half, co, si);
        break;
    }
    case OP_SMEAR:  // out = (1 - g) x + g x_prev, g = sigmoid(smear_gate), x_prev = 0 at position 0
        for (int t = r0; t < r0 + n; t++) {
            const float *x = j->in + (long)t * C;
            int p = cpu_prev_token(j->b, t);
            float *o = j->out + (long)t * C;
            for (int i = 0; i < C; i++) {
                float g = 1.0f / (1.0f + expf(-j->m->smear_gate[i]));
                o[i] = (1 - g) * x[i] + g * (p < 0 ? 0.0f : j->in[(long)p * C + i]);
            }
        }
        break;
    case OP_MIX: {  // x = m0 * x + m1 * x0 (resid_mix)
        const float *m0 = j->lw->resid_mix, *m1 = m0 + C;
        for (int t = r0; t < r0 + n; t++) {
            float *x = j->out + (long)t * C;
            const float *x0 = j->in + (long)t * C;
            for (int i = 0; i < C; i++) x[i] = m0[i] * x[i] + m1[i] * x0[i];
        }
        break;
    }
    }
}

static void run_rows(struct cpu_state *st, struct rows_job *j) {
    cpu_pool_run(st->pool, (j->T + CPU_GEMM_ROWS - 1) / CPU_GEMM_ROWS, rows_task, j);
}

// Row-wise steps fused into the GEMM whose output they read (cpu_gemm_linear_then): each runs
// on the real rows (< n) of a finished tile, the same arithmetic as a pass of its own.
struct tile_step {
    float *dst;  // residual rows (add_to_residual), gate rows (swiglu_into_gate)
    const float *other;  // add_parallel_residual: the attention output rows
    const float *scale;  // add_to_residual: dst += scale * tile (attn_scale, mlp_scale); NULL: dst += tile
    float rscale;        // add_to_residual: dst += tile * rscale (granite's residual_multiplier); 0: none
    int n, ld;   // real rows; floats per row of dst
    int exact;   // gelu_in_place: the erf GELU (model_config.gelu_exact); add_parallel_residual: stablelm's order
    float slope; // relu2_in_place: leaky_relu's negative slope (model_config.mlp_leaky_slope)
};

// dst += tile: the residual add after the output and down projections.
static void add_to_residual(void *ctx, float *out, int ldo, int r0, int c0, int nc) {
    const struct tile_step *s = ctx;
    for (int r = r0; r < r0 + CPU_GEMM_ROWS && r < s->n; r++)
        if (s->scale)
            cpu_add_scaled(s->dst + (long)r * s->ld + c0, s->scale + c0, out + (long)(r - r0) * ldo, nc);
        else if (s->rscale != 0)  // residual + output * multiplier, as granite's layer
            for (int i = 0; i < nc; i++) s->dst[(long)r * s->ld + c0 + i] += out[(long)(r - r0) * ldo + i] * s->rscale;
        else
            cpu_add_inplace(s->dst + (long)r * s->ld + c0, out + (long)(r - r0) * ldo, nc);
}

// leaky_relu(tile, slope)^2 in place (parameter-golf's MLP; slope 0: relu^2).
static void relu2_in_place(void *ctx, float *out, int ldo, int r0, int c0, int nc) {
    const struct tile_step *s = ctx;
    for (int r = r0; r < r0 + CPU_GEMM_ROWS && r < s->n; r++) {
        float *row = out + (long)(r - r0) * ldo;
        cpu_leaky_relu2(row, row, nc, s->slope);
    }
    (void)c0;
}

// x = lerp(s, x, sigmoid(g)), s = w * skip, as torch.lerp computes it (weight < 0.5: start +
// weight (end - start); else end - (end - start) (1 - weight)): the 2026-03-31 record's gated skip.
static void gated_skip_row(float *x, const float *w, const float *g, const float *skip, int C) {
    for (int i = 0; i < C; i++) {
        float s = w[i] * skip[i], wt = 1.0f / (1.0f + expf(-g[i])), d = x[i] - s;
        x[i] = wt < 0.5f ? s + wt * d : x[i] - d * (1.0f - wt);
    }
}

// x += skip_weights[i] * (encoder output e) on n rows (row r is token rows[r]; NULL: r), or
// the gated form when the model has skip_gates.
static void add_skip(const struct cpu_state *st, float *x, int n, const int32_t *rows, int i, int e) {
    const struct model *m = st->m;
    int C = m->cfg.d_model;
    if (m->cfg.skip_rows && i >= m->cfg.skip_rows) {  // 2026-04-03: min(i, rows - 1); 2026-04-04: none past the rows
        if (m->cfg.skip_stop) return;
        i = m->cfg.skip_rows - 1;
    }
    const float *w = m->skip_weights + (long)i * C, *src = st->skip + (long)e * st->t_cap * C;
    const float *g = m->skip_gates ? m->skip_gates + (long)i * C : NULL;
    for (int r = 0; r < n; r++) {
        const float *e_row = src + (long)(rows ? rows[r] : r) * C;
        if (g) gated_skip_row(x + (long)r * C, w, g, e_row, C);
        else cpu_add_scaled(x + (long)r * C, w, e_row, C);
    }
}

// A two-lane layer's sublayer output out (N rows) into both lanes: y = scale * out, then
// lane k = r * lane k + post[k] * y (the record's _parallel_block; lane 0 is st->x).
static void add_to_lanes(struct cpu_state *st, int N, const float *out, const float *scale, float r, const float *post) {
    long n = (long)N * st->m->cfg.d_model;
    int C = st->m->cfg.d_model;
    for (long i = 0; i < n; i++) {
        float y = scale[i % C] * out[i];
        st->x[i] = r * st->x[i] + post[0] * y;
        st->lane1[i] = r * st->lane1[i] + post[1] * y;
    }
}

// A 2026-04-10 two-lane layer's outputs into the lanes, both sublayers at once: a = attn_scale *
// (attention rows in st->o2), m = mlp_scale * (MLP rows in st->o), then lane 0 = r0 lane 0 +
// post[0][0] a + post[1][0] m and lane 1 = r1 lane 1 + post[0][1] a + post[1][1] m (its
// _parallel_block).
static void add_to_lanes_together(struct cpu_state *st, int N, const struct layer_weights *w) {
    long n = (long)N * st->m->cfg.d_model;
    int C = st->m->cfg.d_model;
    const float *r = w->lane_resid, *p = w->lane_post;
    for (long i = 0; i < n; i++) {
        float a = w->attn_scale[i % C] * st->o2[i], m = w->mlp_scale[i % C] * st->o[i];
        st->x[i] = r[0] * st->x[i] + p[0] * a + p[2] * m;
        st->lane1[i] = r[1] * st->lane1[i] + p[1] * a + p[3] * m;
    }
}

// The rows a two-lane layer's sublayer reads: lane `lane` (with mix, resid_mix of it and x0)
// into st->xn (the lanes keep their values), then normed in place (times ln when LN_SCALE).
static void lane_input(struct cpu_state *st, const struct score_batch *b, const struct layer_weights *w, const float *lane,
                       const float *norm_w, float ln, int mix) {
    int T = b->n_tokens, C = st->m->cfg.d_model;
    memcpy(st->xn, lane, (size_t)T * C * sizeof(float));
    struct rows_job j = {.op = OP_MIX, .m = st->m, .b = b, .T = T, .in = st->x0, .out = st->xn, .lw = w};
    if (mix) run_rows(st, &j);
    j = (struct rows_job){.op = OP_NORM, .m = st->m, .b = b, .T = T, .in = st->xn, .w = norm_w, .out = st->xn, .scale = ln};
    run_rows(st, &j);
}

// dst += tile + other: gpt_neox's parallel residual, x + (mlp + attn) added as transformers
// orders it (mlp_output + attn_output + hidden_states); stablelm's (exact) as (x + attn) + mlp
// (residual + self_attn_output + mlp_output).
static void add_parallel_residual(void *ctx, float *out, int ldo, int r0, int c0, int nc) {
    const struct tile_step *s = ctx;
    for (int r = r0; r < r0 + CPU_GEMM_ROWS && r < s->n; r++) {
        float *o = out + (long)(r - r0) * ldo, *d = s->dst + (long)r * s->ld + c0;
        if (s->exact) {
            cpu_add_inplace(d, s->other + (long)r * s->ld + c0, nc);
            cpu_add_inplace(d, o, nc);
            continue;
        }
        cpu_add_inplace(o, s->other + (long)r * s->ld + c0, nc);
        cpu_add_inplace(d, o, nc);
    }
}

// dst = silu(dst) * tile: SwiGLU on the up projection's tile (dst holds the gate's output).
static void swiglu_into_gate(void *ctx, float *out, int ldo, int r0, int c0, int nc) {
    const struct tile_step *s = ctx;
    for (int r = r0; r < r0 + CPU_GEMM_ROWS && r < s->n; r++)
        cpu_swiglu(s->dst + (long)r * s->ld + c0, out + (long)(r - r0) * ldo, nc);
}

// dst = gelu_tanh(dst) * tile: GeGLU on the up projection's tile (gemma; dst holds the gate's output).
static void geglu_into_gate(void *ctx, float *out, int ldo, int r0, int c0, int nc) {
    const struct tile_step *s = ctx;
    for (int r = r0; r < r0 + CPU_GEMM_ROWS && r < s->n; r++) {
        float *g = s->dst + (long)r * s->ld + c0;
        const float *u = out + (long)(r - r0) * ldo;
        cpu_gelu_tanh(g, nc);
        for (int i = 0; i < nc; i++) g[i] *= u[i];
    }
}

// ReLU on the tile in place (opt's up projection).
static void relu_in_place(void *ctx, float *out, int ldo, int r0, int c0, int nc) {
    const struct tile_step *s = ctx;
    for (int r = r0; r < r0 + CPU_GEMM_ROWS && r < s->n; r++) {
        float *row = out + (long)(r - r0) * ldo;
        for (int i = 0; i < nc; i++) row[i] = row[i] > 0 ? row[i] : 0.0f;
    }
    (void)c0;
}

// GELU on the tile in place (gpt2's up projection), exact or tanh as the config says.
static void gelu_in_place(void *ctx, float *out, int ldo, int r0, int c0, int nc) {
    const struct tile_step *s = ctx;
    for (int r = r0; r < r0 + CPU_GEMM_ROWS && r < s->n; r++)
        (s->exact ? cpu_gelu_erf : cpu_gelu_tanh)(out + (long)(r - r0) * ldo, nc);
    (void)c0;
}

// RMSNorm of the q (Nq rows) and k (T rows) projections in place, per head or whole, or
// stablelm's per-head LayerNorm (model_config.qk_norm), before RoPE.
static void qk_norm(struct cpu_state *st, const struct score_batch *b, const struct layer_weights *w, int Nq) {
    const struct model_config *c = &st->m->cfg;
    int Q = c->n_head * c->head_dim, KV = c->n_kv_head * c->head_dim, head = c->qk_norm == QK_NORM_HEAD || c->qk_norm == QK_NORM_HEAD_LN;
    struct rows_job j = {.op = OP_QK_NORM, .m = st->m, .b = b, .T = Nq, .w = w->q_norm_w, .bias = w->q_norm_b, .out = st->q,
                         .width = head ? c->head_dim : Q, .ld = Q};
    run_rows(st, &j);
    j = (struct rows_job){.op = OP_QK_NORM, .m = st->m, .b = b, .T = b->n_tokens, .w = w->k_norm_w, .bias = w->k_norm_b, .out = st->k,
                          .width = head ? c->head_dim : KV, .ld = KV};
    run_rows(st, &j);
}

// A sublayer's output projection `in` @ W^T + bias, added to the residual rows x (N real of Np):
// in the GEMM's tiles (times `scale` when given), or, with a post-norm gain (olmo2), normed first.
static void project_into_residual(struct cpu_state *st, const struct score_batch *b, const float *in, const float *wt,
                                  const float *packed, const float *bias, const float *post_norm, const float *scale,
                                  float *x, int N, int Np, int K) {
    const struct model_config *c = &st->m->cfg;
    int C = c->d_model;
    if (!post_norm) {  // (scale: parameter-golf's attn_scale / mlp_scale; backend_check_model keeps it off post-norms)
        struct tile_step res = {.dst = x, .scale = scale, .rscale = c->residual_scale, .n = N, .ld = C};
        cpu_gemm_linear_then(st->pool, st->gemm, in, wt, packed, bias, st->o, Np, K, C, add_to_residual, &res);
        return;
    }
    cpu_gemm_linear(st->pool, st->gemm, in, wt, packed, bias, st->o, Np, K, C);
    struct rows_job j = {.op = OP_POST_NORM, .m = st->m, .b = b, .T = N, .in = st->o, .w = post_norm, .out = x};
    run_rows(st, &j);
}

// The attention sublayer of layer l on the normed rows st->xn (T; Tp padded), added into the
// residual: with R >= 0 only for the R gathered rows, which it leaves in st->xn (their normed
// inputs in st->hrows); in a two-lane layer into both lanes.
static void attention_sublayer(struct cpu_state *st, const struct score_batch *b, int l, int Tp,
                               const struct cpu_probe *probe, int R, int lanes) {
    const struct model *m = st->m;
    const struct model_config *c = &m->cfg;
    const struct layer_weights *w = &m->layers[l];
    const struct cpu_packed_layer *pk = st->pk ? &st->pk[l] : NULL;
    int T = b->n_tokens, C = c->d_model;
    int Q = c->n_head * c->head_dim, KV = c->n_kv_head * c->head_dim;
    int rows = R >= 0, N = rows ? R : T, Np = rows ? cpu_gemm_pad_rows(R) : Tp;  // rows after K, V
    float *x = rows ? st->xn : st->x;       // residual rows the block updates
    float *xin = rows ? st->hrows : st->xn;  // normed inputs of those rows
    struct rows_job j;
    cpu_gemm_linear(st->pool, st->gemm, st->xn, w->wk, pk ? pk->wk : NULL, w->bk, st->k, Tp, C, KV);
    cpu_gemm_linear(st->pool, st->gemm, st->xn, w->wv, pk ? pk->wv : NULL, w->bv, st->v, Tp, C, KV);
    if (c->clip_qkv > 0) {  // olmo: k and v clamped right after their projections (q below)
        cpu_clamp(st->k, (long)T * KV, c->clip_qkv);
        cpu_clamp(st->v, (long)T * KV, c->clip_qkv);
    }
    if (w->lora_v_down) add_lora(st->xn, T, C, w->lora_v_down, w->lora_v_up, c->depth_lora_rank, KV, st->v);
    if (w->ve_scale) {
        j = (struct rows_job){.op = OP_VE, .m = m, .b = b, .T = T, .out = st->v, .lw = w};
        run_rows(st, &j);
    }
    if (c->value_residual) value_residual(st, w, l, T);
    if (rows) {  // all normed inputs first: xn then takes the residual rows
        for (int r = 0; r < R; r++)
            memcpy(st->hrows + (long)r * C, st->xn + (long)st->row_tok[r] * C, (size_t)C * sizeof(float));
        for (int r = 0; r < R; r++)
            memcpy(st->xn + (long)r * C, st->x + (long)st->row_tok[r] * C, (size_t)C * sizeof(float));
    }
    cpu_gemm_linear(st->pool, st->gemm, xin, w->wq, pk ? pk->wq : NULL, w->bq, st->q, Np, C, Q);
    if (c->clip_qkv > 0) cpu_clamp(st->q, (long)N * Q, c->clip_qkv);
    if (w->lora_q_down) add_lora(xin, N, C, w->lora_q_down, w->lora_q_up, c->depth_lora_rank, Q, st->q);
    if (c->qk_norm) qk_norm(st, b, w, N);
    // (gemma3_text: the sliding-window layers' own rotary)
    int local = c->rope_local_theta != 0 && c->swa[l];
    const float *rcos = local ? st->rope_cos_local : st->rope_cos, *rsin = local ? st->rope_sin_local : st->rope_sin;
    if ((c->rope != ROPE_NONE && !c->no_rope[l]) || w->q_gain) {  // (smollm3: NoPE layers rotate nothing)
        j = (struct rows_job){.op = OP_ROPE, .m = m, .b = b, .T = T, .p2 = st->k,
                              .cos_t = rcos, .sin_t = rsin, .lw = w};
        if (!rows) j.out = st->q;
        run_rows(st, &j);
        if (rows) {
            j = (struct rows_job){.op = OP_ROPE, .m = m, .b = b, .T = R, .out = st->q, .idx = st->row_tok,
                                  .cos_t = rcos, .sin_t = rsin, .lw = w};
            run_rows(st, &j);
        }
    }
    struct cpu_attention_args a = {.q = st->q, .k = st->k, .v = st->v, .out = st->att,
                                   .span0_lo = b->span0_lo, .span0_hi = b->span0_hi,
                                   .span1_lo = b->span1_lo, .span1_hi = b->span1_hi, .T = T,
                                   .H = c->n_head, .Hkv = c->n_kv_head, .hd = c->head_dim, .scale = c->attn_scale, .softcap = c->attn_softcap,
                                   .xsa = c->xsa[l], .xsa_gate = w->xsa_gate, .kind = st->attn, .kt = st->kt, .vt = st->vt,
                                   .ldt = st->t_ld, .rows = rows ? st->row_tok : NULL, .n_rows = R,
                                   .scratch = st->att_p, .scratch_stride = st->att_stride,
                                   .window = xsa_layer_window(c, l),
                                   .probe = st->probe_rows ? st->probe_rows + (long)l * c->n_head * BACKEND_PROBE_STATS : NULL,
                                   .probe_stride = (long)c->n_layer * c->n_head * BACKEND_PROBE_STATS,
                                   .probe_row = st->probe_row};
    cpu_attention(st->pool, &a);
    if (probe && probe->layer == l) {  // (never the gathered block: cpu_forward sees to that)
        if (probe->attn) memcpy(probe->attn, st->att, (size_t)T * Q * sizeof(float));
        if (probe->v) memcpy(probe->v, st->v, (size_t)T * KV * sizeof(float));
    }
    if (w->attn_gate_w)  // each head's output times its gate of the attention input (model_config.attn_gate_*)
        for (int r = 0; r < N; r++)
            for (int h = 0; h < c->n_head; h++) {
                int n = c->attn_gate_window;
                float g = linear_gate(w->attn_gate_w + (long)h * n, w->attn_gate_b ? w->attn_gate_b[h] : 0, xin + (long)r * C, n, c->attn_gate_scale,
                                      c->attn_gate_mult),
                      *y = st->att + (long)r * Q + (long)h * c->head_dim;
                for (int d = 0; d < c->head_dim; d++) y[d] *= g;
            }
    // Parallel residual (gpt_neox): the attention output waits in o2 and the MLP reads x as
    // it was; both are added in the down projection's tiles.
    int wait = c->parallel_residual || (lanes && c->lanes_together);  // (o2: added with the MLP's)
    if (wait || lanes)
        cpu_gemm_linear(st->pool, st->gemm, st->att, w->wo, pk ? pk->wo : NULL, w->bo, wait ? st->o2 : st->o, Np, Q, C);
    else
        project_into_residual(st, b, st->att, w->wo, pk ? pk->wo : NULL, w->bo, w->post_attn_norm_w, w->attn_scale, x,
                              N, Np, Q);
    if (lanes && !c->lanes_together) add_to_lanes(st, T, st->o, w->attn_scale, w->lane_resid[0], w->lane_post);
}

// One transformer block on st->x (T rows; GEMMs run on Tp padded rows). With R >= 0 (the last
// block) only the R scored tokens st->row_tok[0..R) go on after K and V: their logits are all
// the block's output feeds, and every step computes a row from that row alone (attention from
// the token's own keys), so their bits are those of the full block. Their residual rows are
// then left gathered in st->xn (R rows), not in st->x. A two-lane layer (lanes_from) reads
// and writes st->x and st->lane1; cpu_forward never gathers such a block.
static void forward_layer(struct cpu_state *st, const struct score_batch *b, int l, int Tp,
                          const struct cpu_probe *probe, int R) {
    const struct model *m = st->m;
    const struct model_config *c = &m->cfg;
    const struct layer_weights *w = &m->layers[l];
    const struct cpu_packed_layer *pk = st->pk ? &st->pk[l] : NULL;
    int T = b->n_tokens, C = c->d_model, F = c->d_ff;
    int rows = R >= 0, N = rows ? R : T, Np = rows ? cpu_gemm_pad_rows(R) : Tp;  // rows after K, V
    float *x = rows ? st->xn : st->x;       // residual rows the block updates
    float *xin = rows ? st->hrows : st->xn;  // normed inputs of those rows

    int n_enc = c->unet_skips ? c->n_layer / 2 : 0, dec = l - n_enc;  // U-Net: decoder layer index
    int lanes = c->lanes_from && l >= c->lanes_from, split = lanes && c->lanes_split, first = lanes && l == c->lanes_from;
    if (first && !split) memcpy(st->lane1, st->x, (size_t)T * C * sizeof(float));
    if (n_enc && !c->skip_after && dec >= 0 && dec < n_enc) {  // (split lanes: the skip before the split, then lane 0's or none)
        if (!split || first || c->lanes_skip_lane0) add_skip(st, st->x, T, NULL, dec, n_enc - 1 - dec);
        if (lanes && !c->lanes_together && !split) add_skip(st, st->lane1, T, NULL, dec, n_enc - 1 - dec);
    }
    if (first && split) memcpy(st->lane1, st->x, (size_t)T * C * sizeof(float));
    float ln = c->ln_scale ? (float)(1.0 / sqrt(c->ln_layer[l] + 1.0)) : 0.0f;  // the record's 1.0 / math.sqrt(layer_idx + 1)
    struct rows_job j;
    if (lanes && !split) {
        lane_input(st, b, w, st->x, w->attn_norm_w, ln, 1);
    } else {  // (split lanes: attention on lane 0 as a sequential block's)
        if (w->resid_mix) {
            j = (struct rows_job){.op = OP_MIX, .m = m, .b = b, .T = T, .in = st->x0, .out = st->x, .lw = w};
            run_rows(st, &j);
        }
        if (w->dtg_w)  // DTG_ENABLED: the block's input rows and their gates, for the blend after it
            for (int t = 0; t < T; t++) {
                float *d = st->dtg_in + (long)t * (C + 1);
                memcpy(d, st->x + (long)t * C, (size_t)C * sizeof(float));
                d[C] = linear_gate(w->dtg_w, w->dtg_b[0], d, C, 1, 1);
            }
        // (post-LN, opt's do_layer_norm_before false: the block reads x itself, its norms come after the adds)
        j = (struct rows_job){.op = OP_NORM, .m = m, .b = b, .T = T, .in = st->x, .w = c->post_ln ? NULL : w->attn_norm_w,
                              .bias = c->post_ln ? NULL : w->attn_norm_b, .out = st->xn, .scale = ln};
        run_rows(st, &j);
    }
    if (!c->attn_off[l]) attention_sublayer(st, b, l, Tp, probe, R, lanes && !split);
    else if (rows)  // no attention (DISABLE_LAYER0_ATTN): the gathered rows go on as they are
        for (int r = 0; r < R; r++) memcpy(st->xn + (long)r * C, st->x + (long)st->row_tok[r] * C, (size_t)C * sizeof(float));
    if (c->post_ln) {  // x = norm(x + attention)
        j = (struct rows_job){.op = OP_NORM, .m = m, .b = b, .T = N, .in = x, .w = w->attn_norm_w, .bias = w->attn_norm_b, .out = x};
        run_rows(st, &j);
    }

    if (lanes) {  // lane 1: mixed with x0 (2026-03-31), or as it is (side by side, split)
        lane_input(st, b, w, st->lane1, w->mlp_norm_w, ln, !c->lanes_together && !split);
    } else if (c->mlp_reads_input[l] && !c->attn_off[l]) {
        // GPT-J block: the MLP's input is the attention's (weightless norms: the same rows), in xin
    } else {
        j = (struct rows_job){.op = OP_NORM, .m = m, .b = b, .T = N, .in = x, .w = c->post_ln ? NULL : w->mlp_norm_w,
                              .bias = c->post_ln ? NULL : w->mlp_norm_b, .out = xin, .scale = ln};
        run_rows(st, &j);
    }
    struct tile_step ff = {.dst = st->ff, .n = N, .ld = F, .exact = c->gelu_exact, .slope = c->mlp_leaky_slope};
    if (c->mlp_relu2) {
        cpu_gemm_linear_then(st->pool, st->gemm, xin, w->w_up, pk ? pk->w_up : NULL, w->b_up, st->ff, Np, C, F,
                             relu2_in_place, &ff);
    } else if (!model_mlp_gated(c)) {
        cpu_gemm_linear_then(st->pool, st->gemm, xin, w->w_up, pk ? pk->w_up : NULL, w->b_up, st->ff, Np, C, F,
                             c->mlp_relu ? relu_in_place : gelu_in_place, &ff);
    } else {
        cpu_gemm_linear(st->pool, st->gemm, xin, w->w_gate, pk ? pk->w_gate : NULL, w->b_gate, st->ff, Np, C, F);
        cpu_gemm_linear_then(st->pool, st->gemm, xin, w->w_up, pk ? pk->w_up : NULL, w->b_up, st->ff2, Np, C, F,
                             c->mlp_gelu_gate ? geglu_into_gate : swiglu_into_gate, &ff);
    }
    if (split) {  // lane 1 += mlp_scale * MLP, as a sequential block's residual add
        project_into_residual(st, b, st->ff, w->w_down, pk ? pk->w_down : NULL, w->b_down, NULL, w->mlp_scale, st->lane1, N, Np, F);
    } else if (lanes) {
        cpu_gemm_linear(st->pool, st->gemm, st->ff, w->w_down, pk ? pk->w_down : NULL, w->b_down, st->o, Np, F, C);
        if (c->lanes_together) add_to_lanes_together(st, T, w);
        else add_to_lanes(st, T, st->o, w->mlp_scale, w->lane_resid[1], w->lane_post + 2);
    } else if (c->parallel_residual) {
        struct tile_step res = {.dst = x, .other = st->o2, .n = N, .ld = C, .exact = c->parallel_residual == 2};
        cpu_gemm_linear_then(st->pool, st->gemm, st->ff, w->w_down, pk ? pk->w_down : NULL, w->b_down, st->o, Np, F, C,
                             add_parallel_residual, &res);
    } else {
        project_into_residual(st, b, st->ff, w->w_down, pk ? pk->w_down : NULL, w->b_down, w->post_mlp_norm_w,
                              w->mlp_scale, x, N, Np, F);
    }
    if (c->post_ln) {  // x = norm(x + MLP)
        j = (struct rows_job){.op = OP_NORM, .m = m, .b = b, .T = N, .in = x, .w = w->mlp_norm_w, .bias = w->mlp_norm_b, .out = x};
        run_rows(st, &j);
    }
    if (w->dtg_w)  // x = x_in + gate (x - x_in)
        for (int r = 0; r < N; r++) {
            const float *d = st->dtg_in + (long)(rows ? st->row_tok[r] : r) * (C + 1);
            float *xr = x + (long)r * C;
            for (int i = 0; i < C; i++) xr[i] = d[i] + d[C] * (xr[i] - d[i]);
        }
    if (w->out_scale)
        for (int r = 0; r < N; r++)
            for (int i = 0; i < C; i++) x[(long)r * C + i] *= w->out_scale[i];
    if (n_enc && l < n_enc) memcpy(st->skip + (long)l * st->t_cap * C, st->x, (size_t)T * C * sizeof(float));
    if (n_enc && c->skip_after && dec >= 0 && dec < n_enc) add_skip(st, x, N, rows ? st->row_tok : NULL, dec, n_enc - 1 - dec);
}

// Groups entries by distinct token index (rows in order of first appearance) as CSR.
static int group_entries(struct cpu_state *st, const struct score_batch *b) {
    int R = 0;
    for (int s = 0; s < b->n_entries; s++) st->row_of[b->entry_index[s]] = -1;
    for (int s = 0; s < b->n_entries; s++) {
        int t = b->entry_index[s];
        if (st->row_of[t] < 0) {
            st->row_of[t] = R;
            st->row_tok[R++] = t;
        }
    }
    memset(st->row_first, 0, (size_t)(R + 1) * sizeof *st->row_first);
    for (int s = 0; s < b->n_entries; s++) st->row_first[st->row_of[b->entry_index[s]] + 1]++;
    for (int r = 0; r < R; r++) st->row_first[r + 1] += st->row_first[r];
    // row_first[r] serves as row r's fill cursor, then shifts back into place.
    for (int s = 0; s < b->n_entries; s++) {
        int r = st->row_of[b->entry_index[s]];
        st->row_entries[st->row_first[r]++] = s;
    }
    for (int r = R; r > 0; r--) st->row_first[r] = st->row_first[r - 1];
    st->row_first[0] = 0;
    return R;
}

void cpu_forward(struct cpu_state *st, const struct score_batch *b, float *logprob,
                 uint8_t *greedy, const struct cpu_probe *probe) {
    const struct model *m = st->m;
    const struct model_config *c = &m->cfg;
    int T = b->n_tokens, C = c->d_model, Tp = cpu_gemm_pad_rows(T), L = c->n_layer;

    if (m->proj_in) {  // opt's word_embed_proj_dim: the embedding rows (E wide) through project_in into x
        int E = c->embed_dim;
        for (int t = 0; t < T; t++)
            memcpy(st->erows + (long)t * E, m->tok_emb + (long)b->token[t] * E, (size_t)E * sizeof(float));
        cpu_gemm_linear(st->pool, st->gemm, st->erows, m->proj_in, NULL, NULL, st->x, Tp, E, C);
    }
    struct rows_job j = {.op = OP_EMBED, .m = m, .b = b, .T = T, .out = st->x};
    run_rows(st, &j);
    if (m->smear_gate) {  // reads neighbours: a pass of its own into xn, then back
        j = (struct rows_job){.op = OP_SMEAR, .m = m, .b = b, .T = T, .in = st->x, .out = st->xn};
        run_rows(st, &j);
        memcpy(st->x, st->xn, (size_t)T * C * sizeof(float));
    }
    if (st->x0) memcpy(st->x0, st->x, (size_t)T * C * sizeof(float));
    if (c->rope != ROPE_NONE) cpu_rope_table(b->pos, T, c, st->rope_cos, st->rope_sin);
    if (c->rope != ROPE_NONE && c->rope_local_theta != 0) {  // gemma3_text's sliding-window layers: default RoPE at their base
        struct model_config lc = *c;
        lc.rope_theta = c->rope_local_theta;
        lc.rope_scaling = ROPE_SCALE_NONE;
        cpu_rope_table(b->pos, T, &lc, st->rope_cos_local, st->rope_sin_local);
    }
    // The last block runs on the scored tokens only, unless a probe wants all of its rows.
    int gather = b->n_entries > 0 && !(probe && probe->layer == L - 1) && !c->lanes_from && !c->attn_off[L - 1];
    int R = b->n_entries > 0 ? group_entries(st, b) : 0, Rp = cpu_gemm_pad_rows(R);
    long per_row = (long)L * c->n_head * BACKEND_PROBE_STATS;
    if (b->probe && R > 0) {  // attention statistics of the scored rows (backend.h)
        st->probe_row = xsa_malloc((size_t)T * sizeof *st->probe_row);
        st->probe_rows = xsa_calloc((size_t)R * per_row, sizeof *st->probe_rows);  // (0 in a layer without attention)
        for (int t = 0; t < T; t++) st->probe_row[t] = -1;
        for (int r = 0; r < R; r++) st->probe_row[st->row_tok[r]] = r;
    }
    for (int l = 0; l < L; l++) forward_layer(st, b, l, Tp, probe, gather && l == L - 1 ? R : -1);
    if (st->probe_rows) {
        for (int s = 0; s < b->n_entries; s++)
            memcpy(b->probe + s * per_row, st->probe_rows + st->row_of[b->entry_index[s]] * per_row,
                   (size_t)per_row * sizeof(float));
        free(st->probe_row);
        free(st->probe_rows);
        st->probe_row = NULL;
        st->probe_rows = NULL;
    }
    if (b->n_entries == 0) return;

    if (c->lanes_from && c->lanes_split)  // m lane 0 + (1 - m) lane 1 (lane_merge)
        for (long i = 0; i < (long)T * C; i++) st->x[i] = m->lane_merge * st->x[i] + (1.0f - m->lane_merge) * st->lane1[i];
    else if (c->lanes_from)  // the record's _final_parallel_hidden: the lanes' mean, or one of them
        for (long i = 0; i < (long)T * C; i++)
            st->x[i] = c->lanes_final == 0 ? (st->x[i] + st->lane1[i]) * 0.5f : c->lanes_final == 1 ? st->x[i] : st->lane1[i];
    if (!gather)  // residual rows of the scored tokens, gathered into xn as the last block leaves them
        for (int r = 0; r < R; r++)
            memcpy(st->xn + (long)r * C, st->x + (long)st->row_tok[r] * C, (size_t)C * sizeof(float));
    j = (struct rows_job){.op = OP_NORM, .m = m, .b = b, .T = R, .in = st->xn, .w = m->final_norm_w,
                          .bias = m->final_norm_b, .out = st->hrows};
    run_rows(st, &j);
    const float *h = st->hrows;
    int hc = C;
    if (m->proj_out) {  // opt's project_out: the head reads E-wide rows
        cpu_gemm_linear(st->pool, st->gemm, st->hrows, m->proj_out, NULL, NULL, st->erows, Rp, C, c->embed_dim);
        h = st->erows, hc = c->embed_dim;
    }
    struct cpu_logits_args a = {st->gemm, h, m->lm_head, st->pk_head, R, Rp, hc, c->vocab_size, st->row_first,
                                st->row_entries, b->entry_target, st->entry_logit, st->stats,
                                st->lg, logprob, greedy, c->logit_softcap, b->dist, st->row_lse, m->lm_head_b, c->logit_divisor};
    cpu_logits(st->pool, &a);
}
