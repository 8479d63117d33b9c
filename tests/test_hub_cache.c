// Tests of model/hub_cache.c's pure parts: repo ids, the names a Hub listing or a shard index
// may give (they become paths under the snapshot), the weights and tokenizer the loader reads,
// and what a snapshot lacks.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/vec.h"
#include "model/hub_cache.h"
#include "tests/check.h"

TEST(test_parse_id) {
    struct hub_model m;
    xsa_error err = {0};
    setenv("HF_HUB_CACHE", "/c", 1);
    CHECK(hub_parse_id("org/name@v1.0", &m, &err) == 0);
    CHECK_STR(m.repo, "org/name");
    CHECK_STR(m.revision, "v1.0");
    CHECK_STR(m.repo_dir, "/c/models--org--name");
    CHECK(hub_parse_id("org/name", &m, &err) == 0);
    CHECK_STR(m.revision, "main");
    const char *bad[] = {"org", "a/b/c", "org/na..me", "org/-x", "org/x@../y", "org/x@", "org/x@/main", "org/n me"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        xsa_error e = {0};
        CHECK_MSG(hub_parse_id(bad[i], &m, &e) == XSA_EBADINPUT, "%s accepted", bad[i]);
    }
    unsetenv("HF_HUB_CACHE");
}

TEST(test_good_filename) {
    const char *ok[] = {"model.safetensors", "sub/dir/model-00001-of-00002.safetensors", "a.b", "..a", "x/.y"};
    const char *bad[] = {"", "/etc/passwd", "../x", "a/../b", "a/..", "./a", "a/./b", "a//b", "a/", "a\\b", "a\nb", "a\tb"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) CHECK_MSG(hub_good_filename(ok[i]), "%s refused", ok[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK_MSG(!hub_good_filename(bad[i]), "%s accepted", bad[i]);
    char name[600];
    memset(name, 'a', sizeof name);
    name[511] = '\0';
    CHECK(hub_good_filename(name));
    name[511] = 'a';
    name[512] = '\0';
    CHECK(!hub_good_filename(name));  // 512 bytes and more: refused
}

TEST(test_is_commit) {
    CHECK(hub_is_commit("0123456789abcdef0123456789abcdef01234567"));
    CHECK(!hub_is_commit("0123456789ABCDEF0123456789abcdef01234567"));
    CHECK(!hub_is_commit("0123456789abcdef0123456789abcdef0123456"));
    CHECK(!hub_is_commit("main"));
}

static int has_list(void *ctx, const char *name) {
    for (const char *const *p = ctx; *p; p++)
        if (!strcmp(*p, name)) return 1;
    return 0;
}

TEST(test_pick_weights_and_tokenizer) {
    const char *both[] = {"pytorch_model.bin", "model.safetensors", "tokenizer.model", "tokenizer.json", NULL};
    const char *sharded[] = {"pytorch_model.bin", "model.safetensors.index.json", "tokenizer.model", NULL};
    const char *torch[] = {"pytorch_model.bin.index.json", "pytorch_model.bin", NULL};
    const char *torch_sharded[] = {"pytorch_model.bin.index.json", NULL};
    const char *none[] = {"flax_model.msgpack", NULL};
    const char *vocab_files[] = {"merges.txt", "model.safetensors", "vocab.json", NULL};  // facebook/opt-*
    const char *vocab_only[] = {"vocab.json", NULL};
    CHECK_STR(hub_pick_weights(has_list, both), "model.safetensors");
    CHECK_STR(hub_pick_tokenizer(has_list, both), "tokenizer.json");
    CHECK_STR(hub_pick_weights(has_list, sharded), "model.safetensors.index.json");
    CHECK_STR(hub_pick_tokenizer(has_list, sharded), "tokenizer.model");
    CHECK_STR(hub_pick_weights(has_list, torch), "pytorch_model.bin");
    CHECK_STR(hub_pick_weights(has_list, torch_sharded), "pytorch_model.bin.index.json");
    CHECK(hub_pick_weights(has_list, none) == NULL && hub_pick_tokenizer(has_list, none) == NULL);
    CHECK_STR(hub_pick_tokenizer(has_list, vocab_files), "vocab.json");
    CHECK(hub_pick_tokenizer(has_list, vocab_only) == NULL);
    CHECK(hub_is_index("model.safetensors.index.json") && !hub_is_index("model.safetensors"));
}

static void put(const char *dir, const char *name, const char *text) {
    char p[600];
    xsa_error err = {0};
    snprintf(p, sizeof p, "%s/%s", dir, name);
    CHECK(file_write_atomic(p, text, strlen(text), &err) == 0);
}

TEST(test_index_shards_and_missing) {
    char dir[] = "/tmp/xsa_hub_test_XXXXXX", p[600], missing[1024], **names = NULL;
    CHECK(mkdtemp(dir) != NULL);
    int n = 0;
    xsa_error err = {0};
    put(dir, "model.safetensors.index.json", "{\"weight_map\": {\"a\": \"s1.safetensors\", \"b\": \"s2.safetensors\", "
                                             "\"c\": \"s1.safetensors\"}}");
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    CHECK(hub_index_shards(p, &names, &n, &err) == 0);
    CHECK_EQ_INT(n, 2);  // distinct, in order
    CHECK(n == 2 && !strcmp(names[0], "s1.safetensors") && !strcmp(names[1], "s2.safetensors"));
    hub_names_free(names, n);
    // No config, no tokenizer, no shards: all named; the tokenizer does not count as essential.
    CHECK_EQ_INT(hub_snapshot_missing(dir, missing, sizeof missing), 3);
    CHECK_STR(missing, "config.json, tokenizer.json, tokenizer.model or vocab.json + merges.txt, s1.safetensors, s2.safetensors");
    put(dir, "config.json", "{}");
    put(dir, "s1.safetensors", "x");
    put(dir, "s2.safetensors", "x");
    CHECK_EQ_INT(hub_snapshot_missing(dir, missing, sizeof missing), 0);
    CHECK_STR(missing, "tokenizer.json, tokenizer.model or vocab.json + merges.txt");
    put(dir, "vocab.json", "{}");  // without merges.txt: still missing
    CHECK_EQ_INT(hub_snapshot_missing(dir, missing, sizeof missing), 0);
    CHECK_STR(missing, "tokenizer.json, tokenizer.model or vocab.json + merges.txt");
    put(dir, "tokenizer.model", "x");
    CHECK_EQ_INT(hub_snapshot_missing(dir, missing, sizeof missing), 0);
    CHECK_STR(missing, "");
    // An index naming a path outside the snapshot, or not a string, is refused whole.
    const char *evil[] = {"{\"weight_map\": {\"a\": \"../x.safetensors\"}}", "{\"weight_map\": {\"a\": 3}}",
                          "{\"weight_map\": [\"a\"]}", "not json"};
    for (size_t i = 0; i < sizeof evil / sizeof evil[0]; i++) {
        put(dir, "bad.index.json", evil[i]);
        snprintf(p, sizeof p, "%s/bad.index.json", dir);
        xsa_error e = {0};
        CHECK_MSG(hub_index_shards(p, &names, &n, &e) == XSA_EBADINPUT && names == NULL && n == 0, "%s", evil[i]);
    }
    // More distinct shards than a checkpoint may have (the loader's ST_MAX_SHARDS) is refused, by
    // name, at once: the index of a stranger's repo once listed 100000 shard names, whose
    // pairwise de-duplication ran for hours before anything was downloaded.
    {
        struct sbuf big = {0};
        sbuf_puts(&big, "{\"weight_map\": {");
        for (int i = 0; i < 100000; i++) sbuf_printf(&big, "%s\"t%d\": \"s%d.safetensors\"", i ? ", " : "", i, i);
        sbuf_puts(&big, "}}");
        put(dir, "bad.index.json", big.s);
        sbuf_free(&big);
        snprintf(p, sizeof p, "%s/bad.index.json", dir);
        xsa_error e = {0};
        CHECK(hub_index_shards(p, &names, &n, &e) == XSA_EBADINPUT && names == NULL && n == 0);
        CHECK(strstr(e.msg, "bad.index.json: names 100000 shard files, more than the 1024") != NULL);
        // Many tensors in few shards: the shards once each, in the order they first appear.
        struct sbuf many = {0};
        sbuf_puts(&many, "{\"weight_map\": {");
        for (int i = 0; i < 100000; i++) sbuf_printf(&many, "%s\"t%d\": \"s%d.safetensors\"", i ? ", " : "", i, (i + 3) % 5);
        sbuf_puts(&many, "}}");
        put(dir, "bad.index.json", many.s);
        sbuf_free(&many);
        CHECK(hub_index_shards(p, &names, &n, &e) == 0 && n == 5);
        CHECK(n == 5 && !strcmp(names[0], "s3.safetensors") && !strcmp(names[1], "s4.safetensors") &&
              !strcmp(names[2], "s0.safetensors") && !strcmp(names[4], "s2.safetensors"));
        hub_names_free(names, n);
    }
    const char *files[] = {"model.safetensors.index.json", "config.json", "s1.safetensors", "s2.safetensors",
                           "tokenizer.model", "bad.index.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

RUN_TESTS(T(test_parse_id), T(test_good_filename), T(test_is_commit), T(test_pick_weights_and_tokenizer),
          T(test_index_shards_and_missing))
