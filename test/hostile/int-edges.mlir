// The edges of the signed 64-bit range parse and print back unchanged.
// RUN: attn-opt %s | attn-opt | FileCheck %s

// CHECK-LABEL: func @rope_edges
// CHECK: attn.rope %{{.*}} offset -9223372036854775808 :
// CHECK: attn.rope %{{.*}} rotary_dim 8 offset 9223372036854775807 :
// CHECK: attn.scores %{{.*}} mask sliding_window window 9223372036854775807 :
func.func @rope_edges(%q: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %0 = attn.rope %q offset -9223372036854775808 : tensor<1x2x4x8xf32>
  %1 = attn.rope %q rotary_dim 8 offset 9223372036854775807 : tensor<1x2x4x8xf32>
  %2 = attn.scores %q, %q mask sliding_window window 9223372036854775807 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return %0, %1, %2 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}
