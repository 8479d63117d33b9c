// cuda_logits.cu: LM head + log-softmax + gather + argmax at the scored rows only. For each
// vocabulary chunk: one cuBLAS GEMM (R, C) x (nv, C)^T into a (R, nv) buffer, then one block
// per row folds the chunk into the row's running (max, argmax, sumexp), and each entry picks
// its target's logit when the target falls in the chunk. Chunks run in increasing id order
// and xsa_lse_merge keeps the lowest id on ties, so argmax matches torch.argmax.
#include "kernels/cuda/cuda_internal.cuh"

#define LSE_THREADS 256

__global__ void lse_init_kernel(struct xsa_lse *st, int R) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < R) st[r] = xsa_lse_empty();
}

// One block per row r of lg (R, nv): the chunk's statistics, merged into st[r].
__global__ void lse_chunk_kernel(const float *lg, int nv, int v0, struct xsa_lse *st) {
    __shared__ struct xsa_lse sh[LSE_THREADS];
    int r = blockIdx.x;
    const float *x = lg + (long)r * nv;
    struct xsa_lse s = xsa_lse_empty();
    for (int j = threadIdx.x; j < nv; j += LSE_THREADS) xsa_lse_push(&s, x[j], v0 + j);
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int k = LSE_THREADS / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k) xsa_lse_merge(&sh[threadIdx.x], sh[threadIdx.x + k]);
        __syncthreads();
    }
    if (threadIdx.x == 0) xsa_lse_merge(&st[r], sh[0]);
}

// Entry e reads its target's logit when the target lies in [v0, v0 + nv).
__global__ void entry_pick_kernel(const float *lg, int nv, int v0, const int32_t *row, const int32_t *tgt,
                                  float *logit, int S) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= S) return;
    int id = tgt[e];
    if (id >= v0 && id < v0 + nv) logit[e] = lg[(long)row[e] * nv + (id - v0)];
}

__global__ void entry_finish_kernel(const struct xsa_lse *st, const int32_t *row, const int32_t *tgt,
                                    const float *logit, float *lp, uint8_t *greedy, int S) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= S) return;
    struct xsa_lse s = st[row[e]];
    lp[e] = xsa_lse_logprob(logit[e], s);
    greedy[e] = tgt[e] == s.argmax;
}

int cu_logits(struct cu_state *st, int R, int S, xsa_error *err) {
    const struct model *m = st->m;
    int C = m->cfg.d_model, V = m->cfg.vocab_size;
    size_t esz = st->fp32 ? sizeof(float) : sizeof(uint16_t);
    if (R <= 0 || S <= 0) return 0;
    int rc = cu_norm(st, st->x, st->d_row_tok, st->hrows, R, st->fnw, st->fnb, err);
    if (rc) return rc;
    lse_init_kernel<<<(R + 255) / 256, 256, 0, st->stream>>>(st->row_stat, R);
    CU_LAUNCHED();
    unsigned eb = (unsigned)((S + 255) / 256);
    for (int v0 = 0; v0 < V; v0 += st->vchunk) {
        int nv = V - v0 < st->vchunk ? V - v0 : st->vchunk;
        const void *w = (const char *)st->lm_head + (size_t)v0 * C * esz;
        if ((rc = cu_gemm(st, st->hrows, w, st->lg, R, C, nv, nv, 0.0f, err))) return rc;
        lse_chunk_kernel<<<R, LSE_THREADS, 0, st->stream>>>(st->lg, nv, v0, st->row_stat);
        CU_LAUNCHED();
        entry_pick_kernel<<<eb, 256, 0, st->stream>>>(st->lg, nv, v0, st->d_entry_row, st->d_entry_tgt,
                                                      st->d_entry_logit, S);
        CU_LAUNCHED();
    }
    entry_finish_kernel<<<eb, 256, 0, st->stream>>>(st->row_stat, st->d_entry_row, st->d_entry_tgt,
                                                     st->d_entry_logit, st->d_entry_lp, st->d_entry_greedy, S);
    CU_LAUNCHED();
    return 0;
}

// Row r of lg (R, nv) becomes log-probabilities: minus the row's logsumexp.
__global__ void dist_logprob_kernel(float *lg, int nv, const struct xsa_lse *st, int R) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long)R * nv) return;
    lg[i] = xsa_lse_logprob(lg[i], st[i / nv]);
}

int cu_logits_dist(struct cu_state *st, int R, int S, const int32_t *ent_row, const int32_t *ent_id,
                   const struct backend_dist_sink *dist, xsa_error *err) {
    const struct model *m = st->m;
    int C = m->cfg.d_model, V = m->cfg.vocab_size, rc = 0;
    size_t esz = st->fp32 ? sizeof(float) : sizeof(uint16_t);
    if (R <= 0 || S <= 0) return 0;
    float *host = (float *)malloc((size_t)R * st->vchunk * sizeof(float));
    if (!host) return cu_fail(err, XSA_ERUNTIME, "cuda backend: out of host memory for %d distributions", R);
    // Chunks start at multiples of vchunk (a multiple of BACKEND_DIST_CHUNK, or all of V).
    for (int v0 = 0; v0 < V && !rc; v0 += st->vchunk) {
        int nv = V - v0 < st->vchunk ? V - v0 : st->vchunk;
        const void *w = (const char *)st->lm_head + (size_t)v0 * C * esz;
        if ((rc = cu_gemm(st, st->hrows, w, st->lg, R, C, nv, nv, 0.0f, err))) break;
        long n = (long)R * nv;
        dist_logprob_kernel<<<(unsigned)((n + 255) / 256), 256, 0, st->stream>>>(st->lg, nv, st->row_stat, R);
        if (cudaGetLastError() != cudaSuccess || cudaMemcpyAsync(host, st->lg, (size_t)n * sizeof(float),
                                                                 cudaMemcpyDeviceToHost, st->stream) != cudaSuccess ||
            cudaStreamSynchronize(st->stream) != cudaSuccess) {
            rc = cu_fail(err, XSA_ERUNTIME, "cuda backend: distribution chunk at id %d failed", v0);
            break;
        }
        for (int e = 0; e < S; e++)
            for (int k = 0; k < nv; k += BACKEND_DIST_CHUNK)
                dist->chunk(dist->ctx, ent_id[e], v0 + k, nv - k < BACKEND_DIST_CHUNK ? nv - k : BACKEND_DIST_CHUNK,
                            host + (long)ent_row[e] * nv + k);
    }
    free(host);
    return rc;
}
