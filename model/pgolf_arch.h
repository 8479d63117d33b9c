// pgolf_arch.h: a parameter-golf checkpoint's architecture settings, which its file does not
// carry: xsa_eval.json beside it or --arch FILE.json, in the family's hyperparameter names
// (NUM_LAYERS, XSA_LAST_N, ...), each read as a number, a layer list ("9,10") or a mode.
// Not for use outside model/.
#ifndef XSA_MODEL_PGOLF_ARCH_H
#define XSA_MODEL_PGOLF_ARCH_H

#include <stddef.h>

#include "common/error.h"
#include "model/model.h"

// The architecture settings, by the family's hyperparameter names; -1 = not given.
enum {
    A_NUM_LAYERS, A_MODEL_DIM, A_NUM_HEADS, A_NUM_KV_HEADS, A_VOCAB_SIZE, A_XSA_LAST_N, A_ROPE_DIMS, A_SHARED_CYCLE_LEN,
    A_NUM_RECURRENCE_PASSES, A_USE_SWIGLU, A_TIE_EMBEDDINGS, A_TRAIN_SEQ_LEN, A_EVAL_SEQ_LEN, A_ROTARY_TRAIN_SEQ_LEN,
    A_SKIP_AFTER_BLOCK, A_BIGRAM_VOCAB_SIZE, A_BIGRAM_DIM, A_LN_SCALE, A_VE_ENABLED, A_VE_DIM, A_TRIGRAM, A_DTG_ENABLED,
    A_GATED_ATTENTION, A_VALUE_RESIDUAL, A_DISABLE_LAYER0_ATTN, A_PARALLEL_RESIDUAL, A_PARALLEL_START_LAYER,
    A_PARALLEL_START_LAYER_IS_PHYSICAL, A_NUM_LOOPS, A_LOOP_START, A_LOOP_END,
    A_PARALLEL_RESIDUAL_START,  // (-1 allowed: none)
    A_SMEAR_GATE_BOS_FIX,
    A_NUM_UNIQUE_BLOCKS, A_EFFECTIVE_DEPTH, A_DEPTH_LORA_RANK, A_BIGRAM_BUCKETS,  // (the 2026-03-21 non-record's RecurrentGPT)
    A_MLP_MULT, A_LOGIT_SOFTCAP, A_ROPE_BASE, A_QK_GAIN_INIT, A_NEGATIVE_SLOPE, A_SPARSE_ATTN_GATE_SCALE,  // (from here: any number)
    A_VE_LAYERS, A_RECUR_LAYERS, A_REPEAT_UNTIE_MLP_LAYERS, A_CANON_AC_LAYERS, A_REPEAT_UNTIE_MLP, A_PARALLEL_FINAL_LANE,  // (strings)
    A_N
};
extern const char *const pg_arch_names[A_N];

// A comma-separated layer list setting (VE_LAYERS "9,10", RECUR_LAYERS "4,5", ...), in its order.
struct pg_list {
    int v[MODEL_MAX_LAYERS], n;
    char text[48];  // as written, for messages and `info`
};

enum { UNTIE_NONE, UNTIE_DOWN, UNTIE_FULL };

struct pg_arch {
    double v[A_N];
    int set[A_N];
    char path[4200];  // the file they came from ("" when none)
    int mnanogpt;     // FAMILY "modded-nanogpt": the file is read by model/mnanogpt.c
    struct pg_list ve, recur, untie, canon;  // ve_layer_scales.i is layer ve.v[i]'s
    int untie_mode;   // REPEAT_UNTIE_MLP: UNTIE_*
    int lanes_final;  // PARALLEL_FINAL_LANE: "mean" 0, "attn" 1, "mlp" 2
};

// xsa_eval.json beside model_path (or the --arch file) into a; none there: a->path "", all unset.
int pg_read_arch(struct pg_arch *a, const char *model_path, xsa_error *err);

// The sidecar's path for a checkpoint path.
void pg_sidecar_path(const char *path, char *out, size_t n);

// The --arch file, or NULL.
const char *pg_arch_file(void);

// A value the shapes determine: the sidecar must agree when it gives it (else exit 2 naming both).
int pg_agree(const struct pg_arch *a, int k, double shape_value, const char *what, const char *path, xsa_error *err);

// Setting k, or dflt when not given.
double pg_arch_or(const struct pg_arch *a, int k, double dflt);

int pg_list_has(const struct pg_list *l, int v);

#endif
