//===- PthFuzzer.cpp - Fuzzes the torch.save (.pth) reader ----------------===//
//
// PthFile::open on the input as a file: the zip directory (Zip.cpp), the
// pickle (Pickle.cpp) and the tensors checked against their storages
// (Pth.cpp). Every tensor of a file it accepts is read with `get`, as a whole
// tile (which verifies the storage's CRC-32) and as its upper half.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "tra/Runtime/Pth.h"

using namespace tra::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tra::fuzz::TempInput input(data, size, ".pth");
  Result<PthFile> file = PthFile::open(input.path());
  if (!file)
    return 0;
  for (const PthTensor &tensor : file->tensors()) {
    // A tensor may view its storage with strides that make it far larger
    // than the file (expanded); skip those that would take long to copy.
    if (tensor.numElements() > (int64_t(1) << 22))
      continue;
    Result<HostTensor> got = file->get(tensor.name);
    if (got)
      tra::fuzz::keep(tra::fuzz::checksum(*got));
    Result<HostTensor> whole = file->readTile(
        tensor.name, std::vector<int64_t>(tensor.shape.size(), 0),
        tensor.shape);
    if (whole)
      tra::fuzz::keep(tra::fuzz::checksum(*whole));
    auto [offsets, sizes] = tra::fuzz::upperHalf(tensor.shape);
    Result<HostTensor> tile = file->readTile(tensor.name, offsets, sizes);
    if (tile)
      tra::fuzz::keep(tra::fuzz::checksum(*tile));
  }
  return 0;
}
