// unpickle.c: the restricted unpickler (see unpickle.h). A value stack, a mark stack and a memo
// of node pointers; nodes live until unpickle_free, so memo sharing needs no reference counts.
#include "common/grow.h"
#include "common/hash.h"
#include "common/xalloc.h"
#include "model/unpickle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UP_MAX_NAME 256         // module and attribute names of GLOBAL
#define UP_MAX_ELEMS (1ll << 40)

static const struct up_dtype up_dtypes[] = {
    {"FloatStorage", "F32", 4},   {"HalfStorage", "F16", 2}, {"BFloat16Storage", "BF16", 2},
    {"DoubleStorage", "F64", 8},  {"LongStorage", "I64", 8}, {"IntStorage", "I32", 4},
    {"ShortStorage", "I16", 2},   {"CharStorage", "I8", 1},  {"ByteStorage", "U8", 1},
    {"BoolStorage", "BOOL", 1},   {"UntypedStorage", "U8", 1},
};

const struct up_dtype *up_dtype_find(const char *storage) {
    for (size_t i = 0; i < sizeof up_dtypes / sizeof up_dtypes[0]; i++)
        if (!strcmp(storage, up_dtypes[i].storage)) return &up_dtypes[i];
    return NULL;
}

struct pv *up_new(struct unpickler *u, enum pv_kind kind) {
    if (u->n_nodes >= UP_MAX_NODES) {
        u->too_many = 1;
        return NULL;
    }
    if (u->n_nodes == u->cap_nodes) {
        size_t cap = u->cap_nodes ? u->cap_nodes * 2 : 256;
        u->nodes = xsa_realloc_array(u->nodes, cap, sizeof *u->nodes);
        u->cap_nodes = cap;
    }
    struct pv *p = xsa_calloc(1, sizeof *p);
    p->kind = kind;
    u->nodes[u->n_nodes++] = p;
    return p;
}

void unpickle_free(struct unpickler *u) {
    for (size_t i = 0; i < u->n_nodes; i++) {
        free(u->nodes[i]->s);
        free(u->nodes[i]->v);
        free(u->nodes[i]->index);
        free(u->nodes[i]);
    }
    free(u->nodes);
    u->nodes = NULL;
    u->n_nodes = u->cap_nodes = 0;
}

static void printable(const char *in, char *out, size_t n) {
    size_t i = 0;
    for (; in[i] && i + 1 < n; i++) out[i] = (unsigned char)in[i] < 0x20 || in[i] == 0x7f ? '?' : in[i];
    out[i] = '\0';
}

static int key_is(const struct pv *k, const char *key, size_t len) {
    return k->kind == PV_STR && k->len == len && !memcmp(k->s, key, len);
}

// The index slot of `key`: where its pair is, else the empty slot it would take.
static size_t index_slot(const struct pv *d, const char *key, size_t len) {
    size_t i = (size_t)xsa_hash(key, len) & d->index_mask;
    while (d->index[i] && !key_is(d->v[2 * (d->index[i] - 1)], key, len)) i = (i + 1) & d->index_mask;
    return i;
}

// A dict's key index, for dicts too big to search pair by pair: a pickle of a few hundred KB
// can hold millions of SETITEMs (one key object, memoized, over and over), and a loader looking
// each of 65536 names up in such a dict ran for hours. Pairs added since the last lookup go in
// as they are; the table doubles as it fills.
static void index_dict(struct pv *d) {
    size_t from = d->index_n;
    if (!d->index || 2 * d->n > d->index_mask + 1) {
        size_t cap = 64;
        while (cap < 4 * d->n) cap *= 2;
        free(d->index);
        d->index = xsa_calloc(cap, sizeof *d->index);
        d->index_mask = cap - 1;
        from = 0;
    }
    for (size_t k = from; k < d->n; k++)
        if (d->v[2 * k]->kind == PV_STR) d->index[index_slot(d, d->v[2 * k]->s, d->v[2 * k]->len)] = (uint32_t)(k + 1);
    d->index_n = d->n;
}

// The pair of string key `key` (len bytes), or SIZE_MAX.
static size_t find_pair(const struct pv *d, const char *key, size_t len) {
    if (d->n <= 16 || d->n >= UINT32_MAX) {
        for (size_t i = 0; i < d->n; i++)
            if (key_is(d->v[2 * i], key, len)) return i;
        return SIZE_MAX;
    }
    struct pv *m = (struct pv *)d;  // (the index is a cache; the dict itself is unchanged)
    if (!m->index || m->index_n != m->n) index_dict(m);
    size_t i = index_slot(m, key, len);
    return m->index[i] ? m->index[i] - 1 : SIZE_MAX;
}

const struct pv *up_dict_get(const struct pv *d, const char *key) {
    if (!d || d->kind != PV_DICT) return NULL;
    size_t i = find_pair(d, key, strlen(key));
    return i == SIZE_MAX ? NULL : d->v[2 * i + 1];
}

const struct pv *up_attr(const struct pv *obj, const char *key) {
    if (!obj || obj->kind != PV_OBJECT || !obj->state) return NULL;
    const struct pv *st = obj->state, *v = up_dict_get(st, key);
    if (!v && st->kind == PV_TUPLE && st->n == 2 && !(v = up_dict_get(st->v[0], key))) v = up_dict_get(st->v[1], key);
    return v;
}

void up_describe(const struct pv *x, char *out, size_t n) {
    static const char *const kinds[] = {"None", "a bool", "an int", "a float", "a string", "bytes", "a tuple", "a list", "a dict",
                                        "a global", "a storage", "a tensor", "a torch.Size, device or other value not read", "a set"};
    if (x->kind == PV_OBJECT || x->kind == PV_GLOBAL) {
        char name[128];
        const struct pv *g = x->kind == PV_OBJECT ? x->cls : x;
        printable(g->s, name, sizeof name);
        if (x->kind == PV_GLOBAL) snprintf(out, n, "the global %s", name);
        else if (x->i) snprintf(out, n, "%s(...) (a call, never run)", name);
        else snprintf(out, n, "%s %s", strchr("aeiouAEIOU", name[0]) ? "an" : "a", name);
        return;
    }
    snprintf(out, n, "%s", (size_t)x->kind < sizeof kinds / sizeof *kinds ? kinds[x->kind] : "a value");
}

// Appends one item (a DICT takes them in key, value pairs) to a container.
static void push_item(struct pv *c, struct pv *x) {
    XSA_GROW(c->v, c->cap, c->n + 1);
    c->v[c->n++] = x;
}

// d[k] = v as Python does it: a string key already there keeps its place and takes the new value.
static void dict_set(struct pv *d, struct pv *k, struct pv *v) {
    size_t i = k->kind == PV_STR ? find_pair(d, k->s, k->len) : SIZE_MAX;
    if (i != SIZE_MAX) {
        d->v[2 * i + 1] = v;
        return;
    }
    XSA_GROW(d->v, d->cap, 2 * d->n + 2);
    d->v[2 * d->n] = k, d->v[2 * d->n + 1] = v;
    d->n++;
}

// ---- the machine ----

struct up_state {
    struct unpickler *u;
    const unsigned char *p;
    size_t len, pos, op_pos;  // op_pos: where the current opcode starts
    struct pv **stack;
    size_t sp, stack_cap;
    size_t marks[UP_MAX_MARKS];
    int n_marks;
    struct pv **memo;
    size_t memo_cap, memo_len;  // len: entries set, as Python's len(memo)
    xsa_error *err;
};

static int bad(struct up_state *s, const char *what) {
    return xsa_fail(s->err, XSA_EBADINPUT, "%s: %s at byte %zu of the pickle; the file is corrupt or not written by torch.save",
                    s->u->where, what, s->op_pos);
}

// up_new's NULL: the object limit (allocations themselves never fail: common/xalloc.h).
static int too_many(struct up_state *s) {
    return xsa_fail(s->err, XSA_EBADINPUT, "%s: the pickle builds more than %d objects; the file is corrupt or not a checkpoint", s->u->where, UP_MAX_NODES);
}

static int need(struct up_state *s, size_t n) { return s->len - s->pos < n ? bad(s, "the pickle ends inside an opcode") : 0; }

static uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int push(struct up_state *s, struct pv *x) {
    if (!x) return too_many(s);
    if (s->sp == s->stack_cap) {
        if (s->stack_cap >= UP_MAX_STACK) return bad(s, "the value stack grows past its limit");
        size_t cap = s->stack_cap ? s->stack_cap * 2 : 64;
        s->stack = xsa_realloc_array(s->stack, cap, sizeof *s->stack);
        s->stack_cap = cap;
    }
    s->stack[s->sp++] = x;
    return 0;
}

static size_t floor_mark(const struct up_state *s) { return s->n_marks ? s->marks[s->n_marks - 1] : 0; }

static int pop(struct up_state *s, struct pv **out) {
    if (s->sp <= floor_mark(s)) return bad(s, "an opcode pops an empty stack");
    *out = s->stack[--s->sp];
    return 0;
}

static int top(struct up_state *s, struct pv **out) {
    if (s->sp <= floor_mark(s)) return bad(s, "an opcode needs a value on an empty stack");
    *out = s->stack[s->sp - 1];
    return 0;
}

// Pops the topmost mark: the items above it are stack[*from, sp).
static int pop_mark(struct up_state *s, size_t *from) {
    if (!s->n_marks) return bad(s, "an opcode needs a MARK and there is none");
    *from = s->marks[--s->n_marks];
    return 0;
}

static struct pv *new_str(struct up_state *s, enum pv_kind kind, const unsigned char *b, size_t n) {
    struct pv *x = up_new(s->u, kind);
    if (!x) return NULL;
    x->s = xsa_malloc(n + 1);
    memcpy(x->s, b, n);
    x->s[n] = '\0';
    x->len = n;
    return x;
}

static int op_string(struct up_state *s, enum pv_kind kind, int width) {
    int rc = need(s, (size_t)width);
    if (rc) return rc;
    uint64_t n = le(s->p + s->pos, width);
    s->pos += (size_t)width;
    if (n > s->len - s->pos) return bad(s, "a string runs past the end of the pickle");
    struct pv *x = new_str(s, kind, s->p + s->pos, (size_t)n);
    s->pos += (size_t)n;
    return push(s, x);
}

static int op_int(struct up_state *s, int width, int is_signed) {
    int rc = need(s, (size_t)width);
    if (rc) return rc;
    uint64_t v = le(s->p + s->pos, width);
    s->pos += (size_t)width;
    struct pv *x = up_new(s->u, PV_INT);
    if (x) x->i = is_signed ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
    return push(s, x);
}

// LONG1 / LONG4: little-endian two's complement of n bytes; more than 64 bits is an opaque value.
static int op_long(struct up_state *s, int width) {
    int rc = need(s, (size_t)width);
    if (rc) return rc;
    uint64_t n = le(s->p + s->pos, width);
    s->pos += (size_t)width;
    if ((rc = need(s, (size_t)n))) return rc;
    if (n > 8) {  // a Python int no tensor field can hold (a seed of 2^64, say): kept unread
        s->pos += (size_t)n;
        return push(s, up_new(s->u, PV_OPAQUE));
    }
    uint64_t v = le(s->p + s->pos, (int)n);
    if (n && n < 8 && (s->p[s->pos + n - 1] & 0x80)) v |= ~0ull << (8 * n);  // sign-extend
    s->pos += (size_t)n;
    struct pv *x = up_new(s->u, PV_INT);
    if (x) x->i = (int64_t)v;
    return push(s, x);
}

static int op_float(struct up_state *s) {
    int rc = need(s, 8);
    if (rc) return rc;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | s->p[s->pos + i];  // big-endian
    s->pos += 8;
    struct pv *x = up_new(s->u, PV_FLOAT);
    if (x) memcpy(&x->f, &v, 8);
    return push(s, x);
}

// Globals torch.load(weights_only=True) allows that stand for data, never code xsa-eval runs.
static int is_inert(const char *module, const char *name) {
    static const char *const torch_names[] = {"Size", "device", "float16", "float32", "float64", "bfloat16", "half", "float",
                                              "double", "int8", "int16", "int32", "int64", "uint8", "bool", "long", "int",
                                              "short", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2"};
    if (!strcmp(module, "torch"))
        for (size_t i = 0; i < sizeof torch_names / sizeof *torch_names; i++)
            if (!strcmp(name, torch_names[i])) return 1;
    return ((!strcmp(module, "builtins") || !strcmp(module, "__builtin__")) && (!strcmp(name, "set") || !strcmp(name, "frozenset"))) ||
           (!strcmp(module, "_codecs") && !strcmp(name, "encode"));
}

// Reductions whose first argument is the class of what they make: the object is an instance of it.
static int is_reconstructor(const char *module, const char *name) {
    size_t k = strlen(name);
    return (!strcmp(module, "copyreg") && (!strcmp(name, "_reconstructor") || !strcmp(name, "__newobj__") || !strcmp(name, "__newobj_ex__"))) ||
           (!strncmp(module, "numpy", 5) && k >= 12 && !strcmp(name + k - 12, "_reconstruct"));
}

// A global is a tag naming what it is; nothing is imported. Refused here: the globals whose
// tensors would be read wrong.
static int resolve_global(struct up_state *s, const char *module, const char *name) {
    char n[96];
    printable(name, n, sizeof n);
    size_t k = strlen(name);
    if (!strcmp(module, "torch._utils") && !strcmp(name, "_rebuild_tensor_v3"))  // UntypedStorage: float8, uint16+
        return xsa_fail(s->err, XSA_EBADINPUT, "%s: a tensor of a dtype torch.save writes untyped (float8, uint16, uint32 or uint64; byte %zu) is not readable; xsa-eval reads float, half, bfloat16, double, integer and bool tensors (convert with tensor.float())",
                        s->u->where, s->op_pos);
    if (!strcmp(module, "torch") && k > 7 && !strcmp(name + k - 7, "Storage") && !up_dtype_find(name))  // a dtype, not code
        return xsa_fail(s->err, XSA_EBADINPUT, "%s: tensors of storage type torch.%s (byte %zu) are not readable; xsa-eval reads float, half, bfloat16, double, integer and bool storages (convert with tensor.float())",
                        s->u->where, n, s->op_pos);
    size_t bytes = strlen(module) + k + 2;
    if (s->u->name_bytes + bytes > UP_MAX_NAME_BYTES) return bad(s, "the globals' names grow past their limit");
    struct pv *g = up_new(s->u, PV_GLOBAL);
    if (!g) return too_many(s);
    s->u->name_bytes += bytes;
    g->s = xsa_malloc(bytes);
    snprintf(g->s, bytes, "%s.%s", module, name);
    g->len = bytes - 1;
    if (!strcmp(module, "collections") && !strcmp(name, "OrderedDict")) g->i = UPG_ORDERED_DICT;
    else if (!strcmp(module, "torch._utils") && !strcmp(name, "_rebuild_tensor_v2")) g->i = UPG_REBUILD_TENSOR_V2;
    else if (!strcmp(module, "torch._utils") && !strcmp(name, "_rebuild_parameter")) g->i = UPG_REBUILD_PARAMETER;
    else if (!strcmp(module, "torch._utils") && !strcmp(name, "_rebuild_parameter_with_state"))
        g->i = UPG_REBUILD_PARAMETER_STATE;  // a Parameter with attributes (transformers 5 marks each)
    else if (!strcmp(module, "torch._tensor") && !strcmp(name, "_rebuild_from_type_v2")) g->i = UPG_REBUILD_FROM_TYPE;
    else if (!strcmp(module, "torch") && (g->dtype = up_dtype_find(name))) g->i = UPG_STORAGE;
    else if (is_inert(module, name)) g->i = UPG_INERT;
    else if (is_reconstructor(module, name)) g->i = UPG_RECONSTRUCTOR;
    else g->i = UPG_FOREIGN;
    return push(s, g);
}

static int op_global(struct up_state *s) {
    char part[2][UP_MAX_NAME + 1];
    for (int k = 0; k < 2; k++) {
        const unsigned char *nl = memchr(s->p + s->pos, '\n', s->len - s->pos);
        size_t n = nl ? (size_t)(nl - (s->p + s->pos)) : 0;
        if (!nl || n > UP_MAX_NAME || memchr(s->p + s->pos, 0, n)) return bad(s, "a GLOBAL without two short newline-ended names");
        memcpy(part[k], s->p + s->pos, n);
        part[k][n] = '\0';
        s->pos += n + 1;
    }
    return resolve_global(s, part[0], part[1]);
}

static int op_stack_global(struct up_state *s) {
    struct pv *name = NULL, *module = NULL;
    int rc = pop(s, &name);
    if (!rc) rc = pop(s, &module);
    if (rc) return rc;
    if (name->kind != PV_STR || module->kind != PV_STR || name->len > UP_MAX_NAME || module->len > UP_MAX_NAME ||
        strlen(name->s) != name->len || strlen(module->s) != module->len)
        return bad(s, "a STACK_GLOBAL without two short string names");
    return resolve_global(s, module->s, name->s);
}

static int is_int(const struct pv *x) { return x->kind == PV_INT; }

// A tuple of at most UP_MAX_DIMS integers in [0, UP_MAX_ELEMS] into out[]; its length, or -1.
static int int_tuple(const struct pv *t, int64_t *out) {
    if (t->kind != PV_TUPLE || t->n > UP_MAX_DIMS) return -1;
    for (size_t i = 0; i < t->n; i++) {
        if (!is_int(t->v[i]) || t->v[i]->i < 0 || t->v[i]->i > UP_MAX_ELEMS) return -1;
        out[i] = t->v[i]->i;
    }
    return (int)t->n;
}

// torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
// backward_hooks[, metadata]): a view of the storage, which every element must lie inside.
static int rebuild_tensor(struct up_state *s, const struct pv *a, struct pv **out) {
    if (a->n < 6 || a->n > 7 || a->v[0]->kind != PV_STORAGE || !is_int(a->v[1]) || a->v[4]->kind != PV_BOOL)
        return bad(s, "_rebuild_tensor_v2 without (storage, offset, size, stride, requires_grad, hooks)");
    // metadata (torch._utils.get_tensor_metadata): {"neg": True} marks a lazily negated view,
    // whose elements torch.load gives as minus the stored ones; reading the storage as it is
    // would flip the weight's sign, so such a tensor (and any other flag) is refused.
    if (a->n == 7 && a->v[6]->kind == PV_DICT)
        for (size_t i = 0; i < a->v[6]->n; i++) {
            const struct pv *k = a->v[6]->v[2 * i], *v = a->v[6]->v[2 * i + 1];
            if (v->kind == PV_BOOL && !v->i) continue;  // a flag that is off changes nothing
            char name[64];
            printable(k->kind == PV_STR ? k->s : "?", name, sizeof name);
            return xsa_fail(s->err, XSA_EBADINPUT, "%s: a tensor saved with the '%s' flag (byte %zu; a lazily %s view, e.g. "
                            "x.conj().imag); xsa-eval reads plain tensors: save it as tensor.resolve_neg().resolve_conj().clone()",
                            s->u->where, name, s->op_pos, !strcmp(name, "neg") ? "negated" : "transformed");
        }
    struct pv *t = up_new(s->u, PV_TENSOR);
    if (!t) return too_many(s);
    const struct pv *st = a->v[0];
    int nd = int_tuple(a->v[2], t->shape), ns = int_tuple(a->v[3], t->stride);
    if (nd < 0 || ns != nd) return bad(s, "_rebuild_tensor_v2 with a size or stride that is not a tuple of at most 8 non-negative integers of one length");
    if (a->v[1]->i < 0 || a->v[1]->i > UP_MAX_ELEMS) return bad(s, "_rebuild_tensor_v2 with an impossible storage offset");
    t->ndim = nd;
    t->storage = (struct pv *)st;
    t->dtype = st->dtype;
    t->offset = a->v[1]->i;
    // The last element's index: offset + sum (shape - 1) * stride, each term below 2^80.
    unsigned __int128 last = (unsigned __int128)t->offset, numel = 1;
    for (int d = 0; d < nd; d++) {
        numel *= (unsigned __int128)t->shape[d];
        if (numel > UP_MAX_ELEMS) return bad(s, "a tensor with more than 2^40 elements");
        if (t->shape[d]) last += (unsigned __int128)(t->shape[d] - 1) * (unsigned __int128)t->stride[d];
    }
    if (numel && last >= st->numel) {
        char k[64];
        printable(st->s, k, sizeof k);
        return xsa_fail(s->err, XSA_EBADINPUT, "%s: a tensor of storage '%s' reaches element %llu but the storage holds %llu (byte %zu of the pickle); the file is corrupt",
                        s->u->where, k, (unsigned long long)last, (unsigned long long)st->numel, s->op_pos);
    }
    *out = t;
    return 0;
}

// An inert object of `cls` (a GLOBAL) with `args`; call: 1 when it stands for cls(*args).
static int new_object(struct up_state *s, struct pv *cls, struct pv *args, int call) {
    struct pv *o = up_new(s->u, PV_OBJECT);
    if (!o) return too_many(s);
    o->cls = cls, o->args = args, o->i = call;
    return push(s, o);
}

// torch._tensor._rebuild_from_type_v2(func, type, args, state): a tensor subclass; func(*args) is
// the tensor, whose values the subclass keeps (its state: Python attributes, not read). Any other
// func (a wrapper subclass's: a DTensor, its local shard only) stays an object of `type`, which
// the state dict reader names.
static int rebuild_from_type(struct up_state *s, struct pv *fn, struct pv *a) {
    if (a->n == 4 && a->v[0]->kind == PV_GLOBAL && a->v[0]->i == UPG_REBUILD_TENSOR_V2 && a->v[2]->kind == PV_TUPLE) {
        struct pv *t = NULL;
        int rc = rebuild_tensor(s, a->v[2], &t);
        return rc ? rc : push(s, t);
    }
    if (a->n == 4 && a->v[1]->kind == PV_GLOBAL && strcmp(a->v[1]->s, "torch.Tensor") && strcmp(a->v[1]->s, "torch.nn.parameter.Parameter"))
        return new_object(s, a->v[1], a, 0);
    return new_object(s, fn, a, 1);
}

// set(items) / frozenset(items): the items' list, shared (never copied: memory stays bounded).
static int new_set(struct up_state *s, const struct pv *args) {
    if (args->n > 1 || (args->n && args->v[0]->kind != PV_LIST && args->v[0]->kind != PV_TUPLE))
        return bad(s, "a set built from other than one list or tuple");
    struct pv *x = up_new(s->u, PV_SET);
    if (!x) return too_many(s);
    x->items = args->n ? args->v[0] : NULL;
    x->i = 1;  // shared items: ADDITEMS may not extend them
    return push(s, x);
}

static int op_reduce(struct up_state *s) {
    struct pv *args = NULL, *fn = NULL, *res = NULL;
    int rc = pop(s, &args);
    if (!rc) rc = pop(s, &fn);
    if (rc) return rc;
    if (fn->kind != PV_GLOBAL || args->kind != PV_TUPLE) return bad(s, "REDUCE of something other than a global and a tuple");
    switch (fn->i) {
    case UPG_ORDERED_DICT:
        if (args->n) return bad(s, "OrderedDict built from arguments (torch.save passes none)");
        res = up_new(s->u, PV_DICT);
        break;
    case UPG_REBUILD_TENSOR_V2:
        if ((rc = rebuild_tensor(s, args, &res))) return rc;
        break;
    case UPG_REBUILD_PARAMETER:  // (data, requires_grad, backward_hooks): the data is the tensor
        // (or an object, a quantized tensor's rebuild, which the state dict reader names)
        if (args->n != 3 || (args->v[0]->kind != PV_TENSOR && args->v[0]->kind != PV_OBJECT))
            return bad(s, "_rebuild_parameter without (tensor, requires_grad, hooks)");
        res = args->v[0];
        break;
    case UPG_REBUILD_PARAMETER_STATE:  // (data, requires_grad, backward_hooks, state): the state's
        // attributes are dropped, as by torch.load
        if (args->n != 4 || (args->v[0]->kind != PV_TENSOR && args->v[0]->kind != PV_OBJECT))
            return bad(s, "_rebuild_parameter_with_state without (tensor, requires_grad, hooks, state)");
        res = args->v[0];
        break;
    case UPG_REBUILD_FROM_TYPE: return rebuild_from_type(s, fn, args);
    case UPG_INERT:  // torch.Size((2, 3)), set([...]), ...: nothing is called
        if (!strcmp(fn->s + fn->len - 3, "set")) return new_set(s, args);
        res = up_new(s->u, PV_OPAQUE);
        if (res && !strcmp(fn->s, "_codecs.encode")) res->args = args;  // its text: numpy scalars' bytes (a saved step)
        break;
    case UPG_RECONSTRUCTOR:  // copyreg._reconstructor(cls, base, state), numpy's _reconstruct(cls, ...)
        if (args->n && args->v[0]->kind == PV_GLOBAL) return new_object(s, args->v[0], args, 0);
        return new_object(s, fn, args, 1);
    case UPG_FOREIGN: return new_object(s, fn, args, 1);
    default:
        return bad(s, "REDUCE of a storage type (torch.save names them only inside persistent ids)");
    }
    return push(s, res);
}

// NEWOBJ (cls, args) and NEWOBJ_EX (cls, args, kwargs): cls.__new__(cls, *args), as an inert
// object of cls (an instance: argparse.Namespace, a dataclass, an nn.Module); nothing is called.
static int op_newobj(struct up_state *s, int ex) {
    struct pv *kwargs = NULL, *args = NULL, *cls = NULL;
    int rc = ex ? pop(s, &kwargs) : 0;
    if (!rc) rc = pop(s, &args);
    if (!rc) rc = pop(s, &cls);
    if (rc) return rc;
    if (cls->kind != PV_GLOBAL || cls->i != UPG_FOREIGN || args->kind != PV_TUPLE || (kwargs && kwargs->kind != PV_DICT))
        return bad(s, "NEWOBJ of something other than a class and a tuple (torch.save builds its own values with REDUCE)");
    return new_object(s, cls, args, 0);
}

static int op_persid(struct up_state *s) {
    struct pv *pid = NULL, *res = NULL;
    int rc = pop(s, &pid);
    if (rc) return rc;
    if (!s->u->persistent) return bad(s, "a persistent id with no storage to resolve it");
    if ((rc = s->u->persistent(s->u, s->u->ctx, pid, &res, s->err))) return rc;
    return push(s, res);
}

// MARK ... TUPLE/LIST/DICT: a new container of the items above the mark.
static int op_collect(struct up_state *s, enum pv_kind kind) {
    size_t from = 0;
    int rc = pop_mark(s, &from);
    if (rc) return rc;
    if (kind == PV_DICT && (s->sp - from) % 2) return bad(s, "DICT with an odd number of items");
    struct pv *c = up_new(s->u, kind);
    if (!c) return too_many(s);
    if (kind == PV_DICT)
        for (size_t i = from; i < s->sp; i += 2) dict_set(c, s->stack[i], s->stack[i + 1]);
    else
        for (size_t i = from; i < s->sp; i++) push_item(c, s->stack[i]);
    s->sp = from;
    return push(s, c);
}

static int op_small_tuple(struct up_state *s, int n) {
    struct pv *c = up_new(s->u, PV_TUPLE);
    if (!c) return too_many(s);
    if (s->sp < floor_mark(s) + (size_t)n) return bad(s, "TUPLE1/2/3 with too few values");
    for (int i = n; i > 0; i--) push_item(c, s->stack[s->sp - (size_t)i]);
    s->sp -= (size_t)n;
    return push(s, c);
}

// APPEND(S) / SETITEM(S): `from` is the first item (above a mark, or the last one or two).
static int add_items(struct up_state *s, size_t from, enum pv_kind kind) {
    if (from == 0 || from - 1 < floor_mark(s)) return bad(s, kind == PV_LIST ? "APPEND with no list below" : "SETITEM with no dict below");
    struct pv *c = s->stack[from - 1];
    if (c->kind == PV_OBJECT) {  // a dict or list subclass (Lightning's AttributeDict): its items
        if (!c->items && !(c->items = up_new(s->u, kind))) return too_many(s);
        c = c->items;
    }
    if (c->kind != kind) return bad(s, kind == PV_LIST ? "APPEND to something that is not a list" : "SETITEM on something that is not a dict");
    if (kind == PV_DICT && (s->sp - from) % 2) return bad(s, "SETITEMS with an odd number of items");
    if (kind == PV_DICT)
        for (size_t i = from; i < s->sp; i += 2) dict_set(c, s->stack[i], s->stack[i + 1]);
    else
        for (size_t i = from; i < s->sp; i++) push_item(c, s->stack[i]);
    s->sp = from;
    return 0;
}

static int memo_put(struct up_state *s, uint64_t idx) {
    if (idx >= UP_MAX_MEMO) return bad(s, "a memo index past the limit");
    if (!s->sp || s->sp <= floor_mark(s)) return bad(s, "PUT with an empty stack");
    if (idx >= s->memo_cap) {
        size_t cap = s->memo_cap ? s->memo_cap : 64;
        while (cap <= idx) cap *= 2;
        struct pv **n = xsa_realloc_array(s->memo, cap, sizeof *n);
        memset(n + s->memo_cap, 0, (cap - s->memo_cap) * sizeof *n);
        s->memo = n;
        s->memo_cap = cap;
    }
    if (!s->memo[idx]) s->memo_len++;
    s->memo[idx] = s->stack[s->sp - 1];
    return 0;
}

static int memo_get(struct up_state *s, uint64_t idx) {
    if (idx >= s->memo_cap || !s->memo[idx]) return bad(s, "GET of a memo entry that was never PUT");
    return push(s, s->memo[idx]);
}

static int op_index(struct up_state *s, int width, uint64_t *idx) {
    int rc = need(s, (size_t)width);
    if (rc) return rc;
    *idx = le(s->p + s->pos, width);
    s->pos += (size_t)width;
    return 0;
}

static int step(struct up_state *s, int op, int *stop) {
    struct pv *x = NULL, *y = NULL;
    uint64_t idx;
    size_t from = 0;
    int rc = 0;
    switch (op) {
    case 0x80:  // PROTO
        if ((rc = need(s, 1))) return rc;
        if (s->p[s->pos++] > 5) return bad(s, "a pickle protocol above 5");
        return 0;
    case 0x95:  // FRAME: a length hint only
        if ((rc = need(s, 8))) return rc;
        s->pos += 8;
        return 0;
    case '.':  // STOP
        *stop = 1;
        return 0;
    case '(':  // MARK
        if (s->n_marks == UP_MAX_MARKS) return bad(s, "marks nested past the limit");
        s->marks[s->n_marks++] = s->sp;
        return 0;
    case '}': return push(s, up_new(s->u, PV_DICT));
    case ']': return push(s, up_new(s->u, PV_LIST));
    case ')': return push(s, up_new(s->u, PV_TUPLE));
    case 'd': return op_collect(s, PV_DICT);
    case 'l': return op_collect(s, PV_LIST);
    case 't': return op_collect(s, PV_TUPLE);
    case 0x85: return op_small_tuple(s, 1);
    case 0x86: return op_small_tuple(s, 2);
    case 0x87: return op_small_tuple(s, 3);
    case 'a':  // APPEND
        if (s->sp < 1) return bad(s, "APPEND with an empty stack");
        return add_items(s, s->sp - 1, PV_LIST);
    case 's':  // SETITEM
        if (s->sp < 2) return bad(s, "SETITEM with too few values");
        return add_items(s, s->sp - 2, PV_DICT);
    case 'e':  // APPENDS
    case 'u':  // SETITEMS
        if ((rc = pop_mark(s, &from))) return rc;
        return add_items(s, from, op == 'e' ? PV_LIST : PV_DICT);
    case 'q': return op_index(s, 1, &idx) ? s->err->code : memo_put(s, idx);
    case 'r': return op_index(s, 4, &idx) ? s->err->code : memo_put(s, idx);
    case 0x94: return memo_put(s, s->memo_len);  // MEMOIZE: the memo's length
    case 'h': return op_index(s, 1, &idx) ? s->err->code : memo_get(s, idx);
    case 'j': return op_index(s, 4, &idx) ? s->err->code : memo_get(s, idx);
    case 'J': return op_int(s, 4, 1);
    case 'K': return op_int(s, 1, 0);
    case 'M': return op_int(s, 2, 0);
    case 0x8a: return op_long(s, 1);
    case 0x8b: return op_long(s, 4);
    case 'G': return op_float(s);
    case 'N': return push(s, up_new(s->u, PV_NONE));
    case 0x88:
    case 0x89:
        if ((x = up_new(s->u, PV_BOOL))) x->i = op == 0x88;
        return push(s, x);
    case 0x8c: return op_string(s, PV_STR, 1);
    case 'X': return op_string(s, PV_STR, 4);
    case 0x8d: return op_string(s, PV_STR, 8);
    case 'C': return op_string(s, PV_BYTES, 1);
    case 'B': return op_string(s, PV_BYTES, 4);
    case 0x8e: return op_string(s, PV_BYTES, 8);
    case 'c': return op_global(s);
    case 0x93: return op_stack_global(s);
    case 'R': return op_reduce(s);
    case 'Q': return op_persid(s);
    case 'b':  // BUILD: an object's state, kept as it is; an OrderedDict's attributes (a state
        // dict's _metadata): not kept
        if ((rc = pop(s, &y)) || (rc = top(s, &x))) return rc;
        if (x->kind == PV_OBJECT) {
            x->state = y;
            return 0;
        }
        if (x->kind != PV_DICT || (y->kind != PV_DICT && y->kind != PV_NONE))
            return bad(s, "BUILD of something other than an object's or a dict's attributes");
        return 0;
    case 0x81: return op_newobj(s, 0);  // NEWOBJ
    case 0x92: return op_newobj(s, 1);  // NEWOBJ_EX
    case 0x8f:  // EMPTY_SET
        if ((x = up_new(s->u, PV_SET)) && !(x->items = up_new(s->u, PV_LIST))) x = NULL;
        return push(s, x);
    case 0x90:  // ADDITEMS: the items above the mark into the set below it
        if ((rc = pop_mark(s, &from))) return rc;
        if (from == 0 || from - 1 < floor_mark(s) || s->stack[from - 1]->kind != PV_SET || s->stack[from - 1]->i)
            return bad(s, "ADDITEMS with no set of its own below");
        for (size_t i = from; i < s->sp; i++) push_item(s->stack[from - 1]->items, s->stack[i]);
        s->sp = from;
        return 0;
    case 0x91:  // FROZENSET: the items above the mark
        if ((rc = op_collect(s, PV_LIST)) || (rc = pop(s, &y))) return rc;
        if (!(x = up_new(s->u, PV_SET))) return too_many(s);
        x->items = y;
        return push(s, x);
    case '0':  // POP (a mark when one is on top)
        if (s->n_marks && s->marks[s->n_marks - 1] == s->sp) {
            s->n_marks--;
            return 0;
        }
        return pop(s, &x);
    case '1':  // POP_MARK
        if ((rc = pop_mark(s, &from))) return rc;
        s->sp = from;
        return 0;
    case '2':  // DUP
        if ((rc = top(s, &x))) return rc;
        return push(s, x);
    default: {
        char what[96];
        if (op && strchr("ILFSVpgldioPTU", op))  // the text opcodes of pickle protocols 0 and 1
            return xsa_fail(s->err, XSA_EBADINPUT, "%s: opcode '%c' of pickle protocol 0 or 1 at byte %zu; xsa-eval "
                            "reads what torch.save writes by default (protocol 2): re-save with "
                            "torch.save(obj, path)", s->u->where, op, s->op_pos);
        snprintf(what, sizeof what, "opcode 0x%02x, which torch.save does not write,", op);
        return bad(s, what);
    }
    }
}

int unpickle_run(struct unpickler *u, const unsigned char *data, size_t len, struct pv **root, xsa_error *err) {
    struct up_state s = {.u = u, .p = data, .len = len, .err = err};
    int rc = 0, stop = 0;
    while (!rc && !stop) {
        s.op_pos = s.pos;
        if (s.pos >= len) {
            rc = bad(&s, "the pickle ends without STOP");
            break;
        }
        rc = step(&s, s.p[s.pos++], &stop);
    }
    if (!rc && (s.sp != 1 || s.n_marks)) rc = bad(&s, "STOP with other than one value on the stack");
    if (!rc) *root = s.stack[0];
    free(s.stack);
    free(s.memo);
    return rc;
}
