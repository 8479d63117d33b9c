// heap.c: binary heap over bytes (heap.h).
#include "common/heap.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define AT(h, i) ((h)->v + (i) * (h)->elem)

struct xsa_heap xsa_heap_make(size_t elem, int (*less)(const void *a, const void *b)) {
    return (struct xsa_heap){NULL, 0, 0, elem, less};
}

void xsa_heap_push(struct xsa_heap *h, const void *x) {
    if (h->n == h->cap) h->v = xsa_grow(h->v, &h->cap, h->n + 1, h->elem);
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!h->less(x, AT(h, p))) break;
        memcpy(AT(h, i), AT(h, p), h->elem);
        i = p;
    }
    memcpy(AT(h, i), x, h->elem);
}

void xsa_heap_pop(struct xsa_heap *h, void *out) {
    memcpy(out, AT(h, 0), h->elem);
    const unsigned char *last = AT(h, --h->n);  // slot n stays intact: the hole moves below it
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->less(AT(h, c + 1), AT(h, c))) c++;
        if (!h->less(AT(h, c), last)) break;
        memcpy(AT(h, i), AT(h, c), h->elem);
        i = c;
    }
    if (h->n) memcpy(AT(h, i), last, h->elem);
}

void xsa_heap_free(struct xsa_heap *h) {
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}
