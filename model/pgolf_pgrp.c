// pgolf_pgrp.c: the per-group container of the 2026-04-27 9Hp record (COMPRESSOR=pergroup:
// its _serialize_pergroup / _deserialize_pergroup) -> the int6 {w, m} dict (pgolf.h). Every
// header, length, shape and row order is checked before lrzip runs; what the record's reader
// would take without a check (a truncated stream, a row order that is not a permutation,
// values left over) is refused as damage.
#include "model/pgolf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/xalloc.h"
#include "model/lrzip.h"

#define PGRP_GROUPS 7
#define PGRP_STREAMS (PGRP_GROUPS + 2)  // the groups, the remainder, the row orders

// _GROUP_ORDER, and which of them _SIMSORT_KEYS reorders by rows.
static const char *const group_key[PGRP_GROUPS] = {"_tok_emb.weight.q", "attn.c_k.weight.q", "attn.c_q.weight.q", "attn.c_v.weight.q",
                                                    "attn.proj.weight.q", "mlp.fc.weight.q",  "mlp.proj.weight.q"};
static const int simsort[PGRP_GROUPS] = {1, 0, 1, 0, 0, 1, 0};

int pgolf_pgrp_magic(const unsigned char *d, size_t n) { return n >= 4 && !memcmp(d, "PGRP", 4); }

static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

// _unpack_streams, with the lengths required to fill the file exactly.
static int split(const unsigned char *d, size_t n, const unsigned char **s, size_t *len, const char *path, xsa_error *err) {
    if (n < 8) return xsa_fail(err, XSA_EBADINPUT, "%s: a PGRP container of %zu bytes, too short for its header; re-download the artifact", path, n);
    uint32_t count = le32(d + 4);
    if (count != PGRP_STREAMS)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a PGRP container of %u streams; the 2026-04-27 record writes %d (7 weight groups, the remainder, the row orders)",
                        path, count, PGRP_STREAMS);
    size_t off = 8 + 4 * (size_t)count;
    if (n < off) return xsa_fail(err, XSA_EBADINPUT, "%s: a PGRP container cut inside its stream lengths; re-download the artifact", path);
    for (int i = 0; i < PGRP_STREAMS; i++) {
        len[i] = le32(d + 8 + 4 * i);
        if (len[i] > n - off)
            return xsa_fail(err, XSA_EBADINPUT, "%s: PGRP stream %d of %zu bytes runs past the end of the file (%zu bytes left); the artifact is truncated", path, i,
                            len[i], n - off);
        s[i] = d + off;
        off += len[i];
    }
    if (off != n) return xsa_fail(err, XSA_EBADINPUT, "%s: %zu bytes after the last PGRP stream; the artifact is damaged", path, n - off);
    if (!len[PGRP_GROUPS]) return xsa_fail(err, XSA_EBADINPUT, "%s: a PGRP container without its remainder stream; the artifact is damaged", path);
    return 0;
}

// One group's shapes from the manifest: each a tuple of 1..UP_MAX_DIMS positive ints.
struct shape {
    int ndim;
    int64_t dim[UP_MAX_DIMS];
    uint64_t numel;
};

static int read_shapes(const struct pv *list, int g, struct shape **out, int *count, uint64_t cap, const char *path, xsa_error *err) {
    *out = NULL, *count = 0;
    if (!list || (list->kind != PV_LIST && list->kind != PV_TUPLE) || list->n < 1 || list->n > PG_MAX_TENSORS)
        return xsa_fail(err, XSA_EBADINPUT, "%s: PGRP group '%s' has data but no list of shapes in the manifest; the artifact is damaged", path, group_key[g]);
    if (group_key[g][0] == '_' && list->n != 1)
        return xsa_fail(err, XSA_EBADINPUT, "%s: PGRP group '%s' lists %zu shapes for its one tensor; the artifact is damaged", path, group_key[g], list->n);
    struct shape *sh = xsa_calloc(list->n, sizeof *sh);
    for (size_t i = 0; i < list->n; i++) {
        const struct pv *t = list->v[i];
        int ok = t && (t->kind == PV_TUPLE || t->kind == PV_LIST) && t->n <= UP_MAX_DIMS;
        sh[i].ndim = ok ? (int)t->n : 0;
        sh[i].numel = 1;
        for (int k = 0; ok && k < sh[i].ndim; k++) {
            const struct pv *e = t->v[k];
            ok = e->kind == PV_INT && e->i >= 1 && (uint64_t)e->i <= cap && sh[i].numel <= cap / (uint64_t)e->i;
            if (ok) sh[i].dim[k] = e->i, sh[i].numel *= (uint64_t)e->i;
        }
        if (!ok) {
            free(sh);
            return xsa_fail(err, XSA_EBADINPUT, "%s: PGRP group '%s' has a shape %zu that is not a tuple of positive sizes within the file's bounds; the artifact is damaged",
                            path, group_key[g], i);
        }
    }
    *out = sh, *count = (int)list->n;
    return 0;
}

static struct pv *new_str(struct unpickler *u, const char *s) {
    struct pv *p = up_new(u, PV_STR);
    if (p) p->s = xsa_strdup(s), p->len = strlen(s);
    return p;
}

// A contiguous int8 tensor over `data` (kept alive by the caller).
static struct pv *int8_tensor(struct unpickler *u, const unsigned char *data, const struct shape *sh) {
    struct pv *s = up_new(u, PV_STORAGE), *t = up_new(u, PV_TENSOR);
    if (!s || !t) return NULL;
    s->dtype = t->dtype = up_dtype_find("CharStorage");
    s->data = data, s->numel = sh->numel;
    t->storage = s, t->ndim = sh->ndim;
    int64_t stride = 1;
    for (int k = sh->ndim - 1; k >= 0; k--) t->shape[k] = sh->dim[k], t->stride[k] = stride, stride *= sh->dim[k];
    return t;
}

static void dict_put(struct pv *d, struct pv *k, struct pv *v) {
    XSA_GROW(d->v, d->cap, 2 * d->n + 2);
    d->v[2 * d->n] = k, d->v[2 * d->n + 1] = v, d->n++;
}

struct pgrp {
    const char *path;
    struct unpickler *u;
    struct pv *w;                 // the {name: tensor} dict being built
    const unsigned char *perms;   // the row orders, uint16 little-endian, consumed in order
    size_t perms_n, perms_off;
};

// A 2-D tensor's values from its stored form: transposed, rows in the similarity order
// `order` (NULL: as they are): A[order[r]][c] = stored[c * rows + r].
static int untranspose(struct pgrp *p, int g, const char *name, const unsigned char *src, unsigned char *dst, const struct shape *sh, xsa_error *err) {
    uint64_t rows = (uint64_t)sh->dim[0], cols = (uint64_t)sh->dim[1];
    const unsigned char *ord = NULL;
    if (simsort[g]) {
        if (rows > 65536)
            return xsa_fail(err, XSA_EBADINPUT, "%s: '%s' has %llu rows; the record's uint16 row order cannot hold them (the artifact is damaged)", p->path, name,
                            (unsigned long long)rows);
        if (p->perms_n - p->perms_off < 2 * rows)
            return xsa_fail(err, XSA_EBADINPUT, "%s: the PGRP row orders end before '%s' (%llu rows); the artifact is damaged", p->path, name,
                            (unsigned long long)rows);
        ord = p->perms + p->perms_off;
        p->perms_off += 2 * rows;
        unsigned char *seen = xsa_calloc(rows, 1);
        int bad = 0;
        for (uint64_t r = 0; r < rows && !bad; r++) {
            unsigned v = ord[2 * r] | (unsigned)ord[2 * r + 1] << 8;
            bad = v >= rows || seen[v]++;
        }
        free(seen);
        if (bad) return xsa_fail(err, XSA_EBADINPUT, "%s: the PGRP row order of '%s' is not a permutation of its %llu rows; the artifact is damaged", p->path, name,
                                 (unsigned long long)rows);
    }
    for (uint64_t r = 0; r < rows; r++) {
        uint64_t to = ord ? (uint64_t)(ord[2 * r] | (unsigned)ord[2 * r + 1] << 8) : r;
        for (uint64_t c = 0; c < cols; c++) dst[to * cols + c] = src[c * rows + r];
    }
    return 0;
}

// Group g's values (raw, want bytes) -> its tensors in p->w, named as the record's reader names
// them: the one tensor of a "_" group, else blocks.<i>.<key> for the i-th shape.
static int add_group(struct pgrp *p, int g, const unsigned char *raw, unsigned char *vals, const struct shape *sh, int count, xsa_error *err) {
    uint64_t off = 0;
    for (int i = 0; i < count; i++) {
        char name[128];
        if (group_key[g][0] == '_') snprintf(name, sizeof name, "%s", group_key[g] + 1);
        else snprintf(name, sizeof name, "blocks.%d.%s", i, group_key[g]);
        if (up_dict_get(p->w, name))
            return xsa_fail(err, XSA_EBADINPUT, "%s: '%s' is both in a PGRP group and in its remainder; the artifact is damaged", p->path, name);
        int rc = sh[i].ndim == 2 ? untranspose(p, g, name, raw + off, vals + off, &sh[i], err) : (memcpy(vals + off, raw + off, sh[i].numel), 0);
        if (rc) return rc;
        struct pv *k = new_str(p->u, name), *t = int8_tensor(p->u, vals + off, &sh[i]);
        if (!k || !t) return xsa_fail(err, XSA_EBADINPUT, "%s: too many objects in the PGRP container", p->path);
        dict_put(p->w, k, t);
        off += sh[i].numel;
    }
    return 0;
}

// The remainder: {r, m, s} from its torch.save, r copied into a fresh dict p->w.
static int open_remainder(struct pgrp *p, struct torch_file *tf, struct safetensors *st, int fi, const unsigned char *d, size_t n,
                          const struct pv **meta, const struct pv **manifest, xsa_error *err) {
    unsigned char *raw = NULL;
    size_t raw_n = 0;
    int rc = pgolf_decompress(d, n, &raw, &raw_n, p->path, err);
    if (rc) return rc;
    safetensors_keep(st, fi, raw);
    if ((rc = torch_file_open_bytes(tf, st, fi, p->path, raw, raw_n, err))) return rc;
    const struct pv *root = tf->root, *r = up_dict_get(root, "r");
    *meta = up_dict_get(root, "m"), *manifest = up_dict_get(root, "s");
    if (!r || r->kind != PV_DICT || !*meta || (*meta)->kind != PV_DICT || !*manifest || (*manifest)->kind != PV_DICT)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the PGRP remainder is not the record's {r, m, s} dict; the artifact is damaged", p->path);
    p->u = &tf->u;
    if (!(p->w = up_new(p->u, PV_DICT))) return xsa_fail(err, XSA_EBADINPUT, "%s: too many objects in the PGRP container", p->path);
    for (size_t i = 0; i < r->n; i++) dict_put(p->w, r->v[2 * i], r->v[2 * i + 1]);
    return 0;
}

int pgolf_pgrp_open(struct torch_file *tf, struct safetensors *st, int fi, const char *path, const unsigned char *d, size_t n,
                    const struct pv **root, xsa_error *err) {
    const unsigned char *s[PGRP_STREAMS];
    size_t len[PGRP_STREAMS];
    struct pgrp p = {.path = path};
    const struct pv *meta = NULL, *manifest = NULL;
    int rc = split(d, n, s, len, path, err);
    if (!rc) rc = open_remainder(&p, tf, st, fi, s[PGRP_GROUPS], len[PGRP_GROUPS], &meta, &manifest, err);
    if (!rc && len[PGRP_GROUPS + 1]) {
        unsigned char *perms = NULL;
        if (!(rc = pgolf_decompress(s[PGRP_GROUPS + 1], len[PGRP_GROUPS + 1], &perms, &p.perms_n, path, err))) safetensors_keep(st, fi, perms);
        p.perms = perms;
    }
    struct shape *sh[PGRP_GROUPS] = {0};
    int count[PGRP_GROUPS] = {0}, jobs_n = 0, job_group[PGRP_GROUPS];
    struct lrzip_job jobs[PGRP_GROUPS];
    char label[PGRP_GROUPS][64];
    uint64_t cap = pgolf_inflate_cap(n), total = 0;
    for (int g = 0; g < PGRP_GROUPS && !rc; g++) {
        if (!len[g]) continue;
        if ((rc = read_shapes(up_dict_get(manifest, group_key[g]), g, &sh[g], &count[g], cap, path, err))) break;
        uint64_t want = 0;
        for (int i = 0; i < count[g]; i++) want += sh[g][i].numel;  // each <= cap, count <= 65536: no overflow
        if ((total += want) > cap) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: its PGRP shapes need more than %llu bytes (64 times the file); not a parameter-golf artifact", path,
                          (unsigned long long)cap);
            break;
        }
        snprintf(label[jobs_n], sizeof label[jobs_n], "PGRP group '%s'", group_key[g]);
        jobs[jobs_n] = (struct lrzip_job){.in = s[g], .in_n = len[g], .want = (size_t)want, .label = label[jobs_n]};
        job_group[jobs_n++] = g;
    }
    if (!rc) rc = lrzip_decompress_all(jobs, jobs_n, path, err);
    for (int j = 0; j < jobs_n && !rc; j++) {
        unsigned char *vals = xsa_malloc(jobs[j].want ? jobs[j].want : 1);
        safetensors_keep(st, fi, vals);
        rc = add_group(&p, job_group[j], jobs[j].out, vals, sh[job_group[j]], count[job_group[j]], err);
    }
    for (int j = 0; j < jobs_n; j++) free(jobs[j].out);
    if (!rc && p.perms_off != p.perms_n)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: %zu bytes of PGRP row orders are left over after the last sorted tensor; the artifact is damaged", path,
                      p.perms_n - p.perms_off);
    struct pv *out = rc ? NULL : up_new(p.u, PV_DICT);
    struct pv *kw = out ? new_str(p.u, "w") : NULL, *km = kw ? new_str(p.u, "m") : NULL;
    if (!rc && !km) rc = xsa_fail(err, XSA_EBADINPUT, "%s: too many objects in the PGRP container", path);
    if (!rc) {
        dict_put(out, kw, p.w);
        dict_put(out, km, (struct pv *)meta);
        *root = out;
    }
    for (int g = 0; g < PGRP_GROUPS; g++) free(sh[g]);
    return rc;
}
