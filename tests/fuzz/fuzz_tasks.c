// fuzz_tasks.c: the task data of strangers: canonical JSONL rows (a --data-dir copy, the
// viewer's and the Hub's rows, tasks/rows.c) and the original authors' files (tasks/adapters.c:
// ARC/OpenBookQA/BoolQ/PIQA/SIQA/WinoGrande JSONL with their .lst labels, HellaSwag's JSONL or
// its bzip2 text dump), each row through its task's doc builder (tasks/*.c, tasks/pystr.c).
// Input: one byte choosing the task (mod the registry), then the main file; when the bytes
// "\n--LST--\n" stand in it, what follows them is the labels file. A main file that starts with
// "BZh" is HellaSwag's hellaswag_val_full.txt.bz2. Errors are one line; docs are well formed.
#include <stdint.h>
#include <sys/stat.h>

#include "tasks/adapters.h"
#include "tasks/rows.h"
#include "tasks/task.h"
#include "tests/fuzz/fuzz_util.h"

#define SEP "\n--LST--\n"

static void check_doc(const struct task_doc *d) {
    if (d->n_requests < 1 || d->n_requests > TASK_MAX_CHOICES || (d->gold != -100 && (d->gold < 0 || d->gold >= d->n_requests)))
        abort();
    for (int i = 0; i < d->n_requests; i++)
        if (!d->req[i].context || !d->req[i].continuation || !(d->choice_len[i] >= 0)) abort();
}

// Every row through the task's doc builder, one at a time (as data/load.c checks them).
static void docs_of(const struct task_def *t, cJSON *const *rows, char *const *where, int n) {
    for (int i = 0; i < n; i++) {
        struct task_doc *docs = NULL;
        int nd = 0;
        xsa_error err = {0};
        int rc = task_docs_from_rows(t, rows + i, where ? where + i : NULL, 1, 0, &docs, &nd, &err);
        fuzz_check_error(rc, &err);
        for (int k = 0; k < nd; k++) check_doc(&docs[k]);
        task_docs_free(docs, nd);
    }
}

struct collect {
    cJSON *rows[64];
    int n;
};

static int emit(void *ctx, cJSON *row, const char *where, xsa_error *err) {
    (void)where, (void)err;
    struct collect *c = ctx;
    if (c->n == 64) {  // enough to check
        cJSON_Delete(row);
        return 0;
    }
    c->rows[c->n++] = row;
    return 0;
}

static void rm_dir(const char *dir) {
    static const char *const names[] = {"ARC-Easy-Test.jsonl", "ARC-Challenge-Test.jsonl", "test.jsonl", "lambada_test.jsonl",
                                        "valid.jsonl", "valid-labels.lst", "dev.jsonl", "dev-labels.lst", "val.jsonl",
                                        "hellaswag_val.jsonl", "hellaswag_val_full.txt.bz2"};
    char p[400];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int n_tasks;
    const struct task_def *reg = task_registry(&n_tasks);
    const struct task_def *t = &reg[data[0] % n_tasks];
    const char *body = (const char *)data + 1;
    size_t n = size - 1;
    const char *sep = memmem(body, n, SEP, strlen(SEP));
    size_t main_n = sep ? (size_t)(sep - body) : n;

    // 1. The main file as canonical rows (keys ordered by the schema, serialized, hashed).
    struct task_rows r;
    xsa_error err = {0};
    int rc = task_rows_parse_jsonl("rows.jsonl", body, main_n, &r, &err);
    fuzz_check_error(rc, &err);
    if (!rc) {
        for (int i = 0; i < r.n; i++) task_row_order_keys(r.row[i], t->schema);
        docs_of(t, r.row, r.where, r.n);
        char sha[65];
        xsa_error e2 = {0};
        fuzz_check_error(task_rows_sha256(&r, sha, &e2), &e2);
        task_rows_free(&r);
    }

    // 2. The same bytes as the task's original files.
    char dir[256], p[400];
    fuzz_path(dir, sizeof dir, "tasks");
    mkdir(dir, 0700);
    rm_dir(dir);
    const char *tn = t->name, *file = NULL, *labels = NULL;
    if (!strcmp(tn, "arc_easy")) file = "ARC-Easy-Test.jsonl";
    else if (!strcmp(tn, "arc_challenge")) file = "ARC-Challenge-Test.jsonl";
    else if (!strcmp(tn, "openbookqa")) file = "test.jsonl";
    else if (!strcmp(tn, "lambada_openai")) file = "lambada_test.jsonl";
    else if (!strcmp(tn, "piqa")) file = "valid.jsonl", labels = "valid-labels.lst";
    else if (!strcmp(tn, "social_iqa") || !strcmp(tn, "winogrande")) file = "dev.jsonl", labels = "dev-labels.lst";
    else if (!strcmp(tn, "boolq")) file = main_n && body[0] == '{' && data[0] & 0x80 ? "dev.jsonl" : "val.jsonl";
    else if (!strcmp(tn, "hellaswag")) file = main_n >= 3 && !memcmp(body, "BZh", 3) ? "hellaswag_val_full.txt.bz2" : "hellaswag_val.jsonl";
    if (!file) return 0;
    snprintf(p, sizeof p, "%s/%s", dir, file);
    fuzz_write(p, body, main_n);
    if (labels && sep) {
        snprintf(p, sizeof p, "%s/%s", dir, labels);
        fuzz_write(p, sep + strlen(SEP), n - main_n - strlen(SEP));
    }
    struct collect c = {.n = 0};
    int pre = 0;
    xsa_error e3 = {0};
    rc = task_adapt_original_dir(t, dir, emit, &c, &pre, &e3);
    fuzz_check_error(rc, &e3);
    for (int i = 0; i < c.n; i++) task_row_order_keys(c.rows[i], t->schema);
    docs_of(t, c.rows, NULL, c.n);
    for (int i = 0; i < c.n; i++) cJSON_Delete(c.rows[i]);
    rm_dir(dir);
    return 0;
}
