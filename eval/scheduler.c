// scheduler.c: deduplicate, share prefixes, pack, score (see scheduler.h).
#include "eval/scheduler.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#include "kernels/batch.h"

// One distinct request after deduplication.
struct unit {
    int req;           // representative request index
    int row;           // row it is scored in
    int branch;        // index of its branch among the row's distinct branches (-1: entirely in the prefix)
    double logprob;
    int greedy;
};

struct row {
    int first_unit, n_units;  // units (contiguous in `units`) scored in this row
    int prefix_len;           // shared prefix length
    int n_branches;           // distinct branches; branch b is the remainder of its first unit
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
    int *slot = xsa_malloc(cap * sizeof *slot);
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
    int *unit_of = xsa_malloc((size_t)n * sizeof *unit_of);
    struct unit *units = xsa_malloc((size_t)n * sizeof *units);
    int *unit_pos = xsa_malloc((size_t)n * sizeof *unit_pos);  // unit index -> position in sorted units
    struct row *rows = xsa_malloc((size_t)n * sizeof *rows);
    struct batch_builder bb;
    batch_init(&bb);
    struct ivec eunit = {0};  // (S) the unit each entry of the batch belongs to
    const int32_t **br = NULL;  // (max branches) the current row's branches
    int *br_len = NULL, *br_first = NULL;
    int n_units = dedupe(reqs, n, unit_of, units);
    stats->unique_requests = n_units;

    // Group units into rows: sort by group, then each group's units form one row (sharing),
    // or each unit its own row.
    // Keep each unit's identity through the sort: sort a copy and remap unit_of afterwards.
    struct unit *sorted = xsa_malloc((size_t)n_units * sizeof *sorted);
    for (int u = 0; u < n_units; u++) { sorted[u] = units[u]; sorted[u].row = u; }  // row temporarily = old index
    qsort_r(sorted, (size_t)n_units, sizeof *sorted, cmp_unit_group, (void *)reqs);
    for (int u = 0; u < n_units; u++) unit_pos[sorted[u].row] = u;
    for (int r = 0; r < n; r++) unit_of[r] = unit_pos[unit_of[r]];
    memcpy(units, sorted, (size_t)n_units * sizeof *units);
    free(sorted);

    int n_rows = 0, max_branches = 0;
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
        row->n_branches = 0;
        row->n_tokens = p;
        // Branches: each unit's remainder, identical remainders stored once.
        for (int v = u; v < end; v++) {
            const struct sched_request *q = &reqs[units[v].req];
            units[v].row = n_rows;
            units[v].branch = -1;
            if (q->n_input == p) continue;
            for (int w = u; w < v; w++) {
                const struct sched_request *o = &reqs[units[w].req];
                if (units[w].branch >= 0 && o->n_input == q->n_input &&
                    !memcmp(o->input + p, q->input + p, (size_t)(q->n_input - p) * sizeof *q->input)) {
                    units[v].branch = units[w].branch;
                    break;
                }
            }
            if (units[v].branch < 0) {
                units[v].branch = row->n_branches++;
                row->n_tokens += q->n_input - p;
            }
        }
        if (row->n_branches > max_branches) max_branches = row->n_branches;
        n_rows++;
        u = end;
    }
    stats->rows = n_rows;
    qsort(rows, (size_t)n_rows, sizeof *rows, cmp_row_size);

    br = xsa_malloc(((size_t)max_branches + 1) * sizeof *br);
    br_len = xsa_malloc(((size_t)max_branches + 1) * sizeof *br_len);
    br_first = xsa_malloc(((size_t)max_branches + 1) * sizeof *br_first);
    long done_units = 0;
    struct ivec done_req = {0};       // (units of the batch) representative request of each
    struct sched_result *done_res = opt->batch_done ? xsa_malloc((size_t)n_units * sizeof *done_res) : NULL;
    for (int r0 = 0; r0 < n_rows && !rc;) {
        if (opt->stop && *opt->stop) {
            rc = xsa_fail(err, XSA_EINTERRUPT, "interrupted");
            break;
        }
        // Pack rows [r0, r1) into one batch.
        int t = 0, r1 = r0;
        while (r1 < n_rows && (r1 == r0 || t + rows[r1].n_tokens <= opt->batch_tokens)) t += rows[r1++].n_tokens;
        batch_reset(&bb);
        eunit.n = 0;
        for (int r = r0; r < r1 && !rc; r++) {
            const struct row *row = &rows[r];
            int p = row->prefix_len, start;
            for (int v = row->first_unit; v < row->first_unit + row->n_units; v++) {
                const struct sched_request *q = &reqs[units[v].req];
                int b = units[v].branch;
                if (b >= 0) br[b] = q->input + p, br_len[b] = q->n_input - p;  // same remainder for every owner
            }
            rc = batch_add_tree(&bb, reqs[units[row->first_unit].req].input, p, br, br_len, row->n_branches, &start,
                                br_first, err);
            for (int v = row->first_unit; !rc && v < row->first_unit + row->n_units; v++) {
                const struct sched_request *q = &reqs[units[v].req];
                int b = units[v].branch;
                for (int j = 0; !rc && j < q->n_cont; j++) {
                    int k = q->n_input - q->n_cont + j;  // input position predicting cont[j]
                    rc = batch_add_entry(&bb, k < p ? start + k : br_first[b] + (k - p), q->cont[j], err);
                    if (!rc) ivec_push(&eunit, v);
                }
            }
        }
        if (rc) break;
        struct score_batch b = batch_view(&bb);
        float *lp = xsa_malloc((size_t)b.n_entries * sizeof *lp + 1);
        uint8_t *gr = xsa_malloc((size_t)b.n_entries + 1);
        rc = backend_score(be, &b, lp, gr, err);
        if (!rc) {
            // Sum each unit's entries in continuation order (entries were added in that order).
            for (int e = 0; e < b.n_entries; e++) {
                struct unit *un = &units[eunit.v[e]];
                if (e == 0 || eunit.v[e - 1] != eunit.v[e]) { un->logprob = 0; un->greedy = 1; }
                un->logprob += (double)lp[e];
                un->greedy &= gr[e] != 0;
            }
            for (int r = r0; r < r1; r++) done_units += rows[r].n_units;
            done_req.n = 0;
            for (int r = r0; r < r1 && opt->batch_done && !rc; r++)
                for (int v = rows[r].first_unit; v < rows[r].first_unit + rows[r].n_units && !rc; v++) {
                    done_res[done_req.n] = (struct sched_result){units[v].logprob, units[v].greedy};
                    ivec_push(&done_req, units[v].req);
                }
            if (!rc && opt->batch_done)
                rc = opt->batch_done(opt->batch_done_ctx, done_req.v, done_res, (int)done_req.n, err);
        }
        free(lp);
        free(gr);
        stats->tokens_computed += b.n_tokens;
        stats->batches++;
        if (opt->progress) opt->progress(opt->progress_ctx, done_units, n_units);
        r0 = r1;
    }
    if (!rc)
        for (int r = 0; r < n; r++) {
            out[r].logprob = units[unit_of[r]].logprob;
            out[r].greedy = units[unit_of[r]].greedy;
        }
    ivec_free(&done_req);
    free(done_res);
    batch_free(&bb);
    ivec_free(&eunit);
    free(br); free(br_len); free(br_first);
    free(unit_of); free(units); free(unit_pos); free(rows);
    return rc;
}
