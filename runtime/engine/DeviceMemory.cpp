//===- DeviceMemory.cpp - The device buffers of an engine model -----------===//

#include "tra/Engine/DeviceMemory.h"

#include <algorithm>

using namespace tra;
using namespace tra::engine;

DeviceMemory::~DeviceMemory() {
  for (void *pointer : allocations)
    accelerator->release(pointer);
}

rt::Result<void *> DeviceMemory::buffer(const void *host, size_t bytes) {
  rt::Result<void *> pointer = accelerator->allocate(bytes);
  if (!pointer)
    return pointer.error();
  allocations.push_back(*pointer);
  rt::Status status = host ? accelerator->copyToDevice(*pointer, host, bytes)
                           : accelerator->fillZero(*pointer, bytes);
  if (!status)
    return status.error();
  return *pointer;
}

void DeviceMemory::release(void *pointer) {
  auto it = std::find(allocations.begin(), allocations.end(), pointer);
  if (it == allocations.end())
    return;
  allocations.erase(it);
  accelerator->release(pointer);
}
