// attn-to-block leaves PaTH with RoPE and PaTH with MTA pieces as
// attn.attention, with a remark: the CPU pipeline runs them through the
// reference lowering. No kernel or launch is created for them. (PaTH is
// fused: to-block-path.mlir; MTA and the MTA output norm: to-block-mta.mlir.)
// A module mixing them with a fusable op still gets that op's kernel.
// RUN: attn-opt %s --attn-to-block -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @path_rope
// CHECK-NEXT: attn.attention %{{.*}} rope({{.*}} path(
// CHECK-LABEL: func.func @path_mta
// CHECK-NEXT: attn.attention %{{.*}} path({{.*}} head_mix_post(
// CHECK: func.func private @fused_attention_kernel
// CHECK-SAME: attributes {attn_block.kernel
// CHECK-LABEL: func.func @fused
// CHECK-NOT: attn.attention
// CHECK: attn_block.launch @fused_attention_kernel
// CHECK-NOT: attn.attention

func.func @path_rope(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %w: tensor<1x2x8x16xf32>, %beta: tensor<1x2x8xf32>) -> tensor<1x2x8x16xf32> {
  // expected-remark @below {{not fused yet (PaTH with RoPE): runs through the reference lowering}}
  %o = attn.attention %q, %k, %v rope(1.000000e+04) path(%w, %beta) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

func.func @path_mta(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %w: tensor<1x2x8x16xf32>, %beta: tensor<1x2x8xf32>, %m: tensor<2x2xf32>) -> tensor<1x2x8x16xf32> {
  // expected-remark @below {{not fused yet (PaTH): runs through the reference lowering}}
  %o = attn.attention %q, %k, %v path(%w, %beta) head_mix_post(%m) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<2x2xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

func.func @fused(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
