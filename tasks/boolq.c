// boolq.c: BoolQ, SuperGLUE text (lm_eval/tasks/super_glue/boolq/default.yaml).
// Context "{{passage}}\nQuestion: {{question}}?\nAnswer:", choices ["no", "yes"], gold = label.
#include <string.h>

#include "common/vec.h"
#include "tasks/docbuild.h"

int boolq_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                       xsa_error *err) {
    const char *passage, *question;
    int label, rc;
    if ((rc = row_get_string(row, "passage", where, &passage, err))) return rc;
    if ((rc = row_get_string(row, "question", where, &question, err))) return rc;
    if ((rc = row_get_int(row, "label", where, &label, err))) return rc;
    if ((rc = doc_alloc(out, doc_id, 2, err))) return rc;
    struct sbuf ctx = {0};
    sbuf_printf(&ctx, "%s\nQuestion: %s?\nAnswer:", passage, question);
    static const char *const choices[2] = {"no", "yes"};
    for (int i = 0; i < 2; i++)
        doc_set_request(out, i, ctx.s, ctx.n, " ", choices[i], strlen(choices[i]), (double)strlen(choices[i]));
    sbuf_free(&ctx);
    out->gold = doc_gold_in_range(label, 2);
    return 0;
}
