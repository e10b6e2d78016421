// attn-to-block's tile sizes: block-m (query rows per program instance,
// default 64) and block-n (keys per step of the walk, default 64) set every
// tile shape, the loop steps and the launch grid (ceil(T / block-m)).
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse \
// RUN:   --attn-to-block="block-m=32 block-n=16" \
// RUN:   | FileCheck %s --implicit-check-not='tensor<64x' --implicit-check-not='tensor<64xf'
// RUN: attn-opt %S/../../examples/fox.mlir --attn-fuse \
// RUN:   --attn-to-block="block-m=32 block-n=16" \
// RUN:   | FileCheck %s --check-prefix=FOX --implicit-check-not='tensor<64x' --implicit-check-not='tensor<64xf'
// The defaults are 64 and 64.
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse --attn-to-block \
// RUN:   | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse \
// RUN:   --attn-to-block="block-m=64 block-n=64" \
// RUN:   | FileCheck %s --check-prefix=DEFAULT

// CHECK-LABEL: func.func private @main_attention_kernel
// CHECK: %[[BM:.*]] = arith.constant 32 : index
// CHECK-NEXT: %[[ROW0:.*]] = arith.muli %{{.*}}, %[[BM]] : index
// CHECK: attn_block.load %{{.*}}[%{{.*}}, %{{.*}}, %[[ROW0]], %{{.*}}] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<32x64xf32>
// CHECK: attn_block.rope %{{.*}} : tensor<32x64xf32>
// CHECK: attn_block.iota %{{.*}} : tensor<32xi64>
// CHECK: %[[BN:.*]] = arith.constant 16 : index
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[BN]] iter_args({{.*}}) -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>) {
// CHECK-NEXT: attn_block.load %{{.*}}[%{{.*}}, %{{.*}}, %[[J]], %{{.*}}] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<16x64xf32>
// CHECK: attn_block.rope %{{.*}} : tensor<16x64xf32>
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %{{.*}} transpose_b : tensor<32x64xf32>, tensor<16x64xf32> -> tensor<32x16xf32>
// CHECK: attn_block.iota %[[J]] : tensor<16xi64>
// CHECK-NEXT: attn_block.broadcast %{{.*}} axis 0 : tensor<16xi64> -> tensor<32x16xi64>
// CHECK-NEXT: attn_block.broadcast %{{.*}} axis 1 : tensor<32xi64> -> tensor<32x16xi64>
// CHECK: attn_block.reduce max %{{.*}} axis 1 : tensor<32x16xf32> -> tensor<32xf32>
// CHECK: attn_block.reduce sum %{{.*}} axis 1 : tensor<32x16xf32> -> tensor<32xf32>
// CHECK: attn_block.load %{{.*}} -> tensor<16x64xf32>
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<16x64xf32> -> tensor<32x64xf32>
// CHECK: attn_block.store %{{.*}} : tensor<32x64xf32> -> memref<?x?x?x64xf32>
// CHECK-LABEL: func.func @main
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %[[T:[^)]*]]) : memref<?x?x?x64xf32>
// CHECK-NEXT: %[[GBM:.*]] = arith.constant 32 : index
// CHECK-NEXT: %[[GX:.*]] = arith.ceildivui %[[T]], %[[GBM]] : index
// CHECK: attn_block.launch @main_attention_kernel grid(%[[GX]], %{{.*}})

// FoX: the g tiles follow the shapes too (query rows 32, key steps 16, and
// the prefix loops step by 16).
// FOX-LABEL: func.func private @main_attention_kernel
// FOX: attn_block.load %{{.*}} dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<32xf32>
// FOX: %[[BN:.*]] = arith.constant 16 : index
// FOX-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[BN]] iter_args(%{{.*}}) -> (f64) {
// FOX-NEXT: attn_block.load %{{.*}} dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<16xf32>
// FOX: attn_block.broadcast %{{.*}} axis 0 : tensor<16xf64> -> tensor<1x16xf64>
// FOX: attn_block.scan %{{.*}} : tensor<32xf64>
// FOX: scf.for {{.*}} -> (tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>, f64) {
// FOX: attn_block.scan %{{.*}} : tensor<16xf64>
// FOX: attn_block.broadcast %{{.*}} axis 0 : tensor<16xf64> -> tensor<32x16xf64>
// FOX-NEXT: attn_block.broadcast %{{.*}} axis 1 : tensor<32xf64> -> tensor<32x16xf64>

// DEFAULT: %[[BM:.*]] = arith.constant 64 : index
// DEFAULT-NEXT: arith.muli %{{.*}}, %[[BM]] : index
// DEFAULT: attn_block.load %{{.*}} -> tensor<64x64xf32>
// DEFAULT: attn_block.dot %{{.*}} transpose_b : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
// DEFAULT: arith.ceildivui %{{.*}}, %{{.*}} : index
