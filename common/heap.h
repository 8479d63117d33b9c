// heap.h: a binary min-heap of fixed-size elements under a caller's strict order `less` (the
// element less() puts first is popped first). Sift-up and sift-down move a hole, as the
// textbook heap does, so for one order and one sequence of pushes and pops the pops come out
// as from any heap written that way; give `less` a total order (break ties) when equal keys
// must come out in a fixed order. Storage grows with xsa_grow: push never fails.
//
// push and pop are inline and take the element size and the order at each call: a caller's
// constant size and comparator then compile to plain moves and a direct call, so the merge
// loops of the BPE tokenizers run as fast as with a heap written for their element type.
#ifndef XSA_COMMON_HEAP_H
#define XSA_COMMON_HEAP_H

#include <stddef.h>
#include <string.h>

#include "common/grow.h"

struct xsa_heap {
    unsigned char *v;  // (cap, elem) bytes; the first n elements are the heap
    size_t n, cap;
};

typedef int (*xsa_heap_less)(const void *a, const void *b);

static inline void xsa_heap_push(struct xsa_heap *h, const void *x, size_t elem, xsa_heap_less less) {
    if (h->n == h->cap) h->v = xsa_grow(h->v, &h->cap, h->n + 1, elem);
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!less(x, h->v + p * elem)) break;
        memcpy(h->v + i * elem, h->v + p * elem, elem);
        i = p;
    }
    memcpy(h->v + i * elem, x, elem);
}

// Copies the first element to out and removes it; the heap must not be empty.
static inline void xsa_heap_pop(struct xsa_heap *h, void *out, size_t elem, xsa_heap_less less) {
    memcpy(out, h->v, elem);
    const unsigned char *last = h->v + --h->n * elem;  // slot n stays intact: the hole moves below it
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && less(h->v + (c + 1) * elem, h->v + c * elem)) c++;
        if (!less(h->v + c * elem, last)) break;
        memcpy(h->v + i * elem, h->v + c * elem, elem);
        i = c;
    }
    if (h->n) memcpy(h->v + i * elem, last, elem);
}

void xsa_heap_free(struct xsa_heap *h);

#endif
