// attn-to-block for the CPU on RoPE: the flash kernel's one form (the GPU
// form's, stripped by the CPU pipeline). Three prologue kernels come first:
// the table kernel computes cos/sin(p * theta^(-2i/R)) in f64 for every
// position a query or key takes ([P, R/2] f32 tables, queries' and keys'),
// the rotation kernels rotate q and k into new buffers, and the attention
// kernel reads the rotated buffers and computes no angle. The offsets'
// arithmetic is that of the GPU targets (rope-to-block-gpu.mlir).
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse --attn-to-block \
// RUN:   | FileCheck %s --implicit-check-not=attn.attention \
// RUN:       --implicit-check-not=attn.rope --implicit-check-not=attn_block.rope
// RUN: attn-opt %s --attn-to-block | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func private @main_attention_kernel
// CHECK-SAME: (%[[Q:[^:]*]]: memref<?x?x?x64xf32>, %[[K:[^:]*]]: memref<?x?x?x64xf32>, %[[V:[^:]*]]: memref<?x?x?x64xf32>, %[[O:[^:]*]]: memref<?x?x?x64xf32>)
// CHECK-NOT: math.{{(cos|sin|exp)}}
// Scores in base 2: scale * log2 e = 1/8 * 1.4427 folded into exp2's fma.
// CHECK: arith.constant 0.180336878 : f32
// CHECK: math.exp2
// CHECK-NOT: math.{{(cos|sin)}}
// CHECK: func.func private @main_rope_table
// CHECK: math.cos %{{.*}} : tensor<16x8xf64
// CHECK: math.sin %{{.*}} : tensor<16x8xf64
// CHECK: func.func private @main_rope_q
// CHECK-NOT: math.{{(cos|sin)}}
// CHECK: func.func private @main_rope_k
// CHECK-NOT: math.{{(cos|sin)}}
// The host: the tables' rows for max(S, T) positions, the rotations, one
// attention launch over grid (ceil(T / 64), B * Hq) on the rotated buffers.
// CHECK-LABEL: func.func @main(
// CHECK: %[[P:.*]] = arith.maxsi
// CHECK: attn_block.launch @main_rope_table
// CHECK: attn_block.launch @main_rope_q grid({{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[QR:[^)]*]])
// CHECK: attn_block.launch @main_rope_k grid({{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[KR:[^)]*]])
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK: attn_block.launch @main_attention_kernel grid(%{{.*}}, %{{.*}}) args(%[[QR]], %[[KR]], %{{.*}}, %[[OUT]])
// CHECK: bufferization.to_tensor %[[OUT]]

// rope_dim 16 of D = 32: [P, 8] tables, interleaved pairs (scalar code);
// queries at rope_q_offset 9 + i, keys at rope_offset 3 + j;
// -2 ln(5e5) / 16 = -1.6402954.
// OFF-LABEL: func.func private @q_offset_rope_table
// OFF-SAME: memref<?x8xf32>
// OFF-DAG: arith.constant 3 : index
// OFF-DAG: arith.constant 9 : index
// OFF: arith.constant -1.640295422175541 : f64
// OFF: math.cos %{{.*}} : f64
// OFF-LABEL: func.func @q_offset(
// OFF: attn_block.launch @q_offset_rope_table
// OFF: attn_block.launch @q_offset_attention_kernel
// Without rope_q_offset queries start at S + 3 - T; -2 ln(1e4) / 32 =
// -0.5756463.
// OFF-LABEL: func.func private @implicit_rope_table
// OFF-SAME: memref<?x16xf32>
// OFF: arith.constant 3 : index
// OFF: -0.57564627324851148
// OFF-LABEL: func.func @implicit(
// OFF: attn_block.launch @implicit_attention_kernel

func.func @q_offset(%q: tensor<1x4x?x32xf32>, %k: tensor<1x4x?x32xf32>, %v: tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32> {
  %o = attn.attention %q, %k, %v rope(5.000000e+05) rope_style interleaved rope_dim 16 rope_offset 3 rope_q_offset 9 : (tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32>
  return %o : tensor<1x4x?x32xf32>
}

func.func @implicit(%q: tensor<1x4x?x32xf32>, %k: tensor<1x4x?x32xf32>, %v: tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) rope_offset 3 : (tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32>
  return %o : tensor<1x4x?x32xf32>
}
