// cpu_attention.c: per (token, query head) softmax(q.k * hd^-1/2) @ v over the token's spans,
// then XSA's projection off the token's own value vector. Every dot product runs in one
// fixed order, so a token's output depends only on its own keys.
#include "kernels/cpu/cpu_attention.h"

#include <math.h>

// Dot product with eight fixed partial sums (vectorisable, order fixed by the code).
static float dot8(const float *a, const float *b, int n) {
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int u = 0; u < 8; u++) acc[u] += a[i + u] * b[i + u];
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

static void attention_task(void *ctx, int task, int w) {
    const struct cpu_attention_args *a = ctx;
    int t = task / a->H, h = task % a->H;
    int kvh = h / (a->H / a->Hkv);
    int hd = a->hd;
    long qs = (long)a->H * hd, ks = (long)a->Hkv * hd;
    const float *q = a->q + t * qs + (long)h * hd;
    const float *kb = a->k + (long)kvh * hd, *vb = a->v + (long)kvh * hd;
    float *p = a->scratch + (long)w * a->scratch_stride;  // (n_keys)
    float *y = a->out + t * qs + (long)h * hd;            // (hd)
    float scale = 1.0f / sqrtf((float)hd);
    int lo[2] = {a->span0_lo[t], a->span1_lo[t]}, hi[2] = {a->span0_hi[t], a->span1_hi[t]};

    float mx = -INFINITY;
    int n = 0;
    for (int s = 0; s < 2; s++)
        for (int j = lo[s]; j < hi[s]; j++) {
            float sc = dot8(q, kb + j * ks, hd) * scale;
            p[n++] = sc;
            if (sc > mx) mx = sc;
        }
    float sum = 0;
    for (int i = 0; i < n; i++) {
        p[i] = expf(p[i] - mx);
        sum += p[i];
    }
    float inv = 1.0f / sum;
    for (int d = 0; d < hd; d++) y[d] = 0;
    n = 0;
    for (int s = 0; s < 2; s++)
        for (int j = lo[s]; j < hi[s]; j++) {
            float pj = p[n++] * inv;
            const float *vj = vb + j * ks;
            for (int d = 0; d < hd; d++) y[d] += pj * vj[d];
        }
    if (!a->xsa) return;
    const float *vo = vb + t * ks;  // the token's own value vector
    double yv = 0, vv = 0;
    for (int d = 0; d < hd; d++) {
        yv += (double)y[d] * vo[d];
        vv += (double)vo[d] * vo[d];
    }
    if (vv == 0) return;
    float c = (float)(yv / vv);
    for (int d = 0; d < hd; d++) y[d] -= c * vo[d];
}

void cpu_attention(struct cpu_pool *pool, const struct cpu_attention_args *a) {
    cpu_pool_run(pool, a->T * a->H, attention_task, (void *)a);
}
