// cpu_train.c: the parameter-golf GPT's loss and its gradients (cpu_train.h). One pass is kept at
// a time: its activations for every layer, of one sequence, or with adapters of several windows
// side by side (each restarting at its own first row, row0). Its gradients are added to the
// parameters'. The pieces it is built from (GEMMs, adapters, norms, attention) are in
// cpu_train_ops.c.
#include "kernels/cpu/cpu_train.h"

#include <cblas.h>  // openblas_set_num_threads
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_pool.h"
#include "kernels/cpu/cpu_state.h"
#include "kernels/cpu/cpu_train_internal.h"

// ---- the model ----

// The first layer running layer l's block: blocks are told apart by their resid_mix, which every
// block the trainer takes has (looped records run blocks LOOP_START .. LOOP_END again).
static int first_of_block(const struct model *m, int l) {
    int k = 0;
    while (m->layers[k].resid_mix != m->layers[l].resid_mix) k++;
    return k;
}

// Whether layer l runs exactly the tensors of the first layer with its block (no untied repeats).
static int same_block(const struct layer_weights *a, const struct layer_weights *b) {
    return a->wq == b->wq && a->wk == b->wk && a->wv == b->wv && a->wo == b->wo && a->w_up == b->w_up && a->w_down == b->w_down &&
           a->q_gain == b->q_gain && a->attn_scale == b->attn_scale && a->mlp_scale == b->mlp_scale && a->ve_scale == b->ve_scale;
}

int cpu_train_check(const struct model *m, xsa_error *err) {
    const struct model_config *c = &m->cfg;
    if (model_check_xsa_known(m, err)) return XSA_EBADINPUT;
    const char *why = NULL;
    if (m->mng) why = "modded-nanogpt's topology";
    else if (!c->norm_weightless || !c->embed_norm || !c->mlp_relu2) why = "norms or an MLP other than the records' (weightless RMSNorm, relu^2)";
    else if (!c->tied_head || c->logit_softcap <= 0) why = "an untied or uncapped head";
    else if (c->rope != ROPE_HALF_NEG || c->qk_norm != QK_NORM_HEAD) why = "RoPE or QK-norm other than the records'";
    else if (c->n_blocks && c->n_blocks != c->n_layer && !c->n_physical) why = "blocks shared by several layers (SHARED_CYCLE_LEN, NUM_UNIQUE_BLOCKS)";
    else if (c->parallel_residual) why = "parallel residuals";
    else if (c->trigram) why = "TRIGRAM";
    else if (c->bigram_mul_hash || c->depth_lora_rank) why = "RecurrentGPT's bigram hash and depth LoRA";
    else if (c->smear_fwd_window && m->bigram_emb) why = "the 2026-04-16 SmearGate beside a bigram table";
    else if (c->skip_after) why = "U-Net skips after the block";
    else if (c->sliding_window) why = "sliding-window layers";
    for (int l = 0; !why && l < c->n_layer; l++) {
        const struct layer_weights *w = &m->layers[l];
        int plain = !(c->lanes_from && l >= c->lanes_from) && !c->mlp_reads_input[l] && !c->attn_off[l];
        if (w->dtg_w && !plain) why = "DTG_ENABLED in a block of two lanes, a GPT-J block or one without attention";
        else if (w->vrl_alpha) why = "2026-03-25's VALUE_RESIDUAL (vrl_alpha)";
        else if (c->value_residual && (c->attn_off[0] || (w->vr_lambda && !plain))) why = "VALUE_RESIDUAL beside two lanes or layers without attention";
        else if (w->xsa_gate || w->out_scale) why = "gated XSA or recurrence gates";
        else if (w->bq || w->bk || w->bv || w->bo || w->b_up || w->b_down) why = "biases";
        else if (w->q_norm_w || w->k_norm_w || w->attn_norm_w || w->mlp_norm_w) why = "norm gains";
        else if (!w->q_gain || !w->resid_mix || !w->attn_scale || !w->mlp_scale) why = "a block without q_gain, resid_mix or scales";
        else if (!same_block(w, &m->layers[first_of_block(m, l)])) why = "recurrent layers with MLPs of their own (REPEAT_UNTIE_MLP)";
    }
    if (why)
        return xsa_fail(err, XSA_EBADINPUT, "%s: test-time training trains the GPTs of parameter-golf's records with full-parameter "
                        "TTT (eval_val_sliding_ttt of 2026-03-23/29/31 and 2026-04-06/08, eval_val_ttt of 2026-04-04 and 2026-04-09) or "
                        "LoRA adapters (eval_val_ttt_lora of 2026-04-10), and this model has %s; score it without --ttt", m->path, why);
    if (m->mapping) return xsa_fail(err, XSA_EBADINPUT, "%s: its weights are mapped read-only; test-time training writes them", m->path);
    return 0;
}

static float *add_param(struct cpu_trainer *t, const char *name, float *w, long n, int block) {
    struct train_param *p = &t->p[t->n_p++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->w = w, p->n = n, p->block = block;
    p->grad = xsa_calloc((size_t)n, sizeof(float));
    return p->grad;
}

// A layer's attention or MLP matrix (train_param.matrix).
static float *add_matrix(struct cpu_trainer *t, const char *name, float *w, long n, int block) {
    float *g = add_param(t, name, w, n, block);
    t->p[t->n_p - 1].matrix = 1;
    return g;
}

static float *alloc_f(long n) { return xsa_calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

// One sequence of n rows: a window at row 0, slot 0 (every pass but cpu_trainer_windows').
static void one_window(struct cpu_trainer *t, int n) {
    t->S = n, t->n_win = 1;
    t->pw[0] = (struct pass_win){0, n, 0};
    t->row0[0] = 1;
    memset(t->row0 + 1, 0, (size_t)(n - 1));
}

// The RoPE tables for positions pos0 .. pos0 + S_max - 1 (the angles float32 products, as torch's
// Rotary makes them for a batch's whole length).
static void rope_at(struct cpu_trainer *t, long pos0) {
    if (t->rope_pos0 == pos0) return;
    int S = t->S_max, h2 = model_rope_dims(&t->m->cfg) / 2;
    int32_t *pos = xsa_malloc((size_t)S * sizeof *pos);
    for (int i = 0; i < S; i++) pos[i] = (int32_t)(pos0 + i);
    cpu_rope_table(pos, S, &t->m->cfg, t->cos_t, t->sin_t);
    free(pos);
    for (long i = 0; i < (long)S * h2; i++) t->nsin_t[i] = -t->sin_t[i];
    t->rope_pos0 = pos0;
}

struct cpu_trainer *cpu_trainer_open(struct model *m, int S, int n_threads, xsa_error *err) {
    if (cpu_train_check(m, err)) return NULL;
    const struct model_config *c = &m->cfg;
    struct cpu_trainer *t = xsa_calloc(1, sizeof *t);
    t->m = m, t->S = S, t->S_max = S, t->L = c->n_layer, t->C = c->d_model, t->H = c->n_head, t->Hkv = c->n_kv_head, t->hd = c->head_dim;
    t->Q = t->H * t->hd, t->KV = t->Hkv * t->hd, t->F = c->d_ff, t->V = c->vocab_size;
    t->n_enc = c->unet_skips ? c->n_layer / 2 : 0;
    t->n_skip = t->n_enc < c->n_layer - t->n_enc ? t->n_enc : c->n_layer - t->n_enc;
    if (n_threads <= 0) n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n_threads < 1) n_threads = 1;
    t->n_threads = n_threads;
    openblas_set_num_threads(1);  // one OpenBLAS thread per pool task (cpu_backend.c does the same)
    if (!(t->pool = cpu_pool_create(n_threads))) {
        free(t);
        xsa_fail(err, XSA_ERUNTIME, "could not start %d threads", n_threads);
        return NULL;
    }
    int L = t->L, C = t->C, Q = t->Q, KV = t->KV, F = t->F, V = t->V;
    t->p = xsa_calloc((size_t)(32 + 20 * L), sizeof *t->p);  // (at most 16 outside the layers, 18 a layer)
    t->gl = xsa_calloc((size_t)L, sizeof *t->gl);
    char nm[48];
    // Each block's tensors are one parameter however many layers run it (their gradients add up),
    // named by its index among the blocks in order of first use (the records' blocks.N).
    int *first = xsa_calloc((size_t)L * 4, sizeof *first), *blk = first + L, n_blk = 0;  // layer l's block: its first layer, its index
    int *pfirst = first + 2 * L, *phys = first + 3 * L, n_phys = 0, n_repeat = 0;  // ... its matrices' first layer, their physical layer
    for (int l = 0; l < L; l++) {
        first[l] = first_of_block(m, l);
        blk[l] = first[l] == l ? n_blk++ : blk[first[l]];
        for (pfirst[l] = 0; m->layers[pfirst[l]].wv != m->layers[l].wv; pfirst[l]++) {}
        phys[l] = pfirst[l] == l ? n_phys++ : phys[pfirst[l]];
    }
    t->g_tok = add_param(t, "tok_emb.weight", m->tok_emb, (long)V * C, -1);
    if (m->bigram_emb) {
        t->g_bemb = add_param(t, "bigram.embed.weight", m->bigram_emb, (long)c->bigram_vocab * c->bigram_dim, -1);
        if (m->bigram_proj) t->g_bproj = add_param(t, "bigram.proj.weight", m->bigram_proj, (long)C * c->bigram_dim, -1);
        t->g_bscale = add_param(t, "bigram.scale", &m->bigram_scale, 1, -1);
    }
    if (m->smear_gate) t->g_smear = add_param(t, "smear.gate", m->smear_gate, C, -1);
    if (m->smear_fwd_w) {
        t->g_sfw = add_param(t, "smear_gate.weight", m->smear_fwd_w, c->smear_fwd_window, -1);
        t->g_sfl = add_param(t, "smear_lambda", &m->smear_fwd_lambda, 1, -1);
        t->e_raw = alloc_f((long)S * C), t->e_prev = alloc_f(C), t->de_prev = alloc_f(C);
    }
    long skip_rows = c->skip_rows ? c->skip_rows : t->n_skip;  // (2026-04-03/04: fewer rows than skips)
    if (m->skip_weights) t->g_skip = add_param(t, "skip_weights", m->skip_weights, skip_rows * C, -1);
    if (m->skip_gates) t->g_gate = add_param(t, "skip_gates", m->skip_gates, skip_rows * C, -1);
    if (c->lanes_from && c->lanes_split) t->g_lm = add_param(t, "lane_merge", &m->lane_merge, 1, -1);
    if (c->lanes_from && !c->lanes_split) {
        t->g_post = add_param(t, "parallel_post_lambdas", m->lane_post_all, 4L * m->lane_rows, -1);
        t->g_resid = add_param(t, "parallel_resid_lambdas", m->lane_resid_all, 2L * m->lane_rows, -1);
    }
    for (int l = 0; l < L; l++) {
        struct layer_weights *w = &m->layers[l];
        int b = blk[l];
        if (first[l] != l) {
            t->gl[l] = t->gl[first[l]];
            continue;
        }
        int p = phys[l];
        if (pfirst[l] != l) {  // (2026-03-31: a recurrent layer's own block over an earlier layer's matrices, or its MLP's own)
            const struct layer_weights *w0 = &m->layers[pfirst[l]];
            t->gl[l] = t->gl[pfirst[l]];
            snprintf(nm, sizeof nm, "repeat_mlp.%d.fc.weight", n_repeat);
            if (w->w_up != w0->w_up) t->gl[l].up = add_matrix(t, nm, w->w_up, (long)F * C, -1);
            snprintf(nm, sizeof nm, "repeat_mlp.%d.proj.weight", n_repeat++);
            if (w->w_down != w0->w_down) t->gl[l].down = add_matrix(t, nm, w->w_down, (long)C * F, -1);
        } else if (m->pgolf_banks) {  // not in a Block, so TTT_FREEZE_BLOCKS never freezes them (as the records' TTT)
            snprintf(nm, sizeof nm, "qo_bank[%d]", p), t->gl[l].wq = add_matrix(t, nm, w->wq, (long)Q * C, -1);
            snprintf(nm, sizeof nm, "qo_bank[%d]", n_phys + p), t->gl[l].wo = add_matrix(t, nm, w->wo, (long)C * Q, -1);
            snprintf(nm, sizeof nm, "kv_bank[%d]", p), t->gl[l].wk = add_matrix(t, nm, w->wk, (long)KV * C, -1);
            snprintf(nm, sizeof nm, "kv_bank[%d]", n_phys + p), t->gl[l].wv = add_matrix(t, nm, w->wv, (long)KV * C, -1);
            snprintf(nm, sizeof nm, "mlp_up_bank[%d]", p), t->gl[l].up = add_matrix(t, nm, w->w_up, (long)F * C, -1);
            snprintf(nm, sizeof nm, "mlp_down_bank[%d]", p), t->gl[l].down = add_matrix(t, nm, w->w_down, (long)C * F, -1);
        } else {  // (blocks.N: the physical layer's; a block without attention has no attention weights in an int6 dict)
            if (w->wq) {
                snprintf(nm, sizeof nm, "blocks.%d.attn.c_q.weight", p), t->gl[l].wq = add_matrix(t, nm, w->wq, (long)Q * C, p);
                snprintf(nm, sizeof nm, "blocks.%d.attn.c_k.weight", p), t->gl[l].wk = add_matrix(t, nm, w->wk, (long)KV * C, p);
                snprintf(nm, sizeof nm, "blocks.%d.attn.c_v.weight", p), t->gl[l].wv = add_matrix(t, nm, w->wv, (long)KV * C, p);
                snprintf(nm, sizeof nm, "blocks.%d.attn.proj.weight", p), t->gl[l].wo = add_matrix(t, nm, w->wo, (long)C * Q, p);
            }
            snprintf(nm, sizeof nm, "blocks.%d.mlp.fc.weight", p), t->gl[l].up = add_matrix(t, nm, w->w_up, (long)F * C, p);
            snprintf(nm, sizeof nm, "blocks.%d.mlp.proj.weight", p), t->gl[l].down = add_matrix(t, nm, w->w_down, (long)C * F, p);
        }
        snprintf(nm, sizeof nm, "blocks.%d.attn.q_gain", b), t->gl[l].q_gain = add_param(t, nm, w->q_gain, t->H, b);
        snprintf(nm, sizeof nm, "blocks.%d.attn_scale", b), t->gl[l].attn_scale = add_param(t, nm, w->attn_scale, C, b);
        snprintf(nm, sizeof nm, "blocks.%d.mlp_scale", b), t->gl[l].mlp_scale = add_param(t, nm, w->mlp_scale, C, b);
        snprintf(nm, sizeof nm, "blocks.%d.resid_mix", b), t->gl[l].resid_mix = add_param(t, nm, w->resid_mix, 2L * C, b);
        if (w->vr_lambda)
            snprintf(nm, sizeof nm, "blocks.%d.attn.vr_lambda", b), t->gl[l].vr_lambda = add_param(t, nm, w->vr_lambda, 2, b);
        if (w->attn_gate_w) {  // (2026-04-16's output gate, times 2, is attn_gate_proj; the dense and sparse gates attn_gate_w;
            int W = c->attn_gate_window;  //  2026-03-23's GATED_ATTENTION, with a bias, attn_gate)
            snprintf(nm, sizeof nm, w->attn_gate_b ? "blocks.%d.attn.attn_gate.weight" : c->attn_gate_mult == 2.0f ? "blocks.%d.attn.attn_gate_proj.weight" : "blocks.%d.attn.attn_gate_w", b);
            t->gl[l].attn_gate = add_param(t, nm, w->attn_gate_w, (long)t->H * W, b);
        }
        if (w->attn_gate_b)
            snprintf(nm, sizeof nm, "blocks.%d.attn.attn_gate.bias", b), t->gl[l].attn_gate_b = add_param(t, nm, w->attn_gate_b, t->H, b);
        if (w->dtg_w) {
            snprintf(nm, sizeof nm, "blocks.%d.dtg_gate.weight", b), t->gl[l].dtg_w = add_param(t, nm, w->dtg_w, C, b);
            snprintf(nm, sizeof nm, "blocks.%d.dtg_gate.bias", b), t->gl[l].dtg_b = add_param(t, nm, w->dtg_b, 1, b);
        }
    }
    if (m->ve_emb) {
        t->g_veemb = add_param(t, "ve_shared.embed.weight", m->ve_emb, (long)V * c->ve_dim, -1);
        if (m->ve_proj) t->g_veproj = add_param(t, "ve_shared.proj.weight", m->ve_proj, (long)KV * c->ve_dim, -1);
        t->g_vescale = add_param(t, "ve_shared.scale", &m->ve_scale, 1, -1);
        for (int l = 0, i = 0; l < L; l++)  // (a layer that runs an earlier layer's block: that block's scale)
            if (m->layers[l].ve_scale && first[l] == l) {
                snprintf(nm, sizeof nm, "ve_layer_scales.%d", i++);
                t->gl[l].ve_scale = add_param(t, nm, m->layers[l].ve_scale, 1, -1);
            } else if (m->layers[l].ve_scale) {
                t->gl[l].ve_scale = t->gl[first[l]].ve_scale;
            }
    }
    free(first);
    for (int l = c->lanes_from; t->g_post && l < L; l++)  // (the lambdas' rows are the layers' blocks')
        t->gl[l].lane_post = t->g_post + (m->layers[l].lane_post - m->lane_post_all),
        t->gl[l].lane_resid = t->g_resid + (m->layers[l].lane_resid - m->lane_resid_all);
    t->act = xsa_calloc((size_t)L, sizeof *t->act);
    for (int l = 0; l < L; l++) {
        struct layer_act *a = &t->act[l];
        a->xb = alloc_f((long)S * C), a->xin = alloc_f((long)S * C), a->an = alloc_f((long)S * C);
        a->qn = alloc_f((long)S * Q), a->kn = alloc_f((long)S * KV), a->qr = alloc_f((long)S * Q);
        a->qf = alloc_f((long)S * Q), a->kf = alloc_f((long)S * KV), a->v = alloc_f((long)S * KV);
        a->lse = alloc_f((long)S * t->H), a->y = alloc_f((long)S * Q), a->z = alloc_f((long)S * Q);
        a->ao = alloc_f((long)S * C), a->xo = alloc_f((long)S * C), a->mn = alloc_f((long)S * C);
        a->u = alloc_f((long)S * F), a->mo = alloc_f((long)S * C);
        int seq = c->lanes_from && l >= c->lanes_from && !c->lanes_split && !c->lanes_together;
        a->xp = alloc_f(m->skip_gates ? (long)S * C : 0), a->l1 = alloc_f(c->lanes_from && l >= c->lanes_from ? (long)S * C : 0);
        a->l1a = alloc_f(seq ? (long)S * C : 0), a->xp1 = alloc_f(seq && m->skip_gates ? (long)S * C : 0);
        a->ra = alloc_f(S), a->rq = alloc_f((long)S * t->H), a->rk = alloc_f((long)S * t->Hkv), a->rm = alloc_f(S);
        if (m->layers[l].attn_gate_w) a->gate = alloc_f((long)S * t->H), a->zg = alloc_f((long)S * Q);
        if (m->layers[l].vr_lambda && l > 0) a->vraw = alloc_f((long)S * KV);
        if (m->layers[l].dtg_w) a->dtg_pre = alloc_f((long)S * C), a->dtg_g = alloc_f(S), t->dtg_dx = t->dtg_dx ? t->dtg_dx : alloc_f((long)S * C);
    }
    int h2 = model_rope_dims(c) / 2;
    t->skip_out = alloc_f((long)t->n_enc * S * C), t->gskip = alloc_f((long)t->n_enc * S * C);
    t->n0 = alloc_f((long)S * C), t->r0 = alloc_f(S), t->pb = alloc_f((long)S * C), t->bh = xsa_calloc((size_t)S, sizeof *t->bh);
    int De = c->bigram_dim > c->ve_dim ? c->bigram_dim : c->ve_dim;
    t->be_rows = alloc_f((long)S * c->bigram_dim), t->ve_rows = alloc_f((long)S * c->ve_dim), t->t_e = alloc_f((long)S * De);
    if (m->ve_emb) t->vb = alloc_f((long)S * KV), t->dvb = alloc_f((long)S * KV);
    if (c->value_residual) t->dv0 = alloc_f((long)S * KV);
    t->sg = alloc_f(C);
    t->x0 = alloc_f((long)S * C), t->xf = alloc_f((long)S * C), t->rf = alloc_f(S);
    long lanes = c->lanes_from ? (long)S * C : 0;
    int gptj = 0;
    for (int l = 0; l < L; l++) gptj |= c->mlp_reads_input[l];
    t->lane1 = alloc_f(lanes), t->g1 = alloc_f(lanes), t->xl0 = alloc_f(lanes), t->dmn = alloc_f(gptj ? (long)S * C : 0);
    long together = c->lanes_from && !c->lanes_split ? (long)S * C : 0;
    t->da = alloc_f(together), t->dm = alloc_f(together), t->dxin = alloc_f(together);
    t->cos_t = alloc_f((long)S * h2), t->sin_t = alloc_f((long)S * h2), t->nsin_t = alloc_f((long)S * h2);
    t->g = alloc_f((long)S * C), t->gx0 = alloc_f((long)S * C);
    t->t_c = alloc_f((long)S * C), t->t_c2 = alloc_f((long)S * C), t->t_f = alloc_f((long)S * F), t->t_f2 = alloc_f((long)S * F);
    t->t_q = alloc_f((long)S * Q), t->t_q2 = alloc_f((long)S * Q), t->t_kv = alloc_f((long)S * KV), t->t_kv2 = alloc_f((long)S * KV);
    t->t_v = alloc_f((long)S * KV);
    t->lg = alloc_f((long)TILE * V), t->att_stride = 2L * QB * S + (long)S * t->hd, t->att_s = alloc_f((long)n_threads * t->att_stride);
    for (int l = 0; l < L && !t->dgs; l++)
        if (m->layers[l].attn_gate_w) t->dgs = alloc_f((long)S * t->H);
    t->pw = xsa_calloc((size_t)S, sizeof *t->pw), t->row0 = xsa_calloc((size_t)S, 1), t->xcat = xsa_calloc((size_t)S, sizeof *t->xcat);
    one_window(t, S);
    t->rope_pos0 = -1, t->seg_prev = -1;
    t->bproj = m->bigram_proj, t->veproj = m->ve_proj;
    rope_at(t, 0);
    return t;
}

void cpu_trainer_close(struct cpu_trainer *t) {
    if (!t) return;
    for (int i = 0; i < t->n_p; i++) free(t->p[i].grad);
    for (int l = 0; l < t->L; l++) {
        struct layer_act *a = &t->act[l];
        float *f[] = {a->xp, a->l1, a->l1a, a->xp1, a->xb, a->xin, a->an, a->qn, a->kn, a->qr, a->qf, a->kf, a->v, a->lse, a->y, a->z,
                      a->ao, a->xo, a->mn, a->u, a->mo, a->ra, a->rq, a->rk, a->rm};
        for (size_t i = 0; i < sizeof f / sizeof *f; i++) free(f[i]);
    }
    for (int l = 0; l < t->L; l++) {
        struct layer_act *a = &t->act[l];
        float *h[] = {a->hq, a->hk, a->hv, a->ho, a->hm, a->gate, a->zg, a->vraw, a->dtg_pre, a->dtg_g};
        for (size_t i = 0; i < sizeof h / sizeof *h; i++) free(h[i]);
    }
    free(t->dgs), free(t->e_raw), free(t->e_prev), free(t->de_prev), free(t->dv0), free(t->dtg_dx);
    for (int s = 0; s < t->n_slots; s++) {
        for (int i = 0; i < t->ls[s].n_p; i++) free(t->ls[s].p[i].w), free(t->ls[s].p[i].grad);
        for (int k = 0; k < LORA_KINDS; k++) free(t->ls[s].kind[k]);
        free(t->ls[s].p);
    }
    free(t->ls), free(t->h_lm), free(t->dh), free(t->dho), free(t->pw), free(t->row0), free(t->xcat);
    float *f[] = {t->da, t->dm, t->dxin, t->lane1, t->g1, t->xl0, t->dmn, t->sg, t->be_rows, t->ve_rows, t->vb, t->dvb, t->t_e, t->skip_out, t->gskip, t->n0, t->r0, t->pb, t->x0, t->xf, t->rf, t->cos_t, t->sin_t, t->nsin_t, t->g,
                  t->gx0, t->t_c, t->t_c2, t->t_f, t->t_f2, t->t_q, t->t_q2, t->t_kv, t->t_kv2, t->t_v, t->lg, t->att_s};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) free(f[i]);
    free(t->bh), free(t->bproj_q), free(t->veproj_q);
    free(t->act);
    free(t->gl);
    free(t->p);
    cpu_pool_destroy(t->pool);
    free(t);
}

int cpu_trainer_params(const struct cpu_trainer *t, struct train_param **out) {
    *out = t->p;
    return t->n_p;
}

// The skip_weights row decoder layer dec adds its encoder output with, or -1 for none: dec
// itself, but past the file's rows (2026-04-03/04, skip_rows) the last row (2026-04-03) or none
// (2026-04-04, skip_stop), as the forward's add_skip.
static int skip_row(const struct cpu_trainer *t, int dec) {
    const struct model_config *c = &t->m->cfg;
    if (!t->n_enc || dec < 0 || dec >= t->n_skip) return -1;
    if (c->skip_rows && dec >= c->skip_rows) return c->skip_stop ? -1 : c->skip_rows - 1;
    return dec;
}

// LN_SCALE's 1 / sqrt(i + 1), i the layer's block's index (a looped record's Block(layer_idx=i)).
static float layer_ln(const struct model_config *c, int l) { return c->ln_scale ? (float)(1.0 / sqrt(c->ln_layer[l] + 1.0)) : 1.0f; }

// The U-Net skip of row `row` from src into x (S rows): x = lerp(sw src, x, sigmoid(gate)) in
// torch.lerp's two forms, x as it was kept in xp (gated skips), or x += sw src.
static void skip_fwd(struct cpu_trainer *t, int row, const float *src, float *x, float *xp) {
    const struct model *m = t->m;
    int S = t->S, C = t->C;
    const float *sw = m->skip_weights + (long)row * C;
    if (!m->skip_gates) {
        train_scaled_add(x, x, sw, src, S, C);
        return;
    }
    const float *gt = m->skip_gates + (long)row * C;
    memcpy(xp, x, (size_t)S * C * sizeof *x);
    for (int r = 0; r < S; r++)
        for (int k = 0; k < C; k++) {
            long i = (long)r * C + k;
            float sk = sw[k] * src[i], wt = sigmoidf(gt[k]), d = x[i] - sk;
            x[i] = wt < 0.5f ? sk + wt * d : x[i] - d * (1.0f - wt);
        }
}

// Its backward from g (dL/dx after it, made dL/dx before it): the skip's weights', gates' and
// source's (gs) gradients.
static void skip_bwd(struct cpu_trainer *t, int row, const float *src, const float *xp, float *g, float *gs) {
    const struct model *m = t->m;
    int S = t->S, C = t->C;
    const float *sw = m->skip_weights + (long)row * C, *gt = m->skip_gates ? m->skip_gates + (long)row * C : NULL;
    float *gsw = t->g_skip + (long)row * C;
    for (int r = 0; r < S; r++)
        for (int k = 0; k < C; k++) {
            long i = (long)r * C + k;
            if (gt) {  // x = (1 - s) sw e + s xp, s = sigmoid(gate)
                float wt = sigmoidf(gt[k]), sk = sw[k] * src[i], ds = (1.0f - wt) * g[i];
                t->g_gate[(long)row * C + k] += g[i] * (xp[i] - sk) * wt * (1.0f - wt);
                gsw[k] += ds * src[i];
                gs[i] += sw[k] * ds;
                g[i] *= wt;
            } else {
                gsw[k] += g[i] * src[i];
                gs[i] += sw[k] * g[i];
            }
        }
}

// A sublayer's read out = m[0] lane + m[1] x0 (resid_mix m, (2, C)) over the S rows.
static void mix_fwd(const struct cpu_trainer *t, const float *m, const float *lane, float *out) {
    int C = t->C;
    for (int r = 0; r < t->S; r++)
        for (int k = 0; k < C; k++) out[(long)r * C + k] = m[k] * lane[(long)r * C + k] + m[C + k] * t->x0[(long)r * C + k];
}

// The backward of a sublayer's read m[0] lane + m[1] x0 (resid_mix m, (2, C)) from d, its
// gradient: m's into gm, x0's into t->gx0, and m[0] d added to the lane's gradient gl.
static void mix_bwd(struct cpu_trainer *t, const float *m, float *gm, const float *d, const float *lane, float *gl) {
    int C = t->C;
    for (int r = 0; r < t->S; r++)
        for (int k = 0; k < C; k++) {
            long i = (long)r * C + k;
            gm[k] += d[i] * lane[i];
            gm[C + k] += d[i] * t->x0[i];
            t->gx0[i] += m[C + k] * d[i];
            gl[i] += m[k] * d[i];
        }
}

// The backward of a 2026-03-31 sublayer's update of both lanes, lane k = r lane k + post[k] y
// (y = scale out; l0, l1 the lanes before it), from g and t->g1 (the lanes' gradients after it,
// made theirs before it): dL/dy into dy, r's gradient added to *gr, post's to gp[0..1].
static void lanes_seq_bwd(struct cpu_trainer *t, const float *scale, const float *out, float r, const float *post, const float *l0,
                          const float *l1, float *g, float *dy, double *gr, double *gp) {
    int C = t->C;
    for (long i = 0; i < (long)t->S * C; i++) {
        float y = scale[i % C] * out[i];
        *gr += (double)g[i] * l0[i] + (double)t->g1[i] * l1[i];
        gp[0] += (double)g[i] * y, gp[1] += (double)t->g1[i] * y;
        dy[i] = post[0] * g[i] + post[1] * t->g1[i];
        g[i] *= r, t->g1[i] *= r;
    }
}

// Forward of one sequence x (S tokens) up to the final norm (t->xf), activations kept.
static void forward_body(struct cpu_trainer *t, const int32_t *x) {
    struct model *m = t->m;
    const struct model_config *c = &m->cfg;
    int S = t->S, C = t->C, Q = t->Q, KV = t->KV, F = t->F, H = t->H, Hkv = t->Hkv, hd = t->hd;
    int rd = model_rope_dims(c);
    float eps = c->norm_eps;
    // embedding, bigram, norm, smear
    float *e = t->t_c;
    train_gather_rows(e, m->tok_emb, x, S, C);
    if (m->bigram_emb) {  // e += scale * proj(bigram_emb[(36313 t xor 27191 t_prev) mod (V_b - 1)])
        int mod = c->bigram_vocab - 1, D = c->bigram_dim;
        for (int i = 0; i < S; i++)
            t->bh[i] = t->row0[i] ? mod : cpu_hash_row(((uint32_t)36313 * (uint32_t)x[i]) ^ ((uint32_t)27191 * (uint32_t)x[i - 1]), mod);
        train_gather_rows(t->be_rows, m->bigram_emb, t->bh, S, D);
        if (m->bigram_proj) train_linear(t, t->be_rows, t->bproj, t->pb, S, D, C);
        else memcpy(t->pb, t->be_rows, (size_t)S * C * sizeof *t->pb);  // (D == C)
        for (long i = 0; i < (long)S * C; i++) e[i] += t->pb[i] * m->bigram_scale;
    }
    if (m->ve_emb) {  // the shared value embedding's rows, projected once for every ve layer
        train_gather_rows(t->ve_rows, m->ve_emb, x, S, c->ve_dim);
        if (m->ve_proj) train_linear(t, t->ve_rows, t->veproj, t->vb, S, c->ve_dim, KV);
        else memcpy(t->vb, t->ve_rows, (size_t)S * KV * sizeof *t->vb);  // (ve_dim == KV)
    }
    if (m->smear_fwd_w) memcpy(t->e_raw, e, (size_t)S * C * sizeof *e);
    if (m->smear_fwd_w && t->seg_prev >= 0) train_gather_rows(t->e_prev, m->tok_emb, &t->seg_prev, 1, C);
    if (m->smear_fwd_w)  // 2026-04-16's SmearGate: e_t += lambda sigmoid(w . e_t[:W]) e_(t-1), rows from the last (raw e_(t-1))
        for (int i = S - 1; i >= 0; i--) {  // (a window's first row: none; a segment's: the token before it)
            if ((t->row0[i] && t->seg_prev < 0) || (c->smear_fwd_bos_fix && x[i] == c->bos_id)) continue;
            double z = 0;
            for (int k = 0; k < c->smear_fwd_window; k++) z += (double)m->smear_fwd_w[k] * e[(long)i * C + k];
            float g = m->smear_fwd_lambda * sigmoidf((float)z);
            const float *ep = t->row0[i] ? t->e_prev : e + (long)(i - 1) * C;
            for (int k = 0; k < C; k++) e[(long)i * C + k] += g * ep[k];
        }
    train_rms_fwd(t, e, t->n0, t->r0, S, C, eps, 1.0f);
    float *sg = t->sg;  // sigmoid(smear gate), once per channel (backward reads it too)
    for (int k = 0; m->smear_gate && k < C; k++) sg[k] = sigmoidf(m->smear_gate[k]);
    for (int i = 0; i < S; i++)
        for (int k = 0; k < C; k++) {
            float n0 = t->n0[(long)i * C + k];
            t->x0[(long)i * C + k] = m->smear_gate ? (1 - sg[k]) * n0 + sg[k] * (t->row0[i] ? 0.0f : t->n0[(long)(i - 1) * C + k]) : n0;
        }
    float *xc = t->g;  // the residual stream as it goes
    memcpy(xc, t->x0, (size_t)S * C * sizeof *xc);
    for (int l = 0; l < t->L; l++) {
        struct layer_act *a = &t->act[l];
        const struct layer_weights *w = &m->layers[l];
        int dec = l - t->n_enc, lane = c->lanes_from && l >= c->lanes_from, first = lane && l == c->lanes_from;
        // seq: 2026-03-31's lanes, the attention on lane 0 and then the MLP on lane 1, each mixed
        // with x0 and writing both lanes, the skips into both
        int together = lane && c->lanes_together, seq = lane && !together && !c->lanes_split, row = skip_row(t, dec);
        if (first && (together || seq)) memcpy(t->lane1, xc, (size_t)S * C * sizeof *xc);  // (both lanes x, then the skip)
        const float *src = row >= 0 ? t->skip_out + (long)(t->n_enc - 1 - dec) * S * C : NULL;
        if (row >= 0 && (!lane || first || c->lanes_skip_lane0 || together || seq)) skip_fwd(t, row, src, xc, a->xp);  // (into lane 0)
        if (row >= 0 && seq) skip_fwd(t, row, src, t->lane1, a->xp1);
        if (first && !together && !seq) memcpy(t->lane1, xc, (size_t)S * C * sizeof *xc);  // lane 1: x as the lanes split
        memcpy(a->xb, xc, (size_t)S * C * sizeof *xc);
        if (seq) memcpy(a->l1a, t->lane1, (size_t)S * C * sizeof *xc);
        mix_fwd(t, w->resid_mix, xc, a->xin);
        float ln = layer_ln(c, l);
        if (!c->attn_off[l]) {  // (DISABLE_LAYER0_ATTN: none)
            train_rms_fwd(t, a->xin, a->an, a->ra, S, C, eps, ln);
            train_linear(t, a->an, w->wq, a->qn, S, C, Q);
            train_linear(t, a->an, w->wk, a->kn, S, C, KV);
            train_linear(t, a->an, w->wv, a->v, S, C, KV);
            train_lora_fwd_w(t, LORA_Q, l, a->an, a->hq, a->qn);
            train_lora_fwd_w(t, LORA_K, l, a->an, a->hk, a->kn);
            train_lora_fwd_w(t, LORA_V, l, a->an, a->hv, a->v);
            if (w->ve_scale)  // v += (vb * s) * ls, as the forward adds it
                for (long i = 0; i < (long)S * KV; i++) a->v[i] += t->vb[i] * m->ve_scale * w->ve_scale[0];
            if (a->vraw) {  // VALUE_RESIDUAL: v = lambda0 v0 + lambda1 v, v0 layer 0's v
                const float *v0 = t->act[0].v;
                memcpy(a->vraw, a->v, (size_t)S * KV * sizeof(float));
                for (long i = 0; i < (long)S * KV; i++) a->v[i] = w->vr_lambda[0] * v0[i] + w->vr_lambda[1] * a->vraw[i];
            }
            train_rms_fwd(t, a->qn, a->qn, a->rq, S * H, hd, eps, 1.0f);
            train_rms_fwd(t, a->kn, a->kn, a->rk, S * Hkv, hd, eps, 1.0f);
            memcpy(a->qr, a->qn, (size_t)S * Q * sizeof(float));
            memcpy(a->kf, a->kn, (size_t)S * KV * sizeof(float));
            for (int i = 0; i < t->n_win; i++) {  // (each window from the tables' first position)
                const struct pass_win *pw = &t->pw[i];
                cpu_rope_apply(a->qr + (long)pw->off * Q, pw->n, Q, H, hd, rd, 1, t->cos_t, t->sin_t);
                cpu_rope_apply(a->kf + (long)pw->off * KV, pw->n, KV, Hkv, hd, rd, 1, t->cos_t, t->sin_t);
            }
            for (int i = 0; i < S; i++)
                for (int h = 0; h < H; h++)
                    for (int d = 0; d < hd; d++) a->qf[(long)i * Q + h * hd + d] = a->qr[(long)i * Q + h * hd + d] * w->q_gain[h];
            train_attention_fwd(t, a, c->xsa[l]);
            if (a->gate) {  // each head's output times mult sigmoid(scale (w_h . an[:W]) + b_h) (2026-04-16's output gate)
                int W = c->attn_gate_window;
                for (int i = 0; i < S; i++)
                    for (int h = 0; h < H; h++) {
                        double z = 0;
                        for (int k = 0; k < W; k++) z += (double)w->attn_gate_w[(long)h * W + k] * a->an[(long)i * C + k];
                        float g = c->attn_gate_mult * sigmoidf(c->attn_gate_scale * (float)z + (w->attn_gate_b ? w->attn_gate_b[h] : 0));
                        a->gate[(long)i * H + h] = g;
                        for (int d = 0; d < hd; d++) a->zg[(long)i * Q + h * hd + d] = a->z[(long)i * Q + h * hd + d] * g;
                    }
            }
            train_linear(t, a->gate ? a->zg : a->z, w->wo, a->ao, S, Q, C);
            train_lora_fwd_w(t, LORA_O, l, a->an, a->ho, a->ao);  // (the adapter reads the attention's input)
        }
        if (seq && c->attn_off[l]) {  // (the lanes as they came: lane 0 into xo, lane 1 into l1, the MLP's)
            memcpy(a->xo, a->xb, (size_t)S * C * sizeof *xc);
            memcpy(a->l1, a->l1a, (size_t)S * C * sizeof *xc);
        } else if (seq) {  // lane k = r[0] lane k + post[0][k] as ao
            float r0 = w->lane_resid[0], p0 = w->lane_post[0], p1 = w->lane_post[1];
            for (long i = 0; i < (long)S * C; i++) {
                float at = w->attn_scale[i % C] * a->ao[i];
                a->xo[i] = r0 * a->xb[i] + p0 * at;
                a->l1[i] = r0 * a->l1a[i] + p1 * at;
            }
        } else if (c->attn_off[l]) {
            memcpy(a->xo, a->xin, (size_t)S * C * sizeof *xc);
        } else {
            train_scaled_add(a->xo, a->xin, w->attn_scale, a->ao, S, C);
        }
        // The MLP reads RMSNorm(xo) (sequential), the attention's input rows (GPT-J: the norms are
        // weightless, so an), or lane 1 (two lanes: attention went on lane 0, the MLP on lane 1).
        const float *mlp_res = a->xo;
        if (seq) {  // RMSNorm(m0 lane 1 + m1 x0)
            mix_fwd(t, w->resid_mix, a->l1, t->t_c2);
            train_rms_fwd(t, t->t_c2, a->mn, a->rm, S, C, eps, ln);
        } else if (lane) {
            memcpy(a->l1, t->lane1, (size_t)S * C * sizeof *xc);
            train_rms_fwd(t, a->l1, a->mn, a->rm, S, C, eps, ln);
            mlp_res = a->l1;
        } else if (c->mlp_reads_input[l] && !c->attn_off[l]) {
            memcpy(a->mn, a->an, (size_t)S * C * sizeof *xc);
        } else {
            train_rms_fwd(t, a->xo, a->mn, a->rm, S, C, eps, ln);
        }
        train_linear(t, a->mn, w->w_up, a->u, S, C, F);
        train_mlp_act(t, a->u, t->t_f, NULL, c->mlp_leaky_slope, (long)S * F);
        train_linear(t, t->t_f, w->w_down, a->mo, S, F, C);
        train_lora_fwd_w(t, LORA_MLP, l, a->mn, a->hm, a->mo);
        if (together) {  // lane 0 = r0 lane 0 + p00 a + p10 m, lane 1 = r1 lane 1 + p01 a + p11 m (a, m the scaled outputs)
            const float *r = w->lane_resid, *pp = w->lane_post;
            for (long i = 0; i < (long)S * C; i++) {
                float at = w->attn_scale[i % C] * a->ao[i], mt = w->mlp_scale[i % C] * a->mo[i];
                xc[i] = r[0] * a->xb[i] + pp[0] * at + pp[2] * mt;
                t->lane1[i] = r[1] * a->l1[i] + pp[1] * at + pp[3] * mt;
            }
        } else if (seq) {  // lane k = r[1] lane k + post[1][k] ms mo
            const float *r = w->lane_resid, *pp = w->lane_post;
            for (long i = 0; i < (long)S * C; i++) {
                float mt = w->mlp_scale[i % C] * a->mo[i];
                xc[i] = r[1] * a->xo[i] + pp[2] * mt;
                t->lane1[i] = r[1] * a->l1[i] + pp[3] * mt;
            }
        } else if (lane) {
            train_scaled_add(t->lane1, mlp_res, w->mlp_scale, a->mo, S, C);
            memcpy(xc, a->xo, (size_t)S * C * sizeof *xc);
        } else {
            train_scaled_add(xc, mlp_res, w->mlp_scale, a->mo, S, C);
        }
        if (w->dtg_w) {  // DTG_ENABLED: x = x_in + g (x - x_in), g = sigmoid(w . x_in + b) (x_in detached)
            memcpy(a->dtg_pre, xc, (size_t)S * C * sizeof *xc);
            for (int r = 0; r < S; r++) {
                const float *xi = a->xin + (long)r * C;
                double z = 0;
                for (int k = 0; k < C; k++) z += (double)w->dtg_w[k] * xi[k];
                float g = 1.0f / (1.0f + expf(-((float)z + w->dtg_b[0])));
                a->dtg_g[r] = g;
                for (int k = 0; k < C; k++) xc[(long)r * C + k] = xi[k] + g * (xc[(long)r * C + k] - xi[k]);
            }
        }
        if (l < t->n_enc) memcpy(t->skip_out + (long)l * S * C, xc, (size_t)S * C * sizeof *xc);
    }
    if (c->lanes_from && !c->lanes_split) {  // _final_parallel_hidden: the mean, lane 0 or lane 1 (PARALLEL_FINAL_LANE)
        for (long i = 0; i < (long)S * C; i++)
            xc[i] = c->lanes_final == 0 ? 0.5f * (xc[i] + t->lane1[i]) : c->lanes_final == 1 ? xc[i] : t->lane1[i];
    } else if (c->lanes_from) {  // lane_merge m lane 0 + (1 - m) lane 1
        memcpy(t->xl0, xc, (size_t)S * C * sizeof *xc);
        for (long i = 0; i < (long)S * C; i++) xc[i] = m->lane_merge * t->xl0[i] + (1.0f - m->lane_merge) * t->lane1[i];
    }
    train_rms_fwd(t, xc, t->xf, t->rf, S, C, eps, 1.0f);
}

// The head adapter of slot `slot`, or NULL.
static const struct lora_pair *head_lora(const struct cpu_trainer *t, int slot) {
    return t->ls && t->ls[slot].head.A ? &t->ls[slot].head : NULL;
}

// The logits of rows [r0, r0 + n) of t->xf into t->lg (n <= TILE), by slot's head adapter, before the cap.
static void head_tile(struct cpu_trainer *t, int r0, int n, int slot) {
    const struct lora_pair *lh = head_lora(t, slot);
    train_linear(t, t->xf + (long)r0 * t->C, t->m->tok_emb, t->lg, n, t->C, t->V);
    if (lh) train_lora_fwd(t, lh, t->xf + (long)r0 * t->C, t->h_lm, t->lg, n);
}

// log-sum-exp of a row of logits, in double; *arg the first index of its largest value.
static double row_lse(const float *lg, int V, int *arg) {
    float mx = lg[0];
    int am = 0;
    for (int v = 1; v < V; v++)
        if (lg[v] > mx) mx = lg[v], am = v;
    double sum = 0;
    for (int v = 0; v < V; v++) sum += exp((double)lg[v] - mx);
    *arg = am;
    return mx + log(sum);
}

// A tile's rows of logits, one task each over the pool: the cap, the row's loss (into loss[r],
// and nll[r] and greedy[r] when given) and, with grad, dL/d(logits) of the loss times inv_n in
// place of the logits.
struct head_job {
    float *lg, cap, inv_n;
    int V, grad;
    const int32_t *y;
    double *loss;
    float *nll;
    uint8_t *greedy;
};

static void head_row_task(void *ctx, int r, int w) {
    (void)w;
    const struct head_job *j = ctx;
    float *lg = j->lg + (long)r * j->V, cap = j->cap;
    int am, tg = j->y[r];
    for (int v = 0; v < j->V; v++) lg[v] = cap * tanhf(lg[v] / cap);
    double lse = row_lse(lg, j->V, &am);
    j->loss[r] = lse - lg[tg];
    if (j->nll) j->nll[r] = (float)(lse - lg[tg]), j->greedy[r] = am == tg;
    for (int v = 0; j->grad && v < j->V; v++) {
        float p = (float)exp((double)lg[v] - lse), th = lg[v] / cap;
        lg[v] = (p - (v == tg)) * j->inv_n * (1.0f - th * th);
    }
}

// Runs head_row_task over the tile's n rows; their losses added to *sum in row order (one
// running sum over the tiles, as a loop over the rows would add them).
static void head_rows(struct cpu_trainer *t, int n, const int32_t *y, int grad, float inv_n, float *nll, uint8_t *greedy, double *sum) {
    double loss[TILE];
    struct head_job j = {t->lg, t->m->cfg.logit_softcap, inv_n, t->V, grad, y, loss, nll, greedy};
    cpu_pool_run(t->pool, n, head_row_task, &j);
    for (int r = 0; sum && r < n; r++) *sum += loss[r];
}

// The head of a forward_body for rows [r0, r1) of t->xf, targets y[0 .. r1 - r0), by slot's head
// adapter: their summed loss (and each one's into nll[r - r0], whether it is the argmax into
// greedy[r - r0], when given); dL/dxf of the loss times inv_n into those rows of t->g (the caller
// zeroes the others) and the head's share of dL/dtok_emb (and of its adapter's).
static double head_grad(struct cpu_trainer *t, int r0, int r1, int slot, const int32_t *y, float inv_n, float *nll, uint8_t *greedy) {
    int C = t->C, V = t->V;
    const struct lora_pair *lh = head_lora(t, slot);
    double loss = 0;
    float *dxf = t->g;  // (the residual stream is done with)
    for (int q0 = r0; q0 < r1; q0 += TILE) {
        int n = r1 - q0 < TILE ? r1 - q0 : TILE;
        head_tile(t, q0, n, slot);
        head_rows(t, n, y + (q0 - r0), 1, inv_n, nll ? nll + (q0 - r0) : NULL, nll ? greedy + (q0 - r0) : NULL, &loss);
        train_linear_dx(t, t->lg, t->m->tok_emb, dxf + (long)q0 * C, n, C, V, 0.0f);
        train_base_dw(t, t->lg, t->xf + (long)q0 * C, t->g_tok, n, C, V);
        if (lh) train_lora_bwd(t, lh, t->lg, t->xf + (long)q0 * C, t->h_lm, dxf + (long)q0 * C, n);
    }
    return loss;
}

// The loss of rows [r0, r1) of a forward_body, targets y[0 .. r1 - r0), by slot's head adapter,
// into nll[r - r0] and greedy[r - r0], without gradients.
static void head_score(struct cpu_trainer *t, int r0, int r1, int slot, const int32_t *y, float *nll, uint8_t *greedy) {
    for (int q0 = r0; q0 < r1; q0 += TILE) {
        int k = r1 - q0 < TILE ? r1 - q0 : TILE;
        head_tile(t, q0, k, slot);
        head_rows(t, k, y + (q0 - r0), 0, 0.0f, nll + (q0 - r0), greedy + (q0 - r0), NULL);
    }
}

void cpu_trainer_score(struct cpu_trainer *t, const int32_t *x, const int32_t *y, int from, int n, float *nll, uint8_t *greedy) {
    one_window(t, t->S_max);
    rope_at(t, 0);
    forward_body(t, x);
    head_score(t, from, n, 0, y + from, nll, greedy);
}

static void backward_seq(struct cpu_trainer *t, const int32_t *x) {
    struct model *m = t->m;
    const struct model_config *c = &m->cfg;
    int S = t->S, C = t->C, Q = t->Q, KV = t->KV, F = t->F, H = t->H, Hkv = t->Hkv, hd = t->hd;
    int rd = model_rope_dims(c);
    float *g = t->t_c2;  // dL/d(residual stream) as it goes back (lane 0's, with two lanes); t->g holds dL/dxf
    train_rms_bwd(t, t->g, t->xf, t->rf, g, S, C, 1.0f, 0);
    if (c->lanes_from && !c->lanes_split) {  // x = (lane 0 + lane 1) / 2, lane 0 or lane 1
        for (long i = 0; i < (long)S * C; i++) {
            t->g1[i] = c->lanes_final == 0 ? 0.5f * g[i] : c->lanes_final == 1 ? 0.0f : g[i];
            g[i] = c->lanes_final == 0 ? 0.5f * g[i] : c->lanes_final == 1 ? g[i] : 0.0f;
        }
    } else if (c->lanes_from) {  // x = m lane0 + (1 - m) lane1
        float lm = m->lane_merge;
        double d = 0;
        for (long i = 0; i < (long)S * C; i++) {
            d += (double)g[i] * (t->xl0[i] - t->lane1[i]);
            t->g1[i] = (1.0f - lm) * g[i];
            g[i] *= lm;
        }
        t->g_lm[0] += (float)d;
    }
    memset(t->gx0, 0, (size_t)S * C * sizeof(float));
    if (t->dvb) memset(t->dvb, 0, (size_t)S * KV * sizeof(float));
    if (t->dv0) memset(t->dv0, 0, (size_t)S * KV * sizeof(float));
    memset(t->gskip, 0, (size_t)t->n_enc * S * C * sizeof(float));
    for (int l = t->L - 1; l >= 0; l--) {
        struct layer_act *a = &t->act[l];
        const struct layer_weights *w = &m->layers[l];
        float ln = layer_ln(c, l);
        int lane = c->lanes_from && l >= c->lanes_from, first = lane && l == c->lanes_from;
        int gptj = !lane && c->mlp_reads_input[l] && !c->attn_off[l];
        int together = lane && c->lanes_together, seq = lane && !together && !c->lanes_split, off = c->attn_off[l];
        const float *m0 = w->resid_mix, *m1 = m0 + C;
        float *gm = t->gl[l].resid_mix;
        double gr[2] = {0, 0}, gp[4] = {0, 0, 0, 0};  // (the lane lambdas' gradients)
        if (l < t->n_enc) {
            const float *gs = t->gskip + (long)l * S * C;
            for (long i = 0; i < (long)S * C; i++) g[i] += gs[i];
        }
        if (w->dtg_w) {  // DTG: dL/d(out) = g dL/dx, dL/d(x_in) (1 - g) dL/dx kept for later; none through the gate's input
            float *gw = t->gl[l].dtg_w;
            for (int r = 0; r < S; r++) {
                const float *xi = a->xin + (long)r * C, *pre = a->dtg_pre + (long)r * C;
                float *gx = g + (long)r * C, *dx = t->dtg_dx + (long)r * C, gt = a->dtg_g[r];
                double dz = 0;
                for (int k = 0; k < C; k++) dz += (double)gx[k] * (pre[k] - xi[k]);
                float dl = (float)dz * gt * (1.0f - gt);
                t->gl[l].dtg_b[0] += dl;
                for (int k = 0; k < C; k++) gw[k] += dl * xi[k], dx[k] = (1.0f - gt) * gx[k], gx[k] *= gt;
            }
        }
        if (seq) lanes_seq_bwd(t, w->mlp_scale, a->mo, w->lane_resid[1], w->lane_post + 2, a->xo, a->l1, g, t->dm, &gr[1], gp + 2);
        if (together) {  // the lanes' update: da, dm the sublayers' (scaled) outputs' gradients; g, g1 the lanes' inputs'
            const float *r = w->lane_resid, *pp = w->lane_post;
            for (long i = 0; i < (long)S * C; i++) {
                float at = w->attn_scale[i % C] * a->ao[i], mt = w->mlp_scale[i % C] * a->mo[i];
                gr[0] += (double)g[i] * a->xb[i], gr[1] += (double)t->g1[i] * a->l1[i];
                gp[0] += (double)g[i] * at, gp[1] += (double)t->g1[i] * at, gp[2] += (double)g[i] * mt, gp[3] += (double)t->g1[i] * mt;
                t->da[i] = pp[0] * g[i] + pp[1] * t->g1[i];
                t->dm[i] = pp[2] * g[i] + pp[3] * t->g1[i];
                g[i] *= r[0], t->g1[i] *= r[1];
            }
        }
        // MLP: out = res + ms * mo, res xo (lane 1's input on two lanes)
        float *gms = t->gl[l].mlp_scale, *gas = t->gl[l].attn_scale;
        float *gout = lane ? t->g1 : g;
        float *dmo = t->t_c;
        train_scaled_add_bwd(together || seq ? t->dm : gout, a->mo, w->mlp_scale, gms, dmo, S, C);
        float *hsq = t->t_f, *dh = t->t_f2;
        if (!t->frozen) train_mlp_act(t, a->u, hsq, NULL, c->mlp_leaky_slope, (long)S * F);  // (only dW reads it)
        train_base_dw(t, dmo, hsq, t->gl[l].down, S, F, C);
        train_linear_dx(t, dmo, w->w_down, dh, S, F, C, 0.0f);
        train_mlp_act(t, a->u, NULL, dh, c->mlp_leaky_slope, (long)S * F);
        train_base_dw(t, dh, a->mn, t->gl[l].up, S, C, F);
        float *dmn = gptj ? t->dmn : t->t_c;
        train_lora_bwd_out_w(t, LORA_MLP, l, dmo, a->hm, t->dho);  // (before dmn takes dmo's buffer)
        train_linear_dx(t, dh, w->w_up, dmn, S, C, F, 0.0f);
        train_lora_bwd_in_w(t, LORA_MLP, l, t->dho, a->mn, dmn);
        if (!gptj) train_rms_bwd(t, dmn, a->mn, a->rm, seq ? t->dxin : gout, S, C, ln, !seq);  // g = dL/dxo (two lanes: g1 = dL/d(lane 1 in))
        if (seq) mix_bwd(t, m0, gm, t->dxin, a->l1, t->g1);  // (seq: the MLP read m0 lane 1 + m1 x0)
        if (seq && !off) lanes_seq_bwd(t, w->attn_scale, a->ao, w->lane_resid[0], w->lane_post, a->xb, a->l1a, g, t->da, &gr[0], gp);
        for (int k = 0; (together || seq) && k < 2; k++) t->gl[l].lane_resid[k] += (float)gr[k];
        for (int k = 0; (together || seq) && k < 4; k++) t->gl[l].lane_post[k] += (float)gp[k];
        if (!off) {  // (DISABLE_LAYER0_ATTN: xo = xin)
            // attention: xo = xin + as * ao
            float *dao = t->t_c;
            train_scaled_add_bwd(together || seq ? t->da : g, a->ao, w->attn_scale, gas, dao, S, C);
            train_lora_bwd_out_w(t, LORA_O, l, dao, a->ho, t->dho);  // (dao's buffer is reused; dL/d(an) is assembled later)
            float *dz = t->t_q;
            train_base_dw(t, dao, a->gate ? a->zg : a->z, t->gl[l].wo, S, Q, C);
            train_linear_dx(t, dao, w->wo, dz, S, Q, C, 0.0f);
            if (a->gate)  // through the gate: dz g into the attention, dL/d(its logit) kept for dL/d(an)
                for (int i = 0; i < S; i++)
                    for (int h = 0; h < H; h++) {
                        float g = a->gate[(long)i * H + h], *d = dz + (long)i * Q + h * hd;
                        const float *z = a->z + (long)i * Q + h * hd;
                        double dg = 0;
                        for (int k = 0; k < hd; k++) dg += (double)d[k] * z[k], d[k] *= g;
                        t->dgs[(long)i * H + h] = (float)dg * g * (1.0f - g / c->attn_gate_mult);
                    }
            float *dq = t->t_q2, *dk = t->t_kv, *dv = t->t_v;
            memset(dk, 0, (size_t)S * KV * sizeof(float));
            memset(dv, 0, (size_t)S * KV * sizeof(float));
            train_attention_bwd(t, a, c->xsa[l], dz, dq, dk, dv);
            // q_gain, RoPE, the per-head norms
            float *gq = t->gl[l].q_gain;
            for (int i = 0; i < S; i++)
                for (int h = 0; h < H; h++) {
                    float *d = dq + (long)i * Q + (long)h * hd;
                    gq[h] += (float)dot_f(d, a->qr + (long)i * Q + (long)h * hd, hd);
                    for (int k = 0; k < hd; k++) d[k] *= w->q_gain[h];
                }
            for (int i = 0; i < t->n_win; i++) {
                const struct pass_win *pw = &t->pw[i];
                cpu_rope_apply(dq + (long)pw->off * Q, pw->n, Q, H, hd, rd, 1, t->cos_t, t->nsin_t);
                cpu_rope_apply(dk + (long)pw->off * KV, pw->n, KV, Hkv, hd, rd, 1, t->cos_t, t->nsin_t);
            }
            train_rms_bwd(t, dq, a->qn, a->rq, dq, S * H, hd, 1.0f, 0);
            train_rms_bwd(t, dk, a->kn, a->rk, dk, S * Hkv, hd, 1.0f, 0);
            if (a->vraw) {  // v = lambda0 v0 + lambda1 vraw: lambda's gradient, v0's (layer 0's v) kept, dv becomes dL/d(vraw)
                const float *v0 = t->act[0].v;
                float *gl_ = t->gl[l].vr_lambda;
                gl_[0] += (float)dot_f(dv, v0, S * KV), gl_[1] += (float)dot_f(dv, a->vraw, S * KV);
                for (long i = 0; i < (long)S * KV; i++) t->dv0[i] += w->vr_lambda[0] * dv[i], dv[i] *= w->vr_lambda[1];
            }
            if (l == 0 && t->dv0)  // (layer 0's v is v0)
                for (long i = 0; i < (long)S * KV; i++) dv[i] += t->dv0[i];
            if (w->ve_scale) {  // v += ls * s * vb: the scales' gradients, and vb's summed over the ve layers
                float ls = w->ve_scale[0], s = m->ve_scale;
                double db = dot_f(dv, t->vb, S * KV);
                t->gl[l].ve_scale[0] += (float)(db * s);
                t->g_vescale[0] += (float)(db * ls);
                for (long i = 0; i < (long)S * KV; i++) t->dvb[i] += dv[i] * ls * s;
            }
            float *dan = t->t_c;
            train_base_dw(t, dq, a->an, t->gl[l].wq, S, C, Q);
            train_base_dw(t, dk, a->an, t->gl[l].wk, S, C, KV);
            train_base_dw(t, dv, a->an, t->gl[l].wv, S, C, KV);
            train_linear_dx(t, dq, w->wq, dan, S, C, Q, 0.0f);
            train_linear_dx(t, dk, w->wk, dan, S, C, KV, 1.0f);
            train_linear_dx(t, dv, w->wv, dan, S, C, KV, 1.0f);
            train_lora_bwd_w(t, LORA_Q, l, dq, a->an, a->hq, dan);
            train_lora_bwd_w(t, LORA_K, l, dk, a->an, a->hk, dan);
            train_lora_bwd_w(t, LORA_V, l, dv, a->an, a->hv, dan);
            train_lora_bwd_in_w(t, LORA_O, l, t->dho, a->an, dan);
            if (a->gate)  // the gates read an[:W]
                for (int i = 0; i < S; i++)
                    for (int h = 0; h < H; h++) {
                        int W = c->attn_gate_window;
                        float ds = t->dgs[(long)i * H + h] * c->attn_gate_scale, *gw = t->gl[l].attn_gate + (long)h * W;
                        const float *an = a->an + (long)i * C;
                        for (int k = 0; k < W; k++) dan[(long)i * C + k] += ds * w->attn_gate_w[(long)h * W + k];
                        for (int k = 0; !t->frozen && k < W; k++) gw[k] += ds * an[k];
                        if (w->attn_gate_b && !t->frozen) t->gl[l].attn_gate_b[h] += t->dgs[(long)i * H + h];
                    }
            if (gptj)  // the MLP read an too
                for (long i = 0; i < (long)S * C; i++) dan[i] += t->dmn[i];
            if (together || seq) {  // xin = m0 lane 0 + m1 x0 fed the attention alone; g holds lane 0's other gradient
                train_rms_bwd(t, dan, a->an, a->ra, t->dxin, S, C, ln, 0);
                mix_bwd(t, m0, gm, t->dxin, a->xb, g);
            } else {
                train_rms_bwd(t, dan, a->an, a->ra, g, S, C, ln, 1);  // g = dL/dxin
            }
        }
        if (w->dtg_w)  // (DTG's x_in)
            for (long i = 0; i < (long)S * C; i++) g[i] += t->dtg_dx[i];
        // resid_mix: xin = m0 xb + m1 x0
        for (int r = 0; !together && !seq && r < S; r++)
            for (int k = 0; k < C; k++) {
                long i = (long)r * C + k;
                gm[k] += g[i] * a->xb[i];
                gm[C + k] += g[i] * t->x0[i];
                t->gx0[i] += m1[k] * g[i];
                g[i] *= m0[k];
            }
        if (first && !together && !seq)  // lane 1 began as a copy of xb
            for (long i = 0; i < (long)S * C; i++) g[i] += t->g1[i];
        int dec = l - t->n_enc, row = skip_row(t, dec);  // xb = the previous output with the skip
        const float *src = row >= 0 ? t->skip_out + (long)(t->n_enc - 1 - dec) * S * C : NULL;
        float *gs = row >= 0 ? t->gskip + (long)(t->n_enc - 1 - dec) * S * C : NULL;
        if (row >= 0 && (!lane || first || c->lanes_skip_lane0 || together || seq)) skip_bwd(t, row, src, a->xp, g, gs);
        if (row >= 0 && seq) skip_bwd(t, row, src, a->xp1, t->g1, gs);  // (lane 1's skip)
        if (first && (together || seq))  // both lanes began as the previous output, before lane 0's skip
            for (long i = 0; i < (long)S * C; i++) g[i] += t->g1[i];
    }
    for (long i = 0; i < (long)S * C; i++) t->gx0[i] += g[i];  // layer 0's x is x0
    // smear: x0_i = (1 - s) n0_i + s n0_(i-1)
    float *dn0 = t->t_c;
    for (int i = 0; i < S; i++)
        for (int k = 0; k < C; k++) {
            float gx = t->gx0[(long)i * C + k];
            if (!m->smear_gate) {
                dn0[(long)i * C + k] = gx;
                continue;
            }
            float s = t->sg[k], n0 = t->n0[(long)i * C + k], prev = t->row0[i] ? 0.0f : t->n0[(long)(i - 1) * C + k];
            float next = i + 1 < S && !t->row0[i + 1] ? t->gx0[(long)(i + 1) * C + k] : 0.0f;
            t->g_smear[k] += gx * (prev - n0) * s * (1 - s);
            dn0[(long)i * C + k] = (1 - s) * gx + s * next;
        }
    float *de = t->t_c2;
    train_rms_bwd(t, dn0, t->n0, t->r0, de, S, C, 1.0f, 0);
    float *dprev = t->de_prev;
    if (m->smear_fwd_w && t->seg_prev >= 0) memset(dprev, 0, (size_t)C * sizeof *dprev);
    if (m->smear_fwd_w)  // e'_t = e_t + lambda sigmoid(w . e_t[:W]) e_(t-1): de (of e') becomes dL/de, rows upward
        for (int i = 0; i < S; i++) {
            if ((t->row0[i] && t->seg_prev < 0) || (c->smear_fwd_bos_fix && x[i] == c->bos_id)) continue;
            const float *ei = t->e_raw + (long)i * C, *ep = t->row0[i] ? t->e_prev : t->e_raw + (long)(i - 1) * C;
            float *di = de + (long)i * C, *dp = t->row0[i] ? dprev : de + (long)(i - 1) * C;
            int W = c->smear_fwd_window;
            double z = 0, dg = 0;
            for (int k = 0; k < W; k++) z += (double)m->smear_fwd_w[k] * ei[k];
            for (int k = 0; k < C; k++) dg += (double)di[k] * ep[k];
            float sg = sigmoidf((float)z), g = m->smear_fwd_lambda * sg, dz = (float)dg * m->smear_fwd_lambda * sg * (1.0f - sg);
            t->g_sfl[0] += (float)dg * sg;
            for (int k = 0; k < C; k++) dp[k] += g * di[k];
            for (int k = 0; k < W; k++) t->g_sfw[k] += dz * ei[k], di[k] += dz * m->smear_fwd_w[k];
        }
    train_scatter_rows(t->g_tok, x, de, S, C);
    if (m->smear_fwd_w && t->seg_prev >= 0) train_scatter_rows(t->g_tok, &t->seg_prev, dprev, 1, C);
    if (m->bigram_emb) {  // e = tok + scale * pb, pb = proj(be_rows)
        int D = c->bigram_dim;
        t->g_bscale[0] += (float)dot_f(de, t->pb, S * C);
        float *dpb = t->g;  // (dL/dxf is done with)
        for (long i = 0; i < (long)S * C; i++) dpb[i] = de[i] * m->bigram_scale;
        if (m->bigram_proj) {
            train_base_dw(t, dpb, t->be_rows, t->g_bproj, S, D, C);
            train_linear_dx(t, dpb, t->bproj, t->t_e, S, D, C, 0.0f);
            train_scatter_rows(t->g_bemb, t->bh, t->t_e, S, D);
        } else {
            train_scatter_rows(t->g_bemb, t->bh, dpb, S, D);
        }
    }
    if (m->ve_emb) {  // vb = proj(ve_rows)
        int D = c->ve_dim;
        if (m->ve_proj) {
            train_base_dw(t, t->dvb, t->ve_rows, t->g_veproj, S, D, KV);
            train_linear_dx(t, t->dvb, t->veproj, t->t_e, S, D, KV, 0.0f);
            train_scatter_rows(t->g_veemb, x, t->t_e, S, D);
        } else {
            train_scatter_rows(t->g_veemb, x, t->dvb, S, D);
        }
    }
}

// CastedLinear's QAT (2026-03-23): each row of W (rows, cols) rounded to int6 on its own scale,
// q = clamp(round(w / s), -32, 31) s with s = max(max|row| / 31, 1 / 31), as w + (q - w): the
// forward reads q, the gradient passes straight through to w.
static void fake_quant_int6(const float *w, float *q, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        const float *wr = w + (long)r * cols;
        float *qr = q + (long)r * cols, mx = 0.0f;
        for (int k = 0; k < cols; k++) mx = fmaxf(mx, fabsf(wr[k]));
        float s = fmaxf(mx / 31.0f, (float)(1.0 / 31.0));
        for (int k = 0; k < cols; k++) {
            float v = fminf(fmaxf(rintf(wr[k] / s), -32.0f), 31.0f) * s;
            qr[k] = wr[k] + (v - wr[k]);
        }
    }
}

void cpu_trainer_qat(struct cpu_trainer *t, int on) {
    const struct model *m = t->m;
    t->qat = on;
    if (on && m->bigram_proj && !t->bproj_q) t->bproj_q = alloc_f((long)t->C * m->cfg.bigram_dim);
    if (on && m->ve_proj && !t->veproj_q) t->veproj_q = alloc_f((long)t->KV * m->cfg.ve_dim);
}

double cpu_trainer_grad(struct cpu_trainer *t, const int32_t *tok, int n) {
    for (int i = 0; i < t->n_p; i++) memset(t->p[i].grad, 0, (size_t)t->p[i].n * sizeof(float));
    const struct model *m = t->m;
    if (t->qat && m->bigram_proj) fake_quant_int6(m->bigram_proj, t->bproj_q, t->C, m->cfg.bigram_dim), t->bproj = t->bproj_q;
    if (t->qat && m->ve_proj) fake_quant_int6(m->ve_proj, t->veproj_q, t->KV, m->cfg.ve_dim), t->veproj = t->veproj_q;
    double loss = 0;
    int S = t->S_max;
    float inv_n = 1.0f / ((float)n * S);
    one_window(t, S);
    rope_at(t, 0);
    for (int s = 0; s < n; s++) {
        const int32_t *x = tok + (long)s * S;
        forward_body(t, x);
        memset(t->g, 0, (size_t)S * t->C * sizeof(float));
        loss += head_grad(t, 0, S, 0, x + 1, inv_n, NULL, NULL);
        backward_seq(t, x);
    }
    t->bproj = m->bigram_proj, t->veproj = m->ve_proj;  // (scoring reads the weights as they are: eval mode)
    return loss / ((double)n * S);
}

int cpu_trainer_windows(struct cpu_trainer *t, const struct cpu_window *w, int n, int grad) {
    int rows = 0;
    for (int i = 0; i < n; i++) rows += w[i].n;
    if (n < 1 || rows > t->S_max || (n > 1 && !t->frozen)) return 0;
    t->S = rows, t->n_win = n;  // (the activations' first rows, the RoPE table's first positions)
    memset(t->row0, 0, (size_t)rows);
    for (int i = 0, off = 0; i < n; off += w[i++].n) {
        t->pw[i] = (struct pass_win){off, w[i].n, w[i].slot};
        t->row0[off] = 1;
        memcpy(t->xcat + off, w[i].x, (size_t)w[i].n * sizeof *t->xcat);
    }
    rope_at(t, 0);
    forward_body(t, t->xcat);
    if (grad) {
        for (int i = 0; i < t->n_p && !t->frozen; i++) memset(t->p[i].grad, 0, (size_t)t->p[i].n * sizeof(float));
        for (int i = 0; i < n; i++)
            for (int k = 0; t->ls && k < t->ls[w[i].slot].n_p; k++)
                memset(t->ls[w[i].slot].p[k].grad, 0, (size_t)t->ls[w[i].slot].p[k].n * sizeof(float));
        memset(t->g, 0, (size_t)rows * t->C * sizeof(float));
        for (int i = 0; i < n; i++) {
            int r0 = t->pw[i].off + w[i].from;
            head_grad(t, r0, r0 + w[i].count, w[i].slot, w[i].y + w[i].from, 1.0f / (float)w[i].count, w[i].nll, w[i].greedy);
        }
        backward_seq(t, t->xcat);
    } else {
        for (int i = 0; i < n; i++) {
            int r0 = t->pw[i].off + w[i].from;
            head_score(t, r0, r0 + w[i].count, w[i].slot, w[i].y + w[i].from, w[i].nll, w[i].greedy);
        }
    }
    one_window(t, t->S_max);
    return n;
}

void cpu_trainer_chunk(struct cpu_trainer *t, const int32_t *x, const int32_t *y, int n, int from, int count, int grad, float *nll,
                       uint8_t *greedy) {
    struct cpu_window w = {x, y, n, from, count, 0, nll, greedy};
    cpu_trainer_windows(t, &w, 1, grad);
}

void cpu_trainer_zero_grad(struct cpu_trainer *t) {
    for (int i = 0; i < t->n_p; i++) memset(t->p[i].grad, 0, (size_t)t->p[i].n * sizeof(float));
    for (int s = 0; s < t->n_slots; s++)
        for (int i = 0; i < t->ls[s].n_p; i++) memset(t->ls[s].p[i].grad, 0, (size_t)t->ls[s].p[i].n * sizeof(float));
}

double cpu_trainer_segment(struct cpu_trainer *t, const int32_t *x, const int32_t *y, int n, long pos0, int32_t prev,
                           float inv_total) {
    one_window(t, n);
    t->seg_prev = prev;
    rope_at(t, pos0);
    forward_body(t, x);
    memset(t->g, 0, (size_t)n * t->C * sizeof(float));
    double loss = head_grad(t, 0, n, 0, y, inv_total, NULL, NULL);
    backward_seq(t, x);
    one_window(t, t->S_max);
    t->seg_prev = -1;
    return loss;
}

static float *lora_alloc(struct lora_set *ls, const char *name, long n, float **grad) {
    struct train_param *p = &ls->p[ls->n_p++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->n = n, p->block = -1;
    p->w = alloc_f(n), p->grad = alloc_f(n);
    *grad = p->grad;
    return p->w;
}

int cpu_trainer_lora(struct cpu_trainer *t, const struct cpu_lora_spec *spec, int n_slots, xsa_error *err) {
    if (t->ls) return xsa_fail(err, XSA_EBADINPUT, "the trainer has its LoRA adapters already");
    if (spec->rank < 1 || spec->rank > 4096)  // (above the width is allowed, as torch allows it; the cap bounds memory)
        return xsa_fail(err, XSA_EBADINPUT, "TTT_LORA_RANK=%d: expected a whole number from 1 to 4096", spec->rank);
    if (n_slots < 1) return xsa_fail(err, XSA_EBADINPUT, "%d adapter slots: expected at least 1", n_slots);
    int L = t->L, r = t->rank = spec->rank, S = t->S_max, C = t->C;
    t->frozen = 1;
    t->lora_scale = spec->alpha > 0 ? (float)(spec->alpha / spec->rank) : 1.0f;
    t->ls = xsa_calloc((size_t)n_slots, sizeof *t->ls), t->n_slots = n_slots;
    // BatchedTTTLoRA's parameters() order: the head's, then q, v, k, MLP and output adapters layer by layer
    const char *names[LORA_KINDS] = {"q_loras", "v_loras", "k_loras", "mlp_loras", "o_loras"};
    int outs[LORA_KINDS] = {t->Q, t->KV, t->KV, C, C}, on[LORA_KINDS] = {1, 1, spec->k, spec->mlp, spec->o};
    char nm[48];
    for (int s = 0; s < n_slots; s++) {
        struct lora_set *ls = &t->ls[s];
        ls->p = xsa_calloc((size_t)(2 + 2 * LORA_KINDS * L), sizeof *ls->p);
        ls->head.in = C, ls->head.out = t->V;
        ls->head.A = lora_alloc(ls, "lm_head_lora.A", (long)r * C, &ls->head.gA);
        ls->head.B = lora_alloc(ls, "lm_head_lora.B", (long)t->V * r, &ls->head.gB);
        for (int k = 0; k < LORA_KINDS; k++) {
            ls->kind[k] = on[k] ? xsa_calloc((size_t)L, sizeof *ls->kind[k]) : NULL;
            for (int l = 0; on[k] && l < L; l++) {
                struct lora_pair *P = &ls->kind[k][l];
                P->in = C, P->out = outs[k];
                snprintf(nm, sizeof nm, "%s.%d.A", names[k], l), P->A = lora_alloc(ls, nm, (long)r * C, &P->gA);
                snprintf(nm, sizeof nm, "%s.%d.B", names[k], l), P->B = lora_alloc(ls, nm, (long)P->out * r, &P->gB);
            }
        }
    }
    for (int l = 0; l < L; l++) {
        struct layer_act *a = &t->act[l];
        a->hq = alloc_f((long)S * r), a->hv = alloc_f((long)S * r);
        a->hk = spec->k ? alloc_f((long)S * r) : NULL, a->hm = spec->mlp ? alloc_f((long)S * r) : NULL;
        a->ho = spec->o ? alloc_f((long)S * r) : NULL;
    }
    t->h_lm = alloc_f((long)TILE * r), t->dh = alloc_f((long)(S > TILE ? S : TILE) * r), t->dho = alloc_f((long)S * r);
    return 0;
}

struct cpu_pool *cpu_trainer_pool(struct cpu_trainer *t) { return t->pool; }

int cpu_trainer_lora_params(const struct cpu_trainer *t, int slot, struct train_param **out) {
    if (!t->ls || slot < 0 || slot >= t->n_slots) return *out = NULL, 0;
    *out = t->ls[slot].p;
    return t->ls[slot].n_p;
}
