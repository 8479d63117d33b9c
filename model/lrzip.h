// lrzip.h: lrzip streams ("LRZI" files of lrzip 0.6) decompressed by the lrzip program, as the
// parameter-golf records that write them read them back (`lrzip -d` in a subprocess). lrzip's
// ZPAQ back end has no packaged library, and a ZPAQ stream carries the program that decodes
// it, so that program runs in a child process, never in xsa-eval, its output bounded by the
// size the caller expects (RLIMIT_FSIZE). The program is XSA_EVAL_LRZIP, else `lrzip` on PATH.
// Not for use outside model/.
#ifndef XSA_MODEL_LRZIP_H
#define XSA_MODEL_LRZIP_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define LRZIP_HEADER 14  // "LRZI", major, minor, the expanded size (uint64, little-endian)

struct lrzip_job {
    const unsigned char *in;  // the stream
    size_t in_n;
    size_t want;              // the bytes it must decompress to (the caller knows them)
    const char *label;        // names the stream in messages ("group 'mlp.fc.weight.q'")
    unsigned char *out;       // filled: malloc'd, `want` bytes; NULL on failure
};

// Runs one lrzip per job, all at once, and waits for them. Each stream's header must record
// its `want` bytes and lrzip must write exactly those; anything else is refused naming `path`
// and the job's label. A missing lrzip program is XSA_ERUNTIME with how to install it.
int lrzip_decompress_all(struct lrzip_job *jobs, int n, const char *path, xsa_error *err);

#endif
