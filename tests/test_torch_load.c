// test_torch_load.c: the restricted unpickler on pickles Python's own pickle module wrote (foreign
// globals as inert objects), its refusals, and torch.save archives (tests/fixtures/torch, written
// by the real torch.save; objects/: Python objects beside the weights, whole nn.Modules) against
// their safetensors twins, tensor by tensor and byte for byte, and against the names and sums
// torch computed (expected.json).
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "model/config.h"
#include "model/pgolf.h"
#include "model/safetensors.h"
#include "model/torch_checkpoint.h"
#include "model/unpickle.h"
#include "model/weights_prefix.h"
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
// slots dataclass ParamConfig in __main__ (NEWOBJ, then BUILD with (None, fields)): an inert object.
TEST(test_unpickle_data_class_inert) {
    static const char P[] = "\x80\x02}q\x00K\x01" "c__main__\nParamConfig\nq\x01)\x81q\x02N}q\x03(X\x05\x00\x00\x00labelq\x04"
                            "X\x01\x00\x00\x00xq\x05X\x02\x00\x00\x00lrq\x06G?\xf0\x00\x00\x00\x00\x00\x00u\x86q\x07" "bs.";
    struct unpickler u;
    struct pv *r = NULL;
    xsa_error err;
    CHECK_EQ_INT(run(&u, P, sizeof P - 1, &r, &err), 0);
    const struct pv *o = r && r->kind == PV_DICT && r->n == 1 ? r->v[1] : NULL;
    CHECK(o && o->kind == PV_OBJECT && o->i == 0 && !strcmp(o->cls->s, "__main__.ParamConfig"));
    CHECK(up_attr(o, "label") && !strcmp(up_attr(o, "label")->s, "x") && up_attr(o, "lr")->f == 1.0);
    unpickle_free(&u);
}

// Any class or function a pickle names is a tag: REDUCE, NEWOBJ and NEWOBJ_EX of it make an inert
// object with its state, a dict subclass keeps its items, sets keep theirs. Nothing is called.
TEST(test_unpickle_foreign_objects) {
    static const struct {
        const char *bytes;
        size_t n;
    } p[] = {
#define C(b) {b, sizeof b - 1}
        // pickle.dumps({"args": argparse.Namespace(lr=0.5, name="run")}, protocol=2)
        C("\x80\x02}q\x00X\x04\x00\x00\x00" "argsq\x01" "cargparse\x0aNamespace\x0aq\x02)\x81q\x03}q\x04(X\x02\x00\x00\x00lrq\x05G\x3f\xe0\x00\x00\x00"
          "\x00\x00\x00X\x04\x00\x00\x00nameq\x06X\x03\x00\x00\x00runq\x07ubs."),
        // pickle.dumps([{1, 2}, frozenset({3})], protocol=4): EMPTY_SET, ADDITEMS, FROZENSET
        C("\x80\x04\x95\x12\x00\x00\x00\x00\x00\x00\x00]\x94(\x8f\x94(K\x01K\x02\x90(K\x03\x91\x94" "e."),
        // pickle.dumps(K(5), protocol=4), K.__getnewargs_ex__() == ((7,), {"scale": 2}): NEWOBJ_EX
        C("\x80\x04\x95/\x00\x00\x00\x00\x00\x00\x00\x8c\x08__main__\x94\x8c\x01K\x94\x93\x94K\x07\x85\x94}\x94\x8c\x05scale\x94K\x02s\x92\x94}"
          "\x94\x8c\x01n\x94K\x05sb."),
        // pickle.dumps(AttributeDict(a=1), protocol=2) of a dict subclass (Lightning's hyper_parameters)
        C("\x80\x02" "c__main__\x0a" "AttributeDict\x0aq\x00)\x81q\x01X\x01\x00\x00\x00" "aq\x02K\x01s."),
        // os.system('touch /x') at the root; builtins.eval by STACK_GLOBAL; copyreg._reconstructor(K, object, None)
        C("\x80\x02" "cos\nsystem\nX\x08\x00\x00\x00touch /x\x85R."),
        C("\x80\x04\x8c\x08" "builtins\x8c\x04" "eval\x93X\x01\x00\x00\x00" "1\x85R."),
        C("\x80\x02" "ccopyreg\n_reconstructor\nc__main__\nK\ncbuiltins\nobject\nN\x87R}X\x01\x00\x00\x00nK\x05sb."),
        // a tensor subclass's reduction whose func is not _rebuild_tensor_v2: an object, named
        C("\x80\x02" "ctorch._tensor\n_rebuild_from_type_v2\n(ctorch._utils\n_rebuild_qtensor\nctorch\nTensor\n)}tR."),
        // a Parameter of a quantized tensor: the rebuild's object, named where the weight is read
        C("\x80\x02" "ctorch._utils\n_rebuild_parameter\nctorch._utils\n_rebuild_qtensor\n)R\x89}\x87R."),
        // a wrapper subclass (torch.save of a DTensor: its local shard inside): named by its class
        C("\x80\x02" "ctorch._tensor\n_rebuild_from_type_v2\n(ctorch._utils\n_rebuild_wrapper_subclass\nctorch.distributed.tensor\nDTensor\n)}tR."),
#undef C
    };
    struct unpickler u;
    struct pv *r[10] = {0};
    xsa_error err;
    char what[160];
    for (size_t i = 0; i < 10; i++) {
        CHECK_MSG(run(&u, p[i].bytes, p[i].n, &r[i], &err) == 0, "case %zu: %s", i, err.msg);
        if (!r[i]) continue;
        if (i == 0) {
            const struct pv *ns = up_dict_get(r[i], "args");
            CHECK(ns && ns->kind == PV_OBJECT && !strcmp(ns->cls->s, "argparse.Namespace") && ns->args->n == 0);
            CHECK(up_attr(ns, "lr") && up_attr(ns, "lr")->f == 0.5 && !strcmp(up_attr(ns, "name")->s, "run"));
            up_describe(ns, what, sizeof what);
            CHECK_STR(what, "an argparse.Namespace");
        } else if (i == 1) {
            CHECK(r[i]->kind == PV_LIST && r[i]->n == 2 && r[i]->v[0]->kind == PV_SET && r[i]->v[1]->kind == PV_SET);
            CHECK(r[i]->n == 2 && r[i]->v[0]->items->n == 2 && r[i]->v[0]->items->v[1]->i == 2 && r[i]->v[1]->items->n == 1);
        } else if (i == 2) {
            CHECK(r[i]->kind == PV_OBJECT && !strcmp(r[i]->cls->s, "__main__.K") && r[i]->args->n == 1 && r[i]->args->v[0]->i == 7);
            CHECK(up_attr(r[i], "n") && up_attr(r[i], "n")->i == 5);
        } else if (i == 3) {
            CHECK(r[i]->kind == PV_OBJECT && r[i]->items && up_dict_get(r[i]->items, "a") && up_dict_get(r[i]->items, "a")->i == 1);
        } else {
            static const char *const want[] = {"os.system(...) (a call, never run)", "builtins.eval(...) (a call, never run)", "a __main__.K",
                                               "torch._tensor._rebuild_from_type_v2(...) (a call, never run)",
                                               "torch._utils._rebuild_qtensor(...) (a call, never run)", "a torch.distributed.tensor.DTensor"};
            up_describe(r[i], what, sizeof what);
            CHECK_MSG(r[i]->kind == PV_OBJECT && !strcmp(what, want[i - 4]), "case %zu: %s", i, what);
        }
        unpickle_free(&u);
    }
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
        C("\x80\x02" "ctorch._utils\n_rebuild_tensor_v3\n.", "a dtype torch.save writes untyped (float8"),
        C("\x80\x02" "ctorch\nComplexFloatStorage\n.", "storage type torch.ComplexFloatStorage (byte 2) are not readable"),
        C("\x80\x02" "K\x01)R.", "REDUCE of something other than a global and a tuple"),
        C("\x80\x02" "cos\nsystem\nK\x01R.", "REDUCE of something other than a global and a tuple"),
        C("\x80\x02" "cbuiltins\nset\nK\x01\x85R.", "a set built from other than one list or tuple"),
        C("\x80\x04" "cbuiltins\nset\n]\x85R(K\x01\x90.", "ADDITEMS with no set of its own below"),
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
        // an object that took dict items (a dict subclass) takes no list items
        C("\x80\x02" "c__main__\nK\n)\x81X\x01\x00\x00\x00" "aK\x01sK\x02" "a.", "APPEND to something that is not a list"),

        C("\x80\x02" "(N" "Q.", "a persistent id with no storage to resolve it"),
        C("\x80\x02" "(K\x01" "u.", "SETITEM with no dict below"),
        C("\x80\x02" "\x80\x06.", "a pickle protocol above 5"),
        C("\x80\x02" "N(" "000.", "an opcode pops an empty stack"),  // the mark, N, then nothing
        C("\x80\x02" "}K\x01" "b.", "BUILD of something other than an object's or a dict's attributes"),
        // NEWOBJ only of a foreign class; a plain dict takes no (slots, dict) state
        C("\x80\x02" "ccollections\nOrderedDict\n)\x81.", "NEWOBJ of something other than a class and a tuple"),
        C("\x80\x02" "c__main__\nParamConfig\nK\x01\x81.", "NEWOBJ of something other than a class and a tuple"),
        C("\x80\x04" "c__main__\nK\n)K\x01\x92.", "NEWOBJ of something other than a class and a tuple"),
        C("\x80\x02" "}N}\x86" "b.", "BUILD of something other than an object's or a dict's attributes"),
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

// Bounds of what foreign globals and modules may cost: the globals' names (STACK_GLOBAL of two
// memoized 200-byte names, 7 bytes a copy) and a module that holds itself (the memo makes cycles).
TEST(test_objects_bounded) {
    struct sbuf p = {0};
    char name[201];
    memset(name, 'm', 200), name[200] = 0;
    sbuf_append(&p, "\x80\x04\x8c\xc8", 4), sbuf_append(&p, name, 200), sbuf_append(&p, "\x94\x8c\xc8", 3), sbuf_append(&p, name, 200);
    sbuf_append(&p, "\x94" "0", 2);  // memo 0 and 1: the names; the second popped
    for (int i = 0; i < 200000; i++) sbuf_append(&p, "h\x00h\x01\x93" "0", 6);
    sbuf_append(&p, "N.", 2);
    struct unpickler u;
    struct pv *r = NULL;
    xsa_error err;
    CHECK_EQ_INT(run(&u, p.s, p.n, &r, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "the globals' names grow past their limit"), "%s", err.msg);
    unpickle_free(&u);
    sbuf_free(&p);
    static const char M[] = "\x80\x02" "c__main__\nM\n)\x81q\x00}(X\x0b\x00\x00\x00_parameters}X\x08\x00\x00\x00_buffers}"
                            "X\x08\x00\x00\x00_modules}X\x01\x00\x00\x00mh\x00sub.";
    struct torch_file tf;
    memset(&tf, 0, sizeof tf);
    snprintf(tf.where, sizeof tf.where, "cycle.pt (archive/data.pkl)");
    CHECK_EQ_INT(run(&tf.u, M, sizeof M - 1, &r, &err), 0);
    const struct pv *sd = NULL;
    CHECK(torch_is_module(r));
    CHECK_EQ_INT(torch_module_state_dict(&tf, r, &sd, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "cycle.pt (archive/data.pkl): the saved module nests past 64 levels"), "%s", err.msg);
    unpickle_free(&tf.u);
}

// Every tensor of b is in a with the same dtype, shape and bytes, and a has no other (a tied
// lm_head saved beside the embedding is the one extra tensor allowed).
static void same_tensors(const struct safetensors *a, const struct safetensors *b, const char *what, const char *twin) {
    int matched = 0;
    for (int i = 0; i < b->n_tensors; i++) {
        const struct st_tensor *y = &b->tensors[i], *x = safetensors_find(a, y->name);
        CHECK_MSG(x != NULL, "%s: no tensor %s", what, y->name);
        if (!x) continue;
        int same = !strcmp(x->dtype_name, y->dtype_name) && x->ndim == y->ndim && x->nbytes == y->nbytes &&
                   !memcmp(x->shape, y->shape, (size_t)x->ndim * sizeof x->shape[0]) && !memcmp(x->data, y->data, x->nbytes);
        CHECK_MSG(same, "%s: tensor %s differs from its twin in %s", what, y->name, twin);
        matched++;
    }
    CHECK_EQ_INT(matched, b->n_tensors);
    CHECK_EQ_INT(a->n_tensors - (safetensors_find(a, "lm_head.weight") && !safetensors_find(b, "lm_head.weight")), b->n_tensors);
}

// Every tensor of `twin` (a safetensors folder) is in `bin` (a torch folder), and no other.
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
    same_tensors(&a, &b, bin, twin);
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

// Opens a torch.save file of the fixtures into tf (its tensors' file in st, zeroed here).
// The tensors of `st` against torch's state_dict() as the fixture scripts record it: `names` holds
// [name, float64 sum] pairs in order; `clean`: torch's names with torch_clean_name applied first
// (a compiled module's `_orig_mod.` dropped, as xsa-eval reads it).
static void check_names_and_sums(const struct safetensors *st, const cJSON *names, const char *path, int clean) {
    xsa_error err = {0};
    for (int i = 0; i < st->n_tensors && i < cJSON_GetArraySize(names); i++) {
        const cJSON *e = cJSON_GetArrayItem(names, i);
        const char *torch_name = cJSON_GetArrayItem(e, 0)->valuestring;
        char want[256];
        snprintf(want, sizeof want, "%s", torch_name);
        if (clean) torch_clean_name(torch_name, want, sizeof want);
        const struct st_tensor *t = &st->tensors[i];
        CHECK_MSG(!strcmp(t->name, want), "%s: tensor %d is %s, torch says %s", path, i, t->name, torch_name);
        size_t n = t->nbytes / 4;
        float *v = malloc((n ? n : 1) * sizeof *v);
        CHECK_EQ_INT(safetensors_read_f32(st, t, v, &err), 0);
        double sum = 0, w = cJSON_GetArrayItem(e, 1)->valuedouble;
        for (size_t k = 0; k < n; k++) sum += v[k];
        CHECK_MSG(fabs(sum - w) <= 1e-9 * (1 + fabs(w)), "%s: %s sums to %.17g, torch says %.17g", path, t->name, sum, w);
        free(v);
    }
}

static int open_torch(struct torch_file *tf, struct safetensors *st, const char *path) {
    memset(st, 0, sizeof *st);
    xsa_error err = {0};
    int rc = torch_file_open(tf, st, path, &err);
    CHECK_MSG(rc == 0, "%s: %s", path, err.msg);
    return rc;
}

TEST(test_nanogpt_checkpoint_values) {
    // ckpt.pt as nanoGPT's train.py writes it: model_args, optimizer state, a 0-d tensor
    struct safetensors st;
    struct torch_file tf;
    xsa_error err = {0};
    if (!open_torch(&tf, &st, T_DIR "/nanogpt/ckpt.pt")) {
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

#define O_DIR T_DIR "/objects"

// The weights of a file whose state dict sits among Python objects, or of a whole nn.Module
// (torch.save(model)), written by the real torch.save (tools/fixtures/make_torch_object_fixtures.py):
// the names in the order torch's model.state_dict() gives them, the sums torch computed, and
// tensor for tensor the same as the twin each was made from.
TEST(test_object_fixtures_weights) {
    static const struct {
        const char *key, *file;
    } fx[] = {{"loop_objects", "loop_objects/model.pt"}, {"llama_module", "llama_module/model.pt"},
              {"nanogpt_module", "nanogpt_module/ckpt.pt"}, {"nanogpt_module_loop", "nanogpt_module_loop/ckpt.pt"},
              {"tricky_module", "tricky_module.pt"}};
    cJSON *ex = fixture_read_json(O_DIR "/expected.json");
    struct safetensors llama, nano;
    struct torch_file tf;
    xsa_error err = {0};
    CHECK_EQ_INT(safetensors_open_dir(&llama, M_DIR "/llama_gqa", &err), 0);
    CHECK_EQ_INT(open_torch(&tf, &nano, T_DIR "/nanogpt/ckpt.pt"), 0);  // its "model", as saved from train.py
    CHECK_EQ_INT(torch_add_state_dict(&tf, &nano, up_dict_get(tf.root, "model"), "_orig_mod.", &err), 0);
    torch_file_close(&tf, &nano);
    for (size_t f = 0; f < sizeof fx / sizeof *fx; f++) {
        char path[256];
        snprintf(path, sizeof path, O_DIR "/%s", fx[f].file);
        struct safetensors st;
        memset(&st, 0, sizeof st);
        int rc = torch_open_file(&st, path, &err);
        CHECK_MSG(rc == 0, "%s: %s", path, err.msg);
        const cJSON *names = cJSON_GetObjectItemCaseSensitive(ex, fx[f].key);
        CHECK_MSG(names && cJSON_GetArraySize(names) == st.n_tensors, "%s: %d tensors", path, st.n_tensors);
        if (!rc && names) check_names_and_sums(&st, names, path, 0);
        if (!rc && f < 2) same_tensors(&st, &llama, path, "llama_gqa");
        if (!rc && (f == 2 || f == 3)) same_tensors(&st, &nano, path, "nanogpt/ckpt.pt");
        safetensors_close(&st);
    }
    safetensors_close(&llama);
    safetensors_close(&nano);
    cJSON_Delete(ex);
}

// What sits beside the weights is read as inert objects, with their fields; and the llama module's
// rotary buffer, which torch.save wrote through torch._tensor._rebuild_from_type_v2, is its tensor.
TEST(test_object_fixtures_values) {
    struct safetensors st;
    struct torch_file tf;
    char what[160];
    if (!open_torch(&tf, &st, O_DIR "/loop_objects/model.pt")) {
        const struct pv *args = up_dict_get(tf.root, "args"), *loss = up_dict_get(tf.root, "best_val_loss");
        const struct pv *rng = up_dict_get(up_dict_get(tf.root, "rng"), "numpy"), *cfg = up_dict_get(tf.root, "train_config");
        const struct pv *hp = up_dict_get(tf.root, "hyper_parameters"), *tags = up_dict_get(tf.root, "tags");
        CHECK(args && args->kind == PV_OBJECT && up_attr(args, "batch_size") && up_attr(args, "batch_size")->i == 8);
        up_describe(up_attr(args, "data"), what, sizeof what);
        CHECK_STR(what, "pathlib.PurePosixPath(...) (a call, never run)");
        up_describe(loss, what, sizeof what);
        CHECK_STR(what, "numpy._core.multiarray.scalar(...) (a call, never run)");
        CHECK(rng && rng->kind == PV_TUPLE && rng->n == 5 && !strcmp(rng->v[0]->s, "MT19937"));
        if (rng && rng->n == 5) {
            up_describe(rng->v[1], what, sizeof what);
            CHECK_STR(what, "a numpy.ndarray");
        }
        CHECK(cfg && up_attr(cfg, "warmup") && up_attr(cfg, "warmup")->i == 100);
        up_describe(up_dict_get(tf.root, "mode"), what, sizeof what);
        CHECK_STR(what, "__main__.Mode(...) (a call, never run)");
        CHECK(hp && hp->kind == PV_OBJECT && up_dict_get(hp->items, "layers") && up_dict_get(hp->items, "layers")->i == 3);
        CHECK(tags && tags->kind == PV_SET && tags->items && tags->items->n == 2);
    }
    torch_file_close(&tf, &st);
    safetensors_close(&st);
    cJSON *ex = fixture_read_json(O_DIR "/expected.json");
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(ex, "llama_module_inv_freq");
    int rc = open_torch(&tf, &st, O_DIR "/llama_module/model.pt");
    const struct pv *rotary = rc ? NULL : up_dict_get(up_attr(up_dict_get(up_attr(tf.root, "_modules"), "model"), "_modules"), "rotary_emb");
    const struct pv *inv = up_dict_get(up_attr(rotary, "_buffers"), "inv_freq");
    CHECK(inv && inv->kind == PV_TENSOR && inv->ndim == 1 && want && inv->shape[0] == cJSON_GetArraySize(want));
    for (int i = 0; inv && inv->kind == PV_TENSOR && want && i < inv->shape[0] && i < cJSON_GetArraySize(want); i++) {
        float f;
        memcpy(&f, inv->storage->data + (inv->offset + i * inv->stride[0]) * 4, 4);
        CHECK(f == (float)cJSON_GetArrayItem(want, i)->valuedouble);
    }
    torch_file_close(&tf, &st);
    safetensors_close(&st);
    cJSON_Delete(ex);
}

// A transformers model saved whole without its config.json: the config is written from the
// model's LlamaConfig object and gives what llama_gqa's config.json gives.
TEST(test_whole_transformers_model_config) {
    struct safetensors st;
    struct torch_file tf;
    xsa_error err = {0};
    int rc = open_torch(&tf, &st, O_DIR "/llama_module/model.pt");
    struct sbuf text = {0};
    CHECK(!rc && torch_hf_config_text(up_attr(tf.root, "config"), &text) == 1);
    CHECK(text.s && strstr(text.s, "\"model_type\": \"llama\"") && strstr(text.s, "\"dtype\": \"float32\"") && !strstr(text.s, "_name_or_path"));
    struct hf_config a, b;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    CHECK_MSG(text.s && hf_config_parse_text(&a, text.s, "model.pt", &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(hf_config_parse_file(&b, M_DIR "/llama_gqa/config.json", &err), 0);
    CHECK(!memcmp(&a, &b, sizeof a));
    CHECK_EQ_INT(torch_hf_config_text(up_attr(up_dict_get(up_attr(tf.root, "_modules"), "lm_head"), "config"), &text), 0);  // none
    CHECK_EQ_INT(torch_hf_config_text(tf.root, &text), 0);  // not a transformers config class
    sbuf_free(&text);
    torch_file_close(&tf, &st);
    safetensors_close(&st);
}

// An object where a weight or the state dict should be is refused by the state dict reader,
// naming its class; it was never called.
TEST(test_objects_not_weights_named) {
    struct safetensors st;
    memset(&st, 0, sizeof st);
    xsa_error err = {0};
    CHECK_EQ_INT(torch_open_file(&st, T_DIR "/bad/os_system.pt", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "os_system.pt (os_system/data.pkl): state dict entry 'x' is posix.system(...) (a call, never run), not a tensor; "),
              "%s", err.msg);
    safetensors_close(&st);
    memset(&st, 0, sizeof st);
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(torch_open_file(&st, T_DIR "/bad/numpy_array.pt", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "state dict entry 'x' is a numpy.ndarray, not a tensor"), "%s", err.msg);
    safetensors_close(&st);
    // the root itself an object: os.system('touch /x')
    static const char P[] = "\x80\x02" "cos\nsystem\nX\x08\x00\x00\x00touch /x\x85R.";
    struct torch_file tf;
    memset(&tf, 0, sizeof tf);
    snprintf(tf.where, sizeof tf.where, "root.pt (archive/data.pkl)");
    struct pv *r = NULL;
    CHECK_EQ_INT(run(&tf.u, P, sizeof P - 1, &r, &err), 0);
    memset(&st, 0, sizeof st);
    CHECK_EQ_INT(torch_add_state_dict(&tf, &st, r, NULL, &err), XSA_EBADINPUT);
    CHECK_STR(err.msg, "root.pt (archive/data.pkl): the saved object is os.system(...) (a call, never run), not a state dict (a dict of "
                       "tensors) nor an nn.Module; save model.state_dict()");
    unpickle_free(&tf.u);
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
    CHECK_EQ_INT(torch_add_tensor(&tf, &st, "e", t, &err), 0);
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

// The frameworks' own checkpoints (tests/fixtures/torch/frameworks, tools/fixtures/make_framework_fixtures.py).
#define F_DIR T_DIR "/frameworks"

// A Lightning .ckpt as ModelCheckpoint writes it: the state dict under "state_dict", its names
// under the LightningModule's attribute "model.", beside hyper_parameters, loops, callbacks,
// optimizer_states (none of it read); global_step is the train step; without the prefix the
// tensors are llama_gqa's, byte for byte.
TEST(test_lightning_checkpoint) {
    struct safetensors st, twin;
    struct torch_file tf;
    if (open_torch(&tf, &st, F_DIR "/lightning/epoch=0-step=2.ckpt")) return;
    const struct pv *hp = up_dict_get(tf.root, "hyper_parameters"), *sd = NULL, *module = NULL;
    CHECK(hp && hp->kind == PV_DICT && up_dict_get(hp, "warmup") && up_dict_get(hp, "warmup")->i == 10);
    CHECK(up_dict_get(tf.root, "loops") && up_dict_get(tf.root, "callbacks") && up_dict_get(tf.root, "optimizer_states"));
    long long step = -1;
    const char *unread = NULL;
    CHECK(torch_saved_step(tf.root, &step, &unread) && step == 2);
    xsa_error err = {0};
    CHECK_EQ_INT(torch_find_weights(&tf, &sd, &module, &err), 0);
    CHECK(sd == up_dict_get(tf.root, "state_dict") && !module);
    CHECK_EQ_INT(torch_add_state_dict(&tf, &st, sd, NULL, &err), 0);
    torch_file_close(&tf, &st);
    CHECK(safetensors_find(&st, "model.model.embed_tokens.weight") && safetensors_find(&st, "model.lm_head.weight"));
    const char *anchor[] = {"model.embed_tokens.weight"};
    char prefix[64];
    CHECK_EQ_INT(weights_drop_prefix(&st, anchor, 1, "lightning", "llama", prefix, sizeof prefix, &err), 0);
    CHECK_STR(prefix, "model.");
    int rc = safetensors_open_dir(&twin, M_DIR "/llama_gqa", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) same_tensors(&st, &twin, "lightning ckpt", "llama_gqa");
    if (!rc) safetensors_close(&twin);
    safetensors_close(&st);
}

// Whole modules where the pickle's attributes are not what state_dict() gives unless read as
// torch does (tests/fixtures/torch/audit, tools/fixtures/make_torch_audit_fixtures.py): a
// torch.compile'd model (OptimizedModule pickles as a call of its class on the model) saved whole,
// at the root and as a child, named as torch named them (its "_orig_mod." dropped, as from a
// state dict) with torch's sums; transformers 5's GPT-NeoX head, lm_head.weight; and a module
// with a state_dict hook, refused (torch's state_dict() doubles lm_head.weight there: reading
// the parameter gave other weights than torch.load + state_dict() with exit 0).
#define A_DIR T_DIR "/audit"
TEST(test_audit_whole_modules) {
    static const struct {
        const char *key, *file;
    } fx[] = {{"compiled", "compiled.pt"}, {"compiled_child", "compiled_child/model.pt"}, {"neox_whole", "neox_whole.pt"}};
    cJSON *ex = fixture_read_json(A_DIR "/expected.json");
    xsa_error err = {0};
    for (size_t f = 0; f < sizeof fx / sizeof *fx; f++) {
        char path[256];
        snprintf(path, sizeof path, A_DIR "/%s", fx[f].file);
        struct safetensors st;
        memset(&st, 0, sizeof st);
        int rc = torch_open_file(&st, path, &err);
        CHECK_MSG(rc == 0, "%s: %s", path, err.msg);
        const cJSON *names = cJSON_GetObjectItemCaseSensitive(ex, fx[f].key);
        CHECK_MSG(names && cJSON_GetArraySize(names) == st.n_tensors, "%s: %d tensors", path, st.n_tensors);
        if (!rc && names) check_names_and_sums(&st, names, path, 1);
        safetensors_close(&st);
    }
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(ex, "hooked");
    CHECK(h && cJSON_GetObjectItemCaseSensitive(h, "state_dict_lm_head_sum")->valuedouble !=
                   cJSON_GetObjectItemCaseSensitive(h, "parameter_lm_head_sum")->valuedouble);
    struct safetensors st;
    memset(&st, 0, sizeof st);
    CHECK_EQ_INT(torch_open_file(&st, A_DIR "/hooked.pt", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "hooked.pt (hooked/data.pkl): module 'lm_head' (a torch.nn.modules.linear.Linear) has a state_dict hook "
                              "(the global __main__.double_head in _state_dict_hooks)"), "%s", err.msg);
    safetensors_close(&st);
    cJSON_Delete(ex);
}

// A struct safetensors of one-float tensors named `names` (NULL-terminated).
static void fake_weights(struct safetensors *st, const char *const *names) {
    static const float one = 1.0f;
    const int64_t shape[1] = {1};
    xsa_error err = {0};
    int fi = 0;
    memset(st, 0, sizeof *st);
    CHECK_EQ_INT(safetensors_add_file(st, "fake.pt", &fi, &err), 0);
    for (int i = 0; names[i]; i++)
        CHECK_EQ_INT(safetensors_add_tensor(st, fi, names[i], "F32", 1, shape, (const unsigned char *)&one, sizeof one, &err), 0);
}

// weights_drop_prefix on `names`: its return, the prefix dropped, the message.
static int drop(const char *const *names, const char *const *anchors, int n, char *prefix, xsa_error *err, const char *after) {
    struct safetensors st;
    fake_weights(&st, names);
    memset(err, 0, sizeof *err);
    int rc = weights_drop_prefix(&st, anchors, n, "fake.pt", "llama", prefix, 64, err);
    if (after) CHECK_MSG(safetensors_find(&st, after) != NULL, "no tensor '%s' after the drop", after);
    safetensors_close(&st);
    return rc;
}

// One leading name shared by every tensor is dropped; a deeper path, tensors outside it or two
// models' weights are refused naming the prefix (never a partial strip); names that are the
// family's, or that no anchor ends, are left as they are.
TEST(test_weights_prefix_drop_or_refuse) {
    const char *llama[] = {"model.embed_tokens.weight"}, *gpt2[] = {"transformer.wte.weight", "wte.weight"};
    char p[64];
    xsa_error err;
    const char *lit[] = {"model.model.embed_tokens.weight", "model.model.norm.weight", "model.lm_head.weight", NULL};
    CHECK_EQ_INT(drop(lit, llama, 1, p, &err, "model.embed_tokens.weight"), 0);
    CHECK_STR(p, "model.");
    const char *lit_gpt2[] = {"net.transformer.wte.weight", "net.lm_head.weight", NULL};
    CHECK_EQ_INT(drop(lit_gpt2, gpt2, 2, p, &err, "transformer.wte.weight"), 0);  // not "net.transformer."
    CHECK_STR(p, "net.");
    const char *own[] = {"model.embed_tokens.weight", "lm_head.weight", NULL};
    CHECK_EQ_INT(drop(own, llama, 1, p, &err, "lm_head.weight"), 0);
    CHECK_STR(p, "");
    const char *other[] = {"encoder.embed.weight", "encoder.norm.weight", NULL};
    CHECK_EQ_INT(drop(other, llama, 1, p, &err, "encoder.embed.weight"), 0);  // the loader names what is missing
    CHECK_STR(p, "");
    const char *extra[] = {"model.model.embed_tokens.weight", "model.lm_head.weight", "loss_fn.weight", NULL};
    CHECK_EQ_INT(drop(extra, llama, 1, p, &err, "model.model.embed_tokens.weight"), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "fake.pt: the llama weights are named under 'model.'") && strstr(err.msg, "tensor 'loss_fn.weight' is not") &&
          strstr(err.msg, "torch.save(module.model.state_dict(), 'model.pt')"));
    const char *two[] = {"model.model.embed_tokens.weight", "ema.model.embed_tokens.weight", NULL};
    CHECK_EQ_INT(drop(two, llama, 1, p, &err, "ema.model.embed_tokens.weight"), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "two models' weights, named under 'model.'") && strstr(err.msg, "under 'ema.'"));
    const char *deep[] = {"net.model.model.embed_tokens.weight", "net.model.lm_head.weight", NULL};
    CHECK_EQ_INT(drop(deep, llama, 1, p, &err, "net.model.lm_head.weight"), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "named under 'net.model.'") && strstr(err.msg, "torch.save(module.net.model.state_dict()"));
}

// The files a framework saves to resume training, refused as models by what they are.
TEST(test_resume_files_named) {
    static const struct { const char *file, *what; } cases[] = {
        {F_DIR "/hf_trainer/checkpoint-2/training_args.bin", "the Hugging Face Trainer's TrainingArguments"},
        {F_DIR "/hf_trainer/checkpoint-2/optimizer.pt", "an optimizer's state_dict"},
        {F_DIR "/hf_trainer/checkpoint-2/scheduler.pt", "a learning-rate scheduler's state_dict"},
        {F_DIR "/hf_trainer/checkpoint-2/rng_state.pth", "the Hugging Face Trainer's random-number generator states"},
        {F_DIR "/accelerate/checkpoint_0/optimizer.bin", "an optimizer's state_dict"},
        {F_DIR "/accelerate/checkpoint_0/random_states_0.pkl", "accelerate's random-number generator states"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct safetensors st;
        struct torch_file tf;
        if (open_torch(&tf, &st, cases[i].file)) continue;
        xsa_error err = {0};
        CHECK_EQ_INT(torch_refuse_train_state(tf.root, cases[i].file, &err), XSA_EBADINPUT);
        CHECK_MSG(strstr(err.msg, cases[i].what) && strstr(err.msg, "not the model"), "%s: %s", cases[i].file, err.msg);
        torch_file_close(&tf, &st);
        safetensors_close(&st);
    }
    struct safetensors st;  // a training loop's checkpoint (optimizer beside the model) is no resume file
    struct torch_file tf;
    if (open_torch(&tf, &st, T_DIR "/nanogpt/ckpt.pt")) return;
    xsa_error err = {0};
    CHECK_EQ_INT(torch_refuse_train_state(tf.root, "ckpt.pt", &err), 0);
    torch_file_close(&tf, &st);
    safetensors_close(&st);
}

// The training step beside the weights: the first of iter_num, global_step, step present decides,
// and one that is no whole number in [0, 2^31) gives none (not the next key's) and is named. A
// numpy integer scalar counts (pickle.dumps of {"step": np.int64(300)} at protocol 2, whose bytes
// are _codecs.encode's latin-1 text, and of np.uint16(654) at protocol 4, BINBYTES); a numpy
// float or a negative np.int32 does not.
TEST(test_saved_step_first_key) {
    static const char OK[] = "\x80\x02}(X\x04\x00\x00\x00stepK\x07X\x05\x00\x00\x00" "epochK\x03u.";
    static const char BAD_FIRST[] = "\x80\x02}(X\x08\x00\x00\x00iter_numJ\xff\xff\xff\xffX\x04\x00\x00\x00stepK\x07u.";
    static const char GLOBAL[] = "\x80\x02}(X\x0b\x00\x00\x00global_stepM\xe8\x03X\x04\x00\x00\x00stepK\x07u.";
    static const char NP_I64[] =
        "\x80\x02}q\x00X\x04\x00\x00\x00stepq\x01" "cnumpy._core.multiarray\x0ascalar\x0aq\x02" "cnumpy\x0a" "dtype\x0aq\x03X\x02\x00\x00\x00i8q\x04"
        "\x89\x88\x87q\x05Rq\x06(K\x03X\x01\x00\x00\x00<q\x07NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tq\x08" "bc_codecs\x0a" "encode\x0aq\x09"
        "X\x08\x00\x00\x00,\x01\x00\x00\x00\x00\x00\x00q\x0aX\x06\x00\x00\x00latin1q\x0b\x86q\x0cRq\x0d\x86q\x0eRq\x0fs.";
    static const char NP_U16_P4[] =
        "\x80\x04\x95u\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x0bglobal_step\x94\x8c\x16numpy._core.multiarray\x94\x8c\x06scalar\x94\x93\x94"
        "\x8c\x05numpy\x94\x8c\x05" "dtype\x94\x93\x94\x8c\x02u2\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01<\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xff"
        "K\x00t\x94" "bC\x02\x8e\x02\x94\x86\x94R\x94s.";
    static const char NP_FLOAT[] =
        "\x80\x02}q\x00X\x04\x00\x00\x00stepq\x01" "cnumpy._core.multiarray\x0ascalar\x0aq\x02" "cnumpy\x0a" "dtype\x0aq\x03X\x02\x00\x00\x00" "f8q\x04"
        "\x89\x88\x87q\x05Rq\x06(K\x03X\x01\x00\x00\x00<q\x07NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tq\x08" "bc_codecs\x0a" "encode\x0aq\x09"
        "X\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x08@q\x0aX\x06\x00\x00\x00latin1q\x0b\x86q\x0cRq\x0d\x86q\x0eRq\x0fs.";
    static const char NP_NEG[] =
        "\x80\x02}q\x00X\x08\x00\x00\x00iter_numq\x01" "cnumpy._core.multiarray\x0ascalar\x0aq\x02" "cnumpy\x0a" "dtype\x0aq\x03X\x02\x00\x00\x00i4q\x04"
        "\x89\x88\x87q\x05Rq\x06(K\x03X\x01\x00\x00\x00<q\x07NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tq\x08" "bc_codecs\x0a" "encode\x0aq\x09"
        "X\x08\x00\x00\x00\xc3\xbb\xc3\xbf\xc3\xbf\xc3\xbfq\x0aX\x06\x00\x00\x00latin1q\x0b\x86q\x0cRq\x0d\x86q\x0eRq\x0fs.";
    const struct {
        const char *p;
        size_t n;
        int has;
        long long step;
        const char *unread;
    } cases[] = {{OK, sizeof OK - 1, 1, 7, NULL},
                 {BAD_FIRST, sizeof BAD_FIRST - 1, 0, 0, "iter_num"},
                 {GLOBAL, sizeof GLOBAL - 1, 1, 1000, NULL},
                 {NP_I64, sizeof NP_I64 - 1, 1, 300, NULL},
                 {NP_U16_P4, sizeof NP_U16_P4 - 1, 1, 654, NULL},
                 {NP_FLOAT, sizeof NP_FLOAT - 1, 0, 0, "step"},
                 {NP_NEG, sizeof NP_NEG - 1, 0, 0, "iter_num"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct unpickler u;
        struct pv *r = NULL;
        xsa_error err;
        long long step = 0;
        const char *unread = NULL;
        CHECK_MSG(run(&u, cases[i].p, cases[i].n, &r, &err) == 0, "%s", err.msg);
        CHECK_MSG(torch_saved_step(r, &step, &unread) == cases[i].has && step == cases[i].step, "case %zu: %lld", i, step);
        CHECK_MSG(cases[i].unread ? unread && !strcmp(unread, cases[i].unread) : !unread, "case %zu: unread %s", i,
                  unread ? unread : "(none)");
        unpickle_free(&u);
    }
    // a one-element integer tensor, torch.save({"step": torch.tensor(400)}) (a view: torch.arange's
    // element 7 of 10 would read the same way, from its offset)
    struct safetensors st;
    struct torch_file tf;
    if (open_torch(&tf, &st, T_DIR "/objects/tensor_step.pt")) return;
    long long step = 0;
    const char *unread = NULL;
    CHECK(torch_saved_step(tf.root, &step, &unread) == 1 && step == 400 && !unread);
    torch_file_close(&tf, &st);
    safetensors_close(&st);
}

// The steps loops save as torch.save wrote them (tests/fixtures/torch/audit/steps.pt): a Python
// int, a one-element integer tensor (a view into a bigger storage too) or a numpy int is the step
// .item() / int() gives; a float, a float tensor, a negative or huge number records none.
TEST(test_saved_step_values) {
    struct safetensors st;
    struct torch_file tf;
    cJSON *ex = fixture_read_json(A_DIR "/expected.json");
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(ex, "steps"), *w;
    if (!open_torch(&tf, &st, A_DIR "/steps.pt")) {
        CHECK(want && cJSON_GetArraySize(want) == (int)tf.root->n);
        cJSON_ArrayForEach(w, want) {
            long long step = -1;
            const char *unread = NULL;
            int has = torch_saved_step(up_dict_get(tf.root, w->string), &step, &unread);
            CHECK_MSG(has == cJSON_IsNumber(w) && (!has || step == (long long)w->valuedouble), "%s: %d %lld", w->string, has, step);
        }
    }
    torch_file_close(&tf, &st);
    safetensors_close(&st);
    cJSON_Delete(ex);
}

// torch.compile's wrapper component, wherever a compiled module sits, and DDP's leading "module.".
TEST(test_clean_names) {
    static const char *const cases[][2] = {
        {"model._orig_mod.model.w", "model.model.w"}, {"_orig_mod.module.a.b", "a.b"}, {"a._orig_mod._orig_mod.b", "a.b"},
        {"a._orig_mod", "a._orig_mod"}, {"a.x_orig_mod.b", "a.x_orig_mod.b"}, {"inner.module.w", "inner.module.w"},
    };
    char out[64];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_MSG(!strcmp(torch_clean_name(cases[i][0], out, sizeof out), cases[i][1]), "%s -> %s", cases[i][0], out);
}

RUN_TESTS(T(test_clean_names), T(test_saved_step_first_key), T(test_saved_step_values), T(test_unpickle_big_dict_lookups), T(test_unpickle_repeated_keys), T(test_pgolf_many_names), T(test_unpickle_data_class_inert), T(test_unpickle_foreign_objects), T(test_object_fixtures_weights), T(test_object_fixtures_values), T(test_objects_not_weights_named), T(test_objects_bounded), T(test_whole_transformers_model_config), T(test_empty_tensor_points_into_storage), T(test_unpickle_protocol4_values), T(test_unpickle_memo_shares), T(test_unpickle_refusals), T(test_unpickle_inert_values),
          T(test_bin_folders_equal_twins), T(test_storages_in_place_and_shared), T(test_sums_from_torch), T(test_int8_uint8_tensors),
          T(test_nanogpt_checkpoint_values), T(test_lightning_checkpoint), T(test_audit_whole_modules), T(test_weights_prefix_drop_or_refuse), T(test_resume_files_named))
