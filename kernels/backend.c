// backend.c: picks a backend for --device. The CUDA backend is a shared object
// (libxsa_cuda.so, built only where nvcc exists) opened at run time, so one binary runs with
// or without a GPU; "auto" falls back to the CPU and says why on stderr.
#include "kernels/backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// What libxsa_cuda.so must export: opens device `index` computing in `fp32` (1) or bf16 (0),
// or fails with err set (no GPU, no driver, out of memory) so that "auto" can fall back.
typedef int (*cuda_open_fn)(struct backend *be, int index, int fp32, const struct model *m,
                            const struct backend_options *opt, xsa_error *err);
#define CUDA_OPEN_SYMBOL "xsa_cuda_backend_open"
#define CUDA_LIB_NAME "libxsa_cuda.so"

// Finds libxsa_cuda.so: $XSA_CUDA_LIB, then build/ beside the executable, then beside the
// executable, then the loader's search path. The handle stays open for the process lifetime.
static cuda_open_fn cuda_find(char *why, size_t n) {
    char exe[4096], cand[4][4400];
    int nc = 0;
    const char *env = getenv("XSA_CUDA_LIB");
    if (env && *env) snprintf(cand[nc++], sizeof cand[0], "%s", env);
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(cand[nc++], sizeof cand[0], "%s/build/%s", exe, CUDA_LIB_NAME);
            snprintf(cand[nc++], sizeof cand[0], "%s/%s", exe, CUDA_LIB_NAME);
        }
    }
    snprintf(cand[nc++], sizeof cand[0], "%s", CUDA_LIB_NAME);
    snprintf(why, n, "%s not found: this build has no CUDA backend", CUDA_LIB_NAME);
    for (int i = 0; i < nc; i++) {
        void *h = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            // A library that exists but cannot load lacks its dependencies (libcublas, ...).
            const char *e = dlerror();
            if (strchr(cand[i], '/') && access(cand[i], F_OK) == 0)
                snprintf(why, n, "%.900s cannot be loaded: %.200s (are the CUDA libraries installed?)", cand[i],
                         e ? e : "unknown error");
            else if (i == 0 && env && *env)
                snprintf(why, n, "XSA_CUDA_LIB=%.900s: no such library (%.200s)", env, e ? e : "not found");
            if (i == 0 && env && *env) return NULL;  // the library the user named, not another one
            continue;
        }
        cuda_open_fn fn = (cuda_open_fn)(uintptr_t)dlsym(h, CUDA_OPEN_SYMBOL);
        if (fn) return fn;
        snprintf(why, n, "%.1000s lacks %s", cand[i], CUDA_OPEN_SYMBOL);
        dlclose(h);
    }
    return NULL;
}

static int gpt2_arch(const struct model_config *c) { return c->arch == MODEL_ARCH_GPT2; }

// modded-nanogpt's GPT: its own topology (kernels/cpu/cpu_mnanogpt.c).
static int check_mnanogpt(const struct model *m, xsa_error *err) {
    const struct model_config *c = &m->cfg;
    int bad = c->n_layer != MNG_LAYERS || c->n_head < 2 || c->n_head % 2 || c->head_dim % 4 || c->n_head * c->head_dim != c->d_model ||
              !m->tok_emb || !m->lm_head || !m->layers || !m->mng->value_embeds || !m->mng->bigram_emb ||
              (m->mng->gate_w1 && (c->n_head != MNG_DC_HEADS || !m->mng->mudd_w1));  // (the gate layout's heads; its last layer's MUDD)
    for (int l = 0; l < c->n_layer && !bad; l++) {
        const struct layer_weights *w = &m->layers[l];
        int gate = m->mng->layer[l].attn_gate || m->mng->gate_w1;  // (the gated GPT's come from its gates)
        bad = !w->w_up || !w->w_down || (m->mng->layer[l].attn && (!w->wq || !w->wk || !w->wv || !w->wo || !gate));
    }
    return bad ? xsa_fail(err, XSA_EBADINPUT, "%s: a modded-nanogpt model with missing weights or a shape its GPT does not have", m->path) : 0;
}

int backend_check_model(const struct model *m, xsa_error *err) {
    const struct model_config *c = &m->cfg;
    if (c->xsa_unknown) return model_check_xsa_known(m, err);
    if (m->mng) return check_mnanogpt(m, err);
    if (c->n_layer < 1 || c->n_layer > MODEL_MAX_LAYERS || c->n_head < 1 || c->n_kv_head < 1 ||
        c->n_head % c->n_kv_head || c->head_dim < 1 || c->d_model < 1 || c->d_ff < 1 ||
        c->vocab_size < 1 || (c->rope != ROPE_NONE && c->head_dim % 2) || c->rope_dims < 0 ||
        c->rope_dims > c->head_dim || c->rope_dims % 2 || c->n_blocks < 0 || c->n_blocks > c->n_layer ||
        !(c->logit_softcap >= 0) || (c->mlp_relu2 && gpt2_arch(c)))
        return xsa_fail(err, XSA_EBADINPUT, "%s: model shape not supported "
                        "(layers %d, heads %d/%d, head_dim %d, d_model %d, d_ff %d, vocab %d)", m->path,
                        c->n_layer, c->n_head, c->n_kv_head, c->head_dim, c->d_model, c->d_ff, c->vocab_size);
    if (c->arch != MODEL_ARCH_GPT2 && c->arch != MODEL_ARCH_LLAMA)
        return xsa_fail(err, XSA_EBADINPUT, "%s: unknown architecture %d", m->path, (int)c->arch);
    int gpt2 = c->arch == MODEL_ARCH_GPT2, rd = model_rope_dims(c);
    int nw = c->norm_weightless;  // norms without weights
    if (c->rope != ROPE_NONE && (rd < 2 || rd % 2 || rd > c->head_dim))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %d rotated dims of head_dim %d: RoPE needs an even count up to head_dim", m->path, rd, c->head_dim);
    if (c->parallel_residual && (gpt2 || c->qk_norm == QK_NORM_FULL))
        return xsa_fail(err, XSA_EBADINPUT, "%s: a parallel residual is implemented for RoPE decoders with pre-norms only", m->path);
    if (c->sliding_window < 0 || (gpt2 && (c->qk_norm || c->rope_dims || c->parallel_residual)))
        return xsa_fail(err, XSA_EBADINPUT, "%s: the gpt2 decoder takes none of the RoPE decoders' features", m->path);
    if (!m->tok_emb || !m->lm_head || (!nw && !c->no_final_norm && !m->final_norm_w) || !m->layers || (gpt2 && (!m->pos_emb || !m->final_norm_b || c->max_seq_len < 1)))
        return xsa_fail(err, XSA_EBADINPUT, "%s: model is missing embedding or head weights", m->path);
    if ((c->learned_pos && (!m->pos_emb || gpt2 || c->rope != ROPE_NONE)) || (c->embed_dim && (!m->proj_in || !m->proj_out)) ||
        (c->post_ln && (c->parallel_residual || nw || c->lanes_from)))
        return xsa_fail(err, XSA_EBADINPUT, "%s: opt's learned positions, project_in/out or post-LN block without their weights "
                        "or with features they do not combine with", m->path);
    if ((c->unet_skips && c->n_layer >= 2 && !m->skip_weights) || (c->smear && !m->smear_gate) ||
        (c->bigram_vocab && (c->bigram_vocab < 2 || !m->bigram_emb || (c->bigram_dim != c->d_model && !m->bigram_proj))))
        return xsa_fail(err, XSA_EBADINPUT, "%s: model is missing its skip, smear or bigram weights", m->path);
    if (c->lanes_from < 0 || c->lanes_from >= c->n_layer || (c->value_residual && c->attn_off[0]))
        return xsa_fail(err, XSA_EBADINPUT, "%s: two residual lanes from layer %d of %d, or a value residual from a layer 0 without attention", m->path,
                        c->lanes_from, c->n_layer);
    for (int l = 0; l < c->n_layer; l++) {
        const struct layer_weights *w = &m->layers[l];
        // A block needs its norms before (attn_norm_w, mlp_norm_w; none when weightless) or after
        // (olmo2) each sublayer.
        int pre = nw || (w->attn_norm_w && w->mlp_norm_w), post = w->post_attn_norm_w && w->post_mlp_norm_w;
        if ((post || c->parallel_residual) && (w->attn_scale || w->mlp_scale))
            return xsa_fail(err, XSA_EBADINPUT, "%s: layer %d: branch scales are implemented for the sequential pre-norm block only", m->path, l);
        int attn = !c->attn_off[l];  // (DISABLE_LAYER0_ATTN: the file may have dropped its weights)
        if (c->mlp_reads_input[l] && (!nw || (c->lanes_from && l >= c->lanes_from) || c->parallel_residual || w->dtg_w))
            return xsa_fail(err, XSA_EBADINPUT, "%s: layer %d: a GPT-J block (the MLP reads the block's input) needs weightless norms and no lanes or DTG gate", m->path, l);
        if (c->lanes_from && l >= c->lanes_from && ((!c->lanes_split && (!w->lane_resid || !w->lane_post)) || !w->resid_mix || post || c->parallel_residual))
            return xsa_fail(err, XSA_EBADINPUT, "%s: layer %d: two residual lanes need their lambdas and resid_mix, and no post-norms", m->path, l);
        if (!(pre || post) || (c->parallel_residual && post) || (attn && (!w->wq || !w->wk || !w->wv || !w->wo)) || !w->w_up ||
            !w->w_down || (model_mlp_gated(c) && !w->w_gate) || (gpt2 && (!w->attn_norm_b || !w->mlp_norm_b)))
            return xsa_fail(err, XSA_EBADINPUT, "%s: layer %d is missing weights", m->path, l);
    }
    return 0;
}

int backend_check_batch(const struct model_config *c, const struct score_batch *b, xsa_error *err) {
    if (b->n_tokens < 0 || b->n_tokens > BACKEND_MAX_TOKENS || b->n_entries < 0)
        return xsa_fail(err, XSA_EBADINPUT, "backend: batch of %d tokens and %d entries is out of range (tokens <= %d)",
                        b->n_tokens, b->n_entries, BACKEND_MAX_TOKENS);
    if (b->n_tokens > 0 && (!b->token || !b->pos || !b->span0_lo || !b->span0_hi || !b->span1_lo || !b->span1_hi))
        return xsa_fail(err, XSA_EBADINPUT, "backend: batch has %d tokens but missing arrays", b->n_tokens);
    if (b->n_entries > 0 && (!b->entry_index || !b->entry_target))
        return xsa_fail(err, XSA_EBADINPUT, "backend: batch has %d entries but missing arrays", b->n_entries);
    for (int t = 0; t < b->n_tokens; t++) {
        if (b->token[t] < 0 || b->token[t] >= c->vocab_size)
            return xsa_fail(err, XSA_EBADINPUT, "backend: token %d has id %d outside the vocabulary [0, %d)",
                            t, b->token[t], c->vocab_size);
        int pmax = model_position_limit(c) ? model_position_limit(c) : BACKEND_MAX_TOKENS;
        if (b->pos[t] < 0 || b->pos[t] >= pmax)
            return xsa_fail(err, XSA_EBADINPUT, "backend: token %d has position %d outside [0, %d); shorten the input",
                            t, b->pos[t], pmax);
        int l0 = b->span0_lo[t], h0 = b->span0_hi[t], l1 = b->span1_lo[t], h1 = b->span1_hi[t];
        if (l0 < 0 || l0 > h0 || h0 > t + 1 || l1 < 0 || l1 > h1 || h1 > t + 1 ||
            (l1 < h1 && h0 > l1) || h0 - l0 + h1 - l1 == 0)
            return xsa_fail(err, XSA_EBADINPUT, "backend: token %d has key spans [%d,%d) + [%d,%d); they must be "
                            "ordered, non-empty in total and end at or before the token itself", t, l0, h0, l1, h1);
        if (b->before && (b->before[t] < -1 || b->before[t] >= t))
            return xsa_fail(err, XSA_EBADINPUT, "backend: token %d names token %d as its predecessor; it must come "
                            "before it (or be -1)", t, b->before[t]);
    }
    for (int s = 0; s < b->n_entries; s++) {
        if (b->entry_index[s] < 0 || b->entry_index[s] >= b->n_tokens)
            return xsa_fail(err, XSA_EBADINPUT, "backend: scoring entry %d reads token index %d outside [0, %d)",
                            s, b->entry_index[s], b->n_tokens);
        if (b->entry_target[s] < 0 || b->entry_target[s] >= c->vocab_size)
            return xsa_fail(err, XSA_EBADINPUT, "backend: scoring entry %d has target id %d outside the vocabulary [0, %d)",
                            s, b->entry_target[s], c->vocab_size);
    }
    return 0;
}

int backend_options_from_env(struct backend_options *o, xsa_error *err) {
    static const char *gemm[] = {"blas", "avx2", "avx512", "scalar"}, *attn[] = {"avx2", "scalar"};
    const char *g = getenv("XSA_CPU_GEMM"), *a = getenv("XSA_CPU_ATTN"), *p = getenv("XSA_CPU_PACK"),
               *c = getenv("XSA_CUDA_MAX_TOKENS");
    int ok = 0;
    for (int i = 0; g && *g && i < 4; i++) ok |= !strcmp(g, gemm[i]);
    if (g && *g && !ok) return xsa_fail(err, XSA_EBADINPUT, "XSA_CPU_GEMM=%s: use blas, avx2, avx512 or scalar", g);
    ok = 0;
    for (int i = 0; a && *a && i < 2; i++) ok |= !strcmp(a, attn[i]);
    if (a && *a && !ok) return xsa_fail(err, XSA_EBADINPUT, "XSA_CPU_ATTN=%s: use avx2 or scalar", a);
    if (p && *p && strcmp(p, "0") && strcmp(p, "1"))
        return xsa_fail(err, XSA_EBADINPUT, "XSA_CPU_PACK=%s: use 0 (never pack) or 1 (always)", p);
    char *end = NULL;
    long cap = c && *c ? strtol(c, &end, 10) : 0;
    if (c && *c && (*end || cap < 1 || cap > BACKEND_MAX_TOKENS))
        return xsa_fail(err, XSA_EBADINPUT, "XSA_CUDA_MAX_TOKENS=%s: a whole number from 1 to %d", c, BACKEND_MAX_TOKENS);
    o->cpu_gemm = g && *g ? g : NULL;
    o->cpu_attn = a && *a ? a : NULL;
    o->cpu_pack = !p || !*p ? BACKEND_PACK_AUTO : !strcmp(p, "1") ? BACKEND_PACK_ALWAYS : BACKEND_PACK_NEVER;
    o->cuda_max_tokens = (int)cap;
    return 0;
}

int backend_score(struct backend *be, const struct score_batch *b, float *logprob, uint8_t *greedy, xsa_error *err) {
    int rc = backend_check_batch(&be->model->cfg, b, err);
    return rc ? rc : be->score(be, b, logprob, greedy, err);
}

int backend_open(struct backend *be, const char *device, const struct model *m,
                 const struct backend_options *opt, xsa_error *err) {
    return backend_open_dtype(be, device, NULL, m, opt, err);
}

static int open_device(struct backend *be, const char *device, int fp32, const struct model *m,
                       const struct backend_options *opt, xsa_error *err);

int backend_open_dtype(struct backend *be, const char *device, const char *dtype, const struct model *m,
                       const struct backend_options *opt, xsa_error *err) {
    memset(be, 0, sizeof *be);
    int rc = backend_check_model(m, err);
    if (rc) return rc;
    if (dtype && strcmp(dtype, "bfloat16") && strcmp(dtype, "float32"))
        return xsa_fail(err, XSA_EBADINPUT, "--dtype %s: unknown dtype; use bfloat16 or float32", dtype);
    rc = open_device(be, device, dtype && !strcmp(dtype, "float32"), m, opt, err);
    if (!rc) be->model = m;
    return rc;
}

// Opens the CPU or CUDA backend that `device` names (see backend_open).
static int open_device(struct backend *be, const char *device, int fp32, const struct model *m,
                       const struct backend_options *opt, xsa_error *err) {
    int rc;
    if (!device || !strcmp(device, "cpu")) return cpu_backend_open(be, m, opt, err);
    char why[1200];
    // The CUDA kernels do not implement the parameter-golf family's operations yet.
    const char *family = model_has_family_features(m) ? m->mng ? "the CUDA backend does not implement modded-nanogpt's GPT (paired heads, value embeddings, gates)" : "the CUDA backend does not implement this parameter-golf model's operations (weightless norms, q_gain, relu^2, resid_mix, U-Net skips, soft-cap)" : NULL;
    if (!family && m->cfg.clip_qkv > 0)  // (run by the CPU backend alone: kernels/cpu/cpu_forward.c)
        family = "the CUDA backend does not implement olmo's clip_qkv (q, k and v clamped after their projections)";
    char lacks[256];
    if (!family && model_cuda_lacks(m)) {  // (phi, opt, stablelm's qk_layernorm, smollm3, granite: the CPU alone)
        snprintf(lacks, sizeof lacks, "the CUDA backend does not implement %s", model_cuda_lacks(m));
        family = lacks;
    }
    if (!family && model_has_gemma_features(&m->cfg))  // (the same: kernels/cpu/cpu_forward.c alone)
        family = "the CUDA backend does not implement the Gemma families' operations ((1 + w) RMSNorm, scaled embedding, "
                 "GeGLU MLP, query_pre_attn_scalar, soft-capped attention scores, per-layer-type RoPE)";
    if (!strcmp(device, "auto") && family) {
        if (!(opt && opt->quiet)) fprintf(stderr, "xsa-eval: %s; using the CPU backend\n", family);
        return cpu_backend_open(be, m, opt, err);
    }
    if (family && !strncmp(device, "cuda", 4)) return xsa_fail(err, XSA_EBADINPUT, "--device %s: %s; use --device cpu", device, family);
    if (!strcmp(device, "auto")) {
        cuda_open_fn fn = cuda_find(why, sizeof why);
        if (fn) {
            xsa_error cerr = {0};
            if (fn(be, 0, fp32, m, opt, &cerr) == 0) return 0;
            snprintf(why, sizeof why, "%s", cerr.msg);
            memset(be, 0, sizeof *be);
        }
        static int told;  // once a process: ppl and probe open a backend per model
        if (!(opt && opt->quiet) && !told++) fprintf(stderr, "xsa-eval: no usable GPU (%s); using the CPU backend\n", why);
        return cpu_backend_open(be, m, opt, err);
    }
    int index = 0;
    if (!strncmp(device, "cuda", 4) && (device[4] == '\0' || device[4] == ':')) {
        if (device[4] == ':') {
            char *end;
            long v = strtol(device + 5, &end, 10);
            if (device[5] < '0' || device[5] > '9' || *end || v > 1024)
                return xsa_fail(err, XSA_EBADINPUT, "--device %s: the GPU index must be a number, e.g. cuda:0", device);
            index = (int)v;
        }
        cuda_open_fn fn = cuda_find(why, sizeof why);
        if (!fn)
            return xsa_fail(err, XSA_ERUNTIME, "--device %s: the CUDA backend is not available: %s; use --device cpu",
                            device, why);
        xsa_error cerr = {0};
        rc = fn(be, index, fp32, m, opt, &cerr);
        if (rc) {
            memset(be, 0, sizeof *be);
            return xsa_fail(err, rc, "--device %s: %s%s", device, cerr.msg,
                            rc == XSA_ERUNTIME ? "; use --device cpu (or auto) on this machine" : "");
        }
        return 0;
    }
    return xsa_fail(err, XSA_EBADINPUT, "--device %s: unknown device; use auto, cpu, cuda or cuda:N", device);
}

void backend_close(struct backend *be) {
    if (be && be->destroy) be->destroy(be);
    if (be) memset(be, 0, sizeof *be);
}
