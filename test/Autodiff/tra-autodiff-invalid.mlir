// RUN: tra-opt %s --split-input-file --tra-autodiff --verify-diagnostics
// Errors of the options, against the first function of this file:
// RUN: not tra-opt %s --split-input-file --tra-autodiff="entry=nope" 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not tra-opt %s --split-input-file --tra-autodiff="entry=negative_call wrt=nope" 2>&1 | FileCheck %s --check-prefix=WRT
// RUN: not tra-opt %s --split-input-file --tra-autodiff="entry=negative_call wrt=ids" 2>&1 | FileCheck %s --check-prefix=INTWRT
// RUN: not tra-opt %s --split-input-file --tra-autodiff="entry=negative_call wrt=x,x" 2>&1 | FileCheck %s --check-prefix=TWICE
// ENTRY: error: tra-autodiff: no function @nope
// WRT: error: tra-autodiff: @negative_call has no argument named 'nope' (arguments: x, ids)
// INTWRT: error: tra-autodiff: argument 'ids' of @negative_call has type 'tensor<3xi64>'; only floating-point arguments have gradients
// TWICE: error: tra-autodiff: argument 'x' is named twice

func.func private @square(%x: tensor<3xf32>) -> tensor<f32>

func.func @negative_call(%x: tensor<3xf32> {tra.name = "x"},
                         %ids: tensor<3xi64> {tra.name = "ids"})
    -> tensor<f32> {
  // expected-error @+1 {{'func.call' op is a call: tra-autodiff differentiates one function; inline the callee first (--inline)}}
  %l = func.call @square(%x) : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{tra-autodiff: the loss of @negative_vector_loss has type 'tensor<3xf32>'; a loss is a floating-point tensor of one element}}
func.func @negative_vector_loss(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// -----

// expected-error @+1 {{tra-autodiff: @negative_two_results returns 2 values; a loss function returns one}}
func.func @negative_two_results(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  return %x, %x : tensor<f32>, tensor<f32>
}

// -----

// expected-error @+1 {{tra-autodiff: @negative_no_float_argument has no floating-point argument to differentiate with respect to}}
func.func @negative_no_float_argument(%i: tensor<3xi64>) -> tensor<f32> {
  %x = tra.convert %i : tensor<3xi64> to tensor<3xf32>
  %l = tra.einsum "i->" id (%x) : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{tra-autodiff: the module already has a symbol named @negative_taken_grad}}
func.func @negative_taken(%x: tensor<3xf32>) -> tensor<f32> {
  %l = tra.einsum "i->" id (%x) : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func private @negative_taken_grad()

// -----

func.func @negative_no_derivative(%x: tensor<3xf32>) -> tensor<f32> {
  %y = tra.map (%x) : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{'math.atan' op has no derivative in a tra.map body (tra-autodiff)}}
    %r = math.atan %a : f32
    tra.yield %r : f32
  }
  %l = tra.einsum "i->" id (%y) : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{tra-autodiff: the module has several functions; name the loss with entry=NAME}}
module {
  func.func @negative_first(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
  func.func @negative_second(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}
