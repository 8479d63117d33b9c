// fuzz_results.c: a results file (the baseline a CI gate reads, from anyone) -> results_read_json.
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "eval/results.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_results_%ld.json", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    struct results r;
    xsa_error err = {0};
    int rc = results_read_json(&r, path, &err);
    fuzz_check_error(rc, &err);
    if (!rc) results_free(&r);
    return 0;
}
