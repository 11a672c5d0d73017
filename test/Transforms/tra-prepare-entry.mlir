// RUN: tra-opt %s --tra-prepare-entry --split-input-file | FileCheck %s
// RUN: tra-opt %s --tra-prepare-entry=entry=other --split-input-file | FileCheck %s --check-prefix=NAMED

// @main is the entry: C interface, its arguments are never written, and
// it records how many inputs it has.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: tensor<4xf32> {bufferization.writable = false, tra.name = "x"}, %{{.*}}: tensor<i64> {bufferization.writable = false})
// CHECK-SAME: attributes {llvm.emit_c_interface, tra.entry_inputs = 2 : i64}
// CHECK-LABEL: func.func @other
// CHECK-NOT: llvm.emit_c_interface
// NAMED-LABEL: func.func @main
// NAMED-NOT: llvm.emit_c_interface
// NAMED-LABEL: func.func @other
// NAMED-SAME: attributes {llvm.emit_c_interface, tra.entry_inputs = 1 : i64}
func.func @main(%x: tensor<4xf32> {tra.name = "x"}, %p: tensor<i64>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Without @main, every public function with a body is an entry.
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: llvm.emit_c_interface
// CHECK-LABEL: func.func @first
// CHECK-SAME: attributes {llvm.emit_c_interface, tra.entry_inputs = 1 : i64}
// CHECK-LABEL: func.func @second
// CHECK-SAME: attributes {llvm.emit_c_interface, tra.entry_inputs = 1 : i64}
// NAMED-LABEL: func.func @other
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @second(%x: tensor<4xbf16>) -> tensor<4xi1> {
  %t = arith.constant dense<true> : tensor<4xi1>
  return %t : tensor<4xi1>
}
func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
