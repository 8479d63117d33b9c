// heap.c: the heap's storage (heap.h; push and pop are inline there).
#include "common/heap.h"

#include <stdlib.h>

void xsa_heap_free(struct xsa_heap *h) {
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}
