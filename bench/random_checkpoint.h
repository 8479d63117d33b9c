// random_checkpoint.h: a random 26.2M llama written to a folder as a Hugging Face checkpoint
// (config.json + model.safetensors; d_model 512, 8 layers, d_ff 1408, vocab 1024, tied head),
// for the benchmarks (header-only: each bench/bench_*.c is its own program).
#ifndef XSA_BENCH_RANDOM_CHECKPOINT_H
#define XSA_BENCH_RANDOM_CHECKPOINT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/vec.h"
#include "common/xalloc.h"
#include "tests/random_model.h"

enum { C = 512, L = 8, F = 1408, V = 1024 };

// Writes dir/model.safetensors: every tensor of the llama above, random values of scale 0.02,
// as F32 (bf16 0) or BF16; the header is padded so the data starts 8-byte aligned.
static int random_checkpoint_write(const char *dir, int bf16, xsa_error *err) {
    static const char *layer_names[] = {"input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                        "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
                                        "mlp.down_proj"};
    static const long rows[] = {C, C, C, C, C, C, F, F, C}, cols[] = {0, C, C, C, C, 0, C, C, F};
    size_t es = bf16 ? 2 : 4, off = 0, total = ((size_t)V * C + (size_t)L * (2 * C + 4 * C * C + 3 * (size_t)F * C) + C) * es;
    struct sbuf h = {0};
    sbuf_printf(&h, "{\"model.embed_tokens.weight\":{\"dtype\":\"%s\",\"shape\":[%d,%d],\"data_offsets\":[0,%zu]}",
                bf16 ? "BF16" : "F32", V, C, (off = (size_t)V * C * es));
    for (int l = 0; l < L; l++)
        for (int k = 0; k < 9; k++) {
            size_t n = (size_t)rows[k] * (size_t)(cols[k] ? cols[k] : 1) * es;
            sbuf_printf(&h, ",\"model.layers.%d.%s.weight\":{\"dtype\":\"%s\",\"shape\":[%ld", l, layer_names[k], bf16 ? "BF16" : "F32", rows[k]);
            if (cols[k]) sbuf_printf(&h, ",%ld", cols[k]);
            sbuf_printf(&h, "],\"data_offsets\":[%zu,%zu]}", off, off + n);
            off += n;
        }
    sbuf_printf(&h, ",\"model.norm.weight\":{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}}",
                bf16 ? "BF16" : "F32", C, off, off + (size_t)C * es);
    while ((8 + h.n) % 8) sbuf_append(&h, " ", 1);
    size_t bytes = 8 + h.n + total;
    unsigned char *buf = xsa_malloc(bytes);
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)h.n >> (8 * i));
    memcpy(buf + 8, h.s, h.n);
    uint64_t seed = 42;
    unsigned char *p = buf + 8 + h.n;
    for (size_t i = 0; i < total / es; i++) {
        float f = 0.02f * random_model_uniform(&seed);
        uint32_t u;
        memcpy(&u, &f, 4);
        if (bf16) { uint16_t b = (uint16_t)(u >> 16); memcpy(p + 2 * i, &b, 2); }
        else memcpy(p + 4 * i, &u, 4);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    int rc = file_write_atomic(path, buf, bytes, err);
    free(buf);
    sbuf_free(&h);
    if (rc) return rc;
    char cfg[512];
    int n = snprintf(cfg, sizeof cfg,
                     "{\"model_type\":\"llama\",\"vocab_size\":%d,\"hidden_size\":%d,\"intermediate_size\":%d,\"num_hidden_layers\":%d,"
                     "\"num_attention_heads\":8,\"max_position_embeddings\":1024,\"tie_word_embeddings\":true}", V, C, F, L);
    snprintf(path, sizeof path, "%s/config.json", dir);
    return file_write_atomic(path, cfg, (size_t)n, err);
}

#endif
