// cache.c: cache layout, manifests, locking, atomic commits and the canonical JSONL form.
#include "data/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/version.h"
#include "common/xalloc.h"
#include "tasks/rows.h"

#define HINT_WRITABLE "the cache folder must be writable: pass --cache-dir DIR (or --offline to use what is cached)"

int cache_root_dir(const char *opt_dir, char *out, size_t n, xsa_error *err) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int w;
    if (opt_dir && *opt_dir) w = snprintf(out, n, "%s", opt_dir);
    else if (xdg && *xdg == '/') w = snprintf(out, n, "%s/xsa-eval", xdg);  // the XDG spec ignores relative paths
    else if (home && *home) w = snprintf(out, n, "%s/.cache/xsa-eval", home);
    else return xsa_fail(err, XSA_EBADINPUT, "no cache folder: HOME and XDG_CACHE_HOME are unset; pass --cache-dir DIR");
    if (w < 0 || (size_t)w >= n) return xsa_fail(err, XSA_EBADINPUT, "cache folder path is too long");
    struct stat st;
    if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode))
        return xsa_fail(err, XSA_EBADINPUT, "%s: the dataset cache is not a folder; pass --cache-dir DIR with a folder "
                        "(or a new name)", out);
    return 0;
}

// root/<task>/<split><suffix> (suffix ".jsonl", ".manifest.json"), or root/<task>/<suffix> when split is NULL.
static int cache_task_path(const char *root, const struct task_def *t, const char *split, const char *suffix, char *out,
                           size_t n, xsa_error *err) {
    int w = split ? snprintf(out, n, "%s/%s/%s%s", root, t->name, split, suffix)
                  : snprintf(out, n, "%s/%s/%s", root, t->name, suffix);
    if (w < 0 || (size_t)w >= n) return xsa_fail(err, XSA_EBADINPUT, "%s: cache path is too long", root);
    return 0;
}

int cache_mkdirs(const char *path, xsa_error *err) { return file_mkdirs(path, HINT_WRITABLE, err); }

void cache_time_now(char out[32]) {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void copy_str(const cJSON *o, const char *key, char *out, size_t n) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    snprintf(out, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static int cache_manifest_read(const char *path, struct cache_entry *e, xsa_error *err) {
    memset(e, 0, sizeof *e);
    char *buf = NULL;
    int rc = file_read_all(path, 1 << 20, &buf, NULL, err);
    if (rc) return rc;
    cJSON *o = cJSON_Parse(buf);
    free(buf);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return xsa_fail(err, XSA_EBADINPUT, "%s: not a JSON object; delete it and download again", path);
    }
    copy_str(o, "task", e->task, sizeof e->task);
    copy_str(o, "split", e->split, sizeof e->split);
    copy_str(o, "dataset", e->dataset, sizeof e->dataset);
    copy_str(o, "config", e->config, sizeof e->config);
    copy_str(o, "source", e->source, sizeof e->source);
    copy_str(o, "url", e->url, sizeof e->url);
    copy_str(o, "revision", e->revision, sizeof e->revision);
    copy_str(o, "raw_sha256", e->raw_sha256, sizeof e->raw_sha256);
    copy_str(o, "sha256", e->sha256, sizeof e->sha256);
    copy_str(o, "time", e->time, sizeof e->time);
    copy_str(o, "xsa_eval_version", e->version, sizeof e->version);
    e->preprocessed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "preprocessed"));
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(o, "rows");
    e->rows = cJSON_IsNumber(rows) && rows->valuedouble >= 0 && rows->valuedouble < 1e9 ? (long)rows->valuedouble : -1;
    cJSON_Delete(o);
    if (!sha256_hex_valid(e->sha256) || e->rows < 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: manifest lacks a valid sha256 or rows; delete it and download again", path);
    return 0;
}

int cache_verify(const char *root, const struct task_def *t, struct cache_entry *e, int *valid, char *why,
                 size_t whyn, char **buf, size_t *len, xsa_error *err) {
    *valid = 0;
    if (buf) *buf = NULL;
    char mpath[4096], dpath[4096];
    int rc = cache_task_path(root, t, t->split, ".manifest.json", mpath, sizeof mpath, err);
    if (!rc) rc = cache_task_path(root, t, t->split, ".jsonl", dpath, sizeof dpath, err);
    if (rc) return rc;
    if (!file_exists(mpath)) {
        snprintf(why, whyn, "not cached (no %s)", mpath);
        return 0;
    }
    xsa_error e2 = {0};
    if (cache_manifest_read(mpath, e, &e2)) {
        snprintf(why, whyn, "%s", e2.msg);
        return 0;
    }
    // Another task's or split's copy moved here (by hand) is not this one, whatever its rows.
    if (strcmp(e->task, t->name) || strcmp(e->split, t->split)) {
        snprintf(why, whyn, "%s: the manifest is %s's %s split, not %s's %s", mpath, e->task, e->split, t->name, t->split);
        return 0;
    }
    char *data = NULL;
    size_t n = 0;
    if (!file_exists(dpath) || file_read_all(dpath, CACHE_MAX_FILE, &data, &n, &e2)) {
        snprintf(why, whyn, "%s: missing or unreadable though the manifest lists it", dpath);
        return 0;
    }
    char sha[65];
    if ((rc = sha256_hex(data, n, sha, err))) { free(data); return rc; }
    long lines = 0;
    for (size_t i = 0; i < n; i++) lines += data[i] == '\n';
    if (strcmp(sha, e->sha256) != 0) {
        snprintf(why, whyn, "%s: SHA-256 %.12s... differs from the manifest's %.12s... (changed or damaged)", dpath, sha,
                 e->sha256);
    } else if (lines != e->rows || (n > 0 && data[n - 1] != '\n')) {
        snprintf(why, whyn, "%s: %ld rows, the manifest says %ld", dpath, lines, e->rows);
    } else {
        *valid = 1;
        if (buf) { *buf = data; data = NULL; }
        if (len) *len = n;
    }
    free(data);
    return 0;
}

static cJSON *manifest_json(const struct cache_entry *e) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "task", e->task);
    cJSON_AddStringToObject(o, "split", e->split);
    cJSON_AddStringToObject(o, "dataset", e->dataset);
    cJSON_AddStringToObject(o, "config", e->config);
    cJSON_AddStringToObject(o, "source", e->source);
    cJSON_AddStringToObject(o, "url", e->url);
    cJSON_AddStringToObject(o, "revision", e->revision);
    cJSON_AddNumberToObject(o, "rows", (double)e->rows);
    cJSON_AddStringToObject(o, "raw_sha256", e->raw_sha256);
    cJSON_AddStringToObject(o, "sha256", e->sha256);
    cJSON_AddStringToObject(o, "time", e->time);
    cJSON_AddBoolToObject(o, "preprocessed", e->preprocessed);
    cJSON_AddStringToObject(o, "xsa_eval_version", XSA_EVAL_VERSION);
    return o;
}

// Creates `path`.tmp.<pid> (file_temp_path) as a new file: never through a symlink. The name
// goes to tmp (size n).
static int temp_create(const char *path, char *tmp, size_t n, int *fd, xsa_error *err) {
    if (file_temp_path(path, tmp, n) != 0) return xsa_fail(err, XSA_EBADINPUT, "%s: path is too long", path);
    unlink(tmp);  // a leftover of an earlier process with our pid
    *fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (*fd < 0) return xsa_fail(err, XSA_ERUNTIME, "%s: cannot create: %s; " HINT_WRITABLE, tmp, strerror(errno));
    return 0;
}

static int write_all(int fd, const char *data, size_t len, const char *path, xsa_error *err) {
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return xsa_fail(err, XSA_ERUNTIME, "%s: write failed: %s%s", path, strerror(errno), file_full_hint(errno));
        off += (size_t)w;
    }
    return 0;
}

// Writes `path`.tmp.<pid> in full and fsyncs it. On failure nothing is left behind.
static int write_temp(const char *path, const char *data, size_t len, char *tmp, size_t n, xsa_error *err) {
    int fd = -1;
    int rc = temp_create(path, tmp, n, &fd, err);
    if (rc) return rc;
    rc = write_all(fd, data, len, tmp, err);
    if (!rc && fsync(fd) != 0) rc = xsa_fail(err, XSA_ERUNTIME, "%s: fsync failed: %s", tmp, strerror(errno));
    if (close(fd) != 0 && !rc) rc = xsa_fail(err, XSA_ERUNTIME, "%s: close failed: %s", tmp, strerror(errno));
    if (rc) unlink(tmp);
    return rc;
}

int cache_writer_open(const char *root, const struct task_def *t, struct cache_writer *w, xsa_error *err) {
    memset(w, 0, sizeof *w);
    char dir[4096], dpath[4096];
    int rc = cache_task_path(root, t, NULL, "", dir, sizeof dir, err);
    if (!rc) rc = cache_task_path(root, t, t->split, ".jsonl", dpath, sizeof dpath, err);
    if (!rc) rc = cache_mkdirs(dir, err);
    if (!rc) w->md = xsa_alloc_check(EVP_MD_CTX_new());
    if (!rc && !EVP_DigestInit_ex(w->md, EVP_sha256(), NULL)) rc = xsa_fail(err, XSA_ERUNTIME, "SHA-256 init failed");
    if (!rc) rc = temp_create(dpath, w->path, sizeof w->path, &w->fd, err);
    if (rc) {
        EVP_MD_CTX_free(w->md);
        memset(w, 0, sizeof *w);
        return rc;
    }
    w->is_open = w->has_temp = 1;
    return 0;
}

int cache_writer_add(struct cache_writer *w, const char *data, size_t len, xsa_error *err) {
    if (!w->is_open) return xsa_fail(err, XSA_ERUNTIME, "internal: the cache writer is not open");
    // Past this the copy could never be read back (cache_verify's limit): refuse it now.
    if (len > CACHE_MAX_FILE - w->bytes)
        return xsa_fail(err, XSA_ERUNTIME, "%s: the rows pass the cache's %zu-byte limit for one split", w->path,
                        CACHE_MAX_FILE);
    int rc = write_all(w->fd, data, len, w->path, err);
    if (rc) return rc;
    if (!EVP_DigestUpdate(w->md, data, len)) return xsa_fail(err, XSA_ERUNTIME, "SHA-256 update failed");
    for (size_t i = 0; i < len; i++) w->rows += data[i] == '\n';
    w->bytes += len;
    return 0;
}

int cache_writer_finish(struct cache_writer *w, char sha256[65], xsa_error *err) {
    if (!w->is_open) return xsa_fail(err, XSA_ERUNTIME, "internal: the cache writer is not open");
    unsigned char dg[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    int rc = fsync(w->fd) != 0 ? xsa_fail(err, XSA_ERUNTIME, "%s: fsync failed: %s", w->path, strerror(errno)) : 0;
    if (close(w->fd) != 0 && !rc) rc = xsa_fail(err, XSA_ERUNTIME, "%s: close failed: %s", w->path, strerror(errno));
    w->is_open = 0;
    if (!rc && (!EVP_DigestFinal_ex(w->md, dg, &dl) || dl != 32)) rc = xsa_fail(err, XSA_ERUNTIME, "SHA-256 final failed");
    for (unsigned int i = 0; !rc && i < 32; i++) snprintf(sha256 + 2 * i, 3, "%02x", dg[i]);
    EVP_MD_CTX_free(w->md);
    w->md = NULL;
    return rc;
}

void cache_writer_discard(struct cache_writer *w) {
    if (w->is_open) close(w->fd);
    if (w->has_temp) unlink(w->path);
    EVP_MD_CTX_free(w->md);
    memset(w, 0, sizeof *w);
}

int cache_commit_writer(const char *root, const struct task_def *t, struct cache_writer *w,
                        const struct cache_entry *e, xsa_error *err) {
    char dir[4096], mpath[4096], dpath[4096], mtmp[4200];
    int rc = w->has_temp && !w->is_open ? 0 : xsa_fail(err, XSA_ERUNTIME, "internal: no finished JSONL to commit");
    if (!rc) rc = cache_task_path(root, t, NULL, "", dir, sizeof dir, err);
    if (!rc) rc = cache_task_path(root, t, t->split, ".manifest.json", mpath, sizeof mpath, err);
    if (!rc) rc = cache_task_path(root, t, t->split, ".jsonl", dpath, sizeof dpath, err);
    if (rc) return rc;
    cJSON *m = manifest_json(e);
    char *text = cJSON_Print(m);
    cJSON_Delete(m);
    size_t tl = strlen(text);
    char *withnl = xsa_realloc(text, tl + 2);
    withnl[tl] = '\n';
    withnl[tl + 1] = '\0';
    // Both files are written in full before the old copy is touched: a full disk (or any write
    // error) leaves the previous copy valid. Then the old manifest goes first, so between the
    // two renames the copy reads as "not cached", never as the new data with the old digest.
    rc = write_temp(mpath, withnl, tl + 1, mtmp, sizeof mtmp, err);
    free(withnl);
    if (rc) return rc;
    if (unlink(mpath) != 0 && errno != ENOENT) rc = xsa_fail(err, XSA_ERUNTIME, "%s: cannot replace: %s", mpath, strerror(errno));
    if (!rc && rename(w->path, dpath) != 0) rc = xsa_fail(err, XSA_ERUNTIME, "%s: rename failed: %s", dpath, strerror(errno));
    if (!rc) w->has_temp = 0;
    if (!rc && rename(mtmp, mpath) != 0) rc = xsa_fail(err, XSA_ERUNTIME, "%s: rename failed: %s", mpath, strerror(errno));
    if (rc) {
        unlink(mtmp);
        return rc;
    }
    // Make the renames durable too.
    file_sync_dir(dir, NULL);
    return 0;
}

int cache_commit(const char *root, const struct task_def *t, const char *jsonl, size_t len,
                 const struct cache_entry *e, xsa_error *err) {
    struct cache_writer w;
    char sha[65];
    int rc = cache_writer_open(root, t, &w, err);
    if (rc) return rc;
    rc = cache_writer_add(&w, jsonl, len, err);
    if (!rc) rc = cache_writer_finish(&w, sha, err);
    if (!rc) rc = cache_commit_writer(root, t, &w, e, err);
    cache_writer_discard(&w);
    return rc;
}

void cache_remove_stale_temps(const char *dir, const char *const *bases, int n) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    char path[4096];
    while ((de = readdir(d))) {
        int ours = 0;
        for (int i = 0; i < n && !ours; i++) ours = file_is_stale_temp(de->d_name, bases[i]);
        if (ours && snprintf(path, sizeof path, "%s/%s", dir, de->d_name) < (int)sizeof path) unlink(path);
    }
    closedir(d);
}

static void sweep_task(const char *root, const struct task_def *t) {
    // The two names cache_commit writes; raw/<task>/ is swept by the file sources, which know theirs.
    char dir[4096], data[64], manifest[64];
    xsa_error e = {0};
    if (cache_task_path(root, t, NULL, "", dir, sizeof dir, &e)) return;
    snprintf(data, sizeof data, "%s.jsonl", t->split);
    snprintf(manifest, sizeof manifest, "%s.manifest.json", t->split);
    const char *bases[] = {data, manifest};
    cache_remove_stale_temps(dir, bases, 2);
}

int cache_lock(const char *root, const struct task_def *t, int quiet, int *fd, xsa_error *err) {
    *fd = -1;
    char dir[4096], lpath[4096];
    int rc = cache_task_path(root, t, NULL, "", dir, sizeof dir, err);
    if (!rc) rc = cache_task_path(root, t, NULL, ".lock", lpath, sizeof lpath, err);
    if (!rc) rc = cache_mkdirs(dir, err);
    if (rc) return rc;
    int f = open(lpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (f < 0) return xsa_fail(err, XSA_ERUNTIME, "%s: cannot open lock file: %s; " HINT_WRITABLE, lpath, strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            close(f);
            return xsa_fail(err, XSA_ERUNTIME, "%s: cannot lock: %s", lpath, strerror(errno));
        }
        if (!quiet) fprintf(stderr, "xsa-eval: %s: another xsa-eval is downloading it; waiting (%s)\n", t->name, lpath);
        while (flock(f, LOCK_EX) != 0) {
            if (errno == EINTR) continue;
            close(f);
            return xsa_fail(err, XSA_ERUNTIME, "%s: cannot lock: %s", lpath, strerror(errno));
        }
    }
    sweep_task(root, t);
    *fd = f;
    return 0;
}

void cache_sweep_task(const char *root, const struct task_def *t) {
    // Only under the task's lock, taken without waiting: a writer on another host or in another
    // pid namespace (a shared cache) has a pid this process cannot see.
    char lpath[4096];
    xsa_error e = {0};
    if (cache_task_path(root, t, NULL, ".lock", lpath, sizeof lpath, &e)) return;
    int f = open(lpath, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (f < 0) return;
    if (flock(f, LOCK_EX | LOCK_NB) == 0) {
        sweep_task(root, t);
        flock(f, LOCK_UN);
    }
    close(f);
}


void cache_unlock(int fd) {
    if (fd < 0) return;
    flock(fd, LOCK_UN);
    close(fd);
}

int cache_rows_parse_jsonl(const char *buf, size_t len, const char *where, int code, cJSON ***rows, int *n, xsa_error *err) {
    // The one JSONL reader (tasks/rows.c); here its "file:line" names are not kept.
    struct task_rows tr;
    *rows = NULL;
    *n = 0;
    if (task_rows_parse_jsonl(where, buf, len, &tr, err)) {
        err->code = code;  // bad --data-dir input (2) or a damaged cache (3), as the caller says
        return code;
    }
    for (int i = 0; i < tr.n; i++) free(tr.where[i]);
    free(tr.where);
    *rows = tr.row;
    *n = tr.n;
    return 0;
}
