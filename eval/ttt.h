// ttt.h: parameter-golf's legal score-first test-time training (`ppl --ttt`): the 2026-03-23
// record's eval_val_sliding_ttt (PR #461's recipe, also the 2026-03-29 record's), and its
// 2026-04 form (eval_val_sliding_ttt of 2026-04-06 QK5 and 2026-04-08, eval_val_ttt of 2026-04-09
// 3LayerRecur), which plans its windows without the tail repeats and defaults to TTT_LR 0.005 and
// no frozen blocks, and 2026-04-04's eval_val_ttt (2026-03's windows, no frozen blocks); the model
// says which (ttt_recipe_of). The stream's
// sliding windows are grouped into chunks of TTT_CHUNK_TOKENS by the first target each scores;
// each chunk's windows are scored with the weights as they are, then (but for the last chunk)
// the model trains on the chunk's whole sequences: TTT_EPOCHS passes of SGD with momentum over
// batches of TTT_BATCH_SEQS sequences, the gradient's norm clipped to TTT_GRAD_CLIP, the learning
// rate TTT_LR * (1 + cos(pi chunk / (chunks - 1))) / 2. Every target is scored before any update
// that saw it. The parameters of the first TTT_FREEZE_BLOCKS blocks ("blocks.N.", not the weight
// banks, as the record's named_parameters() filter) stay as they are.
#ifndef XSA_EVAL_TTT_H
#define XSA_EVAL_TTT_H

#include <stddef.h>

#include "common/error.h"
#include "eval/ppl.h"
#include "model/model.h"

struct train_param;  // kernels/cpu/cpu_train.h

enum ttt_recipe {
    TTT_2026_03,     // 2026-03-23/29: windows every stride holding at least stride tokens, each scoring its last stride
    TTT_2026_04,     // 2026-04-06..09: windows whose scored part (past context - stride) is not empty, scoring it
    TTT_2026_04_04,  // 2026-04-04's eval_val_ttt: 2026-03's windows, 2026-04's defaults but TTT_LR 0.002
    TTT_2026_04_10,  // 2026-04-10's eval_val_ttt_lora: per document, LoRA adapters trained chunk by chunk (eval/ttt_lora.h)
    TTT_2026_04_23,  // 2026-04-23 on: the same, adapters scaled by TTT_LORA_ALPHA / rank, A kept between documents
};

struct ttt_settings {
    int recipe;  // enum ttt_recipe
    // full-parameter recipes
    double lr, momentum, grad_clip;
    int epochs, chunk_tokens, freeze_blocks, batch_seqs;
    int qat;  // TTT_2026_03: LATE_QAT, CastedLinear's QAT on in training (on when 2026-03-23's run's TTT trains)
    // TTT_2026_04_10 (the record's names: TTT_LORA_RANK, ...; lora_seed is xsa-eval's TTT_LORA_SEED)
    int lora_rank, chunk_size, eval_seq_len, batch_size, grad_steps, k_lora, mlp_lora, o_lora, sgd;
    double lora_lr, weight_decay, beta1, beta2;
    long lora_seed;
    double lora_alpha;  // TTT_2026_04_23: TTT_LORA_ALPHA (the adapters' output times alpha / rank; 0: 1) ...
    int warm_start_a;   // ... and TTT_WARM_START_A (a batch slot's A carries on to its next document)
    // ... the documents it scores (VAL_DOC_FRACTION, SEED: random.Random(SEED).sample of them)
    double doc_fraction;
    long doc_seed;
    // ... and its phases (2026-04-13/14's eval_val_ttt_phased: PHASED_TTT_*, GLOBAL_TTT_*)
    int phased, prefix_docs, num_phases;
    double g_lr, g_momentum, g_warmup_start_lr, g_grad_clip;
    int g_epochs, g_chunk_tokens, g_batch_seqs, g_warmup_chunks, g_respect_docs;
};

// The recipe of the records whose GPT m is: TTT_2026_04_23 for the GPTs with side-by-side lanes
// and sparse attention gates (2026-04-23 on), TTT_2026_04_10 for the other GPTs with those lanes
// (2026-04-10 on), TTT_2026_04 for the other looped GPTs (NUM_LOOPS, 2026-04-05 on), TTT_2026_04_04 for the other GPTs with gated U-Net skips (skip_gates: 2026-04-04's
// RECUR_LAYERS GPT), TTT_2026_03 for the GPT of 2026-03-20..29.
int ttt_recipe_of(const struct model *m);

// Whether recipe trains LoRA adapters per document (TTT_2026_04_10, TTT_2026_04_23: eval/ttt_lora.h).
int ttt_is_lora(int recipe);

// Which records' code a recipe follows, for messages and reports ("eval_val_sliding_ttt of 2026-03-23, 2026-03-29 and 2026-03-31").
const char *ttt_recipe_source(int recipe);

// The function settings s run: the recipe's, or with PHASED_TTT_ENABLED 2026-04-13/14's
// eval_val_ttt_phased.
const char *ttt_settings_source(const struct ttt_settings *s);

// The recipe's records' defaults (their Hyperparameters: TTT_LR 0.002 (2026-03, 2026-04-04) or
// 0.005 (2026-04-06..09), TTT_EPOCHS 3, TTT_CHUNK_TOKENS 32768, TTT_FREEZE_BLOCKS 2 (2026-03; the
// 2026-03-23 README's run sets 0) or 0, TTT_MOMENTUM 0.9, TTT_BATCH_SEQS 32, TTT_GRAD_CLIP 1.0,
// LATE_QAT 1 for 2026-03 (ttt_settings_of_model: 0 for 2026-03-31's GPT));
// 2026-04-10's: TTT_LORA_RANK 96, TTT_LORA_LR 0.0001, TTT_CHUNK_SIZE 32, TTT_EVAL_SEQ_LEN 2048,
// TTT_BATCH_SIZE 64, TTT_GRAD_STEPS 1, TTT_WEIGHT_DECAY 0.5, TTT_BETA1 0, TTT_BETA2 0.999, TTT_K_LORA,
// TTT_MLP_LORA and TTT_O_LORA 1, TTT_OPTIMIZER adam, and TTT_LORA_SEED 1337; every document
// (VAL_DOC_FRACTION 1; SEED 1337 draws a sample below 1); its phases off
// (PHASED_TTT_ENABLED 0) with 2026-04-14's defaults: PHASED_TTT_PREFIX_DOCS 2000,
// PHASED_TTT_NUM_PHASES 1, GLOBAL_TTT_LR 0.001,
// GLOBAL_TTT_MOMENTUM 0.9, GLOBAL_TTT_EPOCHS 1, GLOBAL_TTT_CHUNK_TOKENS 32768,
// GLOBAL_TTT_BATCH_SEQS 32, GLOBAL_TTT_WARMUP_START_LR 0, GLOBAL_TTT_WARMUP_CHUNKS 0,
// GLOBAL_TTT_GRAD_CLIP 1 and GLOBAL_TTT_RESPECT_DOC_BOUNDARIES 1 (2026-04-13's code defaults
// GLOBAL_TTT_LR 0.005, GLOBAL_TTT_EPOCHS 3 and PHASED_TTT_PREFIX_DOCS 10000).
void ttt_settings_init(struct ttt_settings *s, int recipe);

// The defaults of the records whose GPT m is: its recipe's, and for the GPTs with 2026-04-10's
// lanes and attention gates their code's: 2026-04-16's (output gates) TTT_CHUNK_SIZE 48,
// 2026-04-19/22's (dense gates) that and PHASED_TTT_ENABLED 1 (their only function); LATE_QAT 0
// for 2026-03-31's GPT (its soft-rounding QAT is not run; 2026-03-23's run trains with its own, 1).
void ttt_settings_of_model(struct ttt_settings *s, const struct model *m);

// "TTT_LR=0.002 TTT_FREEZE_BLOCKS=0,...": settings by the record's environment names, separated by
// spaces, commas or line breaks (TTT_ENABLED=1 is accepted and ignored), over s; a name of the other kind of
// recipe (TTT_LR for 2026-04-10's, TTT_LORA_LR for the others) is refused. Exit-2 errors name the word.
int ttt_settings_parse(struct ttt_settings *s, const char *spec, xsa_error *err);

// One SGD step with momentum on the parameters p[live[0..n)], after clipping their gradients'
// norm to clip when clip > 0 (torch.nn.utils.clip_grad_norm_, then torch.optim.SGD without
// dampening or weight decay; a first step's buffer mom[i] is the gradient, as 0 * mu + g).
void ttt_sgd_step(const struct train_param *p, const int *live, int n, float **mom, double clip, double momentum, double lr);

// The progress line on stderr: "ttt <what> i/n: t targets, their nats/token (sum / t; bits/byte
// when bytes > 0), seconds since t_start".
void ttt_progress(const char *what, long i, long n, double sum, size_t t, double bytes, double t_start);

// "TTT_LR=0.002 TTT_EPOCHS=3 ..." (every setting), for reports.
void ttt_settings_describe(const struct ttt_settings *s, char *out, size_t n);

// The trainer's GEMMs are OpenBLAS's: the OPENBLAS_CORETYPE to run it with on this CPU when it
// fell back to SSE kernels (2.7 times slower at the 2026-04-09 record's shape), else NULL.
const char *ttt_blas_core_to_force(void);

// 0 when ttt_score can train m, else exit 2 naming what it has that the trainer lacks
// (kernels/cpu/cpu_train.h).
int ttt_check(const struct model *m, xsa_error *err);

// Scores d (one token stream) as the recipe's function: TTT_2026_04_10 as ttt_lora_score (context
// and stride unused), the others as eval_val_sliding_ttt with windows of `context` tokens advancing
// by `stride`, training m (whose weights change) on the CPU with n_threads (0: all cores); each
// window is one forward of the trainer's (kernels/cpu/cpu_train.h), the same bits for any thread
// count. out gets every scored target in window order (a window's targets in position order; the
// 2026-03 records' last windows score the stream's last `stride` targets again, and so does this)
// with eval_val's bytes. progress: a line per ten chunks on stderr.
int ttt_score(struct model *m, int n_threads, const struct ppl_docs *d, int context, int stride, const struct ttt_settings *s,
              int progress, struct ppl_scores *out, xsa_error *err);

#endif
