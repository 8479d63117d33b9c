// load_docs.h: a task's documents from a --data-dir, through the path the program takes
// (data_load_task, then task_docs_from_rows as eval/run.c does), for tests of tasks and
// adapters. Pins are not enforced (fixtures hold fewer rows than the real splits).
#ifndef XSA_TESTS_LOAD_DOCS_H
#define XSA_TESTS_LOAD_DOCS_H

#include <stdio.h>
#include <stdlib.h>

#include "common/xalloc.h"
#include "data/data.h"
#include "tasks/task.h"

// docs: the first `limit` docs (0: all); sha: the digest over every row; pre: preprocessed.
static inline int test_load_docs(const struct task_def *t, const char *data_dir, int limit, struct task_doc **docs,
                                 int *n, int *pre, char sha[65], xsa_error *err) {
    struct data_options o = {.data_dir = data_dir, .offline = 1, .quiet = 1, .allow_data_change = 1};
    cJSON **rows = NULL;
    int n_rows = 0;
    struct data_provenance prov = {0};
    *docs = NULL;
    *n = 0;
    int rc = data_load_task(t, &o, &rows, &n_rows, &prov, err);
    if (sha) snprintf(sha, 65, "%s", prov.sha256);
    if (pre) *pre = prov.preprocessed;
    char **where = rc ? NULL : xsa_calloc((size_t)n_rows + 1, sizeof *where);
    for (int i = 0; where && i < n_rows; i++) {
        char buf[600];
        snprintf(buf, sizeof buf, "%s:%d", prov.source, i + 1);
        where[i] = xsa_strdup(buf);
    }
    if (!rc) rc = task_docs_from_rows(t, rows, where, n_rows, limit, docs, n, err);
    for (int i = 0; where && i < n_rows; i++) free(where[i]);
    free(where);
    data_rows_free(rows, n_rows);
    return rc;
}

#endif
