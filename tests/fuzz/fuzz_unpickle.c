// fuzz_unpickle.c: raw pickle bytes -> the restricted unpickler, every persistent id that
// names a storage type resolved to one 64-element storage. Must never crash; errors are one line;
// every value (objects' attributes and items too) can be described.
#include <stdint.h>

#include "common/xalloc.h"
#include "model/unpickle.h"
#include "tests/fuzz/fuzz_util.h"

static const unsigned char storage_bytes[64 * 8];

static int fake_storage(struct unpickler *u, void *ctx, const struct pv *pid, struct pv **out, xsa_error *err) {
    (void)ctx;
    if (pid->kind != PV_TUPLE || pid->n < 2 || pid->v[1]->kind != PV_GLOBAL || pid->v[1]->i != UPG_STORAGE)
        return xsa_fail(err, XSA_EBADINPUT, "fuzz.pkl: not a storage persistent id");
    struct pv *s = up_new(u, PV_STORAGE);
    if (!s) return xsa_fail(err, XSA_EBADINPUT, "fuzz.pkl: more than %d objects", UP_MAX_NODES);  // up_new past its limit
    s->s = xsa_strdup("0");
    s->dtype = pid->v[1]->dtype;
    s->numel = 64;
    s->data = storage_bytes;
    *out = s;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct unpickler u = {.where = "fuzz.pkl", .persistent = fake_storage};
    struct pv *root = NULL;
    xsa_error err = {0};
    int rc = unpickle_run(&u, data, size, &root, &err);
    fuzz_check_error(rc, &err);
    char what[160];
    if (!rc) up_describe(root, what, sizeof what);
    if (!rc && root->kind == PV_OBJECT) {  // an object's fields and items, as a module reader reads them
        if (root->state) up_describe(root->state, what, sizeof what);
        if (up_attr(root, "_parameters")) up_describe(up_attr(root, "_parameters"), what, sizeof what);
        if (root->items) up_describe(root->items, what, sizeof what);
    }
    if (!rc && root->kind == PV_SET && root->items)
        for (size_t i = 0; i < root->items->n; i++) up_describe(root->items->v[i], what, sizeof what);
    if (!rc && root->kind == PV_DICT)  // walk the top level as a state dict reader does
        for (size_t i = 0; i < root->n; i++) {
            const struct pv *v = root->v[2 * i + 1];
            up_describe(v, what, sizeof what);
            if (v->kind != PV_TENSOR) continue;
            volatile unsigned char sink = 0;
            size_t es = (size_t)v->dtype->size;
            int64_t last = v->offset;
            int empty = 0;
            for (int d = 0; d < v->ndim; d++) {
                if (!v->shape[d]) empty = 1;
                else last += (v->shape[d] - 1) * v->stride[d];
            }
            if (!empty) sink ^= v->storage->data[(size_t)last * es + es - 1];  // must lie inside
            (void)sink;
        }
    unpickle_free(&u);
    return 0;
}
