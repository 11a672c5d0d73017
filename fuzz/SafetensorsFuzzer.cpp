//===- SafetensorsFuzzer.cpp - Fuzzes the safetensors reader --------------===//
//
// SafetensorsFile::open on the input as a file; every tensor of a file it
// accepts is read whole (a zero-copy view, every byte touched) and as a tile
// (its upper half, a strided read), and the checkpoint view of the same file
// (SafetensorsCheckpoint) is opened too.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "tra/Runtime/Safetensors.h"

using namespace tra::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tra::fuzz::TempInput input(data, size, ".safetensors");
  Result<SafetensorsFile> file = SafetensorsFile::open(input.path());
  if (!file)
    return 0;
  for (const SafetensorsEntry &entry : file->tensors()) {
    Result<HostTensor> whole = file->get(entry.name);
    if (whole)
      tra::fuzz::keep(tra::fuzz::checksum(*whole));
    auto [offsets, sizes] = tra::fuzz::upperHalf(entry.shape);
    Result<HostTensor> tile = file->readTile(entry.name, offsets, sizes);
    if (tile)
      tra::fuzz::keep(tra::fuzz::checksum(*tile));
  }
  Result<SafetensorsCheckpoint> checkpoint =
      SafetensorsCheckpoint::open(input.path());
  if (checkpoint)
    for (const std::string &name : checkpoint->tensorNames())
      (void)checkpoint->entry(name);
  return 0;
}
