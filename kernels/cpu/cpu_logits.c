// cpu_logits.c: tasks are (row tile, vocabulary chunk); each writes its rows' statistics for
// its chunk and the logits of targets inside it. Rows then combine their chunks in
// increasing id order, so ties resolve to the lowest id and no result depends on threads.
#include "kernels/cpu/cpu_logits.h"

#include <math.h>

#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_ops.h"

int cpu_logits_chunks(int V) { return (V + CPU_VOCAB_CHUNK - 1) / CPU_VOCAB_CHUNK; }

// Task i's rows [*r0, *r0 + ROWS) and ids [*v0, *v0 + *nv): their logits (soft-capped where
// the model caps them) into worker w's scratch, returned as (ROWS, nv). Vocabulary chunk outermost: consecutive tasks reuse one
// chunk of the head's weights.
static float *tile_logits(const struct cpu_logits_args *a, int i, int w, int *r0, int *v0, int *nv) {
    int n_tiles = a->Rp / CPU_GEMM_ROWS;
    *r0 = (i % n_tiles) * CPU_GEMM_ROWS;
    *v0 = (i / n_tiles) * CPU_VOCAB_CHUNK;
    *nv = a->V - *v0 < CPU_VOCAB_CHUNK ? a->V - *v0 : CPU_VOCAB_CHUNK;
    float *lg = a->scratch + (long)w * CPU_GEMM_ROWS * CPU_VOCAB_CHUNK;
    // Column blocks of CPU_GEMM_COLS ids: the same tile shapes as every other GEMM here.
    for (int c0 = 0; c0 < *nv; c0 += CPU_GEMM_COLS)
        cpu_gemm_tile_w(a->gemm, a->h + (long)*r0 * a->C, a->lm_head, a->lm_head_packed, *v0 + c0, lg + c0, *nv,
                        *nv - c0 < CPU_GEMM_COLS ? *nv - c0 : CPU_GEMM_COLS, a->C);
    for (int r = *r0; a->bias && r < *r0 + CPU_GEMM_ROWS && r < a->R; r++) {  // (as nn.Linear adds it)
        float *x = lg + (long)(r - *r0) * *nv;
        for (int j = 0; j < *nv; j++) x[j] += a->bias[*v0 + j];
    }
    for (int r = *r0; a->divisor != 0 && r < *r0 + CPU_GEMM_ROWS && r < a->R; r++) {
        float *x = lg + (long)(r - *r0) * *nv;  // (granite: logits / logits_scaling, in float32 as its head)
        for (int j = 0; j < *nv; j++) x[j] /= a->divisor;
    }
    for (int r = *r0; a->softcap > 0 && r < *r0 + CPU_GEMM_ROWS && r < a->R; r++) {
        float *x = lg + (long)(r - *r0) * *nv;  // as the model's own head: c * tanh(logits / c), in float32
        for (int j = 0; j < *nv; j++) x[j] = a->softcap * tanhf(x[j] / a->softcap);
    }
    return lg;
}

static void logits_task(void *ctx, int i, int w) {
    const struct cpu_logits_args *a = ctx;
    int n_chunks = cpu_logits_chunks(a->V), r0, v0, nv;
    float *lg = tile_logits(a, i, w, &r0, &v0, &nv);  // (ROWS, nv)
    int chunk = v0 / CPU_VOCAB_CHUNK;
    for (int r = r0; r < r0 + CPU_GEMM_ROWS && r < a->R; r++) {
        float *x = lg + (long)(r - r0) * nv;
        float mx;
        int am = cpu_argmax(x, nv, &mx);
        for (int e = a->row_first[r]; e < a->row_first[r + 1]; e++) {
            int id = a->row_entries[e], tg = a->entry_target[id];
            if (tg >= v0 && tg < v0 + nv) a->entry_logit[id] = x[tg - v0];
        }
        // The row's logits are not needed past here: e^(x - max) in place (libm's scalar expf
        // was a third of this task), summed in id order.
        float *ex = lg + (long)(r - r0) * nv;
        cpu_exp_minus(ex, nv, mx);
        double s = 0;
        for (int j = 0; j < nv; j++) s += ex[j];
        a->stats[(long)r * n_chunks + chunk] = (struct cpu_chunk_stat){mx, v0 + am, s};
    }
}

// The same tile's logits again (the first pass kept none of them), minus each row's
// logsumexp, to the sink once per entry.
static void dist_task(void *ctx, int i, int w) {
    const struct cpu_logits_args *a = ctx;
    int r0, v0, nv;
    float *lg = tile_logits(a, i, w, &r0, &v0, &nv);
    for (int r = r0; r < r0 + CPU_GEMM_ROWS && r < a->R; r++) {
        float *x = lg + (long)(r - r0) * nv;
        for (int j = 0; j < nv; j++) x[j] = (float)((double)x[j] - a->row_lse[r]);
        for (int e = a->row_first[r]; e < a->row_first[r + 1]; e++) a->dist->chunk(a->dist->ctx, a->row_entries[e], v0, nv, x);
    }
}

void cpu_logits(struct cpu_pool *pool, const struct cpu_logits_args *a) {
    int n_chunks = cpu_logits_chunks(a->V);
    cpu_pool_run(pool, (a->Rp / CPU_GEMM_ROWS) * n_chunks, logits_task, (void *)a);
    for (int r = 0; r < a->R; r++) {
        const struct cpu_chunk_stat *st = a->stats + (long)r * n_chunks;
        float mx = st[0].max;
        int32_t am = st[0].argmax;
        for (int c = 1; c < n_chunks; c++)
            if (st[c].max > mx) {
                mx = st[c].max;
                am = st[c].argmax;
            }
        double s = 0;
        for (int c = 0; c < n_chunks; c++) s += st[c].sumexp * exp((double)st[c].max - mx);
        double lse = mx + log(s);
        if (a->dist) a->row_lse[r] = lse;
        for (int e = a->row_first[r]; e < a->row_first[r + 1]; e++) {
            int id = a->row_entries[e];
            a->out_logprob[id] = (float)((double)a->entry_logit[id] - lse);
            a->out_greedy[id] = a->entry_target[id] == am;
        }
    }
    if (a->dist) cpu_pool_run(pool, (a->Rp / CPU_GEMM_ROWS) * n_chunks, dist_task, (void *)a);
}
