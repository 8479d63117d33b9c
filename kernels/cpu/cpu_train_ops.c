// cpu_train_ops.c: the pieces of the trainer's passes (cpu_train_internal.h). The GEMMs are
// OpenBLAS calls split in tiles over the worker pool, by shape (so their bits do not depend on
// the thread count), and attention runs one task per (window, kv head), so no two tasks write
// one float.
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_pool.h"
#include "kernels/cpu/cpu_train_internal.h"

#define MM_ROWS 256  // output rows per GEMM task (each task packs its columns of the weight)
#define MM_COLS 128  // columns per task of a GEMM with few rows (each task packs its rows of the input)

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
void train_linear(struct cpu_trainer *t, const float *x, const float *W, float *y, int n, int in, int out) {
    mm(t, 0, 1, n, out, in, x, in, W, in, 0, y, out);
}
// dx (+)= dy W: dy (n, out)
void train_linear_dx(struct cpu_trainer *t, const float *dy, const float *W, float *dx, int n, int in, int out, float beta) {
    mm(t, 0, 0, n, in, out, dy, out, W, in, beta, dx, in);
}
// dW += dy^T x
void train_linear_dw(struct cpu_trainer *t, const float *dy, const float *x, float *dW, int n, int in, int out) {
    mm(t, 1, 0, out, in, n, dy, out, x, in, 1.0f, dW, in);
}

// A base weight's dW += dy^T x, skipped once LoRA adapters train instead (frozen).
void train_base_dw(struct cpu_trainer *t, const float *dy, const float *x, float *dW, int n, int in, int out) {
    if (!t->frozen) train_linear_dw(t, dy, x, dW, n, in, out);
}

// Adapter `kind` of layer l in slot `slot`, or NULL (that kind is off, or there are no adapters).
const struct lora_pair *train_lora_at(const struct cpu_trainer *t, int slot, int kind, int l) {
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
        const struct lora_pair *Pi = P ? P : train_lora_at(t, t->pw[i].slot, kind, l);
        if (Pi) lora_add(t, &s, step, Pi, P ? 0 : t->pw[i].off, P ? n : t->pw[i].n, a, b, out);
    }
    mm_set_run(t, &s);
    for (int i = 0; t->lora_scale != 1.0f && (step == LORA_A_FWD || step == LORA_B_BWD) && i < n_rows; i++) {
        int off = P ? 0 : t->pw[i].off, ni = P ? n : t->pw[i].n;
        if (P || train_lora_at(t, t->pw[i].slot, kind, l))
            for (long k = (long)off * t->rank; k < (long)(off + ni) * t->rank; k++) out[k] *= t->lora_scale;
    }
}

// The head's adapter over n rows: its forward; its backward (through t->dh).
void train_lora_fwd(struct cpu_trainer *t, const struct lora_pair *P, const float *x, float *h, float *y, int n) {
    lora_step(t, LORA_A_FWD, P, n, 0, 0, x, NULL, h);
    lora_step(t, LORA_B_FWD, P, n, 0, 0, h, NULL, y);
}
void train_lora_bwd(struct cpu_trainer *t, const struct lora_pair *P, const float *dy, const float *x, const float *h, float *dx, int n) {
    lora_step(t, LORA_B_BWD, P, n, 0, 0, dy, h, t->dh);
    lora_step(t, LORA_A_BWD, P, n, 0, 0, t->dh, x, dx);
}

// The layers' adapters of kind over the pass's windows (rows of x, h, y: the adapter's in, rank and out).
void train_lora_fwd_w(struct cpu_trainer *t, int kind, int l, const float *x, float *h, float *y) {
    lora_step(t, LORA_A_FWD, NULL, 0, kind, l, x, NULL, h);
    lora_step(t, LORA_B_FWD, NULL, 0, kind, l, h, NULL, y);
}
void train_lora_bwd_out_w(struct cpu_trainer *t, int kind, int l, const float *dy, const float *h, float *dh) {
    lora_step(t, LORA_B_BWD, NULL, 0, kind, l, dy, h, dh);
}
void train_lora_bwd_in_w(struct cpu_trainer *t, int kind, int l, const float *dh, const float *x, float *dx) {
    lora_step(t, LORA_A_BWD, NULL, 0, kind, l, dh, x, dx);
}
void train_lora_bwd_w(struct cpu_trainer *t, int kind, int l, const float *dy, const float *x, const float *h, float *dx) {
    train_lora_bwd_out_w(t, kind, l, dy, h, t->dh);
    train_lora_bwd_in_w(t, kind, l, t->dh, x, dx);
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

void train_rms_fwd(struct cpu_trainer *t, const float *x, float *out, float *r, int n, int C, float eps, float scale) {
    struct rms_job j = {.x = x, .out = out, .r = r, .n = n, .C = C, .eps = eps, .scale = scale};
    cpu_pool_run(t->pool, (n + RMS_ROWS - 1) / RMS_ROWS, rms_task, &j);
}

void train_rms_bwd(struct cpu_trainer *t, const float *dout, const float *out, const float *r, float *dx, int n, int C, float scale,
                    int add) {
    struct rms_job j = {.x = dout, .out_c = out, .r_c = r, .dx = dx, .n = n, .C = C, .add = add, .scale = scale};
    cpu_pool_run(t->pool, (n + RMS_ROWS - 1) / RMS_ROWS, rms_task, &j);
}

// out = a + s * b over S rows of C (s per channel: attn_scale, mlp_scale, skip_weights); out may be a.
void train_scaled_add(float *out, const float *a, const float *s, const float *b, int S, int C) {
    for (int r = 0; r < S; r++)
        for (int k = 0; k < C; k++) out[(long)r * C + k] = a[(long)r * C + k] + s[k] * b[(long)r * C + k];
}

// Its backward for s and b, from dout: gs += sum over rows of dout * b, db = s * dout.
void train_scaled_add_bwd(const float *dout, const float *b, const float *s, float *gs, float *db, int S, int C) {
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

void train_mlp_act(struct cpu_trainer *t, const float *u, float *h, float *dh, float slope, long n) {
    struct act_job j = {u, h, dh, slope, n};
    cpu_pool_run(t->pool, (int)((n + ACT_BLOCK - 1) / ACT_BLOCK), act_task, &j);
}

// Adds rows of d (n rows of D) into the table rows idx[i] of g: an embedding's gradient.
void train_scatter_rows(float *g, const int32_t *idx, const float *d, int n, int D) {
    for (int i = 0; i < n; i++) {
        float *gr = g + (long)idx[i] * D;
        for (int k = 0; k < D; k++) gr[k] += d[(long)i * D + k];
    }
}

// Rows idx[i] of a table (D wide) into out (n, D).
void train_gather_rows(float *out, const float *table, const int32_t *idx, int n, int D) {
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

void train_attention_fwd(struct cpu_trainer *t, struct layer_act *a, int xsa) {
    struct att_job j = {t, a, xsa, NULL, NULL, NULL, NULL};
    cpu_pool_run(t->pool, t->n_win * t->Hkv, att_fwd_task, &j);
}

void train_attention_bwd(struct cpu_trainer *t, struct layer_act *a, int xsa, const float *dz, float *dq, float *dk, float *dv) {
    struct att_job j = {t, a, xsa, dz, dq, dk, dv};
    cpu_pool_run(t->pool, t->n_win * t->Hkv, att_bwd_task, &j);
}
