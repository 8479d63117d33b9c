// tokenizer.c: finds and loads a tokenizer file and dispatches to its kind.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "model/llmc.h"
#include "model/tokenizer_impl.h"

#define TOKENIZER_MAX_BYTES ((size_t)512 << 20)

// Anything at that name: a FIFO or folder there is refused by name when it is read, not passed
// over as if no tokenizer were there.
static int present(const char *path) { return access(path, F_OK) == 0; }

int tokenizer_find(const char *model_path, char *out, size_t n, xsa_error *err) {
    if (dir_exists(model_path)) {
        // vocab.json (with merges.txt beside it): GPT-2-style repos without a tokenizer.json (facebook/opt-*)
        static const char *names[] = {"tokenizer.json", "tokenizer.model", "vocab.json"};
        for (size_t i = 0; i < 3; i++) {
            snprintf(out, n, "%s/%s", model_path, names[i]);
            if (present(out)) return 0;
        }
        return xsa_fail(err, XSA_EBADINPUT,
                        "%s: no tokenizer.json, tokenizer.model or vocab.json + merges.txt in the checkpoint directory; "
                        "pass --tokenizer FILE", model_path);
    }
    const char *slash = strrchr(model_path, '/');
    int dirlen = slash ? (int)(slash - model_path) : 1;
    size_t n_path = strlen(model_path);
    if (n_path > 3 && (!strcmp(model_path + n_path - 3, ".pt") || !strcmp(model_path + n_path - 4, ".pth") ||
                       (n_path > 5 && !strcmp(model_path + n_path - 5, ".ckpt")))) {
        // A torch.save file (nanoGPT's ckpt.pt): tokenizer.json beside it, else GPT-2's by flag;
        // a parameter-golf final_model.pt: the family's SentencePiece model as tokenizer.model.
        snprintf(out, n, "%.*s/tokenizer.json", dirlen, slash ? model_path : ".");
        if (present(out)) return 0;
        snprintf(out, n, "%.*s/tokenizer.model", dirlen, slash ? model_path : ".");
        if (present(out)) return 0;
        return xsa_fail(err, XSA_EBADINPUT, "%s: no tokenizer.json or tokenizer.model beside the checkpoint; pass --tokenizer FILE, the tokenizer.json or tokenizer.model the model was trained with (nanoGPT's GPT-2 BPE runs: the tokenizer.json of openai-community/gpt2; parameter-golf: fineweb_1024_bpe.model)",
                        model_path);
    }
    if (n_path > 4 && !strcmp(model_path + n_path - 4, ".ptz")) {
        // A parameter-golf artifact: the family's SentencePiece model beside it.
        snprintf(out, n, "%.*s/tokenizer.model", dirlen, slash ? model_path : ".");
        if (present(out)) return 0;
        return xsa_fail(err, XSA_EBADINPUT, "%s: no tokenizer.model beside the artifact; pass --tokenizer FILE (the family's fineweb_1024_bpe.model)", model_path);
    }
    if (llmc_sniff(model_path) == LLMC_MODEL) {
        // llm.c trains on GPT-2's tokens (tiktoken's gpt2); its gpt2_tokenizer.bin only decodes.
        snprintf(out, n, "%.*s/tokenizer.json", dirlen, slash ? model_path : ".");
        if (present(out)) return 0;
        return xsa_fail(err, XSA_EBADINPUT, "%s: an llm.c checkpoint and no tokenizer.json beside it; pass --tokenizer FILE (llm.c's GPT-2 runs: the tokenizer.json of openai-community/gpt2; llm.c's gpt2_tokenizer.bin only decodes)",
                        model_path);
    }
    // A llama2.c .bin: tokenizer.bin beside it.
    snprintf(out, n, "%.*s/tokenizer.bin", dirlen, slash ? model_path : ".");
    if (present(out)) return 0;
    return xsa_fail(err, XSA_EBADINPUT, "%s: no tokenizer.bin beside the checkpoint; pass --tokenizer FILE", model_path);
}

const char *tokenizer_parity_note(const char *model_path, const char *tok_path) {
    char cfg[4200];
    size_t n = strlen(tok_path);
    snprintf(cfg, sizeof cfg, "%s/config.json", model_path);
    if (!dir_exists(model_path) || !file_exists(cfg) || n < 16 || strcmp(tok_path + n - 16, "/tokenizer.model"))
        return NULL;
    return "the folder has tokenizer.model but no tokenizer.json, so xsa-eval tokenizes with SentencePiece's own rules; "
           "transformers (and so lm-eval) converts it to a fast tokenizer, which splits some text otherwise (runs of "
           "spaces, \"<s>\" written in the text). For lm-eval's token ids, save that tokenizer into the folder: "
           "AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR)";
}

int tokenizer_load(struct tokenizer **out, const char *path, xsa_error *err) {
    *out = NULL;
    char *data = NULL;
    size_t len = 0;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    int rc = strcmp(base, "vocab.json") ? file_read_regular(path, TOKENIZER_MAX_BYTES, &data, &len, err) : 0;
    if (rc) return rc;
    struct tokenizer *t = xsa_calloc(1, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    t->bos_id = t->eos_id = -1;
    if (!data) {  // a GPT-2-style vocab.json, merges.txt beside it
        rc = tokenizer_vocab_files_load(t, path, err);
        if (!rc) tokenizer_config_ids(t);
        if (rc) free(t);
        else *out = t;
        return rc;
    }
    size_t i = 0;
    while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) i++;
    const char *dot = strrchr(path, '.');
    if (i < len && data[i] == '{') {
        rc = tokenizer_hf_load(t, path, data, len, err);
        if (!rc) tokenizer_config_ids(t);
    }
    else if (dot && !strcmp(dot, ".model"))
        rc = tokenizer_sp_load(t, path, data, len, err);
    else if (len >= 4 && !memcmp(data, "\xc8\xd7\x34\x01", 4))  // int32 20240328: llm.c's tokenizer
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: llm.c's tokenizer file, which only decodes (it holds no merges); pass GPT-2's tokenizer.json (openai-community/gpt2), the tokenizer llm.c trains on",
                      path);
    else if (dot && !strcmp(dot, ".bin"))
        rc = tokenizer_llama2c_load(t, path, data, len, err);
    else if (len >= 3 && (unsigned char)data[0] == 0x0a && data[1] != 0)
        // A SentencePiece ModelProto under another name (Mistral's tokenizer.model.v3): it opens with
        // its first piece, field 1 of a non-empty length. (A llama2.c .bin opens with a 4-byte
        // max_token_length, whose second byte is 0.)
        rc = tokenizer_sp_load(t, path, data, len, err);
    else
        rc = xsa_fail(err, XSA_EBADINPUT,
                      "%s: unknown tokenizer format (expected tokenizer.json, a SentencePiece .model or a llama2.c .bin)",
                      path);
    free(data);
    if (rc) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int tokenizer_encode(const struct tokenizer *t, const char *text, size_t len, int add_special,
                     struct ivec *out, xsa_error *err) {
    return t->ops->encode(t->impl, text, len, add_special, out, err);
}

int tokenizer_decode(const struct tokenizer *t, const int32_t *ids, size_t n, struct sbuf *out,
                     xsa_error *err) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= t->vocab_size)
            return xsa_fail(err, XSA_EBADINPUT, "%s: token id %d out of range (vocabulary size %d)", t->path,
                            (int)ids[i], t->vocab_size);
    return t->ops->decode(t->impl, ids, n, out, err);
}

int tokenizer_files_sha256(const char *path, char out[65], xsa_error *err) {
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (strcmp(base, "vocab.json")) return sha256_file_hex(path, out, err);
    char merges[4200], *v = NULL, *m = NULL;
    size_t vn = 0, mn = 0;
    snprintf(merges, sizeof merges, "%.*s/merges.txt", base > path ? (int)(base - path - 1) : 1, base > path ? path : ".");
    int rc = file_read_regular(path, TOKENIZER_MAX_BYTES, &v, &vn, err);
    if (!rc) rc = file_read_regular(merges, TOKENIZER_MAX_BYTES, &m, &mn, err);
    if (!rc) {
        v = xsa_realloc(v, vn + mn + 1);
        memcpy(v + vn, m, mn);
        rc = sha256_hex(v, vn + mn, out, err);
    }
    free(v);
    free(m);
    return rc;
}

enum tokenizer_kind tokenizer_kind(const struct tokenizer *t) { return t->kind; }
int tokenizer_vocab_size(const struct tokenizer *t) { return t->vocab_size; }
int tokenizer_bos_id(const struct tokenizer *t) { return t->bos_id; }
int tokenizer_eos_id(const struct tokenizer *t) { return t->eos_id; }
int tokenizer_adds_bos(const struct tokenizer *t) { return t->adds_bos; }
const char *tokenizer_path(const struct tokenizer *t) { return t->path; }
int tokenizer_has_config(const struct tokenizer *t) { return t->has_config; }
const char *tokenizer_class_note(const struct tokenizer *t) { return t->class_note[0] ? t->class_note : NULL; }
int tokenizer_config_bos_id(const struct tokenizer *t) { return t->cfg_bos_id; }
int tokenizer_config_eos_id(const struct tokenizer *t) { return t->cfg_eos_id; }
const char *tokenizer_config_bos_name(const struct tokenizer *t) { return t->cfg_bos_name; }
int tokenizer_caseops(const struct tokenizer *t) { return t->caseops; }

void tokenizer_free(struct tokenizer *t) {
    if (!t) return;
    if (t->ops && t->ops->destroy) t->ops->destroy(t->impl);
    free(t);
}
