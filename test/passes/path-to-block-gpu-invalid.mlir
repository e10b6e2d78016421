// What the GPU form of PaTH does not cover is refused by name, never
// lowered in the CPU form instead.
//
// RUN: not attn-opt %s --split-input-file --attn-to-block="target=sm_90" 2>&1 | FileCheck %s
// RUN: not attn-opt %s --split-input-file --attn-to-block="target=sm_80 path-chunk=32" 2>&1 | FileCheck %s --check-prefix=CHUNK
// RUN: not attn-opt %s --split-input-file --attn-to-block="target=sm_90 path-transport=bf16" 2>&1 | FileCheck %s --check-prefix=TRANSPORT
// RUN: not attn-opt %s --split-input-file --attn-to-block="target=sm_90 path-chunk-wgmma=true" 2>&1 | FileCheck %s --check-prefix=CHUNKWGMMA

// TRANSPORT: error: attn-to-block: GPU option path-transport must be f16 or split, got 'bf16'

// CHUNKWGMMA: error: attn-to-block: path-chunk-wgmma needs target sm_90a (wgmma), got sm_90

// CHUNK: error: attn-to-block{target=sm_80}: the PaTH GPU form runs chunks of 64 positions (the rows of 4 warps' m16 tiles), got path-chunk 32

// CHECK: error: attn-to-block{target=sm_90}: the PaTH GPU form takes bf16 or f16 q, k, v (the m16n8k16 mma.sync operands)
func.func @f32(%q: tensor<1x1x64x64xf32>, %k: tensor<1x1x64x64xf32>, %v: tensor<1x1x64x64xf32>,
               %w: tensor<1x1x64x64xf32>, %beta: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf32> {
  %o = attn.attention %q, %k, %v path(%w, %beta)
      : (tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64xf32>)
      -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

// CHECK: error: attn-to-block{target=sm_90}: the PaTH GPU form needs static head dims that are multiples of 8 up to 128 (16-byte chunks; its tiles pad them to 64 or 128), got 36
func.func @d36(%q: tensor<1x1x64x36xbf16>, %k: tensor<1x1x64x36xbf16>, %v: tensor<1x1x64x36xbf16>,
               %w: tensor<1x1x64x36xf32>, %beta: tensor<1x1x64xf32>) -> tensor<1x1x64x36xbf16> {
  %o = attn.attention %q, %k, %v path(%w, %beta)
      : (tensor<1x1x64x36xbf16>, tensor<1x1x64x36xbf16>, tensor<1x1x64x36xbf16>, tensor<1x1x64x36xf32>, tensor<1x1x64xf32>)
      -> tensor<1x1x64x36xbf16>
  return %o : tensor<1x1x64x36xbf16>
}

// -----

// CHECK: error: attn-to-block{target=sm_90}: the PaTH GPU form needs static head dims that are multiples of 8 up to 128 (16-byte chunks; its tiles pad them to 64 or 128), got 192
func.func @d192(%q: tensor<1x1x64x192xbf16>, %k: tensor<1x1x64x192xbf16>, %v: tensor<1x1x64x192xbf16>,
               %w: tensor<1x1x64x192xf32>, %beta: tensor<1x1x64xf32>) -> tensor<1x1x64x192xbf16> {
  %o = attn.attention %q, %k, %v path(%w, %beta)
      : (tensor<1x1x64x192xbf16>, tensor<1x1x64x192xbf16>, tensor<1x1x64x192xbf16>, tensor<1x1x64x192xf32>, tensor<1x1x64xf32>)
      -> tensor<1x1x64x192xbf16>
  return %o : tensor<1x1x64x192xbf16>
}

