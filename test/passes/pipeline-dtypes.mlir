// --attn-reference-to-llvm on f16 and bf16 programs (static and dynamic):
// bf16 <-> f32 conversions are expanded to integer bit operations (no
// llvm.fpext/fptrunc on bf16); f16 uses plain fpext/fptrunc.
// RUN: attn-opt %s --attn-reference-to-llvm \
// RUN:   | FileCheck %s --implicit-check-not=attn. --implicit-check-not=scf. \
// RUN:       --implicit-check-not=memref. --implicit-check-not=bufferization. \
// RUN:       --implicit-check-not=arith. --implicit-check-not=math. \
// RUN:       --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %s --attn-reference-to-llvm \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.]+' | not grep -vE 'llvm\.'
// RUN: attn-opt %s --attn-reference-to-llvm | FileCheck %s --check-prefix=NOBF16EXT

// NOBF16EXT-NOT: llvm.fpext {{.*}} : bf16
// NOBF16EXT-NOT: llvm.fptrunc {{.*}} to bf16

// CHECK-LABEL: llvm.func @attention_bf16
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> bf16
// CHECK: llvm.bitcast %{{.*}} : bf16 to i16
// CHECK: llvm.bitcast %{{.*}} : i16 to bf16
// CHECK: llvm.return
func.func @attention_bf16(%q: tensor<1x4x8x32xbf16>, %k: tensor<1x2x8x32xbf16>, %v: tensor<1x2x8x32xbf16>) -> tensor<1x4x8x32xbf16> {
  %0 = attn.attention %q, %k, %v rope(1.0e+04) mask sliding_window window 4
      : (tensor<1x4x8x32xbf16>, tensor<1x2x8x32xbf16>, tensor<1x2x8x32xbf16>) -> tensor<1x4x8x32xbf16>
  return %0 : tensor<1x4x8x32xbf16>
}

// CHECK-LABEL: llvm.func @attention_f16_dynamic
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK: llvm.fptrunc %{{.*}} : f32 to f16
// CHECK: llvm.return
func.func @attention_f16_dynamic(%q: tensor<?x?x?x16xf16>, %k: tensor<?x?x?x16xf16>, %v: tensor<?x?x?x16xf16>,
    %gamma: tensor<16xf32>) -> tensor<?x?x?x16xf16> {
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_dim 8 norm(%gamma) mask none
      : (tensor<?x?x?x16xf16>, tensor<?x?x?x16xf16>, tensor<?x?x?x16xf16>, tensor<16xf32>) -> tensor<?x?x?x16xf16>
  return %0 : tensor<?x?x?x16xf16>
}
