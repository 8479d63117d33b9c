// cpu_optim.c: AdamW's step as torch's fused kernel computes it (cpu_optim.h).
#include "kernels/cpu/cpu_optim.h"

#include <immintrin.h>
#include <math.h>

#include "kernels/cpu/cpu_gemm.h"

void cpu_adamw_coef(struct cpu_adamw *c, double lr, double beta1, double beta2, double weight_decay, long step) {
    double bc1 = 1.0 - pow(beta1, (double)step), bc2 = 1.0 - pow(beta2, (double)step);
    *c = (struct cpu_adamw){.decay = (float)(1.0 - lr * weight_decay), .decoupled = (float)weight_decay != 0,
                            .wt = (float)(1.0 - beta1), .beta2 = (float)beta2, .c2 = (float)(1.0 - beta2),
                            .bc2_sqrt = (float)sqrt(bc2), .step_size = (float)(lr / bc1)};
}

// The scalar loop's operations 8 lanes at a time: explicit FMAs where the loop calls fmaf and
// none elsewhere, IEEE sqrt and division; so the same bits.
__attribute__((target("avx2,fma"))) static long adamw_avx2(float *w, const float *g, float *m, float *v, long n,
                                                          const struct cpu_adamw *c) {
    const __m256 decay = _mm256_set1_ps(c->decay), wt = _mm256_set1_ps(c->wt < 0.5f ? c->wt : c->wt - 1.0f),
                 b2 = _mm256_set1_ps(c->beta2), c2 = _mm256_set1_ps(c->c2), bc2 = _mm256_set1_ps(c->bc2_sqrt),
                 eps = _mm256_set1_ps(1e-10f), ss = _mm256_set1_ps(c->step_size);
    int near_start = c->wt < 0.5f;
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 wi = _mm256_loadu_ps(w + i), gi = _mm256_loadu_ps(g + i), mi = _mm256_loadu_ps(m + i),
               vi = _mm256_loadu_ps(v + i);
        if (c->decoupled) wi = _mm256_mul_ps(wi, decay);
        mi = _mm256_fmadd_ps(wt, _mm256_sub_ps(gi, mi), near_start ? mi : gi);
        vi = _mm256_fmadd_ps(_mm256_mul_ps(c2, gi), gi, _mm256_mul_ps(vi, b2));
        __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vi), bc2), eps);
        wi = _mm256_sub_ps(wi, _mm256_div_ps(_mm256_mul_ps(ss, mi), denom));
        _mm256_storeu_ps(w + i, wi), _mm256_storeu_ps(m + i, mi), _mm256_storeu_ps(v + i, vi);
    }
    return i;
}

void cpu_adamw_step(float *w, const float *g, float *m, float *v, long n, const struct cpu_adamw *c) {
    long k = cpu_gemm_have_avx2() ? adamw_avx2(w, g, m, v, n, c) : 0;
    for (; k < n; k++) {
        if (c->decoupled) w[k] *= c->decay;
        // (torch.lerp: start + w (end - start) below 0.5, else end + (w - 1)(end - start))
        m[k] = c->wt < 0.5f ? fmaf(c->wt, g[k] - m[k], m[k]) : fmaf(c->wt - 1.0f, g[k] - m[k], g[k]);
        v[k] = fmaf(c->c2 * g[k], g[k], v[k] * c->beta2);
        float denom = sqrtf(v[k]) / c->bc2_sqrt + 1e-10f;
        w[k] -= c->step_size * m[k] / denom;  // (as torch: (step_size m) / denom)
    }
}
