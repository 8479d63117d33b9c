// source_files.h: file-based sources (Hub repository files, original authors' files).
#ifndef XSA_DATA_SOURCE_FILES_H
#define XSA_DATA_SOURCE_FILES_H

#include "data/sources.h"

#define SOURCE_MAX_FILES 4
// What a file can legitimately be, per source: the largest original (BoolQ.zip) is about 4 MB,
// the largest Hub file read (HellaSwag's train Parquet) 24 MB.
#define SOURCE_ORIGINAL_MAX_BYTES ((size_t)64 << 20)
#define SOURCE_HUB_MAX_BYTES ((size_t)256 << 20)

struct source_file {
    const char *url;          // full URL (mirrors already applied)
    const char *member;       // path inside the zip at url, NULL when url is the file itself
    const char *dest;         // file name in the raw folder (the benchdata/<dir>/ layout)
    const char *sha256;       // pinned digest of dest when known (the published file's)
    const char *raw_sha256;   // pinned digest of the zip when known
    int hf_auth;              // on a Hugging Face host: paced, with the token (http_request.hf_auth)
    size_t max_bytes;         // what the file can legitimately be (0: SOURCE_ORIGINAL_MAX_BYTES); a larger body is refused
    int by_range;             // read only `member` out of the remote zip by Range requests (data/zip_range.h),
                              // never the whole archive; raw_sha256 does not apply
};

// Downloads (concurrently, resuming), verifies and extracts `files` into c->raw_dir (r gets
// the URL, revision and raw digest). *not_found (when not NULL) is set on an HTTP 404.
int source_download_files(struct source_ctx *c, const struct source_file *files, int n, struct source_result *r,
                          int *not_found, xsa_error *err);
// source_download_files, then the task's adapter turns the files into rows.
int source_fetch_files(struct source_ctx *c, const struct source_file *files, int n, struct source_result *r,
                       xsa_error *err);

#endif
