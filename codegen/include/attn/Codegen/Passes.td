//===- Passes.td - attn's backend passes -------------------*- tablegen -*-===//
//
// The passes codegen/ defines (the CPU and GPU backends of the block
// program), declared beside them so that the dependency points one way:
// passes/ (the attn and block-program passes, the pipelines) use codegen/,
// codegen/ uses only the dialects.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_PASSES_TD
#define ATTN_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnBlockToCPU : Pass<"attn-block-to-cpu", "ModuleOp"> {
  let summary = "CPU backend of the block program: tiles to vector, linalg "
                "and tensor ops";
  let description = [{
    Kernels take their program ids as two trailing index arguments; each
    `attn_block.launch` becomes an `scf.parallel` over the grid calling the
    kernel (the CPU pipeline spreads it over OpenMP threads). Dots and MTA
    stencil rows become explicit vector code in register-sized pieces of at
    most 64 lanes (codegen/cpu/RegisterLoops.h); f32 `math.exp2` in kernels
    a polynomial (codegen/cpu/Exp2ToCPU.cpp); reductions and broadcasts
    linalg ops; masked loads and stores, scan, iota and rope
    `tensor.generate` / scf loops; extract_row / insert_row tensor slices.
    The result bufferizes with one-shot-bufferize.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::func::FuncDialect", "::mlir::vector::VectorDialect"
  ];
}

def AttnBlockStripGpu : Pass<"attn-block-strip-gpu", "ModuleOp"> {
  let summary = "The sequential (CPU) meaning of a GPU-form block program";
  let description = [{
    Turns a block program in GPU form into the form `attn-block-to-cpu`
    lowers: attn_block layout encodings are dropped from every tile type
    (function signatures, loop-carried values, every op) and
    `attn_block.num_warps` from kernels; `convert_layout` becomes its
    operand; a shared buffer (`local_alloc`) becomes a `memref.alloc` of its
    shape, `local_index` a `memref.subview` of the stage, `local_load` /
    `local_store` in-bounds `attn_block.load` / `store`; `async_copy`
    becomes the `attn_block.load` it copies and a store into the buffer,
    complete when issued, so async tokens are the constant `true`, and
    `async_commit_group`, `async_wait` and `barrier` vanish. This is the
    meaning of a race-free kernel. A kernel in CPU form passes through
    unchanged;
    `attn-to-cpu` runs this pass before `attn-block-to-cpu`.
  }];
  let dependentDialects = [
    "::mlir::attn_block::AttnBlockDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def AttnCPUFuseElementwise : Pass<"attn-cpu-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg ops, never into a reduction";
  let description = [{
    linalg-fuse-elementwise-ops, except that a producer is never fused into
    a consumer with reduction loops: the tile dot would recompute it once
    per reduction step (e.g. the softmax exp2 inside P*V).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AttnCPUSchedulePrograms : Pass<"attn-cpu-schedule-programs", "ModuleOp"> {
  let summary = "Hand program instances to OpenMP threads one at a time, heaviest first";
  let description = [{
    On every `omp.wsloop` whose loop nest calls a block kernel (a launch's
    grid after convert-scf-to-openmp): `schedule(dynamic)`, and the first
    grid dimension walked from the top. A causal program's key walk grows
    with its query tile, so the static schedule's contiguous halves are
    unequal (3:1 in work at 32 query tiles on two threads); dynamic
    hand-out with the longest programs first balances them, also when one
    thread is descheduled on a loaded machine. Loops that already have a
    schedule are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::omp::OpenMPDialect"];
}

def AttnBlockToGPU : Pass<"attn-block-to-gpu", "ModuleOp"> {
  let summary = "GPU backend of the block program: GPU-form kernels to "
                "gpu/nvgpu/nvvm";
  let description = [{
    Lowers each GPU-form kernel (a `func.func` with `attn_block.kernel` and
    `attn_block.num_warps` inside a `gpu.module`, as attn-to-block makes
    for a GPU target) op by op into a `gpu.func`: tiles in mma.sync
    layouts become each thread's registers (codegen/gpu/LayoutUtils.h),
    async_copy becomes cp.async into swizzled shared memory, local_load
    ldmatrix, dot m16n8k16 mma.sync, row reductions xor shuffles, stores
    row-guarded vector stores. An op or layout it cannot lower is an error
    naming both. docs/gpu-backend.md describes the path.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // ATTN_CODEGEN_PASSES_TD
