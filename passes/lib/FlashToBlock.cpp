//===- FlashToBlock.cpp - attn.attention -> flash block kernel ------------===//
//
// Lowers a fusable attn.attention (no PaTH, no MTA) for every target through
// one generator: the GPU form's kernel (FlashToBlockGpu.cpp) and its
// prologue kernels (RoPE's rotations, RopeToBlockGpu.cpp; FoX's G'), plus
// their launches. The CPU runs the same kernels after attn-block-strip-gpu.
// Also the host-built RoPE tables of the MTA CPU form (buildRopeTables).
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "TileBuilder.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

std::pair<Value, Value> mlir::attn::buildRopeTables(AttentionOp op,
                                                    OpBuilder &b) {
  Location loc = op.getLoc();
  int64_t d = cast<ShapedType>(op.getQ().getType()).getDimSize(3);
  int64_t rot = op.getRopeDim().value_or(d), half = rot / 2;
  double logTheta = std::log(op.getRopeTheta()->convertToDouble());
  auto cIdx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value t = tensor::DimOp::create(b, loc, op.getQ(), 2);
  Value s = tensor::DimOp::create(b, loc, op.getK(), 2);
  Value kEnd = arith::AddIOp::create(b, loc, s, cIdx(op.getRopeOffset()));
  Value qBase = op.getRopeQOffset()
                    ? cIdx(*op.getRopeQOffset()).getResult()
                    : arith::SubIOp::create(b, loc, kEnd, t).getResult();
  Value qEnd = arith::AddIOp::create(b, loc, qBase, t);
  // Queries may sit at negative positions (mask none with T > S): the table
  // starts at the lowest position any row takes (see tableStart).
  Value start = arith::MinSIOp::create(b, loc, cIdx(op.getRopeOffset()), qBase);
  Value positions = arith::SubIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, kEnd, qEnd), start);
  auto type =
      RankedTensorType::get({ShapedType::kDynamic, half}, b.getF32Type());
  auto table = [&](bool isCos) {
    return tensor::GenerateOp::create(
               b, loc, type, ValueRange{positions},
               [&](OpBuilder &nb, Location l, ValueRange ivs) {
                 auto toF64 = [&](Value idx) -> Value {
                   Value i =
                       arith::IndexCastOp::create(nb, l, nb.getI64Type(), idx);
                   return arith::SIToFPOp::create(nb, l, nb.getF64Type(), i);
                 };
                 Value e = arith::MulFOp::create(
                     nb, l, toF64(ivs[1]),
                     arith::ConstantOp::create(
                         nb, l, nb.getF64FloatAttr(-2.0 * logTheta / rot)));
                 Value pos = arith::AddIOp::create(nb, l, ivs[0], start);
                 Value angle = arith::MulFOp::create(
                     nb, l, toF64(pos), math::ExpOp::create(nb, l, e));
                 Value v = isCos
                               ? math::CosOp::create(nb, l, angle).getResult()
                               : math::SinOp::create(nb, l, angle).getResult();
                 tensor::YieldOp::create(
                     nb, l,
                     arith::TruncFOp::create(nb, l, nb.getF32Type(), v)
                         .getResult());
               })
        .getResult();
  };
  return {table(true), table(false)};
}

void mlir::attn::lowerFlashAttention(AttentionOp op, SymbolTable &symbols,
                                     const BlockLoweringConfig &cfg) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  const BlockTarget &tgt = cfg.target;
  auto parent = op->getParentOfType<func::FuncOp>();
  OpBuilder mb(parent);
  int64_t blockM = tgt.gpu ? tgt.blockM() : cfg.blockM;
  func::FuncOp kernel = buildFlashGpuKernel(
      op, mb, (parent.getName() + "_attention_kernel").str(), tgt, blockM,
      cfg.blockN);
  symbols.insert(kernel);

  // The launch: q and k rotated by the rope kernels (RoPE), v, G' from the
  // gate kernel and its records (FoX), and a fresh output buffer.
  SmallVector<Value> tensors = {op.getQ(), op.getK(), op.getV()};
  if (op.getG())
    tensors.push_back(op.getG());
  SmallVector<Value> args(tensors.size());
  if (op.getRopeTheta())
    std::tie(args[0], args[1]) =
        launchRopeGpu(op, symbols, b, tgt.dependentLaunch);
  if (op.getG())
    args[3] = launchGatePrefix(op, symbols, b, tgt.dependentLaunch,
                               gatePrefixInF64(tgt));
  for (auto [arg, v] : llvm::zip(args, tensors))
    if (!arg)
      arg = bufferization::ToBufferOp::create(b, loc, bufferTypeOf(v), v,
                                              /*read_only=*/true);
  if (usesFoxRecords(op, tgt))
    args.push_back(
        launchFoxRecords(op, symbols, b, args[3], tgt.dependentLaunch));
  auto outType = bufferTypeOf(op.getResult());
  SmallVector<Value> dyn;
  Value bDim = tensor::DimOp::create(b, loc, op.getQ(), 0);
  Value hDim = tensor::DimOp::create(b, loc, op.getQ(), 1);
  Value tDim = tensor::DimOp::create(b, loc, op.getQ(), 2);
  Value sizes[3] = {bDim, hDim, tDim};
  for (int64_t i = 0; i < 3; ++i)
    if (outType.isDynamicDim(i))
      dyn.push_back(sizes[i]);
  Value out = memref::AllocOp::create(b, loc, outType, dyn);
  args.push_back(out);
  Value bm = arith::ConstantIndexOp::create(b, loc, blockM);
  Value gridX = arith::CeilDivUIOp::create(b, loc, tDim, bm);
  Value gridY = arith::MulIOp::create(b, loc, bDim, hDim);
  blk::LaunchOp::create(b, loc, kernel.getName(), gridX, gridY, args);
  Value result = bufferization::ToTensorOp::create(
      b, loc, op.getType(), out, /*restrict=*/true, /*writable=*/true);
  op.replaceAllUsesWith(result);
  op.erase();
}
