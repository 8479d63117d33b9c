// fuzz_pgolf.c: a parameter-golf artifact through model_load (model/pgolf.c). Input: u32 LE
// length N, N bytes of xsa_eval.json, then the artifact: a .ptz (zlib, zstd, xz or brotli of a
// torch.save, byte-shuffled or not, or a per-group PGRP container, whose lrzip streams run
// through the lrzip program) when its first bytes are not a zip header, else a .pt state dict.
// Bad files must fail with one error line, never crash.
#include <stdint.h>
#include <sys/stat.h>

#include "model/model.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    uint32_t n = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
    if (n > size - 4) n = (uint32_t)(size - 4);
    const uint8_t *art = data + 4 + n;
    size_t art_n = size - 4 - n;
    char dir[256], path[300];
    fuzz_path(dir, sizeof dir, "pgolf");
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/xsa_eval.json", dir);
    fuzz_write(path, data + 4, n);
    int zip = art_n >= 2 && art[0] == 'P' && art[1] == 'K';
    snprintf(path, sizeof path, "%s/final_model.%s", dir, zip ? "pt" : "int8.ptz");
    fuzz_write(path, art, art_n);
    fuzz_load_model(path);
    return 0;
}
