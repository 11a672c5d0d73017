//===- tra-opt.cpp - mlir-opt with the tra dialect ------------------------===//
//
// Parses, verifies, transforms and prints IR that uses the tra dialect and
// the upstream dialects tra programs are written with.
//
//===----------------------------------------------------------------------===//

#include "tra/Conversion/Distribute/Distribute.h"
#include "tra/Conversion/Passes.h"
#include "tra/Conversion/Pipeline/Pipeline.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Optimizer/Passes.h"
#include "tra/Optimizer/Pipeline.h"
#include "tra/Optimizer/PlanDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInlinerPass();
  mlir::registerSymbolDCEPass();
  mlir::tra::registerTRAConversionPasses();
  mlir::tra::registerOptimizerPasses();
  mlir::tra::plan::registerPlanningPipeline();
  mlir::tra::registerTRAToLLVMPipeline();
  mlir::tra::registerTRADistributePasses();
  mlir::bufferization::registerOneShotBufferizePass();

  mlir::DialectRegistry registry;
  registry.insert<mlir::tra::TRADialect, mlir::tra::plan::PlanDialect,
                  mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::math::MathDialect, mlir::tensor::TensorDialect>();
  mlir::func::registerInlinerExtension(registry);
  mlir::tra::registerTRACodegenDialects(registry);
  mlir::tra::registerDistributeDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tra optimizer driver\n", registry));
}
