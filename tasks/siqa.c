// siqa.c: Social IQa (lm_eval/tasks/siqa/siqa.yaml, task social_iqa).
// Context "Q: {{context}} {{question}}\nA:", choices [answerA, answerB, answerC],
// target "{{ (label|int) - 1 }}". Labels are "1".."3", possibly with a trailing "\n".
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "tasks/docbuild.h"
#include "tasks/pystr.h"

// Jinja2's `int` filter: int(s), else int(float(s)), else 0.
static long long jinja_int(const cJSON *label) {
    if (cJSON_IsBool(label)) return cJSON_IsTrue(label);
    if (cJSON_IsNumber(label)) {
        double v = label->valuedouble;
        return isfinite(v) && fabs(v) < 9e18 ? (long long)v : 0;  // int() truncates
    }
    const char *s = label->valuestring;
    size_t n = strlen(s);
    long long v;
    if (py_parse_int(s, n, &v)) return v;
    size_t a = pystr_lstrip_off(s, n), b = pystr_rstrip_len(s, n);
    if (a >= b || b - a > 64 || memchr(s + a, 'x', b - a) || memchr(s + a, 'X', b - a)) return 0;
    char buf[65], *end;
    memcpy(buf, s + a, b - a);
    buf[b - a] = '\0';
    double d = strtod(buf, &end);
    if (*end != '\0' || !isfinite(d) || fabs(d) >= 9e18) return 0;  // inf/nan: ValueError -> 0
    return (long long)d;
}

int siqa_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                      xsa_error *err) {
    static const char *const fields[3] = {"answerA", "answerB", "answerC"};
    const char *context, *question, *ans[3];
    int rc;
    if ((rc = row_get_string(row, "context", where, &context, err))) return rc;
    if ((rc = row_get_string(row, "question", where, &question, err))) return rc;
    for (int i = 0; i < 3; i++)
        if ((rc = row_get_string(row, fields[i], where, &ans[i], err))) return rc;
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(row, "label");
    if (!label) return xsa_fail(err, XSA_EBADINPUT, "%s: field 'label' missing", where);
    if (cJSON_IsString(label)) {
        const char *tmp;
        if ((rc = row_get_string(row, "label", where, &tmp, err))) return rc;
    } else if (!cJSON_IsNumber(label) && !cJSON_IsBool(label)) {
        return xsa_fail(err, XSA_EBADINPUT, "%s: field 'label' must be a string", where);
    }
    if ((rc = doc_alloc(out, doc_id, 3, err))) return rc;
    struct sbuf ctx = {0};
    sbuf_printf(&ctx, "Q: %s %s\nA:", context, question);
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(ans[i]);
        doc_set_request(out, i, ctx.s, ctx.n, " ", ans[i], n, (double)pystr_len(ans[i], n));
    }
    sbuf_free(&ctx);
    long long target = jinja_int(label) - 1;
    if (target >= 0) {
        out->gold = doc_gold_in_range(target, 3);
    } else {
        // "-1" is not isdigit(), so lm-eval keeps the string and looks it up among the choices.
        char txt[32];
        snprintf(txt, sizeof txt, "%lld", target);
        for (int i = 0; i < 3 && out->gold == -100; i++)
            if (strcmp(ans[i], txt) == 0) out->gold = i;
    }
    return 0;
}
