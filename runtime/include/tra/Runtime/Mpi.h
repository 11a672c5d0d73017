/*===- Mpi.h - The distributed runtime's C ABI ----------------------------===*
 *
 * What generated distributed programs call for process-level concerns the
 * upstream `mpi` dialect does not cover: start-up checks (the number of
 * ranks the plan needs, a plan fingerprint exchanged so that every rank
 * runs the same program on the same inputs), non-blocking requests and
 * their waits, collectives on f16/bf16 payloads (reduced in f32), byte
 * counters for --profile, and failure handling: every MPI error aborts the
 * whole job with a message naming the rank, so no rank hangs.
 *
 * Ranks are devices: device d of the plan runs as MPI rank d of
 * MPI_COMM_WORLD.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TRA_RUNTIME_MPI_H
#define TRA_RUNTIME_MPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types of payloads and reductions. */
enum tra_mpi_dtype {
  TRA_MPI_F32 = 0,
  TRA_MPI_F16 = 1,
  TRA_MPI_BF16 = 2,
  TRA_MPI_I64 = 3
};
/* Reductions. */
enum tra_mpi_op {
  TRA_MPI_SUM = 0,
  TRA_MPI_MAX = 1,
  TRA_MPI_MIN = 2,
  TRA_MPI_PROD = 3
};

/* Initializes MPI (thread level FUNNELED), then checks on every rank that
 * the job has exactly `required_ranks` ranks (otherwise rank 0 prints the
 * mpirun command to use and all ranks exit 1) and that every rank has the
 * same `fingerprint` (otherwise the mismatching ranks are named and the job
 * exits 1). `program` and `argc/argv` are used for the messages. */
void tra_mpi_init(int *argc, char ***argv, int64_t required_ranks,
                  uint64_t fingerprint, const char *program);
int tra_mpi_rank(void);
int tra_mpi_size(void);
/* Finalizes MPI; with `print_profile` set, every rank prints its counters. */
void tra_mpi_finalize(int print_profile);

/* Point to point, blocking. `bytes` may exceed INT_MAX. */
void tra_mpi_send(const void *data, int64_t bytes, int dest, int tag);
void tra_mpi_recv(void *data, int64_t bytes, int source, int tag);

/* Non-blocking: returns a request handle for tra_mpi_wait. */
int64_t tra_mpi_isend(const void *data, int64_t bytes, int dest, int tag);
int64_t tra_mpi_irecv(void *data, int64_t bytes, int source, int tag);
void tra_mpi_wait(int64_t request);
void tra_mpi_wait_all(void);

/* In-place all-reduce of `count` elements over `nranks` ranks listed in
 * `ranks` (NULL with nranks 0: all ranks). f16/bf16 are reduced in f32. */
void tra_mpi_allreduce(void *data, int64_t count, int dtype, int op,
                       const int *ranks, int nranks);

/* Reduce-scatter over the `nranks` ranks listed in `ranks` (sorted): every
 * member contributes `send`, counts[0] + ... + counts[nranks-1] elements;
 * the j-th member receives the combined elements counts[0] + ... +
 * counts[j-1] onwards, counts[j] of them, in `recv`. f16/bf16 are reduced in
 * f32. */
void tra_mpi_reduce_scatter(const void *send, void *recv,
                            const int64_t *counts, int dtype, int op,
                            const int *ranks, int nranks);

/* Counters since init, of this rank. */
int64_t tra_mpi_bytes_sent(void);
int64_t tra_mpi_messages_sent(void);

/* Aborts the whole job: prints "tra: rank R: MESSAGE" and calls
 * MPI_Abort(MPI_COMM_WORLD, 1). */
void tra_mpi_fatal(const char *message);

#ifdef __cplusplus
}
#endif

#endif /* TRA_RUNTIME_MPI_H */
