//===- Reshard.cpp - tra-llama reshard: re-split a checkpoint for a plan --===//
//
// The plan is made the way tra-compile --emit=plan makes it (plan::planModule
// with the default planner options), for the @forward step tra-llama builds
// from the checkpoint's parameters; every weight argument then carries
// tra_plan.dist, whose tiles (TensorDist, balanced uneven splits in multiples
// of `unit`, row-major tile order, replicas as several devices per tile)
// become the tiles of the split. Device d of the hardware description is
// rank d.
//
//===----------------------------------------------------------------------===//

#include "Reshard.h"

#include "Options.h"

#include "tra/Dialect/Plan/IR/Distribution.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Frontend/Llama.h"
#include "tra/Hardware/Hardware.h"
#include "tra/Optimizer/Pipeline.h"
#include "tra/Runtime/TensorSource.h"
#include "tra/Runtime/TraSplit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace mlir::tra;
namespace cl = llvm::cl;
namespace rt = ::tra::rt;

static cl::opt<std::string>
    reshardDType("dtype",
                 cl::desc("reshard: dtype of the written tiles: f32, f16, "
                          "bf16, or keep (default: the checkpoint's)"),
                 cl::init("keep"), cl::cat(getToolCategory()));
static cl::opt<bool> reshardQuiet("quiet",
                                  cl::desc("reshard: no progress output"),
                                  cl::cat(getToolCategory()));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tra-llama") << message << "\n";
  return 1;
}

static std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  if (u == 0)
    os << int64_t(bytes) << " B";
  else
    os << llvm::format("%.1f", bytes) << " " << units[u];
  return out;
}

int mlir::tra::runReshard(const ReshardRequest &request) {
  auto start = std::chrono::steady_clock::now();
  if (request.checkpoint.empty())
    return fail("reshard needs --checkpoint");
  if (request.output.empty() || request.output == "-")
    return fail("reshard needs -o DIR (the directory to write)");
  std::optional<rt::DType> dtype;
  if (reshardDType != "keep") {
    dtype = rt::parseDType(reshardDType);
    if (!dtype || (*dtype != rt::DType::F32 && *dtype != rt::DType::F16 &&
                   *dtype != rt::DType::BF16))
      return fail("--dtype '" + reshardDType +
                  "' must be f32, f16, bf16 or keep");
  }

  // The checkpoint and the model it holds.
  rt::Result<std::unique_ptr<rt::TensorSource>> opened =
      rt::openTensorSource(request.checkpoint);
  if (!opened)
    return fail(opened.message());
  const rt::TensorSource &source = **opened;
  if (!source.llamaParams())
    return fail(
        request.checkpoint + ": a " + source.format() +
        " checkpoint that does not state the LLaMA model's "
        "parameters; reshard reads llama2.c files, Meta and Hugging Face "
        "LLaMA directories, and tra-split directories");
  rt::LlamaParams params = *source.llamaParams();
  if (request.maxSeqLen > 0) {
    if (request.maxSeqLen > params.maxSeqLen)
      return fail("--max-seq-len " + llvm::Twine(request.maxSeqLen) +
                  " exceeds the model's seq_len " +
                  llvm::Twine(params.maxSeqLen));
    params.maxSeqLen = request.maxSeqLen;
  }
  if (request.seqLen < 1 || request.seqLen > params.maxSeqLen)
    return fail("--seq " + llvm::Twine(request.seqLen) + " must be in [1, " +
                llvm::Twine(params.maxSeqLen) + "]");

  auto hw = ::tra::hw::loadHardware(request.hardware);
  if (!hw)
    return fail(llvm::toString(hw.takeError()));

  // Build and plan @forward as tra-compile does.
  DialectRegistry registry;
  registry.insert<TRADialect, plan::PlanDialect, arith::ArithDialect,
                  func::FuncDialect, math::MathDialect>();
  func::registerInlinerExtension(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Planned with the weights in the dtype they are written in, as
  // `tra-llama run` reads them (16-bit stays 16-bit, --weight-dtype): the
  // split matches the run's plan.
  LlamaWeightDTypes weightDTypes;
  for (const auto &[name, shape] : rt::llamaWeightShapes(params))
    if (const rt::TensorInfo *info = source.find(name)) {
      rt::DType written = dtype.value_or(info->dtype);
      if (written == rt::DType::F16 || written == rt::DType::BF16)
        weightDTypes[name] = written;
    }
  OwningOpRef<ModuleOp> module =
      buildLlamaModule(&context, params, request.seqLen, weightDTypes);
  if (failed(verify(*module)))
    return fail("internal error: the generated model does not verify");
  plan::PlanOptions planOptions;
  planOptions.entry = "forward";
  auto planned = plan::planModule(*module, *hw, planOptions);
  if (!planned)
    return fail(request.checkpoint + ": cannot plan the model for " +
                hw->getName() + ": " + llvm::toString(planned.takeError()));
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  plan::PlanSummary summary = planned->lookup("forward");

  // The tiles of every weight argument.
  rt::SplitLayout layout;
  layout.ranks = hw->numDevices();
  layout.llama = params;
  // The weights are the arguments named as llamaWeightShapes names them;
  // tokens, positions, rotary tables and KV caches are made at run time.
  llvm::StringMap<unsigned> argumentOf;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    if (auto name = forward.getArgAttrOfType<StringAttr>(i, "tra.name"))
      argumentOf[name.getValue()] = i;
  for (const auto &weight : rt::llamaWeightShapes(params)) {
    const std::string &name = weight.first;
    auto it = argumentOf.find(name);
    if (it == argumentOf.end())
      return fail("internal error: @forward has no argument '" + name + "'");
    unsigned i = it->second;
    const rt::TensorInfo *info = source.find(name);
    if (!info)
      return fail(request.checkpoint + ": no tensor '" + name +
                  "', a weight of the model");
    auto type = cast<RankedTensorType>(forward.getArgument(i).getType());
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    if (info->shape != shape)
      return fail(request.checkpoint + ": tensor '" + name + "' has shape " +
                  rt::formatShape(info->shape) + ", the model expects " +
                  rt::formatShape(shape));
    auto distAttr = forward.getArgAttrOfType<plan::DistAttr>(
        i, plan::PlanDialect::kDistAttrName);
    if (!distAttr)
      return fail("internal error: weight '" + name + "' was not planned");
    plan::TensorDist dist = plan::fromAttr(distAttr);
    if (dist.partial)
      return fail("internal error: weight '" + name +
                  "' is planned as partial aggregates");
    rt::SplitTensor tensor;
    tensor.name = name;
    tensor.dtype = dtype.value_or(info->dtype);
    tensor.shape = shape;
    tensor.dist = dist.str();
    SmallVector<int64_t, 4> coords;
    for (int64_t t = 0; t < dist.getNumTiles(); ++t) {
      dist.getTileCoords(t, coords);
      rt::SplitTile tile;
      for (unsigned d = 0; d < dist.getRank(); ++d) {
        auto [begin, end] = dist.getTileRange(shape, d, coords[d]);
        tile.offsets.push_back(begin);
        tile.shape.push_back(end - begin);
      }
      for (unsigned device : dist.getTileDevices(t))
        tile.ranks.push_back(device);
      tensor.tiles.push_back(std::move(tile));
    }
    layout.tensors.push_back(std::move(tensor));
  }

  rt::JsonValue metadata = rt::JsonValue::object();
  metadata.set("tool", "tra-llama reshard");
  metadata.set("source", request.checkpoint);
  metadata.set("source_format", source.format());
  metadata.set("hardware", hw->getName().str());
  metadata.set("hardware_spec", request.hardware);
  metadata.set("entry", "forward");
  metadata.set("seq", request.seqLen);
  metadata.set("estimated_step_seconds", summary.estimatedTime);
  layout.metadata = std::move(metadata);

  if (!reshardQuiet)
    llvm::errs() << "tra-llama: resharding " << request.checkpoint << " ("
                 << source.format() << ", " << layout.tensors.size()
                 << " weights) for " << hw->summary() << " into "
                 << request.output << "\n";
  rt::SplitProgress progress;
  if (!reshardQuiet)
    progress = [](size_t index, size_t count, const rt::SplitTensor &t,
                  uint64_t bytes) {
      llvm::errs() << "[" << index + 1 << "/" << count << "] " << t.name << " "
                   << rt::formatShape(t.shape) << " " << rt::dtypeName(t.dtype)
                   << " " << t.tiles.size()
                   << (t.tiles.size() == 1 ? " tile " : " tiles ") << t.dist
                   << ", " << formatBytes(double(bytes)) << "\n";
    };
  rt::Result<rt::SplitWriteStats> stats =
      rt::writeTraSplit(request.output, source, std::move(layout), progress);
  if (!stats)
    return fail(stats.message());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!reshardQuiet)
    llvm::errs() << "tra-llama: wrote " << request.output << ": "
                 << hw->numDevices() << " rank files, "
                 << formatBytes(double(stats->bytesWritten)) << " written, "
                 << formatBytes(double(stats->bytesRead)) << " read, in "
                 << llvm::format("%.2f", seconds) << " s\n";
  return 0;
}
