// fuzz_results.c: a results file (the baseline a CI gate reads, from anyone) -> results_read_json,
// then the training step report --trend reads of it (trend_step, trend_series). The same bytes
// as a Hugging Face Trainer's trainer_state.json, then as config.json, in a checkpoint-7 folder
// (trend_checkpoint_step: the global_step / step it records, a note that fits its buffer).
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/results.h"
#include "eval/trend.h"
#include "tests/fuzz/fuzz_util.h"

static void checkpoint_step(const char *dir) {
    long long step = -1;
    char note[TREND_NOTE_MAX];
    memset(note, 'x', sizeof note);  // so that a note left unterminated is caught below
    const char *from = trend_checkpoint_step(dir, NULL, "stage1-step1000-tokens5B", &step, note, sizeof note);
    if ((from && (step < 0 || step > 2147483647LL)) || !memchr(note, 0, sizeof note)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_results_%ld.json", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    struct results r;
    xsa_error err = {0};
    int rc = results_read_json(&r, path, &err);
    fuzz_check_error(rc, &err);
    if (!rc) {
        long long step;
        xsa_error e2 = {0};
        fuzz_check_error(trend_step(&r, path, &step, &e2), &e2);
        (void)trend_series(&r);
        results_free(&r);
    }
    char base[256], dir[300], file[340];
    fuzz_path(base, sizeof base, "trend");
    mkdir(base, 0700);
    snprintf(dir, sizeof dir, "%s/checkpoint-7", base);  // a name that reads step 7
    mkdir(dir, 0700);
    snprintf(file, sizeof file, "%s/trainer_state.json", dir);
    fuzz_write(file, data, size);
    checkpoint_step(dir);
    snprintf(file, sizeof file, "%s/config.json", dir);
    fuzz_write(file, data, size);
    checkpoint_step(dir);
    unlink(file);
    snprintf(file, sizeof file, "%s/trainer_state.json", dir);
    unlink(file);
    return 0;
}
