// cpu_mnanogpt.c: modded-nanogpt's GPT (records/track_1_short/2026-05-07_XSAGatedLayers to the
// root train_gpt.py, and 2026-04-22_MuddFormer's; model/mnanogpt.c) in float32, step by step as its forward() orders the arithmetic,
// over a packed batch: a token's keys are its spans (kernels/backend.h), positions restart per row.
// Projections on the backend's GEMM; attention over the backend's threads (a token's heads are
// one task, so each writes only its own outputs); gates and norms in plain loops (double dot products).
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_state.h"

struct mng_run {
    const struct model *m;
    const struct score_batch *b;
    struct cpu_pool *pool;
    enum cpu_gemm_kind gemm;
    int T, Tp, C, H, hd;
    float *xn, *q, *k, *v, *y, *out;       // (T, C) each
    float *rope;                           // (T, 3, 2, hd): each token's Yarn rows pos, 2 pos, 2 pos + 1 (cos, sin)
    const int *row;                        // (T) the token's scored row, or -1
    float *probe;                          // NULL, or (rows, n_layer, H, BACKEND_PROBE_STATS): backend.h's probe
    int layer;                             // the layer attention runs for (its probe slots)
    const struct mng_layer *L;             // the layer attention runs for
    const float *mu;                       // (T, mudd_coef) the last layer's MUDD coefficients, when attention runs for it; else NULL
    const float *c0, *c7, *c9;             // (T, C) the residual into layer 0, after layer 7, into the last layer (MUDD's sources)
    const float *gates;                    // (T, gate_stride) the MUDD gates' columns, or NULL
    double *p;                             // (threads, 2T + 16) scores, per worker
    double *dc_p;                          // (threads, (H + 1) MNG_DC_WINDOW) the DC correction's probabilities, per worker
    long *key;                             // (threads, 2T + 16) key offsets, per worker
};

#define MNG_MLP_TILE 4096  // rows of the MLP's hidden activations at a time (a multiple of the GEMM's row tile)

static float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

static float dot(const float *a, const float *b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)a[i] * b[i];
    return (float)s;
}

// out (Tp, N) = in (Tp, K) @ W^T, W (N, K), on the backend's GEMM (rows padded to its tiles).
static void linear(const struct mng_run *r, const float *in, const float *w, float *out, int K, int N) {
    cpu_gemm_linear(r->pool, r->gemm, in, w, NULL, NULL, out, r->Tp, K, N);
}

// Yarn.rotary on one head with a table row (f1 = cos, f2 = sin, odd sines negated):
// out[2j] = c x[2j] + s x[2j+1], out[2j+1] = c x[2j+1] - s x[2j].
static void rotary(float *x, const float *f1, const float *f2, int hd) {
    for (int d = 0; d < hd; d += 2) {
        float a = x[d], b = x[d + 1];
        x[d] = f1[d] * a + f2[d] * b;
        x[d + 1] = f1[d + 1] * b + f2[d + 1] * a;
    }
}

// The first index in [lo, hi) whose position is at least p (positions increase along a span).
static int first_at(const struct score_batch *b, int lo, int hi, long p) {
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (b->pos[mid] < p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// Keys token t sees: span0 then span1 (kernels/backend.h).
static int key_range(const struct score_batch *b, int t, int s, int *lo, int *hi) {
    *lo = s ? b->span1_lo[t] : b->span0_lo[t];
    *hi = s ? b->span1_hi[t] : b->span0_hi[t];
    return *hi > *lo;
}

// One query head (token t, head h) of a layer: softmax over the keys flash-attn's varlen causal
// window (w, 0) admits, into y. Paired layers run H/2 heads over 2T positions: head h of token
// t is position 2 pos + h / (H/2) of head h % (H/2) (the record's view of (T, H, hd) as
// (2T, H/2, hd)); a key's position likewise. p, key: scratch for 2T keys.
static void attend(const struct mng_run *r, const struct mng_layer *L, int t, int h, float scale, double *p, long *key) {
    const struct score_batch *b = r->b;
    int hd = r->hd, half = r->H / 2, C = r->C, n = 0;
    long uq = L->paired ? 2L * b->pos[t] + h / half : b->pos[t];
    const float *q = r->q + (long)t * C + (long)h * hd;
    double mx = -INFINITY;
    // The window's earliest key position (paired: the earlier of a position's two), so that a key
    // span as long as a document costs only the window.
    long p0 = L->paired ? (uq - L->window - 1) / 2 : uq - L->window;
    for (int s = 0; s < 2; s++) {  // the visible keys (row offsets into k, v) and their scores
        int lo, hi;
        if (!key_range(b, t, s, &lo, &hi)) continue;
        for (int j = first_at(b, lo, hi, p0); j < hi; j++)
            for (int kh = 0; kh < (L->paired ? 2 : 1); kh++) {
                long uk = L->paired ? 2L * b->pos[j] + kh : b->pos[j];
                if (uk > uq || uq - uk > L->window) continue;
                key[n] = (long)j * C + (long)(L->paired ? h % half + kh * half : h) * hd;
                p[n] = (double)scale * dot(q, r->k + key[n], hd);
                if (p[n] > mx) mx = p[n];
                n++;
            }
    }
    double z = 0, acc[1024] = {0};
    for (int i = 0; i < n; i++) z += (p[i] = exp(p[i] - mx));
    for (int i = 0; i < n; i++)
        for (int d = 0; d < hd; d++) acc[d] += p[i] / z * r->v[key[i] + d];
    float *y = r->y + (long)t * C + (long)h * hd;
    for (int d = 0; d < hd; d++) y[d] = (float)acc[d];
    if (r->probe && r->row[t] >= 0) {  // a_ii: the weight on the query's own position (its key offset t C + h hd)
        float *o = r->probe + (((size_t)r->row[t] * r->m->cfg.n_layer + r->layer) * r->H + h) * BACKEND_PROBE_STATS;
        for (int i = 0; i < n; i++)
            if (key[i] == (long)t * C + (long)h * hd) o[BACKEND_PROBE_AII] = (float)(p[i] / z);
    }
}

// The root train_gpt.py's DC correction of token t (dc_triton_kernels.py, its forward kernel):
// each head's softmax over the keys of t's document at most MNG_DC_WINDOW - 1 positions back
// (the layer's scale, a normalization of its own), mixed over heads by w1 = rms_norm(gate's w1)
// into a(j) = sum_h w1_h p_h(j); head h's output gains w2_h sum_j a(j) v_h(j).
static void dc_correct(const struct mng_run *r, int t, double *p, long *key) {
    const struct score_batch *b = r->b;
    const float *gg = r->gates + (size_t)t * r->m->mng->gate_stride + r->m->mng->g_dc;
    int hd = r->hd, C = r->C, H = r->H, n = 0;
    float w1[MNG_DC_HEADS];
    double ms = 0;
    for (int h = 0; h < H; h++) ms += (double)gg[h] * gg[h];
    float rs = 1.0f / sqrtf((float)(ms / H) + 1e-6f);  // F.rms_norm(w1, (6,), eps=1e-6)
    for (int h = 0; h < H; h++) w1[h] = gg[h] * rs;
    for (int s = 0; s < 2; s++) {  // the keys: rows of k, v
        int lo, hi;
        if (!key_range(b, t, s, &lo, &hi)) continue;
        for (int j = first_at(b, lo, hi, b->pos[t] - (MNG_DC_WINDOW - 1)); j < hi && b->pos[j] <= b->pos[t] && n < MNG_DC_WINDOW; j++) key[n++] = j;
    }
    double *a = p + (size_t)H * n;  // p: (H, n) probabilities, then a (n)
    for (int i = 0; i < n; i++) a[i] = 0;
    for (int h = 0; h < H; h++) {
        const float *q = r->q + (size_t)t * C + (size_t)h * hd;
        double mx = -INFINITY, z = 0, *ph = p + (size_t)h * n;
        for (int i = 0; i < n; i++) {
            ph[i] = (double)r->m->mng->attn_scale * dot(q, r->k + (size_t)key[i] * C + (size_t)h * hd, hd);
            if (ph[i] > mx) mx = ph[i];
        }
        for (int i = 0; i < n; i++) z += (ph[i] = exp(ph[i] - mx));
        for (int i = 0; i < n; i++) a[i] += (double)w1[h] * (ph[i] / z);
    }
    for (int h = 0; h < H; h++) {
        float *y = r->y + (size_t)t * C + (size_t)h * hd;
        for (int d = 0; d < hd; d++) {
            double acc = 0;
            for (int i = 0; i < n; i++) acc += a[i] * r->v[(size_t)key[i] * C + (size_t)h * hd + d];
            y[d] = y[d] + (float)((double)gg[MNG_DC_HEADS + h] * acc);
        }
    }
}

// Task t of a layer's attention: token t's heads, with worker w's scratch.
static void attend_token(void *ctx, int t, int w) {
    struct mng_run *r = ctx;
    size_t n = 2 * (size_t)r->T + 16;
    for (int h = 0; h < r->H; h++) attend(r, r->L, t, h, r->m->mng->attn_scale, r->p + (size_t)w * n, r->key + (size_t)w * n);
    if (r->L->dc) dc_correct(r, t, r->dc_p + (size_t)w * (MNG_DC_HEADS + 1) * MNG_DC_WINDOW, r->key + (size_t)w * n);
}

// CausalSelfAttention.forward on the normed input xn: out (T, C).
static void attention(struct mng_run *r, int l) {
    const struct model *m = r->m;
    const struct mng_model *g = m->mng;
    const struct mng_layer *L = &g->layer[l];
    const struct layer_weights *w = &m->layers[l];
    const struct score_batch *b = r->b;
    int T = r->T, C = r->C, H = r->H, hd = r->hd;
    linear(r, r->xn, w->wq, r->q, C, C);
    linear(r, r->xn, w->wk, r->k, C, C);
    linear(r, r->xn, w->wv, r->v, C, C);
    cpu_norm_rows(r->q, r->q, T * H, hd, NULL, NULL, m->cfg.norm_eps);  // QK norm
    cpu_norm_rows(r->k, r->k, T * H, hd, NULL, NULL, m->cfg.norm_eps);
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++) {  // paired: adjacent heads rotate at positions 2 pos, 2 pos + 1
            const float *f = r->rope + ((size_t)t * 3 + (L->paired ? 1 + (h & 1) : 0)) * 2 * hd;
            rotary(r->q + (long)t * C + (long)h * hd, f, f + hd, hd);
            rotary(r->k + (long)t * C + (long)h * hd, f, f + hd, hd);
        }
    if (L->key_offset)  // the stationary half of each key from the token before: a shift (as compiled),
        for (int t = T - 1; t >= 0; t--) {  // so last to first (a token's predecessor has a lower index)
            int pv = cpu_prev_token(b, t);
            if (pv < 0) continue;
            for (int h = 0; h < H; h++)
                memcpy(r->k + (long)t * C + (long)h * hd + hd / 2, r->k + (long)pv * C + (long)h * hd + hd / 2, (size_t)(hd / 2) * sizeof(float));
        }
    if (L->ve >= 0 && r->mu && g->mudd_dense)  // 2026-04-22's: v = (v + 1.15 (mu0 c0 + mu1 c7 + mu2 c9)) + (mu6 | mu7 + 2) ve
        for (int t = 0; t < T; t++) {
            const float *ve = g->value_embeds + ((long)L->ve * m->cfg.vocab_size + b->token[t]) * C, *mu = r->mu + (size_t)t * g->mudd_coef;
            for (int h = 0; h < H; h++)
                for (int d = 0; d < hd; d++) {
                    size_t i = (size_t)t * C + (size_t)h * hd + d;
                    float vm = 1.15f * (mu[0] * r->c0[i] + mu[1] * r->c7[i] + mu[2] * r->c9[i]);
                    r->v[i] = (r->v[i] + vm) + (mu[6 + (h >= H / 2)] + 2.0f) * ve[h * hd + d];
                }
        }
    else if (L->ve >= 0 && r->mu)  // the last layer with MUDD: v += gate ve + (mu0 c0 + mu1 c7 + mu2 c9), gate mu6 | mu7 by head half
        for (int t = 0; t < T; t++) {
            const float *ve = g->value_embeds + ((long)L->ve * m->cfg.vocab_size + b->token[t]) * C, *mu = r->mu + (size_t)t * g->mudd_coef;
            for (int h = 0; h < H; h++)
                for (int d = 0; d < hd; d++) {
                    size_t i = (size_t)t * C + (size_t)h * hd + d;
                    float vm = mu[0] * r->c0[i] + mu[1] * r->c7[i] + mu[2] * r->c9[i];
                    r->v[i] = r->v[i] + (mu[6 + (h >= H / 2)] * ve[h * hd + d] + vm);
                }
        }
    else if (L->ve >= 0)
        for (int t = 0; t < T; t++) {
            const float *ve = g->value_embeds + ((long)L->ve * m->cfg.vocab_size + b->token[t]) * C;
            const float *x = r->xn + (long)t * C;
            float in[MNG_GATE_IN];
            int own = L->paired && (!g->mudd_w1 || g->mudd_dense);  // (2026-05-07's and 04-22's paired layers gate on x[:12])
            for (int i = 0; i < MNG_GATE_IN; i++) in[i] = own ? x[i] : i < 6 ? x[i] : ve[i - 6];
            for (int h = 0; h < H; h++) {
                float gate = 2 * sigmoidf_(dot(in, L->ve_gate + h * MNG_GATE_IN, MNG_GATE_IN));
                float *vv = r->v + (long)t * C + (long)h * hd;
                for (int d = 0; d < hd; d++) vv[d] = vv[d] + gate * ve[h * hd + d];
            }
        }
    r->L = L, r->layer = l;
    cpu_pool_run(r->pool, T, attend_token, r);
    for (int t = 0; t < T; t++) {
        const float *x = r->xn + (long)t * C;
        for (int h = 0; h < H; h++) {
            float *y = r->y + (long)t * C + (long)h * hd;
            const float *vv = r->v + (long)t * C + (long)h * hd;  // the token's own value (paired: its position's)
            float *o = r->probe && r->row[t] >= 0
                           ? r->probe + (((size_t)r->row[t] * m->cfg.n_layer + l) * H + h) * BACKEND_PROBE_STATS : NULL;
            if (o) o[BACKEND_PROBE_COS_Y] = (float)cpu_cosine(y, vv, hd);
            const float *gg = r->gates ? r->gates + (size_t)t * g->gate_stride : NULL;
            if (L->g_xsa >= 0 && m->cfg.xsa[l] && !g->gates_v1) {  // per token: y -= tanh(g) (y . v / max(|v|^2, 1e-8)) v
                float vv2 = dot(vv, vv, hd), c = tanhf(gg[L->g_xsa + h]) * (dot(y, vv, hd) / (vv2 > 1e-8f ? vv2 : 1e-8f));
                for (int d = 0; d < hd; d++) y[d] = y[d] - c * vv[d];
            } else if ((L->xsa_gate || L->g_xsa >= 0) && m->cfg.xsa[l]) {  // (--xsa none turns it off) vn = F.normalize(v, eps=1e-4);
                float nv = sqrtf(dot(vv, vv, hd)), den = nv > 1e-4f ? nv : 1e-4f, vn[1024];  // y -= tanh(alpha) (y . vn) vn (this_pr_v1: per token)
                for (int d = 0; d < hd; d++) vn[d] = vv[d] / den;
                float proj = dot(y, vn, hd), a = (L->xsa_gate ? L->xsa_gate[h] : tanhf(gg[L->g_xsa + h])) * proj;
                for (int d = 0; d < hd; d++) y[d] = y[d] - a * vn[d];
            }
            if (o) o[BACKEND_PROBE_COS_Z] = (float)cpu_cosine(y, vv, hd);  // (before the output gate: a per-head scale)
            // the output gate: sigmoid(W . x[:12]), or the MUDD gate's column as it is, or none
            float gate = L->attn_gate ? sigmoidf_(dot(x, L->attn_gate + h * MNG_GATE_IN, MNG_GATE_IN)) : L->g_attn >= 0 ? gg[L->g_attn + h] : 1.0f;
            if (L->attn_gate || L->g_attn >= 0)
                for (int d = 0; d < hd; d++) y[d] *= gate;
        }
    }
    linear(r, r->y, w->wo, r->out, C, C);
}

// The bigram row token t adds (bigram_dim channels): bigram_emb[bgrow] times sign-table row
// srow (the sign trick; srow -1 without it).
static void bigram_row(const struct mng_model *g, const int32_t *bgrow, const int32_t *srow, int t, float *out) {
    const float *e = g->bigram_emb + (size_t)bgrow[t] * g->bigram_dim, *sg = srow[t] < 0 ? NULL : g->bigram_sign + (size_t)srow[t] * g->bigram_dim;
    for (int j = 0; j < g->bigram_dim; j++) out[j] = sg ? e[j] * sg[j] : e[j];
}

// A coefficient network (GPT.forward_mudd, forward_mudd_gate) of block id over every token of x
// (Tp, C): out[t * stride + k] = (w2 gelu(w1 x) + b2)[k] * scale for the first n of its K
// coefficients; w1 (2, D, C), w2 (2, K, D), b2 (2, K). h: (Tp, D) scratch.
struct coef_net {
    const float *w1, *w2, *b2;
    int D, K;
    float scale, scale2;  // (this_pr_v1's gates: times 0.1, then 0.5; others 1)
};
static void coefs(const struct mng_run *r, struct coef_net net, int id, int n, const float *x, float *h, float *out, int stride) {
    linear(r, x, net.w1 + (size_t)id * net.D * r->C, h, r->C, net.D);
    for (size_t i = 0; i < (size_t)r->T * net.D; i++) h[i] = 0.5f * h[i] * (1.0f + erff(h[i] * (float)M_SQRT1_2));  // F.gelu (erf)
    const float *w2 = net.w2 + (size_t)id * net.K * net.D, *b2 = net.b2 + (size_t)id * net.K;
    for (int t = 0; t < r->T; t++)
        for (int k = 0; k < n; k++) out[(size_t)t * stride + k] = (dot(h + (size_t)t * net.D, w2 + (size_t)k * net.D, net.D) + b2[k]) * net.scale * net.scale2;
}

// this_pr_v1's DC weights (dc_gate): dc_w2 gelu_tanh(dc_w1 xn) from the attention input, 2H
// columns from g_dc of each token's gates (w1, then w2; dc_correct RMS-norms w1). h: (Tp, 2H) scratch.
static void dc_weights_v1(const struct mng_run *r, float *h, float *gates) {
    const struct mng_model *g = r->m->mng;
    int n = 2 * r->H;
    linear(r, r->xn, g->dc_w1, h, r->C, n);
    for (size_t i = 0; i < (size_t)r->T * n; i++) {  // F.gelu(approximate="tanh"), as torch computes it in float32
        float x = h[i];
        h[i] = 0.5f * x * (1.0f + tanhf((float)(M_SQRT2 * M_2_SQRTPI * 0.5) * (x + 0.044715f * (x * x * x))));
    }
    for (int t = 0; t < r->T; t++)
        for (int k = 0; k < n; k++) gates[(size_t)t * g->gate_stride + g->g_dc + k] = dot(h + (size_t)t * n, g->dc_w2 + (size_t)k * n, n);
}

void cpu_forward_mnanogpt(struct cpu_state *st, const struct score_batch *b, float *logprob, uint8_t *greedy) {
    const struct model *m = st->m;
    const struct mng_model *g = m->mng;
    const struct model_config *c = &m->cfg;
    int T = b->n_tokens, C = c->d_model, F = c->d_ff, V = c->vocab_size, last = c->n_layer - 1, Db = g->bigram_dim;
    int Tp = cpu_gemm_pad_rows(T), G = CPU_GEMM_ROWS, has_mudd = g->mudd_w1 != NULL;
    size_t TC = (size_t)T * C, P = (size_t)Tp * C;  // real rows; rows of each buffer (the padding stays 0)
    // Nine (Tp, C) buffers, eleven with MUDD, twelve with its gates: a record-sized 262,144-token
    // val chunk is one batch. The MLP runs in tiles of MT rows; without MUDD layer 7's output
    // (backout) takes layer 3's buffer once layer 6 has read it (MUDD reads both after the loop, and
    // the last layer's input); the embeddings are gathered into q, which attention first writes in
    // layer 0. MUDD's c0 (the residual into layer 0) is x0 where the bigram is added into x0 in
    // place (the sign trick), a buffer of its own where it is added to a copy (the gates; MUDD
    // before the sign trick, the root train_gpt.py of 2026-05-24 to 06-05).
    int c0_own = g->gate_w1 || (has_mudd && !g->bigram_sign);
    size_t MT = (size_t)(Tp < MNG_MLP_TILE ? Tp : MNG_MLP_TILE), nb = c0_own ? 12 : has_mudd ? 11 : 9;
    float *buf = xsa_calloc(P * nb + MT * F + (size_t)T + (size_t)G * V + (size_t)G * C, sizeof(float));
    float *x = buf, *x0 = x + P, *skip = x0 + P;
    struct mng_run r = {.m = m, .b = b, .pool = st->pool, .gemm = st->gemm, .T = T, .Tp = Tp, .C = C, .H = c->n_head, .hd = c->head_dim};
    r.xn = skip + P, r.q = r.xn + P, r.k = r.q + P, r.v = r.k + P, r.y = r.v + P, r.out = r.y + P;
    float *xb = has_mudd ? r.out + P : skip, *c9 = has_mudd ? xb + P : NULL, *c0 = c0_own ? c9 + P : x0;
    float *tmp = r.q, *ff = r.out + P * (nb - 8), *skip_g = ff + MT * F, *lg = skip_g + T, *hrow = lg + (size_t)G * V;
    float *mu = has_mudd ? xsa_calloc((size_t)T * g->mudd_coef, sizeof(float)) : NULL;
    struct coef_net mnet = {g->mudd_w1, g->mudd_w2, g->mudd_b2, g->mudd_dim, g->mudd_coef, g->mudd_scale, 1.0f};
    struct coef_net gnet = {g->gate_w1, g->gate_w2, g->gate_b2, g->gate_dim, g->gate_coef, g->gate_scale, g->gates_v1 ? 0.5f : 1.0f};
    int GS = g->gate_stride, hdim = g->mudd_dim > g->gate_dim ? g->mudd_dim : g->gate_dim;
    hdim = hdim > 2 * c->n_head ? hdim : 2 * c->n_head;  // (this_pr_v1's DC network: 2H hidden)
    float *mh = has_mudd ? xsa_calloc((size_t)Tp * hdim, sizeof(float)) : NULL;
    float *gates = g->gate_w1 ? xsa_calloc((size_t)T * GS, sizeof(float)) : NULL;  // gate 0's columns, then gate 1's
    r.gates = gates;
    float *bg = xsa_malloc((size_t)Db * sizeof(float));
    r.c0 = c0, r.c7 = xb, r.c9 = c9;
    int32_t *bgrow = xsa_malloc((size_t)T * sizeof *bgrow), *srow = xsa_malloc((size_t)T * sizeof *srow);  // each token's bigram_emb, sign rows
    size_t nw = (size_t)cpu_pool_threads(st->pool);
    r.p = xsa_calloc(nw * (2 * (size_t)T + 16), sizeof(double));
    r.key = xsa_calloc(nw * (2 * (size_t)T + 16), sizeof(long));
    r.dc_p = gates ? xsa_calloc(nw * (MNG_DC_HEADS + 1) * MNG_DC_WINDOW, sizeof(double)) : NULL;
    int have_c7 = 0;  // layer 7 has run: later layers attend from its output (cache.get(7, x))
    // The scored tokens' rows (entries may share one), for the probe and the head.
    int *row = xsa_calloc((size_t)T, sizeof(int)), *rtok = xsa_calloc((size_t)T, sizeof(int)), R = 0;
    for (int t = 0; t < T; t++) row[t] = -1;
    for (int e = 0; e < b->n_entries; e++)
        if (row[b->entry_index[e]] < 0) rtok[R] = b->entry_index[e], row[b->entry_index[e]] = R++;
    long per_row = (long)c->n_layer * c->n_head * BACKEND_PROBE_STATS;
    r.row = row;
    r.probe = b->probe && R > 0 ? xsa_calloc((size_t)R * per_row, sizeof(float)) : NULL;  // (0 in layer 6: no attention)
    r.rope = xsa_malloc((size_t)T * 6 * (size_t)r.hd * sizeof(float));
    for (int t = 0; t < T; t++)
        for (int i = 0; i < 3; i++) {
            float *f = r.rope + ((size_t)t * 3 + i) * 2 * r.hd;
            mng_rotary_row(g, r.hd, i ? 2L * b->pos[t] + i - 1 : b->pos[t], f, f + r.hd);
        }

    for (int t = 0; t < T; t++) memcpy(tmp + (long)t * C, m->tok_emb + (long)b->token[t] * C, (size_t)C * sizeof(float));
    for (int t = 0; t < T; t++) {  // smear: x[t] += smear_lambda sigmoid(smear_gate . x[t][:12]) x[t-1]
        int pv = cpu_prev_token(b, t);
        const float *e = tmp + (long)t * C;
        float *o = x + (long)t * C;
        memcpy(o, e, (size_t)C * sizeof(float));
        if (pv < 0) continue;
        float s = g->smear_lambda * sigmoidf_(dot(e, g->smear_gate, MNG_GATE_IN));
        for (int i = 0; i < C; i++) o[i] = e[i] + s * tmp[(long)pv * C + i];
    }
    cpu_norm_rows(x, x0, T, C, NULL, NULL, c->norm_eps);
    int mod = g->bigram_vocab - 1;
    // get_bigram_hash: (36313 t xor 27191 t_prev) mod (V_b - 1), V_b - 1 at position 0, which it
    // writes before hashing the rest: position 1 hashes with t_prev = V_b - 1, not token 0.
    // The record's int32 arithmetic: 27191 (V_b - 1) wraps for V_b > 78,978 (the records' 251,520
    // and 754,560), and torch's % of a negative int32 is Python's (the divisor's sign). The
    // sign trick's row reads the tokens themselves: (t_prev xor t) mod rows, row 0 at position 0.
    for (int t = 0; t < T; t++) {
        int pv = cpu_prev_token(b, t);
        int text_start = pv >= 0 && b->pos[pv] == 0 && !(b->before && b->before[t] == pv);
        uint32_t prev = pv < 0 ? 0 : text_start ? (uint32_t)mod : (uint32_t)b->token[pv];
        int32_t hsh = pv < 0 ? mod : cpu_hash_row(((uint32_t)36313 * (uint32_t)b->token[t]) ^ ((uint32_t)27191 * prev), mod);
        bgrow[t] = hsh;
        srow[t] = !g->bigram_sign ? -1 : pv < 0 ? 0 : (int32_t)(((uint32_t)b->token[pv] ^ (uint32_t)b->token[t]) % (uint32_t)g->sign_rows);
    }
    if (gates) coefs(&r, gnet, 0, g->gate_pre, x0, mh, gates, GS);  // the MUDD gates' first block, from x0
    for (int t = 0; t < T; t++) {  // layer 0's bigram: with the sign trick added into x0 in place (x is x0)
        float *o = x + (size_t)t * C, *z = x0 + (size_t)t * C;
        bigram_row(g, bgrow, srow, t, bg);
        if (gates) {  // (the gated GPT adds it to a copy of x0, times its gate)
            float gb = gates[(size_t)t * GS + g->layer[0].g_bigram];
            memcpy(o, z, (size_t)C * sizeof(float));
            for (int j = 0; j < Db; j++) o[j] = o[j] + bg[j] * gb;
            memcpy(c0 + (size_t)t * C, o, (size_t)C * sizeof(float));
        } else if (g->bigram_sign) {
            for (int j = 0; j < Db; j++) z[j] = z[j] + bg[j] * g->layer[0].bigram_lambda;
            memcpy(o, z, (size_t)C * sizeof(float));
        } else {  // a full-width bigram added to a copy of x0: MUDD's cache[0] is that copy
            for (int j = 0; j < C; j++) o[j] = z[j] + bg[j] * g->layer[0].bigram_lambda;
            if (c0_own) memcpy(c0 + (size_t)t * C, o, (size_t)C * sizeof(float));
        }
    }
    float sk = 1.0f / (1.0f + expf(-g->skip_lambda)) * 2;
    for (int t = 0; t < T && !gates; t++) skip_g[t] = sk * sigmoidf_(dot(x0 + (long)t * C, g->skip_gate, MNG_GATE_IN));

    for (int l = 0; l < c->n_layer; l++) {
        const struct mng_layer *L = &g->layer[l];
        const struct layer_weights *w = &m->layers[l];
        int mix = has_mudd && l == last;  // the last layer's lambdas are MUDD's coefficients
        if (gates && l == g->gate_post_layer) {  // the gates' second block, from layer 4's input (this_pr_v1: 6's); the skip's is sigmoid(skip_lambda) times its column
            coefs(&r, gnet, 1, g->gate_post, x, mh, gates + g->gate_pre, GS);
            for (int t = 0; t < T; t++) skip_g[t] = 1.0f / (1.0f + expf(-g->skip_lambda)) * gates[(size_t)t * GS + g->g_skip];
        }
        if (!L->attn) {
            for (size_t i = 0; i < TC; i++) x[i] = x[i] + skip_g[i / C] * skip[i];
        } else {
            cpu_norm_rows(have_c7 ? xb : x, r.xn, T, C, NULL, NULL, c->norm_eps);
            r.mu = NULL;
            if (mix) {  // its input kept (cache[9]); x = (1 + mu5) x + mu3 c0 + mu4 c7
                memcpy(c9, x, TC * sizeof(float));
                coefs(&r, mnet, 0, MNG_MUDD_COEF, x, mh, mu, g->mudd_coef);
                for (size_t i = 0; i < TC; i++) {
                    const float *u = mu + i / C * g->mudd_coef;
                    x[i] = (1 + u[5]) * x[i] + u[3] * c0[i] + u[4] * xb[i];
                }
                r.mu = mu;
            }
            if (L->dc && g->gates_v1) dc_weights_v1(&r, mh, gates);
            attention(&r, l);
            for (int t = 0; t < T; t++) {
                float *o = x + (size_t)t * C;
                const float *z = x0 + (size_t)t * C, *a = r.out + (size_t)t * C, *u = mix ? mu + (size_t)t * g->mudd_coef : NULL;
                bigram_row(g, bgrow, srow, t, bg);
                if (g->gates_v1) {  // x = resid x + post attn + (x0 gx + bigram gb); the last layer: mu8, mu9, and c0 for x0
                    float rl = mix ? u[8] : L->resid_attn, pl = mix ? u[9] : L->post_attn, gx = gates[(size_t)t * GS + L->g_x0];
                    float gb = l > 0 ? gates[(size_t)t * GS + L->g_bigram] : 0;
                    const float *zz = mix ? c0 + (size_t)t * C : z;
                    for (int j = 0; j < C; j++) o[j] = rl * o[j] + pl * a[j] + (l > 0 ? zz[j] * gx + bg[j] * gb : zz[j] * gx);
                } else if (mix && g->mudd_dense) {  // 2026-04-22's: x = (mu8 x + mu9 attn) + (mu10 c0 + mu11 bigram)
                    for (int j = 0; j < C; j++) o[j] = u[8] * o[j] + u[9] * a[j] + (u[10] * c0[(size_t)t * C + j] + u[11] * bg[j]);
                } else if (mix) {  // x = mu8 x + mu9 attn + mu10 c0; x[:Db] += mu11 bigram
                    for (int j = 0; j < C; j++) o[j] = u[8] * o[j] + u[9] * a[j] + u[10] * c0[(size_t)t * C + j];
                    for (int j = 0; j < Db; j++) o[j] = o[j] + u[11] * bg[j];
                } else if (gates) {  // x0 times its gate, then the bigram times its gate (none in layer 0)
                    float gx = gates[(size_t)t * GS + L->g_x0], gb = l > 0 ? gates[(size_t)t * GS + L->g_bigram] : 0;
                    for (int j = 0; j < C; j++) o[j] = L->resid_attn * o[j] + L->post_attn * a[j] + z[j] * gx;
                    for (int j = 0; j < Db && l > 0; j++) o[j] = o[j] + bg[j] * gb;
                } else if (g->bigram_sign) {  // x0 injection, then the bigram's on its channels (none in layer 0)
                    for (int j = 0; j < C; j++) o[j] = L->resid_attn * o[j] + L->post_attn * a[j] + z[j] * L->x0_lambda;
                    for (int j = 0; j < Db && l > 0; j++) o[j] = o[j] + bg[j] * L->bigram_lambda;
                } else
                    for (int j = 0; j < C; j++) {
                        float inj = l == 0 ? z[j] * L->x0_lambda : z[j] * L->x0_lambda + bg[j] * L->bigram_lambda;
                        o[j] = L->resid_attn * o[j] + L->post_attn * a[j] + inj;
                    }
            }
        }
        cpu_norm_rows(x, r.xn, T, C, NULL, NULL, c->norm_eps);
        for (size_t r0 = 0; r0 < (size_t)Tp; r0 += MT) {  // relu(x W_up^T)^2 W_down^T, MT rows at a time
            int n = (int)((size_t)Tp - r0 < MT ? (size_t)Tp - r0 : MT);
            cpu_gemm_linear(r.pool, r.gemm, r.xn + r0 * C, w->w_up, NULL, NULL, ff, n, C, F);
            for (size_t i = 0; i < (size_t)n * F; i++) ff[i] = ff[i] > 0 ? ff[i] * ff[i] : 0;
            cpu_gemm_linear(r.pool, r.gemm, ff, w->w_down, NULL, NULL, r.out + r0 * C, n, F, C);
        }
        for (size_t i = 0; i < TC; i++) {
            const float *u = mix ? mu + i / C * g->mudd_coef : NULL;
            x[i] = mix ? u[12] * x[i] + u[13] * r.out[i] : L->resid_mlp * x[i] + L->post_mlp * r.out[i];
        }
        if (l == 3) memcpy(skip, x, TC * sizeof(float));
        if (l == 7) memcpy(xb, x, TC * sizeof(float)), have_c7 = 1;
    }
    if (r.probe)
        for (int e = 0; e < b->n_entries; e++)
            memcpy(b->probe + (size_t)e * per_row, r.probe + (size_t)row[b->entry_index[e]] * per_row, (size_t)per_row * sizeof(float));
    free(r.probe);
    if (has_mudd) {  // after the loop: x += mu0 c0 + mu1 c7 + mu2 c9 + mu3 ve0 + mu4 c3 (ve0: value embedding 0, layer 1's)
        coefs(&r, mnet, 1, 5, x, mh, mu, g->mudd_coef);
        for (int t = 0; t < T; t++) {
            const float *u = mu + (size_t)t * g->mudd_coef, *ve = g->value_embeds + (size_t)b->token[t] * C;
            for (int j = 0; j < C; j++) {
                size_t i = (size_t)t * C + j;
                x[i] = x[i] + u[0] * c0[i] + u[1] * xb[i] + u[2] * c9[i] + u[3] * ve[j] + u[4] * skip[i];
            }
        }
    } else
        for (size_t i = 0; i < TC; i++) x[i] = x[i] - g->backout_lambda * xb[i];
    cpu_norm_rows(x, r.xn, T, C, NULL, NULL, c->norm_eps);
    // The scored rows, G at a time: logits 23 sigmoid((z + 5) / 7.5), log-softmax over the padded
    // vocabulary, greedy = the first argmax.
    double *lse = xsa_calloc((size_t)G, sizeof(double));
    float *dist = b->dist ? xsa_malloc(BACKEND_DIST_CHUNK * sizeof *dist) : NULL;
    int best[CPU_GEMM_ROWS];
    for (int r0 = 0; r0 < R; r0 += G) {
        int n = R - r0 < G ? R - r0 : G;
        memset(hrow, 0, (size_t)G * C * sizeof(float));
        for (int i = 0; i < n; i++) memcpy(hrow + (size_t)i * C, r.xn + (size_t)rtok[r0 + i] * C, (size_t)C * sizeof(float));
        cpu_gemm_linear(st->pool, st->gemm, hrow, m->lm_head, NULL, NULL, lg, G, C, V);
        for (int i = 0; i < n; i++) {
            float *l = lg + (size_t)i * V;
            double mx = -INFINITY, sum = 0;
            best[i] = 0;
            for (int o = 0; o < V; o++) {
                l[o] = 23 * sigmoidf_((l[o] + 5) / 7.5f);
                if (l[o] > l[best[i]]) best[i] = o;
                if (l[o] > mx) mx = l[o];
            }
            for (int o = 0; o < V; o++) sum += exp(l[o] - mx);
            lse[i] = mx + log(sum);
        }
        for (int e = 0; e < b->n_entries; e++) {
            int i = row[b->entry_index[e]] - r0, tg = b->entry_target[e];
            if (i < 0 || i >= n) continue;
            logprob[e] = (float)(lg[(size_t)i * V + tg] - lse[i]);
            greedy[e] = tg == best[i];
            for (int v0 = 0; b->dist && v0 < V; v0 += BACKEND_DIST_CHUNK) {  // --kl: the whole distribution, chunk by chunk
                int nv = V - v0 < BACKEND_DIST_CHUNK ? V - v0 : BACKEND_DIST_CHUNK;
                for (int o = 0; o < nv; o++) dist[o] = (float)(lg[(size_t)i * V + v0 + o] - lse[i]);
                b->dist->chunk(b->dist->ctx, e, v0, nv, dist);
            }
        }
    }
    free(dist);
    free(lse);
    free(rtok);
    free(row);
    free(r.rope);
    free(bgrow);
    free(srow);
    free(bg);
    free(mu);
    free(mh);
    free(r.key);
    free(r.p);
    free(r.dc_p);
    free(gates);
    free(buf);
}
