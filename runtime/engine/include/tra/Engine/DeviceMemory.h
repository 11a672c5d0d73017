//===- DeviceMemory.h - The device buffers of an engine model --*- C++ -*-===//
//
// LocalModel and RankModel keep their weights, tables and KV caches in GPU
// memory through an exec::Accelerator; DeviceMemory owns those buffers: each
// is made holding a copy of host bytes or zeros, and what is not released
// earlier is released when it is destroyed (after the programs that may
// still use the buffers). No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_DEVICEMEMORY_H
#define TRA_ENGINE_DEVICEMEMORY_H

#include "tra/Exec/Driver.h"
#include "tra/Runtime/Error.h"

#include <cstddef>
#include <vector>

namespace tra::engine {

class DeviceMemory {
public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  ~DeviceMemory();

  /// The accelerator the buffers come from (before the first buffer).
  void setAccelerator(const exec::Accelerator *gpu) { accelerator = gpu; }

  /// A device buffer of `bytes` holding a copy of `host`, or zeros if it is
  /// null.
  rt::Result<void *> buffer(const void *host, size_t bytes);
  /// Releases `pointer` now (null, or not one of these buffers: nothing).
  void release(void *pointer);

private:
  const exec::Accelerator *accelerator = nullptr;
  std::vector<void *> allocations;
};

} // namespace tra::engine

#endif // TRA_ENGINE_DEVICEMEMORY_H
