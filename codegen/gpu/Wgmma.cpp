//===- Wgmma.cpp - sm_90a warpgroup MMA as inline PTX ---------------------===//

#include "Wgmma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <string>

using namespace mlir;

namespace {

std::string constraintOf(Type t) {
  if (t.isF32())
    return "f";
  if (t.isInteger(64))
    return "l";
  return "r";
}

std::string regList(int64_t first, int64_t count) {
  std::string s = "{";
  for (int64_t i = 0; i < count; ++i)
    s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + "}";
}

} // namespace

SmallVector<Value> mlir::attn::wgmma::inlinePtx(OpBuilder &b, Location loc,
                                                StringRef text,
                                                ArrayRef<Value> inouts,
                                                ArrayRef<Value> ins,
                                                ArrayRef<Type> fresh) {
  SmallVector<Type> outTypes;
  for (Value v : inouts)
    outTypes.push_back(v.getType());
  if (inouts.empty())
    outTypes.assign(fresh.begin(), fresh.end());
  std::string constraints;
  auto add = [&](const std::string &c) {
    if (!constraints.empty())
      constraints += ",";
    constraints += c;
  };
  for (Type t : outTypes)
    add("=" + constraintOf(t));
  SmallVector<Value> operands(inouts.begin(), inouts.end());
  for (size_t i = 0; i < inouts.size(); ++i)
    add(std::to_string(i));
  for (Value v : ins) {
    add(constraintOf(v.getType()));
    operands.push_back(v);
  }
  Type resTy;
  if (outTypes.size() == 1)
    resTy = outTypes[0];
  else if (outTypes.size() > 1)
    resTy = LLVM::LLVMStructType::getLiteral(b.getContext(), outTypes);
  auto op = LLVM::InlineAsmOp::create(
      b, loc, resTy, operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  SmallVector<Value> res;
  if (outTypes.size() == 1)
    res.push_back(op.getResult(0));
  else
    for (size_t i = 0; i < outTypes.size(); ++i)
      res.push_back(LLVM::ExtractValueOp::create(
          b, loc, op.getResult(0), ArrayRef<int64_t>{int64_t(i)}));
  return res;
}

Value mlir::attn::wgmma::descriptor(OpBuilder &b, Location loc, Value byteAddr,
                                    int64_t lbo, int64_t sbo, bool swizzle) {
  // Bits 0-13: address >> 4; 16-29: LBO >> 4; 32-45: SBO >> 4; 62-63: 1
  // (128-byte swizzle) or 0 (none); base offset 0 (swizzled tiles start on
  // 1024-byte bounds).
  const uint64_t fixed = (uint64_t(swizzle ? 1 : 0) << 62) |
                         (uint64_t((sbo >> 4) & 0x3FFF) << 32) |
                         (uint64_t((lbo >> 4) & 0x3FFF) << 16);
  // Shared addresses stay below 2^18 (228 KB), so the address field needs
  // no mask, and `advance` can add to the whole descriptor.
  Value addr = arith::IndexCastOp::create(b, loc, b.getI64Type(), byteAddr);
  Value field = arith::ShRUIOp::create(
      b, loc, addr, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(4)));
  return arith::OrIOp::create(
      b, loc, field,
      arith::ConstantOp::create(
          b, loc, b.getI64IntegerAttr(static_cast<int64_t>(fixed))));
}

Value mlir::attn::wgmma::advance(OpBuilder &b, Location loc, Value desc,
                                 int64_t bytes) {
  if (bytes == 0)
    return desc;
  return arith::AddIOp::create(
      b, loc, desc,
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bytes >> 4)));
}

SmallVector<Value> mlir::attn::wgmma::mmaAsync(OpBuilder &b, Location loc,
                                               ArrayRef<Value> acc, int64_t n,
                                               bool half, ArrayRef<Value> aRegs,
                                               Value descA, Value descB,
                                               bool transB, bool transA) {
  const int64_t nAcc = n / 2;
  // Operands: accumulators (results, tied when accumulating), then A, B
  // and the scale-d flag.
  int64_t next = acc.empty() ? nAcc : 2 * nAcc;
  SmallVector<Value> ins;
  std::string a;
  if (!aRegs.empty()) {
    a = regList(next, 4);
    next += 4;
    ins.append(aRegs.begin(), aRegs.end());
  } else {
    a = "$" + std::to_string(next++);
    ins.push_back(descA);
  }
  std::string bDesc = "$" + std::to_string(next++);
  ins.push_back(descB);
  std::string scaleD = "$" + std::to_string(next++);
  ins.push_back(arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(acc.empty() ? 0 : 1)));
  const char *types = half ? "f32.f16.f16" : "f32.bf16.bf16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + scaleD +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16." + types + " " +
                     regList(0, nAcc) + ", " + a + ", " + bDesc + ", p, 1, 1" +
                     (aRegs.empty() ? (transA ? ", 1" : ", 0") : "") +
                     (transB ? ", 1" : ", 0") + ";\n}";
  SmallVector<Type> fresh(acc.empty() ? nAcc : 0, b.getF32Type());
  return inlinePtx(b, loc, text, acc, ins, fresh);
}

SmallVector<Value> mlir::attn::wgmma::fence(OpBuilder &b, Location loc,
                                            ArrayRef<Value> regs) {
  return inlinePtx(b, loc, "wgmma.fence.sync.aligned;", regs, {});
}

void mlir::attn::wgmma::commit(OpBuilder &b, Location loc) {
  inlinePtx(b, loc, "wgmma.commit_group.sync.aligned;", {}, {});
}

SmallVector<Value> mlir::attn::wgmma::wait(OpBuilder &b, Location loc,
                                           ArrayRef<Value> regs, int pending) {
  return inlinePtx(
      b, loc, "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";",
      regs, {});
}

void mlir::attn::wgmma::fenceProxyAsync(OpBuilder &b, Location loc) {
  inlinePtx(b, loc, "fence.proxy.async.shared::cta;", {}, {});
}
