// bench_ppl.c: `ppl` throughput beside `logprobs`-style scoring of the same tokens, and the
// cost of --kl's distribution output. Model: ../shared's stories260K (a real pretrained
// llama, 512 context) when present, else demo/sa (1024 vocab, 256 context); tokens: a
// pseudo-random stream (what is scored does not change the work), in windows of the model's
// context. Prints tokens/s of:
//   direct   one row per window, every target an entry, backend_score per batch (the batch
//            builder as logprobs built its row)
//   ppl      ppl_score over the same windows (planning, packing, NLL arrays)
//   ppl x2   ppl_score with two models (the model twice), and with --kl (distribution chunks
//            of every target; off it costs nothing: a NULL test per batch)
//   probe    ppl_score with the attention statistics at every target (`xsa-eval probe`), as a
//            fraction of the plain ppl time
// Usage: build/bench/bench_ppl [tokens (default 65536)] [threads (default 0: all)] [model] [modes]
//   model: a checkpoint path, or random26m for bench/random_checkpoint.h's 26.2M llama (written
//   to a temporary folder; context 1024); modes: a comma list of direct,ppl,x2,kl,probe (default
//   all; at 1M tokens on the 26M llama each is minutes on 2 cores, so pick).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_util.h"
#include "bench/random_checkpoint.h"
#include "eval/ppl.h"
#include "kernels/batch.h"
#include "model/model.h"
#include "common/fileio.h"

int main(int argc, char **argv) {
    long n_tok = argc > 1 ? atol(argv[1]) : 65536;
    int threads = argc > 2 ? atoi(argv[2]) : 0;
    const char *want = argc > 3 ? argv[3] : "", *modes = argc > 4 ? argv[4] : "direct,ppl,x2,kl,probe";
    char path[4096], tmp[] = "/tmp/xsa-bench-ppl-XXXXXX";
    const char *sh = getenv("XSA_SHARED");  // as the tests find ../shared
    snprintf(path, sizeof path, "%s/benchdata/models/stories260K/stories260K.bin", sh && *sh ? sh : "../shared");
    int real = file_exists(path);
    if (!real) snprintf(path, sizeof path, "demo/sa");
    xsa_error err = {0};
    const char *what = real ? "real stories260K" : "demo/sa fixture: ../shared absent";
    if (!strcmp(want, "random26m")) {
        if (!mkdtemp(tmp) || random_checkpoint_write(tmp, 0, &err)) {
            fprintf(stderr, "cannot write the random llama: %s\n", err.msg[0] ? err.msg : tmp);
            return 3;
        }
        snprintf(path, sizeof path, "%s", tmp), what = "random 26.2M llama";
    } else if (*want) {
        snprintf(path, sizeof path, "%s", want), what = "given";
    }
    struct model m;
    if (model_load(&m, path, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 3;
    }
    int ctx = m.cfg.max_seq_len > 0 && m.cfg.max_seq_len < 1024 ? m.cfg.max_seq_len : 1024;
    struct backend_options o = {.n_threads = threads};
    struct backend be[2];
    for (int i = 0; i < 2; i++)
        if (backend_open(&be[i], "cpu", &m, &o, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 3;
        }
    struct ppl_docs d = {.stream = 1};
    int32_t *tok = malloc((size_t)(n_tok + 1) * sizeof *tok);
    unsigned s = 12345;
    for (long i = 0; i <= n_tok; i++) tok[i] = (int32_t)((s = s * 1103515245u + 12345u) >> 8) % m.cfg.vocab_size;
    ppl_docs_add(&d, tok, (size_t)n_tok + 1, &err);
    printf("model %s (%s, %.1fM parameters), %ld tokens, windows of %d, %d threads, batches of %d tokens\n", path, what,
           (double)m.n_params / 1e6, n_tok, ctx, be[0].n_threads, be[0].batch_tokens);
    if (!strcmp(want, "random26m")) {  // loaded: the folder is not needed any more
        char f[4200];
        snprintf(f, sizeof f, "%s/model.safetensors", tmp), remove(f);
        snprintf(f, sizeof f, "%s/config.json", tmp), remove(f);
        remove(tmp);
    }
    static const char *mode_names[5] = {"direct", "ppl", "x2", "kl", "probe"};
    int on[5];
    for (int i = 0; i < 5; i++) {
        const char *h = strstr(modes, mode_names[i]);
        size_t n = strlen(mode_names[i]);
        on[i] = h && (h == modes || h[-1] == ',') && (h[n] == ',' || h[n] == '\0');
    }

    // direct: windows packed into batches of batch_tokens, as logprobs scores its one row
    double t0 = timing_now_s(), t_direct = 0;
    struct batch_builder bb;
    batch_init(&bb);
    float *lp = malloc(sizeof(float) * (size_t)be[0].batch_tokens);
    uint8_t *gr = malloc((size_t)be[0].batch_tokens);
    long scored = n_tok / ctx * ctx;  // targets of the whole windows, in every mode
    for (long w = 0; on[0] && w + ctx <= n_tok; w += ctx) {
        int first;
        if (batch_n_tokens(&bb) + ctx > be[0].batch_tokens) {
            struct score_batch b = batch_view(&bb);
            backend_score(&be[0], &b, lp, gr, &err);
            batch_reset(&bb);
        }
        batch_add_row(&bb, tok + w, ctx, &first, &err);
        for (int k = 0; k < ctx; k++) batch_add_entry(&bb, first + k, tok[w + k + 1], &err);
    }
    if (batch_n_tokens(&bb)) {
        struct score_batch b = batch_view(&bb);
        backend_score(&be[0], &b, lp, gr, &err);
    }
    if (on[0]) t_direct = timing_now_s() - t0;
    batch_free(&bb);

    struct backend *bes[2] = {&be[0], &be[1]};
    struct ppl_scores sc[2];
    struct ppl_kl kl = {0};
    struct ppl_probe pr[2];
    double t[4] = {0};
    for (int mode = 0; mode < 4; mode++) {  // ppl, ppl x2, ppl x2 --kl, probe
        if (!on[mode + 1]) continue;
        int nm = mode == 1 || mode == 2 ? 2 : 1;
        t0 = timing_now_s();
        if (ppl_score(bes, nm, &d, ctx, ctx, sc, mode == 2 ? &kl : NULL, mode == 3 ? pr : NULL, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 3;
        }
        t[mode] = timing_now_s() - t0;
        for (int i = 0; i < nm; i++) ppl_scores_free(&sc[i]);
        if (mode == 3) ppl_probe_free(&pr[0]);
        ppl_kl_free(&kl);
    }
    if (on[0]) printf("direct     %10.0f tokens/s  (%.1f s)\n", scored / t_direct, t_direct);
    if (on[1]) printf("ppl        %10.0f tokens/s  (%.1f s", scored / t[0], t[0]);
    if (on[1]) on[0] ? printf("; %.3fx direct)\n", t_direct / t[0]) : printf(")\n");
    if (on[2]) printf("ppl x2     %10.0f tokens/s of both models\n", scored / t[1]);
    if (on[3]) printf("ppl x2 kl  %10.0f tokens/s of both models", scored / t[2]);
    if (on[3]) on[2] ? printf(" (%.2fx the time without --kl)\n", t[2] / t[1]) : printf("\n");
    if (on[4]) printf("probe      %10.0f tokens/s", scored / t[3]);
    if (on[4]) on[1] ? printf("  (statistics cost %+.1f%% of the ppl time)\n", 100 * (t[3] / t[0] - 1)) : printf("\n");
    free(lp);
    free(gr);
    free(tok);
    ppl_docs_free(&d);
    for (int i = 0; i < 2; i++) backend_close(&be[i]);
    model_free(&m);
    return 0;
}
