// source_files.c: downloads a task's files (plain or zip members) into the raw folder, laid
// out as docs/data-dir.md describes, checks pinned digests, and runs the task's adapter.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "common/fileio.h"
#include "common/grow.h"
#include "common/xalloc.h"
#include "data/cache.h"
#include "data/source_files.h"
#include "data/zip_range.h"

#include "tasks/adapters.h"
#include "tasks/rows.h"

#define ZIP_MEMBER_MAX ((size_t)512 << 20)
#define RANGE_MEMBER_MAX ((size_t)64 << 20)  // a benchmark split read out of a zip by Range (ARC's: about 1 MB)

int source_result_emit(void *ctx, cJSON *row, const char *where, xsa_error *err) {
    (void)where, (void)err;  // the row sink's signature; keeping a row cannot fail
    struct source_result *r = ctx;
    XSA_GROW(r->rows, r->cap, (size_t)r->n + 1);
    r->rows[r->n++] = row;
    return 0;
}

void source_canonical_row(const struct task_def *t, cJSON *row) {
    task_row_order_keys(row, t->schema);
    if (strcmp(t->name, "social_iqa")) return;
    cJSON *l = cJSON_GetObjectItemCaseSensitive(row, "label");
    if (!cJSON_IsString(l)) return;
    size_t n = strlen(l->valuestring);
    while (n > 0 && (l->valuestring[n - 1] == '\n' || l->valuestring[n - 1] == '\r')) n--;
    char buf[32];
    if (n == strlen(l->valuestring) || n >= sizeof buf) return;
    memcpy(buf, l->valuestring, n);
    buf[n] = '\0';
    cJSON_ReplaceItemInObjectCaseSensitive(row, "label", cJSON_CreateString(buf));
}

int source_result_emit_hf(void *ctx, cJSON *row, const char *where, xsa_error *err) {
    struct source_result *r = ctx;
    source_canonical_row(r->task, row);
    return source_result_emit(ctx, row, where, err);
}

void source_result_free(struct source_result *r) {
    data_rows_free(r->rows, r->n);
    r->rows = NULL;
    r->n = r->cap = 0;
    cache_writer_discard(&r->jsonl);
}

int source_validate_rows(const struct task_def *t, cJSON *const *rows, int n, long first, const char *source,
                         const char *url, xsa_error *err) {
    char **where = xsa_calloc(n > 0 ? (size_t)n : 1, sizeof *where);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char buf[700];
        snprintf(buf, sizeof buf, "%s row %ld (%.600s)", source, first + i + 1, url);
        where[i] = xsa_strdup(buf);
    }
    struct task_doc *docs = NULL;
    int n_docs = 0;
    xsa_error e1 = {0};
    if (!rc && task_docs_from_rows(t, rows, where, n, 0, &docs, &n_docs, &e1))
        rc = xsa_fail(err, XSA_ERUNTIME, "%s", e1.msg);  // bad data from a source: exit 3, like a digest mismatch
    task_docs_free(docs, n_docs);
    for (int i = 0; where && i < n; i++) free(where[i]);
    free(where);
    return rc;
}

int source_adapt_dir(const struct task_def *t, const char *dir, struct source_result *r, xsa_error *err) {
    int pre = 0;
    int rc = task_adapt_original_dir(t, dir, source_result_emit, r, &pre, err);
    if (rc) {
        source_result_free(r);
        return rc;
    }
    r->preprocessed = pre;
    return 0;
}

// The file name at the end of a URL's path.
static const char *url_basename(const char *url, char *out, size_t n) {
    const char *q = strpbrk(url, "?#");
    size_t len = q ? (size_t)(q - url) : strlen(url);
    const char *s = url + len;
    while (s > url && s[-1] != '/') s--;
    size_t m = (size_t)(url + len - s);
    if (m == 0 || m >= n) m = 0;
    memcpy(out, s, m);
    out[m] = '\0';
    if (!m || !strcmp(out, ".") || !strcmp(out, "..")) snprintf(out, n, "download");
    return out;
}

// *mismatch is set when the file is there and its digest is wrong (bad data, not the network).
static int check_pin(const char *what, const char *path, const char *pin, int allow, int *mismatch, xsa_error *err) {
    if (!pin) return 0;
    char sha[65];
    int rc = sha256_file_hex(path, sha, err);
    if (rc) return XSA_ERUNTIME;
    if (!strcmp(sha, pin)) return 0;
    if (allow) {
        // (a warning about the data: --quiet keeps it)
        fprintf(stderr, "xsa-eval: warning: %s: SHA-256 %s, expected %s; accepted (--allow-data-change)\n", what, sha, pin);
        return 0;
    }
    unlink(path);  // never reuse a file known to be wrong
    *mismatch = 1;
    return xsa_fail(err, XSA_ERUNTIME,
                    "%s: SHA-256 mismatch: expected %s, found %s (the file changed upstream or the download is damaged; "
                    "pass --allow-data-change to accept it)", what, pin, sha);
}

// Writes a file of the raw folder; a failure is this machine's (r->store_failed), not the source's.
static int store_file(const char *dest, const void *data, size_t len, struct source_result *r, xsa_error *err) {
    int rc = file_write_atomic(dest, data, len, err);
    if (rc) r->store_failed = 1;
    return rc;
}

static int zip_extract(const char *zpath, const char *member, const char *dest, struct source_result *r, xsa_error *err) {
    int zerr = 0;
    zip_t *z = zip_open(zpath, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (!z) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        int rc = xsa_fail(err, XSA_ERUNTIME, "%s: not a valid zip archive: %s", zpath, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return rc;
    }
    int rc = 0;
    char *buf = NULL;
    zip_int64_t idx = zip_name_locate(z, member, 0);
    zip_stat_t st;
    zip_file_t *f = NULL;
    if (idx < 0) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: archive has no member %s", zpath, member);
        goto out;
    }
    zip_stat_init(&st);
    if (zip_stat_index(z, (zip_uint64_t)idx, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) || st.size > ZIP_MEMBER_MAX) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: member %s has no size or is over %zu bytes", zpath, member, ZIP_MEMBER_MAX);
        goto out;
    }
    buf = malloc(st.size ? (size_t)st.size : 1);
    f = zip_fopen_index(z, (zip_uint64_t)idx, 0);
    if (!buf || !f) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: cannot read member %s: %s", zpath, member, zip_strerror(z));
        goto out;
    }
    zip_int64_t got = zip_fread(f, buf, st.size);  // libzip checks the CRC at the end
    if (got < 0 || (zip_uint64_t)got != st.size) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: member %s is damaged: %s", zpath, member, zip_file_strerror(f));
        goto out;
    }
    rc = store_file(dest, buf, (size_t)st.size, r, err);
out:
    if (f) zip_fclose(f);
    zip_discard(z);
    free(buf);
    return rc;
}

int source_download_files(struct source_ctx *c, const struct source_file *files, int n, struct source_result *r,
                          int *not_found, xsa_error *err) {
    if (n <= 0 || n > SOURCE_MAX_FILES) return xsa_fail(err, XSA_EBADINPUT, "%s: bad file plan", c->t->name);
    int rc = cache_mkdirs(c->raw_dir, err);
    if (rc) {
        r->store_failed = 1;
        return rc;
    }
    // Under the task's lock: temps of our own names whose writer was killed (zip extraction).
    const char *bases[SOURCE_MAX_FILES] = {0};  // (GCC 12 at -O3 would call it maybe-uninitialized)
    for (int i = 0; i < n; i++) bases[i] = files[i].dest;
    cache_remove_stale_temps(c->raw_dir, bases, n);
    char dl[SOURCE_MAX_FILES][4096];       // download path of each file (zip: the archive)
    struct http_request reqs[SOURCE_MAX_FILES];
    int req_of[SOURCE_MAX_FILES], n_req = 0;
    memset(reqs, 0, sizeof reqs);
    for (int i = 0; i < n; i++) {
        char base[256];
        const char *name = files[i].member ? url_basename(files[i].url, base, sizeof base) : files[i].dest;
        if (snprintf(dl[i], sizeof dl[i], "%s/%s", c->raw_dir, name) >= (int)sizeof dl[i])
            return xsa_fail(err, XSA_EBADINPUT, "%s: path too long", c->raw_dir);
        req_of[i] = -1;
        if (files[i].by_range) continue;  // no archive on disk: the member is fetched below
        for (int j = 0; j < i; j++)
            if (!strcmp(files[j].url, files[i].url)) req_of[i] = req_of[j];
        if (req_of[i] >= 0) continue;
        // A complete earlier download whose pinned digest still matches needs no network (--force: fetched again).
        const char *pin = files[i].member ? files[i].raw_sha256 : files[i].sha256;
        char sha[65];
        if (!c->opt->force && pin && file_exists(dl[i]) && !sha256_file_hex(dl[i], sha, NULL) && !strcmp(sha, pin)) continue;
        unlink(dl[i]);
        req_of[i] = n_req;
        reqs[n_req++] = (struct http_request){.url = files[i].url, .dest_path = dl[i], .hf_auth = files[i].hf_auth,
                                              .max_bytes = files[i].max_bytes ? files[i].max_bytes : SOURCE_ORIGINAL_MAX_BYTES};
    }
    if (n_req > 0 && (rc = http_fetch(c->http, reqs, n_req, not_found, err))) {
        for (int k = 0; k < n_req; k++) r->store_failed |= reqs[k].write_failed;
        return rc;
    }
    str_copy(r->url, sizeof r->url, files[0].url);
    for (int k = 0; k < n_req; k++)
        if (reqs[k].revision[0] && !r->revision[0]) str_copy(r->revision, sizeof r->revision, reqs[k].revision);
    // Raw digest: one file's own, or the SHA-256 of a sha256sum-style listing of several.
    char listing[SOURCE_MAX_FILES * 400] = "";
    size_t used = 0;
    int n_raw = 0;
    for (int i = 0; i < n; i++) {
        int dup = files[i].by_range;  // digested as its member, below
        for (int j = 0; j < i; j++) dup |= !strcmp(files[j].url, files[i].url);
        if (dup) continue;
        const char *pin = files[i].member ? files[i].raw_sha256 : files[i].sha256;
        if ((rc = check_pin(files[i].url, dl[i], pin, c->opt->allow_data_change, &r->bad_data, err)))
            return rc;
        char sha[65];
        if ((rc = sha256_file_hex(dl[i], sha, err))) return XSA_ERUNTIME;
        used += (size_t)snprintf(listing + used, sizeof listing - used, "%s  %s\n", sha, files[i].url);
        if (!n_raw++) str_copy(r->raw_sha256, sizeof r->raw_sha256, sha);
    }
    if (n_raw > 1 && (rc = sha256_hex(listing, strlen(listing), r->raw_sha256, err))) return rc;
    for (int i = 0; i < n; i++) {
        if (!files[i].member) continue;
        char dest[4096];
        if (snprintf(dest, sizeof dest, "%s/%s", c->raw_dir, files[i].dest) >= (int)sizeof dest)
            return xsa_fail(err, XSA_EBADINPUT, "%s: path too long", c->raw_dir);
        char what[700], sha[65];
        snprintf(what, sizeof what, "%s!%s", files[i].url, files[i].member);
        if (files[i].by_range) {
            // A member already fetched whose pinned digest still matches needs no network.
            int have = files[i].sha256 && file_exists(dest) && !sha256_file_hex(dest, sha, NULL) &&
                       !strcmp(sha, files[i].sha256);
            unsigned char *data = NULL;
            size_t len = 0;
            if (!have && (rc = zip_range_fetch(c->http, files[i].url, files[i].member, RANGE_MEMBER_MAX, &data, &len,
                                               not_found, err)))
                return rc;
            rc = have ? 0 : store_file(dest, data, len, r, err);
            free(data);
            if (rc) return rc;
        } else if ((rc = zip_extract(dl[i], files[i].member, dest, r, err))) {
            return rc;
        }
        if ((rc = check_pin(what, dest, files[i].sha256, c->opt->allow_data_change, &r->bad_data, err)))
            return rc;
        if (files[i].by_range && n_raw++ == 0 && (rc = sha256_file_hex(dest, r->raw_sha256, err))) return XSA_ERUNTIME;
    }
    return 0;
}

int source_fetch_files(struct source_ctx *c, const struct source_file *files, int n, struct source_result *r,
                       xsa_error *err) {
    int rc = source_download_files(c, files, n, r, NULL, err);
    if (rc) return rc;
    rc = source_adapt_dir(c->t, c->raw_dir, r, err);
    if (rc) {
        xsa_error e2 = *err;
        err->code = 0;
        return xsa_fail(err, XSA_ERUNTIME, "data from %s does not convert: %s", files[0].url, e2.msg);
    }
    return 0;
}
