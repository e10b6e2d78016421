//===- FlashToBlock.cpp - attn.attention -> flash block kernel ------------===//
//
// Lowers a fusable attn.attention (no PaTH, no MTA) for every target through
// one generator: the GPU form's kernel (FlashToBlockGpu.cpp, writing the row
// LSE too where the op returns it) and its prologue kernels (RoPE's
// rotations, RopeToBlockGpu.cpp; FoX's G'), plus their launches. The CPU runs
// the same kernels after attn-block-strip-gpu. Also the host-built RoPE tables
// of the MTA CPU form (buildRopeTables).
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "NonFiniteRows.h"
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
  int64_t blockM = tgt.gpu ? tgt.blockM() : cfg.blockM;
  auto input = [&](Value v) -> Value {
    return bufferization::ToBufferOp::create(b, loc, bufferTypeOf(v), v,
                                             /*read_only=*/true);
  };
  // q and k rotated by the rope kernels (RoPE), G' from the gate kernel and
  // its records (FoX). Their kernels go before the function, after the
  // attention kernel (the order attn-to-block prints).
  Operation *before = op->getParentOfType<func::FuncOp>()->getPrevNode();
  Value q, k;
  if (op.getRopeTheta())
    std::tie(q, k) = launchRopeGpu(op, symbols, b, tgt.dependentLaunch);
  else
    std::tie(q, k) = std::pair(input(op.getQ()), input(op.getK()));
  Value gPrefix = op.getG()
                      ? launchGatePrefix(op, symbols, b, tgt.dependentLaunch,
                                         gatePrefixInF64(tgt))
                      : Value();
  Value records =
      usesFoxRecords(op, tgt)
          ? launchFoxRecords(op, symbols, b, gPrefix, tgt.dependentLaunch)
          : Value();
  Value bDim = tensor::DimOp::create(b, loc, op.getQ(), 0);
  Value hDim = tensor::DimOp::create(b, loc, op.getQ(), 1);
  Value tDim = tensor::DimOp::create(b, loc, op.getQ(), 2);
  // Fresh [B, Hq, T, ...] buffers for the output and the row LSE.
  auto alloc = [&](Value result) {
    return result ? allocResult(b, loc, result, bDim, hDim, tDim) : Value();
  };
  KernelArgs args;
  args.add("q", q);
  args.add("k", k);
  args.add("v", input(op.getV()));
  args.add("gPrefix", gPrefix);
  args.add("records", records);
  args.add("cuSeqlens", op.getCuSeqlens() ? input(op.getCuSeqlens()) : Value());
  args.add("out", alloc(op.getResult()));
  args.add("lse", alloc(op.getLse()));
  // On a GPU the main kernel marks the rows that come out non-finite and
  // the redo kernel writes them again (FlashRows).
  args.add("rowsNonFinite",
           tgt.gpu ? allocResult(b, loc, op.getResult(), bDim, hDim, tDim,
                                 b.getF32Type(), /*rank=*/3)
                   : Value());
  func::FuncOp kernel = args.createKernel(op, symbols, "attention_kernel");
  if (before)
    kernel->moveAfter(before);
  else
    kernel->moveBefore(&kernel->getBlock()->front());
  buildFlashGpuKernel(op, kernel, args, tgt, blockM, cfg.blockN,
                      tgt.gpu ? FlashRows::marking : FlashRows::all);
  auto launchOver = [&](func::FuncOp k, int64_t rows) {
    Value bm = arith::ConstantIndexOp::create(b, loc, rows);
    Value gridX = arith::CeilDivUIOp::create(b, loc, tDim, bm);
    Value gridY = arith::MulIOp::create(b, loc, bDim, hDim);
    args.launch(b, loc, k, gridX, gridY);
  };
  launchOver(kernel, blockM);
  if (tgt.gpu) {
    BlockTarget redo = redoTarget(tgt);
    func::FuncOp again =
        args.createKernel(op, symbols, "attention_nonfinite_rows");
    again->moveAfter(kernel);
    buildFlashGpuKernel(op, again, args, redo, redo.blockM(), redo.blockN,
                        FlashRows::redo);
    launchOver(again, redo.blockM() * redoTilesPerProgram(redo.blockM()));
  }
  SmallVector<Value> results;
  for (auto [name, result] :
       {std::pair<StringRef, Value>{"out", op.getResult()},
        {"lse", op.getLse()}})
    if (result)
      results.push_back(bufferization::ToTensorOp::create(
          b, loc, result.getType(), args.value(name), /*restrict=*/true,
          /*writable=*/true));
  op->replaceAllUsesWith(results);
  op.erase();
}
