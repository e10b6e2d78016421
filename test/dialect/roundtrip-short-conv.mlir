// Round trip of attn.short_conv, with and without silu.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @short_conv_silu
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?x64xf32>, %[[K:.*]]: tensor<?x64x3xf32>)
// CHECK: attn.short_conv %[[X]], %[[K]] silu : tensor<?x?x?x64xf32>, tensor<?x64x3xf32>
// GENERIC-LABEL: sym_name = "short_conv_silu"
// GENERIC: "attn.short_conv"(%{{.*}}, %{{.*}}) <{silu}> : (tensor<?x?x?x64xf32>, tensor<?x64x3xf32>) -> tensor<?x?x?x64xf32>
func.func @short_conv_silu(%x: tensor<?x?x?x64xf32>, %k: tensor<?x64x3xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.short_conv %x, %k silu : tensor<?x?x?x64xf32>, tensor<?x64x3xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// CHECK-LABEL: func.func @short_conv_plain
// CHECK: attn.short_conv %{{.*}}, %{{.*}} : tensor<2x4x10x16xbf16>, tensor<4x16x4xf32>
// CHECK-NOT: silu
// GENERIC-LABEL: sym_name = "short_conv_plain"
// GENERIC: "attn.short_conv"(%{{.*}}, %{{.*}}) : (tensor<2x4x10x16xbf16>, tensor<4x16x4xf32>) -> tensor<2x4x10x16xbf16>
func.func @short_conv_plain(%x: tensor<2x4x10x16xbf16>, %k: tensor<4x16x4xf32>) -> tensor<2x4x10x16xbf16> {
  %0 = attn.short_conv %x, %k : tensor<2x4x10x16xbf16>, tensor<4x16x4xf32>
  return %0 : tensor<2x4x10x16xbf16>
}

// CHECK-LABEL: func.func @short_conv_f16
// CHECK: attn.short_conv %{{.*}}, %{{.*}} silu : tensor<1x?x?x?xf16>, tensor<?x?x1xf32>
func.func @short_conv_f16(%x: tensor<1x?x?x?xf16>, %k: tensor<?x?x1xf32>) -> tensor<1x?x?x?xf16> {
  %0 = attn.short_conv %x, %k silu : tensor<1x?x?x?xf16>, tensor<?x?x1xf32>
  return %0 : tensor<1x?x?x?xf16>
}
