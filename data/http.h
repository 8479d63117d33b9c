// http.h: HTTP GETs over one libcurl multi handle: concurrent transfers with keep-alive,
// TLS verification always on, timeouts, bounded retries with exponential backoff + jitter
// (5xx, 429 honouring Retry-After, connection errors), Range resume of file downloads.
#ifndef XSA_DATA_HTTP_H
#define XSA_DATA_HTTP_H

#include <stddef.h>

#include "common/error.h"
#include "data/progress.h"

struct http_options {
    const char *ca_bundle;     // PEM file of extra CAs (private mirror); NULL: the system store
    long connect_timeout_s;    // TCP+TLS connect limit
    long low_speed_time_s;     // abort a transfer slower than low_speed_bytes/s for this long
    long low_speed_bytes;
    int max_retries;           // retries after the first try, per request
    long backoff_base_ms;      // delay before retry k (0-based): base * 2^k, + up to 50% jitter
    long backoff_max_ms;       // cap of one delay (Retry-After is honoured up to max_total_s)
    long max_total_s;          // time limit of one client (one task's download, every source and page):
                               // no retry is scheduled past it and a transfer in flight is cut at it
    int max_parallel;          // transfers in flight at once
    long max_redirects;
    size_t max_body_bytes;     // refuse bodies larger than this
};

// Defaults for the public services, then overrides from the environment (tests, slow links):
// XSA_HTTP_CONNECT_TIMEOUT 1..600 s, XSA_HTTP_LOW_SPEED_TIME 1..3600 s, XSA_HTTP_MAX_RETRIES
// 0..50, XSA_HTTP_BACKOFF_MS 0..600000, XSA_HTTP_MAX_TOTAL 1..86400 s, XSA_HTTP_PARALLEL 1..64.
// Unset or empty: the default; anything else outside those ranges is XSA_EBADINPUT naming it.
int http_options_default(struct http_options *o, xsa_error *err);

// What the Hugging Face Hub says about a file in its headers (huggingface_hub's get_hf_file_metadata),
// from any response of the redirect chain (the Hub's own answer carries them, the CDN's does not);
// empty strings and -1 when absent.
struct http_hub_headers {
    char etag[130];            // ETag, as sent (quotes and W/ included)
    char linked_etag[130];     // X-Linked-Etag: an LFS file's sha256
    long long linked_size;     // X-Linked-Size: an LFS file's size
    long long content_length;  // Content-Length of the last response
    char location[2048];       // Location of the last 3xx
    char error_code[64];       // X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo)
    char error_message[200];   // X-Error-Message
};

struct http_request {
    const char *url;           // in
    const char *dest_path;     // NULL: body kept in memory; else streamed to dest_path + ".part",
                               // renamed on success. On a failure the .part is removed, except
                               // after a transient one (dropped connection, timeout, busy server):
                               // then it is kept (under the size limit; the message says so) and a
                               // later run resumes it by Range
    long units;                // rows this request brings, for the progress bar
    int gzip;                  // ask for compressed transfer (memory bodies only)
    size_t max_bytes;          // refuse a body (decompressed) larger than this; 0: the client's max_body_bytes
    const char *part_path;     // file mode: where the bytes go while they arrive; NULL: dest_path + ".part".
                               // It may equal dest_path: the file then keeps that name (the caller checks
                               // it and renames it itself)
    const char *bearer_token;  // sent as "Authorization: Bearer ..." to the URL's host only: libcurl never
                               // forwards it on a redirect to another host
    int head;                  // HEAD: headers only (memory mode, no body)
    int no_redirect;           // a 3xx is an answer (status, hub.location), not followed
    // out
    char *body;                // (len + 1) malloc'd, NUL-terminated; memory mode only
    size_t len;
    long status;               // last HTTP status
    int tries;                 // attempts made
    char revision[64];         // X-Repo-Commit header of any response in the redirect chain (Hugging Face)
    struct http_hub_headers hub;
};

struct http_client;

int http_client_new(struct http_client **out, const struct http_options *o, struct progress *pr, xsa_error *err);
void http_client_free(struct http_client *c);

// Runs every request to completion (concurrently, up to max_parallel). On the first request
// that fails for good, aborts the rest and returns XSA_ERUNTIME with a message naming the
// URL and the HTTP status or curl error. A 404 is reported with code XSA_ERUNTIME too, and
// `*not_found` (when not NULL) is set so a caller can try another source.
int http_fetch(struct http_client *c, struct http_request *reqs, int n, int *not_found, xsa_error *err);

// Frees bodies of requests fetched into memory.
void http_requests_free(struct http_request *reqs, int n);

#endif
