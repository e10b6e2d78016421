// PaTH with its w preprocessing (short conv + SiLU, then L2 norm) through
// the full --attn-reference-to-llvm pipeline.
// RUN: attn-opt %s --attn-reference-to-llvm \
// RUN:   | FileCheck %s --implicit-check-not=attn. --implicit-check-not=scf. \
// RUN:       --implicit-check-not=memref. --implicit-check-not=bufferization. \
// RUN:       --implicit-check-not=arith. --implicit-check-not=math. \
// RUN:       --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %s --attn-reference-to-llvm \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.]+' | not grep -vE 'llvm\.'

// CHECK-LABEL: llvm.func @path_preprocessed
// CHECK: llvm.call @malloc
// L2 norm.
// CHECK: llvm.intr.sqrt
// CHECK: llvm.intr.exp
// CHECK: llvm.call @free
// CHECK: llvm.return
func.func @path_preprocessed(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>,
    %wraw: tensor<?x?x?x64xf32>, %conv: tensor<?x64x3xf32>, %beta: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
  %wc = attn.short_conv %wraw, %conv silu : tensor<?x?x?x64xf32>, tensor<?x64x3xf32>
  %w = attn.l2norm %wc : tensor<?x?x?x64xf32>
  %0 = attn.attention %q, %k, %v path(%w, %beta)
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}
