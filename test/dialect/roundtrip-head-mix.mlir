// Round trip of attn.head_mix: full [H, H] mixing, grouped [H, c_h], and a
// fully dynamic weight.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @head_mix_pre_full
// CHECK-SAME: (%[[S:.*]]: tensor<?x16x?x?xf32>, %[[W:.*]]: tensor<16x16xf32>)
// CHECK: attn.head_mix pre %[[S]], %[[W]] : tensor<?x16x?x?xf32>, tensor<16x16xf32>
// GENERIC-LABEL: sym_name = "head_mix_pre_full"
// GENERIC: "attn.head_mix"(%{{.*}}, %{{.*}}) <{stage = 0 : i32}> : (tensor<?x16x?x?xf32>, tensor<16x16xf32>) -> tensor<?x16x?x?xf32>
func.func @head_mix_pre_full(%s: tensor<?x16x?x?xf32>, %w: tensor<16x16xf32>) -> tensor<?x16x?x?xf32> {
  %0 = attn.head_mix pre %s, %w : tensor<?x16x?x?xf32>, tensor<16x16xf32>
  return %0 : tensor<?x16x?x?xf32>
}

// CHECK-LABEL: func.func @head_mix_post_grouped
// CHECK: attn.head_mix post %{{.*}}, %{{.*}} : tensor<?x16x?x?xf32>, tensor<16x4xf32>
// GENERIC-LABEL: sym_name = "head_mix_post_grouped"
// GENERIC: <{stage = 1 : i32}>
func.func @head_mix_post_grouped(%p: tensor<?x16x?x?xf32>, %w: tensor<16x4xf32>) -> tensor<?x16x?x?xf32> {
  %0 = attn.head_mix post %p, %w : tensor<?x16x?x?xf32>, tensor<16x4xf32>
  return %0 : tensor<?x16x?x?xf32>
}

// A dynamic group size is allowed (full mixing over a dynamic head count);
// a static group size with a dynamic H is checked at run time only.
// CHECK-LABEL: func.func @head_mix_dynamic
// CHECK: attn.head_mix post %{{.*}}, %{{.*}} : tensor<?x?x?x?xf32>, tensor<?x?xf32>
// CHECK: attn.head_mix pre %{{.*}}, %{{.*}} : tensor<?x?x?x?xf32>, tensor<?x2xf32>
// CHECK: attn.head_mix pre %{{.*}}, %{{.*}} : tensor<1x6x4x4xf32>, tensor<6x1xf32>
func.func @head_mix_dynamic(%p: tensor<?x?x?x?xf32>, %w: tensor<?x?xf32>, %w2: tensor<?x2xf32>,
                            %s: tensor<1x6x4x4xf32>, %w1: tensor<6x1xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<1x6x4x4xf32>) {
  %0 = attn.head_mix post %p, %w : tensor<?x?x?x?xf32>, tensor<?x?xf32>
  %1 = attn.head_mix pre %p, %w2 : tensor<?x?x?x?xf32>, tensor<?x2xf32>
  %2 = attn.head_mix pre %s, %w1 : tensor<1x6x4x4xf32>, tensor<6x1xf32>
  return %0, %1, %2 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<1x6x4x4xf32>
}
