// RUN: tra-opt %s --split-input-file --tra-train-step="weight-decay=0.1" | FileCheck %s --check-prefix=ADAMW
// RUN: tra-opt %s --split-input-file --tra-train-step="optimizer=sgd momentum=0.9 clip-norm=1.0 name=sgd_step" | FileCheck %s --check-prefix=SGD
// RUN: tra-opt %s --split-input-file --tra-train-step="optimizer=sgd" | FileCheck %s --check-prefix=PLAIN
// RUN: not tra-opt %s --tra-train-step="optimizer=adam" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tra-opt %s --tra-train-step="wrt=x" 2>&1 | FileCheck %s --check-prefix=HALF

// The step takes the loss's arguments, the states, lr and step; returns the
// loss, the gradient norm, the parameter and the states.
// ADAMW-LABEL: func.func @train_step(
// ADAMW-SAME: %[[X:.*]]: tensor<4x8xf16> {tra.name = "x"}, %[[W:.*]]: tensor<8x2xf32> {tra.name = "w"},
// ADAMW-SAME: %[[M:.*]]: tensor<8x2xf32> {tra.name = "w.adam_m"}, %[[V:.*]]: tensor<8x2xf32> {tra.name = "w.adam_v"},
// ADAMW-SAME: %[[LR:.*]]: tensor<f32> {tra.name = "lr"}, %[[STEP:.*]]: tensor<f32> {tra.name = "step"})
// ADAMW-SAME: -> (tensor<f32> {tra.name = "loss"}, tensor<f32> {tra.name = "grad_norm"}, tensor<8x2xf32> {tra.carries = 1 : i64, tra.name = "w_out"},
// ADAMW-SAME: tensor<8x2xf32> {tra.carries = 2 : i64, tra.name = "w.adam_m_out"}, tensor<8x2xf32> {tra.carries = 3 : i64, tra.name = "w.adam_v_out"})
// ADAMW: %[[DW:.*]] = tra.einsum "sf,sd->df" mul
// ADAMW: %[[SS:.*]] = tra.einsum "ab->" square (%[[DW]])
// ADAMW: %[[NORM:.*]] = tra.map (%[[SS]])
// ADAMW: math.sqrt
// ADAMW: %[[M2:.*]] = tra.map "ab,ab->ab" (%[[M]], %[[DW]])
// ADAMW: %[[V2:.*]] = tra.map "ab,ab->ab" (%[[V]], %[[DW]])
// ADAMW: %[[W2:.*]] = tra.map "ab,ab,ab,,->ab" (%[[W]], %[[M2]], %[[V2]], %[[LR]], %[[STEP]])
// ADAMW: math.powf
// ADAMW: return %{{.*}}, %[[NORM]], %[[W2]], %[[M2]], %[[V2]]

// SGD with momentum and clipping: min(1, clip / (norm + 1e-6)) scales g.
// SGD-LABEL: func.func @sgd_step(
// SGD-SAME: %{{.*}}: tensor<8x2xf32> {tra.name = "w.momentum"}, %[[LR:.*]]: tensor<f32> {tra.name = "lr"})
// SGD: %[[NORM:.*]] = tra.map (%{{.*}}) : (tensor<f32>) -> tensor<f32>
// SGD-NEXT: ^bb0
// SGD-NEXT: math.sqrt
// SGD: %[[COEF:.*]] = tra.map (%[[NORM]])
// SGD: arith.minimumf
// SGD: %[[BUF:.*]] = tra.map "ab,ab,ab,->ab" (%{{.*}}, %{{.*}}, %{{.*}}, %[[COEF]])
// SGD: %[[W2:.*]] = tra.map "ab,ab,ab,,->ab" (%{{.*}}, %{{.*}}, %[[BUF]], %[[LR]], %[[COEF]])
// SGD: return %{{.*}}, %[[NORM]], %[[W2]], %[[BUF]]

// Plain SGD keeps no state and reads no step number.
// PLAIN-LABEL: func.func @train_step(
// PLAIN-SAME: %{{.*}}: tensor<8x2xf32> {tra.name = "w"}, %{{.*}}: tensor<f32> {tra.name = "lr"})
// PLAIN-SAME: -> (tensor<f32> {tra.name = "loss"}, tensor<f32> {tra.name = "grad_norm"}, tensor<8x2xf32> {tra.carries = 1 : i64, tra.name = "w_out"})

// UNKNOWN: error: tra-train-step: unknown optimizer 'adam' (sgd or adamw)
// HALF: error: tra-train-step: parameter 'x' is 'f16'; a training step keeps its parameters in f32 (or f64)
func.func @loss(%x: tensor<4x8xf16> {tra.name = "x"},
                %w: tensor<8x2xf32> {tra.name = "w", tra.wrt})
    -> (tensor<f32> {tra.name = "loss"}) {
  %xf = tra.convert %x : tensor<4x8xf16> to tensor<4x8xf32>
  %y = tra.einsum "sd,df->sf" mul (%xf, %w)
      : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %l = tra.einsum "sf->" square (%y) : (tensor<4x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
