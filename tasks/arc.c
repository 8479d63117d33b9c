// arc.c: ARC-Easy / ARC-Challenge (lm_eval/tasks/arc/arc_easy.yaml).
// Context "Question: {{question}}\nAnswer:", choices choices.text, gold
// choices.label.index(answerKey). Also the labeled-choices builder OpenBookQA shares.
#include <stdio.h>
#include <string.h>

#include "common/vec.h"
#include "tasks/docbuild.h"
#include "tasks/pystr.h"

int mc_labeled_doc(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                   const char *ctx, size_t ctx_n, const char *key, size_t key_n, xsa_error *err) {
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(row, "choices");
    if (!choices) return xsa_fail(err, XSA_EBADINPUT, "%s: field 'choices' missing", where);
    if (!cJSON_IsObject(choices))
        return xsa_fail(err, XSA_EBADINPUT, "%s: field 'choices' must be an object {text: [...], label: [...]}", where);
    const cJSON *texts, *labels;
    int n_text, n_label, rc;
    if ((rc = row_get_string_array(choices, "text", where, &texts, &n_text, err))) return rc;
    if ((rc = row_get_string_array(choices, "label", where, &labels, &n_label, err))) return rc;
    if (n_text == 0) return xsa_fail(err, XSA_EBADINPUT, "%s: field 'choices.text' is empty", where);
    int idx = 0;
    const cJSON *l = labels->child;
    for (; l; l = l->next, idx++)
        if (strlen(l->valuestring) == key_n && memcmp(l->valuestring, key, key_n) == 0) break;
    if (!l)
        return xsa_fail(err, XSA_EBADINPUT,
                        "%s: answerKey '%.*s' is not one of choices.label (lm-eval raises ValueError here)",
                        where, (int)(key_n > 40 ? 40 : key_n), key);
    if ((rc = doc_alloc(out, doc_id, n_text, err))) return rc;
    int i = 0;
    for (const cJSON *t = texts->child; t; t = t->next, i++) {
        size_t tn = strlen(t->valuestring);
        doc_set_request(out, i, ctx, ctx_n, " ", t->valuestring, tn, (double)pystr_len(t->valuestring, tn));
    }
    out->gold = doc_gold_in_range(idx, n_text);
    return 0;
}

int arc_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                     xsa_error *err) {
    const char *q, *key;
    int rc;
    if ((rc = row_get_string(row, "question", where, &q, err))) return rc;
    if ((rc = row_get_string(row, "answerKey", where, &key, err))) return rc;
    struct sbuf ctx = {0};
    sbuf_printf(&ctx, "Question: %s\nAnswer:", q);
    rc = mc_labeled_doc(row, doc_id, out, where, ctx.s, ctx.n, key, strlen(key), err);
    sbuf_free(&ctx);
    return rc;
}
