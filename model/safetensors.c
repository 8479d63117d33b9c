// safetensors.c: mmap + validate safetensors files; convert F32/F16/BF16 tensors to float32.
#include "common/xalloc.h"
#include "model/safetensors.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/json_read.h"
#include "model/model_internal.h"
#include "model/torch_checkpoint.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian; this reader assumes a little-endian host"
#endif

#define ST_MAX_TENSORS (1 << 20)
#define ST_MAX_INDEX_BYTES (64u << 20)

static const struct {
    const char *name;
    int size;
    enum st_dtype dtype;
} st_dtypes[] = {
    {"F32", 4, ST_F32},   {"F16", 2, ST_F16},   {"BF16", 2, ST_BF16},   {"F64", 8, ST_OTHER},
    {"I64", 8, ST_OTHER}, {"I32", 4, ST_OTHER}, {"I16", 2, ST_OTHER},   {"I8", 1, ST_OTHER},
    {"U64", 8, ST_OTHER}, {"U32", 4, ST_OTHER}, {"U16", 2, ST_OTHER},   {"U8", 1, ST_OTHER},
    {"BOOL", 1, ST_OTHER}, {"F8_E4M3", 1, ST_OTHER}, {"F8_E5M2", 1, ST_OTHER},
};

float st_bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float st_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000u | (man << 13);  // inf / nan
    } else if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else {  // subnormal: renormalise
            int e = -1;
            do { man <<= 1; e++; } while (!(man & 0x400));
            u = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else {
        u = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

// A JSON number that is a non-negative integer below 2^53.
static int json_u64(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return -1;
    double d = j->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || floor(d) != d) return -1;
    *out = (uint64_t)d;
    return 0;
}

// ---- name index: open addressing over tensor indices, kept at most half full ----

// Adds tensors[i] to the index (its name is not there yet).
static void index_add(struct safetensors *st, int i) {
    size_t cap = st->index ? st->index_mask + 1 : 0;
    if ((size_t)st->n_tensors * 2 + 2 > cap) {  // grow and rehash every tensor so far
        size_t nc = cap ? cap : 64;
        while (nc < (size_t)st->n_tensors * 4 + 4) nc *= 2;
        int32_t *ix = xsa_malloc(nc * sizeof *ix);
        memset(ix, 0xFF, nc * sizeof *ix);
        free(st->index);
        st->index = ix;
        st->index_mask = nc - 1;
        for (int k = 0; k < st->n_tensors; k++) {
            if (k == i) continue;
            size_t h = (size_t)xsa_hash_str(st->tensors[k].name) & st->index_mask;
            while (st->index[h] >= 0) h = (h + 1) & st->index_mask;
            st->index[h] = k;
        }
    }
    size_t h = (size_t)xsa_hash_str(st->tensors[i].name) & st->index_mask;
    while (st->index[h] >= 0) h = (h + 1) & st->index_mask;
    st->index[h] = i;
}

void safetensors_drop_prefix(struct safetensors *st, size_t len) {
    for (int i = 0; i < st->n_tensors; i++) {
        char *name = st->tensors[i].name;
        memmove(name, name + len, strlen(name + len) + 1);
    }
    if (!st->index) return;
    memset(st->index, 0xFF, (st->index_mask + 1) * sizeof *st->index);  // rehash under the new names
    for (int i = 0; i < st->n_tensors; i++) {
        size_t h = (size_t)xsa_hash_str(st->tensors[i].name) & st->index_mask;
        while (st->index[h] >= 0) h = (h + 1) & st->index_mask;
        st->index[h] = i;
    }
}

static int parse_entry(struct safetensors *st, int file, const cJSON *e, size_t data_size,
                       const unsigned char *data, xsa_error *err) {
    const char *path = st->files[file].path, *name = e->string;
    if (!cJSON_IsObject(e)) return xsa_fail(err, XSA_EBADINPUT, "%s: header entry '%s' is not an object; the file is corrupt", path, name);
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(jd) || !cJSON_IsArray(js) || !cJSON_IsArray(jo) || cJSON_GetArraySize(jo) != 2)
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' lacks dtype, shape or data_offsets [begin, end]; the file is corrupt", path, name);
    int elsize = 0;
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (!strcmp(jd->valuestring, st_dtypes[i].name)) elsize = st_dtypes[i].size;
    if (!elsize)
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' has unknown dtype '%.16s' (readable: F32, F16, BF16)", path, name, jd->valuestring);
    int ndim = cJSON_GetArraySize(js);
    if (ndim > ST_MAX_DIMS) return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' has %d dimensions (at most %d)", path, name, ndim, ST_MAX_DIMS);
    struct st_tensor scratch, *t = &scratch;
    memset(t, 0, sizeof *t);
    uint64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        uint64_t n;
        if (json_u64(cJSON_GetArrayItem(js, d), &n) || n > (1ull << 40))
            return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' has an invalid shape; the file is corrupt", path, name);
        t->shape[d] = (int64_t)n;
        if (n && numel > (1ull << 40) / n)  // checked before multiplying: no wrap-around to a small count
            return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is impossibly large", path, name);
        numel *= n;
    }
    uint64_t b, end;
    if (json_u64(cJSON_GetArrayItem(jo, 0), &b) || json_u64(cJSON_GetArrayItem(jo, 1), &end) || b > end)
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' has invalid data_offsets; the file is corrupt", path, name);
    if (end > data_size)
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' data_offsets [%llu, %llu] run past the %zu-byte data region; the file is truncated or corrupt",
                        path, name, (unsigned long long)b, (unsigned long long)end, data_size);
    if (end - b != numel * (uint64_t)elsize)
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' spans %llu bytes but its shape and dtype %s need %llu; the file is corrupt",
                        path, name, (unsigned long long)(end - b), jd->valuestring, (unsigned long long)(numel * (uint64_t)elsize));
    return safetensors_add_tensor(st, file, name, jd->valuestring, ndim, t->shape, data + b, (size_t)(end - b), err);
}

int safetensors_add_tensor(struct safetensors *st, int fi, const char *name, const char *dtype_name, int ndim,
                           const int64_t *shape, const unsigned char *data, size_t nbytes, xsa_error *err) {
    if (safetensors_find(st, name))
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' appears twice in the checkpoint", st->files[fi].path, name);
    if (st->n_tensors >= ST_MAX_TENSORS) return xsa_fail(err, XSA_EBADINPUT, "%s: more than %d tensors", st->files[fi].path, ST_MAX_TENSORS);
    if (st->n_tensors + 1 > st->cap_tensors) {
        int cap = st->cap_tensors ? st->cap_tensors * 2 : 64;
        st->tensors = xsa_realloc_array(st->tensors, (size_t)cap, sizeof *st->tensors);
        st->cap_tensors = cap;
    }
    struct st_tensor *t = &st->tensors[st->n_tensors];
    memset(t, 0, sizeof *t);
    t->dtype = ST_OTHER;
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (!strcmp(dtype_name, st_dtypes[i].name)) t->dtype = st_dtypes[i].dtype;
    t->name = xsa_strdup(name);
    snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dtype_name);
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->data = data;
    t->nbytes = nbytes;
    t->file = fi;
    st->n_tensors++;
    index_add(st, st->n_tensors - 1);
    return 0;
}

void safetensors_keep(struct safetensors *st, int fi, void *buf) {
    struct st_file *f = &st->files[fi];
    f->owned = xsa_realloc_array(f->owned, (size_t)f->n_owned + 1, sizeof *f->owned);
    f->owned[f->n_owned++] = buf;
}

static int cmp_offsets(const void *a, const void *b) {
    const struct st_tensor *x = *(const struct st_tensor *const *)a, *y = *(const struct st_tensor *const *)b;
    if (x->data != y->data) return x->data < y->data ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

// The reference library refuses a file whose tensors, ordered by offsets, leave a gap, overlap,
// or do not end at the end of the file; so do we (it also bounds the values a file can claim).
static int check_tiling(const struct safetensors *st, int first, const unsigned char *data, size_t data_size,
                        const char *path, xsa_error *err) {
    int n = st->n_tensors - first;
    const struct st_tensor **v = xsa_malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int i = 0; i < n; i++) v[i] = &st->tensors[first + i];
    qsort(v, (size_t)n, sizeof *v, cmp_offsets);
    const unsigned char *at = data;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (v[i]->data != at)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' starts at data offset %zu where %zu was expected (a gap or an overlap); the file is corrupt",
                          path, v[i]->name, (size_t)(v[i]->data - data), (size_t)(at - data));
        at = v[i]->data + v[i]->nbytes;
    }
    if (!rc && at != data + data_size)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: the tensors cover %zu of the %zu bytes of the data region; the file is corrupt",
                      path, (size_t)(at - data), data_size);
    free(v);
    return rc;
}

int safetensors_add_file(struct safetensors *st, const char *path, int *fi, xsa_error *err) {
    if (st->n_files >= ST_MAX_SHARDS) return xsa_fail(err, XSA_EBADINPUT, "%s: more than %d shard files", path, ST_MAX_SHARDS);
    st->files = xsa_realloc_array(st->files, (size_t)st->n_files + 1, sizeof *st->files);
    *fi = st->n_files;
    struct st_file *f = &st->files[*fi];
    memset(f, 0, sizeof *f);
    f->path = xsa_strdup(path);
    st->n_files++;  // counted now so close() releases it on any error below
    return 0;
}

int safetensors_open_file(struct safetensors *st, const char *path, xsa_error *err) {
    int fi = 0;
    int rc = safetensors_add_file(st, path, &fi, err);
    if (rc) return rc;
    struct st_file *f = &st->files[fi];
    if ((rc = file_map(path, &f->mf, err))) return rc;
    const unsigned char *p = f->mf.data;
    size_t size = f->mf.size;
    if (size < 8) return xsa_fail(err, XSA_EBADINPUT, "%s: %zu bytes is too short for a safetensors file (no header length)", path, size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | p[i];
    if (hlen > ST_MAX_HEADER_BYTES || hlen > size - 8)
        return xsa_fail(err, XSA_EBADINPUT, "%s: header length %llu is beyond the %zu-byte file (or the %u-byte limit); not a safetensors file, or truncated",
                        path, (unsigned long long)hlen, size, ST_MAX_HEADER_BYTES);
    xsa_error jerr = {0};
    cJSON *h = json_read_whole((const char *)p + 8, (size_t)hlen, JSON_KEYS_UNIQUE, "the header", &jerr);
    if (!h) return xsa_fail(err, XSA_EBADINPUT, "%s: %s; the file is corrupt", path, jerr.msg);
    if (!cJSON_IsObject(h)) {
        cJSON_Delete(h);
        return xsa_fail(err, XSA_EBADINPUT, "%s: the header is not a JSON object; the file is corrupt", path);
    }
    int n = cJSON_GetArraySize(h);
    if (n > ST_MAX_TENSORS || st->n_tensors + n > ST_MAX_TENSORS) {
        cJSON_Delete(h);
        return xsa_fail(err, XSA_EBADINPUT, "%s: too many tensors (%d)", path, n);
    }
    const unsigned char *data = p + 8 + hlen;
    size_t data_size = size - 8 - (size_t)hlen;
    int first = st->n_tensors;
    const cJSON *e;
    cJSON_ArrayForEach(e, h) {
        if (!strcmp(e->string, "__metadata__")) {  // strings to strings, as the reference library requires
            const cJSON *v = NULL;
            int ok = cJSON_IsObject(e) || cJSON_IsNull(e);  // (an Option in the reference: null is none)
            cJSON_ArrayForEach(v, e) ok &= cJSON_IsString(v);
            if (!ok) {
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: __metadata__ must map names to strings; the file is corrupt", path);
                break;
            }
            continue;
        }
        if ((rc = parse_entry(st, fi, e, data_size, data, err))) break;
    }
    cJSON_Delete(h);
    if (!rc) rc = check_tiling(st, first, data, data_size, path, err);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// A shard name from the index must be a plain file name inside the checkpoint directory.
static int shard_name_ok(const char *s) {
    return s[0] && s[0] != '.' && !strchr(s, '/') && !strchr(s, '\\') && strlen(s) < 512;
}

typedef int (*open_file_fn)(struct safetensors *st, const char *path, xsa_error *err);

static int open_sharded(struct safetensors *st, const char *dir, const char *index_path, open_file_fn open_file, xsa_error *err) {
    char *text = NULL;
    int rc = file_read_regular(index_path, ST_MAX_INDEX_BYTES, &text, NULL, err);
    if (rc) return rc;
    cJSON *idx = json_read_whole(text, strlen(text), JSON_KEYS_UNIQUE, index_path, err);
    free(text);
    if (!idx) return XSA_EBADINPUT;
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(idx, "weight_map");
    if (!cJSON_IsObject(wm)) {
        cJSON_Delete(idx);
        return xsa_fail(err, XSA_EBADINPUT, "%s: not JSON with a \"weight_map\" object; the index is corrupt", index_path);
    }
    int n = cJSON_GetArraySize(wm), nu = 0;
    const char **names = xsa_calloc((size_t)n + 1, sizeof *names);
    const cJSON *e;
    cJSON_ArrayForEach(e, wm) {
        if (!cJSON_IsString(e) || !shard_name_ok(e->valuestring)) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: weight_map entry '%s' does not name a shard file in the checkpoint directory", index_path, e->string);
            break;
        }
        names[nu++] = e->valuestring;
    }
    if (!rc && nu == 0) rc = xsa_fail(err, XSA_EBADINPUT, "%s: weight_map is empty", index_path);
    if (!rc) {
        qsort(names, (size_t)nu, sizeof *names, cmp_str);
        for (int i = 0; i < nu && !rc; i++) {
            if (i > 0 && !strcmp(names[i], names[i - 1])) continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            rc = open_file(st, path, err);
        }
    }
    // Every tensor the index names must be in the shard it names.
    cJSON_ArrayForEach(e, wm) {
        if (rc) break;
        const struct st_tensor *t = safetensors_find(st, e->string);
        const char *slash = t ? strrchr(st->files[t->file].path, '/') : NULL;
        const char *base = slash ? slash + 1 : "";
        if (!t || strcmp(base, e->valuestring))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is not in shard %s as the index says; the checkpoint is incomplete",
                          index_path, e->string, e->valuestring);
    }
    free(names);
    cJSON_Delete(idx);
    return rc;
}

// Sets *present to whether `path` is a regular file (0 when nothing is there). Something that is
// there but cannot be read as one (a directory, a link that loops or leads nowhere) is refused
// by name, not reported missing; `kind` says what it should be ("a safetensors file") and `file`
// how a fix names it ("the weights file").
static int entry_present(const char *path, const char *kind, const char *file, int *present, xsa_error *err) {
    struct stat s;
    *present = 0;
    if (stat(path, &s) == 0) {
        if (S_ISREG(s.st_mode)) { *present = 1; return 0; }
        if (S_ISDIR(s.st_mode)) return xsa_fail(err, XSA_EBADINPUT, "%s: a directory, not %s; remove it, or put %s in its place", path, kind, file);
        return xsa_fail(err, XSA_EBADINPUT, "%s: not a regular file, so not %s; put %s in its place", path, kind, file);
    }
    int e = errno;
    if (e == ELOOP)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a symbolic link that loops (it leads back to itself); point it at %s", path, file);
    char target[512];
    ssize_t n = e == ENOENT ? readlink(path, target, sizeof target - 1) : -1;
    if (n >= 0) {
        target[n] = '\0';
        return xsa_fail(err, XSA_EBADINPUT, "%s: a symbolic link to %s, which does not exist; the download is incomplete: fetch the checkpoint again, or point the link at %s",
                        path, target, file);
    }
    if (e == ENOENT) return 0;
    return xsa_fail(err, XSA_EBADINPUT, "%s: cannot open: %s", path, strerror(e));
}

// One weights file `single` of the folder, or the shards its `index` names; *found is 0 when
// neither is there.
static int open_kind(struct safetensors *st, const char *dir, const char *single, const char *index, const char *kind,
                     open_file_fn open_file, int *found, xsa_error *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, single);
    int present, rc = entry_present(path, kind, "the weights file", &present, err);
    if (rc) return rc;
    if (present) {
        *found = 1;
        return open_file(st, path, err);
    }
    snprintf(path, sizeof path, "%s/%s", dir, index);
    if ((rc = entry_present(path, "a shard index", "the index file", &present, err))) return rc;
    *found = present;
    return present ? open_sharded(st, dir, path, open_file, err) : 0;
}

int safetensors_open_dir(struct safetensors *st, const char *dir, xsa_error *err) {
    memset(st, 0, sizeof *st);
    int found = 0;
    snprintf(st->format, sizeof st->format, "safetensors");
    int rc = open_kind(st, dir, "model.safetensors", "model.safetensors.index.json", "a safetensors file", safetensors_open_file, &found, err);
    if (!rc && !found) {  // safetensors first: a folder with both is read from its safetensors
        snprintf(st->format, sizeof st->format, "pytorch");
        rc = open_kind(st, dir, "pytorch_model.bin", "pytorch_model.bin.index.json", "a torch.save file", torch_open_file, &found, err);
    }
    if (!rc && !found)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: no model.safetensors, model.safetensors.index.json, pytorch_model.bin or pytorch_model.bin.index.json in the checkpoint directory", dir);
    if (rc) safetensors_close(st);
    return rc;
}

struct st_tensor *safetensors_find(const struct safetensors *st, const char *name) {
    if (!st->index) return NULL;
    for (size_t h = (size_t)xsa_hash_str(name) & st->index_mask; st->index[h] >= 0; h = (h + 1) & st->index_mask)
        if (!strcmp(st->tensors[st->index[h]].name, name)) return &st->tensors[st->index[h]];
    return NULL;
}

int safetensors_read_f32(const struct safetensors *st, const struct st_tensor *t, float *dst, xsa_error *err) {
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case ST_F32:
        memcpy(dst, p, t->nbytes);
        break;
    case ST_F16:
        for (size_t i = 0; i < t->nbytes / 2; i++) dst[i] = st_f16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
        break;
    case ST_BF16:
        for (size_t i = 0; i < t->nbytes / 2; i++) dst[i] = st_bf16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
        break;
    default:
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' has dtype %s; xsa-eval reads F32, F16 and BF16 weights",
                        st->files[t->file].path, t->name, t->dtype_name);
    }
    // F16 and BF16 convert exactly (a finite value stays finite, NaN and Inf stay what they
    // are), so the float32 values judge the stored ones. One vectorised scan of dst costs less
    // than a test per value inside the scalar conversion loops (3 ms against 6 ms for 26M).
    return safetensors_check_finite(st, t, dst, err);
}

int safetensors_check_finite(const struct safetensors *st, const struct st_tensor *t, const float *vals, xsa_error *err) {
    size_t n = t->nbytes / (t->dtype == ST_F32 ? 4 : 2);
    return model_check_finite(vals, n, st->files[t->file].path, t->name, err);
}

int safetensors_sha256(const struct safetensors *st, char out[65], xsa_error *err) {
    // From the mappings: the weights are read from them anyway, so the bytes are hashed where
    // they already are rather than read() a second time.
    if (st->n_files == 1) return sha256_hex(st->files[0].mf.data, st->files[0].mf.size, out, err);
    size_t n = (size_t)st->n_files * 64;
    char *cat = xsa_malloc(n + 1);
    int rc = 0;
    for (int i = 0; i < st->n_files && !rc; i++) {  // files[] is in sorted name order
        char hex[65];
        rc = sha256_hex(st->files[i].mf.data, st->files[i].mf.size, hex, err);
        if (!rc) memcpy(cat + (size_t)i * 64, hex, 64);
    }
    if (!rc) rc = sha256_hex(cat, n, out, err);
    free(cat);
    return rc;
}

void safetensors_close(struct safetensors *st) {
    for (int i = 0; i < st->n_tensors; i++) free(st->tensors[i].name);
    for (int i = 0; i < st->n_files; i++) {
        file_unmap(&st->files[i].mf);
        for (size_t k = 0; k < st->files[i].n_owned; k++) free(st->files[i].owned[k]);
        free(st->files[i].owned);
        free(st->files[i].path);
    }
    free(st->tensors);
    free(st->files);
    free(st->index);
    memset(st, 0, sizeof *st);
}
