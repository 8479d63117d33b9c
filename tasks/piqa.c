// piqa.c: PIQA (lm_eval/tasks/piqa/piqa.yaml).
// Context "Question: {{goal}}\nAnswer:", choices [sol1, sol2], gold = label.
#include <string.h>

#include "common/vec.h"
#include "tasks/docbuild.h"
#include "tasks/pystr.h"

int piqa_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                      xsa_error *err) {
    const char *goal, *sol[2];
    int label, rc;
    if ((rc = row_get_string(row, "goal", where, &goal, err))) return rc;
    if ((rc = row_get_string(row, "sol1", where, &sol[0], err))) return rc;
    if ((rc = row_get_string(row, "sol2", where, &sol[1], err))) return rc;
    if ((rc = row_get_int(row, "label", where, &label, err))) return rc;
    if ((rc = doc_alloc(out, doc_id, 2, err))) return rc;
    struct sbuf ctx = {0};
    sbuf_printf(&ctx, "Question: %s\nAnswer:", goal);
    for (int i = 0; i < 2; i++) {
        size_t n = strlen(sol[i]);
        doc_set_request(out, i, ctx.s, ctx.n, " ", sol[i], n, (double)pystr_len(sol[i], n));
    }
    sbuf_free(&ctx);
    out->gold = doc_gold_in_range(label, 2);
    return 0;
}
