// http.c: libcurl multi-handle transfers with retries, backoff, Retry-After and Range resume.
// One state machine per request: waiting (next_at) -> active (in the multi handle) -> done,
// or back to waiting on a retryable failure. Connections are reused across calls because
// the multi handle lives as long as the client.
#include "data/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/version.h"
#include "common/xalloc.h"

struct http_client {
    struct http_options opt;
    CURLM *multi;
    struct progress *progress;   // may be NULL
    unsigned long long rng;      // xorshift state for backoff jitter
    double deadline;             // monotonic seconds: nothing runs past it (max_total_s after creation)
    char user_agent[96];
};

// Start times of the latest requests to Hugging Face hosts, for every client of the process (a
// `download --tasks all` is one process making one client per task): a ring of `cap` entries.
static struct {
    double *at;
    long cap, next, used;
} hf_pace;

struct xfer {
    struct http_request *req;
    struct http_client *c;
    CURL *easy;
    int active, done;
    double next_at;              // monotonic seconds; start no earlier than this
    FILE *f;                     // file mode: the .part file, opened for append
    char *part_path;
    long long resume_from;       // bytes already in .part when this attempt started
    long long range_start;       // start of the response's Content-Range; -1 when absent
    long long written;           // body bytes accepted in this attempt
    size_t cap;                  // memory mode: capacity of req->body
    int decided;                 // the response status was looked at (first body byte)
    int discard;                 // non-2xx response: keep only a snippet for the message
    int restart;                 // a 206 for the wrong range: the .part was emptied, retry from zero
    int keep_part;               // failed for good, but transiently: .part kept for a later resume
    int own_part;                // the .part is ours (<dest>.part), with its validator beside it
    char validator[200];         // the ETag of the response whose bytes the .part holds ("": none)
    struct curl_slist *hdrs;     // If-Range of a resume
    char snippet[160];
    size_t snippet_len;
    char local_err[256];         // a local failure (disk, size limit) that stopped the transfer
    char errbuf[CURL_ERROR_SIZE];
};

// The Hugging Face token, looked up as huggingface_hub does; "" when there is none. Never printed.
static int http_token_read(char *out, size_t n, xsa_error *err) {
    out[0] = '\0';
    const char *env = getenv("HF_TOKEN"), *where = "HF_TOKEN";
    if (!env || !*env) env = getenv("HUGGING_FACE_HUB_TOKEN"), where = "HUGGING_FACE_HUB_TOKEN";  // its older name
    char path[4096] = "", buf[1024] = "";
    if (env && *env) {
        snprintf(buf, sizeof buf, "%s", env);
    } else {
        const char *tp = getenv("HF_TOKEN_PATH"), *hh = getenv("HF_HOME"), *xdg = getenv("XDG_CACHE_HOME"),
                   *home = getenv("HOME");
        if (tp && *tp) snprintf(path, sizeof path, "%s", tp);
        else if (hh && *hh) snprintf(path, sizeof path, "%s/token", hh);
        else if (xdg && *xdg) snprintf(path, sizeof path, "%s/huggingface/token", xdg);
        else if (home && *home) snprintf(path, sizeof path, "%s/.cache/huggingface/token", home);
        FILE *f = path[0] ? fopen(path, "r") : NULL;
        if (!f) return 0;
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = '\0';
        where = path;
    }
    size_t len = strlen(buf), lead = strspn(buf, " \t\r\n");  // blanks around it are dropped, as huggingface_hub does
    memmove(buf, buf + lead, len - lead + 1);
    len -= lead;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
        buf[--len] = '\0';
    if (!len) return 0;
    // A token is printable ASCII without spaces; anything else would corrupt the request's headers.
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f)
            return xsa_fail(err, XSA_EBADINPUT, "the Hugging Face token in %s holds a character no token has "
                            "(byte %zu); fix it or unset it", where, i + 1);
    if (len >= n)
        return xsa_fail(err, XSA_EBADINPUT, "the Hugging Face token in %s is longer than %zu characters; fix it "
                        "or unset it", where, n - 1);
    memcpy(out, buf, len + 1);
    return 0;
}

// One XSA_HTTP_* variable: unset or empty keeps the default; anything but a plain decimal
// number in [lo, hi] is refused (a typo must not silently fall back to the default).
static int env_long(const char *name, long dflt, long lo, long hi, const char *unit, long *out, xsa_error *err) {
    const char *s = getenv(name);
    *out = dflt;
    if (!s || !*s) return 0;
    char *end = NULL;
    errno = 0;
    long v = *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
    if (!end || *end || errno || v < lo || v > hi)
        return xsa_fail(err, XSA_EBADINPUT, "%s=%.40s: not a whole number from %ld to %ld (%s); fix it or unset it",
                        name, s, lo, hi, unit);
    *out = v;
    return 0;
}

int http_options_default(struct http_options *o, xsa_error *err) {
    static const struct { const char *name; long dflt, lo, hi; const char *unit; } env[] = {
        {"XSA_HTTP_CONNECT_TIMEOUT", 20, 1, 600, "seconds"},
        {"XSA_HTTP_LOW_SPEED_TIME", 30, 1, 3600, "seconds"},
        {"XSA_HTTP_MAX_RETRIES", 5, 0, 50, "retries after the first try"},
        {"XSA_HTTP_BACKOFF_MS", 1000, 0, 600000, "milliseconds"},
        {"XSA_HTTP_MAX_TOTAL", 600, 1, 86400, "seconds per task"},
        {"XSA_HTTP_PARALLEL", 8, 1, 64, "transfers at once"},
        {"XSA_HTTP_HF_RATE", 450, 1, 100000, "requests to Hugging Face per XSA_HTTP_HF_WINDOW"},
        {"XSA_HTTP_HF_WINDOW", 300, 1, 3600, "seconds"},
    };
    long v[8];
    memset(o, 0, sizeof *o);
    for (int i = 0; i < 8; i++) {
        int rc = env_long(env[i].name, env[i].dflt, env[i].lo, env[i].hi, env[i].unit, &v[i], err);
        if (rc) return rc;
    }
    o->connect_timeout_s = v[0];
    o->low_speed_time_s = v[1];
    o->low_speed_bytes = 512;
    o->max_retries = (int)v[2];
    o->backoff_base_ms = v[3];
    o->backoff_max_ms = 30000;
    o->max_total_s = v[4];
    o->max_parallel = (int)v[5];
    o->max_redirects = 10;
    o->max_body_bytes = (size_t)512 << 20;
    o->hf_rate = v[6];
    o->hf_window_s = v[7];
    return http_token_read(o->hf_token, sizeof o->hf_token, err);
}

int http_client_new(struct http_client **out, const struct http_options *o, struct progress *pr, xsa_error *err) {
    *out = NULL;
    // Reference-counted by libcurl: each client pairs it with curl_global_cleanup.
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return xsa_fail(err, XSA_ERUNTIME, "libcurl initialisation failed");
    // Without --ca-bundle, the variables Python's requests (and so huggingface_hub) and curl read
    // for a private CA, in requests' order; libcurl itself reads none of them.
    static const char *const ca_vars[] = {"REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"};
    const char *ca = o->ca_bundle, *ca_from = "--ca-bundle";
    for (size_t i = 0; !ca && i < sizeof ca_vars / sizeof *ca_vars; i++)
        if (getenv(ca_vars[i]) && getenv(ca_vars[i])[0]) ca = getenv(ca_vars[i]), ca_from = ca_vars[i];
    if (ca && access(ca, R_OK) != 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s file cannot be read: %s", ca, ca_from, strerror(errno));
    struct http_client *c = xsa_calloc(1, sizeof *c);
    c->opt = *o;
    c->opt.ca_bundle = ca;
    c->progress = pr;
    c->deadline = progress_now() + (double)o->max_total_s;
    c->multi = curl_multi_init();
    if (!c->multi) {
        free(c);
        return xsa_fail(err, XSA_ERUNTIME, "libcurl: cannot create a multi handle");
    }
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)o->max_parallel);
    curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    c->rng = (unsigned long long)time(NULL) * 6364136223846793005ULL ^ (unsigned long long)getpid() ^ 0x9e3779b97f4a7c15ULL;
    if (!c->rng) c->rng = 1;
    snprintf(c->user_agent, sizeof c->user_agent, "xsa-eval/%s (+libcurl/%s)", XSA_EVAL_VERSION,
             curl_version_info(CURLVERSION_NOW)->version);
    *out = c;
    return 0;
}

void http_client_free(struct http_client *c) {
    if (!c) return;
    curl_multi_cleanup(c->multi);
    free(c);
    curl_global_cleanup();
}

void http_requests_free(struct http_request *reqs, int n) {
    for (int i = 0; i < n; i++) {
        free(reqs[i].body);
        reqs[i].body = NULL;
        reqs[i].len = 0;
    }
}

static unsigned long long rng_next(struct http_client *c) {
    c->rng ^= c->rng << 13;
    c->rng ^= c->rng >> 7;
    c->rng ^= c->rng << 17;
    return c->rng;
}

// Copies a header's value (after "name:" and blanks) into out[n], cut to fit.
static void header_value(const char *line, size_t name_len, char *out, size_t n) {
    const char *v = line + name_len;
    while (*v == ' ' || *v == '\t') v++;
    size_t m = strnlen(v, n - 1);
    memcpy(out, v, m);
    out[m] = '\0';
}

static long long header_size(const char *line, size_t name_len) {
    char v[32];
    header_value(line, name_len, v, sizeof v);
    char *end = NULL;
    errno = 0;
    long long s = v[0] >= '0' && v[0] <= '9' ? strtoll(v, &end, 10) : -1;
    return end && !*end && !errno ? s : -1;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud) {
    struct xfer *x = ud;
    struct http_hub_headers *h = &x->req->hub;
    size_t n = size * nitems;
    char line[2200];  // a signed CDN Location is long; longer header lines are cut, never overflow
    size_t m = n < sizeof line - 1 ? n : sizeof line - 1;
    memcpy(line, buf, m);
    line[m] = '\0';
    while (m > 0 && (line[m - 1] == '\r' || line[m - 1] == '\n')) line[--m] = '\0';
    if (!strncmp(line, "HTTP/", 5)) {  // a new response (after a redirect or a 100): forget its Content-Range
        x->range_start = -1;               // (not the revision: the Hub sends it on the redirect, not on the CDN's answer)
        h->content_length = -1;
    } else if (!strncasecmp(line, "content-range:", 14)) {
        long long s = -1, e = -1, total = -1;
        if (sscanf(line + 14, " bytes %lld-%lld/%lld", &s, &e, &total) >= 1) x->range_start = s;
        x->req->range_total = total;
    } else if (!strncasecmp(line, "x-repo-commit:", 14) || !strncasecmp(line, "x-revision:", 11)) {
        header_value(line, (size_t)(strchr(line, ':') + 1 - line), x->req->revision, sizeof x->req->revision);
    } else if (!strncasecmp(line, "etag:", 5)) {
        header_value(line, 5, h->etag, sizeof h->etag);
    } else if (!strncasecmp(line, "x-linked-etag:", 14)) {
        header_value(line, 14, h->linked_etag, sizeof h->linked_etag);
    } else if (!strncasecmp(line, "x-linked-size:", 14)) {
        h->linked_size = header_size(line, 14);
    } else if (!strncasecmp(line, "content-length:", 15)) {
        h->content_length = header_size(line, 15);
    } else if (!strncasecmp(line, "location:", 9)) {
        header_value(line, 9, h->location, sizeof h->location);
    } else if (!strncasecmp(line, "x-error-code:", 13)) {
        header_value(line, 13, h->error_code, sizeof h->error_code);
    } else if (!strncasecmp(line, "x-error-message:", 16)) {
        header_value(line, 16, h->error_message, sizeof h->error_message);
    }
    return n;
}

// A resumed .part must hold bytes of the file the server has now: its validator (the ETag of
// the response that began it) is kept in <part>.etag and sent as If-Range, so that a file that
// changed meanwhile comes back whole (200) instead of being appended to the old bytes. Bytes of
// unknown version (no validator) are started over. (A hub cache's blobs/<etag>.incomplete is
// named by its version already.)
static void validator_path(const struct xfer *x, char *out, size_t n) { snprintf(out, n, "%s.etag", x->part_path); }

static void validator_read(struct xfer *x) {
    char p[4200], *text = NULL;
    size_t len = 0;
    xsa_error e = {0};
    x->validator[0] = '\0';
    validator_path(x, p, sizeof p);
    if (file_read_regular(p, sizeof x->validator - 1, &text, &len, &e)) return;
    if (len && !memchr(text, '\n', len) && !memchr(text, '\r', len)) snprintf(x->validator, sizeof x->validator, "%s", text);
    free(text);
}

static void validator_set(struct xfer *x, const char *etag) {
    char p[4200];
    xsa_error e = {0};
    validator_path(x, p, sizeof p);
    snprintf(x->validator, sizeof x->validator, "%s", etag);
    // (a weak ETag, W/"...", names no exact bytes and may not be sent as If-Range: no validator)
    if (!etag[0] || !strncmp(etag, "W/", 2) || strlen(etag) >= sizeof x->validator - 1 || strpbrk(etag, "\r\n") ||
        file_write_atomic(p, etag, strlen(etag), &e))
        unlink(p), x->validator[0] = '\0';
}

static void validator_remove(const struct xfer *x) {
    char p[4200];
    validator_path(x, p, sizeof p);
    unlink(p);
}

// Looks at the status on the first body byte: an error body is kept aside (never written to
// the file), a 200 answering a Range request restarts the .part file from zero.
static int xfer_decide(struct xfer *x) {
    long st = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &st);
    x->decided = 1;
    if (st < 200 || st >= 300) {
        x->discard = 1;
        return 0;
    }
    if (x->req->range) {  // a part of a file: only that part, never the whole (it may be far over the limit)
        long long want = x->req->range[0] == '-' ? -1 : atoll(x->req->range);
        if (st != 206 || x->range_start < 0 || (want >= 0 && x->range_start != want)) {
            snprintf(x->local_err, sizeof x->local_err, "%s: asked for bytes %s, got HTTP %ld%s", x->req->url,
                     x->req->range, st, st == 206 ? " for another range" : " (the server ignores Range)");
            return -1;
        }
        return 0;
    }
    if (!x->f) return 0;
    // Bytes land at resume_from: a 200 (Range ignored) or a 206 starting at 0 is the whole file, so
    // start the .part over; a 206 starting anywhere else would misalign it: empty it, retry from zero.
    int aligned = st == 206 ? x->range_start == x->resume_from || (x->range_start < 0 && x->resume_from == 0)
                            : x->resume_from == 0;
    int whole = st != 206 || x->range_start == 0;
    // A server that ignores If-Range answers the rest of another version: its ETag tells.
    const char *etag = x->req->hub.etag;
    if (aligned && x->own_part && x->resume_from > 0 && etag[0] && strcmp(etag, x->validator)) aligned = whole = 0;
    if (aligned && x->own_part && x->resume_from == 0) validator_set(x, etag);
    if (aligned) return 0;
    if (fflush(x->f) != 0 || ftruncate(fileno(x->f), 0) != 0) {
        snprintf(x->local_err, sizeof x->local_err, "%s: cannot truncate: %s", x->part_path, strerror(errno));
        x->req->write_failed = 1;
        return -1;
    }
    x->resume_from = 0;
    if (!whole) {
        x->restart = 1;
        return -1;
    }
    if (x->own_part) validator_set(x, etag);
    return 0;
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *ud) {
    struct xfer *x = ud;
    size_t n = size * nmemb;
    if (!x->decided && xfer_decide(x) != 0) return 0;
    if (x->discard) {
        size_t room = sizeof x->snippet - 1 - x->snippet_len;
        size_t k = n < room ? n : room;
        memcpy(x->snippet + x->snippet_len, ptr, k);
        x->snippet_len += k;
        x->snippet[x->snippet_len] = '\0';
        return n;
    }
    size_t limit = x->req->max_bytes ? x->req->max_bytes : x->c->opt.max_body_bytes;
    if ((size_t)(x->resume_from + x->written) + n > limit) {
        snprintf(x->local_err, sizeof x->local_err, "%s: response larger than the %zu-byte limit", x->req->url, limit);
        return 0;
    }
    if (x->f) {
        if (fwrite(ptr, 1, n, x->f) != n) {
            snprintf(x->local_err, sizeof x->local_err, "%s: write failed: %s%s", x->part_path, strerror(errno),
                     file_full_hint(errno));
            x->req->write_failed = 1;
            return 0;
        }
    } else {
        struct http_request *r = x->req;
        if (r->len + n + 1 > x->cap) {
            size_t cap = x->cap ? x->cap : 65536;
            while (cap < r->len + n + 1) cap *= 2;
            r->body = xsa_realloc(r->body, cap);
            x->cap = cap;
        }
        memcpy(r->body + r->len, ptr, n);
        r->len += n;
        r->body[r->len] = '\0';
    }
    x->written += (long long)n;
    progress_add(x->c->progress, n, 0);
    return n;
}

static int xfer_setup(struct http_client *c, struct xfer *x, xsa_error *err) {
    CURL *e = curl_easy_init();
    if (!e) return xsa_fail(err, XSA_ERUNTIME, "libcurl: cannot create a transfer handle");
    x->easy = e;
    const struct http_options *o = &c->opt;
    curl_easy_setopt(e, CURLOPT_URL, x->req->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, c->user_agent);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, x->req->no_redirect ? 0L : 1L);
    if (x->req->head) curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, o->max_redirects);
    // Only http(s), also for redirects (never file://, ftp://, ...), and never from https down to
    // plain http: that would drop the TLS verification the user relies on. An old libcurl that
    // cannot restrict them must not fetch at all.
    if (curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, strncmp(x->req->url, "https:", 6) ? "http,https" : "https") !=
            CURLE_OK)
        return xsa_fail(err, XSA_ERUNTIME, "libcurl %s cannot restrict protocols to http and https (needs 7.85 or later)",
                        curl_version_info(CURLVERSION_NOW)->version);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, o->connect_timeout_s);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, o->low_speed_bytes);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, o->low_speed_time_s);
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
                     (curl_off_t)(x->req->max_bytes ? x->req->max_bytes : o->max_body_bytes));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    // Verification is always on; --ca-bundle (or REQUESTS_CA_BUNDLE, ...) only changes which CAs are trusted.
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (o->ca_bundle) curl_easy_setopt(e, CURLOPT_CAINFO, o->ca_bundle);  // c->opt: the one chosen above
    // Compressed transfer for API pages; raw files go as identity so a Range resume is exact.
    if (x->req->gzip && !x->req->dest_path && !x->req->range) curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    if (x->req->range && !x->req->dest_path) curl_easy_setopt(e, CURLOPT_RANGE, x->req->range);
    // libcurl sends credentials to the URL's own host and port only, never to a redirect target elsewhere
    // (CURLOPT_UNRESTRICTED_AUTH stays off): the Hub's 302 to its CDN carries no token.
    if (x->req->hf_auth && o->hf_token[0]) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(e, CURLOPT_XOAUTH2_BEARER, o->hf_token);
        curl_easy_setopt(e, CURLOPT_UNRESTRICTED_AUTH, 0L);
    }
    return 0;
}

// Pacing of requests to Hugging Face hosts: 1 when one may start now (and it is counted), else 0
// with *wake the time a slot frees up.
static int hf_pace_take(const struct http_options *o, double now, double *wake) {
    if (hf_pace.cap != o->hf_rate) {  // first use, or other limits: start a new window
        free(hf_pace.at);
        hf_pace.at = xsa_calloc((size_t)o->hf_rate, sizeof *hf_pace.at);
        hf_pace.cap = o->hf_rate;
        hf_pace.next = hf_pace.used = 0;
    }
    if (hf_pace.used == hf_pace.cap) {
        double oldest = hf_pace.at[hf_pace.next];  // the ring is full: next is the oldest entry
        if (now < oldest + (double)o->hf_window_s) {
            *wake = oldest + (double)o->hf_window_s;
            return 0;
        }
    } else {
        hf_pace.used++;
    }
    hf_pace.at[hf_pace.next] = now;
    hf_pace.next = (hf_pace.next + 1) % hf_pace.cap;
    return 1;
}

static int xfer_start(struct http_client *c, struct xfer *x, xsa_error *err) {
    x->decided = x->discard = x->restart = 0;
    x->snippet_len = 0;
    x->snippet[0] = '\0';
    x->local_err[0] = '\0';
    x->errbuf[0] = '\0';
    x->range_start = -1;
    x->written = 0;
    x->resume_from = 0;
    x->req->len = 0;
    x->req->revision[0] = '\0';
    memset(&x->req->hub, 0, sizeof x->req->hub);
    x->req->hub.linked_size = x->req->hub.content_length = -1;
    x->req->range_total = -1;
    x->req->tries++;
    long left_ms = (long)((c->deadline - progress_now()) * 1000.0);
    curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, left_ms > 1 ? left_ms : 1L);  // the client's limit covers transfers too
    if (x->req->dest_path) {
        // Not through a symlink someone left in the cache: append only to our own file.
        int fd = open(x->part_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
        x->f = fd >= 0 ? fdopen(fd, "ab") : NULL;
        if (!x->f) {
            int e = errno;
            if (fd >= 0) close(fd);
            x->req->write_failed = 1;
            return xsa_fail(err, XSA_ERUNTIME, "%s: cannot open for writing: %s%s", x->part_path, strerror(e),
                            file_full_hint(e));
        }
        struct stat st;
        if (fstat(fileno(x->f), &st) == 0) x->resume_from = (long long)st.st_size;
        if (x->own_part && x->resume_from > 0) validator_read(x);
        if (x->own_part && x->resume_from > 0 && !x->validator[0]) {  // bytes of an unknown version
            if (fflush(x->f) != 0 || ftruncate(fileno(x->f), 0) != 0) {
                x->req->write_failed = 1;
                return xsa_fail(err, XSA_ERUNTIME, "%s: cannot truncate: %s", x->part_path, strerror(errno));
            }
            x->resume_from = 0;
        }
        curl_slist_free_all(x->hdrs);
        x->hdrs = NULL;
        if (x->own_part && x->resume_from > 0) {
            char h[240];
            snprintf(h, sizeof h, "If-Range: %s", x->validator);
            x->hdrs = curl_slist_append(NULL, h);
        }
        curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->hdrs);
        char range[48];
        snprintf(range, sizeof range, "%lld-", x->resume_from);
        curl_easy_setopt(x->easy, CURLOPT_RANGE, x->resume_from > 0 ? range : NULL);
    }
    if (curl_multi_add_handle(c->multi, x->easy) != CURLM_OK)
        return xsa_fail(err, XSA_ERUNTIME, "libcurl: cannot start %s", x->req->url);
    x->active = 1;
    return 0;
}

static int retryable_curl(CURLcode rc) {
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST: case CURLE_COULDNT_CONNECT: case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR: case CURLE_SEND_ERROR: case CURLE_PARTIAL_FILE: case CURLE_GOT_NOTHING:
    case CURLE_HTTP2: case CURLE_HTTP2_STREAM: case CURLE_SSL_CONNECT_ERROR:
    case CURLE_BAD_CONTENT_ENCODING:
        return 1;
    default:
        return 0;
    }
}

static int retryable_status(long st) { return st == 408 || st == 429 || (st >= 500 && st <= 599); }

// Printable one-line snippet of an error body (JSON error messages from the Hub).
static void clean_snippet(char *s) {
    for (char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
}

// Closes the .part file; on success renames it to the destination after fsync.
static int xfer_close_file(struct xfer *x, int success, xsa_error *err) {
    if (!x->f) return 0;
    int rc = 0;
    if (success && (fflush(x->f) != 0 || fsync(fileno(x->f)) != 0))
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: fsync failed: %s%s", x->part_path, strerror(errno), file_full_hint(errno));
    if (fclose(x->f) != 0 && !rc && success)
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: close failed: %s%s", x->part_path, strerror(errno), file_full_hint(errno));
    x->f = NULL;
    if (success && !rc && rename(x->part_path, x->req->dest_path) != 0)
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: rename failed: %s", x->req->dest_path, strerror(errno));
    if (success && !rc && x->own_part) validator_remove(x);
    if (rc) x->req->write_failed = 1;
    return rc;
}

// On a final failure that was transient (a dropped connection, a timeout, a busy server: only
// the retries or the time ran out) the bytes received stay in the .part for the next run to
// resume by Range, and `note` says so; http_fetch removes the .part after any other failure.
// Kept files stay under the size limit: passing it is a failure that removes them.
static void xfer_keep_part(struct xfer *x, int transient, char *note, size_t n) {
    struct stat ps;
    if (!transient || !x->part_path || stat(x->part_path, &ps) != 0 || ps.st_size <= 0) return;
    if (x->own_part && !x->validator[0]) return;  // bytes of no known version: no later run resumes them
    x->keep_part = 1;
    snprintf(note, n, "; %lld bytes kept in %s; the next download resumes from there", (long long)ps.st_size,
             x->part_path);
}

// Decides what a finished attempt means: 0 done, 1 retry scheduled, else an error code.
static int xfer_finish(struct http_client *c, struct xfer *x, CURLcode cc, int *not_found, xsa_error *err) {
    struct http_request *r = x->req;
    long st = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &st);
    curl_multi_remove_handle(c->multi, x->easy);
    x->active = 0;
    r->status = st;
    int answered = (st >= 200 && st < 300) || (r->no_redirect && st >= 300 && st < 400);
    int ok = cc == CURLE_OK && answered && !x->local_err[0];
    if (ok && !x->decided && xfer_decide(x) != 0) ok = 0;  // empty body: still apply the Range rule
    if (ok) {
        if (xfer_close_file(x, 1, err)) return XSA_ERUNTIME;
        x->done = 1;
        progress_add(c->progress, 0, r->units);
        return 0;
    }
    xfer_close_file(x, 0, NULL);  // the .part stays while a retry may resume it
    if (x->local_err[0]) return xsa_fail(err, XSA_ERUNTIME, "%s", x->local_err);  // removed by http_fetch
    int retry = x->restart || (cc != CURLE_OK ? retryable_curl(cc) : retryable_status(st));
    // A host that does not resolve is most often an offline or air-gapped machine: retry once
    // for a resolver hiccup, not max_retries times with backoff, so a run fails in seconds.
    if (cc == CURLE_COULDNT_RESOLVE_HOST && r->tries > 1) retry = 0;
    if (st == 416 && x->part_path) {  // our Range start is past the end: the file changed, start over
        unlink(x->part_path);
        if (x->own_part) validator_remove(x);
        retry = 1;
    }
    char what[400];
    long redirects = 0;
    curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_COUNT, &redirects);
    if (x->restart)
        snprintf(what, sizeof what, "HTTP 206 for another byte range than the one asked for");
    else if (cc == CURLE_OPERATION_TIMEDOUT && progress_now() >= c->deadline - 0.05) {
        snprintf(what, sizeof what, "%s (curl error %d): the %ld s limit for this download was reached (XSA_HTTP_MAX_TOTAL)",
                 x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc), (int)cc, c->opt.max_total_s);
        retry = 0;
    } else if (cc == CURLE_FILESIZE_EXCEEDED && r->range && st != 206) {
        // curl stops at the length header, before xfer_decide sees the status
        snprintf(what, sizeof what, "asked for bytes %.40s, got HTTP %ld with the whole file (the server ignores Range; "
                 "use a server or mirror that answers Range requests)", r->range, st);
        retry = 0;
    } else if (cc == CURLE_FILESIZE_EXCEEDED)
        snprintf(what, sizeof what, "response larger than the %zu-byte limit (curl error %d)",
                 r->max_bytes ? r->max_bytes : c->opt.max_body_bytes, (int)cc);
    else if (cc == CURLE_UNSUPPORTED_PROTOCOL && redirects > 0) {
        char *to = NULL;
        curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &to);
        if (to && !strncmp(to, "http:", 5))
            snprintf(what, sizeof what, "%s (curl error %d): a redirect from https to plain http was refused",
                     x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc), (int)cc);
        else
            snprintf(what, sizeof what, "redirect to a non-HTTP URL refused (%.160s); only http and https are followed "
                     "(curl error %d)", to ? to : "?", (int)cc);
    }
    else if (cc != CURLE_OK)
        snprintf(what, sizeof what, "%s (curl error %d)", x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc), (int)cc);
    else {
        clean_snippet(x->snippet);
        snprintf(what, sizeof what, "HTTP %ld%s%.120s", st, x->snippet_len ? ": " : "", x->snippet);
    }
    int transient = retry || (cc == CURLE_OPERATION_TIMEDOUT && !x->restart);
    char kept[700] = "";
    if (retry && r->tries <= c->opt.max_retries) {
        double delay_ms = 0;
        curl_off_t ra = -1;
        if ((st == 429 || st == 503) && curl_easy_getinfo(x->easy, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
            delay_ms = (double)ra * 1000.0;  // the server said when: honour it, no jitter
        else {
            double d = (double)c->opt.backoff_base_ms;
            for (int k = 1; k < r->tries && d < (double)c->opt.backoff_max_ms; k++) d *= 2;
            if (d > (double)c->opt.backoff_max_ms) d = (double)c->opt.backoff_max_ms;
            delay_ms = d + (d * 0.5) * (double)(rng_next(c) % 1001) / 1000.0;
        }
        double now = progress_now();
        if (now + delay_ms / 1000.0 < c->deadline) {
            x->next_at = now + delay_ms / 1000.0;
            return 1;
        }
        xfer_keep_part(x, transient, kept, sizeof kept);
        return xsa_fail(err, XSA_ERUNTIME, "GET %s: %s; giving up: the next retry (in %.0f s) would pass the %ld s limit%s",
                        r->url, what, delay_ms / 1000.0, c->opt.max_total_s, kept);
    }
    if (not_found && st >= 400 && st < 500 && !retryable_status(st)) *not_found = 1;
    xfer_keep_part(x, transient, kept, sizeof kept);
    return xsa_fail(err, XSA_ERUNTIME, "GET %s: %s%s%s", r->url, what,
                    retry ? (r->tries > 1 ? " (retries exhausted)" : "") : "", kept);
}

int http_fetch(struct http_client *c, struct http_request *reqs, int n, int *not_found, xsa_error *err) {
    if (not_found) *not_found = 0;
    if (n <= 0) return 0;
    struct xfer *xs = xsa_calloc((size_t)n, sizeof *xs);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        xs[i].req = &reqs[i];
        xs[i].c = c;
        reqs[i].tries = 0;
        reqs[i].status = 0;
        reqs[i].revision[0] = '\0';
        reqs[i].range_total = -1;
        reqs[i].write_failed = 0;
        if (reqs[i].dest_path) {
            const char *part = reqs[i].part_path;
            size_t m = strlen(part ? part : reqs[i].dest_path) + 6;
            xs[i].part_path = xsa_malloc(m);
            if (part) snprintf(xs[i].part_path, m, "%s", part);
            else snprintf(xs[i].part_path, m, "%s.part", reqs[i].dest_path);
            xs[i].own_part = !part;
        }
        rc = xfer_setup(c, &xs[i], err);
    }
    int left = n;
    while (!rc && left > 0) {
        double now = progress_now(), wake = now + 1.0;
        int active = 0;
        for (int i = 0; i < n; i++) active += xs[i].active;
        for (int i = 0; i < n && !rc && active < c->opt.max_parallel; i++) {
            struct xfer *x = &xs[i];
            if (x->done || x->active) continue;
            double paced = 0;
            if (x->next_at <= now && x->req->hf_auth && !hf_pace_take(&c->opt, now, &paced)) {
                x->next_at = paced;  // the rate limit says later
                continue;
            }
            if (x->next_at <= now) {
                rc = xfer_start(c, x, err);
                active++;
            }
        }
        for (int i = 0; i < n; i++)
            if (!xs[i].done && !xs[i].active && xs[i].next_at < wake) wake = xs[i].next_at;
        if (rc) break;
        int running = 0;
        if (curl_multi_perform(c->multi, &running) != CURLM_OK) {
            rc = xsa_fail(err, XSA_ERUNTIME, "libcurl: multi transfer failed");
            break;
        }
        CURLMsg *msg;
        int q;
        while (!rc && (msg = curl_multi_info_read(c->multi, &q))) {
            if (msg->msg != CURLMSG_DONE) continue;
            struct xfer *x = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            int r = xfer_finish(c, x, msg->data.result, not_found, err);
            if (r == 0) left--;
            else if (r != 1) rc = r;
            else if (x->next_at < wake) wake = x->next_at;
        }
        if (rc || left == 0) break;
        int ms = (int)((wake - progress_now()) * 1000.0);
        if (ms < 0) ms = 0;
        if (ms > 1000) ms = 1000;
        curl_multi_poll(c->multi, NULL, 0, ms, NULL);
    }
    for (int i = 0; i < n; i++) {
        if (xs[i].active) curl_multi_remove_handle(c->multi, xs[i].easy);
        xfer_close_file(&xs[i], 0, NULL);
        // A failed (or aborted) download leaves no partial file, but the one kept for a resume.
        if (rc && xs[i].part_path && !xs[i].done && !xs[i].keep_part) {
            unlink(xs[i].part_path);
            if (xs[i].own_part) validator_remove(&xs[i]);
        }
        if (xs[i].easy) curl_easy_cleanup(xs[i].easy);
        curl_slist_free_all(xs[i].hdrs);
        free(xs[i].part_path);
    }
    free(xs);
    return rc;
}
