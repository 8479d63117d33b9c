// cuda_attention.cu: flash-style attention over each token's two key spans. One warp per
// (token, query head): keys come in tiles of XSA_ATT_TILE staged in shared memory; lane u
// scores key u of the tile, the warp folds the tile into an online softmax, and lane i
// accumulates output dimensions i, i + 32, ... No (T, T) matrix exists anywhere. XSA runs in
// the epilogue with the token's own value vector, and so do the probe's statistics when asked
// for (cos(y, v), cos(z, v), a_ii from the last key's score). xsa_attend_serial_stats
// (cuda_math.h) is the same algorithm written serially, for the CPU tests.
#include "kernels/cuda/cuda_internal.cuh"

struct att_args {
    const float *qkv;                      // (T, Q + 2KV) after bias and RoPE
    void *out;                             // (T, Q) compute dtype
    const int32_t *lo0, *hi0, *lo1, *hi1;  // (T) each
    int T, H, Hkv, hd, xsa, fp32;
    int window;                            // sliding window (0: every key), xsa_window_spans
    float *probe;                          // (T, H, BACKEND_PROBE_STATS) statistics out, or NULL
};

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <int HDMAX, int WARPS>
__global__ void __launch_bounds__(32 * WARPS) attention_kernel(att_args a) {
    __shared__ float ks[WARPS][XSA_ATT_TILE][HDMAX + 1];  // +1: lanes reading rows hit distinct banks
    __shared__ float qs[WARPS][HDMAX];
    const int NV = HDMAX / 32;
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    long item = (long)blockIdx.x * WARPS + w;
    if (item >= (long)a.T * a.H) return;  // whole warps leave together; no block barrier below
    int t = (int)(item / a.H), h = (int)(item % a.H), hd = a.hd;
    int kvh = h / (a.H / a.Hkv);
    long ld = (long)(a.H + 2 * a.Hkv) * hd;
    const float *q = a.qkv + t * ld + (long)h * hd;
    const float *kb = a.qkv + (long)a.H * hd + (long)kvh * hd;
    const float *vb = kb + (long)a.Hkv * hd;
    for (int d = lane; d < hd; d += 32) qs[w][d] = q[d];
    float acc[NV];
    for (int i = 0; i < NV; i++) acc[i] = 0.0f;
    float scale = 1.0f / sqrtf((float)hd), m = -INFINITY, l = 0.0f, s_last = -INFINITY;
    int lo[2] = {a.lo0[t], a.lo1[t]}, hi[2] = {a.hi0[t], a.hi1[t]};
    xsa_window_spans(lo, hi, a.window);
    for (int s = 0; s < 2; s++)
        for (int j0 = lo[s]; j0 < hi[s]; j0 += XSA_ATT_TILE) {
            int n = hi[s] - j0 < XSA_ATT_TILE ? hi[s] - j0 : XSA_ATT_TILE;
            __syncwarp();  // every lane is done with the previous tile (and with qs's writes)
            for (int u = 0; u < n; u++) {
                const float *kj = kb + (long)(j0 + u) * ld;
                for (int d = lane; d < hd; d += 32) ks[w][u][d] = kj[d];
            }
            __syncwarp();
            float sc = -INFINITY;
            if (lane < n) {
                float dot = 0.0f;
                for (int d = 0; d < hd; d++) dot += qs[w][d] * ks[w][lane][d];
                sc = dot * scale;
            }
            s_last = __shfl_sync(0xffffffffu, sc, n - 1);  // (the token itself is the last key: a_ii)
            float mn, f = xsa_online_rescale(m, warp_max(sc), &mn);
            float p = lane < n ? xsa_online_weight(sc, mn) : 0.0f;
            l = l * f + warp_sum(p);
            m = mn;
            for (int i = 0; i < NV; i++) acc[i] *= f;
            for (int u = 0; u < n; u++) {
                float pu = __shfl_sync(0xffffffffu, p, u);
                const float *vj = vb + (long)(j0 + u) * ld;
                for (int i = 0; i < NV; i++) {
                    int d = lane + 32 * i;
                    if (d < hd) acc[i] += pu * vj[d];
                }
            }
        }
    float inv = 1.0f / l;  // l >= 1: the spans are non-empty (checked before launch)
    for (int i = 0; i < NV; i++) acc[i] *= inv;
    float *ps = a.probe ? a.probe + ((long)t * a.H + h) * BACKEND_PROBE_STATS : NULL;
    if (a.xsa || ps) {
        const float *vo = vb + t * ld;
        float yv = 0.0f, vv = 0.0f, yy = 0.0f;
        for (int i = 0; i < NV; i++) {
            int d = lane + 32 * i;
            if (d < hd) {
                yv += acc[i] * vo[d];
                vv += vo[d] * vo[d];
                yy += acc[i] * acc[i];
            }
        }
        yv = warp_sum(yv), vv = warp_sum(vv);
        if (ps) {
            float cy = xsa_probe_cos(yv, warp_sum(yy), vv);
            if (lane == 0) {
                ps[BACKEND_PROBE_COS_Y] = ps[BACKEND_PROBE_COS_Z] = cy;
                ps[BACKEND_PROBE_AII] = xsa_online_weight(s_last, m) / l;
            }
        }
        if (a.xsa) {
            float c = xsa_xsa_coef(yv, vv), zv = 0.0f, zz = 0.0f;
            for (int i = 0; i < NV; i++) {
                int d = lane + 32 * i;
                if (d < hd) {
                    acc[i] -= c * vo[d];
                    zv += acc[i] * vo[d];
                    zz += acc[i] * acc[i];
                }
            }
            if (ps) {
                float cz = xsa_probe_cos(warp_sum(zv), warp_sum(zz), vv);
                if (lane == 0) ps[BACKEND_PROBE_COS_Z] = cz;
            }
        }
    }
    long o = (long)t * a.H * hd + (long)h * hd;
    for (int i = 0; i < NV; i++) {
        int d = lane + 32 * i;
        if (d >= hd) continue;
        if (a.fp32)
            ((float *)a.out)[o + d] = acc[i];
        else
            ((uint16_t *)a.out)[o + d] = xsa_f32_to_bf16(acc[i]);
    }
}

template <int HDMAX, int WARPS>
static int launch(const att_args &a, cudaStream_t s, xsa_error *err) {
    long items = (long)a.T * a.H;
    unsigned blocks = (unsigned)((items + WARPS - 1) / WARPS);
    attention_kernel<HDMAX, WARPS><<<blocks, 32 * WARPS, 0, s>>>(a);
    CU_LAUNCHED();
    return 0;
}

int cu_attention(struct cu_state *st, int layer, int T, xsa_error *err) {
    const struct model_config *c = &st->m->cfg;
    att_args a;
    a.qkv = st->qkv;
    a.out = st->xn;
    a.lo0 = st->d_span;
    a.hi0 = st->d_span + st->t_cap;
    a.lo1 = st->d_span + 2L * st->t_cap;
    a.hi1 = st->d_span + 3L * st->t_cap;
    a.T = T;
    a.H = c->n_head;
    a.Hkv = c->n_kv_head;
    a.hd = c->head_dim;
    a.xsa = c->xsa[layer];
    a.fp32 = st->fp32;
    a.window = xsa_layer_window(c, layer);
    a.probe = st->probing ? st->d_probe : NULL;
    if (T <= 0) return 0;
    if (c->head_dim <= 64) return launch<64, 4>(a, st->stream, err);
    if (c->head_dim <= 128) return launch<128, 2>(a, st->stream, err);
    if (c->head_dim <= 256) return launch<256, 1>(a, st->stream, err);
    return cu_fail(err, XSA_EBADINPUT, "cuda backend: head_dim %d > 256 is not supported", c->head_dim);
}
