// attn-caller-buffers: the entry takes the caller's strided buffers, the
// fused kernel reads them where they lie and writes the output in place.
// RUN: attn-opt %s --attn-fuse --attn-to-block --attn-lower-reference --attn-caller-buffers | FileCheck %s
// After bufferization nothing is copied in or out of @main.
// RUN: attn-opt %s --attn-fuse --attn-to-block --attn-block-strip-gpu --attn-lower-reference --attn-caller-buffers --attn-block-to-cpu --canonicalize --convert-elementwise-to-linalg --attn-cpu-fuse-elementwise --canonicalize --one-shot-bufferize="bufferize-function-boundaries allow-return-allocs-from-loops" | FileCheck %s --check-prefix=BUF
// A result the reference lowering computes is copied into the output.
// RUN: attn-opt %s --attn-lower-reference --attn-caller-buffers | FileCheck %s --check-prefix=REF

// CHECK-LABEL: func.func private @main_attention_kernel(
// CHECK-SAME: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-SAME: %[[G:[a-z0-9]+]]: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>)
// CHECK-SAME: attn_launch.plan = #attn_launch.plan<device = cpu
// CHECK-SAME: kernels = [#attn_launch.kernel<name = @main, {{.*}} args = [#attn_launch.arg<input 0>, #attn_launch.arg<input 1>, #attn_launch.arg<input 2>, #attn_launch.arg<input 3>, #attn_launch.arg<output>]>]>
// CHECK: bufferization.to_tensor %[[Q]] restrict
// The only buffer made is FoX's G' (the gate kernel's scratch), no copy.
// CHECK: memref.alloc({{.*}}) : memref<?x?x?xf64>
// CHECK-NOT: memref.alloc
// CHECK: attn_block.launch @main_gate_prefix
// CHECK: attn_block.launch @main_attention_kernel {{.*}} args({{.*}}, %[[O]])
// CHECK-NOT: materialize_in_destination
// CHECK: return{{$}}

// BUF-LABEL: func.func @main(
// BUF-NOT: memref.copy
// BUF: memref.alloc({{.*}}) {{.*}}: memref<?x?x?xf64>
// BUF-NOT: memref.copy
// BUF-NOT: memref.alloc
// BUF: return

// REF-LABEL: func.func @main(
// REF: bufferization.materialize_in_destination {{.*}} in restrict writable
// REF: return{{$}}
func.func @main(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
  %s = attn.scores %q, %k gate(%g) : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}
