//===- Distributed.cpp - tra-llama on multi-device hardware ---------------===//
//
// For a hardware file with several devices, @forward (one token per step)
// is planned for it and compiled into an MPI program with one rank per
// device (lib/Conversion/Executable/Distributed.cpp); each decoding step runs
// it under `mpirun -np N`, every rank reading only its tiles of the weights
// (one safetensors file) and of the KV caches (.npy files), rank 0 writing
// the logits and the updated caches.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"

#include "tra/Conversion/Executable/Executable.h"
#include "tra/Frontend/Llama.h"
#include "tra/Optimizer/CostModel.h"
#include "tra/Optimizer/Planner.h"
#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Safetensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <unistd.h>

using namespace mlir;
using namespace mlir::tra;
namespace rt = ::tra::rt;

DistributedModel::~DistributedModel() {
  if (!dir.empty())
    llvm::sys::fs::remove_directories(dir);
}

std::string DistributedModel::file(const std::string &name) const {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

std::string DistributedModel::cacheFile(int64_t layer, const char *kind,
                                        bool which) const {
  return file(std::string(kind) + "_cache_" + std::to_string(layer) +
              (which ? "_b.npy" : "_a.npy"));
}

std::string DistributedModel::init(MLIRContext &ctx,
                                   const rt::LlamaCheckpoint &ckpt,
                                   const ::tra::hw::HardwareDescription &hw,
                                   int64_t threads, bool emulate) {
  p = ckpt.params;
  ranks = hw.numDevices();
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("mpirun");
  if (!found)
    return hw.getName().str() + " has " + std::to_string(ranks) +
           " devices: the run needs mpirun (Open MPI), which is not on PATH";
  mpirun = *found;
  bool gpu = false;
  for (unsigned d = 0; d < hw.numDevices(); ++d)
    gpu |= hw.getDevice(d).kind == ::tra::hw::DeviceKind::GPU;
  if (gpu && !emulate)
    return hw.getName().str() +
           " has GPU devices: GPU code generation is not implemented; "
           "--emulate-on-cpu runs its plan with CPU code on this machine";
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createUniqueDirectory("tra-llama", path))
    return "cannot create a temporary directory";
  dir = std::string(path);

  // Plan @forward for the hardware and compile one program per device.
  OwningOpRef<ModuleOp> module = buildLlamaModule(&ctx, p, /*seqLen=*/1);
  PassManager pm(&ctx);
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  if (failed(pm.run(*module)))
    return "cannot inline the model";
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return "internal error: the model has no @forward";
  plan::CostModel model(hw);
  auto summary = plan::assignPartitions(forward, model, {});
  if (!summary)
    return llvm::toString(summary.takeError());
  if (failed(plan::insertRepartitions(forward, model)) ||
      failed(plan::verifyPlan(forward)))
    return "internal error: the plan of @forward is inconsistent";
  CodegenOptions options;
  options.entry = "forward";
  options.numThreads = threads;
  exe = file("forward");
  if (failed(compileDistributedToExecutable(*module, exe, options)))
    return "code generation for " + hw.getName().str() + " failed";

  // Weights and rotary tables in one safetensors file; zero caches.
  std::vector<rt::NamedTensor> tensors;
  for (auto &[name, t] : ckpt.weights)
    tensors.push_back({name, t});
  std::vector<float> cosTable, sinTable;
  computeRopeTables(p, cosTable, sinTable);
  std::vector<int64_t> shape = {p.maxSeqLen, p.headDim() / 2};
  tensors.push_back(
      {"freqs_cos",
       rt::HostTensor::copyOf(rt::DType::F32, shape, cosTable.data())});
  tensors.push_back(
      {"freqs_sin",
       rt::HostTensor::copyOf(rt::DType::F32, shape, sinTable.data())});
  weights = file("weights.safetensors");
  if (rt::Status st = rt::writeSafetensors(weights, tensors); !st)
    return st.message();
  rt::HostTensor zero = rt::HostTensor::zeros(
      rt::DType::F32, {p.maxSeqLen, p.nKvHeads, p.headDim()});
  for (int64_t l = 0; l < p.nLayers; ++l)
    for (const char *kind : {"k", "v"})
      if (rt::Status st = rt::writeNpy(cacheFile(l, kind, parity), zero); !st)
        return st.message();
  return "";
}

std::string DistributedModel::step(int64_t token, int64_t pos,
                                   std::vector<double> &logits) {
  rt::HostTensor tok =
      rt::HostTensor::fromDoubles(rt::DType::I64, {1}, {double(token)});
  rt::HostTensor at =
      rt::HostTensor::fromDoubles(rt::DType::I64, {}, {double(pos)});
  if (rt::Status st = rt::writeNpy(file("tokens.npy"), tok); !st)
    return st.message();
  if (rt::Status st = rt::writeNpy(file("pos.npy"), at); !st)
    return st.message();
  std::vector<std::string> args = {mpirun};
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  for (const char *arg : {"--oversubscribe", "-np"})
    args.push_back(arg);
  args.push_back(std::to_string(ranks));
  for (std::string arg : {exe, std::string("--weights"), weights,
                          std::string("--input"), "tokens=" + file("tokens.npy"),
                          std::string("--input"), "pos=" + file("pos.npy"),
                          std::string("--output"),
                          "logits=" + file("logits.npy")})
    args.push_back(arg);
  for (int64_t l = 0; l < p.nLayers; ++l)
    for (const char *kind : {"k", "v"}) {
      std::string name = "layers." + std::to_string(l) + "." + kind;
      args.push_back("--input");
      args.push_back(name + "_cache=" + cacheFile(l, kind, parity));
      args.push_back("--output");
      args.push_back(name + "_cache_out=" + cacheFile(l, kind, !parity));
    }
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(mpirun, argv, std::nullopt, {}, 0, 0,
                                     &error);
  if (rc != 0)
    return "the distributed model failed at position " + std::to_string(pos) +
           " (mpirun exit code " + std::to_string(rc) + ")" +
           (error.empty() ? "" : ": " + error);
  parity = !parity;
  rt::Result<rt::HostTensor> out = rt::readNpy(file("logits.npy"));
  if (!out)
    return out.message();
  logits.resize(out->numElements());
  for (int64_t i = 0; i < out->numElements(); ++i)
    logits[i] = out->loadAsDouble(i);
  return "";
}
