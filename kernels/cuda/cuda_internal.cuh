// cuda_internal.cuh: the CUDA backend's private state, status checks and kernel launchers,
// shared by the .cu files of kernels/cuda (nothing outside the shared object sees them).
#ifndef XSA_KERNELS_CUDA_INTERNAL_CUH
#define XSA_KERNELS_CUDA_INTERNAL_CUH

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "kernels/backend.h"
}

#include "kernels/cuda/cuda_math.h"

// Records the first error in err (the shared object cannot call libxsa's xsa_fail: the
// executable does not export its symbols) and returns code.
int cu_fail(xsa_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// Every CUDA and cuBLAS status is checked with the file and line; these return from the
// calling function (which must return int and have `xsa_error *err` in scope).
#define CU_CHECK(call)                                                                        \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess)                                                                \
            return cu_fail(err, XSA_ERUNTIME, "cuda backend: %s:%d: %s failed: %s", __FILE__, \
                           __LINE__, #call, cudaGetErrorString(e_));                          \
    } while (0)
#define CUBLAS_CHECK(call)                                                                    \
    do {                                                                                      \
        cublasStatus_t s_ = (call);                                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                      \
            return cu_fail(err, XSA_ERUNTIME, "cuda backend: %s:%d: %s failed: %s", __FILE__, \
                           __LINE__, #call, cublasGetStatusString(s_));                       \
    } while (0)
// After a kernel launch: launch errors (bad configuration) surface here.
#define CU_LAUNCHED() CU_CHECK(cudaGetLastError())

// Weights of one layer on the device. W* are in the compute dtype (bf16 or fp32), norms and
// biases fp32. q, k and v are one (Q + 2 KV, C) matrix; llama's gate and up one (2F, C).
struct cu_layer {
    void *wqkv, *wo, *wgu, *wdown;       // (Q+2KV, C), (C, Q), (F or 2F, C), (C, F)
    float *bqkv, *bo, *bgu, *bdown;      // (Q+2KV), (C), (F or 2F), (C) or NULL
    float *n1w, *n1b, *n2w, *n2b;        // (C) each; biases NULL for RMSNorm; gains NULL: no pre-norm
    float *qn, *kn;                      // q/k RMSNorm gains ((hd) or (Q), (KV)), NULL without qk_norm
    float *pn1w, *pn2w;                  // (C) post-norms of the attention and MLP outputs, or NULL
};

struct cu_state {
    const struct model *m;
    int device;
    int fp32;                            // 1: fp32 weights and GEMM inputs; 0: bf16
    int max_tokens;                      // backend_options.cuda_max_tokens (0: what memory allows)
    cudaStream_t stream;
    cublasHandle_t blas;
    struct cu_layer *layers;             // (n_layer)
    void *tok_emb, *lm_head;             // (V, C) compute dtype; lm_head == tok_emb when tied
    float *pos_emb;                      // (max_seq_len, C) gpt2 only (fp32: added to fp32 x)
    float *fnw, *fnb;                    // final norm (C), (C) or NULL
    float *rope_inv;                     // (hd / 2) RoPE inverse frequencies (host powf), or NULL
    size_t weight_bytes;
    // Activations for t_cap tokens (grown on demand; halved on allocation failure).
    int t_cap;
    float *x;                            // (t_cap, C) residual stream
    void *xn;                            // (t_cap, max(C, Q)) normed block input / attention out
    float *qkv;                          // (t_cap, Q + 2KV) projections (bias, RoPE in place)
    float *ff;                           // (t_cap, 2F) MLP pre-activation (gate | up)
    float *tmp;                          // (t_cap, C) a sublayer's output before a post-norm or the
                                         //   parallel residual add; NULL when the model has neither
    void *ffa;                           // (t_cap, F) MLP activation (GEMM input)
    int32_t *d_tok, *d_pos, *d_span;     // (t_cap), (t_cap), (4, t_cap)
    size_t act_bytes_per_token;          // of the buffers above and below, per t_cap
    // Logits: r_cap scored rows, chunks of vchunk vocabulary ids.
    int r_cap, s_cap, vchunk;
    void *hrows;                         // (r_cap, C) final-normed scored rows
    float *lg;                           // (r_cap, vchunk) one chunk of logits
    struct xsa_lse *row_stat;            // (r_cap)
    int32_t *d_row_tok;                  // (r_cap) token index of a scored row
    int32_t *d_entry_row, *d_entry_tgt;  // (s_cap)
    float *d_entry_logit, *d_entry_lp;   // (s_cap)
    uint8_t *d_entry_greedy;             // (s_cap)
    // The probe's statistics (batch.probe): each layer's attention writes (t_cap, H, 3) here
    // while probing, which the host gathers at the scored tokens.
    int probing, probe_cap;
    float *d_probe, *h_probe;            // (probe_cap, H, BACKEND_PROBE_STATS) device, pinned host
};

// ---- launchers (cuda_ops.cu, cuda_attention.cu, cuda_logits.cu); each returns 0 or err ----
int cu_embed(struct cu_state *st, int T, xsa_error *err);
// out rows r = norm(x[rows ? rows[r] : r]) in the compute dtype; (n, C).
int cu_norm(struct cu_state *st, const float *x, const int32_t *rows, void *out, int n,
            const float *w, const float *b, xsa_error *err);
// qkv += bias; the q/k RMSNorms (w->qn, w->kn); RoPE on the q and k parts (when the model has
// RoPE), over the first model_rope_dims of each head.
int cu_qkv_bias_rope(struct cu_state *st, const struct cu_layer *w, int T, xsa_error *err);
// xn (T, C) compute dtype = x as it is: the block input without a pre-norm.
int cu_copy_act(struct cu_state *st, int T, xsa_error *err);
// x[t] += RMSNorm(y[t]) * w: a post-norm residual add; (T, C).
int cu_norm_add(struct cu_state *st, const float *y, const float *w, int T, xsa_error *err);
// x += y elementwise; (T, C).
int cu_add_rows(struct cu_state *st, const float *y, int T, xsa_error *err);
// ffa = act(ff + bias): GELU, tanh or erf as the config says (gpt2, width F), or SwiGLU over
// (gate | up) (llama).
int cu_mlp_act(struct cu_state *st, const float *bias, int T, xsa_error *err);
// y[t] += b for every row; y (T, C).
int cu_add_bias(struct cu_state *st, float *y, const float *b, int T, xsa_error *err);
int cu_attention(struct cu_state *st, int layer, int T, xsa_error *err);
// Log-softmax at R scored rows, S entries; results left in d_entry_lp / d_entry_greedy.
int cu_logits(struct cu_state *st, int R, int S, xsa_error *err);
// The distributions of the S entries (rows ent_row, ids ent_id) to the sink, after cu_logits
// left each row's logsumexp in row_stat: each chunk's logits again, as log-probabilities.
int cu_logits_dist(struct cu_state *st, int R, int S, const int32_t *ent_row, const int32_t *ent_id,
                   const struct backend_dist_sink *dist, xsa_error *err);

// y (M, N; row stride ldy) = x (M, K) @ W^T, W (N, K) in the compute dtype; beta 0 or 1
// (1 adds into y: the residual connection). y is fp32.
int cu_gemm(struct cu_state *st, const void *x, const void *w, float *y, int M, int K, int N,
            int ldy, float beta, xsa_error *err);

#endif
