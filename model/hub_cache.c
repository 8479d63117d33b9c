// hub_cache.c: repo ids resolved in the Hugging Face hub cache (hub_cache.h).
#include "model/hub_cache.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "common/xalloc.h"
#include "model/safetensors.h"

// One part of a repo id as the Hub accepts it: [A-Za-z0-9._-], not starting or ending with
// '-' or '.', no "--" or ".." (the Hub's rule; it also keeps the cache folder name unambiguous).
static int good_part(const char *s, size_t n) {
    if (n < 1 || n > 96 || s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(isalnum(c) || c == '.' || c == '_' || c == '-')) return 0;
        if (i && (c == '-' || c == '.') && s[i - 1] == c) return 0;
    }
    return 1;
}

// A revision: a branch, tag or commit; no "..", no leading '/', printable.
static int good_revision(const char *s) {
    size_t n = strlen(s);
    if (n < 1 || n >= 128 || s[0] == '/' || strstr(s, "..")) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isgraph((unsigned char)s[i])) return 0;
    return 1;
}

int hub_good_filename(const char *name) {
    size_t n = strnlen(name, 512);
    if (n == 0 || n >= 512 || name[0] == '/') return 0;
    for (const char *p = name;;) {
        const char *e = strchr(p, '/');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == 0 || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.')) return 0;
        for (size_t i = 0; i < k; i++)
            if (!isprint((unsigned char)p[i]) || p[i] == '\\') return 0;
        if (!e) return 1;
        p = e + 1;
    }
}

int hub_is_repo_id(const char *arg) {
    struct stat st;
    if (!arg || !*arg || stat(arg, &st) == 0 || strchr("/.~", arg[0])) return 0;
    const char *at = strchr(arg, '@');
    return memchr(arg, '/', at ? (size_t)(at - arg) : strlen(arg)) != NULL;  // hub_parse_id judges the rest
}

// The cache root, as huggingface_hub.constants computes HF_HUB_CACHE.
static void cache_root(char *buf, size_t n) {
    const char *hub = getenv("HF_HUB_CACHE"), *legacy = getenv("HUGGINGFACE_HUB_CACHE"), *home = getenv("HF_HOME"),
               *xdg = getenv("XDG_CACHE_HOME");
    if (hub && *hub) snprintf(buf, n, "%s", hub);
    else if (legacy && *legacy) snprintf(buf, n, "%s", legacy);
    else if (home && *home) snprintf(buf, n, "%s/hub", home);
    else if (xdg && *xdg) snprintf(buf, n, "%s/huggingface/hub", xdg);
    else snprintf(buf, n, "%s/.cache/huggingface/hub", getenv("HOME") ? getenv("HOME") : ".");
}

int hub_is_commit(const char *s) {
    if (strlen(s) != 40) return 0;
    for (int i = 0; i < 40; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i])) return 0;
    return 1;
}

int hub_parse_id(const char *arg, struct hub_model *out, xsa_error *err) {
    memset(out, 0, sizeof *out);
    const char *at = strchr(arg, '@'), *slash = strchr(arg, '/');
    size_t repo_n = at ? (size_t)(at - arg) : strlen(arg);
    if (!slash || slash > arg + repo_n || memchr(slash + 1, '/', repo_n - (size_t)(slash + 1 - arg)) ||
        !good_part(arg, (size_t)(slash - arg)) || !good_part(slash + 1, repo_n - (size_t)(slash + 1 - arg)) ||
        (at && !good_revision(at + 1)) || repo_n >= sizeof out->repo)
        return xsa_fail(err, XSA_EBADINPUT, "%s: no such path, and not a Hugging Face repo id (org/name or "
                        "org/name@revision, letters, digits, '.', '_' and '-')", arg);
    memcpy(out->repo, arg, repo_n);
    snprintf(out->revision, sizeof out->revision, "%s", at ? at + 1 : "main");
    cache_root(out->cache, sizeof out->cache);
    if (snprintf(out->repo_dir, sizeof out->repo_dir, "%.3500s/models--%.*s--%s", out->cache, (int)(slash - arg), arg,
                 out->repo + (slash + 1 - arg)) >= (int)sizeof out->repo_dir)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the cache path is too long; set HF_HUB_CACHE to a shorter folder", arg);
    return 0;
}

const char *hub_pick_weights(hub_has_fn has, void *ctx) {
    static const char *names[] = {"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                                  "pytorch_model.bin.index.json"};
    for (int i = 0; i < 4; i++)
        if (has(ctx, names[i])) return names[i];
    return NULL;
}

const char *hub_pick_tokenizer(hub_has_fn has, void *ctx) {
    return has(ctx, "tokenizer.json") ? "tokenizer.json" : has(ctx, "tokenizer.model") ? "tokenizer.model"
           : has(ctx, "vocab.json") && has(ctx, "merges.txt") ? "vocab.json" : NULL;  // facebook/opt-*
}

int hub_is_index(const char *name) {
    size_t n = strlen(name);
    return n > 11 && !strcmp(name + n - 11, ".index.json");
}

void hub_names_free(char **names, int n) {
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

// Orders weight_map entries by shard name, then by position (the first of each name sorts first).
struct shard_ref {
    const char *name;
    int at;
};
static int cmp_shard_ref(const void *a, const void *b) {
    const struct shard_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

int hub_index_shards(const char *index_path, char ***names, int *n, xsa_error *err) {
    *names = NULL;
    *n = 0;
    char *text = NULL;
    size_t len = 0;
    int rc = file_read_regular(index_path, (size_t)64 << 20, &text, &len, err);
    if (rc) return rc;
    // Read as the loader reads it (model/safetensors.c), so a damaged index is refused before
    // its shards are downloaded, not after.
    cJSON *idx = json_read_whole(text, len, JSON_KEYS_UNIQUE, index_path, err);
    free(text);
    if (!idx) return XSA_EBADINPUT;
    cJSON *wm = cJSON_GetObjectItemCaseSensitive(idx, "weight_map"), *e;
    if (!cJSON_IsObject(wm)) rc = xsa_fail(err, XSA_EBADINPUT, "%s: not a weights index (no weight_map object)", index_path);
    int total = rc ? 0 : cJSON_GetArraySize(wm), k = 0;
    struct shard_ref *ref = xsa_calloc(total > 0 ? (size_t)total : 1, sizeof *ref);
    cJSON_ArrayForEach(e, wm) {
        if (rc || k >= total) break;
        if (!cJSON_IsString(e) || !hub_good_filename(e->valuestring)) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: weight_map['%.100s'] is not a plain file name", index_path, e->string);
            break;
        }
        ref[k] = (struct shard_ref){e->valuestring, k};
        k++;
    }
    // The distinct names in the order they first appear, found by sorting (an index may list
    // millions of tensors; comparing each with every name kept so far would take hours).
    if (!rc && k > 0) {
        qsort(ref, (size_t)k, sizeof *ref, cmp_shard_ref);
        unsigned char *first = xsa_calloc((size_t)k, 1);
        int distinct = 0;
        for (int i = 0; i < k; i++)
            if (i == 0 || strcmp(ref[i].name, ref[i - 1].name)) first[ref[i].at] = 1, distinct++;
        if (distinct > ST_MAX_SHARDS) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: names %d shard files, more than the %d a checkpoint may have", index_path,
                          distinct, ST_MAX_SHARDS);
        } else {
            *names = xsa_calloc((size_t)distinct, sizeof **names);
            int i = 0;
            cJSON_ArrayForEach(e, wm) {
                if (i >= k) break;
                if (first[i++]) (*names)[(*n)++] = xsa_strdup(e->valuestring);
            }
        }
        free(first);
    }
    free(ref);
    cJSON_Delete(idx);
    if (rc) {
        hub_names_free(*names, *n);
        *names = NULL;
        *n = 0;
    }
    return rc;
}

static int snapshot_has(void *ctx, const char *name) {
    char p[4700];
    snprintf(p, sizeof p, "%s/%s", (const char *)ctx, name);
    return file_exists(p);  // follows the symlink: one into a missing blob is missing
}

static void add_missing(char *missing, size_t n, const char *name) {
    size_t k = strlen(missing);
    snprintf(missing + k, n - k, "%s%s", k ? ", " : "", name);
}

int hub_snapshot_missing(const char *snapshot, char *missing, size_t n) {
    int essential = 0;
    missing[0] = '\0';
    void *ctx = (void *)snapshot;
    if (!snapshot_has(ctx, "config.json")) add_missing(missing, n, "config.json"), essential++;
    if (!hub_pick_tokenizer(snapshot_has, ctx)) add_missing(missing, n, "tokenizer.json, tokenizer.model or vocab.json + merges.txt");
    const char *w = hub_pick_weights(snapshot_has, ctx);
    if (!w) {
        add_missing(missing, n, "the weights (model.safetensors or pytorch_model.bin, or a sharded index)");
        return essential + 1;
    }
    if (!hub_is_index(w)) return essential;
    char p[4700], **shards = NULL;
    int n_shards = 0;
    xsa_error e = {0};
    snprintf(p, sizeof p, "%s/%s", snapshot, w);
    if (hub_index_shards(p, &shards, &n_shards, &e)) {
        add_missing(missing, n, w);  // unreadable: fetch it again
        return essential + 1;
    }
    for (int i = 0; i < n_shards; i++)
        if (!snapshot_has(ctx, shards[i])) add_missing(missing, n, shards[i]), essential++;
    hub_names_free(shards, n_shards);
    return essential;
}

int hub_resolve(const char *arg, const char *how, struct hub_model *out, xsa_error *err) {
    int rc = hub_parse_id(arg, out, err);
    if (rc) return rc;
    char p[4700];
    if (!dir_exists(out->repo_dir))
        return xsa_fail(err, XSA_EBADINPUT, "%s: no such file or folder, and not in the Hugging Face cache (%s); "
                        "for a repo id, %s", arg, out->repo_dir, how);
    if (hub_is_commit(out->revision)) {
        memcpy(out->commit, out->revision, 41);  // 40 hex digits and the NUL
    } else {
        char *text = NULL;
        size_t len = 0;
        snprintf(p, sizeof p, "%s/refs/%s", out->repo_dir, out->revision);
        xsa_error e = {0};
        if (file_read_all(p, 4096, &text, &len, &e))
            return xsa_fail(err, XSA_EBADINPUT, "%s: revision '%s' is not in the cache (%s missing); %s", out->repo,
                            out->revision, p, how);
        while (len && isspace((unsigned char)text[len - 1])) text[--len] = '\0';
        int ok = hub_is_commit(text);
        if (ok) snprintf(out->commit, sizeof out->commit, "%s", text);
        free(text);
        if (!ok) return xsa_fail(err, XSA_EBADINPUT, "%s: %s does not name a commit; the cache is damaged", out->repo, p);
    }
    if (snprintf(out->path, sizeof out->path, "%.3900s/snapshots/%s", out->repo_dir, out->commit) >= (int)sizeof out->path)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the cache path is too long", out->repo);
    char missing[1024];
    if (!dir_exists(out->path) || hub_snapshot_missing(out->path, missing, sizeof missing))
        return xsa_fail(err, XSA_EBADINPUT, "%s@%s: the cache has no complete snapshot %s (%s missing); %s", out->repo,
                        out->revision, out->path, dir_exists(out->path) ? missing : "the folder", how);
    return 0;
}
