// fuzz_llmc.c: an llm.c GPT-2 checkpoint (or another llm.c binary file) through model_load.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/llmc.h"
#include "model/model.h"
#include "tests/fuzz/fuzz_util.h"

#define RESIZE_MAX (8u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[256];
    fuzz_path(path, sizeof path, "model.bin");
    fuzz_write(path, data, size);
    if (size < LLMC_HEADER_BYTES) {
        fuzz_load_model(path);
        return 0;
    }
    int32_t h[256];
    memcpy(h, data, sizeof h);
    if (llmc_sniff(path) == LLMC_NONE) h[0] = 20240326;  // else the llama2.c reader would take it
    // With the header's last byte odd, the file is cut or padded to the size the header implies
    // (when small), so that the parameters are read, not only the header checked.
    size_t n = size;
    if (h[0] == 20240326 && (h[1] == 3 || h[1] == 5) && (data[LLMC_HEADER_BYTES - 1] & 1)) {
        uint64_t C = (uint32_t)h[6], L = (uint32_t)h[4], els = (uint64_t)(uint32_t)h[7] * C + (uint64_t)(uint32_t)h[2] * C +
                     L * (12 * C * C + 13 * C) + 2 * C;
        uint64_t want = LLMC_HEADER_BYTES + els * (h[1] == 3 ? 4 : 2);
        if (C < (1u << 16) && L < 4096 && want <= RESIZE_MAX) n = (size_t)want;
    }
    uint8_t *buf = calloc(1, n);
    if (!buf) abort();
    memcpy(buf, data, size < n ? size : n);
    memcpy(buf, h, sizeof h);
    fuzz_write(path, buf, n);
    free(buf);
    fuzz_load_model(path);
    return 0;
}
