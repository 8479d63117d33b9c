// dist.h: the ranks of a data-parallel run (docs/distributed.md). `mpirun -np N xsa-eval run`
// or `srun xsa-eval run` starts N ranks; rank 0 reads, encodes and deals the requests, every
// rank scores its share, rank 0 gathers the scores and writes everything.
//
// Two implementations of one interface: eval/dist_mpi.c (Open MPI, built when mpicc or its
// pkg-config is present) and eval/dist_none.c (one process). Without a launcher, or when it
// started one rank, both are rank 0 of 1 and no MPI runtime is started. Messages are byte
// strings between rank 0 and one other rank; an error on any rank ends the whole job
// (dist_fail) instead of leaving the others waiting.
#ifndef XSA_EVAL_DIST_H
#define XSA_EVAL_DIST_H

#include <stddef.h>

#include "common/error.h"

// Reads the launcher's environment (dist_env_size) and, when it started several ranks,
// starts MPI. Idempotent. Fails (exit 2) when several ranks were started but this build has no
// MPI, or srun was run without an MPI plugin (each rank would run the whole evaluation).
int dist_start(xsa_error *err);
// Ends MPI when dist_start started it (every rank, after its last message).
void dist_stop(void);
int dist_rank(void);        // 0 .. size-1
int dist_size(void);        // 1 without a launcher
int dist_local_rank(void);  // the rank among those on this node (MPI_COMM_TYPE_SHARED)
int dist_local_size(void);

// Sends n bytes to rank `to`; receives the next message from rank `from` with that tag into
// *buf (malloc'ed, caller frees; *n its length). Blocking, in order per (rank, tag).
int dist_send(int to, int tag, const void *buf, size_t n, xsa_error *err);
int dist_recv(int from, int tag, char **buf, size_t *n, xsa_error *err);

// A failure on this rank: prints "xsa-eval run: rank R of N: MSG" on stderr and ends every
// rank of the job with exit code `code` (MPI_Abort). With one rank: returns code.
int dist_fail(int code, const char *msg);

// "Open MPI v4.1.4 ..." when MPI is built in, else "not built in" (for --version).
const char *dist_build_desc(void);

// The launcher's environment, for both implementations (eval/dist_env.c):
// the world size it announced (1 without one; OMPI_COMM_WORLD_SIZE, else PMI_SIZE or
// SLURM_NTASKS beside PMIX_RANK / PMI_RANK), and in *launcher its name. srun without an MPI
// plugin (SLURM_PROCID and SLURM_NTASKS > 1, no PMI) is an error saying to use --mpi=pmix.
int dist_env_size(const char **launcher, int *size, xsa_error *err);
// A rank's GPU: with several ranks on a node and --device auto or cuda (no index), narrows
// CUDA_VISIBLE_DEVICES to the local rank's entry of it (local_rank modulo its length), or to
// GPU `local_rank` when unset, so that the rank's cuda:0 is its own GPU. cuda:N is left alone.
int dist_env_pick_gpu(const char *device, int local_rank, int local_size, xsa_error *err);
// CPU threads for a rank: `requested` when > 0; else the CPUs this process may run on when
// the launcher bound it to fewer than the machine has; else the machine's CPUs / local_size.
int dist_env_threads(int requested, int local_size);

#endif
