// ppl_report.c: `xsa-eval ppl`'s report (ppl_report.h).
#include "reports/ppl_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonw.h"
#include "eval/stats.h"
#include "eval/ttt.h"
#include "reports/report.h"
#include "reports/svg.h"

static const char *lab(const struct ppl_report *r, int m) { return r->label[m] ? r->label[m] : m ? "B" : "A"; }

static void num(struct sbuf *o, const char *fmt, double x) {  // "-" for NAN
    if (isfinite(x)) sbuf_printf(o, fmt, x);
    else sbuf_puts(o, "-");
}

static int bucket_label(const struct ppl_bucket *b, char *buf, size_t n) {
    return snprintf(buf, n, "%d-%d", b->lo, b->hi - 1);
}

static void ppl_markdown(const struct ppl_report *r, const char *chart_rel, struct sbuf *o) {
    const struct ppl_summary *s = r->sum;
    int two = s->n_models == 2;
    double pct = r->level * 100;
    char t1[32], t2[32];
    report_thousands(s->n, t1);
    sbuf_puts(o, "# Per-token loss: ");
    md_text(o, lab(r, 0));
    if (two) {
        sbuf_puts(o, " vs ");
        md_text(o, lab(r, 1));
    }
    sbuf_puts(o, "\n\n");
    if (r->ttt && ttt_is_lora(r->ttt_recipe)) {
        sbuf_printf(o, "%s targets of %s (cut to whole sequences of %d tokens), scored with test-time training as "
                       "parameter-golf's %s: each document (from a BOS to the next one) gets fresh LoRA adapters, read "
                       "in chunks of targets each scored before the adapters train on it", t1, r->input, r->context, r->ttt_source);
        if (r->ttt_phases)
            sbuf_printf(o, "; in %d phase%s, the documents scored so far train every weight of the model by SGD before the "
                           "next ones are scored", r->ttt_phases, r->ttt_phases == 1 ? "" : "s");
        sbuf_printf(o, "; %d %s%s.\n\nTest-time training: "
                       "`%s` (on the CPU, in float32). The scores are the adapted model's; the checkpoint is not changed. "
                       "The adapters' A matrices are drawn by xsa-eval's own generator (TTT_LORA_SEED), where the record "
                       "draws them from torch's generator in whatever state its training left: no other run draws its numbers.\n\n",
                    s->n_units, r->unit_name, s->n_units == 1 ? "" : "s", r->ttt);
    } else if (r->ttt) {
        sbuf_printf(o, "%s targets of %s, scored with test-time training as parameter-golf's %s: windows of %d tokens "
                       "every %d, in chunks of targets each scored before the model trains on it", t1, r->input,
                    r->ttt_source, r->context, r->stride);
        if (r->ttt_recipe != TTT_2026_04)
            sbuf_printf(o, " (its last windows score the stream's last %d targets again, as the records' do)", r->stride);
        sbuf_printf(o, "; %d %s%s.\n\nTest-time training: `%s` (SGD with momentum on the CPU, in float32). The scores "
                       "are the adapting model's; the checkpoint is not changed.\n\n",
                    s->n_units, r->unit_name, s->n_units == 1 ? "" : "s", r->ttt);
    } else if (r->unit_bos >= 0)
        sbuf_printf(o, "%s targets of %s, each scored once with up to %d tokens of context (stride %d); %d %s%s "
                       "(each from a BOS, token %d, to the next).\n\n",
                    t1, r->input, r->context, r->stride, s->n_units, r->unit_name, s->n_units == 1 ? "" : "s",
                    r->unit_bos);
    else if (!strcmp(r->unit_name, "document"))  // (the input already counts the documents)
        sbuf_printf(o, "%s targets of %s, each scored once with up to %d tokens of context (stride %d).\n\n",
                    t1, r->input, r->context, r->stride);
    else
        sbuf_printf(o, "%s targets of %s, each scored once with up to %d tokens of context (stride %d); %d %s%s.\n\n",
                    t1, r->input, r->context, r->stride, s->n_units, r->unit_name, s->n_units == 1 ? "" : "s");
    sbuf_puts(o, "| model | nats/token | bits/token | bits/byte | perplexity | top-1 |\n|---|---:|---:|---:|---:|---:|\n");
    for (int m = 0; m < s->n_models; m++) {
        sbuf_puts(o, "| ");
        md_text(o, lab(r, m));
        sbuf_printf(o, " | %.5f | %.5f | ", s->nll[m], s->bits[m]);
        num(o, "%.5f", s->bpb[m]);
        // exp(nats) of a model this bad leaves a double (JSON: null): the nats above say how bad
        if (!isfinite(s->ppl[m])) sbuf_printf(o, " | overflows | %.2f%% |\n", 100 * s->acc[m]);
        else if (s->ppl[m] >= 1e6) sbuf_printf(o, " | %.4e | %.2f%% |\n", s->ppl[m], 100 * s->acc[m]);
        else sbuf_printf(o, " | %.4f | %.2f%% |\n", s->ppl[m], 100 * s->acc[m]);
    }
    report_thousands((long long)llround(isfinite(s->bytes) ? s->bytes : 0), t2);
    if (!isfinite(s->bytes) && !strncmp(r->bytes_rule, "unknown", 7))  // the rule says why
        sbuf_printf(o, "\nBits per byte: %s.\n\n", r->bytes_rule);
    else sbuf_printf(o, "\nBits per byte: %s bytes, %s.\n\n", isfinite(s->bytes) ? t2 : "unknown", r->bytes_rule);
    if (two && s->n_units >= 2)
        sbuf_printf(o, "Delta B - A (nats/token): %+.5f, %g%% interval [%+.5f, %+.5f] over %d %ss, %s: standard error "
                       "%.5f on %.1f degrees of freedom (the difference of the two models' nats/token; each %s one "
                       "independent draw)%s.\n\n",
                    s->delta, pct, s->dlo, s->dhi, s->n_units, r->unit_name, STATS_CLUSTER_RATIO_METHOD, s->se, s->df,
                    r->unit_name, s->real ? ", **significant**" : "");
    else if (two)
        sbuf_printf(o, "Delta B - A (nats/token): %+.5f; no interval: one %s, no spread between %ss to measure.\n\n",
                    s->delta, r->unit_name, r->unit_name);
    if (r->unit_note) sbuf_printf(o, "Note: %s (docs/statistics.md).\n\n", r->unit_note);
    sbuf_printf(o, "## By position\n\nPosition: tokens of context the prediction saw.\n\n| positions | targets | %s",
                      two ? "" : "nats/token |\n|---|---:|---:|\n");
    if (two) {
        md_text(o, lab(r, 0));
        sbuf_puts(o, " | ");
        md_text(o, lab(r, 1));
        sbuf_printf(o, " | delta B - A | %g%% interval | %ss | |\n|---|---:|---:|---:|---:|---|---:|---|\n", pct,
                          r->unit_name);
    }
    for (int i = 0; i < s->n_buckets; i++) {
        const struct ppl_bucket *b = &s->bucket[i];
        char bl[32];
        bucket_label(b, bl, sizeof bl);
        report_thousands(b->n, t1);
        sbuf_printf(o, "| %s | %s | ", bl, t1);
        num(o, "%.5f", b->nll[0]);
        if (two) {
            sbuf_puts(o, " | ");
            num(o, "%.5f", b->nll[1]);
            sbuf_puts(o, " | ");
            num(o, "%+.5f", b->delta);
            if (isfinite(b->dlo) && isfinite(b->dhi)) {
                sbuf_puts(o, " | [");
                num(o, "%+.5f", b->dlo);
                sbuf_puts(o, ", ");
                num(o, "%+.5f", b->dhi);
                sbuf_puts(o, "]");
            } else {
                sbuf_puts(o, " | N/A");  // (one unit: no spread between units, as compare writes it)
            }
            sbuf_printf(o, " | %d | %s", b->n_units, b->real ? (b->delta < 0 ? "B better" : "B worse") : "");
        }
        sbuf_puts(o, " |\n");
    }
    if (chart_rel) {
        sbuf_puts(o, "\n");
        md_image(o, two ? "Delta B - A by position" : "Loss by position", chart_rel, "_position.svg");
        sbuf_puts(o, "\n");
    }
    if (s->has_kl) {
        sbuf_printf(o, "\n## Divergence\n\nKL(A || B) over the full vocabulary: mean %.6f nats/token, largest %.6f; "
                             "the argmax agrees at %.2f%% of targets.\n\n",
                          s->kl_mean, s->kl_max, 100 * s->agree);
        if (!r->n_top && s->kl_max == 0) sbuf_puts(o, "The two models give the same distribution at every target.\n");
        if (r->n_top) sbuf_printf(o, "| target | %s (from 0) | position | token | KL | A's top | B's top | A nats | B nats |\n"
                                           "|---:|---:|---:|---|---:|---|---|---:|---:|\n", r->unit_name);
        for (int i = 0; i < r->n_top; i++) {
            const struct ppl_top *t = &r->top[i];
            sbuf_printf(o, "| %ld | %d | %d | ", t->target, t->unit, t->ctx);
            md_code(o, t->text);
            sbuf_printf(o, " | %.5f | ", t->kl);
            md_code(o, t->top_a);
            sbuf_puts(o, " | ");
            md_code(o, t->top_b);
            sbuf_printf(o, " | %.4f | %.4f |\n", t->nll_a, t->nll_b);
        }
    }
    sbuf_puts(o, "\n## Provenance\n\n| | |\n|---|---|\n");
    for (int m = 0; m < s->n_models; m++) {
        sbuf_printf(o, "| %s | ", m ? "B" : "A");
        md_code(o, r->path[m] ? r->path[m] : "-");
        sbuf_puts(o, " ");
        md_text(o, r->desc[m] ? r->desc[m] : "");
        sbuf_puts(o, " |\n");
    }
    ppl_data_md(o, r->data, r->n_data);
    if (two) sbuf_printf(o, "| interval | %s over %ss, %g%% |\n", STATS_CLUSTER_RATIO_METHOD, r->unit_name, pct);
    if (r->command) {
        sbuf_puts(o, "| command | ");
        md_code(o, r->command);
        sbuf_puts(o, " |\n");
    }
}

void ppl_data_md(struct sbuf *o, const struct ppl_data_src *d, int n) {
    for (int i = 0; i < n; i++) {
        const struct data_provenance *p = &d[i].prov;
        sbuf_printf(o, "| data: %s | %s split, ", d[i].task->name, d[i].task->split);
        md_code(o, p->source);
        sbuf_printf(o, ", SHA-256 `%.16s…` (%s)%s |\n", p->sha256,
                    p->pinned > 0 ? "pinned" : p->pinned == 0 ? "*not pinned*" : "no pin known",
                    p->preprocessed ? ", a third party's preprocessed text" : "");
    }
}

void ppl_data_json(struct jsonw *w, const struct ppl_data_src *d, int n) {
    if (!n) return;
    jsonw_object(w, "data");
    for (int i = 0; i < n; i++) {
        const struct data_provenance *p = &d[i].prov;
        jsonw_object(w, d[i].task->name);
        jsonw_str(w, "source", p->source);
        jsonw_str(w, "split", d[i].task->split);
        jsonw_str(w, "sha256", p->sha256);
        jsonw_bool(w, "preprocessed", p->preprocessed);
        if (p->dataset[0]) jsonw_str(w, "dataset", p->dataset);
        if (p->revision[0]) jsonw_str(w, "revision", p->revision);
        if (p->pinned >= 0) jsonw_bool(w, "pinned", p->pinned);
        jsonw_end(w);
    }
    jsonw_end(w);
}

static void ppl_json(const struct ppl_report *r, struct sbuf *out) {
    const struct ppl_summary *s = r->sum;
    struct jsonw w = {0};
    jsonw_object(&w, NULL);
    jsonw_str(&w, "input", r->input);
    jsonw_int(&w, "context", r->context);
    jsonw_int(&w, "stride", r->stride);
    jsonw_int(&w, "targets", s->n);
    jsonw_str(&w, "unit", r->unit_name);
    jsonw_int(&w, "units", s->n_units);
    if (r->unit_bos >= 0) jsonw_int(&w, "unit_bos", r->unit_bos);
    if (r->unit_note) jsonw_str(&w, "unit_note", r->unit_note);
    jsonw_num(&w, "bytes", s->bytes);
    jsonw_str(&w, "bytes_rule", r->bytes_rule);
    if (r->ttt) {
        jsonw_str(&w, "ttt", r->ttt);
        jsonw_str(&w, "ttt_source", r->ttt_source);
    }
    if (r->split) {  // the layout the scores depend on
        jsonw_object(&w, "split_docs");
        jsonw_str(&w, "layout", r->val_tokens ? "modded-nanogpt val" : "parameter-golf eval_val");
        jsonw_int(&w, "doc_start", r->doc_start);
        if (r->val_tokens) {
            jsonw_int(&w, "chunk_tokens", r->rank_batch);
            jsonw_int(&w, "val_tokens", r->val_tokens);
        }
        if (r->ranks) {
            jsonw_int(&w, "ranks", r->ranks);
            jsonw_int(&w, "rank_batch_tokens", r->rank_batch);
        }
        jsonw_end(&w);
    }
    jsonw_array(&w, "models");
    for (int m = 0; m < s->n_models; m++) {
        jsonw_object(&w, NULL);
        jsonw_str(&w, "label", lab(r, m));
        jsonw_str(&w, "path", r->path[m] ? r->path[m] : "");
        if (r->xsa[m]) jsonw_str(&w, "xsa_layers", r->xsa[m]);  // which of A and B is the XSA model
        jsonw_num(&w, "nats_per_token", s->nll[m]);
        jsonw_num(&w, "bits_per_token", s->bits[m]);
        jsonw_num(&w, "bits_per_byte", s->bpb[m]);
        jsonw_num(&w, "perplexity", s->ppl[m]);
        jsonw_num(&w, "top1", s->acc[m]);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    if (s->n_models == 2) {
        jsonw_object(&w, "delta");
        jsonw_num(&w, "delta", s->delta);
        jsonw_num(&w, "lo", s->dlo);
        jsonw_num(&w, "hi", s->dhi);
        jsonw_num(&w, "se", s->se);
        jsonw_num(&w, "df", s->df);
        jsonw_bool(&w, "significant", s->real);
        jsonw_end(&w);
    }
    jsonw_array(&w, "buckets");
    for (int i = 0; i < s->n_buckets; i++) {
        const struct ppl_bucket *b = &s->bucket[i];
        jsonw_object(&w, NULL);
        jsonw_int(&w, "lo", b->lo);
        jsonw_int(&w, "hi", b->hi - 1);
        jsonw_int(&w, "targets", b->n);
        jsonw_int(&w, "units", b->n_units);
        jsonw_num(&w, "nats_a", b->nll[0]);
        if (s->n_models == 2) {
            jsonw_num(&w, "nats_b", b->nll[1]);
            jsonw_num(&w, "delta", b->delta);
            jsonw_num(&w, "lo_ci", b->dlo);
            jsonw_num(&w, "hi_ci", b->dhi);
            jsonw_num(&w, "se", b->se);
            jsonw_num(&w, "df", b->df);
            jsonw_bool(&w, "significant", b->real);
        }
        jsonw_end(&w);
    }
    jsonw_end(&w);
    if (s->has_kl) {
        jsonw_object(&w, "kl");
        jsonw_num(&w, "mean", s->kl_mean);
        jsonw_num(&w, "max", s->kl_max);
        jsonw_num(&w, "top1_agreement", s->agree);
        jsonw_array(&w, "top");
        for (int i = 0; i < r->n_top; i++) {
            const struct ppl_top *t = &r->top[i];
            jsonw_object(&w, NULL);
            jsonw_int(&w, "target", t->target);
            jsonw_int(&w, "unit", t->unit);
            jsonw_int(&w, "position", t->ctx);
            jsonw_str(&w, "token", t->text);
            jsonw_num(&w, "kl", t->kl);
            jsonw_str(&w, "top_a", t->top_a);
            jsonw_str(&w, "top_b", t->top_b);
            jsonw_num(&w, "nll_a", t->nll_a);
            jsonw_num(&w, "nll_b", t->nll_b);
            jsonw_end(&w);
        }
        jsonw_end(&w);
        jsonw_end(&w);
    }
    ppl_data_json(&w, r->data, r->n_data);
    jsonw_object(&w, "interval");
    jsonw_str(&w, "method", STATS_CLUSTER_RATIO_METHOD);
    jsonw_num(&w, "level", r->level);
    jsonw_end(&w);
    if (r->command) jsonw_str(&w, "command", r->command);
    jsonw_end(&w);
    sbuf_append(out, w.out.s, w.out.n);
    jsonw_free(&w);
}

// Two models: delta B - A per position bucket with its interval; one model: nats per bucket.
static void ppl_chart(const struct ppl_report *r, struct sbuf *out) {
    const struct ppl_summary *s = r->sum;
    int n = s->n_buckets, two = s->n_models == 2;
    double x[PPL_MAX_BUCKETS], y[PPL_MAX_BUCKETS], lo[PPL_MAX_BUCKETS], hi[PPL_MAX_BUCKETS];
    for (int i = 0; i < n; i++) {
        const struct ppl_bucket *b = &s->bucket[i];
        x[i] = b->lo;
        y[i] = two ? b->delta : b->nll[0];
        lo[i] = two ? b->dlo : NAN;
        hi[i] = two ? b->dhi : NAN;
    }
    char series[160];
    snprintf(series, sizeof series, "%s%s%s", two ? lab(r, 1) : lab(r, 0), two ? " - " : "", two ? lab(r, 0) : "");
    const char *names[1] = {series};
    svg_line_chart(two ? "Loss delta B - A by position (negative: B better)" : "Loss by position",
                          "first position of the bucket (tokens of context)",
                          two ? "delta nats/token, shaded: interval" : "nats/token", 1, names, 1, n, x, NULL, y,
                          two ? lo : NULL, two ? hi : NULL, out);
}

static void md_cb(const void *r, const char *chart_rel, struct sbuf *o) { ppl_markdown(r, chart_rel, o); }
static void chart_cb(const void *r, struct sbuf *o) { ppl_chart(r, o); }
static void json_cb(const void *r, struct sbuf *o) { ppl_json(r, o); }

int ppl_write_report(const struct ppl_report *r, const char *md_path, const char *json_path, xsa_error *err) {
    static const struct report_renderers rr = {md_cb, chart_cb, json_cb};
    return report_write_bundle(&rr, r, md_path, "_position.svg", json_path, err);
}
