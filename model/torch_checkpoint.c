// torch_checkpoint.c: torch.save zip archives -> struct safetensors tensors (see the header).
#include "model/torch_checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/xalloc.h"

#define TORCH_MAX_NAME 1024  // a tensor name

static int printable_name(const char *s, size_t len) {
    if (!len || len > TORCH_MAX_NAME || strlen(s) != len) return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return 0;
    return 1;
}

static int refuse_legacy(const char *path, const unsigned char *d, size_t n, xsa_error *err) {
    int tar = n > 262 && !memcmp(d + 257, "ustar", 5);
    if (tar || (n >= 2 && d[0] == 0x80 && d[1] <= 5))
        return xsa_fail(err, XSA_EBADINPUT, "%s: a torch.save file in the legacy format (torch < 1.6, %s); xsa-eval reads the zip format: convert it with python -c \"import torch; torch.save(torch.load('%s', weights_only=True), 'converted.pt')\"",
                        path, tar ? "a tar archive" : "a bare pickle", path);
    return xsa_fail(err, XSA_EBADINPUT, "%s: not a torch.save zip archive (no zip header); pass a checkpoint written by torch.save, a Hugging Face folder or a llama2.c .bin", path);
}

// persistent_load: ('storage', torch.<T>Storage, key, location, numel) -> the bytes of
// <prefix>/data/<key>, which must hold numel elements of T.
static int load_storage(struct unpickler *u, void *ctx, const struct pv *pid, struct pv **out, xsa_error *err) {
    struct torch_file *tf = ctx;
    if (pid->kind != PV_TUPLE || pid->n != 5 || pid->v[0]->kind != PV_STR || strcmp(pid->v[0]->s, "storage") ||
        pid->v[1]->kind != PV_GLOBAL || pid->v[1]->i != UPG_STORAGE || pid->v[2]->kind != PV_STR ||
        pid->v[3]->kind != PV_STR || pid->v[4]->kind != PV_INT || pid->v[4]->i < 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a persistent id that is not ('storage', torch.<type>Storage, key, location, numel); the file is corrupt or not written by torch.save",
                        tf->where);
    const struct pv *key = pid->v[2];
    const struct up_dtype *dt = pid->v[1]->dtype;
    if (!printable_name(key->s, key->len) || key->len > 128)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a storage key that is not a short printable name; the file is corrupt", tf->where);
    char name[512];
    snprintf(name, sizeof name, "%s/data/%s", tf->prefix, key->s);
    struct tz_member *m = torch_zip_find(&tf->zip, name);
    if (!m)
        return xsa_fail(err, XSA_EBADINPUT, "%s: storage key '%s' is not in the archive (no member %s); the file is truncated or corrupt", tf->where, key->s, name);
    uint64_t numel = (uint64_t)pid->v[4]->i;
    if (numel > m->size / (uint64_t)dt->size)
        return xsa_fail(err, XSA_EBADINPUT, "%s: storage '%s' declares %llu elements of %s (%d bytes each) but %s holds %llu bytes; the file is corrupt",
                        tf->where, key->s, (unsigned long long)numel, dt->storage, dt->size, name, (unsigned long long)m->size);
    struct pv *s = up_new(u, PV_STORAGE);
    if (!s)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the pickle builds more than %d objects; the file is corrupt or not a checkpoint",
                        tf->where, UP_MAX_NODES);
    s->s = xsa_strdup(key->s);
    s->len = key->len;
    s->dtype = dt;
    s->numel = numel;
    int rc = torch_zip_read(&tf->zip, m, &s->data, err);
    if (!rc) *out = s;
    return rc;
}

// The small text members beside data.pkl: byteorder must be little, version a known number.
static int check_records(struct torch_file *tf, const char *path, xsa_error *err) {
    char name[300];
    const unsigned char *b;
    snprintf(name, sizeof name, "%s/byteorder", tf->prefix);
    struct tz_member *m = torch_zip_find(&tf->zip, name);
    int rc = m ? torch_zip_read(&tf->zip, m, &b, err) : 0;
    if (rc) return rc;
    if (m && !(m->size == 6 && !memcmp(b, "little", 6)))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s is not \"little\"; xsa-eval reads little-endian torch.save files (re-save it on a little-endian machine)", path, name);
    snprintf(name, sizeof name, "%s/version", tf->prefix);
    if (!(m = torch_zip_find(&tf->zip, name))) {
        snprintf(name, sizeof name, "%s/.data/version", tf->prefix);
        m = torch_zip_find(&tf->zip, name);
    }
    if (!m) return 0;
    if ((rc = torch_zip_read(&tf->zip, m, &b, err))) return rc;
    size_t n = (size_t)m->size;
    while (n && (b[n - 1] == '\n' || b[n - 1] == '\r')) n--;
    if (!n || n > 2 || b[0] < '1' || b[0] > '9' || (n == 2 && (b[1] < '0' || b[1] > '9')))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s is not a torch.save format version (1..99); the file is corrupt", path, name);
    return 0;
}

// The archive's one "<prefix>/data.pkl".
static int find_pickle(struct torch_file *tf, const char *path, struct tz_member **pkl, xsa_error *err) {
    *pkl = NULL;
    for (int i = 0; i < tf->zip.n; i++) {
        const char *nm = tf->zip.members[i].name, *slash = strchr(nm, '/');
        if (!slash || strcmp(slash, "/data.pkl") || slash == nm || (size_t)(slash - nm) >= sizeof tf->prefix) continue;
        if (*pkl)
            return xsa_fail(err, XSA_EBADINPUT, "%s: the archive holds two pickles (%s and %s); torch.save writes one", path, (*pkl)->name, nm);
        *pkl = &tf->zip.members[i];
        snprintf(tf->prefix, sizeof tf->prefix, "%.*s", (int)(slash - nm), nm);
    }
    if (!*pkl)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a zip archive with no <name>/data.pkl member; not written by torch.save", path);
    return 0;
}

int torch_file_open(struct torch_file *tf, struct safetensors *st, const char *path, xsa_error *err) {
    memset(tf, 0, sizeof *tf);
    int rc = safetensors_add_file(st, path, &tf->fi, err);
    if (rc) return rc;
    struct mapped_file *mf = &st->files[tf->fi].mf;
    if ((rc = file_map(path, mf, err))) return rc;
    return torch_file_open_bytes(tf, st, tf->fi, path, mf->data, mf->size, err);
}

int torch_file_open_bytes(struct torch_file *tf, struct safetensors *st, int fi, const char *path, const unsigned char *data,
                          size_t size, xsa_error *err) {
    int rc;
    (void)st;
    tf->fi = fi;
    if (!torch_zip_magic(data, size)) return refuse_legacy(path, data, size, err);
    if ((rc = torch_zip_open(&tf->zip, path, data, size, err))) return rc;
    struct tz_member *pkl;
    const unsigned char *bytes;
    if ((rc = find_pickle(tf, path, &pkl, err)) || (rc = check_records(tf, path, err))) return rc;
    snprintf(tf->where, sizeof tf->where, "%s (%s)", path, pkl->name);
    if ((rc = torch_zip_read(&tf->zip, pkl, &bytes, err))) return rc;
    tf->u.where = tf->where;
    tf->u.persistent = load_storage;
    tf->u.ctx = tf;
    return unpickle_run(&tf->u, bytes, (size_t)pkl->size, &tf->root, err);
}

// Copies the elements of t (any strides) into dst in row-major order of `shape`/`stride`.
static void copy_strided(const struct pv *t, const int64_t *shape, const int64_t *stride, unsigned char *dst) {
    size_t es = (size_t)t->dtype->size;
    int64_t idx[UP_MAX_DIMS] = {0};
    uint64_t numel = 1;
    for (int d = 0; d < t->ndim; d++) numel *= (uint64_t)shape[d];
    for (uint64_t k = 0; k < numel; k++) {
        int64_t at = t->offset;
        for (int d = 0; d < t->ndim; d++) at += idx[d] * stride[d];
        memcpy(dst + k * es, t->storage->data + (size_t)at * es, es);
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
    }
}

int torch_add_tensor(struct torch_file *tf, struct safetensors *st, const char *name, const struct pv *t, xsa_error *err) {
    int64_t shape[UP_MAX_DIMS], stride[UP_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    memcpy(stride, t->stride, sizeof stride);
    size_t es = (size_t)t->dtype->size;
    uint64_t numel = 1, want = 1;
    int contiguous = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {  // row-major: stride[d] == product of later sizes
        if (shape[d] != 1 && stride[d] != (int64_t)want) contiguous = 0;
        want *= (uint64_t)shape[d];
        numel *= (uint64_t)shape[d];
    }
    // an empty tensor's offset is not checked against the storage: point at its start
    const unsigned char *data = numel ? t->storage->data + (size_t)t->offset * es : t->storage->data;
    if (!contiguous && numel) {
        unsigned char *copy = malloc((size_t)numel * es);
        if (!copy) return xsa_fail(err, XSA_ERUNTIME, "out of memory copying tensor '%s' of %s", name, tf->where);
        copy_strided(t, shape, stride, copy);
        safetensors_keep(st, tf->fi, copy);
        data = copy;
    }
    return safetensors_add_tensor(st, tf->fi, name, t->dtype->name, t->ndim, shape, data, (size_t)numel * es, err);
}

const char *torch_unwrap_name(const char *name) {
    for (int more = 1; more;)
        more = !strncmp(name, "_orig_mod.", 10) ? (name += 10, 1) : !strncmp(name, "module.", 7) ? (name += 7, 1) : 0;
    return name;
}

const char *torch_clean_name(const char *name, char *out, size_t n) {
    name = torch_unwrap_name(name);
    size_t j = 0;
    for (size_t i = 0; name[i] && j + 1 < n; i++) {
        while (!strncmp(name + i, "._orig_mod.", 11)) i += 10;  // keep the '.' after it
        out[j++] = name[i];
    }
    out[j] = '\0';
    return out;
}

int torch_add_state_dict(struct torch_file *tf, struct safetensors *st, const struct pv *sd, const char *strip, xsa_error *err) {
    char what[160] = "nothing";
    if (!sd || sd->kind != PV_DICT) {
        if (sd) up_describe(sd, what, sizeof what);
        return xsa_fail(err, XSA_EBADINPUT, "%s: the saved object is %s, not a state dict (a dict of tensors) nor an nn.Module; save model.state_dict()",
                        tf->where, what);
    }
    size_t k = strip ? strlen(strip) : 0;
    int rc = 0;
    for (size_t i = 0; i < sd->n && !rc; i++) {
        const struct pv *key = sd->v[2 * i], *val = sd->v[2 * i + 1];
        if (key->kind != PV_STR || !printable_name(key->s, key->len))
            return xsa_fail(err, XSA_EBADINPUT, "%s: state dict entry %zu has a key that is not a printable name; the file is corrupt", tf->where, i);
        if (val->kind != PV_TENSOR) {  // (never called: an object only names its class)
            up_describe(val, what, sizeof what);
            return xsa_fail(err, XSA_EBADINPUT, "%s: state dict entry '%s' is %s, not a tensor; xsa-eval reads the tensors of model.state_dict() "
                            "(alone, or under \"model\" or \"state_dict\" beside other objects)", tf->where, key->s, what);
        }
        char name[TORCH_MAX_NAME + 1];  // (the key's length is checked above)
        torch_clean_name(k && !strncmp(key->s, strip, k) ? key->s + k : key->s, name, sizeof name);
        rc = torch_add_tensor(tf, st, name, val, err);
    }
    return rc;
}

void torch_file_close(struct torch_file *tf, struct safetensors *st) {
    // Inflated storages hold tensor bytes: the file entry takes them over.
    for (int i = 0; i < tf->zip.n; i++) {
        if (!tf->zip.members[i].inflated) continue;
        safetensors_keep(st, tf->fi, tf->zip.members[i].inflated);
        tf->zip.members[i].inflated = NULL;
    }
    unpickle_free(&tf->u);
    torch_zip_close(&tf->zip);
}

int torch_open_file(struct safetensors *st, const char *path, xsa_error *err) {
    struct torch_file tf;
    const struct pv *sd = NULL, *module = NULL;
    int rc = torch_file_open(&tf, st, path, err);
    if (!rc) rc = torch_find_weights(&tf, &sd, &module, err);
    if (!rc) rc = torch_add_state_dict(&tf, st, sd, NULL, err);
    torch_file_close(&tf, st);
    return rc;
}

int torch_refuse_dcp(const char *dir, xsa_error *err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/.metadata", dir);
    if (!file_exists(path)) return 0;
    return xsa_fail(err, XSA_EBADINPUT, "%s: a torch.distributed.checkpoint folder (.metadata and .distcp shards); convert it to one file with python -c \"from torch.distributed.checkpoint.format_utils import dcp_to_torch_save; dcp_to_torch_save('%s', 'model.pt')\" and pass that",
                    dir, dir);
}

// The little-endian integer of `n` bytes at p (signed when `sgn`).
static long long int_le(const unsigned char *p, int n, int sgn) {
    unsigned long long u = 0;
    for (int i = n - 1; i >= 0; i--) u = u << 8 | p[i];
    if (sgn && n < 8 && (u >> (8 * n - 1) & 1)) u |= ~0ULL << (8 * n);
    return (long long)u;
}

// The bytes protocol 2 pickles as _codecs.encode(text, 'latin1') (numpy's scalar data): each
// character of the UTF-8 text is one byte below 256. 1 and out[0..n) when it is n bytes.
static int latin1_bytes(const struct pv *v, unsigned char *out, size_t n) {
    if (v->kind == PV_BYTES) return v->len == n ? (memcpy(out, v->s, n), 1) : 0;
    if (v->kind != PV_OPAQUE || !v->args || v->args->n != 2 || v->args->v[0]->kind != PV_STR ||
        v->args->v[1]->kind != PV_STR || (strcmp(v->args->v[1]->s, "latin1") && strcmp(v->args->v[1]->s, "latin-1")))
        return 0;  // (only _codecs.encode keeps its arguments: unpickle.c)
    const unsigned char *t = (const unsigned char *)v->args->v[0]->s;
    size_t k = 0, len = v->args->v[0]->len;
    for (size_t i = 0; i < len; i++) {
        unsigned c = t[i];
        if (c >= 0x80) {
            if ((c != 0xc2 && c != 0xc3) || i + 1 >= len || (t[i + 1] & 0xc0) != 0x80) return 0;
            c = (c & 0x1f) << 6 | (t[++i] & 0x3f);
        }
        if (k == n) return 0;
        out[k++] = (unsigned char)c;
    }
    return k == n;
}

// A step as loops save it: a Python int, a one-element integer tensor (torch.tensor(step)), or a
// numpy integer scalar (np.int64(step): numpy's scalar(dtype('i8'), its bytes)). 1 and *out.
static int step_value(const struct pv *v, long long *out) {
    if (v->kind == PV_INT) return *out = v->i, 1;
    if (v->kind == PV_TENSOR && v->dtype && v->storage && v->storage->data && v->dtype->name[0] != 'F' &&
        strcmp(v->dtype->name, "BF16") && strcmp(v->dtype->name, "BOOL")) {  // I64 .. U8
        for (int d = 0; d < v->ndim; d++)
            if (v->shape[d] != 1) return 0;
        if ((uint64_t)v->offset >= v->storage->numel) return 0;
        *out = int_le(v->storage->data + (size_t)v->offset * (size_t)v->dtype->size, v->dtype->size, v->dtype->name[0] == 'I');
        return 1;
    }
    if (v->kind != PV_OBJECT || !v->cls || v->cls->kind != PV_GLOBAL || !v->args || v->args->n != 2) return 0;
    const char *cls = v->cls->s;
    if (strcmp(cls, "numpy.core.multiarray.scalar") && strcmp(cls, "numpy._core.multiarray.scalar")) return 0;
    const struct pv *dt = v->args->v[0];  // numpy.dtype('i8', False, True) with state (3, '<', ...)
    if (dt->kind != PV_OBJECT || !dt->cls || dt->cls->kind != PV_GLOBAL || strcmp(dt->cls->s, "numpy.dtype") || !dt->args ||
        !dt->args->n || dt->args->v[0]->kind != PV_STR)
        return 0;
    const char *code = dt->args->v[0]->s;
    if ((code[0] != 'i' && code[0] != 'u') || !strchr("1248", code[1] ? code[1] : '0') || code[2]) return 0;
    int n = code[1] - '0';
    const struct pv *st = dt->state;
    if (n > 1 && !(st && st->kind == PV_TUPLE && st->n >= 2 && st->v[1]->kind == PV_STR && !strcmp(st->v[1]->s, "<"))) return 0;
    unsigned char b[8];
    if (!latin1_bytes(v->args->v[1], b, (size_t)n)) return 0;
    *out = int_le(b, n, code[0] == 'i');
    return 1;
}

int torch_saved_step(const struct pv *root, long long *step, const char **unread) {
    static const char *const keys[] = {"iter_num", "global_step", "step"};
    *unread = NULL;
    for (size_t i = 0; root && root->kind == PV_DICT && i < sizeof keys / sizeof *keys; i++) {
        const struct pv *v = up_dict_get(root, keys[i]);
        long long x = 0;
        if (!v) continue;
        if (step_value(v, &x) && x >= 0 && x <= 2147483647) return *step = x, 1;
        *unread = keys[i];  // the first key decides
        return 0;
    }
    return 0;
}
