// hub_cache.h: a model named by Hugging Face repo id, `org/name[@revision]`, found in the hub
// cache exactly as huggingface_hub lays it out, so a model downloaded by transformers is used
// in place: the cache root is $HF_HUB_CACHE, else $HF_HOME/hub, else
// ${XDG_CACHE_HOME:-~/.cache}/huggingface/hub; the repo is models--ORG--NAME/; a revision is a
// 40-hex commit, or a ref (refs/<rev>, default main) naming one; the files are
// snapshots/<commit>/ (symlinks into blobs/).
#ifndef XSA_MODEL_HUB_CACHE_H
#define XSA_MODEL_HUB_CACHE_H

#include <stddef.h>

#include "common/error.h"

struct hub_model {
    char repo[200];       // "org/name"
    char revision[128];   // as asked ("main" when not given)
    char commit[41];      // what it resolved to
    char path[4096];      // the snapshot folder
};

// 1 when `arg` should be read as a repo id: it is not an existing path and has the shape
// org/name[@rev]. (A path that exists always wins.)
int hub_is_repo_id(const char *arg);

// Resolves a repo id. A malformed id is exit 2; a repo or revision absent from the cache is
// exit 2 naming the cache folder and how to get the files (downloading is not built in).
int hub_resolve(const char *arg, struct hub_model *out, xsa_error *err);

#endif
