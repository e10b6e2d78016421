//===- BlockGpuAbi.h - how a GPU-form block kernel is launched --*- C++ -*-===//
//
// What codegen/gpu (attn-block-to-gpu) defines about the kernels it builds
// from GPU-form block kernels and that the launch plan of their host
// (attn-block-launch-plan, passes/lib/BlockLaunchPlan.cpp) must state: the
// flat-pointer kernel ABI and the dynamic shared memory a kernel takes.
// One definition, read by both, so that the plan's arguments match the
// gpu.func's parameters exactly.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_BLOCKGPUABI_H
#define ATTN_CODEGEN_BLOCKGPUABI_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::attn::blockgpu {

/// One parameter of the flat-pointer ABI. Each memref argument `arg` of the
/// kernel function
/// becomes, in order:
///   - `dim == -1`: its elements, a flat `memref<?xT>` (the launch plan's
///     buffer argument: five words, allocated / aligned pointer, offset 0,
///     size, stride 1), read as the row-major identity layout;
///   - `dim == d`, for each dynamic dim d of the memref, outer to inner:
///     that size, an `index` (the plan's i64 scalar).
/// Static dims are constants of the kernel and take no parameter.
struct FlatAbiParam {
  unsigned arg;
  int64_t dim;
};

/// Why the flat ABI cannot pass `argTypes` (an argument that is not a
/// memref with the identity layout in the default memory space), or "".
std::string flatAbiUnsupported(TypeRange argTypes);

/// The parameters of a kernel taking `argTypes` (flatAbiUnsupported
/// accepted them), in the gpu.func's order.
llvm::SmallVector<FlatAbiParam> flatAbiParams(TypeRange argTypes);

/// The dynamic shared memory, in bytes, that attn-block-to-gpu gives the
/// GPU-form kernel `fn` (its local_alloc buffers at their offsets, plus the
/// alignment slack of wgmma's swizzle when it has nvmma_shared buffers).
int64_t sharedMemoryBytes(func::FuncOp fn);

} // namespace mlir::attn::blockgpu

#endif // ATTN_CODEGEN_BLOCKGPUABI_H
