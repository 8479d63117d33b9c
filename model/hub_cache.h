// hub_cache.h: a model named by Hugging Face repo id, `org/name[@revision]`, found in the hub
// cache exactly as huggingface_hub lays it out, so a model downloaded by transformers is used
// in place, and downloaded into it when missing (hub_cache_fetch.c): the cache root is
// $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
// ${XDG_CACHE_HOME:-~/.cache}/huggingface/hub; the repo is models--ORG--NAME/; a revision is a
// 40-hex commit, or a ref (refs/<rev>, default main) naming one; the files are
// snapshots/<commit>/<file>, relative symlinks to blobs/<etag> (an LFS file's sha256, else the
// git blob sha1); .locks/models--ORG--NAME/<etag>.lock guards a blob while it is written.
#ifndef XSA_MODEL_HUB_CACHE_H
#define XSA_MODEL_HUB_CACHE_H

#include <stddef.h>

#include "common/error.h"

struct hub_model {
    char repo[200];       // "org/name"
    char revision[128];   // as asked ("main" when not given)
    char commit[41];      // what it resolved to
    char path[4096];      // the snapshot folder
    char repo_dir[3900];  // <cache>/models--org--name
    char cache[3600];     // the cache root
};

// 1 when `arg` should be read as a repo id: it is not an existing path and has the shape
// org/name[@rev]. (A path that exists always wins.)
int hub_is_repo_id(const char *arg);

// Checks `arg` (org/name[@revision]) and fills repo, revision, cache and repo_dir (not commit
// or path). A malformed id is exit 2.
int hub_parse_id(const char *arg, struct hub_model *out, xsa_error *err);

// 1 when `s` is a full commit id (40 lowercase hex digits), as huggingface_hub's REGEX_COMMIT_HASH.
int hub_is_commit(const char *s);

// Resolves a repo id in the cache only, never touching the network. A malformed id is exit 2;
// a repo or revision absent from the cache, or a snapshot without the files the loader needs
// (hub_snapshot_missing), is exit 2 naming what is missing and `how` to get it.
int hub_resolve(const char *arg, const char *how, struct hub_model *out, xsa_error *err);

// The files the model loader needs that `snapshot` lacks, as one comma-separated list in
// missing[n] ("" when complete): config.json; tokenizer.json, tokenizer.model or vocab.json +
// merges.txt; the weights
// (model.safetensors, or the index and every shard it names; else the same for pytorch_model.bin).
// Returns how many of them are not the tokenizer (which --tokenizer may give instead).
int hub_snapshot_missing(const char *snapshot, char *missing, size_t n);

// A file name from the Hub (a sibling, a shard an index names) that is safe to use under the
// snapshot folder: relative, '/'-separated, no empty, "." or ".." part, printable, < 512 bytes.
int hub_good_filename(const char *name);

// The weights the loader reads, among the files `has` says exist: model.safetensors, else
// model.safetensors.index.json, else pytorch_model.bin, else pytorch_model.bin.index.json
// (NULL when none); and the tokenizer: tokenizer.json, else tokenizer.model, else vocab.json when
// merges.txt is there too (NULL when none).
typedef int (*hub_has_fn)(void *ctx, const char *name);
const char *hub_pick_weights(hub_has_fn has, void *ctx);
const char *hub_pick_tokenizer(hub_has_fn has, void *ctx);
int hub_is_index(const char *name);

// The distinct shard names of a weights index (its weight_map's values), each checked with
// hub_good_filename: a malloc'd array of malloc'd strings (free with hub_names_free). Exit 2 for
// an index that is not JSON with a weight_map of strings.
int hub_index_shards(const char *index_path, char ***names, int *n, xsa_error *err);
void hub_names_free(char **names, int n);

struct hub_fetch_options {
    int offline;              // --offline; HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE also set it
    int quiet;                // no progress bar, no notes
    const char *endpoint;     // --hf-endpoint; NULL: $HF_ENDPOINT, else https://huggingface.co
    const char *ca_bundle;    // --ca-bundle
};

// Resolves a repo id as hub_resolve does, downloading from the Hub what the loader needs and the
// cache lacks (hub_cache_fetch.c): a branch or tag is resolved to its commit by the Hub's API
// (the cached ref when the Hub cannot be reached), a commit whose snapshot is complete is used
// without any request. Exit 2: a malformed id, or offline and not cached; exit 3: the Hub refused
// (401/403 gated or private, 404 repo or revision), the network failed with nothing cached, or
// a file failed its checks (size, sha256).
int hub_fetch(const char *arg, const struct hub_fetch_options *o, struct hub_model *out, xsa_error *err);

#endif
