// RUN: tra-opt %s --split-input-file --tra-report-failed-checks | FileCheck %s
// RUN: tra-compile %S/../Integration/Inputs/positions.mlir --hw local --emit=mlir --stage=llvm | FileCheck %s --check-prefix=LLVM

// A failed check calls the runtime with the message and goes on: the assert's
// block branches to a block that reports and then to the rest. Two asserts
// with one message share its string; the runtime function is declared once.
// CHECK-LABEL: module
// CHECK-DAG: llvm.mlir.global internal constant @tra_check_message_0("tra.gather at m.mlir:3:8: index out of range [0, 16)\00")
// CHECK-DAG: llvm.mlir.global internal constant @tra_check_message_1("position out of range\00")
// CHECK-DAG: func.func private @tra_exec_check_failed(!llvm.ptr)
// CHECK-LABEL: func.func @checks(
// CHECK-SAME: %[[I:.*]]: index, %[[OK:.*]]: i1
// CHECK:   %[[IN:.*]] = arith.cmpi slt, %[[I]]
// CHECK:   cf.cond_br %[[IN]], ^[[REST:.*]], ^[[FAILED:[a-z0-9]*]]
// CHECK: ^[[FAILED]]:
// CHECK:   %[[M:.*]] = llvm.mlir.addressof @tra_check_message_0 : !llvm.ptr
// CHECK:   call @tra_exec_check_failed(%[[M]]) : (!llvm.ptr) -> ()
// CHECK:   cf.br ^[[REST]]
// CHECK: ^[[REST]]:
// CHECK:   cf.cond_br %[[OK]], ^{{.*}}, ^[[FAILED2:[a-z0-9]*]]
// CHECK: ^[[FAILED2]]:
// CHECK:   llvm.mlir.addressof @tra_check_message_0
// CHECK:   cf.cond_br %[[OK]], ^{{.*}}, ^[[FAILED3:[a-z0-9]*]]
// CHECK: ^[[FAILED3]]:
// CHECK:   llvm.mlir.addressof @tra_check_message_1
// CHECK-NOT: cf.assert
// CHECK:   return %[[I]] : index

// In the CPU pipeline, the gather's and the update's checks call the runtime;
// nothing aborts.
// LLVM-NOT: @abort
// LLVM-DAG: llvm.mlir.global internal constant @tra_check_message_{{.*}}("tra.gather at
// LLVM-DAG: llvm.mlir.global internal constant @tra_check_message_{{.*}}("tra.update_slice at
// LLVM-DAG: llvm.call @tra_exec_check_failed
// LLVM-NOT: @abort
func.func @checks(%i: index, %ok: i1) -> index {
  %c16 = arith.constant 16 : index
  %in = arith.cmpi slt, %i, %c16 : index
  cf.assert %in, "tra.gather at m.mlir:3:8: index out of range [0, 16)"
  cf.assert %ok, "tra.gather at m.mlir:3:8: index out of range [0, 16)"
  cf.assert %ok, "position out of range"
  return %i : index
}

// -----

// Inside a loop body (an OpenMP loop of a parallel gather keeps its blocks).
// CHECK-LABEL: func.func @in_loop
// CHECK: omp.loop_nest
// CHECK:   cf.cond_br
// CHECK:   call @tra_exec_check_failed
// CHECK:   omp.yield
func.func @in_loop(%n: index, %ok: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        cf.assert %ok, "in a loop"
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Nothing to do without asserts: no declaration is added.
// CHECK-LABEL: func.func @none
// CHECK-NOT: tra_exec_check_failed
func.func @none() {
  return
}

// -----

// GPU kernel modules lower their own asserts.
// CHECK-LABEL: gpu.module @kernels
// CHECK: cf.assert
// CHECK-NOT: tra_exec_check_failed
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%ok: i1) kernel {
      cf.assert %ok, "in a kernel"
      gpu.return
    }
  }
}
