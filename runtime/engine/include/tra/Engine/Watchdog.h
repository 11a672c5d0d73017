//===- Watchdog.h - Ending a job whose steps stop making progress -*- C++ -*-=//
//
// A rank of an MPI job that dies makes mpirun end the job, but one that
// hangs (a deadlock, a stuck device or network) leaves every other rank
// waiting in MPI forever. While armed, a Watchdog's thread checks that a
// step starts at least every `timeout` seconds; otherwise it says which
// position did not finish and exits the process without finalizing MPI,
// which makes mpirun end the whole job, the hung rank included. No MLIR
// dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_WATCHDOG_H
#define TRA_ENGINE_WATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace tra::engine {

class Watchdog {
public:
  /// Watches steps of rank `rank` of `tool`; `timeout` <= 0 never fires.
  Watchdog(double timeout, int rank, std::string tool);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// A step at `pos` starts now.
  void stepStarts(int64_t pos);
  /// The generation is over (finalizing is not watched).
  void disarm();

private:
  using Clock = std::chrono::steady_clock;
  void watch();

  double timeout;
  int rank;
  std::string tool;
  std::mutex mutex;
  std::condition_variable wake;
  bool armed = false, done = false;
  int64_t position = 0;
  Clock::time_point deadline;
  std::thread thread;
};

} // namespace tra::engine

#endif // TRA_ENGINE_WATCHDOG_H
