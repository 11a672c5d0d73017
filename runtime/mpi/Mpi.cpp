//===- Mpi.cpp - The distributed runtime ----------------------------------===//

#include "tra/Runtime/Mpi.h"
#include "tra/Runtime/Tensor.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

/// Largest message MPI is given at once (counts are int).
constexpr int64_t kChunk = int64_t(1) << 30;

/// What the runtime hands to MPI for one kind of collective.
struct Collective {
  /// Collectives asked for (one per all-reduce or reduce-scatter of the
  /// program; a payload above 2^30 elements is handed over in pieces but
  /// counts once).
  int64_t calls = 0;
  /// Their payload: elements x the size of the MPI datatype they are handed
  /// over as (16-bit floats are reduced in f32: 4 bytes each). For a
  /// reduce-scatter, the whole contribution of this rank.
  int64_t bytes = 0;
};

struct State {
  int rank = 0;
  int size = 1;
  /// Point to point: what this rank handed to MPI_Send/MPI_Isend.
  int64_t p2pBytes = 0;
  int64_t p2pMessages = 0;
  Collective allReduce, reduceScatter;
  /// The collectives' traffic as a ring algorithm would send it (an
  /// all-reduce 2 (p - 1) / p of the payload in 2 (p - 1) messages, a
  /// reduce-scatter (p - 1) / p in p - 1): the cost model's formula, an
  /// estimate, not a count; MPI picks its own algorithm.
  int64_t ringBytes = 0;
  int64_t ringMessages = 0;
  std::string program = "PROGRAM";
  /// Outstanding non-blocking requests: handle -> MPI requests (one per
  /// chunk). Completed handles are erased.
  std::map<int64_t, std::vector<MPI_Request>> requests;
  int64_t nextRequest = 1;
  /// Sub-communicators by rank list.
  std::map<std::vector<int>, MPI_Comm> groups;
};

State &state() {
  static State s;
  return s;
}

/// Checks an MPI return code; on failure aborts the job naming the rank and
/// the call.
void check(int rc, const char *what) {
  if (rc == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::string message =
      std::string(what) + " failed: " + std::string(text, len);
  tra_mpi_fatal(message.c_str());
}

MPI_Comm commFor(const int *ranks, int nranks) {
  if (!ranks || nranks == 0 || nranks == state().size)
    return MPI_COMM_WORLD;
  std::vector<int> key(ranks, ranks + nranks);
  auto it = state().groups.find(key);
  if (it != state().groups.end())
    return it->second;
  MPI_Group world, group;
  check(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  check(MPI_Group_incl(world, nranks, ranks, &group), "MPI_Group_incl");
  MPI_Comm comm;
  // Collective over the members of the group only.
  check(MPI_Comm_create_group(MPI_COMM_WORLD, group, /*tag=*/0, &comm),
        "MPI_Comm_create_group");
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  state().groups[key] = comm;
  return comm;
}

MPI_Op mpiOp(int op) {
  switch (op) {
  case TRA_MPI_SUM:
    return MPI_SUM;
  case TRA_MPI_MAX:
    return MPI_MAX;
  case TRA_MPI_MIN:
    return MPI_MIN;
  case TRA_MPI_PROD:
    return MPI_PROD;
  }
  tra_mpi_fatal("unknown reduction");
  return MPI_SUM;
}

void allreduceChunked(void *data, int64_t count, MPI_Datatype type,
                      size_t elementSize, MPI_Op op, MPI_Comm comm) {
  auto *bytes = static_cast<char *>(data);
  for (int64_t done = 0; done < count;) {
    int n = int(std::min<int64_t>(count - done, INT_MAX / 2));
    check(PMPI_Allreduce(MPI_IN_PLACE, bytes + done * elementSize, n, type, op,
                        comm),
          "MPI_Allreduce");
    done += n;
  }
}

} // namespace

extern "C" {

void tra_mpi_fatal(const char *message) {
  std::fprintf(stderr, "tra: rank %d: %s\n", state().rank, message);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

void tra_mpi_init(int *argc, char ***argv, int64_t requiredRanks,
                  uint64_t fingerprint, const char *program) {
  State &s = state();
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided),
        "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  s.program = program ? program : "PROGRAM";

  if (s.size != requiredRanks) {
    if (s.rank == 0) {
      std::string args;
      for (int i = 1; argc && argv && i < *argc; ++i)
        args += std::string(" ") + (*argv)[i];
      std::fprintf(stderr,
                   "tra: %s needs %lld MPI ranks (one per device of its "
                   "plan) but runs on %d; run:\n  mpirun -np %lld %s%s\n",
                   s.program.c_str(), (long long)requiredRanks, s.size,
                   (long long)requiredRanks, s.program.c_str(), args.c_str());
    }
    MPI_Finalize();
    std::exit(1);
  }

  // Every rank must run the same plan on the same inputs.
  std::vector<uint64_t> all(s.size);
  check(MPI_Allgather(&fingerprint, 1, MPI_UINT64_T, all.data(), 1,
                      MPI_UINT64_T, MPI_COMM_WORLD),
        "MPI_Allgather");
  bool mismatch = false;
  for (int r = 0; r < s.size; ++r) {
    if (all[r] == all[0])
      continue;
    mismatch = true;
    if (s.rank == 0)
      std::fprintf(stderr,
                   "tra: rank %d runs a different program or plan than rank "
                   "0 (fingerprint %016llx, rank 0 has %016llx)\n",
                   r, (unsigned long long)all[r], (unsigned long long)all[0]);
  }
  if (mismatch) {
    MPI_Finalize();
    std::exit(1);
  }
}

int tra_mpi_rank(void) { return state().rank; }
int tra_mpi_size(void) { return state().size; }
// Point to point counted exactly, collectives by the ring estimate: the
// figure the cost model's "bytes moved" is comparable with.
int64_t tra_mpi_bytes_sent(void) {
  return state().p2pBytes + state().ringBytes;
}
int64_t tra_mpi_messages_sent(void) {
  return state().p2pMessages + state().ringMessages;
}

void tra_mpi_finalize(int printProfile) {
  State &s = state();
  tra_mpi_wait_all();
  if (printProfile) {
    std::fprintf(stderr,
                 "tra: rank %d: sent %lld bytes in %lld messages point to "
                 "point\n",
                 s.rank, (long long)s.p2pBytes, (long long)s.p2pMessages);
    std::fprintf(stderr,
                 "tra: rank %d: handed MPI %lld all_reduce (%lld bytes), %lld "
                 "reduce_scatter (%lld bytes); a ring would send %lld bytes "
                 "in %lld messages for them (estimate)\n",
                 s.rank, (long long)s.allReduce.calls,
                 (long long)s.allReduce.bytes, (long long)s.reduceScatter.calls,
                 (long long)s.reduceScatter.bytes, (long long)s.ringBytes,
                 (long long)s.ringMessages);
  }
  for (auto &[_, comm] : s.groups)
    if (comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  s.groups.clear();
  MPI_Finalize();
}

void tra_mpi_send(const void *data, int64_t bytes, int dest, int tag) {
  const char *p = static_cast<const char *>(data);
  int64_t done = 0;
  do {
    int n = int(std::min(bytes - done, kChunk));
    check(PMPI_Send(p + done, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD),
          "MPI_Send");
    done += n;
  } while (done < bytes);
  state().p2pBytes += bytes;
  state().p2pMessages += 1;
}

void tra_mpi_recv(void *data, int64_t bytes, int source, int tag) {
  char *p = static_cast<char *>(data);
  int64_t done = 0;
  do {
    int n = int(std::min(bytes - done, kChunk));
    check(PMPI_Recv(p + done, n, MPI_BYTE, source, tag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
    done += n;
  } while (done < bytes);
}

int64_t tra_mpi_isend(const void *data, int64_t bytes, int dest, int tag) {
  State &s = state();
  std::vector<MPI_Request> reqs;
  const char *p = static_cast<const char *>(data);
  for (int64_t done = 0; done < bytes || reqs.empty();) {
    int n = int(std::min(bytes - done, kChunk));
    reqs.emplace_back();
    check(MPI_Isend(p + done, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                    &reqs.back()),
          "MPI_Isend");
    done += n;
  }
  s.p2pBytes += bytes;
  s.p2pMessages += 1;
  int64_t handle = s.nextRequest++;
  s.requests[handle] = std::move(reqs);
  return handle;
}

int64_t tra_mpi_irecv(void *data, int64_t bytes, int source, int tag) {
  State &s = state();
  std::vector<MPI_Request> reqs;
  char *p = static_cast<char *>(data);
  for (int64_t done = 0; done < bytes || reqs.empty();) {
    int n = int(std::min(bytes - done, kChunk));
    reqs.emplace_back();
    check(MPI_Irecv(p + done, n, MPI_BYTE, source, tag, MPI_COMM_WORLD,
                    &reqs.back()),
          "MPI_Irecv");
    done += n;
  }
  int64_t handle = s.nextRequest++;
  s.requests[handle] = std::move(reqs);
  return handle;
}

void tra_mpi_wait(int64_t request) {
  State &s = state();
  auto it = s.requests.find(request);
  if (it == s.requests.end())
    tra_mpi_fatal("wait on an unknown or completed request");
  check(MPI_Waitall(int(it->second.size()), it->second.data(),
                    MPI_STATUSES_IGNORE),
        "MPI_Waitall");
  s.requests.erase(it);
}

void tra_mpi_wait_all(void) {
  while (!state().requests.empty())
    tra_mpi_wait(state().requests.begin()->first);
}

void tra_mpi_allreduce(void *data, int64_t count, int dtype, int op,
                       const int *ranks, int nranks) {
  State &s = state();
  int members = (ranks && nranks) ? nranks : s.size;
  if (ranks && nranks &&
      std::find(ranks, ranks + nranks, s.rank) == ranks + nranks)
    tra_mpi_fatal("all-reduce over a group this rank is not part of");
  MPI_Comm comm = commFor(ranks, nranks);
  MPI_Op mop = mpiOp(op);
  // The bytes of an element as the program holds it, and as MPI gets it.
  size_t elementSize = 4, mpiElementSize = 4;
  switch (dtype) {
  case TRA_MPI_F32:
    allreduceChunked(data, count, MPI_FLOAT, 4, mop, comm);
    break;
  case TRA_MPI_I64:
    elementSize = mpiElementSize = 8;
    allreduceChunked(data, count, MPI_INT64_T, 8, mop, comm);
    break;
  case TRA_MPI_F16:
  case TRA_MPI_BF16: {
    // MPI has no 16-bit float types: reduce in f32, round once.
    elementSize = 2;
    auto *bits = static_cast<uint16_t *>(data);
    std::vector<float> wide(count);
    bool half = dtype == TRA_MPI_F16;
    for (int64_t i = 0; i < count; ++i)
      wide[i] = half ? tra::rt::halfToFloat(bits[i])
                     : tra::rt::bfloat16ToFloat(bits[i]);
    allreduceChunked(wide.data(), count, MPI_FLOAT, 4, mop, comm);
    for (int64_t i = 0; i < count; ++i)
      bits[i] = half ? tra::rt::floatToHalf(wide[i])
                     : tra::rt::floatToBFloat16(wide[i]);
    break;
  }
  default:
    tra_mpi_fatal("unknown all-reduce element type");
  }
  s.allReduce.calls += 1;
  s.allReduce.bytes += count * int64_t(mpiElementSize);
  // The estimate: a ring all-reduce sends 2 (p - 1) / p of the payload.
  if (members > 1) {
    int64_t payload = count * int64_t(elementSize);
    s.ringBytes += 2 * (members - 1) * payload / members;
    s.ringMessages += 2 * (members - 1);
  }
}

void tra_mpi_reduce_scatter(const void *send, void *recv,
                            const int64_t *counts, int dtype, int op,
                            const int *ranks, int nranks) {
  State &s = state();
  int me = int(std::find(ranks, ranks + nranks, s.rank) - ranks);
  if (me == nranks)
    tra_mpi_fatal("reduce-scatter over a group this rank is not part of");
  MPI_Comm comm = commFor(ranks, nranks);
  MPI_Op mop = mpiOp(op);
  int64_t total = 0;
  std::vector<int> ints(nranks);
  for (int j = 0; j < nranks; ++j) {
    if (counts[j] > INT_MAX)
      tra_mpi_fatal("reduce-scatter slice of more than 2^31 elements");
    ints[j] = int(counts[j]);
    total += counts[j];
  }
  size_t elementSize = 4, mpiElementSize = 4;
  switch (dtype) {
  case TRA_MPI_F32:
    check(MPI_Reduce_scatter(send, recv, ints.data(), MPI_FLOAT, mop, comm),
          "MPI_Reduce_scatter");
    break;
  case TRA_MPI_I64:
    elementSize = mpiElementSize = 8;
    check(MPI_Reduce_scatter(send, recv, ints.data(), MPI_INT64_T, mop, comm),
          "MPI_Reduce_scatter");
    break;
  case TRA_MPI_F16:
  case TRA_MPI_BF16: {
    // Reduce in f32, round once.
    elementSize = 2;
    bool half = dtype == TRA_MPI_F16;
    auto *in = static_cast<const uint16_t *>(send);
    std::vector<float> wide(total), out(counts[me]);
    for (int64_t i = 0; i < total; ++i)
      wide[i] = half ? tra::rt::halfToFloat(in[i])
                     : tra::rt::bfloat16ToFloat(in[i]);
    check(MPI_Reduce_scatter(wide.data(), out.data(), ints.data(), MPI_FLOAT,
                             mop, comm),
          "MPI_Reduce_scatter");
    auto *bits = static_cast<uint16_t *>(recv);
    for (int64_t i = 0; i < counts[me]; ++i)
      bits[i] = half ? tra::rt::floatToHalf(out[i])
                     : tra::rt::floatToBFloat16(out[i]);
    break;
  }
  default:
    tra_mpi_fatal("unknown reduce-scatter element type");
  }
  s.reduceScatter.calls += 1;
  s.reduceScatter.bytes += total * int64_t(mpiElementSize);
  // The estimate: a ring reduce-scatter sends (p - 1) / p of the payload.
  if (nranks > 1) {
    s.ringBytes += (nranks - 1) * total * int64_t(elementSize) / nranks;
    s.ringMessages += nranks - 1;
  }
}

//===----------------------------------------------------------------------===//
// Profiling interposers
//===----------------------------------------------------------------------===//
//
// Compiled programs call MPI_Send, MPI_Recv and MPI_Allreduce directly (the
// lowering of the upstream mpi dialect). These definitions take the place
// of the library's (the MPI profiling interface): they count what is handed
// to MPI, as the runtime's own calls above do, check the return code (the job's
// communicators return errors instead of aborting, and the generated code
// does not look at them), and forward to PMPI_*.

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm) {
  int size = 0;
  MPI_Type_size(type, &size);
  check(PMPI_Send(buf, count, type, dest, tag, comm), "MPI_Send");
  state().p2pBytes += int64_t(count) * size;
  state().p2pMessages += 1;
  return MPI_SUCCESS;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
             MPI_Comm comm, MPI_Status *status) {
  check(PMPI_Recv(buf, count, type, source, tag, comm, status), "MPI_Recv");
  return MPI_SUCCESS;
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type,
                  MPI_Op op, MPI_Comm comm) {
  int size = 0, members = 1;
  MPI_Type_size(type, &size);
  MPI_Comm_size(comm, &members);
  check(PMPI_Allreduce(send, recv, count, type, op, comm), "MPI_Allreduce");
  State &s = state();
  s.allReduce.calls += 1;
  s.allReduce.bytes += int64_t(count) * size;
  if (members > 1) {
    s.ringBytes += 2 * (members - 1) * (int64_t(count) * size) / members;
    s.ringMessages += 2 * (members - 1);
  }
  return MPI_SUCCESS;
}

} // extern "C"
