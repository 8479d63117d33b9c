// torch_weights.c: where the weights of a torch.save object are (see torch_checkpoint.h): a state
// dict, bare or under a training loop's key, or a whole nn.Module (torch.save(model)), whose
// state dict is built from its pickled attributes as module.state_dict() names it. A module with
// state_dict hooks is refused: they are code, which may rename or change what state_dict() gives.
#include <stdio.h>
#include <string.h>

#include "common/grow.h"
#include "common/xalloc.h"
#include "model/torch_checkpoint.h"

#define MODULE_MAX_DEPTH 64      // nested modules (a pickle's memo can even make a cycle)
#define MODULE_MAX_NAME 1024     // a built name, as TORCH_MAX_NAME
#define MODULE_MAX_WORK (1 << 28)  // entries and set items looked at: memo sharing can repeat a
                                   // subtree exponentially often, a hostile set be scanned per buffer

// 1 for a non-empty dict of name -> tensor.
static int is_state_dict(const struct pv *d) {
    if (!d || d->kind != PV_DICT || !d->n) return 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->v[2 * i]->kind != PV_STR || d->v[2 * i + 1]->kind != PV_TENSOR) return 0;
    return 1;
}

int torch_is_module(const struct pv *x) {
    const struct pv *p = up_attr(x, "_parameters"), *b = up_attr(x, "_buffers"), *m = up_attr(x, "_modules");
    return p && b && m && p->kind == PV_DICT && b->kind == PV_DICT && m->kind == PV_DICT;
}

// torch.compile's wrapper pickles as OptimizedModule(module, dynamo_ctx) (its __reduce__), a call
// never made: the module it wraps, which its state_dict() names under "_orig_mod.". NULL else.
static const struct pv *compiled_module(const struct pv *x) {
    static const char cls[] = "torch._dynamo.eval_frame.OptimizedModule";
    if (!x || x->kind != PV_OBJECT || !x->i || !x->cls || x->cls->kind != PV_GLOBAL || strcmp(x->cls->s, cls)) return NULL;
    const struct pv *a = x->args;
    return a && a->kind == PV_TUPLE && a->n >= 1 && torch_is_module(a->v[0]) ? a->v[0] : NULL;
}

struct flatten {
    struct torch_file *tf;
    struct pv *out;        // the state dict being built
    size_t work;           // entries and set items looked at, up to MODULE_MAX_WORK
    xsa_error *err;
};

// 1 when the set `set` (a SET, or absent) holds the string `name`.
static int set_has(struct flatten *f, const struct pv *set, const char *name) {
    const struct pv *items = set && set->kind == PV_SET ? set->items : NULL;
    f->work += items ? items->n : 0;
    for (size_t i = 0; items && i < items->n; i++)
        if (items->v[i]->kind == PV_STR && !strcmp(items->v[i]->s, name)) return 1;
    return 0;
}

// A child's name goes into messages: one line, no NUL inside.
static int printable(const struct pv *k) {
    if (strlen(k->s) != k->len) return 0;
    for (size_t i = 0; i < k->len; i++)
        if ((unsigned char)k->s[i] < 0x20 || k->s[i] == 0x7f) return 0;
    return 1;
}

static int add_entry(struct flatten *f, const char *prefix, const struct pv *key, const struct pv *value) {
    size_t len = strlen(prefix) + key->len;
    struct pv *name = f->tf->u.name_bytes + len + 1 > UP_MAX_NAME_BYTES ? NULL : up_new(&f->tf->u, PV_STR);
    if (!name) return xsa_fail(f->err, XSA_EBADINPUT, "%s: the module's names take more than %d objects or %d bytes; the file is corrupt",
                               f->tf->where, UP_MAX_NODES, UP_MAX_NAME_BYTES);
    f->tf->u.name_bytes += len + 1;  // (the unpickler's budget for names, shared)
    name->len = len;
    name->s = xsa_malloc(name->len + 1);
    snprintf(name->s, name->len + 1, "%s%s", prefix, key->s);
    XSA_GROW(f->out->v, f->out->cap, 2 * f->out->n + 2);
    f->out->v[2 * f->out->n] = name, f->out->v[2 * f->out->n + 1] = (struct pv *)value;
    f->out->n++;
    return 0;
}

// state_dict() runs the module's _state_dict_pre_hooks before its entries are saved and its
// _state_dict_hooks (register_state_dict_post_hook, _register_state_dict_hook) after: a hook may
// rename, scale or drop entries (as a quantizer's or a sharded wrapper's does), so a module with
// one is refused rather than read as if it had none.
static int refuse_hooks(struct flatten *f, const struct pv *m, const char *prefix) {
    static const char *const kinds[] = {"_state_dict_pre_hooks", "_state_dict_hooks"};
    for (int k = 0; k < 2; k++) {
        const struct pv *h = up_attr(m, kinds[k]);
        if (!h || h->kind != PV_DICT || !h->n) continue;
        char hook[160], cls[128];
        up_describe(h->v[1], hook, sizeof hook);
        up_describe(m, cls, sizeof cls);
        return xsa_fail(f->err, XSA_EBADINPUT, "%s: %s%.*s%s (%s) has a state_dict hook (%s in %s), which may change what "
                        "state_dict() gives and is code xsa-eval never runs; save the state dict with torch "
                        "(torch.save(model.state_dict(), 'model.pt')) and pass that", f->tf->where, *prefix ? "module '" : "the saved module",
                        *prefix ? (int)strlen(prefix) - 1 : 0, prefix, *prefix ? "'" : "", cls, hook, kinds[k]);
    }
    return 0;
}

// Module._save_to_state_dict, then the children: parameters that are not None, buffers that are
// not None nor in _non_persistent_buffers_set, then each child that is not None, under
// prefix + name + "." (a torch.compile'd child: its module under prefix + name + "._orig_mod.").
static int flatten_module(struct flatten *f, const struct pv *m, const char *prefix, int depth) {
    char desc[160];
    const struct pv *lists[] = {up_attr(m, "_parameters"), up_attr(m, "_buffers")}, *skip = up_attr(m, "_non_persistent_buffers_set");
    const struct pv *children = up_attr(m, "_modules");
    f->work += 1 + lists[0]->n + lists[1]->n + children->n;
    if (depth > MODULE_MAX_DEPTH || f->work > MODULE_MAX_WORK)
        return xsa_fail(f->err, XSA_EBADINPUT, "%s: the saved module nests past %d levels or holds too many entries (at '%s'); the file is corrupt",
                        f->tf->where, MODULE_MAX_DEPTH, prefix);
    int rc = refuse_hooks(f, m, prefix);
    for (int l = 0; l < 2 && !rc; l++)
        for (size_t i = 0; i < lists[l]->n && !rc; i++) {
            const struct pv *k = lists[l]->v[2 * i], *v = lists[l]->v[2 * i + 1];
            if (k->kind != PV_STR || strlen(prefix) + k->len > MODULE_MAX_NAME || f->work > MODULE_MAX_WORK)
                return xsa_fail(f->err, XSA_EBADINPUT, "%s: module '%s' has a parameter or buffer whose name is not a short string, or too many; the file is corrupt",
                                f->tf->where, prefix);
            if (v->kind != PV_NONE && !(l == 1 && set_has(f, skip, k->s))) rc = add_entry(f, prefix, k, v);
        }
    for (size_t i = 0; i < children->n && !rc; i++) {
        const struct pv *k = children->v[2 * i], *v = children->v[2 * i + 1];
        if (v->kind == PV_NONE) continue;
        if (k->kind != PV_STR || strlen(prefix) + k->len + 2 > MODULE_MAX_NAME || !printable(k))
            return xsa_fail(f->err, XSA_EBADINPUT, "%s: module '%s' has a child whose name is not a short printable string; the file is corrupt", f->tf->where, prefix);
        char sub[MODULE_MAX_NAME + 12];
        snprintf(sub, sizeof sub, "%s%s.", prefix, k->s);
        const struct pv *inner = compiled_module(v);
        if (inner) {
            // OptimizedModule's own _save_to_state_dict has nothing; its one child is _orig_mod
            snprintf(sub, sizeof sub, "%s%s._orig_mod.", prefix, k->s);
            v = inner;
        }
        if (!torch_is_module(v)) {
            up_describe(v, desc, sizeof desc);
            return xsa_fail(f->err, XSA_EBADINPUT, "%s: submodule '%.*s' is %s, not an nn.Module; the file is corrupt", f->tf->where,
                            (int)strlen(sub) - 1, sub, desc);
        }
        rc = flatten_module(f, v, sub, depth + 1);
    }
    return rc;
}

// The state dict of `module` with every name under `prefix`.
static int module_state_dict(struct torch_file *tf, const struct pv *module, const char *prefix, const struct pv **sd, xsa_error *err) {
    struct flatten f = {.tf = tf, .out = up_new(&tf->u, PV_DICT), .err = err};
    if (!f.out) return xsa_fail(err, XSA_EBADINPUT, "%s: the module holds more than %d objects; the file is corrupt", tf->where, UP_MAX_NODES);
    int rc = flatten_module(&f, module, prefix, 0);
    if (!rc) *sd = f.out;
    return rc;
}

int torch_module_state_dict(struct torch_file *tf, const struct pv *module, const struct pv **sd, xsa_error *err) {
    return module_state_dict(tf, module, "", sd, err);
}

int torch_find_weights(struct torch_file *tf, const struct pv **sd, const struct pv **module, xsa_error *err) {
    static const char *const keys[] = {"state_dict", "model_state_dict", "model", "module"};
    const struct pv *root = tf->root, *inner = NULL;
    const char *prefix = "";
    *sd = root, *module = NULL;
    if (is_state_dict(root)) return 0;
    if (torch_is_module(root)) *module = root;
    else if ((*module = compiled_module(root))) prefix = "_orig_mod.";
    for (size_t i = 0; !*module && root->kind == PV_DICT && i < sizeof keys / sizeof *keys; i++) {
        const struct pv *v = up_dict_get(root, keys[i]);
        if (is_state_dict(v)) return *sd = v, 0;
        if (torch_is_module(v)) *module = v;
        else if ((*module = compiled_module(v))) prefix = "_orig_mod.";
        else if (v && v->kind == PV_DICT && !inner) inner = v;  // the weights' dict, with something else in it
    }
    if (*module) return module_state_dict(tf, *module, prefix, sd, err);
    if (inner) *sd = inner;  // its reader names the entry that is not a tensor
    return 0;
}
