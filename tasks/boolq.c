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
    struct sbuf ctx = {0};
    if (sbuf_puts(&ctx, passage) || sbuf_puts(&ctx, "\nQuestion: ") || sbuf_puts(&ctx, question) ||
        sbuf_puts(&ctx, "?\nAnswer:")) {
        sbuf_free(&ctx);
        return xsa_fail(err, XSA_ERUNTIME, "out of memory building doc %d", doc_id);
    }
    static const char *const choices[2] = {"no", "yes"};
    if ((rc = doc_alloc(out, doc_id, 2, err))) {
        sbuf_free(&ctx);
        return rc;
    }
    for (int i = 0; i < 2 && !rc; i++)
        rc = doc_set_request(out, i, ctx.s, ctx.n, " ", choices[i], strlen(choices[i]),
                             (double)strlen(choices[i]), err);
    sbuf_free(&ctx);
    if (rc) return doc_fail(out, rc);
    out->gold = doc_gold_in_range(label, 2);
    return 0;
}
