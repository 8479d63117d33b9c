// fuzz_util.h: helpers shared by the libFuzzer harnesses (tests/fuzz, built by build.sh only).
#ifndef XSA_TESTS_FUZZ_UTIL_H
#define XSA_TESTS_FUZZ_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "model/model.h"
#include "model/safetensors.h"

// Writes data to `path` (a tmpfs path keeps the harness fast). Aborts on I/O failure.
static inline void fuzz_write(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f)) abort();
}

// A scratch path unique to this process, under /dev/shm when it exists.
static inline void fuzz_path(char *out, size_t cap, const char *name) {
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(out, cap, "%s/xsa-fuzz-%ld-%s", dir, (long)getpid(), name);
}

// Every error must be one line that names what failed; anything else is a harness failure.
static inline void fuzz_check_error(int rc, const xsa_error *err) {
    if (!rc) return;
    if (rc != err->code || (rc != XSA_EBADINPUT && rc != XSA_ERUNTIME) || !err->msg[0] || strchr(err->msg, '\n')) {
        fprintf(stderr, "bad error record: rc %d code %d msg '%s'\n", rc, err->code, err->msg);
        abort();
    }
}

// model_load of `path`: a model or one proper error line; then the file is removed.
static inline void fuzz_load_model(const char *path) {
    struct model m;
    xsa_error err = {0};
    int rc = model_load(&m, path, &err);
    fuzz_check_error(rc, &err);
    if (!rc) model_free(&m);
    unlink(path);
}

// Converts every F32/F16/BF16 tensor of an opened file to float32: each conversion either
// works or fails with a proper error record.
static inline void fuzz_read_all_tensors(const struct safetensors *st) {
    for (int i = 0; i < st->n_tensors; i++) {
        const struct st_tensor *t = &st->tensors[i];
        if (t->dtype == ST_OTHER) continue;
        size_t numel = t->nbytes / (t->dtype == ST_F32 ? 4 : 2);
        float *dst = malloc(numel ? numel * sizeof *dst : 1);
        if (!dst) abort();
        xsa_error e2 = {0};
        fuzz_check_error(safetensors_read_f32(st, t, dst, &e2), &e2);
        free(dst);
    }
}

#endif
