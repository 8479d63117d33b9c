// The training step run records for a checkpoint (eval/trend.c): trend_name_step on the
// names the training codes people use write (and names that must not read as a step), and the
// order of trend_checkpoint_step: config.json, the step the torch.save file saved, the name.
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/trend.h"
#include "tests/check.h"

TEST(test_names_with_a_step) {
    static const struct {
        const char *name;
        long long step;
    } cases[] = {
        {"step_200", 200}, {"step-7", 7}, {"step0", 0}, {"iter_30", 30}, {"ckpt_5.pt", 5},  // as before
        {"checkpoint-500", 500},                          // the Hugging Face Trainer's folders
        {"state_step010000.pt", 10000},                   // modded-nanogpt's state files
        {"epoch=3-step=1000.ckpt", 1000},                 // Lightning's ModelCheckpoint default
        {"global_step=42.ckpt", 42},
        {"model_00010000.bin", 10000},                    // llm.c's train_gpt2.cu
        {"step143000", 143000},                           // Pythia's Hub revisions
        {"stage1-step1000-tokens5B", 1000},               // OLMo's Hub revisions
        {"run_step_200", 200},
        {"step1000-unsharded", 1000},                     // OLMo's checkpoint folders
        {"step_2147483647", 2147483647LL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        long long s = -1;
        CHECK_MSG(trend_name_step(cases[i].name, &s) == 1 && s == cases[i].step, "%s: %lld", cases[i].name, s);
    }
}

TEST(test_names_without_a_step) {
    static const char *names[] = {
        "final", "ckpt.pt", "last.ckpt", "checkpoints", "laststep5", "stepwise-2", "step_", "step_2147483648",
        "step_12abc", "model_final.bin", "model_123.pt", "model_.bin", "xstep_5", "iterate-3", "main",
        "checkpoint_12",             // accelerate's automatic names count saves, not steps
        "llama-3b-ckpt_2024-05-01",  // a date
        "gpt2-ckpt-3_lr-0.1",        // a setting
        "run_iter3", "model_7.bin",  // mid-name iter; not llm.c's eight digits
        "step=5", "checkpoint5",
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        long long s = -1;
        CHECK_MSG(trend_name_step(names[i], &s) == 0 && s == -1, "%s read as step %lld", names[i], s);
    }
}

// The order run asks in: config.json's "step", then the step the checkpoint file saved, then the name.
TEST(test_checkpoint_step_order) {
    char dir[] = "/tmp/xsa_trend_XXXXXX", ck[128], cfg[160], note[600];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(ck, sizeof ck, "%s/step_300", dir);
    CHECK(mkdir(ck, 0700) == 0);
    long long step = -1, saved = 42;
    const char *from = trend_checkpoint_step(ck, NULL, NULL, &step, note, sizeof note);
    CHECK_MSG(from && !strcmp(from, "path") && step == 300, "%s %lld", from ? from : "(none)", step);
    from = trend_checkpoint_step(ck, &saved, NULL, &step, note, sizeof note);
    CHECK_MSG(from && !strcmp(from, "checkpoint") && step == 42, "%s %lld", from ? from : "(none)", step);
    snprintf(cfg, sizeof cfg, "%s/config.json", ck);
    FILE *f = fopen(cfg, "w");
    if (f) fputs("{\"step\": 7}", f), fclose(f);
    from = trend_checkpoint_step(ck, &saved, NULL, &step, note, sizeof note);
    CHECK_MSG(from && !strcmp(from, "config.json") && step == 7, "%s %lld", from ? from : "(none)", step);
    unlink(cfg);
    rmdir(ck);
    rmdir(dir);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs(text, f), fclose(f);
}

// The Hugging Face Trainer's trainer_state.json (its global_step) beside the model: after
// config.json's "step" and the saved step, before the name, which it overrides with a note
// when they differ; a file beside a model file counts too; a bad one is a note, not a step.
TEST(test_trainer_state_step) {
    char dir[] = "/tmp/xsa_trend_XXXXXX", ck[128], ts[160], cfg[160], file[160], note[TREND_NOTE_MAX];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(ck, sizeof ck, "%s/checkpoint-5", dir);
    CHECK(mkdir(ck, 0700) == 0);
    snprintf(ts, sizeof ts, "%s/trainer_state.json", ck);
    snprintf(cfg, sizeof cfg, "%s/config.json", ck);
    snprintf(file, sizeof file, "%s/model.safetensors", ck);
    long long step = -1, saved = 42;
    const char *from = trend_checkpoint_step(ck, NULL, NULL, &step, note, sizeof note);
    CHECK_MSG(from && !strcmp(from, "path") && step == 5 && !note[0], "%s %lld", from ? from : "(none)", step);

    write_file(ts, "{\"best_model_checkpoint\": null, \"global_step\": 5, \"log_history\": []}");
    from = trend_checkpoint_step(ck, NULL, NULL, &step, note, sizeof note);
    CHECK_MSG(from && !strcmp(from, "trainer_state") && step == 5 && !note[0], "%s %lld %s", from ? from : "(none)", step, note);
    write_file(ts, "{\"global_step\": 3, \"log_history\": [{\"step\": 3}]}");  // a renamed folder: the file wins
    from = trend_checkpoint_step(ck, NULL, NULL, &step, note, sizeof note);
    CHECK_MSG(from && !strcmp(from, "trainer_state") && step == 3 && strstr(note, "global_step 3, but the checkpoint's name "
                                                                                  "reads step 5; recording 3"),
              "%s %lld %s", from ? from : "(none)", step, note);
    write_file(file, "");  // --model DIR/model.safetensors: the file beside it
    from = trend_checkpoint_step(file, NULL, NULL, &step, note, sizeof note);
    CHECK_MSG(from && !strcmp(from, "trainer_state") && step == 3, "%s %lld", from ? from : "(none)", step);
    from = trend_checkpoint_step(ck, &saved, NULL, &step, note, sizeof note);  // the weights file's own step first
    CHECK_MSG(from && !strcmp(from, "checkpoint") && step == 42 && !note[0], "%s %lld", from ? from : "(none)", step);
    write_file(cfg, "{\"step\": 7}");
    from = trend_checkpoint_step(ck, NULL, NULL, &step, note, sizeof note);
    CHECK_MSG(from && !strcmp(from, "config.json") && step == 7, "%s %lld", from ? from : "(none)", step);
    unlink(cfg);

    static const char *bad[] = {"{\"global_step\": 2.5}", "{\"global_step\": -1}", "{\"global_step\": \"2\"}", "[2]", "{\"global_step\": 2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {  // the name then, and a note naming the file
        write_file(ts, bad[i]);
        step = -1;
        from = trend_checkpoint_step(ck, NULL, NULL, &step, note, sizeof note);
        CHECK_MSG(from && !strcmp(from, "path") && step == 5 && strstr(note, "trainer_state.json: ") &&
                  strstr(note, "no step taken from it"), "%s: %s %lld %s", bad[i], from ? from : "(none)", step, note);
    }
    unlink(ts);
    unlink(file);
    rmdir(ck);
    rmdir(dir);
}

RUN_TESTS(T(test_names_with_a_step), T(test_names_without_a_step), T(test_checkpoint_step_order), T(test_trainer_state_step))
