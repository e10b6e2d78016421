// attn_block.dot's b_band: b[k, n] is zero unless lo <= k - n <= hi (a
// banded operand such as MTA's Toeplitz matrices); it round-trips as an
// attribute and must be [lo, hi] with lo <= hi.
// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @band
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %{{.*}} {b_band = array<i64: 3, 13>} : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
func.func @band(%a: tensor<16x32xf32>, %b: tensor<32x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %r = attn_block.dot %a, %b, %c {b_band = array<i64: 3, 13>} : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

func.func @band_reversed(%a: tensor<16x32xf32>, %b: tensor<32x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'attn_block.dot' op b_band must be [lo, hi] with lo <= hi}}
  %r = attn_block.dot %a, %b, %c {b_band = array<i64: 13, 3>} : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

func.func @band_size(%a: tensor<16x32xf32>, %b: tensor<32x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'attn_block.dot' op b_band must be [lo, hi] with lo <= hi}}
  %r = attn_block.dot %a, %b, %c {b_band = array<i64: 3>} : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
