// hub_cache.c: repo ids resolved in the Hugging Face hub cache (hub_cache.h).
#include "model/hub_cache.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"

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

int hub_is_repo_id(const char *arg) {
    struct stat st;
    if (!arg || !*arg || stat(arg, &st) == 0 || strchr("/.~", arg[0])) return 0;
    const char *at = strchr(arg, '@');
    return memchr(arg, '/', at ? (size_t)(at - arg) : strlen(arg)) != NULL;  // hub_resolve judges the rest
}

// The cache root, as huggingface_hub.constants computes HF_HUB_CACHE.
static void cache_root(char *buf, size_t n) {
    const char *hub = getenv("HF_HUB_CACHE"), *home = getenv("HF_HOME"), *xdg = getenv("XDG_CACHE_HOME");
    if (hub && *hub) snprintf(buf, n, "%s", hub);
    else if (home && *home) snprintf(buf, n, "%s/hub", home);
    else if (xdg && *xdg) snprintf(buf, n, "%s/huggingface/hub", xdg);
    else snprintf(buf, n, "%s/.cache/huggingface/hub", getenv("HOME") ? getenv("HOME") : ".");
}

static int is_commit(const char *s) {
    if (strlen(s) != 40) return 0;
    for (int i = 0; i < 40; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i])) return 0;
    return 1;
}

int hub_resolve(const char *arg, struct hub_model *out, xsa_error *err) {
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
    char root[3600], repo_dir[3900], p[4700];
    cache_root(root, sizeof root);
    snprintf(repo_dir, sizeof repo_dir, "%.3500s/models--%.*s--%s", root, (int)(slash - arg), arg,
             out->repo + (slash + 1 - arg));
    const char *how = "download it first (e.g. `huggingface-cli download %s`, or any transformers from_pretrained); "
                      "xsa-eval reads the Hugging Face cache but does not download models";
    char hint[512];
    snprintf(hint, sizeof hint, how, out->repo);
    if (!dir_exists(repo_dir))
        return xsa_fail(err, XSA_EBADINPUT, "%s: no such file or folder, and not in the Hugging Face cache (%s); "
                        "for a repo id, %s", arg, repo_dir, hint);
    if (is_commit(out->revision)) {
        memcpy(out->commit, out->revision, 41);  // 40 hex digits and the NUL
    } else {
        char *text = NULL;
        size_t len = 0;
        snprintf(p, sizeof p, "%s/refs/%s", repo_dir, out->revision);
        xsa_error e = {0};
        if (file_read_all(p, 4096, &text, &len, &e))
            return xsa_fail(err, XSA_EBADINPUT, "%s: revision '%s' is not in the cache (%s missing); %s", out->repo,
                            out->revision, p, hint);
        while (len && isspace((unsigned char)text[len - 1])) text[--len] = '\0';
        int ok = is_commit(text);
        if (ok) snprintf(out->commit, sizeof out->commit, "%s", text);
        free(text);
        if (!ok) return xsa_fail(err, XSA_EBADINPUT, "%s: %s does not name a commit; the cache is damaged", out->repo, p);
    }
    if (snprintf(out->path, sizeof out->path, "%.3900s/snapshots/%s", repo_dir, out->commit) >= (int)sizeof out->path)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the cache path is too long", out->repo);
    snprintf(p, sizeof p, "%s/config.json", out->path);
    if (!dir_exists(out->path) || !file_exists(p))
        return xsa_fail(err, XSA_EBADINPUT, "%s@%s: the cache has no complete snapshot %s (config.json missing); %s",
                        out->repo, out->revision, out->path, hint);
    return 0;
}
