// batch.h: builds a struct score_batch (backend.h) from rows of tokens, so callers and tests
// never fill key spans by hand. The builder owns the arrays; batch_view() points a
// score_batch at them (valid until the next add, reset or free).
#ifndef XSA_KERNELS_BATCH_H
#define XSA_KERNELS_BATCH_H

#include <stdint.h>

#include "common/error.h"
#include "common/vec.h"
#include "kernels/backend.h"

struct batch_builder {
    struct ivec token, pos;          // (T)
    struct ivec span0_lo, span0_hi;  // (T)
    struct ivec span1_lo, span1_hi;  // (T)
    struct ivec before;              // (T) once batch_add_row_after was used, else empty
    struct ivec entry_index, entry_target;  // (S)
};

void batch_init(struct batch_builder *bb);
void batch_reset(struct batch_builder *bb);  // empties it, keeping the memory
void batch_free(struct batch_builder *bb);

int batch_n_tokens(const struct batch_builder *bb);

// Appends a plain row (one request); *first receives the packed index of tokens[0].
// Returns 0 or XSA_EBADINPUT (n < 1, too many tokens).
int batch_add_row(struct batch_builder *bb, const int32_t *tokens, int n, int *first,
                  xsa_error *err);

// Appends a plain row that continues a text cut before it: `before`, the token preceding
// tokens[0] in the text, is packed first as a one-token row nobody attends to, and named as
// tokens[0]'s predecessor (backend.h's batch.before). *first receives the packed index of
// tokens[0]. Returns 0 or XSA_EBADINPUT (n < 1, too many tokens).
int batch_add_row_after(struct batch_builder *bb, int32_t before, const int32_t *tokens, int n, int *first,
                        xsa_error *err);

// Appends a plain row that holds several documents: each token equal to doc_start starts one,
// and a token attends from its document's start (or the row's) up to itself. Positions run
// over the whole row, and what reads a token's predecessor (smear, bigram hash, key offset)
// reads the row's previous token across a cut, as modded-nanogpt's flat validation chunks do.
int batch_add_row_docs(struct batch_builder *bb, const int32_t *tokens, int n, int32_t doc_start, int *first,
                       xsa_error *err);

// Appends a row = prefix + branches: branch i (branch_len[i] >= 1 tokens) attends to the
// whole prefix and causally to itself, with positions continuing from n_prefix.
// prefix_first receives the packed index of prefix[0]; branch_first[i] (n_branches) that of
// branch i's first token. n_prefix >= 1; n_branches may be 0.
int batch_add_tree(struct batch_builder *bb, const int32_t *prefix, int n_prefix,
                   const int32_t *const *branches, const int *branch_len, int n_branches,
                   int *prefix_first, int *branch_first, xsa_error *err);

// Appends one scoring entry: log P(target) at the output of packed token `index`. Returns 0.
int batch_add_entry(struct batch_builder *bb, int32_t index, int32_t target, xsa_error *err);

// Appends entries that score tokens[1..n) of a sequence laid out at packed indices
// first, first + 1, ...: entry k reads index first + k and targets tokens[k + 1].
int batch_add_entries_seq(struct batch_builder *bb, int first, const int32_t *tokens, int n,
                          xsa_error *err);

// A view of the builder's arrays as the backend contract's batch.
struct score_batch batch_view(const struct batch_builder *bb);

#endif
