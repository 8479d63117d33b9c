// openbookqa.c: OpenBookQA main (lm_eval/tasks/openbookqa/openbookqa.yaml).
// Context is the raw question_stem (a feature name, so no template and no prefix);
// gold = choices.label.index(answerKey.lstrip()).
#include <string.h>

#include "tasks/docbuild.h"
#include "tasks/pystr.h"

int openbookqa_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                            xsa_error *err) {
    const char *q, *key;
    int rc;
    if ((rc = row_get_string(row, "question_stem", where, &q, err))) return rc;
    if ((rc = row_get_string(row, "answerKey", where, &key, err))) return rc;
    size_t kn = strlen(key), off = pystr_lstrip_off(key, kn);
    return mc_labeled_doc(row, doc_id, out, where, q, strlen(q), key + off, kn - off, err);
}
