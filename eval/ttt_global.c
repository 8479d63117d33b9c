// ttt_global.c: the phased TTT's global SGD pass (ttt_global.h).
#include "eval/ttt_global.h"

#include <math.h>
#include <stdlib.h>

#include "common/xalloc.h"
#include "kernels/cpu/cpu_train.h"

// The rate of chunk ci of n (train_val_ttt_global_sgd_distributed's warmup, then cosine).
static double chunk_lr(const struct ttt_settings *s, long ci, long n) {
    long warm = s->g_warmup_chunks < n - 1 ? s->g_warmup_chunks : n - 1;
    if (warm > 0 && ci < warm)
        return s->g_warmup_start_lr + (s->g_lr - s->g_warmup_start_lr) * ((double)ci / (double)(warm > 1 ? warm - 1 : 1));
    long steps = n - 1 - warm > 1 ? n - 1 - warm : 1, dci = ci - warm > 0 ? ci - warm : 0;
    return s->g_lr * 0.5 * (1.0 + cos(M_PI * (double)dci / (double)steps));
}

// One batch x[0..len) (targets x + 1) into the gradients: the mean loss over its tokens, summed by
// segment (respect: cut at each BOS and every seq_len tokens after a cut, RoPE at flat positions;
// else seq_len-token sequences from position 0). Returns the mean loss.
static double batch_grad(struct cpu_trainer *tr, const int32_t *x, long len, int seq_len, int bos, int respect) {
    cpu_trainer_zero_grad(tr);
    float inv = 1.0f / (float)len;
    double loss = 0;
    for (long a = 0; a < len;) {
        long doc_end = a + 1;
        if (respect)
            while (doc_end < len && x[doc_end] != bos) doc_end++;
        else
            doc_end = a + seq_len;
        for (long p = a; p < doc_end; p += seq_len) {
            long n = doc_end - p < seq_len ? doc_end - p : seq_len;
            loss += cpu_trainer_segment(tr, x + p, x + p + 1, (int)n, respect ? p : 0, respect && p ? x[p - 1] : -1, inv);
        }
        a = doc_end;
    }
    return loss / (double)len;
}

int ttt_global_sgd(struct model *m, int n_threads, const int32_t *tok, long n_tok, int seq_len, int bos,
                   const struct ttt_settings *s, xsa_error *err) {
    long total = n_tok - 1, chunk = s->g_chunk_tokens;
    long n_chunks = total > 0 ? (total + chunk - 1) / chunk : 0;
    if (n_chunks < 2 || s->g_epochs <= 0) return 0;  // (the last chunk is never trained on)
    struct cpu_trainer *tr = cpu_trainer_open(m, seq_len, n_threads, err);
    if (!tr) return err->code ? err->code : XSA_EBADINPUT;
    struct train_param *p;
    int np = cpu_trainer_params(tr, &p), rc = 0;
    int *all = xsa_malloc((size_t)np * sizeof *all);
    float **mom = xsa_calloc((size_t)np, sizeof *mom);
    for (int i = 0; i < np; i++) all[i] = i, mom[i] = xsa_calloc((size_t)p[i].n, sizeof(float));
    for (long ci = 0; ci < n_chunks - 1 && !rc; ci++) {
        long cs = ci * chunk, ce = cs + chunk < total ? cs + chunk : total, seqs = (ce - cs) / seq_len;
        double lr = chunk_lr(s, ci, n_chunks);
        for (int ep = 0; ep < s->g_epochs && !rc; ep++)
            for (long bs = 0; bs < seqs && !rc; bs += s->g_batch_seqs) {
                long be = bs + s->g_batch_seqs < seqs ? bs + s->g_batch_seqs : seqs;
                if (cs + be * seq_len + 1 > n_tok) continue;
                double loss = batch_grad(tr, tok + cs + bs * seq_len, (be - bs) * seq_len, seq_len, bos, s->g_respect_docs);
                if (!isfinite(loss))
                    rc = xsa_fail(err, XSA_ERUNTIME, "%s: the phased TTT's global SGD loss is %g at chunk %ld: the weights "
                                  "diverged; lower GLOBAL_TTT_LR", m->path, loss, ci + 1);
                else ttt_sgd_step(p, all, np, mom, s->g_grad_clip, s->g_momentum, lr);
            }
    }
    for (int i = 0; i < np; i++) free(mom[i]);
    free(mom);
    free(all);
    cpu_trainer_close(tr);
    return rc;
}
