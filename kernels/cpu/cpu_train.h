// cpu_train.h: gradients of the parameter-golf GPT's training loss on the CPU, for test-time
// training (eval/ttt.c). The loss is the records' GPT.forward: mean cross-entropy of the
// soft-capped logits over every target of n sequences of S tokens. The forward is the
// inference forward's arithmetic in fp32 (kernels/cpu/cpu_forward.c), with the activations
// the backward needs kept; the backward is written out by hand, layer by layer.
//
// The GPTs it covers are those of the records with full-parameter TTT: 2026-03-20..29's
// (2026-03-23, 2026-03-29: weightless RMSNorms, tied soft-capped head, bigram hash, SmearGate,
// 2026-03-23's options VALUE_RESIDUAL (vr_lambda), GATED_ATTENTION (gates with a bias) and DTG_ENABLED,
// U-Net skips, resid_mix, LN_SCALE, QK-norm, partial RoPE, q_gain, XSA, the shared value
// embedding, the (leaky) relu^2 MLP), 2026-03-31's (virtual layers: blocks over the banks of the
// layers they repeat, repeat_mlp's untied MLPs, block 0 without attention, two lanes written by
// the attention and then the MLP) and the 2026-04 looped ones (2026-04-06 QK5, 2026-04-08,
// 2026-04-09: blocks run by several layers, whose gradients add up; gated U-Net skips; 2026-04-08's
// two lanes merged by lane_merge; GPT-J blocks) and 2026-04-04's (RECUR_LAYERS, value embeddings,
// skips past skip_weights' rows), 2026-04-10's side-by-side lanes, 2026-04-16's SmearGate on the
// raw embedding and attention output gates, 2026-04-19's dense attention gates; LoRA adapters over
// any of those, frozen. cpu_train_check refuses any other feature by name.
#ifndef XSA_KERNELS_CPU_TRAIN_H
#define XSA_KERNELS_CPU_TRAIN_H

#include <stdint.h>

#include "common/error.h"
#include "model/model.h"

// One trainable tensor of the model: its weights (the model's own array, updated in place),
// its gradient, and the record's name for it.
struct train_param {
    char name[48];     // as GPT.named_parameters() names it ("qo_bank[3]" for a bank's slice; a shared block's once)
    float *w, *grad;
    long n;
    int block;         // the Block module it belongs to ("blocks.N.", N the physical block), or -1 (TTT_FREEZE_BLOCKS)
    int matrix;        // 1: a layer's attention or MLP matrix (blocks.N.* in an int6 dict, a bank's slice in a banked file)
};

struct cpu_trainer;
struct cpu_pool;

// 0 when cpu_trainer_open can train m, else XSA_EBADINPUT naming the first feature it cannot.
int cpu_train_check(const struct model *m, xsa_error *err);

// A trainer for m (whose weights it will write) on sequences of S tokens, n_threads CPU
// threads (0: all cores). NULL with err set when m cannot be trained.
struct cpu_trainer *cpu_trainer_open(struct model *m, int S, int n_threads, xsa_error *err);
void cpu_trainer_close(struct cpu_trainer *t);
// Its worker threads, for the caller's elementwise work between passes (the optimizer's step).
struct cpu_pool *cpu_trainer_pool(struct cpu_trainer *t);

// The parameters, in GPT.named_parameters() order.
int cpu_trainer_params(const struct cpu_trainer *t, struct train_param **out);

// Gradients (into each param's grad, overwritten) and the mean loss of n sequences:
// inputs tok[s S + j], targets tok[s S + j + 1] (n S + 1 tokens). Sequences are independent
// (position 0 of each has no previous token), as the records' x.reshape(-1, S).
double cpu_trainer_grad(struct cpu_trainer *t, const int32_t *tok, int n);

// From then on (on: 1) cpu_trainer_grad's passes read the CastedLinear matrices (bigram.proj,
// ve_shared.proj) int6 fake-quantized per row, straight-through, as the 2026-03-23 record's
// training forward does once its late QAT is on; scoring reads them as they are.
void cpu_trainer_qat(struct cpu_trainer *t, int on);

// The loss of each target of one sequence without gradients: inputs x[0..S), targets y[0..S);
// for positions [from, n) -log P(y[j]) into nll[j - from] and whether y[j] is the argmax (the
// first largest logit) into greedy[j - from]. Positions from n on change nothing before them
// (causal), so a window shorter than S is padded with any token.
void cpu_trainer_score(struct cpu_trainer *t, const int32_t *x, const int32_t *y, int from, int n, float *nll, uint8_t *greedy);

// Zero every gradient (the weights', and the adapters' where there are some).
void cpu_trainer_zero_grad(struct cpu_trainer *t);

// One segment of a flattened batch, as the records' varlen attention reads one (2026-04-13's
// global SGD TTT: attention within the segment alone): x[0..n) (n up to the trainer's S) at
// positions pos0 .. pos0 + n - 1 of the batch (RoPE), targets y[0..n), prev the token before it
// in the batch (-1: none), which 2026-04-16's SmearGate reads; adds inv_total times the gradient of
// their summed loss to the weights' gradients and returns that sum. (A bigram table or the
// 2026-03 SmearGate would read prev too: ttt_lora's phases refuse those.)
double cpu_trainer_segment(struct cpu_trainer *t, const int32_t *x, const int32_t *y, int n, long pos0, int32_t prev,
                           float inv_total);

// LoRA adapters for test-time training (the 2026-04-10 records' BatchedTTTLoRA): n_slots sets,
// one per document trained side by side, each on every layer's q and v, and by choice k, the
// attention's output (reading the attention's normed input) and the MLP (reading its normed
// input), y += (x A^T) B^T with A (rank, in) and B (out, rank); and on the head, before the
// soft-cap. From then on the trainer's weights are frozen: only the adapters get gradients.
struct cpu_lora_spec {
    int rank, k, mlp, o;
    double alpha;  // > 0: every adapter's output times alpha / rank (2026-04-23 on), else 1
};
int cpu_trainer_lora(struct cpu_trainer *t, const struct cpu_lora_spec *spec, int n_slots, xsa_error *err);

// Slot `slot`'s adapters, in BatchedTTTLoRA.parameters() order and named as it names them
// ("lm_head_lora.A", "q_loras.3.B", ...), all 0 until the caller sets them.
int cpu_trainer_lora_params(const struct cpu_trainer *t, int slot, struct train_param **out);

// One sequence of a pass (cpu_trainer_windows): inputs x[0..n) at positions 0..n-1, targets
// y[0..n); the loss of positions [from, from + count) -log P(y[j]) into nll[j - from] and whether
// y[j] is the argmax into greedy[j - from] (both may be NULL with grad); adapters of slot `slot`.
struct cpu_window {
    const int32_t *x, *y;
    int n, from, count, slot;
    float *nll;
    uint8_t *greedy;
};

// One forward of several windows side by side: their rows share each GEMM of the frozen weights;
// attention, positions, adapters and loss are each window's own, so each gets what it would alone
// (up to the GEMMs' rounding). With grad, the gradients (overwritten) of each window's mean loss
// into its slot's adapters' grads. Rows in all up to the trainer's S; several windows only with
// adapters (else the weights' gradients would mix). Returns n, or 0 (nothing done) past those.
int cpu_trainer_windows(struct cpu_trainer *t, const struct cpu_window *w, int n, int grad);

// One window, slot 0: with grad and no adapters, the gradients of its mean loss into the weights'.
void cpu_trainer_chunk(struct cpu_trainer *t, const int32_t *x, const int32_t *y, int n, int from, int count, int grad, float *nll,
                       uint8_t *greedy);

#endif
