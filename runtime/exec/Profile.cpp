//===- Profile.cpp - Per-op timing of compiled code -----------------------===//
//
// Compiled code calls tra_exec_profile_begin/end around every model-level op
// (tra-instrument-profile); while profiling is enabled these accumulate the
// wall-clock time and the number of runs of each op. The calls come from the
// one thread that runs the program, so no locking is needed.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include <chrono>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

/// Accumulated times of the profiled ops.
struct ProfileState {
  bool enabled = false;
  std::vector<Clock::time_point> started;
  std::vector<double> seconds;
  std::vector<int64_t> counts;
};

ProfileState &state() {
  static ProfileState profile;
  return profile;
}

/// Returns true if `op` is being profiled.
bool profiled(const ProfileState &profile, int64_t op) {
  return profile.enabled && op >= 0 &&
         op < static_cast<int64_t>(profile.seconds.size());
}
} // namespace

extern "C" void tra_exec_profile_begin(int64_t op) {
  ProfileState &profile = state();
  if (profiled(profile, op))
    profile.started[op] = Clock::now();
}

extern "C" void tra_exec_profile_end(int64_t op) {
  ProfileState &profile = state();
  if (!profiled(profile, op))
    return;
  std::chrono::duration<double> elapsed = Clock::now() - profile.started[op];
  profile.seconds[op] += elapsed.count();
  ++profile.counts[op];
}

extern "C" void tra_exec_profile_enable(int64_t numOps) {
  ProfileState &profile = state();
  size_t n = numOps > 0 ? static_cast<size_t>(numOps) : 0;
  profile.enabled = true;
  profile.started.assign(n, Clock::time_point());
  profile.seconds.assign(n, 0.0);
  profile.counts.assign(n, 0);
}

extern "C" double tra_exec_profile_seconds(int64_t op) {
  const ProfileState &profile = state();
  return profiled(profile, op) ? profile.seconds[op] : 0.0;
}

extern "C" int64_t tra_exec_profile_count(int64_t op) {
  const ProfileState &profile = state();
  return profiled(profile, op) ? profile.counts[op] : 0;
}
