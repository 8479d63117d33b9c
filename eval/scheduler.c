// scheduler.c: deduplicate, share prefixes, pack, score (see scheduler.h).
#include "eval/scheduler.h"

#include <stdlib.h>
#include <string.h>

// One distinct request after deduplication.
struct unit {
    int req;           // representative request index
    int row;           // row it is scored in
    int branch_start;  // packed offset of its branch within the row (-1: entirely in the prefix)
    double logprob;
    int greedy;
};

struct row {
    int first_unit, n_units;  // units (contiguous in `order`) scored in this row
    int prefix_len;           // shared prefix length
    int n_tokens;             // prefix + all distinct branches
};

static uint64_t hash_tokens(const int32_t *a, int n, uint64_t h) {
    for (int i = 0; i < n; i++) h = (h ^ (uint32_t)a[i]) * 0x100000001b3ULL;
    return h ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL;
}

static int same_request(const struct sched_request *a, const struct sched_request *b) {
    return a->n_input == b->n_input && a->n_cont == b->n_cont &&
           !memcmp(a->input, b->input, (size_t)a->n_input * sizeof *a->input) &&
           !memcmp(a->cont, b->cont, (size_t)a->n_cont * sizeof *a->cont);
}

// Maps each request to its unit; returns the number of units. unit_of: (n), units: (n).
static int dedupe(const struct sched_request *reqs, int n, int *unit_of, struct unit *units) {
    size_t cap = 16;
    while (cap < (size_t)n * 2) cap *= 2;
    int *slot = malloc(cap * sizeof *slot);
    if (!slot) return -1;
    for (size_t i = 0; i < cap; i++) slot[i] = -1;
    int n_units = 0;
    for (int r = 0; r < n; r++) {
        uint64_t h = hash_tokens(reqs[r].cont, reqs[r].n_cont, hash_tokens(reqs[r].input, reqs[r].n_input, 1469598103934665603ULL));
        size_t s = h & (cap - 1);
        while (slot[s] >= 0 && !same_request(&reqs[units[slot[s]].req], &reqs[r])) s = (s + 1) & (cap - 1);
        if (slot[s] < 0) {
            slot[s] = n_units;
            memset(&units[n_units], 0, sizeof units[n_units]);
            units[n_units].req = r;
            n_units++;
        }
        unit_of[r] = slot[s];
    }
    free(slot);
    return n_units;
}

static int lcp(const int32_t *a, int na, const int32_t *b, int nb) {
    int k = 0;
    while (k < na && k < nb && a[k] == b[k]) k++;
    return k;
}

static int cmp_unit_group(const void *pa, const void *pb, void *ctx) {
    const struct sched_request *reqs = ctx;
    const struct unit *a = pa, *b = pb;
    int ga = reqs[a->req].group, gb = reqs[b->req].group;
    if (ga != gb) return ga < gb ? -1 : 1;
    return a->req < b->req ? -1 : a->req > b->req;
}

// Rows by decreasing size: big rows first keeps batches full and any out-of-memory early.
static int cmp_row_size(const void *pa, const void *pb) {
    const struct row *a = pa, *b = pb;
    if (a->n_tokens != b->n_tokens) return a->n_tokens > b->n_tokens ? -1 : 1;
    return a->first_unit < b->first_unit ? -1 : a->first_unit > b->first_unit;
}

struct batch_arrays {  // backing store of one score_batch
    int32_t *token, *pos, *s0lo, *s0hi, *s1lo, *s1hi;  // (T)
    int32_t *eidx, *etgt;                              // (S)
    int32_t *eunit;                                    // (S) unit each entry belongs to
    int cap_t, cap_s;
};

static int batch_reserve(struct batch_arrays *b, int t, int s) {
    if (t > b->cap_t) {
        int32_t **arr[] = {&b->token, &b->pos, &b->s0lo, &b->s0hi, &b->s1lo, &b->s1hi};
        for (size_t i = 0; i < 6; i++) {
            int32_t *p = realloc(*arr[i], (size_t)t * sizeof **arr[i]);
            if (!p) return -1;
            *arr[i] = p;
        }
        b->cap_t = t;
    }
    if (s > b->cap_s) {
        int32_t **arr[] = {&b->eidx, &b->etgt, &b->eunit};
        for (size_t i = 0; i < 3; i++) {
            int32_t *p = realloc(*arr[i], (size_t)s * sizeof **arr[i]);
            if (!p) return -1;
            *arr[i] = p;
        }
        b->cap_s = s;
    }
    return 0;
}

static void batch_arrays_free(struct batch_arrays *b) {
    free(b->token); free(b->pos); free(b->s0lo); free(b->s0hi); free(b->s1lo); free(b->s1hi);
    free(b->eidx); free(b->etgt); free(b->eunit);
}

int scheduler_score(struct backend *be, const struct sched_request *reqs, int n, const struct sched_options *opt,
                    struct sched_result *out, struct sched_stats *stats, xsa_error *err) {
    memset(stats, 0, sizeof *stats);
    stats->requests = n;
    if (n == 0) return 0;
    for (int r = 0; r < n; r++) {
        if (reqs[r].n_input < 1 || reqs[r].n_cont < 1 || reqs[r].n_cont > reqs[r].n_input)
            return xsa_fail(err, XSA_EBADINPUT, "request %d: input of %d tokens cannot score a continuation of %d",
                            r, reqs[r].n_input, reqs[r].n_cont);
        stats->tokens_requested += reqs[r].n_input;
    }
    int rc = 0;
    int *unit_of = malloc((size_t)n * sizeof *unit_of);
    struct unit *units = malloc((size_t)n * sizeof *units);
    int *unit_pos = malloc((size_t)n * sizeof *unit_pos);  // unit index -> position in sorted units
    struct row *rows = malloc((size_t)n * sizeof *rows);
    struct batch_arrays ba = {0};
    if (!unit_of || !units || !unit_pos || !rows) {
        rc = xsa_fail(err, XSA_ERUNTIME, "out of memory scheduling %d requests", n);
        goto done;
    }
    int n_units = dedupe(reqs, n, unit_of, units);
    if (n_units < 0) { rc = xsa_fail(err, XSA_ERUNTIME, "out of memory"); goto done; }
    stats->unique_requests = n_units;

    // Group units into rows: sort by group, then each group's units form one row (sharing),
    // or each unit its own row.
    // Keep each unit's identity through the sort: sort a copy and remap unit_of afterwards.
    struct unit *sorted = malloc((size_t)n_units * sizeof *sorted);
    if (!sorted) { rc = xsa_fail(err, XSA_ERUNTIME, "out of memory"); goto done; }
    for (int u = 0; u < n_units; u++) { sorted[u] = units[u]; sorted[u].row = u; }  // row temporarily = old index
    qsort_r(sorted, (size_t)n_units, sizeof *sorted, cmp_unit_group, (void *)reqs);
    for (int u = 0; u < n_units; u++) unit_pos[sorted[u].row] = u;
    for (int r = 0; r < n; r++) unit_of[r] = unit_pos[unit_of[r]];
    memcpy(units, sorted, (size_t)n_units * sizeof *units);
    free(sorted);

    int n_rows = 0;
    for (int u = 0; u < n_units;) {
        int end = u + 1;
        if (opt->share)
            while (end < n_units && reqs[units[end].req].group == reqs[units[u].req].group) end++;
        const struct sched_request *first = &reqs[units[u].req];
        int p = first->n_input;
        for (int v = u + 1; v < end; v++) {
            const struct sched_request *q = &reqs[units[v].req];
            int k = lcp(first->input, p, q->input, q->n_input);
            if (k < p) p = k;
        }
        if (p == 0) end = u + 1, p = first->n_input;  // nothing shared: score alone
        struct row *row = &rows[n_rows];
        row->first_unit = u;
        row->n_units = end - u;
        row->prefix_len = p;
        row->n_tokens = p;
        // Branches: each unit's remainder, identical remainders stored once.
        for (int v = u; v < end; v++) {
            const struct sched_request *q = &reqs[units[v].req];
            units[v].row = n_rows;
            units[v].branch_start = -1;
            if (q->n_input == p) continue;
            for (int w = u; w < v; w++) {
                const struct sched_request *o = &reqs[units[w].req];
                if (units[w].branch_start >= 0 && o->n_input == q->n_input &&
                    !memcmp(o->input + p, q->input + p, (size_t)(q->n_input - p) * sizeof *q->input)) {
                    units[v].branch_start = units[w].branch_start;
                    break;
                }
            }
            if (units[v].branch_start < 0) {
                units[v].branch_start = row->n_tokens;
                row->n_tokens += q->n_input - p;
            }
        }
        n_rows++;
        u = end;
    }
    stats->rows = n_rows;
    qsort(rows, (size_t)n_rows, sizeof *rows, cmp_row_size);

    long done_units = 0;
    for (int r0 = 0; r0 < n_rows && !rc;) {
        // Pack rows [r0, r1) into one batch.
        int t = 0, s = 0, r1 = r0;
        while (r1 < n_rows && (r1 == r0 || t + rows[r1].n_tokens <= opt->batch_tokens)) {
            t += rows[r1].n_tokens;
            for (int v = rows[r1].first_unit; v < rows[r1].first_unit + rows[r1].n_units; v++) s += reqs[units[v].req].n_cont;
            r1++;
        }
        if (batch_reserve(&ba, t, s)) { rc = xsa_fail(err, XSA_ERUNTIME, "out of memory for a batch of %d tokens", t); break; }
        int ti = 0, si = 0;
        for (int r = r0; r < r1; r++) {
            const struct row *row = &rows[r];
            int start = ti, p = row->prefix_len;
            const struct sched_request *first = &reqs[units[row->first_unit].req];
            for (int i = 0; i < p; i++, ti++) {
                ba.token[ti] = first->input[i];
                ba.pos[ti] = i;
                ba.s0lo[ti] = start; ba.s0hi[ti] = ti + 1;
                ba.s1lo[ti] = ba.s1hi[ti] = 0;
            }
            for (int v = row->first_unit; v < row->first_unit + row->n_units; v++) {
                const struct sched_request *q = &reqs[units[v].req];
                int bs = units[v].branch_start;
                if (bs >= 0 && start + bs == ti) {  // first unit owning this branch writes it
                    for (int i = p; i < q->n_input; i++, ti++) {
                        ba.token[ti] = q->input[i];
                        ba.pos[ti] = i;
                        ba.s0lo[ti] = start; ba.s0hi[ti] = start + p;
                        ba.s1lo[ti] = start + bs; ba.s1hi[ti] = ti + 1;
                    }
                }
                for (int j = 0; j < q->n_cont; j++, si++) {
                    int k = q->n_input - q->n_cont + j;  // input position predicting cont[j]
                    ba.eidx[si] = k < p ? start + k : start + bs + (k - p);
                    ba.etgt[si] = q->cont[j];
                    ba.eunit[si] = v;
                }
            }
        }
        struct score_batch b = {
            .n_tokens = ti, .token = ba.token, .pos = ba.pos, .span0_lo = ba.s0lo, .span0_hi = ba.s0hi,
            .span1_lo = ba.s1lo, .span1_hi = ba.s1hi, .n_entries = si, .entry_index = ba.eidx, .entry_target = ba.etgt,
        };
        float *lp = malloc((size_t)si * sizeof *lp);
        uint8_t *gr = malloc((size_t)si);
        if (!lp || !gr) rc = xsa_fail(err, XSA_ERUNTIME, "out of memory");
        if (!rc) rc = be->score(be, &b, lp, gr, err);
        if (!rc) {
            // Sum each unit's entries in continuation order (entries were written in that order).
            for (int e = 0; e < si; e++) {
                struct unit *un = &units[ba.eunit[e]];
                if (e == 0 || ba.eunit[e - 1] != ba.eunit[e]) { un->logprob = 0; un->greedy = 1; }
                un->logprob += (double)lp[e];
                un->greedy &= gr[e] != 0;
            }
            for (int r = r0; r < r1; r++) done_units += rows[r].n_units;
        }
        free(lp);
        free(gr);
        stats->tokens_computed += ti;
        stats->batches++;
        if (opt->progress) opt->progress(opt->progress_ctx, done_units, n_units);
        r0 = r1;
    }
    if (!rc)
        for (int r = 0; r < n; r++) {
            out[r].logprob = units[unit_of[r]].logprob;
            out[r].greedy = units[unit_of[r]].greedy;
        }
done:
    batch_arrays_free(&ba);
    free(unit_of); free(units); free(unit_pos); free(rows);
    return rc;
}
