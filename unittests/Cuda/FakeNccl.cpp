//===- FakeNccl.cpp - NCCL between processes on host memory, for tests ----===//
//
// Implements the NCCL entry points runtime/cuda resolves, for ranks whose
// "device" memory is host memory (the fake driver's). The processes of a
// job exchange their buffers through files in FAKE_NCCL_DIR (one directory
// per job): every operation is done when the call returns, as on a stream
// that runs at once. A rank writes its part of an operation under a name
// made of the communicator's unique id, the operation's sequence number and
// the rank (written to a temporary name, then renamed), and reads the parts
// it needs, waiting for them (60 s at most). Reductions combine the parts in
// rank order in the element type (f32, f64, i64; bf16 through f32).
// FAKE_NCCL_MODE=fail-init makes ncclCommInitRank fail.
//
//===----------------------------------------------------------------------===//

#include <nccl.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

struct ncclComm {
  std::string id;
  int nranks = 0;
  int rank = 0;
  long collectives = 0;
  std::map<int, long> sent, received;
};

namespace {
std::atomic<long> idCounter{0};

const char *directory() {
  const char *dir = std::getenv("FAKE_NCCL_DIR");
  if (!dir || !*dir) {
    std::fprintf(stderr, "fake NCCL: FAKE_NCCL_DIR is not set\n");
    return nullptr;
  }
  return dir;
}

std::string path(const ncclComm &comm, const std::string &what) {
  return std::string(directory()) + "/" + comm.id + "." + what;
}

bool writeFile(const std::string &file, const void *data, size_t bytes) {
  std::string temporary = file + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(static_cast<const char *>(data), std::streamsize(bytes));
    if (!out)
      return false;
  }
  return std::rename(temporary.c_str(), file.c_str()) == 0;
}

/// Reads `bytes` bytes of `file`, waiting for it to appear.
bool readFile(const std::string &file, void *data, size_t bytes) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (access(file.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "fake NCCL: timed out waiting for %s\n",
                   file.c_str());
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::ifstream in(file, std::ios::binary);
  in.read(static_cast<char *>(data), std::streamsize(bytes));
  return bool(in) && in.gcount() == std::streamsize(bytes);
}

size_t typeSize(ncclDataType_t type) {
  switch (type) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64:
    return 8;
  default:
    return 0;
  }
}

template <typename T> T combine(T a, T b, ncclRedOp_t op) {
  switch (op) {
  case ncclSum:
    return a + b;
  case ncclProd:
    return a * b;
  case ncclMax:
    return a > b ? a : b;
  case ncclMin:
    return a < b ? a : b;
  default:
    return a;
  }
}

float bf16ToFloat(uint16_t bits) {
  uint32_t word = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}

uint16_t floatToBf16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, 4);
  word += 0x7fff + ((word >> 16) & 1);
  return uint16_t(word >> 16);
}

/// acc[i] = acc[i] op part[i] for `count` elements of `type`.
bool reduceInto(void *acc, const void *part, size_t count, ncclDataType_t type,
                ncclRedOp_t op) {
  auto apply = [&](auto tag) {
    using T = decltype(tag);
    T *a = static_cast<T *>(acc);
    const T *p = static_cast<const T *>(part);
    for (size_t i = 0; i < count; ++i)
      a[i] = combine(a[i], p[i], op);
  };
  switch (type) {
  case ncclFloat32:
    apply(float());
    return true;
  case ncclFloat64:
    apply(double());
    return true;
  case ncclInt64:
    apply(int64_t());
    return true;
  case ncclBfloat16: {
    uint16_t *a = static_cast<uint16_t *>(acc);
    const uint16_t *p = static_cast<const uint16_t *>(part);
    for (size_t i = 0; i < count; ++i)
      a[i] = floatToBf16(combine(bf16ToFloat(a[i]), bf16ToFloat(p[i]), op));
    return true;
  }
  default:
    return false;
  }
}

/// Publishes this rank's `bytes` of operation `seq`; with `gather`, reads
/// every rank's part and reduces them (rank order) into `out`.
ncclResult_t collective(ncclComm &comm, const void *send, size_t count,
                        ncclDataType_t type, ncclRedOp_t op, bool gather,
                        std::vector<char> &out) {
  if (!directory())
    return ncclInvalidUsage;
  size_t size = typeSize(type);
  if (!size)
    return ncclInvalidArgument;
  std::string base = "c" + std::to_string(comm.collectives++);
  if (!writeFile(path(comm, base + ".r" + std::to_string(comm.rank)), send,
                 count * size))
    return ncclSystemError;
  if (!gather)
    return ncclSuccess;
  out.assign(count * size, 0);
  std::vector<char> part(count * size);
  for (int r = 0; r < comm.nranks; ++r) {
    if (!readFile(path(comm, base + ".r" + std::to_string(r)),
                  r == 0 ? out.data() : part.data(), count * size))
      return ncclSystemError;
    if (r > 0 && !reduceInto(out.data(), part.data(), count, type, op))
      return ncclInvalidArgument;
  }
  return ncclSuccess;
}
} // namespace

extern "C" {
ncclResult_t ncclGetVersion(int *version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclSystemError:
    return "unhandled system error (fake)";
  case ncclInvalidArgument:
    return "invalid argument (fake)";
  case ncclInvalidUsage:
    return "invalid usage (fake)";
  default:
    return "fake NCCL error";
  }
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  std::memset(id->internal, 0, sizeof(id->internal));
  std::snprintf(id->internal, sizeof(id->internal), "fake%d-%ld", int(getpid()),
                idCounter++);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank) {
  const char *mode = std::getenv("FAKE_NCCL_MODE");
  if (mode && std::string(mode) == "fail-init")
    return ncclSystemError;
  if (nranks < 1 || rank < 0 || rank >= nranks || !directory())
    return ncclInvalidArgument;
  auto *c = new ncclComm;
  c->id.assign(id.internal, strnlen(id.internal, sizeof(id.internal)));
  c->nranks = nranks;
  c->rank = rank;
  *comm = c;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t) {
  std::vector<char> out;
  if (ncclResult_t r = collective(*comm, send, count, type, op, true, out))
    return r;
  std::memcpy(recv, out.data(), out.size());
  return ncclSuccess;
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t) {
  std::vector<char> out;
  if (ncclResult_t r = collective(*comm, send, recvcount * comm->nranks, type,
                                  op, true, out))
    return r;
  size_t bytes = recvcount * typeSize(type);
  std::memcpy(recv, out.data() + comm->rank * bytes, bytes);
  return ncclSuccess;
}

ncclResult_t ncclReduce(const void *send, void *recv, size_t count,
                        ncclDataType_t type, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t) {
  std::vector<char> out;
  if (ncclResult_t r =
          collective(*comm, send, count, type, op, comm->rank == root, out))
    return r;
  if (comm->rank == root)
    std::memcpy(recv, out.data(), out.size());
  return ncclSuccess;
}

ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t type,
                      int peer, ncclComm_t comm, cudaStream_t) {
  if (!directory() || peer < 0 || peer >= comm->nranks || !typeSize(type))
    return ncclInvalidArgument;
  std::string name = "p" + std::to_string(comm->rank) + "to" +
                     std::to_string(peer) + "." +
                     std::to_string(comm->sent[peer]++);
  return writeFile(path(*comm, name), send, count * typeSize(type))
             ? ncclSuccess
             : ncclSystemError;
}

ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, cudaStream_t) {
  if (!directory() || peer < 0 || peer >= comm->nranks || !typeSize(type))
    return ncclInvalidArgument;
  std::string name = "p" + std::to_string(peer) + "to" +
                     std::to_string(comm->rank) + "." +
                     std::to_string(comm->received[peer]++);
  return readFile(path(*comm, name), recv, count * typeSize(type))
             ? ncclSuccess
             : ncclSystemError;
}

ncclResult_t ncclGroupStart() { return ncclSuccess; }
ncclResult_t ncclGroupEnd() { return ncclSuccess; }
} // extern "C"
