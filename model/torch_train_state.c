// torch_train_state.c: the files a training framework writes beside the model to resume
// training (the Hugging Face Trainer's optimizer.pt, scheduler.pt, rng_state.pth and
// training_args.bin; accelerate's optimizer.bin, scheduler.bin, random_states_N.pkl), refused as
// models by what they are, pointing at the model in the same folder.
#include <stdio.h>
#include <string.h>

#include "common/fileio.h"
#include "model/torch_checkpoint.h"

static int has(const struct pv *d, const char *a, const char *b) { return up_dict_get(d, a) && up_dict_get(d, b); }

// What `root` is when it is one of those files, else NULL.
static const char *train_state_kind(const struct pv *root) {
    static const char *const weights[] = {"state_dict", "model_state_dict", "model", "module"};
    for (size_t i = 0; root->kind == PV_DICT && i < sizeof weights / sizeof *weights; i++)
        if (up_dict_get(root, weights[i])) return NULL;  // a training loop's checkpoint, with the model in it
    if (root->kind == PV_DICT) {
        const struct pv *groups = up_dict_get(root, "param_groups");
        if (up_dict_get(root, "state") && groups && groups->kind == PV_LIST) return "an optimizer's state_dict ('state', 'param_groups')";
        if (has(root, "base_lrs", "last_epoch")) return "a learning-rate scheduler's state_dict ('base_lrs', 'last_epoch')";
        if (has(root, "python", "numpy") && up_dict_get(root, "cpu")) return "the Hugging Face Trainer's random-number generator states (rng_state.pth)";
        if (has(root, "random_state", "torch_manual_seed")) return "accelerate's random-number generator states (random_states_N.pkl)";
        return NULL;
    }
    const struct pv *cls = root->kind == PV_OBJECT && !root->i ? root->cls : NULL;
    size_t n = cls && cls->kind == PV_GLOBAL && cls->s ? strlen(cls->s) : 0;
    if (n >= 17 && !strcmp(cls->s + n - 17, "TrainingArguments")) return "the Hugging Face Trainer's TrainingArguments (training_args.bin)";
    return NULL;
}

int torch_refuse_train_state(const struct pv *root, const char *path, xsa_error *err) {
    const char *what = train_state_kind(root);
    if (!what) return 0;
    const char *slash = strrchr(path, '/');
    char dir[4200], cfg[4300];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    if (file_exists(cfg))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s, saved to resume training, not the model; pass the checkpoint folder instead (--model %s)", path, what, dir);
    return xsa_fail(err, XSA_EBADINPUT, "%s: %s, saved to resume training, not the model; pass the model's weights (model.safetensors, pytorch_model.bin) in a folder with its config.json",
                    path, what);
}
