// test_parity.c: `xsa-eval run` against what real
// lm-evaluation-harness computed (tools/fixtures/make_parity_fixtures.py, tools/fixtures/make_real_parity_fixtures.py)
// on the same checkpoints and rows: identical greedy flags and predictions, log-likelihoods
// within 1e-4 (or 1e-6 relative for sums of hundreds of float32 log-probabilities, which
// torch adds in float32), metrics within 1e-6 (perplexity, an exp of a mean of
// log-likelihoods, within a relative 1e-4 that follows from the log-likelihood tolerance).
#include <cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/fileio.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

// The one file in `dir` whose name starts with `prefix`.
static int find_file(const char *dir, const char *prefix, char *out, size_t n) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    int found = -1;
    while ((e = readdir(d))) {
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            snprintf(out, n, "%s/%s", dir, e->d_name);
            found = 0;
        }
    }
    closedir(d);
    return found;
}

static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

// run: fixture folder; model: checkpoint (under tests/fixtures/parity/models/ unless it has a
// '/'); name: the folder xsa-eval names after the model; data: --data-dir.
static void check_run_in(const char *run, const char *model, const char *name, const char *flags, const char *data) {
    const char *bin = getenv("XSA_BIN") ? getenv("XSA_BIN") : "./xsa-eval";
    char tmp[] = "/tmp/xsa_parity_XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s run --model %s%s %s --data-dir %s --log-samples --quiet --output %s > %s/stdout 2> %s/stderr", bin,
             strchr(model, '/') ? "" : "tests/fixtures/parity/models/", model, flags, data, tmp, tmp, tmp);
    int rc = system(cmd);
    CHECK_MSG(rc == 0, "%s exited %d", cmd, rc);
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "tests/fixtures/parity/%s/lm_eval.json", run);
    cJSON *ref = fixture_read_json(path);
    CHECK(ref != NULL);
    snprintf(dir, sizeof dir, "%s/%s", tmp, name);
    cJSON *ours = NULL;
    if (!find_file(dir, "results_", path, sizeof path)) ours = fixture_read_json(path);
    CHECK(ours != NULL);
    if (!ref || !ours) return;
    double worst = 0;
    int n_req = 0;
    const cJSON *task;
    cJSON_ArrayForEach(task, cJSON_GetObjectItem(ref, "tasks")) {
        const char *name = task->string;
        char prefix[128];
        snprintf(prefix, sizeof prefix, "samples_%s_", name);
        cJSON *samples = cJSON_CreateArray();
        if (!find_file(dir, prefix, path, sizeof path)) {
            FILE *f = fopen(path, "r");
            char *line = NULL;
            size_t cap = 0;
            while (f && getline(&line, &cap, f) > 0) cJSON_AddItemToArray(samples, cJSON_Parse(line));
            free(line);
            if (f) fclose(f);
        }
        CHECK_MSG(cJSON_GetArraySize(samples) == (int)num(task, "n_docs"), "%s: samples for every doc", name);
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(task, "requests")) {
            int doc = (int)num(r, "doc_id"), idx = (int)num(r, "idx");
            const cJSON *s = cJSON_GetArrayItem(samples, doc);
            const cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "requests"), idx);
            CHECK_MSG(q != NULL, "%s doc %d request %d missing", name, doc, idx);
            if (!q) continue;
            double d = fabs(num(q, "logprob") - num(r, "ll"));
            if (d > worst) worst = d;
            n_req++;
            CHECK_MSG(d <= fmax(1e-4, 1e-6 * fabs(num(r, "ll"))), "%s doc %d req %d: ll %.9g vs lm-eval %.9g", name, doc, idx, num(q, "logprob"), num(r, "ll"));
            CHECK_MSG(cJSON_IsTrue(cJSON_GetObjectItem(q, "greedy")) == cJSON_IsTrue(cJSON_GetObjectItem(r, "greedy")),
                      "%s doc %d req %d: greedy flag differs", name, doc, idx);
        }
        const cJSON *res = cJSON_GetObjectItem(cJSON_GetObjectItem(ours, "results"), name);
        const cJSON *m;
        cJSON_ArrayForEach(m, cJSON_GetObjectItem(task, "metrics")) {
            if (!cJSON_IsNumber(m)) continue;
            char key[64];
            snprintf(key, sizeof key, "%s,none", m->string);
            double v = num(res, key), want = m->valuedouble;
            double tol = strstr(m->string, "perplexity") ? 1e-4 * fabs(want) : 1e-6;
            CHECK_MSG(fabs(v - want) <= tol, "%s %s: %.12g vs lm-eval %.12g", name, m->string, v, want);
        }
        cJSON_Delete(samples);
    }
    CHECK(n_req > 250);
    printf("  %s: %d requests, worst |ll - lm-eval| = %.2g\n", run, n_req, worst);
    cJSON_Delete(ref);
    cJSON_Delete(ours);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    CHECK(system(cmd) == 0);
}

static void check_run(const char *run, const char *model, const char *flags) {
    char f[512];
    snprintf(f, sizeof f, "%s --tasks all --allow-data-change", flags);
    check_run_in(run, model, model, f, "tests/fixtures/data");
}

// stories260K (llama2.c) on the first 40 docs of the real files of eight tasks (HellaSwag's
// dump in ../shared is not lm-eval's input format).
TEST(test_parity_real_benchdata_stories260K) {
    char model[4096], flags[4096], data[4096];  // shared_benchdata() reuses one buffer: copy each
    if (!shared_benchdata("models/stories260K/stories260K.bin")) SKIP("../shared/benchdata absent");
    snprintf(model, sizeof model, "%s", shared_benchdata("models/stories260K/stories260K.bin"));
    snprintf(data, sizeof data, "%s", shared_benchdata(""));
    snprintf(flags, sizeof flags,
             "--tokenizer %s --limit 40 --tasks arc_easy,arc_challenge,boolq,lambada_openai,openbookqa,piqa,social_iqa,winogrande",
             shared_benchdata("models/stories260K/tok512.bin"));
    check_run_in("stories260K_real", model, "stories260K.bin", flags, data);
}

TEST(test_parity_gpt2_bytelevel_truncation) { check_run("gpt2_bpe", "gpt2_bpe", ""); }
TEST(test_parity_llama_bos_gqa_xsa_layer1) { check_run("llama_sp_xsa", "llama_sp_xsa", ""); }
TEST(test_parity_llama_bos_gqa_sa) { check_run("llama_sp_sa", "llama_sp_xsa", "--xsa none"); }
TEST(test_parity_unshared_path) { check_run("gpt2_bpe", "gpt2_bpe", "--no-share --batch-tokens 64"); }
// Two few-shot examples drawn as lm-eval's sampler draws them (Random(1234), k + 1 and
// exclusion for validation-split tasks, the evaluated split itself for LAMBADA).
TEST(test_parity_fewshot2) {
    check_run_in("gpt2_bpe_fewshot2", "gpt2_bpe", "gpt2_bpe", "--tasks all --num-fewshot 2 --allow-data-change",
                 "tests/fixtures/parity/fewshot_data");
}

// The few-shot split's awkward rows (tools/fixtures/make_parity_fixtures.py write_fewshot_edge_data):
// WinoGrande examples ending at the blank, rows equal to an evaluated one but for idx/split,
// rows copied twice (lm-eval 0.4.13 draws again without the doc's copies).
TEST(test_parity_fewshot_edge) {
    check_run_in("gpt2_bpe_fewshot_edge", "gpt2_bpe", "gpt2_bpe", "--tasks all --num-fewshot 3 --allow-data-change",
                 "tests/fixtures/parity/fewshot_edge_data");
}

RUN_TESTS(T(test_parity_gpt2_bytelevel_truncation), T(test_parity_llama_bos_gqa_xsa_layer1), T(test_parity_llama_bos_gqa_sa),
          T(test_parity_unshared_path), T(test_parity_fewshot2), T(test_parity_fewshot_edge),
          T(test_parity_real_benchdata_stories260K))
