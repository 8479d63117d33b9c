// fuzz_config.c: config.json text -> hf_config_parse_text.
#include <stdint.h>

#include "common/xalloc.h"
#include "model/config.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = xsa_malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    struct hf_config hc;
    xsa_error err = {0};
    fuzz_check_error(hf_config_parse_text(&hc, text, "config.json", &err), &err);
    free(text);
    return 0;
}
