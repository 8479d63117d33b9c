// fuzz_zip_range.c: one zip archive (in memory) -> the Range reader's parsers, as zip_range_fetch
// runs them: the end record from the last 64 KB, the central directory, the first entry's member
// inflated and CRC-checked. Bad archives must fail with one error line, never read outside the buffer.
#include <stdint.h>

#include "data/zip_range.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    unsigned char *buf = malloc(size ? size : 1);  // exactly `size` bytes, so ASan sees an overread
    if (!buf) abort();
    memcpy(buf, data, size);
    size_t tail = size < ZIP_RANGE_TAIL ? size : ZIP_RANGE_TAIL;
    uint64_t off = 0, cd_size = 0;
    xsa_error err = {0};
    int rc = zip_range_find_cd(buf + size - tail, tail, size, "fuzz.zip", &off, &cd_size, &err);
    fuzz_check_error(rc, &err);
    if (!rc) {
        if (off + cd_size > size) abort();  // find_cd promised the directory lies before the end record
        const unsigned char *cd = buf + off;
        char name[256] = "x";
        if (cd_size >= 46) {  // the first entry's name, as a caller would ask for a member it knows
            size_t nl = (size_t)(cd[28] | cd[29] << 8);
            if (nl < sizeof name && 46 + nl <= cd_size) memcpy(name, cd + 46, nl), name[nl] = '\0';
        }
        struct zip_entry e;
        xsa_error_clear(&err);
        rc = zip_range_find_member(cd, (size_t)cd_size, name, 1 << 24, "fuzz.zip", &e, &err);
        fuzz_check_error(rc, &err);
        if (!rc && e.local_offset < size) {
            unsigned char *out = NULL;
            xsa_error_clear(&err);
            rc = zip_range_inflate(buf + e.local_offset, size - e.local_offset, &e, "fuzz.zip", &out, &err);
            fuzz_check_error(rc, &err);
            if (!rc && !out) abort();
            free(out);
        }
    }
    free(buf);
    return 0;
}
