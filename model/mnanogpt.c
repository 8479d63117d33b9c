// mnanogpt.c: modded-nanogpt's state_step*.pt (torch.save(dict(step, code, model, optimizer)))
// of the gated-XSA record's GPT (records/track_1_short/2026-05-07_XSAGatedLayers) and those after
// it (the bigram sign trick, MUDD connections, MUDD gates), and 2026-04-22 MuddFormer's before it
// (MUDD's first layout, dense_w1/w2/bs, read into the later one): the weight banks unpacked into
// per-layer matrices, the schedule the weights do not record (windows, the YaRN updates) from
// xsa_eval.json / --arch or the record's defaults, the paired-head layers from the file's code.
// docs/modded-nanogpt.md.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "common/xalloc.h"
#include "model/mnanogpt.h"
#include "model/model_internal.h"
#include "model/pgolf.h"
#include "model/safetensors.h"
#include "model/torch_checkpoint.h"

#define MNG_MAX_WINDOWS 16
#define MNG_ARCH_MAX_BYTES (64 << 10)

// The record's layer topology (GPT.forward): paired-head layers (its default; 06-11 pairs 0 and
// 5 only), the MLP-only layer, the value-embedding layers, the long-window layers, the XSA layers.
static const int k_paired[MNG_LAYERS] = {1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0};
static const int k_long[MNG_LAYERS] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
static const int k_ve[MNG_LAYERS] = {-1, 0, 1, -1, -1, -1, -1, -1, 2, 3, 4};
static const int k_xsa[MNG_LAYERS] = {0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1};
#define MNG_NO_ATTN 6

struct mng_arch {
    int ws_short, ws_long, max_seq_len;
    int bos_id;                                // the record's BOS_ID: documents start with it (val loss)
    int windows[MNG_MAX_WINDOWS], n_windows;  // each training stage's long window (tokens): Yarn.apply between them
    int paired[MNG_LAYERS], paired_given;     // PAIRED_LAYERS (given: the sidecar set them)
};

static int arch_int(const cJSON *e, const char *path, int *out, xsa_error *err) {
    if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 1 || e->valuedouble > 1e8)
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s must be a positive whole number of tokens", path, e->string ? e->string : "YARN_WINDOWS entry");
    *out = (int)e->valuedouble;
    return 0;
}

// The record's final validation: windows (6, 20) blocks of 128 tokens (apply_final_ws_ext widens
// the long window to 20 without a YaRN update), YaRN updated at each stage's long window
// 3 -> 7 -> 11 -> 13 blocks, 2048-token training sequences, BOS_ID GPT-2's <|endoftext|>.
static void arch_defaults(struct mng_arch *a) {
    static const int w[] = {384, 896, 1408, 1664};
    *a = (struct mng_arch){.ws_short = 768, .ws_long = 2560, .max_seq_len = 2048, .bos_id = 50256, .n_windows = 4};
    memcpy(a->windows, w, sizeof w);
    memcpy(a->paired, k_paired, sizeof k_paired);
}

// A list of paired-head layers into paired[]: distinct layers of the GPT that have attention.
static int paired_list(const cJSON *e, const char *path, int *paired, xsa_error *err) {
    int n = cJSON_GetArraySize(e);
    if (!cJSON_IsArray(e) || n > MNG_LAYERS) n = -1;
    memset(paired, 0, MNG_LAYERS * sizeof *paired);
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(e, i);
        int l = cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) ? (int)v->valuedouble : -1;
        if (l < 0 || l >= MNG_LAYERS || l == MNG_NO_ATTN || paired[l]) n = -1;
        else paired[l] = 1;
    }
    if (n < 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: PAIRED_LAYERS must be a list of distinct layers 0..%d other than %d (the layer without attention); the record's are [0, 2, 5, 9]",
                        path, MNG_LAYERS - 1, MNG_NO_ATTN);
    return 0;
}

static int read_arch(struct mng_arch *a, const char *path, xsa_error *err) {
    arch_defaults(a);
    if (!path) return 0;
    char *text = NULL;
    size_t len = 0;
    int rc = file_read_regular(path, MNG_ARCH_MAX_BYTES, &text, &len, err);
    if (rc) return rc;
    cJSON *r = json_read_whole(text, len, JSON_KEYS_UNIQUE, path, err), *e;
    free(text);
    if (!r) return XSA_EBADINPUT;
    cJSON_ArrayForEach(e, r) {
        if (!strcmp(e->string, "FAMILY")) continue;  // (pgolf.c read it)
        if (!strcmp(e->string, "WS_SHORT")) rc = arch_int(e, path, &a->ws_short, err);
        else if (!strcmp(e->string, "WS_LONG")) rc = arch_int(e, path, &a->ws_long, err);
        else if (!strcmp(e->string, "MAX_SEQ_LEN")) rc = arch_int(e, path, &a->max_seq_len, err);
        else if (!strcmp(e->string, "BOS_ID")) {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 || e->valuedouble >= 1 << 24)
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: BOS_ID must be a token id (a whole number from 0)", path);
            else a->bos_id = (int)e->valuedouble;
        }
        else if (!strcmp(e->string, "PAIRED_LAYERS")) rc = paired_list(e, path, a->paired, err), a->paired_given = 1;
        else if (!strcmp(e->string, "YARN_WINDOWS")) {
            int n = cJSON_GetArraySize(e);
            if (!cJSON_IsArray(e) || n < 1 || n > MNG_MAX_WINDOWS)
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: YARN_WINDOWS must be a list of 1 to %d long windows (tokens), one per training stage", path, MNG_MAX_WINDOWS);
            for (int i = 0; i < n && !rc; i++) rc = arch_int(cJSON_GetArrayItem(e, i), path, &a->windows[i], err);
            a->n_windows = n;
        } else
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: \"%.64s\" is not a modded-nanogpt setting xsa-eval reads (FAMILY, WS_SHORT, WS_LONG, YARN_WINDOWS, MAX_SEQ_LEN, BOS_ID, PAIRED_LAYERS)", path, e->string);
        if (rc) break;
    }
    cJSON_Delete(r);
    return rc;
}

struct mng_build {
    struct pg_tensors *pt;
    const char *path;
    float *arena;
    size_t off, cap;  // floats
};

// The entry `name` (or "_orig_mod." name), or NULL.
static struct pg_entry *entry(struct mng_build *b, const char *name) {
    char alt[128];
    snprintf(alt, sizeof alt, "_orig_mod.%s", name);
    struct pg_entry *e = pgolf_find(b->pt, name);
    return e ? e : pgolf_find(b->pt, alt);
}

// The entry `name` (or "_orig_mod." name, as a compiled model saves it) with the given shape.
static int find(struct mng_build *b, const char *name, int ndim, const int64_t *shape, struct pg_entry **out, xsa_error *err) {
    struct pg_entry *e = entry(b, name);
    if (!e) return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is missing; not a state dict of modded-nanogpt's GPT", b->path, name);
    int ok = e->t->ndim == ndim;
    for (int d = 0; d < ndim && ok; d++) ok = shape[d] < 0 || e->t->shape[d] == shape[d];
    if (!ok) {  // both shapes in full: which dimension is off is the fix
        char got[192] = "(", want[192] = "(";  // (8 dims of 20 digits fit)
        for (int d = 0; d < e->t->ndim && d < 8; d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? ", " : "", (long long)e->t->shape[d]);
        for (int d = 0; d < ndim; d++)
            if (shape[d] < 0) snprintf(want + strlen(want), sizeof want - strlen(want), "%sany", d ? ", " : "");
            else snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? ", " : "", (long long)shape[d]);
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is %s; the record's GPT with the file's other tensors reads %s)", b->path, name,
                        strcat(got, ")"), want);
    }
    e->used = 1;
    *out = e;
    return 0;
}

// Leading dimension of tensor `name` (found before), or 0.
static int64_t dim0(struct mng_build *b, const char *name) {
    struct pg_entry *e = entry(b, name);
    return e && e->t->ndim ? e->t->shape[0] : 0;
}

static float *take(struct mng_build *b, size_t n) {
    float *p = b->arena + b->off;
    b->off += (n + 15) / 16 * 16;
    return p;
}

// The whole tensor `name` as float32 into the arena.
static int load(struct mng_build *b, const char *name, int ndim, const int64_t *shape, float **out, xsa_error *err) {
    struct pg_entry *e;
    int rc = find(b, name, ndim, shape, &e, err);
    if (rc) return rc;
    size_t n = 1;
    for (int d = 0; d < ndim; d++) n *= (size_t)e->t->shape[d];
    if (b->off + n > b->cap) return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is larger than its shape allows", b->path, name);
    *out = take(b, n);
    rc = pgolf_dequantize(b->pt, e, *out, err);
    return rc ? rc : model_check_finite(*out, n, b->path, name, err);  // a NaN weight is a damaged file, not a score
}

static float bf16_round(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

// Yarn(head_dim, max_seq_len): angular frequencies (1/1024)^linspace(0, 1, hd/4), each twice,
// then hd/2 zeros; Yarn.apply(old, new) for each change of the stages' long window. float32 as torch.
static void yarn_freqs(struct mng_model *g, const struct mng_arch *a, int hd) {
    int nf = hd / 4;
    float *freq = g->rope_freq;
    float step = nf > 1 ? (1.0f - 0.0f) / (float)(nf - 1) : 0;
    for (int i = 0; i < nf; i++) {  // torch.linspace: from the start for the first half, the end for the rest
        float v = i < nf / 2 ? 0.0f + step * (float)i : 1.0f - step * (float)(nf - 1 - i);
        freq[2 * i] = freq[2 * i + 1] = powf(1.0f / 1024.0f, v);
    }
    for (int d = 2 * nf; d < hd; d++) freq[d] = 0;
    double scale = 0.1;
    for (int s = 1; s < a->n_windows; s++) {
        int old = a->windows[s - 1], nw = a->windows[s];
        if (old == nw) continue;
        float sf = (float)((double)old / nw), omsf = (float)(1.0 - (double)old / nw);
        for (int d = 0; d < hd; d++) {
            float rot = (float)old * freq[d] / (float)(2 * M_PI);
            float w = (rot - 1.0f) / 31.0f;
            w = w < 0 ? 0 : w > 1 ? 1 : w;
            freq[d] *= sf + w * omsf;
        }
        scale *= 0.2 * log((double)nw / old) + 1;
    }
    g->attn_scale = (float)scale;
}

void mng_rotary_row(const struct mng_model *g, int hd, long row, float *f1, float *f2) {
    for (int d = 0; d < hd; d++) {
        float th = (float)row * g->rope_freq[d];  // torch.outer(t, freq): one float32 product
        f1[d] = bf16_round(cosf(th));
        f2[d] = (d & 1) ? -bf16_round(sinf(th)) : bf16_round(sinf(th));
    }
}

// The file's own code (a state_step file saves its script as "code") names its paired-head
// layers (`self.paired_head_layers = [0, 5]` in 06-11): 1 and paired[] set when it does, as a
// list of distinct layers with attention; 0 when there is no code or no such assignment; -1,
// with the line in `line`, for code this cannot read: an assignment that is not a literal list
// of layers, a second one, or a statement that changes the list after it (`+= [9]`, `.append`).
static int code_paired(const struct pv *root, int *paired, char *line, size_t line_n) {
    const struct pv *code = root && root->kind == PV_DICT ? up_dict_get(root, "code") : NULL;
    static const char key[] = "self.paired_head_layers";
    const char *text = code && code->kind == PV_STR ? code->s : NULL, *start = NULL, *p = NULL, *bad = NULL;
    // Statements that begin with the name: the assignment (`= [...]`, or with an annotation
    // `: list = [...]`), and anything else that changes it. A comment (`# self.paired_... = [..]`)
    // or a read inside an expression (len(self.paired_head_layers)) does not begin a statement.
    for (const char *at = text; at && !bad && (at = strstr(at, key)); at += sizeof key - 1) {
        const char *b0 = at;
        while (b0 > text && (b0[-1] == ' ' || b0[-1] == '\t')) b0--;
        const char *q = at + sizeof key - 1;
        if ((b0 > text && b0[-1] != '\n') || *q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
            (*q >= '0' && *q <= '9'))
            continue;
        while (*q == ' ' || *q == '\t') q++;
        if (*q == ':')
            while (*q && *q != '\n' && *q != '=') q++;
        if (*q == '=' && q[1] != '=' && !start) start = at, p = q;
        else bad = at;  // a second assignment, or a change after the first
    }
    if (bad) {
        size_t n = strcspn(bad, "\r\n");
        snprintf(line, line_n, "%.*s", (int)(n < 120 ? n : 120), bad);
        return -1;
    }
    if (!start) return 0;
    for (p++; *p == ' ' || *p == '\t'; p++) {}
    int got[MNG_LAYERS] = {0}, ok = *p++ == '[';
    while (ok) {
        while (*p == ' ' || *p == '\t') p++;
        if (*p == ']') {  // [] or a trailing comma
            p++;
            break;
        }
        int l = 0, digits = 0;
        for (; *p >= '0' && *p <= '9' && digits < 3; p++, digits++) l = 10 * l + (*p - '0');
        while (*p == ' ' || *p == '\t') p++;
        ok = digits && l < MNG_LAYERS && l != MNG_NO_ATTN && !got[l] && (*p == ',' || *p == ']');
        if (ok) got[l] = 1;
        if (ok && *p++ == ']') break;
    }
    if (ok) {  // nothing but a comment may follow on the line
        while (*p == ' ' || *p == '\t') p++;
        ok = !*p || *p == '\n' || *p == '\r' || *p == '#';
    }
    if (!ok) {
        size_t n = strcspn(start, "\r\n");
        snprintf(line, line_n, "%.*s", (int)(n < 120 ? n : 120), start);
        return -1;
    }
    memcpy(paired, got, sizeof got);
    return 1;
}

// The paired-head layers: the sidecar's PAIRED_LAYERS, else the file's code's, else the record's.
static int resolve_paired(struct mng_arch *a, const struct pv *root, const char *path, const char *arch_path, xsa_error *err) {
    int code[MNG_LAYERS];
    char line[160];
    int got = code_paired(root, code, line, sizeof line);
    if (got < 0 && !a->paired_given)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the code saved in it sets `%s`, which xsa-eval cannot read as a literal "
                        "list of distinct layers 0..%d other than %d (the layer without attention); give PAIRED_LAYERS "
                        "(e.g. [0, 5]) in its xsa_eval.json or --arch", path, line, MNG_LAYERS - 1, MNG_NO_ATTN);
    if (got <= 0) return 0;
    if (a->paired_given && memcmp(code, a->paired, sizeof code))
        return xsa_fail(err, XSA_EBADINPUT, "%s: PAIRED_LAYERS disagrees with the paired_head_layers of the code saved in %s; drop it, or fix it to the code's",
                        arch_path, path);
    memcpy(a->paired, code, sizeof code);
    return 0;
}

// A coefficient network (GPT.forward_mudd, forward_mudd_gate): PREFIX_w1 (2, dim, C), PREFIX_w2
// (2, coef, dim), PREFIX_b2 (2, coef), with the record's coef coefficients (more would be ignored: refused).
static int load_net(struct mng_build *b, const char *prefix, int64_t C, int min_coef, float **w1, float **w2, float **b2, int *dim, int *coef,
                    xsa_error *err) {
    char n1[32], n2[32], n3[32];
    snprintf(n1, sizeof n1, "%s_w1", prefix), snprintf(n2, sizeof n2, "%s_w2", prefix), snprintf(n3, sizeof n3, "%s_b2", prefix);
    int64_t s1[3] = {2, -1, C}, s2[3] = {2, -1, -1}, s3[2] = {2, -1};
    int rc = load(b, n1, 3, s1, w1, err);
    if (rc) return rc;
    s2[2] = *dim = (int)entry(b, n1)->t->shape[1];
    if ((rc = load(b, n2, 3, s2, w2, err))) return rc;
    s3[1] = *coef = (int)entry(b, n2)->t->shape[1];
    if ((rc = load(b, n3, 2, s3, b2, err))) return rc;
    if (*coef != min_coef || *dim < 1 || *dim > 4096)
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s holds %d coefficients of %d features; the record's %s reads %d", b->path, n2, *coef, *dim,
                        strcmp(prefix, "mudd") ? "gates" : "MUDD", min_coef);
    return 0;
}

// 2026-04-22 MuddFormer's this_pr_v3 (GPT._init_mudd): dense_w1 (2, dim, C) is mudd_w1's form;
// dense_w2 (2, dim, 2, 8) and dense_bs (2, 2, 8) hold by (channel, column) what mudd_w2 and
// mudd_b2 hold by coefficient. Block 0 (after layer 9's MLP, from its output, which is layer 10's
// input): V's sources (0, 0..2), the residual's (1, 0..2), the value-embedding gate's two lanes
// (0, 3), (1, 3), layer 10's attention resid/post (0, 4..5), x0/bigram (0, 6..7), MLP resid/post
// (1, 4..5); block 1 (after the loop) the residual's five sources (1, 0..4). The record reads no
// other entry.
static int load_dense(struct mng_build *b, int64_t C, struct mng_model *g, xsa_error *err) {
    static const int col[MNG_MUDD_COEF] = {0, 1, 2, 8, 9, 10, 3, 11, 4, 5, 6, 7, 12, 13};  // coefficient k: channel * 8 + column
    int64_t s1[3] = {2, -1, C}, s2[4] = {2, -1, 2, MNG_DENSE_COLS}, s3[3] = {2, 2, MNG_DENSE_COLS};
    float *w2, *bs;
    int rc = load(b, "dense_w1", 3, s1, &g->mudd_w1, err);
    if (rc) return rc;
    int D = (int)entry(b, "dense_w1")->t->shape[1];
    s2[1] = D;
    if ((rc = load(b, "dense_w2", 4, s2, &w2, err)) || (rc = load(b, "dense_bs", 3, s3, &bs, err))) return rc;
    if (D < 1 || D > 4096) return xsa_fail(err, XSA_EBADINPUT, "%s: dense_w1 has %d features; the record's has 64", b->path, D);
    g->mudd_dim = D, g->mudd_coef = MNG_MUDD_COEF, g->mudd_dense = 1;
    g->mudd_w2 = take(b, (size_t)2 * MNG_MUDD_COEF * D), g->mudd_b2 = take(b, 2 * MNG_MUDD_COEF);
    for (int id = 0; id < 2; id++)
        for (int k = 0; k < MNG_MUDD_COEF; k++) {
            int c = id ? (k < 5 ? MNG_DENSE_COLS + k : -1) : col[k];  // (block 1 reads 5)
            for (int d = 0; d < D; d++)
                g->mudd_w2[((size_t)id * MNG_MUDD_COEF + k) * D + d] = c < 0 ? 0 : w2[((size_t)id * D + d) * 2 * MNG_DENSE_COLS + c];
            g->mudd_b2[id * MNG_MUDD_COEF + k] = c < 0 ? 0 : bs[id * 2 * MNG_DENSE_COLS + c];
        }
    return 0;
}

// The root train_gpt.py's gate layout (GPT.unpack_pre_mudd_gate / unpack_post_mudd_gate): gate 0
// (columns 0..25) holds XSA for layers 1, 3, the attention gate of layer 3 and x0/bigram pairs for
// layers 0..3; gate 1 (columns 26..66) XSA for 4, 7, the attention gate of 10, x0/bigram pairs for
// 4, 5, 7, 8, 9, then the skip and the DC weights. A paired layer's XSA column is never read.
// 2026-05-27's this_pr_v1 (GPT.unpack_mudd_gate, H heads): gate 0 holds XSA for 1, 3, 4, the
// attention gate of 3, x0/bigram pairs for 0..5; gate 1 (from pre on) XSA for 7, the attention
// gate of 10, x0/bigram pairs for 7..10, then the skip.
static void gate_columns_v1(struct mng_layer *L, int l, int H, int pre) {
    L->g_xsa = L->paired ? -1 : l == 1 ? 0 : l == 3 ? H : l == 4 ? 2 * H : l == 7 ? pre : -1;
    L->g_attn = l == 3 ? 3 * H : l == MNG_LAYERS - 1 ? pre + H : -1;
    L->g_x0 = l <= 5 ? 4 * H + 2 * l : l >= 7 ? pre + 2 * H + 2 * (l - 7) : -1;
    L->g_bigram = L->g_x0 < 0 ? -1 : L->g_x0 + 1;
}

static void gate_columns(struct mng_layer *L, int l, int gated) {
    static const int xsa[MNG_LAYERS] = {-1, 0, -1, 6, MNG_GATE_PRE, -1, -1, MNG_GATE_PRE + 6, -1, -1, -1};
    static const int inject[MNG_LAYERS] = {18, 20, 22, 24, MNG_GATE_PRE + 18, MNG_GATE_PRE + 20, -1, MNG_GATE_PRE + 22, MNG_GATE_PRE + 24,
                                           MNG_GATE_PRE + 26, -1};
    L->g_xsa = L->g_attn = L->g_x0 = L->g_bigram = -1;
    if (!gated) return;
    L->g_xsa = L->paired ? -1 : xsa[l];
    L->g_attn = l == 3 ? 12 : l == MNG_LAYERS - 1 ? MNG_GATE_PRE + 12 : -1;
    L->g_x0 = inject[l], L->g_bigram = inject[l] < 0 ? -1 : inject[l] + 1;
}

static int build(struct mng_build *b, struct model *m, const struct mng_arch *arch, int dry, xsa_error *err) {
    struct pg_entry *e;
    int64_t any3[3] = {-1, -1, -1};
    int rc = find(b, "qk_bank", 3, any3, &e, err);
    if (rc) return rc;
    int64_t C = e->t->shape[2], G = e->t->shape[0], QK1 = e->t->shape[1];
    // 2026-04-22 MuddFormer's dense connections: its final GPT (this_pr_v3, dense_w2 of 8 columns)
    // runs; its this_pr_v1 and v2 (other layouts, a GPT of their own each) are refused by name.
    int dense = !!entry(b, "dense_w1");
    struct pg_entry *dw2 = entry(b, "dense_w2");
    if (dense && (!dw2 || dw2->t->ndim != 4 || dw2->t->shape[2] != 2 || dw2->t->shape[3] != MNG_DENSE_COLS))
        return xsa_fail(err, XSA_EBADINPUT, "%s: dense_w1 without a dense_w2 of (2, dim, 2, %d): not 2026-04-22 MuddFormer's final "
                        "GPT (this_pr_v3), the one of its layouts xsa-eval runs (its this_pr_v1 and v2 are not; docs/modded-nanogpt.md)",
                        b->path, MNG_DENSE_COLS);
    static const char *not_dense[] = {"mudd_w1", "xsa_alphas", "mudd_gate_w1", "bigram_sign_table"};  // (its bigram is full width, unsigned)
    for (int i = 0; i < 4 && dense; i++)
        if (entry(b, not_dense[i]))
            return xsa_fail(err, XSA_EBADINPUT, "%s: dense_w1 (2026-04-22 MuddFormer's MUDD) beside %s: no record's GPT has both", b->path,
                            not_dense[i]);
    // The root train_gpt.py's GPT (MUDD gates) has no attention-gate bank: its heads are the
    // value-embedding gates'.
    int gated = !!entry(b, "mudd_gate_w1");
    int64_t ag3[3] = {gated ? 5 : MNG_LAYERS - 1, -1, MNG_GATE_IN};
    if (!rc) rc = find(b, gated ? "ve_gate_bank" : "attn_gate_bank", 3, ag3, &e, err);
    if (rc) return rc;
    int64_t H = e->t->shape[1];
    // xsa_alphas: the gated-XSA record's (layer, head) gates. Its baseline, the master branch the
    // record compares against (master-s1480), is the same GPT without them: an SA model.
    int has_xsa = !!entry(b, "xsa_alphas"), signs = !!entry(b, "bigram_sign_table"), mudd = entry(b, "mudd_w1") || dense;
    int64_t two[2] = {MNG_LAYERS, H};
    if (H < 2 || H % 2 || C % H || (C / H) % 4 || C / H > 1024 || C > 65536)
        return xsa_fail(err, XSA_EBADINPUT, "%s: %lld heads of model width %lld: the record's GPT needs an even head count and head_dim a multiple of 4", b->path,
                        (long long)H, (long long)C);
    int64_t hd = C / H, F = 4 * C, n_qk = (MNG_LAYERS - 1) * H;  // groups of 2 hd rows: per attention layer q then k
    if (QK1 != 2 * hd)
        return xsa_fail(err, XSA_EBADINPUT, "%s: qk_bank is (%lld, %lld, %lld); the record's GPT of %lld heads of width %lld "
                        "reads groups of 2 x head_dim = %lld rows: (%lld or more, %lld, %lld)", b->path, (long long)G,
                        (long long)QK1, (long long)C, (long long)H, (long long)C, (long long)(2 * hd), (long long)n_qk,
                        (long long)(2 * hd), (long long)C);
    // The root train_gpt.py's gate networks replace xsa_alphas (its XSA layers are the gates').
    // 2026-05-27's this_pr_v1 keeps xsa_alphas (unused: its gates give XSA) beside its own DC
    // networks (dc_w1_bank); the alphas without those are no record's GPT.
    int v1 = gated && has_xsa && entry(b, "dc_w1_bank");
    if (gated && has_xsa && !v1)
        return xsa_fail(err, XSA_EBADINPUT, "%s: xsa_alphas beside the MUDD gate networks (mudd_gate_w1) without dc_w1_bank: neither "
                        "2026-05-27's this_pr_v1 (both) nor the root train_gpt.py's GPT (whose gates replace xsa_alphas)", b->path);
    int64_t emb[2] = {-1, C};
    if (!rc) rc = find(b, "embed.weight", 2, emb, &e, err);
    if (rc) return rc;
    int64_t V = e->t->shape[0];
    int64_t any2[2] = {-1, -1};
    if (!rc) rc = find(b, "bigram_embed.weight", 2, any2, &e, err);
    if (rc) return rc;
    int64_t BV = e->t->shape[0], Db = e->t->shape[1];
    // The sign trick's bigram table is bigram_dim wide (192 in the records), added to the first
    // channels; before it the table is the model's width (with MUDD: the root train_gpt.py of
    // 2026-05-24 to 06-05, whose cache[0] is x0 plus layer 0's bigram, not x0).
    if (signs ? Db < 1 || Db > C : Db != C)
        return xsa_fail(err, XSA_EBADINPUT, "%s: bigram_embed.weight is %lld wide; the record's GPT takes %s", b->path, (long long)Db,
                        signs ? "at most the model's width with a bigram_sign_table" : "the model's width without a bigram_sign_table");
    if (gated && (!mudd || H != MNG_DC_HEADS))
        return xsa_fail(err, XSA_EBADINPUT, "%s: MUDD gates %s: the root train_gpt.py's GPT lays its gates out for MUDD and %d heads", b->path,
                        mudd ? "with another head count than 6" : "without MUDD", MNG_DC_HEADS);
    if (G < n_qk || V < 1 || V > 1 << 24 || BV < 2 || BV > 1 << 24)
        return xsa_fail(err, XSA_EBADINPUT, "%s: qk_bank holds %lld head groups, the record's GPT needs %lld; or a vocabulary out of range", b->path,
                        (long long)G, (long long)n_qk);
    if (dry) {  // floats the arena needs: every tensor, the transposed and folded copies
        size_t n = 0;
        for (int i = 0; i < b->pt->n; i++) {
            size_t k = 1;
            for (int d = 0; d < b->pt->e[i].t->ndim; d++) k *= (size_t)b->pt->e[i].t->shape[d];
            n += (k + 15) / 16 * 16;
        }
        b->cap = n + (size_t)MNG_LAYERS * (4 * (size_t)C * C + (size_t)F * C + (size_t)H + 5 * 16) + (size_t)V * C + 16;
        if (dense) b->cap += (2 * MNG_MUDD_COEF * (size_t)dw2->t->shape[1] + 15) / 16 * 16 + 48;  // (its mudd_w2, mudd_b2)
        return 0;
    }
    struct mng_model *g = m->mng;
    struct model_config *c = &m->cfg;
    c->arch = MODEL_ARCH_LLAMA, c->rope = ROPE_NONE, c->n_layer = MNG_LAYERS, c->n_head = c->n_kv_head = (int)H;
    c->head_dim = (int)hd, c->d_model = (int)C, c->d_ff = (int)F, c->vocab_size = (int)V, c->max_seq_len = arch->max_seq_len;
    c->norm_eps = 1.1920928955078125e-07f;  // F.rms_norm with eps=None: float32's machine epsilon
    c->norm_weightless = c->mlp_relu2 = 1, c->bos_id = c->eos_id = arch->bos_id < V ? arch->bos_id : -1;
    snprintf(c->family, sizeof c->family, "mnanogpt");
    g->ws_short = arch->ws_short, g->ws_long = arch->ws_long, g->bigram_vocab = (int)BV, g->bigram_dim = (int)Db;
    g->record_bos = arch->bos_id;

    float *qk, *vo, *mlp, *ag = NULL, *vg, *alphas = NULL, *scalars, *lm, *f, *x0l = NULL, *bgl = NULL;
    int64_t s_vo[3] = {-1, C, C}, s_mlp[4] = {-1, 2, F, C}, s_ag[3] = {MNG_LAYERS - 1, H, MNG_GATE_IN}, s_vg[3] = {5, H, MNG_GATE_IN};
    int64_t s_l2[2] = {MNG_LAYERS, 2}, s_l1[1] = {MNG_LAYERS}, s_sc[1] = {-1}, s_lm[2] = {C, V}, s_ve[2] = {5 * V, C}, s_g[2] = {1, MNG_GATE_IN};
    float *post, *resid;
    // (the gated GPT's gates replace the attention-gate bank, the x0 and bigram lambdas, the skip gate)
    if ((rc = load(b, "qk_bank", 3, any3, &qk, err)) || (rc = load(b, "vo_bank", 3, s_vo, &vo, err)) ||
        (rc = load(b, "mlp_bank", 4, s_mlp, &mlp, err)) || (!gated && (rc = load(b, "attn_gate_bank", 3, s_ag, &ag, err))) ||
        (rc = load(b, "ve_gate_bank", 3, s_vg, &vg, err)) || (has_xsa && (rc = load(b, "xsa_alphas", 2, two, &alphas, err))) ||
        (v1 && (rc = load(b, "attn_gate_bank", 3, s_ag, &ag, err))) ||
        (rc = load(b, "scalars", 1, s_sc, &scalars, err)) || (rc = load(b, "lm_head.weight", 2, s_lm, &lm, err)) ||
        (rc = load(b, "embed.weight", 2, emb, &m->tok_emb, err)) || (rc = load(b, "bigram_embed.weight", 2, any2, &g->bigram_emb, err)) ||
        (rc = load(b, "value_embeds", 2, s_ve, &g->value_embeds, err)) || (rc = load(b, "smear_gate.weight", 2, s_g, &g->smear_gate, err)) ||
        (!gated && (rc = load(b, "skip_gate.weight", 2, s_g, &g->skip_gate, err))) || (rc = load(b, "post_lambdas", 2, s_l2, &post, err)) ||
        (rc = load(b, "resid_lambdas", 2, s_l2, &resid, err)) || (!gated && (rc = load(b, "x0_lambdas", 1, s_l1, &x0l, err))) ||
        (!gated && (rc = load(b, "bigram_lambdas", 1, s_l1, &bgl, err))))
        return rc;
    // scalars: sa_lambdas (2 a layer), smear, backout (none with MUDD), skip, padding
    if (dim0(b, "vo_bank") < 2 * (MNG_LAYERS - 1) || dim0(b, "mlp_bank") < MNG_LAYERS || dim0(b, "scalars") < 2 * MNG_LAYERS + 3 - mudd)
        return xsa_fail(err, XSA_EBADINPUT, "%s: vo_bank, mlp_bank or scalars holds fewer entries than the record's %d layers read", b->path, MNG_LAYERS);
    int64_t s_sign[2] = {-1, Db}, s_fp8[1] = {-1};
    if (signs && (rc = load(b, "bigram_sign_table", 2, s_sign, &g->bigram_sign, err))) return rc;
    if (signs) g->sign_rows = (int)dim0(b, "bigram_sign_table");
    if (signs && g->sign_rows < 1) return xsa_fail(err, XSA_EBADINPUT, "%s: bigram_sign_table has no rows", b->path);
    if (dense ? (rc = load_dense(b, C, g, err)) != 0 : mudd && (rc = load_net(b, "mudd", C, MNG_MUDD_COEF, &g->mudd_w1, &g->mudd_w2, &g->mudd_b2, &g->mudd_dim, &g->mudd_coef, err)) != 0) return rc;
    g->mudd_scale = dense ? (float)(0.2 / sqrt(3.0)) : MNG_MUDD_SCALE;  // (torch's float32 of the Python float)
    if (gated && !v1) {
        float *scale;
        if ((rc = load_net(b, "mudd_gate", C, MNG_GATE_POST, &g->gate_w1, &g->gate_w2, &g->gate_b2, &g->gate_dim, &g->gate_coef, err)) ||
            (rc = load(b, "_mudd_gate_scale", 0, NULL, &scale, err)))
            return rc;
        g->gate_scale = scale[0];
        g->gate_pre = MNG_GATE_PRE, g->gate_post = MNG_GATE_POST, g->gate_post_layer = 4, g->gate_stride = MNG_GATE_PRE + MNG_GATE_POST;
        g->g_skip = MNG_GATE_PRE + 28, g->g_dc = MNG_GATE_PRE + 29;
    } else if (v1) {  // its gate scale is a constant (0.1, then 0.5); its x0/bigram lambdas and skip gate are unused
        float *dc1, *dc2, *unused;
        int64_t s_dc1[3] = {MNG_LAYERS - 1, 2 * H, C}, s_dc2[3] = {MNG_LAYERS - 1, 2 * H, 2 * H};
        g->gate_pre = 4 * (int)H + 12, g->gate_post = 2 * (int)H + 9, g->gate_post_layer = 6;
        if ((rc = load_net(b, "mudd_gate", C, g->gate_pre, &g->gate_w1, &g->gate_w2, &g->gate_b2, &g->gate_dim, &g->gate_coef, err)) ||
            (rc = load(b, "dc_w1_bank", 3, s_dc1, &dc1, err)) || (rc = load(b, "dc_w2_bank", 3, s_dc2, &dc2, err)) ||
            (rc = load(b, "x0_lambdas", 1, s_l1, &unused, err)) || (rc = load(b, "bigram_lambdas", 1, s_l1, &unused, err)) ||
            (rc = load(b, "skip_gate.weight", 2, s_g, &unused, err)))
            return rc;
        g->gates_v1 = 1, g->gate_scale = 0.1f;
        g->dc_w1 = dc1 + (size_t)(MNG_LAYERS - 2) * 2 * H * C, g->dc_w2 = dc2 + (size_t)(MNG_LAYERS - 2) * 4 * H * H;  // layer 10's
        g->g_skip = g->gate_pre + 2 * (int)H + 8, g->g_dc = g->gate_pre + g->gate_post, g->gate_stride = g->g_dc + 2 * (int)H;
    }
    // 07-17's FP8 down-projection scales: training state (the evaluation runs the bank's weights)
    static const char *fp8[] = {"_mlp_down_act_scales", "_mlp_down_proj_scales", "_mlp_down_proj_next_scales"};
    for (int i = 0; i < 3; i++)
        if (entry(b, fp8[i]) && (rc = find(b, fp8[i], 1, s_fp8, &e, err))) return rc;
    // lm_head is CastedLinearT (C, V): logits = x @ W; the head is its transpose.
    m->lm_head = take(b, (size_t)V * C);
    for (int64_t v = 0; v < V; v++)
        for (int64_t i = 0; i < C; i++) m->lm_head[v * C + i] = lm[i * V + v];
    g->smear_lambda = scalars[2 * MNG_LAYERS], g->backout_lambda = mudd ? 0 : scalars[2 * MNG_LAYERS + 1];
    g->skip_lambda = scalars[2 * MNG_LAYERS + 2 - mudd];
    for (int l = 0; l < MNG_LAYERS; l++) {
        struct mng_layer *L = &g->layer[l];
        struct layer_weights *w = &m->layers[l];
        // (the record's key offset and XSA run on unpaired layers only)
        L->attn = l != MNG_NO_ATTN, L->paired = arch->paired[l], L->key_offset = k_long[l] && !L->paired, L->ve = k_ve[l];
        c->attn_off[l] = !L->attn;  // (for what reports a layer: probe's "no attention")
        L->window = k_long[l] ? arch->ws_long : arch->ws_short;
        L->resid_attn = bf16_round(resid[2 * l]), L->resid_mlp = bf16_round(resid[2 * l + 1]);
        L->post_attn = bf16_round(post[2 * l]), L->post_mlp = bf16_round(post[2 * l + 1]);
        if (!gated) L->x0_lambda = bf16_round(x0l[l]), L->bigram_lambda = bf16_round(bgl[l]);
        if (v1) gate_columns_v1(L, l, (int)H, g->gate_pre);
        else gate_columns(L, l, gated);
        // mlp_bank[l] = (c_fc (F, C), c_proj (F, C)): relu(x c_fc^T)^2 c_proj; w_down is c_proj^T.
        w->w_up = mlp + (size_t)l * 2 * F * C;
        w->w_down = f = take(b, (size_t)F * C);
        for (int64_t o = 0; o < C; o++)
            for (int64_t k = 0; k < F; k++) f[o * F + k] = w->w_up[F * C + k * C + o];
        if (!L->attn) continue;
        int a = l - (l > MNG_NO_ATTN);
        float lq = scalars[2 * l], lo = scalars[2 * l + 1];  // sa_lambdas folded: F.linear(x, lambda * W)
        const float *src[4] = {qk + (size_t)a * 2 * C * C, qk + (size_t)a * 2 * C * C + (size_t)C * C, vo + (size_t)a * 2 * C * C,
                               vo + (size_t)a * 2 * C * C + (size_t)C * C};
        float **dst[4] = {&w->wq, &w->wk, &w->wv, &w->wo};
        for (int k = 0; k < 4; k++) {
            *dst[k] = f = take(b, (size_t)C * C);
            for (size_t i = 0; i < (size_t)C * C; i++) f[i] = (k < 3 ? lq : lo) * src[k][i];
        }
        if (!gated) L->attn_gate = ag + (size_t)a * H * MNG_GATE_IN;  // (this_pr_v1's bank is unused)
        if (L->ve >= 0) L->ve_gate = vg + (size_t)L->ve * H * MNG_GATE_IN;
        if (k_xsa[l] && has_xsa && !gated && !L->paired) {
            L->xsa_gate = f = take(b, (size_t)H);
            for (int h = 0; h < H; h++) f[h] = tanhf(alphas[l * H + h]);
            w->xsa_gate = L->xsa_gate;
            c->xsa[l] = 1;
        }
        c->xsa[l] |= L->g_xsa >= 0;
        L->dc = gated && l == MNG_LAYERS - 1 && !L->paired;
    }
    yarn_freqs(g, arch, (int)hd);
    return 0;
}

int mnanogpt_load(struct model *m, const char *path, const char *arch_path, xsa_error *err) {
    struct mng_arch arch;
    int rc = read_arch(&arch, arch_path, err);
    if (rc) return rc;
    struct safetensors st;
    memset(&st, 0, sizeof st);
    struct torch_file tf;
    rc = torch_file_open(&tf, &st, path, err);
    if (rc) {  // (a failed open keeps what it unpickled or indexed until the close)
        torch_file_close(&tf, &st);
        safetensors_close(&st);
        return rc;
    }
    struct pg_tensors *pt = xsa_calloc(1, sizeof *pt);
    pt->path = path;
    const struct pv *sd = tf.root && tf.root->kind == PV_DICT ? up_dict_get(tf.root, "model") : NULL;
    rc = pgolf_read_root(pt, sd ? sd : tf.root, err);
    if (!rc) rc = resolve_paired(&arch, tf.root, path, arch_path, err);
    struct mng_build b = {.pt = pt, .path = path};
    if (!rc) rc = build(&b, m, &arch, 1, err);
    if (!rc) {
        m->arena_bytes = b.cap * sizeof(float);
        m->arena = b.arena = xsa_calloc(b.cap, sizeof(float));
        m->mng = xsa_calloc(1, sizeof *m->mng);
        m->layers = xsa_calloc(MNG_LAYERS, sizeof *m->layers);
        rc = build(&b, m, &arch, 0, err);
    }
    for (int i = 0; i < pt->n && !rc; i++)
        if (!pt->e[i].used)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: unexpected tensor '%s' for modded-nanogpt's GPT; xsa-eval would ignore it, so it refuses the file", path,
                          pt->e[i].name);
    if (!rc) rc = safetensors_sha256(&st, m->weights_sha256, err);
    if (!rc) {
        long long n = 0;
        for (int i = 0; i < pt->n; i++) {
            long long k = 1;
            for (int d = 0; d < pt->e[i].t->ndim; d++) k *= pt->e[i].t->shape[d];
            n += k;
        }
        m->n_params = n;
        snprintf(m->format, sizeof m->format, "pytorch");
        snprintf(m->dtype, sizeof m->dtype, "mixed");
        snprintf(m->xsa_source, sizeof m->xsa_source, "%s", model_xsa_count(&m->cfg) ? "config" : "none");
        const char *unread = NULL;  // state_step files: dict(step, ...)
        m->has_train_step = torch_saved_step(tf.root, &m->train_step, &unread);
        if (unread) snprintf(m->train_step_unread, sizeof m->train_step_unread, "%s", unread);
    }
    torch_file_close(&tf, &st);
    safetensors_close(&st);
    free(pt);
    return rc;  // (on failure model_load frees what was built)
}
