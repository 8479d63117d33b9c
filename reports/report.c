// report.c: Markdown pieces shared by compare and report, and the model-by-task table of `xsa-eval report` (report.h).
#include "reports/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/outdir.h"
#include "reports/svg.h"

int md_code(struct sbuf *o, const char *s) {
    int rc = sbuf_puts(o, "`");
    for (; *s && !rc; s++) {
        if (*s == '|') rc = sbuf_puts(o, "\\|");
        else if (*s == '\n' || *s == '`') rc = sbuf_puts(o, " ");
        else rc = sbuf_append(o, s, 1);
    }
    if (!rc) rc = sbuf_puts(o, "`");
    return rc;
}

int md_text(struct sbuf *o, const char *s) {
    int rc = 0;
    for (; *s && !rc; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) rc = sbuf_puts(o, " ");  // a newline would end the table row or heading
        else if (c == '<') rc = sbuf_puts(o, "&lt;");
        else if (c == '>') rc = sbuf_puts(o, "&gt;");
        else if (c == '&') rc = sbuf_puts(o, "&amp;");
        else if (strchr("\\`*_[]|#!", c)) rc = sbuf_printf(o, "\\%c", c);
        else rc = sbuf_append(o, s, 1);
    }
    return rc;
}

void report_fmt_p(double p, char buf[32]) {
    if (isnan(p)) snprintf(buf, 32, "-");
    else if (p >= 0.001) snprintf(buf, 32, "%.3f", p);
    else snprintf(buf, 32, "%.1e", p);
}

const char *report_short_digest(const char *hex, char buf[17]) {
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

int report_command_line(int argc, char **argv, struct sbuf *out) {
    int rc = sbuf_puts(out, "xsa-eval");
    for (int i = 0; i < argc && !rc; i++) {
        const char *a = argv[i];
        if (a[0] && !strpbrk(a, " \t'\"$`\\|&;<>()*?")) { rc = sbuf_printf(out, " %s", a); continue; }
        rc = sbuf_puts(out, " '");
        for (; *a && !rc; a++) rc = *a == '\'' ? sbuf_puts(out, "'\\''") : sbuf_append(out, a, 1);
        if (!rc) rc = sbuf_puts(out, "'");
    }
    return rc;
}

const char *report_label(const struct results *r) { return r->model.name[0] ? r->model.name : "model"; }

int report_chart_paths(const char *md_path, struct sbuf *full_base, struct sbuf *rel_base) {
    size_t n = strlen(md_path);
    if (n > 3 && !strcmp(md_path + n - 3, ".md")) n -= 3;
    const char *slash = strrchr(md_path, '/');
    size_t name_at = slash && (size_t)(slash - md_path) < n ? (size_t)(slash - md_path) + 1 : 0;
    if (sbuf_append(full_base, md_path, n) || sbuf_append(rel_base, md_path + name_at, n - name_at)) return -1;
    return 0;
}

static int row2(struct sbuf *o, const char *k, const char *v) { return sbuf_printf(o, "| %s | %s |\n", k, v); }

int report_model_section(struct sbuf *o, const char *prefix, const char *label, const struct results *r,
                         const char *results_path) {
    const struct model_info *m = &r->model;
    char d1[17], d2[17], num[32];
    struct sbuf cell = {0};
    int rc = sbuf_printf(o, "### %s", prefix) || md_text(o, label) || sbuf_puts(o, "\n\n| | |\n|---|---|\n");
    if (!rc && results_path) rc = md_code(&cell, results_path) || row2(o, "results", cell.s);
    cell.n = 0;
    if (!rc) rc = md_code(&cell, m->path[0] ? m->path : "-") ||
                  sbuf_printf(&cell, " (%s, %s)", m->format[0] ? m->format : "?", m->dtype[0] ? m->dtype : "?") ||
                  row2(o, "checkpoint", cell.s);
    cell.n = 0;
    if (!rc && m->hub_repo[0])
        rc = md_code(&cell, m->hub_repo) || sbuf_puts(&cell, " @ ") || md_text(&cell, m->hub_revision) ||
             sbuf_printf(&cell, " (commit `%.12s`)", m->hub_commit) || row2(o, "Hugging Face repo", cell.s);
    cell.n = 0;
    if (!rc) {
        rc = sbuf_printf(&cell, "%s: %d layers, d_model %d, %d heads", m->arch[0] ? m->arch : "?", m->n_layer,
                         m->d_model, m->n_head);
        if (!rc && m->n_kv_head && m->n_kv_head != m->n_head) rc = sbuf_printf(&cell, " (%d KV)", m->n_kv_head);
        if (!rc) rc = sbuf_printf(&cell, ", vocab %d, context %d", m->vocab_size, m->max_length);
        if (!rc) rc = row2(o, "architecture", cell.s);
    }
    cell.n = 0;
    report_thousands(m->n_params, num);
    if (!rc) rc = sbuf_printf(&cell, "%.1fM (%s)", (double)m->n_params / 1e6, num) || row2(o, "parameters", cell.s);
    cell.n = 0;
    if (!rc) rc = md_text(&cell, m->xsa_layers[0] ? m->xsa_layers : "none") ||
                  (m->xsa_source[0] ? sbuf_printf(&cell, " (from %s)", m->xsa_source) : 0) || row2(o, "XSA layers", cell.s);
    cell.n = 0;
    if (!rc) rc = sbuf_printf(&cell, "`%s`", report_short_digest(m->weights_sha256, d1)) || row2(o, "weights sha256", cell.s);
    cell.n = 0;
    if (!rc && m->tokenizer[0])
        rc = md_code(&cell, m->tokenizer) ||
             sbuf_printf(&cell, " (sha256 `%s`)", report_short_digest(m->tokenizer_sha256, d2)) ||
             row2(o, "tokenizer", cell.s);
    cell.n = 0;
    if (!rc) rc = md_text(&cell, r->device[0] ? r->device : "?") ||
                  (r->device_desc[0] ? sbuf_puts(&cell, ", ") || md_text(&cell, r->device_desc) : 0) ||
                  // The CPU backend's description already names its thread count.
                  (strstr(r->device_desc, "thread") ? 0 : sbuf_printf(&cell, ", %d threads", r->threads)) ||
                  row2(o, "device", cell.s);
    cell.n = 0;
    if (!rc) rc = md_code(&cell, r->command[0] ? r->command : "-") || row2(o, "command", cell.s);
    if (!rc) rc = sbuf_puts(o, "\n");
    sbuf_free(&cell);
    return rc;
}

int report_provenance(struct sbuf *o, const struct results *const *rs, const char *const *labels, int n) {
    int rc = sbuf_puts(o, "| |");
    for (int i = 0; i < n && !rc; i++) rc = sbuf_puts(o, " ") || md_text(o, labels[i]) || sbuf_puts(o, " |");
    if (!rc) rc = sbuf_puts(o, "\n|---|");
    for (int i = 0; i < n && !rc; i++) rc = sbuf_puts(o, "---|");
    if (!rc) rc = sbuf_puts(o, "\n| xsa-eval version |");
    for (int i = 0; i < n && !rc; i++) rc = sbuf_printf(o, " %s |", rs[i]->version[0] ? rs[i]->version : "?");
    if (!rc) rc = sbuf_puts(o, "\n| limit / few-shot |");
    for (int i = 0; i < n && !rc; i++) {
        char lim[32];
        rc = sbuf_printf(o, " %s / %d |", results_limit_text(rs[i], lim, sizeof lim), rs[i]->num_fewshot);
    }
    if (!rc) rc = sbuf_puts(o, "\n| load / tokenize / score / total (s) |");
    for (int i = 0; i < n && !rc; i++)
        rc = sbuf_printf(o, " %.2f / %.2f / %.2f / %.2f |", rs[i]->load_s, rs[i]->tokenize_s, rs[i]->score_s, rs[i]->total_s);
    if (!rc) rc = sbuf_puts(o, "\n| requests / tokens scored / tokens computed |");
    for (int i = 0; i < n && !rc; i++) {
        char a[32], b[32], c[32];
        report_thousands(rs[i]->requests, a);
        report_thousands(rs[i]->tokens_scored, b);
        report_thousands(rs[i]->tokens_computed, c);
        rc = sbuf_printf(o, " %s / %s / %s |", a, b, c);
    }
    if (!rc) rc = sbuf_puts(o, "\n| throughput (scoring) |");
    for (int i = 0; i < n && !rc; i++) {
        if (rs[i]->score_s > 0) {
            char a[32];
            report_thousands((long long)llround((double)rs[i]->tokens_computed / rs[i]->score_s), a);
            rc = sbuf_printf(o, " %s tokens/s, %.1f requests/s |", a, (double)rs[i]->requests / rs[i]->score_s);
        } else {
            rc = sbuf_puts(o, " - |");
        }
    }
    if (!rc) rc = sbuf_puts(o, "\n\nData (canonical JSONL sha256, first 12 hex digits):\n\n| task | split | docs used / rows |");
    for (int i = 0; i < n && !rc; i++) rc = sbuf_puts(o, " ") || md_text(o, labels[i]) || sbuf_puts(o, " |");
    if (!rc) rc = sbuf_puts(o, "\n|---|---|--:|");
    for (int i = 0; i < n && !rc; i++) rc = sbuf_puts(o, "---|");
    if (!rc) rc = sbuf_puts(o, "\n");
    // Union of tasks in first-seen order.
    for (int i = 0; i < n && !rc; i++) {
        for (int t = 0; t < rs[i]->n_tasks && !rc; t++) {
            const struct task_result *tr = &rs[i]->tasks[t];
            int seen = 0;
            for (int j = 0; j < i && !seen; j++) seen = results_find_task(rs[j], tr->name) != NULL;
            if (seen) continue;
            rc = sbuf_printf(o, "| %s | %s | %d / %d |", tr->name, tr->split[0] ? tr->split : "-", tr->n_docs,
                             tr->n_docs_original);
            for (int j = 0; j < n && !rc; j++) {
                const struct task_result *u = results_find_task(rs[j], tr->name);
                char d[17];
                if (!u) rc = sbuf_puts(o, " - |");
                else rc = sbuf_printf(o, " `%s`%s |", report_short_digest(u->data_sha256, d),
                                      strcmp(u->data_sha256, tr->data_sha256) ? " (differs)" : "");
            }
            if (!rc) rc = sbuf_puts(o, "\n");
        }
    }
    if (!rc) rc = sbuf_puts(o, "\n");
    return rc;
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

int report_chart(const struct results *const *rs, int n, struct sbuf *out, xsa_error *err) {
    const char *names[128];
    int k = task_union(rs, n, names, 128);
    double *val = malloc(sizeof(double) * (size_t)(n * k + 1)), *se = malloc(sizeof(double) * (size_t)(n * k + 1));
    const char **series = malloc(sizeof(char *) * (size_t)(n + 1));
    int rc = !val || !se || !series;
    for (int s = 0; s < n && !rc; s++) {
        series[s] = report_label(rs[s]);
        for (int t = 0; t < k; t++) {
            const struct task_result *tr = results_find_task(rs[s], names[t]);
            const char *metric;
            val[s * k + t] = se[s * k + t] = NAN;
            if (tr) pref_value(tr, &val[s * k + t], &se[s * k + t], &metric);
        }
    }
    if (!rc) rc = svg_bars_chart("Per-task score (preferred metric)", names, k, series, n, val, se, out);
    free(val);
    free(se);
    free(series);
    return rc ? xsa_fail(err, XSA_ERUNTIME, "report chart: out of memory") : 0;
}

int report_markdown(const struct results *const *rs, const char *const *paths, int n, const char *command,
                    const char *chart_base, struct sbuf *o, xsa_error *err) {
    const char *names[128];
    int k = task_union(rs, n, names, 128);
    const char **labels = malloc(sizeof(char *) * (size_t)(n + 1));
    if (!labels) return xsa_fail(err, XSA_ERUNTIME, "report: out of memory");
    for (int i = 0; i < n; i++) labels[i] = report_label(rs[i]);
    int rc = sbuf_printf(o, "# xsa-eval report: %d run%s\n\n", n, n == 1 ? "" : "s");
    if (!rc) rc = sbuf_puts(o, "Each cell is the task's preferred metric (acc_norm where lm-eval defines it, else acc) "
                               "in percent, \xc2\xb1 lm-eval's standard error.\n\n| task | metric |");
    for (int i = 0; i < n && !rc; i++) rc = sbuf_puts(o, " ") || md_text(o, labels[i]) || sbuf_puts(o, " |");
    if (!rc) rc = sbuf_puts(o, "\n|---|---|");
    for (int i = 0; i < n && !rc; i++) rc = sbuf_puts(o, "--:|");
    if (!rc) rc = sbuf_puts(o, "\n");
    for (int t = 0; t < k && !rc; t++) {
        const char *metric = "acc";
        for (int i = 0; i < n; i++) {
            const struct task_result *tr = results_find_task(rs[i], names[t]);
            if (tr) { metric = results_preferred_metric(tr); break; }
        }
        rc = sbuf_printf(o, "| %s | %s |", names[t], metric);
        for (int i = 0; i < n && !rc; i++) {
            const struct task_result *tr = results_find_task(rs[i], names[t]);
            double v, se;
            const char *m;
            if (!tr) { rc = sbuf_puts(o, " - |"); continue; }
            pref_value(tr, &v, &se, &m);
            rc = isnan(se) ? sbuf_printf(o, " %.2f |", v) : sbuf_printf(o, " %.2f \xc2\xb1 %.2f |", v, se);
        }
        if (!rc) rc = sbuf_puts(o, "\n");
        // LAMBADA perplexity beside its accuracy.
        int has_ppl = 0;
        for (int i = 0; i < n; i++) {
            const struct task_result *tr = results_find_task(rs[i], names[t]);
            has_ppl |= tr && results_metric_index(tr, "perplexity") >= 0;
        }
        if (has_ppl && !rc) {
            rc = sbuf_printf(o, "| %s | perplexity |", names[t]);
            for (int i = 0; i < n && !rc; i++) {
                const struct task_result *tr = results_find_task(rs[i], names[t]);
                int m = tr ? results_metric_index(tr, "perplexity") : -1;
                if (m < 0) rc = sbuf_puts(o, " - |");
                else if (!isfinite(tr->value[m])) rc = sbuf_puts(o, " n/a (overflow) |");  // null in the file
                else if (isnan(tr->stderr_[m])) rc = sbuf_printf(o, " %.2f |", tr->value[m]);
                else rc = sbuf_printf(o, " %.2f \xc2\xb1 %.2f |", tr->value[m], tr->stderr_[m]);
            }
            if (!rc) rc = sbuf_puts(o, "\n");
        }
    }
    // Group averages of the preferred metric.
    for (int g = 0; g < 2 && !rc; g++) {
        int members = 0;
        for (int t = 0; t < k; t++) members += g == 1 || results_is_paper_task(names[t]);
        if (!members) continue;
        rc = sbuf_printf(o, "| **%s (%d tasks)** | mean |", g == 0 ? "paper" : "all", members);
        for (int i = 0; i < n && !rc; i++) {
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
            if (!have) rc = sbuf_puts(o, " - |");
            else if (have == members) rc = sbuf_printf(o, " **%.2f** |", sum / have);
            else rc = sbuf_printf(o, " **%.2f** (%d of %d) |", sum / have, have, members);
        }
        if (!rc) rc = sbuf_puts(o, "\n");
    }
    if (!rc && chart_base) rc = sbuf_printf(o, "\n![Per-task score of each run](%s_acc.svg)\n", chart_base);
    if (!rc) rc = sbuf_puts(o, "\n## Models\n\n");
    for (int i = 0; i < n && !rc; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%d. ", i + 1);
        rc = report_model_section(o, prefix, labels[i], rs[i], paths ? paths[i] : NULL);
    }
    if (!rc) rc = sbuf_puts(o, "## Provenance\n\n");
    if (!rc) rc = report_provenance(o, rs, labels, n);
    if (!rc && command) rc = sbuf_puts(o, "Report command: ") || md_code(o, command) || sbuf_puts(o, "\n");
    free(labels);
    return rc ? xsa_fail(err, XSA_ERUNTIME, "report: out of memory") : 0;
}

void report_run_table(const struct results *r, FILE *f) {
    fprintf(f, "\n%s (%s, %s, XSA layers: %s)\n\n", r->model.name, r->model.arch, r->device, r->model.xsa_layers);
    fprintf(f, "| task | metric | value | ± stderr | n |\n|---|---|---:|---:|---:|\n");
    for (int i = 0; i < r->n_tasks; i++) {
        const struct task_result *t = &r->tasks[i];
        for (int k = 0; k < t->n_metrics; k++) {
            char se[32];
            if (isnan(t->stderr_[k])) snprintf(se, sizeof se, "N/A");
            else snprintf(se, sizeof se, "%.4f", t->stderr_[k]);
            fprintf(f, "| %s | %s | %.4f | %s | %d |\n", k == 0 ? t->name : "", t->metric[k], t->value[k], se, t->n_docs);
        }
    }
    fflush(f);
}

int report_write_bundle(const struct report_renderers *r, const void *ctx, const char *md_path, const char *chart_suffix,
                        const char *json_path, xsa_error *err) {
    struct sbuf md = {0}, full = {0}, rel = {0}, svg = {0}, svg_path = {0}, js = {0};
    int rc = 0;
    if (md_path && report_chart_paths(md_path, &full, &rel)) rc = -1;
    if (!rc) rc = r->markdown(ctx, md_path ? rel.s : NULL, &md);
    if (!rc && json_path) rc = r->json(ctx, &js);
    if (!rc && md_path) rc = r->chart(ctx, &svg) || sbuf_printf(&svg_path, "%s%s", full.s, chart_suffix) ? -1 : 0;
    if (rc) rc = xsa_fail(err, XSA_ERUNTIME, "report: out of memory");
    const char *paths[3], *data[3];
    size_t lens[3];
    int n = 0;
    if (md_path) {
        paths[n] = svg_path.s, data[n] = svg.s, lens[n++] = svg.n;
        paths[n] = md_path, data[n] = md.s, lens[n++] = md.n;
    }
    if (json_path) paths[n] = json_path, data[n] = js.s, lens[n++] = js.n;
    if (!rc && n) rc = outdir_write_set(n, paths, data, lens, err);
    if (!rc && !md_path) fwrite(md.s, 1, md.n, stdout);
    sbuf_free(&md); sbuf_free(&full); sbuf_free(&rel); sbuf_free(&svg); sbuf_free(&svg_path); sbuf_free(&js);
    return rc;
}
