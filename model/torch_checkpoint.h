// torch_checkpoint.h: torch.save files (the zip format of torch >= 1.6) -> tensors of a
// struct safetensors, so every loader finds them by name as it finds safetensors tensors.
// The pickle runs in the restricted unpickler (model/unpickle.h): nothing in the file is ever
// executed. Storages are read in place from the mapping when stored (as torch.save writes
// them), inflated when deflated; a non-contiguous view is copied out in its logical order.
// The legacy (pre-zip) format and torch.distributed.checkpoint folders are refused with how to
// convert them.
#ifndef XSA_MODEL_TORCH_CHECKPOINT_H
#define XSA_MODEL_TORCH_CHECKPOINT_H

#include "model/safetensors.h"
#include "model/torch_zip.h"
#include "model/unpickle.h"

struct torch_file {
    struct torch_zip zip;
    struct unpickler u;
    struct pv *root;     // the unpickled object, owned by u
    char prefix[256];    // the archive's top folder ("archive")
    char where[4200];    // "<path> (<prefix>/data.pkl)", for messages
    int fi;              // index of the file in the struct safetensors
};

// Maps `path` as a new file of st and unpickles its data.pkl into tf->root.
int torch_file_open(struct torch_file *tf, struct safetensors *st, const char *path, xsa_error *err);

// The same over bytes already in memory (a decompressed .ptz) that file `fi` of st keeps alive;
// tf must be zeroed.
int torch_file_open_bytes(struct torch_file *tf, struct safetensors *st, int fi, const char *path, const unsigned char *data,
                          size_t size, xsa_error *err);

// Adds every entry of the dict `sd` (name -> tensor) to st, the name without a leading
// `strip` (NULL: none) and without the prefixes torch.compile ("_orig_mod.") and DDP ("module.")
// leave in a wrapped model's state dict. A value that is not a tensor is refused by key.
// `name` without the wrappers' prefixes, however nested: torch.compile's "_orig_mod.",
// DistributedDataParallel's "module.".
const char *torch_unwrap_name(const char *name);

int torch_add_state_dict(struct torch_file *tf, struct safetensors *st, const struct pv *sd, const char *strip, xsa_error *err);

// Adds one tensor under `name`; `transpose` swaps the two dimensions of a 2-D tensor (copied).
int torch_add_tensor(struct torch_file *tf, struct safetensors *st, const char *name, const struct pv *t, int transpose,
                     xsa_error *err);

// Releases the pickle and the zip directory; the tensors added stay valid (st owns their bytes).
void torch_file_close(struct torch_file *tf, struct safetensors *st);

// A torch.save file whose object is a state dict (pytorch_model.bin and its shards).
int torch_open_file(struct safetensors *st, const char *path, xsa_error *err);

// Refuses a torch.distributed.checkpoint folder (a .metadata file) with how to convert it;
// 0 for any other folder.
int torch_refuse_dcp(const char *dir, xsa_error *err);

#endif
