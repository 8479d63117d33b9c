// cuda_ops.cu: the row-wise kernels (embedding, norms, bias + RoPE, MLP activations) and the
// cuBLAS GEMM wrapper. Arithmetic lives in cuda_math.h; these kernels only map it to threads.
#include <stdarg.h>
#include <stdio.h>

#include "kernels/cuda/cuda_internal.cuh"

#define ROWS_THREADS 256

int cu_fail(xsa_error *err, int code, const char *fmt, ...) {
    if (!err || err->code) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

// Reads element i of a compute-dtype buffer / writes one.
__device__ __forceinline__ float act_load(const void *p, long i, int fp32) {
    return fp32 ? ((const float *)p)[i] : __bfloat162float(((const __nv_bfloat16 *)p)[i]);
}
__device__ __forceinline__ void act_store(void *p, long i, float v, int fp32) {
    if (fp32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = xsa_f32_to_bf16(v);
}

static unsigned grid_for(long n, int threads) {
    long b = (n + threads - 1) / threads;
    return (unsigned)(b < 65535L * 64 ? (b > 0 ? b : 1) : 65535L * 64);
}

// x[t] = tok_emb[token[t]] (+ pos_emb[pos[t]]); grid-stride over (T, C).
__global__ void embed_kernel(float *x, const void *tok_emb, const float *pos_emb,
                             const int32_t *tok, const int32_t *pos, int T, int C, int fp32) {
    long n = (long)T * C;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        long t = i / C, c = i % C;
        float v = act_load(tok_emb, (long)tok[t] * C + c, fp32);
        if (pos_emb) v += pos_emb[(long)pos[t] * C + c];
        x[i] = v;
    }
}

int cu_embed(struct cu_state *st, int T, xsa_error *err) {
    int C = st->m->cfg.d_model;
    embed_kernel<<<grid_for((long)T * C, ROWS_THREADS), ROWS_THREADS, 0, st->stream>>>(
        st->x, st->tok_emb, st->pos_emb, st->d_tok, st->d_pos, T, C, st->fp32);
    CU_LAUNCHED();
    return 0;
}

// Block-wide sum of one double per thread (blockDim.x == ROWS_THREADS).
__device__ double block_sum(double v, double *sh) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    __syncthreads();  // sh may still be read from a previous call
    if (lane == 0) sh[w] = v;
    __syncthreads();
    double s = 0;
    for (int i = 0; i < ROWS_THREADS / 32; i++) s += sh[i];
    return s;
}

// One block per output row: LayerNorm (b != NULL, two-pass biased variance) or RMSNorm.
__global__ void norm_kernel(const float *x, const int32_t *rows, void *out, int C,
                            const float *w, const float *b, float eps, int fp32) {
    __shared__ double sh[ROWS_THREADS / 32];
    long r = blockIdx.x;
    const float *xr = x + (long)(rows ? rows[r] : r) * C;
    float mean = 0.0f, rstd;
    if (b) {
        double s = 0;
        for (int i = threadIdx.x; i < C; i += ROWS_THREADS) s += xr[i];
        double mu = block_sum(s, sh) / C;
        double v = 0;
        for (int i = threadIdx.x; i < C; i += ROWS_THREADS) v += (xr[i] - mu) * (xr[i] - mu);
        rstd = xsa_ln_rstd(block_sum(v, sh) / C, eps);
        mean = (float)mu;
    } else {
        double s = 0;
        for (int i = threadIdx.x; i < C; i += ROWS_THREADS) s += (double)xr[i] * xr[i];
        rstd = xsa_rms_rstd((float)(block_sum(s, sh) / C), eps);
    }
    for (int i = threadIdx.x; i < C; i += ROWS_THREADS)
        act_store(out, r * C + i, xsa_norm_apply(xr[i], mean, rstd, w[i], b ? b[i] : 0.0f, b != NULL), fp32);
}

int cu_norm(struct cu_state *st, const float *x, const int32_t *rows, void *out, int n,
            const float *w, const float *b, xsa_error *err) {
    if (n <= 0) return 0;
    const struct model_config *c = &st->m->cfg;
    norm_kernel<<<n, ROWS_THREADS, 0, st->stream>>>(x, rows, out, c->d_model, w, b, c->norm_eps, st->fp32);
    CU_LAUNCHED();
    return 0;
}

// x (T, width) += bias (width), grid-stride.
__global__ void add_bias_kernel(float *x, const float *bias, long n, int width) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        x[i] += bias[i % width];
}

// One block per norm row of q or k in place (per head: H or Hkv rows per token; whole: one):
// RMSNorm as norm_kernel's, gain w or none.
__global__ void qk_norm_kernel(float *base, long ld, int per_row, int width, const float *w, float eps) {
    __shared__ double sh[ROWS_THREADS / 32];
    long r = blockIdx.x;
    float *v = base + (r / per_row) * ld + (r % per_row) * (long)width;
    double s = 0;
    for (int i = threadIdx.x; i < width; i += ROWS_THREADS) s += (double)v[i] * v[i];
    float rstd = xsa_rms_rstd((float)(block_sum(s, sh) / width), eps);
    __syncthreads();  // every thread has read v before any writes it
    for (int i = threadIdx.x; i < width; i += ROWS_THREADS) v[i] = xsa_norm_apply(v[i], 0.0f, rstd, w ? w[i] : 1.0f, 0.0f, 0);
}

// One thread per (token, head of q or k, pair of the rd rotated dims): rotates the pair in
// place; cos and sin times `scale` (yarn).
__global__ void rope_kernel(float *qkv, const int32_t *pos, const float *inv_freq, int T, int H, int Hkv, int hd,
                            int rd, int half, float scale) {
    int h2 = rd / 2, nh = H + Hkv;
    long ld = (long)(H + 2 * Hkv) * hd, n = (long)T * nh * h2;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        int p = (int)(i % h2);
        long th = i / h2;
        int h = (int)(th % nh);
        long t = th / nh;
        float *v = qkv + t * ld + (long)h * hd;  // k heads follow the H q heads in a row
        int a, b;
        xsa_rope_pair(p, rd, half, &a, &b);
        float ang = xsa_rope_angle_inv(pos[t], inv_freq[p]);
        xsa_rope_rotate(&v[a], &v[b], cosf(ang) * scale, sinf(ang) * scale);
    }
}

int cu_qkv_bias_rope(struct cu_state *st, const struct cu_layer *w, int T, xsa_error *err) {
    const struct model_config *c = &st->m->cfg;
    int Q = c->n_head * c->head_dim, KV = c->n_kv_head * c->head_dim, width = Q + 2 * KV;
    if (w->bqkv) {
        add_bias_kernel<<<grid_for((long)T * width, ROWS_THREADS), ROWS_THREADS, 0, st->stream>>>(
            st->qkv, w->bqkv, (long)T * width, width);
        CU_LAUNCHED();
    }
    if (c->qk_norm && T > 0) {
        int head = c->qk_norm == QK_NORM_HEAD;
        qk_norm_kernel<<<(unsigned)((long)T * (head ? c->n_head : 1)), ROWS_THREADS, 0, st->stream>>>(
            st->qkv, width, head ? c->n_head : 1, head ? c->head_dim : Q, w->qn, c->norm_eps);
        CU_LAUNCHED();
        qk_norm_kernel<<<(unsigned)((long)T * (head ? c->n_kv_head : 1)), ROWS_THREADS, 0, st->stream>>>(
            st->qkv + Q, width, head ? c->n_kv_head : 1, head ? c->head_dim : KV, w->kn, c->norm_eps);
        CU_LAUNCHED();
    }
    if (c->rope == ROPE_NONE) return 0;
    int rd = model_rope_dims(c);
    long n = (long)T * (c->n_head + c->n_kv_head) * (rd / 2);
    rope_kernel<<<grid_for(n, ROWS_THREADS), ROWS_THREADS, 0, st->stream>>>(
        st->qkv, st->d_pos, st->rope_inv, T, c->n_head, c->n_kv_head, c->head_dim, rd, c->rope == ROPE_HALF,
        xsa_rope_cos_scale(c));
    CU_LAUNCHED();
    return 0;
}

// xn (T, C) = x in the compute dtype; grid-stride.
__global__ void copy_act_kernel(const float *x, void *xn, long n, int fp32) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        act_store(xn, i, x[i], fp32);
}

int cu_copy_act(struct cu_state *st, int T, xsa_error *err) {
    long n = (long)T * st->m->cfg.d_model;
    copy_act_kernel<<<grid_for(n, ROWS_THREADS), ROWS_THREADS, 0, st->stream>>>(st->x, st->xn, n, st->fp32);
    CU_LAUNCHED();
    return 0;
}

// One block per row: x[r] += RMSNorm(y[r]) * w.
__global__ void norm_add_kernel(float *x, const float *y, int C, const float *w, float eps) {
    __shared__ double sh[ROWS_THREADS / 32];
    long r = blockIdx.x;
    const float *yr = y + r * C;
    double s = 0;
    for (int i = threadIdx.x; i < C; i += ROWS_THREADS) s += (double)yr[i] * yr[i];
    float rstd = xsa_rms_rstd((float)(block_sum(s, sh) / C), eps);
    for (int i = threadIdx.x; i < C; i += ROWS_THREADS) x[r * C + i] += xsa_norm_apply(yr[i], 0.0f, rstd, w[i], 0.0f, 0);
}

int cu_norm_add(struct cu_state *st, const float *y, const float *w, int T, xsa_error *err) {
    if (T <= 0) return 0;
    const struct model_config *c = &st->m->cfg;
    norm_add_kernel<<<T, ROWS_THREADS, 0, st->stream>>>(st->x, y, c->d_model, w, c->norm_eps);
    CU_LAUNCHED();
    return 0;
}

__global__ void add_rows_kernel(float *x, const float *y, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) x[i] += y[i];
}

int cu_add_rows(struct cu_state *st, const float *y, int T, xsa_error *err) {
    long n = (long)T * st->m->cfg.d_model;
    add_rows_kernel<<<grid_for(n, ROWS_THREADS), ROWS_THREADS, 0, st->stream>>>(st->x, y, n);
    CU_LAUNCHED();
    return 0;
}

// ffa (T, F) = act(ff + bias); swiglu: ff rows are (gate F | up F), else (F) with GELU (erf
// when exact, else tanh).
__global__ void mlp_act_kernel(const float *ff, const float *bias, void *ffa, int T, int F, int swiglu,
                               int exact, int fp32) {
    long n = (long)T * F;
    int ld = swiglu ? 2 * F : F;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        long t = i / F;
        int f = (int)(i % F);
        float g = ff[t * ld + f] + (bias ? bias[f] : 0.0f);
        float v = swiglu  ? xsa_swiglu(g, ff[t * ld + F + f] + (bias ? bias[F + f] : 0.0f))
                  : exact ? xsa_gelu_erf(g)
                          : xsa_gelu_tanh(g);
        act_store(ffa, i, v, fp32);
    }
}

int cu_mlp_act(struct cu_state *st, const float *bias, int T, xsa_error *err) {
    const struct model_config *c = &st->m->cfg;
    mlp_act_kernel<<<grid_for((long)T * c->d_ff, ROWS_THREADS), ROWS_THREADS, 0, st->stream>>>(
        st->ff, bias, st->ffa, T, c->d_ff, model_mlp_gated(c), c->gelu_exact, st->fp32);
    CU_LAUNCHED();
    return 0;
}

int cu_add_bias(struct cu_state *st, float *y, const float *b, int T, xsa_error *err) {
    if (!b) return 0;
    int C = st->m->cfg.d_model;
    add_bias_kernel<<<grid_for((long)T * C, ROWS_THREADS), ROWS_THREADS, 0, st->stream>>>(y, b, (long)T * C, C);
    CU_LAUNCHED();
    return 0;
}

// Row-major y = x @ W^T is column-major y^T = W x^T (xsa_gemm_params). COMPUTE_32F with the default
// math mode: fp32 inputs never go through TF32; bf16 inputs accumulate in fp32 into fp32 y.
int cu_gemm(struct cu_state *st, const void *x, const void *w, float *y, int M, int K, int N, int ldy,
            float beta, xsa_error *err) {
    if (M <= 0) return 0;
    const float alpha = 1.0f;
    cudaDataType_t in = st->fp32 ? CUDA_R_32F : CUDA_R_16BF;
    struct xsa_gemm_cm p = xsa_gemm_params(M, K, N, ldy);  // the column-major view (cuda_math.h)
    CUBLAS_CHECK(cublasGemmEx(st->blas, p.transa ? CUBLAS_OP_T : CUBLAS_OP_N, p.transb ? CUBLAS_OP_T : CUBLAS_OP_N,
                              p.m, p.n, p.k, &alpha, w, in, p.lda, x, in, p.ldb, &beta, y, CUDA_R_32F, p.ldc,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return 0;
}
