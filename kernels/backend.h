// backend.h: the only interface the rest of xsa-eval sees of a compute backend.
//
// A batch is T packed tokens (no padding) in rows. A row is a shared prefix followed by zero
// or more branches: [p0 .. pn-1][b0 tokens][b1 tokens].... A prefix token attends causally
// within the prefix; a branch token attends to the whole prefix and causally within its own
// branch, never to another branch or another row. Branch positions continue from the prefix
// length (each branch restarts at position n). A plain request is a row with no branches.
//
// Each token t carries two key ranges of packed indices, half-open:
//   span0 = [span0_lo[t], span0_hi[t])   the row prefix it sees (for a prefix token: the row
//                                         start, or its document's in a row of several, up to
//                                         and including t)
//   span1 = [span1_lo[t], span1_hi[t])   its own branch up to and including t; empty
//                                         (lo == hi) for prefix tokens
// Keys are visited span0 then span1, in increasing index: scores never depend on what else
// shares the batch.
//
// What reads a token's predecessor (smear, bigram hash, key offset) reads the previous token of
// its row, also across a document's start inside the row.
//
// Optionally (batch.before non-NULL) a row's first token names the packed index of the token
// before it in its text, packed as a one-token row that nothing else attends to: a text cut
// into rows (documents split at BOS) keeps, for what reads a token's predecessor
// (parameter-golf's SmearGate and bigram hash), the predecessor attention does not see.
//
// Scoring entries are (token index, target id) pairs; several may share an index. For each
// the backend returns log P(target) under log-softmax over the full vocabulary width
// (cfg.vocab_size) of the output at that index, and whether target is the argmax (ties go to
// the lowest id, as torch.argmax).
//
// Optionally (batch.dist non-NULL; off by default, and then nothing of it runs) the backend
// also hands over each entry's whole distribution, log-softmax over the full vocabulary, in
// chunks of at most BACKEND_DIST_CHUNK ids: never a (T, V) tensor, only what one chunk of
// one tile of rows needs.
//
// Also optional (batch.probe non-NULL; off by default): attention statistics at each entry's
// token, per layer and query head: cos(y, v) between the head's attention output y before
// any XSA projection and the token's own value vector v (of the KV head the query head
// reads), cos(z, v) after the projection (the same value in SA layers), and a_ii, the
// attention weight the token puts on itself. A backend that cannot compute them refuses the
// batch (XSA_ERUNTIME).
#ifndef XSA_KERNELS_BACKEND_H
#define XSA_KERNELS_BACKEND_H

#include <stdint.h>

#include "common/error.h"
#include "model/model.h"

#define BACKEND_MAX_TOKENS (1 << 24)  // tokens per batch: keeps every (T, width) offset far inside a long

#define BACKEND_DIST_CHUNK 4096  // ids per distribution chunk; chunk k covers [k * 4096, (k + 1) * 4096)

struct backend_dist_sink {
    // Called once per (entry, chunk): logprob[j] = log P(v0 + j) at the entry's output for the
    // ids [v0, v0 + nv), v0 a multiple of BACKEND_DIST_CHUNK. Calls for different pairs may come
    // at the same time from the backend's threads, in any order (write only to storage of that
    // pair); the values, as the entries' log-probabilities, never depend on the batch. Every
    // chunk of every entry must come (ppl's --kl refuses a batch where one did not).
    void (*chunk)(void *ctx, int entry, int v0, int nv, const float *logprob);
    void *ctx;
};

struct score_batch {
    int n_tokens;                 // T
    const int32_t *token;         // (T) input token ids
    const int32_t *pos;           // (T) position ids
    const int32_t *span0_lo, *span0_hi;  // (T)
    const int32_t *span1_lo, *span1_hi;  // (T)
    const int32_t *before;        // (T) or NULL: at a row's first token, the packed index of the
                                  // text's token before it; -1 elsewhere (see above)
    int n_entries;                // S
    const int32_t *entry_index;   // (S) packed token index whose output is read
    const int32_t *entry_target;  // (S) target token id, 0 <= id < vocab_size
    const struct backend_dist_sink *dist;  // NULL: no distributions (the default)
    float *probe;                 // NULL, or (S, n_layer, n_head, BACKEND_PROBE_STATS) out
};

enum { BACKEND_PROBE_COS_Y, BACKEND_PROBE_COS_Z, BACKEND_PROBE_AII, BACKEND_PROBE_STATS };

enum backend_pack {               // weight packing for the CPU's AVX-512 kernel
    BACKEND_PACK_AUTO = 0,        // when the packed copy takes at most half of the available memory
    BACKEND_PACK_ALWAYS = 1,
    BACKEND_PACK_NEVER = 2,
};

struct backend_options {
    int n_threads;                // CPU threads; 0 = all cores
    int max_batch_tokens;         // largest T the caller will send (sizes scratch buffers); 0 = the
                                  // backend's default for its device (see backend.batch_tokens)
    // Kernel choices, for measuring and testing; zero / NULL: the backend picks.
    const char *cpu_gemm;         // blas | avx2 | avx512 | scalar
    const char *cpu_attn;         // avx2 | scalar
    enum backend_pack cpu_pack;
    int cuda_max_tokens;          // caps the GPU's activation buffers (exercises the sub-batch split)
    int quiet;                    // --quiet: no note when "auto" falls back to the CPU
};

// The kernel choices of the environment (XSA_CPU_GEMM, XSA_CPU_ATTN, XSA_CPU_PACK,
// XSA_CUDA_MAX_TOKENS; README "Environment"), read once by the command line into o. A value
// outside its set is exit 2 naming the variable and what it takes. Unset or empty: no choice.
int backend_options_from_env(struct backend_options *o, xsa_error *err);

struct backend {
    const char *name;             // "cpu" | "cuda"
    char device_desc[256];        // human-readable device, for reports
    char numerics[128];           // what decides a score's bits (kernels, dtype; not threads or
                                  // batches): two backends with the same string give the same scores
    int n_threads;                // CPU threads it runs (0 on a GPU)
    int batch_tokens;             // tokens per call the device is sized for: max_batch_tokens when
                                  // given, else CPU 4096, CUDA 65536 or as many as fit in GPU memory
    const struct model *model;    // what it scores (set by backend_open)
    void *impl;
    // Fills logprob[S] and greedy[S] for a batch backend_check_batch accepted (callers go
    // through backend_score). Returns 0 or an error code with err set.
    int (*score)(struct backend *be, const struct score_batch *b, float *logprob, uint8_t *greedy,
                 xsa_error *err);
    void (*destroy)(struct backend *be);
};

// Opens a backend for `m` (which must outlive it). device: "auto", "cpu", "cuda" or "cuda:N".
// "auto" picks the GPU when one is usable and says so on stderr when it falls back to the CPU.
int backend_open(struct backend *be, const char *device, const struct model *m,
                 const struct backend_options *opt, xsa_error *err);
// backend_open with the GPU compute dtype: "bfloat16" (NULL: the default) or "float32" (for
// parity runs); the CPU backend always computes in fp32 and accepts either.
int backend_open_dtype(struct backend *be, const char *device, const char *dtype, const struct model *m,
                       const struct backend_options *opt, xsa_error *err);
void backend_close(struct backend *be);

// Scores a batch: the contract checks below, then the backend. The one way to call a backend.
int backend_score(struct backend *be, const struct score_batch *b, float *logprob, uint8_t *greedy, xsa_error *err);

// What every backend relies on, checked once here so that a malformed model or batch cannot
// make a kernel read out of bounds (exit 2 with what is wrong):
//   the model: a supported shape and architecture, every weight the forward reads present;
//   the batch: sizes in range, arrays present, token ids and targets in the vocabulary,
//   positions in range (gpt2: below its learned positions), key spans ordered and causal,
//   entries reading tokens of the batch.
int backend_check_model(const struct model *m, xsa_error *err);
int backend_check_batch(const struct model_config *c, const struct score_batch *b, xsa_error *err);

// CPU backend constructor (kernels/cpu).
int cpu_backend_open(struct backend *be, const struct model *m, const struct backend_options *opt,
                     xsa_error *err);

#endif
