//===- MemRefAddress.h - Element addresses of memrefs, for runtime calls -*- C++
//-*-===//
//
// Code that hands buffers to the runtime (BLAS and cuBLAS calls, GPU copies)
// passes raw pointers computed on the host from memref descriptors. Header
// only: the conversions and transforms that emit such calls share it.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TRANSFORMS_MEMREFADDRESS_H
#define TRA_TRANSFORMS_MEMREFADDRESS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace tra {

/// The address (an index) of element `indices` of `memref` (its first
/// element if `indices` is empty), from its descriptor.
inline Value getElementAddress(OpBuilder &b, Location loc, Value memref,
                               ValueRange indices = {}) {
  auto type = cast<MemRefType>(memref.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value offset = metadata.getOffset();
  for (auto [index, stride] : llvm::zip(indices, metadata.getStrides()))
    offset = arith::AddIOp::create(
        b, loc, offset, arith::MulIOp::create(b, loc, index, stride));
  Value elementBytes =
      arith::ConstantIndexOp::create(b, loc, type.getElementTypeBitWidth() / 8);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return arith::AddIOp::create(
      b, loc, base, arith::MulIOp::create(b, loc, offset, elementBytes));
}

/// The index `address` as an LLVM pointer.
inline Value toLLVMPointer(OpBuilder &b, Location loc, Value address) {
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
}

} // namespace tra
} // namespace mlir

#endif // TRA_TRANSFORMS_MEMREFADDRESS_H
