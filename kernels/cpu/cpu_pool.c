// cpu_pool.c: workers sleep on a condition variable between jobs and claim tasks of the
// current job with an atomic counter (dynamic scheduling balances causal attention rows).
#include "kernels/cpu/cpu_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct cpu_pool {
    int n_threads;
    pthread_t *threads;       // (n_threads - 1)
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned long generation; // bumped per job; workers run a job once per generation
    int stopping;
    int busy;                 // workers still inside the current job
    // The current job.
    cpu_task_fn fn;
    void *ctx;
    int n_tasks;
    atomic_int next;
};

struct worker_arg {
    struct cpu_pool *p;
    int w;
};

static void pool_drain(struct cpu_pool *p, int w) {
    for (;;) {
        int i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n_tasks) return;
        p->fn(p->ctx, i, w);
    }
}

static void *pool_worker(void *arg) {
    struct worker_arg wa = *(struct worker_arg *)arg;
    free(arg);
    struct cpu_pool *p = wa.p;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stopping && p->generation == seen) pthread_cond_wait(&p->wake, &p->mu);
        if (p->stopping) break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        pool_drain(p, wa.w);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct cpu_pool *cpu_pool_create(int n_threads) {
    if (n_threads < 1) n_threads = 1;
    struct cpu_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n_threads = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    p->threads = calloc((size_t)n_threads, sizeof *p->threads);
    if (!p->threads) {
        cpu_pool_destroy(p);
        return NULL;
    }
    for (int w = 1; w < n_threads; w++) {
        struct worker_arg *wa = malloc(sizeof *wa);
        if (!wa) break;
        wa->p = p;
        wa->w = w;
        if (pthread_create(&p->threads[w - 1], NULL, pool_worker, wa) != 0) {
            free(wa);
            break;
        }
        p->n_threads++;
    }
    if (p->n_threads != n_threads) {
        cpu_pool_destroy(p);
        return NULL;
    }
    return p;
}

int cpu_pool_threads(const struct cpu_pool *p) { return p->n_threads; }

void cpu_pool_run(struct cpu_pool *p, int n_tasks, cpu_task_fn fn, void *ctx) {
    if (n_tasks <= 0) return;
    if (p->n_threads == 1 || n_tasks == 1) {
        for (int i = 0; i < n_tasks; i++) fn(ctx, i, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->n_tasks = n_tasks;
    atomic_store(&p->next, 0);
    p->busy = p->n_threads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    pool_drain(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->busy > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void cpu_pool_destroy(struct cpu_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int w = 1; w < p->n_threads; w++) pthread_join(p->threads[w - 1], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p);
}
