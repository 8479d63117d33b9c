// llama2c.c: llama2.c legacy .bin -> struct model (RoPE on adjacent pairs, theta 10000).
#include "model/llama2c.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/fileio.h"
#include "model/model_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "llama2.c files are little-endian; this reader assumes a little-endian host"
#endif

#define LLAMA2C_MAGIC_V1 0x616b3432  // "ak42": export.py --version 1/2 files, not run.c's format

static int32_t read_i32(const unsigned char *p) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

// The next tensor of the file, `count` slices of n floats, into dst[0..count) (one per layer,
// or one for a tensor outside the layers); refused whole if it holds NaN or Inf, under its name
// in llama2.c's run.c and with its element index in the file. *p moves past it.
static int take_f32(const unsigned char **p, const char *name, float *const *dst, int count, size_t n,
                    const char *path, xsa_error *err) {
    int rc = model_check_finite((const float *)(const void *)*p, (size_t)count * n, path, name, err);
    for (int i = 0; i < count && !rc; i++) {
        memcpy(dst[i], *p, n * sizeof(float));
        *p += n * sizeof(float);
    }
    return rc;
}

// take_f32 for a tensor stacked across the layers: slice l goes to the `field` of layer l.
static int take_layers(const unsigned char **p, const char *name, struct model *m, size_t field, size_t n,
                       const char *path, xsa_error *err) {
    float *dst[MODEL_MAX_LAYERS];
    for (int l = 0; l < m->cfg.n_layer; l++) memcpy(&dst[l], (char *)&m->layers[l] + field, sizeof dst[l]);
    return take_f32(p, name, dst, m->cfg.n_layer, n, path, err);
}

static int check_header(const int32_t h[7], const char *path, xsa_error *err) {
    static const char *names[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
    static const int32_t hi[7] = {1 << 16, 1 << 20, MODEL_MAX_LAYERS, 4096, 4096, 1 << 22, 1 << 22};
    if (h[0] == LLAMA2C_MAGIC_V1)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a llama2.c version-1/2 export (magic \"ak42\"); xsa-eval reads the legacy format run.c reads (export.py --version 0)", path);
    for (int i = 0; i < 7; i++) {
        int64_t v = i == 5 && h[i] < 0 ? -(int64_t)h[i] : h[i];  // negative vocab: unshared classifier
        if (v < 1 || v > hi[i])
            return xsa_fail(err, XSA_EBADINPUT, "%s: header %s = %d is outside [1, %d]; not a llama2.c checkpoint", path, names[i], (int)h[i], (int)hi[i]);
    }
    if (h[0] % h[3] || h[3] % h[4] || (h[0] / h[3]) % 2)
        return xsa_fail(err, XSA_EBADINPUT, "%s: header dim %d, n_heads %d, n_kv_heads %d do not divide into even head sizes; not a llama2.c checkpoint",
                        path, (int)h[0], (int)h[3], (int)h[4]);
    return 0;
}

int llama2c_load(struct model *m, const char *path, xsa_error *err) {
    struct mapped_file mf;
    int rc = file_map(path, &mf, err);
    if (rc) return rc;
    if (mf.size < LLAMA2C_HEADER_BYTES) {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: %zu bytes is too short for a llama2.c checkpoint header (28 bytes)", path, mf.size);
        file_unmap(&mf);
        return rc;
    }
    int32_t h[7];
    for (int i = 0; i < 7; i++) h[i] = read_i32(mf.data + 4 * i);
    rc = check_header(h, path, err);
    if (rc) { file_unmap(&mf); return rc; }

    struct model_config *c = &m->cfg;
    memset(c, 0, sizeof *c);
    c->arch = MODEL_ARCH_LLAMA;
    c->rope = ROPE_ADJACENT;
    c->d_model = h[0];
    c->d_ff = h[1];
    c->n_layer = h[2];
    c->n_head = h[3];
    c->n_kv_head = h[4];
    c->vocab_size = h[5] < 0 ? -h[5] : h[5];
    c->tied_head = h[5] > 0;
    c->max_seq_len = h[6];
    c->head_dim = c->d_model / c->n_head;
    c->norm_eps = 1e-5f;
    c->rope_theta = 10000.0f;
    c->bos_id = 1;
    c->eos_id = 2;

    // Sizes are bounded by check_header, so these products fit in 64 bits.
    uint64_t C = (uint64_t)c->d_model, F = (uint64_t)c->d_ff, L = (uint64_t)c->n_layer, V = (uint64_t)c->vocab_size;
    uint64_t KV = (uint64_t)c->n_kv_head * (uint64_t)c->head_dim, T = (uint64_t)c->max_seq_len, hd = (uint64_t)c->head_dim;
    uint64_t floats = V * C + L * (C + C * C + 2 * KV * C + C * C + C + 3 * F * C) + C + 2 * T * (hd / 2) + (c->tied_head ? 0 : V * C);
    uint64_t want = LLAMA2C_HEADER_BYTES + floats * 4;
    if ((uint64_t)mf.size != want) {
        rc = xsa_fail(err, XSA_EBADINPUT,
                      "%s: file is %zu bytes but its header (dim %d, hidden_dim %d, n_layers %d, n_heads %d, n_kv_heads %d, vocab_size %d, seq_len %d) implies %llu; truncated or not a llama2.c checkpoint",
                      path, mf.size, (int)h[0], (int)h[1], (int)h[2], (int)h[3], (int)h[4], (int)h[5], (int)h[6], (unsigned long long)want);
        file_unmap(&mf);
        return rc;
    }
    rc = model_alloc_weights(m, &(struct weight_spec){0}, err);
    if (rc) { file_unmap(&mf); return rc; }

    const unsigned char *p = mf.data + LLAMA2C_HEADER_BYTES;
#define LAYERS(name, field, n) \
    if (!rc) rc = take_layers(&p, name, m, offsetof(struct layer_weights, field), n, path, err)
    rc = take_f32(&p, "token_embedding_table", &m->tok_emb, 1, V * C, path, err);  // (V, C)
    LAYERS("rms_att_weight", attn_norm_w, C);                                     // (L, C)
    LAYERS("wq", wq, C * C);                                                      // (L, C, C)
    LAYERS("wk", wk, KV * C);                                                     // (L, KV, C)
    LAYERS("wv", wv, KV * C);                                                     // (L, KV, C)
    LAYERS("wo", wo, C * C);                                                      // (L, C, C)
    LAYERS("rms_ffn_weight", mlp_norm_w, C);                                      // (L, C)
    LAYERS("w1", w_gate, F * C);                                                  // (L, F, C)
    LAYERS("w2", w_down, C * F);                                                  // (L, C, F)
    LAYERS("w3", w_up, F * C);                                                    // (L, F, C)
#undef LAYERS
    if (!rc) rc = take_f32(&p, "rms_final_weight", &m->final_norm_w, 1, C, path, err);  // (C)
    p += 2 * T * (hd / 2) * sizeof(float);  // freq_cis_real/imag: RoPE is recomputed from theta
    if (!rc && !c->tied_head) rc = take_f32(&p, "wcls", &m->lm_head, 1, V * C, path, err);  // (V, C)
    if (rc) { file_unmap(&mf); return rc; }

    snprintf(m->format, sizeof m->format, "llama2c");
    snprintf(m->dtype, sizeof m->dtype, "F32");
    snprintf(m->xsa_source, sizeof m->xsa_source, "none");  // the format carries no XSA flag
    file_unmap(&mf);
    return sha256_file_hex(path, m->weights_sha256, err);
}
