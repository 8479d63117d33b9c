// probe_report.h: `xsa-eval probe`: per layer (and per head with heads), the mean and spread of
// cos(y, v) before XSA's projection, cos(z, v) after it, and a_ii, for one or two models, as
// Markdown, JSON, and a chart of cos(y, v) by layer, SA and XSA side by side (the XSA paper's
// Figure 1: the attention similarity bias).
#ifndef XSA_REPORTS_PROBE_REPORT_H
#define XSA_REPORTS_PROBE_REPORT_H

#include "common/error.h"
#include "eval/ppl.h"
#include "model/model.h"

struct probe_report {
    int n_models, heads;
    const struct ppl_probe *probe;    // (n_models)
    const struct model *model[2];     // for the XSA layers
    const char *label[2], *path[2];
    const char *input, *command;
    int context, stride;
    const struct ppl_data_src *data;  // (n_data) --tasks: each task's rows
    int n_data;
};

// Markdown to md_path (NULL: stdout) with `<md_path minus .md>_layers.svg` beside it; JSON to
// json_path (NULL: none).
int probe_write_report(const struct probe_report *r, const char *md_path, const char *json_path, xsa_error *err);

#endif
