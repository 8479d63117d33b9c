// model.h: one in-memory description of a causal LM, whatever file it came from.
// Readers (safetensors + config.json, llama2.c .bin) fill it; backends only read it.
// All weights are float32 (bf16/fp16 converted at load) in nn.Linear layout:
// a weight of a layer mapping IN -> OUT features is stored (OUT, IN) row-major.
#ifndef XSA_MODEL_MODEL_H
#define XSA_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define MODEL_MAX_LAYERS 512

enum model_arch {
    MODEL_ARCH_GPT2 = 1,   // learned positions, LayerNorm (with bias), GELU-tanh MLP, biases
    MODEL_ARCH_LLAMA = 2,  // RoPE, RMSNorm, SwiGLU MLP, GQA, optional biases
};

enum rope_style {
    ROPE_NONE = 0,      // gpt2
    ROPE_HALF = 1,      // Hugging Face rotate_half: pairs (i, i + hd/2)
    ROPE_ADJACENT = 2,  // llama2.c / Meta: pairs (2i, 2i + 1)
    ROPE_HALF_NEG = 3,  // parameter-golf: pairs (i, i + rd/2) rotated by -angle
                        // (out1 = x1 cos + x2 sin, out2 = -x1 sin + x2 cos)
};

enum rope_scaling {     // config.json rope_scaling / rope_parameters, as transformers' rope_utils
    ROPE_SCALE_NONE = 0,  // "default"
    ROPE_SCALE_LINEAR,    // inverse frequencies / factor
    ROPE_SCALE_LLAMA3,    // Llama 3.1/3.2: long wavelengths / factor, short kept, smoothed between
    ROPE_SCALE_DYNAMIC,   // NTK: the base grows past max_position_embeddings (positions are kept below it)
    ROPE_SCALE_YARN,      // YaRN: interpolated / extrapolated frequencies blended by a ramp; cos, sin scaled
};

enum qk_norm {          // RMSNorm on the query and key projections, before RoPE
    QK_NORM_NONE = 0,
    QK_NORM_HEAD,         // per head over hd (qwen3); gains (hd) each, or NULL: no gain
    QK_NORM_FULL,         // over the whole projection (olmo2); gains (H*hd) and (Hkv*hd)
    QK_NORM_HEAD_LN,      // LayerNorm (no bias) per head, each head its own gain (stablelm's
                          // qk_layernorm); gains (H*hd) and (Hkv*hd), head after head
};

// How fused projections were stored (split at load; printed by `info`).
#define MODEL_FUSED_QKV 1u          // one q|k|v matrix (phi3 qkv_proj)
#define MODEL_FUSED_QKV_HEADS 2u    // q|k|v interleaved per head (gpt_neox query_key_value)
#define MODEL_FUSED_GATE_UP 4u      // one gate|up matrix (phi3 gate_up_proj)

struct model_config {
    enum model_arch arch;
    enum rope_style rope;
    int n_layer;
    int n_head;       // query heads H
    int n_kv_head;    // key/value heads Hkv; H % Hkv == 0; query head h reads kv head h / (H / Hkv)
    int head_dim;     // hd (llama may set it explicitly; else d_model / n_head)
    int d_model;      // C
    int d_ff;         // F, MLP hidden width
    int vocab_size;   // V, the logits width (log-softmax runs over all of it)
    int max_seq_len;  // context length used for lm-eval's left truncation
    float norm_eps;
    float rope_theta;
    // parameter-golf's NTK-aware Rotary: past rope_ntk_from tokens a window of T runs the base
    // rope_ntk_base (T / rope_ntk_from)^(rd / (rd - 2)); rope_theta is that of max_seq_len, or of
    // the window model_set_window set (rope_ntk_from 0: no NTK)
    int rope_ntk_from;
    float rope_ntk_base;
    enum rope_scaling rope_scaling;
    float rope_factor;             // linear, llama3, dynamic, yarn
    float rope_low_freq, rope_high_freq;  // llama3: low/high_freq_factor
    float rope_orig_ctx;           // llama3, yarn: original_max_position_embeddings
    int tied_head;    // 1 when lm_head shares tok_emb
    int gelu_exact;   // GELU MLPs: 1 for activation_function "gelu" (erf, nanoGPT's nn.GELU), 0 for
                      // the tanh approximation (gelu_new, GPT-2's own)
    // Decoder features beyond gpt2 / llama (all 0: the plain decoder of `arch`).
    char family[16];  // config.json model_type ("" = the arch's own name)
    int mlp_plain;    // RoPE decoders: 1 = up -> GELU -> down without a gate (gpt_neox)
    int parallel_residual;  // 1: x + (mlp(norm2(x)) + attn(norm1(x))) (gpt_neox); 2: (x + attn(n(x))) + mlp(n(x)),
                            // one norm (stablelm: mlp_norm_w / _b alias attn_norm_w / _b)
    enum qk_norm qk_norm;
    int norm_unit;    // LayerNorms without weight or bias (olmo's OlmoLayerNorm): the norm weights are
                      // ones and zeros made at load, so every backend's LayerNorm runs them
    float clip_qkv;   // q, k, v clamped to [-clip_qkv, clip_qkv] after their projections (olmo); 0: none
    int rope_dims;    // rotated dims per head, from the front (partial rotary); 0 = head_dim
    float rope_attn_factor;        // yarn: cos and sin are multiplied by it
    float rope_beta_fast, rope_beta_slow;  // yarn ramp bounds (rotations)
    int rope_truncate;             // yarn: correction range rounded outwards
    int sliding_window;            // keys a token sees in a sliding-window layer (itself included); 0 = none
    unsigned char swa[MODEL_MAX_LAYERS];  // swa[l] = 1: layer l uses the sliding window
    unsigned fused;                // MODEL_FUSED_* bits
    int bos_id, eos_id;              // from config.json / header; -1 when absent
    unsigned char xsa[MODEL_MAX_LAYERS];  // xsa[l] = 1: Exclusive Self Attention in layer l
    int xsa_unknown;     // the file has XSA gates but not where XSA runs (a parameter-golf file without
                         // XSA_LAST_N): nothing scores it until --xsa says (model_apply_xsa_spec)
    // Features of the parameter-golf / modded-nanogpt family; all zero for every other model.
    int norm_weightless; // RMSNorms without a gain (F.rms_norm(x, (C,))): norm weights are NULL
    int mlp_relu2;       // MLP proj(relu(fc(x))^2) (w_up, w_down; no gate)
    int embed_norm;      // x0 = RMSNorm(embedding) (no weight) before the first block
    int unet_skips;      // U-Net: the first n_layer/2 outputs pushed, popped by the later layers
    int skip_rows;       // skip_weights rows when fewer than n_layer/2: decoder layer i uses row min(i, rows - 1) (2026-04-03;
                         // with skip_stop, 2026-04-04: no skip past the rows); 0: row i
    int skip_stop;
    int skip_after;      // 1: a decoder layer adds its skip after the block (a fork's order), 0: before
    int n_blocks;        // distinct weight blocks; layer l uses block l % n_blocks (0: n_layer)
    float logit_softcap; // logits c*tanh(logits/c) before the log-softmax; 0: none
    int bigram_vocab, bigram_dim;  // BigramHashEmbedding table (0: none)
    int bigram_mul_hash; // ... hashed as the 2026-03-21 non-record's RecurrentGPT: (1000003 t_prev + t) mod V_b,
                         //   t_prev = t at a request's first token; proj always, no scale
    int depth_lora_rank; // per-layer LoRA on q and v (layer_weights.lora_*; RecurrentGPT's depth_adapters); 0: none
    int smear;           // SmearGate on the normed embedding
    int ln_scale;        // layer l's normed attention and MLP inputs times 1/sqrt(l + 1) (LN_SCALE)
    float mlp_leaky_slope;  // relu^2 MLP: leaky_relu(x, slope)^2 (0: relu(x)^2)
    int ve_dim;          // shared value embedding width (0: none; layers with ve_scale add it to v)
    int trigram;         // the bigram table also adds its trigram hash's row (TRIGRAM)
    int value_residual;  // layer 0's v (v0) is mixed into later layers' v (vrl_alpha / vr_lambda)
    // The 2026-03-31 record's GPT (parallel residuals, mini depth recurrence).
    unsigned char attn_off[MODEL_MAX_LAYERS];  // attn_off[l] = 1: layer l has no attention (DISABLE_LAYER0_ATTN)
    int lanes_from;      // layers from this one on keep two residual lanes (lane_resid, lane_post); 0: none
    int lanes_together;  // ... 2026-04-10's: attention (lane 0 + x0) and MLP (lane 1) side by side, skips into lane 0
    int lanes_split;     // ... 2026-04-04/08's: attention on lane 0 (mixed with x0, kept), the MLP on lane 1 alone,
                         //   merged by model.lane_merge; later skips into lane 0 (lanes_skip_lane0) or none
    int lanes_skip_lane0;
    int lanes_final;     // ... the final norm reads their mean (0), lane 0 (1) or lane 1 (2) (PARALLEL_FINAL_LANE)
    // The attention gates (layer_weights.attn_gate_w): y_h *= mult sigmoid(scale (w_h . x[:window]) + b_h),
    // x the attention input: 2026-03-25's GATED_ATTENTION (window C, bias), 2026-04-16's output gate
    // (window 12, mult 2), 2026-04-19's dense and 2026-04-23's sparse gates (SPARSE_ATTN_GATE_SCALE).
    int attn_gate_window;
    float attn_gate_scale, attn_gate_mult;
    int smear_fwd_window;  // 2026-04-16's SmearGate on the raw embedding (model.smear_fwd_w); 0: none
    int smear_fwd_bos_fix; // ... not at a BOS token (2026-04-27 on)
    int n_physical;      // depth recurrence: the distinct layers the n_layer virtual ones run (0: no recurrence)
    int recur_runs;      // ... how often the recurrent layers run
    char recur_layers[48];  // ... which they are ("4,5", or "4..5"), for `info`
    int layer_loops;     // ... by NUM_LOOPS (LOOP_START .. LOOP_END run again in place, 2026-04-05 on), not RECUR_LAYERS
    unsigned char mlp_reads_input[MODEL_MAX_LAYERS];  // GPT-J block: x + a attn(n(x)) + m mlp(n(x)) (PARALLEL_RESIDUAL_START)
    short ln_layer[MODEL_MAX_LAYERS];  // LN_SCALE's i in 1 / sqrt(i + 1) for layer l (a looped model: its block's)
    // The Gemma families (gemma, gemma2, gemma3_text); all zero for every other model. Their RMSNorms'
    // (1 + w) gains are added up at load (model_internal.h's weight_spec.norm_plus_one).
    int norm_plus_one;   // the RMSNorm gains in memory are 1 + the file's (for `info`)
    float embed_scale;   // the embedding rows times it (sqrt(hidden_size) in float32); 0: none
    int mlp_gelu_gate;   // gated MLP gelu_tanh(gate) * up (GeGLU) in place of SwiGLU
    float attn_scale;    // the attention's score scale (gemma2, gemma3: query_pre_attn_scalar^-1/2); 0: head_dim^-1/2
    float attn_softcap;  // scores c tanh(s / c) after that scale (gemma2's attn_logit_softcapping); 0: none
    float rope_local_theta;  // sliding-window layers' RoPE base, unscaled (gemma3's rope_local_base_freq);
                             // 0: every layer rotates as the others
    // phi and opt; all zero for every other model.
    int norm_shared;     // phi: one LayerNorm feeds attention and MLP (layer_weights' mlp norm is the attention's)
    int learned_pos;     // opt: learned positions (model.pos_emb) in a RoPE-less decoder of arch LLAMA
    int mlp_relu;        // opt: up -> ReLU -> down (mlp_plain)
    int post_ln;         // opt's do_layer_norm_before false: x = norm(x + sublayer(x)), the block's norms after its adds
    int no_final_norm;   // opt: no norm before the head (post-LN, or _remove_final_layer_norm)
    int embed_dim;       // opt's word_embed_proj_dim E when it differs from d_model: tok_emb and the head (V, E),
                         //   model.proj_in (C, E) after the embedding, model.proj_out (E, C) before the head; 0: none
    unsigned char no_rope[MODEL_MAX_LAYERS];  // no_rope[l] = 1: layer l's q and k are not rotated (smollm3's NoPE layers)
    // granite's multipliers (0: none): the embedding times embed_scale and the scores times
    // attn_scale (above), each sublayer's output times residual_scale before its residual add, the
    // logits divided by logit_divisor
    float residual_scale;
    float logit_divisor;
};

struct layer_weights {
    float *attn_norm_w, *attn_norm_b;  // (C), (C) ; bias NULL for RMSNorm; gain NULL: no pre-norm (olmo2)
    float *q_norm_w, *k_norm_w;        // qk_norm gains: (hd) each (HEAD) or (H*hd), (Hkv*hd) (FULL); NULL: no gain
    float *q_norm_b, *k_norm_b;        // their biases: the q/k norms are LayerNorms (phi's qk_layernorm); NULL: RMSNorms
    float *post_attn_norm_w;           // (C) RMSNorm on the attention output before the residual add (olmo2)
    float *post_mlp_norm_w;            // (C) the same on the MLP output
    float *wq, *bq;                    // (H*hd, C), (H*hd) or NULL
    float *wk, *bk;                    // (Hkv*hd, C), (Hkv*hd) or NULL
    float *wv, *bv;                    // (Hkv*hd, C), (Hkv*hd) or NULL
    float *wo, *bo;                    // (C, H*hd), (C) or NULL
    float *mlp_norm_w, *mlp_norm_b;    // (C), (C) ; bias NULL for RMSNorm; gain NULL: no pre-norm (olmo2)
    float *w_gate, *b_gate;            // (F, C) llama SwiGLU gate ; NULL for gpt2
    float *w_up, *b_up;                // (F, C) ; gpt2 c_fc
    float *w_down, *b_down;            // (C, F) ; gpt2 mlp.c_proj
    // parameter-golf extras, NULL when absent
    float *q_gain;                     // (H) multiplies each q head after RoPE
    float *xsa_gate;                   // (H) tanh(alpha): gated XSA subtracts gate * projection (NULL: 1)
    float *resid_mix;                  // (2, C) x = m0*x + m1*x0 before the block
    float *attn_scale, *mlp_scale;     // (C) scale each branch before its residual add
    float *out_scale;                  // (C) x *= out_scale after the block (a recurrence pass gate)
    float *ve_scale;                   // (1) v += ve_scale * value embedding of the token (NULL: none)
    float *attn_gate_w, *attn_gate_b;  // (H, attn_gate_window), (H) or NULL: the attention gate (model_config)
    float *dtg_w, *dtg_b;              // (C), (1) x = x_in + sigmoid(w . x_in + b) (x - x_in) over the block (DTG_ENABLED)
    float *vrl_alpha;                  // (1) v += sigmoid(alpha) v0 (VALUE_RESIDUAL, 2026-03-25)
    float *vr_lambda;                  // (2) v = lambda0 v0 + lambda1 v (VALUE_RESIDUAL, 2026-03-23)
    float *lane_resid;                 // (2) two-lane layers: each lane times r[s] before sublayer s (attention 0, MLP 1) adds
    float *lane_post;                  // (2, 2) ... post[s][k] times sublayer s's output into lane k (0 attention's, 1 MLP's)
    // q += up_q(down_q(n)), v += up_v(down_v(n)) from the normed input n (model_config.depth_lora_rank r):
    // (r, C), (H*hd, r), (r, C), (Hkv*hd, r); NULL: none
    float *lora_q_down, *lora_q_up, *lora_v_down, *lora_v_up;
};

// modded-nanogpt's GPT (records/track_1_short/2026-05-07_XSAGatedLayers to the root train_gpt.py; docs/modded-nanogpt.md):
// a decoder of its own topology, run by kernels/cpu/cpu_mnanogpt.c. Layer l's q, k, v, o are
// layers[l].wq..wo with sa_lambdas folded in as the record folds them (F.linear(x, lambda * W)),
// its MLP layers[l].w_up / w_down (relu^2).
#define MNG_LAYERS 11
#define MNG_GATE_IN 12    // the gates read the first 12 features of their input
struct mng_layer {
    int attn;            // 0: no attention (the record's layer 6: its skip connection instead)
    int paired;          // paired heads: heads 2p, 2p+1 of a token are two positions 2t, 2t+1 of one head
    int window;          // keys a query sees back (flash-attn window_size[0]; in paired positions when paired)
    int key_offset;      // the stationary half of k comes from the token before (long-window layers)
    int ve;              // value embedding 0..4, or -1
    float resid_attn, resid_mlp, post_attn, post_mlp, x0_lambda, bigram_lambda;  // bfloat16-rounded, as the record
    float *xsa_gate;     // (H) tanh(xsa_alphas[l]), or NULL: no XSA
    float *attn_gate;    // (H, 12) y_h *= sigmoid(attn_gate[h] . x[:12])
    float *ve_gate;      // (H, 12) v_h += 2 sigmoid(ve_gate[h] . g) ve_h, g = cat(x[:6], ve[:6]) (paired, before MUDD: x[:12])
    // The root train_gpt.py's per-token gates (MUDD gates), as columns of its gate vector, or -1:
    // tanh(g) is the XSA strength of each head (y -= tanh(g) (y . v / max(|v|^2, 1e-8)) v), g the
    // attention output's gate per head (no sigmoid), g times x0, g times the bigram row.
    int g_xsa, g_attn, g_x0, g_bigram;
    int dc;              // the DC correction after attention (the root train_gpt.py's layer 10)
};
#define MNG_MUDD_SCALE 0.1f  // GPT._mudd_scale: the MUDD coefficients are (w2 gelu(w1 x) + b2) times it
#define MNG_DENSE_COLS 8     // 2026-04-22's dense_w2 (2, dim, 2, 8): channel (V, residual) by column
#define MNG_MUDD_COEF 14     // coefficients at the last layer (5 after the loop)
#define MNG_GATE_PRE 26      // MUDD gate columns from x0: XSA 1, 3; attention gate 3; x0/bigram 0..3
#define MNG_GATE_POST 41     // ... from layer 4's input: XSA 4, 7; attention gate 10; x0/bigram 4, 5, 7, 8, 9; skip; DC
#define MNG_DC_WINDOW 112    // keys the DC correction's softmax reads back (the token's own included)
#define MNG_DC_HEADS 6       // the gate layout's heads
struct mng_model {
    struct mng_layer layer[MNG_LAYERS];
    float *value_embeds;           // (5, V, C)
    float *bigram_emb;             // (bigram_vocab, bigram_dim) added to the first bigram_dim channels
    int bigram_vocab, bigram_dim;  // (bigram_dim: C before 2026-05-20)
    int record_bos;                // the record's BOS_ID (50256, or the sidecar's), even past the vocabulary
    // 2026-05-20's sign trick, or NULL: the bigram row times row (t_prev xor t) mod sign_rows of
    // this (sign_rows, bigram_dim) +-1 table (row 0 without a previous token); its layer-0 add
    // lands in x0 itself (the record adds in place into the tensor x0 names), its per-layer add
    // after the x0 injection.
    float *bigram_sign;
    int sign_rows;
    // MUDD connections (the root train_gpt.py from 2026-05-25: 06-11, 07-13, 07-17), or NULL:
    // mudd_w1 (2, mudd_dim, C), mudd_w2 (2, mudd_coef, mudd_dim), mudd_b2 (2, mudd_coef). Block 0
    // at the last layer mixes V and the residual from layers 0, 7 and its input; block 1 after
    // the loop replaces the backout. Their value-embedding gates read cat(x[:6], ve[:6]) on
    // paired layers too.
    float *mudd_w1, *mudd_w2, *mudd_b2;
    int mudd_dim, mudd_coef;
    float mudd_scale;              // GPT._mudd_scale: 0.1; 2026-04-22's 0.2 / sqrt(3)
    // 2026-04-22 MuddFormer's dense connections (its this_pr_v3; dense_w1/w2/bs, read at load into
    // mudd_w1's layout: the same 14 + 5 coefficients), or 0: no XSA; V gains 1.15 times its
    // mix before the value embedding, gated by mu6 | mu7 plus 2; layer 10's x0 and bigram terms
    // summed before they join the residual; paired layers' value-embedding gates read x[:12].
    int mudd_dense;
    // MUDD gates (2026-05-27, the root train_gpt.py since), or NULL: networks of mudd_w1's form,
    // gate_w1 (2, gate_dim, C), gate_w2 (2, gate_coef, gate_dim), gate_b2 (2, gate_coef), times
    // gate_scale. Gate 0 reads x0 (MNG_GATE_PRE columns), gate 1 the residual into layer 4
    // (MNG_GATE_POST columns, after those): they replace xsa_alphas, the attention gates, the x0
    // and bigram lambdas and the skip gate (g_skip), and give the DC weights (g_dc: 6 w1, then 6 w2).
    float *gate_w1, *gate_w2, *gate_b2, gate_scale;
    int gate_dim, gate_coef, g_skip, g_dc;
    // The gate vector's layout: gate_pre columns of block 0, then gate_post of block 1 (read from
    // the input of layer gate_post_layer), then (this_pr_v1) 2H DC weights: gate_stride a token.
    int gate_pre, gate_post, gate_post_layer, gate_stride;
    // 2026-05-27's this_pr_v1 (xsa_alphas beside the gates, unused), or 0: block 0 gives XSA for
    // layers 1, 3, 4, the attention gate of 3 and x0/bigram gates for 0..5; block 1 (layer 6's
    // input) XSA for 7, the attention gate of 10, x0/bigram for 7..10 and the skip; the gates are
    // times gate_scale then 0.5; XSA in the F.normalize form (y -= tanh(g) (y . vn) vn); x0 and
    // bigram terms summed before they join the residual (layer 10 too, in place of mu10, mu11);
    // the DC weights from their own network on the attention input, dc_w2 gelu_tanh(dc_w1 x):
    // dc_w1 (2H, C), dc_w2 (2H, 2H), layer 10's of dc_w1_bank, dc_w2_bank.
    int gates_v1;
    float *dc_w1, *dc_w2;
    float *smear_gate, *skip_gate; // (12) each
    float smear_lambda, backout_lambda, skip_lambda;
    float attn_scale;              // softmax scale after the YaRN updates (both Yarns share it)
    float rope_freq[1024];         // (hd) angular frequencies after the YaRN updates (mng_rotary_row)
    int ws_short, ws_long;         // tokens
};

// Yarn's factor tables at `row` (a position; paired layers: 2 pos and 2 pos + 1): f1 = cos, f2 =
// sin of row * rope_freq in float32, rounded to bfloat16, odd columns of f2 negated. Computed per
// row rather than stored, so that no position is past a table (the record's val chunks reach 2^18).
void mng_rotary_row(const struct mng_model *g, int hd, long row, float *f1, float *f2);

struct model {
    struct model_config cfg;
    struct mng_model *mng;             // modded-nanogpt's topology, or NULL
    float *tok_emb;                    // (V, C)
    float *pos_emb;                    // (max_seq_len, C) gpt2 only, else NULL
    struct layer_weights *layers;      // (n_layer)
    float *final_norm_w, *final_norm_b;  // (C), (C) ; bias NULL for llama
    float *lm_head;                    // (V, C) ; == tok_emb when tied_head
    float *lm_head_b;                  // (V) the head's bias (phi), or NULL
    float *proj_in, *proj_out;         // (C, E), (E, C) opt's project_in / project_out (model_config.embed_dim), or NULL
    float *skip_weights;               // (n_layer/2, C) U-Net skip gains, or NULL
    float *skip_gates;                 // (n_layer/2, C) x = lerp(w * skip, x, sigmoid(gate)) (2026-03-31), or NULL: x + w * skip
    float lane_merge;                  // lanes_split: the final norm reads m lane 0 + (1 - m) lane 1
    float *lane_post_all, *lane_resid_all;  // (lane_rows, 2, 2), (lane_rows, 2): parallel_post_lambdas and
    int lane_rows;                          //   parallel_resid_lambdas, which layers' lane_post and lane_resid point into
    int pgolf_banks;                   // parameter-golf: the file held weight banks (qo_bank, ...), which TTT names
    float *smear_gate;                 // (C) SmearGate logits, or NULL
    float *smear_fwd_w;                // (smear_fwd_window) x_t += lambda sigmoid(w . e_t[:window]) e_(t-1), e the raw
    float smear_fwd_lambda;            //   embedding, before the norm (2026-04-16's SmearGate), or NULL
    float *bigram_emb, *bigram_proj;   // (bigram_vocab, bigram_dim), (C, bigram_dim) or NULL
    float bigram_scale;
    float *ve_emb, *ve_proj;           // (V, ve_dim), (Hkv*hd, ve_dim) or NULL: the shared value embedding
    float ve_scale;

    // Provenance, for `info` and the results JSON.
    char path[4096];                   // what --model named
    char format[16];                   // "safetensors" | "pytorch" (torch.save) | "llama2c" | "llmc" (llm.c) | "pgolf-int8" | "pgolf-int6[-pgrp]"
    char dtype[8];                     // dtype of the stored weights: "F32" | "F16" | "BF16"
    char weights_sha256[65];           // SHA-256 over the weight file(s), in file order
    char xsa_source[16];               // "config" | "--xsa" | "none"
    char weights_prefix[64];           // the wrapper's name dropped from every tensor name ("model."
                                       // of a Lightning checkpoint), "" when none
    long long n_params;                // distinct parameters (tied head counted once)
    int zero_biases;      // nanoGPT bias=False: the biases are zeros xsa-eval added (not counted, not listed)
    int has_train_step;                // the torch.save file records its training step (nanoGPT's
    long long train_step;              //   iter_num, a training loop's step or global_step)
    char train_step_unread[16];        // the key of a saved step that is no whole number ("" none)

    void *arena;                       // owns every float array above that is not in `mapping`
    size_t arena_bytes;
    // F32 weights of a safetensors checkpoint are not copied: their arrays point into the
    // read-only mapping of the file, which the model then owns. Weights are never written.
    void *mapping;
    void (*mapping_release)(void *mapping);
};

// Dimensions of a head that RoPE rotates: rope_dims, or the whole head.
static inline int model_rope_dims(const struct model_config *c) { return c->rope_dims ? c->rope_dims : c->head_dim; }

// The first position the model cannot encode, 0 when none: learned positions end at their table,
// and dynamic RoPE's frequencies change past the context (not modelled here).
static inline int model_position_limit(const struct model_config *c) {
    return c->arch == MODEL_ARCH_GPT2 || c->learned_pos || c->rope_scaling == ROPE_SCALE_DYNAMIC ? c->max_seq_len : 0;
}

// 1 when the model uses a feature of the parameter-golf family (which the CUDA backend lacks).
int model_has_family_features(const struct model *m);

// 1 when the model uses a feature of the Gemma families (which the CUDA backend lacks).
static inline int model_has_gemma_features(const struct model_config *c) {
    return c->norm_plus_one || c->embed_scale != 0 || c->mlp_gelu_gate || c->attn_scale != 0 || c->rope_local_theta != 0 ||
           c->attn_softcap != 0;
}

// The operation of m that the CUDA backend does not implement (phi's, opt's, stablelm's qk_layernorm,
// smollm3's NoPE layers, granite's multipliers), named for
// --device cuda's refusal; NULL when it has none of them.
const char *model_cuda_lacks(const struct model *m);

// The architecture's name for `info` and results: "gpt2", "llama", or "pgolf" for a model with
// the parameter-golf family's features.
const char *model_arch_name(const struct model *m);

// The family features m uses, comma-separated ("" for none), for `info`.
void model_describe_features(const struct model *m, char *out, size_t n);

// Loads a checkpoint directory (config.json + model.safetensors or a sharded index) or a
// llama2.c .bin file. On failure `m` holds nothing to free and err names the file and problem.
int model_load(struct model *m, const char *path, xsa_error *err);

// model_load with the Hugging Face config.json of a bare state-dict .pt given (`--config`); NULL:
// the config.json beside it. Any other checkpoint carries its own config and is refused with one.
int model_load_config(struct model *m, const char *path, const char *config, xsa_error *err);

// The notes a load has for the user (a prefix dropped from every tensor name), on stderr; the
// commands call it unless --quiet.
void model_print_notes(const struct model *m);
// --arch FILE.json: the architecture of a parameter-golf artifact, instead of the xsa_eval.json
// beside it (model/pgolf.h). Process-wide; the path must outlive every model_load.
void model_set_arch_file(const char *path);

// Windows of ctx tokens (`ppl --context`): an NTK-aware Rotary's base becomes that of a window of
// ctx tokens, as the family's eval_val at EVAL_SEQ_LEN ctx builds it; any other model is as it
// was. Call before a backend opens the model. Returns 1 when the base changed.
int model_set_window(struct model *m, int ctx);

// Applies an --xsa spec: "all", "none", "last:N" or "i,j,..." (0-based layer indices).
int model_apply_xsa_spec(struct model_config *cfg, const char *spec, xsa_error *err);
// XSA_EBADINPUT naming the fix when the file leaves open where XSA runs (cfg.xsa_unknown), else 0;
// every scoring path (backend_check_model, the TTT trainer) asks.
int model_check_xsa_known(const struct model *m, xsa_error *err);

// Number of layers with XSA, and a printable list such as "all", "none" or "3,4,5".
int model_xsa_count(const struct model_config *cfg);
void model_xsa_describe(const struct model_config *cfg, char *out, size_t n);

void model_free(struct model *m);

// SwiGLU (gate and up) rather than up -> GELU (or relu^2) -> down.
static inline int model_mlp_gated(const struct model_config *c) { return c->arch == MODEL_ARCH_LLAMA && !c->mlp_plain && !c->mlp_relu2; }

// The family name: config.json's model_type, else the arch's.
static inline const char *model_family(const struct model_config *c) {
    return c->family[0] ? c->family : c->arch == MODEL_ARCH_GPT2 ? "gpt2" : "llama";
}

// Index of the first NaN or +-Inf among x[0..n), or n when every value is finite. The readers
// refuse a checkpoint holding one (model_load fails naming the tensor); exposed for the load
// benchmark, which times this check alone.
size_t model_first_nonfinite(const float *x, size_t n);

#endif
