// ttt_global.h: the global SGD pass of the 2026-04-13/14 records' phased TTT
// (train_val_ttt_global_sgd_distributed, one process): every weight of the model trained on a
// token stream of documents it has already scored, as their code does it.
//
// The stream is cut into chunks of GLOBAL_TTT_CHUNK_TOKENS; every chunk but the last is trained on
// for GLOBAL_TTT_EPOCHS passes over batches of GLOBAL_TTT_BATCH_SEQS sequences of seq_len tokens
// (a batch whose last target lies past the stream is skipped), one SGD step each (momentum
// GLOBAL_TTT_MOMENTUM, the gradients' norm clipped to GLOBAL_TTT_GRAD_CLIP when above 0, the
// momentum starting afresh at each call), at a rate that rises linearly from GLOBAL_TTT_WARMUP_START_LR over the first
// GLOBAL_TTT_WARMUP_CHUNKS chunks and then falls from GLOBAL_TTT_LR on a cosine. A batch's loss is
// the mean over its tokens; with GLOBAL_TTT_RESPECT_DOC_BOUNDARIES the batch is one flat sequence
// whose attention is cut at each BOS and every seq_len tokens after one (their varlen attention;
// RoPE at the flat positions), else seq_len-token sequences.
#ifndef XSA_EVAL_TTT_GLOBAL_H
#define XSA_EVAL_TTT_GLOBAL_H

#include <stdint.h>

#include "common/error.h"
#include "eval/ttt.h"
#include "model/model.h"

// Trains m's weights (in place) on tok[0..n_tok) as above with s's GLOBAL_TTT_* settings, on the
// CPU with n_threads; bos the BOS id. A loss that is not finite is exit 3, naming the chunk.
int ttt_global_sgd(struct model *m, int n_threads, const int32_t *tok, long n_tok, int seq_len, int bos,
                   const struct ttt_settings *s, xsa_error *err);

#endif
