//===- SinkOperandLoads.cpp - ldmatrix next to the mma.sync that reads it -===//
//
// local_load of a dot operand becomes one ldmatrix.x4 per 16x16 piece of
// the whole tile, all before the dot's first mma.sync: a [64, 128] B tile
// is 128 registers per thread, live at once. ptxas does not sink the loads
// itself (PaTH's attention kernel at D = 128 spilled 2 KB for it), so each
// ldmatrix and the pure register ops derived from it (the extracts and
// packing of its pairs) move down to right before the first op that uses
// them, in their original relative order, never past an op that may write
// memory or synchronise (barriers, copies, stores; mma.sync touches no
// memory). Then a dot holds one k-slice of its operand tile at a time.
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace {

/// Whether `op` may write memory or order memory accesses (a barrier).
bool mayWriteOrSync(Operation *op) {
  if (isa<NVVM::MmaOp>(op) || isMemoryEffectFree(op))
    return false;
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op))
    return !effects.onlyHasEffect<MemoryEffects::Read>();
  return true;
}

void sinkInBlock(Block &block) {
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> index;
  for (Operation &op : block) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  const int64_t n = ops.size();
  // The ops that may move: ldmatrix, and region-free pure ops with an
  // operand from a moving op.
  std::vector<bool> moves(n, false);
  for (int64_t i = 0; i < n; ++i) {
    Operation *op = ops[i];
    if (isa<nvgpu::LdMatrixOp>(op)) {
      moves[i] = true;
      continue;
    }
    if (op->getNumRegions() || op->getNumResults() == 0 ||
        !isMemoryEffectFree(op))
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        if (def->getBlock() == &block && moves[index[def]]) {
          moves[i] = true;
          break;
        }
  }
  // The first op at or after each position that may write or synchronise.
  std::vector<int64_t> nextFence(n + 1, n);
  for (int64_t i = n - 1; i >= 0; --i)
    nextFence[i] = mayWriteOrSync(ops[i]) ? i : nextFence[i + 1];
  // anchor[i]: the staying op a moving op goes right before (bottom-up, so
  // every user's anchor is known); i itself when it stays.
  std::vector<int64_t> anchor(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    anchor[i] = i;
    if (!moves[i])
      continue;
    int64_t at = n;
    for (Operation *user : ops[i]->getUsers()) {
      Operation *inBlock = block.findAncestorOpInBlock(*user);
      if (!inBlock) {
        at = i; // used outside this block: stays
        break;
      }
      at = std::min(at, anchor[index[inBlock]]);
    }
    if (isa<nvgpu::LdMatrixOp>(ops[i]))
      at = std::min(at, nextFence[i + 1]);
    if (at < n && at > i)
      anchor[i] = at;
  }
  for (int64_t i = 0; i < n; ++i)
    if (anchor[i] != i)
      ops[i]->moveBefore(ops[anchor[i]]);
}

} // namespace

void mlir::attn::blockgpu::sinkOperandLoads(Operation *kernel) {
  SmallVector<Block *> blocks;
  kernel->walk([&](Block *b) { blocks.push_back(b); });
  for (Block *b : blocks)
    sinkInBlock(*b);
}
