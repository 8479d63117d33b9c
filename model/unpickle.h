// unpickle.h: a restricted unpickler for torch.save's data.pkl. It implements the opcodes that
// pickle protocols 2-5 use and builds None, booleans, integers, floats, strings, bytes, tuples,
// lists, dicts, sets, tensors and inert objects. Nothing is ever called: a global is a tag
// carrying its name. The tensor globals (torch._utils._rebuild_tensor_v2, _rebuild_parameter,
// the torch.*Storage types) build tensors; any other global (argparse.Namespace, a numpy array,
// a whole nn.Module, even os.system) builds a PV_OBJECT recording its class and BUILD state,
// which the reader of the result may name in a message but never runs. Globals that would give
// wrong weights are refused (untyped storages, unknown storage types, lazily negated tensors).
// Every size is bounded (memo, stack, marks, strings, dimensions, objects built).
#ifndef XSA_MODEL_UNPICKLE_H
#define XSA_MODEL_UNPICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define UP_MAX_STACK (1 << 22)
#define UP_MAX_MARKS 4096
#define UP_MAX_MEMO (1 << 22)
#define UP_MAX_DIMS 8
#define UP_MAX_NODES (1 << 22)  // objects built: about 20 per tensor; bounds memory near 1 GiB
#define UP_MAX_NAME_BYTES (1 << 26)  // names copied: each GLOBAL's, a flattened module's

// PV_OPAQUE: a value torch.load(weights_only=True) also builds but xsa-eval never reads (a
// torch.Size, torch.device, bytes of protocol 2, an integer wider than 64 bits).
// PV_SET: a set or frozenset; its items are `items` (a LIST or TUPLE, or NULL when empty).
// PV_OBJECT: what a foreign global made (see struct pv); never called.
enum pv_kind { PV_NONE, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_BYTES, PV_TUPLE, PV_LIST, PV_DICT, PV_GLOBAL, PV_STORAGE, PV_TENSOR, PV_OPAQUE,
               PV_SET, PV_OBJECT };

// What a global is.
// UPG_INERT: a global torch's weights-only loader allows beside tensors (a torch dtype, torch.Size,
// torch.device, set, _codecs.encode): a value by itself, and REDUCE of it a PV_OPAQUE (a PV_SET
// for set and frozenset).
// UPG_REBUILD_FROM_TYPE: torch._tensor._rebuild_from_type_v2, a tensor subclass's reduction.
// UPG_RECONSTRUCTOR: a reduction whose first argument is the class of the object it makes
// (copyreg._reconstructor, copyreg.__newobj__, numpy's _reconstruct).
// UPG_FOREIGN: anything else; REDUCE or NEWOBJ of it makes a PV_OBJECT.
enum up_global { UPG_ORDERED_DICT = 1, UPG_REBUILD_TENSOR_V2, UPG_REBUILD_PARAMETER, UPG_REBUILD_PARAMETER_STATE, UPG_STORAGE, UPG_INERT,
                 UPG_REBUILD_FROM_TYPE, UPG_RECONSTRUCTOR, UPG_FOREIGN };

// A storage dtype: the torch.*Storage name, its safetensors-style name and element size.
struct up_dtype {
    const char *storage;  // "FloatStorage"
    const char *name;     // "F32"
    int size;             // bytes per element
};

struct pv {
    enum pv_kind kind;
    int64_t i;                    // BOOL, INT; GLOBAL: enum up_global; OBJECT: 1 when made by
                                  // REDUCE of `cls` (a call: os.system(...)), 0 an instance of it
    double f;                     // FLOAT
    char *s;                      // STR, BYTES (NUL-terminated copy); STORAGE: its key;
                                  // GLOBAL: "module.name"
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
    // OBJECT: its class or maker (a GLOBAL), the arguments (a TUPLE), BUILD's state (NULL before
    // BUILD), and the items a dict or list subclass gets by SETITEM(S) / APPEND(S) (a DICT or
    // LIST, NULL when none); SET: items
    struct pv *cls, *args, *state, *items;
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
    size_t name_bytes;            // names copied (globals', a module's state dict's), up to UP_MAX_NAME_BYTES
};

// Runs the pickle `data` (len bytes) to its STOP; *root is the value it built, owned by u.
int unpickle_run(struct unpickler *u, const unsigned char *data, size_t len, struct pv **root, xsa_error *err);

// A fresh node of `kind`, owned by u; NULL past UP_MAX_NODES (the pickle is refused).
struct pv *up_new(struct unpickler *u, enum pv_kind kind);

// The value of the string key `key` in a DICT, or NULL.
const struct pv *up_dict_get(const struct pv *d, const char *key);

// An attribute of an OBJECT: the value of `key` in its state dict, or in either dict of a
// (dict, slots dict) state; NULL when absent or not an object.
const struct pv *up_attr(const struct pv *obj, const char *key);

// What x is, for messages: "a numpy.ndarray", "posix.system(...)", "a list", "None"...
void up_describe(const struct pv *x, char *out, size_t n);

// The storage dtype called `storage` ("FloatStorage"), or NULL.
const struct up_dtype *up_dtype_find(const char *storage);

void unpickle_free(struct unpickler *u);

#endif
