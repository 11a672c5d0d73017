//===- GgufFuzzer.cpp - Fuzzes the GGUF reader ----------------------------===//
//
// GgufFile::open on the input as a file: the header, metadata and tensor
// directory. For a file it accepts: every metadata accessor on every key,
// every tensor read whole and as its upper half (Q8_0 dequantised, and as
// stored), and the LLaMA view of the file (ggufLlamaParams,
// readGgufTokenizer, openGgufLlamaSource with a tile of every weight and
// every Q8_0 weight as stored).
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "tra/Runtime/Gguf.h"
#include "tra/Runtime/GgufLlama.h"
#include "tra/Runtime/GgufTokenizer.h"

using namespace tra::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tra::fuzz::TempInput input(data, size, ".gguf");
  Result<GgufFile> file = GgufFile::open(input.path());
  if (!file)
    return 0;
  for (const GgufEntry &entry : file->entries()) {
    (void)file->getString(entry.key);
    (void)file->getUnsigned(entry.key);
    (void)file->getFloat(entry.key);
    (void)file->getStringArray(entry.key);
    (void)file->getF32Array(entry.key);
    (void)file->getIntArray(entry.key);
  }
  for (const GgufTensor &tensor : file->tensors()) {
    Result<HostTensor> whole = file->read(tensor);
    if (whole)
      tra::fuzz::keep(tra::fuzz::checksum(*whole));
    auto [offsets, sizes] = tra::fuzz::upperHalf(tensor.shape);
    Result<HostTensor> tile = file->readTile(tensor, offsets, sizes);
    if (tile)
      tra::fuzz::keep(tra::fuzz::checksum(*tile));
    Result<std::pair<HostTensor, HostTensor>> stored = file->readQ8_0(tensor);
    if (stored)
      tra::fuzz::keep(tra::fuzz::checksum(stored->first) +
                      tra::fuzz::checksum(stored->second));
  }
  (void)ggufLlamaParams(*file);
  Result<Tokenizer> tokenizer = readGgufTokenizer(*file);
  if (tokenizer)
    tra::fuzz::keep(tokenizer->encode("Hello, world").size());
  Result<std::unique_ptr<TensorSource>> source =
      openGgufLlamaSource(input.path());
  if (source)
    for (const TensorInfo &info : (*source)->tensors()) {
      auto [offsets, sizes] = tra::fuzz::upperHalf(info.shape);
      Result<HostTensor> tile =
          (*source)->readTile(info.name, offsets, sizes, DType::F32);
      if (tile)
        tra::fuzz::keep(tra::fuzz::checksum(*tile));
      Result<Q8Tensor> stored = (*source)->readQ8_0(info.name);
      if (stored)
        tra::fuzz::keep(tra::fuzz::checksum(stored->values) +
                        tra::fuzz::checksum(stored->scales));
    }
  return 0;
}
