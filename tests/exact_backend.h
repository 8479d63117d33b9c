// exact_backend.h: opens the CPU backend for tests that assert bit-identical scores across
// batches, prefix sharing or thread counts. Every kernel the backend picks itself gives those
// bits; a forced XSA_CPU_GEMM=blas need not (OpenBLAS's Haswell core rounds a row by its place
// in a tile, and the backend says so), so these tests open with the backend's own pick, and
// the suite run under XSA_CPU_GEMM=blas still holds on every CPU.
#ifndef XSA_TESTS_EXACT_BACKEND_H
#define XSA_TESTS_EXACT_BACKEND_H

#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"

static inline int backend_open_batch_invariant(struct backend *be, const struct model *m,
                                               const struct backend_options *opt, xsa_error *err) {
    const char *g = getenv("XSA_CPU_GEMM");
    int blas = g && !strcmp(g, "blas");
    if (blas) unsetenv("XSA_CPU_GEMM");
    int rc = backend_open(be, "cpu", m, opt, err);
    if (blas) setenv("XSA_CPU_GEMM", "blas", 1);
    return rc;
}

#endif
