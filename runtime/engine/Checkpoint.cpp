//===- Checkpoint.cpp - Loading a whole LLaMA checkpoint ------------------===//

#include "tra/Engine/Checkpoint.h"

#include "tra/Runtime/File.h"
#include "tra/Runtime/LargePages.h"
#include "tra/Runtime/MetaCheckpoint.h"
#include "tra/Runtime/TensorSource.h"

#include <cstring>

using namespace tra;

namespace {
/// Byte alignment of each weight in the shared buffer (a cache line, and
/// the widest vector load).
constexpr size_t kWeightAlignment = 64;

/// `bytes` rounded up to kWeightAlignment.
size_t padded(size_t bytes) {
  return (bytes + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
}

/// Moves every weight of `ckpt` into one buffer on huge pages
/// (rt::LargePageAllocator) and makes each a view of its part. A decoding
/// step streams every weight once; from 4 KiB pages each page costs a TLB
/// miss (a two-thread f16 matrix-vector product over 220 MB: 33 GB/s from
/// 4 KiB pages, 38 GB/s from huge pages, on the development VM), and most
/// weights are too small (0.6 to 3 MB) for huge pages of their own. With
/// `fileViews` (the views of a llama2.c or GGUF reader are bytes of the
/// mapped file), the file pages of each weight are dropped once it is
/// copied; owned weights are freed as they are copied, so resident memory
/// stays about the weights' size.
void gatherOnLargePages(rt::LlamaCheckpoint &ckpt, bool fileViews) {
  size_t total = 0;
  for (auto &[name, weight] : ckpt.weights)
    total += padded(weight.byteSize());
  if (total < rt::kLargePageBytes)
    return;
  auto *bytes = static_cast<uint8_t *>(rt::allocateLargePageBytes(total));
  std::shared_ptr<const void> buffer(bytes, [total](const void *p) {
    rt::freeLargePageBytes(const_cast<void *>(p), total);
  });
  size_t offset = 0;
  for (auto &[name, weight] : ckpt.weights) {
    uint8_t *dst = bytes + offset;
    const size_t size = weight.byteSize();
    std::memcpy(dst, weight.data(), size);
    if (fileViews && weight.isView())
      rt::releaseFilePages(weight.data(), size);
    weight = rt::HostTensor::view(weight.dtype(), weight.shape(), dst, buffer);
    offset += padded(size);
  }
}
} // namespace

/// loadCheckpoint before its weights move to huge pages; `fileViews` says
/// whether views among them are bytes of a mapped file.
static rt::Result<rt::LlamaCheckpoint>
readCheckpoint(const std::string &path, bool keepStored, bool &fileViews) {
  rt::Result<std::unique_ptr<rt::TensorSource>> source =
      rt::openTensorSource(path);
  if (!source)
    return source.error();
  std::string format = (*source)->format();
  fileViews = format == "llama2.c" || format == "gguf";
  // llama2.c: mapped, the f32 weights used in place.
  if (format == "llama2.c")
    return rt::readLlama2c(path);
  // Meta: the model-parallel shards merged tile by tile.
  if (format == "meta") {
    rt::Result<rt::MetaCheckpoint> meta = rt::MetaCheckpoint::open(path);
    if (!meta)
      return meta.error();
    if (!keepStored)
      return meta->loadAll(rt::DType::F32);
    rt::Result<rt::LlamaCheckpoint> all = meta->loadAll(std::nullopt);
    if (!all)
      return all.error();
    // Stored types other than f32, f16 and bf16 are read as f32.
    for (auto &[name, weight] : all->weights)
      if (weight.dtype() != rt::DType::F32 &&
          weight.dtype() != rt::DType::F16 && weight.dtype() != rt::DType::BF16)
        weight = rt::convert(weight, rt::DType::F32);
    return all;
  }
  // Any other format that states the model's parameters (Hugging Face
  // LLaMA, tra-split): every weight read whole, as f32.
  const std::optional<rt::LlamaParams> &params = (*source)->llamaParams();
  if (!params)
    return rt::fileError(path, "a " + format +
                                   " checkpoint that does not state the LLaMA "
                                   "model's parameters");
  rt::LlamaCheckpoint ckpt;
  ckpt.params = *params;
  for (auto &[name, shape] : rt::llamaWeightShapes(*params)) {
    const rt::TensorInfo *info = (*source)->find(name);
    if (!info)
      return rt::fileError(path, "no tensor '" + name + "'");
    if (info->shape != shape)
      return rt::fileError(
          path, "tensor '" + name + "' is " + rt::formatShape(info->shape) +
                    ", the model's parameters say " + rt::formatShape(shape));
    // Q8_0 matrices of whole blocks stay 8-bit: values and scales.
    if (keepStored && info->q8_0 && shape.size() == 2 &&
        shape[1] % rt::kQ8BlockValues == 0) {
      rt::Result<rt::Q8Tensor> q8 = (*source)->readQ8_0(name);
      if (!q8)
        return q8.error();
      ckpt.weights.emplace_back(name, std::move(q8->values));
      ckpt.weights.emplace_back(rt::q8ScalesName(name), std::move(q8->scales));
      continue;
    }
    bool sixteenBit =
        info->dtype == rt::DType::F16 || info->dtype == rt::DType::BF16;
    rt::Result<rt::HostTensor> weight = (*source)->read(
        name, keepStored && sixteenBit ? info->dtype : rt::DType::F32);
    if (!weight)
      return weight.error();
    ckpt.weights.emplace_back(name, std::move(*weight));
  }
  return ckpt;
}

rt::Result<rt::LlamaCheckpoint>
tra::engine::loadCheckpoint(const std::string &path, bool keepStored) {
  bool fileViews = false;
  rt::Result<rt::LlamaCheckpoint> ckpt =
      readCheckpoint(path, keepStored, fileViews);
  if (ckpt)
    gatherOnLargePages(*ckpt, fileViews);
  return ckpt;
}

std::map<std::string, rt::DType>
tra::engine::storedWeightDTypes(const rt::LlamaCheckpoint &checkpoint) {
  std::map<std::string, rt::DType> dtypes;
  for (auto &[name, t] : checkpoint.weights)
    if (t.dtype() == rt::DType::F16 || t.dtype() == rt::DType::BF16 ||
        t.dtype() == rt::DType::I8)
      dtypes[name] = t.dtype();
  return dtypes;
}

tra::engine::StoredWeightKinds
tra::engine::storedWeightKinds(const std::map<std::string, rt::DType> &dtypes) {
  StoredWeightKinds kinds;
  for (auto &[name, dtype] : dtypes) {
    if (dtype == rt::DType::I8) {
      kinds.q8_0 = true;
      continue;
    }
    // A Q8_0 weight's scales are named after it.
    bool scales = false;
    for (auto &[weight, weightType] : dtypes)
      scales |= weightType == rt::DType::I8 && rt::q8ScalesName(weight) == name;
    kinds.sixteenBit |= !scales;
  }
  return kinds;
}
