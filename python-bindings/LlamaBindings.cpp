//===- LlamaBindings.cpp - tra.Llama: generation from Python --------------===//
//
// `tra.Llama(checkpoint, hw="local")` loads a LLaMA checkpoint, compiles its
// step programs for the hardware (one device; through the library cache)
// and runs them in this process with the engine (runtime/engine's
// LocalModel and generation loop), exactly as `tra-llama run` does: on a
// GPU (hw/gpu-1.json, or "local" on a machine with one) with the weights
// and KV caches in device memory, 16-bit weights 16-bit (weight_dtype).
//
//===----------------------------------------------------------------------===//

#include "LlamaBindings.h"

#include "tra/Engine/Checkpoint.h"
#include "tra/Engine/Generate.h"
#include "tra/Engine/LocalModel.h"
#include "tra/Engine/StepChunks.h"
#include "tra/Frontend/LlamaPrograms.h"
#include "tra/Hardware/Hardware.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#ifdef TRA_PYTHON_HAVE_CUDA
#include "tra/Cuda/Accelerator.h"
#endif

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <optional>

namespace py = pybind11;
namespace rt = ::tra::rt;
namespace engine = ::tra::engine;

namespace {

class Llama {
public:
  Llama(const std::string &checkpoint, const std::string &hw, int64_t threads,
        std::optional<std::string> cacheDir, int64_t maxSeqLen,
        bool emulateOnCpu, const std::string &weightDType,
        int64_t prefillChunk) {
    if (weightDType != "auto" && weightDType != "f32" &&
        weightDType != "checkpoint")
      throw py::value_error("weight_dtype '" + weightDType +
                            "' is not auto, f32 or checkpoint");
    llvm::Expected<::tra::hw::HardwareDescription> hardware =
        ::tra::hw::loadHardware(hw);
    if (!hardware)
      throw py::value_error(llvm::toString(hardware.takeError()));
    if (hardware->numDevices() != 1)
      throw py::value_error(
          hardware->getName().str() + " has " +
          std::to_string(hardware->numDevices()) +
          " devices: tra.Llama runs one-device models in this process; run "
          "it as one MPI job with `tra-llama run --checkpoint " +
          checkpoint + " --hw " + hw + "`");
    hwText = hardware->toJSONText();
    this->threads = threads > 0
                        ? threads
                        : std::max<int64_t>(1, hardware->getDevice(0).cores);
    cacheDirectory =
        cacheDir ? *cacheDir : mlir::tra::getDefaultLibraryCacheDirectory();
    // A GPU: the steps are GPU programs (emulate_on_cpu: CPU code).
    cuda = hardware->getDevice(0).kind == ::tra::hw::DeviceKind::GPU &&
           !emulateOnCpu;
    const ::tra::exec::Accelerator *accelerator = nullptr;
    if (cuda) {
#ifdef TRA_PYTHON_HAVE_CUDA
      accelerator = &::tra::cuda::getAccelerator();
      if (rt::Status status = accelerator->initialize(); !status)
        throw py::value_error(
            hardware->getName().str() +
            " is a GPU; running on it needs an NVIDIA GPU with a CUDA 13 "
            "driver: " +
            status.message() +
            "; emulate_on_cpu=True runs its plan with CPU code here");
      this->threads = 1;
#else
      throw py::value_error(
          hardware->getName().str() +
          " is a GPU, but this tra was built without the CUDA runtime "
          "(runtime/cuda); emulate_on_cpu=True runs its plan with CPU code");
#endif
    }
    // "auto" is the checkpoint's, as tra-llama's --weight-dtype.
    bool keepStored = weightDType != "f32";
    rt::Result<rt::LlamaCheckpoint> loaded =
        engine::loadCheckpoint(checkpoint, keepStored);
    if (!loaded)
      throw py::value_error(loaded.message());
    ckpt = std::move(*loaded);
    if (maxSeqLen < 0 || maxSeqLen > ckpt.params.maxSeqLen)
      throw py::value_error(
          "max_seq_len " + std::to_string(maxSeqLen) + " must be in [1, " +
          std::to_string(ckpt.params.maxSeqLen) + "] (0: the model's)");
    if (maxSeqLen > 0)
      ckpt.params.maxSeqLen = maxSeqLen;
    if (prefillChunk < 0)
      throw py::value_error("prefill_chunk " + std::to_string(prefillChunk) +
                            " must be positive (0: " +
                            std::to_string(engine::kDefaultPrefillChunk) +
                            " tokens)");
    this->prefillChunk =
        engine::prefillChunkLength(prefillChunk, ckpt.params.maxSeqLen);
    for (auto &[name, shape] : rt::llamaWeightShapes(ckpt.params))
      if (!ckpt.find(name))
        throw py::value_error(checkpoint + ": no tensor '" + name + "'");
    weightDTypes = engine::storedWeightDTypes(ckpt);
    model =
        std::make_unique<engine::LocalModel>(ckpt, this->threads, accelerator);
    model->allRows = false;
    addProgram(1);
  }

  py::dict params() const {
    const rt::LlamaParams &p = ckpt.params;
    py::dict d;
    d["dim"] = p.dim;
    d["hidden_dim"] = p.hiddenDim;
    d["n_layers"] = p.nLayers;
    d["n_heads"] = p.nHeads;
    d["n_kv_heads"] = p.nKvHeads;
    d["vocab_size"] = p.vocabSize;
    d["max_seq_len"] = p.maxSeqLen;
    d["norm_eps"] = p.normEps;
    d["shared_classifier"] = p.sharedClassifier;
    d["on_gpu"] = cuda;
    engine::StoredWeightKinds kinds = engine::storedWeightKinds(weightDTypes);
    d["sixteen_bit_weights"] = kinds.sixteenBit;
    d["q8_0_weights"] = kinds.q8_0;
    return d;
  }

  /// Generates from `prompt`; returns the generated ids (not the prompt's):
  /// one per position from the prompt's last on.
  std::vector<int64_t> generate(const std::vector<int64_t> &prompt,
                                int64_t steps, double temperature, double topP,
                                uint64_t seed, bool prefill) {
    const rt::LlamaParams &p = ckpt.params;
    if (prompt.empty())
      throw py::value_error("the prompt has no tokens (start with BOS, 1)");
    for (int64_t id : prompt)
      if (id < 0 || id >= p.vocabSize)
        throw py::value_error("prompt token " + std::to_string(id) +
                              " is not in [0, " + std::to_string(p.vocabSize) +
                              ")");
    if (steps < int64_t(prompt.size()) || steps > p.maxSeqLen)
      throw py::value_error("steps " + std::to_string(steps) + " must be in [" +
                            std::to_string(prompt.size()) + ", " +
                            std::to_string(p.maxSeqLen) +
                            "] (prompt length, max_seq_len)");
    engine::GenerationConfig config;
    config.prompt = prompt;
    config.steps = steps;
    config.vocabSize = p.vocabSize;
    config.temperature = temperature;
    config.topP = topP;
    config.seed = seed;
    config.reportTimings = false;
    config.oneStepPrefill = prefill || prompt.size() == 1;
    // The prompt runs in steps of the prefill chunk's program (compiled
    // once, whatever the prompt's length), the one that computes the logits
    // of its last row only: sampling needs no other.
    if (config.oneStepPrefill && prompt.size() > 1)
      addProgram(prefillChunk, /*oneRow=*/true);
    engine::GenerationConfig::Outcome outcome;
    config.outcome = &outcome;
    rt::Status status;
    {
      py::gil_scoped_release release;
      model->resetCaches();
      status = engine::generate(config, [&](const std::vector<int64_t> &tokens,
                                            int64_t pos, int64_t n,
                                            std::vector<double> &logits) {
        return model->step(tokens, pos, n, logits);
      });
    }
    if (!status)
      throw py::value_error(status.message());
    timings["prefill_seconds"] = outcome.prefillSeconds;
    timings["decode_seconds"] = outcome.decodeSeconds;
    return std::vector<int64_t>(outcome.tokens.begin() + prompt.size(),
                                outcome.tokens.end());
  }

  /// Runs one step over `tokens` at `pos` and returns the logits
  /// [len(tokens), vocab] (float32).
  py::array_t<float> forward(const std::vector<int64_t> &tokens, int64_t pos) {
    const rt::LlamaParams &p = ckpt.params;
    int64_t n = int64_t(tokens.size());
    if (n < 1 || n > p.maxSeqLen)
      throw py::value_error("a step of " + std::to_string(n) +
                            " tokens (1 to max_seq_len)");
    for (int64_t id : tokens)
      if (id < 0 || id >= p.vocabSize)
        throw py::value_error("token " + std::to_string(id) +
                              " is not in [0, " + std::to_string(p.vocabSize) +
                              ")");
    addProgram(n == 1 ? 1 : prefillChunk);
    std::vector<int64_t> padded(size_t(std::max<int64_t>(pos, 0)), 0);
    padded.insert(padded.end(), tokens.begin(), tokens.end());
    std::vector<double> logits;
    rt::Status status;
    model->allRows = true;
    {
      py::gil_scoped_release release;
      status = model->step(padded, pos, n, logits);
    }
    model->allRows = false;
    if (!status)
      throw py::value_error(status.message());
    py::array_t<float> out({py::ssize_t(n), py::ssize_t(p.vocabSize)});
    std::copy(logits.begin(), logits.end(), out.mutable_data());
    return out;
  }

  void reset() { model->resetCaches(); }
  const py::dict &lastTimings() const { return timings; }

private:
  /// Compiles (or finds in the cache) the program for `seq` tokens per step
  /// that returns every row of logits, or (`oneRow`) the last row only.
  void addProgram(int64_t seq, bool oneRow = false) {
    if (model->hasProgram(seq, oneRow))
      return;
    std::string notes;
    llvm::raw_string_ostream notesStream(notes);
    llvm::Expected<mlir::tra::CompiledProgram> compiled =
        mlir::tra::compileLlamaStep(context, ckpt.params, seq, threads,
                                    cacheDirectory, hwText, notesStream, cuda,
                                    weightDTypes, oneRow);
    if (!compiled)
      throw py::value_error(llvm::toString(compiled.takeError()));
    if (rt::Status status = model->addProgram(std::move(compiled->program));
        !status)
      throw py::value_error(status.message());
  }

  mlir::MLIRContext context;
  rt::LlamaCheckpoint ckpt;
  std::unique_ptr<engine::LocalModel> model;
  std::string hwText, cacheDirectory;
  int64_t threads = 1;
  /// Tokens per prefill step (StepChunks.h).
  int64_t prefillChunk = engine::kDefaultPrefillChunk;
  bool cuda = false;
  mlir::tra::LlamaWeightDTypes weightDTypes;
  py::dict timings;
};

} // namespace

void registerLlama(py::module_ &m) {
  py::class_<Llama>(m, "Llama",
                    "A LLaMA checkpoint compiled for one device and run in "
                    "this process by tra's engine")
      .def(py::init<const std::string &, const std::string &, int64_t,
                    std::optional<std::string>, int64_t, bool,
                    const std::string &, int64_t>(),
           py::arg("checkpoint"), py::arg("hw") = "local",
           py::arg("threads") = 0, py::arg("cache_dir") = py::none(),
           py::arg("max_seq_len") = 0, py::arg("emulate_on_cpu") = false,
           py::arg("weight_dtype") = "auto", py::arg("prefill_chunk") = 0,
           "load a llama2.c .bin file or a Meta checkpoint directory and "
           "compile its decoding step for `hw` (\"local\" or a hardware "
           "file with one device: on a GPU its steps run there, unless "
           "emulate_on_cpu); cache_dir \"\" compiles without the library "
           "cache; weight_dtype \"auto\" and \"checkpoint\" keep 16-bit "
           "weights 16-bit, \"f32\" widens them; prompts run "
           "in steps of prefill_chunk tokens (0: 128), one program "
           "compiled for every prompt length")
      .def_property_readonly("params", &Llama::params,
                             "the model's hyper-parameters")
      .def("generate", &Llama::generate,
           py::arg("prompt") = std::vector<int64_t>{1}, py::arg("steps") = 64,
           py::arg("temperature") = 0.0, py::arg("top_p") = 0.9,
           py::arg("seed") = 1, py::arg("prefill") = true,
           "run `steps` positions from the prompt's token ids (the "
           "prompt's included), each choosing the next token greedily at "
           "temperature 0, else as llama2.c samples; returns the "
           "steps - len(prompt) + 1 generated ids")
      .def("forward", &Llama::forward, py::arg("tokens"), py::arg("pos"),
           "run one step over `tokens` at positions pos.. on the KV caches "
           "of the previous steps; returns the logits [len(tokens), vocab]")
      .def("reset", &Llama::reset, "clear the KV caches")
      .def_property_readonly("last_timings", &Llama::lastTimings,
                             "prefill and decode seconds of the last "
                             "generate()");
}
