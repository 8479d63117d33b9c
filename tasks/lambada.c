// lambada.c: LAMBADA, OpenAI version (lm_eval/tasks/lambada/lambada_openai.yaml).
// output_type loglikelihood: one request (text minus its last ' '-separated word,
// ' ' + last word); the target already starts with the space, so no delimiter is added.
#include <string.h>

#include "tasks/docbuild.h"
#include "tasks/pystr.h"

int lambada_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                         xsa_error *err) {
    const char *text;
    int rc;
    if ((rc = row_get_string(row, "text", where, &text, err))) return rc;
    const char *sp = strrchr(text, ' ');  // split(' ') on U+0020 only
    size_t ctx_n = sp ? (size_t)(sp - text) : 0;
    const char *word = sp ? sp + 1 : text;
    size_t wn = strlen(word);
    if ((rc = doc_alloc(out, doc_id, 1, err))) return rc;
    doc_set_request(out, 0, text, ctx_n, " ", word, wn, (double)pystr_len(word, wn));
    out->gold = 0;
    return 0;
}
