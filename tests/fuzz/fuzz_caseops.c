// fuzz_caseops.c: the CaseOps text transform (model/caseops.c) on any bytes: encode then decode
// must give the bytes back (every literal marker is escaped), and decode of any bytes (markers
// where none can stand) must not crash.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/caseops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct sbuf enc = {0}, dec = {0}, any = {0};
    caseops_encode((const char *)data, size, &enc);
    caseops_decode(enc.s, enc.n, &dec);
    if (dec.n != size || (size && memcmp(dec.s, data, size))) abort();
    caseops_decode((const char *)data, size, &any);
    sbuf_free(&enc);
    sbuf_free(&dec);
    sbuf_free(&any);
    return 0;
}
