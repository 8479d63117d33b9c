// report.c: Markdown pieces shared by compare and report, and the model-by-task table of `xsa-eval report` (report.h).
#include "reports/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/xalloc.h"
#include "eval/compare.h"
#include "eval/outdir.h"
#include "reports/svg.h"

// A code span of s; `cell`: it stands in a table cell, where a '|' would end the cell (GFM takes
// "\|" there, inside a code span too; elsewhere a backslash in a code span is shown as is).
static void code_span(struct sbuf *o, const char *s, int cell) {
    // A fence one backtick longer than the longest run inside, so that backticks stay text.
    int run = 0, longest = 0;
    for (const char *c = s; *c; c++) run = *c == '`' ? run + 1 : 0, longest = run > longest ? run : longest;
    size_t n = strlen(s);
    // CommonMark strips one space each side of a span that starts and ends with one (and is not all
    // spaces): a pad keeps a backtick apart from the fence, and those spaces as they are.
    int pad = n && (s[0] == '`' || s[n - 1] == '`' || (s[0] == ' ' && s[n - 1] == ' ' && strspn(s, " ") < n));
    for (int k = 0; k <= longest; k++) sbuf_puts(o, "`");
    if (pad) sbuf_puts(o, " ");
    for (; *s; s++) {
        if (*s == '|' && cell) sbuf_puts(o, "\\|");
        else if (*s == '\n' || *s == '\r') sbuf_puts(o, " ");
        else sbuf_append(o, s, 1);
    }
    if (pad) sbuf_puts(o, " ");
    for (int k = 0; k <= longest; k++) sbuf_puts(o, "`");
}

void md_code(struct sbuf *o, const char *s) { code_span(o, s, 1); }
void md_code_prose(struct sbuf *o, const char *s) { code_span(o, s, 0); }

void md_text(struct sbuf *o, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) sbuf_puts(o, " ");  // a newline would end the table row or heading
        else if (c == '<') sbuf_puts(o, "&lt;");
        else if (c == '>') sbuf_puts(o, "&gt;");
        else if (c == '&') sbuf_puts(o, "&amp;");
        else if (strchr("\\`*_[]|#!~", c)) sbuf_printf(o, "\\%c", c);
        else sbuf_append(o, s, 1);
    }
}

void md_image(struct sbuf *o, const char *alt, const char *base, const char *suffix) {
    sbuf_printf(o, "![%s](", alt);
    // A file name is a relative URL there: what would end it, or be read as a query or fragment,
    // is percent-encoded ("my report (v1)" -> "my%20report%20%28v1%29").
    for (int part = 0; part < 2; part++)
        for (const unsigned char *c = (const unsigned char *)(part ? suffix : base); *c; c++) {
            if (*c <= 0x20 || *c == 0x7f || strchr("()<>%#?&\\\"'[]`", *c)) sbuf_printf(o, "%%%02X", *c);
            else sbuf_append(o, (const char *)c, 1);
        }
    sbuf_puts(o, ")");
}

void report_fmt_ci(double lo, double hi, char buf[48]) {
    if (isfinite(lo) && isfinite(hi)) snprintf(buf, 48, "[%+.2f, %+.2f]", lo, hi);
    else snprintf(buf, 48, "N/A");  // fewer than two documents: nothing to resample
}

void report_fmt_p(double p, char buf[32]) {
    if (isnan(p)) snprintf(buf, 32, "-");
    else if (p >= 0.001) snprintf(buf, 32, "%.3f", p);
    else if (p < 1e-300) snprintf(buf, 32, "<1e-300");  // below what a double holds to print
    else snprintf(buf, 32, "%.1e", p);
}

static const char *report_short_digest(const char *hex, char buf[17]) {
    if (!hex || !hex[0]) return "-";
    snprintf(buf, 17, "%.12s", hex);
    return buf;
}

void report_thousands(long long x, char buf[32]) {
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%lld", x < 0 ? -x : x);
    int n = (int)strlen(tmp), j = 0;
    if (x < 0) buf[j++] = '-';
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0) buf[j++] = ',';
        buf[j++] = tmp[i];
    }
    buf[j] = '\0';
}

void report_value(double v, int decimals, char buf[32]) {
    if (isnan(v)) snprintf(buf, 32, "N/A");
    else if (!isfinite(v)) snprintf(buf, 32, "overflow");
    else if (fabs(v) >= 1e6) snprintf(buf, 32, "%.4e", v);
    else snprintf(buf, 32, "%.*f", decimals, v);
}

void report_command_line(int argc, char **argv, struct sbuf *out) {
    sbuf_puts(out, "xsa-eval");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] && !strpbrk(a, " \t\n'\"$`\\|&;<>()*?[]{}~!#")) {
            sbuf_printf(out, " %s", a);
            continue;
        }
        sbuf_puts(out, " '");
        for (; *a; a++) {
            if (*a == '\'') sbuf_puts(out, "'\\''");
            else sbuf_append(out, a, 1);
        }
        sbuf_puts(out, "'");
    }
}

const char *report_label(const struct results *r) { return r->model.name[0] ? r->model.name : "model"; }

int report_chart_paths(const char *md_path, struct sbuf *full_base, struct sbuf *rel_base) {
    if (!md_path || outdir_is_stream(md_path)) return 0;
    size_t n = strlen(md_path);
    if (n > 3 && !strcmp(md_path + n - 3, ".md")) n -= 3;
    const char *slash = strrchr(md_path, '/');
    size_t name_at = slash && (size_t)(slash - md_path) < n ? (size_t)(slash - md_path) + 1 : 0;
    sbuf_append(full_base, md_path, n);
    sbuf_append(rel_base, md_path + name_at, n - name_at);
    return 1;
}

static void row2(struct sbuf *o, const char *k, struct sbuf *v) {  // a table row; empties v for the next
    sbuf_printf(o, "| %s | %s |\n", k, v->s);
    v->n = 0;
}

void report_model_section(struct sbuf *o, const char *prefix, const char *label, const struct results *r,
                          const char *results_path) {
    const struct model_info *m = &r->model;
    char d1[17], d2[17], num[32];
    struct sbuf cell = {0};
    sbuf_printf(o, "### %s", prefix);
    md_text(o, label);
    sbuf_puts(o, "\n\n| | |\n|---|---|\n");
    if (results_path) {
        md_code(&cell, results_path);
        row2(o, "results", &cell);
    }
    md_code(&cell, m->path[0] ? m->path : "-");
    sbuf_printf(&cell, " (%s, %s)", m->format[0] ? m->format : "?", m->dtype[0] ? m->dtype : "?");
    row2(o, "checkpoint", &cell);
    if (m->hub_repo[0]) {
        md_code(&cell, m->hub_repo);
        sbuf_puts(&cell, " @ ");
        md_text(&cell, m->hub_revision);
        sbuf_printf(&cell, " (commit `%.12s`)", m->hub_commit);
        row2(o, "Hugging Face repo", &cell);
    }
    sbuf_printf(&cell, "%s: %d layers, d_model %d, %d heads", m->arch[0] ? m->arch : "?", m->n_layer, m->d_model,
                m->n_head);
    if (m->n_kv_head && m->n_kv_head != m->n_head) sbuf_printf(&cell, " (%d KV)", m->n_kv_head);
    sbuf_printf(&cell, ", vocab %d, context %d", m->vocab_size, m->max_length);
    row2(o, "architecture", &cell);
    report_thousands(m->n_params, num);
    sbuf_printf(&cell, "%.1fM (%s)", (double)m->n_params / 1e6, num);
    row2(o, "parameters", &cell);
    md_text(&cell, m->xsa_layers[0] ? m->xsa_layers : "none");
    // source "none": the checkpoint declares no XSA layers ("from none" read as a typo)
    if (!strcmp(m->xsa_source, "none")) sbuf_puts(&cell, " (none declared)");
    else if (m->xsa_source[0]) sbuf_printf(&cell, " (from %s)", m->xsa_source);
    row2(o, "XSA layers", &cell);
    if (r->has_step) {  // what report --trend plots it at, and where run found it
        sbuf_printf(&cell, "%d", r->step);
        if (r->step_source[0]) sbuf_printf(&cell, " (from %s)", r->step_source);
        row2(o, "training step", &cell);
    }
    if (m->weights_prefix[0]) {
        md_code(&cell, m->weights_prefix);
        sbuf_puts(&cell, " dropped from every tensor name");
        row2(o, "weights prefix", &cell);
    }
    sbuf_printf(&cell, "`%s`", report_short_digest(m->weights_sha256, d1));
    row2(o, "weights sha256", &cell);
    if (m->tokenizer[0]) {
        md_code(&cell, m->tokenizer);
        sbuf_printf(&cell, " (sha256 `%s`)", report_short_digest(m->tokenizer_sha256, d2));
        row2(o, "tokenizer", &cell);
    }
    md_text(&cell, r->device[0] ? r->device : "?");
    if (r->device_desc[0]) {
        sbuf_puts(&cell, ", ");
        md_text(&cell, r->device_desc);
    }
    // The CPU backend's description already names its thread count.
    if (!strstr(r->device_desc, "thread")) sbuf_printf(&cell, ", %d threads", r->threads);
    row2(o, "device", &cell);
    md_code(&cell, r->command && r->command[0] ? r->command : "-");
    row2(o, "command", &cell);
    sbuf_puts(o, "\n");
    sbuf_free(&cell);
}

// " label |" for each run: a header row's cells.
static void label_cells(struct sbuf *o, const char *const *labels, int n) {
    for (int i = 0; i < n; i++) {
        sbuf_puts(o, " ");
        md_text(o, labels[i]);
        sbuf_puts(o, " |");
    }
}

void report_same_model_note(struct sbuf *o, const struct results *a, const struct results *b) {
    const struct model_info *x = &a->model, *y = &b->model;
    int same_weights = x->weights_sha256[0] && !strcmp(x->weights_sha256, y->weights_sha256);
    int same_commit = x->hub_repo[0] && x->hub_commit[0] && !strcmp(x->hub_repo, y->hub_repo) &&
                      !strcmp(x->hub_commit, y->hub_commit);
    if (!same_weights && !same_commit) return;
    char d[17];
    sbuf_puts(o, "> [!NOTE]\n> Both runs scored the same model (");
    if (same_commit) {
        md_code(o, x->hub_repo);
        sbuf_printf(o, " at commit `%.12s`%s", x->hub_commit, same_weights ? ", " : "");
    }
    if (same_weights) sbuf_printf(o, "weights sha256 `%s`", report_short_digest(x->weights_sha256, d));
    sbuf_puts(o, "): any delta comes from the evaluation settings (XSA layers, dtype, data, limits), not from "
                 "two checkpoints.\n\n");
}

// "used / rows" of a task when every file has the same, else each file's ("A 14 / 14, B 6 / 14").
static void docs_used(struct sbuf *o, const struct results *const *rs, const char *const *labels, int n,
                      const struct task_result *tr) {
    int same = 1;
    for (int j = 0; j < n; j++) {
        const struct task_result *u = results_find_task(rs[j], tr->name);
        same &= !u || (u->n_docs == tr->n_docs && u->n_docs_original == tr->n_docs_original);
    }
    if (same) {
        sbuf_printf(o, "%d / %d |", tr->n_docs, tr->n_docs_original);
        return;
    }
    for (int j = 0, k = 0; j < n; j++) {
        const struct task_result *u = results_find_task(rs[j], tr->name);
        if (!u) continue;
        sbuf_puts(o, k++ ? ", " : "");
        md_text(o, labels[j]);
        sbuf_printf(o, " %d / %d", u->n_docs, u->n_docs_original);
    }
    sbuf_puts(o, " |");
}

void report_provenance(struct sbuf *o, const struct results *const *rs, const char *const *labels, int n) {
    sbuf_puts(o, "| |");
    label_cells(o, labels, n);
    sbuf_puts(o, "\n|---|");
    for (int i = 0; i < n; i++) sbuf_puts(o, "---|");
    sbuf_puts(o, "\n| xsa-eval version |");
    for (int i = 0; i < n; i++) sbuf_printf(o, " %s |", rs[i]->version[0] ? rs[i]->version : "?");
    sbuf_puts(o, "\n| limit / few-shot |");
    for (int i = 0; i < n; i++) {
        char lim[32];
        sbuf_printf(o, " %s / %d |", results_limit_text(rs[i], lim, sizeof lim), rs[i]->num_fewshot);
    }
    sbuf_puts(o, "\n| load / tokenize / score / total (s) |");
    for (int i = 0; i < n; i++)
        sbuf_printf(o, " %.2f / %.2f / %.2f / %.2f |", rs[i]->load_s, rs[i]->tokenize_s, rs[i]->score_s, rs[i]->total_s);
    sbuf_puts(o, "\n| requests / tokens scored / tokens computed |");
    for (int i = 0; i < n; i++) {
        char a[32], b[32], c[32];
        report_thousands(rs[i]->requests, a);
        report_thousands(rs[i]->tokens_scored, b);
        report_thousands(rs[i]->tokens_computed, c);
        sbuf_printf(o, " %s / %s / %s |", a, b, c);
    }
    sbuf_puts(o, "\n| throughput (scoring) |");
    for (int i = 0; i < n; i++) {
        if (rs[i]->score_s > 0) {
            char a[32];
            report_thousands((long long)llround((double)rs[i]->tokens_computed / rs[i]->score_s), a);
            // (the requests scored in that launch: not those its journal or request cache gave back)
            sbuf_printf(o, " %s tokens/s, %.1f requests/s |", a,
                        (double)(rs[i]->requests - rs[i]->requests_reused) / rs[i]->score_s);
        } else {
            sbuf_puts(o, " - |");
        }
    }
    sbuf_puts(o, "\n\nData (canonical JSONL sha256, first 12 hex digits; *pinned*: the rows the registry pins, as the "
                 "original files give them; *not pinned*: other rows, e.g. local files or an upstream edit):\n\n"
                 "| task | split | docs used / rows |");
    label_cells(o, labels, n);
    sbuf_puts(o, "\n|---|---|--:|");
    for (int i = 0; i < n; i++) sbuf_puts(o, "---|");
    sbuf_puts(o, "\n");
    // Union of tasks in first-seen order.
    for (int i = 0; i < n; i++) {
        for (int t = 0; t < rs[i]->n_tasks; t++) {
            const struct task_result *tr = &rs[i]->tasks[t];
            int seen = 0;
            for (int j = 0; j < i && !seen; j++) seen = results_find_task(rs[j], tr->name) != NULL;
            if (seen) continue;
            sbuf_printf(o, "| %s | %s | ", tr->name, tr->split[0] ? tr->split : "-");
            docs_used(o, rs, labels, n, tr);
            for (int j = 0; j < n; j++) {
                const struct task_result *u = results_find_task(rs[j], tr->name);
                char d[17];
                if (!u) sbuf_puts(o, " - |");
                else sbuf_printf(o, " `%s`%s%s |", report_short_digest(u->data_sha256, d),
                                 u->data_pinned > 0 ? " pinned" : u->data_pinned == 0 ? " *not pinned*" : "",
                                 strcmp(u->data_sha256, tr->data_sha256) ? " (differs)" : "");
            }
            sbuf_puts(o, "\n");
        }
    }
    sbuf_puts(o, "\n");
}

// Preferred metric value and stderr of `t` in percent (perplexity as is).
static void pref_value(const struct task_result *t, double *v, double *se, const char **metric) {
    *metric = results_preferred_metric(t);
    int m = results_metric_index(t, *metric);
    *v = m >= 0 ? t->value[m] * 100 : NAN;
    *se = m >= 0 ? t->stderr_[m] * 100 : NAN;
}

// Union of task names over the runs, first-seen order.                        names: (max)
static int task_union(const struct results *const *rs, int n, const char **names, int max) {
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int t = 0; t < rs[i]->n_tasks; t++) {
            int seen = 0;
            for (int j = 0; j < k && !seen; j++) seen = !strcmp(names[j], rs[i]->tasks[t].name);
            if (!seen && k < max) names[k++] = rs[i]->tasks[t].name;
        }
    return k;
}

void report_chart(const struct results *const *rs, int n, struct sbuf *out) {
    const char *names[128];
    int k = task_union(rs, n, names, 128);
    double *val = xsa_calloc((size_t)(n * k), sizeof *val), *se = xsa_calloc((size_t)(n * k), sizeof *se);  // (n, k)
    const char **series = xsa_calloc((size_t)n, sizeof *series);
    for (int s = 0; s < n; s++) {
        series[s] = report_label(rs[s]);
        for (int t = 0; t < k; t++) {
            const struct task_result *tr = results_find_task(rs[s], names[t]);
            const char *metric;
            val[s * k + t] = se[s * k + t] = NAN;
            if (tr) pref_value(tr, &val[s * k + t], &se[s * k + t], &metric);
        }
    }
    svg_bars_chart("Per-task score (preferred metric)", names, k, series, n, val, se, out);
    free(val);
    free(se);
    free(series);
}

void report_markdown(const struct results *const *rs, const char *const *paths, int n, const char *command,
                     const char *chart_base, struct sbuf *o) {
    const char *names[128];
    int k = task_union(rs, n, names, 128);
    const char **labels = xsa_calloc((size_t)n, sizeof *labels);
    for (int i = 0; i < n; i++) labels[i] = report_label(rs[i]);
    sbuf_printf(o, "# xsa-eval report: %d run%s\n\n", n, n == 1 ? "" : "s");
    sbuf_puts(o, "Each cell is the task's preferred metric (acc_norm where lm-eval defines it, else acc) "
                 "in percent, \xc2\xb1 lm-eval's standard error.\n\n| task | metric |");
    label_cells(o, labels, n);
    sbuf_puts(o, "\n|---|---|");
    for (int i = 0; i < n; i++) sbuf_puts(o, "--:|");
    sbuf_puts(o, "\n");
    for (int t = 0; t < k; t++) {
        const char *metric = "acc";
        for (int i = 0; i < n; i++) {
            const struct task_result *tr = results_find_task(rs[i], names[t]);
            if (tr) { metric = results_preferred_metric(tr); break; }
        }
        sbuf_printf(o, "| %s | %s |", names[t], metric);
        for (int i = 0; i < n; i++) {
            const struct task_result *tr = results_find_task(rs[i], names[t]);
            double v, se;
            const char *m;
            if (!tr) { sbuf_puts(o, " - |"); continue; }
            pref_value(tr, &v, &se, &m);
            if (isnan(se)) sbuf_printf(o, " %.2f |", v);
            else sbuf_printf(o, " %.2f \xc2\xb1 %.2f |", v, se);
        }
        sbuf_puts(o, "\n");
        // LAMBADA perplexity beside its accuracy.
        int has_ppl = 0;
        for (int i = 0; i < n; i++) {
            const struct task_result *tr = results_find_task(rs[i], names[t]);
            has_ppl |= tr && results_metric_index(tr, "perplexity") >= 0;
        }
        if (has_ppl) {
            sbuf_printf(o, "| %s | perplexity |", names[t]);
            for (int i = 0; i < n; i++) {
                const struct task_result *tr = results_find_task(rs[i], names[t]);
                int m = tr ? results_metric_index(tr, "perplexity") : -1;
                if (m < 0) sbuf_puts(o, " - |");
                else if (!isfinite(tr->value[m])) sbuf_puts(o, " n/a (overflow) |");  // null in the file
                else {
                    char v[32], se[32];
                    report_value(tr->value[m], 2, v);
                    report_value(tr->stderr_[m], 2, se);
                    if (isnan(tr->stderr_[m])) sbuf_printf(o, " %s |", v);
                    else sbuf_printf(o, " %s \xc2\xb1 %s |", v, se);
                }
            }
            sbuf_puts(o, "\n");
        }
    }
    // Group averages of the preferred metric.
    for (int g = 0; g < 2; g++) {
        int members = 0;
        for (int t = 0; t < k; t++) members += g == 1 || results_is_paper_task(names[t]);
        if (!members) continue;
        sbuf_printf(o, "| **%s (%d task%s)** | mean |", g == 0 ? "paper" : "all", members, members == 1 ? "" : "s");
        for (int i = 0; i < n; i++) {
            double sum = 0;
            int have = 0;
            for (int t = 0; t < rs[i]->n_tasks; t++) {
                const struct task_result *tr = &rs[i]->tasks[t];
                if (g == 0 && !results_is_paper_task(tr->name)) continue;
                double v, se;
                const char *m;
                pref_value(tr, &v, &se, &m);
                sum += v;
                have++;
            }
            if (!have) sbuf_puts(o, " - |");
            else if (have == members) sbuf_printf(o, " **%.2f** |", sum / have);
            else sbuf_printf(o, " **%.2f** (%d of %d) |", sum / have, have, members);
        }
        sbuf_puts(o, "\n");
    }
    if (chart_base) {
        sbuf_puts(o, "\n");
        md_image(o, "Per-task score of each run", chart_base, "_acc.svg");
        sbuf_puts(o, "\n");
    }
    sbuf_puts(o, "\n## Models\n\n");
    for (int i = 0; i < n; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%d. ", i + 1);
        report_model_section(o, prefix, labels[i], rs[i], paths ? paths[i] : NULL);
    }
    sbuf_puts(o, "## Provenance\n\n");
    report_provenance(o, rs, labels, n);
    report_command(o, command);
    free(labels);
}

void report_json_delta(struct jsonw *w, const char *ka, double a, const char *kb, double b, double delta, double lo,
                       double hi) {
    jsonw_num_prec(w, ka, a, 10);
    jsonw_num_prec(w, kb, b, 10);
    jsonw_num_prec(w, "delta", delta, 10);
    jsonw_array(w, "ci");
    jsonw_num_prec(w, NULL, lo, 10);
    jsonw_num_prec(w, NULL, hi, 10);
    jsonw_end(w);
}

void report_json_task(struct jsonw *w, const struct compare_row *r, const char *ka, const char *kb) {
    jsonw_str(w, "task", r->task);
    jsonw_str(w, "metric", r->metric);
    jsonw_int(w, "n", r->n);
    report_json_delta(w, ka, r->a, kb, r->b, r->delta, r->lo, r->hi);
    jsonw_num_prec(w, "mcnemar_p", r->p, 10);
}

void report_command(struct sbuf *o, const char *command) {
    if (!command) return;
    sbuf_puts(o, "Report command: ");
    md_code_prose(o, command);
    sbuf_puts(o, "\n");
}

void report_run_table(const struct results *r, FILE *f) {
    fprintf(f, "\n%s (%s, %s, XSA layers: %s)\n\n", r->model.name, r->model.arch, r->device, r->model.xsa_layers);
    fprintf(f, "| task | metric | value | ± stderr | n |\n|---|---|---:|---:|---:|\n");
    for (int i = 0; i < r->n_tasks; i++) {
        const struct task_result *t = &r->tasks[i];
        for (int k = 0; k < t->n_metrics; k++) {
            char v[32], se[32];
            report_value(t->value[k], 4, v);
            report_value(t->stderr_[k], 4, se);
            fprintf(f, "| %s | %s | %s | %s | %d |\n", k == 0 ? t->name : "", t->metric[k], v, se, t->n_docs);
        }
    }
    fflush(f);
}

int report_write_bundle(const struct report_renderers *r, const void *ctx, const char *md_path, const char *chart_suffix,
                        const char *json_path, xsa_error *err) {
    struct sbuf md = {0}, full = {0}, rel = {0}, svg = {0}, svg_path = {0}, js = {0};
    int charts = report_chart_paths(md_path, &full, &rel);
    r->markdown(ctx, charts ? rel.s : NULL, &md);
    if (json_path) r->json(ctx, &js);
    if (charts) {
        r->chart(ctx, &svg);
        sbuf_printf(&svg_path, "%s%s", full.s, chart_suffix);
    }
    const char *paths[3], *data[3];
    size_t lens[3];
    int n = 0, rc = 0;
    if (charts) paths[n] = svg_path.s, data[n] = svg.s, lens[n++] = svg.n;
    if (md_path) paths[n] = md_path, data[n] = md.s, lens[n++] = md.n;
    if (json_path) paths[n] = json_path, data[n] = js.s, lens[n++] = js.n;
    if (n) rc = outdir_write_set(n, paths, data, lens, err);
    // Markdown on stdout unless the JSON went there: one document a parser can read.
    if (!rc && !md_path && !outdir_is_stdout(json_path)) fwrite(md.s, 1, md.n, stdout);
    sbuf_free(&md); sbuf_free(&full); sbuf_free(&rel); sbuf_free(&svg); sbuf_free(&svg_path); sbuf_free(&js);
    return rc;
}
