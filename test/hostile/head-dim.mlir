// The fused CPU kernel takes head dims up to 1024; wider attention runs
// through the reference lowering with a remark (the fused kernel used to
// abort in x86 instruction selection at D = 65536 and hang at D = 10^6).
// RUN: attn-opt %s -split-input-file --attn-fuse --attn-to-block -verify-diagnostics | FileCheck %s
// RUN: sed 's/x64x/x65536x/g' %attn_examples/fox.mlir > %t.65536.mlir
// RUN: attn-run %t.65536.mlir --device=cpu --random=1x1x3 --check 2>&1 | FileCheck %s --check-prefix=RUN65536
// RUN: sed 's/x64x/x1000000x/g' %attn_examples/fox.mlir > %t.1e6.mlir
// RUN: attn-run %t.1e6.mlir --device=cpu --random=1x1x2 --check 2>&1 | FileCheck %s --check-prefix=RUN1E6

// RUN65536: remark: {{.*}}not fused yet (head dim 65536 > 1024): runs through the reference lowering
// RUN65536: result tensor<1x1x3x65536xf32>, max relative error vs fp64 oracle {{.*}} (bound 1e-05)
// RUN1E6: remark: {{.*}}not fused yet (head dim 1000000 > 1024)
// RUN1E6: result tensor<1x1x2x1000000xf32>, max relative error vs fp64 oracle

// CHECK-LABEL: func.func @d1024
// CHECK: attn_block.launch
func.func @d1024(%q: tensor<?x?x?x1024xf32>, %k: tensor<?x?x?x1024xf32>, %v: tensor<?x?x?x1024xf32>) -> tensor<?x?x?x1024xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<?x?x?x1024xf32>, tensor<?x?x?x1024xf32>, tensor<?x?x?x1024xf32>) -> tensor<?x?x?x1024xf32>
  return %0 : tensor<?x?x?x1024xf32>
}

// -----

// CHECK-LABEL: func.func @d1025
// CHECK: attn.attention
// CHECK-NOT: attn_block.launch
func.func @d1025(%q: tensor<?x?x?x1025xf32>, %k: tensor<?x?x?x1025xf32>, %v: tensor<?x?x?x1025xf32>) -> tensor<?x?x?x1025xf32> {
  // expected-remark @+1 {{not fused yet (head dim 1025 > 1024): runs through the reference lowering}}
  %0 = attn.attention %q, %k, %v : (tensor<?x?x?x1025xf32>, tensor<?x?x?x1025xf32>, tensor<?x?x?x1025xf32>) -> tensor<?x?x?x1025xf32>
  return %0 : tensor<?x?x?x1025xf32>
}

// -----

// Dv counts too: D = 64 with Dv = 2048.
// CHECK-LABEL: func.func @dv2048
// CHECK-NOT: attn_block.launch
func.func @dv2048(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x2048xf32>) -> tensor<?x?x?x2048xf32> {
  // expected-remark @+1 {{not fused yet (head dim 2048 > 1024)}}
  %0 = attn.attention %q, %k, %v : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x2048xf32>) -> tensor<?x?x?x2048xf32>
  return %0 : tensor<?x?x?x2048xf32>
}
