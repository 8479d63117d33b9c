// test_torch_load.c: the restricted unpickler on pickles Python's own pickle module wrote, its
// refusals, and torch.save archives (tests/fixtures/torch, written by the real torch.save)
// against their safetensors twins, tensor by tensor and byte for byte, and against the sums
// torch computed (expected.json).
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "model/pgolf.h"
#include "model/safetensors.h"
#include "model/torch_checkpoint.h"
#include "model/unpickle.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

#define T_DIR "tests/fixtures/torch"
#define M_DIR "tests/fixtures/models"

// Runs a pickle with no storages; returns rc, *root and the message.
static int run(struct unpickler *u, const char *bytes, size_t n, struct pv **root, xsa_error *err) {
    memset(u, 0, sizeof *u);
    memset(err, 0, sizeof *err);
    u->where = "test.pkl";
    return unpickle_run(u, (const unsigned char *)bytes, n, root, err);
}

// pickle.dumps({'a': [1, -2, 3.5, None, True, False, 'é'], 'b': (b'xy', -300, 2**40, -2**63)}, protocol=4)
static const char P4[] =
    "\x80\x04\x95\x48\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01\x61\x94\x5d\x94\x28\x4b\x01\x4a\xfe\xff\xff\xff"
    "\x47\x40\x0c\x00\x00\x00\x00\x00\x00\x4e\x88\x89\x8c\x02\xc3\xa9\x94\x65\x8c\x01\x62\x94\x28\x43\x02\x78\x79\x94"
    "\x4a\xd4\xfe\xff\xff\x8a\x06\x00\x00\x00\x00\x00\x01\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80\x74\x94\x75\x2e";

TEST(test_unpickle_protocol4_values) {
    struct unpickler u;
    struct pv *r = NULL;
    xsa_error err;
    CHECK_EQ_INT(run(&u, P4, sizeof P4 - 1, &r, &err), 0);
    CHECK(r && r->kind == PV_DICT && r->n == 2);
    const struct pv *a = up_dict_get(r, "a"), *b = up_dict_get(r, "b");
    CHECK(a && a->kind == PV_LIST && a->n == 7);
    CHECK(b && b->kind == PV_TUPLE && b->n == 4);
    if (a && a->n == 7 && b && b->n == 4) {
        CHECK_EQ_INT(a->v[0]->i, 1);
        CHECK_EQ_INT(a->v[1]->i, -2);
        CHECK(a->v[2]->kind == PV_FLOAT && a->v[2]->f == 3.5);
        CHECK(a->v[3]->kind == PV_NONE);
        CHECK(a->v[4]->kind == PV_BOOL && a->v[4]->i == 1 && a->v[5]->i == 0);
        CHECK_STR(a->v[6]->s, "\xc3\xa9");
        CHECK(b->v[0]->kind == PV_BYTES && b->v[0]->len == 2 && !memcmp(b->v[0]->s, "xy", 2));
        CHECK_EQ_INT(b->v[1]->i, -300);
        CHECK_EQ_INT(b->v[2]->i, 1ll << 40);
        CHECK(b->v[3]->i == INT64_MIN);
    }
    unpickle_free(&u);
}

TEST(test_unpickle_memo_shares) {
    // x = [1]; pickle.dumps({'p': x, 'q': x}, protocol=2): one list, reached twice
    static const char P[] = "\x80\x02\x7d\x71\x00\x28\x58\x01\x00\x00\x00\x70\x71\x01\x5d\x71\x02\x4b\x01\x61\x58\x01"
                            "\x00\x00\x00\x71\x71\x03\x68\x02\x75\x2e";
    struct unpickler u;
    struct pv *r = NULL;
    xsa_error err;
    CHECK_EQ_INT(run(&u, P, sizeof P - 1, &r, &err), 0);
    const struct pv *p = up_dict_get(r, "p"), *q = up_dict_get(r, "q");
    CHECK(p && p == q && p->kind == PV_LIST && p->n == 1 && p->v[0]->i == 1);
    unpickle_free(&u);
}

// A hand-made pickle may repeat a key, in one SETITEMS or across them; pickle.loads keeps the key's
// first place and its last value: (}(X a K1 X b K2 X a K3 u X b K4 s.) -> {'a': 3, 'b': 4}.
TEST(test_unpickle_repeated_keys) {
    static const char P[] = "\x80\x02}(X\x01\x00\x00\x00" "aK\x01X\x01\x00\x00\x00" "bK\x02X\x01\x00\x00\x00" "aK\x03u"
                            "X\x01\x00\x00\x00" "bK\x04s.";
    struct unpickler u;
    struct pv *r = NULL;
    xsa_error err;
    CHECK_EQ_INT(run(&u, P, sizeof P - 1, &r, &err), 0);
    CHECK(r && r->kind == PV_DICT && r->n == 2 && !strcmp(r->v[0]->s, "a") && !strcmp(r->v[2]->s, "b"));
    CHECK(up_dict_get(r, "a") && up_dict_get(r, "a")->i == 3 && up_dict_get(r, "b") && up_dict_get(r, "b")->i == 4);
    unpickle_free(&u);
}

// modded-nanogpt's optimizer state: pickle.dumps({1: ParamConfig(label='x', lr=1.0)}, protocol=2) of a
// slots dataclass ParamConfig in __main__ (NEWOBJ, then BUILD with (None, fields)): an inert dict.
TEST(test_unpickle_data_class_inert) {
    static const char P[] = "\x80\x02}q\x00K\x01" "c__main__\nParamConfig\nq\x01)\x81q\x02N}q\x03(X\x05\x00\x00\x00labelq\x04"
                            "X\x01\x00\x00\x00xq\x05X\x02\x00\x00\x00lrq\x06G?\xf0\x00\x00\x00\x00\x00\x00u\x86q\x07" "bs.";
    struct unpickler u;
    struct pv *r = NULL;
    xsa_error err;
    CHECK_EQ_INT(run(&u, P, sizeof P - 1, &r, &err), 0);
    CHECK(r && r->kind == PV_DICT && r->n == 1 && r->v[1]->kind == PV_DICT && r->v[1]->n == 0);
    unpickle_free(&u);
}

// Values torch.load(weights_only=True) takes and xsa-eval never reads: bytes of protocol 2
// (_codecs.encode), an int wider than 64 bits, a torch dtype, torch.Size; nothing is called.
TEST(test_unpickle_inert_values) {
    static const char P[] = "\x80\x02]("
                            "c_codecs\nencode\nX\x01\x00\x00\x00" "aX\x06\x00\x00\x00" "latin1\x86R"
                            "\x8a\x09" "123456789"
                            "ctorch\nbfloat16\n"
                            "ctorch\nSize\nK\x02K\x03\x86\x85R"
                            "e.";
    struct unpickler u;
    struct pv *r = NULL;
    xsa_error err = {0};
    CHECK_MSG(run(&u, P, sizeof P - 1, &r, &err) == 0, "%s", err.msg);
    CHECK(r && r->kind == PV_LIST && r->n == 4);
    if (r && r->n == 4) {
        CHECK(r->v[0]->kind == PV_OPAQUE && r->v[1]->kind == PV_OPAQUE && r->v[3]->kind == PV_OPAQUE);
        CHECK(r->v[2]->kind == PV_GLOBAL && r->v[2]->i == UPG_INERT);
    }
    unpickle_free(&u);
}

// Each bad pickle is refused with exit 2 and a message holding `want`.
TEST(test_unpickle_refusals) {
    static const struct {
        const char *bytes;
        size_t n;
        const char *want;
    } cases[] = {
#define C(b, w) {b, sizeof b - 1, w}
        C("\x80\x02" "cos\nsystem\n)R.", "the global 'os.system' (byte 2); refused: xsa-eval never executes code"),
        C("\x80\x04\x8c\x08" "builtins\x8c\x04" "eval\x93.", "the global 'builtins.eval'"),
        C("\x80\x02" "cbuiltins\ngetattr\n.", "the global 'builtins.getattr'"),
        C("\x80\x02" "ctorch._utils\n_rebuild_tensor_v3\n.", "a dtype torch.save writes untyped (float8"),
        C("\x80\x02" "ctorch\nload\n.", "the global 'torch.load'"),
        C("\x80\x02" "ctorch\nComplexFloatStorage\n.", "storage type torch.ComplexFloatStorage (byte 2) are not readable"),
        C("\x80\x02" "ctorch._utils\n_rebuild_tensor\n.", "the global 'torch._utils._rebuild_tensor'"),
        C("\x80\x02" "a.", "APPEND with an empty stack"),
        C("\x80\x02" ")K\x01" "a.", "APPEND to something that is not a list"),
        C("\x80\x02" "h\x05.", "GET of a memo entry that was never PUT"),
        C("\x80\x02" "N" "r\xff\xff\xff\x7f.", "a memo index past the limit"),
        C("\x80\x02" "i", "opcode 'i' of pickle protocol 0 or 1"),
        C("\x80\x02" "X\xff\xff\x00\x00" "ab.", "a string runs past the end of the pickle"),
        C("\x80\x02" "N", "the pickle ends without STOP"),
        C("\x80\x02" "NN.", "STOP with other than one value"),
        C("\x80\x02" "ccollections\nOrderedDict\n]\x85R.", "OrderedDict built from arguments"),
        C("\x80\x02" "ctorch\nFloatStorage\n)R.", "REDUCE of a storage type"),
        C("\x80\x02" "(N" "Q.", "a persistent id with no storage to resolve it"),
        C("\x80\x02" "(K\x01" "u.", "SETITEM with no dict below"),
        C("\x80\x02" "\x80\x06.", "a pickle protocol above 5"),
        C("\x80\x02" "N(" "000.", "an opcode pops an empty stack"),  // the mark, N, then nothing
        C("\x80\x02" "}K\x01" "b.", "BUILD of something other than a dict's or a data class's attributes"),
        // NEWOBJ only of the allowed data class; a plain dict takes no (slots, dict) state
        C("\x80\x02" "ccollections\nOrderedDict\n)\x81.", "NEWOBJ of something other than an allowed data class"),
        C("\x80\x02" "c__main__\nParamConfig\nK\x01\x81.", "NEWOBJ of something other than an allowed data class and a tuple"),
        C("\x80\x02" "c__main__\nOther\n)\x81.", "the global '__main__.Other'"),
        C("\x80\x02" "c__main__\nParamConfig\n)R.", "REDUCE of a storage type or a data class"),
        C("\x80\x02" "}N}\x86" "b.", "BUILD of something other than a dict's or a data class's attributes"),
#undef C
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct unpickler u;
        struct pv *r = NULL;
        xsa_error err;
        int rc = run(&u, cases[i].bytes, cases[i].n, &r, &err);
        CHECK_MSG(rc == XSA_EBADINPUT && strstr(err.msg, cases[i].want) && strstr(err.msg, "test.pkl: ") == err.msg,
                  "case %zu: rc %d msg '%s'", i, rc, err.msg);
        unpickle_free(&u);
    }
    // marks and the stack are bounded
    static char marks[UP_MAX_MARKS + 8];
    memset(marks, '(', sizeof marks);
    struct unpickler u;
    struct pv *r;
    xsa_error err;
    CHECK_EQ_INT(run(&u, marks, sizeof marks, &r, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "marks nested past the limit"));
    unpickle_free(&u);
    // objects made and dropped (None, POP, ...) are bounded too, not only the stack
    size_t n = 2 * (size_t)UP_MAX_NODES + 4;
    char *many = malloc(n);
    for (size_t i = 0; i < n; i += 2) many[i] = 'N', many[i + 1] = '0';
    CHECK_EQ_INT(run(&u, many, n, &r, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "builds more than 4194304 objects"), "%s", err.msg);
    unpickle_free(&u);
    free(many);
}

// Every tensor of `twin` (a safetensors folder) is in `bin` (a torch folder) with the same
// dtype, shape and bytes, and neither has more tensors.
static void check_twins(const char *bin, const char *twin) {
    struct safetensors a, b;
    xsa_error err = {0};
    int rc = safetensors_open_dir(&a, bin, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    CHECK_STR(a.format, "pytorch");
    rc = safetensors_open_dir(&b, twin, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) { safetensors_close(&a); return; }
    int matched = 0;
    for (int i = 0; i < b.n_tensors; i++) {
        const struct st_tensor *y = &b.tensors[i], *x = safetensors_find(&a, y->name);
        CHECK_MSG(x != NULL, "%s: no tensor %s", bin, y->name);
        if (!x) continue;
        int same = !strcmp(x->dtype_name, y->dtype_name) && x->ndim == y->ndim && x->nbytes == y->nbytes &&
                   !memcmp(x->shape, y->shape, (size_t)x->ndim * sizeof x->shape[0]) && !memcmp(x->data, y->data, x->nbytes);
        CHECK_MSG(same, "%s: tensor %s differs from its twin in %s", bin, y->name, twin);
        matched++;
    }
    CHECK_EQ_INT(matched, b.n_tensors);
    // a tied lm_head saved beside the embedding is the one extra tensor allowed
    CHECK_EQ_INT(a.n_tensors - (safetensors_find(&a, "lm_head.weight") && !safetensors_find(&b, "lm_head.weight")), b.n_tensors);
    safetensors_close(&a);
    safetensors_close(&b);
}

TEST(test_bin_folders_equal_twins) {
    check_twins(T_DIR "/gpt2_bin", M_DIR "/gpt2_tiny");
    check_twins(T_DIR "/gpt2_deflated_bin", M_DIR "/gpt2_tiny");
    check_twins(T_DIR "/gpt2_sharded_bin", M_DIR "/gpt2_tiny_sharded");
    check_twins(T_DIR "/llama_bf16_bin", M_DIR "/llama_bf16");
    check_twins(T_DIR "/llama_views_bin", M_DIR "/llama_gqa");  // transposed views, offsets
}

static int inside(const struct safetensors *st, const struct st_tensor *t) {
    const struct mapped_file *mf = &st->files[t->file].mf;
    return t->data >= mf->data && t->data + t->nbytes <= mf->data + mf->size;
}

TEST(test_storages_in_place_and_shared) {
    struct safetensors st;
    xsa_error err = {0};
    int rc = safetensors_open_dir(&st, T_DIR "/gpt2_bin", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    const struct st_tensor *wte = safetensors_find(&st, "transformer.wte.weight"), *head = safetensors_find(&st, "lm_head.weight");
    CHECK(wte && head && wte->data == head->data);  // one storage, read once
    for (int i = 0; i < st.n_tensors; i++) CHECK_MSG(inside(&st, &st.tensors[i]), "%s copied", st.tensors[i].name);
    safetensors_close(&st);
    rc = safetensors_open_dir(&st, T_DIR "/llama_views_bin", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    const struct st_tensor *q = safetensors_find(&st, "model.layers.0.self_attn.q_proj.weight");
    const struct st_tensor *k = safetensors_find(&st, "model.layers.0.self_attn.k_proj.weight");
    const struct st_tensor *v = safetensors_find(&st, "model.layers.0.self_attn.v_proj.weight");
    CHECK(q && !inside(&st, q));                                 // non-contiguous: copied out
    CHECK(k && v && inside(&st, k) && v->data == k->data + k->nbytes);  // slices of one storage
    safetensors_close(&st);
}

// The float64 sums torch computed for every tensor of a fixture.
static void check_sums(const char *fixture, const char *dir) {
    cJSON *ex = fixture_read_json(T_DIR "/expected.json");
    const cJSON *fx = cJSON_GetObjectItemCaseSensitive(ex, fixture);
    CHECK(fx != NULL);
    struct safetensors st;
    xsa_error err = {0};
    int rc = safetensors_open_dir(&st, dir, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc || !fx) { cJSON_Delete(ex); return; }
    CHECK_EQ_INT(cJSON_GetArraySize(fx), st.n_tensors);
    const cJSON *e;
    cJSON_ArrayForEach(e, fx) {
        const struct st_tensor *t = safetensors_find(&st, e->string);
        CHECK_MSG(t != NULL, "no tensor %s", e->string);
        if (!t) continue;
        size_t n = t->nbytes / (t->dtype == ST_F32 ? 4 : 2);
        float *f = malloc((n ? n : 1) * sizeof *f);
        CHECK_EQ_INT(safetensors_read_f32(&st, t, f, &err), 0);
        double sum = 0, want = cJSON_GetObjectItemCaseSensitive(e, "sum")->valuedouble;
        for (size_t i = 0; i < n; i++) sum += f[i];
        CHECK_MSG(fabs(sum - want) <= 1e-9 * (1 + fabs(want)), "%s: sum %.17g, torch says %.17g", e->string, sum, want);
        free(f);
    }
    safetensors_close(&st);
    cJSON_Delete(ex);
}

TEST(test_sums_from_torch) {
    check_sums("gpt2_bin", T_DIR "/gpt2_bin");
    check_sums("llama_bf16_bin", T_DIR "/llama_bf16_bin");
    check_sums("llama_views_bin", T_DIR "/llama_views_bin");
    check_sums("gpt2_f16_bin", T_DIR "/gpt2_f16_bin");
    check_sums("param_state_bin", T_DIR "/param_state_bin");  // Parameters with attributes
}

TEST(test_int8_uint8_tensors) {
    // their bytes as torch holds them (expected.json), the uint8 one a transposed view
    cJSON *ex = fixture_read_json(T_DIR "/expected.json");
    const cJSON *fx = cJSON_GetObjectItemCaseSensitive(ex, "int8");
    struct safetensors st;
    memset(&st, 0, sizeof st);
    xsa_error err = {0};
    int rc = torch_open_file(&st, T_DIR "/misc/int8.pt", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    static const char *names[] = {"q", "u"}, *dtypes[] = {"I8", "U8"};
    for (int i = 0; i < 2 && !rc && fx; i++) {
        const struct st_tensor *t = safetensors_find(&st, names[i]);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(fx, names[i]), *b = cJSON_GetObjectItemCaseSensitive(e, "bytes");
        CHECK(t && b);
        if (!t || !b) continue;
        CHECK_STR(t->dtype_name, dtypes[i]);
        CHECK(t->dtype == ST_OTHER);  // readable as a tensor, not as a weight
        CHECK_EQ_INT((long long)t->nbytes, cJSON_GetArraySize(b));
        for (int k = 0; k < cJSON_GetArraySize(b) && k < (int)t->nbytes; k++)
            CHECK_MSG(t->data[k] == (unsigned char)cJSON_GetArrayItem(b, k)->valueint, "%s byte %d", names[i], k);
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
        CHECK_EQ_INT(t->ndim, cJSON_GetArraySize(shape));
        for (int d = 0; d < t->ndim; d++) CHECK_EQ_INT(t->shape[d], cJSON_GetArrayItem(shape, d)->valueint);
    }
    safetensors_close(&st);
    cJSON_Delete(ex);
}

TEST(test_nanogpt_checkpoint_values) {
    // ckpt.pt as nanoGPT's train.py writes it: model_args, optimizer state, a 0-d tensor
    struct safetensors st;
    memset(&st, 0, sizeof st);
    struct torch_file tf;
    xsa_error err = {0};
    int rc = torch_file_open(&tf, &st, T_DIR "/nanogpt/ckpt.pt", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) {
        const struct pv *args = up_dict_get(tf.root, "model_args"), *opt = up_dict_get(tf.root, "optimizer");
        CHECK(up_dict_get(args, "n_layer") && up_dict_get(args, "n_layer")->i == 2);
        CHECK(up_dict_get(args, "bias") && up_dict_get(args, "bias")->kind == PV_BOOL);
        CHECK(up_dict_get(tf.root, "iter_num") && up_dict_get(tf.root, "iter_num")->i == 5);
        const struct pv *loss = up_dict_get(tf.root, "best_val_loss");
        CHECK(loss && loss->kind == PV_TENSOR && loss->ndim == 0);
        if (loss && loss->kind == PV_TENSOR) {
            float f;
            memcpy(&f, loss->storage->data + loss->offset * 4, 4);
            CHECK(f == 3.25f);
        }
        CHECK(opt && up_dict_get(opt, "state") && up_dict_get(opt, "param_groups"));
        CHECK_EQ_INT(torch_add_state_dict(&tf, &st, up_dict_get(tf.root, "model"), "_orig_mod.", &err), 0);
        CHECK(safetensors_find(&st, "transformer.wte.weight") != NULL);
    }
    torch_file_close(&tf, &st);
    safetensors_close(&st);
}

TEST(test_empty_tensor_points_into_storage) {
    // An empty view's offset is never checked against its storage (torch allows any), so its
    // data pointer must not be computed from it.
    static const unsigned char bytes[16];
    struct unpickler u = {0};
    struct pv *s = up_new(&u, PV_STORAGE), *t = up_new(&u, PV_TENSOR);
    s->dtype = up_dtype_find("FloatStorage");
    s->numel = 4;
    s->data = bytes;
    t->storage = s;
    t->dtype = s->dtype;
    t->offset = 1ll << 39;
    t->ndim = 1;
    t->shape[0] = 0;
    t->stride[0] = 1;
    struct safetensors st;
    memset(&st, 0, sizeof st);
    struct torch_file tf;
    memset(&tf, 0, sizeof tf);
    xsa_error err = {0};
    CHECK_EQ_INT(safetensors_add_file(&st, "empty.pt", &tf.fi, &err), 0);
    CHECK_EQ_INT(torch_add_tensor(&tf, &st, "e", t, 0, &err), 0);
    const struct st_tensor *e = safetensors_find(&st, "e");
    CHECK(e && e->nbytes == 0 && e->data == bytes);
    safetensors_close(&st);
    unpickle_free(&u);
}

// A dict of a million pairs costs a pickle 4 bytes a pair (one memoized key and value, again and
// again; zlib makes that nothing): a loader looking 20000 names up in it scanned every pair for
// each (hours for the 65536 names an artifact may hold). up_dict_get hashes a big dict's keys once;
// a repeated key keeps one pair, as Python's dict does.
TEST(test_unpickle_big_dict_lookups) {
    struct sbuf p = {0};
    sbuf_append(&p, "\x80\x02}q\x00X\x01\x00\x00\x00yq\x01Nq\x02" "00", 18);  // memo 1: "y", 2: None (popped)
    for (int b = 0; b < 10; b++) {  // 10 SETITEMS of 100000 ("y", None) pairs each
        sbuf_append(&p, "(", 1);
        for (int i = 0; i < 100000; i++) sbuf_append(&p, "h\x01h\x02", 4);
        sbuf_append(&p, "u", 1);
    }
    sbuf_append(&p, "(", 1);
    for (int i = 0; i < 20000; i++) {  // then "k00000": 0, "k00001": 1, ...
        char key[16];
        snprintf(key, sizeof key, "k%05d", i);
        sbuf_append(&p, "X\x06\x00\x00\x00", 5);
        sbuf_append(&p, key, 6);
        unsigned char v[3] = {'M', (unsigned char)(i & 255), (unsigned char)(i >> 8)};
        sbuf_append(&p, (const char *)v, 3);
    }
    sbuf_append(&p, "X\x01\x00\x00\x00yK\x07u.", 10);  // "y" once more: its place, the last value (as Python)
    struct unpickler u;
    struct pv *r = NULL;
    xsa_error err;
    int rc = run(&u, p.s, p.n, &r, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    CHECK(r && r->kind == PV_DICT && r->n == 20000 + 1 && r->v[0]->kind == PV_STR && !strcmp(r->v[0]->s, "y"));
    int found = 0;
    for (int i = 0; r && i < 20000; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%05d", i);
        const struct pv *v = up_dict_get(r, key);
        found += v && v->kind == PV_INT && v->i == i;
    }
    CHECK_EQ_INT(found, 20000);
    CHECK(r && up_dict_get(r, "k20000") == NULL && up_dict_get(r, "") == NULL);
    CHECK(r && up_dict_get(r, "y") && up_dict_get(r, "y")->kind == PV_INT && up_dict_get(r, "y")->i == 7);
    unpickle_free(&u);
    sbuf_free(&p);
}

// A parameter-golf state dict of PG_MAX_TENSORS names: each new name was compared with every one
// before it (68 s for a 171 KB artifact); a repeated name is still refused, by name.
TEST(test_pgolf_many_names) {
    static struct pv t = {.kind = PV_TENSOR}, d = {.kind = PV_DICT};
    struct pv *keys = calloc(PG_MAX_TENSORS + 1, sizeof *keys);
    d.v = calloc(2 * (PG_MAX_TENSORS + 1), sizeof *d.v);
    for (int i = 0; i < PG_MAX_TENSORS; i++) {
        keys[i].kind = PV_STR;
        keys[i].s = malloc(32);
        snprintf(keys[i].s, 32, "blocks.%d.w", i);
        d.v[2 * i] = &keys[i], d.v[2 * i + 1] = &t;
    }
    d.n = PG_MAX_TENSORS;
    struct pg_tensors *pt = calloc(1, sizeof *pt);
    pt->path = "many.pt";
    xsa_error err = {0};
    CHECK_EQ_INT(pgolf_read_root(pt, &d, &err), 0);
    CHECK_EQ_INT(pt->n, PG_MAX_TENSORS);
    CHECK(pgolf_find(pt, "blocks.777.w") == &pt->e[777] && pgolf_find(pt, "blocks.65536.w") == NULL);
    // "module.blocks.5.w" after 6 names: the same weight twice.
    keys[6].s[0] = 0;
    snprintf(keys[6].s = realloc(keys[6].s, 32), 32, "module.blocks.5.w");
    d.n = 7;
    memset(pt, 0, sizeof *pt);
    pt->path = "many.pt";
    CHECK_EQ_INT(pgolf_read_root(pt, &d, &err), XSA_EBADINPUT);
    CHECK_STR(err.msg, "many.pt: tensors 'module.blocks.5.w' and 'blocks.5.w' are one weight, with and without a compiled or DDP "
                       "model's prefix; the file holds two state dicts");
    for (int i = 0; i < PG_MAX_TENSORS; i++) free(keys[i].s);
    free(keys);
    free(d.v);
    free(pt);
}

RUN_TESTS(T(test_unpickle_big_dict_lookups), T(test_unpickle_repeated_keys), T(test_pgolf_many_names), T(test_unpickle_data_class_inert), T(test_empty_tensor_points_into_storage), T(test_unpickle_protocol4_values), T(test_unpickle_memo_shares), T(test_unpickle_refusals), T(test_unpickle_inert_values),
          T(test_bin_folders_equal_twins), T(test_storages_in_place_and_shared), T(test_sums_from_torch), T(test_int8_uint8_tensors),
          T(test_nanogpt_checkpoint_values))
