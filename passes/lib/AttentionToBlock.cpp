//===- AttentionToBlock.cpp - attn.attention -> block program -------------===//
//
// The pass driver: each fusable attn.attention goes to the lowering of its
// algorithm (FlashToBlock.cpp for plain/RoPE/FoX, PathToBlock.cpp for
// PaTH/PaTH-FoX, MtaToBlock.cpp for MTA
// and the MTA output norm, with RoPE/FoX), which emits the kernels (attn_block
// functions) and their launches.
//
// PaTH with RoPE, and PaTH with MTA pieces, are not fused yet: such ops
// stay attn.attention and the CPU pipeline runs them through the reference
// lowering, with a remark.
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Passes/GpuTarget.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOBLOCK
#include "attn/Passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

func::FuncOp mlir::attn::createBlockKernel(AttentionOp op, SymbolTable &symbols,
                                           StringRef suffix,
                                           TypeRange argTypes) {
  auto parent = op->getParentOfType<func::FuncOp>();
  OpBuilder mb(parent);
  auto kernel = func::FuncOp::create(mb, op.getLoc(),
                                     (parent.getName() + "_" + suffix).str(),
                                     mb.getFunctionType(argTypes, {}));
  kernel.setPrivate();
  kernel->setAttr("attn_block.kernel", mb.getUnitAttr());
  symbols.insert(kernel);
  kernel.addEntryBlock();
  return kernel;
}

SmallVector<Value> KernelArgs::present() const {
  SmallVector<Value> vals;
  for (const auto &arg : args)
    if (arg.second)
      vals.push_back(arg.second);
  return vals;
}

func::FuncOp KernelArgs::createKernel(AttentionOp op, SymbolTable &symbols,
                                      StringRef suffix) const {
  SmallVector<Type> types;
  for (Value v : present())
    types.push_back(v.getType());
  return createBlockKernel(op, symbols, suffix, types);
}

void KernelArgs::launch(OpBuilder &b, Location loc, func::FuncOp kernel,
                        Value grid0, Value grid1) const {
  attn_block::LaunchOp::create(b, loc, kernel.getName(), grid0, grid1,
                               present());
}

Value KernelArgs::value(StringRef name) const {
  for (const auto &arg : args)
    if (arg.first == name)
      return arg.second;
  llvm::report_fatal_error(llvm::Twine("KernelArgs: no argument '") + name +
                           "' was declared");
}

Value KernelArgs::in(func::FuncOp kernel, StringRef name) const {
  unsigned pos = 0;
  for (const auto &arg : args) {
    if (arg.first == name)
      return arg.second ? kernel.getArgument(pos) : Value();
    pos += arg.second ? 1 : 0;
  }
  llvm::report_fatal_error(llvm::Twine("KernelArgs: no argument '") + name +
                           "' was declared");
}

namespace {

/// The widest head dim (D and Dv) the fused CPU kernel takes.
constexpr int64_t kMaxFusedHeadDim = 1024;

/// Why `op` cannot become fused kernels yet, or "" if it can. PaTH with MTA
/// pieces is PaTH here too: the MTA kernels have no transported keys.
std::string unfusableReason(AttentionOp op) {
  if (op.getLse() && (op.hasMTA() || op.getNorm()))
    return "the row LSE of MTA";
  if (op.getW() && op.getRopeTheta())
    return "PaTH with RoPE";
  if (op.getW() && (op.hasMTA() || op.getNorm()))
    return "PaTH";
  // Wider rows make the CPU backend's tiles vectors that LLVM's x86
  // instruction selection cannot lower (D = 65536 aborts there, D = 10^6
  // does not finish); the reference lowering computes any D.
  for (Value v : {op.getQ(), op.getV()})
    if (int64_t d = cast<ShapedType>(v.getType()).getDimSize(3);
        d > kMaxFusedHeadDim)
      return "head dim " + std::to_string(d) + " > " +
             std::to_string(kMaxFusedHeadDim);
  return "";
}

struct AttnToBlockPass : attn::impl::AttnToBlockBase<AttnToBlockPass> {
  using AttnToBlockBase::AttnToBlockBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Tiles are blockM x D and blockN x D vectors: beyond 1024 rows they
    // grow past what the backend lowers in reasonable time.
    if (blockM < 1 || blockN < 1 || blockM > 1024 || blockN > 1024) {
      module.emitError() << "attn-to-block: block-m and block-n must be in "
                            "[1, 1024], "
                         << "got " << static_cast<int64_t>(blockM) << " and "
                         << static_cast<int64_t>(blockN);
      return signalPassFailure();
    }
    if (pathChunk < 1) {
      module.emitError() << "attn-to-block: path-chunk must be >= 1, got "
                         << static_cast<int64_t>(pathChunk);
      return signalPassFailure();
    }
    BlockTarget tgt;
    if (std::string bad = parseBlockTarget(target, tgt); !bad.empty()) {
      module.emitError() << "attn-to-block: " << bad;
      return signalPassFailure();
    }
    if (warps != 4 && (!tgt.gpu || warps != 8)) {
      module.emitError() << "attn-to-block: warps must be 4"
                         << (tgt.gpu ? " or 8" : " (the CPU form has none)")
                         << " for target " << tgt.name << ", got "
                         << static_cast<int64_t>(warps);
      return signalPassFailure();
    }
    tgt.warps = warps;
    if (std::string bad = checkPathTransport(pathTransport); !bad.empty()) {
      module.emitError() << "attn-to-block: " << bad;
      return signalPassFailure();
    }
    for (auto [on, name] :
         {std::pair<bool, const char *>{pathChunkWgmma, "path-chunk-wgmma"},
          {pathAttentionWgmma, "path-attention-wgmma"}})
      if (on && !tgt.wgmma) {
        module.emitError() << "attn-to-block: " << name
                           << " needs target sm_90a (wgmma), got " << tgt.name;
        return signalPassFailure();
      }
    if (std::string bad = checkGradDq(gradDq); !bad.empty()) {
      module.emitError() << "attn-to-block: " << bad;
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    const BlockLoweringConfig cfg{blockM,
                                  blockN,
                                  pathChunk,
                                  tgt,
                                  pathTransport == "split",
                                  pathChunkWgmma,
                                  pathAttentionWgmma,
                                  gradDq == "walk"};
    // A function already compiled for the GPU (attn-block-launch-plan
    // named its gpu.module) keeps its attn.attention as the statement of
    // its kernels.
    SmallVector<AttentionOp> ops;
    SmallVector<AttentionGradOp> grads;
    module.walk([&](Operation *op) {
      if (!isa<AttentionOp, AttentionGradOp>(op) ||
          op->getParentOfType<func::FuncOp>()->hasAttr("attn.gpu_module"))
        return;
      if (auto att = dyn_cast<AttentionOp>(op))
        ops.push_back(att);
      else
        grads.push_back(cast<AttentionGradOp>(op));
    });
    for (AttentionOp op : ops) {
      std::string why = unfusableReason(op);
      if (!why.empty()) {
        op.emitRemark() << "not fused yet (" << why
                        << "): runs through the reference lowering";
        continue;
      }
      // PaTH's and flash's kernels serve every target; MTA has a CPU form
      // and a GPU form. Nothing is lowered silently in the CPU form for a
      // GPU target.
      std::string bad = op.getW()  ? checkPathSupport(op, tgt, pathChunk)
                        : !tgt.gpu ? std::string()
                        : op.hasMTA() || op.getNorm()
                            ? checkMtaGpuSupport(op, tgt)
                            : checkFlashGpuSupport(op, tgt, blockN);
      if (!bad.empty()) {
        op.emitError() << "attn-to-block{target=" << tgt.name << "}: " << bad;
        signalPassFailure();
        continue;
      }
      if (op.getW())
        lowerPathAttention(op, symbols, cfg);
      else if ((op.hasMTA() || op.getNorm()) && tgt.gpu)
        lowerMtaAttentionGpu(op, symbols, cfg);
      else if (op.hasMTA() || op.getNorm())
        lowerMtaAttention(op, symbols, cfg);
      else
        lowerFlashAttention(op, symbols, cfg);
    }
    for (AttentionGradOp op : grads) {
      std::string why = checkFlashGradSupport(op, tgt);
      if (!why.empty() && tgt.gpu) {
        op.emitError() << "attn-to-block{target=" << tgt.name << "}: " << why;
        signalPassFailure();
        continue;
      }
      if (!why.empty()) {
        op.emitRemark() << why << ": runs through the reference lowering";
        continue;
      }
      lowerFlashAttentionGrad(op, symbols, cfg);
    }
  }
};

} // namespace
