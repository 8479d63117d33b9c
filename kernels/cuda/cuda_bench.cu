// cuda_bench.cu: cuBLAS's own GEMM rate on this GPU, measured with the configuration the
// forward uses (bf16 inputs, fp32 output and accumulation), as the denominator of model FLOP
// utilisation in bench/bench_cuda.c, and a probe of the attention kernel alone. Exported for
// benchmarks and device checks only; the backend never calls them.
#include <string.h>

#include "kernels/cuda/cuda_internal.cuh"

#define BENCH_ITERS 20

static int gemm_rate(int index, int n, double *tflops, void **buf, cublasHandle_t *h, cudaEvent_t *ev,
                     xsa_error *err) {
    size_t nn = (size_t)n * n;
    CU_CHECK(cudaSetDevice(index));
    CU_CHECK(cudaMalloc(&buf[0], nn * 2));
    CU_CHECK(cudaMalloc(&buf[1], nn * 2));
    CU_CHECK(cudaMalloc(&buf[2], nn * 4));
    CU_CHECK(cudaMemset(buf[0], 0, nn * 2));  // zeros: the rate does not depend on the values
    CU_CHECK(cudaMemset(buf[1], 0, nn * 2));
    CUBLAS_CHECK(cublasCreate(h));
    CU_CHECK(cudaEventCreate(&ev[0]));
    CU_CHECK(cudaEventCreate(&ev[1]));
    const float alpha = 1.0f, beta = 0.0f;
    for (int i = 0; i < BENCH_ITERS + 3; i++) {
        if (i == 3) CU_CHECK(cudaEventRecord(ev[0]));
        CUBLAS_CHECK(cublasGemmEx(*h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, buf[0], CUDA_R_16BF, n, buf[1],
                                  CUDA_R_16BF, n, &beta, buf[2], CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
    }
    CU_CHECK(cudaEventRecord(ev[1]));
    CU_CHECK(cudaEventSynchronize(ev[1]));
    float ms = 0;
    CU_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    *tflops = 2.0 * n * (double)n * n * BENCH_ITERS / (ms * 1e-3) / 1e12;
    return 0;
}

extern "C" int xsa_cuda_gemm_tflops(int index, int n, double *tflops, xsa_error *err) {
    void *buf[3] = {NULL, NULL, NULL};
    cublasHandle_t h = NULL;
    cudaEvent_t ev[2] = {NULL, NULL};
    int rc = gemm_rate(index, n, tflops, buf, &h, ev, err);
    for (int i = 0; i < 3; i++) cudaFree(buf[i]);
    if (h) cublasDestroy(h);
    for (int i = 0; i < 2; i++)
        if (ev[i]) cudaEventDestroy(ev[i]);
    return rc;
}

// The attention kernel alone on host data, for the device checks in bench/bench_cuda.c
// (XSA orthogonality, agreement with xsa_attend_serial). qkv (T, (H + 2 Hkv) hd) after RoPE;
// spans (4, T) as lo0, hi0, lo1, hi1; out (T, H hd) fp32.
static int attention_probe(struct cu_state *st, const float *qkv, const int32_t *spans, float *out, xsa_error *err) {
    const struct model_config *c = &st->m->cfg;
    size_t T = (size_t)st->t_cap, W = (size_t)(c->n_head + 2 * c->n_kv_head) * c->head_dim;
    size_t Q = (size_t)c->n_head * c->head_dim;
    CU_CHECK(cudaStreamCreate(&st->stream));
    CU_CHECK(cudaMalloc((void **)&st->qkv, T * W * 4));
    CU_CHECK(cudaMalloc(&st->xn, T * Q * 4));
    CU_CHECK(cudaMalloc((void **)&st->d_span, 4 * T * 4));
    CU_CHECK(cudaMemcpy(st->qkv, qkv, T * W * 4, cudaMemcpyHostToDevice));
    CU_CHECK(cudaMemcpy(st->d_span, spans, 4 * T * 4, cudaMemcpyHostToDevice));
    int rc = cu_attention(st, 0, (int)T, err);
    if (rc) return rc;
    CU_CHECK(cudaStreamSynchronize(st->stream));
    CU_CHECK(cudaMemcpy(out, st->xn, T * Q * 4, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int xsa_cuda_attention_probe(int index, int T, int H, int Hkv, int hd, int xsa, const float *qkv,
                                        const int32_t *spans, float *out, xsa_error *err) {
    if (T < 1 || H < 1 || Hkv < 1 || H % Hkv || hd < 1 || hd > 256)
        return cu_fail(err, XSA_EBADINPUT, "attention probe: bad shape");
    struct model m;
    memset(&m, 0, sizeof m);
    m.cfg.n_head = H;
    m.cfg.n_kv_head = Hkv;
    m.cfg.head_dim = hd;
    m.cfg.xsa[0] = (unsigned char)(xsa != 0);
    struct cu_state st;
    memset(&st, 0, sizeof st);
    st.m = &m;
    st.fp32 = 1;
    st.t_cap = T;
    int rc = 0;
    if (cudaSetDevice(index) != cudaSuccess) rc = cu_fail(err, XSA_ERUNTIME, "attention probe: no GPU %d", index);
    if (!rc) rc = attention_probe(&st, qkv, spans, out, err);
    cudaFree(st.qkv);
    cudaFree(st.xn);
    cudaFree(st.d_span);
    if (st.stream) cudaStreamDestroy(st.stream);
    return rc;
}
