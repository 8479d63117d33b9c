// fuzz_llmc.c: an llm.c GPT-2 checkpoint (or another llm.c binary file) through model_load.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/llmc.h"
#include "model/model.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[256];
    fuzz_path(path, sizeof path, "model.bin");
    fuzz_write(path, data, size);
    if (size >= 4 && llmc_sniff(path) == LLMC_NONE) {
        // another first int32 would send the file to the llama2.c reader: make it llm.c's magic
        uint8_t *buf = malloc(size);
        int32_t magic = 20240326;
        memcpy(buf, data, size);
        memcpy(buf, &magic, 4);
        fuzz_write(path, buf, size);
        free(buf);
    }
    fuzz_load_model(path);
    return 0;
}
