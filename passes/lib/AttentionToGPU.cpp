//===- AttentionToGPU.cpp - attn.attention -> gpu.module with kernels -----===//
//
// Checks what the GPU backend supports, computes the launch plan and asks
// codegen/gpu for the kernels. Also holds attn-dump-ptx.
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "attn/Codegen/GpuKernels.h"
#include "attn/Codegen/GpuPlan.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Dialect/AttnLaunchDialect.h"
#include "attn/Passes/GpuTarget.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNATTENTIONTOGPU
#define GEN_PASS_DEF_ATTNDUMPPTX
#include "attn/Passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// What the GPU backend supports
//===----------------------------------------------------------------------===//

/// The plan for `op` (no PaTH, MTA or head norm: the pass leaves those for
/// attn-to-block), or an error diagnostic on `op` naming what the flash
/// kernels do not support (f32 operands, head dims other than 64/128).
/// `chip` sm_90a selects the wgmma kernel.
static FailureOr<GpuPlan> planGpuAttention(AttentionOp op, StringRef chip,
                                           bool overlap, int64_t warps,
                                           int64_t mTiles, int64_t blockN) {
  auto unsupported = [&](const Twine &what) {
    return op.emitError("the GPU backend does not support ")
           << what << " yet (the CPU backend runs it: --device=cpu)";
  };
  if (std::string bad = checkGpuChip(chip); !bad.empty())
    return op.emitError(bad);
  if (std::string bad =
          checkGpuKernelOptions(chip, overlap, warps, mTiles, blockN);
      !bad.empty())
    return op.emitError(bad);
  // checkGpuChip passed: the chip has a description.
  const TargetDesc &target = cantFail(getTargetDesc(chip));
  const bool wgmma = target.mma == MmaKind::Wgmma;
  auto qt = cast<ShapedType>(op.getQ().getType());
  auto kt = cast<ShapedType>(op.getK().getType());
  auto vt = cast<ShapedType>(op.getV().getType());
  Type e = qt.getElementType();
  if (!e.isBF16() && !e.isF16())
    return unsupported(
        "f32 operands (the tensor-core kernels take bf16 or f16 q, k, v)");
  if (kt.getElementType() != e || vt.getElementType() != e)
    return op.emitError("the GPU backend needs q, k and v of one element "
                        "type, got ")
           << qt.getElementType() << ", " << kt.getElementType() << ", "
           << vt.getElementType();
  GpuPlan p;
  p.wgmma = wgmma;
  p.dependentLaunch = target.dependentLaunch;
  p.overlap = overlap;
  p.warps = warps;
  p.mTiles = mTiles;
  p.blockN = blockN;
  p.half = e.isF16();
  p.headDim = qt.getDimSize(3);
  p.valueDim = vt.getDimSize(3);
  for (auto [name, d] :
       {std::pair<StringRef, int64_t>{"q, k", p.headDim}, {"v", p.valueDim}})
    if (d != 64 && d != 128)
      return unsupported(
          "head dim " +
          (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d)) +
          " of " + name.str() + " (64 or 128 are supported)");
  if (auto theta = op.getRopeTheta()) {
    p.rope = true;
    p.ropeTheta = theta->convertToDouble();
    p.ropeDim = op.getRopeDim().value_or(p.headDim);
    p.ropeInterleaved = op.getRopeStyle() == RopeStyle::interleaved;
    p.ropeOffset = static_cast<int64_t>(op.getRopeOffset());
    if (auto qo = op.getRopeQOffset()) {
      p.ropeQOffset = true;
      p.ropeQOffsetValue = static_cast<int64_t>(*qo);
    }
  }
  p.scale = op.getScaleOrDefault();
  if (op.getG()) {
    p.gate = true;
    p.gateScale = op.getGateScaled() ? p.scale : 1.0;
  }
  switch (op.getMask()) {
  case MaskKind::causal:
    p.mask = 0;
    break;
  case MaskKind::none:
    p.mask = 1;
    break;
  case MaskKind::sliding_window:
    p.mask = 2;
    p.window = static_cast<int64_t>(op.getWindow().value_or(0));
    break;
  }
  return p;
}

namespace {

/// The function's single attn.attention when the body is exactly
/// `%o = attn.attention <arguments> ; return %o`; else an error naming
/// what stands in the way.
FailureOr<AttentionOp> soleAttention(func::FuncOp fn) {
  AttentionOp att;
  for (Operation &op : fn.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    if (auto a = dyn_cast<AttentionOp>(op); a && !att) {
      att = a;
      continue;
    }
    return fn.emitError("the GPU backend runs a function whose body is one "
                        "attn.attention (after attn-fuse); '")
           << op.getName() << "' at " << op.getLoc()
           << " was not fused into it";
  }
  if (!att)
    return failure();
  for (Value v : att->getOperands())
    if (!isa<BlockArgument>(v))
      return att.emitError("the GPU backend needs every attn.attention "
                           "operand to be a function argument");
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (ret.getNumOperands() != 1 || ret.getOperand(0) != att.getResult())
    return att.emitError("the GPU backend needs the function to return the "
                         "attn.attention result");
  return att;
}

/// The launch plan of `plan`'s kernels in module `gm` for attention `att`
/// (docs/launch-plan.md): the kernel ABI of GpuPlan.h stated as data.
/// Symbols: B, Hq, Hk, T, S (dims 0-4), then the values.
attn_launch::PlanAttr buildLaunchPlan(AttentionOp att, gpu::GPUModuleOp gm,
                                      const GpuPlan &plan) {
  namespace al = attn_launch;
  MLIRContext *ctx = att.getContext();
  Builder b(ctx);
  auto argOf = [](Value v) {
    return static_cast<int64_t>(cast<BlockArgument>(v).getArgNumber());
  };
  const int64_t q = argOf(att.getQ()), k = argOf(att.getK()),
                v = argOf(att.getV());
  SmallVector<Attribute> dims = {
      al::DimAttr::get(ctx, "B", q, 0), al::DimAttr::get(ctx, "Hq", q, 1),
      al::DimAttr::get(ctx, "Hk", k, 1), al::DimAttr::get(ctx, "T", q, 2),
      al::DimAttr::get(ctx, "S", k, 2)};
  AffineExpr B = getAffineSymbolExpr(0, ctx), Hq = getAffineSymbolExpr(1, ctx),
             Hk = getAffineSymbolExpr(2, ctx), T = getAffineSymbolExpr(3, ctx),
             S = getAffineSymbolExpr(4, ctx), V0 = getAffineSymbolExpr(5, ctx);
  auto c = [&](int64_t x) { return getAffineConstantExpr(x, ctx); };
  const unsigned ns = plan.rope ? 6 : 5;
  auto map = [&](ArrayRef<AffineExpr> r) {
    return AffineMap::get(0, ns, r, ctx);
  };
  SmallVector<Attribute> values, buffers, kernels;

  const int64_t D = plan.headDim;
  AffineExpr qElems = B * Hq * T * D, kElems = B * Hk * S * D,
             vElems = B * Hk * S * plan.valueDim,
             oElems = B * Hq * T * plan.valueDim;
  auto buffer = [&](StringRef name, AffineExpr bytes) {
    buffers.push_back(al::BufferAttr::get(ctx, name, map({bytes})));
    return static_cast<int64_t>(buffers.size() - 1);
  };
  auto input = [&](int64_t i, AffineExpr elems) {
    return al::ArgAttr::get(ctx, al::ArgKind::input, i, map({elems}));
  };
  auto scratch = [&](int64_t j, AffineExpr elems) {
    return al::ArgAttr::get(ctx, al::ArgKind::scratch, j, map({elems}));
  };
  auto scalar = [&](AffineExpr x) {
    return al::ArgAttr::get(ctx, al::ArgKind::scalar, 0, map({x}));
  };
  auto output = [&](AffineExpr elems) {
    return al::ArgAttr::get(ctx, al::ArgKind::output, 0, map({elems}));
  };
  auto launch = [&](StringRef name, ArrayRef<AffineExpr> grid, int64_t block,
                    int64_t smem, ArrayRef<Attribute> args, bool dependent) {
    auto ref = SymbolRefAttr::get(gm.getNameAttr(),
                                  {FlatSymbolRefAttr::get(ctx, name)});
    kernels.push_back(al::KernelAttr::get(
        ctx, ref, map(grid), b.getDenseI64ArrayAttr({block, 1, 1}), smem,
        b.getArrayAttr(args), dependent));
  };

  // RoPE: cos/sin tables cover every position a query or key takes; the
  // queries may sit below the keys' offset (rope_q_offset, or T > S).
  AffineExpr tableFloats = c(0), qPos0 = c(0);
  int64_t cosBuf = -1, sinBuf = -1, qBuf = -1, kBuf = -1;
  if (plan.rope) {
    const int64_t ro = plan.ropeOffset;
    AffineExpr rows, start, kPos0;
    if (plan.ropeQOffset) {
      const int64_t qo = plan.ropeQOffsetValue, m = std::min(ro, qo);
      values.push_back(AffineMapAttr::get(
          AffineMap::get(0, 5, {S + (ro - m), T + (qo - m)}, ctx)));
      rows = V0, start = c(m), kPos0 = c(ro - m), qPos0 = c(qo - m);
    } else {
      // Queries at ro + S - T + i: V0 = max(T - S, 0) positions below ro.
      values.push_back(
          AffineMapAttr::get(AffineMap::get(0, 5, {T - S, c(0)}, ctx)));
      rows = S + V0, start = c(ro) - V0, kPos0 = V0, qPos0 = S - T + V0;
    }
    tableFloats = rows * (plan.ropeDim / 2);
    cosBuf = buffer("rope_cos", tableFloats * 4);
    sinBuf = buffer("rope_sin", tableFloats * 4);
    launch("rope_table", {tableFloats.ceilDiv(256), c(1), c(1)}, 256, 0,
           {scratch(cosBuf, tableFloats), scratch(sinBuf, tableFloats),
            scalar(tableFloats), scalar(start)},
           false);
    const int64_t perRow = D / 2 / plan.ropePairsPerThread();
    auto rope = [&](int64_t in, int64_t out, AffineExpr elems, AffineExpr n,
                    AffineExpr len, AffineExpr pos0) {
      launch("rope", {(n * perRow).ceilDiv(256), c(1), c(1)}, 256, 0,
             {input(in, elems), scratch(out, elems),
              scratch(cosBuf, tableFloats), scratch(sinBuf, tableFloats),
              scalar(n), scalar(len), scalar(pos0)},
             false);
    };
    // The attention kernel rotates q itself when it can.
    if (!plan.ropeQInKernel()) {
      qBuf = buffer("q_rotated", qElems * 2);
      rope(q, qBuf, qElems, B * Hq * T, T, qPos0);
    }
    kBuf = buffer("k_rotated", kElems * 2);
    rope(k, kBuf, kElems, B * Hk * S, S, kPos0);
  }
  AffineExpr gateFloats = c(0);
  int64_t gateBuf = -1;
  if (plan.gate) {
    AffineExpr row = S;
    if (plan.gateInAcc())
      row =
          (S.ceilDiv(plan.blockN) + 2) * plan.uTileFloats() + S.ceilDiv(4) * 4;
    gateFloats = B * Hq * row;
    gateBuf = buffer("gate_prefix", gateFloats * 4);
    launch("gate", {B * Hq, c(1), c(1)}, GpuPlan::kGateThreads, 0,
           {input(argOf(att.getG()), B * Hq * S), scratch(gateBuf, gateFloats),
            scalar(S)},
           false);
  }
  SmallVector<Attribute> args = {
      qBuf >= 0 ? scratch(qBuf, qElems) : input(q, qElems),
      kBuf >= 0 ? scratch(kBuf, kElems) : input(k, kElems),
      input(v, vElems),
      output(oElems),
      gateBuf >= 0 ? scratch(gateBuf, gateFloats) : output(c(0)),
      scalar(Hq),
      scalar(Hk),
      scalar(T),
      scalar(S)};
  if (plan.ropeQInKernel())
    args.append({scratch(cosBuf, tableFloats), scratch(sinBuf, tableFloats),
                 scalar(qPos0)});
  launch("attention", {T.ceilDiv(plan.blockM()), B * Hq, c(1)}, plan.threads(),
         plan.smemBytes(), args, plan.attentionOverlapsPrologue());
  return al::PlanAttr::get(ctx, al::Device::cuda, b.getArrayAttr(dims),
                           b.getArrayAttr(values), b.getArrayAttr(buffers),
                           b.getArrayAttr(kernels));
}

struct AttnAttentionToGPUPass
    : attn::impl::AttnAttentionToGPUBase<AttnAttentionToGPUPass> {
  using AttnAttentionToGPUBase::AttnAttentionToGPUBase;

  /// The options are checked before any function is looked at, so that a
  /// bad chip fails even on a module without attention.
  LogicalResult initialize(MLIRContext *ctx) override {
    std::string bad = checkGpuChip(chip);
    if (bad.empty())
      bad = checkGpuKernelOptions(chip, overlap, warps, mTiles, blockN);
    if (bad.empty())
      bad = checkGpuLowering(lowering, chip);
    // block-plan builds no flash launch plan (Pipelines.cpp).
    if (bad.empty() && lowering == "block-plan")
      bad = "lowering=block-plan takes its kernels and launch plan from "
            "attn-to-block and attn-block-launch-plan, not from this pass";
    if (bad.empty())
      return success();
    return emitError(UnknownLoc::get(ctx), "attn-attention-to-gpu: ") << bad;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // Every function holding attn ops; those that are not one
    // attn.attention get an error from soleAttention.
    SmallVector<func::FuncOp> fns;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isDeclaration())
        continue;
      WalkResult hasAttn = fn.walk([](Operation *op) {
        return isa_and_nonnull<AttnDialect>(op->getDialect())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      });
      if (hasAttn.wasInterrupted())
        fns.push_back(fn);
    }
    bool failedAny = false;
    for (func::FuncOp fn : fns) {
      if (fn->hasAttr("attn.gpu_module"))
        continue;
      auto att = soleAttention(fn);
      if (failed(att)) {
        failedAny = true;
        continue;
      }
      // What the flash launch plan does not cover (PaTH, MTA, the head
      // norm) is left for attn-to-block and attn-block-launch-plan, which
      // the attn-to-gpu pipeline runs next with either lowering (their
      // block program is the only GPU form they have) and which name what
      // has no GPU form yet.
      if ((*att).getW() || (*att).hasMTA() || (*att).getNorm())
        continue;
      auto plan = planGpuAttention(*att, chip, overlap, warps, mTiles, blockN);
      if (failed(plan)) {
        failedAny = true;
        continue;
      }
      // lowering=block: the attention kernel is the flash kernel's GPU form.
      const bool block = lowering == "block";
      plan->blockProgram = block;
      BlockTarget tgt;
      tgt.name = chip;
      tgt.gpu = true;
      tgt.wgmma = plan->wgmma;
      tgt.warps = warps;
      tgt.mTiles = mTiles;
      tgt.blockN = blockN;
      tgt.stages = plan->stages;
      tgt.dependentLaunch = plan->attentionOverlapsPrologue();
      if (block) {
        std::string bad =
            plan->overlap
                ? "overlap=true (S_{j+1} and P_j V_j in flight together) is "
                  "not in the GPU form of the block program yet"
                : checkFlashGpuSupport(*att, tgt, blockN);
        if (!bad.empty()) {
          att->emitError("attn-attention-to-gpu{lowering=block}: ")
              << bad << " (lowering=direct builds it)";
          failedAny = true;
          continue;
        }
      }
      OpBuilder b(ctx);
      b.setInsertionPointToEnd(module.getBody());
      auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3,
                                              "nvptx64-nvidia-cuda", chip);
      std::string name = (fn.getSymName() + "_gpu").str();
      auto gm = gpu::GPUModuleOp::create(b, fn.getLoc(), name,
                                         b.getArrayAttr({target}));
      gm->setAttr("attn.plan", plan->toAttr(ctx));
      buildGpuKernels(b, gm, *plan, /*withAttention=*/!block);
      if (block) {
        OpBuilder kb(ctx);
        kb.setInsertionPointToEnd(gm.getBody());
        func::FuncOp kernel =
            buildFlashGpuKernel(*att, kb, "attention", tgt, blockN);
        kernel->setAttr(mlir::attn_block::kAbiAttrName,
                        kb.getStringAttr("attention"));
        // The direct kernel's occupancy hint (one rule: GpuPlan), which
        // the kernel sets itself where its own buffers allow it.
        kernel->removeAttr(mlir::attn_block::kMinBlocksPerSmAttrName);
        if (int64_t blocks = plan->minBlocksPerSm())
          kernel->setAttr(mlir::attn_block::kMinBlocksPerSmAttrName,
                          kb.getI64IntegerAttr(blocks));
      }
      fn->setAttr("attn.gpu_module", FlatSymbolRefAttr::get(ctx, name));
      fn->setAttr(attn_launch::AttnLaunchDialect::kPlanAttrName,
                  buildLaunchPlan(*att, gm, *plan));
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                      b.getUnitAttr());
    }
    if (failedAny)
      signalPassFailure();
  }
};

struct AttnDumpPtxPass : attn::impl::AttnDumpPtxBase<AttnDumpPtxPass> {
  using AttnDumpPtxBase::AttnDumpPtxBase;

  void runOnOperation() override {
    std::string error;
    auto out = openOutputFile(path, &error);
    if (!out) {
      getOperation().emitError("attn-write-ptx: cannot write '")
          << path << "': " << error;
      return signalPassFailure();
    }
    std::string toolkit = cudaToolkitPath();
    for (auto gm : getOperation().getOps<gpu::GPUModuleOp>()) {
      for (Attribute t : gm.getTargetsAttr()) {
        auto target = dyn_cast<gpu::TargetAttrInterface>(t);
        if (!target)
          continue;
        gpu::TargetOptions opts(toolkit, {}, {}, {},
                                gpu::CompilationTarget::Assembly);
        std::optional<SmallVector<char, 0>> ptx =
            target.serializeToObject(gm, opts);
        if (!ptx) {
          gm.emitError("attn-write-ptx: cannot translate to PTX");
          return signalPassFailure();
        }
        out->os() << "// gpu.module @" << gm.getName() << "\n";
        out->os() << StringRef(ptx->data(), ptx->size()).rtrim('\0') << "\n";
      }
    }
    out->keep();
  }
};

} // namespace
