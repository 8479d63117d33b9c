// fuzz_reqstore.c: a request store (eval/reqstore.c: the run journal, the --cache-requests file a
// folder may be shared with others) -> reqstore_open, lookups, an append, and a reopen. Input: one
// flag byte (bit 0: the bytes follow a whole header of the harness's scope, as most stores in
// use start; bit 1: a shared store, not an exclusive one), then the file. Bad files are one error
// line; a damaged tail is cut and what stays must open again with the same records.
#include <stdint.h>

#include "eval/reqstore.h"
#include "tests/fuzz/fuzz_util.h"

static const char scope[65] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static uint32_t fnv1a(const unsigned char *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    char path[256];
    fuzz_path(path, sizeof path, "store.xsar");
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (data[0] & 1) {
        unsigned char h[80] = "XSAREQS1";
        memcpy(h + 8, scope, 64);
        uint32_t c = fnv1a(h, 72);
        memcpy(h + 72, &c, 4);
        fwrite(h, 1, 80, f);
    }
    if (size > 1) fwrite(data + 1, 1, size - 1, f);
    fclose(f);
    int exclusive = data[0] & 2 ? 0 : 1;
    struct reqstore s;
    xsa_error err = {0};
    long dropped = 0;
    int rc = reqstore_open(&s, path, scope, exclusive, &dropped, &err);
    if (rc == -1) abort();  // nobody else holds it
    fuzz_check_error(rc, &err);
    if (!rc) {
        // The input's 16-byte windows as keys, then one appended record that must be found.
        struct sched_result out;
        for (size_t i = 1; i + 16 <= size && i < 4096; i += 16) reqstore_find(&s, data + i, &out);
        uint8_t key[1][16] = {{0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}};
        struct sched_result res = {.logprob = -1.5, .greedy = 1};
        xsa_error e2 = {0};
        fuzz_check_error(reqstore_append(&s, (const uint8_t(*)[16])key, &res, 1, &e2), &e2);
        size_t n = s.n;
        if (!reqstore_find(&s, key[0], &out)) abort();
        reqstore_close(&s);
        xsa_error e3 = {0};
        if (reqstore_open(&s, path, scope, exclusive, &dropped, &e3) || dropped || s.n != n) abort();
        reqstore_close(&s);
    }
    unlink(path);
    return 0;
}
