//===- GpuFatbin.cpp - One fatbin of a gpu.binary's cubins ----------------===//
//
// gpu-module-to-binary writes one cubin per NVVM target of a gpu.module
// (ptxas compiles the module once per chip); the translation of gpu.binary
// embeds one object. This pass packs the cubins of every gpu.binary into one
// CUDA fatbin with the toolkit's `fatbinary`, so that the program carries
// machine code for every chip it was compiled for and the driver loads the
// one for the GPU it runs on (cuModuleLoadData on a fatbin).
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_GPUFATBINPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {
/// Temporary files removed when it goes out of scope.
struct TemporaryFiles {
  SmallVector<std::string> paths;
  ~TemporaryFiles() {
    for (const std::string &path : paths)
      llvm::sys::fs::remove(path);
  }
  FailureOr<std::string> create(StringRef suffix) {
    SmallString<128> path;
    if (llvm::sys::fs::createTemporaryFile("tra-gpu", suffix, path))
      return failure();
    paths.push_back(std::string(path));
    return paths.back();
  }
};

/// Packs the cubins of `binary` into one fatbin object.
LogicalResult packBinary(gpu::BinaryOp binary, StringRef fatbinaryTool) {
  ArrayAttr objects = binary.getObjectsAttr();
  SmallVector<std::pair<gpu::ObjectAttr, int64_t>> cubins;
  for (Attribute attr : objects) {
    auto object = cast<gpu::ObjectAttr>(attr);
    if (object.getFormat() == gpu::CompilationTarget::Fatbin)
      continue;
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
    if (!target || object.getFormat() != gpu::CompilationTarget::Binary)
      return binary.emitError("tra-gpu-fatbin: expected cubins of NVVM "
                              "targets (gpu-module-to-binary format=bin)");
    StringRef chip = target.getChip();
    int64_t sm = 0;
    if (!chip.consume_front("sm_") || chip.getAsInteger(10, sm))
      return binary.emitError("tra-gpu-fatbin: unexpected chip '")
             << target.getChip() << "'";
    cubins.push_back({object, sm});
  }
  if (cubins.empty())
    return success();
  TemporaryFiles files;
  SmallVector<std::string> args = {fatbinaryTool.str(), "-64"};
  for (auto [object, sm] : cubins) {
    FailureOr<std::string> path = files.create("cubin");
    if (failed(path))
      return binary.emitError("tra-gpu-fatbin: cannot create a temporary file");
    std::error_code ec;
    llvm::raw_fd_ostream os(*path, ec);
    if (ec)
      return binary.emitError("tra-gpu-fatbin: ")
             << *path << ": " << ec.message();
    os << object.getObject().getValue();
    os.close();
    args.push_back("--image3=kind=elf,sm=" + std::to_string(sm) +
                   ",file=" + *path);
  }
  FailureOr<std::string> output = files.create("fatbin");
  if (failed(output))
    return binary.emitError("tra-gpu-fatbin: cannot create a temporary file");
  args.push_back("--create=" + *output);
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(fatbinaryTool, argRefs, std::nullopt,
                                         {}, 0, 0, &message);
  if (status != 0)
    return binary.emitError("tra-gpu-fatbin: ")
           << fatbinaryTool << " failed"
           << (message.empty() ? "" : ": " + message);
  auto buffer = llvm::MemoryBuffer::getFile(*output, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return binary.emitError("tra-gpu-fatbin: cannot read ")
           << *output << ": " << buffer.getError().message();
  MLIRContext *ctx = binary.getContext();
  SmallVector<Attribute> chips;
  for (auto [object, sm] : cubins)
    chips.push_back(StringAttr::get(ctx, "sm_" + std::to_string(sm)));
  auto properties = DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, "tra.chips"),
                           ArrayAttr::get(ctx, chips))});
  auto fatbin = gpu::ObjectAttr::get(
      ctx, cubins.front().first.getTarget(), gpu::CompilationTarget::Fatbin,
      StringAttr::get(ctx, (*buffer)->getBuffer()), properties,
      /*kernels=*/nullptr);
  binary.setObjectsAttr(ArrayAttr::get(ctx, {fatbin}));
  return success();
}

struct GpuFatbinPass : public tra::impl::GpuFatbinPassBase<GpuFatbinPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<gpu::BinaryOp> binaries(getOperation().getOps<gpu::BinaryOp>());
    if (binaries.empty())
      return;
    SmallString<128> tool(toolkit);
    llvm::sys::path::append(tool, "bin", "fatbinary");
    if (!llvm::sys::fs::can_execute(tool)) {
      getOperation().emitError("tra-gpu-fatbin: no CUDA fatbinary at ")
          << tool << " (set the CUDA toolkit with toolkit=DIR)";
      return signalPassFailure();
    }
    for (gpu::BinaryOp binary : binaries)
      if (failed(packBinary(binary, tool)))
        return signalPassFailure();
  }
};
} // namespace
