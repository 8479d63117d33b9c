// ttt_lora.h: the 2026-04-10 records' score-first LoRA test-time training (`ppl --ttt` for a GPT
// with side-by-side lanes), as their eval_val_ttt_lora scores the validation stream. The stream
// is cut into documents at each BOS (token 1; a document's last target is the next one's BOS).
// Each document gets fresh LoRA adapters (kernels/cpu/cpu_train.h: q, v and by choice k, the
// attention's output and the MLP in every layer, and the head), B zero and A uniform in
// +-1/sqrt(in), and is read in chunks of TTT_CHUNK_SIZE targets: each chunk is scored in a window
// ending at its last target (at most TTT_EVAL_SEQ_LEN tokens, from the document's start), then,
// but for the document's last chunk, the adapters take TTT_GRAD_STEPS steps of AdamW (eps 1e-10,
// weight decay TTT_WEIGHT_DECAY) or SGD with momentum TTT_BETA1 on the mean loss of its targets.
// Documents are taken in the record's queue (sorted by length into batches of TTT_BATCH_SIZE,
// the longest batch first). Without phases the base model never changes, so documents are
// independent and the order changes no score: up to a memory bound, a batch's documents train side by
// side (their windows share the GEMMs of the frozen model, cpu_trainer_windows).
// With PHASED_TTT_ENABLED (2026-04-13's eval_val_ttt_phased, 2026-04-14's with
// PHASED_TTT_NUM_PHASES): after the batch that brings the documents scored to a phase's boundary
// (PHASED_TTT_PREFIX_DOCS * (phase + 1) / phases), the
// first `boundary` of them by (batch, place) train every weight of the base model
// (eval/ttt_global.h), and the documents after it are scored by the model so trained.
//
// The record draws A from torch's global generator, in a state its training left; xsa-eval draws
// it from its own (ttt_lora_uniform), keyed by TTT_LORA_SEED, the document and the tensor.
//
// From 2026-04-23 (TTT_2026_04_23) every adapter's output is scaled by TTT_LORA_ALPHA / rank, and
// with TTT_WARM_START_A a document's adapters start from the A its batch slot ended the previous
// batch with (B zero): each slot of the record's batch is a chain of documents, and a slot whose
// document is done takes the batch's remaining optimizer steps on a zero gradient (AdamW's weight
// decay goes on shrinking its A), as the record's one optimizer over the whole batch does.
#ifndef XSA_EVAL_TTT_LORA_H
#define XSA_EVAL_TTT_LORA_H

#include <stdint.h>

#include "common/error.h"
#include "eval/ppl.h"
#include "eval/ttt.h"
#include "model/model.h"

// The draw keys (ttt_lora_uniform's doc) of adapters not drawn per document (TTT_WARM_START_A):
// slot b of the adapters built the g-th time KEY_SLOT + g KEY_STEP + b, slot b of the short last
// batch (its length-sorted index i) KEY_SHORT + i KEY_STEP + b.
#define TTT_LORA_KEY_SLOT 1000000000L
#define TTT_LORA_KEY_SHORT 2000000000L
#define TTT_LORA_KEY_STEP 100000L

// n values uniform in (-bound, bound), the draw for adapter tensor `tensor` (its index among the
// adapters' parameters, cpu_trainer_lora_params) of document `doc` (0 the stream's first):
// splitmix64 of a key from (seed, doc, tensor) plus the element's index, its top 24 bits.
void ttt_lora_uniform(long seed, long doc, int tensor, long n, double bound, float *out);

// Scores every target of d's documents, the stream cut to a whole number of `context` tokens and
// one (load_validation_tokens with EVAL_SEQ_LEN; also the global SGD's sequence length), (out in
// document then position order; ctx the target's position in its window + 1, unit the document)
// with m's adapters trained as above on the CPU with n_threads; m's weights change only with
// phases. progress: a line per 64 documents, and one per phase, on stderr.
int ttt_lora_score(struct model *m, int n_threads, const struct ppl_docs *d, int context, const struct ttt_settings *s, int progress,
                   struct ppl_scores *out, xsa_error *err);

#endif
