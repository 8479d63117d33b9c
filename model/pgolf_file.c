// pgolf_file.c: the bytes of a parameter-golf artifact -> named tensors, dequantized as the
// family's own round-trip code does (train_gpt.py: dequantize_state_dict_int8 for
// int8_clean_per_row_v1, dequantize_mixed_int6 for the int6 records). A .ptz is zlib, zstd, xz
// (the records from 2026-03-23: lzma.compress) or brotli (from 2026-03-31: brotli.compress of a
// byte-shuffled "BSHF" payload) of a torch.save; a .pt is the torch.save itself (a plain state dict).
#include "model/pgolf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <brotli/decode.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "common/hash.h"
#include "common/xalloc.h"
#include "model/safetensors.h"

// Bytes a .ptz may decompress to: torch.save of int8 or int6 values barely compresses (the
// real artifacts: about 1.1x), so 64x the file, at least 256 MiB, bounds a bomb well above them.
#define PG_MAX_INFLATED ((size_t)8 << 30)
size_t pgolf_inflate_cap(size_t n) {
    size_t cap = n > PG_MAX_INFLATED / 64 ? PG_MAX_INFLATED : n * 64;
    return cap < ((size_t)256 << 20) ? (size_t)256 << 20 : cap;
}

static int is_zstd(const unsigned char *d, size_t n) { return n >= 4 && d[0] == 0x28 && d[1] == 0xb5 && d[2] == 0x2f && d[3] == 0xfd; }
static int is_xz(const unsigned char *d, size_t n) { return n >= 6 && !memcmp(d, "\xfd" "7zXZ\0", 6); }
static int is_zlib(const unsigned char *d, size_t n) { return n >= 2 && (d[0] & 0x0f) == 8 && (d[0] >> 4) <= 7 && ((d[0] << 8) | d[1]) % 31 == 0; }

static int grow_buf(unsigned char **buf, size_t *cap, size_t limit, const char *path, xsa_error *err) {
    if (*cap >= limit)
        return xsa_fail(err, XSA_EBADINPUT, "%s: decompresses to more than %zu bytes (64 times its size); not a parameter-golf artifact", path, limit);
    size_t n = *cap ? *cap * 2 : (size_t)1 << 20;
    if (n > limit) n = limit;
    *buf = xsa_realloc(*buf, n);
    *cap = n;
    return 0;
}

// A decoder's end: its buffer to the caller (out, out_n), or freed on failure.
static int hand_over(int rc, unsigned char *buf, size_t used, unsigned char **out, size_t *out_n) {
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf, *out_n = used;
    return 0;
}

static int inflate_zlib(const unsigned char *d, size_t n, unsigned char **out, size_t *out_n, const char *path, xsa_error *err) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) return xsa_fail(err, XSA_ERUNTIME, "zlib: inflateInit failed");
    unsigned char *buf = NULL;
    size_t cap = 0, used = 0;
    int rc = 0, zr = Z_OK;
    z.next_in = (unsigned char *)(uintptr_t)d;
    while (!rc && zr != Z_STREAM_END) {
        if (used == cap && (rc = grow_buf(&buf, &cap, pgolf_inflate_cap(n), path, err))) break;
        size_t in_left = n - (size_t)(z.next_in - d);
        z.avail_in = in_left > (1u << 30) ? (1u << 30) : (unsigned)in_left;
        z.next_out = buf + used;
        z.avail_out = cap - used > (1u << 30) ? (1u << 30) : (unsigned)(cap - used);
        unsigned before = z.avail_out;
        zr = inflate(&z, Z_NO_FLUSH);
        used += before - z.avail_out;
        if (zr != Z_OK && zr != Z_STREAM_END && !(zr == Z_BUF_ERROR && used == cap))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: the zlib stream is corrupt or truncated (%s); re-download the artifact", path, z.msg ? z.msg : "no end");
    }
    inflateEnd(&z);
    return hand_over(rc, buf, used, out, out_n);
}

static int inflate_zstd(const unsigned char *d, size_t n, unsigned char **out, size_t *out_n, const char *path, xsa_error *err) {
    ZSTD_DStream *z = xsa_alloc_check(ZSTD_createDStream());
    unsigned char *buf = NULL;
    size_t cap = 0, used = 0, left = 1;
    int rc = 0;
    ZSTD_inBuffer in = {d, n, 0};
    while (!rc && left) {
        if (used == cap && (rc = grow_buf(&buf, &cap, pgolf_inflate_cap(n), path, err))) break;
        ZSTD_outBuffer o = {buf, cap, used};
        left = ZSTD_decompressStream(z, &o, &in);
        used = o.pos;
        if (ZSTD_isError(left)) rc = xsa_fail(err, XSA_EBADINPUT, "%s: the zstd stream is corrupt (%s); re-download the artifact", path, ZSTD_getErrorName(left));
        else if (left && in.pos == in.size && o.pos < o.size) rc = xsa_fail(err, XSA_EBADINPUT, "%s: the zstd stream is truncated; re-download the artifact", path);
    }
    ZSTD_freeDStream(z);
    return hand_over(rc, buf, used, out, out_n);
}

// Memory the xz decoder may use: lzma.compress(preset=9) needs a 64 MiB dictionary.
#define PG_XZ_MEMLIMIT ((uint64_t)256 << 20)

static int inflate_xz(const unsigned char *d, size_t n, unsigned char **out, size_t *out_n, const char *path, xsa_error *err) {
    lzma_stream z = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&z, PG_XZ_MEMLIMIT, 0) != LZMA_OK) return xsa_fail(err, XSA_ERUNTIME, "liblzma: lzma_stream_decoder failed");
    unsigned char *buf = NULL;
    size_t cap = 0, used = 0;
    int rc = 0;
    lzma_ret r = LZMA_OK;
    z.next_in = d, z.avail_in = n;
    while (!rc && r != LZMA_STREAM_END) {
        if (used == cap && (rc = grow_buf(&buf, &cap, pgolf_inflate_cap(n), path, err))) break;
        z.next_out = buf + used, z.avail_out = cap - used;
        r = lzma_code(&z, LZMA_FINISH);  // all input is there: running out of it is truncation
        used = cap - z.avail_out;
        if (r == LZMA_BUF_ERROR && z.avail_in == 0)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: the xz stream is truncated; re-download the artifact", path);
        else if (r != LZMA_OK && r != LZMA_STREAM_END && !(r == LZMA_BUF_ERROR && used == cap))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: the xz stream is corrupt (liblzma error %d%s); re-download the artifact", path, (int)r,
                          r == LZMA_MEMLIMIT_ERROR ? ": it needs more than 256 MiB to decode" : "");
    }
    lzma_end(&z);
    return hand_over(rc, buf, used, out, out_n);
}

// Brotli has no magic number: it is what a .ptz is when no other format's header matches.
static int inflate_brotli(const unsigned char *d, size_t n, unsigned char **out, size_t *out_n, const char *path, xsa_error *err) {
    BrotliDecoderState *z = xsa_alloc_check(BrotliDecoderCreateInstance(NULL, NULL, NULL));
    unsigned char *buf = NULL;
    size_t cap = 0, used = 0, in_left = n;
    const uint8_t *in = d;
    int rc = 0;
    BrotliDecoderResult r = BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT;
    while (!rc && r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
        if (used == cap && (rc = grow_buf(&buf, &cap, pgolf_inflate_cap(n), path, err))) break;
        size_t out_left = cap - used;
        uint8_t *o = buf + used;
        r = BrotliDecoderDecompressStream(z, &in_left, &in, &out_left, &o, NULL);
        used = cap - out_left;
    }
    if (!rc && r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: a .ptz that is not a whole zlib, zstd, xz or brotli stream (read as brotli it ends early: truncated?); re-download the artifact", path);
    else if (!rc && r == BROTLI_DECODER_RESULT_SUCCESS && in_left)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: a .ptz that is neither zlib, zstd, xz nor brotli (first bytes %02x %02x; read as brotli it ends %zu bytes before the file); pass the artifact train_gpt.py wrote",
                      path, d[0], n > 1 ? d[1] : 0, in_left);
    else if (!rc && r != BROTLI_DECODER_RESULT_SUCCESS)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: a .ptz that is neither zlib, zstd, xz nor brotli (first bytes %02x %02x; brotli: %s); pass the artifact train_gpt.py wrote",
                      path, n > 0 ? d[0] : 0, n > 1 ? d[1] : 0, BrotliDecoderErrorString(BrotliDecoderGetErrorCode(z)));
    BrotliDecoderDestroyInstance(z);
    return hand_over(rc, buf, used, out, out_n);
}

// _byte_unshuffle of the records: "BSHF", the stride, then the bytes grouped by position mod
// stride. Two framings: the stride as 2 bytes little-endian (2026-03-31, _W='little') or as 1
// byte (the records from 2026-04-01). The payload is a torch.save, whose first byte ('P' of a
// zip, 0x80 of a pickle) is never 0, and strides are small: a 0 at byte 5 is the 2-byte form.
static int unshuffle_bshf(unsigned char **data, size_t *n, const char *path, xsa_error *err) {
    const unsigned char *d = *data;
    if (*n < 4 || memcmp(d, "BSHF", 4)) return 0;
    if (*n < 6)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a byte-shuffled (BSHF) payload of %zu bytes, too short for its header; re-download the artifact", path, *n);
    int wide = d[5] == 0;
    size_t stride = wide ? (size_t)d[4] | (size_t)d[5] << 8 : d[4], head = wide ? 6 : 5, m = *n - head;
    if (stride == 0 || stride > m)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a byte-shuffled (BSHF) payload with stride %zu over %zu bytes; the stride must be in [1, %zu] (the artifact is damaged)",
                        path, stride, m, m);
    unsigned char *o = xsa_malloc(m ? m : 1);  // [m]: byte i of the torch.save
    const unsigned char *src = d + head;
    for (size_t r = 0; r < stride; r++)
        for (size_t i = r; i < m; i += stride) o[i] = *src++;
    free(*data);
    *data = o, *n = m;
    return 0;
}

static int decode_any(const unsigned char *d, size_t n, unsigned char **out, size_t *out_n, const char *path, xsa_error *err) {
    // The 2026-03-21 non-record's compress_bytes: a "ZSTD" or "ZLIB" tag before the stream.
    if (n >= 4 && !memcmp(d, "ZSTD", 4)) return is_zstd(d + 4, n - 4) ? inflate_zstd(d + 4, n - 4, out, out_n, path, err)
                                                                       : xsa_fail(err, XSA_EBADINPUT, "%s: tagged ZSTD, but no zstd stream follows; re-download the artifact", path);
    if (n >= 4 && !memcmp(d, "ZLIB", 4)) return is_zlib(d + 4, n - 4) ? inflate_zlib(d + 4, n - 4, out, out_n, path, err)
                                                                       : xsa_fail(err, XSA_EBADINPUT, "%s: tagged ZLIB, but no zlib stream follows; re-download the artifact", path);
    if (is_zstd(d, n)) return inflate_zstd(d, n, out, out_n, path, err);
    if (is_xz(d, n)) return inflate_xz(d, n, out, out_n, path, err);
    if (!is_zlib(d, n)) return inflate_brotli(d, n, out, out_n, path, err);
    xsa_error before = *err;
    int rc = inflate_zlib(d, n, out, out_n, path, err);
    if (rc != XSA_EBADINPUT) return rc;
    // A brotli stream can pass the zlib header check; when it is not brotli either, the zlib
    // error (recorded first) stands.
    if (inflate_brotli(d, n, out, out_n, path, err)) return rc;
    *err = before;
    return 0;
}

int pgolf_decompress(const unsigned char *d, size_t n, unsigned char **out, size_t *out_n, const char *path, xsa_error *err) {
    int rc = decode_any(d, n, out, out_n, path, err);
    if (!rc && (rc = unshuffle_bshf(out, out_n, path, err))) free(*out), *out = NULL;
    return rc;
}

// The slot of `name` in pt->slot: where it is, else the empty slot it would take. (An artifact
// may hold PG_MAX_TENSORS entries: comparing each new name with every one before took minutes.)
static size_t name_slot(const struct pg_tensors *pt, const char *name) {
    size_t mask = sizeof pt->slot / sizeof pt->slot[0] - 1, i = (size_t)xsa_hash_str(name) & mask;
    while (pt->slot[i] && strcmp(pt->e[pt->slot[i] - 1].name, name)) i = (i + 1) & mask;
    return i;
}

static int add_entry(struct pg_tensors *pt, const char *name, const struct pv *t, const struct pv *scale, int kind, int bf16,
                     xsa_error *err) {
    if (pt->n == PG_MAX_TENSORS) return xsa_fail(err, XSA_EBADINPUT, "%s: more than %d tensors", pt->path, PG_MAX_TENSORS);
    if (!t || t->kind != PV_TENSOR || (scale && scale->kind != PV_TENSOR)) {
        char what[160] = "nothing";  // what it is instead (an object is named, never called)
        if (t) up_describe(t->kind != PV_TENSOR ? t : scale, what, sizeof what);
        return xsa_fail(err, XSA_EBADINPUT, "%s: entry '%s'%s is %s, not a tensor; the file is corrupt or not written by train_gpt.py",
                        pt->path, name, t && t->kind == PV_TENSOR ? "'s scale" : "", what);
    }
    // A state dict of a compiled ("_orig_mod.") or DDP-wrapped ("module.") model: the same names.
    const char *given = name;
    for (int more = 1; more;) {
        more = !strncmp(name, "_orig_mod.", 10) ? (name += 10, 1) : !strncmp(name, "module.", 7) ? (name += 7, 1) : 0;
    }
    size_t h = name_slot(pt, name);
    if (pt->slot[h])
        return given != name ? xsa_fail(err, XSA_EBADINPUT, "%s: tensors '%s' and '%s' are one weight, with and without "
                                        "a compiled or DDP model's prefix; the file holds two state dicts", pt->path,
                                        given, name)
                             : xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is there twice", pt->path, name);
    pt->slot[h] = pt->n + 1;
    pt->e[pt->n++] = (struct pg_entry){.name = name, .t = t, .scale = scale, .kind = kind, .bf16 = bf16};
    return 0;
}

static const char *dict_str(const struct pv *d, const char *key) {
    const struct pv *v = d && d->kind == PV_DICT ? up_dict_get(d, key) : NULL;
    return v && v->kind == PV_STR ? v->s : NULL;
}

// The torch dtype train_gpt.py restores a tensor to: float32 (kept), bfloat16 (1) or float16 (2),
// rounded.
static int restore_dtype(const struct pg_tensors *pt, const char *name, const char *dtype, int *bf16, xsa_error *err) {
    *bf16 = 0;
    if (!dtype || !strcmp(dtype, "float32")) return 0;
    if (!strcmp(dtype, "bfloat16")) return *bf16 = 1, 0;
    if (!strcmp(dtype, "float16")) return *bf16 = 2, 0;
    return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is restored to dtype '%s'; xsa-eval restores float32, bfloat16 "
                    "and float16 only", pt->path, name, dtype);
}

static int read_int8_v1(struct pg_tensors *pt, const struct pv *root, xsa_error *err) {
    const struct pv *q = up_dict_get(root, "quantized"), *s = up_dict_get(root, "scales"), *dt = up_dict_get(root, "dtypes");
    const struct pv *pass = up_dict_get(root, "passthrough"), *pod = up_dict_get(root, "passthrough_orig_dtypes");
    if (!q || q->kind != PV_DICT || !s || s->kind != PV_DICT || !dt || dt->kind != PV_DICT || !pass || pass->kind != PV_DICT)
        return xsa_fail(err, XSA_EBADINPUT, "%s: an int8_clean_per_row_v1 dict without its quantized, scales, dtypes and passthrough dicts; the file is corrupt", pt->path);
    int rc = 0, bf16;
    for (size_t i = 0; i < q->n && !rc; i++) {
        const struct pv *k = q->v[2 * i];
        if (k->kind != PV_STR) return xsa_fail(err, XSA_EBADINPUT, "%s: a quantized entry whose key is not a name", pt->path);
        const struct pv *sc = up_dict_get(s, k->s);
        if (!sc) return xsa_fail(err, XSA_EBADINPUT, "%s: quantized tensor '%s' has no entry in scales; the file is corrupt", pt->path, k->s);
        // The family's dequantize reads getattr(torch, obj["dtypes"][name]): a name is required.
        if (!dict_str(dt, k->s))
            return xsa_fail(err, XSA_EBADINPUT, "%s: quantized tensor '%s' has no dtype name in dtypes; the file is corrupt", pt->path, k->s);
        if (!(rc = restore_dtype(pt, k->s, dict_str(dt, k->s), &bf16, err))) rc = add_entry(pt, k->s, q->v[2 * i + 1], sc, PG_Q8, bf16, err);
    }
    for (size_t i = 0; i < pass->n && !rc; i++) {
        const struct pv *k = pass->v[2 * i];
        if (k->kind != PV_STR) return xsa_fail(err, XSA_EBADINPUT, "%s: a passthrough entry whose key is not a name", pt->path);
        if (!(rc = restore_dtype(pt, k->s, dict_str(pod, k->s), &bf16, err))) rc = add_entry(pt, k->s, pass->v[2 * i + 1], NULL, PG_RAW, bf16, err);
    }
    return rc;
}

// nn.Embedding weights are bfloat16 in the exported model (GPT(...).bfloat16(), then only
// CastedLinear and low-dimensional parameters back to float32): what int6 restores them to.
static int embedding_name(const char *name) {
    size_t n = strlen(name), k = strlen("emb.weight"), j = strlen("embed.weight");
    return (n >= k && !strcmp(name + n - k, "emb.weight")) || (n >= j && !strcmp(name + n - j, "embed.weight"));
}

// The meta types of per-row integer entries, all q * scale: 'int8', 'int6', 'int5' (the
// 2026-03-31 mixed quantizer's clip range 15), and the 2026-04 records' GPTQ "gptq (intN)".
static int int_kind(const char *type) {
    char b = !strcmp(type, "int8") ? '8' : !strcmp(type, "int6") ? '6' : !strcmp(type, "int5") ? '5' : 0;
    if (!b && !strncmp(type, "gptq (int", 9) && type[9] && !strcmp(type + 10, ")")) b = type[9];
    return b == '8' ? PG_Q8 : b == '7' ? PG_Q7 : b == '6' ? PG_Q6 : b == '5' ? PG_Q5 : 0;
}

// "gptq (intN)+lqer" or "+lqer_asym": 1 with the values' kind in *kind, *asym for the latter.
static int lqer_kind(const char *type, int *kind, int *asym) {
    const char *plus = strchr(type, '+');
    if (!plus || (strcmp(plus, "+lqer") && strcmp(plus, "+lqer_asym"))) return 0;
    *asym = !strcmp(plus, "+lqer_asym");
    char base[32];
    snprintf(base, sizeof base, "%.*s", (int)(plus - type) < 31 ? (int)(plus - type) : 31, type);
    return (*kind = int_kind(base)) != 0;
}

// An LQER entry: .q and .scale as any GPTQ entry, and its factors .lqA .lqAs .lqB .lqBs (with
// _a for the asymmetric packing).
static int add_lqer_entry(struct pg_tensors *pt, const struct pv *w, const char *key, int kind, int bf16, int asym, xsa_error *err) {
    static const char *const suffix[4] = {"lqA", "lqAs", "lqB", "lqBs"};
    char name[600];
    snprintf(name, sizeof name, "%s.q", key);
    const struct pv *q = up_dict_get(w, name);
    snprintf(name, sizeof name, "%s.scale", key);
    const struct pv *s = up_dict_get(w, name);
    if (!q || !s) return xsa_fail(err, XSA_EBADINPUT, "%s: LQER tensor '%s' lacks its .q or .scale entry; the file is corrupt", pt->path, key);
    int rc = add_entry(pt, key, q, s, kind, bf16, err);
    for (int i = 0; i < 4 && !rc; i++) {
        snprintf(name, sizeof name, "%s.%s%s", key, suffix[i], asym ? "_a" : "");
        const struct pv *f = up_dict_get(w, name);
        if (!f || f->kind != PV_TENSOR) return xsa_fail(err, XSA_EBADINPUT, "%s: LQER tensor '%s' lacks its %s tensor; the file is corrupt", pt->path, key, name);
        pt->e[pt->n - 1].lq[i] = f;
    }
    if (!rc) pt->e[pt->n - 1].lq_asym = asym;
    return rc;
}

static int read_int6(struct pg_tensors *pt, const struct pv *w, const struct pv *meta, xsa_error *err) {
    if (w->kind != PV_DICT || meta->kind != PV_DICT)
        return xsa_fail(err, XSA_EBADINPUT, "%s: an int6 artifact whose 'w' or 'm' is not a dict; the file is corrupt", pt->path);
    int rc = 0;
    char name[600];
    for (size_t i = 0; i < meta->n && !rc; i++) {
        const struct pv *k = meta->v[2 * i], *info = meta->v[2 * i + 1];
        if (k->kind != PV_STR || k->len > 500) return xsa_fail(err, XSA_EBADINPUT, "%s: an int6 meta entry whose key is not a name", pt->path);
        const char *type = info->kind == PV_STR ? info->s : dict_str(info, "type");
        int bf16 = embedding_name(k->s), kind, asym;
        if (type && (!strcmp(type, "passthrough") || !strcmp(type, "passthrough_ctrl") || !strcmp(type, "passthrough_fp16") ||
                     !strcmp(type, "passthrough (float16)"))) {
            rc = add_entry(pt, k->s, up_dict_get(w, k->s), NULL, PG_RAW, bf16, err);
        } else if (type && lqer_kind(type, &kind, &asym)) {  // 2026-04-27: GPTQ values plus a low-rank correction
            rc = add_lqer_entry(pt, w, k->s, kind, bf16, asym, err);
        } else if (type && ((kind = int_kind(type)) || !strcmp(type, "gate_int8_row"))) {
            int gate = !kind;  // 2026-04-19's QuantGate: int8 rows .gq with fp16 row scales .gs
            snprintf(name, sizeof name, "%s.%s", k->s, gate ? "gq" : "q");
            const struct pv *q = up_dict_get(w, name);
            snprintf(name, sizeof name, "%s.%s", k->s, gate ? "gs" : "scale");
            if (gate) kind = PG_Q8;
            const struct pv *s = up_dict_get(w, name);
            if (!q || !s) return xsa_fail(err, XSA_EBADINPUT, "%s: int6 tensor '%s' lacks its %s entry; the file is corrupt", pt->path, k->s,
                                          gate ? ".gq or .gs" : ".q or .scale");
            rc = add_entry(pt, k->s, q, s, kind, bf16, err);
        } else {
            return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' has unknown quantization type '%s'; xsa-eval reads int8, int7, int6, int5 (also as 'gptq (intN)', with '+lqer' or '+lqer_asym'), gate_int8_row and passthrough",
                            pt->path, k->s, type ? type : "(not a string)");
        }
    }
    return rc;
}

int pgolf_read_root(struct pg_tensors *pt, const struct pv *root, xsa_error *err) {
    if (!root || root->kind != PV_DICT)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the saved object is not a dict; not a parameter-golf artifact", pt->path);
    const struct pv *fmt = up_dict_get(root, "__quant_format__");
    if (fmt) {
        // mixed_int8_int6_v1 (the 2026-03-21 non-record): the same dict, dequantized by the same code
        if (fmt->kind != PV_STR || (strcmp(fmt->s, "int8_clean_per_row_v1") && strcmp(fmt->s, "mixed_int8_int6_v1")))
            return xsa_fail(err, XSA_EBADINPUT, "%s: unknown quantization format '%s'; xsa-eval reads int8_clean_per_row_v1, mixed_int8_int6_v1 and the int6 {w, m} format",
                            pt->path, fmt->kind == PV_STR ? fmt->s : "(not a string)");
        snprintf(pt->format, sizeof pt->format, "int8_clean_per_row_v1");
        return read_int8_v1(pt, root, err);
    }
    const struct pv *w = up_dict_get(root, "w"), *m = up_dict_get(root, "m");
    if (w && m && root->n == 2) {
        snprintf(pt->format, sizeof pt->format, "int6");
        return read_int6(pt, w, m, err);
    }
    snprintf(pt->format, sizeof pt->format, "state_dict");
    int rc = 0;
    for (size_t i = 0; i < root->n && !rc; i++) {
        const struct pv *k = root->v[2 * i];
        if (k->kind != PV_STR) return xsa_fail(err, XSA_EBADINPUT, "%s: a state dict key that is not a name", pt->path);
        rc = add_entry(pt, k->s, root->v[2 * i + 1], NULL, PG_RAW, 0, err);
    }
    return rc;
}

struct pg_entry *pgolf_find(struct pg_tensors *pt, const char *name) {
    size_t i = name_slot(pt, name);
    return pt->slot[i] ? &pt->e[pt->slot[i] - 1] : NULL;
}

// Element k of a contiguous tensor as a float (F32, F16, BF16) or an integer (I8).
static const unsigned char *tensor_bytes(const struct pv *t, uint64_t *numel) {
    uint64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= (uint64_t)t->shape[d];
    *numel = n;
    uint64_t want = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->stride[d] != (int64_t)want) return NULL;
        want *= (uint64_t)t->shape[d];
    }
    if (t->offset < 0 || (uint64_t)t->offset > t->storage->numel || n > t->storage->numel - (uint64_t)t->offset) return NULL;
    return t->storage->data + (size_t)t->offset * (size_t)t->dtype->size;
}

static float elem_f32(const struct pv *t, const unsigned char *p, uint64_t k) {
    uint16_t h;
    float f;
    switch (t->dtype->size) {
    case 4: memcpy(&f, p + 4 * k, 4); return f;
    case 2: memcpy(&h, p + 2 * k, 2); return !strcmp(t->dtype->name, "BF16") ? st_bf16_to_f32(h) : st_f16_to_f32(h);
    default: return (float)(int8_t)p[k];
    }
}

// float -> bfloat16 -> float, round to nearest even, as torch's .to(torch.bfloat16).
static float round_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

// float -> float16 -> float, round to nearest even, as torch's .to(torch.float16): 11 significant
// bits down to 2^-14, a quantum of 2^-24 below it, infinity from 65520 on.
static float round_f16(float x) {
    if (!isfinite(x)) return x;
    if (fabsf(x) < 0x1p-14f) return nearbyintf(x * 0x1p24f) * 0x1p-24f;  // exact scalings; the default mode is RNE
    uint32_t u;
    memcpy(&u, &x, 4);
    u += 0xfffu + ((u >> 13) & 1u);
    u &= 0xffffe000u;
    memcpy(&x, &u, 4);
    return fabsf(x) > 65504.0f ? copysignf(INFINITY, x) : x;
}

// x rounded to the dtype an entry is restored to (pg_entry.bf16).
static float round_restored(int to, float x) { return to == 1 ? round_bf16(x) : to == 2 ? round_f16(x) : x; }

static int is_float_dtype(const struct pv *t) { return !strcmp(t->dtype->name, "F32") || !strcmp(t->dtype->name, "F16") || !strcmp(t->dtype->name, "BF16"); }

// W += (qA sA) @ (qB sB) on the (rows, cols) values in dst, as the 2026-04-27 record's
// dequantize_mixed adds LQER's rank-r correction: sA one scalar and sB one per group of
// consecutive elements of B ("+lqer_asym"), or one per row of A and of B ("+lqer").
static int lqer_correct(struct pg_tensors *pt, const struct pg_entry *e, float *dst, uint64_t rows, uint64_t cols, xsa_error *err) {
    const struct pv *A = e->lq[0], *As = e->lq[1], *B = e->lq[2], *Bs = e->lq[3];
    uint64_t na, nas, nb, nbs;
    const unsigned char *pa = tensor_bytes(A, &na), *pas = tensor_bytes(As, &nas), *pb = tensor_bytes(B, &nb), *pbs = tensor_bytes(Bs, &nbs);
    uint64_t r = A->ndim == 2 ? (uint64_t)A->shape[1] : 0;
    int bad = !pa || !pas || !pb || !pbs || strcmp(A->dtype->name, "I8") || strcmp(B->dtype->name, "I8") || !is_float_dtype(As) ||
              !is_float_dtype(Bs) || A->ndim != 2 || (uint64_t)A->shape[0] != rows || r < 1 || r > 64 || B->ndim != 2 ||
              (uint64_t)B->shape[0] != r || (uint64_t)B->shape[1] != cols ||
              (e->lq_asym ? nas != 1 || nbs < 1 || nb % nbs : nas != rows || nbs != r);
    if (bad)
        return xsa_fail(err, XSA_EBADINPUT, "%s: LQER factors of '%s' do not fit its (%llu, %llu) values (A (rows, rank) and B (rank, cols) int8, their scales); the file is corrupt",
                        pt->path, e->name, (unsigned long long)rows, (unsigned long long)cols);
    for (uint64_t i = 0; i < nas + nbs; i++) {
        float s = i < nas ? elem_f32(As, pas, i) : elem_f32(Bs, pbs, i - nas);
        if (!isfinite(s)) return xsa_fail(err, XSA_EBADINPUT, "%s: LQER factors of '%s' have a scale of %g; the artifact is damaged", pt->path, e->name, (double)s);
    }
    uint64_t g = e->lq_asym ? nb / nbs : cols;  // (per row of B: a group is a row)
    float *qb = xsa_malloc((size_t)nb * sizeof *qb);  // (r, cols)
    for (uint64_t k = 0; k < nb; k++) qb[k] = (float)(int8_t)pb[k] * elem_f32(Bs, pbs, k / g);
    for (uint64_t i = 0; i < rows; i++) {
        float sa = elem_f32(As, pas, e->lq_asym ? 0 : i), a[64];
        for (uint64_t k = 0; k < r; k++) a[k] = (float)(int8_t)pa[i * r + k] * sa;
        for (uint64_t j = 0; j < cols; j++) {
            float c = 0;
            for (uint64_t k = 0; k < r; k++) c += a[k] * qb[k * cols + j];
            dst[i * cols + j] += c;
        }
    }
    free(qb);
    return 0;
}

int pgolf_dequantize(struct pg_tensors *pt, struct pg_entry *e, float *dst, xsa_error *err) {
    uint64_t n, ns = 0;
    const unsigned char *p = tensor_bytes(e->t, &n), *ps = e->scale ? tensor_bytes(e->scale, &ns) : NULL;
    if (!p || (e->scale && !ps))
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is not contiguous within its storage; train_gpt.py saves contiguous tensors", pt->path, e->name);
    if (e->kind == PG_RAW) {
        if (!is_float_dtype(e->t)) return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' has dtype %s; a weight must be float32, float16 or bfloat16", pt->path, e->name, e->t->dtype->name);
        for (uint64_t k = 0; k < n; k++) dst[k] = round_restored(e->bf16, elem_f32(e->t, p, k));
        return 0;
    }
    if (strcmp(e->t->dtype->name, "I8") || !is_float_dtype(e->scale))
        return xsa_fail(err, XSA_EBADINPUT, "%s: quantized tensor '%s' is %s with %s scales; expected int8 values and float scales", pt->path, e->name,
                        e->t->dtype->name, e->scale->dtype->name);
    int per_row = e->scale->ndim > 0;
    uint64_t rows = e->t->ndim > 0 ? (uint64_t)e->t->shape[0] : 1, cols = rows ? n / rows : 0;
    if (per_row ? ns != rows : ns != 1)
        return xsa_fail(err, XSA_EBADINPUT, "%s: quantized tensor '%s' has %llu scales for %llu rows; the file is corrupt", pt->path, e->name,
                        (unsigned long long)ns, (unsigned long long)rows);
    for (uint64_t r = 0; r < ns; r++) {
        float s = elem_f32(e->scale, ps, r);
        if (!(s != 0 && isfinite(s)))
            return xsa_fail(err, XSA_EBADINPUT, "%s: quantized tensor '%s' has scale %g at row %llu; a scale must be finite and nonzero (the artifact is damaged)",
                            pt->path, e->name, (double)s, (unsigned long long)r);
    }
    int bits = e->kind == PG_Q7 ? 7 : e->kind == PG_Q6 ? 6 : e->kind == PG_Q5 ? 5 : 8, lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
    for (uint64_t k = 0; k < n; k++) {
        int v = (int8_t)p[k];
        if (v < lo || v > hi)
            return xsa_fail(err, XSA_EBADINPUT, "%s: int%d tensor '%s' holds %d at element %llu, outside [%d, %d]; the artifact is damaged", pt->path,
                            bits, e->name, v, (unsigned long long)k, lo, hi);
        float s = elem_f32(e->scale, ps, per_row ? k / cols : 0);
        float x = (float)v * s;  // q.float() * s.float(), then .to(original dtype)
        dst[k] = e->lq[0] ? x : round_restored(e->bf16, x);
    }
    if (!e->lq[0]) return 0;
    int rc = lqer_correct(pt, e, dst, rows, cols, err);
    for (uint64_t k = 0; k < n && !rc && e->bf16; k++) dst[k] = round_restored(e->bf16, dst[k]);
    return rc;
}
