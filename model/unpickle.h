// unpickle.h: a restricted unpickler for torch.save's data.pkl. It implements the opcodes that
// pickle protocols 2-5 use for torch.save's objects and builds only None, booleans, integers,
// floats, strings, bytes, tuples, lists, dicts and tensors. The only globals it accepts are the
// ones torch.save writes for tensors (torch._utils._rebuild_tensor_v2, _rebuild_parameter,
// collections.OrderedDict and the torch.*Storage types) and a few inert ones (UPG_INERT) that
// torch's weights-only loader allows too; any other global is refused by name
// when its opcode is read. Nothing is ever called: a "global" is a tag that REDUCE interprets.
// Every size is bounded (memo, stack, marks, strings, dimensions).
#ifndef XSA_MODEL_UNPICKLE_H
#define XSA_MODEL_UNPICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define UP_MAX_STACK (1 << 22)
#define UP_MAX_MARKS 4096
#define UP_MAX_MEMO (1 << 22)
#define UP_MAX_DIMS 8
#define UP_MAX_NODES (1 << 22)  // objects built: about 20 per tensor; bounds memory below 1 GiB

// PV_OPAQUE: a value torch.load(weights_only=True) also builds but xsa-eval never reads (a
// torch.Size, torch.device, set, bytes of protocol 2, an integer wider than 64 bits).
enum pv_kind { PV_NONE, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_BYTES, PV_TUPLE, PV_LIST, PV_DICT, PV_GLOBAL, PV_STORAGE, PV_TENSOR, PV_OPAQUE };

// The allowed globals.
// UPG_RECORD: a plain data class whose objects a checkpoint carries beside the weights
// (modded-nanogpt's optimizer ParamConfig); NEWOBJ makes an empty dict of it, never calling it.
// UPG_INERT: a global torch's weights-only loader allows beside tensors (a torch dtype, torch.Size,
// torch.device, set, _codecs.encode): a value by itself, and REDUCE of it a PV_OPAQUE.
enum up_global { UPG_ORDERED_DICT = 1, UPG_REBUILD_TENSOR_V2, UPG_REBUILD_PARAMETER, UPG_REBUILD_PARAMETER_STATE, UPG_STORAGE, UPG_RECORD, UPG_INERT };

// A storage dtype: the torch.*Storage name, its safetensors-style name and element size.
struct up_dtype {
    const char *storage;  // "FloatStorage"
    const char *name;     // "F32"
    int size;             // bytes per element
};

struct pv {
    enum pv_kind kind;
    int64_t i;                    // BOOL, INT; GLOBAL: enum up_global
    double f;                     // FLOAT
    char *s;                      // STR, BYTES (NUL-terminated copy); STORAGE: its key
    size_t len;                   // STR, BYTES: bytes
    struct pv **v;                // TUPLE, LIST: (n) items; DICT: (2n) key, value, ...
    size_t n, cap;
    const struct up_dtype *dtype; // GLOBAL (storage type), STORAGE, TENSOR
    // STORAGE: the element data, resolved by persistent_load
    const unsigned char *data;    // (numel * dtype->size)
    uint64_t numel;
    // TENSOR
    struct pv *storage;
    int64_t offset;               // in elements
    int ndim;
    int64_t shape[UP_MAX_DIMS], stride[UP_MAX_DIMS];
    // DICT: up_dict_get's hash of the string keys (pair index + 1; 0 empty), made by the first
    // lookup in a big dict and again when pairs were added since (index_n: the pairs it covers)
    uint32_t *index;
    size_t index_mask, index_n;
};

// persistent_load: turns the persistent id `pid` into a PV_STORAGE node (*out, allocated by
// up_new). `where` names the pickle for messages.
struct unpickler;
typedef int (*up_persistent_fn)(struct unpickler *u, void *ctx, const struct pv *pid, struct pv **out, xsa_error *err);

struct unpickler {
    const char *where;            // "ckpt.pt (archive/data.pkl)"
    up_persistent_fn persistent;
    void *ctx;
    struct pv **nodes;            // every node made, freed together
    size_t n_nodes, cap_nodes;
    int too_many;                 // up_new refused a node past UP_MAX_NODES
};

// Runs the pickle `data` (len bytes) to its STOP; *root is the value it built, owned by u.
int unpickle_run(struct unpickler *u, const unsigned char *data, size_t len, struct pv **root, xsa_error *err);

// A fresh node of `kind`, owned by u; NULL past UP_MAX_NODES (the pickle is refused).
struct pv *up_new(struct unpickler *u, enum pv_kind kind);

// The value of the string key `key` in a DICT, or NULL.
const struct pv *up_dict_get(const struct pv *d, const char *key);

// The storage dtype called `storage` ("FloatStorage"), or NULL.
const struct up_dtype *up_dtype_find(const char *storage);

void unpickle_free(struct unpickler *u);

#endif
