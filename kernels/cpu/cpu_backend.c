// cpu_backend.c: the CPU backend: checks a batch against the contract, sizes scratch once,
// packs the weights for the AVX-512 GEMM when memory allows, runs the fp32 forward
// (cpu_forward.c) on our kernels or OpenBLAS + a pthread pool.
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_state.h"

#define CPU_MAX_THREADS 256
#define CPU_MAX_TOKENS BACKEND_MAX_TOKENS
#define CPU_DEFAULT_BATCH_TOKENS 4096

// Asks for transparent huge pages on a big buffer: attention and the GEMMs stride through
// rows far apart, and 4 KiB pages then miss the TLB on most loads.
static void want_huge_pages(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
    uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)((2u << 20) - 1);
    if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);  // advice only: failure changes nothing
#else
    (void)p, (void)bytes;
#endif
}

// *p replaced by a zeroed batch buffer of n elements (the old contents are not kept): pad rows of
// GEMM inputs must hold finite values, and calloc gets big blocks from mmap already zero, so
// pages a batch never reaches are never touched. Memory running out ends the run with xalloc's
// message, which names --batch-tokens.
static void replace_zeroed(void **p, size_t n, size_t elem) {
    free(*p);
    *p = xsa_calloc(n, elem);
    want_huge_pages(*p, n * elem);
}

// Grows the buffers for T tokens and S entries (memory running out ends the run: xalloc.h).
static void cpu_state_reserve(struct cpu_state *st, int T, int S) {
    const struct model_config *c = &st->m->cfg;
    if (T > st->t_cap) {
        size_t n = (size_t)cpu_gemm_pad_rows(T > 64 ? T : 64);
        size_t C = c->d_model, Q = (size_t)c->n_head * c->head_dim,
               KV = (size_t)c->n_kv_head * c->head_dim, F = c->d_ff, h2 = c->head_dim / 2;
        size_t nc = cpu_logits_chunks(c->vocab_size), G = (size_t)(c->n_head / c->n_kv_head);
        replace_zeroed((void **)&st->x, n * C, sizeof(float));
        replace_zeroed((void **)&st->xn, n * C, sizeof(float));
        replace_zeroed((void **)&st->q, n * Q, sizeof(float));
        replace_zeroed((void **)&st->k, n * KV, sizeof(float));
        replace_zeroed((void **)&st->v, n * KV, sizeof(float));
        replace_zeroed((void **)&st->att, n * Q, sizeof(float));
        replace_zeroed((void **)&st->o, n * C, sizeof(float));
        replace_zeroed((void **)&st->o2, c->parallel_residual || c->lanes_together ? n * C : 1, sizeof(float));
        replace_zeroed((void **)&st->ff, n * F, sizeof(float));
        replace_zeroed((void **)&st->ff2, n * F, sizeof(float));
        replace_zeroed((void **)&st->rope_cos, n * (h2 ? h2 : 1), sizeof(float));
        replace_zeroed((void **)&st->rope_sin, n * (h2 ? h2 : 1), sizeof(float));
        if (c->rope_local_theta != 0) {
            replace_zeroed((void **)&st->rope_cos_local, n * (h2 ? h2 : 1), sizeof(float));
            replace_zeroed((void **)&st->rope_sin_local, n * (h2 ? h2 : 1), sizeof(float));
        }
        replace_zeroed((void **)&st->att_p, (size_t)st->n_threads * CPU_ATTN_SCRATCH(G, n), sizeof(float));
        replace_zeroed((void **)&st->kt, (n + CPU_ATTN_LD_PAD) * KV, sizeof(float));
        replace_zeroed((void **)&st->vt, (n + CPU_ATTN_LD_PAD) * KV, sizeof(float));
        replace_zeroed((void **)&st->hrows, n * C, sizeof(float));
        if (c->embed_dim) replace_zeroed((void **)&st->erows, n * (size_t)c->embed_dim, sizeof(float));
        replace_zeroed((void **)&st->row_of, n, sizeof(int32_t));
        replace_zeroed((void **)&st->row_tok, n, sizeof(int32_t));
        replace_zeroed((void **)&st->row_first, n + 1, sizeof(int32_t));
        replace_zeroed((void **)&st->row_lse, n, sizeof(double));
        replace_zeroed((void **)&st->stats, n * nc, sizeof(struct cpu_chunk_stat));
        if (st->m->layers[0].resid_mix) replace_zeroed((void **)&st->x0, n * C, sizeof(float));
        if (c->unet_skips && c->n_layer >= 2) replace_zeroed((void **)&st->skip, n * C * (size_t)(c->n_layer / 2), sizeof(float));
        if (c->value_residual) replace_zeroed((void **)&st->v0, n * KV, sizeof(float));
        if (st->m->layers[0].dtg_w) replace_zeroed((void **)&st->dtg_in, n * (C + 1), sizeof(float));
        if (c->lanes_from) replace_zeroed((void **)&st->lane1, n * C, sizeof(float));
        st->t_cap = (int)n;
        st->t_ld = (long)n + CPU_ATTN_LD_PAD;
        st->att_stride = CPU_ATTN_SCRATCH(G, (long)n);
    }
    if (S > st->s_cap) {
        size_t n = (size_t)S;
        replace_zeroed((void **)&st->row_entries, n, sizeof(int32_t));
        replace_zeroed((void **)&st->entry_logit, n, sizeof(float));
        st->s_cap = S;
    }
}

// Grows the buffers for T tokens and S entries (memory running out ends the run: xalloc.h).
static void cpu_state_free_buffers(struct cpu_state *st) {
    void *bufs[] = {st->x, st->xn, st->q, st->k, st->v, st->att, st->o, st->o2, st->ff, st->ff2,
                    st->rope_cos, st->rope_sin, st->rope_cos_local, st->rope_sin_local, st->att_p, st->kt, st->vt, st->hrows, st->erows, st->row_of, st->row_tok,
                    st->row_first, st->row_lse, st->stats, st->row_entries, st->entry_logit, st->x0, st->skip, st->v0, st->dtg_in, st->lane1};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    // What lives for the backend's whole life survives; the batch buffers go.
    struct cpu_state keep = *st;
    memset(st, 0, sizeof *st);
    st->lg = keep.lg, st->pool = keep.pool, st->m = keep.m, st->n_threads = keep.n_threads;
    st->gemm = keep.gemm, st->attn = keep.attn;
    st->pk_mem = keep.pk_mem, st->pk = keep.pk, st->pk_head = keep.pk_head;
}

// Checks every index of the batch against the contract before anything reads through it.
int cpu_backend_score_probe(struct backend *be, const struct score_batch *b, float *logprob,
                            uint8_t *greedy, const struct cpu_probe *probe, xsa_error *err) {
    struct cpu_state *st = be->impl;
    int rc = backend_check_batch(&st->m->cfg, b, err);
    if (rc) return rc;
    if (probe && (probe->layer < 0 || probe->layer >= st->m->cfg.n_layer))
        return xsa_fail(err, XSA_EBADINPUT, "cpu backend: probe layer %d outside [0, %d)", probe->layer,
                        st->m->cfg.n_layer);
    if (b->n_tokens == 0) return 0;  // then n_entries == 0 too (checked above)
    cpu_state_reserve(st, b->n_tokens, b->n_entries);
    if (st->m->mng) cpu_forward_mnanogpt(st, b, logprob, greedy);
    else cpu_forward(st, b, logprob, greedy, probe);
    return 0;
}

static int cpu_score(struct backend *be, const struct score_batch *b, float *logprob,
                     uint8_t *greedy, xsa_error *err) {
    return cpu_backend_score_probe(be, b, logprob, greedy, NULL, err);
}

static void cpu_destroy(struct backend *be) {
    struct cpu_state *st = be->impl;
    if (!st) return;
    cpu_state_free_buffers(st);
    free(st->lg);
    free(st->pk_mem);
    free(st->pk);
    cpu_pool_destroy(st->pool);
    free(st);
    be->impl = NULL;
}

// Memory the kernel could give us without swapping: MemAvailable, else free pages.
static size_t available_bytes(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    if (kb) return (size_t)kb * 1024;
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0;
}

// Packs every GEMM weight for the AVX-512 kernel, when the copy takes at most half of the
// memory available (malloc would not fail on an overcommitting system; the OOM killer would
// come later) or `pack` says always; never when it says never. Otherwise st->pk stays NULL and
// the kernel packs per tile: the same results, about 1.5x slower GEMMs.
static void cpu_pack_weights(struct cpu_state *st, enum backend_pack pack) {
    const struct model *m = st->m;
    const struct model_config *c = &m->cfg;
    int C = c->d_model, F = c->d_ff, Q = c->n_head * c->head_dim, KV = c->n_kv_head * c->head_dim;
    int gated = model_mlp_gated(c);
    size_t per_layer = cpu_gemm_packed_size(Q, C) + 2 * cpu_gemm_packed_size(KV, C) +
                       cpu_gemm_packed_size(C, Q) + (gated ? 2 : 1) * cpu_gemm_packed_size(F, C) +
                       cpu_gemm_packed_size(C, F);
    int E = c->embed_dim ? c->embed_dim : C;  // (the head's width: opt's word_embed_proj_dim)
    size_t total = per_layer * (size_t)c->n_layer + cpu_gemm_packed_size(c->vocab_size, E);
    if (pack == BACKEND_PACK_NEVER || m->mng) return;  // (cpu_mnanogpt.c runs its own products)
    if (pack != BACKEND_PACK_ALWAYS && total * sizeof(float) > available_bytes() / 2) return;
    st->pk_mem = aligned_alloc(64, (total * sizeof(float) + 63) / 64 * 64);
    st->pk = calloc((size_t)c->n_layer, sizeof *st->pk);
    if (!st->pk_mem || !st->pk) {
        free(st->pk_mem);
        free(st->pk);
        st->pk_mem = NULL, st->pk = NULL;
        return;
    }
    want_huge_pages(st->pk_mem, total * sizeof(float));
    float *p = st->pk_mem;
    // A matrix an earlier layer has too (depth recurrence, shared blocks) is packed once; a
    // layer without attention (DISABLE_LAYER0_ATTN) may have no attention matrices.
#define PACK(dst, field, N, K)                                                                \
    do {                                                                                      \
        const float *src_ = w->field;                                                         \
        (dst) = NULL;                                                                         \
        for (int e_ = 0; e_ < l && src_ && !(dst); e_++)                                      \
            if (m->layers[e_].field == src_) (dst) = st->pk[e_].field;                        \
        if (src_ && !(dst)) {                                                                 \
            cpu_gemm_pack(st->pool, src_, (N), (K), p);                                       \
            (dst) = p, p += cpu_gemm_packed_size((N), (K));                                   \
        }                                                                                     \
    } while (0)
    for (int l = 0; l < c->n_layer; l++) {
        const struct layer_weights *w = &m->layers[l];
        struct cpu_packed_layer *d = &st->pk[l];
        PACK(d->wq, wq, Q, C);
        PACK(d->wk, wk, KV, C);
        PACK(d->wv, wv, KV, C);
        PACK(d->wo, wo, C, Q);
        if (gated) PACK(d->w_gate, w_gate, F, C);
        PACK(d->w_up, w_up, F, C);
        PACK(d->w_down, w_down, C, F);
    }
#undef PACK
    cpu_gemm_pack(st->pool, m->lm_head, c->vocab_size, E, p);
    st->pk_head = p;
}

int cpu_backend_open(struct backend *be, const struct model *m, const struct backend_options *opt,
                     xsa_error *err) {
    memset(be, 0, sizeof *be);
    int nt = opt ? opt->n_threads : 0;
    if (nt <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nt = n > 0 ? (int)n : 1;
    }
    if (nt > CPU_MAX_THREADS) nt = CPU_MAX_THREADS;
    // OpenBLAS runs single-threaded inside our pool: each tile has one fixed shape and thread,
    // which is what makes scores independent of the thread count.
    openblas_set_num_threads(1);
    struct cpu_state *st = xsa_calloc(1, sizeof *st);
    st->m = m;
    st->n_threads = nt;
    be->impl = st;  // from here on, failures clean up through cpu_destroy(be)
    st->pool = cpu_pool_create(nt);
    const struct model_config *c = &m->cfg;
    int Q = c->n_head * c->head_dim, KV = c->n_kv_head * c->head_dim, V = c->vocab_size;
    int shapes[][2] = {{c->d_model, CPU_GEMM_COLS}, {c->d_model, Q % CPU_GEMM_COLS}, {c->d_model, KV % CPU_GEMM_COLS},
                       {c->d_model, c->d_ff % CPU_GEMM_COLS}, {Q, CPU_GEMM_COLS}, {Q, c->d_model % CPU_GEMM_COLS},
                       {c->d_ff, CPU_GEMM_COLS}, {c->d_ff, c->d_model % CPU_GEMM_COLS},
                       {c->d_model, V % CPU_VOCAB_CHUNK % CPU_GEMM_COLS}};
    int kind = cpu_gemm_pick(shapes, (int)(sizeof shapes / sizeof shapes[0]));
    // A forced kernel (XSA_CPU_GEMM; tests run every kernel through the same checks).
    const char *force = opt ? opt->cpu_gemm : NULL;
    if (force && *force) {
        if (!strcmp(force, "blas")) kind = CPU_GEMM_BLAS;
        else if (!strcmp(force, "avx2") && cpu_gemm_have_avx2()) kind = CPU_GEMM_AVX2;
        else if (!strcmp(force, "avx512") && cpu_gemm_have_avx512()) kind = CPU_GEMM_AVX512;
        else if (!strcmp(force, "scalar")) kind = CPU_GEMM_SCALAR;
        else {
            cpu_destroy(be);
            return xsa_fail(err, XSA_EBADINPUT, "XSA_CPU_GEMM=%s: use blas, avx2 (on AVX2 CPUs), avx512 (on AVX-512 CPUs) or scalar", force);
        }
    }
    st->gemm = (enum cpu_gemm_kind)kind;
    // A forced OpenBLAS that rounds a row by its place in a tile makes scores depend on the
    // batch in the last bits: allowed (for measuring), never silent (a warning: --quiet keeps it).
    int variant = force && !strcmp(force, "blas") &&
                  cpu_gemm_blas_invariant(shapes, (int)(sizeof shapes / sizeof shapes[0])) == 0;
    if (variant)
        fprintf(stderr, "xsa-eval: warning: XSA_CPU_GEMM=blas: OpenBLAS core %s rounds a row by its place in a tile, "
                        "so scores can change in the last bits with the batch (--batch-tokens, --no-share); "
                        "unset XSA_CPU_GEMM for batch-invariant scores\n", openblas_get_corename());
    // A forced attention kernel (XSA_CPU_ATTN; tests run both).
    const char *force_attn = opt ? opt->cpu_attn : NULL;
    int attn = cpu_attention_pick(force_attn);
    if (attn < 0) {
        cpu_destroy(be);
        return xsa_fail(err, XSA_EBADINPUT, "XSA_CPU_ATTN=%s: use avx2 (on AVX2 CPUs) or scalar", force_attn);
    }
    st->attn = (enum cpu_attn_kind)attn;
    st->lg = malloc((size_t)nt * CPU_GEMM_ROWS * CPU_VOCAB_CHUNK * sizeof(float));
    be->name = "cpu";
    be->score = cpu_score;
    be->destroy = cpu_destroy;
    if (!st->pool || !st->lg) {
        cpu_destroy(be);
        return xsa_fail(err, XSA_ERUNTIME, "cpu backend: cannot start %d threads", nt);
    }
    // Default budget: 64 row tiles per GEMM keep every core busy, and the activations of 4096
    // tokens stay under a GB up to 3B-parameter models.
    int given = opt && opt->max_batch_tokens > 0;
    be->batch_tokens = given ? opt->max_batch_tokens : CPU_DEFAULT_BATCH_TOKENS;
    int want = given ? opt->max_batch_tokens : CPU_GEMM_ROWS;
    if (want > CPU_MAX_TOKENS) want = CPU_MAX_TOKENS;
    cpu_state_reserve(st, want, want);
    // OpenBLAS repacks both operands on every tile call; where our kernel gives its bits from
    // weights packed once, it runs OpenBLAS's sums instead (same scores, no per-tile packing).
    int blas_packed = st->gemm == CPU_GEMM_BLAS && !variant &&
                      cpu_gemm_blas_order_ok(shapes, (int)(sizeof shapes / sizeof shapes[0]));
    if (st->gemm == CPU_GEMM_AVX512 || blas_packed) cpu_pack_weights(st, opt ? opt->cpu_pack : BACKEND_PACK_AUTO);
    snprintf(be->device_desc, sizeof be->device_desc, "CPU, %d thread%s, fp32, %s%s%s (OpenBLAS core %s), %s", nt,
             nt == 1 ? "" : "s", cpu_gemm_kind_name(st->gemm), variant ? " (forced, not batch-invariant)" : "",
             st->pk ? (st->gemm == CPU_GEMM_BLAS ? ", its sums by our AVX-512 kernel from packed weights" : ", packed weights") : "",
             openblas_get_corename(), cpu_attention_kind_name(st->attn));
    // Packing and threads change no bit; OpenBLAS's core does, and so does libm's expf where
    // the vector exp is not used (CPUs without AVX2).
    snprintf(be->numerics, sizeof be->numerics, "cpu fp32, %s%s%s, %s, %s exp", cpu_gemm_kind_name(st->gemm),
             st->gemm == CPU_GEMM_BLAS ? " core " : "", st->gemm == CPU_GEMM_BLAS ? openblas_get_corename() : "",
             cpu_attention_kind_name(st->attn), cpu_gemm_have_avx2() ? "AVX2" : "libm");
    be->n_threads = nt;
    return 0;
}
