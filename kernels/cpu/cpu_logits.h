// cpu_logits.h: log-softmax at a few hidden rows over the full vocabulary, in vocabulary
// chunks with an online logsumexp and argmax; never a (rows, V) logits buffer.
#ifndef XSA_KERNELS_CPU_LOGITS_H
#define XSA_KERNELS_CPU_LOGITS_H

#include <stdint.h>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_pool.h"

#define CPU_VOCAB_CHUNK BACKEND_DIST_CHUNK  // one distribution chunk per task

struct cpu_chunk_stat {  // one row's statistics over one vocabulary chunk
    float max;
    int32_t argmax;      // lowest id reaching max
    double sumexp;       // sum of exp(logit - max)
};

struct cpu_logits_args {
    enum cpu_gemm_kind gemm;
    const float *h;                  // (Rp, C) final-normed hidden rows; Rp % CPU_GEMM_ROWS == 0
    const float *lm_head;            // (V, C)
    const float *lm_head_packed;     // lm_head by cpu_gemm_pack (AVX-512 kind), or NULL
    int R, Rp, C, V;
    const int32_t *row_first;        // (R + 1) entries of row r: row_entries[row_first[r]..r+1]
    const int32_t *row_entries;      // (S) entry ids grouped by row
    const int32_t *entry_target;     // (S) target ids, 0 <= id < V
    float *entry_logit;              // (S) out: the target's logit
    struct cpu_chunk_stat *stats;    // (Rp, n_chunks) scratch
    float *scratch;                  // (n_threads, CPU_GEMM_ROWS * CPU_VOCAB_CHUNK)
    float *out_logprob;              // (S) out
    uint8_t *out_greedy;             // (S) out
    float softcap;                   // logits c*tanh(logits/c) after bias and divisor, before the rest; 0: none
    const struct backend_dist_sink *dist;  // NULL, or where every entry's distribution goes
    double *row_lse;                 // (R) scratch when dist: each row's logsumexp
    const float *bias;               // (V) added to the logits first (phi's head bias), or NULL
    float divisor;                   // logits / divisor before the soft-cap (granite's logits_scaling); 0: none
};

int cpu_logits_chunks(int V);

void cpu_logits(struct cpu_pool *pool, const struct cpu_logits_args *a);

#endif
