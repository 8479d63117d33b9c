// samples.c: see samples.h. Written whole, then renamed into place (never a partial file).
#include "eval/samples.h"

#include <cJSON.h>
#include <stdlib.h>

#include "common/fileio.h"
#include "eval/metrics.h"

int samples_write(const char *path, const struct task_def *t, const struct task_doc *docs, int n_docs,
                  const struct fewshot *fs,
                  const struct encoded_request *enc, const struct sched_result *res, const int *first_req,
                  const struct task_result *tr, xsa_error *err) {
    struct sbuf out = {0};
    int rc = 0;
    for (int d = 0; d < n_docs && !rc; d++) {
        const struct task_doc *doc = &docs[d];
        cJSON *o = cJSON_CreateObject();
        cJSON *reqs = cJSON_CreateArray();
        double lls[TASK_MAX_CHOICES];  // doc_alloc caps n_requests
        int nr = doc->n_requests;
        cJSON_AddNumberToObject(o, "doc_id", doc->doc_id);
        for (int c = 0; c < doc->n_requests; c++) {
            int k = first_req[d] + c;
            cJSON *r = cJSON_CreateObject();
            struct sbuf ctx = {0};
            if (fs && (rc = fewshot_context(fs, d, &ctx, err))) {
                sbuf_free(&ctx);
                cJSON_Delete(r);
                cJSON_Delete(reqs);
                cJSON_Delete(o);
                sbuf_free(&out);
                return rc;
            }
            sbuf_puts(&ctx, doc->req[c].context);
            cJSON_AddStringToObject(r, "context", ctx.s);
            sbuf_free(&ctx);
            cJSON_AddStringToObject(r, "continuation", doc->req[c].continuation);
            cJSON_AddNumberToObject(r, "input_tokens", (double)enc[k].input.n);
            cJSON_AddNumberToObject(r, "continuation_tokens", (double)enc[k].cont.n);
            cJSON_AddNumberToObject(r, "logprob", res[k].logprob);
            cJSON_AddBoolToObject(r, "greedy", res[k].greedy);
            cJSON_AddBoolToObject(r, "truncated", enc[k].truncated);
            cJSON_AddItemToArray(reqs, r);
            if (c < 64) lls[c] = res[k].logprob;
        }
        cJSON_AddItemToObject(o, "requests", reqs);
        if (t->output != TASK_LOGLIKELIHOOD) {
            // The predictions the metrics counted (one rule for both, eval/metrics.c).
            int pred = -1, pred_norm = -1;
            if (doc->choice_len) metrics_mc_doc(lls, doc->choice_len, nr, doc->gold, NULL, NULL, &pred, &pred_norm);
            else pred = metrics_argmax(lls, nr);
            cJSON_AddNumberToObject(o, "pred", pred);
            if (doc->choice_len) cJSON_AddNumberToObject(o, "pred_norm", pred_norm);
            cJSON_AddNumberToObject(o, "gold", doc->gold);
        }
        for (int m = 0; m < tr->n_metrics; m++) cJSON_AddNumberToObject(o, tr->metric[m], tr->per_doc[m][d]);
        char *line = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        sbuf_puts(&out, line);
        sbuf_puts(&out, "\n");
        free(line);
    }
    if (!rc) rc = file_write_atomic(path, out.s ? out.s : "", out.n, err);
    sbuf_free(&out);
    return rc;
}
