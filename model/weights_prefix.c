// weights_prefix.c: a wrapper's name before every tensor name, dropped or refused (see the header).
#include "model/weights_prefix.h"

#include <stdio.h>
#include <string.h>

// The length of the prefix P when `name` is P + anchor with P non-empty and ending in '.'; else 0.
static size_t prefix_before(const char *name, const char *anchor) {
    size_t n = strlen(name), k = strlen(anchor);
    return n > k + 1 && name[n - k - 1] == '.' && !strcmp(name + n - k, anchor) ? n - k : 0;
}

int weights_drop_prefix(struct safetensors *st, const char *const *anchors, int n, const char *where, const char *family,
                        char *prefix, size_t prefix_n, xsa_error *err) {
    prefix[0] = '\0';
    for (int a = 0; a < n; a++)
        if (safetensors_find(st, anchors[a])) return 0;  // named as the family names them
    const char *at = NULL, *other = NULL;  // the tensor found under a prefix; one under another
    size_t p = 0, q = 0;
    for (int a = 0; a < n && !at; a++)
        for (int i = 0; i < st->n_tensors; i++) {
            const char *name = st->tensors[i].name;
            size_t len = prefix_before(name, anchors[a]);
            if (!len) continue;
            if (!at) at = name, p = len;
            else if (len != p || strncmp(name, at, p)) other = name, q = len;
        }
    if (!at) return 0;
    if (other)
        return xsa_fail(err, XSA_EBADINPUT, "%s: two models' weights, named under '%.*s' ('%s') and under '%.*s' ('%s'); save the one to evaluate on its own (torch.save(module.<attribute>.state_dict(), 'model.pt')) and pass that",
                        where, (int)p, at, at, (int)q, other, other);
    const char *dot = memchr(at, '.', p);
    if (dot != at + p - 1)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the %s weights are named under '%.*s' (as '%s'), a path of modules; xsa-eval drops one leading name only: save the inner model's state dict (torch.save(module.%.*s.state_dict(), 'model.pt')) and pass that",
                        where, family, (int)p, at, at, (int)p - 1, at);
    for (int i = 0; i < st->n_tensors; i++)
        if (strncmp(st->tensors[i].name, at, p))
            return xsa_fail(err, XSA_EBADINPUT, "%s: the %s weights are named under '%.*s' (as '%s') but tensor '%s' is not, so dropping that prefix is not safe: save the model's own state dict (torch.save(module.%.*s.state_dict(), 'model.pt')) and pass that",
                            where, family, (int)p, at, at, st->tensors[i].name, (int)p - 1, at);
    snprintf(prefix, prefix_n, "%.*s", (int)p, at);
    if (strlen(prefix) != p)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the weights are named under '%.*s', too long a prefix; save the model's own state dict", where, (int)p, at);
    safetensors_drop_prefix(st, p);
    return 0;
}
