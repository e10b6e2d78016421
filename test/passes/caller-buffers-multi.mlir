// attn-caller-buffers on an entry with several results: one trailing output
// memref per result, in result order, and a plan passing `output i`. A
// result a launch writes goes straight into its output; a returned argument
// and a value returned twice are copied (materialize_in_destination).
// RUN: attn-opt %s --attn-fuse --attn-to-block --attn-lower-reference --attn-caller-buffers -split-input-file | FileCheck %s
// The reference lowering: every result copied into its own output.
// RUN: attn-opt %s --attn-lower-reference --attn-caller-buffers -split-input-file | FileCheck %s --check-prefix=REF

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-SAME: %[[G:[a-z0-9]+]]: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK-SAME: %[[O0:[a-z0-9]+]]: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-SAME: %[[O1:[a-z0-9]+]]: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>)
// CHECK-SAME: args = [#attn_launch.arg<input 0>, #attn_launch.arg<input 1>, #attn_launch.arg<input 2>, #attn_launch.arg<input 3>, #attn_launch.arg<output>, #attn_launch.arg<output 1>]>]>
// CHECK: %[[GT:.*]] = bufferization.to_tensor %[[G]] restrict
// CHECK: attn_block.launch @main_attention_kernel {{.*}} args({{.*}}, %[[O0]])
// CHECK: bufferization.materialize_in_destination %[[GT]] in restrict writable %[[O1]]
// CHECK-NOT: materialize_in_destination
// CHECK: return{{$}}

// REF-LABEL: func.func @main(
// REF-SAME: %[[O0:[a-z0-9]+]]: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %[[O1:[a-z0-9]+]]: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>)
// REF: bufferization.materialize_in_destination {{.*}} in restrict writable %[[O0]]
// REF: bufferization.materialize_in_destination {{.*}} in restrict writable %[[O1]]
// REF: return{{$}}
func.func @main(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>, %g: tensor<?x?x?xf32>) -> (tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) {
  %s = attn.scores %q, %k gate(%g) : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o, %g : tensor<?x?x?x64xf32>, tensor<?x?x?xf32>
}

// -----

// The same value returned twice: neither output replaces the launch's
// buffer (each gets a copy), and three outputs are passed in order.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[O0:[a-z0-9]+]]: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %[[O1:[a-z0-9]+]]: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %[[O2:[a-z0-9]+]]: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>)
// CHECK-SAME: #attn_launch.arg<output>, #attn_launch.arg<output 1>, #attn_launch.arg<output 2>]
// CHECK: %[[BUF:.*]] = memref.alloc
// CHECK: %[[CAST:.*]] = memref.cast %[[BUF]]
// CHECK: attn_block.launch @main_attention_kernel {{.*}} args({{.*}}, %[[CAST]])
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[BUF]]
// CHECK: bufferization.materialize_in_destination %[[T]] in restrict writable %[[O0]]
// CHECK: bufferization.materialize_in_destination %[[T]] in restrict writable %[[O1]]
// CHECK: bufferization.materialize_in_destination {{.*}} in restrict writable %[[O2]]
// CHECK: return{{$}}

// REF-LABEL: func.func @main(
// REF-COUNT-3: bufferization.materialize_in_destination
func.func @main(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) {
  %s = attn.scores %q, %k : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o, %o, %q : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>
}
