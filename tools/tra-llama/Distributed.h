//===- Distributed.h - tra-llama on multi-device hardware -------*- C++ -*-===//
//
// Runs @forward planned and compiled for hardware with several devices as
// an MPI job per decoding step (see Distributed.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TOOLS_TRA_LLAMA_DISTRIBUTED_H
#define TRA_TOOLS_TRA_LLAMA_DISTRIBUTED_H

#include "tra/Hardware/Hardware.h"
#include "tra/Runtime/Llama.h"

#include "mlir/IR/MLIRContext.h"

#include <string>
#include <vector>

class DistributedModel {
public:
  ~DistributedModel();
  /// Plans and compiles the model for `hw` (one MPI rank per device, CPU
  /// code for every device; GPU devices need `emulate`), writes the weights;
  /// returns "" or an error message.
  std::string init(mlir::MLIRContext &ctx, const ::tra::rt::LlamaCheckpoint &ckpt,
                   const ::tra::hw::HardwareDescription &hw, int64_t threads,
                   bool emulate);
  /// Runs one decoding step; fills `logits` or returns an error message.
  std::string step(int64_t token, int64_t pos, std::vector<double> &logits);
  int64_t numRanks() const { return ranks; }

private:
  std::string file(const std::string &name) const;
  std::string cacheFile(int64_t layer, const char *kind, bool which) const;

  ::tra::rt::LlamaParams p;
  std::string dir, exe, weights, mpirun;
  int64_t ranks = 0;
  bool parity = false;
};

#endif // TRA_TOOLS_TRA_LLAMA_DISTRIBUTED_H
