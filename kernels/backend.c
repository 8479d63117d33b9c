// backend.c: picks a backend for --device. The CUDA backend is a shared object
// (libxsa_cuda.so, built only where nvcc exists) opened at run time, so one binary runs with
// or without a GPU; "auto" falls back to the CPU and says why on stderr.
#include "kernels/backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// What libxsa_cuda.so must export: opens device `index` computing in `fp32` (1) or bf16 (0),
// or fails with err set (no GPU, no driver, out of memory) so that "auto" can fall back.
typedef int (*cuda_open_fn)(struct backend *be, int index, int fp32, const struct model *m,
                            const struct backend_options *opt, xsa_error *err);
#define CUDA_OPEN_SYMBOL "xsa_cuda_backend_open"
#define CUDA_LIB_NAME "libxsa_cuda.so"

// Finds libxsa_cuda.so: $XSA_CUDA_LIB, then build/ beside the executable, then beside the
// executable, then the loader's search path. The handle stays open for the process lifetime.
static cuda_open_fn cuda_find(char *why, size_t n) {
    char exe[4096], cand[4][4400];
    int nc = 0;
    const char *env = getenv("XSA_CUDA_LIB");
    if (env && *env) snprintf(cand[nc++], sizeof cand[0], "%s", env);
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(cand[nc++], sizeof cand[0], "%s/build/%s", exe, CUDA_LIB_NAME);
            snprintf(cand[nc++], sizeof cand[0], "%s/%s", exe, CUDA_LIB_NAME);
        }
    }
    snprintf(cand[nc++], sizeof cand[0], "%s", CUDA_LIB_NAME);
    snprintf(why, n, "%s not found: this build has no CUDA backend", CUDA_LIB_NAME);
    for (int i = 0; i < nc; i++) {
        void *h = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            // A library that exists but cannot load lacks its dependencies (libcublas, ...).
            const char *e = dlerror();
            if (strchr(cand[i], '/') && access(cand[i], F_OK) == 0)
                snprintf(why, n, "%.900s cannot be loaded: %.200s (are the CUDA libraries installed?)", cand[i],
                         e ? e : "unknown error");
            continue;
        }
        cuda_open_fn fn = (cuda_open_fn)(uintptr_t)dlsym(h, CUDA_OPEN_SYMBOL);
        if (fn) return fn;
        snprintf(why, n, "%.1000s lacks %s", cand[i], CUDA_OPEN_SYMBOL);
        dlclose(h);
    }
    return NULL;
}

int backend_open(struct backend *be, const char *device, const struct model *m,
                 const struct backend_options *opt, xsa_error *err) {
    return backend_open_dtype(be, device, NULL, m, opt, err);
}

int backend_open_dtype(struct backend *be, const char *device, const char *dtype, const struct model *m,
                       const struct backend_options *opt, xsa_error *err) {
    memset(be, 0, sizeof *be);
    if (dtype && strcmp(dtype, "bfloat16") && strcmp(dtype, "float32"))
        return xsa_fail(err, XSA_EBADINPUT, "--dtype %s: unknown dtype; use bfloat16 or float32", dtype);
    int fp32 = dtype && !strcmp(dtype, "float32");
    if (!device || !strcmp(device, "cpu")) return cpu_backend_open(be, m, opt, err);
    char why[1200];
    if (!strcmp(device, "auto")) {
        cuda_open_fn fn = cuda_find(why, sizeof why);
        if (fn) {
            xsa_error cerr = {0};
            if (fn(be, 0, fp32, m, opt, &cerr) == 0) return 0;
            snprintf(why, sizeof why, "%s", cerr.msg);
            memset(be, 0, sizeof *be);
        }
        fprintf(stderr, "xsa-eval: no usable GPU (%s); using the CPU backend\n", why);
        return cpu_backend_open(be, m, opt, err);
    }
    int index = 0;
    if (!strncmp(device, "cuda", 4) && (device[4] == '\0' || device[4] == ':')) {
        if (device[4] == ':') {
            char *end;
            long v = strtol(device + 5, &end, 10);
            if (device[5] < '0' || device[5] > '9' || *end || v > 1024)
                return xsa_fail(err, XSA_EBADINPUT, "--device %s: the GPU index must be a number, e.g. cuda:0", device);
            index = (int)v;
        }
        cuda_open_fn fn = cuda_find(why, sizeof why);
        if (!fn)
            return xsa_fail(err, XSA_ERUNTIME, "--device %s: the CUDA backend is not available: %s; use --device cpu",
                            device, why);
        xsa_error cerr = {0};
        int rc = fn(be, index, fp32, m, opt, &cerr);
        if (rc) {
            memset(be, 0, sizeof *be);
            return xsa_fail(err, rc, "--device %s: %s%s", device, cerr.msg,
                            rc == XSA_ERUNTIME ? "; use --device cpu (or auto) on this machine" : "");
        }
        return 0;
    }
    return xsa_fail(err, XSA_EBADINPUT, "--device %s: unknown device; use auto, cpu, cuda or cuda:N", device);
}

void backend_close(struct backend *be) {
    if (be && be->destroy) be->destroy(be);
    if (be) memset(be, 0, sizeof *be);
}
