// results.c: the results JSON (docs/results-format.md): lm-eval v0.4's layout plus the
// xsa_eval block. The writer uses common/jsonw (fixed layout, %.17g doubles); the reader
// validates every type and size before it trusts a value.
#include "eval/results.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "common/xalloc.h"
#include "common/jsonw.h"
#include "eval/metrics.h"
#include "model/tokenizer.h"
#include "tasks/task.h"

#define RESULTS_MAX_FILE (1u << 30)   // 1 GiB: far above nine full tasks' per-doc arrays
#define RESULTS_MAX_TASKS 64
#define RESULTS_MAX_DOCS 10000000

int results_is_paper_task(const char *name) { return task_in_group(name, "paper"); }

const char *results_limit_text(const struct results *r, char *buf, size_t cap) {
    if (r->limit_fraction > 0) snprintf(buf, cap, "%g", r->limit_fraction);
    else if (r->limit < 0) snprintf(buf, cap, "none");
    else snprintf(buf, cap, "%d", r->limit);
    return buf;
}

// lm-eval's `limit`: null, an int, or the float given (a fraction of each task's documents),
// written as Python prints it (shortest digits that read back exactly).
static void write_limit(struct jsonw *w, const struct results *r) {
    if (r->limit_fraction > 0) {
        int p = 1;
        char buf[32];
        for (; p < 17; p++) {
            snprintf(buf, sizeof buf, "%.*g", p, r->limit_fraction);
            if (strtod(buf, NULL) == r->limit_fraction) break;
        }
        jsonw_num_prec(w, "limit", r->limit_fraction, p);
    } else if (r->limit < 0) {
        jsonw_null(w, "limit");
    } else {
        jsonw_int(w, "limit", r->limit);
    }
}

const struct task_result *results_find_task(const struct results *r, const char *name) {
    for (int i = 0; i < r->n_tasks; i++)
        if (!strcmp(r->tasks[i].name, name)) return &r->tasks[i];
    return NULL;
}

int results_metric_index(const struct task_result *t, const char *metric) {
    for (int i = 0; i < t->n_metrics; i++)
        if (!strcmp(t->metric[i], metric)) return i;
    return -1;
}

const char *results_preferred_metric(const struct task_result *t) {
    if (t->preferred_metric[0] && results_metric_index(t, t->preferred_metric) >= 0) return t->preferred_metric;
    if (results_metric_index(t, "acc_norm") >= 0) return "acc_norm";
    return "acc";
}

void results_free(struct results *r) {
    for (int i = 0; r->tasks && i < r->n_tasks; i++) {
        free(r->tasks[i].doc_id);
        for (int m = 0; m < RESULTS_MAX_METRICS; m++) free(r->tasks[i].per_doc[m]);
    }
    free(r->tasks);
    r->tasks = NULL;
    r->n_tasks = 0;
    free(r->command);
    r->command = NULL;
}

// ---------------------------------------------------------------------------- writer

// Average of each task's preferred metric over the tasks of a group ("paper", "all").
static void write_group(struct jsonw *w, const struct results *r, const char *group) {
    double sum = 0;
    int k = 0;
    for (int i = 0; i < r->n_tasks; i++) {
        const struct task_result *t = &r->tasks[i];
        if (!strcmp(group, "paper") && !results_is_paper_task(t->name)) continue;
        int m = results_metric_index(t, results_preferred_metric(t));
        if (m < 0) continue;
        sum += t->value[m];
        k++;
    }
    if (!k) return;
    jsonw_object(w, group);
    jsonw_num(w, "acc,none", sum / k);
    jsonw_int(w, "n_tasks", k);
    jsonw_end(w);
}

static void write_model(struct jsonw *w, const struct model_info *m) {
    jsonw_object(w, "model");
    jsonw_str(w, "path", m->path);
    jsonw_str(w, "name", m->name);
    jsonw_str(w, "format", m->format);
    jsonw_str(w, "arch", m->arch);
    jsonw_str(w, "weights_sha256", m->weights_sha256);
    jsonw_str(w, "dtype", m->dtype);
    jsonw_int(w, "n_params", m->n_params);
    jsonw_int(w, "n_layer", m->n_layer);
    jsonw_int(w, "d_model", m->d_model);
    jsonw_int(w, "n_head", m->n_head);
    jsonw_int(w, "n_kv_head", m->n_kv_head);
    jsonw_int(w, "vocab_size", m->vocab_size);
    jsonw_int(w, "max_length", m->max_length);
    jsonw_str(w, "xsa_layers", m->xsa_layers);
    jsonw_str(w, "xsa_source", m->xsa_source);
    jsonw_str(w, "tokenizer", m->tokenizer);
    jsonw_str(w, "tokenizer_sha256", m->tokenizer_sha256);
    jsonw_bool(w, "add_bos", m->add_bos);
    if (m->weights_prefix[0]) jsonw_str(w, "weights_prefix", m->weights_prefix);
    if (m->hub_repo[0]) {  // the Hub repo and the commit its files came from
        jsonw_str(w, "hub_repo", m->hub_repo);
        jsonw_str(w, "hub_revision", m->hub_revision);
        jsonw_str(w, "hub_commit", m->hub_commit);
    }
    jsonw_end(w);
}

int results_set_model(struct results *r, const struct model *m, const char *path, const char *name,
                      const char *tokenizer_path, xsa_error *err) {
    struct model_info *mi = &r->model;
    const struct model_config *c = &m->cfg;
    snprintf(mi->path, sizeof mi->path, "%s", path);
    snprintf(mi->name, sizeof mi->name, "%s", name);
    snprintf(mi->format, sizeof mi->format, "%s", m->format);
    snprintf(mi->arch, sizeof mi->arch, "%s", model_arch_name(m));
    snprintf(mi->dtype, sizeof mi->dtype, "%s", m->dtype);
    snprintf(mi->weights_sha256, sizeof mi->weights_sha256, "%s", m->weights_sha256);
    snprintf(mi->weights_prefix, sizeof mi->weights_prefix, "%s", m->weights_prefix);
    snprintf(mi->tokenizer, sizeof mi->tokenizer, "%s", tokenizer_path);
    int rc = tokenizer_files_sha256(tokenizer_path, mi->tokenizer_sha256, err);
    if (rc) return rc;
    model_xsa_describe(c, mi->xsa_layers, sizeof mi->xsa_layers);
    snprintf(mi->xsa_source, sizeof mi->xsa_source, "%s", m->xsa_source);
    mi->n_params = m->n_params;
    mi->n_layer = c->n_layer;
    mi->d_model = c->d_model;
    mi->n_head = c->n_head;
    mi->n_kv_head = c->n_kv_head;
    mi->vocab_size = c->vocab_size;
    return 0;
}

int results_to_json(const struct results *r, struct sbuf *out, xsa_error *err) {
    struct jsonw w = {0};
    jsonw_object(&w, NULL);

    jsonw_object(&w, "results");
    for (int i = 0; i < r->n_tasks; i++) {
        const struct task_result *t = &r->tasks[i];
        jsonw_object(&w, t->name);
        jsonw_str(&w, "alias", t->name);
        for (int m = 0; m < t->n_metrics; m++) {
            char key[64];
            snprintf(key, sizeof key, "%s,none", t->metric[m]);
            jsonw_num(&w, key, t->value[m]);
            snprintf(key, sizeof key, "%s_stderr,none", t->metric[m]);
            if (isnan(t->stderr_[m])) jsonw_str(&w, key, "N/A");  // as lm-eval writes it
            else jsonw_num(&w, key, t->stderr_[m]);
        }
        jsonw_end(&w);
    }
    jsonw_end(&w);

    jsonw_object(&w, "groups");
    write_group(&w, r, "paper");
    write_group(&w, r, "all");
    jsonw_end(&w);

    jsonw_object(&w, "group_subtasks");
    for (int i = 0; i < r->n_tasks; i++) { jsonw_array(&w, r->tasks[i].name); jsonw_end(&w); }
    jsonw_end(&w);
    jsonw_object(&w, "versions");
    for (int i = 0; i < r->n_tasks; i++) jsonw_num(&w, r->tasks[i].name, r->tasks[i].version);
    jsonw_end(&w);
    jsonw_object(&w, "n-shot");
    for (int i = 0; i < r->n_tasks; i++) jsonw_int(&w, r->tasks[i].name, r->num_fewshot);
    jsonw_end(&w);
    jsonw_object(&w, "higher_is_better");
    for (int i = 0; i < r->n_tasks; i++) {
        const struct task_result *t = &r->tasks[i];
        jsonw_object(&w, t->name);
        for (int m = 0; m < t->n_metrics; m++) jsonw_bool(&w, t->metric[m], t->higher_is_better[m]);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_object(&w, "n-samples");
    for (int i = 0; i < r->n_tasks; i++) {
        jsonw_object(&w, r->tasks[i].name);
        jsonw_int(&w, "original", r->tasks[i].n_docs_original);
        jsonw_int(&w, "effective", r->tasks[i].n_docs);
        jsonw_end(&w);
    }
    jsonw_end(&w);

    jsonw_object(&w, "config");
    jsonw_str(&w, "model", "xsa-eval");
    struct sbuf args = {0};
    sbuf_printf(&args, "pretrained=%s", r->model.path);
    jsonw_str(&w, "model_args", args.s ? args.s : "");
    sbuf_free(&args);
    jsonw_int(&w, "model_num_parameters", r->model.n_params);
    jsonw_str(&w, "model_dtype", r->model.dtype);
    jsonw_str(&w, "batch_size", "packed");
    jsonw_str(&w, "device", r->device);
    write_limit(&w, r);
    jsonw_int(&w, "bootstrap_iters", 100000);
    jsonw_int(&w, "fewshot_seed", 1234);
    jsonw_end(&w);
    jsonw_num(&w, "date", r->start_time);
    jsonw_num(&w, "start_time", r->start_time);
    jsonw_num(&w, "end_time", r->end_time);
    char total[64];
    snprintf(total, sizeof total, "%.17g", r->end_time - r->start_time);
    jsonw_str(&w, "total_evaluation_time_seconds", total);
    jsonw_int(&w, "max_length", r->model.max_length);
    jsonw_str(&w, "model_name", r->model.name);

    jsonw_object(&w, "xsa_eval");
    jsonw_str(&w, "version", r->version);
    jsonw_str(&w, "command", r->command ? r->command : "");
    write_model(&w, &r->model);
    jsonw_object(&w, "backend");
    jsonw_str(&w, "device", r->device);
    jsonw_str(&w, "device_desc", r->device_desc);
    jsonw_int(&w, "threads", r->threads);
    if (r->batch_tokens > 0) jsonw_int(&w, "batch_tokens", r->batch_tokens);  // absent from older files
    jsonw_end(&w);
    jsonw_object(&w, "data");
    for (int i = 0; i < r->n_tasks; i++) {
        const struct task_result *t = &r->tasks[i];
        jsonw_object(&w, t->name);
        jsonw_str(&w, "source", t->data_source);
        jsonw_str(&w, "split", t->split);
        jsonw_str(&w, "sha256", t->data_sha256);
        if (t->fewshot_sha256[0]) {  // --num-fewshot: the split its examples came from
            jsonw_str(&w, "fewshot_sha256", t->fewshot_sha256);
            jsonw_str(&w, "fewshot_source", t->fewshot_source);
        }
        jsonw_int(&w, "rows", t->n_docs_original);
        jsonw_bool(&w, "preprocessed", t->preprocessed);
        // Absent when unknown (local files, no pin; results written before these were kept).
        if (t->data_dataset[0]) jsonw_str(&w, "dataset", t->data_dataset);
        if (t->data_revision[0]) jsonw_str(&w, "revision", t->data_revision);
        if (t->data_pinned >= 0) jsonw_bool(&w, "pinned", t->data_pinned);
        jsonw_str(&w, "preferred_metric", results_preferred_metric(t));
        jsonw_end(&w);
    }
    jsonw_end(&w);
    write_limit(&w, r);
    jsonw_int(&w, "num_fewshot", r->num_fewshot);
    if (r->has_step) jsonw_int(&w, "step", r->step);  // only when known: older files stay byte-identical
    if (r->has_step && r->step_source[0]) jsonw_str(&w, "step_source", r->step_source);
    jsonw_bool(&w, "share_prefixes", r->share_prefixes);
    jsonw_object(&w, "per_doc");
    for (int i = 0; i < r->n_tasks; i++) {
        const struct task_result *t = &r->tasks[i];
        jsonw_object(&w, t->name);
        jsonw_array(&w, "doc_id");
        for (int d = 0; d < t->n_docs; d++) jsonw_int(&w, NULL, t->doc_id ? t->doc_id[d] : d);
        jsonw_end(&w);
        for (int m = 0; m < t->n_metrics; m++) {
            jsonw_array(&w, t->metric[m]);
            for (int d = 0; d < t->n_docs && t->per_doc[m]; d++) jsonw_num(&w, NULL, t->per_doc[m][d]);
            jsonw_end(&w);
        }
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_object(&w, "truncated_requests");
    for (int i = 0; i < r->n_tasks; i++) jsonw_int(&w, r->tasks[i].name, r->tasks[i].truncated_requests);
    jsonw_end(&w);
    jsonw_object(&w, "timing");
    jsonw_num(&w, "load_s", r->load_s);
    jsonw_num(&w, "tokenize_s", r->tokenize_s);
    jsonw_num(&w, "score_s", r->score_s);
    jsonw_num(&w, "total_s", r->total_s);
    jsonw_int(&w, "requests", r->requests);
    jsonw_int(&w, "tokens_scored", r->tokens_scored);
    jsonw_int(&w, "tokens_computed", r->tokens_computed);
    if (r->requests_reused) {  // (only then: a run that reused nothing writes what it always has)
        jsonw_int(&w, "requests_reused", r->requests_reused);
        jsonw_int(&w, "tokens_reused", r->tokens_reused);
    }
    // Throughput of the scoring phase: forward tokens (and the requests scored, not those the
    // journal or the request cache gave back) per second.
    jsonw_num(&w, "tokens_per_s", r->score_s > 0 ? (double)r->tokens_computed / r->score_s : 0);
    jsonw_num(&w, "requests_per_s", r->score_s > 0 ? (double)(r->requests - r->requests_reused) / r->score_s : 0);
    jsonw_end(&w);
    jsonw_end(&w);  // xsa_eval

    jsonw_end(&w);  // top
    if (w.failed) {
        jsonw_free(&w);
        return xsa_fail(err, XSA_ERUNTIME, "results JSON: a value could not be written (a bug: an unbalanced or misplaced JSON writer call)");
    }
    *out = w.out;
    return 0;
}

int results_write_json(const struct results *r, const char *path, xsa_error *err) {
    struct sbuf out = {0};
    int rc = results_to_json(r, &out, err);
    if (!rc) rc = file_write_atomic(path, out.s, out.n, err);
    sbuf_free(&out);
    return rc;
}

// ---------------------------------------------------------------------------- reader

struct rd {              // reader context: the file named in every error
    const char *path;
    xsa_error *err;
};

static int bad(struct rd *c, const char *fmt, const char *a, const char *b) {
    char what[512];
    snprintf(what, sizeof what, fmt, a, b);
    return xsa_fail(c->err, XSA_EBADINPUT, "%s: %s", c->path, what);
}

static const cJSON *get(const cJSON *o, const char *key) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

// Copies an optional string member into dst[cap]; absent leaves dst empty.
static int get_str(struct rd *c, const cJSON *o, const char *key, char *dst, size_t cap, int required) {
    const cJSON *v = get(o, key);
    dst[0] = '\0';
    if (!v || cJSON_IsNull(v)) return required ? bad(c, "missing string \"%s\"%s", key, "") : 0;
    if (!cJSON_IsString(v)) return bad(c, "\"%s\" must be a string%s", key, "");
    if (strlen(v->valuestring) >= cap) return bad(c, "\"%s\" is too long%s", key, "");
    memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
    return 0;
}

// An optional string member of any length, copied to the heap; absent leaves *dst NULL.
static int get_str_dup(struct rd *c, const cJSON *o, const char *key, char **dst) {
    const cJSON *v = get(o, key);
    *dst = NULL;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsString(v)) return bad(c, "\"%s\" must be a string%s", key, "");
    *dst = xsa_strdup(v->valuestring);
    return 0;
}

static int get_num(struct rd *c, const cJSON *o, const char *key, double *dst, int required) {
    const cJSON *v = get(o, key);
    if (!v || cJSON_IsNull(v)) {
        if (required) return bad(c, "missing number \"%s\"%s", key, "");
        return 0;
    }
    if (!cJSON_IsNumber(v)) return bad(c, "\"%s\" must be a number%s", key, "");
    *dst = v->valuedouble;
    return 0;
}

static int as_int(const cJSON *v, long long lo, long long hi, long long *out) {
    if (!cJSON_IsNumber(v)) return -1;
    double x = v->valuedouble;
    if (!(x >= (double)lo && x <= (double)hi) || x != floor(x)) return -1;
    *out = (long long)x;
    return 0;
}

static int get_ll(struct rd *c, const cJSON *o, const char *key, long long lo, long long hi, long long *dst,
                  int required) {
    const cJSON *v = get(o, key);
    if (!v || cJSON_IsNull(v)) return required ? bad(c, "missing integer \"%s\"%s", key, "") : 0;
    if (as_int(v, lo, hi, dst)) return bad(c, "\"%s\" must be an integer in range%s", key, "");
    return 0;
}

static int get_int(struct rd *c, const cJSON *o, const char *key, int *dst, int required) {
    long long x = *dst;
    int rc = get_ll(c, o, key, -2147483647LL, 2147483647LL, &x, required);
    if (!rc) *dst = (int)x;
    return rc;
}

static int get_bool(struct rd *c, const cJSON *o, const char *key, int *dst) {
    const cJSON *v = get(o, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsBool(v)) return bad(c, "\"%s\" must be true or false%s", key, "");
    *dst = cJSON_IsTrue(v);
    return 0;
}

// Reads the metrics of results.<task> in file order ("acc,none", "acc_stderr,none", ...).
static int read_metrics(struct rd *c, const cJSON *tres, struct task_result *t) {
    if (!cJSON_IsObject(tres)) return bad(c, "results.%s must be an object%s", t->name, "");
    for (const cJSON *v = tres->child; v; v = v->next) {
        const char *k = v->string;
        size_t n = strlen(k);
        if (n < 6 || strcmp(k + n - 5, ",none") != 0) continue;  // alias, name, sample_len
        char base[64];
        if (n - 5 >= sizeof base) return bad(c, "results.%s: metric name too long: %s", t->name, k);
        memcpy(base, k, n - 5);
        base[n - 5] = '\0';
        size_t bn = strlen(base);
        if (bn > 7 && !strcmp(base + bn - 7, "_stderr")) continue;  // read with its metric
        if (t->n_metrics >= RESULTS_MAX_METRICS)
            return bad(c, "results.%s: more metrics than supported (%s)", t->name, k);
        if (bn >= sizeof t->metric[0]) return bad(c, "results.%s: metric name too long: %s", t->name, k);
        // null: a non-finite value (the writer's form for an overflowed perplexity).
        if (!cJSON_IsNumber(v) && !cJSON_IsNull(v))
            return bad(c, "results.%s: \"%s\" must be a number", t->name, k);
        int m = t->n_metrics++;
        memcpy(t->metric[m], base, bn + 1);
        t->value[m] = cJSON_IsNull(v) ? NAN : v->valuedouble;
        char sk[96];
        snprintf(sk, sizeof sk, "%s_stderr,none", base);
        const cJSON *se = get(tres, sk);
        t->stderr_[m] = NAN;
        if (cJSON_IsNumber(se)) t->stderr_[m] = se->valuedouble;
        else if (se && !cJSON_IsNull(se) && !(cJSON_IsString(se) && !strcmp(se->valuestring, "N/A")))
            return bad(c, "results.%s: \"%s\" must be a number or \"N/A\"", t->name, sk);
        t->higher_is_better[m] = strcmp(base, "perplexity") != 0;
    }
    if (t->n_metrics == 0) return bad(c, "results.%s has no \"<metric>,none\" values%s", t->name, "");
    return 0;
}

static int cmp_int(const void *x, const void *y) {
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

static int read_per_doc(struct rd *c, const cJSON *pd, struct task_result *t) {
    if (pd && !cJSON_IsObject(pd)) return bad(c, "xsa_eval.per_doc.%s must be an object of arrays%s", t->name, "");
    if (!pd) return bad(c, "xsa_eval.per_doc.%s missing; per-document data needed for paired statistics%s", t->name, "");
    const cJSON *ids = get(pd, "doc_id");
    if (!cJSON_IsArray(ids)) return bad(c, "xsa_eval.per_doc.%s.doc_id must be an array%s", t->name, "");
    int n = cJSON_GetArraySize(ids);
    if (n < 0 || n > RESULTS_MAX_DOCS) return bad(c, "xsa_eval.per_doc.%s.doc_id: too many documents%s", t->name, "");
    t->n_docs = n;
    t->doc_id = xsa_malloc((size_t)n * sizeof *t->doc_id);
    int d = 0;
    for (const cJSON *v = ids->child; v; v = v->next, d++) {
        long long x;
        if (as_int(v, 0, 2147483647LL, &x))
            return bad(c, "xsa_eval.per_doc.%s.doc_id: entries must be non-negative integers%s", t->name, "");
        t->doc_id[d] = (int)x;
    }
    int *sorted = xsa_malloc((size_t)(n + 1) * sizeof *sorted);  // (n) doc ids, for repeats
    memcpy(sorted, t->doc_id, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_int);
    int dup = -1;
    for (d = 1; d < n && dup < 0; d++)
        if (sorted[d] == sorted[d - 1]) dup = sorted[d];
    free(sorted);
    if (dup >= 0) {
        char id[16];
        snprintf(id, sizeof id, "%d", dup);
        return bad(c, "xsa_eval.per_doc.%s.doc_id: document %s stands twice; documents are paired by id", t->name, id);
    }
    for (int m = 0; m < t->n_metrics; m++) {
        const cJSON *a = get(pd, t->metric[m]);
        if (a && !cJSON_IsArray(a))
            return bad(c, "xsa_eval.per_doc.%s.%s must be an array (one value per document)", t->name, t->metric[m]);
        if (!a)
            return bad(c, "xsa_eval.per_doc.%s.%s missing; per-document data needed for paired statistics",
                       t->name, t->metric[m]);
        if (cJSON_GetArraySize(a) != n)
            return bad(c, "xsa_eval.per_doc.%s.%s: length differs from doc_id", t->name, t->metric[m]);
        t->per_doc[m] = xsa_malloc((size_t)n * sizeof(double));
        d = 0;
        for (const cJSON *v = a->child; v; v = v->next, d++) {
            if (cJSON_IsNumber(v)) t->per_doc[m][d] = v->valuedouble;
            else if (cJSON_IsNull(v)) t->per_doc[m][d] = NAN;  // written for non-finite values
            else return bad(c, "xsa_eval.per_doc.%s.%s: entries must be numbers", t->name, t->metric[m]);
        }
    }
    return 0;
}

// A results file is compared and gated on only when every score in it is possible: finite,
// accuracies in [0, 1] from per-document 0/1 values, perplexities from per-document
// log-likelihoods <= 0, and each summary equal to what its per-document values give.
static int check_scores(struct rd *c, const struct task_result *t) {
    if (t->n_docs < 1) return bad(c, "results.%s: no documents were scored%s", t->name, "");
    for (int m = 0; m < t->n_metrics; m++) {
        const char *name = t->metric[m];
        double v = t->value[m], se = t->stderr_[m], sum = 0;
        int acc = !strncmp(name, "acc", 3), ppl = !strcmp(name, "perplexity");
        if (!isfinite(v)) return bad(c, "results.%s: %s is not a finite number; a non-finite score is never compared", t->name, name);
        if (!isnan(se) && !(isfinite(se) && se >= 0))
            return bad(c, "results.%s: %s_stderr must be a non-negative number or \"N/A\"", t->name, name);
        for (int d = 0; d < t->n_docs; d++) {
            double x = t->per_doc[m][d];
            if ((acc && x != 0 && x != 1) || (ppl && !(isfinite(x) && x <= 0)) || !isfinite(x))
                return bad(c, "xsa_eval.per_doc.%s.%s holds an impossible value (an accuracy not 0 or 1, or a "
                              "log-likelihood that is positive or not finite)", t->name, name);
            sum += x;
        }
        double mean = sum / t->n_docs, want = ppl ? exp(-mean) : mean;
        if ((acc && (v < 0 || v > 1)) || !isfinite(want) || fabs(v - want) > 1e-9 * fmax(1, fabs(want)))
            return bad(c, "results.%s: %s disagrees with its per-document values (the file was edited or damaged)",
                       t->name, name);
        // An accuracy's stderr, when given, is lm-eval's mean_stderr of the same values (a
        // perplexity's is a bootstrap: too costly to redo here, and never gated on).
        double want_se = acc && !isnan(se) ? metrics_mean_stderr(t->per_doc[m], t->n_docs) : se;
        if (!isnan(se) && !(fabs(se - want_se) <= 1e-9))
            return bad(c, "results.%s: %s_stderr disagrees with its per-document values (the file was edited or "
                          "damaged)", t->name, name);
    }
    return 0;
}

static int read_task(struct rd *c, const cJSON *root, const cJSON *xe, const cJSON *tres, struct task_result *t) {
    int rc = read_metrics(c, tres, t);
    if (rc) return rc;
    const cJSON *ver = get(get(root, "versions"), t->name);
    if (cJSON_IsNumber(ver)) t->version = ver->valuedouble;
    const cJSON *hib = get(get(root, "higher_is_better"), t->name);
    for (int m = 0; m < t->n_metrics && hib; m++) {
        const cJSON *b = get(hib, t->metric[m]);
        if (cJSON_IsBool(b)) t->higher_is_better[m] = cJSON_IsTrue(b);
    }
    const cJSON *data = get(get(xe, "data"), t->name);
    if (!cJSON_IsObject(data)) return bad(c, "xsa_eval.data.%s missing (dataset digest needed)%s", t->name, "");
    if ((rc = get_str(c, data, "sha256", t->data_sha256, sizeof t->data_sha256, 0))) return rc;
    if ((rc = get_str(c, data, "fewshot_sha256", t->fewshot_sha256, sizeof t->fewshot_sha256, 0)) ||
        (rc = get_str(c, data, "fewshot_source", t->fewshot_source, sizeof t->fewshot_source, 0)))
        return rc;
    if (t->fewshot_sha256[0] && !sha256_hex_valid(t->fewshot_sha256))
        return bad(c, "xsa_eval.data.%s.fewshot_sha256 must be 64 lowercase hex digits%s", t->name, "");
    if (!sha256_hex_valid(t->data_sha256))
        return bad(c, "xsa_eval.data.%s.sha256 must be 64 lowercase hex digits%s", t->name, "");
    if ((rc = get_str(c, data, "source", t->data_source, sizeof t->data_source, 0)) ||
        (rc = get_str(c, data, "split", t->split, sizeof t->split, 0)) ||
        (rc = get_bool(c, data, "preprocessed", &t->preprocessed)) ||
        (rc = get_str(c, data, "dataset", t->data_dataset, sizeof t->data_dataset, 0)) ||
        (rc = get_str(c, data, "revision", t->data_revision, sizeof t->data_revision, 0)) ||
        (rc = get_str(c, data, "preferred_metric", t->preferred_metric, sizeof t->preferred_metric, 0)))
        return rc;
    t->data_pinned = -1;  // null or absent (results written before pins): not known
    if ((rc = get_bool(c, data, "pinned", &t->data_pinned))) return rc;
    if (t->preferred_metric[0] && results_metric_index(t, t->preferred_metric) < 0)
        return bad(c, "xsa_eval.data.%s.preferred_metric names a metric the task lacks: %s", t->name,
                   t->preferred_metric);
    // Every file prefers the task's own metric, so two files never compare different ones.
    const struct task_def *def = task_find(t->name);
    if (t->preferred_metric[0] && strcmp(t->preferred_metric, def->preferred_metric))
        return bad(c, "xsa_eval.data.%s.preferred_metric is not lm-eval's for the task (%s)", t->name,
                   def->preferred_metric);
    if ((rc = read_per_doc(c, get(get(xe, "per_doc"), t->name), t)) || (rc = check_scores(c, t))) return rc;
    const cJSON *ns = get(get(root, "n-samples"), t->name);
    int eff = t->n_docs;
    t->n_docs_original = t->n_docs;
    if ((rc = get_int(c, ns, "effective", &eff, 0)) || (rc = get_int(c, ns, "original", &t->n_docs_original, 0)))
        return rc;
    if (eff != t->n_docs) return bad(c, "n-samples.%s.effective differs from the per-document count%s", t->name, "");
    if (t->n_docs_original < t->n_docs)
        return bad(c, "n-samples.%s.original is below the number of documents scored%s", t->name, "");
    const cJSON *tr = get(get(xe, "truncated_requests"), t->name);
    long long x;
    if (tr && !as_int(tr, 0, 2147483647LL, &x)) t->truncated_requests = (int)x;
    return 0;
}

static int read_model(struct rd *c, const cJSON *m, struct model_info *mi) {
    if (!m) return 0;  // optional: reports then say "?"
    if (!cJSON_IsObject(m)) return bad(c, "xsa_eval.model must be an object%s%s", "", "");
    long long np = 0;
    int rc;
    if ((rc = get_str(c, m, "path", mi->path, sizeof mi->path, 0)) ||
        (rc = get_str(c, m, "name", mi->name, sizeof mi->name, 0)) ||
        (rc = get_str(c, m, "format", mi->format, sizeof mi->format, 0)) ||
        (rc = get_str(c, m, "arch", mi->arch, sizeof mi->arch, 0)) ||
        (rc = get_str(c, m, "weights_sha256", mi->weights_sha256, sizeof mi->weights_sha256, 0)) ||
        (rc = get_str(c, m, "dtype", mi->dtype, sizeof mi->dtype, 0)) ||
        (rc = get_ll(c, m, "n_params", 0, (1LL << 53), &np, 0)) ||
        (rc = get_int(c, m, "n_layer", &mi->n_layer, 0)) || (rc = get_int(c, m, "d_model", &mi->d_model, 0)) ||
        (rc = get_int(c, m, "n_head", &mi->n_head, 0)) || (rc = get_int(c, m, "n_kv_head", &mi->n_kv_head, 0)) ||
        (rc = get_int(c, m, "vocab_size", &mi->vocab_size, 0)) ||
        (rc = get_int(c, m, "max_length", &mi->max_length, 0)) ||
        (rc = get_str(c, m, "xsa_layers", mi->xsa_layers, sizeof mi->xsa_layers, 0)) ||
        (rc = get_str(c, m, "xsa_source", mi->xsa_source, sizeof mi->xsa_source, 0)) ||
        (rc = get_str(c, m, "tokenizer", mi->tokenizer, sizeof mi->tokenizer, 0)) ||
        (rc = get_str(c, m, "tokenizer_sha256", mi->tokenizer_sha256, sizeof mi->tokenizer_sha256, 0)) ||
        (rc = get_bool(c, m, "add_bos", &mi->add_bos)) ||
        (rc = get_str(c, m, "hub_repo", mi->hub_repo, sizeof mi->hub_repo, 0)) ||
        (rc = get_str(c, m, "hub_revision", mi->hub_revision, sizeof mi->hub_revision, 0)) ||
        (rc = get_str(c, m, "hub_commit", mi->hub_commit, sizeof mi->hub_commit, 0)) ||
        (rc = get_str(c, m, "weights_prefix", mi->weights_prefix, sizeof mi->weights_prefix, 0)))
        return rc;
    mi->n_params = np;
    return 0;
}

static int read_root(struct rd *c, const cJSON *root, struct results *r) {
    if (!cJSON_IsObject(root)) return bad(c, "not a results file (top level is not an object)%s%s", "", "");
    const cJSON *xe = get(root, "xsa_eval"), *res = get(root, "results");
    if (!cJSON_IsObject(xe) || !cJSON_IsObject(get(xe, "per_doc")))
        return bad(c, "not an xsa-eval results file (no xsa_eval block); per-document data needed for paired "
                      "statistics: rerun with xsa-eval run%s%s", "", "");
    if (!cJSON_IsObject(res)) return bad(c, "missing object \"results\"%s%s", "", "");
    int rc;
    if ((rc = get_str(c, xe, "version", r->version, sizeof r->version, 0)) ||
        (rc = get_str_dup(c, xe, "command", &r->command)) ||
        (rc = read_model(c, get(xe, "model"), &r->model)))
        return rc;
    const cJSON *be = get(xe, "backend");
    if ((rc = get_str(c, be, "device", r->device, sizeof r->device, 0)) ||
        (rc = get_str(c, be, "device_desc", r->device_desc, sizeof r->device_desc, 0)) ||
        (rc = get_int(c, be, "threads", &r->threads, 0)) ||
        (rc = get_int(c, be, "batch_tokens", &r->batch_tokens, 0)))
        return rc;
    r->limit = -1;
    const cJSON *lim = get(xe, "limit");
    if (cJSON_IsNumber(lim) && lim->valuedouble > 0 && lim->valuedouble < 1) {
        r->limit_fraction = lim->valuedouble;  // a fractional --limit
    } else if (lim && !cJSON_IsNull(lim)) {
        long long x;
        if (as_int(lim, 0, 2147483647LL, &x))
            return bad(c, "xsa_eval.limit must be null, a whole number of documents or a fraction between 0 and "
                          "1%s%s", "", "");
        r->limit = (int)x;
    }
    r->step = -1;
    if ((rc = get_int(c, xe, "num_fewshot", &r->num_fewshot, 0)) || (rc = get_int(c, xe, "step", &r->step, 0)) ||
        (rc = get_bool(c, xe, "share_prefixes", &r->share_prefixes)))
        return rc;
    if (r->step < -1) return bad(c, "xsa_eval.step must be a non-negative training step%s%s", "", "");
    r->has_step = r->step >= 0;
    if ((rc = get_str(c, xe, "step_source", r->step_source, sizeof r->step_source, 0))) return rc;
    if ((rc = get_num(c, root, "start_time", &r->start_time, 0)) || (rc = get_num(c, root, "end_time", &r->end_time, 0)))
        return rc;
    const cJSON *tm = get(xe, "timing");
    if ((rc = get_num(c, tm, "load_s", &r->load_s, 0)) || (rc = get_num(c, tm, "tokenize_s", &r->tokenize_s, 0)) ||
        (rc = get_num(c, tm, "score_s", &r->score_s, 0)) || (rc = get_num(c, tm, "total_s", &r->total_s, 0)) ||
        (rc = get_ll(c, tm, "requests", 0, 1LL << 53, &r->requests, 0)) ||
        (rc = get_ll(c, tm, "tokens_scored", 0, 1LL << 53, &r->tokens_scored, 0)) ||
        (rc = get_ll(c, tm, "tokens_computed", 0, 1LL << 53, &r->tokens_computed, 0)) ||
        (rc = get_ll(c, tm, "requests_reused", 0, 1LL << 53, &r->requests_reused, 0)) ||
        (rc = get_ll(c, tm, "tokens_reused", 0, 1LL << 53, &r->tokens_reused, 0)))
        return rc;
    if (r->requests_reused > r->requests || r->tokens_reused > r->tokens_scored)
        return bad(c, "xsa_eval.timing: more requests or tokens reused than %s%s", "the run has", "");

    int n = cJSON_GetArraySize(res);
    if (n <= 0) return bad(c, "\"results\" holds no tasks%s%s", "", "");
    if (n > RESULTS_MAX_TASKS) return bad(c, "\"results\" holds more tasks than supported%s%s", "", "");
    r->tasks = xsa_calloc((size_t)n, sizeof *r->tasks);
    for (const cJSON *tres = res->child; tres; tres = tres->next) {
        struct task_result *t = &r->tasks[r->n_tasks];
        if (strlen(tres->string) >= sizeof t->name) return bad(c, "task name too long: %.100s%s", tres->string, "");
        if (results_find_task(r, tres->string)) return bad(c, "task %.100s appears twice%s", tres->string, "");
        if (!task_find(tres->string))
            return bad(c, "results.%.100s: not one of xsa-eval's tasks (xsa-eval tasks lists them)%s", tres->string, "");
        r->n_tasks++;  // counted now so results_free releases what read_task allocates
        memcpy(t->name, tres->string, strlen(tres->string) + 1);
        if ((rc = read_task(c, root, xe, tres, t))) return rc;
        if (r->limit > 0 && t->n_docs > r->limit)
            return bad(c, "xsa_eval.per_doc.%s holds more documents than xsa_eval.limit allows%s", t->name, "");
    }
    return 0;
}

int results_read_json(struct results *r, const char *path, xsa_error *err) {
    memset(r, 0, sizeof *r);
    char *buf = NULL;
    size_t len = 0;
    int rc = file_read_all(path, RESULTS_MAX_FILE, &buf, &len, err);
    if (rc) return rc;
    cJSON *root = json_read_whole(buf, len, JSON_KEYS_UNIQUE, path, err);
    if (!root) {
        rc = XSA_EBADINPUT;
    } else {
        struct rd c = {path, err};
        rc = read_root(&c, root, r);
        cJSON_Delete(root);
    }
    free(buf);
    if (rc) results_free(r);
    return rc;
}
