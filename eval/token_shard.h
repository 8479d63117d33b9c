// token_shard.h: token shards as llm.c, modded-nanogpt and parameter-golf write them: a header of
// 256 little-endian int32 (magic 20240520, version, token count, the rest unused), then the
// tokens: uint16 for version 1, uint32 for version 2; llm.c's Llama 3 shards (its
// dev/data/data_common.py) are magic 20240801, version 7, uint32 tokens. The file size must be
// exactly header + count tokens, as parameter-golf's load_data_shard requires.
#ifndef XSA_EVAL_TOKEN_SHARD_H
#define XSA_EVAL_TOKEN_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/vec.h"

#define TOKEN_SHARD_MAGIC 20240520
#define TOKEN_SHARD_MAGIC_LLAMA3 20240801
#define TOKEN_SHARD_HEADER_INTS 256
#define TOKEN_SHARD_MAX_TOKENS (1 << 30)  // appended over all shards of one call

// Appends the tokens of data[0..len) (named `name` in errors) to out. Every token must be
// below vocab (vocab <= 0: no check). Returns 0 or XSA_EBADINPUT with the reason and offset
// (then nothing is appended).
int token_shard_parse(const uint8_t *data, size_t len, const char *name, int vocab, struct ivec *out, xsa_error *err);

// token_shard_parse of a file (mapped, never read past its size).
int token_shard_read(const char *path, int vocab, struct ivec *out, xsa_error *err);

#endif
