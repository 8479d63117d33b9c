// task_metrics.c: a task's per-document and aggregate metrics from its requests' scores, as
// lm-eval computes them (task_metrics.h).
#include "eval/task_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#include "eval/metrics.h"

int task_metrics_compute(const struct task_def *t, const struct task_doc *docs, int n, const struct sched_result *res,
                         const int *first_req, int n_threads, struct task_result *tr, xsa_error *err) {
    // Metric names in lm-eval order.
    char list[64];
    snprintf(list, sizeof list, "%s", t->metrics);
    tr->n_metrics = 0;
    for (char *tok = strtok(list, ","); tok && tr->n_metrics < RESULTS_MAX_METRICS; tok = strtok(NULL, ",")) {
        int k = tr->n_metrics++;
        snprintf(tr->metric[k], sizeof tr->metric[k], "%s", tok);
        tr->higher_is_better[k] = strcmp(tok, "perplexity") != 0;
        tr->per_doc[k] = xsa_malloc((size_t)n * sizeof(double));
    }
    tr->doc_id = xsa_malloc((size_t)n * sizeof *tr->doc_id);
    int i_acc = results_metric_index(tr, "acc"), i_norm = results_metric_index(tr, "acc_norm");
    int i_ppl = results_metric_index(tr, "perplexity");
    double lls[TASK_MAX_CHOICES];
    for (int d = 0; d < n; d++) {
        const struct task_doc *doc = &docs[d];
        const struct sched_result *r = &res[first_req[d]];
        tr->doc_id[d] = doc->doc_id;
        double acc = 0, acc_norm = 0;
        if (t->output == TASK_LOGLIKELIHOOD) {
            double ppl_item;
            metrics_ll_doc(r[0].logprob, r[0].greedy, &ppl_item, &acc);
            if (i_ppl >= 0) tr->per_doc[i_ppl][d] = ppl_item;
        } else {
            for (int c = 0; c < doc->n_requests; c++) lls[c] = r[c].logprob;
            int pred, pred_norm;
            if (metrics_mc_doc(lls, doc->choice_len, doc->n_requests, doc->gold, &acc, &acc_norm, &pred, &pred_norm))
                return xsa_fail(err, XSA_EBADINPUT, "%s doc %d has no choices", t->name, doc->doc_id);
        }
        if (i_acc >= 0) tr->per_doc[i_acc][d] = acc;
        if (i_norm >= 0) tr->per_doc[i_norm][d] = acc_norm;
    }
    for (int k = 0; k < tr->n_metrics; k++) {
        if (k == i_ppl) {
            tr->value[k] = metrics_perplexity(tr->per_doc[k], n);
            tr->stderr_[k] = n > 1 ? metrics_perplexity_bootstrap_stderr(tr->per_doc[k], n, METRICS_BOOTSTRAP_ITERS, n_threads) : NAN;
        } else {
            tr->value[k] = metrics_mean(tr->per_doc[k], n);
            tr->stderr_[k] = metrics_mean_stderr(tr->per_doc[k], n);
        }
    }
    snprintf(tr->preferred_metric, sizeof tr->preferred_metric, "%s", t->preferred_metric);
    return 0;
}
