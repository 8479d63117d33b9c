// sp_normalizer.h: SentencePiece's text normalizer (normalizer.cc): the precompiled charsmap
// (a darts-clone double-array trie over input bytes + a pool of NUL-terminated replacement
// strings, longest-prefix match), user-defined symbols kept verbatim, heading/trailing/repeated
// space removal, the dummy prefix, and ' ' -> U+2581.
#ifndef XSA_MODEL_SP_NORMALIZER_H
#define XSA_MODEL_SP_NORMALIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/vec.h"
#include "model/piece_map.h"

// Longest-prefix matcher over user-defined symbols (sentencepiece's PrefixMatcher). A lookup
// tries each distinct symbol length, longest first, in a hash of the symbols, so its cost does
// not grow with the number of symbols (models carry thousands).
struct sp_matcher {
    const char *const *syms;  // (n,) owned by the caller
    const uint32_t *lens;     // (n,)
    int n;
    struct piece_map map;     // the symbols
    uint32_t *by_len;         // (n_len,) the distinct symbol lengths, longest first
    int n_len;
    uint8_t first[32];        // bit set of the symbols' first bytes
};

// Indexes syms[0..n) (distinct strings).
void sp_matcher_init(struct sp_matcher *m, const char *const *syms, const uint32_t *lens, int n);
void sp_matcher_free(struct sp_matcher *m);

// Length of the longest symbol that prefixes s[0..len) (*found = 1), else the length of one
// UTF-8 character by its lead byte, capped at len (*found = 0).
size_t sp_matcher_match(const struct sp_matcher *m, const char *s, size_t len, int *found);

struct sp_normalizer {
    uint32_t *units;      // (n_units,) double-array units, host order; NULL: no charsmap
    size_t n_units;
    char *pool;           // (pool_len,) replacement strings, each NUL-terminated
    size_t pool_len;
    int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
    int treat_whitespace_as_suffix;   // from the TrainerSpec
    const struct sp_matcher *matcher; // may be NULL
};

// Copies the charsmap blob (<u32 LE trie bytes><trie><pool>). Returns 0, or -1 with *why
// when it is malformed. An empty blob means no charsmap.
int sp_normalizer_set_charsmap(struct sp_normalizer *n, const uint8_t *blob, size_t len, const char **why);

// Appends the normalized form of in[0..len) to out.
void sp_normalize(const struct sp_normalizer *n, const char *in, size_t len, struct sbuf *out);

void sp_normalizer_free(struct sp_normalizer *n);

// sentencepiece's IsValidDecodeUTF8: 1 and *mblen = the character's length when s starts with a
// valid UTF-8 character (U+FFFD itself is valid), else 0 and *mblen = 1. len >= 1.
int sp_utf8_valid(const uint8_t *s, size_t len, size_t *mblen);

#endif
