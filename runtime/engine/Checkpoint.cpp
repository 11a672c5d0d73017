//===- Checkpoint.cpp - Loading a whole LLaMA checkpoint ------------------===//

#include "tra/Engine/Checkpoint.h"

#include "tra/Runtime/MetaCheckpoint.h"
#include "tra/Runtime/TensorSource.h"

using namespace tra;

rt::Result<rt::LlamaCheckpoint>
tra::engine::loadCheckpoint(const std::string &path, bool keepStored) {
  rt::Result<std::unique_ptr<rt::TensorSource>> source =
      rt::openTensorSource(path);
  if (!source)
    return source.error();
  std::string format = (*source)->format();
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
