// report.h: Markdown pieces shared by `compare` and `report` (model headers, provenance,
// data digests), and the multi-model report of `xsa-eval report`.
#ifndef XSA_REPORTS_REPORT_H
#define XSA_REPORTS_REPORT_H

#include <stdio.h>

#include "common/error.h"
#include "common/vec.h"
#include "eval/results.h"

// "### <heading>" and a two-column table: results file, checkpoint, architecture, parameters,
// XSA layers, weights digest, tokenizer, device, version, command.
void report_model_section(struct sbuf *o, const char *prefix, const char *label, const struct results *r,
                          const char *results_path);

// Provenance of n runs side by side: limit/few-shot, versions, timings, throughput, and the
// data digests per task (short; "same" where every run agrees).        rs, labels: (n)
void report_provenance(struct sbuf *o, const struct results *const *rs, const char *const *labels, int n);

// A note when both runs scored the same model (the same weights digest, or the same Hub repo and
// commit): their deltas then measure only the evaluation settings, not two checkpoints.
void report_same_model_note(struct sbuf *o, const struct results *a, const struct results *b);

// `xsa-eval report`: a model-by-task table of each task's preferred metric +- stderr for any
// number of runs, group averages, a bar chart reference (`chart_base`_acc.svg, NULL: none),
// model sections and provenance.                                  rs, paths: (n)
void report_markdown(const struct results *const *rs, const char *const *paths, int n, const char *command,
                     const char *chart_base, struct sbuf *out);
// The bar chart that report_markdown references.
void report_chart(const struct results *const *rs, int n, struct sbuf *out);
// "Report command: `command`" and a newline; nothing when command is NULL.
void report_command(struct sbuf *o, const char *command);

// Formatting helpers (shared with eval/compare.c).
void md_code(struct sbuf *o, const char *s);      // `s` exactly, in a table cell (| escaped; fenced past its backticks)
void md_code_prose(struct sbuf *o, const char *s); // the same outside a table (| as is)
// Text from a file (a model name, a device) as Markdown shows it, literally: control characters
// as spaces, < > & as entities, Markdown punctuation backslash-escaped.
void md_text(struct sbuf *o, const char *s);
// ![alt](base suffix), the file name percent-encoded where Markdown would misread it.
void md_image(struct sbuf *o, const char *alt, const char *base, const char *suffix);
struct jsonw;
// The scores of a paired comparison as the JSON outputs spell them (check's verdict, compare's
// --json): `ka` and `kb` the two fractions under the given keys, then "delta" and "ci": [lo, hi]
// in points; 10 significant digits (no interval: null).
void report_json_delta(struct jsonw *w, const char *ka, double a, const char *kb, double b, double delta, double lo,
                       double hi);
// A task's row as both open it: "task", "metric", "n", report_json_delta's keys, "mcnemar_p".
struct compare_row;
void report_json_task(struct jsonw *w, const struct compare_row *r, const char *ka, const char *kb);
void report_fmt_p(double p, char buf[32]);                        // a p-value as the reports print it
void report_fmt_ci(double lo, double hi, char buf[48]);            // "[-1.20, +3.40]", or "N/A" (no interval)
void report_thousands(long long x, char buf[32]);                 // 1234567 -> "1,234,567"
// A metric value with `decimals` places, or in scientific notation from 1e6 on (a perplexity
// can reach 1e300, which "%f" would print as 300 digits); NaN "N/A", an infinity "overflow".
void report_value(double v, int decimals, char buf[32]);
// A report of three renderings of ctx: Markdown (linking the chart at chart_rel, NULL: none),
// one SVG chart and JSON.
struct report_renderers {
    void (*markdown)(const void *ctx, const char *chart_rel, struct sbuf *out);
    void (*chart)(const void *ctx, struct sbuf *out);
    void (*json)(const void *ctx, struct sbuf *out);
};
// Renders ctx and writes the Markdown to md_path with the chart `<md_path minus .md><suffix>`
// beside it, and the JSON to json_path, all or none (outdir_write_set); a NULL md_path prints
// the Markdown on stdout and writes no chart; a NULL json_path writes no JSON.
int report_write_bundle(const struct report_renderers *r, const void *ctx, const char *md_path, const char *chart_suffix,
                        const char *json_path, xsa_error *err);
// "<dir>/<name minus .md>" of a report path: where its charts go; and "<name minus .md>".
// Returns 1, or 0 (nothing filled) when there are no charts: no report file (md_path NULL), or
// a report written into a stream (/dev/stdout, a pipe: outdir_is_stream).
int report_chart_paths(const char *md_path, struct sbuf *full_base, struct sbuf *rel_base);
// "xsa-eval <argv[0]> <argv[1]> ..." (arguments with spaces or quotes single-quoted): the
// command line as the user typed it, without the binary's path.
void report_command_line(int argc, char **argv, struct sbuf *out);
// The run's label: model name, else the results file name.
const char *report_label(const struct results *r);

// The table `run` prints after scoring a model: each task's metrics, stderrs and documents.
void report_run_table(const struct results *r, FILE *f);

#endif
