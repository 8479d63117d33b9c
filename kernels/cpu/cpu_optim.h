// cpu_optim.h: optimizer steps over one tensor, elementwise, with torch's arithmetic, so that
// test-time training's adapters follow the records' own optimizers to the bit (eval/ttt_lora.c).
#ifndef XSA_KERNELS_CPU_OPTIM_H
#define XSA_KERNELS_CPU_OPTIM_H

// One AdamW step's coefficients (cpu_adamw_coef).
struct cpu_adamw {
    float decay;      // 1 - lr * weight_decay (applied when weight_decay != 0)
    int decoupled;    // weight_decay != 0
    float wt;         // 1 - beta1: exp_avg.lerp_(g, wt)
    float beta2, c2;  // exp_avg_sq = exp_avg_sq * beta2 + c2 * g * g (c2 = 1 - beta2)
    float bc2_sqrt;   // sqrt(1 - beta2^step)
    float step_size;  // lr / (1 - beta1^step)
};

// The coefficients of step `step` (1, 2, ...) of AdamW(lr, betas=(beta1, beta2), weight_decay),
// each worked out in double and rounded once, as torch's fused kernel takes them (1 - beta2
// rounded from 0.999f would make every step 6e-6 larger).
void cpu_adamw_coef(struct cpu_adamw *c, double lr, double beta1, double beta2, double weight_decay, long step);

// torch.optim.AdamW(fused=True, eps=1e-10)'s step over n float32 values, as the vector loop of
// its CPU kernel (ATen's FusedAdamKernel.cpp, adam_math) rounds: w *= decay;
// m = fma(wt, g - m, m) below wt 0.5, else fma(wt - 1, g - m, g) (exp_avg.lerp_(g, wt));
// v = fma(c2 g, g, v beta2) (the compiler's contraction of v beta2 + c2 g g);
// w -= (step_size m) / (sqrt(v) / bc2_sqrt + 1e-10). (torch's scalar loop, which takes a thread's
// last values past a multiple of its vector width, contracts v's other product: 1 ulp apart at times.)
// The same bits on every CPU (AVX2+FMA vectors or the scalar loop).
void cpu_adamw_step(float *w, const float *g, float *m, float *v, long n, const struct cpu_adamw *c);

#endif
