// piece_map.h: an open-addressing hash map from byte strings (token pieces) to ids, used by the
// SentencePiece and llama2.c tokenizers. The map points into strings it does not own.
#ifndef XSA_MODEL_PIECE_MAP_H
#define XSA_MODEL_PIECE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct piece_map {
    const char *const *strs;  // (n_strs,) the strings ids refer to, owned by the caller
    const uint32_t *lens;     // (n_strs,)
    int32_t *slots;           // (mask + 1,) id or -1
    size_t mask;
};

// Sizes the table for `n` entries.
void piece_map_init(struct piece_map *m, const char *const *strs, const uint32_t *lens, size_t n);
// Adds id (strs[id]); returns 1 if added, 0 if an equal string is already present (kept).
int piece_map_add(struct piece_map *m, int32_t id);
// The id of s[0..len), or -1.
int32_t piece_map_get(const struct piece_map *m, const char *s, size_t len);
void piece_map_free(struct piece_map *m);

#endif
