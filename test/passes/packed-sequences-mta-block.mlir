// attn-to-block with packed sequences (cu_seqlens) and MTA's pieces, in
// the CPU form and the GPU form.
// RUN: attn-opt %s --attn-to-block --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-to-block=target=sm_90 --verify-diagnostics | FileCheck %s --check-prefix=GPU

// MTA: the kernels take the offsets; a tile whose halo rows cross a
// sequence start convolves tap by tap (one stencil per query tap, rows
// whose tap reaches into an earlier sequence selected away), the others at
// once; the RoPE kernels rotate q and k first (positions restart).
// CHECK-LABEL: func.func private @mta_mta_lse_kernel(
// CHECK-SAME: memref<?xi32>
// CHECK: scf.if
// CHECK: scf.for
// CHECK: attn_block.stencil
// CHECK: } else {
// CHECK: attn_block.stencil
// CHECK-LABEL: func.func @mta(
// CHECK: attn_block.launch @mta_rope_q
// GPU-LABEL: func.func private @mta_mta_lse_kernel(
// GPU-SAME: memref<?xi32>
// GPU-LABEL: func.func @mta(
func.func @mta(%q: tensor<1x2x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>,
               %tp: tensor<2x3x5xf32>, %tq: tensor<2x2x3xf32>, %cu: tensor<?xi32>) -> tensor<1x2x?x64xbf16> {
  %o = attn.attention %q, %k, %v rope(1.0e+04) kq_conv_pre(%tp) kq_conv_post(%tq) cu_seqlens(%cu)
      : (tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<2x3x5xf32>,
         tensor<2x2x3xf32>, tensor<?xi32>) -> tensor<1x2x?x64xbf16>
  return %o : tensor<1x2x?x64xbf16>
}
