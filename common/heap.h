// heap.h: a binary min-heap of fixed-size elements under a caller's strict order `less`
// (the element less() puts first is popped first). Sift-up and sift-down move a hole, as the
// textbook heap does, so for a given order and sequence of pushes and pops the pops come out
// the same as any heap written that way; give `less` a total order (break ties) when equal
// keys must come out in a fixed order. Storage grows with xsa_grow: push never fails.
#ifndef XSA_COMMON_HEAP_H
#define XSA_COMMON_HEAP_H

#include <stddef.h>

struct xsa_heap {
    unsigned char *v;  // (cap, elem) bytes
    size_t n, cap, elem;
    int (*less)(const void *a, const void *b);
};

// An empty heap of elements of elem bytes; no allocation until the first push.
struct xsa_heap xsa_heap_make(size_t elem, int (*less)(const void *a, const void *b));
void xsa_heap_push(struct xsa_heap *h, const void *x);
// Copies the first element to out and removes it; the heap must not be empty.
void xsa_heap_pop(struct xsa_heap *h, void *out);
void xsa_heap_free(struct xsa_heap *h);

#endif
