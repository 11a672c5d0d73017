//===- TRAModule.cpp - Python bindings of tra -----------------------------===//
//
// `tra.parse(text)` parses and verifies model-level IR; `Model.interpret`
// runs a function on NumPy arrays with the reference interpreter;
// `tra.llama_model` builds a LLaMA model from hyper-parameters; `tra.Llama`
// generates from a checkpoint with the engine (LlamaBindings.cpp);
// `tra.compile` plans, compiles and runs any model (CompileBindings.cpp,
// wrapped by tra/program.py); tra/builder.py writes models from Python.
//
//===----------------------------------------------------------------------===//

#include "CompileBindings.h"
#include "Diagnostics.h"
#include "LlamaBindings.h"

#include "tra/Autodiff/Autodiff.h"
#include "tra/Autodiff/TrainStep.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Frontend/Llama.h"
#include "tra/Frontend/LlamaTraining.h"
#include "tra/Interpreter/Interpreter.h"
#include "tra/Parse/ModuleFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

namespace py = pybind11;
using namespace mlir;
using namespace mlir::tra;
using ::tra::python::DiagnosticCollector;

namespace {

/// A parsed, verified module and its context.
class Model {
public:
  Model(std::unique_ptr<MLIRContext> ctx, OwningOpRef<ModuleOp> module)
      : context(std::move(ctx)), module(std::move(module)) {}

  std::vector<std::string> functions() const {
    std::vector<std::string> names;
    for (auto f : module->getOps<func::FuncOp>())
      names.push_back(f.getName().str());
    return names;
  }

  std::string text() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    module->print(os);
    return s;
  }

  py::dict signature(const std::string &name) const {
    func::FuncOp f = lookup(name);
    auto describe = [](const std::string &n, Type t) {
      py::dict d;
      d["name"] = n;
      auto tt = llvm::cast<RankedTensorType>(t);
      d["shape"] =
          std::vector<int64_t>(tt.getShape().begin(), tt.getShape().end());
      std::string s;
      llvm::raw_string_ostream os(s);
      os << tt.getElementType();
      d["dtype"] = s;
      return d;
    };
    py::list args, results;
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      args.append(describe(getArgumentName(f, i), f.getArgumentTypes()[i]));
    for (unsigned i = 0; i < f.getNumResults(); ++i)
      results.append(describe(getResultName(f, i), f.getResultTypes()[i]));
    py::dict sig;
    sig["arguments"] = args;
    sig["results"] = results;
    return sig;
  }

  py::dict interpret(const std::string &name, const py::dict &inputs) {
    func::FuncOp f = lookup(name);
    SmallVector<InterpTensor> args;
    for (unsigned i = 0; i < f.getNumArguments(); ++i) {
      std::string argName = getArgumentName(f, i);
      if (!inputs.contains(argName))
        throw py::value_error("no input for argument '" + argName + "'");
      auto type = llvm::cast<RankedTensorType>(f.getArgumentTypes()[i]);
      auto array =
          py::array_t<double, py::array::c_style | py::array::forcecast>::
              ensure(inputs[argName.c_str()]);
      if (!array)
        throw py::value_error("input '" + argName + "' is not numeric");
      std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
      if (llvm::ArrayRef<int64_t>(shape) != type.getShape())
        throw py::value_error("input '" + argName + "' has the wrong shape");
      InterpTensor t(type.getElementType(), type.getShape());
      for (int64_t e = 0; e < t.getNumElements(); ++e)
        t.data[e] = roundToElementType(type.getElementType(), array.data()[e]);
      args.push_back(std::move(t));
    }
    for (auto item : inputs) {
      std::string key = py::str(item.first);
      bool known = false;
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        known |= getArgumentName(f, i) == key;
      if (!known)
        throw py::value_error("@" + name + " has no argument named '" + key +
                              "'");
    }
    DiagnosticCollector diags(context.get());
    FailureOr<SmallVector<InterpTensor>> results =
        mlir::tra::interpret(f, args);
    if (failed(results))
      throw py::value_error(diags.str());
    py::dict out;
    for (auto [i, r] : llvm::enumerate(*results)) {
      std::vector<py::ssize_t> shape(r.shape.begin(), r.shape.end());
      py::array_t<double> array(shape);
      std::copy(r.data.begin(), r.data.end(), array.mutable_data());
      Type elt = r.elementType;
      const char *dtype = elt.isF64()         ? "float64"
                          : elt.isInteger(64) ? "int64"
                          : elt.isInteger(32) ? "int32"
                          : elt.isInteger(1)  ? "bool"
                          : elt.isF16()       ? "float16"
                                              : "float32";
      out[getResultName(f, i).c_str()] = array.attr("astype")(dtype);
    }
    return out;
  }

  /// Adds the gradient function of the loss function `name` (tra-autodiff)
  /// and returns its name.
  std::string gradient(const std::string &name,
                       const std::vector<std::string> &wrt,
                       const std::string &gradName) {
    func::FuncOp f = lookup(name);
    GradientOptions options;
    options.wrt.assign(wrt.begin(), wrt.end());
    options.name = gradName;
    DiagnosticCollector diags(context.get());
    FailureOr<func::FuncOp> grad = buildGradientFunction(f, options);
    if (failed(grad))
      throw py::value_error(diags.str());
    if (failed(verify(*grad))) {
      std::string message = diags.str();
      grad->erase();
      throw py::value_error("tra-autodiff built an invalid function: " +
                            message);
    }
    return grad->getName().str();
  }

  /// Adds a whole training step of the loss function `name`
  /// (tra-train-step) and returns its name.
  std::string trainStep(const std::string &name,
                        const std::vector<std::string> &wrt,
                        const std::string &optimizer, double beta1,
                        double beta2, double eps, double weightDecay,
                        double momentum, bool nesterov, double clipNorm,
                        const std::string &stepName) {
    func::FuncOp f = lookup(name);
    OptimizerOptions opt;
    std::optional<OptimizerKind> kind = parseOptimizerKind(optimizer);
    if (!kind)
      throw py::value_error("unknown optimizer '" + optimizer +
                            "' (sgd or adamw)");
    opt.kind = *kind;
    opt.beta1 = beta1;
    opt.beta2 = beta2;
    opt.eps = eps;
    opt.weightDecay = weightDecay;
    opt.momentum = momentum;
    opt.nesterov = nesterov;
    opt.clipNorm = clipNorm;
    GradientOptions gradient;
    gradient.wrt.assign(wrt.begin(), wrt.end());
    DiagnosticCollector diags(context.get());
    FailureOr<func::FuncOp> step = buildTrainStep(f, gradient, opt, stepName);
    if (failed(step))
      throw py::value_error(diags.str());
    if (failed(verify(*step))) {
      std::string message = diags.str();
      step->erase();
      throw py::value_error("tra-train-step built an invalid function: " +
                            message);
    }
    return step->getName().str();
  }

private:
  func::FuncOp lookup(const std::string &name) const {
    auto f = module->lookupSymbol<func::FuncOp>(name);
    if (!f || f.isExternal())
      throw py::value_error("no function @" + name + " with a body");
    return f;
  }

  std::unique_ptr<MLIRContext> context;
  mutable OwningOpRef<ModuleOp> module;
};

std::unique_ptr<MLIRContext> makeContext() {
  auto ctx = std::make_unique<MLIRContext>();
  ctx->loadDialect<TRADialect, func::FuncDialect, arith::ArithDialect,
                   math::MathDialect>();
  return ctx;
}

Model parse(const std::string &text) {
  auto ctx = makeContext();
  OwningOpRef<ModuleOp> module;
  {
    DiagnosticCollector diags(ctx.get());
    module = parseModuleText(text, ctx.get(), "<python>");
    if (!module)
      throw py::value_error(diags.str());
  }
  return Model(std::move(ctx), std::move(module));
}

/// LLaMA hyper-parameters from a Python dict (tra.llama_model's keys).
::tra::rt::LlamaParams llamaParams(const py::dict &p) {
  ::tra::rt::LlamaParams params;
  auto get = [&](const char *key, int64_t &field) {
    if (!p.contains(key))
      throw py::value_error(std::string("missing hyper-parameter '") + key +
                            "'");
    field = p[key].cast<int64_t>();
  };
  get("dim", params.dim);
  get("hidden_dim", params.hiddenDim);
  get("n_layers", params.nLayers);
  get("n_heads", params.nHeads);
  params.nKvHeads = params.nHeads;
  if (p.contains("n_kv_heads"))
    get("n_kv_heads", params.nKvHeads);
  get("vocab_size", params.vocabSize);
  get("max_seq_len", params.maxSeqLen);
  if (p.contains("norm_eps"))
    params.normEps = p["norm_eps"].cast<double>();
  if (p.contains("shared_classifier"))
    params.sharedClassifier = p["shared_classifier"].cast<bool>();
  if (::tra::rt::Status error = params.validate(); !error.ok())
    throw py::value_error(error.message());
  return params;
}

Model llamaModel(const py::dict &p, int64_t seqLen) {
  ::tra::rt::LlamaParams params = llamaParams(p);
  if (seqLen < 1 || seqLen > params.maxSeqLen)
    throw py::value_error("seq_len must be in [1, max_seq_len]");
  auto ctx = makeContext();
  OwningOpRef<ModuleOp> module = buildLlamaModule(ctx.get(), params, seqLen);
  return Model(std::move(ctx), std::move(module));
}

Model llamaTrainingModel(const py::dict &p, int64_t batch, int64_t seqLen) {
  ::tra::rt::LlamaParams params = llamaParams(p);
  if (seqLen < 1 || seqLen > params.maxSeqLen)
    throw py::value_error("seq_len must be in [1, max_seq_len]");
  if (batch < 1)
    throw py::value_error("batch must be at least 1");
  auto ctx = makeContext();
  OwningOpRef<ModuleOp> module =
      buildLlamaTrainingModule(ctx.get(), params, batch, seqLen);
  return Model(std::move(ctx), std::move(module));
}

} // namespace

PYBIND11_MODULE(_tra, m) {
  m.doc() = "tra: tensor relational algebra compiler (Python bindings)";
  py::class_<Model>(m, "Model")
      .def("functions", &Model::functions, "names of the module's functions")
      .def("text", &Model::text, "the module as tra IR text")
      .def("signature", &Model::signature, py::arg("function"),
           "arguments and results of a function (name, shape, dtype)")
      .def("interpret", &Model::interpret, py::arg("function"),
           py::arg("inputs"),
           "run a function with the reference interpreter on NumPy arrays, "
           "keyed by argument name; returns results keyed by name")
      .def("gradient", &Model::gradient, py::arg("function"),
           py::arg("wrt") = std::vector<std::string>(), py::arg("name") = "",
           "add the gradient function of a loss function (tra-autodiff): "
           "it returns the loss and grad_<arg> for each argument in `wrt` "
           "(default: the arguments marked tra.wrt, else every float one); "
           "returns the new function's name")
      .def("train_step", &Model::trainStep, py::arg("function"),
           py::arg("wrt") = std::vector<std::string>(),
           py::arg("optimizer") = "adamw", py::arg("beta1") = 0.9,
           py::arg("beta2") = 0.999, py::arg("eps") = 1e-8,
           py::arg("weight_decay") = 0.0, py::arg("momentum") = 0.0,
           py::arg("nesterov") = false, py::arg("clip_norm") = 0.0,
           py::arg("name") = "train_step",
           "add a whole training step of a loss function (tra-train-step): "
           "forward, gradients, clipping and an SGD or AdamW update; it "
           "takes the loss's arguments, the optimizer states, lr (and step "
           "for AdamW) and returns the loss, grad_norm and <name>_out for "
           "every parameter and state; returns the step's name");
  m.def("parse", &parse, py::arg("text"),
        "parse and verify model-level tra IR (raises ValueError)");
  m.def("llama_model", &llamaModel, py::arg("params"), py::arg("seq_len") = 1,
        "build one step of a LLaMA model from hyper-parameters");
  m.def("llama_training_model", &llamaTrainingModel, py::arg("params"),
        py::arg("batch"), py::arg("seq_len"),
        "build a LLaMA training loss (@loss: mean next-token cross-entropy "
        "of a batch of sequences) from hyper-parameters");
  registerLlama(m);
  registerCompile(m);
}
