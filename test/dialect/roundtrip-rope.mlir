// Round trip of attn.rope: the custom form is printed, re-parsed, and also
// goes through the generic form and back, giving the same custom form.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Default attributes (style half, theta 1e4, offset 0, rotary_dim absent)
// are elided when printed.
// CHECK-LABEL: func.func @rope_defaults
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x?x64xf32>)
// CHECK: %{{.*}} = attn.rope %[[Q]] : tensor<?x?x?x64xf32>
// GENERIC-LABEL: sym_name = "rope_defaults"
// GENERIC: "attn.rope"(%{{.*}}) <{offset = 0 : i64, style = 0 : i32, theta = 1.000000e+04 : f64}> : (tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
func.func @rope_defaults(%q: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.rope %q : tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// An explicit default theta is elided too.
// CHECK-LABEL: func.func @rope_default_theta
// CHECK: attn.rope %{{.*}} : tensor<1x2x3x8xf32>
// CHECK-NOT: theta
func.func @rope_default_theta(%q: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %0 = attn.rope %q theta 1.000000e+04 : tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// Every optional piece.
// CHECK-LABEL: func.func @rope_all
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x?x64xbf16>, %[[P:.*]]: tensor<?xi64>)
// CHECK: attn.rope %[[Q]] positions(%[[P]]) style interleaved theta 5.000000e+05 rotary_dim 32 offset 3 : tensor<?x?x?x64xbf16>, tensor<?xi64>
// GENERIC-LABEL: sym_name = "rope_all"
// GENERIC: "attn.rope"(%{{.*}}, %{{.*}}) <{offset = 3 : i64, rotary_dim = 32 : i64, style = 1 : i32, theta = 5.000000e+05 : f64}> : (tensor<?x?x?x64xbf16>, tensor<?xi64>) -> tensor<?x?x?x64xbf16>
func.func @rope_all(%q: tensor<?x?x?x64xbf16>, %pos: tensor<?xi64>) -> tensor<?x?x?x64xbf16> {
  %0 = attn.rope %q positions(%pos) style interleaved theta 5.0e+05 rotary_dim 32 offset 3
      : tensor<?x?x?x64xbf16>, tensor<?xi64>
  return %0 : tensor<?x?x?x64xbf16>
}

// style half written out is the default and is elided.
// CHECK-LABEL: func.func @rope_style_half
// CHECK: attn.rope %{{.*}} theta 5.000000e+00 rotary_dim 2 : tensor<2x4x16x8xf16>
func.func @rope_style_half(%q: tensor<2x4x16x8xf16>) -> tensor<2x4x16x8xf16> {
  %0 = attn.rope %q style half theta 5.0 rotary_dim 2 : tensor<2x4x16x8xf16>
  return %0 : tensor<2x4x16x8xf16>
}

// Static positions, f16, rotary_dim == D, negative offset.
// CHECK-LABEL: func.func @rope_static_positions
// CHECK: attn.rope %{{.*}} positions(%{{.*}}) rotary_dim 16 offset -4 : tensor<1x2x5x16xf16>, tensor<5xi64>
func.func @rope_static_positions(%q: tensor<1x2x5x16xf16>, %pos: tensor<5xi64>) -> tensor<1x2x5x16xf16> {
  %0 = attn.rope %q positions(%pos) rotary_dim 16 offset -4 : tensor<1x2x5x16xf16>, tensor<5xi64>
  return %0 : tensor<1x2x5x16xf16>
}

// Dynamic T with static positions length and vice versa are both fine.
// CHECK-LABEL: func.func @rope_mixed_static
// CHECK: attn.rope %{{.*}} positions(%{{.*}}) : tensor<1x2x?x16xf32>, tensor<7xi64>
// CHECK: attn.rope %{{.*}} positions(%{{.*}}) : tensor<1x2x7x16xf32>, tensor<?xi64>
func.func @rope_mixed_static(%a: tensor<1x2x?x16xf32>, %p: tensor<7xi64>,
                             %b: tensor<1x2x7x16xf32>, %dp: tensor<?xi64>)
    -> (tensor<1x2x?x16xf32>, tensor<1x2x7x16xf32>) {
  %0 = attn.rope %a positions(%p) : tensor<1x2x?x16xf32>, tensor<7xi64>
  %1 = attn.rope %b positions(%dp) : tensor<1x2x7x16xf32>, tensor<?xi64>
  return %0, %1 : tensor<1x2x?x16xf32>, tensor<1x2x7x16xf32>
}
