// attn-to-block leaves PaTH attention (also with MTA pieces) as
// attn.attention, with a remark: the CPU pipeline runs it through the
// reference lowering. No kernel or launch is created for it. (MTA and the
// MTA output norm are fused: to-block-mta.mlir.)
// RUN: attn-opt %S/../../examples/path.mlir --attn-fuse --attn-to-block 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PATH --implicit-check-not=attn_block.
// RUN: attn-opt %S/../../examples/path_fox.mlir --attn-fuse --attn-to-block 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PATH --implicit-check-not=attn_block.
// The same remarks, located at the op, on this file; the fusable op next to
// them still gets its kernel.
// RUN: attn-opt %s --attn-to-block -verify-diagnostics | FileCheck %s

// PATH: remark: not fused yet (PaTH): runs through the reference lowering
// PATH: func.func @main(
// PATH-NEXT: attn.attention %{{.*}} path(
// PATH-NEXT: return

// CHECK-LABEL: func.func @path
// CHECK-NEXT: attn.attention %{{.*}} path(
// CHECK-LABEL: func.func @path_mta
// CHECK-NEXT: attn.attention %{{.*}} path({{.*}} head_mix_post(
// CHECK: func.func private @fused_attention_kernel
// CHECK-SAME: attributes {attn_block.kernel}
// CHECK-LABEL: func.func @fused
// CHECK-NOT: attn.attention
// CHECK: attn_block.launch @fused_attention_kernel
// CHECK-NOT: attn.attention

func.func @path(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %w: tensor<1x2x8x16xf32>, %beta: tensor<1x2x8xf32>) -> tensor<1x2x8x16xf32> {
  // expected-remark @below {{not fused yet (PaTH): runs through the reference lowering}}
  %o = attn.attention %q, %k, %v path(%w, %beta) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>) -> tensor<1x2x8x16xf32>
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
