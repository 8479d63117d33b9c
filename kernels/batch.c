// batch.c: the batch builder. Spans follow backend.h: a prefix token sees [row start, itself];
// a branch token sees the whole prefix plus [branch start, itself].
#include "kernels/batch.h"

#include <string.h>

#define BATCH_MAX_TOKENS (1 << 30)

void batch_init(struct batch_builder *bb) { memset(bb, 0, sizeof *bb); }

static struct ivec *batch_vecs(struct batch_builder *bb, int i) {
    struct ivec *v[] = {&bb->token, &bb->pos, &bb->span0_lo, &bb->span0_hi, &bb->span1_lo,
                        &bb->span1_hi, &bb->entry_index, &bb->entry_target, &bb->before};
    return i < 9 ? v[i] : NULL;
}

void batch_reset(struct batch_builder *bb) {
    for (int i = 0; i < 9; i++) batch_vecs(bb, i)->n = 0;
}

void batch_free(struct batch_builder *bb) {
    for (int i = 0; i < 9; i++) ivec_free(batch_vecs(bb, i));
}

int batch_n_tokens(const struct batch_builder *bb) { return (int)bb->token.n; }

// Appends one token; the six token vectors always have equal length, and `before` too once it
// is in use.
static void push_token(struct batch_builder *bb, int32_t tok, int32_t pos, int32_t l0, int32_t h0, int32_t l1,
                       int32_t h1) {
    if (bb->before.n) ivec_push(&bb->before, -1);
    ivec_push(&bb->token, tok);
    ivec_push(&bb->pos, pos);
    ivec_push(&bb->span0_lo, l0);
    ivec_push(&bb->span0_hi, h0);
    ivec_push(&bb->span1_lo, l1);
    ivec_push(&bb->span1_hi, h1);
}

int batch_add_tree(struct batch_builder *bb, const int32_t *prefix, int n_prefix,
                   const int32_t *const *branches, const int *branch_len, int n_branches,
                   int *prefix_first, int *branch_first, xsa_error *err) {
    if (n_prefix < 1 || n_branches < 0 || !prefix || (n_branches > 0 && (!branches || !branch_len)))
        return xsa_fail(err, XSA_EBADINPUT, "batch: a row needs a prefix of at least one token (got %d)", n_prefix);
    long total = (long)bb->token.n + n_prefix;
    for (int i = 0; i < n_branches; i++) {
        if (branch_len[i] < 1 || !branches[i])
            return xsa_fail(err, XSA_EBADINPUT, "batch: branch %d is empty; every branch needs a token", i);
        total += branch_len[i];
        if (total > BATCH_MAX_TOKENS) break;
    }
    if (total > BATCH_MAX_TOKENS)
        return xsa_fail(err, XSA_EBADINPUT, "batch: more than %d tokens in one batch", BATCH_MAX_TOKENS);
    int start = (int)bb->token.n, pend = start + n_prefix;
    for (int i = 0; i < n_prefix; i++) push_token(bb, prefix[i], i, start, start + i + 1, start + i + 1, start + i + 1);
    for (int b = 0; b < n_branches; b++) {
        int bstart = (int)bb->token.n;
        if (branch_first) branch_first[b] = bstart;
        for (int i = 0; i < branch_len[b]; i++)
            push_token(bb, branches[b][i], n_prefix + i, start, pend, bstart, bstart + i + 1);
    }
    if (prefix_first) *prefix_first = start;
    return 0;
}

int batch_add_row_after(struct batch_builder *bb, int32_t before, const int32_t *tokens, int n, int *first,
                        xsa_error *err) {
    if (n < 1 || !tokens) return xsa_fail(err, XSA_EBADINPUT, "batch: a row needs at least one token (got %d)", n);
    int at = (int)bb->token.n, rc = batch_add_row(bb, &before, 1, first, err);
    if (!rc) rc = batch_add_row(bb, tokens, n, first, err);
    if (rc) return rc;
    if (!bb->before.n)
        for (int i = 0; i < (int)bb->token.n; i++) ivec_push(&bb->before, -1);
    bb->before.v[*first] = at;
    return 0;
}

int batch_add_row(struct batch_builder *bb, const int32_t *tokens, int n, int *first,
                  xsa_error *err) {
    return batch_add_tree(bb, tokens, n, NULL, NULL, 0, first, NULL, err);
}

int batch_add_row_docs(struct batch_builder *bb, const int32_t *tokens, int n, int32_t doc_start, int *first,
                       xsa_error *err) {
    int rc = batch_add_row(bb, tokens, n, first, err);
    for (int i = 0, lo = *first; !rc && i < n; i++) {
        if (tokens[i] == doc_start) lo = *first + i;
        bb->span0_lo.v[*first + i] = lo;
    }
    return rc;
}

int batch_add_entry(struct batch_builder *bb, int32_t index, int32_t target, xsa_error *err) {
    (void)err;  // growth cannot fail (common/vec.h); the signature stays for its many callers
    ivec_push(&bb->entry_index, index);
    ivec_push(&bb->entry_target, target);
    return 0;
}

int batch_add_entries_seq(struct batch_builder *bb, int first, const int32_t *tokens, int n,
                          xsa_error *err) {
    for (int k = 0; k + 1 < n; k++) batch_add_entry(bb, first + k, tokens[k + 1], err);
    return 0;
}

struct score_batch batch_view(const struct batch_builder *bb) {
    return (struct score_batch){
        .n_tokens = (int)bb->token.n,
        .token = bb->token.v,
        .pos = bb->pos.v,
        .span0_lo = bb->span0_lo.v,
        .span0_hi = bb->span0_hi.v,
        .span1_lo = bb->span1_lo.v,
        .before = bb->before.n ? bb->before.v : NULL,
        .span1_hi = bb->span1_hi.v,
        .n_entries = (int)bb->entry_index.n,
        .entry_index = bb->entry_index.v,
        .entry_target = bb->entry_target.v,
    };
}
