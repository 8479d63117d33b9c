// fuzz_parquet.c: one Parquet file (in memory) -> parquet_read_rows, every row serialized.
// Bad files must fail with one error line, never crash, never read outside the buffer.
#include <cJSON.h>
#include <stdint.h>

#include "common/xalloc.h"
#include "data/parquet.h"
#include "tests/fuzz/fuzz_util.h"

static int take(void *ctx, cJSON *row, const char *where, xsa_error *err) {
    (void)where;
    (void)err;
    char *s = cJSON_PrintUnformatted(row);  // every value must be printable JSON
    if (!s) abort();
    (*(long *)ctx)++;
    free(s);
    cJSON_Delete(row);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // A copy of exactly `size` bytes, so ASan sees a read one byte past the end.
    unsigned char *buf = xsa_malloc(size ? size : 1);
    memcpy(buf, data, size);
    long n = 0, seen = 0;
    xsa_error err = {0};
    int rc = parquet_read_rows(buf, size, "fuzz.parquet", take, &seen, &n, &err);
    fuzz_check_error(rc, &err);
    if (n != seen) abort();
    free(buf);
    return 0;
}
