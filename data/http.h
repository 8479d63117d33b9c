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
    long hf_rate;              // requests to Hugging Face hosts (hf_auth ones) started per hf_window_s, at most
    long hf_window_s;          // (the Hub documents 500 API calls per 5 minutes per IP for anonymous use)
    char hf_token[512];        // bearer token for Hugging Face hosts; "" when none
};

// Defaults for the public services, then overrides from the environment (tests, slow links):
// XSA_HTTP_CONNECT_TIMEOUT 1..600 s, XSA_HTTP_LOW_SPEED_TIME 1..3600 s, XSA_HTTP_MAX_RETRIES
// 0..50, XSA_HTTP_BACKOFF_MS 0..600000, XSA_HTTP_MAX_TOTAL 1..86400 s, XSA_HTTP_PARALLEL 1..64.
// XSA_HTTP_HF_RATE 1..100000 requests per XSA_HTTP_HF_WINDOW 1..3600 s (default 450 per 300 s).
// Unset or empty: the default; anything else outside those ranges is XSA_EBADINPUT naming it.
// The token is HF_TOKEN, else the file huggingface_hub writes ($HF_TOKEN_PATH, else $HF_HOME/token,
// else $XDG_CACHE_HOME/huggingface/token, else ~/.cache/huggingface/token); one that holds characters no
// token has is XSA_EBADINPUT naming where it came from (never its value).
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
    int hf_auth;               // a Hugging Face host (viewer or Hub): paced, and the token is sent as
                               // "Authorization: Bearer" to this host only (never to a redirect target elsewhere)
    const char *range;         // memory mode: "A-B" or "-N" (suffix); the answer must be a 206 for that range
    const char *part_path;     // file mode: where the bytes go while they arrive; NULL: dest_path + ".part".
                               // It may equal dest_path: the file then keeps that name (the caller checks
                               // it and renames it itself)
    int head;                  // HEAD: headers only (memory mode, no body)
    int no_redirect;           // a 3xx is an answer (status, hub.location), not followed
    // out
    char *body;                // (len + 1) malloc'd, NUL-terminated; memory mode only
    size_t len;
    long status;               // last HTTP status
    int tries;                 // attempts made
    char revision[64];         // X-Repo-Commit (Hub) or X-Revision (viewer) header of any response in the redirect chain
    long long range_total;     // with range: the file's full size from Content-Range
    int write_failed;          // the failure was writing dest_path on this machine (a full disk, no
                               // permission), not the network's
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
