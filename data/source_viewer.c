// source_viewer.c: rows from the Hugging Face dataset viewer ("datasets-server") API:
// GET {server}/rows?dataset=D&config=C&split=S&offset=O&length=L (L <= 100), pages fetched
// concurrently over the client's one multi handle. Every page is checked: its row_idx values
// (rows may come in any order within a page), its length, no truncated cells, and
// num_rows_total agreeing with the first page and, unless --allow-data-change, the registry.
// Pages are fetched XSA_HTTP_PARALLEL at a time and each is checked, its rows built into docs by
// the task's parser and written to the cache's temp file before the next batch: memory holds
// the pages in flight, never the whole split.
#include <curl/curl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/sources.h"
#include "tasks/rows.h"

#define VIEWER_PAGE 100            // MAX_NUM_ROWS_PER_PAGE of the viewer
#define VIEWER_MAX_ROWS 2000000    // refuse absurd num_rows_total values
#define VIEWER_PAGE_MAX_BYTES ((size_t)16 << 20)  // a real page is under 1 MB; `parallel` of them are in memory

struct viewer_split {
    const char *dataset, *config;
};

static int viewer_url(const struct source_ctx *c, const struct viewer_split *vs, long offset, long length, char *out,
                      size_t n, xsa_error *err) {
    char *d = curl_easy_escape(NULL, vs->dataset, 0);
    char *cf = curl_easy_escape(NULL, vs->config ? vs->config : "default", 0);
    char *s = curl_easy_escape(NULL, c->t->split, 0);
    int w = d && cf && s ? snprintf(out, n, "%s/rows?dataset=%s&config=%s&split=%s&offset=%ld&length=%ld",
                                    c->datasets_server, d, cf, s, offset, length)
                         : -1;
    curl_free(d);
    curl_free(cf);
    curl_free(s);
    if (w < 0 || (size_t)w >= n) return xsa_fail(err, XSA_EBADINPUT, "dataset viewer URL too long for %s", c->t->name);
    return 0;
}

struct viewer_stream {          // where checked pages go, in dataset order
    const struct task_def *t;
    struct source_result *r;    // r->jsonl: the cache's temp file; failure flags
    EVP_MD_CTX *md;             // raw digest over the page bodies, in order
    long total;                 // num_rows_total of the first page; -1 before it
};


// Checks one page (the rows at [offset, offset + count)), builds each row's doc with the task's
// parser and appends the rows, in row_idx order, to the cache's temp file.
static int viewer_take_page(struct viewer_stream *vs, const char *url, const char *body, size_t len, long offset,
                            xsa_error *err) {
    cJSON *slot[VIEWER_PAGE] = {0};  // the page's rows by row_idx - offset
    char field[256], *text = NULL;
    size_t tl = 0;
    long count = 0;
    int rc = 0;
    if (task_json_find_nul(body, len, field, sizeof field)) {
        vs->r->bad_data = 1;
        return xsa_fail(err, XSA_ERUNTIME, "%s: %s holds a NUL character (\\u0000), which would cut its text short",
                        url, field);
    }
    cJSON *o = cJSON_ParseWithLength(body, len);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(o, "rows");
    const cJSON *tot = cJSON_GetObjectItemCaseSensitive(o, "num_rows_total");
    const cJSON *partial = cJSON_GetObjectItemCaseSensitive(o, "partial");
    if (!cJSON_IsObject(o) || !cJSON_IsArray(rows) || !cJSON_IsNumber(tot)) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: not a dataset viewer /rows answer (no rows[] or num_rows_total)", url);
        goto out;
    }
    if (cJSON_IsTrue(partial)) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: the viewer serves only a partial conversion of this split", url);
        goto out;
    }
    if (tot->valuedouble < 0 || tot->valuedouble > VIEWER_MAX_ROWS) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: num_rows_total %.0f is out of range", url, tot->valuedouble);
        goto out;
    }
    if (vs->total < 0) vs->total = (long)tot->valuedouble;
    else if ((long)tot->valuedouble != vs->total) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: num_rows_total changed between pages (%ld, then %.0f); the dataset is being updated, try again later",
                      url, vs->total, tot->valuedouble);
        goto out;
    }
    count = vs->total - offset < VIEWER_PAGE ? vs->total - offset : VIEWER_PAGE;
    if (cJSON_GetArraySize(rows) != count) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: page has %d rows, expected %ld", url, cJSON_GetArraySize(rows), count);
        goto out;
    }
    long i = 0;
    for (cJSON *item = rows->child; item; item = item->next, i++) {
        // Each row lands at its row_idx, which must be on this page and not seen before.
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(item, "row_idx");
        double at = cJSON_IsNumber(idx) ? idx->valuedouble : -1;
        if (at < (double)offset || at >= (double)(offset + count) || at != (double)(long)at || slot[(long)at - offset]) {
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: rows[%ld].row_idx is missing, repeated or not in [%ld, %ld)", url, i,
                          offset, offset + count);
            goto out;
        }
        const cJSON *trunc = cJSON_GetObjectItemCaseSensitive(item, "truncated_cells");
        if (cJSON_GetArraySize(trunc) > 0) {
            const cJSON *c0 = cJSON_GetArrayItem(trunc, 0);
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: row %.0f has truncated cells (%s...); the viewer did not send the whole row",
                          url, at, cJSON_IsString(c0) ? c0->valuestring : "?");
            goto out;
        }
        cJSON *row = cJSON_DetachItemFromObjectCaseSensitive(item, "row");
        if (!cJSON_IsObject(row)) {
            cJSON_Delete(row);
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: rows[%ld].row is not an object", url, i);
            goto out;
        }
        source_canonical_row(vs->t, row);
        slot[(long)at - offset] = row;
    }
    // count rows, none repeated: every slot is filled.
    if ((rc = source_validate_rows(vs->t, slot, (int)count, offset, "viewer", url, err))) {
        vs->r->bad_data = 1;
        goto out;
    }
    if ((rc = task_rows_serialize_array(slot, (int)count, &text, &tl, err))) goto out;
    if ((rc = cache_writer_add(&vs->r->jsonl, text, tl, err))) {
        vs->r->store_failed = 1;
        goto out;
    }
    if (!EVP_DigestUpdate(vs->md, body, len)) rc = xsa_fail(err, XSA_ERUNTIME, "SHA-256 update failed");
out:
    for (long k = 0; k < VIEWER_PAGE; k++) cJSON_Delete(slot[k]);
    cJSON_Delete(o);
    free(text);
    return rc;
}

static int viewer_fetch_split(struct source_ctx *c, const struct viewer_split *vs, struct source_result *r,
                              int *not_found, xsa_error *err) {
    char first_url[1024];
    int rc = viewer_url(c, vs, 0, VIEWER_PAGE, first_url, sizeof first_url, err);
    if (rc) return rc;
    // The first page's rows for the progress bar: the registry's count, as the total is not known yet.
    long first_units = c->t->n_docs < VIEWER_PAGE ? c->t->n_docs : VIEWER_PAGE;
    struct http_request first = {.url = first_url, .gzip = 1, .units = first_units > 0 ? first_units : 0,
                                 .max_bytes = VIEWER_PAGE_MAX_BYTES, .hf_auth = 1};
    xsa_error e1 = {0};
    if ((rc = http_fetch(c->http, &first, 1, not_found, &e1))) {
        if (*not_found)
            xsa_fail(err, rc, "the dataset viewer does not serve %s/%s/%s: %s", vs->dataset, vs->config, c->t->split,
                     e1.msg);
        else xsa_fail(err, rc, "%s", e1.msg);
        http_requests_free(&first, 1);
        return rc;
    }
    struct viewer_stream st = {.t = c->t, .r = r, .md = EVP_MD_CTX_new(), .total = -1};
    int batch = c->parallel > 0 && c->parallel < 64 ? c->parallel : 64;  // pages in memory at once
    struct http_request *reqs = calloc((size_t)batch, sizeof *reqs);
    char (*urls)[1024] = calloc((size_t)batch, sizeof *urls);
    if (!st.md || !EVP_DigestInit_ex(st.md, EVP_sha256(), NULL) || !reqs || !urls)
        rc = xsa_fail(err, XSA_ERUNTIME, "out of memory");
    if (!rc && (rc = cache_writer_open(c->cache_root, c->t, &r->jsonl, err))) r->store_failed = 1;
    if (!rc) rc = viewer_take_page(&st, first_url, first.body, first.len, 0, err);
    http_requests_free(&first, 1);
    long total = st.total;
    str_copy(r->url, sizeof r->url, first_url);
    str_copy(r->revision, sizeof r->revision, first.revision);  // the viewer's X-Revision: the dataset commit it serves
    // A different size is an error anyway (the registry's pin): say so before fetching every page.
    if (!rc && c->t->n_docs > 0 && total != c->t->n_docs && !c->opt->allow_data_change) {
        r->bad_data = 1;
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: data mismatch: %ld rows, expected %d (%s reports num_rows_total %ld); "
                      "the data changed upstream; pass --allow-data-change to accept it",
                      c->t->name, total, c->t->n_docs, first_url, total);
    }
    int n_pages = rc ? 0 : (int)((total + VIEWER_PAGE - 1) / VIEWER_PAGE) - 1;
    for (int p0 = 0; !rc && p0 < n_pages; p0 += batch) {
        int nb = n_pages - p0 < batch ? n_pages - p0 : batch;
        for (int k = 0; k < nb && !rc; k++) {
            long off = (long)(p0 + k + 1) * VIEWER_PAGE;
            long len = total - off < VIEWER_PAGE ? total - off : VIEWER_PAGE;
            rc = viewer_url(c, vs, off, len, urls[k], sizeof urls[k], err);
            reqs[k] = (struct http_request){.url = urls[k], .units = len, .gzip = 1, .max_bytes = VIEWER_PAGE_MAX_BYTES,
                                            .hf_auth = 1};
        }
        if (!rc) rc = http_fetch(c->http, reqs, nb, NULL, err);
        for (int k = 0; k < nb && !rc; k++) {
            // Pages of two dataset revisions would mix two versions of the split.
            if (r->revision[0] && reqs[k].revision[0] && strcmp(reqs[k].revision, r->revision))
                rc = xsa_fail(err, XSA_ERUNTIME, "%s: served from dataset revision %s, the first page from %s; the "
                              "dataset changed during the download, try again", urls[k], reqs[k].revision, r->revision);
            if (!rc)
                rc = viewer_take_page(&st, urls[k], reqs[k].body, reqs[k].len, (long)(p0 + k + 1) * VIEWER_PAGE, err);
        }
        http_requests_free(reqs, nb);
    }
    if (!rc && (rc = cache_writer_finish(&r->jsonl, r->sha256, err))) r->store_failed = 1;
    if (!rc && r->jsonl.rows != total)
        rc = xsa_fail(err, XSA_ERUNTIME, "internal: %ld rows streamed of %ld", r->jsonl.rows, total);
    if (!rc) {
        r->n = (int)total;
        r->streamed = 1;
        unsigned char dg[32];
        unsigned int dl = 0;
        EVP_DigestFinal_ex(st.md, dg, &dl);
        for (int i = 0; i < 32; i++) snprintf(r->raw_sha256 + 2 * i, 3, "%02x", dg[i]);
    } else {
        cache_writer_discard(&r->jsonl);
    }
    EVP_MD_CTX_free(st.md);
    free(reqs);
    free(urls);
    return rc;
}

int source_viewer_fetch(struct source_ctx *c, struct source_result *r, xsa_error *err) {
    struct viewer_split main = {c->t->hf_dataset, c->t->hf_config};
    int not_found = 0;
    int rc = viewer_fetch_split(c, &main, r, &not_found, err);
    // Another Hub copy of the same rows, after any failure of the first (its retries done) but a
    // cache that cannot be written.
    if (rc && !r->store_failed && c->t->hf_alt_dataset) {
        r->bad_data = 0;
        struct viewer_split alt = {c->t->hf_alt_dataset, c->t->hf_alt_config};
        if (!c->opt->quiet) fprintf(stderr, "xsa-eval: %s: %s; trying %s\n", c->t->name, err->msg, alt.dataset);
        xsa_error_clear(err);
        rc = viewer_fetch_split(c, &alt, r, &not_found, err);
        if (!rc) {
            str_copy(r->dataset, sizeof r->dataset, alt.dataset);
            str_copy(r->config, sizeof r->config, alt.config ? alt.config : "default");
        }
    }
    return rc;
}
