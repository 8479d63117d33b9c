// winogrande.c: WinoGrande xl (lm_eval/tasks/winogrande/default.yaml + preprocess_winogrande.py).
// Multiple input: contexts sentence[:i] + option_k for the first '_' at i, one shared
// continuation ' ' + sentence[i+1:].strip(); gold = {"1": 0, "2": 1}[answer].
#include <string.h>

#include "common/vec.h"
#include "tasks/docbuild.h"
#include "tasks/pystr.h"

int winogrande_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                            xsa_error *err) {
    const char *sentence, *opt[2], *answer;
    int rc;
    if ((rc = row_get_string(row, "sentence", where, &sentence, err))) return rc;
    if ((rc = row_get_string(row, "option1", where, &opt[0], err))) return rc;
    if ((rc = row_get_string(row, "option2", where, &opt[1], err))) return rc;
    if ((rc = row_get_string(row, "answer", where, &answer, err))) return rc;
    int gold;
    if (strcmp(answer, "1") == 0) gold = 0;
    else if (strcmp(answer, "2") == 0) gold = 1;
    else
        return xsa_fail(err, XSA_EBADINPUT,
                        "%s: field 'answer' must be \"1\" or \"2\" (lm-eval raises KeyError otherwise)", where);
    const char *blank = strchr(sentence, '_');
    if (!blank)
        return xsa_fail(err, XSA_EBADINPUT, "%s: field 'sentence' has no '_' blank", where);
    size_t pre = (size_t)(blank - sentence);
    const char *tail = blank + 1;
    size_t tn = strlen(tail), a = pystr_lstrip_off(tail, tn), b = pystr_rstrip_len(tail, tn);
    if (b < a) b = a;
    if ((rc = doc_alloc(out, doc_id, 2, err))) return rc;
    for (int k = 0; k < 2; k++) {
        struct sbuf ctx = {0};
        sbuf_append(&ctx, sentence, pre);
        sbuf_puts(&ctx, opt[k]);
        doc_set_request(out, k, ctx.s, ctx.n, " ", tail + a, b - a, (double)pystr_len(ctx.s, ctx.n));
        sbuf_free(&ctx);
    }
    out->gold = gold;
    return 0;
}
