// shard.c: dealing requests to ranks by cost, and their bytes between ranks (eval/shard.h).
#include "eval/shard.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

struct unit {  // one group's run of requests
    int first, n;
    double cost;
};

static double group_cost(const struct sched_request *req, int n, int share, double quad_div) {
    int p = 0;  // common input prefix of the group's requests (what sharing computes once)
    if (share && n > 1) {
        p = req[0].n_input;
        for (int i = 1; i < n; i++) {
            int j = 0;
            while (j < p && j < req[i].n_input && req[i].input[j] == req[0].input[j]) j++;
            p = j;
        }
    }
    double tokens = p, quad = (double)p * p;
    for (int i = 0; i < n; i++) {
        double t = req[i].n_input;
        tokens += t - p;
        quad += t * t - (double)p * p;
    }
    return tokens + quad / quad_div;
}

static int by_cost_desc(const void *a, const void *b) {
    const struct unit *x = a, *y = b;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    return x->first - y->first;
}

void shard_assign(const struct sched_request *req, int n, int share, int d_model, int n_ranks, int *owner) {
    if (n_ranks < 2) {
        memset(owner, 0, (size_t)n * sizeof *owner);
        return;
    }
    struct unit *u = xsa_malloc(((size_t)n + 1) * sizeof *u);
    int nu = 0;
    double quad_div = 12.0 * (d_model > 0 ? d_model : 1);
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && req[j].group == req[i].group) j++;
        u[nu++] = (struct unit){i, j - i, group_cost(req + i, j - i, share, quad_div)};
        i = j;
    }
    qsort(u, (size_t)nu, sizeof *u, by_cost_desc);
    double *load = xsa_calloc((size_t)n_ranks, sizeof *load);
    for (int k = 0; k < nu; k++) {
        int best = 0;
        for (int r = 1; r < n_ranks; r++)
            if (load[r] < load[best]) best = r;
        load[best] += u[k].cost;
        for (int i = 0; i < u[k].n; i++) owner[u[k].first + i] = best;
    }
    free(load);
    free(u);
}

static void put_i32(struct sbuf *out, int32_t v) { sbuf_append(out, (const char *)&v, sizeof v); }

void shard_pack_requests(const struct sched_request *req, const int *idx, int n, struct sbuf *out) {
    put_i32(out, n);
    for (int i = 0; i < n; i++) {
        const struct sched_request *q = &req[idx ? idx[i] : i];
        put_i32(out, q->n_input);
        put_i32(out, q->n_cont);
        put_i32(out, q->group);
        sbuf_append(out, (const char *)q->input, (size_t)q->n_input * sizeof *q->input);
        sbuf_append(out, (const char *)q->cont, (size_t)q->n_cont * sizeof *q->cont);
    }
}

// Reads one int32 at *at, within len.
static int get_i32(const char *buf, size_t len, size_t *at, int32_t *v) {
    if (len - *at < sizeof *v) return -1;
    memcpy(v, buf + *at, sizeof *v);
    *at += sizeof *v;
    return 0;
}

int shard_unpack_requests(const char *buf, size_t len, struct sched_request **reqs, int32_t **tokens, int *n,
                          xsa_error *err) {
    *reqs = NULL;
    *tokens = NULL;
    *n = 0;
    size_t at = 0;
    int32_t count;
    // Every request takes at least 12 bytes of header and two tokens: a count past that is damage.
    if (get_i32(buf, len, &at, &count) || count < 0 || (size_t)count > len / 20)
        return xsa_fail(err, XSA_ERUNTIME, "a request message of %zu bytes from rank 0 is malformed (count)", len);
    size_t n_tok = (len - at) / sizeof(int32_t);
    *reqs = xsa_calloc((size_t)count + 1, sizeof **reqs);
    *tokens = xsa_malloc((n_tok + 1) * sizeof **tokens);
    size_t used = 0;
    for (int32_t i = 0; i < count; i++) {
        int32_t h[3];
        for (int k = 0; k < 3; k++)
            if (get_i32(buf, len, &at, &h[k])) goto bad;
        if (h[0] < 1 || h[1] < 1 || h[1] > h[0] || (size_t)h[0] + (size_t)h[1] > (len - at) / sizeof(int32_t)) goto bad;
        size_t bytes = ((size_t)h[0] + (size_t)h[1]) * sizeof(int32_t);
        memcpy(*tokens + used, buf + at, bytes);
        at += bytes;
        (*reqs)[i] = (struct sched_request){.input = *tokens + used, .n_input = h[0], .cont = *tokens + used + h[0],
                                            .n_cont = h[1], .group = h[2]};
        used += (size_t)h[0] + (size_t)h[1];
    }
    if (at != len) goto bad;
    *n = count;
    return 0;
bad:
    free(*reqs), free(*tokens);
    *reqs = NULL, *tokens = NULL;
    return xsa_fail(err, XSA_ERUNTIME, "a request message of %zu bytes from rank 0 is malformed (byte %zu)", len, at);
}

void shard_pack_results(const struct sched_result *res, const uint8_t *reused, int n, long long tokens_computed,
                        struct sbuf *out) {
    int64_t t = tokens_computed;
    put_i32(out, n);
    sbuf_append(out, (const char *)&t, sizeof t);
    for (int i = 0; i < n; i++) {
        sbuf_append(out, (const char *)&res[i].logprob, sizeof res[i].logprob);
        put_i32(out, (res[i].greedy ? 1 : 0) | (reused && reused[i] ? 2 : 0));
    }
}

int shard_unpack_results(const char *buf, size_t len, struct sched_result *res, uint8_t *reused, int n,
                         long long *tokens_computed, xsa_error *err) {
    size_t at = 0;
    int32_t count;
    int64_t t;
    size_t rec = sizeof(double) + sizeof(int32_t);
    if (get_i32(buf, len, &at, &count) || count != n || len != at + sizeof t + (size_t)n * rec)
        return xsa_fail(err, XSA_ERUNTIME, "a results message of %zu bytes holds no %d results: the ranks disagree "
                        "(were they started from the same xsa-eval binary?)", len, n);
    memcpy(&t, buf + at, sizeof t);
    at += sizeof t;
    for (int i = 0; i < n; i++, at += rec) {
        int32_t g;
        memcpy(&res[i].logprob, buf + at, sizeof res[i].logprob);
        memcpy(&g, buf + at + sizeof(double), sizeof g);
        if (g & ~3)
            return xsa_fail(err, XSA_ERUNTIME, "a results message holds flags %d for result %d: the ranks disagree "
                            "(were they started from the same xsa-eval binary?)", (int)g, i);
        res[i].greedy = g & 1;
        if (reused) reused[i] = (uint8_t)(g >> 1);
    }
    *tokens_computed = t;
    return 0;
}
