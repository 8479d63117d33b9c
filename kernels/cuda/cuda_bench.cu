// cuda_bench.cu: cuBLAS's own GEMM rate on this GPU, measured with the configuration the
// forward uses (bf16 inputs, fp32 output and accumulation), as the denominator of model FLOP
// utilisation in bench/bench_cuda.c. Exported for benchmarks only; the backend never calls it.
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
