// cmd_logprobs.c: `xsa-eval logprobs`: per-token log-probabilities of one token sequence,
// as TSV `pos token logprob greedy` for pos >= 1 (log P(token[pos] | token[<pos])).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "common/vec.h"
#include "kernels/backend.h"
#include "model/hub_cache.h"
#include "eval/ppl.h"
#include "model/model.h"
#include "model/tokenizer.h"

#define LOGPROBS_MAX_TOKENS (1 << 20)

struct logprobs_args {
    const char *model, *tokens, *text, *xsa, *device, *tokenizer, *dtype, *config;
    int threads;
    struct hub_fetch_options hub;
};

enum { F_TOKENS = 256, F_TEXT, F_XSA, F_DEVICE, F_DTYPE, F_THREADS, F_TOKENIZER, F_CONFIG, F_ARCH, F_OFFLINE, F_QUIET,
       F_HF_ENDPOINT, F_CA_BUNDLE };

static const struct cli_flag flags[] = {
    {"model", 'm', "PATH", "checkpoint directory, torch.save file, llm.c or llama2.c .bin, parameter-golf artifact, or a Hub repo id ORG/NAME[@REV] (required)"},
    {"tokens", F_TOKENS, "1,2,3", "the token ids to score (at least 2)"},
    {"text", F_TEXT, "STR", "text encoded with the checkpoint's tokenizer (or --tokenizer)"},
    {"xsa", F_XSA, "SPEC", "all | none | last:N | i,j,..  (overrides the checkpoint's xsa_layers)"},
    {"device", F_DEVICE, "D", "auto | cpu | cuda[:N] (default auto)"},
    {"dtype", F_DTYPE, "T", "GPU weights: bfloat16 (default) | float32; the CPU computes in fp32"},
    {"threads", F_THREADS, "N", "CPU threads (default: all cores)"},
    {"tokenizer", F_TOKENIZER, "FILE", "tokenizer for --text (default: the checkpoint's)"},
    {"config", F_CONFIG, "FILE", "config.json of a bare state-dict .pt or of a folder of weights without one (default: the one beside it)"},
    {"arch", F_ARCH, "FILE", "architecture of a parameter-golf artifact (default: xsa_eval.json beside it)"},
    {"offline", F_OFFLINE, NULL, "a repo id: only the Hugging Face cache, never the network (also HF_HUB_OFFLINE=1)"},
    {"quiet", F_QUIET, NULL, "no download progress or notes"},
    {"hf-endpoint", F_HF_ENDPOINT, "URL", "a repo id: the Hub or a mirror (default $HF_ENDPOINT or https://huggingface.co)"},
    {"ca-bundle", F_CA_BUNDLE, "FILE", "a repo id: CA certificates for TLS (default: the system's)"},
};

static const struct cli_command cmd = {
    "logprobs", "--model PATH (--tokens 1,2,3 | --text STR) [flags]",
    "Prints TSV `pos token logprob greedy`: log P(token[pos] | tokens[<pos]) for pos >= 1, and\n"
    "whether token[pos] is the argmax. --text is encoded with special tokens such as BOS added as\n"
    "the reference library does.\n",
    flags, (int)(sizeof flags / sizeof flags[0]), 0, 0};

static int fail_usage(const char *msg, const char *arg) {
    return cli_fail(&cmd, "%s%s%s", msg, arg ? ": " : "", arg ? arg : "");
}

static int on_flag(void *ctx, int key, const char *v) {
    struct logprobs_args *a = ctx;
    switch (key) {
    case 'm': a->model = v; break;
    case F_TOKENS: a->tokens = v; break;
    case F_TEXT: a->text = v; break;
    case F_XSA: a->xsa = v; break;
    case F_DEVICE: a->device = v; break;
    case F_DTYPE: a->dtype = v; break;
    case F_TOKENIZER: a->tokenizer = v; break;
    case F_CONFIG: a->config = v; break;
    case F_ARCH: model_set_arch_file(v); break;
    case F_OFFLINE: a->hub.offline = 1; break;
    case F_QUIET: a->hub.quiet = 1; break;
    case F_HF_ENDPOINT: a->hub.endpoint = v; break;
    case F_CA_BUNDLE: a->hub.ca_bundle = v; break;
    case F_THREADS: return cli_int(&cmd, "--threads", v, 0, 4096, &a->threads);
    }
    return 0;
}

// Returns 0, -1 for --help, or XSA_EBADINPUT after printing the error.
static int logprobs_parse(int argc, char **argv, struct logprobs_args *a) {
    memset(a, 0, sizeof *a);
    a->device = "auto";
    int n_pos, rc = cli_parse(&cmd, argc, argv, on_flag, a, NULL, 0, &n_pos);
    if (rc) return rc;
    if (!a->model) return fail_usage("--model PATH is required", NULL);
    static struct hub_model hub;  // a->model may point into it
    if ((rc = cli_model_path(&cmd, &a->model, &a->hub, &hub, NULL))) return rc;
    if (!a->tokens == !a->text) return fail_usage("give exactly one of --tokens 1,2,3 or --text STR", NULL);
    if (a->tokenizer && !a->text) return fail_usage("--tokenizer only applies with --text", NULL);
    return 0;
}

// Parses "1,2,3" into ids (each a non-negative decimal integer below 2^31).
static int parse_token_list(const char *s, struct ivec *out) {
    const char *p = s;
    if (!*p) return fail_usage("--tokens is empty", NULL);
    for (;;) {
        if (*p < '0' || *p > '9') return fail_usage("--tokens must be comma-separated non-negative integers, got", s);
        long long v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
            if (v > INT32_MAX) return fail_usage("--tokens has an id too large", s);
        }
        if (out->n >= LOGPROBS_MAX_TOKENS) return fail_usage("--tokens has too many ids", NULL);
        ivec_push(out, (int32_t)v);
        if (*p == '\0') return 0;
        if (*p++ != ',') return fail_usage("--tokens must be comma-separated non-negative integers, got", s);
    }
}

static int encode_text(const struct logprobs_args *a, struct ivec *ids, xsa_error *err) {
    char tok_path[4096];
    struct tokenizer *tk = NULL;
    int rc = 0;
    if (a->tokenizer) snprintf(tok_path, sizeof tok_path, "%s", a->tokenizer);
    else rc = tokenizer_find(a->model, tok_path, sizeof tok_path, err);
    const char *note = rc || a->tokenizer ? NULL : tokenizer_parity_note(a->model, tok_path);
    if (note) fprintf(stderr, "xsa-eval logprobs: note: %s: %s\n", a->model, note);
    if (!rc) rc = tokenizer_load(&tk, tok_path, err);
    if (!rc && tokenizer_class_note(tk) && !a->hub.quiet)
        fprintf(stderr, "xsa-eval logprobs: note: %s: %s\n", tok_path, tokenizer_class_note(tk));
    if (!rc) rc = tokenizer_encode(tk, a->text, strlen(a->text), 1, ids, err);
    if (tk) tokenizer_free(tk);
    return rc;
}

// Scores ids as one window of `ppl` (eval/ppl.h: the same path, every position a target) and
// prints the TSV.
static int logprobs_score(const struct logprobs_args *a, const struct model *m, const struct ivec *ids,
                          xsa_error *err) {
    int n = (int)ids->n;
    struct backend_options o = {.n_threads = a->threads, .max_batch_tokens = n, .quiet = a->hub.quiet};
    struct backend be;
    int rc = backend_options_from_env(&o, err);
    if (rc) return rc;
    rc = backend_open_dtype(&be, a->device, a->dtype, m, &o, err);
    if (rc) return rc;
    struct ppl_docs d = {0};
    struct ppl_scores s = {0};
    struct backend *bes[1] = {&be};
    rc = ppl_docs_add(&d, ids->v, ids->n, err);
    if (!rc) rc = ppl_score(bes, 1, &d, n, n, &s, NULL, NULL, err);
    if (!rc) {
        printf("pos\ttoken\tlogprob\tgreedy\n");
        for (int p = 1; p < n; p++) printf("%d\t%d\t%.7f\t%d\n", p, ids->v[p], -s.nll[p - 1], s.greedy[p - 1]);
        if (fflush(stdout) != 0) rc = xsa_fail(err, XSA_ERUNTIME, "cannot write to stdout");
    }
    ppl_scores_free(&s);
    ppl_docs_free(&d);
    backend_close(&be);
    return rc;
}

int cmd_logprobs(int argc, char **argv) {
    struct logprobs_args a;
    int rc = logprobs_parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    struct ivec ids = {0};
    if (a.tokens && (rc = parse_token_list(a.tokens, &ids))) {
        ivec_free(&ids);
        return rc;
    }
    if (a.tokens && ids.n < 2) {
        ivec_free(&ids);
        return fail_usage("--tokens needs at least 2 ids (position 0 has no prediction)", NULL);
    }
    xsa_error err = {0};
    struct model m;
    rc = model_load_config(&m, a.model, a.config, &err);
    if (!rc && !a.hub.quiet) model_print_notes(&m);
    if (rc) {
        fprintf(stderr, "xsa-eval logprobs: %s\n", err.msg);
        ivec_free(&ids);
        return rc;
    }
    if (a.xsa) rc = model_apply_xsa_spec(&m.cfg, a.xsa, &err);
    if (!rc && a.text) {
        rc = encode_text(&a, &ids, &err);
        if (!rc && ids.n < 2)
            rc = xsa_fail(&err, XSA_EBADINPUT, "--text encodes to %zu token(s); at least 2 are needed", ids.n);
    }
    for (size_t i = 0; !rc && i < ids.n; i++)
        if (ids.v[i] >= m.cfg.vocab_size)
            rc = xsa_fail(&err, XSA_EBADINPUT, "%s: token id %d (position %zu) is outside the vocabulary [0, %d)",
                          a.model, ids.v[i], i, m.cfg.vocab_size);
    if (!rc && m.cfg.max_seq_len > 0 && ids.n > (size_t)m.cfg.max_seq_len)
        rc = xsa_fail(&err, XSA_EBADINPUT, "%s: %zu tokens exceed the model's context length %d", a.model, ids.n,
                      m.cfg.max_seq_len);
    if (!rc) rc = logprobs_score(&a, &m, &ids, &err);
    if (rc) fprintf(stderr, "xsa-eval logprobs: %s\n", err.msg);
    model_free(&m);
    ivec_free(&ids);
    return rc;
}
