// reqstore.h: scored requests kept on disk, for the run journal (resume after a kill) and the
// opt-in request cache (--cache-requests). Both are one file of fixed-size records appended
// as batches finish:
//
//   header  (80 bytes)  "XSAREQS1", the scope (64 hex digits: what the records are valid
//                       for, e.g. model numerics + run settings), a check of those 72 bytes
//   record  (32 bytes)  key[16], logprob (double), greedy (1 byte), 3 zero bytes,
//                       a check (FNV-1a 32) of the first 28 bytes
//
// A record's key is the first 16 bytes of SHA-256 over the request's tokens (input, then
// continuation, each after its length), so a record answers for any request with the same
// tokens in the same scope. Numbers are stored in the host's byte order (little-endian on
// every machine xsa-eval runs on). Opening verifies every record; a torn or damaged tail (a
// kill mid-write) is cut off, never used.
#ifndef XSA_EVAL_REQSTORE_H
#define XSA_EVAL_REQSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "eval/scheduler.h"

#define REQSTORE_RECORD_BYTES 32  // one request: key, log-probability, greedy flag, checksum
#define REQSTORE_SYNC_S 2.0  // records reach the disk (fsync) at most this many seconds after they are written

struct reqstore_slot {
    uint8_t key[16];
    double logprob;
    int greedy, used;
};

struct reqstore {
    int fd;                      // -1: closed
    char path[4096];
    struct reqstore_slot *slot;  // (cap) open addressing on the key
    size_t cap, n;
    long long loaded;            // file offset up to which its records are in slot (a shared store
                                 // takes in other runs' appends from there)
    double last_sync;            // wall time of the last fsync
    int dirty;                   // records written since it
    int exclusive;               // see reqstore_open
};

// The key of a request (see above).
void reqstore_key(const struct sched_request *q, uint8_t key[16]);

// Opens `path` for appending, creating it when missing, and loads its records. A file whose
// header names another scope, or is not a store at all, is an error (exit 2) naming it.
// *dropped (may be NULL) receives the number of bytes cut off a damaged tail.
// exclusive: the store is this process's alone while open (a journal): returns -1, with err
// untouched, when another process holds it; REQSTORE_FRESH (exclusive too) empties it once it
// holds it (--no-resume), never the store of a run still going. Otherwise (a shared cache)
// loading and each append lock the file for their moment only, so concurrent runs add to it
// safely.
#define REQSTORE_FRESH 2
int reqstore_open(struct reqstore *s, const char *path, const char scope[65], int exclusive, long *dropped,
                  xsa_error *err);

// 1 and *out filled when the store holds `key`, else 0.
int reqstore_find(const struct reqstore *s, const uint8_t key[16], struct sched_result *out);

// Adds n results (keys (n, 16)) in one write, but for keys the store holds already (a shared
// store first takes in what other runs appended); fsyncs when the last fsync is REQSTORE_SYNC_S old.
int reqstore_append(struct reqstore *s, const uint8_t (*keys)[16], const struct sched_result *res, int n,
                    xsa_error *err);

void reqstore_close(struct reqstore *s);

#endif
