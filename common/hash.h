// hash.h: the string hash of the open-addressing tables (tensor names, token pieces, pickled
// dict keys): FNV-1a over the bytes, its high bits folded into the low ones a table's mask keeps.
#ifndef XSA_COMMON_HASH_H
#define XSA_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t xsa_hash(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static inline uint64_t xsa_hash_str(const char *s) { return xsa_hash(s, strlen(s)); }

#endif
