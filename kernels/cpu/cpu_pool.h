// cpu_pool.h: a fixed set of worker threads that run numbered tasks of one job at a time.
// Tasks of a job are independent and each writes only its own outputs, so results never
// depend on which thread ran a task or on how many threads there are.
#ifndef XSA_KERNELS_CPU_POOL_H
#define XSA_KERNELS_CPU_POOL_H

// Runs task `i` of a job on worker `w` (0 <= w < n_threads, for per-thread scratch).
typedef void (*cpu_task_fn)(void *ctx, int i, int w);

struct cpu_pool;

// Starts n_threads - 1 workers (the caller is worker 0). Returns NULL when out of resources.
struct cpu_pool *cpu_pool_create(int n_threads);
int cpu_pool_threads(const struct cpu_pool *p);
// Runs tasks 0..n_tasks-1 across the workers and the caller; returns when all are done.
void cpu_pool_run(struct cpu_pool *p, int n_tasks, cpu_task_fn fn, void *ctx);
void cpu_pool_destroy(struct cpu_pool *p);

#endif
