// cpu_attention_exp.h: the constants of the attention kernels' e^x (cpu_attention_ref.c's
// scalar one and cpu_attention_avx2.c's vector one compute the same polynomial).
#ifndef XSA_KERNELS_CPU_ATTENTION_EXP_H
#define XSA_KERNELS_CPU_ATTENTION_EXP_H

// e^x = 2^n e^r, n = round(x log2 e), r = x - n ln2 in two parts (ln2 hi has 9 significant
// bits, so n * hi is exact); e^r by its degree-7 Taylor polynomial (|r| <= ln2/2: truncation
// below 0.05 ulp).
#define EXP_LO -87.5f  // results below FLT_MIN flush to 0
#define EXP_HI 88.0f   // keeps 2^n finite; softmax arguments are <= 0
#define EXP_LOG2E 1.44269504088896341f
#define EXP_LN2_HI 0.693359375f
#define EXP_LN2_LO -2.12194440054690583e-4f
#define EXP_C2 (1.0f / 2)
#define EXP_C3 (1.0f / 6)
#define EXP_C4 (1.0f / 24)
#define EXP_C5 (1.0f / 120)
#define EXP_C6 (1.0f / 720)
#define EXP_C7 (1.0f / 5040)
#define EXP_ROUND 12582912.0f  // 1.5 * 2^23: x + it - it rounds |x| < 2^22 to nearest even

#endif
