//===- tra-compile.cpp - The tra ahead-of-time compiler -------------------===//
//
//   tra-compile MODEL.mlir [--hw FILE.json|local]
//               [--emit=exe|obj|lib|plan|mlir] [--explain] [--dot=FILE.dot]
//               [-o FILE]
//
// Reads a model-level tra program and plans it for the hardware described by
// --hw (plan::planModule: inline, then the decomposition of every function).
// --emit selects what is written:
//
//   exe    a native executable (the default with -o); for hardware with
//          several devices, an MPI program with one rank per device
//          (`mpirun -np N OUT ...`). For one NVIDIA GPU, a program whose
//          kernels run on the GPU (runtime/cuda); --emulate-on-cpu compiles
//          plans for GPU hardware with CPU code.
//   obj    an object file; lib: an object, its C header and a shared library.
//   plan   the planned IR: every tensor value with its distribution and the
//          tile moves made explicit (tra_plan dialect); the default without
//          -o, and with --explain or --dot.
//   mlir   for one device, the IR after each lowering stage (linalg on
//          tensors, bufferized, LLVM dialect), or only --stage=NAME's.
//
// --explain prints the plan as a database prints EXPLAIN (per operation its
// cut, devices, estimated time and bytes moved; totals for the step time,
// bytes per link class and peak memory per device) instead of the IR; the IR
// still goes to -o when -o is given. --dot writes a Graphviz rendering with
// every tile coloured by its device.
//
//===----------------------------------------------------------------------===//

#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Hardware/Hardware.h"
#include "tra/Optimizer/Pipeline.h"
#include "tra/Optimizer/Report.h"
#include "tra/Parse/ModuleFile.h"
#include "tra/Pipeline/Pipeline.h"
#include "tra/Target/Codegen.h"
#include "tra/Target/Distributed.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tra;
namespace cl = llvm::cl;

namespace {
/// What tra-compile writes.
enum class EmitKind { Plan, Exe, Obj, Lib, Mlir };

/// tra-compile's own options: --help lists only these, not the LLVM and
/// MLIR options linked in.
cl::OptionCategory toolCategory("tra-compile options");

struct Options {
  cl::opt<std::string> input{cl::Positional, cl::Required,
                             cl::desc("<model.mlir>"), cl::cat(toolCategory)};
  cl::opt<std::string> hw{"hw",
                          cl::desc("hardware description: FILE.json or "
                                   "'local' (default)"),
                          cl::init("local"), cl::cat(toolCategory)};
  cl::opt<EmitKind> emit{
      "emit",
      cl::desc("what to write (default: exe with -o FILE; plan with "
               "--explain or --dot, or without -o)"),
      cl::init(EmitKind::Exe),
      cl::values(clEnumValN(EmitKind::Exe, "exe",
                            "a native executable (-o OUT; for several "
                            "devices an MPI program, one rank each)"),
                 clEnumValN(EmitKind::Obj, "obj", "an object file (-o OUT.o)"),
                 clEnumValN(EmitKind::Lib, "lib",
                            "an object, its C header and a shared library "
                            "(-o OUT: OUT.o, OUT.h, OUT.so; one device)"),
                 clEnumValN(EmitKind::Plan, "plan",
                            "the planned IR (tra_plan dialect)"),
                 clEnumValN(EmitKind::Mlir, "mlir",
                            "the IR after each lowering stage (--stage; one "
                            "device)")),
      cl::cat(toolCategory)};
  cl::opt<bool> explain{"explain",
                        cl::desc("print the plan as EXPLAIN instead of IR"),
                        cl::cat(toolCategory)};
  cl::opt<std::string> dot{"dot",
                           cl::desc("write a Graphviz rendering of "
                                    "the plan to FILE"),
                           cl::value_desc("FILE"), cl::init(""),
                           cl::cat(toolCategory)};
  cl::opt<std::string> output{"o", cl::desc("output file (default: stdout)"),
                              cl::value_desc("FILE"), cl::init(""),
                              cl::cat(toolCategory)};
  cl::opt<std::string> entry{"entry",
                             cl::desc("plan only this function (default: "
                                      "every function with a body)"),
                             cl::init(""), cl::cat(toolCategory)};
  cl::opt<unsigned> beam{"beam",
                         cl::desc("search states kept per step besides the "
                                  "best per distribution of the values just "
                                  "produced (0: all, exact)"),
                         cl::init(32), cl::cat(toolCategory)};
  cl::opt<unsigned> maxSplit{"max-split-indices",
                             cl::desc("most indices one operation is split "
                                      "along"),
                             cl::init(2), cl::cat(toolCategory)};
  cl::opt<bool> emulateOnCpu{
      "emulate-on-cpu",
      cl::desc("compile the plan made for --hw with CPU code for every "
               "device: the program runs on this machine as one MPI rank "
               "per device (mpirun --oversubscribe), one thread each unless "
               "--device-threads says otherwise"),
      cl::cat(toolCategory)};
  cl::opt<unsigned> threads{
      "device-threads",
      cl::desc("default threads per device of the executable (default: the "
               "hardware file's cores; 1 with --emulate-on-cpu)"),
      cl::init(0), cl::cat(toolCategory)};
  cl::opt<std::string> stage{
      "stage",
      cl::desc("with --emit=mlir, the lowering stage to print: linalg, "
               "bufferized, llvm, or all (default: every stage in turn, each "
               "after a '// ----- stage NAME -----' line)"),
      cl::init("all"), cl::cat(toolCategory)};
  cl::opt<bool> blas{"blas",
                     cl::desc("call BLAS sgemm for f32 contractions (false: "
                              "generated loops)"),
                     cl::init(true), cl::cat(toolCategory)};
  cl::opt<bool> fuseElementwise{
      "fuse-elementwise",
      cl::desc("fuse chains of elementwise operations into one loop nest"),
      cl::init(true), cl::cat(toolCategory)};
  cl::opt<int64_t> maskedBlock{
      "masked-block",
      cl::desc("CPU: compute causal attention in blocks of N positions, only "
               "those before pos + the step's tokens (default 64; 0: every "
               "position of the KV cache)"),
      cl::init(64), cl::cat(toolCategory)};
  cl::opt<bool> blockingMoves{
      "blocking-moves",
      cl::desc("distributed programs: blocking tile moves in program order "
               "instead of non-blocking moves overlapping computation (for "
               "comparison and debugging)"),
      cl::Hidden, cl::cat(toolCategory)};
  cl::opt<int64_t> parallelMinWork{
      "parallel-min-work",
      cl::desc("run loop nests with at least this much work (iterations "
               "times body operations) on OpenMP threads (default: the "
               "pipeline's)"),
      cl::init(-1), cl::Hidden, cl::cat(toolCategory)};
};

/// A compilation: the steps shared by every --emit mode.
class Compiler {
public:
  Compiler(Options &options, MLIRContext &context)
      : options(options), context(context), emit(emitKind(options)) {}

  int run();

private:
  int fail(const llvm::Twine &message) {
    llvm::WithColor::error(llvm::errs(), "tra-compile") << message << "\n";
    return 1;
  }
  /// --emit, or its default: an executable when -o names one; the plan
  /// with --explain or --dot (reports on the plan), or without -o.
  static EmitKind emitKind(const Options &options);
  OwningOpRef<ModuleOp> load();
  int checkEntry(ModuleOp module);
  int plan(ModuleOp module, const ::tra::hw::HardwareDescription &hw,
           bool oneDevice = false);
  int emitPlan(ModuleOp module, const plan::CostModel &model);
  int emitDistributed(ModuleOp module, const ::tra::hw::HardwareDescription &hw,
                      bool cuda);
  int emitNative(ModuleOp module, const ::tra::hw::HardwareDescription &hw);
  int emitMlir(ModuleOp module, const CodegenOptions &codegen);
  /// The code generation options every emit mode takes from the command
  /// line (entry, BLAS, fusion, thread threshold).
  CodegenOptions codegenOptions() const;

  Options &options;
  MLIRContext &context;
  EmitKind emit;
  /// The model's text, and the handler that prints diagnostics at their
  /// place in it (with the line), from the parser and from every later
  /// stage (the planner, the lowering) alike.
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> diagnostics;
  /// Summaries of the planned functions, for --explain.
  llvm::StringMap<plan::PlanSummary> summaries;
};
} // namespace

EmitKind Compiler::emitKind(const Options &options) {
  if (options.emit.getNumOccurrences())
    return options.emit;
  if (options.explain || !options.dot.empty() || options.output.empty())
    return EmitKind::Plan;
  return EmitKind::Exe;
}

OwningOpRef<ModuleOp> Compiler::load() {
  std::string error;
  auto file = openInputFile(options.input, &error);
  if (!file) {
    fail(error);
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  diagnostics =
      std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr, &context);
  // The line of the model is shown; a dump of the generic op is not.
  context.printOpOnDiagnostic(false);
  OwningOpRef<ModuleOp> module =
      parseModuleFile(sourceMgr, ParserConfig(&context));
  if (!module)
    fail(options.input + ": the model does not parse or verify");
  return module;
}

/// Checks that the model has what --entry names, or something to plan.
int Compiler::checkEntry(ModuleOp module) {
  auto hasBody = [&](func::FuncOp func) {
    return !func.isDeclaration() &&
           (options.entry.empty() || func.getSymName() == options.entry);
  };
  if (llvm::any_of(module.getOps<func::FuncOp>(), hasBody))
    return 0;
  return fail(options.entry.empty()
                  ? options.input + ": no function with a body to plan"
                  : options.input + ": no function @" + options.entry);
}

/// Plans `module` for `hw` (plan::planModule); a function planned already
/// (e.g. a plan edited by hand) is kept if it is consistent and made for
/// this many devices.
int Compiler::plan(ModuleOp module, const ::tra::hw::HardwareDescription &hw,
                   bool oneDevice) {
  plan::PlanOptions planOptions;
  planOptions.entry = options.entry;
  planOptions.planner.beam = options.beam;
  planOptions.planner.choices.maxSplitIndices = options.maxSplit;
  auto planned = oneDevice ? plan::planForOneDevice(module, hw, planOptions)
                           : plan::planModule(module, hw, planOptions);
  if (!planned)
    return fail(llvm::toString(planned.takeError()));
  summaries = std::move(*planned);
  return 0;
}

int Compiler::emitPlan(ModuleOp module, const plan::CostModel &model) {
  if (!options.dot.empty()) {
    std::string error;
    auto dot = openOutputFile(options.dot, &error);
    if (!dot)
      return fail(options.dot + ": " + error);
    plan::printPlanDot(module, model, dot->os());
    dot->keep();
  }
  if (options.explain) {
    // Functions planned now come with their search summary; a plan given
    // in the input (edited by hand, or made with other options) is
    // explained as it is.
    for (auto func : module.getOps<func::FuncOp>()) {
      auto found = summaries.find(func.getSymName());
      if (found != summaries.end())
        plan::printExplain(func, model, llvm::outs(), &found->second);
      else if (func->hasAttr(plan::PlanDialect::kNumDevicesAttrName))
        plan::printExplain(func, model, llvm::outs(), nullptr);
    }
    if (options.output.empty())
      return 0;
  }
  std::string error;
  auto out = openOutputFile(options.output.empty() ? std::string("-")
                                                   : options.output.getValue(),
                            &error);
  if (!out)
    return fail(options.output + ": " + error);
  module->print(out->os());
  out->keep();
  return 0;
}

/// Code generation. A plan for one device keeps every tensor whole, so the
/// model is planned on a copy (which checks that it fits the device's
/// memory) and the unpartitioned module is compiled, with the activations
/// recomputed that the plan recomputes (plan::planForOneDevice).
int Compiler::emitNative(ModuleOp module,
                         const ::tra::hw::HardwareDescription &hw) {
  if (options.output.empty() && emit != EmitKind::Mlir)
    return fail("--emit=" +
                llvm::Twine(emit == EmitKind::Exe   ? "exe"
                            : emit == EmitKind::Lib ? "lib"
                                                    : "obj") +
                " needs -o FILE");
  unsigned gpus = 0;
  for (unsigned d = 0; d < hw.numDevices(); ++d)
    gpus += hw.getDevice(d).kind == ::tra::hw::DeviceKind::GPU;
  bool cuda = gpus > 0 && !options.emulateOnCpu;
  if (cuda && gpus != hw.numDevices())
    return fail(hw.getName() + " has " + llvm::Twine(hw.numDevices()) +
                " devices, " + llvm::Twine(gpus) +
                " of them GPUs: a program runs either on GPUs or on CPUs; "
                "--emulate-on-cpu compiles its plan with CPU code for every "
                "device (one MPI rank per device)");
  if (hw.numDevices() != 1)
    return emitDistributed(module, hw, cuda);
  if (int status = plan(module, hw, /*oneDevice=*/true))
    return status;
  CodegenOptions codegen = codegenOptions();
  codegen.numThreads =
      options.threads ? int64_t(options.threads) : hw.getDevice(0).cores;
  codegen.parallelCosts = hw.getDevice(0).getParallelCosts();
  if (cuda) {
    codegen.cuda = true;
    // The host thread only issues work.
    codegen.numThreads = 1;
  }
  if (emit == EmitKind::Mlir)
    return emitMlir(module, codegen);
  LogicalResult result =
      emit == EmitKind::Exe
          ? compileToExecutable(module, options.output, codegen)
      : emit == EmitKind::Lib
          ? compileToLibrary(module, options.output, codegen)
          : compileToObject(module, options.output, codegen);
  return failed(result) ? fail(options.input + ": code generation failed") : 0;
}

/// Code generation for a plan over several devices: one program per device,
/// run as one MPI rank each (runtime/mpi); with `cuda`, each rank on its
/// own GPU, the moves between them through NCCL (runtime/cuda).
int Compiler::emitDistributed(ModuleOp module,
                              const ::tra::hw::HardwareDescription &hw,
                              bool cuda) {
  if (emit != EmitKind::Exe && emit != EmitKind::Obj)
    return fail("--emit=mlir and --emit=lib are for one-device hardware; " +
                hw.getName() + " has " + llvm::Twine(hw.numDevices()) +
                " devices (use --emit=exe, --emit=obj or --emit=plan)");
  if (int status = plan(module, hw))
    return status;
  CodegenOptions codegen = codegenOptions();
  codegen.blockingMoves = options.blockingMoves;
  // The ranks' CPU costs (none for GPU devices, emulated or not).
  codegen.parallelCosts = hw.getDevice(0).getParallelCosts();
  codegen.numThreads = options.threads        ? int64_t(options.threads)
                       : options.emulateOnCpu ? 1
                                              : hw.getDevice(0).cores;
  if (cuda) {
    // One GPU per rank, NCCL between them; the host thread only issues work.
    codegen.cuda = true;
    codegen.numThreads = 1;
  }
  LogicalResult result =
      emit == EmitKind::Exe
          ? compileDistributedToExecutable(module, options.output, codegen)
          : compileDistributedToObject(module, options.output, codegen);
  return failed(result) ? fail(options.input + ": code generation failed") : 0;
}

CodegenOptions Compiler::codegenOptions() const {
  CodegenOptions codegen;
  codegen.entry = options.entry;
  codegen.hardwareName = options.hw;
  codegen.blas = options.blas;
  codegen.fuseElementwise = options.fuseElementwise;
  codegen.maskedBlock = options.maskedBlock;
  if (options.parallelMinWork >= 0)
    codegen.parallelMinWork = options.parallelMinWork;
  return codegen;
}

/// --emit=mlir: the module after each stage of the one-device lowering
/// (Pipeline.h), or after the one --stage names.
int Compiler::emitMlir(ModuleOp module, const CodegenOptions &codegen) {
  using StageBuilder =
      void (*)(OpPassManager &, const TRAToLLVMPipelineOptions &);
  const std::pair<StringRef, StageBuilder> stages[] = {
      {"linalg", buildTRAToLinalgStage},
      {"bufferized", buildBufferizationStage},
      {"llvm", codegen.cuda ? buildGPUStage : buildLLVMStage}};
  StringRef only = options.stage;
  if (only != "all" && llvm::none_of(stages, [&](const auto &stage) {
        return stage.first == only;
      }))
    return fail("--stage=" + only +
                ": expected linalg, bufferized, llvm or all");
  DialectRegistry registry;
  registerTRACodegenDialects(registry);
  context.appendDialectRegistry(registry);
  TRAToLLVMPipelineOptions pipeline;
  setPipelineOptions(pipeline, codegen);
  pipeline.entry = codegen.entry;
  std::string error;
  auto out = openOutputFile(options.output.empty() ? std::string("-")
                                                   : options.output.getValue(),
                            &error);
  if (!out)
    return fail(options.output + ": " + error);
  for (const auto &[name, build] : stages) {
    PassManager pm(&context);
    build(pm, pipeline);
    if (failed(pm.run(module)))
      return fail(llvm::Twine(options.input) + ": lowering stage '" + name +
                  "' failed");
    if (only == "all")
      out->os() << "// ----- stage " << name << " -----\n";
    if (only == "all" || only == name)
      module->print(out->os());
    if (only == name)
      break;
  }
  out->keep();
  return 0;
}

int Compiler::run() {
  if (options.maskedBlock < 0)
    return fail("--masked-block " + llvm::Twine(int64_t(options.maskedBlock)) +
                " must be 0 (off) or a number of positions");
  auto hardware = ::tra::hw::loadHardware(options.hw);
  if (!hardware)
    return fail(llvm::toString(hardware.takeError()));
  OwningOpRef<ModuleOp> module = load();
  if (!module)
    return 1;
  if (int status = checkEntry(*module))
    return status;
  if (emit != EmitKind::Plan)
    return emitNative(*module, *hardware);
  if (int status = plan(*module, *hardware))
    return status;
  return emitPlan(*module, plan::CostModel(*hardware));
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options options;
  cl::HideUnrelatedOptions(toolCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "tra ahead-of-time compiler: plans a "
                              "model-level tra program for a hardware "
                              "description and compiles it\n");
  DialectRegistry registry;
  registry.insert<TRADialect, plan::PlanDialect, arith::ArithDialect,
                  func::FuncDialect, math::MathDialect>();
  func::registerInlinerExtension(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  return Compiler(options, context).run();
}
