// source_original.c: the original authors' files (docs/lm-eval-semantics.md §3.3), as plain JSONL
// or zip members, pinned to the digests of the published files where those are known. --originals-mirror BASE fetches
// https://host/path as BASE/host/path instead, for an air-gapped mirror or a test server.
#include <stdio.h>
#include <string.h>

#include "data/source_files.h"

struct original_plan {
    const char *task;
    struct source_file files[SOURCE_MAX_FILES];   // url is the authors' URL here
};

#define ARC_ZIP "https://ai2-public-datasets.s3.amazonaws.com/arc/ARC-V1-Feb2018.zip"
#define SIQA_ZIP "https://storage.googleapis.com/ai2-mosaic/public/socialiqa/socialiqa-train-dev.zip"
#define WINO_ZIP "https://storage.googleapis.com/ai2-mosaic/public/winogrande/winogrande_1.1.zip"

// ARC's zip (680,841,265 bytes) is never downloaded whole: its test member is read by Range.
// Member digests: ARC's, PIQA's, LAMBADA's and SocialIQA's files equal the published ones;
// OpenBookQA's and WinoGrande's are those of public copies (raybears/cot-transparency,
// zhang-edward/WinoGrande), which the canonical pins were computed from.
// BoolQ's SuperGLUE val.jsonl is not at hand: only its canonical rows are pinned. HellaSwag has no
// original: rowanz/hellaswag was taken down (its raw URL answers 404); the Hub's Parquet is its
// second source.
#define F(...) {__VA_ARGS__}
static const struct original_plan original_plans[] = {
    {"arc_easy", {F(.url = ARC_ZIP, .member = "ARC-V1-Feb2018-2/ARC-Easy/ARC-Easy-Test.jsonl",
                    .dest = "ARC-Easy-Test.jsonl", .by_range = 1,
                    .sha256 = "ce32a0774b4beb1977d2c6b16dda5dd2b24fdc9c7f506882c452678676bd09be")}},
    {"arc_challenge", {F(.url = ARC_ZIP, .member = "ARC-V1-Feb2018-2/ARC-Challenge/ARC-Challenge-Test.jsonl",
                         .dest = "ARC-Challenge-Test.jsonl", .by_range = 1,
                         .sha256 = "9fa8ffb3e3a1f88cb302d53dd95aae81e39209ad9bcf974376b319d8fd35717c")}},
    // lm-eval reads the SuperGLUE text (passage starts "Title -- "), not Google's dev.jsonl.
    {"boolq", {F(.url = "https://dl.fbaipublicfiles.com/glue/superglue/data/v2/BoolQ.zip", .member = "BoolQ/val.jsonl",
                 .dest = "val.jsonl")}},
    {"lambada_openai", {F(.url = "https://openaipublic.blob.core.windows.net/gpt-2/data/lambada_test.jsonl",
                          .dest = "lambada_test.jsonl",
                          .sha256 = "4aa8d02cd17c719165fc8a7887fddd641f43fcafa4b1c806ca8abc31fabdb226")}},
    {"openbookqa", {F(.url = "https://s3-us-west-2.amazonaws.com/ai2-website/data/OpenBookQA-V1-Sep2018.zip",
                      .member = "OpenBookQA-V1-Sep2018/Data/Main/test.jsonl", .dest = "test.jsonl",
                      .sha256 = "feb2bd9bfa6161dca4c44ce90e51e8cdada83eb5061407fcdc5005e44aaf2313")}},
    {"piqa", {F(.url = "https://yonatanbisk.com/piqa/data/valid.jsonl", .dest = "valid.jsonl",
                .sha256 = "93503cc97c679e459b065c3d13e848282e44b2a25213985bed3e5d458abef72d"),
              F(.url = "https://yonatanbisk.com/piqa/data/valid-labels.lst", .dest = "valid-labels.lst",
                .sha256 = "b4192dc3a2a0363d9d60ccf79800cbbe2f32ebb17726efdde6970e0b8131bceb")}},
    // Member digests checked against benchdata's zip, whose digest equals allenai/rainbow's.
    {"social_iqa", {F(.url = SIQA_ZIP, .member = "socialiqa-train-dev/dev.jsonl", .dest = "dev.jsonl",
                      .sha256 = "d8128dfe60783a9971b954ca82dd57b87b05d5d40468876d51a8e1ad2c557465",
                      .raw_sha256 = "ee073914a0fc33265cfbcfc50ec20df9b2e07809c3f420f599138d1f394ef5c3"),
                    F(.url = SIQA_ZIP, .member = "socialiqa-train-dev/dev-labels.lst", .dest = "dev-labels.lst",
                      .sha256 = "2d882ff71969d3980d37dd07aecdf9093c6e63e27c670f3a203bcf3b9b74bc05",
                      .raw_sha256 = "ee073914a0fc33265cfbcfc50ec20df9b2e07809c3f420f599138d1f394ef5c3")}},
    {"winogrande", {F(.url = WINO_ZIP, .member = "winogrande_1.1/dev.jsonl", .dest = "dev.jsonl",
                      .sha256 = "1aeac79cf46a3dcbe59a71ca7e5372a1490cde2b4ae2387dc56f00378104d2e8"),
                    F(.url = WINO_ZIP, .member = "winogrande_1.1/dev-labels.lst", .dest = "dev-labels.lst",
                      .sha256 = "5ae1e30f52a50b880515685dcfae7d57649cce256d375947cdd02f687de7e6ba")}},
};
#undef F

static const struct original_plan *original_plan_of(const struct task_def *t) {
    for (size_t i = 0; i < sizeof original_plans / sizeof original_plans[0]; i++)
        if (!strcmp(original_plans[i].task, t->name)) return &original_plans[i];
    return NULL;
}

void source_original_describe(const struct task_def *t, char *out, size_t n) {
    const struct original_plan *p = original_plan_of(t);
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; p && i < SOURCE_MAX_FILES && p->files[i].url && used < n; i++) {
        const char *u = p->files[i].url, *name = strrchr(u, '/') ? strrchr(u, '/') + 1 : u;
        int dup = i > 0 && !strcmp(p->files[i - 1].url, u);
        int w = snprintf(out + used, n - used, "%s%s%s%s", i ? ", " : "", dup ? "" : name,
                         p->files[i].member ? (dup ? "" : "!") : "", p->files[i].member ? p->files[i].dest : "");
        if (w > 0) used += (size_t)w;
    }
}

int source_original_fetch(struct source_ctx *c, struct source_result *r, xsa_error *err) {
    const struct original_plan *p = original_plan_of(c->t);
    if (!p || !source_is_evaluated_split(c->t)) {  // the authors' files are read for the evaluated split only
        r->unavailable = 1;
        return 0;
    }
    struct source_file files[SOURCE_MAX_FILES];
    char urls[SOURCE_MAX_FILES][1024];
    int n = 0;
    for (; n < SOURCE_MAX_FILES && p->files[n].url; n++) {
        files[n] = p->files[n];
        const char *mirror = c->opt->originals_mirror;
        if (mirror && *mirror) {
            const char *rest = strstr(files[n].url, "://");
            rest = rest ? rest + 3 : files[n].url;
            size_t ml = strlen(mirror);
            while (ml > 0 && mirror[ml - 1] == '/') ml--;
            if (snprintf(urls[n], sizeof urls[n], "%.*s/%s", (int)ml, mirror, rest) >= (int)sizeof urls[n])
                return xsa_fail(err, XSA_EBADINPUT, "--originals-mirror URL is too long");
            files[n].url = urls[n];
        }
    }
    return source_fetch_files(c, files, n, r, err);
}
