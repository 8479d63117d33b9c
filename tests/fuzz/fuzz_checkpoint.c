// fuzz_checkpoint.c: a whole checkpoint directory through model_load. Input: u32 LE length N,
// N bytes of config.json, then model.safetensors. Small sizes only: a config that implies a
// huge model must be refused before anything is allocated for it.
#include <stdint.h>
#include <sys/stat.h>

#include "model/model.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    uint32_t n = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
    if (n > size - 4) n = (uint32_t)(size - 4);
    char dir[256], path[300];
    fuzz_path(dir, sizeof dir, "ckpt");
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/config.json", dir);
    fuzz_write(path, data + 4, n);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    fuzz_write(path, data + 4 + n, size - 4 - n);
    struct model m;
    xsa_error err = {0};
    int rc = model_load(&m, dir, &err);
    fuzz_check_error(rc, &err);
    if (!rc) model_free(&m);
    return 0;
}
