// fuzz_shard.c: token shard bytes through token_shard_parse, with and without a vocabulary bound.
#include <stdint.h>

#include "eval/token_shard.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (int vocab = 0; vocab <= 1024; vocab += 1024) {
        struct ivec out = {0};
        xsa_error err = {0};
        int rc = token_shard_parse(data, size, "fuzz.bin", vocab, &out, &err);
        fuzz_check_error(rc, &err);
        if (rc && out.n) abort();  // a refused shard appends nothing
        for (size_t i = 0; !rc && i < out.n; i++)
            if (out.v[i] < 0 || (vocab && out.v[i] >= vocab)) abort();
        ivec_free(&out);
    }
    return 0;
}
