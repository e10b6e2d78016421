// attn-lower-reference on attn.attention: the op is expanded into its chain
// first (including the rope positions tensor.generate for dynamic T/S) and
// every piece is lowered; no attn op is left, every result buffer comes
// from memref.alloc and is wrapped by bufferization.to_tensor.
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// RoPE with dynamic shapes: the positions tensor stays a tensor.generate
// that the rope lowering reads through to_buffer.
// CHECK-LABEL: func.func @attention_rope_dynamic
// CHECK-NOT: attn.
// CHECK: %[[POS:.*]] = tensor.generate
// CHECK: } : tensor<?xi64>
// CHECK: bufferization.to_buffer %[[POS]] read_only : tensor<?xi64> to memref<?xi64>
// q rope, k rope, scores, softmax, weighted sum: five result buffers. The
// to_tensor/to_buffer pairs between the lowered ops fold away, so each op
// reads the previous buffer directly.
// CHECK: %[[QR:.*]] = memref.alloc({{.*}}) : memref<?x?x?x64xf32>
// CHECK: math.cos
// CHECK: %[[KR:.*]] = memref.alloc({{.*}}) : memref<?x?x?x64xf32>
// CHECK: math.sin
// CHECK: %[[S:.*]] = memref.alloc({{.*}}) : memref<?x?x?x?xf32>
// CHECK: memref.load %[[KR]]
// CHECK: memref.load %[[QR]]
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: %[[P:.*]] = memref.alloc({{.*}}) : memref<?x?x?x?xf32>
// CHECK: memref.load %[[S]]
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[P]]
// CHECK: %[[O:.*]] = memref.alloc({{.*}}) : memref<?x?x?x64xf32>
// CHECK: memref.load %[[P]]
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK: %[[OT:.*]] = bufferization.to_tensor %[[O]] restrict writable
// CHECK: return %[[OT]]
// CHECK-NOT: attn.
func.func @attention_rope_dynamic(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.attention %q, %k, %v rope(1.0e+04)
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// Everything at once (static, bf16, GQA): nothing of attn survives.
// CHECK-LABEL: func.func @attention_everything
// CHECK-NOT: attn.
// CHECK-NOT: tensor.generate
// CHECK: scf.for
// CHECK: math.cos
// CHECK: scf.if
// CHECK: math.exp
// CHECK: math.sqrt
// CHECK: bufferization.to_tensor %{{.*}} restrict writable : memref<2x8x16x32xbf16> to tensor<2x8x16x32xbf16>
// CHECK-NEXT: return
// CHECK-NOT: attn.
func.func @attention_everything(%q: tensor<2x8x16x64xbf16>, %k: tensor<2x4x16x64xbf16>, %v: tensor<2x4x16x32xbf16>,
    %w: tensor<2x4x16x64xf32>, %beta: tensor<2x4x16xf32>, %g: tensor<2x8x16xf32>,
    %kp: tensor<8x6x11xf32>, %hp: tensor<8x8xf32>, %kpo: tensor<8x6x11xf32>, %hpo: tensor<8x4xf32>,
    %gamma: tensor<32xf32>, %gw: tensor<32xf32>, %gb: tensor<1xf32>) -> tensor<2x8x16x32xbf16> {
  %o = attn.attention %q, %k, %v rope(5.0e+05) rope_style interleaved rope_dim 32 rope_offset 7
      path(%w, %beta) gate(%g) scaled kq_conv_pre(%kp) head_mix_pre(%hp) kq_conv_post(%kpo) head_mix_post(%hpo)
      norm(%gamma) norm_gate(%gw, %gb) norm_eps 1.0e-6 scale 0.125
      : (tensor<2x8x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>, tensor<2x4x16x64xf32>, tensor<2x4x16xf32>, tensor<2x8x16xf32>, tensor<8x6x11xf32>, tensor<8x8xf32>, tensor<8x6x11xf32>, tensor<8x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<2x8x16x32xbf16>
  return %o : tensor<2x8x16x32xbf16>
}
