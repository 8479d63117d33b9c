// grow.c: capacity doubling over xsa_realloc (grow.h).
#include "common/grow.h"

#include "common/xalloc.h"

size_t xsa_grow_cap(size_t cap, size_t need) {
    if (need <= cap) return cap;
    size_t n = cap ? cap : 16;
    while (n < need) n = n > (size_t)-1 / 2 ? need : 2 * n;
    return n;
}

void *xsa_grow(void *p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return p;
    size_t n = xsa_grow_cap(*cap, need);
    p = xsa_realloc_array(p, n, elem);
    *cap = n;
    return p;
}
