//===- ExpandStridedCopies.cpp - Strided memref.copy to linalg.copy -------===//
//
// Compiled programs link no MLIR runtime library, so a memref.copy must
// never lower to a call of `memrefCopy`: copies between non-contiguous
// buffers become linalg.copy loop nests instead.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_EXPANDSTRIDEDCOPIESPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

/// Returns true if the LLVM lowering copies `type` with memcpy.
static bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    memref::isStaticShapeAndContiguousRowMajor(memref));
}

namespace {
struct ExpandStridedCopiesPass
    : public tra::impl::ExpandStridedCopiesPassBase<ExpandStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      if (!isContiguous(copy.getSource().getType()) ||
          !isContiguous(copy.getTarget().getType()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
