// attn-block-launch-plan refuses what a launch plan cannot state, naming
// the op: index arithmetic outside the affine subset, host ops other than
// launches, allocations and index arithmetic, CPU-form kernels, kernels
// the flat-pointer ABI cannot pass, wgmma kernels for a chip without it.
//
// RUN: attn-opt %s --split-input-file --attn-block-launch-plan="chip=sm_90" -verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-block-launch-plan="chip=sm_70" 2>&1 | FileCheck %s --check-prefix=CHIP

// CHIP: attn-block-launch-plan: GPU chip sm_70 is not supported

func.func private @k(%a: memref<?xf32>, %o: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
  return
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %b = bufferization.to_buffer %x read_only : tensor<?xf32> to memref<?xf32>
  %o = memref.alloc(%n) : memref<?xf32>
  // expected-error @+1 {{attn-block-launch-plan: cannot state 'arith.shli' in a launch plan}}
  %g = arith.shli %n, %c1 : index
  attn_block.launch @k grid(%g, %c1) args(%b, %o) : memref<?xf32>, memref<?xf32>
  %r = bufferization.to_tensor %o restrict writable : memref<?xf32> to tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A size through an index_cast of an i32: not index arithmetic.
func.func private @k(%a: memref<?xf32>, %o: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
  return
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : i32
  // expected-error @+1 {{cannot state 'arith.index_cast' in a launch plan}}
  %n = arith.index_cast %c7 : i32 to index
  %b = bufferization.to_buffer %x read_only : tensor<?xf32> to memref<?xf32>
  %o = memref.alloc(%n) : memref<?xf32>
  attn_block.launch @k grid(%c1, %c1) args(%b, %o) : memref<?xf32>, memref<?xf32>
  %r = bufferization.to_tensor %o restrict writable : memref<?xf32> to tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

func.func private @k(%a: memref<?xf32>, %o: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
  return
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  // expected-error @+1 {{'tensor.empty' in @main is not a launch, a scratch allocation or index arithmetic}}
  %e = tensor.empty(%n) : tensor<?xf32>
  %b = bufferization.to_buffer %x read_only : tensor<?xf32> to memref<?xf32>
  %o = memref.alloc(%n) : memref<?xf32>
  attn_block.launch @k grid(%c1, %c1) args(%b, %o) : memref<?xf32>, memref<?xf32>
  %r = bufferization.to_tensor %o restrict writable : memref<?xf32> to tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// The CPU form (no attn_block.num_warps).
func.func private @k(%a: memref<?xf32>, %o: memref<?xf32>) attributes {attn_block.kernel} {
  return
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %b = bufferization.to_buffer %x read_only : tensor<?xf32> to memref<?xf32>
  %o = memref.alloc(%n) : memref<?xf32>
  // expected-error @+1 {{kernel @k is in the CPU form (no attn_block.num_warps)}}
  attn_block.launch @k grid(%c1, %c1) args(%b, %o) : memref<?xf32>, memref<?xf32>
  %r = bufferization.to_tensor %o restrict writable : memref<?xf32> to tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A strided memref: the flat ABI passes identity layouts only.
func.func private @k(%a: memref<?xf32, strided<[2]>>, %o: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
  return
}
func.func @main(%x: memref<?xf32, strided<[2]>>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %y, %c0 : tensor<?xf32>
  %o = memref.alloc(%n) : memref<?xf32>
  // expected-error @+1 {{kernel @k: argument 0 (memref<?xf32, strided<[2]>>) is not a memref with the identity layout}}
  attn_block.launch @k grid(%c1, %c1) args(%x, %o) : memref<?xf32, strided<[2]>>, memref<?xf32>
  %r = bufferization.to_tensor %o restrict writable : memref<?xf32> to tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// The result must be a buffer a launch writes.
func.func private @k(%a: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
  return
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c1 = arith.constant 1 : index
  %b = bufferization.to_buffer %x read_only : tensor<?xf32> to memref<?xf32>
  attn_block.launch @k grid(%c1, %c1) args(%b) : memref<?xf32>
  // expected-error @+1 {{result 0 of @main must be a buffer a launch writes}}
  return %x : tensor<?xf32>
}

// -----

// Every result is an output the launches write: an argument returned as a
// result has no output view of its own.
func.func private @k(%a: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
  return
}
func.func @main(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %m = memref.alloc(%n) : memref<?xf32>
  attn_block.launch @k grid(%c1, %c1) args(%m) : memref<?xf32>
  %r = bufferization.to_tensor %m : memref<?xf32> to tensor<?xf32>
  // expected-error @+1 {{result 1 of @main must be a buffer a launch writes}}
  return %r, %x : tensor<?xf32>, tensor<?xf32>
}

// -----

// One buffer cannot be two outputs.
func.func private @k(%a: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
  return
}
func.func @main(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %m = memref.alloc(%n) : memref<?xf32>
  attn_block.launch @k grid(%c1, %c1) args(%m) : memref<?xf32>
  %r = bufferization.to_tensor %m : memref<?xf32> to tensor<?xf32>
  // expected-error @+1 {{@main returns one buffer as results 0 and 1}}
  return %r, %r : tensor<?xf32>, tensor<?xf32>
}
