// RUN: tra-opt %s -split-input-file -verify-diagnostics

func.func @self(%t: tensor<4xf32>) attributes {tra_comm.rank = 1 : i64, tra_comm.num_ranks = 2 : i64} {
  // expected-error @+1 {{rank 1 cannot move a tile to itself}}
  tra_comm.send %t to 1 tag 0 : tensor<4xf32>
  return
}

// -----

func.func @outside(%t: tensor<4xf32>) attributes {tra_comm.rank = 0 : i64, tra_comm.num_ranks = 2 : i64} {
  // expected-error @+1 {{peer 2 is not a rank of the job (2 ranks)}}
  %r = tra_comm.recv from 2 tag 0 : tensor<4xf32>
  return
}

// -----

func.func @small_group(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs a group of at least 2 ranks, got 1}}
  %a = tra_comm.all_reduce sum %t ranks [0] : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @unsorted(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{ranks must be sorted and distinct}}
  %a = tra_comm.all_reduce sum %t ranks [1, 0] : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @not_member(%t: tensor<4xf32>) -> tensor<4xf32> attributes {tra_comm.rank = 3 : i64, tra_comm.num_ranks = 4 : i64} {
  // expected-error @+1 {{rank 3 runs a collective of a group it is not part of}}
  %a = tra_comm.all_reduce sum %t ranks [0, 1] : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @group_outside_job(%t: tensor<4xf32>) -> tensor<4xf32> attributes {tra_comm.rank = 0 : i64, tra_comm.num_ranks = 2 : i64} {
  // expected-error @+1 {{rank 4 is not a rank of the job (2 ranks)}}
  %a = tra_comm.all_reduce sum %t ranks [0, 4] : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @bad_dim(%t: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dimension 1 is out of range for a tensor of rank 1}}
  %s = tra_comm.reduce_scatter sum %t dim 1 ranks [0, 1] sizes [2, 2] : tensor<4xf32> -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

func.func @sizes_sum(%t: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{slice sizes add up to 3, dimension 0 has 4}}
  %s = tra_comm.reduce_scatter sum %t dim 0 ranks [0, 1] sizes [2, 1] : tensor<4xf32> -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

func.func @sizes_count(%t: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{has 3 slice sizes for 2 ranks}}
  %s = tra_comm.reduce_scatter sum %t dim 0 ranks [0, 1] sizes [2, 1, 1] : tensor<4xf32> -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

func.func @other_dim(%t: tensor<4x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{result dimension 1 is 2, expected 3 (only dimension 0 is scattered)}}
  %s = tra_comm.reduce_scatter sum %t dim 0 ranks [0, 1] sizes [2, 2] : tensor<4x3xf32> -> tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

func.func @my_slice(%t: tensor<4xf32>) -> tensor<3xf32> attributes {tra_comm.rank = 1 : i64, tra_comm.num_ranks = 2 : i64} {
  // expected-error @+1 {{rank 1 keeps slice 1 of 1 elements, but the result has 3}}
  %s = tra_comm.reduce_scatter sum %t dim 0 ranks [0, 1] sizes [3, 1] : tensor<4xf32> -> tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

func.func @element_type(%t: tensor<4xf32>) -> tensor<2xf16> {
  // expected-error @+1 {{result must have the input's element type and rank}}
  %s = tra_comm.reduce_scatter sum %t dim 0 ranks [0, 1] sizes [2, 2] : tensor<4xf32> -> tensor<2xf16>
  return %s : tensor<2xf16>
}
