// Target and kernel options of the GPU pipeline and pass are checked before
// anything is built: each bad value is an error naming it and a non-zero
// exit (sm_75 used to abort in instruction selection, an empty chip to
// segfault in the NVVM target, format=ptx to exit 0 after a message).
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="chip=sm_75 format=isa" 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="chip=sm_70" 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="chip=sm_60" 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="chip=" 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="chip=sm_999" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="chip=SM_90" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="chip=compute_90" 2>&1 | FileCheck %s --check-prefix=VIRTUAL
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="format=ptx" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="format=" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="warps=3" 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="block-n=0" 2>&1 | FileCheck %s --check-prefix=BLOCKN
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="block-n=32" 2>&1 | FileCheck %s --check-prefix=BLOCKN32
// RUN: not attn-opt %attn_examples/path_bf16.mlir --attn-to-gpu="chip=sm_90 path-chunk-wgmma=true" 2>&1 | FileCheck %s --check-prefix=CHUNKWGMMA
// RUN: not attn-opt %attn_examples/path_bf16.mlir --attn-to-gpu="chip=sm_80 path-attention-wgmma=true" 2>&1 | FileCheck %s --check-prefix=ATTNWGMMA
// The direct builder's options are gone (07981fc was the last with them).
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="lowering=direct" 2>&1 | FileCheck %s --check-prefix=GONE
// RUN: not attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="overlap=true" 2>&1 | FileCheck %s --check-prefix=GONE
// The CPU block lowering bounds its tile sizes.
// RUN: not attn-opt %s --attn-to-block="block-m=0" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not attn-opt %s --attn-to-block="block-n=1000000" 2>&1 | FileCheck %s --check-prefix=BLOCK

// OLD: GPU chip sm_{{[0-9]+}} is not supported: the kernels need sm_80 or newer
// EMPTY: GPU option chip is empty; expected an NVIDIA architecture sm_80 or newer
// UNKNOWN: unknown GPU chip '{{.*}}'; expected an NVIDIA architecture sm_80 or newer
// VIRTUAL: GPU option chip 'compute_90' is a virtual architecture; give the real one, sm_90
// FORMAT: GPU option format must be bin (cubin), isa (PTX) or none (NVVM dialect), got '{{(ptx)?}}'
// WARPS: GPU option warps must be 4 or 8, got 3
// BLOCKN: GPU option block-n must be 64 or 128, got 0
// BLOCKN32: GPU option block-n must be 64 or 128, got 32
// CHUNKWGMMA: GPU option path-chunk-wgmma needs a wgmma chip (sm_90a), got sm_90
// ATTNWGMMA: GPU option path-attention-wgmma needs a wgmma chip (sm_90a), got sm_80
// GONE: no such option
// BLOCK: attn-to-block: block-m and block-n must be in [1, 1024]

func.func @empty() {
  return
}
