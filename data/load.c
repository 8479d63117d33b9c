// load.c: the data layer's entry points. A task's rows come from --data-dir (local, no
// cache), or from the cache, which is filled on demand from the first source that works
// (viewer, hub, original) under a per-task lock, checked against the registry's pins and
// committed atomically.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/version.h"
#include "common/xalloc.h"
#include "data/cache.h"
#include "data/data.h"
#include "data/parquet.h"
#include "data/sources.h"

#include "tasks/adapters.h"
#include "tasks/rows.h"

#define HINT_NETWORK "check the network, use --offline with a filled cache, or set --datasets-server / --hf-endpoint to a mirror"

void data_rows_free(cJSON **rows, int n) {
    if (!rows) return;
    for (int i = 0; i < n; i++) cJSON_Delete(rows[i]);
    free(rows);
}

char **data_row_names(const char *source, int n) {
    char **names = xsa_calloc((size_t)n + 1, sizeof *names);
    for (int i = 0; i < n; i++) {
        char buf[600];
        snprintf(buf, sizeof buf, "%s:%d", source, i + 1);
        names[i] = xsa_strdup(buf);
    }
    return names;
}

void data_row_names_free(char **names, int n) {
    for (int i = 0; names && i < n; i++) free(names[i]);
    free(names);
}

void data_warn_preprocessed(const struct task_def *t, const struct data_provenance *prov) {
    if (!prov->preprocessed) return;
    fprintf(stderr, "xsa-eval: warning: %s: the rows are a third party's preprocessed text (%s), whose contexts are not "
            "lm-eval's (it leaves ctx_b lower-case, which lm-eval capitalises): scores differ from lm-eval's; "
            "for parity use the dataset's own rows (the viewer or Hub source, or hellaswag_val.jsonl)\n",
            t->name, prov->source);
}

int data_pinned(const struct task_def *t, const char *sha256) {
    if (!t->canonical_sha256) return -1;
    return strcmp(sha256, t->canonical_sha256) == 0;
}

// Row count and canonical digest against the registry. `code` is what a mismatch returns. The
// row count is a hard pin (--allow-data-change accepts another); the digest, computed from the
// original files and never checked against the live services, warns unless --strict-data.
static int check_registry_pins(const struct task_def *t, const struct data_options *opt, long rows, const char *sha,
                               const char *where, int code, xsa_error *err) {
    // Nothing can be scored on no rows (the bootstrap fails much later): never accepted.
    if (rows <= 0)
        return xsa_fail(err, code, "%s: no rows (%s); an empty split cannot be evaluated: the source is empty or "
                        "damaged", t->name, where);
    if (t->n_docs > 0 && rows != t->n_docs) {
        if (!opt->allow_data_change)
            return xsa_fail(err, code, "%s: data mismatch: %ld rows, expected %d (%s); the data changed upstream or is "
                            "damaged; pass --allow-data-change to accept it", t->name, rows, t->n_docs, where);
        // (a warning about the data: --quiet keeps it, as the README says; for HellaSwag, whose
        // digest is not pinned, it is the only word that half a split is missing)
        fprintf(stderr, "xsa-eval: warning: %s: %ld rows, expected %d (%s); accepted (--allow-data-change)\n",
                t->name, rows, t->n_docs, where);
    }
    if (data_pinned(t, sha) != 0) return 0;
    if (opt->strict_data)
        return xsa_fail(err, code, "%s: canonical SHA-256 %s, pinned %s (%s): not the pinned rows (--strict-data); "
                        "run without --strict-data to use them, recorded as not pinned", t->name, sha,
                        t->canonical_sha256, where);
    fprintf(stderr, "xsa-eval: warning: %s: canonical SHA-256 %s differs from the pinned %s (%s); the rows are "
            "used and recorded as not pinned (--strict-data refuses them)\n", t->name, sha, t->canonical_sha256, where);
    return 0;
}

// The task's Hub Parquet file in a Hugging Face hub cache at `dir`:
// datasets--ORG--NAME/snapshots/<refs/main>/PATH. 1 with `out` set when it exists.
static int hub_cache_file(const char *dir, const struct task_def *t, char *out, size_t n) {
    const char *dataset, *file;
    if (!source_hub_parquet_file(t, &dataset, &file)) return 0;
    char repo[256], ref[4400], rev[80] = "";
    const char *slash = strchr(dataset, '/');
    if (!slash) return 0;
    snprintf(repo, sizeof repo, "datasets--%.*s--%s", (int)(slash - dataset), dataset, slash + 1);
    snprintf(ref, sizeof ref, "%s/%s/refs/main", dir, repo);
    FILE *f = fopen(ref, "r");
    if (!f) return 0;
    int ok = fgets(rev, sizeof rev, f) != NULL;
    fclose(f);
    rev[strcspn(rev, "\r\n")] = '\0';
    // A commit id: hex only, so the path cannot leave the snapshots folder.
    if (!ok || !rev[0] || strspn(rev, "0123456789abcdef") != strlen(rev)) return 0;
    int w = snprintf(out, n, "%s/%s/snapshots/%s/%s", dir, repo, rev, file);
    return w > 0 && (size_t)w < n && file_exists(out);
}

// A name in --data-dir that is there but is no file to read (a folder, a FIFO, a device, a link to
// nothing): refused by name, rather than passed over for the next layout.
static int not_a_file(const char *path, xsa_error *err) {
    struct stat st;
    if (lstat(path, &st) != 0 || file_exists(path)) return 0;
    const char *what = stat(path, &st) != 0 ? (errno == ELOOP ? "a symbolic link in a loop" : "a link to nothing")
                       : S_ISDIR(st.st_mode) ? "a folder"
                                             : "a FIFO, socket or device";
    return xsa_fail(err, XSA_EBADINPUT, "%s: not a regular file (%s); --data-dir reads it as a file of rows "
                    "(docs/data-dir.md)", path, what);
}

// --data-dir itself: a folder there is to read, or an error that says what it is instead.
static int data_dir_usable(const char *dir, xsa_error *err) {
    struct stat st;
    if (stat(dir, &st) != 0)
        return xsa_fail(err, XSA_EBADINPUT, "--data-dir %s: %s", dir,
                        errno == ELOOP ? "a symbolic link in a loop" : strerror(errno));
    if (!S_ISDIR(st.st_mode)) return xsa_fail(err, XSA_EBADINPUT, "--data-dir %s: not a folder", dir);
    return 0;
}

// --data-dir: canonical <dir>/<task>/<split>.jsonl, else <task>/<split>.parquet or a Hugging Face
// hub cache's Parquet file, else the original files in <dir>/<taskdir>/.
// `split` is the evaluated one or another (few-shot); only the evaluated split has original files.
static int load_local(const struct task_def *t, const char *split, const struct data_options *opt,
                      struct source_result *r, char source[512], xsa_error *err) {
    if (data_dir_usable(opt->data_dir, err)) return XSA_EBADINPUT;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s.jsonl", opt->data_dir, t->name, split);
    if (not_a_file(path, err)) return XSA_EBADINPUT;
    if (file_exists(path)) {
        char *buf = NULL;
        size_t len = 0;
        int rc = file_read_all(path, CACHE_MAX_FILE, &buf, &len, err);
        if (!rc) rc = cache_rows_parse_jsonl(buf, len, path, XSA_EBADINPUT, &r->rows, &r->n, err);
        free(buf);
        r->cap = (size_t)r->n;
        if (rc) return rc;
        // OpenBookQA's original file is also openbookqa/test.jsonl: a "question" object
        // ({stem, choices}) marks the original layout, which the canonical schema never has.
        if (r->n > 0 && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r->rows[0], "question"))) {
            source_result_free(r);
        } else {
            for (int i = 0; i < r->n; i++) {
                source_canonical_row(t, r->rows[i]);  // e.g. keys sorted by the file's writer
                if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r->rows[i], "preprocessed"))) r->preprocessed = 1;
            }
            snprintf(source, 512, "local:%.500s", path);
            return 0;
        }
    }
    // Parquet: <task>/<split>.parquet, or the file in a Hugging Face hub cache (DIR = ~/.cache/huggingface/hub).
    snprintf(path, sizeof path, "%s/%s/%s.parquet", opt->data_dir, t->name, split);
    if (not_a_file(path, err)) return XSA_EBADINPUT;
    int evaluated = !strcmp(split, t->split);
    if (file_exists(path) || (evaluated && hub_cache_file(opt->data_dir, t, path, sizeof path))) {
        long n = 0;
        r->task = t;  // Hugging Face rows: in canonical form whatever copy the file is
        int rc = parquet_read_file(path, source_result_emit_hf, r, &n, err);
        if (rc) {
            source_result_free(r);
            return rc;
        }
        snprintf(source, 512, "local:%.500s", path);
        return 0;
    }
    if (!evaluated)
        return xsa_fail(err, XSA_EBADINPUT, "%s: --data-dir has neither %s/%s.jsonl nor %s/%s.parquet (the %s split, "
                        "canonical rows)", opt->data_dir, t->name, split, t->name, split, split);
    const char *dn = task_original_dirname(t);
    snprintf(path, sizeof path, "%s/%s", opt->data_dir, dn ? dn : t->name);
    // <cache>/raw keeps the originals under the task's own name (raw/social_iqa, not siqa/).
    if (!dir_exists(path) && dn && strcmp(dn, t->name)) {
        char own[4096];
        snprintf(own, sizeof own, "%s/%s", opt->data_dir, t->name);
        if (dir_exists(own)) snprintf(path, sizeof path, "%s", own);
    }
    if (!dir_exists(path))
        return xsa_fail(err, XSA_EBADINPUT, "%s: --data-dir has neither %s/%s.jsonl, %s/%s.parquet, a Hugging Face "
                        "hub cache copy nor the original files in %s/", opt->data_dir, t->name, t->split, t->name,
                        t->split, path);
    snprintf(source, 512, "local:%.500s", path);
    return source_adapt_dir(t, path, r, err);
}

struct resolved {
    char root[4096];
    char viewer[1024], hub[1024];
    struct http_options http;     // defaults and XSA_HTTP_* (checked before anything is touched)
};

// 1 when u is an http:// or https:// URL with a host ("http://" alone has none).
static int http_url(const char *u) {
    size_t k = !strncmp(u, "http://", 7) ? 7 : !strncmp(u, "https://", 8) ? 8 : 0;
    return k && u[k] && u[k] != '/' && u[k] != '?' && u[k] != '#';
}

static int resolve(const struct data_options *opt, struct resolved *rs, xsa_error *err) {
    int rc = cache_root_dir(opt->cache_dir, rs->root, sizeof rs->root, err);
    if (!rc) rc = http_options_default(&rs->http, err);
    if (rc) return rc;
    rs->http.ca_bundle = opt->ca_bundle;
    const char *v = opt->datasets_server && *opt->datasets_server ? opt->datasets_server : DATA_DEFAULT_DATASETS_SERVER;
    const char *env = getenv("HF_ENDPOINT");
    const char *h = opt->hf_endpoint && *opt->hf_endpoint ? opt->hf_endpoint
                    : env && *env                          ? env
                                                           : DATA_DEFAULT_HF_ENDPOINT;
    if (!http_url(v))
        return xsa_fail(err, XSA_EBADINPUT, "--datasets-server %s: not an http:// or https:// URL with a host", v);
    if (!http_url(h))
        return xsa_fail(err, XSA_EBADINPUT, "--hf-endpoint (or HF_ENDPOINT) %s: not an http:// or https:// URL with a host", h);
    if (opt->originals_mirror && !http_url(opt->originals_mirror))
        return xsa_fail(err, XSA_EBADINPUT, "--originals-mirror %s: not an http:// or https:// URL with a host",
                        opt->originals_mirror);
    if (strlen(v) >= sizeof rs->viewer - 1 || strlen(h) >= sizeof rs->hub - 1)
        return xsa_fail(err, XSA_EBADINPUT, "--datasets-server / --hf-endpoint URL is too long");
    snprintf(rs->viewer, sizeof rs->viewer, "%s", v);
    snprintf(rs->hub, sizeof rs->hub, "%s", h);
    for (char *s = rs->viewer + strlen(rs->viewer); s > rs->viewer && s[-1] == '/';) *--s = '\0';
    for (char *s = rs->hub + strlen(rs->hub); s > rs->hub && s[-1] == '/';) *--s = '\0';
    return 0;
}

// Checks a --source list: names from viewer, hub, original.
static int check_sources(const char *list, xsa_error *err) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    int n = 0;
    // strsep keeps the empty names ("viewer,,hub") that strtok would pass over, to refuse them
    for (char *rest = buf, *tok; (tok = strsep(&rest, ",")); n++)
        if (strcmp(tok, "viewer") && strcmp(tok, "hub") && strcmp(tok, "original"))
            return xsa_fail(err, XSA_EBADINPUT, "--source %s: %s source '%s' (valid: viewer, hub, original)", list,
                            *tok ? "unknown" : "an empty", tok);
    if (!n) return xsa_fail(err, XSA_EBADINPUT, "--source: empty list (valid: viewer, hub, original)");
    return 0;
}

// Fetches from the sources in order, checks, commits. Called with the task's lock held. Rows
// the viewer streamed to the cache's temp file are not in `out` (out->rows NULL).
// A source's message without the task's name in front (the caller's message names it once).
static const char *untasked(const struct task_def *t, const char *msg) {
    size_t n = strlen(t->name);
    return !strncmp(msg, t->name, n) && !strncmp(msg + n, ": ", 2) ? msg + n + 2 : msg;
}

static int fetch_and_commit(const struct task_def *t, const struct data_options *opt, const struct resolved *rs,
                            struct source_result *out, struct cache_entry *e, xsa_error *err) {
    // A few-shot (train) split is one Parquet file on the Hub but hundreds of viewer pages (HellaSwag's:
    // 400, against the paced request budget): the Hub first.
    const char *list = opt->sources && *opt->sources ? opt->sources
                       : source_is_evaluated_split(t)  ? DATA_DEFAULT_SOURCES
                                                       : "hub,viewer";
    char raw_dir[4200];
    snprintf(raw_dir, sizeof raw_dir, "%s/raw/%s", rs->root, t->name);
    struct progress pr;
    progress_begin(&pr, t->name, t->n_docs, opt->quiet);
    struct http_client *http = NULL;
    int rc = http_client_new(&http, &rs->http, &pr, err);
    if (rc) return rc;
    struct source_ctx sc = {.t = t, .opt = opt, .http = http, .cache_root = rs->root, .raw_dir = raw_dir,
                            .datasets_server = rs->viewer, .hf_endpoint = rs->hub, .parallel = rs->http.max_parallel};
    xsa_error first = {0}, last = {0};  // the first failure is reported; the last is noted on moving on
    int tried = 0, done = 0, local = 0;  // local: the cache could not be written (no other source helps)
    int first_bad = 0;                   // the first failure is the data's, not the network's
    char buf[256], used[16] = "", last_tok[16] = "";
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && !done; tok = strtok_r(NULL, ",", &save)) {
        struct source_result r = {0};
        xsa_error e1 = {0};
        int src_rc = !strcmp(tok, "viewer") ? source_viewer_fetch(&sc, &r, &e1)
                     : !strcmp(tok, "hub")  ? source_hub_fetch(&sc, &r, &e1)
                                            : source_original_fetch(&sc, &r, &e1);
        if (!src_rc && r.unavailable) continue;
        if (last.code && !opt->quiet) {  // say why we moved on, now that there is somewhere to go
            progress_end(&pr);
            fprintf(stderr, "xsa-eval: %s: %s; trying the %s source\n", t->name, untasked(t, last.msg), tok);
        }
        xsa_error_clear(&last);
        tried++;
        local = src_rc && r.store_failed;
        int bad = src_rc && r.bad_data;
        char *text = NULL;
        size_t len = 0;
        char sha[65] = "";
        if (r.streamed) {  // rows checked by the viewer and already in the cache's temp file
            if (!src_rc) str_copy(sha, sizeof sha, r.sha256);
        } else {
            if (!src_rc) src_rc = task_rows_serialize_array(r.rows, r.n, &text, &len, &e1);
            if (!src_rc) src_rc = sha256_hex(text, len, sha, &e1);
            // What `run` would refuse never reaches the cache: every row through the task's parser.
            if (!src_rc) bad = (src_rc = source_validate_rows(t, r.rows, r.n, 0, tok, r.url, &e1)) != 0;
        }
        if (!src_rc) bad = (src_rc = check_registry_pins(t, opt, r.n, sha, r.url, XSA_ERUNTIME, &e1)) != 0;
        if (!src_rc) {
            memset(e, 0, sizeof *e);
            snprintf(e->task, sizeof e->task, "%s", t->name);
            snprintf(e->split, sizeof e->split, "%s", t->split);
            // Where the rows really came from (SocialIQA: lighteval/siqa when allenai/social_i_qa has none).
            snprintf(e->dataset, sizeof e->dataset, "%s", r.dataset[0] ? r.dataset : t->hf_dataset);
            snprintf(e->config, sizeof e->config, "%s", r.dataset[0] ? r.config : t->hf_config ? t->hf_config : "default");
            snprintf(e->source, sizeof e->source, "%s", tok);
            str_copy(e->url, sizeof e->url, r.url);
            str_copy(e->revision, sizeof e->revision, r.revision);
            e->rows = r.n;
            str_copy(e->raw_sha256, sizeof e->raw_sha256, r.raw_sha256);
            str_copy(e->sha256, sizeof e->sha256, sha);
            cache_time_now(e->time);
            e->preprocessed = r.preprocessed;
            src_rc = r.streamed ? cache_commit_writer(rs->root, t, &r.jsonl, e, &e1)
                                : cache_commit(rs->root, t, text, len, e, &e1);
            local = src_rc != 0;
        }
        free(text);
        if (src_rc) {
            source_result_free(&r);
            last = e1;
            snprintf(last_tok, sizeof last_tok, "%s", tok);
            if (!first.code || local) {
                first = e1;
                first_bad = bad;
            }
            if (local) break;
            continue;
        }
        snprintf(used, sizeof used, "%s", tok);
        cache_writer_discard(&r.jsonl);  // committed: nothing left to remove
        *out = r;
        done = 1;
    }
    progress_end(&pr);
    http_client_free(http);
    if (done) return 0;
    if (!tried)
        return xsa_fail(err, XSA_EBADINPUT, "%s: none of the sources '%s' has this task (valid: viewer, hub, original)",
                        t->name, list);
    // Input errors (a bad --ca-bundle) stay 2; everything else from the network is 3.
    int code = first.code == XSA_EBADINPUT ? XSA_EBADINPUT : XSA_ERUNTIME;
    // The network worked when the data did not match or could not be stored: no network hint then.
    int integrity = local || first_bad;
    // The first failure and the last (the others were noted on moving on, unless --quiet).
    char also[sizeof last.msg + 64] = "";
    if (tried > 1 && !local && last.code)
        snprintf(also, sizeof also, " (and the %s source, tried last: %s)", last_tok, untasked(t, last.msg));
    return xsa_fail(err, code, "%s: %s failed: %s%s%s%s", t->name, local ? "storing the download" : "download",
                    untasked(t, first.msg), also, integrity ? "" : "; ", integrity ? "" : HINT_NETWORK);
}

// The command that fills the cache for `tasks` (comma list), with the same --cache-dir.
static void download_command(const char *tasks, const struct data_options *opt, char *out, size_t n) {
    int w = snprintf(out, n, "xsa-eval download --tasks %s", tasks);
    if (w < 0 || (size_t)w >= n || !opt->cache_dir) return;
    // Quote the folder for the shell unless it is plain.
    int plain = strspn(opt->cache_dir, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") ==
                strlen(opt->cache_dir) && !strchr(opt->cache_dir, '\'');
    snprintf(out + w, n - (size_t)w, plain ? " --cache-dir %s" : " --cache-dir '%s'", opt->cache_dir);
}

int data_check_offline(const struct task_def *const *list, int n, const struct data_options *opt, xsa_error *err) {
    if (!opt->offline || opt->data_dir) return 0;
    char root[4096], names[1024] = "", first_why[600] = "";
    int rc = cache_root_dir(opt->cache_dir, root, sizeof root, err);
    if (rc) return rc;
    int missing = 0;
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        struct cache_entry e;
        int valid = 0;
        char why[600] = "";
        if ((rc = cache_verify(root, list[i], &e, &valid, why, sizeof why, NULL, NULL, err))) return rc;
        if (valid) continue;
        if (!missing++) snprintf(first_why, sizeof first_why, "%s", why);
        int w = snprintf(names + used, sizeof names - used, "%s%s", used ? "," : "", list[i]->name);
        if (w > 0 && (size_t)w < sizeof names - used) used += (size_t)w;
    }
    if (!missing) return 0;
    char cmd[1400];
    download_command(names, opt, cmd, sizeof cmd);
    return xsa_fail(err, XSA_ERUNTIME, "not available offline: %d of %d tasks have no valid copy in %s; run `%s` "
                    "where the network is reachable, then run again (or give run the files with --data-dir); first problem: %s",
                    missing, n, root, cmd, first_why);
}

// The cached copy, downloading it first when missing (or when opt->force).
static int ensure_cached(const struct task_def *t, const struct data_options *opt, struct source_result *rows_out,
                         struct cache_entry *e, int *was_cached, xsa_error *err) {
    struct resolved rs;
    int rc = resolve(opt, &rs, err);
    if (!rc && opt->sources) rc = check_sources(opt->sources, err);
    if (rc) return rc;
    *was_cached = 0;
    int valid = 0;
    char why[600] = "";
    char *buf = NULL;
    size_t len = 0;
    if (!opt->force && (rc = cache_verify(rs.root, t, e, &valid, why, sizeof why, rows_out ? &buf : NULL, &len, err)))
        return rc;
    if (valid) cache_sweep_task(rs.root, t);  // an interrupted --force left its temp beside a valid copy
    if (!valid && opt->offline) {
        char cmd[1024];
        download_command(t->name, opt, cmd, sizeof cmd);
        int fewshot = !source_is_evaluated_split(t);
        return xsa_fail(err, XSA_ERUNTIME, "%s: %s%snot available offline: %s; run `%s%s` where the network is "
                        "reachable, or give run the files with --data-dir", t->name, fewshot ? t->split : "", fewshot ? " split " : "",
                        why[0] ? why : "forced download", cmd, fewshot ? " --fewshot" : "");
    }
    int lock = -1, fresh = 0;  // fresh: stored by this call
    if (!valid) {
        if ((rc = cache_lock(rs.root, t, opt->quiet, &lock, err))) return rc;
        // Another process may have filled it while we waited.
        if (!opt->force) rc = cache_verify(rs.root, t, e, &valid, why, sizeof why, rows_out ? &buf : NULL, &len, err);
        if (!rc && !valid) {
            struct source_result r = {0};
            rc = fetch_and_commit(t, opt, &rs, &r, e, err);
            fresh = 1;
            if (!rc && rows_out && r.rows) *rows_out = r;
            else source_result_free(&r);
            // Rows the viewer streamed to the cache are read back from the copy just stored.
            if (!rc && rows_out && !rows_out->rows &&
                !(rc = cache_verify(rs.root, t, e, &valid, why, sizeof why, &buf, &len, err)) && !valid)
                rc = xsa_fail(err, XSA_ERUNTIME, "%s: the copy just stored does not read back: %s", t->name, why);
        }
        cache_unlock(lock);
        if (rc || (fresh && (!rows_out || rows_out->rows))) {
            free(buf);
            return rc;
        }
    }
    *was_cached = !fresh;
    char where[4200];
    snprintf(where, sizeof where, "cache %s/%s/%s.jsonl", rs.root, t->name, t->split);
    if (!fresh) rc = check_registry_pins(t, opt, e->rows, e->sha256, where, XSA_ERUNTIME, err);
    if (!rc && rows_out) {
        rc = cache_rows_parse_jsonl(buf, len, where, XSA_ERUNTIME, &rows_out->rows, &rows_out->n, err);
        rows_out->preprocessed = e->preprocessed;
    }
    free(buf);
    return rc;
}

int data_load_task(const struct task_def *t, const struct data_options *opt, cJSON ***rows, int *n_rows,
                   struct data_provenance *prov, xsa_error *err) {
    *rows = NULL;
    *n_rows = 0;
    struct data_provenance p = {0};
    struct source_result r = {0};
    int rc;
    if (opt->data_dir) {
        rc = load_local(t, t->split, opt, &r, p.source, err);
        char *text = NULL;
        size_t len = 0;
        if (!rc) rc = task_rows_serialize_array(r.rows, r.n, &text, &len, err);
        if (!rc) rc = sha256_hex(text, len, p.sha256, err);
        free(text);
        if (!rc) rc = check_registry_pins(t, opt, r.n, p.sha256, p.source, XSA_EBADINPUT, err);
    } else {
        struct cache_entry e;
        int was_cached = 0;
        rc = ensure_cached(t, opt, &r, &e, &was_cached, err);
        if (!rc) {
            snprintf(p.sha256, sizeof p.sha256, "%s", e.sha256);
            snprintf(p.source, sizeof p.source, "%s:%.490s", e.source, e.url);
            snprintf(p.dataset, sizeof p.dataset, "%s", e.dataset);
            snprintf(p.revision, sizeof p.revision, "%s", e.revision);
        }
    }
    if (rc) {
        source_result_free(&r);
        return rc;
    }
    p.preprocessed = r.preprocessed;
    p.pinned = data_pinned(t, p.sha256);
    if (prov) *prov = p;
    *rows = r.rows;
    *n_rows = r.n;
    return 0;
}

// `t` as another of its splits: cached and fetched like the evaluated one, with no pins (the
// registry pins the evaluated split) and only the sources that have it (viewer, Hub conversion).
static struct task_def split_task(const struct task_def *t, const char *split) {
    struct task_def s = *t;
    if (strcmp(split, t->split)) {
        s.split = split;
        s.n_docs = 0;
        s.canonical_sha256 = NULL;
    }
    return s;
}

int data_load_split(const struct task_def *t, const char *split, const struct data_options *opt, cJSON ***rows,
                    int *n_rows, char source[512], xsa_error *err) {
    *rows = NULL;
    *n_rows = 0;
    struct source_result r = {0};
    int rc;
    if (opt->data_dir) {
        rc = load_local(t, split, opt, &r, source, err);
    } else {
        struct task_def st = split_task(t, split);
        struct cache_entry e;
        int was_cached = 0;
        rc = ensure_cached(&st, opt, &r, &e, &was_cached, err);
        if (!rc) snprintf(source, 512, "%s:%.490s", e.source, e.url);
        else source_result_free(&r);
    }
    if (rc) return rc;
    *rows = r.rows;
    *n_rows = r.n;
    return 0;
}

int data_download_task(const struct task_def *t, const char *split, const struct data_options *opt, int *was_cached,
                       long *rows_out, char sha256[65], char source[512], xsa_error *err) {
    struct cache_entry e;
    struct task_def st = split_task(t, split ? split : t->split);
    int rc = ensure_cached(&st, opt, NULL, &e, was_cached, err);
    if (rc) return rc;
    *rows_out = e.rows;
    snprintf(sha256, 65, "%s", e.sha256);
    snprintf(source, 512, "%s:%.490s", e.source, e.url);
    return 0;
}

int data_cache_status(const struct task_def *t, const char *cache_dir, int *cached, struct cache_entry *e, char *why,
                      size_t whyn, xsa_error *err) {
    char root[4096];
    int rc = cache_root_dir(cache_dir, root, sizeof root, err);
    if (rc) return rc;
    return cache_verify(root, t, e, cached, why, whyn, NULL, NULL, err);
}

void data_task_sources(const struct task_def *t, struct data_sources_desc *d) {
    const char *cf = t->hf_config ? t->hf_config : "default";
    if (t->hf_alt_dataset)
        snprintf(d->viewer, sizeof d->viewer, "%s/%s, else %s/%s", t->hf_dataset, cf, t->hf_alt_dataset,
                 t->hf_alt_config ? t->hf_alt_config : "default");
    else snprintf(d->viewer, sizeof d->viewer, "%s/%s", t->hf_dataset, cf);
    source_hub_describe(t, d->hub, sizeof d->hub);
    source_original_describe(t, d->original, sizeof d->original);
}
