// source_viewer.c: rows from the Hugging Face dataset viewer ("datasets-server") API:
// GET {server}/rows?dataset=D&config=C&split=S&offset=O&length=L (L <= 100), pages fetched
// concurrently over the client's one multi handle. Every page is checked: its row_idx values
// (rows may come in any order within a page), its length, no truncated cells, and
// num_rows_total agreeing with the first page and, unless --allow-data-change, the registry.
#include <curl/curl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/sources.h"

#define VIEWER_PAGE 100            // MAX_NUM_ROWS_PER_PAGE of the viewer
#define VIEWER_MAX_ROWS 2000000    // refuse absurd num_rows_total values
#define VIEWER_PAGE_MAX_BYTES ((size_t)16 << 20)  // a real page is under 1 MB; every page stays in memory

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

// Checks one page and moves its rows into r at [offset, offset + count).
static int viewer_take_page(const char *url, const char *body, long offset, long expect_count, long *total,
                            struct source_result *r, xsa_error *err) {
    cJSON *o = cJSON_Parse(body);
    int rc = 0;
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
    if (*total < 0) *total = (long)tot->valuedouble;
    else if ((long)tot->valuedouble != *total) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: num_rows_total changed between pages (%ld, then %.0f); the dataset is being updated, try again later",
                      url, *total, tot->valuedouble);
        goto out;
    }
    if (expect_count < 0) expect_count = *total - offset < VIEWER_PAGE ? *total - offset : VIEWER_PAGE;
    if (cJSON_GetArraySize(rows) != expect_count) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: page has %d rows, expected %ld", url, cJSON_GetArraySize(rows), expect_count);
        goto out;
    }
    long i = 0;
    for (cJSON *item = rows->child; item; item = item->next, i++) {
        // Each row lands at its row_idx, which must be on this page and not seen before.
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(item, "row_idx");
        double at = cJSON_IsNumber(idx) ? idx->valuedouble : -1;
        if (at < (double)offset || at >= (double)(offset + expect_count) || at != (double)(long)at ||
            r->rows[(long)at]) {
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: rows[%ld].row_idx is missing, repeated or not in [%ld, %ld)", url, i,
                          offset, offset + expect_count);
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
        r->rows[(long)at] = row;
    }
out:
    cJSON_Delete(o);
    return rc;
}

// The viewer serves Hub rows as the loader script built them; where that differs from the
// original-author adapters' canonical rows only in form, bring it to theirs, so the canonical
// digest does not depend on the source: the social_i_qa script kept each label line's "\n".
static void viewer_canonical_row(const struct task_def *t, cJSON *row) {
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

static int viewer_fetch_split(struct source_ctx *c, const struct viewer_split *vs, struct source_result *r,
                              int *not_found, xsa_error *err) {
    char first_url[1024];
    int rc = viewer_url(c, vs, 0, VIEWER_PAGE, first_url, sizeof first_url, err);
    if (rc) return rc;
    // The first page's rows for the progress bar: the registry's count, as the total is not known yet.
    long first_units = c->t->n_docs < VIEWER_PAGE ? c->t->n_docs : VIEWER_PAGE;
    struct http_request first = {.url = first_url, .gzip = 1, .units = first_units > 0 ? first_units : 0,
                                 .max_bytes = VIEWER_PAGE_MAX_BYTES};
    xsa_error e1 = {0};
    if ((rc = http_fetch(c->http, &first, 1, not_found, &e1))) {
        if (*not_found)
            xsa_fail(err, rc, "the dataset viewer does not serve %s/%s/%s: %s", vs->dataset, vs->config, c->t->split,
                     e1.msg);
        else xsa_fail(err, rc, "%s", e1.msg);
        http_requests_free(&first, 1);
        return rc;
    }
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
        EVP_MD_CTX_free(md);
        http_requests_free(&first, 1);
        return xsa_fail(err, XSA_ERUNTIME, "SHA-256 init failed");
    }
    // Peek at the total, then allocate every slot so pages can land in any order.
    long total = -1;
    cJSON *peek = cJSON_Parse(first.body);
    const cJSON *tot = cJSON_GetObjectItemCaseSensitive(peek, "num_rows_total");
    long n_total = cJSON_IsNumber(tot) && tot->valuedouble >= 0 && tot->valuedouble <= VIEWER_MAX_ROWS ? (long)tot->valuedouble : 0;
    cJSON_Delete(peek);
    r->rows = calloc((size_t)(n_total > 0 ? n_total : 1), sizeof *r->rows);
    r->cap = (int)(n_total > 0 ? n_total : 1);
    struct http_request *reqs = NULL;
    char (*urls)[1024] = NULL;
    int n_pages = 0;
    if (!r->rows) { rc = xsa_fail(err, XSA_ERUNTIME, "out of memory"); goto out; }
    if ((rc = viewer_take_page(first_url, first.body, 0, -1, &total, r, err))) goto out;
    EVP_DigestUpdate(md, first.body, first.len);
    str_copy(r->url, sizeof r->url, first_url);
    // A different size is an error anyway (the registry's pin): say so before fetching every page.
    if (c->t->n_docs > 0 && total != c->t->n_docs && !c->opt->allow_data_change) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: data mismatch: %ld rows, expected %d (%s reports num_rows_total %ld); "
                      "the data changed upstream; pass --allow-data-change to accept it",
                      c->t->name, total, c->t->n_docs, first_url, total);
        goto out;
    }
    n_pages = (int)((total + VIEWER_PAGE - 1) / VIEWER_PAGE) - 1;
    if (n_pages > 0) {
        reqs = calloc((size_t)n_pages, sizeof *reqs);
        urls = calloc((size_t)n_pages, sizeof *urls);
        if (!reqs || !urls) { rc = xsa_fail(err, XSA_ERUNTIME, "out of memory"); goto out; }
        for (int p = 0; p < n_pages && !rc; p++) {
            long off = (long)(p + 1) * VIEWER_PAGE;
            long len = total - off < VIEWER_PAGE ? total - off : VIEWER_PAGE;
            rc = viewer_url(c, vs, off, len, urls[p], sizeof urls[p], err);
            reqs[p] = (struct http_request){.url = urls[p], .units = len, .gzip = 1, .max_bytes = VIEWER_PAGE_MAX_BYTES};
        }
        if (!rc) rc = http_fetch(c->http, reqs, n_pages, NULL, err);
        for (int p = 0; p < n_pages && !rc; p++) {
            long off = (long)(p + 1) * VIEWER_PAGE;
            rc = viewer_take_page(urls[p], reqs[p].body, off, -1, &total, r, err);
            EVP_DigestUpdate(md, reqs[p].body, reqs[p].len);
        }
    }
    if (!rc) {
        r->n = (int)total;
        for (long i = 0; i < total; i++) viewer_canonical_row(c->t, r->rows[i]);
        unsigned char dg[32];
        unsigned int dl = 0;
        EVP_DigestFinal_ex(md, dg, &dl);
        for (int i = 0; i < 32; i++) snprintf(r->raw_sha256 + 2 * i, 3, "%02x", dg[i]);
    }
out:
    if (rc) {  // rows may be partly filled: free them all
        for (int i = 0; i < r->cap; i++) cJSON_Delete(r->rows ? r->rows[i] : NULL);
        free(r->rows);
        r->rows = NULL;
        r->n = r->cap = 0;
    }
    EVP_MD_CTX_free(md);
    http_requests_free(&first, 1);
    if (reqs) http_requests_free(reqs, n_pages);
    free(reqs);
    free(urls);
    return rc;
}

int source_viewer_fetch(struct source_ctx *c, struct source_result *r, xsa_error *err) {
    struct viewer_split main = {c->t->hf_dataset, c->t->hf_config};
    int not_found = 0;
    int rc = viewer_fetch_split(c, &main, r, &not_found, err);
    if (rc && not_found && c->t->hf_alt_dataset) {  // another Hub copy of the same rows
        struct viewer_split alt = {c->t->hf_alt_dataset, c->t->hf_alt_config};
        if (!c->opt->quiet) fprintf(stderr, "xsa-eval: %s: %s; trying %s\n", c->t->name, err->msg, alt.dataset);
        xsa_error_clear(err);
        rc = viewer_fetch_split(c, &alt, r, &not_found, err);
    }
    return rc;
}
