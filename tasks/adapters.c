// adapters.c: original-author formats -> canonical (Hugging Face schema) rows; loading docs
// from a --data-dir in either layout. See adapters.h for the files each task reads.
#include "tasks/adapters.h"

#include <bzlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "tasks/docbuild.h"
#include "tasks/pystr.h"
#include "tasks/rows.h"

#define LABELS_MAX_FILE (64u << 20)     // bytes of a labels .lst file
#define BZ2_MAX_OUT (256u << 20)        // decompressed bytes of the HellaSwag text dump

struct dirmap {
    const char *task, *dir;
};
static const struct dirmap dirmaps[] = {
    {"arc_easy", "arc_easy"},   {"arc_challenge", "arc_challenge"},
    {"boolq", "boolq"},         {"hellaswag", "hellaswag"},
    {"lambada_openai", "lambada_openai"}, {"openbookqa", "openbookqa"},
    {"piqa", "piqa"},           {"social_iqa", "siqa"},
    {"winogrande", "winogrande"},
};

const char *task_original_dirname(const struct task_def *t) {
    for (size_t i = 0; i < sizeof dirmaps / sizeof dirmaps[0]; i++)
        if (strcmp(dirmaps[i].task, t->name) == 0) return dirmaps[i].dir;
    return t->name;
}

// One line of a labels file (.lst), NUL-terminated, without its "\n" / "\r\n".
struct labels {
    char *buf;
    char **line;  // (n)
    int n;
};

static void labels_free(struct labels *l) {
    free(l->buf);
    free(l->line);
    memset(l, 0, sizeof *l);
}

static int labels_read(const char *path, struct labels *l, xsa_error *err) {
    memset(l, 0, sizeof *l);
    size_t len;
    int rc = file_read_all(path, LABELS_MAX_FILE, &l->buf, &len, err);
    if (rc) return rc;
    size_t cap = 1;
    for (size_t i = 0; i < len; i++) cap += l->buf[i] == '\n';
    l->line = xsa_calloc(cap, sizeof *l->line);
    for (size_t pos = 0; pos < len;) {
        char *s = l->buf + pos, *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n > 0 && s[n - 1] == '\r') n--;
        s[n] = '\0';
        l->line[l->n++] = s;
    }
    return 0;
}

static char *path_join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = xsa_malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

// Copies string field `from` of `src` into `dst` as `to`; errors name the source line.
static int copy_str(cJSON *dst, const cJSON *src, const char *from, const char *to,
                    const char *where, xsa_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(src, from);
    if (!it) return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' missing", where, from);
    if (!cJSON_IsString(it)) return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' must be a string", where, from);
    cJSON_AddStringToObject(dst, to, it->valuestring);
    return 0;
}

// ARC / OpenBookQA: {id, question:{stem, choices:[{text,label}]}, answerKey}
//   -> {id, <stem_field>, choices:{text:[], label:[]}, answerKey}
static int adapt_question_choices(const cJSON *src, const char *stem_field, cJSON *dst,
                                  const char *where, xsa_error *err) {
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(src, "question");
    if (!cJSON_IsObject(q))
        return xsa_fail(err, XSA_EBADINPUT, "%s: field 'question' missing or not an object {stem, choices}", where);
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(q, "choices");
    if (!cJSON_IsArray(ch))
        return xsa_fail(err, XSA_EBADINPUT, "%s: field 'question.choices' missing or not a list", where);
    int rc;
    if ((rc = copy_str(dst, src, "id", "id", where, err))) return rc;
    if ((rc = copy_str(dst, q, "stem", stem_field, where, err))) return rc;
    cJSON *choices = cJSON_AddObjectToObject(dst, "choices");
    cJSON *text = cJSON_AddArrayToObject(choices, "text");
    cJSON *label = cJSON_AddArrayToObject(choices, "label");
    int i = 0;
    for (const cJSON *c = ch->child; c; c = c->next, i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "text");
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, "label");
        if (!cJSON_IsString(t) || !cJSON_IsString(l))
            return xsa_fail(err, XSA_EBADINPUT, "%s: question.choices[%d] needs string 'text' and 'label'", where, i);
        cJSON_AddItemToArray(text, cJSON_CreateString(t->valuestring));
        cJSON_AddItemToArray(label, cJSON_CreateString(l->valuestring));
    }
    return copy_str(dst, src, "answerKey", "answerKey", where, err);
}

// Converts row i of an original JSONL file (label from a .lst file when given).
typedef int (*convert_fn)(const cJSON *src, int i, const char *label, cJSON *dst,
                          const char *where, xsa_error *err);

static int conv_arc(const cJSON *s, int i, const char *lab, cJSON *d, const char *w, xsa_error *e) {
    (void)i, (void)lab;
    return adapt_question_choices(s, "question", d, w, e);
}

static int conv_obqa(const cJSON *s, int i, const char *lab, cJSON *d, const char *w, xsa_error *e) {
    (void)i, (void)lab;
    return adapt_question_choices(s, "question_stem", d, w, e);
}

// SuperGLUE val.jsonl {question, passage, idx, label: bool} -> label 0/1.
static int conv_boolq_sg(const cJSON *s, int i, const char *lab, cJSON *d, const char *w, xsa_error *e) {
    (void)i, (void)lab;
    int rc;
    if ((rc = copy_str(d, s, "question", "question", w, e))) return rc;
    if ((rc = copy_str(d, s, "passage", "passage", w, e))) return rc;
    const cJSON *idx = cJSON_GetObjectItemCaseSensitive(s, "idx"), *l = cJSON_GetObjectItemCaseSensitive(s, "label");
    if (!cJSON_IsNumber(idx)) return xsa_fail(e, XSA_EBADINPUT, "%s: field 'idx' missing or not a number", w);
    if (!cJSON_IsBool(l) && !(cJSON_IsNumber(l) && (l->valuedouble == 0 || l->valuedouble == 1)))
        return xsa_fail(e, XSA_EBADINPUT, "%s: field 'label' missing or not true/false (or 0/1)", w);
    int v = cJSON_IsBool(l) ? cJSON_IsTrue(l) : l->valuedouble == 1;
    cJSON_AddNumberToObject(d, "idx", idx->valuedouble);
    cJSON_AddNumberToObject(d, "label", v);
    return 0;
}

// Google dev.jsonl {question, title, answer, passage} -> SuperGLUE's text, whose passage is
// "<title> -- <passage>" (docs/lm-eval-semantics.md §2.2; not checked against the HF rows offline).
static int conv_boolq_google(const cJSON *s, int i, const char *lab, cJSON *d, const char *w, xsa_error *e) {
    (void)lab;
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(s, "title");
    const cJSON *passage = cJSON_GetObjectItemCaseSensitive(s, "passage");
    const cJSON *answer = cJSON_GetObjectItemCaseSensitive(s, "answer");
    if (!cJSON_IsString(title)) return xsa_fail(e, XSA_EBADINPUT, "%s: field 'title' missing or not a string", w);
    if (!cJSON_IsString(passage)) return xsa_fail(e, XSA_EBADINPUT, "%s: field 'passage' missing or not a string", w);
    if (!cJSON_IsBool(answer)) return xsa_fail(e, XSA_EBADINPUT, "%s: field 'answer' missing or not true/false", w);
    int rc;
    if ((rc = copy_str(d, s, "question", "question", w, e))) return rc;
    size_t n = strlen(title->valuestring) + strlen(passage->valuestring) + 5;
    char *p = xsa_malloc(n);
    snprintf(p, n, "%s -- %s", title->valuestring, passage->valuestring);
    cJSON_AddStringToObject(d, "passage", p);
    free(p);
    cJSON_AddNumberToObject(d, "idx", i);
    cJSON_AddNumberToObject(d, "label", cJSON_IsTrue(answer));
    return 0;
}

// Original hellaswag_val.jsonl: the HF loader keeps the fields and turns label into a string.
static int conv_hellaswag(const cJSON *s, int i, const char *lab, cJSON *d, const char *w, xsa_error *e) {
    (void)i, (void)lab;
    static const char *const fields[] = {"ind", "activity_label", "ctx_a", "ctx_b", "ctx", "endings",
                                         "source_id", "split", "split_type"};
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(s, fields[k]);
        if (!it) return xsa_fail(e, XSA_EBADINPUT, "%s: field '%s' missing", w, fields[k]);
        cJSON_AddItemToObject(d, fields[k], cJSON_Duplicate(it, 1));
    }
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(s, "label");
    char buf[32] = "";
    // (a label lm-eval's int() would refuse is refused here, not rounded: 2.7 is no ending's index)
    if (cJSON_IsNumber(l) && (l->valuedouble != floor(l->valuedouble) || fabs(l->valuedouble) > 1e9))
        return xsa_fail(e, XSA_EBADINPUT, "%s: field 'label' is %g, not the index of an ending", w, l->valuedouble);
    if (cJSON_IsNumber(l)) snprintf(buf, sizeof buf, "%d", (int)l->valuedouble);
    else if (cJSON_IsString(l)) snprintf(buf, sizeof buf, "%.31s", l->valuestring);
    else if (l) return xsa_fail(e, XSA_EBADINPUT, "%s: field 'label' must be a number", w);
    cJSON_AddStringToObject(d, "label", buf);
    return 0;
}

static int conv_lambada(const cJSON *s, int i, const char *lab, cJSON *d, const char *w, xsa_error *e) {
    (void)i, (void)lab;
    return copy_str(d, s, "text", "text", w, e);
}

static int conv_piqa(const cJSON *s, int i, const char *lab, cJSON *d, const char *w, xsa_error *e) {
    (void)i;
    int rc;
    if ((rc = copy_str(d, s, "goal", "goal", w, e))) return rc;
    if ((rc = copy_str(d, s, "sol1", "sol1", w, e))) return rc;
    if ((rc = copy_str(d, s, "sol2", "sol2", w, e))) return rc;
    if (strcmp(lab, "0") != 0 && strcmp(lab, "1") != 0)
        return xsa_fail(e, XSA_EBADINPUT, "%s: its label '%.20s' in valid-labels.lst is not 0 or 1", w, lab);
    cJSON_AddNumberToObject(d, "label", lab[0] - '0');
    return 0;
}

static int conv_siqa(const cJSON *s, int i, const char *lab, cJSON *d, const char *w, xsa_error *e) {
    (void)i;
    static const char *const fields[] = {"context", "question", "answerA", "answerB", "answerC"};
    int rc;
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
        if ((rc = copy_str(d, s, fields[k], fields[k], w, e))) return rc;
    cJSON_AddStringToObject(d, "label", lab);
    return 0;
}

static int conv_winogrande(const cJSON *s, int i, const char *lab, cJSON *d, const char *w, xsa_error *e) {
    (void)i;
    int rc;
    if ((rc = copy_str(d, s, "sentence", "sentence", w, e))) return rc;
    if ((rc = copy_str(d, s, "option1", "option1", w, e))) return rc;
    if ((rc = copy_str(d, s, "option2", "option2", w, e))) return rc;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(s, "answer");
    if (a && !cJSON_IsString(a)) return xsa_fail(e, XSA_EBADINPUT, "%s: field 'answer' must be a string", w);
    if (a && lab && strcmp(a->valuestring, lab) != 0)
        return xsa_fail(e, XSA_EBADINPUT, "%s: answer \"%.8s\" disagrees with dev-labels.lst \"%.8s\"", w,
                        a->valuestring, lab);
    if (!a && !lab) return xsa_fail(e, XSA_EBADINPUT, "%s: field 'answer' missing and no dev-labels.lst", w);
    cJSON_AddStringToObject(d, "answer", a ? a->valuestring : lab);
    return 0;
}

struct emitter {
    int (*emit)(void *ctx, cJSON *row, const char *where, xsa_error *err);
    void *ctx;
};

// Reads dir/jsonl (+ dir/labels when given; must then have one line per row) and emits the
// converted rows. labels_optional: a missing labels file is fine (conv sees NULL).
static int adapt_jsonl(const char *dir, const char *jsonl, const char *labels, int labels_optional,
                       convert_fn conv, const struct emitter *em, xsa_error *err) {
    char *jp = path_join(dir, jsonl), *lp = labels ? path_join(dir, labels) : NULL;
    struct task_rows src = {0};
    struct labels lab = {0};
    int rc = task_rows_read_jsonl(jp, &src, err);
    int have_labels = lp && (!labels_optional || file_exists(lp));
    if (!rc && have_labels) rc = labels_read(lp, &lab, err);
    if (!rc && have_labels && lab.n != src.n)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: %d labels for %d rows of %s; the files must be aligned line by line",
                      lp, lab.n, src.n, jp);
    for (int i = 0; !rc && i < src.n; i++) {
        cJSON *row = cJSON_CreateObject();
        rc = conv(src.row[i], i, have_labels ? lab.line[i] : NULL, row, src.where[i], err);
        if (rc) cJSON_Delete(row);
        else rc = em->emit(em->ctx, row, src.where[i], err);
    }
    task_rows_free(&src);
    labels_free(&lab);
    free(jp);
    free(lp);
    return rc;
}

// hellaswag_val_full.txt.bz2: per item 6 lines "activity_label: ctx", gold, 4 endings,
// already preprocessed by its author. Rows: {query, choices, gold, preprocessed: true}.
static int adapt_hellaswag_bz2(const char *path, const struct emitter *em, xsa_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return xsa_fail(err, XSA_EBADINPUT, "%s: cannot open", path);
    int bzerr;
    BZFILE *bz = BZ2_bzReadOpen(&bzerr, f, 0, 0, NULL, 0);
    struct sbuf text = {0};
    int rc = bzerr == BZ_OK ? 0 : xsa_fail(err, XSA_EBADINPUT, "%s: not a bzip2 file", path);
    char chunk[1 << 16];
    int later = 0;  // 1: reading the start of a stream after the first
    while (!rc) {
        int got = BZ2_bzRead(&bzerr, bz, chunk, sizeof chunk);
        if (later && bzerr == BZ_DATA_ERROR_MAGIC) break;  // bytes after the last stream that start none: ignored, as by Python's bz2
        later = 0;
        if ((bzerr != BZ_OK && bzerr != BZ_STREAM_END) || got < 0) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: corrupt bzip2 data (error %d)", path, bzerr);
            break;
        }
        if (text.n + (size_t)got > BZ2_MAX_OUT) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: decompresses past %u bytes", path, BZ2_MAX_OUT);
            break;
        }
        if (got > 0) sbuf_append(&text, chunk, (size_t)got);
        if (bzerr != BZ_STREAM_END) continue;
        // A stream ended: parallel compressors (pbzip2, lbzip2) write one file as several
        // streams, which Python reads on, so the next one starts where this one stopped.
        void *unused;
        int n_unused;
        char rest[BZ_MAX_UNUSED];
        BZ2_bzReadGetUnused(&bzerr, bz, &unused, &n_unused);
        memcpy(rest, unused, (size_t)n_unused);
        BZ2_bzReadClose(&bzerr, bz);
        bz = NULL;
        int c = n_unused ? 0 : fgetc(f);
        if (c == EOF) break;
        if (!n_unused) ungetc(c, f);
        bz = BZ2_bzReadOpen(&bzerr, f, 0, 0, rest, n_unused);
        if (bzerr != BZ_OK) rc = xsa_fail(err, XSA_EBADINPUT, "%s: corrupt bzip2 data after its first stream", path);
        later = 1;
    }
    if (bz) BZ2_bzReadClose(&bzerr, bz);
    fclose(f);
    if (!rc && !pystr_utf8_valid(text.s ? text.s : "", text.n))
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: not valid UTF-8 text", path);
    // Split into lines (a final newline ends the last line).
    char *lines[6];
    int k = 0;
    size_t line_no = 0;
    char where[600];
    for (size_t pos = 0; !rc && pos < text.n;) {
        char *s = text.s + pos, *nl = memchr(s, '\n', text.n - pos);
        size_t n = nl ? (size_t)(nl - s) : text.n - pos;
        pos += n + (nl ? 1 : 0);
        if (n > 0 && s[n - 1] == '\r') n--;
        s[n] = '\0';
        lines[k++] = s;
        line_no++;
        if (k < 6) continue;
        k = 0;
        snprintf(where, sizeof where, "%s:%zu", path, line_no - 5);
        long long gold;
        if (!py_parse_int(lines[1], strlen(lines[1]), &gold) || gold < 0 || gold > 3)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: line %zu should be the gold label 0-3, got '%.20s'", path,
                          line_no - 4, lines[1]);
        if (rc) break;
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "query", lines[0]);
        cJSON *ch = cJSON_AddArrayToObject(row, "choices");
        for (int e = 2; e < 6; e++) cJSON_AddItemToArray(ch, cJSON_CreateString(lines[e]));
        cJSON_AddNumberToObject(row, "gold", (double)gold);
        cJSON_AddTrueToObject(row, "preprocessed");
        rc = em->emit(em->ctx, row, where, err);
    }
    if (!rc && k != 0)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: %zu lines is not a multiple of 6 (context, label, 4 endings)", path,
                      line_no);
    sbuf_free(&text);
    return rc;
}

int task_adapt_original_dir(const struct task_def *t, const char *dir,
                            int (*emit)(void *ctx, cJSON *row, const char *where, xsa_error *err),
                            void *ctx, int *preprocessed, xsa_error *err) {
    struct emitter em = {emit, ctx};
    *preprocessed = 0;
    if (!dir_exists(dir)) return xsa_fail(err, XSA_EBADINPUT, "%s: no such folder", dir);
    const char *n = t->name;
    if (!strcmp(n, "arc_easy")) return adapt_jsonl(dir, "ARC-Easy-Test.jsonl", NULL, 0, conv_arc, &em, err);
    if (!strcmp(n, "arc_challenge"))
        return adapt_jsonl(dir, "ARC-Challenge-Test.jsonl", NULL, 0, conv_arc, &em, err);
    if (!strcmp(n, "openbookqa")) return adapt_jsonl(dir, "test.jsonl", NULL, 0, conv_obqa, &em, err);
    if (!strcmp(n, "lambada_openai")) return adapt_jsonl(dir, "lambada_test.jsonl", NULL, 0, conv_lambada, &em, err);
    if (!strcmp(n, "piqa")) return adapt_jsonl(dir, "valid.jsonl", "valid-labels.lst", 0, conv_piqa, &em, err);
    if (!strcmp(n, "social_iqa")) return adapt_jsonl(dir, "dev.jsonl", "dev-labels.lst", 0, conv_siqa, &em, err);
    if (!strcmp(n, "winogrande"))
        return adapt_jsonl(dir, "dev.jsonl", "dev-labels.lst", 1, conv_winogrande, &em, err);
    char *p1 = NULL;
    int rc;
    if (!strcmp(n, "boolq")) {
        p1 = path_join(dir, "val.jsonl");
        rc = file_exists(p1) ? adapt_jsonl(dir, "val.jsonl", NULL, 0, conv_boolq_sg, &em, err)
                             : adapt_jsonl(dir, "dev.jsonl", NULL, 0, conv_boolq_google, &em, err);
        free(p1);
        return rc;
    }
    if (!strcmp(n, "hellaswag")) {
        p1 = path_join(dir, "hellaswag_val.jsonl");
        char *p2 = path_join(dir, "hellaswag_val_full.txt.bz2");
        if (file_exists(p1)) rc = adapt_jsonl(dir, "hellaswag_val.jsonl", NULL, 0, conv_hellaswag, &em, err);
        else if (file_exists(p2)) {
            *preprocessed = 1;  // results must say the HellaSwag text is a third party's
            rc = adapt_hellaswag_bz2(p2, &em, err);
        }
        else rc = xsa_fail(err, XSA_EBADINPUT, "%s: neither hellaswag_val.jsonl nor hellaswag_val_full.txt.bz2", dir);
        free(p1);
        free(p2);
        return rc;
    }
    return xsa_fail(err, XSA_EBADINPUT, "%s: no original-format adapter for task '%s'", dir, n);
}
