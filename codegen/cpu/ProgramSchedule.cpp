//===- ProgramSchedule.cpp - program instances onto OpenMP threads --------===//
//
// attn-cpu-schedule-programs: the worksharing loops convert-scf-to-openmp
// makes of the launch grids hand out program instances one at a time
// (schedule(dynamic)), the last row of grid x first. A static schedule gives
// one thread the heavy half of a causal grid (a program's key walk grows
// with its query tile: 392 of 528 tile steps at T = 2048); dynamic hand-out
// also survives a descheduled thread, and heaviest first leaves the cheap
// programs for the end. A program's result does not depend on the order.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUSCHEDULEPROGRAMS
#include "attn/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// Whether `nest` runs block kernels (the grid of a launch).
bool launchesKernels(omp::LoopNestOp nest) {
  bool found = false;
  nest.walk([&](func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    found |= callee && callee->hasAttr("attn_block.kernel");
  });
  return found;
}

/// Walks the first dimension of `nest` downwards: its induction variable
/// x in [lb, ub) (step 1) is replaced by lb + ub - 1 - x in the body.
void reverseFirstDim(omp::LoopNestOp nest) {
  Value step = nest.getLoopSteps()[0];
  if (!matchPattern(step, m_One()))
    return;
  Block &body = nest.getRegion().front();
  Value iv = body.getArgument(0);
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Location loc = nest.getLoc();
  Value last = arith::SubIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, nest.getLoopLowerBounds()[0],
                            nest.getLoopUpperBounds()[0]),
      step);
  Value mirrored = arith::SubIOp::create(b, loc, last, iv);
  iv.replaceAllUsesExcept(mirrored, mirrored.getDefiningOp());
}

struct AttnCPUScheduleProgramsPass
    : attn::impl::AttnCPUScheduleProgramsBase<AttnCPUScheduleProgramsPass> {
  void runOnOperation() override {
    getOperation().walk([&](omp::WsloopOp loop) {
      auto nest = dyn_cast<omp::LoopNestOp>(loop.getWrappedLoop());
      if (!nest || !launchesKernels(nest) || loop.getScheduleKind())
        return;
      loop.setScheduleKind(omp::ClauseScheduleKind::Dynamic);
      reverseFirstDim(nest);
    });
  }
};

} // namespace
