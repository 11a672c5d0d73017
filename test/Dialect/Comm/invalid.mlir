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

// -----

func.func @isend_self(%t: tensor<4xf32>) attributes {tra_comm.rank = 1 : i64, tra_comm.num_ranks = 2 : i64} {
  // expected-error @+1 {{rank 1 cannot move a tile to itself}}
  %s = tra_comm.isend %t to 1 tag 0 : tensor<4xf32>
  tra_comm.wait %s, %t : tensor<4xf32>
  return
}

// -----

func.func @irecv_outside() attributes {tra_comm.rank = 0 : i64, tra_comm.num_ranks = 2 : i64} {
  // expected-error @+1 {{peer 5 is not a rank of the job (2 ranks)}}
  %b, %r = tra_comm.irecv from 5 tag 0 : tensor<4xf32>
  %x = tra_comm.wait %r, %b : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @isend_never_waited(%t: tensor<4xf32>) {
  // expected-error @+1 {{request must be completed by exactly one tra_comm.wait}}
  %s = tra_comm.isend %t to 1 tag 0 : tensor<4xf32>
  return
}

// -----

func.func @irecv_waited_twice() -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{request must be completed by exactly one tra_comm.wait}}
  %b, %r = tra_comm.irecv from 1 tag 0 : tensor<4xf32>
  %x = tra_comm.wait %r, %b : tensor<4xf32> -> tensor<4xf32>
  %y = tra_comm.wait %r, %b : tensor<4xf32> -> tensor<4xf32>
  return %x, %y : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @irecv_read_in_flight() -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{the received tensor may only be used by the tra_comm.wait of its request}}
  %b, %r = tra_comm.irecv from 1 tag 0 : tensor<4xf32>
  %x = tra_comm.wait %r, %b : tensor<4xf32> -> tensor<4xf32>
  return %b, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @wait_other_send(%t: tensor<4xf32>, %u: tensor<4xf32>) {
  %s = tra_comm.isend %t to 1 tag 0 : tensor<4xf32>
  // expected-error @+1 {{waits for a send of another tensor; expected the tra_comm.isend's input}}
  tra_comm.wait %s, %u : tensor<4xf32>
  return
}

// -----

func.func @wait_send_result(%t: tensor<4xf32>) -> tensor<4xf32> {
  %s = tra_comm.isend %t to 1 tag 0 : tensor<4xf32>
  // expected-error @+1 {{completes a send and has no result}}
  %x = tra_comm.wait %s, %t : tensor<4xf32> -> tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

func.func @wait_other_receive(%u: tensor<4xf32>) -> tensor<4xf32> {
  %b, %r = tra_comm.irecv from 1 tag 0 : tensor<4xf32>
  // expected-error @+1 {{waits for a receive into another tensor; expected the tra_comm.irecv's result}}
  %x = tra_comm.wait %r, %u : tensor<4xf32> -> tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

func.func @wait_receive_no_result() {
  %b, %r = tra_comm.irecv from 1 tag 0 : tensor<4xf32>
  // expected-error @+1 {{completes a receive and must return the received tensor}}
  tra_comm.wait %r, %b : tensor<4xf32>
  return
}

// -----

func.func @wait_result_type() -> tensor<2x2xf32> {
  %b, %r = tra_comm.irecv from 1 tag 0 : tensor<4xf32>
  // expected-error @+1 {{result type 'tensor<2x2xf32>' differs from the received tensor's type 'tensor<4xf32>'}}
  %x = tra_comm.wait %r, %b : tensor<4xf32> -> tensor<2x2xf32>
  return %x : tensor<2x2xf32>
}

// -----

// expected-error @+1 {{'tra_comm.device' must be the string "cuda" on a module (tiles in NVIDIA GPU memory)}}
module attributes {tra_comm.device = "tpu"} {
}

// -----

func.func @fetch_tier(%w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{tier 'gpu' is not a memory tier ("host" or "disk")}}
  %f = tra_comm.fetch %w from "gpu" : tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

func.func @fetch_dynamic(%w: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{must be statically shaped tensor}}
  %f = tra_comm.fetch %w from "host" : tensor<?xf32>
  return %f : tensor<?xf32>
}

// -----

func.func @ifetch_tier(%w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{tier 'gpu' is not a memory tier ("host" or "disk")}}
  %b, %r = tra_comm.ifetch %w from "gpu" : tensor<4xf32>
  %f = tra_comm.wait %r, %b : tensor<4xf32> -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

// The copy reads its input until the wait: only arguments (and slices of
// them), which nothing writes, may be fetched without blocking.
func.func @ifetch_computed(%w: tensor<4xf32>) -> tensor<4xf32> {
  %x = arith.addf %w, %w : tensor<4xf32>
  // expected-error @+1 {{input must be a function argument or a slice of one, of 1 to 4 dimensions}}
  %b, %r = tra_comm.ifetch %x from "host" : tensor<4xf32>
  %f = tra_comm.wait %r, %b : tensor<4xf32> -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

func.func @ifetch_rank(%w: tensor<1x1x1x1x4xf32>) -> tensor<1x1x1x1x4xf32> {
  // expected-error @+1 {{input must be a function argument or a slice of one, of 1 to 4 dimensions}}
  %b, %r = tra_comm.ifetch %w from "host" : tensor<1x1x1x1x4xf32>
  %f = tra_comm.wait %r, %b : tensor<1x1x1x1x4xf32> -> tensor<1x1x1x1x4xf32>
  return %f : tensor<1x1x1x1x4xf32>
}

// -----

func.func @ifetch_unwaited(%w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{request must be completed by exactly one tra_comm.wait}}
  %b, %r = tra_comm.ifetch %w from "host" : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @ifetch_read_early(%w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the fetched tensor may only be used by the tra_comm.wait of its request}}
  %b, %r = tra_comm.ifetch %w from "host" : tensor<4xf32>
  %x = arith.addf %b, %b : tensor<4xf32>
  %f = tra_comm.wait %r, %b : tensor<4xf32> -> tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

func.func @ifetch_wait_other(%w: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  %b, %r = tra_comm.ifetch %w from "host" : tensor<4xf32>
  // expected-error @+1 {{waits for a fetch into another tensor; expected the tra_comm.ifetch's result}}
  %f = tra_comm.wait %r, %v : tensor<4xf32> -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

func.func @ifetch_wait_no_result(%w: tensor<4xf32>) {
  %b, %r = tra_comm.ifetch %w from "host" : tensor<4xf32>
  // expected-error @+1 {{completes a fetch and must return the fetched tensor}}
  tra_comm.wait %r, %b : tensor<4xf32>
  return
}
