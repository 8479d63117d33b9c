// grow.h: the one growth rule of the growable arrays: capacity doubles (from 16 elements) until
// it holds what is needed, storage comes from xsa_realloc, so growth never fails (xalloc.h).
#ifndef XSA_COMMON_GROW_H
#define XSA_COMMON_GROW_H

#include <stddef.h>

// The capacity, in elements, that holds need: cap itself when it does, else cap doubled
// (16 when 0) until it does. Parallel arrays sharing one count grow to the same value.
size_t xsa_grow_cap(size_t cap, size_t need);

// p (cap elements of elem bytes) grown to hold need elements; *cap updated. need * elem is
// checked for overflow.
void *xsa_grow(void *p, size_t *cap, size_t need, size_t elem);

// XSA_GROW(p, cap, need): type-safe form for an array p of *p elements with capacity cap.
#define XSA_GROW(p, cap, need) \
    ((need) > (cap) ? (void)((p) = xsa_grow((p), &(cap), (need), sizeof *(p))) : (void)0)

#endif
