// ppl.h: per-token negative log-likelihood of long documents (`xsa-eval ppl`), scored in
// windows through the backend contract: each target scored once, with up to `context` tokens
// of context; a window advances by `stride` targets (stride == context: disjoint windows, as
// parameter-golf's eval_val; less: sliding windows, a stream's as its eval_val_sliding from
// 2026-04-01). Scores never depend on how windows are packed into batches (kernels/backend.h).
//
// With two models and `kl`, the same batches also give per-target KL(A || B) over the full
// vocabulary and both models' argmax, from the backends' distribution chunks.
#ifndef XSA_EVAL_PPL_H
#define XSA_EVAL_PPL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/vec.h"
#include "data/data.h"
#include "kernels/backend.h"

#define PPL_MAX_BUCKETS 32

struct ppl_data_src {           // --tasks: where one task's rows came from
    const struct task_def *task;
    struct data_provenance prov;
};

struct ppl_docs {               // documents of token ids; target j of doc d is tok[start[d] + j], j >= 1
    struct ivec tok;            // all documents, concatenated
    size_t *start;              // (n_docs + 1)
    int n_docs;
    size_t cap;                 // start's capacity (common/grow.h)
    int *input;                 // (n_docs) each document's place among the documents given, from 0
    size_t input_cap;
    int n_given, n_short;       // documents given, and those of under 2 tokens (not scored)
    struct ppl_data_src *data;  // (n_data) --tasks: each task's data, for the reports' provenance
    int n_data;
    double bytes;               // UTF-8 bytes the scored targets stand for (NAN: unknown)
    char bytes_why[1100];       // why a shard's bytes are unknown, for the report
    int stream;                 // 1: one token stream (shards): targets past the last whole stride
                                // are dropped, as eval_val does; ppl_score's units are its windows
    int32_t bos;                // a stream's BOS id, which starts each document (-1: none known)
    int16_t *base_bytes;        // (vocab) eval_val's byte tables (tokenizer_sp_byte_luts), a tokenizer.json's
    uint8_t *leading_space, *boundary;  // (tokenizer_hf_byte_luts), or NULL
    int lut_n;
    int32_t *target_bytes;      // (tok.n) or NULL: the bytes each token stands for, as a CaseOps record's
                                // byte sidecar gives them (used before the tables)
    // PPL_SPLIT_EVAL_VAL: a stream cut into documents (parameter-golf's VarLenAttn, 2026-04-10 on): attention
    // never crosses a token equal to doc_start, which starts a document; SmearGate and
    // bigram still read the token before a cut. Disjoint windows are then eval_val's: each rank's
    // share of the windows (`ranks`, its WORLD_SIZE) in batches of `rank_batch` tokens (its
    // VAL_BATCH_TOKENS / 8), a rank's last partial batch dropped, and a document cut every
    // `context` tokens from its start or from a batch's start; sliding windows are
    // eval_val_sliding's, each cut at its documents' starts.
    //
    // PPL_SPLIT_CHUNKS: modded-nanogpt's validation (its records' val loss): `val_tokens` / `rank_batch`
    // flat chunks of `rank_batch` (val_batch_size / 8) tokens in order, each one row with positions
    // over the chunk and attention cut at doc_start; smear, bigram and key offset read the chunk's
    // previous token across a cut; every target of the chunk scored (context = rank_batch).
    int split;                  // PPL_SPLIT_*
    int32_t doc_start;
    int ranks;
    long rank_batch;
    long val_tokens;            // PPL_SPLIT_CHUNKS: targets scored (the record's val_tokens)
};

enum { PPL_SPLIT_NONE, PPL_SPLIT_EVAL_VAL, PPL_SPLIT_CHUNKS };

struct tokenizer;
struct model;
// The token a text document starts with, so that its first text token is predicted too (as
// lm-eval's rolling log-likelihood prefixes one): the tokenizer's BOS, else its EOS, else the
// checkpoint's bos_token_id, else its eos_token_id; -1 when none exists.
int ppl_prefix_token(const struct tokenizer *tk, const struct model *m);

void ppl_docs_free(struct ppl_docs *d);
// eval_val's byte tables of a SentencePiece tokenizer for ids [0, vocab) (tokenizer_sp_byte_luts),
// into d's base_bytes, leading_space and boundary.
int ppl_docs_sp_bytes(struct ppl_docs *d, const struct tokenizer *tk, int vocab, xsa_error *err);
// The same tables for a tokenizer.json (tokenizer_hf_byte_luts: the bytes decode gives each
// token); on an error none are left in d.
int ppl_docs_hf_bytes(struct ppl_docs *d, const struct tokenizer *tk, int vocab, xsa_error *err);
// Appends one document; fewer than 2 tokens add nothing (counted in n_short).
int ppl_docs_add(struct ppl_docs *d, const int32_t *tok, size_t n, xsa_error *err);

struct ppl_scores {             // one model's scored targets, in document then position order
    size_t n;
    float *nll;                 // (n) -log P(target | its window)
    uint8_t *greedy;            // (n) target is the argmax
    int32_t *ctx;               // (n) tokens of context the prediction saw, 1 .. context
    int32_t *unit;              // (n) the interval's unit: the document, or the window of a stream
                                // (ppl_units_documents makes it the stream's document)
    size_t *where;              // (n) index of the target in docs.tok
    int n_units;
    double bytes;               // eval_val's bytes of these targets (streams with tables), else docs.bytes
};

// A stream's documents as the interval's units (ppl_score gives its windows): each target of
// out[0 .. n_models) is counted in the document it lies in, from the last token equal to `bos` at
// or before it (targets before the stream's first BOS in one document of their own), whichever
// window scored it; the units are numbered from 0 in stream order. Returns the number of
// documents, or 0 (changing nothing) when bos < 0 or no token of the stream is bos.
int ppl_units_documents(const struct ppl_docs *d, int32_t bos, struct ppl_scores *out, int n_models);

struct ppl_kl {                 // per target (n as the scores), with two models
    double *kl;                 // (n) KL(A || B) in nats
    int32_t *top_a, *top_b;     // (n) each model's argmax (lowest id on ties)
};

enum { PPL_PROBE_COS_Y, PPL_PROBE_COS_Y2, PPL_PROBE_COS_Z, PPL_PROBE_COS_Z2, PPL_PROBE_AII, PPL_PROBE_AII2, PPL_PROBE_SUMS };

struct ppl_probe {              // one model's attention statistics (backend.h's probe) over the targets
    int n_layer, n_head;
    long n;                     // targets summed
    double *sum;                // (n_layer, n_head, PPL_PROBE_SUMS): sums and sums of squares, target order
};

void ppl_probe_free(struct ppl_probe *p);
// Mean and standard deviation (population) of statistic k (BACKEND_PROBE_*) over the targets
// and the heads of layer l (head -1), or of one head.
void ppl_probe_stat(const struct ppl_probe *p, int layer, int head, int k, double *mean, double *sd);

void ppl_scores_free(struct ppl_scores *s);
// Room for n targets in s (its arrays allocated, s->n = n).
void ppl_scores_alloc(struct ppl_scores *s, size_t n);
// The bytes eval_val counts for the target at docs.tok index `where` (a stream with byte tables or
// a byte sidecar): the sidecar's count, else the piece's bytes + its leading_space after a token
// that is no boundary (eval_val: 1 for a leading U+2581).
double ppl_target_bytes(const struct ppl_docs *d, size_t where);
void ppl_kl_free(struct ppl_kl *k);

// Scores every target of d with each of n_models (1 or 2) backends into out[m]; kl (n_models
// == 2, may be NULL) gets the divergences, probe ((n_models), may be NULL) each model's
// attention statistics at the targets' inputs. Both backends must have the same vocabulary.
int ppl_score(struct backend *const *be, int n_models, const struct ppl_docs *d, int context, int stride,
              struct ppl_scores *out, struct ppl_kl *kl, struct ppl_probe *probe, xsa_error *err);

struct ppl_bucket {
    int lo, hi;                 // context positions [lo, hi)
    long n;                     // targets
    double nll[2];              // mean nats per target of each model
    int n_units;                // units with a target here (the interval's independent draws)
    double delta, dlo, dhi;     // B - A of the per-target means; interval over units (NAN: under 2 units)
    double se, df;              // its standard error and degrees of freedom (stats_cluster_ratio_ci)
    int real;                   // interval excludes 0
};

struct ppl_summary {
    int n_models;
    long n;                     // targets
    double nll[2], bits[2], bpb[2], ppl[2], acc[2];  // nats/token, bits/token, bits/byte (NAN: no bytes), exp(nll), top-1
    double bytes;
    int n_units;
    double delta, dlo, dhi;     // overall, as the buckets
    double se, df;
    int real;
    int n_buckets;
    struct ppl_bucket bucket[PPL_MAX_BUCKETS];
    // with --kl
    int has_kl;
    double kl_mean, kl_max, agree;  // mean and largest KL(A || B), fraction of targets with the same argmax
};

// Buckets from edges e0 < e1 < ...: [1, e0), [e0, e1), ..., [e_last, context + 1); edges
// outside (1, context] are dropped; the overall numbers count every target. Intervals at
// `level` (e.g. 0.95) as stats_cluster_ratio_ci over the units.
int ppl_summarize(const struct ppl_scores *s, int n_models, const struct ppl_kl *kl, const int *edges,
                  int n_edges, int context, double level, struct ppl_summary *out, xsa_error *err);

#endif
