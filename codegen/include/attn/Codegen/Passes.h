//===- Passes.h - attn's backend passes -------------------------*- C++ -*-===//
//
// The CPU and GPU backends of the block program (Passes.td beside this
// file): attn-block-to-cpu, attn-block-strip-gpu, attn-cpu-fuse-elementwise,
// attn-cpu-schedule-programs, attn-block-to-gpu.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_PASSES_H
#define ATTN_CODEGEN_PASSES_H

#include "attn/Dialect/AttnBlockDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Codegen/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_CODEGEN_PASSES_H
