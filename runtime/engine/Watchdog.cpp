//===- Watchdog.cpp - Ending a job whose steps stop making progress -------===//

#include "tra/Engine/Watchdog.h"

#include <cstdio>
#include <cstdlib>

using namespace tra::engine;

Watchdog::Watchdog(double timeout, int rank, std::string tool)
    : timeout(timeout), rank(rank), tool(std::move(tool)) {
  if (timeout > 0)
    thread = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  wake.notify_all();
  if (thread.joinable())
    thread.join();
}

void Watchdog::stepStarts(int64_t pos) {
  if (timeout <= 0)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  position = pos;
  deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(timeout));
  armed = true;
  wake.notify_all();
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex);
  armed = false;
}

void Watchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!done) {
    if (!armed) {
      wake.wait(lock);
      continue;
    }
    if (wake.wait_until(lock, deadline) == std::cv_status::timeout && armed &&
        !done && Clock::now() >= deadline) {
      std::fprintf(stderr,
                   "tra: rank %d: %s: the step at position %lld has not "
                   "finished after %g s (--step-timeout): a rank is hung or "
                   "the step needs more time; ending the job\n",
                   rank, tool.c_str(), static_cast<long long>(position),
                   timeout);
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
}
