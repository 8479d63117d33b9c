// ppl_summary.c: overall and per-position-bucket numbers of scored targets (ppl.h), with the
// cluster-robust t interval of eval/stats.h over units (documents, a stream's windows or chunks).
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "eval/ppl.h"
#include "eval/stats.h"

// Mean nats per target of each model over targets with ctx in [lo, hi), and (two models) the
// difference B - A of those means with a cluster-robust t interval over units
// (stats_cluster_ratio_ci); no interval with fewer than 2 units.
static int bucket_stats(const struct ppl_scores *s, int n_models, int lo, int hi, double level, struct ppl_bucket *b,
                        xsa_error *err) {
    int U = s[0].n_units;
    double *sum = xsa_calloc((size_t)(U ? U : 1) * 2, sizeof *sum);
    long *cnt = xsa_calloc((size_t)(U ? U : 1), sizeof *cnt);
    double tot[2] = {0, 0};
    memset(b, 0, sizeof *b);
    b->lo = lo, b->hi = hi;
    for (size_t t = 0; t < s[0].n; t++) {
        if (s[0].ctx[t] < lo || s[0].ctx[t] >= hi) continue;
        b->n++;
        cnt[s[0].unit[t]]++;
        for (int m = 0; m < n_models; m++) {
            tot[m] += s[m].nll[t];
            sum[(size_t)s[0].unit[t] * 2 + m] += s[m].nll[t];
        }
    }
    for (int m = 0; m < 2; m++) b->nll[m] = m < n_models && b->n ? tot[m] / (double)b->n : NAN;
    b->delta = b->dlo = b->dhi = b->se = b->df = NAN;
    int rc = 0;
    if (n_models == 2 && b->n) {
        // Per-unit sums and target counts: the delta is the difference of the two per-target
        // means (the table's), and the interval treats whole units as the independent draws.
        double *ua = xsa_malloc((size_t)U * sizeof *ua), *ub = xsa_malloc((size_t)U * sizeof *ub),
               *uw = xsa_malloc((size_t)U * sizeof *uw);
        for (int u = 0; u < U; u++)
            if (cnt[u]) {
                ua[b->n_units] = sum[(size_t)u * 2];
                ub[b->n_units] = sum[(size_t)u * 2 + 1];
                uw[b->n_units++] = (double)cnt[u];
            }
        struct stats_ratio_ci ci;
        rc = stats_cluster_ratio_ci(ua, ub, uw, b->n_units, level, &ci);
        if (rc) rc = xsa_fail(err, rc, "interval over %d units failed (level %g)", b->n_units, level);
        else b->delta = ci.delta, b->dlo = ci.lo, b->dhi = ci.hi, b->se = ci.se, b->df = ci.df;
        b->real = !rc && b->n_units >= 2 && (b->dlo > 0 || b->dhi < 0);  // (one unit: NAN ends, no verdict)
        free(ua);
        free(ub);
        free(uw);
    } else {
        for (int u = 0; u < U; u++) b->n_units += cnt[u] > 0;
    }
    free(sum);
    free(cnt);
    return rc;
}

int ppl_summarize(const struct ppl_scores *s, int n_models, const struct ppl_kl *kl, const int *edges,
                  int n_edges, int context, double level, struct ppl_summary *out, xsa_error *err) {
    memset(out, 0, sizeof *out);
    out->n_models = n_models;
    out->n = (long)s[0].n;
    out->bytes = s[0].bytes;
    if (!s[0].n) return xsa_fail(err, XSA_EBADINPUT, "nothing to score: every document has under 2 tokens, or the token stream (--tokens-file) is shorter than one window of --context + 1 tokens");
    struct ppl_bucket all;
    int rc = bucket_stats(s, n_models, INT_MIN, INT_MAX, level, &all, err);  // (every target, whatever its ctx)
    if (rc) return rc;
    for (int m = 0; m < 2; m++) {
        out->nll[m] = all.nll[m];
        out->bits[m] = all.nll[m] / log(2.0);
        out->ppl[m] = exp(all.nll[m]);
        out->bpb[m] = isfinite(out->bytes) && out->bytes > 0 ? all.nll[m] * (double)all.n / log(2.0) / out->bytes
                                                              : NAN;
        long g = 0;
        for (size_t t = 0; m < n_models && t < s[m].n; t++) g += s[m].greedy[t];
        out->acc[m] = m < n_models ? (double)g / (double)s[m].n : NAN;
    }
    out->n_units = all.n_units;
    out->delta = all.delta, out->dlo = all.dlo, out->dhi = all.dhi, out->se = all.se, out->df = all.df;
    out->real = all.real;
    int lo = 1;
    for (int i = 0; i <= n_edges && !rc; i++) {
        int hi = i < n_edges ? edges[i] : context + 1;
        if (hi <= lo || (i < n_edges && hi > context)) continue;
        if (out->n_buckets == PPL_MAX_BUCKETS)
            return xsa_fail(err, XSA_EBADINPUT, "more than %d position buckets", PPL_MAX_BUCKETS);
        rc = bucket_stats(s, n_models, lo, hi, level, &out->bucket[out->n_buckets++], err);
        lo = hi;
    }
    if (!rc && kl && kl->kl) {
        out->has_kl = 1;
        double sum = 0;
        long agree = 0;
        for (size_t t = 0; t < s[0].n; t++) {
            sum += kl->kl[t];
            if (kl->kl[t] > out->kl_max) out->kl_max = kl->kl[t];
            agree += kl->top_a[t] == kl->top_b[t];
        }
        out->kl_mean = sum / (double)s[0].n;
        out->agree = (double)agree / (double)s[0].n;
    }
    return rc;
}
