// source_hub.c: data files in a task's Hugging Face dataset repository,
// {hf-endpoint}/datasets/D/resolve/REV/PATH: the Parquet files of eight of the nine tasks
// (read by data/parquet.c), LAMBADA's JSON Lines (read by its adapter). A Parquet file missing
// from `main` (404) is looked for on the viewer's conversion branch, refs/convert/parquet,
// which the Hub serves as <config>/<split>/0000.parquet. The revision actually served
// (X-Repo-Commit) goes into the manifest.
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "data/parquet.h"
#include "data/source_files.h"

struct hub_plan {
    const char *task;
    const char *dataset;  // NULL: the task's hf_dataset
    const char *config;   // of the conversion branch; NULL: the task's hf_config
    const char *path;     // file on main; NULL: only on refs/convert/parquet
    int parquet;          // 1: a Parquet file of canonical rows; 0: the adapter's file `dest`
    const char *dest;     // name in the raw folder
    const char *sha256;   // pinned digest when known
};

// Paths as docs/lm-eval-semantics.md §3.1 lists the repositories' files.
static const struct hub_plan hub_plans[] = {
    {"arc_easy", NULL, NULL, "ARC-Easy/test-00000-of-00001.parquet", 1, "hub-test.parquet", NULL},
    {"arc_challenge", NULL, NULL, "ARC-Challenge/test-00000-of-00001.parquet", 1, "hub-test.parquet", NULL},
    {"boolq", NULL, NULL, "boolq/validation-00000-of-00001.parquet", 1, "hub-validation.parquet", NULL},
    // main holds only the loader script (the PR with data/validation-*.parquet is unmerged).
    {"hellaswag", NULL, NULL, NULL, 1, "hub-validation.parquet", NULL},
    // Byte-identical to OpenAI's lambada_test.jsonl (lm-eval's checksum; benchdata SHA256SUMS).
    {"lambada_openai", NULL, NULL, "data/lambada_test.jsonl", 0, "lambada_test.jsonl",
     "4aa8d02cd17c719165fc8a7887fddd641f43fcafa4b1c806ca8abc31fabdb226"},
    {"openbookqa", NULL, NULL, "main/test-00000-of-00001.parquet", 1, "hub-test.parquet", NULL},
    {"piqa", NULL, NULL, "piqa_validation.parquet", 1, "hub-validation.parquet", NULL},
    // lm-eval main reads lighteval/siqa; allenai/social_i_qa is a loader script.
    {"social_iqa", "lighteval/siqa", "default", "data/validation-00000-of-00001-90bb85eab85fcfa8.parquet", 1,
     "hub-validation.parquet", NULL},
    {"winogrande", NULL, NULL, "winogrande_xl/validation-00000-of-00001.parquet", 1, "hub-validation.parquet", NULL},
};

static int hub_url(const struct source_ctx *c, const char *dataset, const char *rev, const char *path, char *out,
                   size_t n, xsa_error *err) {
    // Dataset ids keep their "/" in Hub paths; they hold no characters that need escaping.
    if (snprintf(out, n, "%s/datasets/%s/resolve/%s/%s", c->hf_endpoint, dataset, rev, path) >= (int)n)
        return xsa_fail(err, XSA_EBADINPUT, "--hf-endpoint URL is too long");
    return 0;
}

// Downloads the plan's Parquet file (main, else the conversion branch) and reads its rows. Another
// split than the evaluated one (few-shot) is read from the conversion branch only.
static int hub_parquet(struct source_ctx *c, const struct hub_plan *p, int evaluated, struct source_result *r,
                       xsa_error *err) {
    const char *dataset = p->dataset ? p->dataset : c->t->hf_dataset;
    const char *config = p->config ? p->config : c->t->hf_config ? c->t->hf_config : "default";
    char conv[256], dest[96];
    snprintf(conv, sizeof conv, "%s/%s/0000.parquet", config, c->t->split);
    snprintf(dest, sizeof dest, "hub-%s.parquet", c->t->split);
    const char *main_path = evaluated ? p->path : NULL;
    const char *revs[2] = {"main", "refs%2Fconvert%2Fparquet"}, *paths[2] = {main_path, conv};
    char url[1024];
    int rc = 0;
    str_copy(r->dataset, sizeof r->dataset, dataset);
    str_copy(r->config, sizeof r->config, config);
    for (int k = main_path ? 0 : 1; k < 2; k++) {
        int not_found = 0;
        if ((rc = hub_url(c, dataset, revs[k], paths[k], url, sizeof url, err))) return rc;
        struct source_file f = {.url = url, .dest = dest, .sha256 = evaluated ? p->sha256 : NULL, .hf_auth = 1,
                                .max_bytes = SOURCE_HUB_MAX_BYTES};
        rc = source_download_files(c, &f, 1, r, &not_found, err);
        if (!rc) {
            if (!r->revision[0]) str_copy(r->revision, sizeof r->revision, k ? "refs/convert/parquet" : "main");
            break;
        }
        if (!not_found || k == 1) return rc;
        if (!c->opt->quiet) fprintf(stderr, "xsa-eval: %s: %s; trying the Parquet conversion branch\n", c->t->name, err->msg);
        xsa_error_clear(err);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", c->raw_dir, dest);
    long n = 0;
    xsa_error e1 = {0};
    r->task = c->t;
    rc = parquet_read_file(path, source_result_emit_hf, r, &n, &e1);
    if (rc) {
        source_result_free(r);
        r->bad_data = 1;
        return xsa_fail(err, XSA_ERUNTIME, "data from %s does not convert: %s", url, e1.msg);
    }
    return 0;
}

static const struct hub_plan *hub_plan_of(const struct task_def *t) {
    for (size_t i = 0; i < sizeof hub_plans / sizeof hub_plans[0]; i++)
        if (!strcmp(hub_plans[i].task, t->name)) return &hub_plans[i];
    return NULL;
}

int source_hub_parquet_file(const struct task_def *t, const char **dataset, const char **path) {
    const struct hub_plan *p = hub_plan_of(t);
    if (!p || !p->parquet || !p->path) return 0;
    *dataset = p->dataset ? p->dataset : t->hf_dataset;
    *path = p->path;
    return 1;
}

int source_hub_fetch(struct source_ctx *c, struct source_result *r, xsa_error *err) {
    const struct hub_plan *p = hub_plan_of(c->t);
    int evaluated = source_is_evaluated_split(c->t);
    if (!p || (!p->parquet && !evaluated)) {
        r->unavailable = 1;
        return 0;
    }
    if (p->parquet) return hub_parquet(c, p, evaluated, r, err);
    char url[1024];
    int rc = hub_url(c, c->t->hf_dataset, "main", p->path, url, sizeof url, err);
    if (rc) return rc;
    struct source_file f = {.url = url, .dest = p->dest, .sha256 = p->sha256, .hf_auth = 1, .max_bytes = SOURCE_HUB_MAX_BYTES};
    rc = source_fetch_files(c, &f, 1, r, err);
    if (!rc && !r->revision[0]) str_copy(r->revision, sizeof r->revision, "main");
    return rc;
}

void source_hub_describe(const struct task_def *t, char *out, size_t n) {
    const struct hub_plan *p = hub_plan_of(t);
    out[0] = '\0';
    if (!p) return;
    const char *dataset = p->dataset ? p->dataset : t->hf_dataset;
    const char *config = p->config ? p->config : t->hf_config ? t->hf_config : "default";
    if (!p->parquet) snprintf(out, n, "%s %s", dataset, p->path);
    else if (p->path) snprintf(out, n, "%s %s (else refs/convert/parquet %s/%s/0000.parquet)", dataset, p->path, config, t->split);
    else snprintf(out, n, "%s refs/convert/parquet %s/%s/0000.parquet", dataset, config, t->split);
}
