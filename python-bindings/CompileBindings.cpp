//===- CompileBindings.cpp - tra.compile: programs from Python ------------===//
//
// `_tra._compile(text, hw, entry, ...)` does what `tra-compile` does for a
// model: parse and verify it, plan it for the hardware with the one planning
// pipeline (plan::planModule), keep the EXPLAIN report of the plan, and for
// one device compile the entry in process into a shared library through the
// library cache (loadOrCompileProgram) and load it. `CompiledProgram.run`
// calls the loaded program on NumPy buffers of exactly its signature;
// tra/program.py checks and converts the user's arrays before (names,
// shapes, element types, bf16 rounding). For several devices the planned
// module is kept and `compile_mpi` compiles it, when first run, into the
// MPI executable `tra-compile --emit=exe` writes; tra/program.py runs it
// with mpirun on .npy files.
//
//===----------------------------------------------------------------------===//

#include "CompileBindings.h"
#include "Diagnostics.h"

#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Hardware/Hardware.h"
#include "tra/Optimizer/CostModel.h"
#include "tra/Optimizer/Pipeline.h"
#include "tra/Optimizer/Report.h"
#include "tra/Parse/ModuleFile.h"
#include "tra/Target/Distributed.h"
#include "tra/Target/LibraryCache.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <mutex>
#include <optional>

namespace py = pybind11;
using namespace mlir;
using namespace mlir::tra;
using ::tra::python::DiagnosticCollector;

namespace {

/// The NumPy dtype that holds one element of `type` in a program's buffers
/// (bf16 as its bits, uint16; i1 as NumPy's one-byte bool).
const char *storageDType(ExecElementType type) {
  switch (type) {
  case ExecElementType::f32:
    return "float32";
  case ExecElementType::f16:
    return "float16";
  case ExecElementType::bf16:
    return "uint16";
  case ExecElementType::i64:
    return "int64";
  case ExecElementType::i32:
    return "int32";
  case ExecElementType::i1:
    return "bool";
  case ExecElementType::i8:
    return "int8";
  }
  return "float32";
}

/// Options of `_compile` besides the model and the hardware.
struct CompileOptions {
  std::string entry;
  std::optional<std::string> cacheDir;
  int64_t threads = 0;
  bool emulateOnCpu = false;
  unsigned beam = 32;
  unsigned maxSplitIndices = 2;
};

/// A model planned for a hardware description and, when it runs in this
/// process (one device), compiled and loaded.
class Program {
public:
  Program(const std::string &text, const std::string &hw,
          const CompileOptions &options) {
    registerDialects();
    ::tra::hw::HardwareDescription hardware = loadHardware(hw);
    hardwareName = hardware.getName().str();
    numDevices = hardware.numDevices();
    DiagnosticCollector diags(&context);
    OwningOpRef<ModuleOp> module = parseModuleText(text, &context, "<python>");
    if (!module)
      throw py::value_error(diags.str());
    FailureOr<func::FuncOp> entry = findEntryFunction(*module, options.entry);
    if (failed(entry))
      throw py::value_error(diags.str());
    FailureOr<EntrySignature> entrySignature = getEntrySignature(*entry);
    if (failed(entrySignature))
      throw py::value_error(diags.str());
    signature = std::move(*entrySignature);
    plan(*module, hardware, options, diags);
    if (std::string why = whyNotRunnable(hardware, options, hw); !why.empty()) {
      notRunnable = why;
      return;
    }
    if (numDevices > 1) {
      // Compiled when first run (see compileMpi): the plan is enough for
      // explain().
      mpiThreads = options.threads > 0    ? options.threads
                   : options.emulateOnCpu ? 1
                                          : hardware.getDevice(0).cores;
      mpiCosts = hardware.getDevice(0).getParallelCosts();
      return;
    }
    compile(*module, hardware, options, diags);
  }

  const std::string &getEntry() const { return signature.function; }
  const std::string &getHardwareName() const { return hardwareName; }
  unsigned getNumDevices() const { return numDevices; }
  const std::string &explain() const { return explainText; }
  const std::string &planText() const { return planned; }
  bool isRunnable() const { return library != nullptr; }
  /// Whether the program runs as one MPI job (several devices).
  bool isMpi() const { return plannedModule && notRunnable.empty(); }
  const std::string &getNotRunnable() const { return notRunnable; }
  bool isFromCache() const { return fromCache; }
  double getCompileSeconds() const { return compileSeconds; }
  const std::string &getCachePath() const { return cachePath; }
  const std::string &getNotes() const { return notes; }
  int64_t getThreads() const { return threads; }
  int64_t getMpiThreads() const { return mpiThreads; }

  /// {"inputs": [...], "outputs": [...]}, each entry a dict with the
  /// tensor's name, shape (a tuple), element type ("f32", ..., "i1") and
  /// the NumPy dtype of its buffer ("storage").
  py::dict getSignature() const {
    auto describe = [](const SmallVector<EntryTensor> &tensors) {
      py::list list;
      for (const EntryTensor &t : tensors) {
        py::dict d;
        d["name"] = t.name;
        d["shape"] = py::tuple(
            py::cast(std::vector<int64_t>(t.shape.begin(), t.shape.end())));
        d["dtype"] = stringifyExecElementType(t.elementType).str();
        d["storage"] = storageDType(t.elementType);
        list.append(d);
      }
      return list;
    };
    py::dict sig;
    sig["inputs"] = describe(signature.inputs);
    sig["outputs"] = describe(signature.outputs);
    return sig;
  }

  /// Runs the program on `inputs`, one C-contiguous array per input in
  /// signature order with exactly its shape and storage dtype; returns the
  /// outputs in signature order (bf16 as uint16 bits).
  py::list run(const py::list &inputs) const {
    if (!library)
      throw py::value_error(notRunnable);
    if (inputs.size() != signature.inputs.size())
      throw py::value_error("@" + getEntry() + " takes " +
                            std::to_string(signature.inputs.size()) +
                            " inputs, got " + std::to_string(inputs.size()));
    std::vector<void *> buffers;
    for (auto [i, tensor] : llvm::enumerate(signature.inputs)) {
      py::handle item = inputs[i];
      if (!py::isinstance<py::array>(item))
        throw py::value_error("input '" + tensor.name +
                              "' is not a NumPy array");
      auto array = py::reinterpret_borrow<py::array>(item);
      checkBuffer(array, tensor, "input");
      buffers.push_back(const_cast<void *>(array.data()));
    }
    py::list outputs;
    for (const EntryTensor &tensor : signature.outputs) {
      std::vector<py::ssize_t> shape(tensor.shape.begin(), tensor.shape.end());
      py::array array(py::dtype(storageDType(tensor.elementType)), shape);
      buffers.push_back(array.mutable_data());
      outputs.append(array);
    }
    ::tra::rt::Status status;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(runMutex);
      status = library->run(buffers.data());
    }
    // A failed run-time check (an index out of range): no results.
    if (!status)
      throw py::value_error(status.message());
    return outputs;
  }

  /// Compiles the planned module (several devices) into the MPI executable
  /// `path`: one rank per device, as `tra-compile --emit=exe` does.
  void compileMpi(const std::string &path) {
    if (!isMpi())
      throw py::value_error(notRunnable.empty()
                                ? "@" + getEntry() + " runs in this process"
                                : notRunnable);
    if (compiledMpi)
      throw py::value_error("the MPI executable is compiled already");
    compiledMpi = true;
    CodegenOptions codegen;
    codegen.entry = getEntry();
    codegen.numThreads = mpiThreads;
    codegen.parallelCosts = mpiCosts;
    codegen.profile = false;
    DiagnosticCollector diags(&context);
    LogicalResult result = failure();
    {
      py::gil_scoped_release release;
      result = compileDistributedToExecutable(*plannedModule, path, codegen);
    }
    if (failed(result))
      throw py::value_error(diags.withMessage("@" + getEntry() +
                                              ": code generation for " +
                                              hardwareName + " failed"));
  }

private:
  void registerDialects() {
    DialectRegistry registry;
    registry.insert<TRADialect, plan::PlanDialect, arith::ArithDialect,
                    func::FuncDialect, math::MathDialect>();
    func::registerInlinerExtension(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  static ::tra::hw::HardwareDescription loadHardware(const std::string &hw) {
    llvm::Expected<::tra::hw::HardwareDescription> hardware =
        ::tra::hw::loadHardware(hw);
    if (!hardware)
      throw py::value_error(llvm::toString(hardware.takeError()));
    return std::move(*hardware);
  }

  /// Plans a copy of `module` (the module itself stays unpartitioned, as
  /// tra-compile compiles one-device models, but takes the copy's
  /// recomputed activations) and keeps its EXPLAIN report,
  /// printed as `tra-compile --emit=plan --explain` prints it.
  void plan(ModuleOp module, const ::tra::hw::HardwareDescription &hardware,
            const CompileOptions &options, const DiagnosticCollector &diags) {
    OwningOpRef<ModuleOp> copy = module.clone();
    plan::PlanOptions planOptions;
    planOptions.entry = options.entry;
    planOptions.planner.beam = options.beam;
    planOptions.planner.choices.maxSplitIndices = options.maxSplitIndices;
    std::optional<llvm::Expected<llvm::StringMap<plan::PlanSummary>>> result;
    {
      py::gil_scoped_release release;
      result.emplace(plan::planModule(*copy, hardware, planOptions));
    }
    if (!*result)
      throw py::value_error(
          diags.withMessage(llvm::toString(result->takeError())));
    llvm::StringMap<plan::PlanSummary> &summaries = **result;
    plan::CostModel model(hardware);
    llvm::raw_string_ostream os(explainText);
    for (auto func : copy->getOps<func::FuncOp>())
      if (summaries.count(func.getSymName()))
        plan::printExplain(func, model, os, &summaries[func.getSymName()]);
    llvm::raw_string_ostream planOs(planned);
    copy->print(planOs);
    if (hardware.numDevices() > 1) {
      plannedModule = std::move(copy);
      return;
    }
    // One device compiles the whole module, recomputing what the plan
    // recomputes.
    if (llvm::Error error = plan::takeRecomputation(module, *copy, summaries))
      throw py::value_error(
          diags.withMessage(llvm::toString(std::move(error))));
  }

  /// Why the program cannot run in this process ("" if it can): hardware
  /// with several devices, or GPU devices without emulate_on_cpu.
  std::string whyNotRunnable(const ::tra::hw::HardwareDescription &hardware,
                             const CompileOptions &options,
                             const std::string &hw) const {
    bool hasGpu = false;
    for (unsigned d = 0; d < hardware.numDevices(); ++d)
      hasGpu |= hardware.getDevice(d).kind == ::tra::hw::DeviceKind::GPU;
    if (!hasGpu || options.emulateOnCpu)
      return "";
    if (numDevices == 1)
      return hardwareName +
             " has a GPU device: programs for a GPU do not run in this "
             "process yet (`tra-compile MODEL.mlir --hw " +
             hw +
             " -o OUT` writes one as an executable); tra.compile(..., "
             "emulate_on_cpu=True) compiles the program with CPU code and "
             "runs it here";
    std::string n = std::to_string(numDevices);
    return hardwareName + " has " + n +
           " GPU devices: a program for several GPUs does not run in this "
           "process (explain() and plan() show this plan). Write the model "
           "to MODEL.mlir and run `tra-compile MODEL.mlir --entry " +
           getEntry() + " --hw " + hw + " --emit=exe -o OUT` and `mpirun -np " +
           n +
           " OUT --input NAME=FILE.npy ... --output NAME=FILE.npy` (one rank "
           "per GPU, NCCL between them); tra.compile(..., "
           "emulate_on_cpu=True) runs its plan here as " +
           n + " MPI ranks of CPU code";
  }

  /// Compiles the entry of `module` into a shared library (through the
  /// library cache) and loads it.
  void compile(ModuleOp module, const ::tra::hw::HardwareDescription &hardware,
               const CompileOptions &options,
               const DiagnosticCollector &diags) {
    threads = options.threads > 0
                  ? options.threads
                  : std::max<int64_t>(1, hardware.getDevice(0).cores);
    CodegenOptions codegen;
    codegen.entry = getEntry();
    codegen.numThreads = threads;
    codegen.profile = false;
    codegen.parallelCosts = hardware.getDevice(0).getParallelCosts();
    std::string cacheDirectory = options.cacheDir
                                     ? *options.cacheDir
                                     : getDefaultLibraryCacheDirectory();
    std::string hwText = hardware.toJSONText();
    llvm::raw_string_ostream notesOs(notes);
    std::optional<llvm::Expected<mlir::tra::CompiledProgram>> compiled;
    {
      py::gil_scoped_release release;
      compiled.emplace(loadOrCompileProgram(module, codegen, cacheDirectory,
                                            hwText, notesOs));
    }
    if (!*compiled)
      throw py::value_error(
          diags.withMessage(llvm::toString(compiled->takeError())));
    library = std::move((*compiled)->program);
    fromCache = (*compiled)->fromCache;
    compileSeconds = (*compiled)->compileSeconds;
    cachePath = (*compiled)->cachePath;
    library->setNumThreads(threads);
  }

  static void checkBuffer(const py::array &array, const EntryTensor &tensor,
                          const char *what) {
    std::string name = std::string(what) + " '" + tensor.name + "'";
    if (!array.dtype().equal(py::dtype(storageDType(tensor.elementType))))
      throw py::value_error(name + " must be a " +
                            storageDType(tensor.elementType) + " buffer, got " +
                            py::str(array.dtype()).cast<std::string>());
    if (!(array.flags() & py::array::c_style))
      throw py::value_error(name + " is not C-contiguous");
    if (array.ndim() != py::ssize_t(tensor.shape.size()) ||
        !std::equal(tensor.shape.begin(), tensor.shape.end(), array.shape()))
      throw py::value_error(name + " has the wrong shape");
  }

  MLIRContext context;
  EntrySignature signature;
  std::string hardwareName, explainText, planned, notRunnable, notes, cachePath;
  unsigned numDevices = 0;
  int64_t threads = 1;
  bool fromCache = false;
  double compileSeconds = 0;
  std::unique_ptr<::tra::exec::ProgramLibrary> library;
  mutable std::mutex runMutex;
  /// Several devices: the planned module, compiled by compileMpi.
  OwningOpRef<ModuleOp> plannedModule;
  int64_t mpiThreads = 1;
  /// The ranks' CPU costs (invalid for GPU devices).
  ::tra::exec::ParallelCosts mpiCosts;
  bool compiledMpi = false;
};

} // namespace

void registerCompile(py::module_ &m) {
  py::class_<Program>(
      m, "CompiledProgram",
      "A model planned for a hardware description and, for one device, "
      "compiled and loaded into this process (see tra.compile)")
      .def_property_readonly("entry", &Program::getEntry)
      .def_property_readonly("hardware", &Program::getHardwareName)
      .def_property_readonly("devices", &Program::getNumDevices)
      .def_property_readonly("runnable", &Program::isRunnable)
      .def_property_readonly("mpi", &Program::isMpi)
      .def_property_readonly("mpi_threads",
                             [](const Program &p) { return p.getMpiThreads(); })
      .def_property_readonly("not_runnable_reason", &Program::getNotRunnable)
      .def_property_readonly("from_cache", &Program::isFromCache)
      .def_property_readonly("compile_seconds", &Program::getCompileSeconds)
      .def_property_readonly("cache_path", &Program::getCachePath)
      .def_property_readonly("notes", &Program::getNotes)
      .def_property_readonly("threads", &Program::getThreads)
      .def_property_readonly("signature", &Program::getSignature)
      .def("explain", &Program::explain)
      .def("plan", &Program::planText)
      .def("run", &Program::run, py::arg("buffers"))
      .def("compile_mpi", &Program::compileMpi, py::arg("path"));
  m.def(
      "_compile",
      [](const std::string &text, const std::string &hw,
         const std::string &entry, std::optional<std::string> cacheDir,
         int64_t threads, bool emulateOnCpu, unsigned beam,
         unsigned maxSplitIndices) {
        CompileOptions options;
        options.entry = entry;
        options.cacheDir = std::move(cacheDir);
        options.threads = threads;
        options.emulateOnCpu = emulateOnCpu;
        options.beam = beam;
        options.maxSplitIndices = maxSplitIndices;
        return std::make_unique<Program>(text, hw, options);
      },
      py::arg("text"), py::arg("hw"), py::arg("entry"), py::arg("cache_dir"),
      py::arg("threads"), py::arg("emulate_on_cpu"), py::arg("beam"),
      py::arg("max_split_indices"));
}
