// registry.c: the nine tasks, as lm-eval v0.4.12 configures them (docs/lm-eval-semantics.md §2, §3.2).
// canonical_sha256 pins each evaluated split's canonical rows, computed from the original authors'
// files (the digests data/source_original.c pins) through tasks/adapters.c; HellaSwag's original is
// not at hand, so its pin stays unknown. tests/test_sources.sh checks them against the viewer form.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "common/xalloc.h"
#include "tasks/docbuild.h"
#include "tasks/task.h"

static const struct task_def registry[] = {
    {.name = "arc_easy", .groups = "all,paper", .output = TASK_MULTIPLE_CHOICE,
     .hf_dataset = "allenai/ai2_arc", .hf_config = "ARC-Easy", .split = "test",
     .fewshot_split = "train", .n_docs = 2376, .metrics = "acc,acc_norm",
     .preferred_metric = "acc_norm", .version = 1.0,
     .canonical_sha256 = "7c73345800fdb847ae5fca138cb26c65c718087a490170068631c50dee1d6fec",
     .schema = "id,question,choices(text,label),answerKey", .doc_from_row = arc_doc_from_row},
    {.name = "arc_challenge", .groups = "all", .output = TASK_MULTIPLE_CHOICE,
     .hf_dataset = "allenai/ai2_arc", .hf_config = "ARC-Challenge", .split = "test",
     .fewshot_split = "train", .n_docs = 1172, .metrics = "acc,acc_norm",
     .preferred_metric = "acc_norm", .version = 1.0,
     .canonical_sha256 = "e6b72ff6d4661d55e4fcae2b816c9a874887d4e029c72241a202530437b2524a",
     .schema = "id,question,choices(text,label),answerKey", .doc_from_row = arc_doc_from_row},
    {.name = "boolq", .groups = "all,paper", .output = TASK_MULTIPLE_CHOICE,
     .hf_dataset = "aps/super_glue", .hf_config = "boolq", .split = "validation",
     .fewshot_split = "train", .n_docs = 3270, .metrics = "acc", .preferred_metric = "acc",
     .version = 2.0,
     .canonical_sha256 = "d66f7d5c963806f89103737c4820ace60d15330d419f1f6c06a4526681d4afd5",
     .schema = "question,passage,idx,label", .doc_from_row = boolq_doc_from_row},
    {.name = "hellaswag", .groups = "all,paper", .output = TASK_MULTIPLE_CHOICE,
     .hf_dataset = "Rowan/hellaswag", .hf_config = "default", .split = "validation",
     .fewshot_split = "train", .n_docs = 10042, .metrics = "acc,acc_norm",
     .preferred_metric = "acc_norm", .version = 1.0,
     .schema = "ind,activity_label,ctx_a,ctx_b,ctx,endings,source_id,split,split_type,label",
     .doc_from_row = hellaswag_doc_from_row},
    {.name = "lambada_openai", .groups = "all,paper", .output = TASK_LOGLIKELIHOOD,
     .hf_dataset = "EleutherAI/lambada_openai", .hf_config = "default", .split = "test",
     .fewshot_split = "test", .n_docs = 5153, .metrics = "perplexity,acc",
     .preferred_metric = "acc", .version = 1.0,
     .canonical_sha256 = "05ae9755847286957976eca1a513750eeb542019e97af8837baa488483398d78",
     .schema = "text", .doc_from_row = lambada_doc_from_row},
    {.name = "openbookqa", .groups = "all,paper", .output = TASK_MULTIPLE_CHOICE,
     .hf_dataset = "allenai/openbookqa", .hf_config = "main", .split = "test",
     .fewshot_split = "train", .n_docs = 500, .metrics = "acc,acc_norm",
     .preferred_metric = "acc_norm", .version = 1.0,
     .canonical_sha256 = "b3a19cc89b1a02e000bfa32d7d3f01ab02dec6715fa6bcb939006686be56df19",
     .schema = "id,question_stem,choices(text,label),answerKey", .doc_from_row = openbookqa_doc_from_row},
    {.name = "piqa", .groups = "all,paper", .output = TASK_MULTIPLE_CHOICE,
     .hf_dataset = "baber/piqa", .hf_config = "default", .split = "validation",
     .fewshot_split = "train", .n_docs = 1838, .metrics = "acc,acc_norm",
     .preferred_metric = "acc_norm", .version = 1.0,
     .canonical_sha256 = "a681e149b89a2f1cf23c88dacc29c3c1040286d9c7f59916dab244c14cb36962",
     .schema = "goal,sol1,sol2,label", .doc_from_row = piqa_doc_from_row},
    // lm-eval main reads lighteval/siqa (after v0.4.12, which read the loader-script dataset
    // allenai/social_i_qa, which the dataset viewer does not serve): the same rows.
    {.name = "social_iqa", .groups = "all,paper", .output = TASK_MULTIPLE_CHOICE,
     .hf_dataset = "lighteval/siqa", .hf_config = "default", .split = "validation",
     .fewshot_split = "train", .n_docs = 1954, .metrics = "acc", .preferred_metric = "acc",
     .version = 0.0,
     .canonical_sha256 = "8bd827c547c9ee66f55f7aacc5f7067b7724b713d31c03da4837128851e654fa",
     .schema = "context,question,answerA,answerB,answerC,label", .doc_from_row = siqa_doc_from_row,
     .hf_alt_dataset = "allenai/social_i_qa", .hf_alt_config = "default"},
    {.name = "winogrande", .groups = "all,paper", .output = TASK_MULTIPLE_INPUT,
     .hf_dataset = "allenai/winogrande", .hf_config = "winogrande_xl", .split = "validation",
     .fewshot_split = "train", .n_docs = 1267, .metrics = "acc", .preferred_metric = "acc",
     .version = 1.0,
     .canonical_sha256 = "b9bb62a45b0fda63a7d5e001c67cba8747611a6d91a482c30c3572259bab8482",
     .schema = "sentence,option1,option2,answer", .doc_from_row = winogrande_doc_from_row},
};

#define N_TASKS ((int)(sizeof registry / sizeof registry[0]))

const struct task_def *task_registry(int *n) {
    *n = N_TASKS;
    return registry;
}

const struct task_def *task_find(const char *name) {
    for (int i = 0; i < N_TASKS; i++)
        if (strcmp(registry[i].name, name) == 0) return &registry[i];
    return NULL;
}

// 1 when `group` is one of the comma-separated names in `groups`.
static int in_group(const char *groups, const char *group) {
    size_t gn = strlen(group);
    for (const char *p = groups; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == gn && memcmp(p, group, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

int task_in_group(const char *name, const char *group) {
    const struct task_def *t = task_find(name);
    return t && in_group(t->groups, group);
}

int task_group_size(const char *group) {
    int n = 0;
    for (int i = 0; i < N_TASKS; i++) n += in_group(registry[i].groups, group);
    return n;
}

int task_expand_list(const char *spec, const struct task_def **out, int max, int *n_out, xsa_error *err) {
    int want[N_TASKS] = {0};
    *n_out = 0;
    if (!spec || !*spec)
        return xsa_fail(err, XSA_EBADINPUT, "--tasks: empty list; give task names or a group (all, paper)");
    const char *p = spec;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        while (n > 0 && (*p == ' ' || *p == '\t')) p++, n--;
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
        char name[64];
        if (n == 0) return xsa_fail(err, XSA_EBADINPUT, "--tasks '%s': empty name in the list", spec);
        if (n >= sizeof name) return xsa_fail(err, XSA_EBADINPUT, "--tasks: name too long in '%s'", spec);
        {
            memcpy(name, p, n);
            name[n] = '\0';
            int hit = 0;
            for (int i = 0; i < N_TASKS; i++)
                if (strcmp(registry[i].name, name) == 0 || in_group(registry[i].groups, name))
                    want[i] = hit = 1;
            if (!hit) {
                struct sbuf names = {0};
                for (int i = 0; i < N_TASKS; i++) sbuf_printf(&names, "%s%s", i ? ", " : "", registry[i].name);
                xsa_fail(err, XSA_EBADINPUT, "--tasks: unknown task or group '%s'; valid tasks: %s; groups: all, paper",
                         name, names.s ? names.s : "");
                sbuf_free(&names);
                return XSA_EBADINPUT;
            }
        }
        if (!e) break;
        p = e + 1;
    }
    for (int i = 0; i < N_TASKS; i++) {
        if (!want[i]) continue;
        if (*n_out >= max) return xsa_fail(err, XSA_EBADINPUT, "--tasks: more than %d tasks", max);
        out[(*n_out)++] = &registry[i];
    }
    return 0;
}

int task_docs_from_rows(const struct task_def *t, cJSON *const *rows, char *const *where,
                        int n_rows, int limit, struct task_doc **docs, int *n_docs, xsa_error *err) {
    *docs = NULL;
    *n_docs = 0;
    int n = limit > 0 && limit < n_rows ? limit : n_rows;
    struct task_doc *d = xsa_calloc(n > 0 ? (size_t)n : 0, sizeof *d);
    for (int i = 0; i < n; i++) {
        int rc = t->doc_from_row(rows[i], i, &d[i], where ? where[i] : t->name, err);
        if (rc) {
            task_docs_free(d, i);
            return rc;
        }
    }
    *docs = d;
    *n_docs = n;
    return 0;
}

void task_docs_free(struct task_doc *docs, int n) {
    if (!docs) return;
    for (int i = 0; i < n; i++) task_doc_free(&docs[i]);
    free(docs);
}
