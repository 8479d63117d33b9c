// llmc.c: llm.c's GPT-2 checkpoints -> the GPT-2 of model/hf_checkpoint.c (see the header).
#include "model/llmc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "model/config.h"
#include "model/model_internal.h"
#include "model/safetensors.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "llm.c files are little-endian; this reader assumes a little-endian host"
#endif

#define LLMC_MODEL_MAGIC 20240326

// llm.c's other binary files, each with its own 256-int32 header: what they are, what to do.
static const struct {
    int32_t magic;
    const char *what;
} other_files[] = {
    {20240327, "llm.c's debug state (gpt2_124M_debug_state.bin: a batch, its logits and gradients), not a model; pass gpt2_124M.bin or a model_*.bin"},
    {20240328, "llm.c's tokenizer file (gpt2_tokenizer.bin), not a model"},
    {20240520, "an llm.c token shard (GPT-2 tokens), not a model; score it with xsa-eval ppl --tokens-file"},
    {20240522, "an llm.c evaluation file (dev/data/hellaswag.py's .bin), not a model; xsa-eval downloads and scores HellaSwag itself (--tasks hellaswag)"},
    {20240527, "llm.c's optimizer state (state_*.bin), not the model; pass the model_*.bin written at the same step"},
    {20240801, "an llm.c Llama 3 token shard, not a model; score it with xsa-eval ppl --tokens-file"},
    {20240803, "llm.c's Llama 3 export (train_llama3.py), which xsa-eval does not read; pass the Hugging Face Llama 3 folder it was made from"},
};

static int32_t read_i32(const unsigned char *p) {  // (a little-endian host: see the #error above)
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static int32_t first_i32(const char *path) {
    unsigned char b[4];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(b, 1, 4, f);
    fclose(f);
    return n == 4 ? read_i32(b) : 0;
}

enum llmc_kind llmc_sniff(const char *path) {
    int32_t magic = first_i32(path);
    if (magic == LLMC_MODEL_MAGIC) return LLMC_MODEL;
    for (size_t i = 0; i < sizeof other_files / sizeof *other_files; i++)
        if (magic == other_files[i].magic) return LLMC_OTHER;
    return LLMC_NONE;
}

struct llmc_header {
    int version, max_t, vocab, n_layer, n_head, channels, padded_vocab;
};

static int check_header(const unsigned char *d, const char *path, struct llmc_header *h, xsa_error *err) {
    int32_t v[8];
    for (int i = 0; i < 8; i++) v[i] = read_i32(d + 4 * i);
    h->version = v[1];
    if (v[1] != 3 && v[1] != 5)
        return xsa_fail(err, XSA_EBADINPUT, "%s: an llm.c GPT-2 checkpoint of version %d; xsa-eval reads versions 3 (float32) and 5 (bfloat16), the ones llm.c itself reads since May 2024: re-export it with llm.c's train_gpt2.py",
                        path, (int)v[1]);
    static const char *names[] = {"max_seq_len", "vocab_size", "num_layers", "num_heads", "channels", "padded_vocab_size"};
    static const int32_t hi[] = {1 << 20, 1 << 22, MODEL_MAX_LAYERS, 1024, 1 << 16, 1 << 22};
    for (int i = 0; i < 6; i++)
        if (v[2 + i] < 1 || v[2 + i] > hi[i])
            return xsa_fail(err, XSA_EBADINPUT, "%s: llm.c header %s = %d is outside [1, %d]; the file is corrupt", path, names[i], (int)v[2 + i], (int)hi[i]);
    h->max_t = v[2], h->vocab = v[3], h->n_layer = v[4], h->n_head = v[5], h->channels = v[6], h->padded_vocab = v[7];
    if (h->channels % h->n_head)
        return xsa_fail(err, XSA_EBADINPUT, "%s: llm.c header channels %d is not a multiple of num_heads %d; the file is corrupt", path, h->channels, h->n_head);
    if (h->padded_vocab < h->vocab)
        return xsa_fail(err, XSA_EBADINPUT, "%s: llm.c header padded_vocab_size %d is below vocab_size %d; the file is corrupt", path, h->padded_vocab, h->vocab);
    return 0;
}

// The synthesized config.json of the GPT-2 llm.c trains (what dev/eval/export_hf.py writes:
// GPT2Config's defaults, gelu_new, eps 1e-5, the head tied to wte).
static int llmc_config(const struct llmc_header *h, const char *path, struct hf_config *hc, xsa_error *err) {
    char text[1024], eos[16] = "null";
    if (h->vocab > 50256) snprintf(eos, sizeof eos, "50256");  // GPT-2's <|endoftext|>
    snprintf(text, sizeof text,
             "{\"model_type\": \"gpt2\", \"vocab_size\": %d, \"n_positions\": %d, \"n_embd\": %d, \"n_layer\": %d, "
             "\"n_head\": %d, \"n_inner\": null, \"activation_function\": \"gelu_new\", \"layer_norm_epsilon\": 1e-5, "
             "\"tie_word_embeddings\": true, \"bos_token_id\": %s, \"eos_token_id\": %s}",
             h->vocab, h->max_t, h->channels, h->n_layer, h->n_head, eos, eos);
    return hf_config_parse_text(hc, text, path, err);
}

struct llmc_reader {
    struct safetensors *st;
    int fi;
    const unsigned char *p;  // the next parameter's bytes
    size_t es;               // bytes per element
    const char *dtype;       // "F32" | "BF16"
};

// Adds the next tensor of the file under `name` (shape d0 or d0 x d1) and moves past it.
static int take(struct llmc_reader *r, const char *name, int64_t d0, int64_t d1, xsa_error *err) {
    int64_t shape[2] = {d0, d1};
    size_t n = (size_t)d0 * (size_t)(d1 ? d1 : 1) * r->es;
    int rc = safetensors_add_tensor(r->st, r->fi, name, r->dtype, d1 ? 2 : 1, shape, r->p, n, err);
    r->p += n;
    return rc;
}

// Adds the next (out, in) matrix under a GPT-2 Conv1D weight's `name`, marked as stored in
// nn.Linear's layout, which the GPT-2 loader then reads without transposing it.
static int take_conv1d(struct llmc_reader *r, const char *name, int64_t out, int64_t in, xsa_error *err) {
    int rc = take(r, name, out, in, err);
    if (!rc) r->st->tensors[r->st->n_tensors - 1].linear = 1;
    return rc;
}

// The per-layer tensors of one kind, stacked (L, d0[, d1]) in the file.
static int take_layers(struct llmc_reader *r, int L, const char *suffix, int64_t d0, int64_t d1, int conv1d, xsa_error *err) {
    char name[128];
    int rc = 0;
    for (int l = 0; l < L && !rc; l++) {
        snprintf(name, sizeof name, "transformer.h.%d.%s", l, suffix);
        rc = conv1d ? take_conv1d(r, name, d0, d1, err) : take(r, name, d0, d1, err);
    }
    return rc;
}

static int add_tensors(struct llmc_reader *r, const struct llmc_header *h, xsa_error *err) {
    int64_t C = h->channels, L = h->n_layer;
    // wte: the first vocab_size of its padded rows (the padding never enters llm.c's loss)
    int rc = take(r, "transformer.wte.weight", h->vocab, C, err);
    r->p += (size_t)(h->padded_vocab - h->vocab) * (size_t)C * r->es;
    if (!rc) rc = take(r, "transformer.wpe.weight", h->max_t, C, err);
    if (!rc) rc = take_layers(r, (int)L, "ln_1.weight", C, 0, 0, err);
    if (!rc) rc = take_layers(r, (int)L, "ln_1.bias", C, 0, 0, err);
    if (!rc) rc = take_layers(r, (int)L, "attn.c_attn.weight", 3 * C, C, 1, err);
    if (!rc) rc = take_layers(r, (int)L, "attn.c_attn.bias", 3 * C, 0, 0, err);
    if (!rc) rc = take_layers(r, (int)L, "attn.c_proj.weight", C, C, 1, err);
    if (!rc) rc = take_layers(r, (int)L, "attn.c_proj.bias", C, 0, 0, err);
    if (!rc) rc = take_layers(r, (int)L, "ln_2.weight", C, 0, 0, err);
    if (!rc) rc = take_layers(r, (int)L, "ln_2.bias", C, 0, 0, err);
    if (!rc) rc = take_layers(r, (int)L, "mlp.c_fc.weight", 4 * C, C, 1, err);
    if (!rc) rc = take_layers(r, (int)L, "mlp.c_fc.bias", 4 * C, 0, 0, err);
    if (!rc) rc = take_layers(r, (int)L, "mlp.c_proj.weight", C, 4 * C, 1, err);
    if (!rc) rc = take_layers(r, (int)L, "mlp.c_proj.bias", C, 0, 0, err);
    if (!rc) rc = take(r, "transformer.ln_f.weight", C, 0, err);
    if (!rc) rc = take(r, "transformer.ln_f.bias", C, 0, err);
    return rc;
}

int llmc_load(struct model *m, const char *path, xsa_error *err) {
    int32_t magic = first_i32(path);
    for (size_t i = 0; i < sizeof other_files / sizeof *other_files; i++)
        if (magic == other_files[i].magic) return xsa_fail(err, XSA_EBADINPUT, "%s: %s", path, other_files[i].what);
    struct safetensors st;
    memset(&st, 0, sizeof st);
    snprintf(st.format, sizeof st.format, "llmc");
    struct llmc_reader r = {.st = &st};
    int rc = safetensors_add_file(&st, path, &r.fi, err);
    struct mapped_file *mf = rc ? NULL : &st.files[r.fi].mf;
    if (!rc) rc = file_map(path, mf, err);
    struct llmc_header h = {0};
    if (!rc && mf->size < LLMC_HEADER_BYTES)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: %zu bytes is too short for an llm.c checkpoint header (1024 bytes); the file is truncated", path, mf->size);
    if (!rc) rc = check_header(mf->data, path, &h, err);
    if (!rc) {  // bounded by check_header: every product fits in 64 bits
        uint64_t C = (uint64_t)h.channels, L = (uint64_t)h.n_layer;
        uint64_t n = (uint64_t)h.padded_vocab * C + (uint64_t)h.max_t * C + L * (12 * C * C + 13 * C) + 2 * C;
        r.es = h.version == 3 ? 4 : 2;
        r.dtype = h.version == 3 ? "F32" : "BF16";
        uint64_t want = LLMC_HEADER_BYTES + n * r.es;
        if ((uint64_t)mf->size != want)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: file is %zu bytes but its llm.c header (version %d, max_seq_len %d, vocab_size %d, num_layers %d, num_heads %d, channels %d, padded_vocab_size %d) implies %llu; %s",
                          path, mf->size, h.version, h.max_t, h.vocab, h.n_layer, h.n_head, h.channels, h.padded_vocab,
                          (unsigned long long)want, (uint64_t)mf->size < want ? "the file is truncated" : "the file has bytes after the parameters");
    }
    if (!rc) {
        r.p = mf->data + LLMC_HEADER_BYTES;
        rc = add_tensors(&r, &h, err);
    }
    struct hf_config hc;
    if (!rc) rc = llmc_config(&h, path, &hc, err);
    if (rc) {
        safetensors_close(&st);
        return rc;
    }
    return hf_checkpoint_build(m, path, &hc, &st, err);  // takes st over
}
