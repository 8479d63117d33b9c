// fuzz_safetensors.c: one safetensors file (header + data) -> safetensors_open_file, then every
// loadable tensor converted to float32. Bad files must fail with one error line, never crash.
#include <stdint.h>

#include "model/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[256];
    fuzz_path(path, sizeof path, "model.safetensors");
    fuzz_write(path, data, size);
    struct safetensors st = {0};
    xsa_error err = {0};
    int rc = safetensors_open_file(&st, path, &err);
    fuzz_check_error(rc, &err);
    for (int i = 0; !rc && i < st.n_tensors; i++) {
        const struct st_tensor *t = &st.tensors[i];
        if (t->dtype == ST_OTHER) continue;
        size_t numel = t->nbytes / (t->dtype == ST_F32 ? 4 : 2);
        float *dst = malloc(numel ? numel * sizeof *dst : 1);
        if (!dst) abort();
        xsa_error e2 = {0};
        fuzz_check_error(safetensors_read_f32(&st, t, dst, &e2), &e2);
        free(dst);
    }
    safetensors_close(&st);
    unlink(path);
    return 0;
}
