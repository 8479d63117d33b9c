// encode.c: lm-eval's request tokenization (see encode.h and docs/lm-eval-semantics.md §1.5-1.6).
#include "eval/encode.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#include "tasks/pystr.h"

int encode_options_init(struct encode_options *o, const struct tokenizer *tok, int add_bos, xsa_error *err) {
    memset(o, 0, sizeof *o);
    o->add_special = add_bos != 0;
    o->force_bos = add_bos == 1;
    o->bos_replaces_post = 0;
    o->bos_id = tokenizer_bos_id(tok);
    o->prefix_token_id = o->bos_id >= 0 ? o->bos_id : tokenizer_eos_id(tok);
    if (tokenizer_has_config(tok)) {
        int cb = tokenizer_config_bos_id(tok), ce = tokenizer_config_eos_id(tok);
        if (cb >= 0 || ce >= 0) o->prefix_token_id = cb >= 0 ? cb : ce;  // HFLM.prefix_token_id
        if (add_bos == 1) {
            // add_bos_token=True: transformers replaces the post-processor by "BOS $A" with the
            // config's BOS, or by "$A" (dropping even a BOS tokenizer.json adds) when it has none.
            const char *name = tokenizer_config_bos_name(tok);
            if (cb < 0 && name[0] == '(')
                return xsa_fail(err, XSA_EBADINPUT, "--add-bos: the tokenizer_config.json beside %s names no bos_token, "
                                "and %s is not known to xsa-eval; name bos_token in it", tokenizer_path(tok), name);
            if (cb < 0 && name[0])
                return xsa_fail(err, XSA_EBADINPUT, "--add-bos: the bos_token \"%s\" of the tokenizer_config.json beside "
                                "%s is no token of its vocabulary (transformers would add it as a new id the model "
                                "has no row for); name the model's BOS there", name, tokenizer_path(tok));
            if (cb < 0)
                return xsa_fail(err, XSA_EBADINPUT, "--add-bos: the tokenizer_config.json beside %s names no bos_token, "
                                "so lm-eval (add_bos_token=True) adds none (transformers 5 rebuilds the post-processor "
                                "without one); leave --add-bos out, or name bos_token there", tokenizer_path(tok));
            o->bos_id = cb;
            o->bos_replaces_post = 1;
        }
        return 0;
    }
    // lm-eval's add_bos_token=True prepends the tokenizer's bos_token; with none known here,
    // --add-bos would add nothing while the results say it did.
    if (add_bos == 1 && o->bos_id < 0)
        return xsa_fail(err, XSA_EBADINPUT, "--add-bos: %s has no BOS token (its post-processor adds none, it has none "
                        "of <s>, <|begin_of_text|>, <bos>, <|startoftext|>, and no tokenizer_config.json names one); "
                        "leave --add-bos out", tokenizer_path(tok));
    return 0;
}

const char *encode_prefix_text(const struct tokenizer *tok, int prefix_token_id, struct sbuf *buf) {
    if (tokenizer_kind(tok) != TOKENIZER_HF_JSON || prefix_token_id < 0) return NULL;
    xsa_error e = {0};
    int32_t id = prefix_token_id;
    buf->n = 0;
    if (tokenizer_decode(tok, &id, 1, buf, &e)) return NULL;
    sbuf_append(buf, "", 0);
    return buf->s;
}

static int encode_text(const struct tokenizer *tok, const struct encode_options *opt, const char *s, size_t n,
                       int add_special, struct ivec *out, xsa_error *err) {
    out->n = 0;
    // has_bos_prefix applies with add_bos_token=True (--add-bos) too (lm-eval HFLM.tok_encode).
    if (add_special && opt->prefix_text) {
        size_t pl = strlen(opt->prefix_text);
        if (n >= pl && !memcmp(s, opt->prefix_text, pl)) add_special = 0;
    }
    if (add_special && opt->force_bos && opt->bos_replaces_post) {
        ivec_push(out, opt->bos_id);
        add_special = 0;
    }
    if (add_special && opt->force_bos && opt->bos_id >= 0 && !tokenizer_adds_bos(tok)) ivec_push(out, opt->bos_id);
    return tokenizer_encode(tok, s, n, add_special, out, err);
}

int encode_pair(const struct tokenizer *tok, const struct encode_options *opt, const char *context,
                const char *continuation, struct ivec *ctx_enc, struct ivec *cont_enc, xsa_error *err) {
    size_t clen = strlen(context), tlen = strlen(continuation);
    ctx_enc->n = cont_enc->n = 0;
    if (clen == 0) {
        // TemplateLM.loglikelihood: an empty context becomes [prefix_token_id]; the continuation
        // is encoded without special tokens. When the continuation already starts with the
        // prefix token, that token is the context instead (v0.4.12; docs/lm-eval-semantics.md §1.5).
        int rc = encode_text(tok, opt, continuation, tlen, 0, cont_enc, err);
        if (rc) return rc;
        if (opt->prefix_token_id < 0)
            return xsa_fail(err, XSA_EBADINPUT, "%s: empty context but the tokenizer has neither BOS nor EOS",
                            tokenizer_path(tok));
        ivec_push(ctx_enc, opt->prefix_token_id);
        if (cont_enc->n > 0 && cont_enc->v[0] == opt->prefix_token_id) {
            memmove(cont_enc->v, cont_enc->v + 1, (cont_enc->n - 1) * sizeof *cont_enc->v);
            cont_enc->n--;
        }
        return 0;
    }
    // Trailing whitespace (Python str.rstrip's set) moves onto the continuation.
    size_t keep = pystr_rstrip_len(context, clen);
    char *whole = xsa_malloc(clen + tlen + 1);
    memcpy(whole, context, clen);
    memcpy(whole + clen, continuation, tlen + 1);
    struct ivec w = {0};
    int rc = encode_text(tok, opt, whole, clen + tlen, opt->add_special, &w, err);
    if (!rc) rc = encode_text(tok, opt, context, keep, opt->add_special, ctx_enc, err);
    free(whole);
    if (!rc) {
        // continuation = whole[len(context_enc):]
        size_t start = ctx_enc->n < w.n ? ctx_enc->n : w.n;
        ivec_append(cont_enc, w.v + start, w.n - start);
    }
    ivec_free(&w);
    return rc;
}

int encode_request(const struct tokenizer *tok, const struct encode_options *opt, const char *context,
                   const char *continuation, struct encoded_request *out, xsa_error *err) {
    memset(out, 0, sizeof *out);
    struct ivec ctx = {0};
    int rc = encode_pair(tok, opt, context, continuation, &ctx, &out->cont, err);
    // lm-eval asserts both parts are non-empty (_loglikelihood_tokens); a context of only
    // whitespace encodes to nothing when the tokenizer adds no BOS.
    if (!rc && ctx.n == 0)
        rc = xsa_fail(err, XSA_EBADINPUT, "context \"%.60s\" encodes to no tokens (only whitespace, and the tokenizer "
                      "adds no BOS); lm-eval rejects it too", context);
    if (!rc && out->cont.n == 0)
        rc = xsa_fail(err, XSA_EBADINPUT, "continuation \"%.60s\" encodes to no tokens after context \"%.60s\"",
                      continuation, context);
    if (!rc && (int)out->cont.n > opt->max_length)
        rc = xsa_fail(err, XSA_EBADINPUT, "continuation of %zu tokens exceeds the model's context length %d "
                      "(lm-eval refuses it too); leave the task out or use --max-length if the model allows more",
                      out->cont.n, opt->max_length);
    if (!rc) {
        // inp = (ctx + cont)[-(max_length + 1):][:-1]
        size_t total = ctx.n + out->cont.n;
        size_t keep = total > (size_t)opt->max_length + 1 ? (size_t)opt->max_length + 1 : total;
        size_t drop = total - keep;
        out->truncated = drop > 0;
        ivec_reserve(&out->input, keep);
        for (size_t i = drop; !rc && i + 1 < total; i++)
            out->input.v[out->input.n++] = i < ctx.n ? ctx.v[i] : out->cont.v[i - ctx.n];
    }
    ivec_free(&ctx);
    if (rc) encoded_request_free(out);
    return rc;
}

void encoded_request_free(struct encoded_request *r) {
    ivec_free(&r->input);
    ivec_free(&r->cont);
}

int encode_check_vocab(const struct encoded_request *e, int vocab_size, const char *tokenizer_path, xsa_error *err) {
    const struct ivec *parts[2] = {&e->input, &e->cont};
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < parts[p]->n; i++)
            if (parts[p]->v[i] < 0 || parts[p]->v[i] >= vocab_size)
                return xsa_fail(err, XSA_EBADINPUT, "%s: token id %d is outside the model's vocabulary of %d: the "
                                "tokenizer does not belong to this model", tokenizer_path, parts[p]->v[i], vocab_size);
    return 0;
}
