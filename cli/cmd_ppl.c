// cmd_ppl.c: `xsa-eval ppl`: per-token loss of long documents, overall and by position, for
// one model or two (delta with a cluster-robust t interval; --kl: divergence over the full vocabulary);
// and `xsa-eval probe`: the attention statistics of the same windows (reports/probe_report.h).
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "common/fileio.h"
#include "common/json_read.h"
#include "common/xalloc.h"
#include "data/data.h"
#include "eval/compare.h"
#include "eval/outdir.h"
#include "eval/ppl.h"
#include "eval/ppl_inputs.h"
#include "eval/ttt.h"
#include "model/model.h"
#include "model/pgolf_arch.h"
#include "model/tokenizer.h"
#include "reports/ppl_report.h"
#include "reports/probe_report.h"
#include "reports/report.h"

#define PPL_MAX_SHARDS 256

struct ppl_args {
    const char *model[2], *text, *jsonl, *field, *shard[PPL_MAX_SHARDS], *xsa, *device, *dtype, *tokenizer;
    const char *bytes_file[PPL_MAX_SHARDS];  // --bytes-file: a CaseOps record's byte sidecar shards
    int n_bytes_files;
    int split_docs, ranks;       // --split-docs; --ranks (0: unset)
    long val_batch_tokens;       // --val-batch-tokens (0: unset)
    long val_tokens;             // --val-tokens (0: unset)
    const char *tasks;           // --tasks: the benchmark documents as texts
    int limit;                   // --limit: documents per task (0: all)
    struct data_options data;    // where --tasks' rows come from (run's data flags)
    const char *out, *json, *buckets, *arch;
    const char *config;          // --config: config.json of every model (a bare state dict, a folder of weights)
    const char *bytes_rule_out;  // how bits per byte counted bytes (set while loading)
    int n_models, n_shards, context, stride, threads, batch_tokens, kl, top, top_set, field_set;
    int probe, heads;           // `probe`: attention statistics instead of the loss; per head
    int quiet;                   // --quiet: no notes or progress on stderr (warnings stay)
    int ttt;                     // --ttt: score-first test-time training (eval/ttt.h) ...
    const char *ttt_set;         // ... with --ttt-set's settings over the record's defaults
    struct cli_stats st;
};

enum {
    F_TEXT = 256, F_JSONL, F_FIELD, F_SHARD, F_CONTEXT, F_STRIDE, F_BUCKETS, F_KL, F_TOP, F_XSA, F_DEVICE,
    F_DTYPE, F_THREADS, F_TOKENIZER, F_BATCH, F_JSON, F_HEADS, F_TASKS, F_LIMIT, F_DATA_DIR, F_ARCH, F_SPLIT,
    F_RANKS, F_VAL_BATCH, F_BYTES_FILE, F_VAL_TOKENS, F_TTT, F_TTT_SET, F_QUIET, F_CONFIG,
};

// The inputs, windows and outputs ppl and probe share.
#define PPL_INPUT_FLAGS                                                                                          \
    {"model", 'm', "PATH", "checkpoint (required); give it twice for A and B (SA and XSA)"},                    \
    {"arch", F_ARCH | CLI_ONCE, "FILE", "architecture of parameter-golf / modded-nanogpt files, for every model "         \
                                        "(default: xsa_eval.json beside each)"},                                         \
    {"config", F_CONFIG | CLI_ONCE, "FILE", "config.json of a bare state-dict .pt or of a folder of weights without one, "   \
                                            "for every model (default: the one beside each)"},                             \
    {"text", F_TEXT | CLI_ONCE, "FILE", "one document: the whole file (UTF-8)"},                                               \
    {"jsonl", F_JSONL | CLI_ONCE, "FILE", "one document per line: a JSON object's --field"},                                   \
    {"field", F_FIELD, "NAME", "the --jsonl field holding the text (default text)"},                                \
    {"tokens-file", F_SHARD, "SHARD", "llm.c / modded-nanogpt / parameter-golf token shard (repeat, or list more after the flags)"}, \
    {"tasks", F_TASKS, "LIST", "benchmark documents (run's task names and groups): each its context + gold answer"}, \
    {"limit", F_LIMIT, "N", "with --tasks: the first N documents of each task"},                                \
    {"data-dir", F_DATA_DIR, "DIR", "with --tasks: local data, as for run (docs/data-dir.md)"},                  \
    {"context", F_CONTEXT, "N", "tokens of context at most (default: the model's context, else 1024)"},             \
    {"stride", F_STRIDE, "S", "targets a window advances by (default --context: disjoint windows)"},                \
    {"split-docs", F_SPLIT, NULL, "shards: the family's own validation, attention never crossing a BOS (parameter-golf's VarLenAttn, 2026-04-10 on; modded-nanogpt's val loss)"}, \
    {"ranks", F_RANKS, "N", "with --split-docs, disjoint windows: eval_val's WORLD_SIZE, 1 2 4 or 8 (default 8)"}, \
    {"val-batch-tokens", F_VAL_BATCH, "N", "with --split-docs, disjoint windows: its VAL_BATCH_TOKENS (default 524288; modded-nanogpt: val_batch_size, 2097152)"}, \
    {"val-tokens", F_VAL_TOKENS, "N", "with --split-docs on modded-nanogpt: its val_tokens (default 10485760)"}, \
    {"bytes-file", F_BYTES_FILE, "SHARD", "shards: bytes per token from a CaseOps byte sidecar (fineweb_val_bytes_*.bin; repeat)"}, \
    {"xsa", F_XSA, "SPEC", "all | none | last:N | i,j,..  (overrides the checkpoints' xsa_layers)"},                \
    {"threads", F_THREADS, "N", "CPU threads (default: all cores)"},                                               \
    {"batch-tokens", F_BATCH, "N", "tokens per backend call (no result depends on it)"},                           \
    {"output", 'o', "FILE", "Markdown report (its chart beside it); default: Markdown on stdout"},                  \
    {"json", F_JSON, "FILE", "every number as JSON (- for stdout, then alone there)"},                          \
    {"quiet", F_QUIET, NULL, "no notes or progress on stderr (warnings about the data stay)"}

static const struct cli_flag flags[] = {
    PPL_INPUT_FLAGS,
    {"buckets", F_BUCKETS, "LIST", "position bucket edges, e.g. 64,128,256 (default powers of two from 16)"},
    {"kl", F_KL, NULL, "with two models: KL(A || B) over the full vocabulary and top-1 agreement"},
    {"top", F_TOP, "N", "with --kl: the N targets where the models disagree most (default 10)"},
    {"ttt", F_TTT, NULL, "shards, parameter-golf: score-first test-time training as the records' own (eval_val_sliding_ttt of 2026-03-23..04-09, the LoRA eval_val_ttt_lora of 2026-04-10 and its phases of 2026-04-13/14; CPU)"},
    {"ttt-set", F_TTT_SET, "LIST", "with --ttt: its settings, e.g. \"TTT_LR=0.002 TTT_EPOCHS=3 TTT_FREEZE_BLOCKS=0\" or \"TTT_LORA_RANK=96 TTT_CHUNK_SIZE=32\" (default the record's code's)"},
    {"device", F_DEVICE, "D", "auto | cpu | cuda[:N] (default auto)"},
    {"dtype", F_DTYPE, "T", "GPU weights: bfloat16 (default) | float32; the CPU computes in fp32"},
    {"tokenizer", F_TOKENIZER, "FILE", "tokenizer of both models (default: each its own, which must be the same); "
                                       "for shards' bits per byte a SentencePiece .model or a tokenizer.json"},
};

static const struct cli_command cmd = {
    "ppl", "--model A [--model B] (--text FILE | --jsonl FILE | --tokens-file SHARD... | --tasks LIST) [flags]",
    "Per-token negative log-likelihood: nats and bits per token, bits per byte, by position of\n"
    "context; with two models the delta B - A per position bucket with a cluster-robust t interval\n"
    "over documents (a shard's, from its BOS; else its windows: docs/statistics.md). Text\n"
    "documents start with the tokenizer's BOS (else EOS) so that every text token is scored; bits\n"
    "per byte count the text's UTF-8 bytes.\n"
    "Shards are one stream scored as parameter-golf's eval_val (--stride = --context, targets past\n"
    "the last whole window dropped; smaller strides: its eval_val_sliding) and count bytes as it does\n"
    "with a SentencePiece tokenizer, or from a CaseOps byte sidecar (--bytes-file); with a\n"
    "tokenizer.json (GPT-2's byte-level BPE, Llama 2's, Mistral's), each target's bytes as its decoder\n"
    "gives them, so that a document's add up to decode(skip_special_tokens=True)'s. --split-docs cuts\n"
    "attention at each BOS as the records from 2026-04-10 do, with their eval_val's rank layout, or,\n"
    "for a modded-nanogpt checkpoint, scores its val loss (flat chunks of val_batch_size / 8 tokens).\n",
    flags, (int)(sizeof flags / sizeof flags[0]), 1, CLI_STATS_ALPHA};

// probe's flags: ppl's inputs and windows, no statistics or --kl.
static const struct cli_flag probe_flags[] = {
    PPL_INPUT_FLAGS,
    {"heads", F_HEADS, NULL, "also one row per query head"},
    {"device", F_DEVICE, "D", "cpu (default; auto is the CPU: only the CPU backend computes the statistics)"},
    {"dtype", F_DTYPE, "T", "GPU weights under XSA_CUDA_PROBE=1: bfloat16 (default) | float32; the CPU computes in fp32"},
    {"tokenizer", F_TOKENIZER, "FILE", "tokenizer for text (default A's)"},
};

static const struct cli_command probe_cmd = {
    "probe", "--model A [--model B] (--text FILE | --jsonl FILE | --tokens-file SHARD... | --tasks LIST) [flags]",
    "Per layer, over the positions ppl would score: cos(y_i, v_i) between each query head's attention\n"
    "output before XSA's projection and the token's own value vector, cos(z_i, v_i) after it (0 up to\n"
    "rounding in XSA layers), and a_ii, the attention token i puts on itself; mean and standard\n"
    "deviation, and a chart of cos(y, v) by layer, A and B side by side.\n",
    probe_flags, (int)(sizeof probe_flags / sizeof probe_flags[0]), 1, 0};

#define CMD(a) ((a)->probe ? &probe_cmd : &cmd)  // whose name errors carry

static int on_flag(void *ctx, int key, const char *v) {
    struct ppl_args *a = ctx;
    switch (key) {
    case 'm':
        if (a->n_models == 2) return cli_fail(CMD(a), "--model given more than twice");
        a->model[a->n_models++] = v;
        return 0;
    case F_ARCH: a->arch = v; model_set_arch_file(v); return 0;
    case F_CONFIG: a->config = v; return 0;
    case F_TEXT: a->text = v; return 0;
    case F_JSONL: a->jsonl = v; return 0;
    case F_FIELD: a->field = v, a->field_set = 1; return 0;
    case F_SHARD:
        if (a->n_shards == PPL_MAX_SHARDS) return cli_fail(CMD(a), "more than %d shards", PPL_MAX_SHARDS);
        a->shard[a->n_shards++] = v;
        return 0;
    case F_SPLIT: a->split_docs = 1; return 0;
    case F_RANKS: {
        int rc = cli_int(CMD(a), "--ranks", v, 1, 8, &a->ranks);
        if (!rc && 8 % a->ranks)  // as the records' main() requires (grad_accum_steps = 8 // WORLD_SIZE)
            return cli_fail(CMD(a), "--ranks %d: eval_val's WORLD_SIZE divides 8 (1, 2, 4 or 8)", a->ranks);
        return rc;
    }
    case F_VAL_BATCH: {
        int k;
        int rc = cli_int(CMD(a), "--val-batch-tokens", v, 8, 1 << 30, &k);
        a->val_batch_tokens = k;
        return rc;
    }
    case F_VAL_TOKENS: {
        int k;
        int rc = cli_int(CMD(a), "--val-tokens", v, 16, 1 << 30, &k);
        a->val_tokens = k;
        return rc;
    }
    case F_BYTES_FILE:
        if (a->n_bytes_files == PPL_MAX_SHARDS) return cli_fail(CMD(a), "more than %d byte shards", PPL_MAX_SHARDS);
        a->bytes_file[a->n_bytes_files++] = v;
        return 0;
    case F_CONTEXT: return cli_int(CMD(a), "--context", v, 1, 1 << 20, &a->context);
    case F_STRIDE: return cli_int(CMD(a), "--stride", v, 1, 1 << 20, &a->stride);
    case F_BUCKETS: a->buckets = v; return 0;
    case F_KL: a->kl = 1; return 0;
    case F_TOP: a->top_set = 1; return cli_int(CMD(a), "--top", v, 0, 1000, &a->top);
    case F_XSA: a->xsa = v; return 0;
    case F_DEVICE: a->device = v; return 0;
    case F_DTYPE: a->dtype = v; return 0;
    case F_THREADS: return cli_int(CMD(a), "--threads", v, 0, 4096, &a->threads);
    case F_TOKENIZER: a->tokenizer = v; return 0;
    case F_BATCH: return cli_int(CMD(a), "--batch-tokens", v, 1, BACKEND_MAX_TOKENS, &a->batch_tokens);
    case 'o': a->out = v; return 0;
    case F_JSON: a->json = v; return 0;
    case F_HEADS: a->heads = 1; return 0;
    case F_QUIET: a->quiet = a->data.quiet = 1; return 0;
    case F_TTT: a->ttt = 1; return 0;
    case F_TTT_SET: a->ttt_set = v; return 0;
    case F_TASKS: a->tasks = v; return 0;
    case F_DATA_DIR: a->data.data_dir = v; return 0;
    case F_LIMIT: return cli_int(CMD(a), "--limit", v, 1, 1 << 30, &a->limit);
    }
    if (!cli_data_flag(&a->data, key, v)) return 0;
    return cli_stats_flag(CMD(a), &a->st, key, v);
}

// "64,128,256": ascending whole numbers >= 2.
static int parse_buckets(const char *s, int *edges, int *n) {
    *n = 0;
    const char *p = s;
    size_t len = strlen(s);
    if (!len || s[len - 1] == ',')
        return cli_fail(&cmd, "--buckets '%s': expected ascending whole numbers >= 2, e.g. 64,128,256", s);
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 2 || v > (1 << 20) || (*n && v <= edges[*n - 1]) || *n == PPL_MAX_BUCKETS - 1 ||
            (*end && *end != ','))
            return cli_fail(&cmd, "--buckets %s: expected ascending whole numbers >= 2, e.g. 64,128,256 (at most %d)",
                            s, PPL_MAX_BUCKETS - 1);
        edges[(*n)++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int ppl_parse(int argc, char **argv, int probe, struct ppl_args *a, int *edges, int *n_edges) {
    const struct cli_command *c = probe ? &probe_cmd : &cmd;
    memset(a, 0, sizeof *a);
    a->probe = probe;
    a->device = probe ? "cpu" : "auto";
    a->field = "text";
    a->top = 10;
    a->st = (struct cli_stats){"auto", 0.05, 0, 0};  // (--alpha only: CLI_STATS_ALPHA)
    const char *pos[PPL_MAX_SHARDS];
    int n_pos, rc = cli_parse(c, argc, argv, on_flag, a, pos, PPL_MAX_SHARDS, &n_pos);
    if (!rc) rc = cli_stats_check(c, &a->st);
    if (rc) return rc;
    for (int i = 0; i < n_pos; i++) {
        if (!a->n_shards || a->n_shards == PPL_MAX_SHARDS)
            return cli_fail(c, "unexpected argument '%s' (more shards follow --tokens-file)", pos[i]);
        a->shard[a->n_shards++] = pos[i];
    }
    if (!a->n_models) return cli_fail(c, "--model PATH is required");
    if (!!a->text + !!a->jsonl + !!a->n_shards + !!a->tasks != 1)
        return cli_fail(c, "give one of --text, --jsonl, --tokens-file or --tasks");
    if (a->limit && !a->tasks) return cli_fail(c, "--limit applies to --tasks");
    if (a->field_set && !a->jsonl) return cli_fail(c, "--field applies to --jsonl");
    if ((a->split_docs || a->n_bytes_files) && !a->n_shards)
        return cli_fail(c, "%s applies to --tokens-file", a->split_docs ? "--split-docs" : "--bytes-file");
    if ((a->ranks || a->val_batch_tokens || a->val_tokens) && !a->split_docs)
        return cli_fail(c, "--ranks, --val-batch-tokens and --val-tokens set the validation's layout with --split-docs "
                        "(without it no score depends on them)");
    if (a->kl && a->n_models != 2) return cli_fail(c, "--kl compares two models: give --model twice");
    if (a->top_set && !a->kl) return cli_fail(c, "--top lists the targets where the models disagree most: add --kl");
    if (a->ttt_set && !a->ttt) return cli_fail(c, "--ttt-set sets --ttt's test-time training: add --ttt");
    if (a->ttt && (!a->n_shards || a->split_docs || a->kl))
        return cli_fail(c, "--ttt trains on a token stream: give --tokens-file, without --split-docs or --kl");
    if (a->ttt && strcmp(a->device, "auto") && strcmp(a->device, "cpu"))
        return cli_fail(c, "--device %s: test-time training runs on the CPU; use --device cpu (or auto)", a->device);
    if (a->context && a->stride > a->context)
        return cli_fail(c, "--stride %d exceeds --context %d: a window advances by at most its length; give --stride <= "
                        "--context", a->stride, a->context);
    // The attention statistics come from the CPU backend: auto is the CPU, a GPU is refused here
    // rather than after the models are loaded onto it. The CUDA backend's have not yet run on a
    // GPU: XSA_CUDA_PROBE=1 lets them, for tools/gpu-check.sh to hold them against the CPU's.
    const char *cuda_probe = getenv("XSA_CUDA_PROBE");
    if (probe && !strcmp(a->device, "auto")) a->device = "cpu";
    if (probe && strcmp(a->device, "cpu") && !(cuda_probe && !strcmp(cuda_probe, "1") && !strncmp(a->device, "cuda", 4)))
        return cli_fail(c, "--device %s: the attention statistics are computed by the CPU backend only; use --device cpu "
                        "(XSA_CUDA_PROBE=1 runs the CUDA backend's, not yet checked on a GPU)", a->device);
    xsa_error oerr = {0};
    if ((a->out && outdir_check_file("-o", a->out, &oerr)) || (a->json && outdir_check_file("--json", a->json, &oerr)))
        return cli_fail(c, "%s", oerr.msg);
    *n_edges = 0;
    if (a->buckets && (rc = parse_buckets(a->buckets, edges, n_edges))) return rc;
    static struct hub_model hub[2];  // a->model[i] may point into them
    for (int m = 0; m < a->n_models; m++)
        if ((rc = cli_model_path(c, &a->model[m], &(struct hub_fetch_options){0}, &hub[m], NULL))) return rc;
    // Nothing is scored only to find that an output would replace an input or another output.
    struct sbuf full = {0}, rel = {0}, chart = {0};
    if (report_chart_paths(a->out, &full, &rel))  // the report's chart is written beside it
        sbuf_printf(&chart, "%s%s", full.s, probe ? "_layers.svg" : "_position.svg");
    if (chart.s && outdir_check_file("-o's chart", chart.s, &oerr)) {  // a folder there, say
        sbuf_free(&full), sbuf_free(&rel), sbuf_free(&chart);
        return cli_fail(c, "%s", oerr.msg);
    }
    const char *outs[3] = {a->out, a->json, chart.s}, *oflags[3] = {"-o", "--json", "-o's chart"};
    // The models' files are inputs too: a model file and the sidecar beside it, --arch, and any
    // file already in a model folder.
    char side[2][4200];
    for (int m = 0; m < 2; m++) {
        const char *mp = m < a->n_models ? a->model[m] : "";
        if (m < a->n_models && !dir_exists(mp)) pg_sidecar_path(mp, side[m], sizeof side[m]);
        else side[m][0] = '\0';
        for (int o = 0; o < 3 && m < a->n_models && dir_exists(mp); o++)
            if (outs[o] && file_exists(outs[o]) && outdir_in_folder(outs[o], mp)) {
                sbuf_free(&full), sbuf_free(&rel), sbuf_free(&chart);
                return cli_fail(c, "%s %s is a file of the model folder %s; writing it would replace it: choose another "
                                "path", oflags[o], outs[o], mp);
            }
    }
    const char *ins[9 + 2 * PPL_MAX_SHARDS] = {a->model[0], a->n_models > 1 ? a->model[1] : NULL, a->text, a->jsonl,
                                               a->tokenizer, a->arch, side[0][0] ? side[0] : NULL,
                                               side[1][0] ? side[1] : NULL, a->config};
    int n_in = 9;
    for (int i = 0; i < a->n_shards; i++) ins[n_in++] = a->shard[i];
    for (int i = 0; i < a->n_bytes_files; i++) ins[n_in++] = a->bytes_file[i];
    rc = outdir_check_outputs(3, oflags, outs, n_in, ins, &oerr) ? cli_fail(c, "%s", oerr.msg) : 0;
    sbuf_free(&full), sbuf_free(&rel), sbuf_free(&chart);
    return rc;
}


// A decoded token for the report, printable on one line.
static void token_text(const struct tokenizer *tk, int32_t id, char *out, size_t n) {
    struct sbuf s = {0};
    xsa_error e = {0};
    if (!tk || tokenizer_decode(tk, &id, 1, &s, &e) || !s.s) snprintf(out, n, "#%d", id);
    else {
        size_t k = 0;
        for (size_t i = 0; i < s.n && k + 1 < n; i++) out[k++] = (unsigned char)s.s[i] < 0x20 ? ' ' : s.s[i];
        out[k] = '\0';
        // never cut inside a UTF-8 sequence
        while (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0x80) k--;
        if (k > 0 && (unsigned char)out[k - 1] >= 0xC0 && k == n - 1) out[k - 1] = '\0';
        snprintf(out + strlen(out), n - strlen(out), " (#%d)", id);
    }
    sbuf_free(&s);
}

// The n largest KL values, largest first (ties: earlier target).
static int pick_top(const struct ppl_scores *s, const struct ppl_kl *kl, const struct ppl_docs *d,
                    const struct tokenizer *tk, int n, struct ppl_top *top) {
    int k = 0;
    for (size_t t = 0; t < s[0].n; t++) {
        if (!(kl->kl[t] > 0) || (k == n && kl->kl[t] <= top[n - 1].kl)) continue;  // where they differ at all
        int i = k < n ? k++ : n - 1;
        while (i > 0 && kl->kl[t] > top[i - 1].kl) top[i] = top[i - 1], i--;
        // A document by its place among those given (one too short to score still counts), a stream's
        // document or window by its own number in the stream.
        int unit = d->stream ? s[0].unit[t] : d->input[s[0].unit[t]];
        top[i] = (struct ppl_top){.target = (long)t, .unit = unit, .ctx = s[0].ctx[t], .kl = kl->kl[t],
                                  .nll_a = s[0].nll[t], .nll_b = s[1].nll[t]};
    }
    for (int i = 0; i < k; i++) {
        size_t t = (size_t)top[i].target;
        token_text(tk, d->tok.v[s[0].where[t]], top[i].text, sizeof top[i].text);
        token_text(tk, kl->top_a[t], top[i].top_a, sizeof top[i].top_a);
        token_text(tk, kl->top_b[t], top[i].top_b, sizeof top[i].top_b);
    }
    return k;
}

static void describe(const struct model *m, char *out, size_t n) {
    char x[128];
    model_xsa_describe(&m->cfg, x, sizeof x);
    snprintf(out, n, "(%s, %d layers, d_model %d, vocab %d, XSA: %s)", model_arch_name(m), m->cfg.n_layer, m->cfg.d_model, m->cfg.vocab_size, x);
}

static const char *base_name(const char *p) {
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') n--;
    const char *s = p + n;
    while (s > p && s[-1] != '/') s--;
    return s;
}

struct ppl_run {
    struct model m[2];
    struct backend be[2];
    struct tokenizer *tk;
    struct ppl_docs docs;
    struct ppl_scores sc[2];
    struct ppl_kl kl;
    struct ppl_probe probe[2];
    int n_loaded, n_open;
};

static void input_desc(const struct ppl_args *a, const struct ppl_docs *d, int disjoint, char *out, size_t n) {
    if (a->n_shards && d->split == PPL_SPLIT_CHUNKS)
        snprintf(out, n, "%d shard%s (%s%s), modded-nanogpt's val loss: %ld tokens in chunks of %ld, documents split "
                 "at token %d", a->n_shards, a->n_shards > 1 ? "s" : "", base_name(a->shard[0]),
                 a->n_shards > 1 ? ", ..." : "", d->val_tokens, d->rank_batch, d->doc_start);
    else if (a->n_shards && d->split && disjoint)
        snprintf(out, n, "%d shard%s (%s%s), documents split at token %d, windows as eval_val's over %d rank%s "
                 "of %ld-token batches", a->n_shards, a->n_shards > 1 ? "s" : "", base_name(a->shard[0]),
                 a->n_shards > 1 ? ", ..." : "", d->doc_start, d->ranks, d->ranks > 1 ? "s" : "", d->rank_batch);
    else if (a->n_shards && d->split)
        snprintf(out, n, "%d shard%s (%s%s), documents split at token %d", a->n_shards, a->n_shards > 1 ? "s" : "",
                 base_name(a->shard[0]), a->n_shards > 1 ? ", ..." : "", d->doc_start);
    else if (a->n_shards) snprintf(out, n, "%d shard%s (%s%s)", a->n_shards, a->n_shards > 1 ? "s" : "",
                              base_name(a->shard[0]), a->n_shards > 1 ? ", ..." : "");
    else {
        char shortn[96] = "";
        if (d->n_short)
            snprintf(shortn, sizeof shortn, " (and %d of under 2 tokens, not scored)", d->n_short);
        if (a->tasks) snprintf(out, n, "%d document%s of %s (context + gold answer)%s", d->n_docs,
                               d->n_docs == 1 ? "" : "s", a->tasks, shortn);
        else snprintf(out, n, "%d document%s of %s%s", d->n_docs, d->n_docs == 1 ? "" : "s",
                      base_name(a->text ? a->text : a->jsonl), shortn);
    }
}

static int probe_execute(const struct ppl_args *a, struct ppl_run *r, int context, int stride, int argc, char **argv,
                         xsa_error *err) {
    char input[512];
    struct sbuf cmdline = {0};
    report_command_line(argc, argv, &cmdline);
    input_desc(a, &r->docs, stride == context, input, sizeof input);
    struct probe_report rep = {.n_models = a->n_models, .heads = a->heads, .probe = r->probe,
                               .model = {&r->m[0], &r->m[1]},
                               .label = {base_name(a->model[0]), a->n_models > 1 ? base_name(a->model[1]) : NULL},
                               .path = {a->model[0], a->model[1]}, .input = input, .command = cmdline.s,
                               .context = context, .stride = stride, .data = r->docs.data, .n_data = r->docs.n_data};
    if (a->n_models == 2 && !strcmp(rep.label[0], rep.label[1])) rep.label[0] = "A", rep.label[1] = "B";
    int rc = probe_write_report(&rep, a->out, a->json, err);
    sbuf_free(&cmdline);
    return rc;
}

#define PPL_MAX_TOKENIZER_BYTES ((size_t)512 << 20)  // as the tokenizer loader reads

// 1 when two tokenizer.json files hold the same JSON (another transformers version re-saves the
// same tokenizer with other spacing or key order), else 0.
static int same_tokenizer_json(const char *p0, const char *p1) {
    size_t l0 = strlen(p0), l1 = strlen(p1);
    if (l0 < 5 || l1 < 5 || strcmp(p0 + l0 - 5, ".json") || strcmp(p1 + l1 - 5, ".json")) return 0;
    char *t[2] = {NULL, NULL};
    size_t n[2];
    cJSON *j[2] = {NULL, NULL};
    xsa_error e = {0};
    for (int i = 0; i < 2; i++)
        if (!file_read_all(i ? p1 : p0, PPL_MAX_TOKENIZER_BYTES, &t[i], &n[i], &e))
            j[i] = json_read_whole(t[i], n[i], JSON_KEYS_UNIQUE, i ? p1 : p0, &e);
    char *c[2] = {NULL, NULL};
    for (int i = 0; i < 2 && j[0] && j[1]; i++) json_sort_keys(j[i]), c[i] = cJSON_PrintUnformatted(j[i]);
    int same = c[0] && c[1] && !strcmp(c[0], c[1]);
    for (int i = 0; i < 2; i++) cJSON_Delete(j[i]), free(t[i]), free(c[i]);
    return same;
}

// Two models are compared target by target, so they must read the same token ids: where both
// have a tokenizer of their own, it must be the same (a vocabulary of the same size is not
// enough: the ids would mean different text). --tokenizer gives both one tokenizer.
static int check_same_tokenizer(const struct ppl_args *a, xsa_error *err) {
    if (a->n_models < 2 || a->tokenizer) return 0;
    char path[2][4096], hex[2][65];
    for (int i = 0; i < 2; i++) {
        xsa_error none = {0};
        if (tokenizer_find(a->model[i], path[i], sizeof path[i], &none)) return 0;  // one has none: nothing to compare
    }
    for (int i = 0; i < 2; i++) {
        int rc = tokenizer_files_sha256(path[i], hex[i], err);
        if (rc) return rc;
    }
    if (strcmp(hex[0], hex[1]) && !same_tokenizer_json(path[0], path[1]))
        return xsa_fail(err, XSA_EBADINPUT, "%s and %s have different tokenizers (%s, sha256 %.12s; %s, sha256 %.12s): "
                        "the same token ids would stand for different text; compare two models of one tokenizer, or "
                        "score each alone", a->model[0], a->model[1], path[0], hex[0], path[1], hex[1]);
    return 0;
}

static int ppl_execute(struct ppl_args *a, const int *edges, int n_edges, int argc, char **argv, struct ppl_run *r,
                       xsa_error *err) {
    int rc = check_same_tokenizer(a, err);
    for (int i = 0; i < a->n_models && !rc; i++) {
        rc = model_load_config(&r->m[i], a->model[i], a->config, err);
        if (!rc) r->n_loaded++;
        if (!rc && !a->quiet) model_print_notes(&r->m[i]);
        if (!rc && a->xsa) rc = model_apply_xsa_spec(&r->m[i].cfg, a->xsa, err);
        if (!rc && a->ttt) rc = ttt_check(&r->m[i], err);  // before the stream is read
    }
    if (rc) return rc;
    int maxlen = 0;
    for (int i = 0; i < a->n_models; i++)
        if (r->m[i].cfg.max_seq_len > 0 && (!maxlen || r->m[i].cfg.max_seq_len < maxlen)) maxlen = r->m[i].cfg.max_seq_len;
    // --split-docs on modded-nanogpt: its val loss, whole chunks of val_batch_size / 8 tokens.
    int chunks = a->split_docs && r->m[0].mng;
    long vb = a->val_batch_tokens ? a->val_batch_tokens : MNG_DEFAULT_VAL_BATCH;
    long vt = a->val_tokens ? a->val_tokens : MNG_DEFAULT_VAL_TOKENS;
    if (a->split_docs && a->n_models == 2 && !r->m[0].mng != !r->m[1].mng)
        return xsa_fail(err, XSA_EBADINPUT, "--split-docs scores each family's own validation, and only one of %s and "
                        "%s is a modded-nanogpt checkpoint: their layouts differ", a->model[0], a->model[1]);
    if (chunks && (a->context || a->stride || a->ranks))
        return xsa_fail(err, XSA_EBADINPUT, "--context, --stride and --ranks do not apply to modded-nanogpt's val loss: "
                        "it scores whole chunks of --val-batch-tokens / 8 tokens, the same for any world size");
    if (a->val_tokens && !chunks)
        return xsa_fail(err, XSA_EBADINPUT, "--val-tokens sets modded-nanogpt's val loss; parameter-golf's eval_val "
                        "scores the whole stream");
    if (chunks && (vb % 128 || vt % vb))
        return xsa_fail(err, XSA_EBADINPUT, "--val-batch-tokens %ld must be a multiple of 128 (8 chunks of a multiple of "
                        "16 tokens) and --val-tokens %ld a multiple of it, as the record asserts", vb, vt);
    int context = chunks ? (int)(vb / 8) : a->context ? a->context : maxlen ? maxlen : 1024;
    if (!chunks && maxlen && context > maxlen)
        return xsa_fail(err, XSA_EBADINPUT, "--context %d exceeds the model's context length %d", context, maxlen);
    // An NTK-aware Rotary's base is its window's: the family's eval_val at EVAL_SEQ_LEN = --context.
    for (int i = 0; i < a->n_models && !chunks; i++)
        if (model_set_window(&r->m[i], context) && !a->quiet)
            fprintf(stderr, "xsa-eval %s: %s: RoPE base %g for windows of %d tokens (NTK past %d), as its family's eval_val "
                    "builds its Rotary at EVAL_SEQ_LEN %d\n", a->probe ? "probe" : "ppl", a->model[i], (double)r->m[i].cfg.rope_theta,
                    context, r->m[i].cfg.rope_ntk_from, context);
    int stride = a->stride ? a->stride : context;
    if (stride > context)
        return xsa_fail(err, XSA_EBADINPUT, "--stride %d exceeds the context %d (%s): a window advances by at most its "
                        "length; give --stride <= %d", stride, context, a->context ? "--context" : "the model's length",
                        context);
    if ((a->ranks || a->val_batch_tokens) && stride != context)
        return xsa_fail(err, XSA_EBADINPUT, "--ranks and --val-batch-tokens apply to disjoint windows (eval_val); "
                        "sliding windows do not depend on them");
    // The architectures that appeared with VarLenAttn: their logs' val_bpb cut attention at each BOS.
    const struct model_config *c0 = &r->m[0].cfg;
    // (probe reports no loss: the hints are ppl's)
    if (!a->probe && !a->quiet && a->n_shards && !a->split_docs && r->m[0].mng)
        fprintf(stderr, "xsa-eval ppl: %s is a modded-nanogpt checkpoint: add --split-docs for the val loss its "
                "training log prints\n", a->model[0]);
    if (!a->probe && !a->quiet && !a->ttt && a->n_shards && !a->split_docs && (c0->lanes_together || c0->smear_fwd_window || c0->attn_gate_mult == 2))
        fprintf(stderr, "xsa-eval ppl: %s has the architecture of parameter-golf's records from 2026-04-10 on, whose "
                "eval_val cuts attention at each BOS: add --split-docs for their val_bpb\n", a->model[0]);
    if (a->n_shards && stride != context && !a->ttt && !a->quiet)
        fprintf(stderr, "xsa-eval %s: --stride %d < --context %d: sliding windows, as parameter-golf's "
                "eval_val_sliding (2026-04-01 on)\n", a->probe ? "probe" : "ppl", stride, context);
    char tok_path[4096];
    xsa_error terr = {0};
    if (a->tokenizer) snprintf(tok_path, sizeof tok_path, "%s", a->tokenizer);
    int have_tok = a->tokenizer || !tokenizer_find(a->model[0], tok_path, sizeof tok_path, &terr);
    if (have_tok && (rc = tokenizer_load(&r->tk, tok_path, err))) return rc;
    if (have_tok && tokenizer_class_note(r->tk) && !a->quiet)
        fprintf(stderr, "xsa-eval %s: note: %s: %s\n", a->probe ? "probe" : "ppl", tok_path, tokenizer_class_note(r->tk));
    struct ppl_inputs in = {.text = a->text, .jsonl = a->jsonl, .field = a->field, .shard = a->shard,
                            .n_shards = a->n_shards, .bytes_file = a->bytes_file, .n_bytes_files = a->n_bytes_files,
                            .split_docs = a->split_docs, .ranks = a->ranks, .val_batch_tokens = a->val_batch_tokens,
                            .val_tokens = a->val_tokens, .tasks = a->tasks, .limit = a->limit, .data = &a->data};
    if ((rc = ppl_inputs_load(&in, r->tk, &r->m[0], &r->docs, &a->bytes_rule_out, err))) return rc;
    if (r->docs.bytes_why[0] && !a->quiet)  // a tokenizer.json whose bytes cannot be counted token by token
        fprintf(stderr, "xsa-eval %s: note: bits per byte: %s\n", a->probe ? "probe" : "ppl", r->docs.bytes_why);
    struct backend_options o = {.n_threads = a->threads, .max_batch_tokens = a->batch_tokens ? a->batch_tokens : 0,
                                .quiet = a->quiet};
    if ((rc = backend_options_from_env(&o, err))) return rc;
    if (o.max_batch_tokens && o.max_batch_tokens < context) o.max_batch_tokens = context;
    struct ttt_settings tts;
    char ttt_desc[1024];
    int recipe = ttt_recipe_of(&r->m[0]);  // (the records' defaults, and how they plan windows)
    if (a->ttt && a->n_models == 2 && ttt_recipe_of(&r->m[1]) != recipe)
        return xsa_fail(err, XSA_EBADINPUT, "--ttt: %s is trained as the %s, %s as the %s, which score different targets; "
                        "compare two models of one recipe", a->model[0], ttt_recipe_source(recipe), a->model[1],
                        ttt_recipe_source(ttt_recipe_of(&r->m[1])));
    if (a->ttt && ttt_is_lora(recipe) && a->stride)
        return xsa_fail(err, XSA_EBADINPUT, "--stride does not apply to %s's test-time training: it scores each document in "
                        "chunks of TTT_CHUNK_SIZE targets, each in a window of up to TTT_EVAL_SEQ_LEN tokens (--ttt-set)",
                        a->model[0]);
    ttt_settings_of_model(&tts, &r->m[0]);
    if (a->ttt && a->ttt_set && (rc = ttt_settings_parse(&tts, a->ttt_set, err))) return rc;
    ttt_settings_describe(&tts, ttt_desc, sizeof ttt_desc);
    for (int i = 0; a->ttt && i < a->n_models && !rc; i++) {  // each model adapts on the stream as it scores it
        if (!a->quiet)
            fprintf(stderr, "xsa-eval ppl: test-time training of %s as the %s: %s\n", a->model[i], ttt_settings_source(&tts), ttt_desc);
        rc = ttt_score(&r->m[i], a->threads, &r->docs, context, stride, &tts, !a->quiet, &r->sc[i], err);
    }
    for (int i = 0; !a->ttt && i < a->n_models && !rc; i++) {
        rc = backend_open_dtype(&r->be[i], a->device, a->dtype, &r->m[i], &o, err);
        if (!rc) r->n_open++;
    }
    if (rc) return rc;
    struct backend *bes[2] = {&r->be[0], &r->be[1]};
    if (!a->ttt)
        rc = ppl_score(bes, a->n_models, &r->docs, context, stride, r->sc, a->kl ? &r->kl : NULL,
                       a->probe ? r->probe : NULL, err);
    if (!rc && a->probe) return probe_execute(a, r, context, stride, argc, argv, err);
    // The interval's units: a stream's documents where its BOS is known and in it (windows of one
    // document are not independent draws), else its windows with a note; text: its documents.
    int lora = a->ttt && ttt_is_lora(recipe);  // (scored document by document already)
    const char *unit_name = r->docs.split == PPL_SPLIT_CHUNKS ? "chunk" : a->n_shards && !lora ? "window" : "document";
    int unit_bos = -1;
    char unit_note[256] = "";
    if (!rc && a->n_shards && !lora) {
        if (ppl_units_documents(&r->docs, r->docs.bos, r->sc, a->n_models)) unit_name = "document", unit_bos = r->docs.bos;
        else if (r->docs.bos < 0)
            snprintf(unit_note, sizeof unit_note, "no BOS id is known to find the documents (give the --tokenizer the "
                     "shards were written with), so the interval's units are %ss, which are not independent: it is "
                     "too narrow", unit_name);
        else
            snprintf(unit_note, sizeof unit_note, "no token of the shards is the BOS id %d, so the interval's units are "
                     "%ss, which are not independent: it is too narrow", (int)r->docs.bos, unit_name);
        if (unit_note[0] && a->n_models == 2 && !a->quiet) fprintf(stderr, "xsa-eval ppl: note: %s\n", unit_note);
    }
    // The most context a prediction saw: 2026-04-10's LoRA TTT scores in windows of TTT_EVAL_SEQ_LEN.
    int seen = a->ttt && ttt_is_lora(recipe) ? tts.eval_seq_len : context;
    int def_edges[PPL_MAX_BUCKETS], nd = 0;
    if (!rc && !a->buckets)
        for (int e = 16; e < seen && nd < PPL_MAX_BUCKETS - 1; e *= 2) def_edges[nd++] = e;
    struct ppl_summary sum;
    double level = 1 - a->st.alpha;
    if (!rc) rc = ppl_summarize(r->sc, a->n_models, a->kl ? &r->kl : NULL, a->buckets ? edges : def_edges,
                                a->buckets ? n_edges : nd, seen, level, &sum, err);
    if (rc) return rc;
    struct ppl_top *top = a->kl && a->top ? xsa_calloc((size_t)a->top, sizeof *top) : NULL;
    int n_top = top ? pick_top(r->sc, &r->kl, &r->docs, r->tk, a->top, top) : 0;
    char desc[2][256], xsa[2][128] = {"", ""}, input[512];
    struct sbuf cmdline = {0};
    report_command_line(argc, argv, &cmdline);
    for (int i = 0; i < a->n_models; i++) {
        describe(&r->m[i], desc[i], sizeof desc[i]);
        model_xsa_describe(&r->m[i].cfg, xsa[i], sizeof xsa[i]);
    }
    input_desc(a, &r->docs, stride == context, input, sizeof input);
    struct ppl_report rep = {.sum = &sum, .label = {base_name(a->model[0]), a->n_models > 1 ? base_name(a->model[1]) : NULL},
                             .path = {a->model[0], a->model[1]}, .desc = {desc[0], desc[1]}, .xsa = {xsa[0], xsa[1]}, .input = input,
                             .unit_name = unit_name, .unit_bos = unit_bos,
                             .unit_note = a->n_models == 2 && unit_note[0] ? unit_note : NULL, .context = context,
                             .stride = stride,
                             .level = level, .command = cmdline.s,
                             .bytes_rule = a->bytes_rule_out, .top = top, .n_top = n_top, .split = r->docs.split,
                             .doc_start = r->docs.doc_start,
                             .ranks = stride == context && r->docs.split == PPL_SPLIT_EVAL_VAL ? r->docs.ranks : 0,
                             .rank_batch = r->docs.rank_batch, .val_tokens = r->docs.val_tokens,
                             .ttt = a->ttt ? ttt_desc : NULL, .ttt_recipe = recipe,
                             .ttt_source = ttt_settings_source(&tts), .ttt_phases = tts.phased ? tts.num_phases : 0,
                             .data = r->docs.data, .n_data = r->docs.n_data};
    if (a->n_models == 2 && !strcmp(rep.label[0], rep.label[1])) rep.label[0] = "A", rep.label[1] = "B";
    rc = ppl_write_report(&rep, a->out, a->json, err);
    free(top);
    sbuf_free(&cmdline);
    return rc;
}

// --ttt trains through OpenBLAS, which reads OPENBLAS_CORETYPE only as it loads: where it fell
// back to SSE kernels on an AVX2 or AVX-512 CPU, the run starts again in a process that has it
// (unless the user set it). Not when /proc/self/exe is some other program (valgrind's tool runs
// us): then only the advice. On exec's failure the run goes on as it is.
static void ttt_restart_with_blas_core(int argc, char **argv, int quiet) {
    const char *core = getenv("OPENBLAS_CORETYPE") ? NULL : ttt_blas_core_to_force();
    if (!core) return;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    const char *base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
    if (strncmp(base, "xsa-eval", 8)) {
        if (!quiet)
            fprintf(stderr, "xsa-eval ppl: OpenBLAS does not know this CPU and runs its SSE kernels; OPENBLAS_CORETYPE=%s "
                    "would run test-time training on its kernels for this CPU\n", core);
        return;
    }
    if (!quiet)
        fprintf(stderr, "xsa-eval ppl: OpenBLAS does not know this CPU and runs its SSE kernels; test-time training runs "
                "again with OPENBLAS_CORETYPE=%s, its kernels for this CPU (set OPENBLAS_CORETYPE to choose)\n", core);
    char **av = xsa_calloc((size_t)argc + 2, sizeof *av);
    av[0] = "xsa-eval";
    for (int i = 0; i < argc; i++) av[i + 1] = argv[i];  // (argv[0]: "ppl")
    fflush(NULL);
    if (setenv("OPENBLAS_CORETYPE", core, 1) == 0) execv("/proc/self/exe", av);
    unsetenv("OPENBLAS_CORETYPE");
    free(av);
}

static int ppl_main(int argc, char **argv, int probe) {
    struct ppl_args a;
    int edges[PPL_MAX_BUCKETS], n_edges = 0;
    int rc = ppl_parse(argc, argv, probe, &a, edges, &n_edges);
    if (rc) return rc < 0 ? 0 : rc;
    if (a.ttt && !probe) ttt_restart_with_blas_core(argc, argv, a.quiet);
    xsa_error err = {0};
    struct ppl_run *r = xsa_calloc(1, sizeof *r);
    rc = ppl_execute(&a, edges, n_edges, argc, argv, r, &err);
    if (rc) fprintf(stderr, "xsa-eval %s: %s\n", probe ? "probe" : "ppl", err.msg);
    for (int i = 0; i < r->n_open; i++) backend_close(&r->be[i]);
    for (int i = 0; i < r->n_loaded; i++) model_free(&r->m[i]);
    for (int i = 0; i < a.n_models; i++) ppl_scores_free(&r->sc[i]), ppl_probe_free(&r->probe[i]);
    ppl_kl_free(&r->kl);
    ppl_docs_free(&r->docs);
    if (r->tk) tokenizer_free(r->tk);
    free(r);
    return rc;
}

int cmd_ppl(int argc, char **argv) { return ppl_main(argc, argv, 0); }
int cmd_probe(int argc, char **argv) { return ppl_main(argc, argv, 1); }
