// cpu_train_internal.h: the trainer's state (cpu_train.c: the model's passes) and the pieces
// those passes are built from (cpu_train_ops.c: GEMMs and LoRA adapters over the worker pool,
// RMSNorm, the MLP's activation, attention within each window). Nothing outside the two
// includes it.
#ifndef XSA_KERNELS_CPU_TRAIN_INTERNAL_H
#define XSA_KERNELS_CPU_TRAIN_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "kernels/cpu/cpu_train.h"

struct layer_act {   // one layer's activations over the S tokens of a sequence
    float *xp;       // (S, C) x before a gated skip (skip_gates), for the gate's gradient
    float *xb;       // (S, C) the block's input x (after its skip add)
    float *xin;      // (S, C) m0 x + m1 x0
    float *an;       // (S, C) RMSNorm(xin) * ln: q, k, v read it
    float *qn, *kn;  // (S, Q), (S, KV) q and k after their per-head norms, before RoPE
    float *qr;       // (S, Q) q after RoPE, before q_gain
    float *qf, *kf;  // (S, Q), (S, KV) the attention's q (times q_gain) and k
    float *v;        // (S, KV) v (with the value embedding)
    float *lse;      // (S, H) log-sum-exp of each query's scores
    float *y, *z;    // (S, Q) attention output before and after XSA
    float *ao;       // (S, C) z @ Wo^T
    float *xo;       // (S, C) xin + attn_scale ao
    float *l1;       // (S, C) a two-lane layer's lane 1 before its MLP (which reads and adds to lane 1)
    float *l1a, *xp1; // (S, C) 2026-03-31's lanes: lane 1 as the layer gets it (after the skip), and before a gated skip
    float *mn;       // (S, C) RMSNorm(xo) * ln: the MLP reads it (a GPT-J block: an; two lanes: of l1)
    float *u;        // (S, F) mn @ Wup^T
    float *mo;       // (S, C) the MLP's output
    float *ra, *rq, *rk, *rm;  // (S), (S, H), (S, Hkv), (S): the norms' 1 / rms
    float *hq, *hk, *hv, *ho, *hm;  // (S, rank) each LoRA's x A^T (q, k, v, o from an; the MLP's from mn), or NULL
    float *gate, *zg;  // (S, H), (S, Q): the attention output gate (model_config.attn_gate_*) and z gated, or NULL
    float *vraw;       // (S, KV) VALUE_RESIDUAL (2026-03-23): v before lambda0 v0 + lambda1 v, or NULL
    float *dtg_pre, *dtg_g;  // (S, C), (S) DTG_ENABLED: the block's output before x_in + g (out - x_in), and g
};

// One LoRA adapter y += (x A^T) B^T: A (rank, in), B (out, rank), and their gradients.
struct lora_pair {
    float *A, *B, *gA, *gB;
    int in, out;
};

// One document's adapters (a slot of the records' BatchedTTTLoRA): per layer and kind (NULL: that
// kind is off), and the head's; the same kinds in every slot.
enum { LORA_Q, LORA_V, LORA_K, LORA_MLP, LORA_O, LORA_KINDS };
struct lora_set {
    struct lora_pair *kind[LORA_KINDS], head;
    struct train_param *p;
    int n_p;
};

// A window of the pass (cpu_trainer_windows; one at row 0 otherwise): its rows [off, off + n).
struct pass_win {
    int off, n, slot;
};

struct cpu_trainer {
    struct model *m;
    int S, S_max, L, C, H, Hkv, hd, Q, KV, F, V;  // S: this pass's length (cpu_trainer_chunk: up to S_max)
    int n_enc, n_skip;
    struct cpu_pool *pool;
    int n_threads;
    struct train_param *p;
    int n_p;
    // grads by role (pointers into p's grads)
    float *g_tok, *g_bemb, *g_bproj, *g_bscale, *g_smear, *g_skip, *g_gate, *g_lm, *g_veemb, *g_veproj, *g_vescale;
    float *g_post, *g_resid;  // parallel_post_lambdas, parallel_resid_lambdas
    float *g_sfw, *g_sfl;     // 2026-04-16's SmearGate: smear_gate.weight, smear_lambda
    float *e_raw;             // (S, C) the raw embedding rows under that SmearGate, or NULL ...
    float *e_prev, *de_prev;  // (C) ... the row of the token before a segment (seg_prev >= 0: cpu_trainer_segment), its gradient
    int32_t seg_prev;
    struct {
        float *wq, *wk, *wv, *wo, *up, *down, *q_gain, *attn_scale, *mlp_scale, *resid_mix, *ve_scale, *lane_post, *lane_resid,
            *attn_gate, *attn_gate_b, *dtg_w, *dtg_b, *vr_lambda;
    } *gl;
    // LoRA (cpu_trainer_lora): the base is frozen (no weight gradients computed) once they exist
    int frozen, rank;
    float lora_scale;      // the adapters' output times this (2026-04-23 on: TTT_LORA_ALPHA / rank)
    struct lora_set *ls;   // n_slots documents' adapters, or NULL
    int n_slots;
    // the pass's windows: rows of independent sequences side by side (row0: a window's first row)
    struct pass_win *pw;
    int n_win;
    uint8_t *row0;
    int32_t *xcat;         // (S) their inputs
    float *h_lm, *dh;      // (TILE, rank) the head's x A^T; (S, rank) scratch
    float *dho;            // (S, rank) the output adapter's dL/dh, kept until dL/d(an) is assembled
    float *da, *dm, *dxin; // (S, C) a side-by-side two-lane layer's sublayer gradients and dL/d(xin)
    float *dgs;            // (S, H) the attention gates' dL/d(their logit), or NULL
    // activations of one sequence
    struct layer_act *act;
    float *skip_out;       // (n_enc, S, C) encoder outputs
    float *n0, *r0, *pb;   // (S, C) normed embedding, (S) its 1/rms, (S, C) bigram projection
    int32_t *bh;           // (S) bigram rows
    float *be_rows;        // (S, bigram_dim) the bigram table's rows of the sequence
    float *ve_rows, *vb;   // (S, ve_dim) the value embedding's rows, (S, KV) their projection
    float *dvb, *t_e;      // (S, KV) dL/d(vb) over the ve layers; (S, max(bigram_dim, ve_dim)) scratch
    float *dv0, *dtg_dx;   // (S, KV) dL/d(v0) from the later layers (VALUE_RESIDUAL); (S, C) DTG's dL/d(x_in), or NULL
    float *sg;             // (C) sigmoid of the smear gate
    // the bigram and value-embedding projections the passes read: the model's, or in cpu_trainer_grad
    // under QAT (cpu_trainer_qat) their int6 fake-quantized copies bproj_q, veproj_q
    const float *bproj, *veproj;
    float *bproj_q, *veproj_q;
    int qat;
    float *x0, *xf, *rf;   // (S, C) smeared x0, (S, C) final-normed rows, (S) their 1/rms
    float *lane1, *g1;     // (S, C) lane 1 (two lanes, lanes_split), and its gradient going back
    float *xl0;            // (S, C) lane 0 at the end, before lane_merge
    float *cos_t, *sin_t, *nsin_t;  // (S, rd/2); nsin: -sin (the inverse rotation)
    long rope_pos0;                 // the tables' first position (cpu_trainer_segment: a segment's place in its batch)
    // backward scratch
    float *g, *gx0, *gskip;   // (S, C), (S, C), (n_enc, S, C)
    float *dmn;            // (S, C) a GPT-J block's dL/d(an) through its MLP
    float *t_c, *t_c2, *t_f, *t_f2, *t_q, *t_q2, *t_kv, *t_kv2, *t_v;  // (S, ...) temporaries
    float *lg;             // (tile, V) logits of a tile of rows
    float *att_s;          // (n_threads, att_stride): P, dP (QB, S) and dy (S, hd) of one head
    long att_stride;
};

#define TILE 64     // rows of logits at once
#define QB 128      // query rows per attention block: keys past a block's last query are never computed

static inline float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

static inline double dot_f(const float *a, const float *b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

// ---- cpu_train_ops.c ----
// y = x W^T (x (n, in), W (out, in)); dx (+)= dy W (beta 0 or 1); dW += dy^T x; base_dw: dW +=
// dy^T x unless the base is frozen (LoRA adapters train instead).
void train_linear(struct cpu_trainer *t, const float *x, const float *W, float *y, int n, int in, int out);
void train_linear_dx(struct cpu_trainer *t, const float *dy, const float *W, float *dx, int n, int in, int out, float beta);
void train_linear_dw(struct cpu_trainer *t, const float *dy, const float *x, float *dW, int n, int in, int out);
void train_base_dw(struct cpu_trainer *t, const float *dy, const float *x, float *dW, int n, int in, int out);

// Adapter `kind` of layer l in slot `slot`, or NULL (that kind is off, or there are no adapters).
const struct lora_pair *train_lora_at(const struct cpu_trainer *t, int slot, int kind, int l);
// The head's adapter P over n rows: y += s (x A^T) B^T (h keeps s x A^T); its backward through t->dh.
void train_lora_fwd(struct cpu_trainer *t, const struct lora_pair *P, const float *x, float *h, float *y, int n);
void train_lora_bwd(struct cpu_trainer *t, const struct lora_pair *P, const float *dy, const float *x, const float *h, float *dx, int n);
// The layers' adapters of `kind` over the pass's windows, each its slot's: forward; backward in
// two halves (out: dh from dy; in: dx from dh) or whole (through t->dh).
void train_lora_fwd_w(struct cpu_trainer *t, int kind, int l, const float *x, float *h, float *y);
void train_lora_bwd_out_w(struct cpu_trainer *t, int kind, int l, const float *dy, const float *h, float *dh);
void train_lora_bwd_in_w(struct cpu_trainer *t, int kind, int l, const float *dh, const float *x, float *dx);
void train_lora_bwd_w(struct cpu_trainer *t, int kind, int l, const float *dy, const float *x, const float *h, float *dx);

// out = x / rms(x) * scale over n rows of C (r = 1 / rms); its backward into dx (added when `add`).
void train_rms_fwd(struct cpu_trainer *t, const float *x, float *out, float *r, int n, int C, float eps, float scale);
void train_rms_bwd(struct cpu_trainer *t, const float *dout, const float *out, const float *r, float *dx, int n, int C, float scale,
                   int add);
// out = a + s * b (s per channel); its backward: gs += sum of dout * b, db = s * dout.
void train_scaled_add(float *out, const float *a, const float *s, const float *b, int S, int C);
void train_scaled_add_bwd(const float *dout, const float *b, const float *s, float *gs, float *db, int S, int C);
// h = leaky_relu(u, slope)^2 (h non-NULL) and dh *= its derivative (dh non-NULL), over n values.
void train_mlp_act(struct cpu_trainer *t, const float *u, float *h, float *dh, float slope, long n);
// g[idx[i]] += d[i] (an embedding's gradient); out[i] = table[idx[i]].
void train_scatter_rows(float *g, const int32_t *idx, const float *d, int n, int D);
void train_gather_rows(float *out, const float *table, const int32_t *idx, int n, int D);

// Attention of layer activations a over each window of the pass, causal, XSA when `xsa`: y, z and
// the log-sum-exps; its backward from dz into dq (overwritten), dk and dv (added to).
void train_attention_fwd(struct cpu_trainer *t, struct layer_act *a, int xsa);
void train_attention_bwd(struct cpu_trainer *t, struct layer_act *a, int xsa, const float *dz, float *dq, float *dk, float *dv);

#endif
