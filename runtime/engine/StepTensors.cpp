//===- StepTensors.cpp - The tensors of a LLaMA step program --------------===//

#include "tra/Engine/StepTensors.h"

#include "tra/Exec/ABI.h"

#include <charconv>

using namespace tra;
using namespace tra::engine;

/// "layers.L.k_cache" + suffix -> 2 * L; "layers.L.v_cache" + suffix -> 2L+1.
static int64_t cacheIndex(std::string_view name, std::string_view suffix,
                          int64_t layers) {
  constexpr std::string_view prefix = "layers.";
  if (name.size() < prefix.size() + suffix.size() ||
      name.substr(0, prefix.size()) != prefix ||
      name.substr(name.size() - suffix.size()) != suffix)
    return -1;
  name =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0)
    return -1;
  std::string_view layer = name.substr(0, dot), kind = name.substr(dot + 1);
  int64_t l = -1;
  auto [end, ec] =
      std::from_chars(layer.data(), layer.data() + layer.size(), l);
  if (ec != std::errc() || end != layer.data() + layer.size() || l < 0 ||
      l >= layers || (kind != "k_cache" && kind != "v_cache"))
    return -1;
  return 2 * l + (kind == "k_cache" ? 0 : 1);
}

StepTensorRole tra::engine::classifyStepInput(std::string_view name,
                                              int64_t layers) {
  if (name == "tokens")
    return {StepTensorKind::Tokens};
  if (name == "pos")
    return {StepTensorKind::Position};
  if (name == "logits_row")
    return {StepTensorKind::LogitsRow};
  if (name == "freqs_cos")
    return {StepTensorKind::RopeCos};
  if (name == "freqs_sin")
    return {StepTensorKind::RopeSin};
  if (int64_t c = cacheIndex(name, "", layers); c >= 0)
    return {StepTensorKind::Cache, c};
  return {StepTensorKind::Other};
}

StepTensorRole tra::engine::classifyStepOutput(std::string_view name,
                                               int64_t layers) {
  if (name == "logits")
    return {StepTensorKind::Logits};
  if (int64_t c = cacheIndex(name, "_out", layers); c >= 0)
    return {StepTensorKind::Cache, c};
  return {StepTensorKind::Other};
}

std::vector<int64_t> tra::engine::cacheShape(const rt::LlamaParams &p) {
  return {p.maxSeqLen, p.nKvHeads, p.headDim()};
}

std::vector<int64_t> tra::engine::ropeTableShape(const rt::LlamaParams &p) {
  return {p.maxSeqLen, p.headDim() / 2};
}

int64_t tra::engine::weightABIType(rt::DType dtype) {
  switch (dtype) {
  case rt::DType::F32:
    return TRA_EXEC_F32;
  case rt::DType::F16:
    return TRA_EXEC_F16;
  case rt::DType::BF16:
    return TRA_EXEC_BF16;
  case rt::DType::I8:
    return TRA_EXEC_I8;
  default:
    return -1;
  }
}

std::optional<rt::DType> tra::engine::weightDType(int64_t abi) {
  switch (abi) {
  case TRA_EXEC_F32:
    return rt::DType::F32;
  case TRA_EXEC_F16:
    return rt::DType::F16;
  case TRA_EXEC_BF16:
    return rt::DType::BF16;
  case TRA_EXEC_I8:
    return rt::DType::I8;
  default:
    return std::nullopt;
  }
}
