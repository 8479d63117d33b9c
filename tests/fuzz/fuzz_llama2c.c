// fuzz_llama2c.c: a llama2.c .bin through model_load.
#include <stdint.h>

#include "model/model.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[256];
    fuzz_path(path, sizeof path, "model.bin");
    fuzz_write(path, data, size);
    fuzz_load_model(path);
    return 0;
}
