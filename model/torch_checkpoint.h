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
// leave in a wrapped model's state dict. A value that is not a tensor is refused by key, saying
// what it is.
// `name` without the wrappers' prefixes, however nested: torch.compile's "_orig_mod.",
// DistributedDataParallel's "module.".
const char *torch_unwrap_name(const char *name);
// The same, and a module compiled inside another (a LightningModule's torch.compile'd
// self.model: model._orig_mod.layers...) without its "_orig_mod." component; into out (n bytes).
const char *torch_clean_name(const char *name, char *out, size_t n);

int torch_add_state_dict(struct torch_file *tf, struct safetensors *st, const struct pv *sd, const char *strip, xsa_error *err);

// Adds one tensor under `name` (a view that is not contiguous is copied out).
int torch_add_tensor(struct torch_file *tf, struct safetensors *st, const char *name, const struct pv *t, xsa_error *err);

// Releases the pickle and the zip directory; the tensors added stay valid (st owns their bytes).
void torch_file_close(struct torch_file *tf, struct safetensors *st);

// 1 for an nn.Module pickled whole: an object whose state has _parameters, _buffers, _modules.
int torch_is_module(const struct pv *x);

// The state dict of a whole module (*sd, a DICT owned by tf->u), named as module.state_dict()
// names it; nothing of the module is called.
int torch_module_state_dict(struct torch_file *tf, const struct pv *module, const struct pv **sd, xsa_error *err);

// The weights of tf->root: a state dict, bare or under a training loop's "state_dict",
// "model_state_dict", "model" or "module" key (Lightning's, nanoGPT's: foreign objects beside it
// are never read), or a whole nn.Module there (*module: it, else NULL; *sd: its state dict).
// Else *sd is the saved object (or the dict under one of those keys), which
// torch_add_state_dict refuses naming what it holds.
int torch_find_weights(struct torch_file *tf, const struct pv **sd, const struct pv **module, xsa_error *err);

// The config.json text (appended to out) of a transformers PretrainedConfig object (the `config`
// of a model saved whole): model_type from its class (transformers.models.<type>.configuration_<type>),
// then its JSON-able attributes; 0 when `config` is not one (or too big to be a config).
struct sbuf;
int torch_hf_config_text(const struct pv *config, struct sbuf *out);

// A torch.save file whose object is a state dict or a module (pytorch_model.bin and its shards).
int torch_open_file(struct safetensors *st, const char *path, xsa_error *err);

// Refuses (XSA_EBADINPUT) the other files of a training checkpoint, by what they are: an
// optimizer's or a scheduler's state_dict, RNG states, the Trainer's TrainingArguments; 0 for
// anything else. `path` is the file, for the message (and the folder it names).
int torch_refuse_train_state(const struct pv *root, const char *path, xsa_error *err);

// Refuses a torch.distributed.checkpoint folder (a .metadata file) with how to convert it;
// 0 for any other folder.
int torch_refuse_dcp(const char *dir, xsa_error *err);

// The training step a training loop saved beside the weights in the dict `root`: nanoGPT's
// iter_num, Lightning's global_step, modded-nanogpt's and many loops' step; a whole number from
// 0 to 2^31 - 1, as a Python int, a one-element integer tensor or a numpy integer scalar (the
// first of those keys present decides: one that is no such number gives none, and *unread names
// it). 1 and *step set when there is one.
int torch_saved_step(const struct pv *root, long long *step, const char **unread);

#endif
