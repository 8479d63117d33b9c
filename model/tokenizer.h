// tokenizer.h: text <-> token ids, equal to the reference libraries id for id.
// Kinds: Hugging Face tokenizer.json (BPE; also a GPT-2-style vocab.json + merges.txt, built as
// transformers builds them into one), SentencePiece .model (BPE), llama2.c tokenizer.bin.
#ifndef XSA_MODEL_TOKENIZER_H
#define XSA_MODEL_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/vec.h"

struct tokenizer;  // opaque

enum tokenizer_kind { TOKENIZER_HF_JSON = 1, TOKENIZER_SENTENCEPIECE = 2, TOKENIZER_LLAMA2C = 3 };

// Loads a tokenizer file, the kind found from its content.
int tokenizer_load(struct tokenizer **out, const char *path, xsa_error *err);

// Finds the tokenizer of a checkpoint: for a directory, tokenizer.json, tokenizer.model, then vocab.json;
// for a llama2.c .bin file, tokenizer.bin beside it. Returns 0 and fills `out`, or an error.
int tokenizer_find(const char *model_path, char *out, size_t n, xsa_error *err);

// A note for the user when tokenizer_find chose a Hugging Face folder's tokenizer.model (it has
// no tokenizer.json): xsa-eval then tokenizes with SentencePiece's own rules, while transformers,
// and so lm-eval, converts the model to a fast tokenizer that splits some text otherwise. NULL
// when there is nothing to say.
const char *tokenizer_parity_note(const char *model_path, const char *tok_path);

// Appends the ids of `text[0..len)` to `out`. add_special = 1 behaves as the reference
// library's encode with add_special_tokens=True (e.g. BOS from a TemplateProcessing
// post-processor, SentencePiece/llama2.c BOS when the tokenizer adds one by default);
// 0 as add_special_tokens=False. Invalid UTF-8 is handled as the reference library does.
// tokenizer.json: the library takes only str, so bytes that are not UTF-8 are first replaced by
// U+FFFD, one per maximal ill-formed subpart (Python's bytes.decode("utf-8", errors="replace")).
int tokenizer_encode(const struct tokenizer *t, const char *text, size_t len, int add_special,
                     struct ivec *out, xsa_error *err);

// Appends the decoded text of ids to `out` (as the reference decode with special tokens kept).
int tokenizer_decode(const struct tokenizer *t, const int32_t *ids, size_t n, struct sbuf *out,
                     xsa_error *err);

// The SHA-256 (64 hex digits) that identifies the tokenizer file at `path` in results and journals:
// the file's, or for a vocab.json, that of vocab.json's bytes followed by the merges.txt beside it.
int tokenizer_files_sha256(const char *path, char out[65], xsa_error *err);

enum tokenizer_kind tokenizer_kind(const struct tokenizer *t);
int tokenizer_vocab_size(const struct tokenizer *t);
int tokenizer_bos_id(const struct tokenizer *t);   // -1 when none
int tokenizer_eos_id(const struct tokenizer *t);   // -1 when none
// 1 when encode(text, add_special=1) prepends BOS (lm-eval >= 0.4.9.2 default behaviour).
int tokenizer_adds_bos(const struct tokenizer *t);
const char *tokenizer_path(const struct tokenizer *t);
// The tokenizer_config.json beside a tokenizer.json, as transformers 5 reads it (its bos_token and
// eos_token, special_tokens_map.json's, or its tokenizer_class's defaults): 1 when there is one;
// the ids of the BOS and EOS it gives, -1 for none or a token the vocabulary lacks (then
// tokenizer_config_bos_name says which: the token, or the class whose default is not known).
int tokenizer_has_config(const struct tokenizer *t);
// A note for the user when transformers 5 builds this tokenizer.json with a family class's own
// pre-tokenizer (and xsa-eval, to give lm-eval's ids, did too); NULL when there is nothing to say.
const char *tokenizer_class_note(const struct tokenizer *t);
int tokenizer_config_bos_id(const struct tokenizer *t);
int tokenizer_config_eos_id(const struct tokenizer *t);
const char *tokenizer_config_bos_name(const struct tokenizer *t);
// 1 for a CaseOps tokenizer (parameter-golf, 2026-04-18 on): encode rewrites capitals as its
// markers first, decode restores them (model/caseops.h).
int tokenizer_caseops(const struct tokenizer *t);

// Per-token byte counts for bits per byte, as parameter-golf's train_gpt.py build_sentencepiece_luts
// computes them for ids [0, n): control, unknown and unused pieces (and ids past the tokenizer's)
// are boundaries of 0 bytes; a byte piece is 1 byte; any other is its UTF-8 length without a
// leading U+2581, which sets leading_space to 1. A target's bytes are base_bytes[id] +
// (boundary[previous id] ? 0 : leading_space[id]). SentencePiece tokenizers only (else
// XSA_EBADINPUT).                                   base_bytes, leading_space, boundary: (n)
int tokenizer_sp_byte_luts(const struct tokenizer *t, int n, int16_t *base_bytes, uint8_t *leading_space,
                           uint8_t *boundary, xsa_error *err);
// The same for a tokenizer.json: the bytes each token adds to the text `tokenizers`' decode
// (skip_special_tokens=True) makes. Special tokens, holes and ids past the tokenizer's are
// boundaries of 0 bytes. A byte-level BPE (decoder ByteLevel: GPT-2, Llama 3, Qwen): the bytes
// its string stands for in the byte alphabet, no leading spaces. Any other decoder (Llama 2's
// Replace/ByteFallback/Fuse/Strip, Metaspace): base_bytes the token's bytes as the first token
// of a decoded text (Metaspace drops its U+2581, Strip after Fuse its leading space),
// leading_space the bytes it adds after another token (the text's spaces there), so that a
// target's bytes are base_bytes[id] + (boundary[previous id] ? 0 : leading_space[id]), a
// <0xNN> byte token 1; a decoder that cannot be counted token by token is XSA_EBADINPUT, naming
// why (tokenizer_hf_byte_luts with n = 0: only that answer). Else XSA_EBADINPUT.
int tokenizer_hf_byte_luts(const struct tokenizer *t, int n, int16_t *base_bytes, uint8_t *leading_space,
                           uint8_t *boundary, xsa_error *err);
// 1 when t is a tokenizer.json whose decoder is ByteLevel.
int tokenizer_hf_decoder_byte_level(const struct tokenizer *t);

void tokenizer_free(struct tokenizer *t);

#endif
