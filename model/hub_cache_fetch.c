// hub_cache_fetch.c: downloading a model from the Hugging Face Hub into the hub cache as
// huggingface_hub's snapshot_download + hf_hub_download lay it out (hub_cache.h), over the one
// HTTP client (data/http.c):
//   GET  {endpoint}/api/models/{repo}/revision/{rev}?blobs=true   -> the commit and the file list
//   HEAD {endpoint}/{repo}/resolve/{commit}/{file}, relative redirects followed
//        -> X-Repo-Commit, the etag (X-Linked-Etag, else ETag), the size (X-Linked-Size, else
//           Content-Length), and where the bytes are (a 302 to the CDN for LFS files)
//   GET  that location -> blobs/<etag>.incomplete (resumed by Range), checked (size; sha256 of an
//        LFS file = its etag; git blob sha1 of a regular file = its etag), renamed to blobs/<etag>,
//        then snapshots/<commit>/<file> -> ../../blobs/<etag>, then refs/<rev> = <commit>.
// The token (data/http.c's, found as huggingface_hub finds it) goes to the Hub's host only: the CDN
// location is fetched without it.
#include "model/hub_cache.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "data/http.h"
#include "data/progress.h"

#define HUB_DEFAULT_ENDPOINT "https://huggingface.co"

struct fetch {
    const struct hub_fetch_options *o;
    struct hub_model *m;
    char endpoint[512];
    struct http_options opt;   // the client's options (its hf_token: "" when there is none)
    cJSON *siblings;           // the API's file list (owned by `info`)
    cJSON *info;
};

// huggingface_hub's constants._is_true.
static int env_true(const char *name) {
    const char *v = getenv(name);
    return v && (!strcasecmp(v, "1") || !strcasecmp(v, "ON") || !strcasecmp(v, "YES") || !strcasecmp(v, "TRUE"));
}

// Percent-encodes `s` as Python's urllib.parse.quote: unreserved characters stay, '/' stays
// when keep_slash (file names), everything else is %XX.
static void url_quote(const char *s, int keep_slash, char *out, size_t n) {
    size_t k = 0;
    for (; *s && k + 4 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || strchr("_.-~", c) || (keep_slash && c == '/')) out[k++] = (char)c;
        else k += (size_t)snprintf(out + k, n - k, "%%%02X", c);
    }
    out[k] = '\0';
}

// "scheme://host[:port]" of a URL, for the same-host rule of the token.
static void url_origin(const char *url, char *out, size_t n) {
    const char *p = strstr(url, "://");
    const char *end = p ? strchr(p + 3, '/') : NULL;
    size_t k = end ? (size_t)(end - url) : strlen(url);
    snprintf(out, n, "%.*s", (int)(k < n ? k : n - 1), url);
}

static int same_origin(const char *a, const char *b) {
    char x[512], y[512];
    url_origin(a, x, sizeof x);
    url_origin(b, y, sizeof y);
    return !strcasecmp(x, y);
}

// An HTTP failure of a Hub request as one line: what the Hub said and what to do. `what` names
// the request ("org/name@main", "org/name: config.json").
static int hub_http_fail(struct fetch *f, const struct http_request *r, const char *what, xsa_error *e, xsa_error *err) {
    const struct http_hub_headers *h = &r->hub;
    const char *repo = f->m->repo;
    int gated = !strcmp(h->error_code, "GatedRepo");
    xsa_error_clear(err);
    if (r->status == 401 && !strcmp(h->error_message, "Invalid credentials in Authorization header"))
        return xsa_fail(err, XSA_ERUNTIME, "%s: HTTP 401: the Hub refused the token (HF_TOKEN or the token file): "
                        "invalid credentials; set HF_TOKEN to a valid token from %s/settings/tokens", what, f->endpoint);
    if ((r->status == 401 || r->status == 403) && gated)
        return xsa_fail(err, XSA_ERUNTIME, "%s: HTTP %ld: %s is a gated repo%s; accept its licence at %s/%s and set "
                        "HF_TOKEN to a token of the account that accepted it", what, r->status, repo,
                        f->opt.hf_token[0] ? " and this token has no access to it" : " and no token was sent", f->endpoint,
                        repo);
    if (r->status == 401 || r->status == 403)
        return xsa_fail(err, XSA_ERUNTIME, "%s: HTTP %ld: the Hub refused access (%.150s): the repo is private or gated, "
                        "or does not exist; check the id, and for a private or gated repo set HF_TOKEN (and accept "
                        "its licence at %s/%s)", what, r->status, h->error_message[0] ? h->error_message : "no reason given",
                        f->endpoint, repo);
    if (r->status == 404 && !strcmp(h->error_code, "RevisionNotFound"))
        return xsa_fail(err, XSA_ERUNTIME, "%s: HTTP 404: %s has no revision '%s' (a branch, tag or commit); see "
                        "%s/%s/tree/main for its branches", what, repo, f->m->revision, f->endpoint, repo);
    if (r->status == 404 && !strcmp(h->error_code, "EntryNotFound"))
        return xsa_fail(err, XSA_ERUNTIME, "%s: HTTP 404: the file is not in %s at commit %s", what, repo, f->m->commit);
    if (r->status == 404)
        return xsa_fail(err, XSA_ERUNTIME, "%s: HTTP 404: no model repo %s at %s, and no such local path either; check "
                        "the path or the id (org/name)", what, repo, f->endpoint);
    return xsa_fail(err, XSA_ERUNTIME, "%s: %s", what, e->msg);
}

// One request to the Hub (memory mode); on failure `*net` says whether the Hub was not reached
// or was unavailable (connection, timeout, 5xx, 429), the cases where a cached copy is used.
static int hub_get(struct fetch *f, struct http_request *r, int retries, const char *what, int *net, xsa_error *err) {
    struct http_options opt = f->opt;
    struct http_client *c = NULL;
    if (retries >= 0 && retries < opt.max_retries) opt.max_retries = retries;
    int rc = http_client_new(&c, &opt, NULL, err);
    if (rc) return rc;
    xsa_error e = {0};
    rc = http_fetch(c, r, 1, NULL, &e);
    http_client_free(c);
    *net = rc && (r->status == 0 || r->status == 429 || r->status >= 500);
    if (rc) http_requests_free(r, 1);
    return rc ? hub_http_fail(f, r, what, &e, err) : 0;
}

static cJSON *sibling(struct fetch *f, const char *name) {
    cJSON *s;
    cJSON_ArrayForEach(s, f->siblings) {
        cJSON *n = cJSON_GetObjectItemCaseSensitive(s, "rfilename");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, name)) return s;
    }
    return NULL;
}

static int sibling_has(void *ctx, const char *name) { return sibling(ctx, name) != NULL; }

// The size the listing gives a file (-1 when it does not).
static long long sibling_size(struct fetch *f, const char *name) {
    cJSON *sz = cJSON_GetObjectItemCaseSensitive(sibling(f, name), "size");
    return cJSON_IsNumber(sz) && sz->valuedouble >= 0 && sz->valuedouble < 9e18 ? (long long)sz->valuedouble : -1;
}

// The revision's commit and file list: GET /api/models/{repo}/revision/{rev}?blobs=true.
static int api_revision(struct fetch *f, int retries, int *net, xsa_error *err) {
    char url[1200], rev[400], what[700];
    url_quote(f->m->revision, 0, rev, sizeof rev);
    snprintf(url, sizeof url, "%s/api/models/%s/revision/%s?blobs=true", f->endpoint, f->m->repo, rev);
    snprintf(what, sizeof what, "%s@%s (%.200s)", f->m->repo, f->m->revision, url);
    struct http_request r = {.url = url, .gzip = 1, .max_bytes = (size_t)64 << 20, .hf_auth = 1};
    int rc = hub_get(f, &r, retries, what, net, err);
    if (rc) return rc;
    f->info = cJSON_ParseWithLength(r.body, r.len);
    http_requests_free(&r, 1);
    cJSON *sha = cJSON_GetObjectItemCaseSensitive(f->info, "sha");
    f->siblings = cJSON_GetObjectItemCaseSensitive(f->info, "siblings");
    if (!cJSON_IsString(sha) || !hub_is_commit(sha->valuestring) || !cJSON_IsArray(f->siblings))
        return xsa_fail(err, XSA_ERUNTIME, "%s: the answer is not the Hub's model info (no 40-hex \"sha\" and \"siblings\" "
                        "list); check HF_ENDPOINT", what);
    if (!hub_is_commit(f->m->revision) || !strcmp(f->m->revision, sha->valuestring))
        snprintf(f->m->commit, sizeof f->m->commit, "%s", sha->valuestring);
    else
        return xsa_fail(err, XSA_ERUNTIME, "%s: the Hub answered with commit %s", what, sha->valuestring);
    return 0;
}

// huggingface_hub's _normalize_etag (W/ and quotes off), and only a plain file name is kept.
static int normalize_etag(const char *raw, char *out, size_t n) {
    while (*raw == 'W' || *raw == '/') raw++;
    size_t k = strlen(raw);
    while (k && raw[k - 1] == '"') k--;
    while (k && *raw == '"') raw++, k--;
    if (k == 0 || k >= n || k > 128) return -1;
    for (size_t i = 0; i < k; i++)
        if (!isalnum((unsigned char)raw[i]) && raw[i] != '-' && raw[i] != '_') return -1;
    memcpy(out, raw, k);
    out[k] = '\0';
    return 0;
}

struct file_meta {
    char etag[130];
    long long size;
    char location[2400];
};

// HEAD resolve/{commit}/{file} as get_hf_file_metadata does it: relative redirects (a renamed
// repo) are followed, a redirect to another host (the CDN) is where the bytes are.
static int file_metadata(struct fetch *f, const char *name, struct file_meta *fm, xsa_error *err) {
    char qname[1600], url[2400], what[700];
    url_quote(name, 1, qname, sizeof qname);
    snprintf(url, sizeof url, "%s/%s/resolve/%s/%s", f->endpoint, f->m->repo, f->m->commit, qname);
    snprintf(what, sizeof what, "%s: %.200s (%.250s)", f->m->repo, name, url);
    struct http_request r;
    for (int hop = 0;; hop++) {
        int net = 0;
        memset(&r, 0, sizeof r);
        r.url = url;
        r.head = r.no_redirect = r.hf_auth = 1;
        int rc = hub_get(f, &r, -1, what, &net, err);
        if (rc) return rc;
        if (r.status < 300 || r.hub.location[0] != '/' || hop == 5) break;
        char origin[512];
        url_origin(url, origin, sizeof origin);
        snprintf(url, sizeof url, "%s%.1500s", origin, r.hub.location);
    }
    const struct http_hub_headers *h = &r.hub;
    if (strcmp(r.revision, f->m->commit))
        return xsa_fail(err, XSA_ERUNTIME, "%s: the answer %s (X-Repo-Commit '%s'); check HF_ENDPOINT, proxies and "
                        "firewalls", what, r.revision[0] ? "is for another commit" : "is not from a Hugging Face Hub",
                        r.revision);
    if (normalize_etag(h->linked_etag[0] ? h->linked_etag : h->etag, fm->etag, sizeof fm->etag))
        return xsa_fail(err, XSA_ERUNTIME, "%s: no usable ETag or X-Linked-Etag (got '%.80s'), so the file cannot be "
                        "named in the cache", what, h->linked_etag[0] ? h->linked_etag : h->etag);
    fm->size = h->linked_size >= 0 ? h->linked_size : r.status >= 300 ? -1 : h->content_length;
    if (fm->size < 0)
        return xsa_fail(err, XSA_ERUNTIME, "%s: no X-Linked-Size or Content-Length, so the download cannot be checked", what);
    if (r.status >= 300 && !h->location[0])
        return xsa_fail(err, XSA_ERUNTIME, "%s: HTTP %ld without a Location", what, r.status);
    // The bytes are fetched from the location itself, so the client's https-only redirect rule is kept here.
    if (r.status >= 300 && !strncasecmp(url, "https:", 6) && strncasecmp(h->location, "https:", 6))
        return xsa_fail(err, XSA_ERUNTIME, "%s: a redirect from https to %.100s was refused (only https may follow https)",
                        what, h->location);
    snprintf(fm->location, sizeof fm->location, "%s", r.status >= 300 ? h->location : url);
    return 0;
}

// What the etag promises about the bytes: an LFS file's sha256, or a regular file's git blob
// sha1 (sha1 of "blob <size>\0" + content). Other etags are only size-checked.
static int verify_blob(const char *path, const char *etag, long long size, char *got, size_t n, xsa_error *err) {
    size_t elen = strlen(etag);
    int sha256 = elen == 64, sha1 = elen == 40;
    got[0] = '\0';
    for (size_t i = 0; i < elen; i++)
        if (!isxdigit((unsigned char)etag[i]) || isupper((unsigned char)etag[i])) sha256 = sha1 = 0;
    if (!sha256 && !sha1) return 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return xsa_fail(err, XSA_ERUNTIME, "%s: cannot open: %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = !ctx || !EVP_DigestInit_ex(ctx, sha256 ? EVP_sha256() : EVP_sha1(), NULL);
    if (!rc && sha1) {
        char hdr[48];
        int k = snprintf(hdr, sizeof hdr, "blob %lld", size);
        rc = !EVP_DigestUpdate(ctx, hdr, (size_t)k + 1);  // the NUL is part of git's header
    }
    unsigned char buf[1 << 16], md[EVP_MAX_MD_SIZE];
    size_t got_n;
    while (!rc && (got_n = fread(buf, 1, sizeof buf, fp)) > 0) rc = !EVP_DigestUpdate(ctx, buf, got_n);
    unsigned int mdlen = 0;
    if (!rc) rc = ferror(fp) || !EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    fclose(fp);
    if (rc) return xsa_fail(err, XSA_ERUNTIME, "%s: cannot hash the download", path);
    for (unsigned int i = 0; i < mdlen && 2 * i + 2 < n; i++) snprintf(got + 2 * i, 3, "%02x", md[i]);
    return 0;
}

// snapshots/<commit>/<name> -> ../../blobs/<etag> (one more ../ per folder in name), made
// under a temporary name and renamed over whatever was there, so readers never see it missing.
static int link_snapshot(struct fetch *f, const char *name, const char *etag, xsa_error *err) {
    char pointer[4700], dir[4700], target[700] = "../../", tmp[4800];
    snprintf(pointer, sizeof pointer, "%s/%s", f->m->path, name);
    snprintf(dir, sizeof dir, "%s", pointer);
    *strrchr(dir, '/') = '\0';
    for (const char *p = name; (p = strchr(p, '/')); p++) strcat(target, "../");
    strcat(target, "blobs/");
    strcat(target, etag);
    int rc = file_mkdirs(dir, "check that the Hugging Face cache folder is writable (HF_HUB_CACHE)", err);
    if (rc) return rc;
    if (file_temp_path(pointer, tmp, sizeof tmp)) return xsa_fail(err, XSA_ERUNTIME, "%s: path too long", pointer);
    unlink(tmp);
    if (symlink(target, tmp) != 0 || rename(tmp, pointer) != 0) {
        int e = errno;
        unlink(tmp);
        return xsa_fail(err, XSA_ERUNTIME, "%s: cannot create the symlink to %s: %s", pointer, target, strerror(e));
    }
    return file_sync_dir(dir, err);
}

// Holds .locks/models--org--name/<etag>.lock (flock, as huggingface_hub's filelock does), waiting
// for another process that holds it. Returns the descriptor, or -1 after filling err.
static int lock_blob(struct fetch *f, const char *name, const char *etag, xsa_error *err) {
    char dir[4700], path[4900];
    const char *base = strrchr(f->m->repo_dir, '/');
    if (snprintf(dir, sizeof dir, "%s/.locks/%s", f->m->cache, base ? base + 1 : f->m->repo_dir) >= (int)sizeof dir) {
        xsa_fail(err, XSA_ERUNTIME, "%s: the lock path is too long", f->m->cache);
        return -1;
    }
    if (file_mkdirs(dir, "check that the Hugging Face cache folder is writable (HF_HUB_CACHE)", err)) return -1;
    snprintf(path, sizeof path, "%s/%s.lock", dir, etag);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        xsa_fail(err, XSA_ERUNTIME, "%s: cannot open the lock file: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (!f->o->quiet)
            fprintf(stderr, "xsa-eval: %s: another process is downloading %s; waiting for it (%s)\n", f->m->repo, name, path);
        if (flock(fd, LOCK_EX) != 0) {
            xsa_fail(err, XSA_ERUNTIME, "%s: cannot lock: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
    }
    return fd;
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
}

// Downloads the blob of `name` into blobs/<etag> (under its lock): the .incomplete file is
// resumed by Range, checked, and renamed; a failed check removes it.
static int download_blob(struct fetch *f, const char *name, const struct file_meta *fm, const char *blob,
                         xsa_error *err) {
    char part[4900], got[130], what[700];
    snprintf(part, sizeof part, "%s.incomplete", blob);
    snprintf(what, sizeof what, "%s: %s", f->m->repo, name);
    long long have = file_size(part);
    if (!f->o->quiet)
        fprintf(stderr, "xsa-eval: %s@%s: downloading %s (%lld bytes)%s\n", f->m->repo, f->m->revision, name, fm->size,
                have > 0 ? " resuming a partial download" : "");
    struct http_options opt = f->opt;
    struct http_client *c = NULL;
    struct progress pr;
    int rc;
    if (!getenv("XSA_HTTP_MAX_TOTAL") || !*getenv("XSA_HTTP_MAX_TOTAL"))
        opt.max_total_s = 86400;  // a multi-gigabyte shard: the low-speed limit catches a stalled link instead
    progress_begin(&pr, name, 0, f->o->quiet);
    if ((rc = http_client_new(&c, &opt, &pr, err))) return rc;
    struct http_request r = {.url = fm->location, .dest_path = part, .part_path = part,
                             .max_bytes = fm->size > 0 ? (size_t)fm->size : 1,
                             .hf_auth = same_origin(fm->location, f->endpoint)};  // the CDN gets no token
    xsa_error e = {0};
    rc = http_fetch(c, &r, 1, NULL, &e);
    http_client_free(c);
    progress_end(&pr);
    if (rc) return hub_http_fail(f, &r, what, &e, err);
    long long size = file_size(part);
    if (size != fm->size) {
        unlink(part);
        return xsa_fail(err, XSA_ERUNTIME, "%s: %lld bytes arrived, the Hub said %lld (X-Linked-Size/Content-Length); "
                        "nothing was kept; run again", what, size, fm->size);
    }
    if ((rc = verify_blob(part, fm->etag, size, got, sizeof got, err))) return rc;
    if (got[0] && strcmp(got, fm->etag)) {
        unlink(part);
        return xsa_fail(err, XSA_ERUNTIME, "%s: the download's %s is %s, the Hub says %s (%s); it was corrupted on the way "
                        "and nothing was kept in the cache; run again", what, strlen(got) == 64 ? "sha256" : "git blob sha1",
                        got, fm->etag, strlen(got) == 64 ? "X-Linked-Etag, the LFS oid" : "ETag");
    }
    char dir[4700];
    snprintf(dir, sizeof dir, "%s", blob);
    *strrchr(dir, '/') = '\0';
    if (rename(part, blob) != 0)
        return xsa_fail(err, XSA_ERUNTIME, "%s: cannot rename to %s: %s", part, blob, strerror(errno));
    return file_sync_dir(dir, err);
}

// CACHEDIR.TAG at the cache root (the cache directory tag standard, which huggingface_hub writes
// too), so backup tools skip the cache. Best effort: a cache without it is still a cache.
static void tag_cache_dir(struct fetch *f) {
    static const char tag[] = "Signature: 8a477f597d28d172789f06886806bc55\n"
                              "# This file is a cache directory tag created by xsa-eval (a Hugging Face hub cache).\n"
                              "# For information about cache directory tags, see:\n#\thttps://bford.info/cachedir/\n";
    char path[3700];
    xsa_error e = {0};
    snprintf(path, sizeof path, "%s/CACHEDIR.TAG", f->m->cache);
    if (!file_exists(path)) file_write_atomic(path, tag, sizeof tag - 1, &e);
}

// One file of the snapshot: already there (and of the size the listing says), or its blob
// fetched (or found) and linked.
static int fetch_file(struct fetch *f, const char *name, xsa_error *err) {
    char pointer[4700], blobs[4000], blob[4200];
    snprintf(pointer, sizeof pointer, "%s/%s", f->m->path, name);
    long long want = sibling_size(f, name), have = file_size(pointer);
    if (have >= 0 && (want < 0 || have == want)) return 0;
    if (have >= 0 && !f->o->quiet)
        fprintf(stderr, "xsa-eval: %s: cached %s is %lld bytes, the Hub lists %lld: the blob is damaged; fetching it again\n",
                f->m->repo, name, have, want);
    struct file_meta fm;
    int rc = file_metadata(f, name, &fm, err);
    if (rc) return rc;
    // The listing (the LFS oid and size) and the file's headers are two answers for one commit.
    cJSON *oid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sibling(f, name), "lfs"), "sha256");
    if ((cJSON_IsString(oid) && strcmp(oid->valuestring, fm.etag)) || (want >= 0 && want != fm.size))
        return xsa_fail(err, XSA_ERUNTIME, "%s@%s: %s: the Hub's file list says sha256 %.64s and %lld bytes, its file "
                        "headers say %s and %lld bytes; nothing was downloaded; run again later", f->m->repo, f->m->commit,
                        name, cJSON_IsString(oid) ? oid->valuestring : "-", want, fm.etag, fm.size);
    snprintf(blobs, sizeof blobs, "%s/blobs", f->m->repo_dir);
    snprintf(blob, sizeof blob, "%s/%s", blobs, fm.etag);
    if ((rc = file_mkdirs(blobs, "check that the Hugging Face cache folder is writable (HF_HUB_CACHE)", err))) return rc;
    tag_cache_dir(f);
    int fd = lock_blob(f, name, fm.etag, err);
    if (fd < 0) return err->code;
    long long bs = file_size(blob);
    if (bs >= 0 && bs != fm.size) {  // a damaged blob (truncated, or another file): replace it
        if (!f->o->quiet)
            fprintf(stderr, "xsa-eval: %s: %s is %lld bytes, the Hub says %lld: damaged; fetching it again\n", f->m->repo,
                    blob, bs, fm.size);
        unlink(blob);
        bs = -1;
    }
    if (bs < 0) rc = download_blob(f, name, &fm, blob, err);
    if (!rc) rc = link_snapshot(f, name, fm.etag, err);
    close(fd);  // releases the lock
    return rc;
}

// refs/<revision> = <commit>, written last and atomically (no newline, as huggingface_hub writes it).
static int write_ref(struct fetch *f, xsa_error *err) {
    if (!strcmp(f->m->revision, f->m->commit)) return 0;
    char ref[4200], dir[4200], *text = NULL;
    size_t len = 0;
    snprintf(ref, sizeof ref, "%s/refs/%s", f->m->repo_dir, f->m->revision);
    xsa_error e = {0};
    int same = file_read_all(ref, 4096, &text, &len, &e) == 0 && !strcmp(text, f->m->commit);
    free(text);
    if (same) return 0;
    snprintf(dir, sizeof dir, "%s", ref);
    *strrchr(dir, '/') = '\0';
    int rc = file_mkdirs(dir, "check that the Hugging Face cache folder is writable (HF_HUB_CACHE)", err);
    return rc ? rc : file_write_atomic(ref, f->m->commit, 40, err);
}

// Every file the loader needs, for the commit the API named.
static int fetch_snapshot(struct fetch *f, xsa_error *err) {
    if (snprintf(f->m->path, sizeof f->m->path, "%s/snapshots/%s", f->m->repo_dir, f->m->commit) >= (int)sizeof f->m->path)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the cache path is too long", f->m->repo);
    if (!sibling(f, "config.json"))
        return xsa_fail(err, XSA_EBADINPUT, "%s@%s: the repo has no config.json, so it is not a transformers checkpoint "
                        "xsa-eval can read", f->m->repo, f->m->revision);
    const char *weights = hub_pick_weights(sibling_has, f), *tok = hub_pick_tokenizer(sibling_has, f);
    if (!weights)
        return xsa_fail(err, XSA_EBADINPUT, "%s@%s: the repo has none of model.safetensors, model.safetensors.index.json, "
                        "pytorch_model.bin, pytorch_model.bin.index.json", f->m->repo, f->m->revision);
    int rc = fetch_file(f, "config.json", err);
    if (!rc && tok) rc = fetch_file(f, tok, err);
    // vocab.json's merges (a repo without tokenizer.json: facebook/opt-*); transformers reads a
    // tokenizer.json's or vocab.json's BOS and EOS from the other two (model/tokenizer_config.c).
    int vocab_files = tok && !strcmp(tok, "vocab.json");
    if (!rc && vocab_files) rc = fetch_file(f, "merges.txt", err);
    static const char *const tok_side[] = {"tokenizer_config.json", "special_tokens_map.json"};
    for (int i = 0; i < 2 && !rc && tok && (vocab_files || !strcmp(tok, "tokenizer.json")); i++)
        if (sibling(f, tok_side[i])) rc = fetch_file(f, tok_side[i], err);
    if (!rc) rc = fetch_file(f, weights, err);
    if (!rc && hub_is_index(weights)) {
        char idx[4800], **shards = NULL;
        int n = 0;
        snprintf(idx, sizeof idx, "%s/%s", f->m->path, weights);
        rc = hub_index_shards(idx, &shards, &n, err);
        for (int i = 0; i < n && !rc; i++) {
            if (!sibling(f, shards[i]))
                rc = xsa_fail(err, XSA_EBADINPUT, "%s@%s: %s names the shard %s, which the repo does not have", f->m->repo,
                              f->m->revision, weights, shards[i]);
            else
                rc = fetch_file(f, shards[i], err);
        }
        hub_names_free(shards, n);
    }
    return rc ? rc : write_ref(f, err);
}

// Adds to the message already in err (xsa_fail keeps the first one only); the tail survives a long message.
static void err_extend(xsa_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void err_extend(xsa_error *err, const char *fmt, ...) {
    char tail[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tail, sizeof tail, fmt, ap);
    va_end(ap);
    size_t keep = sizeof err->msg - 1 - strlen(tail);
    if (strlen(err->msg) > keep) err->msg[keep] = '\0';
    strcat(err->msg, tail);
}

int hub_fetch(const char *arg, const struct hub_fetch_options *o, struct hub_model *out, xsa_error *err) {
    int rc = hub_parse_id(arg, out, err);
    if (rc) return rc;
    char how[600], cli[400];
    int offline = o->offline || env_true("HF_HUB_OFFLINE") || env_true("TRANSFORMERS_OFFLINE");
    // The revision asked for, when it is not the default branch: the command must fetch that one.
    snprintf(cli, sizeof cli, "huggingface-cli download %s%s%.128s", out->repo, strcmp(out->revision, "main") ? " --revision " : "",
             strcmp(out->revision, "main") ? out->revision : "");
    snprintf(how, sizeof how, offline ? "offline (--offline or HF_HUB_OFFLINE), so nothing is downloaded: run once online "
             "to download it, or `%s`" : "download it with `%s`", cli);
    if (offline) return hub_resolve(arg, how, out, err);
    // A commit whose snapshot is complete is used without any request (as hf_hub_download does).
    struct hub_model cached;
    xsa_error ce = {0};
    int have_cache = hub_resolve(arg, how, &cached, &ce) == 0;
    if (have_cache && hub_is_commit(out->revision)) {
        *out = cached;
        return 0;
    }
    struct fetch f = {.o = o, .m = out};
    const char *ep = o->endpoint && *o->endpoint ? o->endpoint : getenv("HF_ENDPOINT");
    snprintf(f.endpoint, sizeof f.endpoint, "%s", ep && *ep ? ep : HUB_DEFAULT_ENDPOINT);
    for (size_t n = strlen(f.endpoint); n && f.endpoint[n - 1] == '/';) f.endpoint[--n] = '\0';
    size_t k = !strncmp(f.endpoint, "http://", 7) ? 7 : !strncmp(f.endpoint, "https://", 8) ? 8 : 0;
    if (!k || !f.endpoint[k] || strchr("/?#", f.endpoint[k]))  // checked before any request
        return xsa_fail(err, XSA_EBADINPUT, "--hf-endpoint (or HF_ENDPOINT) %s: not an http:// or https:// URL with a "
                        "host", ep);
    if ((rc = http_options_default(&f.opt, err))) return rc;
    f.opt.ca_bundle = o->ca_bundle;
    int net = 0;
    // With a cached copy to fall back on, one try: an unreachable Hub costs no retry delays.
    rc = api_revision(&f, have_cache ? 0 : -1, &net, err);
    if (rc && net && have_cache) {
        if (!o->quiet)
            fprintf(stderr, "xsa-eval: %s@%s: the Hub cannot be reached (%s); using the cached commit %s\n", out->repo,
                    out->revision, err->msg, cached.commit);
        xsa_error_clear(err);
        *out = cached;
        rc = 0;
    } else if (rc && net) {
        err_extend(err, "; the Hub cannot be reached and the cache has no copy (%s); check the network or HF_ENDPOINT", ce.msg);
    } else if (!rc && (rc = fetch_snapshot(&f, err)) == XSA_ERUNTIME && have_cache && strcmp(cached.commit, out->commit)) {
        // The revision moved on and its files could not be had: the older commit still can be.
        err_extend(err, "; --offline uses the cached commit %s of %s@%s", cached.commit, out->repo, out->revision);
    }
    cJSON_Delete(f.info);
    return rc;
}
