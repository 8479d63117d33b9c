// encode.h: turning a (context, continuation) request into token ids exactly as
// lm-evaluation-harness v0.4 does (TemplateLM._encode_pair, loglikelihood, and
// HFLM._loglikelihood_tokens' left truncation).
#ifndef XSA_EVAL_ENCODE_H
#define XSA_EVAL_ENCODE_H

#include "common/error.h"
#include "common/vec.h"
#include "model/tokenizer.h"

struct encode_options {
    int add_special;      // 1: encode with the tokenizer's default special tokens (lm-eval >= 0.4.9.2)
    int force_bos;        // --add-bos: prepend bos_id when the tokenizer would not add it
    int bos_replaces_post; // with force_bos: bos_id alone stands for the post-processor (transformers
                           // rebuilds it from tokenizer_config.json as "BOS $A")
    int bos_id;           // the tokenizer's BOS (-1 when none)
    int prefix_token_id;  // for an empty context: BOS if defined, else EOS
    int max_length;       // model context window
    // lm-eval's has_bos_prefix: a string that already starts with the decoded prefix token is
    // encoded without special tokens. NULL disables the check (tokenizers whose decode of a
    // control token differs from transformers', i.e. SentencePiece and llama2.c files).
    const char *prefix_text;
};

// Fills add_special, force_bos, bos_replaces_post, bos_id and prefix_token_id as lm-eval 0.4.13
// with transformers 5 sets them for `tok` under run's add_bos (1 --add-bos, 0 --no-add-bos, -1
// the tokenizer's default): prefix_token_id is the BOS, else the EOS, that tokenizer_config.json
// gives (without one, the tokenizer's own). --add-bos is refused where lm-eval would add no BOS
// or one xsa-eval cannot name. max_length and prefix_text stay the caller's.
int encode_options_init(struct encode_options *o, const struct tokenizer *tok, int add_bos, xsa_error *err);

// The prefix_text lm-eval would see for `tok` (decode of prefix_token_id), or NULL; *buf owns it.
const char *encode_prefix_text(const struct tokenizer *tok, int prefix_token_id, struct sbuf *buf);

// The scored form of one request: the model input and where the continuation is scored.
struct encoded_request {
    struct ivec input;    // (L) model input: (ctx + cont)[-(max_length+1):][:-1]
    struct ivec cont;     // (n) continuation tokens, scored against input positions L-n .. L-1
    int truncated;        // 1 when left truncation removed tokens
};

// _encode_pair: trailing Python whitespace of `context` moves to the front of the continuation;
// whole = enc(context + continuation), ctx = enc(context), cont = whole[len(ctx):].
int encode_pair(const struct tokenizer *tok, const struct encode_options *opt, const char *context,
                const char *continuation, struct ivec *ctx_enc, struct ivec *cont_enc, xsa_error *err);

// encode_pair followed by lm-eval's truncation into an encoded_request.
int encode_request(const struct tokenizer *tok, const struct encode_options *opt, const char *context,
                   const char *continuation, struct encoded_request *out, xsa_error *err);

void encoded_request_free(struct encoded_request *r);

// Refuses an encoding with a token id outside [0, vocab_size): the tokenizer (named by
// tokenizer_path) does not belong to the model.
int encode_check_vocab(const struct encoded_request *e, int vocab_size, const char *tokenizer_path, xsa_error *err);

#endif
