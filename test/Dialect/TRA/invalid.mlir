// RUN: tra-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

func.func @negative_spec_no_arrow(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{malformed index spec 'i': expected '->' before the output term}}
  %0 = tra.einsum "i" id (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_spec_two_arrows(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{more than one '->'}}
  %0 = tra.einsum "i->i->i" id (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_spec_bad_character(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unexpected character '1' in input term #0 (indices are letters a-z, A-Z)}}
  %0 = tra.einsum "1->i" id (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_spec_repeated_index(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{index 'i' repeated in input term #0}}
  %0 = tra.einsum "ii->i" id (%a) : (tensor<4x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_spec_term_count(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{index spec 'ij,jk->i' has 2 input terms but the op has 1 inputs}}
  %0 = tra.einsum "ij,jk->i" mul (%a) : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_input_rank(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input #1 has rank 1 but its term 'jk' names 2 indices}}
  %0 = tra.einsum "ij,jk->i" mul (%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_result_rank(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{result has rank 2 but the output term 'i' names 1 indices}}
  %0 = tra.einsum "ij->i" id (%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @negative_join_extent(%a: tensor<4x8xf32>, %b: tensor<9x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{index 'j' has extent 8 in input #0 (dim 1) but 9 in input #1 (dim 0)}}
  %0 = tra.einsum "ij,jk->ik" mul (%a, %b) : (tensor<4x8xf32>, tensor<9x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @negative_result_extent(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x15xf32> {
  // expected-error @+1 {{result dim 1 (index 'k') has extent 15, but the index has extent 16 in input #1 (dim 1)}}
  %0 = tra.einsum "ij,jk->ik" mul (%a, %b) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x15xf32>
  return %0 : tensor<4x15xf32>
}

// -----

func.func @negative_output_index_unbound(%a: tensor<4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{output index 'q' appears in no input}}
  %0 = tra.einsum "i->iq" id (%a) : (tensor<4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @negative_binary_combiner_arity(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner 'sub' takes exactly 2 inputs, got 3}}
  %0 = tra.einsum "i,i,i->i" sub (%a, %a, %a) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_unary_combiner_arity(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner 'exp' takes exactly 1 input, got 2}}
  %0 = tra.einsum "i,i->i" exp (%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_no_inputs() -> tensor<f32> {
  // expected-error @+1 {{index spec '->' has 1 input terms but the op has 0 inputs}}
  %0 = tra.einsum "->" mul () : () -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @negative_einsum_integer_result(%a: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{result element type 'i64' is not a floating-point type (f32, f16, bf16, f64)}}
  %0 = tra.einsum "i->i" id (%a) : (tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @negative_einsum_mixed_types(%a: tensor<4xf16>, %b: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{input #1 has element type 'f32' but the result has 'f16'; an einsum input has the result's element type, or is f16/bf16/i8 for an f32 result}}
  %0 = tra.einsum "i,i->i" mul (%a, %b) : (tensor<4xf16>, tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @negative_einsum_narrowing(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xf16> {
  // expected-error @+1 {{input #0 has element type 'bf16' but the result has 'f16'; an einsum input has the result's element type, or is f16/bf16/i8 for an f32 result}}
  %0 = tra.einsum "i,i->i" mul (%a, %b) : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @negative_einsum_bad_dtype(%a: tensor<4xi16>) -> tensor<4xi16> {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float or 64-bit signless integer or 32-bit signless integer or 8-bit signless integer or 1-bit signless integer values}}
  %0 = tra.einsum "i->i" id (%a) : (tensor<4xi16>) -> tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

// i8 inputs are widened into an f32 result; an i8 result is no einsum's.
func.func @negative_einsum_i8_result(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{result element type 'i8' is not a floating-point type (f32, f16, bf16, f64)}}
  %0 = tra.einsum "i->i" id (%a) : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @negative_einsum_i8_into_f16(%a: tensor<4xi8>) -> tensor<4xf16> {
  // expected-error @+1 {{input #0 has element type 'i8' but the result has 'f16'; an einsum input has the result's element type, or is f16/bf16/i8 for an f32 result}}
  %0 = tra.einsum "i->i" id (%a) : (tensor<4xi8>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @negative_unknown_combiner(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown combiner 'cube'}}
  %0 = tra.einsum "i->i" cube (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_unknown_aggregation(%a: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{unknown aggregation 'avg'}}
  %0 = tra.einsum "i->" id (%a) reduce avg : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @negative_unknown_aggregation_generic(%a: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+2 {{expected ::mlir::tra::AggregationKind to be one of: sum, max, min, prod}}
  // expected-error @+1 {{failed to parse TRA_AggregationAttr parameter 'value'}}
  %0 = "tra.einsum"(%a) <{aggregation = #tra<aggregation avg>, combiner = #tra<combiner id>, spec = "i->"}> : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @negative_map_reduces(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{index 'j' of input #0 does not appear in the output; tra.map does not aggregate (use tra.einsum)}}
  %0 = tra.map "ij->i" (%a) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    tra.yield %x : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_map_shape(%a: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{input #1 has shape 4 but the result has shape 4x8 (without a spec, inputs have the result's shape)}}
  %0 = tra.map (%a, %b) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: f32, %y: f32):
    tra.yield %x : f32
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @negative_map_spec_extent(%a: tensor<4x8xf32>, %b: tensor<5xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{index 'i' has extent 4 in input #0 (dim 0) but 5 in input #1 (dim 0)}}
  %0 = tra.map "ij,i->ij" (%a, %b) : (tensor<4x8xf32>, tensor<5xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: f32, %y: f32):
    tra.yield %x : f32
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @negative_map_arg_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body has 2 arguments but the op has 1 inputs}}
  %0 = tra.map (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32, %y: f32):
    tra.yield %x : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_map_arg_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body argument #0 has type 'f16' but input #0 has element type 'f32'}}
  %0 = tra.map (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f16):
    %y = arith.extf %x : f16 to f32
    tra.yield %y : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_map_no_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body must end with tra.yield}}
  %0 = tra.map (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    "test.terminator"(%x) : (f32) -> ()
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_map_yield_type(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{body yields 'f32' but the result element type is 'f16'}}
  %0 = tra.map (%a) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: f32):
    tra.yield %x : f32
  }
  return %0 : tensor<4xf16>
}

// -----

func.func @negative_index_dim(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tra.map (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{dim 1 is out of range for a tra.map result of rank 1}}
    %i = tra.index 1
    tra.yield %x : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_index_outside_map() -> index {
  // expected-error @+1 {{expects parent op 'tra.map'}}
  %i = tra.index 0
  return %i : index
}

// -----

func.func @negative_yield_outside_map(%x: f32) {
  // expected-error @+1 {{expects parent op 'tra.map'}}
  tra.yield %x : f32
}

// -----

func.func @negative_concat_empty() -> tensor<0xf32> {
  // expected-error @+1 {{needs at least one input}}
  %0 = tra.concat dim 0 () : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

func.func @negative_concat_dim(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{dim 1 is out of range for rank 1}}
  %0 = tra.concat dim 1 (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_concat_element_type(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<8xf32> {
  // expected-error @+1 {{input #1 has element type 'f16' but the result has 'f32'}}
  %0 = tra.concat dim 0 (%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @negative_concat_rank(%a: tensor<4xf32>, %b: tensor<4x1xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{input #1 has rank 2 but the result has rank 1}}
  %0 = tra.concat dim 0 (%a, %b) : (tensor<4xf32>, tensor<4x1xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @negative_concat_other_extent(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{input #1 has extent 5 in dim 0 but the result has 4}}
  %0 = tra.concat dim 1 (%a, %b) : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @negative_concat_total(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x7xf32> {
  // expected-error @+1 {{inputs add up to 6 along dim 1 but the result has 7}}
  %0 = tra.concat dim 1 (%a, %b) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

func.func @negative_slice_dim(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 1}}
  %0 = tra.slice %a dim 2 offset 0 size 2 : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @negative_slice_element_type(%a: tensor<4xf32>) -> tensor<2xf16> {
  // expected-error @+1 {{result element type 'f16' differs from the input's 'f32'}}
  %0 = tra.slice %a dim 0 offset 0 size 2 : tensor<4xf32> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

func.func @negative_slice_bounds(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{slice of 2 elements at offset 3 exceeds extent 4 of dim 0}}
  %0 = tra.slice %a dim 0 offset 3 size 2 : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @negative_slice_result_shape(%a: tensor<4x8xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result has shape 4x3, expected 4x2}}
  %0 = tra.slice %a dim 1 offset 0 size 2 : tensor<4x8xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @negative_update_element_type(%u: tensor<1x4xf16>, %d: tensor<8x4xf32>, %p: tensor<i64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{update element type 'f16' differs from the destination's 'f32'}}
  %0 = tra.update_slice %u into %d dim 0 at %p : tensor<1x4xf16> into tensor<8x4xf32> at tensor<i64>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @negative_update_rank(%u: tensor<4xf32>, %d: tensor<8x4xf32>, %p: tensor<i64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{update has rank 1 but the destination has rank 2}}
  %0 = tra.update_slice %u into %d dim 0 at %p : tensor<4xf32> into tensor<8x4xf32> at tensor<i64>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @negative_update_dim(%u: tensor<1x4xf32>, %d: tensor<8x4xf32>, %p: tensor<i64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = tra.update_slice %u into %d dim 2 at %p : tensor<1x4xf32> into tensor<8x4xf32> at tensor<i64>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @negative_update_too_long(%u: tensor<9x4xf32>, %d: tensor<8x4xf32>, %p: tensor<i64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{update extent 9 along dim 0 exceeds the destination's 8}}
  %0 = tra.update_slice %u into %d dim 0 at %p : tensor<9x4xf32> into tensor<8x4xf32> at tensor<i64>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @negative_update_other_extent(%u: tensor<1x3xf32>, %d: tensor<8x4xf32>, %p: tensor<i64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{update has extent 3 in dim 1 but the destination has 4}}
  %0 = tra.update_slice %u into %d dim 0 at %p : tensor<1x3xf32> into tensor<8x4xf32> at tensor<i64>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @negative_update_position_type(%u: tensor<1x4xf32>, %d: tensor<8x4xf32>, %p: tensor<1xi64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{operand #2 must be 0D tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = tra.update_slice %u into %d dim 0 at %p : tensor<1x4xf32> into tensor<8x4xf32> at tensor<1xi64>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @negative_gather_scalar_table(%t: tensor<f32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{table must have rank >= 1}}
  %0 = tra.gather %t[%i] : tensor<f32>, tensor<3xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @negative_gather_element_type(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf16> {
  // expected-error @+1 {{result element type 'f16' differs from the table's 'f32'}}
  %0 = tra.gather %t[%i] : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf16>
  return %0 : tensor<3x4xf16>
}

// -----

func.func @negative_gather_shape(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x5xf32> {
  // expected-error @+1 {{result has shape 3x5, expected 3x4 (index shape, then the table's row shape)}}
  %0 = tra.gather %t[%i] : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @negative_gather_float_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = tra.gather %t[%i] : tensor<10x4xf32>, tensor<3xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @negative_reshape_element_type(%a: tensor<4x8xf32>) -> tensor<32xf16> {
  // expected-error @+1 {{result element type 'f16' differs from the input's 'f32'}}
  %0 = tra.reshape %a : tensor<4x8xf32> -> tensor<32xf16>
  return %0 : tensor<32xf16>
}

// -----

func.func @negative_reshape_count(%a: tensor<4x8xf32>) -> tensor<31xf32> {
  // expected-error @+1 {{input has 32 elements but the result has 31}}
  %0 = tra.reshape %a : tensor<4x8xf32> -> tensor<31xf32>
  return %0 : tensor<31xf32>
}

// -----

func.func @negative_reshape_regroup(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{cannot reshape 2x3 to 3x2: source dims [2x3] become [3x2], which neither groups nor ungroups dimensions}}
  %0 = tra.reshape %a : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @negative_fill_value_type() -> tensor<4xf32> {
  // expected-error @+1 {{value has type 'f16' but the tensor has element type 'f32'}}
  %0 = "tra.fill"() <{value = 1.0 : f16}> : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_fill_float_for_int() -> tensor<4xi64> {
  // expected-error @+1 {{fill value for a tensor of 'i64' must be an integer}}
  %0 = tra.fill 1.5 : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @negative_fill_bad_element() -> tensor<4xindex> {
  // expected-error @+1 {{cannot fill a tensor of 'index'}}
  %0 = tra.fill 1 : tensor<4xindex>
  return %0 : tensor<4xindex>
}

// -----

func.func @negative_convert_shape(%a: tensor<4xf32>) -> tensor<5xf16> {
  // expected-error @+1 {{input has shape 4 but the result has shape 5; convert changes only the element type}}
  %0 = tra.convert %a : tensor<4xf32> to tensor<5xf16>
  return %0 : tensor<5xf16>
}

// -----

func.func @negative_convert_dtype(%a: tensor<4xf32>) -> tensor<4xi16> {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float or 64-bit signless integer or 32-bit signless integer or 8-bit signless integer or 1-bit signless integer values}}
  %0 = tra.convert %a : tensor<4xf32> to tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

func.func @negative_malformed_ir(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'tra.einsum' expected valid keyword}}
  %0 = tra.einsum "i->i" (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Shapes tra computes with: static, and a byte size that fits in 64 bits.
func.func @negative_dynamic_shape(%a: tensor<?x8xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'tra.einsum' op operand #0 has the dynamic shape tensor<?x8xf32> (tra plans static shapes; give every extent)}}
  %c = tra.einsum "ij->i" id (%a) : (tensor<?x8xf32>) -> tensor<?xf32>
  return %c : tensor<?xf32>
}

// -----

func.func @negative_dynamic_result(%a: tensor<4x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tra.map' op result #0 has the dynamic shape tensor<?x8xf32>}}
  %y = tra.map (%a) : (tensor<4x8xf32>) -> tensor<?x8xf32> {
  ^bb0(%v: f32):
    tra.yield %v : f32
  }
  return %y : tensor<?x8xf32>
}

// -----

func.func @negative_fill_overflow() -> tensor<4294967296x4294967296xf32> {
  // expected-error @+1 {{'tra.fill' op result #0 has the type tensor<4294967296x4294967296xf32>, more bytes than a 64-bit size can count}}
  %f = tra.fill 1.0 : tensor<4294967296x4294967296xf32>
  return %f : tensor<4294967296x4294967296xf32>
}

// -----

// 2^61 f32 elements are 2^63 bytes: one too many.
func.func @negative_fill_bytes_overflow() -> tensor<2305843009213693952xf32> {
  // expected-error @+1 {{more bytes than a 64-bit size can count}}
  %f = tra.fill 1.0 : tensor<2305843009213693952xf32>
  return %f : tensor<2305843009213693952xf32>
}

// -----

// offset + size would wrap around 2^64 and pass a naive bound check.
func.func @negative_slice_offset_overflow(%a: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{slice of 1 elements at offset 9223372036854775807 exceeds extent 4 of dim 0}}
  %0 = tra.slice %a dim 0 offset 9223372036854775807 size 1 : tensor<4xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @negative_slice_size_overflow(%a: tensor<4xi1>) -> tensor<9223372036854775807xi1> {
  // expected-error @+1 {{slice of 9223372036854775807 elements at offset 2 exceeds extent 4 of dim 0}}
  %0 = tra.slice %a dim 0 offset 2 size 9223372036854775807 : tensor<4xi1> -> tensor<9223372036854775807xi1>
  return %0 : tensor<9223372036854775807xi1>
}
