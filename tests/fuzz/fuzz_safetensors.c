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
    if (!rc) fuzz_read_all_tensors(&st);
    safetensors_close(&st);
    unlink(path);
    return 0;
}
