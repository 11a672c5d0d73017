// RUN: tra-opt %s --split-input-file --tra-emit-cpu-microkernels | FileCheck %s
// RUN: tra-opt %s --split-input-file --tra-emit-cpu-microkernels --tra-emit-cpu-microkernels | FileCheck %s --check-prefix=TWICE

// A module that calls the runtime's sgemm gets the packed GEMM's
// micro-kernel: a k loop of outer products into an 8 x 32 accumulator, then
// eight guarded rows of masked alpha/beta stores; and the dot products.

func.func private @tra_exec_sgemm(i64, i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)

// CHECK-LABEL: func.func @tra_exec_microkernel_f32_8x32(
// CHECK-SAME:      %[[KC:[^:]+]]: index, %[[PA:[^:]+]]: memref<?xf32>, %[[PB:[^:]+]]: memref<?xf32>, %[[C:[^:]+]]: memref<?xf32>,
// CHECK-SAME:      %[[LDC:[^:]+]]: index, %[[ROWS:[^:]+]]: index, %[[COLS:[^:]+]]: index, %[[ALPHA:[^:]+]]: f32, %[[BETA:[^:]+]]: f32)
// CHECK-SAME:      attributes {llvm.emit_c_interface}
// CHECK:         %[[SUMS:.+]] = scf.for %[[P:.+]] = %{{.+}} to %[[KC]] step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (vector<8x32xf32>)
// CHECK:           %[[A:.+]] = vector.load %[[PA]][%{{.+}}] : memref<?xf32>, vector<8xf32>
// CHECK:           %[[B:.+]] = vector.load %[[PB]][%{{.+}}] : memref<?xf32>, vector<32xf32>
// CHECK:           %[[NEXT:.+]] = vector.outerproduct %[[A]], %[[B]], %[[ACC]] {kind = #vector.kind<add>} : vector<8xf32>, vector<32xf32>
// CHECK:           scf.yield %[[NEXT]] : vector<8x32xf32>
// CHECK:         %[[MASK:.+]] = vector.create_mask %[[COLS]] : vector<32xi1>
// CHECK:         %[[READC:.+]] = arith.cmpf une, %[[BETA]]
// CHECK:         arith.cmpi slt, %{{.+}}, %[[ROWS]] : index
// CHECK:         scf.if
// CHECK:           arith.muli %{{.+}}, %[[LDC]] : index
// CHECK:           vector.extract %[[SUMS]][0] : vector<32xf32> from vector<8x32xf32>
// CHECK:           scf.if %[[READC]] -> (vector<32xf32>)
// CHECK:             vector.maskedload %[[C]][%{{.+}}], %[[MASK]]
// CHECK:             vector.fma
// CHECK:           vector.maskedstore %[[C]][%{{.+}}], %[[MASK]]
// CHECK-COUNT-7:   vector.maskedstore
// CHECK-NOT:       vector.maskedstore
// CHECK:         return

// The dot products of one-row products, one kernel per element type of b:
// 32-lane steps of a widened b, a masked step for the last k % 32, one
// reassociating reduction per row.

// CHECK-LABEL: func.func @tra_exec_dots_f32_f32(
// CHECK-SAME:      %[[ROWS:[^:]+]]: index, %[[K:[^:]+]]: index, %[[A:[^:]+]]: memref<?xf32>, %[[B:[^:]+]]: memref<?xf32>,
// CHECK-SAME:      %[[LDB:[^:]+]]: index, %[[OUT:[^:]+]]: memref<?xf32>) attributes {llvm.emit_c_interface}
// CHECK:         %[[TAIL:.+]] = arith.remui %[[K]], %[[LANES:.+]] : index
// CHECK:         %[[MASK:.+]] = vector.create_mask %[[TAIL]] : vector<32xi1>
// CHECK:         scf.for %[[J:.+]] = %{{.+}} to %[[ROWS]]
// CHECK:           arith.muli %[[J]], %[[LDB]] : index
// CHECK:           scf.for {{.+}} iter_args({{.+}}) -> (vector<32xf32>)
// CHECK:             vector.load %[[A]]
// CHECK:             vector.load %[[B]]
// CHECK-NOT:         arith.extf
// CHECK:             vector.fma
// CHECK:           scf.if
// CHECK:             vector.maskedload %[[A]]{{.+}}, %[[MASK]]
// CHECK:             vector.maskedload %[[B]]{{.+}}, %[[MASK]]
// CHECK:           vector.reduction <add>, %{{.+}} fastmath<reassoc> : vector<32xf32> into f32
// CHECK:           memref.store %{{.+}}, %[[OUT]][%[[J]]]

// CHECK-LABEL: func.func @tra_exec_dots_f32_f16(
// CHECK-SAME:      memref<?xf16>
// CHECK:             vector.load %{{.+}} : memref<?xf16>, vector<32xf16>
// CHECK-NEXT:        arith.extf %{{.+}} : vector<32xf16> to vector<32xf32>

// CHECK-LABEL: func.func @tra_exec_dots_f32_bf16(
// CHECK-SAME:      memref<?xbf16>
// CHECK:             arith.extf %{{.+}} : vector<32xbf16> to vector<32xf32>

// The Q8_0 dot products: pairs of 32-quant blocks (one line of quants, a
// prefetch clamped to the buffer), each widened with sitofp, multiplied by
// the activations and added, times the block's f16 scale, to its own
// accumulator; an odd last block; one reduction of both per row.

// CHECK-LABEL: func.func @tra_exec_dots_f32_q8(
// CHECK-SAME:      %[[ROWS:[^:]+]]: index, %[[BLOCKS:[^:]+]]: index, %[[A:[^:]+]]: memref<?xf32>, %[[Q:[^:]+]]: memref<?xi8>,
// CHECK-SAME:      %[[LDQ:[^:]+]]: index, %[[S:[^:]+]]: memref<?xf16>, %[[LDS:[^:]+]]: index, %[[OUT:[^:]+]]: memref<?xf32>) attributes {llvm.emit_c_interface}
// CHECK:         %[[QSIZE:.+]] = memref.dim %[[Q]]
// CHECK:         scf.for %[[J:.+]] = %{{.+}} to %[[ROWS]]
// CHECK:           arith.muli %[[J]], %[[LDQ]] : index
// CHECK:           arith.muli %[[J]], %[[LDS]] : index
// CHECK:           %[[PAIRS:.+]]:2 = scf.for {{.+}} iter_args({{.+}}) -> (vector<32xf32>, vector<32xf32>)
// CHECK:             %[[AHEAD:.+]] = arith.minui
// CHECK:             memref.prefetch %[[Q]][%[[AHEAD]]], read, locality<3>, data
// CHECK:             vector.load %[[A]]{{.+}} : memref<?xf32>, vector<32xf32>
// CHECK:             vector.load %[[Q]]{{.+}} : memref<?xi8>, vector<32xi8>
// CHECK:             arith.sitofp %{{.+}} : vector<32xi8> to vector<32xf32>
// CHECK:             memref.load %[[S]]
// CHECK:             arith.extf %{{.+}} : f16 to f32
// CHECK:             arith.mulf
// CHECK:             vector.broadcast
// CHECK:             vector.fma
// CHECK-COUNT-1:     vector.fma
// CHECK:             scf.yield
// CHECK:           %[[LAST:.+]] = scf.if
// CHECK:           arith.addf %[[LAST]], %[[PAIRS]]#1
// CHECK:           vector.reduction <add>, %{{.+}} fastmath<reassoc> : vector<32xf32> into f32
// CHECK:           memref.store %{{.+}}, %[[OUT]][%[[J]]]

// Run twice, the pass keeps the one definition.
// TWICE-COUNT-1: func.func @tra_exec_microkernel_f32_8x32
// TWICE-NOT: func.func @tra_exec_microkernel_f32_8x32
// TWICE-COUNT-1: func.func @tra_exec_dots_f32_bf16
// TWICE-NOT: func.func @tra_exec_dots_f32_bf16
// TWICE-COUNT-1: func.func @tra_exec_dots_f32_q8
// TWICE-NOT: func.func @tra_exec_dots_f32_q8
// TWICE: // -----

// -----

// A module that calls none of the runtime's products gets no kernel.

// CHECK-LABEL: func.func @no_products
// CHECK-NOT: tra_exec_microkernel
func.func @no_products(%a: memref<4xf32>) {
  return
}

// -----

// The Q8_0 product runs through the packed GEMM too; a declaration of the
// kernel gets its body.

func.func private @tra_exec_gemm_q8(i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
func.func private @tra_exec_microkernel_f32_8x32(index, memref<?xf32>, memref<?xf32>, memref<?xf32>, index, index, index, f32, f32)

// CHECK-LABEL: func.func @tra_exec_microkernel_f32_8x32(
// CHECK-SAME:      attributes {llvm.emit_c_interface}
// CHECK:         vector.outerproduct
