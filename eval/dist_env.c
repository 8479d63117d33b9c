// dist_env.c: what the launcher (mpirun, srun) says in the environment, and the device and
// CPU share of a rank; used by both dist implementations (eval/dist.h).
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/dist.h"

// A whole number 1..1<<20 in the variable, else 0 (unset or not a count).
static int env_count(const char *name) {
    const char *s = getenv(name);
    if (!s || *s < '0' || *s > '9') return 0;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v < 1 || v > 1 << 20 ? 0 : (int)v;
}

int dist_env_size(const char **launcher, int *size, xsa_error *err) {
    *launcher = "none";
    *size = 1;
    int ompi = env_count("OMPI_COMM_WORLD_SIZE");
    int pmi = getenv("PMIX_RANK") || getenv("PMI_RANK") || getenv("PMI_FD");
    int slurm_tasks = getenv("SLURM_PROCID") ? env_count("SLURM_NTASKS") : 0;
    if (ompi) {
        *launcher = "mpirun";
        *size = ompi;
    } else if (pmi) {
        *launcher = getenv("SLURM_PROCID") ? "srun" : "PMI";
        *size = env_count("PMI_SIZE") ? env_count("PMI_SIZE") : slurm_tasks ? slurm_tasks : 2;  // 2: ask MPI
    } else if (slurm_tasks > 1) {
        return xsa_fail(err, XSA_EBADINPUT, "srun started %d tasks without an MPI plugin, so each would run the whole "
                        "evaluation; launch with srun --mpi=pmix (or pmi2), or mpirun", slurm_tasks);
    }
    return 0;
}

int dist_env_pick_gpu(const char *device, int local_rank, int local_size, xsa_error *err) {
    if (local_size < 2 || !device || (strcmp(device, "auto") && strcmp(device, "cuda"))) return 0;
    char pick[64];
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (vis && *vis) {
        int n = 1;
        for (const char *p = vis; *p; p++) n += *p == ',';
        int want = local_rank % n, i = 0;
        const char *p = vis;
        while (i < want) i += *p++ == ',';
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof pick)
            return xsa_fail(err, XSA_EBADINPUT, "CUDA_VISIBLE_DEVICES=%.200s: entry %d is empty or too long; list GPU "
                            "indices or UUIDs separated by commas", vis, want);
        memcpy(pick, p, len);
        pick[len] = '\0';
    } else {
        snprintf(pick, sizeof pick, "%d", local_rank);
    }
    if (setenv("CUDA_VISIBLE_DEVICES", pick, 1))
        return xsa_fail(err, XSA_ERUNTIME, "cannot set CUDA_VISIBLE_DEVICES for local rank %d", local_rank);
    return 0;
}

int dist_env_threads(int requested, int local_size) {
    if (requested > 0) return requested;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    int mine = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (online < 1) online = 1;
    if (mine > 0 && mine < online) return mine;  // the launcher bound this rank to its share
    long share = online / (local_size > 0 ? local_size : 1);
    return share > 0 ? (int)share : 1;
}
