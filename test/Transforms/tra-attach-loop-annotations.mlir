// RUN: tra-opt %s --tra-attach-loop-annotations | FileCheck %s
// RUN: tra-compile %S/../Integration/Inputs/row-max.mlir --hw local --emit=mlir --stage=llvm | FileCheck %s --check-prefix=PIPELINE

// Through the CPU pipeline, the row maximum's and the row sum's loops over
// 64 keys keep their annotation (tra-promote-accumulators) to LLVM IR.
// PIPELINE: #[[$A:.*]] = #llvm.loop_annotation<unroll = #{{.*}}>
// PIPELINE: llvm.intr.maximum
// PIPELINE-NEXT: llvm.add
// PIPELINE-NEXT: llvm.br ^bb{{[0-9]+}}({{.*}}) {loop_annotation = #[[$A]]}
// PIPELINE: llvm.fadd {{.*}}reassoc
// PIPELINE-NEXT: llvm.add
// PIPELINE-NEXT: llvm.br ^bb{{[0-9]+}}({{.*}}) {loop_annotation = #[[$A]]}
// PIPELINE-NOT: llvm.loop_annotation =

#unroll = #llvm.loop_unroll<disable = true>
#annotation = #llvm.loop_annotation<unroll = #unroll>

// The annotation that scf-to-cf and cf-to-llvm leave under its dialect name
// on a latch branch becomes the branch's loop_annotation property (what
// translation to LLVM IR reads); other attributes stay.
// CHECK-LABEL: llvm.func @latch
// CHECK: llvm.br ^bb1({{.*}}) {loop_annotation = #{{.*}}}
// CHECK-NOT: llvm.loop_annotation
// CHECK: llvm.cond_br %{{.*}}, ^bb1({{.*}}), ^bb{{[0-9]+}} {loop_annotation = #{{.*}}}
// CHECK: llvm.return {llvm.loop_annotation = #{{.*}}}
llvm.func @latch(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %next = llvm.add %i, %c1 : i64
  %more = llvm.icmp "slt" %next, %n : i64
  llvm.cond_br %more, ^bb3, ^bb4
^bb3:
  llvm.br ^bb1(%next : i64) {llvm.loop_annotation = #annotation}
^bb4:
  %again = llvm.icmp "slt" %next, %c1 : i64
  llvm.cond_br %again, ^bb1(%next : i64), ^bb2 {llvm.loop_annotation = #annotation}
^bb2:
  llvm.return {llvm.loop_annotation = #annotation}
}
