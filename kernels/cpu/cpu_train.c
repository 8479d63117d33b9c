// cpu_train.c: the parameter-golf GPT's loss and its gradients (cpu_train.h). One pass is kept at
// a time: its activations for every layer, of one sequence, or with adapters of several windows
// side by side (each restarting at its own first row, row0). Its gradients are added to the
// parameters'. The GEMMs are OpenBLAS calls split in tiles over the worker pool, and attention
// runs one task per (sequence, kv head), so no two tasks write one float.
#include "kernels/cpu/cpu_train.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_pool.h"

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
#define MM_ROWS 256  // output rows per GEMM task (each task packs its columns of the weight)
#define MM_COLS 128  // columns per task of a GEMM with few rows (each task packs its rows of the input)
#define QB 128      // query rows per attention block: keys past a block's last query are never computed

// ---- GEMMs, split in tasks over the pool ----

struct mm_job {
    int ta, tb, M, N, K, lda, ldb, ldc, cols, n_cb;
    const float *A, *B;
    float *Cm;
    float beta;
};

static void mm_task(void *ctx, int i, int w) {
    (void)w;
    const struct mm_job *j = ctx;
    int r0 = i / j->n_cb * MM_ROWS, c0 = i % j->n_cb * j->cols;
    int m = j->M - r0 < MM_ROWS ? j->M - r0 : MM_ROWS, n = j->N - c0 < j->cols ? j->N - c0 : j->cols;
    const float *a = j->ta ? j->A + r0 : j->A + (long)r0 * j->lda, *b = j->tb ? j->B + (long)c0 * j->ldb : j->B + c0;
    cblas_sgemm(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans, j->tb ? CblasTrans : CblasNoTrans, m, n, j->K, 1.0f, a,
                j->lda, b, j->ldb, j->beta, j->Cm + (long)r0 * j->ldc + c0, j->ldc);
}

// C (M, N) = beta C + op(A) op(B), op(A) (M, K), op(B) (K, N), in tasks of MM_ROWS rows, each
// split in MM_COLS columns when there are fewer than 2 MM_ROWS rows (a short window's GEMMs
// still reach every thread; a long one's pack their input once). By shape, not by thread
// count: each task's call, and so its bits, is the same for any. Returns the job's task count
// (0: nothing left to run).
static int mm_plan(struct mm_job *j, int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                   float beta, float *Cm, int ldc) {
    if (M <= 0 || N <= 0) return 0;
    if (K <= 0) {
        if (beta == 0)
            for (int i = 0; i < M; i++) memset(Cm + (long)i * ldc, 0, (size_t)N * sizeof(float));
        return 0;
    }
    int cols = M < 2 * MM_ROWS ? MM_COLS : N, n_cb = (N + cols - 1) / cols;
    *j = (struct mm_job){ta, tb, M, N, K, lda, ldb, ldc, cols, n_cb, A, B, Cm, beta};
    return (M + MM_ROWS - 1) / MM_ROWS * n_cb;
}

static void mm(struct cpu_trainer *t, int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
               float beta, float *Cm, int ldc) {
    struct mm_job j;
    int n = mm_plan(&j, ta, tb, M, N, K, A, lda, B, ldb, beta, Cm, ldc);
    if (n) cpu_pool_run(t->pool, n, mm_task, &j);
}

// GEMMs that read nothing another writes run as one job, their tasks side by side: a pass's
// windows' adapter GEMMs, each too narrow to reach every thread alone. Each GEMM is split as mm
// splits it, so its bits are mm's; one that writes the output of one already in the set (two
// windows of one slot adding into its gradient) waits for the set to run, so they add in turn.
#define MM_SET 16
struct mm_set {
    struct mm_job job[MM_SET];
    int first[MM_SET + 1], n;
};

static void mm_set_task(void *ctx, int i, int w) {
    const struct mm_set *s = ctx;
    int k = 0;
    while (i >= s->first[k + 1]) k++;
    mm_task((void *)&s->job[k], i - s->first[k], w);
}

static void mm_set_run(struct cpu_trainer *t, struct mm_set *s) {
    if (s->first[s->n]) cpu_pool_run(t->pool, s->first[s->n], mm_set_task, s);
    s->n = 0, s->first[0] = 0;
}

static void mm_set_add(struct cpu_trainer *t, struct mm_set *s, int ta, int tb, int M, int N, int K, const float *A, int lda,
                       const float *B, int ldb, float beta, float *Cm, int ldc) {
    for (int k = 0; k < s->n; k++)
        if (s->job[k].Cm == Cm || K <= 0) {  // (K <= 0: mm_plan clears Cm at once)
            mm_set_run(t, s);
            break;
        }
    if (s->n == MM_SET) mm_set_run(t, s);
    int n = mm_plan(&s->job[s->n], ta, tb, M, N, K, A, lda, B, ldb, beta, Cm, ldc);
    if (n) s->first[s->n + 1] = s->first[s->n] + n, s->n++;
}

// y = x W^T: x (n, in), W (out, in)
static void linear(struct cpu_trainer *t, const float *x, const float *W, float *y, int n, int in, int out) {
    mm(t, 0, 1, n, out, in, x, in, W, in, 0, y, out);
}
// dx (+)= dy W: dy (n, out)
static void linear_dx(struct cpu_trainer *t, const float *dy, const float *W, float *dx, int n, int in, int out, float beta) {
    mm(t, 0, 0, n, in, out, dy, out, W, in, beta, dx, in);
}
// dW += dy^T x
static void linear_dw(struct cpu_trainer *t, const float *dy, const float *x, float *dW, int n, int in, int out) {
    mm(t, 1, 0, out, in, n, dy, out, x, in, 1.0f, dW, in);
}

// A base weight's dW += dy^T x, skipped once LoRA adapters train instead (frozen).
static void base_dw(struct cpu_trainer *t, const float *dy, const float *x, float *dW, int n, int in, int out) {
    if (!t->frozen) linear_dw(t, dy, x, dW, n, in, out);
}

// Adapter `kind` of layer l in slot `slot`, or NULL (that kind is off, or there are no adapters).
static const struct lora_pair *lora_at(const struct cpu_trainer *t, int slot, int kind, int l) {
    const struct lora_pair *P = t->ls ? t->ls[slot].kind[kind] : NULL;
    return P && P[l].A ? &P[l] : NULL;
}

// An adapter y += s (x A^T) B^T (s the adapters' scale, s x A^T kept in h) in four GEMM steps: the
// forward's two, and the backward's two halves (dy's buffer may be reused between them).
enum {
    LORA_A_FWD,  // h = s x A^T               (a: x, out: h)
    LORA_B_FWD,  // y += h B^T                (a: h, out: y)
    LORA_B_BWD,  // gB += dy^T h, dh = s dy B (a: dy, b: h, out: dh)
    LORA_A_BWD,  // gA += dh^T x, dx += dh A  (a: dh, b: x, out: dx)
};

// Step `step` of P on rows [off, off + n) of a, b and out, added to s.
static void lora_add(struct cpu_trainer *t, struct mm_set *s, int step, const struct lora_pair *P, int off, int n, const float *a,
                     const float *b, float *out) {
    int R = t->rank, in = P->in, o = P->out;
    if (step == LORA_A_FWD) mm_set_add(t, s, 0, 1, n, R, in, a + (long)off * in, in, P->A, in, 0.0f, out + (long)off * R, R);
    if (step == LORA_B_FWD) mm_set_add(t, s, 0, 1, n, o, R, a + (long)off * R, R, P->B, R, 1.0f, out + (long)off * o, o);
    if (step == LORA_B_BWD) {
        mm_set_add(t, s, 1, 0, o, R, n, a + (long)off * o, o, b + (long)off * R, R, 1.0f, P->gB, R);
        mm_set_add(t, s, 0, 0, n, R, o, a + (long)off * o, o, P->B, R, 0.0f, out + (long)off * R, R);
    }
    if (step == LORA_A_BWD) {
        mm_set_add(t, s, 1, 0, R, in, n, a + (long)off * R, R, b + (long)off * in, in, 1.0f, P->gA, in);
        mm_set_add(t, s, 0, 0, n, in, R, a + (long)off * R, R, P->A, in, 1.0f, out + (long)off * in, in);
    }
}

// Step `step` over the pass's windows, each by its own slot's adapter (kind, layer l), or, given
// P, of P over rows [0, n): its GEMMs as one job, then the rank-wide outputs times the scale.
static void lora_step(struct cpu_trainer *t, int step, const struct lora_pair *P, int n, int kind, int l, const float *a,
                      const float *b, float *out) {
    struct mm_set s = {.n = 0};
    int n_rows = P ? 1 : t->n_win;
    for (int i = 0; i < n_rows; i++) {
        const struct lora_pair *Pi = P ? P : lora_at(t, t->pw[i].slot, kind, l);
        if (Pi) lora_add(t, &s, step, Pi, P ? 0 : t->pw[i].off, P ? n : t->pw[i].n, a, b, out);
    }
    mm_set_run(t, &s);
    for (int i = 0; t->lora_scale != 1.0f && (step == LORA_A_FWD || step == LORA_B_BWD) && i < n_rows; i++) {
        int off = P ? 0 : t->pw[i].off, ni = P ? n : t->pw[i].n;
        if (P || lora_at(t, t->pw[i].slot, kind, l))
            for (long k = (long)off * t->rank; k < (long)(off + ni) * t->rank; k++) out[k] *= t->lora_scale;
    }
}

// The head's adapter over n rows: its forward; its backward (through t->dh).
static void lora_fwd(struct cpu_trainer *t, const struct lora_pair *P, const float *x, float *h, float *y, int n) {
    lora_step(t, LORA_A_FWD, P, n, 0, 0, x, NULL, h);
    lora_step(t, LORA_B_FWD, P, n, 0, 0, h, NULL, y);
}
static void lora_bwd(struct cpu_trainer *t, const struct lora_pair *P, const float *dy, const float *x, const float *h, float *dx, int n) {
    lora_step(t, LORA_B_BWD, P, n, 0, 0, dy, h, t->dh);
    lora_step(t, LORA_A_BWD, P, n, 0, 0, t->dh, x, dx);
}

// The layers' adapters of kind over the pass's windows (rows of x, h, y: the adapter's in, rank and out).
static void lora_fwd_w(struct cpu_trainer *t, int kind, int l, const float *x, float *h, float *y) {
    lora_step(t, LORA_A_FWD, NULL, 0, kind, l, x, NULL, h);
    lora_step(t, LORA_B_FWD, NULL, 0, kind, l, h, NULL, y);
}
static void lora_bwd_out_w(struct cpu_trainer *t, int kind, int l, const float *dy, const float *h, float *dh) {
    lora_step(t, LORA_B_BWD, NULL, 0, kind, l, dy, h, dh);
}
static void lora_bwd_in_w(struct cpu_trainer *t, int kind, int l, const float *dh, const float *x, float *dx) {
    lora_step(t, LORA_A_BWD, NULL, 0, kind, l, dh, x, dx);
}
static void lora_bwd_w(struct cpu_trainer *t, int kind, int l, const float *dy, const float *x, const float *h, float *dx) {
    lora_bwd_out_w(t, kind, l, dy, h, t->dh);
    lora_bwd_in_w(t, kind, l, t->dh, x, dx);
}

// ---- row-wise pieces ----

// out = x / rms(x) * scale (F.rms_norm without a weight, eps as the model's); r = 1 / rms.
static void rms_fwd_rows(const float *x, float *out, float *r, int n, int C, float eps, float scale) {
    for (int i = 0; i < n; i++) {
        const float *xr = x + (long)i * C;
        double ss = 0;
        for (int k = 0; k < C; k++) ss += (double)xr[k] * xr[k];
        float rs = (float)(1.0 / sqrt((float)(ss / C) + eps));
        r[i] = rs;
        for (int k = 0; k < C; k++) out[(long)i * C + k] = xr[k] * rs * scale;
    }
}

// dx (+)= d(out)/dx^T dout for out = scale * x r (y = out / scale the normed rows).
static void rms_bwd_rows(const float *dout, const float *out, const float *r, float *dx, int n, int C, float scale, int add) {
    for (int i = 0; i < n; i++) {
        const float *d = dout + (long)i * C, *o = out + (long)i * C;
        double dot = 0;
        for (int k = 0; k < C; k++) dot += (double)d[k] * (o[k] / scale);
        float m = (float)(dot / C), rs = r[i];
        for (int k = 0; k < C; k++) {
            float v = rs * scale * (d[k] - (o[k] / scale) * m);
            dx[(long)i * C + k] = add ? dx[(long)i * C + k] + v : v;
        }
    }
}

// The same over the pool, in tasks of RMS_ROWS rows (row by row: the same bits for any split).
#define RMS_ROWS 64
struct rms_job {
    const float *x, *out_c, *r_c;  // forward: x; backward: dout (x), out, r
    float *out, *r, *dx;
    int n, C, add;
    float eps, scale;
};

static void rms_task(void *ctx, int i, int w) {
    (void)w;
    const struct rms_job *j = ctx;
    int r0 = i * RMS_ROWS, n = j->n - r0 < RMS_ROWS ? j->n - r0 : RMS_ROWS;
    long at = (long)r0 * j->C;
    if (j->dx)
        rms_bwd_rows(j->x + at, j->out_c + at, j->r_c + r0, j->dx + at, n, j->C, j->scale, j->add);
    else
        rms_fwd_rows(j->x + at, j->out + at, j->r + r0, n, j->C, j->eps, j->scale);
}

static void rms_fwd(struct cpu_trainer *t, const float *x, float *out, float *r, int n, int C, float eps, float scale) {
    struct rms_job j = {.x = x, .out = out, .r = r, .n = n, .C = C, .eps = eps, .scale = scale};
    cpu_pool_run(t->pool, (n + RMS_ROWS - 1) / RMS_ROWS, rms_task, &j);
}

static void rms_bwd(struct cpu_trainer *t, const float *dout, const float *out, const float *r, float *dx, int n, int C, float scale,
                    int add) {
    struct rms_job j = {.x = dout, .out_c = out, .r_c = r, .dx = dx, .n = n, .C = C, .add = add, .scale = scale};
    cpu_pool_run(t->pool, (n + RMS_ROWS - 1) / RMS_ROWS, rms_task, &j);
}

// out = a + s * b over S rows of C (s per channel: attn_scale, mlp_scale, skip_weights); out may be a.
static void scaled_add(float *out, const float *a, const float *s, const float *b, int S, int C) {
    for (int r = 0; r < S; r++)
        for (int k = 0; k < C; k++) out[(long)r * C + k] = a[(long)r * C + k] + s[k] * b[(long)r * C + k];
}

// Its backward for s and b, from dout: gs += sum over rows of dout * b, db = s * dout.
static void scaled_add_bwd(const float *dout, const float *b, const float *s, float *gs, float *db, int S, int C) {
    for (int r = 0; r < S; r++)
        for (int k = 0; k < C; k++) {
            long i = (long)r * C + k;
            gs[k] += dout[i] * b[i];
            db[i] = s[k] * dout[i];
        }
}

// The MLP's activation over n values, in tasks of ACT_BLOCK over the pool (elementwise: the same
// bits for any split): h = leaky_relu(u, slope)^2 and, given dh, dh *= d(h)/du.
#define ACT_BLOCK 16384
struct act_job {
    const float *u;
    float *h, *dh, slope;
    long n;
};

static void act_task(void *ctx, int i, int w) {
    (void)w;
    const struct act_job *j = ctx;
    long i0 = (long)i * ACT_BLOCK, n = i0 + ACT_BLOCK < j->n ? ACT_BLOCK : j->n - i0;
    if (j->h) cpu_leaky_relu2(j->u + i0, j->h + i0, n, j->slope);
    if (j->dh) cpu_leaky_relu2_bwd(j->u + i0, j->dh + i0, n, j->slope);
}

static void mlp_act(struct cpu_trainer *t, const float *u, float *h, float *dh, float slope, long n) {
    struct act_job j = {u, h, dh, slope, n};
    cpu_pool_run(t->pool, (int)((n + ACT_BLOCK - 1) / ACT_BLOCK), act_task, &j);
}

static float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

static double dot_f(const float *a, const float *b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

// Adds rows of d (n rows of D) into the table rows idx[i] of g: an embedding's gradient.
static void scatter_rows(float *g, const int32_t *idx, const float *d, int n, int D) {
    for (int i = 0; i < n; i++) {
        float *gr = g + (long)idx[i] * D;
        for (int k = 0; k < D; k++) gr[k] += d[(long)i * D + k];
    }
}

// Rows idx[i] of a table (D wide) into out (n, D).
static void gather_rows(float *out, const float *table, const int32_t *idx, int n, int D) {
    for (int i = 0; i < n; i++) memcpy(out + (long)i * D, table + (long)idx[i] * D, (size_t)D * sizeof *out);
}

// ---- attention within each window, per (window, kv head) ----

struct att_job {
    struct cpu_trainer *t;
    struct layer_act *a;
    int xsa;
    const float *dz;  // backward: dL/dz (S, Q)
    float *dq, *dk, *dv;  // backward outputs (S, Q), (S, KV), (S, KV)
};

// Task i's window and kv head: *v the activations (and j's gradients in *jv) from the window's
// first row on; returns the window's length.
static int att_window(const struct att_job *j, int i, struct layer_act *v, struct att_job *jv, int *g) {
    const struct cpu_trainer *t = j->t;
    const struct pass_win *w = &t->pw[i / t->Hkv];
    long q = (long)w->off * t->Q, kv = (long)w->off * t->KV;
    *g = i % t->Hkv;
    *v = *j->a, *jv = *j;
    v->qf += q, v->qr += q, v->y += q, v->z += q, v->kf += kv, v->v += kv, v->lse += (long)w->off * t->H;
    if (j->dz) jv->dz += q, jv->dq += q, jv->dk += kv, jv->dv += kv;
    return w->n;
}

// P = softmax(scale Q_h K_g^T) of query rows [i0, i1) over keys [0, i1) of a window of S rows, the
// causal mask applied (rows of stride S, zeros past the diagonal), from scores of one GEMM; each
// row's log-sum-exp into lse (stride H) when `keep`, else read from it.
static void att_probs(const struct cpu_trainer *t, const struct layer_act *a, int S, int h, int g, int i0, int i1, float *p, int keep) {
    int hd = t->hd;
    float scale = 1.0f / sqrtf((float)hd);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, i1 - i0, i1, hd, scale, a->qf + (long)i0 * t->Q + (long)h * hd, t->Q,
                a->kf + (long)g * hd, t->KV, 0.0f, p, S);
    for (int i = i0; i < i1; i++) {
        float *r = p + (long)(i - i0) * S, *lse = a->lse + (long)i * t->H + h;
        if (keep) {  // e^(s - max), summed; then P = e / sum, which backward recomputes as e^(s - lse)
            float mx;
            cpu_argmax(r, i + 1, &mx);
            cpu_exp_minus(r, i + 1, mx);
            double sum = 0;
            for (int j = 0; j <= i; j++) sum += r[j];
            *lse = mx + (float)log(sum);
            float inv = (float)(1.0 / sum);
            for (int j = 0; j <= i; j++) r[j] *= inv;
        } else {
            cpu_exp_minus(r, i + 1, *lse);
        }
        memset(r + i + 1, 0, (size_t)(i1 - 1 - i) * sizeof *r);
    }
}

// Attention of kv head g's query heads over one sequence: y = P v, then z (XSA: y minus its
// projection on the token's own v).
static void att_fwd_task(void *ctx, int task, int w) {
    const struct att_job *j0 = ctx;
    const struct cpu_trainer *t = j0->t;
    struct layer_act view, *a = &view;
    struct att_job jv, *j = &jv;
    int g, S = att_window(j0, task, a, j, &g), hd = t->hd, G = t->H / t->Hkv, Q = t->Q, KV = t->KV;
    float *p = t->att_s + (long)w * t->att_stride;
    for (int h = g * G; h < (g + 1) * G; h++) {
        for (int i0 = 0; i0 < S; i0 += QB) {
            int i1 = S - i0 < QB ? S : i0 + QB;
            att_probs(t, a, S, h, g, i0, i1, p, 1);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, i1 - i0, hd, i1, 1.0f, p, S, a->v + (long)g * hd, KV, 0.0f,
                        a->y + (long)i0 * Q + (long)h * hd, Q);
        }
        for (int i = 0; i < S; i++) {
            float *y = a->y + (long)i * Q + (long)h * hd, *z = a->z + (long)i * Q + (long)h * hd;
            memcpy(z, y, (size_t)hd * sizeof *z);
            const float *v = a->v + (long)i * KV + (long)g * hd;
            double vv = dot_f(v, v, hd);
            if (j->xsa && vv > 0) {  // z = y - (y.v / |v|^2) v
                float c = (float)(dot_f(y, v, hd) / vv);
                for (int d = 0; d < hd; d++) z[d] -= c * v[d];
            }
        }
    }
}

// Its backward: dz -> dy (and XSA's share of dv), then per block of queries dP = dy v^T,
// dS = P (dP - rowsum(dy y)) scale, dq = dS k, dk += dS^T q, dv += P^T dy.
static void att_bwd_task(void *ctx, int task, int w) {
    const struct att_job *j0 = ctx;
    const struct cpu_trainer *t = j0->t;
    struct layer_act view, *a = &view;
    struct att_job jv, *j = &jv;
    int g, S = att_window(j0, task, a, j, &g), hd = t->hd, G = t->H / t->Hkv, Q = t->Q, KV = t->KV;
    float scale = 1.0f / sqrtf((float)hd);
    float *p = t->att_s + (long)w * t->att_stride, *dp = p + (long)QB * S, *dy = dp + (long)QB * S;
    for (int h = g * G; h < (g + 1) * G; h++) {
        for (int i = 0; i < S; i++) {
            const float *dz = j->dz + (long)i * Q + (long)h * hd, *y = a->y + (long)i * Q + (long)h * hd;
            const float *vi = a->v + (long)i * KV + (long)g * hd;
            float *dyi = dy + (long)i * hd;
            memcpy(dyi, dz, (size_t)hd * sizeof *dyi);
            double vv = dot_f(vi, vi, hd);
            if (j->xsa && vv > 0) {  // dy = dz - (dz.v / vv) v; dv = -c dz - (dz.v)(y - 2 c v) / vv
                float c = (float)(dot_f(y, vi, hd) / vv), e = (float)(dot_f(dz, vi, hd) / vv);
                float *dvi = j->dv + (long)i * KV + (long)g * hd;
                for (int d = 0; d < hd; d++) {
                    dyi[d] = dz[d] - e * vi[d];
                    dvi[d] += -c * dz[d] - e * (y[d] - 2.0f * c * vi[d]);
                }
            }
        }
        for (int i0 = 0; i0 < S; i0 += QB) {
            int i1 = S - i0 < QB ? S : i0 + QB, nb = i1 - i0;
            att_probs(t, a, S, h, g, i0, i1, p, 0);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, i1, hd, 1.0f, dy + (long)i0 * hd, hd, a->v + (long)g * hd, KV,
                        0.0f, dp, S);
            for (int i = i0; i < i1; i++) {
                float D = (float)dot_f(dy + (long)i * hd, a->y + (long)i * Q + (long)h * hd, hd);
                float *r = dp + (long)(i - i0) * S;
                const float *pr = p + (long)(i - i0) * S;
                for (int k = 0; k <= i; k++) r[k] = pr[k] * (r[k] - D) * scale;
                memset(r + i + 1, 0, (size_t)(i1 - 1 - i) * sizeof *r);
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, hd, i1, 1.0f, dp, S, a->kf + (long)g * hd, KV, 0.0f,
                        j->dq + (long)i0 * Q + (long)h * hd, Q);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, i1, hd, nb, 1.0f, dp, S, a->qf + (long)i0 * Q + (long)h * hd, Q,
                        1.0f, j->dk + (long)g * hd, KV);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, i1, hd, nb, 1.0f, p, S, dy + (long)i0 * hd, hd, 1.0f,
                        j->dv + (long)g * hd, KV);
        }
    }
}

// ---- the model ----

// The first layer running layer l's block: blocks are told apart by their resid_mix, which every
// block the trainer takes has (looped records run blocks LOOP_START .. LOOP_END again).
static int first_of_block(const struct model *m, int l) {
    int k = 0;
    while (m->layers[k].resid_mix != m->layers[l].resid_mix) k++;
    return k;
}

// Whether layer l runs exactly the tensors of the first layer with its block (no untied repeats).
static int same_block(const struct layer_weights *a, const struct layer_weights *b) {
    return a->wq == b->wq && a->wk == b->wk && a->wv == b->wv && a->wo == b->wo && a->w_up == b->w_up && a->w_down == b->w_down &&
           a->q_gain == b->q_gain && a->attn_scale == b->attn_scale && a->mlp_scale == b->mlp_scale && a->ve_scale == b->ve_scale;
}

int cpu_train_check(const struct model *m, xsa_error *err) {
    const struct model_config *c = &m->cfg;
    if (model_check_xsa_known(m, err)) return XSA_EBADINPUT;
    const char *why = NULL;
    if (m->mng) why = "modded-nanogpt's topology";
    else if (!c->norm_weightless || !c->embed_norm || !c->mlp_relu2) why = "norms or an MLP other than the records' (weightless RMSNorm, relu^2)";
    else if (!c->tied_head || c->logit_softcap <= 0) why = "an untied or uncapped head";
    else if (c->rope != ROPE_HALF_NEG || c->qk_norm != QK_NORM_HEAD) why = "RoPE or QK-norm other than the records'";
    else if (c->n_blocks && c->n_blocks != c->n_layer && !c->n_physical) why = "blocks shared by several layers (SHARED_CYCLE_LEN, NUM_UNIQUE_BLOCKS)";
    else if (c->parallel_residual) why = "parallel residuals";
    else if (c->trigram) why = "TRIGRAM";
    else if (c->bigram_mul_hash || c->depth_lora_rank) why = "RecurrentGPT's bigram hash and depth LoRA";
    else if (c->smear_fwd_window && m->bigram_emb) why = "the 2026-04-16 SmearGate beside a bigram table";
    else if (c->skip_after) why = "U-Net skips after the block";
    else if (c->sliding_window) why = "sliding-window layers";
    for (int l = 0; !why && l < c->n_layer; l++) {
        const struct layer_weights *w = &m->layers[l];
        int plain = !(c->lanes_from && l >= c->lanes_from) && !c->mlp_reads_input[l] && !c->attn_off[l];
        if (w->dtg_w && !plain) why = "DTG_ENABLED in a block of two lanes, a GPT-J block or one without attention";
        else if (w->vrl_alpha) why = "2026-03-25's VALUE_RESIDUAL (vrl_alpha)";
        else if (c->value_residual && (c->attn_off[0] || (w->vr_lambda && !plain))) why = "VALUE_RESIDUAL beside two lanes or layers without attention";
        else if (w->xsa_gate || w->out_scale) why = "gated XSA or recurrence gates";
        else if (w->bq || w->bk || w->bv || w->bo || w->b_up || w->b_down) why = "biases";
        else if (w->q_norm_w || w->k_norm_w || w->attn_norm_w || w->mlp_norm_w) why = "norm gains";
        else if (!w->q_gain || !w->resid_mix || !w->attn_scale || !w->mlp_scale) why = "a block without q_gain, resid_mix or scales";
        else if (!same_block(w, &m->layers[first_of_block(m, l)])) why = "recurrent layers with MLPs of their own (REPEAT_UNTIE_MLP)";
    }
    if (why)
        return xsa_fail(err, XSA_EBADINPUT, "%s: test-time training trains the GPTs of parameter-golf's records with full-parameter "
                        "TTT (eval_val_sliding_ttt of 2026-03-23/29/31 and 2026-04-06/08, eval_val_ttt of 2026-04-04 and 2026-04-09) or "
                        "LoRA adapters (eval_val_ttt_lora of 2026-04-10), and this model has %s; score it without --ttt", m->path, why);
    if (m->mapping) return xsa_fail(err, XSA_EBADINPUT, "%s: its weights are mapped read-only; test-time training writes them", m->path);
    return 0;
}

static float *add_param(struct cpu_trainer *t, const char *name, float *w, long n, int block) {
    struct train_param *p = &t->p[t->n_p++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->w = w, p->n = n, p->block = block;
    p->grad = xsa_calloc((size_t)n, sizeof(float));
    return p->grad;
}

// A layer's attention or MLP matrix (train_param.matrix).
static float *add_matrix(struct cpu_trainer *t, const char *name, float *w, long n, int block) {
    float *g = add_param(t, name, w, n, block);
    t->p[t->n_p - 1].matrix = 1;
    return g;
}

static float *alloc_f(long n) { return xsa_calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

// One sequence of n rows: a window at row 0, slot 0 (every pass but cpu_trainer_windows').
static void one_window(struct cpu_trainer *t, int n) {
    t->S = n, t->n_win = 1;
    t->pw[0] = (struct pass_win){0, n, 0};
    t->row0[0] = 1;
    memset(t->row0 + 1, 0, (size_t)(n - 1));
}

// The RoPE tables for positions pos0 .. pos0 + S_max - 1 (the angles float32 products, as torch's
// Rotary makes them for a batch's whole length).
static void rope_at(struct cpu_trainer *t, long pos0) {
    if (t->rope_pos0 == pos0) return;
    int S = t->S_max, h2 = model_rope_dims(&t->m->cfg) / 2;
    int32_t *pos = xsa_malloc((size_t)S * sizeof *pos);
    for (int i = 0; i < S; i++) pos[i] = (int32_t)(pos0 + i);
    cpu_rope_table(pos, S, &t->m->cfg, t->cos_t, t->sin_t);
    free(pos);
    for (long i = 0; i < (long)S * h2; i++) t->nsin_t[i] = -t->sin_t[i];
    t->rope_pos0 = pos0;
}

struct cpu_trainer *cpu_trainer_open(struct model *m, int S, int n_threads, xsa_error *err) {
    if (cpu_train_check(m, err)) return NULL;
    const struct model_config *c = &m->cfg;
    struct cpu_trainer *t = xsa_calloc(1, sizeof *t);
    t->m = m, t->S = S, t->S_max = S, t->L = c->n_layer, t->C = c->d_model, t->H = c->n_head, t->Hkv = c->n_kv_head, t->hd = c->head_dim;
    t->Q = t->H * t->hd, t->KV = t->Hkv * t->hd, t->F = c->d_ff, t->V = c->vocab_size;
    t->n_enc = c->unet_skips ? c->n_layer / 2 : 0;
    t->n_skip = t->n_enc < c->n_layer - t->n_enc ? t->n_enc : c->n_layer - t->n_enc;
    if (n_threads <= 0) n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n_threads < 1) n_threads = 1;
    t->n_threads = n_threads;
    openblas_set_num_threads(1);  // one OpenBLAS thread per pool task (cpu_backend.c does the same)
    if (!(t->pool = cpu_pool_create(n_threads))) {
        free(t);
        xsa_fail(err, XSA_ERUNTIME, "could not start %d threads", n_threads);
        return NULL;
    }
    int L = t->L, C = t->C, Q = t->Q, KV = t->KV, F = t->F, V = t->V;
    t->p = xsa_calloc((size_t)(32 + 20 * L), sizeof *t->p);  // (at most 16 outside the layers, 18 a layer)
    t->gl = xsa_calloc((size_t)L, sizeof *t->gl);
    char nm[48];
    // Each block's tensors are one parameter however many layers run it (their gradients add up),
    // named by its index among the blocks in order of first use (the records' blocks.N).
    int *first = xsa_calloc((size_t)L * 4, sizeof *first), *blk = first + L, n_blk = 0;  // layer l's block: its first layer, its index
    int *pfirst = first + 2 * L, *phys = first + 3 * L, n_phys = 0, n_repeat = 0;  // ... its matrices' first layer, their physical layer
    for (int l = 0; l < L; l++) {
        first[l] = first_of_block(m, l);
        blk[l] = first[l] == l ? n_blk++ : blk[first[l]];
        for (pfirst[l] = 0; m->layers[pfirst[l]].wv != m->layers[l].wv; pfirst[l]++) {}
        phys[l] = pfirst[l] == l ? n_phys++ : phys[pfirst[l]];
    }
    t->g_tok = add_param(t, "tok_emb.weight", m->tok_emb, (long)V * C, -1);
    if (m->bigram_emb) {
        t->g_bemb = add_param(t, "bigram.embed.weight", m->bigram_emb, (long)c->bigram_vocab * c->bigram_dim, -1);
        if (m->bigram_proj) t->g_bproj = add_param(t, "bigram.proj.weight", m->bigram_proj, (long)C * c->bigram_dim, -1);
        t->g_bscale = add_param(t, "bigram.scale", &m->bigram_scale, 1, -1);
    }
    if (m->smear_gate) t->g_smear = add_param(t, "smear.gate", m->smear_gate, C, -1);
    if (m->smear_fwd_w) {
        t->g_sfw = add_param(t, "smear_gate.weight", m->smear_fwd_w, c->smear_fwd_window, -1);
        t->g_sfl = add_param(t, "smear_lambda", &m->smear_fwd_lambda, 1, -1);
        t->e_raw = alloc_f((long)S * C), t->e_prev = alloc_f(C), t->de_prev = alloc_f(C);
    }
    long skip_rows = c->skip_rows ? c->skip_rows : t->n_skip;  // (2026-04-03/04: fewer rows than skips)
    if (m->skip_weights) t->g_skip = add_param(t, "skip_weights", m->skip_weights, skip_rows * C, -1);
    if (m->skip_gates) t->g_gate = add_param(t, "skip_gates", m->skip_gates, skip_rows * C, -1);
    if (c->lanes_from && c->lanes_split) t->g_lm = add_param(t, "lane_merge", &m->lane_merge, 1, -1);
    if (c->lanes_from && !c->lanes_split) {
        t->g_post = add_param(t, "parallel_post_lambdas", m->lane_post_all, 4L * m->lane_rows, -1);
        t->g_resid = add_param(t, "parallel_resid_lambdas", m->lane_resid_all, 2L * m->lane_rows, -1);
    }
    for (int l = 0; l < L; l++) {
        struct layer_weights *w = &m->layers[l];
        int b = blk[l];
        if (first[l] != l) {
            t->gl[l] = t->gl[first[l]];
            continue;
        }
        int p = phys[l];
        if (pfirst[l] != l) {  // (2026-03-31: a recurrent layer's own block over an earlier layer's matrices, or its MLP's own)
            const struct layer_weights *w0 = &m->layers[pfirst[l]];
            t->gl[l] = t->gl[pfirst[l]];
            snprintf(nm, sizeof nm, "repeat_mlp.%d.fc.weight", n_repeat);
            if (w->w_up != w0->w_up) t->gl[l].up = add_matrix(t, nm, w->w_up, (long)F * C, -1);
            snprintf(nm, sizeof nm, "repeat_mlp.%d.proj.weight", n_repeat++);
            if (w->w_down != w0->w_down) t->gl[l].down = add_matrix(t, nm, w->w_down, (long)C * F, -1);
        } else if (m->pgolf_banks) {  // not in a Block, so TTT_FREEZE_BLOCKS never freezes them (as the records' TTT)
            snprintf(nm, sizeof nm, "qo_bank[%d]", p), t->gl[l].wq = add_matrix(t, nm, w->wq, (long)Q * C, -1);
            snprintf(nm, sizeof nm, "qo_bank[%d]", n_phys + p), t->gl[l].wo = add_matrix(t, nm, w->wo, (long)C * Q, -1);
            snprintf(nm, sizeof nm, "kv_bank[%d]", p), t->gl[l].wk = add_matrix(t, nm, w->wk, (long)KV * C, -1);
            snprintf(nm, sizeof nm, "kv_bank[%d]", n_phys + p), t->gl[l].wv = add_matrix(t, nm, w->wv, (long)KV * C, -1);
            snprintf(nm, sizeof nm, "mlp_up_bank[%d]", p), t->gl[l].up = add_matrix(t, nm, w->w_up, (long)F * C, -1);
            snprintf(nm, sizeof nm, "mlp_down_bank[%d]", p), t->gl[l].down = add_matrix(t, nm, w->w_down, (long)C * F, -1);
        } else {  // (blocks.N: the physical layer's; a block without attention has no attention weights in an int6 dict)
            if (w->wq) {
                snprintf(nm, sizeof nm, "blocks.%d.attn.c_q.weight", p), t->gl[l].wq = add_matrix(t, nm, w->wq, (long)Q * C, p);
                snprintf(nm, sizeof nm, "blocks.%d.attn.c_k.weight", p), t->gl[l].wk = add_matrix(t, nm, w->wk, (long)KV * C, p);
                snprintf(nm, sizeof nm, "blocks.%d.attn.c_v.weight", p), t->gl[l].wv = add_matrix(t, nm, w->wv, (long)KV * C, p);
                snprintf(nm, sizeof nm, "blocks.%d.attn.proj.weight", p), t->gl[l].wo = add_matrix(t, nm, w->wo, (long)C * Q, p);
            }
            snprintf(nm, sizeof nm, "blocks.%d.mlp.fc.weight", p), t->gl[l].up = add_matrix(t, nm, w->w_up, (long)F * C, p);
            snprintf(nm, sizeof nm, "blocks.%d.mlp.proj.weight", p), t->gl[l].down = add_matrix(t, nm, w->w_down, (long)C * F, p);
        }
        snprintf(nm, sizeof nm, "blocks.%d.attn.q_gain", b), t->gl[l].q_gain = add_param(t, nm, w->q_gain, t->H, b);
        snprintf(nm, sizeof nm, "blocks.%d.attn_scale", b), t->gl[l].attn_scale = add_param(t, nm, w->attn_scale, C, b);
        snprintf(nm, sizeof nm, "blocks.%d.mlp_scale", b), t->gl[l].mlp_scale = add_param(t, nm, w->mlp_scale, C, b);
        snprintf(nm, sizeof nm, "blocks.%d.resid_mix", b), t->gl[l].resid_mix = add_param(t, nm, w->resid_mix, 2L * C, b);
        if (w->vr_lambda)
            snprintf(nm, sizeof nm, "blocks.%d.attn.vr_lambda", b), t->gl[l].vr_lambda = add_param(t, nm, w->vr_lambda, 2, b);
        if (w->attn_gate_w) {  // (2026-04-16's output gate, times 2, is attn_gate_proj; the dense and sparse gates attn_gate_w;
            int W = c->attn_gate_window;  //  2026-03-23's GATED_ATTENTION, with a bias, attn_gate)
            snprintf(nm, sizeof nm, w->attn_gate_b ? "blocks.%d.attn.attn_gate.weight" : c->attn_gate_mult == 2.0f ? "blocks.%d.attn.attn_gate_proj.weight" : "blocks.%d.attn.attn_gate_w", b);
            t->gl[l].attn_gate = add_param(t, nm, w->attn_gate_w, (long)t->H * W, b);
        }
        if (w->attn_gate_b)
            snprintf(nm, sizeof nm, "blocks.%d.attn.attn_gate.bias", b), t->gl[l].attn_gate_b = add_param(t, nm, w->attn_gate_b, t->H, b);
        if (w->dtg_w) {
            snprintf(nm, sizeof nm, "blocks.%d.dtg_gate.weight", b), t->gl[l].dtg_w = add_param(t, nm, w->dtg_w, C, b);
            snprintf(nm, sizeof nm, "blocks.%d.dtg_gate.bias", b), t->gl[l].dtg_b = add_param(t, nm, w->dtg_b, 1, b);
        }
    }
    if (m->ve_emb) {
        t->g_veemb = add_param(t, "ve_shared.embed.weight", m->ve_emb, (long)V * c->ve_dim, -1);
        if (m->ve_proj) t->g_veproj = add_param(t, "ve_shared.proj.weight", m->ve_proj, (long)KV * c->ve_dim, -1);
        t->g_vescale = add_param(t, "ve_shared.scale", &m->ve_scale, 1, -1);
        for (int l = 0, i = 0; l < L; l++)  // (a layer that runs an earlier layer's block: that block's scale)
            if (m->layers[l].ve_scale && first[l] == l) {
                snprintf(nm, sizeof nm, "ve_layer_scales.%d", i++);
                t->gl[l].ve_scale = add_param(t, nm, m->layers[l].ve_scale, 1, -1);
            } else if (m->layers[l].ve_scale) {
                t->gl[l].ve_scale = t->gl[first[l]].ve_scale;
            }
    }
    free(first);
    for (int l = c->lanes_from; t->g_post && l < L; l++)  // (the lambdas' rows are the layers' blocks')
        t->gl[l].lane_post = t->g_post + (m->layers[l].lane_post - m->lane_post_all),
        t->gl[l].lane_resid = t->g_resid + (m->layers[l].lane_resid - m->lane_resid_all);
    t->act = xsa_calloc((size_t)L, sizeof *t->act);
    for (int l = 0; l < L; l++) {
        struct layer_act *a = &t->act[l];
        a->xb = alloc_f((long)S * C), a->xin = alloc_f((long)S * C), a->an = alloc_f((long)S * C);
        a->qn = alloc_f((long)S * Q), a->kn = alloc_f((long)S * KV), a->qr = alloc_f((long)S * Q);
        a->qf = alloc_f((long)S * Q), a->kf = alloc_f((long)S * KV), a->v = alloc_f((long)S * KV);
        a->lse = alloc_f((long)S * t->H), a->y = alloc_f((long)S * Q), a->z = alloc_f((long)S * Q);
        a->ao = alloc_f((long)S * C), a->xo = alloc_f((long)S * C), a->mn = alloc_f((long)S * C);
        a->u = alloc_f((long)S * F), a->mo = alloc_f((long)S * C);
        int seq = c->lanes_from && l >= c->lanes_from && !c->lanes_split && !c->lanes_together;
        a->xp = alloc_f(m->skip_gates ? (long)S * C : 0), a->l1 = alloc_f(c->lanes_from && l >= c->lanes_from ? (long)S * C : 0);
        a->l1a = alloc_f(seq ? (long)S * C : 0), a->xp1 = alloc_f(seq && m->skip_gates ? (long)S * C : 0);
        a->ra = alloc_f(S), a->rq = alloc_f((long)S * t->H), a->rk = alloc_f((long)S * t->Hkv), a->rm = alloc_f(S);
        if (m->layers[l].attn_gate_w) a->gate = alloc_f((long)S * t->H), a->zg = alloc_f((long)S * Q);
        if (m->layers[l].vr_lambda && l > 0) a->vraw = alloc_f((long)S * KV);
        if (m->layers[l].dtg_w) a->dtg_pre = alloc_f((long)S * C), a->dtg_g = alloc_f(S), t->dtg_dx = t->dtg_dx ? t->dtg_dx : alloc_f((long)S * C);
    }
    int h2 = model_rope_dims(c) / 2;
    t->skip_out = alloc_f((long)t->n_enc * S * C), t->gskip = alloc_f((long)t->n_enc * S * C);
    t->n0 = alloc_f((long)S * C), t->r0 = alloc_f(S), t->pb = alloc_f((long)S * C), t->bh = xsa_calloc((size_t)S, sizeof *t->bh);
    int De = c->bigram_dim > c->ve_dim ? c->bigram_dim : c->ve_dim;
    t->be_rows = alloc_f((long)S * c->bigram_dim), t->ve_rows = alloc_f((long)S * c->ve_dim), t->t_e = alloc_f((long)S * De);
    if (m->ve_emb) t->vb = alloc_f((long)S * KV), t->dvb = alloc_f((long)S * KV);
    if (c->value_residual) t->dv0 = alloc_f((long)S * KV);
    t->sg = alloc_f(C);
    t->x0 = alloc_f((long)S * C), t->xf = alloc_f((long)S * C), t->rf = alloc_f(S);
    long lanes = c->lanes_from ? (long)S * C : 0;
    int gptj = 0;
    for (int l = 0; l < L; l++) gptj |= c->mlp_reads_input[l];
    t->lane1 = alloc_f(lanes), t->g1 = alloc_f(lanes), t->xl0 = alloc_f(lanes), t->dmn = alloc_f(gptj ? (long)S * C : 0);
    long together = c->lanes_from && !c->lanes_split ? (long)S * C : 0;
    t->da = alloc_f(together), t->dm = alloc_f(together), t->dxin = alloc_f(together);
    t->cos_t = alloc_f((long)S * h2), t->sin_t = alloc_f((long)S * h2), t->nsin_t = alloc_f((long)S * h2);
    t->g = alloc_f((long)S * C), t->gx0 = alloc_f((long)S * C);
    t->t_c = alloc_f((long)S * C), t->t_c2 = alloc_f((long)S * C), t->t_f = alloc_f((long)S * F), t->t_f2 = alloc_f((long)S * F);
    t->t_q = alloc_f((long)S * Q), t->t_q2 = alloc_f((long)S * Q), t->t_kv = alloc_f((long)S * KV), t->t_kv2 = alloc_f((long)S * KV);
    t->t_v = alloc_f((long)S * KV);
    t->lg = alloc_f((long)TILE * V), t->att_stride = 2L * QB * S + (long)S * t->hd, t->att_s = alloc_f((long)n_threads * t->att_stride);
    for (int l = 0; l < L && !t->dgs; l++)
        if (m->layers[l].attn_gate_w) t->dgs = alloc_f((long)S * t->H);
    t->pw = xsa_calloc((size_t)S, sizeof *t->pw), t->row0 = xsa_calloc((size_t)S, 1), t->xcat = xsa_calloc((size_t)S, sizeof *t->xcat);
    one_window(t, S);
    t->rope_pos0 = -1, t->seg_prev = -1;
    rope_at(t, 0);
    return t;
}

void cpu_trainer_close(struct cpu_trainer *t) {
    if (!t) return;
    for (int i = 0; i < t->n_p; i++) free(t->p[i].grad);
    for (int l = 0; l < t->L; l++) {
        struct layer_act *a = &t->act[l];
        float *f[] = {a->xp, a->l1, a->l1a, a->xp1, a->xb, a->xin, a->an, a->qn, a->kn, a->qr, a->qf, a->kf, a->v, a->lse, a->y, a->z,
                      a->ao, a->xo, a->mn, a->u, a->mo, a->ra, a->rq, a->rk, a->rm};
        for (size_t i = 0; i < sizeof f / sizeof *f; i++) free(f[i]);
    }
    for (int l = 0; l < t->L; l++) {
        struct layer_act *a = &t->act[l];
        float *h[] = {a->hq, a->hk, a->hv, a->ho, a->hm, a->gate, a->zg, a->vraw, a->dtg_pre, a->dtg_g};
        for (size_t i = 0; i < sizeof h / sizeof *h; i++) free(h[i]);
    }
    free(t->dgs), free(t->e_raw), free(t->e_prev), free(t->de_prev), free(t->dv0), free(t->dtg_dx);
    for (int s = 0; s < t->n_slots; s++) {
        for (int i = 0; i < t->ls[s].n_p; i++) free(t->ls[s].p[i].w), free(t->ls[s].p[i].grad);
        for (int k = 0; k < LORA_KINDS; k++) free(t->ls[s].kind[k]);
        free(t->ls[s].p);
    }
    free(t->ls), free(t->h_lm), free(t->dh), free(t->dho), free(t->pw), free(t->row0), free(t->xcat);
    float *f[] = {t->da, t->dm, t->dxin, t->lane1, t->g1, t->xl0, t->dmn, t->sg, t->be_rows, t->ve_rows, t->vb, t->dvb, t->t_e, t->skip_out, t->gskip, t->n0, t->r0, t->pb, t->x0, t->xf, t->rf, t->cos_t, t->sin_t, t->nsin_t, t->g,
                  t->gx0, t->t_c, t->t_c2, t->t_f, t->t_f2, t->t_q, t->t_q2, t->t_kv, t->t_kv2, t->t_v, t->lg, t->att_s};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) free(f[i]);
    free(t->bh);
    free(t->act);
    free(t->gl);
    free(t->p);
    cpu_pool_destroy(t->pool);
    free(t);
}

int cpu_trainer_params(const struct cpu_trainer *t, struct train_param **out) {
    *out = t->p;
    return t->n_p;
}

// The skip_weights row decoder layer dec adds its encoder output with, or -1 for none: dec
// itself, but past the file's rows (2026-04-03/04, skip_rows) the last row (2026-04-03) or none
// (2026-04-04, skip_stop), as the forward's add_skip.
static int skip_row(const struct cpu_trainer *t, int dec) {
    const struct model_config *c = &t->m->cfg;
    if (!t->n_enc || dec < 0 || dec >= t->n_skip) return -1;
    if (c->skip_rows && dec >= c->skip_rows) return c->skip_stop ? -1 : c->skip_rows - 1;
    return dec;
}

// LN_SCALE's 1 / sqrt(i + 1), i the layer's block's index (a looped record's Block(layer_idx=i)).
static float layer_ln(const struct model_config *c, int l) { return c->ln_scale ? (float)(1.0 / sqrt(c->ln_layer[l] + 1.0)) : 1.0f; }

// The U-Net skip of row `row` from src into x (S rows): x = lerp(sw src, x, sigmoid(gate)) in
// torch.lerp's two forms, x as it was kept in xp (gated skips), or x += sw src.
static void skip_fwd(struct cpu_trainer *t, int row, const float *src, float *x, float *xp) {
    const struct model *m = t->m;
    int S = t->S, C = t->C;
    const float *sw = m->skip_weights + (long)row * C;
    if (!m->skip_gates) {
        scaled_add(x, x, sw, src, S, C);
        return;
    }
    const float *gt = m->skip_gates + (long)row * C;
    memcpy(xp, x, (size_t)S * C * sizeof *x);
    for (int r = 0; r < S; r++)
        for (int k = 0; k < C; k++) {
            long i = (long)r * C + k;
            float sk = sw[k] * src[i], wt = sigmoidf(gt[k]), d = x[i] - sk;
            x[i] = wt < 0.5f ? sk + wt * d : x[i] - d * (1.0f - wt);
        }
}

// Its backward from g (dL/dx after it, made dL/dx before it): the skip's weights', gates' and
// source's (gs) gradients.
static void skip_bwd(struct cpu_trainer *t, int row, const float *src, const float *xp, float *g, float *gs) {
    const struct model *m = t->m;
    int S = t->S, C = t->C;
    const float *sw = m->skip_weights + (long)row * C, *gt = m->skip_gates ? m->skip_gates + (long)row * C : NULL;
    float *gsw = t->g_skip + (long)row * C;
    for (int r = 0; r < S; r++)
        for (int k = 0; k < C; k++) {
            long i = (long)r * C + k;
            if (gt) {  // x = (1 - s) sw e + s xp, s = sigmoid(gate)
                float wt = sigmoidf(gt[k]), sk = sw[k] * src[i], ds = (1.0f - wt) * g[i];
                t->g_gate[(long)row * C + k] += g[i] * (xp[i] - sk) * wt * (1.0f - wt);
                gsw[k] += ds * src[i];
                gs[i] += sw[k] * ds;
                g[i] *= wt;
            } else {
                gsw[k] += g[i] * src[i];
                gs[i] += sw[k] * g[i];
            }
        }
}

// A sublayer's read out = m[0] lane + m[1] x0 (resid_mix m, (2, C)) over the S rows.
static void mix_fwd(const struct cpu_trainer *t, const float *m, const float *lane, float *out) {
    int C = t->C;
    for (int r = 0; r < t->S; r++)
        for (int k = 0; k < C; k++) out[(long)r * C + k] = m[k] * lane[(long)r * C + k] + m[C + k] * t->x0[(long)r * C + k];
}

// The backward of a sublayer's read m[0] lane + m[1] x0 (resid_mix m, (2, C)) from d, its
// gradient: m's into gm, x0's into t->gx0, and m[0] d added to the lane's gradient gl.
static void mix_bwd(struct cpu_trainer *t, const float *m, float *gm, const float *d, const float *lane, float *gl) {
    int C = t->C;
    for (int r = 0; r < t->S; r++)
        for (int k = 0; k < C; k++) {
            long i = (long)r * C + k;
            gm[k] += d[i] * lane[i];
            gm[C + k] += d[i] * t->x0[i];
            t->gx0[i] += m[C + k] * d[i];
            gl[i] += m[k] * d[i];
        }
}

// The backward of a 2026-03-31 sublayer's update of both lanes, lane k = r lane k + post[k] y
// (y = scale out; l0, l1 the lanes before it), from g and t->g1 (the lanes' gradients after it,
// made theirs before it): dL/dy into dy, r's gradient added to *gr, post's to gp[0..1].
static void lanes_seq_bwd(struct cpu_trainer *t, const float *scale, const float *out, float r, const float *post, const float *l0,
                          const float *l1, float *g, float *dy, double *gr, double *gp) {
    int C = t->C;
    for (long i = 0; i < (long)t->S * C; i++) {
        float y = scale[i % C] * out[i];
        *gr += (double)g[i] * l0[i] + (double)t->g1[i] * l1[i];
        gp[0] += (double)g[i] * y, gp[1] += (double)t->g1[i] * y;
        dy[i] = post[0] * g[i] + post[1] * t->g1[i];
        g[i] *= r, t->g1[i] *= r;
    }
}

// Forward of one sequence x (S tokens) up to the final norm (t->xf), activations kept.
static void forward_body(struct cpu_trainer *t, const int32_t *x) {
    struct model *m = t->m;
    const struct model_config *c = &m->cfg;
    int S = t->S, C = t->C, Q = t->Q, KV = t->KV, F = t->F, H = t->H, Hkv = t->Hkv, hd = t->hd;
    int rd = model_rope_dims(c);
    float eps = c->norm_eps;
    // embedding, bigram, norm, smear
    float *e = t->t_c;
    gather_rows(e, m->tok_emb, x, S, C);
    if (m->bigram_emb) {  // e += scale * proj(bigram_emb[(36313 t xor 27191 t_prev) mod (V_b - 1)])
        int mod = c->bigram_vocab - 1, D = c->bigram_dim;
        for (int i = 0; i < S; i++)
            t->bh[i] = t->row0[i] ? mod : (int32_t)((((uint32_t)36313 * (uint32_t)x[i]) ^ ((uint32_t)27191 * (uint32_t)x[i - 1])) % (uint32_t)mod);
        gather_rows(t->be_rows, m->bigram_emb, t->bh, S, D);
        if (m->bigram_proj) linear(t, t->be_rows, m->bigram_proj, t->pb, S, D, C);
        else memcpy(t->pb, t->be_rows, (size_t)S * C * sizeof *t->pb);  // (D == C)
        for (long i = 0; i < (long)S * C; i++) e[i] += t->pb[i] * m->bigram_scale;
    }
    if (m->ve_emb) {  // the shared value embedding's rows, projected once for every ve layer
        gather_rows(t->ve_rows, m->ve_emb, x, S, c->ve_dim);
        if (m->ve_proj) linear(t, t->ve_rows, m->ve_proj, t->vb, S, c->ve_dim, KV);
        else memcpy(t->vb, t->ve_rows, (size_t)S * KV * sizeof *t->vb);  // (ve_dim == KV)
    }
    if (m->smear_fwd_w) memcpy(t->e_raw, e, (size_t)S * C * sizeof *e);
    if (m->smear_fwd_w && t->seg_prev >= 0) gather_rows(t->e_prev, m->tok_emb, &t->seg_prev, 1, C);
    if (m->smear_fwd_w)  // 2026-04-16's SmearGate: e_t += lambda sigmoid(w . e_t[:W]) e_(t-1), rows from the last (raw e_(t-1))
        for (int i = S - 1; i >= 0; i--) {  // (a window's first row: none; a segment's: the token before it)
            if ((t->row0[i] && t->seg_prev < 0) || (c->smear_fwd_bos_fix && x[i] == c->bos_id)) continue;
            double z = 0;
            for (int k = 0; k < c->smear_fwd_window; k++) z += (double)m->smear_fwd_w[k] * e[(long)i * C + k];
            float g = m->smear_fwd_lambda * sigmoidf((float)z);
            const float *ep = t->row0[i] ? t->e_prev : e + (long)(i - 1) * C;
            for (int k = 0; k < C; k++) e[(long)i * C + k] += g * ep[k];
        }
    rms_fwd(t, e, t->n0, t->r0, S, C, eps, 1.0f);
    float *sg = t->sg;  // sigmoid(smear gate), once per channel (backward reads it too)
    for (int k = 0; m->smear_gate && k < C; k++) sg[k] = sigmoidf(m->smear_gate[k]);
    for (int i = 0; i < S; i++)
        for (int k = 0; k < C; k++) {
            float n0 = t->n0[(long)i * C + k];
            t->x0[(long)i * C + k] = m->smear_gate ? (1 - sg[k]) * n0 + sg[k] * (t->row0[i] ? 0.0f : t->n0[(long)(i - 1) * C + k]) : n0;
        }
    float *xc = t->g;  // the residual stream as it goes
    memcpy(xc, t->x0, (size_t)S * C * sizeof *xc);
    for (int l = 0; l < t->L; l++) {
        struct layer_act *a = &t->act[l];
        const struct layer_weights *w = &m->layers[l];
        int dec = l - t->n_enc, lane = c->lanes_from && l >= c->lanes_from, first = lane && l == c->lanes_from;
        // seq: 2026-03-31's lanes, the attention on lane 0 and then the MLP on lane 1, each mixed
        // with x0 and writing both lanes, the skips into both
        int together = lane && c->lanes_together, seq = lane && !together && !c->lanes_split, row = skip_row(t, dec);
        if (first && (together || seq)) memcpy(t->lane1, xc, (size_t)S * C * sizeof *xc);  // (both lanes x, then the skip)
        const float *src = row >= 0 ? t->skip_out + (long)(t->n_enc - 1 - dec) * S * C : NULL;
        if (row >= 0 && (!lane || first || c->lanes_skip_lane0 || together || seq)) skip_fwd(t, row, src, xc, a->xp);  // (into lane 0)
        if (row >= 0 && seq) skip_fwd(t, row, src, t->lane1, a->xp1);
        if (first && !together && !seq) memcpy(t->lane1, xc, (size_t)S * C * sizeof *xc);  // lane 1: x as the lanes split
        memcpy(a->xb, xc, (size_t)S * C * sizeof *xc);
        if (seq) memcpy(a->l1a, t->lane1, (size_t)S * C * sizeof *xc);
        mix_fwd(t, w->resid_mix, xc, a->xin);
        float ln = layer_ln(c, l);
        if (!c->attn_off[l]) {  // (DISABLE_LAYER0_ATTN: none)
            rms_fwd(t, a->xin, a->an, a->ra, S, C, eps, ln);
            linear(t, a->an, w->wq, a->qn, S, C, Q);
            linear(t, a->an, w->wk, a->kn, S, C, KV);
            linear(t, a->an, w->wv, a->v, S, C, KV);
            lora_fwd_w(t, LORA_Q, l, a->an, a->hq, a->qn);
            lora_fwd_w(t, LORA_K, l, a->an, a->hk, a->kn);
            lora_fwd_w(t, LORA_V, l, a->an, a->hv, a->v);
            if (w->ve_scale)  // v += (vb * s) * ls, as the forward adds it
                for (long i = 0; i < (long)S * KV; i++) a->v[i] += t->vb[i] * m->ve_scale * w->ve_scale[0];
            if (a->vraw) {  // VALUE_RESIDUAL: v = lambda0 v0 + lambda1 v, v0 layer 0's v
                const float *v0 = t->act[0].v;
                memcpy(a->vraw, a->v, (size_t)S * KV * sizeof(float));
                for (long i = 0; i < (long)S * KV; i++) a->v[i] = w->vr_lambda[0] * v0[i] + w->vr_lambda[1] * a->vraw[i];
            }
            rms_fwd(t, a->qn, a->qn, a->rq, S * H, hd, eps, 1.0f);
            rms_fwd(t, a->kn, a->kn, a->rk, S * Hkv, hd, eps, 1.0f);
            memcpy(a->qr, a->qn, (size_t)S * Q * sizeof(float));
            memcpy(a->kf, a->kn, (size_t)S * KV * sizeof(float));
            for (int i = 0; i < t->n_win; i++) {  // (each window from the tables' first position)
                const struct pass_win *pw = &t->pw[i];
                cpu_rope_apply(a->qr + (long)pw->off * Q, pw->n, Q, H, hd, rd, 1, t->cos_t, t->sin_t);
                cpu_rope_apply(a->kf + (long)pw->off * KV, pw->n, KV, Hkv, hd, rd, 1, t->cos_t, t->sin_t);
            }
            for (int i = 0; i < S; i++)
                for (int h = 0; h < H; h++)
                    for (int d = 0; d < hd; d++) a->qf[(long)i * Q + h * hd + d] = a->qr[(long)i * Q + h * hd + d] * w->q_gain[h];
            struct att_job aj = {t, a, c->xsa[l], NULL, NULL, NULL, NULL};
            cpu_pool_run(t->pool, t->n_win * Hkv, att_fwd_task, &aj);
            if (a->gate) {  // each head's output times mult sigmoid(scale (w_h . an[:W]) + b_h) (2026-04-16's output gate)
                int W = c->attn_gate_window;
                for (int i = 0; i < S; i++)
                    for (int h = 0; h < H; h++) {
                        double z = 0;
                        for (int k = 0; k < W; k++) z += (double)w->attn_gate_w[(long)h * W + k] * a->an[(long)i * C + k];
                        float g = c->attn_gate_mult * sigmoidf(c->attn_gate_scale * (float)z + (w->attn_gate_b ? w->attn_gate_b[h] : 0));
                        a->gate[(long)i * H + h] = g;
                        for (int d = 0; d < hd; d++) a->zg[(long)i * Q + h * hd + d] = a->z[(long)i * Q + h * hd + d] * g;
                    }
            }
            linear(t, a->gate ? a->zg : a->z, w->wo, a->ao, S, Q, C);
            lora_fwd_w(t, LORA_O, l, a->an, a->ho, a->ao);  // (the adapter reads the attention's input)
        }
        if (seq && c->attn_off[l]) {  // (the lanes as they came: lane 0 into xo, lane 1 into l1, the MLP's)
            memcpy(a->xo, a->xb, (size_t)S * C * sizeof *xc);
            memcpy(a->l1, a->l1a, (size_t)S * C * sizeof *xc);
        } else if (seq) {  // lane k = r[0] lane k + post[0][k] as ao
            float r0 = w->lane_resid[0], p0 = w->lane_post[0], p1 = w->lane_post[1];
            for (long i = 0; i < (long)S * C; i++) {
                float at = w->attn_scale[i % C] * a->ao[i];
                a->xo[i] = r0 * a->xb[i] + p0 * at;
                a->l1[i] = r0 * a->l1a[i] + p1 * at;
            }
        } else if (c->attn_off[l]) {
            memcpy(a->xo, a->xin, (size_t)S * C * sizeof *xc);
        } else {
            scaled_add(a->xo, a->xin, w->attn_scale, a->ao, S, C);
        }
        // The MLP reads RMSNorm(xo) (sequential), the attention's input rows (GPT-J: the norms are
        // weightless, so an), or lane 1 (two lanes: attention went on lane 0, the MLP on lane 1).
        const float *mlp_res = a->xo;
        if (seq) {  // RMSNorm(m0 lane 1 + m1 x0)
            mix_fwd(t, w->resid_mix, a->l1, t->t_c2);
            rms_fwd(t, t->t_c2, a->mn, a->rm, S, C, eps, ln);
        } else if (lane) {
            memcpy(a->l1, t->lane1, (size_t)S * C * sizeof *xc);
            rms_fwd(t, a->l1, a->mn, a->rm, S, C, eps, ln);
            mlp_res = a->l1;
        } else if (c->mlp_reads_input[l] && !c->attn_off[l]) {
            memcpy(a->mn, a->an, (size_t)S * C * sizeof *xc);
        } else {
            rms_fwd(t, a->xo, a->mn, a->rm, S, C, eps, ln);
        }
        linear(t, a->mn, w->w_up, a->u, S, C, F);
        mlp_act(t, a->u, t->t_f, NULL, c->mlp_leaky_slope, (long)S * F);
        linear(t, t->t_f, w->w_down, a->mo, S, F, C);
        lora_fwd_w(t, LORA_MLP, l, a->mn, a->hm, a->mo);
        if (together) {  // lane 0 = r0 lane 0 + p00 a + p10 m, lane 1 = r1 lane 1 + p01 a + p11 m (a, m the scaled outputs)
            const float *r = w->lane_resid, *pp = w->lane_post;
            for (long i = 0; i < (long)S * C; i++) {
                float at = w->attn_scale[i % C] * a->ao[i], mt = w->mlp_scale[i % C] * a->mo[i];
                xc[i] = r[0] * a->xb[i] + pp[0] * at + pp[2] * mt;
                t->lane1[i] = r[1] * a->l1[i] + pp[1] * at + pp[3] * mt;
            }
        } else if (seq) {  // lane k = r[1] lane k + post[1][k] ms mo
            const float *r = w->lane_resid, *pp = w->lane_post;
            for (long i = 0; i < (long)S * C; i++) {
                float mt = w->mlp_scale[i % C] * a->mo[i];
                xc[i] = r[1] * a->xo[i] + pp[2] * mt;
                t->lane1[i] = r[1] * a->l1[i] + pp[3] * mt;
            }
        } else if (lane) {
            scaled_add(t->lane1, mlp_res, w->mlp_scale, a->mo, S, C);
            memcpy(xc, a->xo, (size_t)S * C * sizeof *xc);
        } else {
            scaled_add(xc, mlp_res, w->mlp_scale, a->mo, S, C);
        }
        if (w->dtg_w) {  // DTG_ENABLED: x = x_in + g (x - x_in), g = sigmoid(w . x_in + b) (x_in detached)
            memcpy(a->dtg_pre, xc, (size_t)S * C * sizeof *xc);
            for (int r = 0; r < S; r++) {
                const float *xi = a->xin + (long)r * C;
                double z = 0;
                for (int k = 0; k < C; k++) z += (double)w->dtg_w[k] * xi[k];
                float g = 1.0f / (1.0f + expf(-((float)z + w->dtg_b[0])));
                a->dtg_g[r] = g;
                for (int k = 0; k < C; k++) xc[(long)r * C + k] = xi[k] + g * (xc[(long)r * C + k] - xi[k]);
            }
        }
        if (l < t->n_enc) memcpy(t->skip_out + (long)l * S * C, xc, (size_t)S * C * sizeof *xc);
    }
    if (c->lanes_from && !c->lanes_split) {  // _final_parallel_hidden: the mean, lane 0 or lane 1 (PARALLEL_FINAL_LANE)
        for (long i = 0; i < (long)S * C; i++)
            xc[i] = c->lanes_final == 0 ? 0.5f * (xc[i] + t->lane1[i]) : c->lanes_final == 1 ? xc[i] : t->lane1[i];
    } else if (c->lanes_from) {  // lane_merge m lane 0 + (1 - m) lane 1
        memcpy(t->xl0, xc, (size_t)S * C * sizeof *xc);
        for (long i = 0; i < (long)S * C; i++) xc[i] = m->lane_merge * t->xl0[i] + (1.0f - m->lane_merge) * t->lane1[i];
    }
    rms_fwd(t, xc, t->xf, t->rf, S, C, eps, 1.0f);
}

// The head adapter of slot `slot`, or NULL.
static const struct lora_pair *head_lora(const struct cpu_trainer *t, int slot) {
    return t->ls && t->ls[slot].head.A ? &t->ls[slot].head : NULL;
}

// The logits of rows [r0, r0 + n) of t->xf into t->lg (n <= TILE), by slot's head adapter, before the cap.
static void head_tile(struct cpu_trainer *t, int r0, int n, int slot) {
    const struct lora_pair *lh = head_lora(t, slot);
    linear(t, t->xf + (long)r0 * t->C, t->m->tok_emb, t->lg, n, t->C, t->V);
    if (lh) lora_fwd(t, lh, t->xf + (long)r0 * t->C, t->h_lm, t->lg, n);
}

// log-sum-exp of a row of logits, in double; *arg the first index of its largest value.
static double row_lse(const float *lg, int V, int *arg) {
    float mx = lg[0];
    int am = 0;
    for (int v = 1; v < V; v++)
        if (lg[v] > mx) mx = lg[v], am = v;
    double sum = 0;
    for (int v = 0; v < V; v++) sum += exp((double)lg[v] - mx);
    *arg = am;
    return mx + log(sum);
}

// A tile's rows of logits, one task each over the pool: the cap, the row's loss (into loss[r],
// and nll[r] and greedy[r] when given) and, with grad, dL/d(logits) of the loss times inv_n in
// place of the logits.
struct head_job {
    float *lg, cap, inv_n;
    int V, grad;
    const int32_t *y;
    double *loss;
    float *nll;
    uint8_t *greedy;
};

static void head_row_task(void *ctx, int r, int w) {
    (void)w;
    const struct head_job *j = ctx;
    float *lg = j->lg + (long)r * j->V, cap = j->cap;
    int am, tg = j->y[r];
    for (int v = 0; v < j->V; v++) lg[v] = cap * tanhf(lg[v] / cap);
    double lse = row_lse(lg, j->V, &am);
    j->loss[r] = lse - lg[tg];
    if (j->nll) j->nll[r] = (float)(lse - lg[tg]), j->greedy[r] = am == tg;
    for (int v = 0; j->grad && v < j->V; v++) {
        float p = (float)exp((double)lg[v] - lse), th = lg[v] / cap;
        lg[v] = (p - (v == tg)) * j->inv_n * (1.0f - th * th);
    }
}

// Runs head_row_task over the tile's n rows; their losses added to *sum in row order (one
// running sum over the tiles, as a loop over the rows would add them).
static void head_rows(struct cpu_trainer *t, int n, const int32_t *y, int grad, float inv_n, float *nll, uint8_t *greedy, double *sum) {
    double loss[TILE];
    struct head_job j = {t->lg, t->m->cfg.logit_softcap, inv_n, t->V, grad, y, loss, nll, greedy};
    cpu_pool_run(t->pool, n, head_row_task, &j);
    for (int r = 0; sum && r < n; r++) *sum += loss[r];
}

// The head of a forward_body for rows [r0, r1) of t->xf, targets y[0 .. r1 - r0), by slot's head
// adapter: their summed loss (and each one's into nll[r - r0], whether it is the argmax into
// greedy[r - r0], when given); dL/dxf of the loss times inv_n into those rows of t->g (the caller
// zeroes the others) and the head's share of dL/dtok_emb (and of its adapter's).
static double head_grad(struct cpu_trainer *t, int r0, int r1, int slot, const int32_t *y, float inv_n, float *nll, uint8_t *greedy) {
    int C = t->C, V = t->V;
    const struct lora_pair *lh = head_lora(t, slot);
    double loss = 0;
    float *dxf = t->g;  // (the residual stream is done with)
    for (int q0 = r0; q0 < r1; q0 += TILE) {
        int n = r1 - q0 < TILE ? r1 - q0 : TILE;
        head_tile(t, q0, n, slot);
        head_rows(t, n, y + (q0 - r0), 1, inv_n, nll ? nll + (q0 - r0) : NULL, nll ? greedy + (q0 - r0) : NULL, &loss);
        linear_dx(t, t->lg, t->m->tok_emb, dxf + (long)q0 * C, n, C, V, 0.0f);
        base_dw(t, t->lg, t->xf + (long)q0 * C, t->g_tok, n, C, V);
        if (lh) lora_bwd(t, lh, t->lg, t->xf + (long)q0 * C, t->h_lm, dxf + (long)q0 * C, n);
    }
    return loss;
}

// The loss of rows [r0, r1) of a forward_body, targets y[0 .. r1 - r0), by slot's head adapter,
// into nll[r - r0] and greedy[r - r0], without gradients.
static void head_score(struct cpu_trainer *t, int r0, int r1, int slot, const int32_t *y, float *nll, uint8_t *greedy) {
    for (int q0 = r0; q0 < r1; q0 += TILE) {
        int k = r1 - q0 < TILE ? r1 - q0 : TILE;
        head_tile(t, q0, k, slot);
        head_rows(t, k, y + (q0 - r0), 0, 0.0f, nll + (q0 - r0), greedy + (q0 - r0), NULL);
    }
}

void cpu_trainer_score(struct cpu_trainer *t, const int32_t *x, const int32_t *y, int from, int n, float *nll, uint8_t *greedy) {
    one_window(t, t->S_max);
    rope_at(t, 0);
    forward_body(t, x);
    head_score(t, from, n, 0, y + from, nll, greedy);
}

static void backward_seq(struct cpu_trainer *t, const int32_t *x) {
    struct model *m = t->m;
    const struct model_config *c = &m->cfg;
    int S = t->S, C = t->C, Q = t->Q, KV = t->KV, F = t->F, H = t->H, Hkv = t->Hkv, hd = t->hd;
    int rd = model_rope_dims(c);
    float *g = t->t_c2;  // dL/d(residual stream) as it goes back (lane 0's, with two lanes); t->g holds dL/dxf
    rms_bwd(t, t->g, t->xf, t->rf, g, S, C, 1.0f, 0);
    if (c->lanes_from && !c->lanes_split) {  // x = (lane 0 + lane 1) / 2, lane 0 or lane 1
        for (long i = 0; i < (long)S * C; i++) {
            t->g1[i] = c->lanes_final == 0 ? 0.5f * g[i] : c->lanes_final == 1 ? 0.0f : g[i];
            g[i] = c->lanes_final == 0 ? 0.5f * g[i] : c->lanes_final == 1 ? g[i] : 0.0f;
        }
    } else if (c->lanes_from) {  // x = m lane0 + (1 - m) lane1
        float lm = m->lane_merge;
        double d = 0;
        for (long i = 0; i < (long)S * C; i++) {
            d += (double)g[i] * (t->xl0[i] - t->lane1[i]);
            t->g1[i] = (1.0f - lm) * g[i];
            g[i] *= lm;
        }
        t->g_lm[0] += (float)d;
    }
    memset(t->gx0, 0, (size_t)S * C * sizeof(float));
    if (t->dvb) memset(t->dvb, 0, (size_t)S * KV * sizeof(float));
    if (t->dv0) memset(t->dv0, 0, (size_t)S * KV * sizeof(float));
    memset(t->gskip, 0, (size_t)t->n_enc * S * C * sizeof(float));
    for (int l = t->L - 1; l >= 0; l--) {
        struct layer_act *a = &t->act[l];
        const struct layer_weights *w = &m->layers[l];
        float ln = layer_ln(c, l);
        int lane = c->lanes_from && l >= c->lanes_from, first = lane && l == c->lanes_from;
        int gptj = !lane && c->mlp_reads_input[l] && !c->attn_off[l];
        int together = lane && c->lanes_together, seq = lane && !together && !c->lanes_split, off = c->attn_off[l];
        const float *m0 = w->resid_mix, *m1 = m0 + C;
        float *gm = t->gl[l].resid_mix;
        double gr[2] = {0, 0}, gp[4] = {0, 0, 0, 0};  // (the lane lambdas' gradients)
        if (l < t->n_enc) {
            const float *gs = t->gskip + (long)l * S * C;
            for (long i = 0; i < (long)S * C; i++) g[i] += gs[i];
        }
        if (w->dtg_w) {  // DTG: dL/d(out) = g dL/dx, dL/d(x_in) (1 - g) dL/dx kept for later; none through the gate's input
            float *gw = t->gl[l].dtg_w;
            for (int r = 0; r < S; r++) {
                const float *xi = a->xin + (long)r * C, *pre = a->dtg_pre + (long)r * C;
                float *gx = g + (long)r * C, *dx = t->dtg_dx + (long)r * C, gt = a->dtg_g[r];
                double dz = 0;
                for (int k = 0; k < C; k++) dz += (double)gx[k] * (pre[k] - xi[k]);
                float dl = (float)dz * gt * (1.0f - gt);
                t->gl[l].dtg_b[0] += dl;
                for (int k = 0; k < C; k++) gw[k] += dl * xi[k], dx[k] = (1.0f - gt) * gx[k], gx[k] *= gt;
            }
        }
        if (seq) lanes_seq_bwd(t, w->mlp_scale, a->mo, w->lane_resid[1], w->lane_post + 2, a->xo, a->l1, g, t->dm, &gr[1], gp + 2);
        if (together) {  // the lanes' update: da, dm the sublayers' (scaled) outputs' gradients; g, g1 the lanes' inputs'
            const float *r = w->lane_resid, *pp = w->lane_post;
            for (long i = 0; i < (long)S * C; i++) {
                float at = w->attn_scale[i % C] * a->ao[i], mt = w->mlp_scale[i % C] * a->mo[i];
                gr[0] += (double)g[i] * a->xb[i], gr[1] += (double)t->g1[i] * a->l1[i];
                gp[0] += (double)g[i] * at, gp[1] += (double)t->g1[i] * at, gp[2] += (double)g[i] * mt, gp[3] += (double)t->g1[i] * mt;
                t->da[i] = pp[0] * g[i] + pp[1] * t->g1[i];
                t->dm[i] = pp[2] * g[i] + pp[3] * t->g1[i];
                g[i] *= r[0], t->g1[i] *= r[1];
            }
        }
        // MLP: out = res + ms * mo, res xo (lane 1's input on two lanes)
        float *gms = t->gl[l].mlp_scale, *gas = t->gl[l].attn_scale;
        float *gout = lane ? t->g1 : g;
        float *dmo = t->t_c;
        scaled_add_bwd(together || seq ? t->dm : gout, a->mo, w->mlp_scale, gms, dmo, S, C);
        float *hsq = t->t_f, *dh = t->t_f2;
        if (!t->frozen) mlp_act(t, a->u, hsq, NULL, c->mlp_leaky_slope, (long)S * F);  // (only dW reads it)
        base_dw(t, dmo, hsq, t->gl[l].down, S, F, C);
        linear_dx(t, dmo, w->w_down, dh, S, F, C, 0.0f);
        mlp_act(t, a->u, NULL, dh, c->mlp_leaky_slope, (long)S * F);
        base_dw(t, dh, a->mn, t->gl[l].up, S, C, F);
        float *dmn = gptj ? t->dmn : t->t_c;
        lora_bwd_out_w(t, LORA_MLP, l, dmo, a->hm, t->dho);  // (before dmn takes dmo's buffer)
        linear_dx(t, dh, w->w_up, dmn, S, C, F, 0.0f);
        lora_bwd_in_w(t, LORA_MLP, l, t->dho, a->mn, dmn);
        if (!gptj) rms_bwd(t, dmn, a->mn, a->rm, seq ? t->dxin : gout, S, C, ln, !seq);  // g = dL/dxo (two lanes: g1 = dL/d(lane 1 in))
        if (seq) mix_bwd(t, m0, gm, t->dxin, a->l1, t->g1);  // (seq: the MLP read m0 lane 1 + m1 x0)
        if (seq && !off) lanes_seq_bwd(t, w->attn_scale, a->ao, w->lane_resid[0], w->lane_post, a->xb, a->l1a, g, t->da, &gr[0], gp);
        for (int k = 0; (together || seq) && k < 2; k++) t->gl[l].lane_resid[k] += (float)gr[k];
        for (int k = 0; (together || seq) && k < 4; k++) t->gl[l].lane_post[k] += (float)gp[k];
        if (!off) {  // (DISABLE_LAYER0_ATTN: xo = xin)
            // attention: xo = xin + as * ao
            float *dao = t->t_c;
            scaled_add_bwd(together || seq ? t->da : g, a->ao, w->attn_scale, gas, dao, S, C);
            lora_bwd_out_w(t, LORA_O, l, dao, a->ho, t->dho);  // (dao's buffer is reused; dL/d(an) is assembled later)
            float *dz = t->t_q;
            base_dw(t, dao, a->gate ? a->zg : a->z, t->gl[l].wo, S, Q, C);
            linear_dx(t, dao, w->wo, dz, S, Q, C, 0.0f);
            if (a->gate)  // through the gate: dz g into the attention, dL/d(its logit) kept for dL/d(an)
                for (int i = 0; i < S; i++)
                    for (int h = 0; h < H; h++) {
                        float g = a->gate[(long)i * H + h], *d = dz + (long)i * Q + h * hd;
                        const float *z = a->z + (long)i * Q + h * hd;
                        double dg = 0;
                        for (int k = 0; k < hd; k++) dg += (double)d[k] * z[k], d[k] *= g;
                        t->dgs[(long)i * H + h] = (float)dg * g * (1.0f - g / c->attn_gate_mult);
                    }
            float *dq = t->t_q2, *dk = t->t_kv, *dv = t->t_v;
            memset(dk, 0, (size_t)S * KV * sizeof(float));
            memset(dv, 0, (size_t)S * KV * sizeof(float));
            struct att_job aj = {t, a, c->xsa[l], dz, dq, dk, dv};
            cpu_pool_run(t->pool, t->n_win * Hkv, att_bwd_task, &aj);
            // q_gain, RoPE, the per-head norms
            float *gq = t->gl[l].q_gain;
            for (int i = 0; i < S; i++)
                for (int h = 0; h < H; h++) {
                    float *d = dq + (long)i * Q + (long)h * hd;
                    gq[h] += (float)dot_f(d, a->qr + (long)i * Q + (long)h * hd, hd);
                    for (int k = 0; k < hd; k++) d[k] *= w->q_gain[h];
                }
            for (int i = 0; i < t->n_win; i++) {
                const struct pass_win *pw = &t->pw[i];
                cpu_rope_apply(dq + (long)pw->off * Q, pw->n, Q, H, hd, rd, 1, t->cos_t, t->nsin_t);
                cpu_rope_apply(dk + (long)pw->off * KV, pw->n, KV, Hkv, hd, rd, 1, t->cos_t, t->nsin_t);
            }
            rms_bwd(t, dq, a->qn, a->rq, dq, S * H, hd, 1.0f, 0);
            rms_bwd(t, dk, a->kn, a->rk, dk, S * Hkv, hd, 1.0f, 0);
            if (a->vraw) {  // v = lambda0 v0 + lambda1 vraw: lambda's gradient, v0's (layer 0's v) kept, dv becomes dL/d(vraw)
                const float *v0 = t->act[0].v;
                float *gl_ = t->gl[l].vr_lambda;
                gl_[0] += (float)dot_f(dv, v0, S * KV), gl_[1] += (float)dot_f(dv, a->vraw, S * KV);
                for (long i = 0; i < (long)S * KV; i++) t->dv0[i] += w->vr_lambda[0] * dv[i], dv[i] *= w->vr_lambda[1];
            }
            if (l == 0 && t->dv0)  // (layer 0's v is v0)
                for (long i = 0; i < (long)S * KV; i++) dv[i] += t->dv0[i];
            if (w->ve_scale) {  // v += ls * s * vb: the scales' gradients, and vb's summed over the ve layers
                float ls = w->ve_scale[0], s = m->ve_scale;
                double db = dot_f(dv, t->vb, S * KV);
                t->gl[l].ve_scale[0] += (float)(db * s);
                t->g_vescale[0] += (float)(db * ls);
                for (long i = 0; i < (long)S * KV; i++) t->dvb[i] += dv[i] * ls * s;
            }
            float *dan = t->t_c;
            base_dw(t, dq, a->an, t->gl[l].wq, S, C, Q);
            base_dw(t, dk, a->an, t->gl[l].wk, S, C, KV);
            base_dw(t, dv, a->an, t->gl[l].wv, S, C, KV);
            linear_dx(t, dq, w->wq, dan, S, C, Q, 0.0f);
            linear_dx(t, dk, w->wk, dan, S, C, KV, 1.0f);
            linear_dx(t, dv, w->wv, dan, S, C, KV, 1.0f);
            lora_bwd_w(t, LORA_Q, l, dq, a->an, a->hq, dan);
            lora_bwd_w(t, LORA_K, l, dk, a->an, a->hk, dan);
            lora_bwd_w(t, LORA_V, l, dv, a->an, a->hv, dan);
            lora_bwd_in_w(t, LORA_O, l, t->dho, a->an, dan);
            if (a->gate)  // the gates read an[:W]
                for (int i = 0; i < S; i++)
                    for (int h = 0; h < H; h++) {
                        int W = c->attn_gate_window;
                        float ds = t->dgs[(long)i * H + h] * c->attn_gate_scale, *gw = t->gl[l].attn_gate + (long)h * W;
                        const float *an = a->an + (long)i * C;
                        for (int k = 0; k < W; k++) dan[(long)i * C + k] += ds * w->attn_gate_w[(long)h * W + k];
                        for (int k = 0; !t->frozen && k < W; k++) gw[k] += ds * an[k];
                        if (w->attn_gate_b && !t->frozen) t->gl[l].attn_gate_b[h] += t->dgs[(long)i * H + h];
                    }
            if (gptj)  // the MLP read an too
                for (long i = 0; i < (long)S * C; i++) dan[i] += t->dmn[i];
            if (together || seq) {  // xin = m0 lane 0 + m1 x0 fed the attention alone; g holds lane 0's other gradient
                rms_bwd(t, dan, a->an, a->ra, t->dxin, S, C, ln, 0);
                mix_bwd(t, m0, gm, t->dxin, a->xb, g);
            } else {
                rms_bwd(t, dan, a->an, a->ra, g, S, C, ln, 1);  // g = dL/dxin
            }
        }
        if (w->dtg_w)  // (DTG's x_in)
            for (long i = 0; i < (long)S * C; i++) g[i] += t->dtg_dx[i];
        // resid_mix: xin = m0 xb + m1 x0
        for (int r = 0; !together && !seq && r < S; r++)
            for (int k = 0; k < C; k++) {
                long i = (long)r * C + k;
                gm[k] += g[i] * a->xb[i];
                gm[C + k] += g[i] * t->x0[i];
                t->gx0[i] += m1[k] * g[i];
                g[i] *= m0[k];
            }
        if (first && !together && !seq)  // lane 1 began as a copy of xb
            for (long i = 0; i < (long)S * C; i++) g[i] += t->g1[i];
        int dec = l - t->n_enc, row = skip_row(t, dec);  // xb = the previous output with the skip
        const float *src = row >= 0 ? t->skip_out + (long)(t->n_enc - 1 - dec) * S * C : NULL;
        float *gs = row >= 0 ? t->gskip + (long)(t->n_enc - 1 - dec) * S * C : NULL;
        if (row >= 0 && (!lane || first || c->lanes_skip_lane0 || together || seq)) skip_bwd(t, row, src, a->xp, g, gs);
        if (row >= 0 && seq) skip_bwd(t, row, src, a->xp1, t->g1, gs);  // (lane 1's skip)
        if (first && (together || seq))  // both lanes began as the previous output, before lane 0's skip
            for (long i = 0; i < (long)S * C; i++) g[i] += t->g1[i];
    }
    for (long i = 0; i < (long)S * C; i++) t->gx0[i] += g[i];  // layer 0's x is x0
    // smear: x0_i = (1 - s) n0_i + s n0_(i-1)
    float *dn0 = t->t_c;
    for (int i = 0; i < S; i++)
        for (int k = 0; k < C; k++) {
            float gx = t->gx0[(long)i * C + k];
            if (!m->smear_gate) {
                dn0[(long)i * C + k] = gx;
                continue;
            }
            float s = t->sg[k], n0 = t->n0[(long)i * C + k], prev = t->row0[i] ? 0.0f : t->n0[(long)(i - 1) * C + k];
            float next = i + 1 < S && !t->row0[i + 1] ? t->gx0[(long)(i + 1) * C + k] : 0.0f;
            t->g_smear[k] += gx * (prev - n0) * s * (1 - s);
            dn0[(long)i * C + k] = (1 - s) * gx + s * next;
        }
    float *de = t->t_c2;
    rms_bwd(t, dn0, t->n0, t->r0, de, S, C, 1.0f, 0);
    float *dprev = t->de_prev;
    if (m->smear_fwd_w && t->seg_prev >= 0) memset(dprev, 0, (size_t)C * sizeof *dprev);
    if (m->smear_fwd_w)  // e'_t = e_t + lambda sigmoid(w . e_t[:W]) e_(t-1): de (of e') becomes dL/de, rows upward
        for (int i = 0; i < S; i++) {
            if ((t->row0[i] && t->seg_prev < 0) || (c->smear_fwd_bos_fix && x[i] == c->bos_id)) continue;
            const float *ei = t->e_raw + (long)i * C, *ep = t->row0[i] ? t->e_prev : t->e_raw + (long)(i - 1) * C;
            float *di = de + (long)i * C, *dp = t->row0[i] ? dprev : de + (long)(i - 1) * C;
            int W = c->smear_fwd_window;
            double z = 0, dg = 0;
            for (int k = 0; k < W; k++) z += (double)m->smear_fwd_w[k] * ei[k];
            for (int k = 0; k < C; k++) dg += (double)di[k] * ep[k];
            float sg = sigmoidf((float)z), g = m->smear_fwd_lambda * sg, dz = (float)dg * m->smear_fwd_lambda * sg * (1.0f - sg);
            t->g_sfl[0] += (float)dg * sg;
            for (int k = 0; k < C; k++) dp[k] += g * di[k];
            for (int k = 0; k < W; k++) t->g_sfw[k] += dz * ei[k], di[k] += dz * m->smear_fwd_w[k];
        }
    scatter_rows(t->g_tok, x, de, S, C);
    if (m->smear_fwd_w && t->seg_prev >= 0) scatter_rows(t->g_tok, &t->seg_prev, dprev, 1, C);
    if (m->bigram_emb) {  // e = tok + scale * pb, pb = proj(be_rows)
        int D = c->bigram_dim;
        t->g_bscale[0] += (float)dot_f(de, t->pb, S * C);
        float *dpb = t->g;  // (dL/dxf is done with)
        for (long i = 0; i < (long)S * C; i++) dpb[i] = de[i] * m->bigram_scale;
        if (m->bigram_proj) {
            base_dw(t, dpb, t->be_rows, t->g_bproj, S, D, C);
            linear_dx(t, dpb, m->bigram_proj, t->t_e, S, D, C, 0.0f);
            scatter_rows(t->g_bemb, t->bh, t->t_e, S, D);
        } else {
            scatter_rows(t->g_bemb, t->bh, dpb, S, D);
        }
    }
    if (m->ve_emb) {  // vb = proj(ve_rows)
        int D = c->ve_dim;
        if (m->ve_proj) {
            base_dw(t, t->dvb, t->ve_rows, t->g_veproj, S, D, KV);
            linear_dx(t, t->dvb, m->ve_proj, t->t_e, S, D, KV, 0.0f);
            scatter_rows(t->g_veemb, x, t->t_e, S, D);
        } else {
            scatter_rows(t->g_veemb, x, t->dvb, S, D);
        }
    }
}

double cpu_trainer_grad(struct cpu_trainer *t, const int32_t *tok, int n) {
    for (int i = 0; i < t->n_p; i++) memset(t->p[i].grad, 0, (size_t)t->p[i].n * sizeof(float));
    double loss = 0;
    int S = t->S_max;
    float inv_n = 1.0f / ((float)n * S);
    one_window(t, S);
    rope_at(t, 0);
    for (int s = 0; s < n; s++) {
        const int32_t *x = tok + (long)s * S;
        forward_body(t, x);
        memset(t->g, 0, (size_t)S * t->C * sizeof(float));
        loss += head_grad(t, 0, S, 0, x + 1, inv_n, NULL, NULL);
        backward_seq(t, x);
    }
    return loss / ((double)n * S);
}

int cpu_trainer_windows(struct cpu_trainer *t, const struct cpu_window *w, int n, int grad) {
    int rows = 0;
    for (int i = 0; i < n; i++) rows += w[i].n;
    if (n < 1 || rows > t->S_max || (n > 1 && !t->frozen)) return 0;
    t->S = rows, t->n_win = n;  // (the activations' first rows, the RoPE table's first positions)
    memset(t->row0, 0, (size_t)rows);
    for (int i = 0, off = 0; i < n; off += w[i++].n) {
        t->pw[i] = (struct pass_win){off, w[i].n, w[i].slot};
        t->row0[off] = 1;
        memcpy(t->xcat + off, w[i].x, (size_t)w[i].n * sizeof *t->xcat);
    }
    rope_at(t, 0);
    forward_body(t, t->xcat);
    if (grad) {
        for (int i = 0; i < t->n_p && !t->frozen; i++) memset(t->p[i].grad, 0, (size_t)t->p[i].n * sizeof(float));
        for (int i = 0; i < n; i++)
            for (int k = 0; t->ls && k < t->ls[w[i].slot].n_p; k++)
                memset(t->ls[w[i].slot].p[k].grad, 0, (size_t)t->ls[w[i].slot].p[k].n * sizeof(float));
        memset(t->g, 0, (size_t)rows * t->C * sizeof(float));
        for (int i = 0; i < n; i++) {
            int r0 = t->pw[i].off + w[i].from;
            head_grad(t, r0, r0 + w[i].count, w[i].slot, w[i].y + w[i].from, 1.0f / (float)w[i].count, w[i].nll, w[i].greedy);
        }
        backward_seq(t, t->xcat);
    } else {
        for (int i = 0; i < n; i++) {
            int r0 = t->pw[i].off + w[i].from;
            head_score(t, r0, r0 + w[i].count, w[i].slot, w[i].y + w[i].from, w[i].nll, w[i].greedy);
        }
    }
    one_window(t, t->S_max);
    return n;
}

void cpu_trainer_chunk(struct cpu_trainer *t, const int32_t *x, const int32_t *y, int n, int from, int count, int grad, float *nll,
                       uint8_t *greedy) {
    struct cpu_window w = {x, y, n, from, count, 0, nll, greedy};
    cpu_trainer_windows(t, &w, 1, grad);
}

void cpu_trainer_zero_grad(struct cpu_trainer *t) {
    for (int i = 0; i < t->n_p; i++) memset(t->p[i].grad, 0, (size_t)t->p[i].n * sizeof(float));
    for (int s = 0; s < t->n_slots; s++)
        for (int i = 0; i < t->ls[s].n_p; i++) memset(t->ls[s].p[i].grad, 0, (size_t)t->ls[s].p[i].n * sizeof(float));
}

double cpu_trainer_segment(struct cpu_trainer *t, const int32_t *x, const int32_t *y, int n, long pos0, int32_t prev,
                           float inv_total) {
    one_window(t, n);
    t->seg_prev = prev;
    rope_at(t, pos0);
    forward_body(t, x);
    memset(t->g, 0, (size_t)n * t->C * sizeof(float));
    double loss = head_grad(t, 0, n, 0, y, inv_total, NULL, NULL);
    backward_seq(t, x);
    one_window(t, t->S_max);
    t->seg_prev = -1;
    return loss;
}

static float *lora_alloc(struct lora_set *ls, const char *name, long n, float **grad) {
    struct train_param *p = &ls->p[ls->n_p++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->n = n, p->block = -1;
    p->w = alloc_f(n), p->grad = alloc_f(n);
    *grad = p->grad;
    return p->w;
}

int cpu_trainer_lora(struct cpu_trainer *t, const struct cpu_lora_spec *spec, int n_slots, xsa_error *err) {
    if (t->ls) return xsa_fail(err, XSA_EBADINPUT, "the trainer has its LoRA adapters already");
    if (spec->rank < 1 || spec->rank > 4096)  // (above the width is allowed, as torch allows it; the cap bounds memory)
        return xsa_fail(err, XSA_EBADINPUT, "TTT_LORA_RANK=%d: expected a whole number from 1 to 4096", spec->rank);
    if (n_slots < 1) return xsa_fail(err, XSA_EBADINPUT, "%d adapter slots: expected at least 1", n_slots);
    int L = t->L, r = t->rank = spec->rank, S = t->S_max, C = t->C;
    t->frozen = 1;
    t->lora_scale = spec->alpha > 0 ? (float)(spec->alpha / spec->rank) : 1.0f;
    t->ls = xsa_calloc((size_t)n_slots, sizeof *t->ls), t->n_slots = n_slots;
    // BatchedTTTLoRA's parameters() order: the head's, then q, v, k, MLP and output adapters layer by layer
    const char *names[LORA_KINDS] = {"q_loras", "v_loras", "k_loras", "mlp_loras", "o_loras"};
    int outs[LORA_KINDS] = {t->Q, t->KV, t->KV, C, C}, on[LORA_KINDS] = {1, 1, spec->k, spec->mlp, spec->o};
    char nm[48];
    for (int s = 0; s < n_slots; s++) {
        struct lora_set *ls = &t->ls[s];
        ls->p = xsa_calloc((size_t)(2 + 2 * LORA_KINDS * L), sizeof *ls->p);
        ls->head.in = C, ls->head.out = t->V;
        ls->head.A = lora_alloc(ls, "lm_head_lora.A", (long)r * C, &ls->head.gA);
        ls->head.B = lora_alloc(ls, "lm_head_lora.B", (long)t->V * r, &ls->head.gB);
        for (int k = 0; k < LORA_KINDS; k++) {
            ls->kind[k] = on[k] ? xsa_calloc((size_t)L, sizeof *ls->kind[k]) : NULL;
            for (int l = 0; on[k] && l < L; l++) {
                struct lora_pair *P = &ls->kind[k][l];
                P->in = C, P->out = outs[k];
                snprintf(nm, sizeof nm, "%s.%d.A", names[k], l), P->A = lora_alloc(ls, nm, (long)r * C, &P->gA);
                snprintf(nm, sizeof nm, "%s.%d.B", names[k], l), P->B = lora_alloc(ls, nm, (long)P->out * r, &P->gB);
            }
        }
    }
    for (int l = 0; l < L; l++) {
        struct layer_act *a = &t->act[l];
        a->hq = alloc_f((long)S * r), a->hv = alloc_f((long)S * r);
        a->hk = spec->k ? alloc_f((long)S * r) : NULL, a->hm = spec->mlp ? alloc_f((long)S * r) : NULL;
        a->ho = spec->o ? alloc_f((long)S * r) : NULL;
    }
    t->h_lm = alloc_f((long)TILE * r), t->dh = alloc_f((long)(S > TILE ? S : TILE) * r), t->dho = alloc_f((long)S * r);
    return 0;
}

struct cpu_pool *cpu_trainer_pool(struct cpu_trainer *t) { return t->pool; }

int cpu_trainer_lora_params(const struct cpu_trainer *t, int slot, struct train_param **out) {
    if (!t->ls || slot < 0 || slot >= t->n_slots) return *out = NULL, 0;
    *out = t->ls[slot].p;
    return t->ls[slot].n_p;
}
