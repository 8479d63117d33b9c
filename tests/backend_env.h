// backend_env.h: opening the CPU backend in tests as the command line does, with the kernel
// choices of the environment (backend_options_from_env: XSA_CPU_GEMM, XSA_CPU_ATTN,
// XSA_CPU_PACK), so that CI's runs under forced kernels reach every test.
//
// backend_open_batch_invariant is for tests that assert bit-identical scores across batches,
// prefix sharing or thread counts. Every kernel the backend picks itself gives those bits; a
// forced OpenBLAS need not (its Haswell core rounds a row by its place in a tile, and the
// backend says so), so these open with the backend's own pick instead, and the suite run under
// XSA_CPU_GEMM=blas still holds on every CPU.
#ifndef XSA_TESTS_BACKEND_ENV_H
#define XSA_TESTS_BACKEND_ENV_H

#include <string.h>

#include "kernels/backend.h"

static inline int backend_open_env(struct backend *be, const struct model *m, const struct backend_options *opt,
                                   xsa_error *err) {
    struct backend_options o = *opt;
    int rc = backend_options_from_env(&o, err);
    return rc ? rc : backend_open(be, "cpu", m, &o, err);
}

static inline int backend_open_batch_invariant(struct backend *be, const struct model *m,
                                               const struct backend_options *opt, xsa_error *err) {
    struct backend_options o = *opt;
    int rc = backend_options_from_env(&o, err);
    if (o.cpu_gemm && !strcmp(o.cpu_gemm, "blas")) o.cpu_gemm = NULL;
    return rc ? rc : backend_open(be, "cpu", m, &o, err);
}

#endif
