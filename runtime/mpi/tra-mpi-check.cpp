//===- tra-mpi-check.cpp - Exercises the distributed runtime --------------===//
//
//   tra-mpi-check ring BYTES           ring exchange, checked contents
//   tra-mpi-check allreduce N          f32/f16/bf16/i64 all-reduce, all ranks
//                                      and the sub-group {0, size-1}
//   tra-mpi-check ranks N              a plan needing N ranks
//   tra-mpi-check fingerprint R        rank R has a different fingerprint
//   tra-mpi-check kill R               rank R dies mid-run (SIGKILL)
//   [--profile]                        print the byte counters at the end
//
// Prints "<mode>: ok" on rank 0 when every check passed; exits 1 otherwise.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Mpi.h"
#include "tra/Runtime/Tensor.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: check failed: %s\n", tra_mpi_rank(),
                 what.c_str());
    ++failures;
  }
}

void ring(int64_t bytes) {
  int r = tra_mpi_rank(), p = tra_mpi_size();
  std::vector<uint8_t> out(bytes), in(bytes);
  for (int64_t i = 0; i < bytes; ++i)
    out[i] = uint8_t((i * 7 + r) & 0xFF);
  int64_t recv = tra_mpi_irecv(in.data(), bytes, (r + p - 1) % p, 5);
  int64_t send = tra_mpi_isend(out.data(), bytes, (r + 1) % p, 5);
  tra_mpi_wait(recv);
  tra_mpi_wait(send);
  int from = (r + p - 1) % p;
  for (int64_t i = 0; i < bytes; ++i)
    if (in[i] != uint8_t((i * 7 + from) & 0xFF)) {
      expect(false, "ring byte " + std::to_string(i));
      break;
    }
  // Blocking exchange in the other direction.
  if (r % 2 == 0) {
    tra_mpi_send(out.data(), bytes, (r + p - 1) % p, 6);
    tra_mpi_recv(in.data(), bytes, (r + 1) % p, 6);
  } else {
    tra_mpi_recv(in.data(), bytes, (r + 1) % p, 6);
    tra_mpi_send(out.data(), bytes, (r + p - 1) % p, 6);
  }
  for (int64_t i = 0; i < bytes; ++i)
    if (in[i] != uint8_t((i * 7 + (r + 1) % p) & 0xFF)) {
      expect(false, "blocking ring byte " + std::to_string(i));
      break;
    }
}

void allreduce(int64_t n) {
  int r = tra_mpi_rank(), p = tra_mpi_size();
  // f32 sum and max over all ranks.
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = float(r + 1) * 0.5f + float(i % 13);
  std::vector<float> y = x;
  tra_mpi_allreduce(x.data(), n, TRA_MPI_F32, TRA_MPI_SUM, nullptr, 0);
  tra_mpi_allreduce(y.data(), n, TRA_MPI_F32, TRA_MPI_MAX, nullptr, 0);
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0.5 * p * (p + 1) / 2.0 + double(p) * double(i % 13);
    expect(std::fabs(x[i] - sum) < 1e-3, "f32 sum at " + std::to_string(i));
    expect(y[i] == float(p) * 0.5f + float(i % 13), "f32 max");
  }
  // i64 product of small numbers.
  std::vector<int64_t> z(4, r + 1);
  tra_mpi_allreduce(z.data(), 4, TRA_MPI_I64, TRA_MPI_PROD, nullptr, 0);
  int64_t fact = 1;
  for (int k = 1; k <= p; ++k)
    fact *= k;
  expect(z[0] == fact, "i64 prod");
  // f16 and bf16 sums of exactly representable values.
  std::vector<uint16_t> h(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    h[i] = tra::rt::floatToHalf(float(r));
    b[i] = tra::rt::floatToBFloat16(float(r));
  }
  tra_mpi_allreduce(h.data(), n, TRA_MPI_F16, TRA_MPI_SUM, nullptr, 0);
  tra_mpi_allreduce(b.data(), n, TRA_MPI_BF16, TRA_MPI_SUM, nullptr, 0);
  float want = float(p * (p - 1) / 2);
  expect(tra::rt::halfToFloat(h[0]) == want, "f16 sum");
  expect(tra::rt::bfloat16ToFloat(b[n - 1]) == want, "bf16 sum");
  // Sub-group {0, p-1}.
  if (p > 1 && (r == 0 || r == p - 1)) {
    int group[2] = {0, p - 1};
    std::vector<float> g(n, float(r));
    tra_mpi_allreduce(g.data(), n, TRA_MPI_F32, TRA_MPI_SUM, group, 2);
    expect(g[0] == float(p - 1), "sub-group sum");
  }
}

void killRank(int victim) {
  // Everybody all-reduces in a loop; the victim dies after 0.3 s. The job
  // must end (non-zero) within seconds, not hang.
  auto start = std::chrono::steady_clock::now();
  std::vector<float> x(1024, 1.0f);
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    if (tra_mpi_rank() == victim && std::chrono::steady_clock::now() - start >
                                        std::chrono::milliseconds(300))
      std::raise(SIGKILL);
    tra_mpi_allreduce(x.data(), 1024, TRA_MPI_F32, TRA_MPI_MAX, nullptr, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  expect(false, "the job survived the death of a rank");
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tra-mpi-check MODE ARG [--profile]\n");
    return 2;
  }
  std::string mode = argv[1];
  long long arg = std::atoll(argv[2]);
  bool profile = argc > 3 && std::strcmp(argv[3], "--profile") == 0;
  int64_t required = -1;
  uint64_t fingerprint = 0x7a11;
  if (mode == "ranks") {
    required = arg;
  } else if (mode == "fingerprint") {
    // Must know the rank before init: Open MPI exports it.
    const char *r = std::getenv("OMPI_COMM_WORLD_RANK");
    if (r && std::atoll(r) == arg)
      fingerprint = 0xbad;
  }
  if (required < 0) {
    const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
    required = size ? std::atoll(size) : 1;
  }
  tra_mpi_init(&argc, &argv, required, fingerprint, "tra-mpi-check");
  if (mode == "ring")
    ring(arg);
  else if (mode == "allreduce")
    allreduce(arg);
  else if (mode == "kill")
    killRank(int(arg));
  tra_mpi_finalize(profile);
  if (failures)
    return 1;
  if (tra_mpi_rank() == 0)
    std::printf("%s: ok\n", mode.c_str());
  return 0;
}
