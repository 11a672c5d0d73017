//===- tra-interpret.cpp - Run model-level tra IR on .npy inputs ----------===//
//
//   tra-interpret MODEL.mlir [--entry NAME] --input NAME=FILE.npy ...
//                 [--output NAME=FILE.npy ...] [--print]
//
// Evaluates one function of the model with the reference interpreter.
// Arguments and results are named by their `tra.name` attribute, or
// argN/resultN. Every error names the file or IR location and exits 1.
//
//===----------------------------------------------------------------------===//

#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Interpreter/Interpreter.h"
#include "tra/Parse/ModuleFile.h"
#include "tra/Runtime/Npy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace mlir::tra;
namespace cl = llvm::cl;
namespace rt = ::tra::rt;

/// tra-interpret's own options: --help lists only these.
static cl::OptionCategory toolCategory("tra-interpret options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::Required, cl::cat(toolCategory));
static cl::opt<std::string> entryName("entry",
                                      cl::desc("function to run (default: "
                                               "the only public function, or "
                                               "@main)"),
                                      cl::init(""), cl::cat(toolCategory));
static cl::list<std::string>
    inputs("input", cl::desc("NAME=FILE.npy: value of argument NAME"),
           cl::value_desc("NAME=FILE"), cl::cat(toolCategory));
static cl::list<std::string>
    outputs("output", cl::desc("NAME=FILE.npy: write result NAME"),
            cl::value_desc("NAME=FILE"), cl::cat(toolCategory));
static cl::opt<bool> printResults("print",
                                  cl::desc("print every result as text"),
                                  cl::cat(toolCategory));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tra-interpret") << message << "\n";
  return 1;
}

/// The runtime dtype that holds elements of `type`.
static std::optional<rt::DType> dtypeFor(Type type) {
  if (type.isF32())
    return rt::DType::F32;
  if (type.isF16())
    return rt::DType::F16;
  if (type.isBF16())
    return rt::DType::BF16;
  if (type.isInteger(64))
    return rt::DType::I64;
  if (type.isInteger(32))
    return rt::DType::I32;
  if (type.isInteger(8))
    return rt::DType::I8;
  if (type.isInteger(1))
    return rt::DType::Bool;
  return std::nullopt;
}

static std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

static bool splitNameFile(llvm::StringRef spec, std::string &name,
                          std::string &file) {
  auto [n, f] = spec.split('=');
  if (n.empty() || f.empty() || !spec.contains('='))
    return false;
  name = n.str();
  file = f.str();
  return true;
}

/// The function to evaluate: --entry, else @main, else the only public
/// function with a body.
static llvm::Expected<func::FuncOp> findEntry(ModuleOp module) {
  if (!entryName.empty()) {
    auto f = module.lookupSymbol<func::FuncOp>(entryName);
    if (!f || f.isExternal())
      return llvm::createStringError("no function @" + entryName +
                                     " with a body in " + inputFile);
    return f;
  }
  if (auto main = module.lookupSymbol<func::FuncOp>("main");
      main && !main.isExternal())
    return main;
  func::FuncOp only;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal() || f.isPrivate())
      continue;
    if (only)
      return llvm::createStringError("several public functions in " +
                                     inputFile + "; choose one with --entry");
    only = f;
  }
  if (!only)
    return llvm::createStringError("no public function with a body in " +
                                   inputFile);
  return only;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(toolCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "tra reference interpreter: evaluates a tra "
                              "model on .npy inputs\n");

  MLIRContext context;
  context.loadDialect<TRADialect, func::FuncDialect, arith::ArithDialect,
                      math::MathDialect>();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail(inputFile + ": " + errorMessage);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  ParserConfig config(&context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseModuleFile(sourceMgr, config);
  if (!module)
    return fail(inputFile + ": could not parse the model");
  if (failed(verify(*module)))
    return fail(inputFile + ": the model does not verify");

  llvm::Expected<func::FuncOp> found = findEntry(*module);
  if (!found)
    return fail(llvm::toString(found.takeError()));
  func::FuncOp entry = *found;

  // Map argument names to positions.
  std::map<std::string, unsigned> argIndex;
  std::string argList;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    std::string name = getArgumentName(entry, i);
    argIndex[name] = i;
    argList += (i ? ", " : "") + name;
  }

  SmallVector<std::optional<InterpTensor>> args(entry.getNumArguments());
  for (const std::string &spec : inputs) {
    std::string name, path;
    if (!splitNameFile(spec, name, path))
      return fail("--input " + spec + ": expected NAME=FILE.npy");
    auto it = argIndex.find(name);
    if (it == argIndex.end())
      return fail("--input " + spec + ": @" + entry.getName().str() +
                  " has no argument named '" + name +
                  "' (arguments: " + argList + ")");
    unsigned i = it->second;
    if (args[i])
      return fail("--input " + spec + ": argument '" + name +
                  "' is given twice");
    auto type = llvm::dyn_cast<RankedTensorType>(entry.getArgumentTypes()[i]);
    std::optional<rt::DType> want =
        type ? dtypeFor(type.getElementType()) : std::nullopt;
    if (!want)
      return fail("argument '" + name + "' has type " +
                  typeString(entry.getArgumentTypes()[i]) +
                  ", which cannot be read from .npy");
    rt::Result<rt::HostTensor> tensor = rt::readNpy(path);
    if (!tensor)
      return fail(tensor.message());
    // bf16 has no NumPy dtype: bf16 arguments are read from f32 files.
    rt::DType fileType = tensor->dtype();
    bool ok = fileType == *want ||
              (*want == rt::DType::BF16 && fileType == rt::DType::F32);
    if (!ok)
      return fail(path + ": argument '" + name + "' expects " +
                  typeString(type.getElementType()) +
                  " elements, the file "
                  "holds " +
                  rt::dtypeName(fileType));
    if (llvm::ArrayRef<int64_t>(tensor->shape()) != type.getShape())
      return fail(path + ": argument '" + name + "' expects shape " +
                  rt::formatShape(std::vector<int64_t>(type.getShape().begin(),
                                                       type.getShape().end())) +
                  ", the file holds " + rt::formatShape(tensor->shape()));
    InterpTensor value(type.getElementType(), type.getShape());
    for (int64_t e = 0; e < value.getNumElements(); ++e)
      value.data[e] =
          roundToElementType(type.getElementType(), tensor->loadAsDouble(e));
    args[i] = std::move(value);
  }
  SmallVector<InterpTensor> argValues;
  for (unsigned i = 0; i < args.size(); ++i) {
    if (!args[i])
      return fail("no value for argument '" + getArgumentName(entry, i) +
                  "' (" + typeString(entry.getArgumentTypes()[i]) +
                  "); pass --input " + getArgumentName(entry, i) + "=FILE.npy");
    argValues.push_back(std::move(*args[i]));
  }

  // Check the requested outputs before running.
  std::map<std::string, unsigned> resultIndex;
  std::string resultList;
  for (unsigned i = 0; i < entry.getNumResults(); ++i) {
    resultIndex[getResultName(entry, i)] = i;
    resultList += (i ? ", " : "") + getResultName(entry, i);
  }
  SmallVector<std::pair<unsigned, std::string>> writes;
  for (const std::string &spec : outputs) {
    std::string name, path;
    if (!splitNameFile(spec, name, path))
      return fail("--output " + spec + ": expected NAME=FILE.npy");
    auto it = resultIndex.find(name);
    if (it == resultIndex.end())
      return fail("--output " + spec + ": @" + entry.getName().str() +
                  " has no result named '" + name +
                  "' (results: " + resultList + ")");
    for (auto &[other, otherPath] : writes)
      if (rt::samePath(path, otherPath))
        return fail("--output " + getResultName(entry, other) + "=" +
                    otherPath + " and --output " + spec +
                    " name the same file");
    writes.push_back({it->second, path});
  }

  FailureOr<SmallVector<InterpTensor>> results = interpret(entry, argValues);
  if (failed(results))
    return fail(inputFile + ": evaluation failed");

  // Every output is complete in its temporary file before any replaces its
  // destination: a failure leaves none of them.
  std::vector<rt::AtomicFileWriter> files;
  for (auto &[i, path] : writes) {
    const InterpTensor &r = (*results)[i];
    std::optional<rt::DType> dtype = dtypeFor(r.elementType);
    if (!dtype)
      return fail("result '" + getResultName(entry, i) +
                  "' has an element type .npy cannot hold");
    std::vector<int64_t> shape(r.shape.begin(), r.shape.end());
    rt::Result<rt::AtomicFileWriter> file = rt::prepareNpy(
        path, rt::HostTensor::fromDoubles(*dtype, shape, r.data));
    if (!file)
      return fail(file.message());
    files.push_back(std::move(*file));
  }
  if (rt::Status status = rt::commitAll(files); !status)
    return fail(status.message());
  if (printResults) {
    for (auto [i, r] : llvm::enumerate(*results)) {
      llvm::outs() << getResultName(entry, i) << ": " << r.getType() << " = [";
      for (auto [k, v] : llvm::enumerate(r.data))
        llvm::outs() << (k ? ", " : "") << v;
      llvm::outs() << "]\n";
    }
  }
  return 0;
}
