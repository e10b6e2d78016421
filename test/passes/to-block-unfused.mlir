// attn-to-block leaves MTA attention (and the MTA output norm, and PaTH
// with RoPE) as attn.attention, with a remark: the CPU pipeline runs them
// through the reference lowering. No kernel or launch is created for them.
// (PaTH without RoPE is fused: to-block-path.mlir.)
// RUN: attn-opt %S/../../examples/mta.mlir --attn-fuse --attn-to-block 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MTA --implicit-check-not=attn_block.
// RUN: attn-opt %S/../../examples/mta_pre.mlir --attn-fuse --attn-to-block 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MTA --implicit-check-not=attn_block.
// The same remarks, located at the op, on this file; the fusable op next to
// them still gets its kernel.
// RUN: attn-opt %s --attn-to-block -verify-diagnostics | FileCheck %s

// MTA: remark: not fused yet (MTA convolutions/head mixing): runs through the reference lowering
// MTA: func.func @main(
// MTA-NEXT: attn.attention %{{.*}} kq_conv_pre(
// MTA-NEXT: return

// CHECK-LABEL: func.func @path_rope
// CHECK-NEXT: attn.attention %{{.*}} path(
// CHECK-LABEL: func.func @norm_only
// CHECK-NEXT: attn.attention %{{.*}} norm(
// CHECK-LABEL: func.func @head_mix_post
// CHECK-NEXT: attn.attention %{{.*}} head_mix_post(
// CHECK: func.func private @fused_attention_kernel
// CHECK-SAME: attributes {attn_block.kernel}
// CHECK-LABEL: func.func @fused
// CHECK-NOT: attn.attention
// CHECK: attn_block.launch @fused_attention_kernel
// CHECK-NOT: attn.attention

func.func @path_rope(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %w: tensor<1x2x8x16xf32>, %beta: tensor<1x2x8xf32>) -> tensor<1x2x8x16xf32> {
  // expected-remark @below {{not fused yet (PaTH with RoPE): runs through the reference lowering}}
  %o = attn.attention %q, %k, %v rope(1.000000e+04) path(%w, %beta) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

func.func @norm_only(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %gamma: tensor<16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-remark @below {{not fused yet (the MTA output norm): runs through the reference lowering}}
  %o = attn.attention %q, %k, %v norm(%gamma) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

func.func @head_mix_post(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %w: tensor<2x2xf32>) -> tensor<1x2x8x16xf32> {
  // expected-remark @below {{not fused yet (MTA convolutions/head mixing): runs through the reference lowering}}
  %o = attn.attention %q, %k, %v head_mix_post(%w) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<2x2xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

func.func @fused(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
