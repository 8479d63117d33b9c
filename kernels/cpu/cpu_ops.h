// cpu_ops.h: the row-wise pieces of the forward pass (fp32, as PyTorch computes them).
#ifndef XSA_KERNELS_CPU_OPS_H
#define XSA_KERNELS_CPU_OPS_H

#include <stdint.h>

#include "model/model.h"

// LayerNorm (biased variance) with gain w and bias b (NULL: none, nn.LayerNorm(bias=False)):
// out[r] = (x[r] - mean) * rstd * w (+ b); out may be x.
void cpu_layer_norm_rows(const float *x, float *out, int n, int C, const float *w, const float *b, float eps);

// LayerNorm (b != NULL, biased variance) or RMSNorm as HF LlamaRMSNorm (b == NULL):
// out[r] = norm(x[r]) * w (+ b); x, out (n, C); out may be x. RMSNorm with w == NULL has no
// gain (x * rstd).
void cpu_norm_rows(const float *x, float *out, int n, int C, const float *w, const float *b,
                   float eps);

// out = leaky_relu(x, slope)^2 elementwise (parameter-golf's MLP activation; slope 0: relu^2);
// (n); out may be x. The same bits on every CPU.
void cpu_leaky_relu2(const float *x, float *out, long n, float slope);
// Its backward: dh *= d(leaky_relu(x, slope)^2)/dx = 2 leaky_relu(x, slope) (x > 0 ? 1 : slope).
void cpu_leaky_relu2_bwd(const float *x, float *dh, long n, float slope);

// cos(a, b) over n floats in double (0 when either is zero): the probe's cosines.
double cpu_cosine(const float *a, const float *b, int n);

// x += s * y elementwise (a residual add with a per-channel scale); (n)
void cpu_add_scaled(float *x, const float *s, const float *y, long n);

// x += y elementwise; (n)
void cpu_add_inplace(float *x, const float *y, long n);

// x = min(max(x, -c), c) in place, as torch's clamp_(min=-c, max=c) (olmo's clip_qkv); (n)
void cpu_clamp(float *x, long n, float c);

// HF gelu_new (tanh approximation), in place; (n)
void cpu_gelu_tanh(float *x, long n);

// HF gelu (exact, erf), in place; (n)
void cpu_gelu_erf(float *x, long n);

// x = e^(x - m) in place, by cpu_exp_inplace; (n)
void cpu_exp_minus(float *x, long n, float m);

// The first index of the largest of x[0..n) (n >= 1), its value in *mx: what the loop
// `if (x[j] > mx) mx = x[j], am = j` from mx = x[0], am = 0 finds (a NaN x[0] wins, later
// NaNs never do), on 8 lanes where the CPU has AVX2.
int cpu_argmax(const float *x, int n, float *mx);

// gate = silu(gate) * up, in place in gate; (n)
void cpu_swiglu(float *gate, const float *up, long n);

// cos/sin of pos * inv_freq(i) for i < rd/2 (rd = model_rope_dims), as HF computes them in
// float32, times yarn's attention factor; cos_t, sin_t (T, rd/2).
void cpu_rope_table(const int32_t *pos, int T, const struct model_config *c, float *cos_t, float *sin_t);

// Rotates the first rd of the hd floats of n_heads heads of each of T rows of x (row stride ld)
// in place; the rest pass through (partial rotary). half = 1: pairs (i, i + rd/2) (HF
// rotate_half); half = 0: pairs (2i, 2i + 1) (llama2.c). cos_t, sin_t (T, rd/2).
void cpu_rope_apply(float *x, int T, int ld, int n_heads, int hd, int rd, int half, const float *cos_t,
                    const float *sin_t);

#endif
