// probe_report.c: `xsa-eval probe`'s report (probe_report.h).
#include "reports/probe_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/xalloc.h"
#include "reports/ppl_report.h"
#include "reports/report.h"
#include "reports/svg.h"

static const char *const stat_name[BACKEND_PROBE_STATS] = {"cos(y, v)", "cos(z, v)", "a_ii"};
static const char *const stat_key[BACKEND_PROBE_STATS] = {"cos_y", "cos_z", "a_ii"};

// A layer without attention (the 2026-03-31 record's DISABLE_LAYER0_ATTN) has no statistics.
static int has_attention(const struct model *m, int l) { return !m->cfg.attn_off[l]; }

// Gated XSA (modded-nanogpt; parameter-golf's gated variant) removes only tanh(alpha) of y's
// component along v, so cos(z, v) is not 0 there: the report says which layers and how much.
// 1: one gate per head (*g, tanh(alpha)), 2: a gate per token (the MUDD gates), 0: plain or none.
static int xsa_gated(const struct model *m, int l, const float **g) {
    *g = m->layers[l].xsa_gate;
    if (!m->cfg.xsa[l]) return 0;
    if (m->mng && m->mng->layer[l].g_xsa >= 0) return 2;
    return *g != NULL;
}

static int any_gated(const struct probe_report *r) {
    const float *g;
    for (int m = 0; m < r->n_models; m++)
        for (int l = 0; l < r->model[m]->cfg.n_layer; l++)
            if (xsa_gated(r->model[m], l, &g)) return 1;
    return 0;
}

static void row(struct sbuf *o, const struct ppl_probe *p, int l, int h, const char *xsa, const float *gate) {
    if (h < 0) sbuf_printf(o, "| %d | %s |", l, xsa);
    else if (gate) sbuf_printf(o, "| %d.%d | %s %.2f |", l, h, xsa, gate[h]);
    else sbuf_printf(o, "| %d.%d | %s |", l, h, xsa);
    if (!strcmp(xsa, "no attention")) {
        sbuf_puts(o, " \xe2\x80\x94 | \xe2\x80\x94 | \xe2\x80\x94 |\n");
        return;
    }
    for (int k = 0; k < BACKEND_PROBE_STATS; k++) {
        double m, sd;
        ppl_probe_stat(p, l, h, k, &m, &sd);
        sbuf_printf(o, " %+.4f \xc2\xb1 %.4f |", m, sd);
    }
    sbuf_puts(o, "\n");
}

static void markdown(const void *ctx, const char *chart_rel, struct sbuf *o) {
    const struct probe_report *r = ctx;
    sbuf_printf(o, "# Attention similarity bias\n\nAt %ld targets of %s (context up to %d, stride %d), per layer "
                            "over query heads: cos(y, v) between a head's attention output before XSA's projection "
                            "and the token's own value vector, cos(z, v) after it (0 up to rounding in XSA layers%s), "
                            "and a_ii, the attention the token puts on itself; mean \xc2\xb1 standard deviation.\n",
                         r->probe[0].n, r->input, r->context, r->stride, any_gated(r) ? ", but not in gated ones" : "");
    if (any_gated(r))
        sbuf_puts(o, "\n\"gated\" layers are gated XSA: z = y - g (y . v / |v|^2) v removes only a fraction g = "
                     "tanh(alpha) of y's component along v (g per head beside each head's row, or per token), so "
                     "cos(z, v) there is not 0; it is 0 only where g = 1.\n");
    for (int m = 0; m < r->n_models; m++) {
        const struct ppl_probe *p = &r->probe[m];
        sbuf_puts(o, "\n## ");
        md_text(o, r->label[m]);
        sbuf_printf(o, "\n\n| layer%s | XSA | cos(y, v) | cos(z, v) | a_ii |\n|--:|:-:|--:|--:|--:|\n",
                          r->heads ? ".head" : "");
        for (int l = 0; l < p->n_layer; l++) {
            const float *g;
            int gated = xsa_gated(r->model[m], l, &g);
            const char *x = !has_attention(r->model[m], l) ? "no attention" : gated == 2 ? "gated per token" : gated ? "gated"
                            : r->model[m]->cfg.xsa[l] ? "yes" : "no";
            row(o, p, l, -1, x, NULL);
            for (int h = 0; r->heads && h < p->n_head; h++) row(o, p, l, h, x, gated == 1 ? g : NULL);
        }
    }
    if (chart_rel) {
        sbuf_puts(o, "\n");
        md_image(o, "cos(y, v) by layer", chart_rel, "_layers.svg");
        sbuf_puts(o, "\n");
    }
    sbuf_puts(o, "\n| | |\n|---|---|\n");
    for (int m = 0; m < r->n_models; m++) {
        sbuf_printf(o, "| %s | ", m ? "B" : "A");
        md_code(o, r->path[m]);
        sbuf_puts(o, " |\n");
    }
    ppl_data_md(o, r->data, r->n_data);
    if (r->command) {
        sbuf_puts(o, "| command | ");
        md_code(o, r->command);
        sbuf_puts(o, " |\n");
    }
}

static void json(const void *ctx, struct sbuf *out) {
    const struct probe_report *r = ctx;
    struct jsonw w = {0};
    jsonw_object(&w, NULL);
    jsonw_str(&w, "input", r->input);
    jsonw_int(&w, "targets", r->probe[0].n);
    jsonw_int(&w, "context", r->context);
    jsonw_int(&w, "stride", r->stride);
    jsonw_array(&w, "models");
    for (int m = 0; m < r->n_models; m++) {
        const struct ppl_probe *p = &r->probe[m];
        jsonw_object(&w, NULL);
        jsonw_str(&w, "label", r->label[m]);
        jsonw_str(&w, "path", r->path[m]);
        jsonw_array(&w, "layers");
        for (int l = 0; l < p->n_layer; l++) {
            jsonw_object(&w, NULL);
            jsonw_int(&w, "layer", l);
            jsonw_bool(&w, "xsa", r->model[m]->cfg.xsa[l]);
            jsonw_bool(&w, "attention", has_attention(r->model[m], l));
            const float *g;
            int gated = xsa_gated(r->model[m], l, &g);
            if (gated == 2) jsonw_str(&w, "xsa_gate", "per token");
            if (gated == 1) {  // tanh(alpha) per head: cos(z, v) is not 0 where it is below 1
                jsonw_array(&w, "xsa_gate");
                for (int h = 0; h < r->model[m]->cfg.n_head; h++) jsonw_num(&w, NULL, g[h]);
                jsonw_end(&w);
            }
            for (int h = -1; h < (r->heads ? p->n_head : 0) && has_attention(r->model[m], l); h++) {
                if (h >= 0) {
                    if (h == 0) jsonw_array(&w, "heads");
                    jsonw_object(&w, NULL);
                }
                for (int k = 0; k < BACKEND_PROBE_STATS; k++) {
                    double mean, sd;
                    char key[32];
                    ppl_probe_stat(p, l, h, k, &mean, &sd);
                    jsonw_num(&w, stat_key[k], mean);
                    snprintf(key, sizeof key, "%s_sd", stat_key[k]);
                    jsonw_num(&w, key, sd);
                }
                if (h >= 0) jsonw_end(&w);
                if (h >= 0 && h == p->n_head - 1) jsonw_end(&w);
            }
            jsonw_end(&w);
        }
        jsonw_end(&w);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    ppl_data_json(&w, r->data, r->n_data);
    if (r->command) jsonw_str(&w, "command", r->command);
    jsonw_end(&w);
    sbuf_append(out, w.out.s, w.out.n);
    jsonw_free(&w);
}

// cos(y, v) of each model by layer (and cos(z, v) of a model with XSA layers), +- 1 sd bands.
static void chart(const void *ctx, struct sbuf *out) {
    const struct probe_report *r = ctx;
    int L = 0;
    for (int m = 0; m < r->n_models; m++) L = r->probe[m].n_layer > L ? r->probe[m].n_layer : L;
    int ns = 0;
    char names[4][160];
    const char *series[4];
    double *x = xsa_malloc((size_t)L * sizeof *x), *v = xsa_malloc((size_t)12 * L * sizeof *v);
    for (int l = 0; l < L; l++) x[l] = l;
    for (int i = 0; i < 12 * L; i++) v[i] = NAN;
    for (int m = 0; m < r->n_models; m++)
        for (int k = 0; k < 2; k++) {
            if (k == 1 && !model_xsa_count(&r->model[m]->cfg)) continue;
            snprintf(names[ns], sizeof names[ns], "%s %s", r->label[m], stat_name[k]);
            series[ns] = names[ns];
            for (int l = 0; l < r->probe[m].n_layer; l++) {
                if (!has_attention(r->model[m], l)) continue;  // (a gap in the line)
                double mean, sd;
                ppl_probe_stat(&r->probe[m], l, -1, k, &mean, &sd);
                v[ns * L + l] = mean, v[4 * L + ns * L + l] = mean - sd, v[8 * L + ns * L + l] = mean + sd;
            }
            ns++;
        }
    svg_line_chart("cos(attention output, own value) by layer", "layer", "cosine, shaded: +- 1 sd", 0, series,
                            ns, L, x, NULL, v, v + 4 * L, v + 8 * L, out);
    free(x);
    free(v);
}

int probe_write_report(const struct probe_report *r, const char *md_path, const char *json_path, xsa_error *err) {
    static const struct report_renderers rr = {markdown, chart, json};
    return report_write_bundle(&rr, r, md_path, "_layers.svg", json_path, err);
}
