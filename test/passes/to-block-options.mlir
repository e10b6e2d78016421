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
// CHECK: %[[ROW0:.*]] = arith.muli %{{.*}}, %c32{{(_[0-9]+)?}} : index
// CHECK: attn_block.local_alloc : !attn_block.smem<32x64xf32, {{.*}}>
// CHECK: attn_block.local_alloc : !attn_block.smem<2x16x64xf32, {{.*}}>
// CHECK: attn_block.async_copy %{{.*}}[%{{.*}}, %{{.*}}, %[[ROW0]], %{{.*}}]
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c16{{(_[0-9]+)?}} iter_args({{.*}}) -> (tensor<32xf32, {{.*}}>, tensor<32x8xf32, {{.*}}>, tensor<32x64xf32, {{.*}}>, index) {
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %{{.*}} transpose_b : tensor<32x64xf32, {{.*}}>, tensor<16x64xf32, {{.*}}> -> tensor<32x16xf32, {{.*}}>
// CHECK: attn_block.reduce max %{{.*}} axis 1 : tensor<32x16xf32, {{.*}}> -> tensor<32xf32, {{.*}}>
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x16xf32, {{.*}}>, tensor<16x64xf32, {{.*}}> -> tensor<32x64xf32, {{.*}}>
// CHECK: attn_block.reduce sum %{{.*}} axis 1 : tensor<32x8xf32, {{.*}}> -> tensor<32xf32, {{.*}}>
// CHECK: attn_block.store %{{.*}} : tensor<32x64xf32, {{.*}}> -> memref<?x?x?x64xf32>
// CHECK-LABEL: func.func @main
// CHECK: attn_block.launch @main_rope_k
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %[[T:[^)]*]]) : memref<?x?x?x64xf32>
// CHECK-NEXT: %[[GBM:.*]] = arith.constant 32 : index
// CHECK-NEXT: %[[GX:.*]] = arith.ceildivui %[[T]], %[[GBM]] : index
// CHECK: attn_block.launch @main_attention_kernel grid(%[[GX]], %{{.*}})

// FoX: G' (f64 on the CPU) read at the 32 query rows and the 16 keys of
// each step, the bias added per score in f64 and rounded to f32.
// FOX-LABEL: func.func private @main_attention_kernel
// FOX: attn_block.load %{{.*}} dims [2] padding 0.000000e+00 : memref<?x?x?xf64> -> tensor<32xf64, {{.*}}>
// FOX: scf.for {{.*}} step %{{.*}} iter_args(%{{.*}}) -> (tensor<32xf32, {{.*}}>, tensor<32x8xf32, {{.*}}>, tensor<32x64xf32, {{.*}}>, index) {
// FOX: attn_block.load %{{.*}} dims [2] padding 0.000000e+00 : memref<?x?x?xf64> -> tensor<16xf64, {{.*}}>
// FOX: attn_block.broadcast %{{.*}} axis 0 : tensor<16xf64, {{.*}}> -> tensor<32x16xf64, {{.*}}>
// FOX-NEXT: attn_block.broadcast %{{.*}} axis 1 : tensor<32xf64, {{.*}}> -> tensor<32x16xf64, {{.*}}>

// DEFAULT: arith.muli %{{.*}}, %c64{{(_[0-9]+)?}} : index
// DEFAULT: attn_block.dot %{{.*}} transpose_b : tensor<64x64xf32, {{.*}}>, tensor<64x64xf32, {{.*}}> -> tensor<64x64xf32, {{.*}}>
// DEFAULT: arith.ceildivui %{{.*}}, %{{.*}} : index
