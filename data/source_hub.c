// source_hub.c: JSON/JSONL data files in a task's Hugging Face dataset repository,
// {hf-endpoint}/datasets/D/resolve/REV/PATH. Most of the nine repositories hold parquet
// only (docs/lm-eval-semantics.md §3.1); the ones with JSON Lines are listed here. The revision
// actually served (X-Repo-Commit) goes into the manifest.
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "data/source_files.h"

struct hub_plan {
    const char *task;
    const char *path;     // file in the repository
    const char *dest;     // name the adapter reads (benchdata layout)
    const char *sha256;   // pinned digest when known
};

static const struct hub_plan hub_plans[] = {
    // Byte-identical to OpenAI's lambada_test.jsonl (lm-eval's checksum; benchdata SHA256SUMS).
    {"lambada_openai", "data/lambada_test.jsonl", "lambada_test.jsonl",
     "4aa8d02cd17c719165fc8a7887fddd641f43fcafa4b1c806ca8abc31fabdb226"},
};

int source_hub_fetch(struct source_ctx *c, struct source_result *r, xsa_error *err) {
    const struct hub_plan *p = NULL;
    for (size_t i = 0; i < sizeof hub_plans / sizeof hub_plans[0]; i++)
        if (!strcmp(hub_plans[i].task, c->t->name)) p = &hub_plans[i];
    if (!p) {
        r->unavailable = 1;
        return 0;
    }
    char url[1024];
    // Dataset ids keep their "/" in Hub paths; they hold no characters that need escaping.
    if (snprintf(url, sizeof url, "%s/datasets/%s/resolve/main/%s", c->hf_endpoint, c->t->hf_dataset, p->path) >=
        (int)sizeof url)
        return xsa_fail(err, XSA_EBADINPUT, "--hf-endpoint URL is too long");
    struct source_file f = {.url = url, .dest = p->dest, .sha256 = p->sha256};
    int rc = source_fetch_files(c, &f, 1, r, err);
    if (!rc && !r->revision[0]) str_copy(r->revision, sizeof r->revision, "main");
    return rc;
}
