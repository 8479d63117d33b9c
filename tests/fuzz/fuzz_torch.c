// fuzz_torch.c: one torch.save file -> the zip reader, the restricted unpickler, the saved step,
// a training loop's resume files refused by what they are (torch_refuse_train_state), where the
// weights are (a state dict, under a loop's key, or a whole module's, flattened) and their tensors
// (views copied out, F32/F16/BF16 converted); then model_load of the file. Bad files must fail
// with one error line, never crash, and never run anything.
#include <stdint.h>

#include "common/vec.h"
#include "model/torch_checkpoint.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[256];
    fuzz_path(path, sizeof path, "model.pt");
    fuzz_write(path, data, size);
    struct safetensors st;
    memset(&st, 0, sizeof st);
    struct torch_file tf;
    xsa_error err = {0};
    int rc = torch_file_open(&tf, &st, path, &err);
    long long step = 0;
    const char *unread;
    if (!rc) (void)torch_saved_step(tf.root, &step, &unread);  // a 0-d tensor's value: read inside its storage
    for (size_t i = 0; !rc && tf.root->kind == PV_DICT && i < tf.root->n; i++)  // dicts of steps (audit/steps.pt): numpy's too
        (void)torch_saved_step(tf.root->v[2 * i + 1], &step, &unread);
    if (!rc) rc = torch_refuse_train_state(tf.root, path, &err);
    const struct pv *sd = NULL, *module = NULL;
    if (!rc) rc = torch_find_weights(&tf, &sd, &module, &err);
    if (!rc) rc = torch_add_state_dict(&tf, &st, sd, "_orig_mod.", &err);
    struct sbuf config = {0};  // a whole transformers model's config object, as config.json text
    if (module) torch_hf_config_text(up_attr(module, "config"), &config);
    sbuf_free(&config);
    fuzz_check_error(rc, &err);
    torch_file_close(&tf, &st);
    if (!rc) fuzz_read_all_tensors(&st);
    safetensors_close(&st);
    fuzz_load_model(path);  // model_load: a nanoGPT checkpoint's model_args, a bare state dict refused without config.json
    return 0;
}
