// piece_map.c: FNV-1a hashing (common/hash.h) with linear probing; the table stays at most half full.
#include "model/piece_map.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/xalloc.h"

void piece_map_init(struct piece_map *m, const char *const *strs, const uint32_t *lens, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n + 2) cap *= 2;
    m->strs = strs;
    m->lens = lens;
    m->slots = xsa_malloc(cap * sizeof *m->slots);
    memset(m->slots, 0xFF, cap * sizeof *m->slots);  // all -1
    m->mask = cap - 1;
}

int piece_map_add(struct piece_map *m, int32_t id) {
    const char *s = m->strs[id];
    size_t len = m->lens[id];
    for (size_t i = xsa_hash(s, len) & m->mask;; i = (i + 1) & m->mask) {
        int32_t o = m->slots[i];
        if (o < 0) {
            m->slots[i] = id;
            return 1;
        }
        if (m->lens[o] == len && memcmp(m->strs[o], s, len) == 0) return 0;
    }
}

int32_t piece_map_get(const struct piece_map *m, const char *s, size_t len) {
    for (size_t i = xsa_hash(s, len) & m->mask;; i = (i + 1) & m->mask) {
        int32_t o = m->slots[i];
        if (o < 0) return -1;
        if (m->lens[o] == len && memcmp(m->strs[o], s, len) == 0) return o;
    }
}

void piece_map_free(struct piece_map *m) {
    free(m->slots);
    m->slots = NULL;
}
