// llama2c.c: llama2.c legacy .bin -> struct model (RoPE on adjacent pairs, theta 10000).
#include "model/llama2c.h"

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

// Copies the next n floats of the file into dst.
static const unsigned char *copy_f32(const unsigned char *p, float *dst, size_t n) {
    memcpy(dst, p, n * sizeof(float));
    return p + n * sizeof(float);
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
    rc = model_alloc_weights(m, 0, 0, err);
    if (rc) { file_unmap(&mf); return rc; }

    const unsigned char *p = mf.data + LLAMA2C_HEADER_BYTES;
    int nl = c->n_layer;
    p = copy_f32(p, m->tok_emb, V * C);                                         // (V, C)
    for (int l = 0; l < nl; l++) p = copy_f32(p, m->layers[l].attn_norm_w, C);  // (L, C)
    for (int l = 0; l < nl; l++) p = copy_f32(p, m->layers[l].wq, C * C);       // (L, C, C)
    for (int l = 0; l < nl; l++) p = copy_f32(p, m->layers[l].wk, KV * C);      // (L, KV, C)
    for (int l = 0; l < nl; l++) p = copy_f32(p, m->layers[l].wv, KV * C);      // (L, KV, C)
    for (int l = 0; l < nl; l++) p = copy_f32(p, m->layers[l].wo, C * C);       // (L, C, C)
    for (int l = 0; l < nl; l++) p = copy_f32(p, m->layers[l].mlp_norm_w, C);   // (L, C)
    for (int l = 0; l < nl; l++) p = copy_f32(p, m->layers[l].w_gate, F * C);   // w1 (L, F, C)
    for (int l = 0; l < nl; l++) p = copy_f32(p, m->layers[l].w_down, C * F);   // w2 (L, C, F)
    for (int l = 0; l < nl; l++) p = copy_f32(p, m->layers[l].w_up, F * C);     // w3 (L, F, C)
    p = copy_f32(p, m->final_norm_w, C);                                        // (C)
    p += 2 * T * (hd / 2) * sizeof(float);  // freq_cis_real/imag: RoPE is recomputed from theta
    if (!c->tied_head) p = copy_f32(p, m->lm_head, V * C);                      // wcls (V, C)

    snprintf(m->format, sizeof m->format, "llama2c");
    snprintf(m->dtype, sizeof m->dtype, "F32");
    snprintf(m->xsa_source, sizeof m->xsa_source, "none");  // the format carries no XSA flag
    file_unmap(&mf);
    return sha256_file_hex(path, m->weights_sha256, err);
}
