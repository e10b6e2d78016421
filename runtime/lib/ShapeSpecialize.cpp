//===- ShapeSpecialize.cpp - verify a program at concrete shapes ----------===//

#include "ShapeSpecialize.h"

#include "attn/Memory.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// The type result `n` of an attn op has when its operands have static
/// types.
static Type refinedResultType(Operation *op, unsigned n) {
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  Type resultType = op->getResult(n).getType();
  Type elt = cast<RankedTensorType>(resultType).getElementType();
  if (auto scores = dyn_cast<mlir::attn::ScoresOp>(op)) {
    ArrayRef<int64_t> q = shapeOf(scores.getQ()), k = shapeOf(scores.getK());
    return RankedTensorType::get({q[0], q[1], q[2], k[2]}, elt);
  }
  if (isa<mlir::attn::AttentionOp>(op) && n == 1) // the row LSE
    return RankedTensorType::get(shapeOf(op->getOperand(0)).take_front(3), elt);
  if (isa<mlir::attn::WeightedSumOp, mlir::attn::AttentionOp>(op)) {
    ArrayRef<int64_t> p = shapeOf(op->getOperand(0));
    ArrayRef<int64_t> v =
        shapeOf(isa<mlir::attn::WeightedSumOp>(op) ? op->getOperand(1)
                                                   : op->getOperand(2));
    return RankedTensorType::get({p[0], p[1], p[2], v[3]}, elt);
  }
  if (isa<mlir::attn::LogSumExpOp>(op))
    return RankedTensorType::get(shapeOf(op->getOperand(0)).take_front(3), elt);
  // Every other attn op's result n has operand n's shape: one result shaped
  // like the input, or a VJP op's cotangents of its leading operands
  // (attn.attention_grad's: every operand before out is a float one).
  return RankedTensorType::get(shapeOf(op->getOperand(n)), elt);
}

/// Gives every result of `op` its refined type.
static void refineResultTypes(Operation *op) {
  for (OpResult result : op->getResults())
    result.setType(refinedResultType(op, result.getResultNumber()));
}

/// The other ops a program holds where attn-grad wrote them (the sum of two
/// cotangents, zeros for an argument the result ignores): an elementwise
/// op's result has its operands' type, a destination-style op's its
/// init's, and tensor.empty's sizes come from the dims it reads.
static void refineOtherResultTypes(Operation *op) {
  if (op->hasTrait<OpTrait::SameOperandsAndResultType>() &&
      op->getNumOperands() > 0) {
    for (OpResult r : op->getResults())
      r.setType(op->getOperand(0).getType());
    return;
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    for (auto [r, init] : llvm::zip(op->getResults(), dps.getDpsInits()))
      r.setType(init.getType());
    return;
  }
  auto empty = dyn_cast<tensor::EmptyOp>(op);
  if (!empty)
    return;
  SmallVector<int64_t> shape(empty.getType().getShape());
  auto sizes = empty.getDynamicSizes();
  for (size_t i = 0, next = 0; i < shape.size(); ++i) {
    if (!ShapedType::isDynamic(shape[i]))
      continue;
    auto dim = sizes[next++].getDefiningOp<tensor::DimOp>();
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    auto source =
        dim ? dyn_cast<RankedTensorType>(dim.getSource().getType()) : nullptr;
    if (index && source && *index < source.getRank())
      shape[i] = source.getDimSize(*index);
  }
  empty.getResult().setType(
      RankedTensorType::get(shape, empty.getType().getElementType()));
}

/// A clone of `func` in a scratch module with its arguments at `shapes`
/// (result types of its ops still the original ones).
static std::pair<OwningOpRef<ModuleOp>, func::FuncOp>
cloneAtShapes(func::FuncOp func,
              const std::vector<std::vector<int64_t>> &shapes) {
  OpBuilder builder(func.getContext());
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
  builder.setInsertionPointToStart(scratch->getBody());
  auto clone = cast<func::FuncOp>(builder.clone(*func));
  Block &entry = clone.getBody().front();
  for (auto [arg, shape] : llvm::zip(entry.getArguments(), shapes)) {
    auto t = cast<RankedTensorType>(arg.getType());
    arg.setType(RankedTensorType::get(shape, t.getElementType()));
  }
  return {std::move(scratch), clone};
}

/// Whether every operand of `op` is a static ranked tensor (or not a
/// tensor): refinedResultType needs that.
static bool staticOperands(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return !r || r.hasStaticShape();
  });
}

namespace attn {

uint64_t materializedBytes(func::FuncOp func,
                           const std::vector<std::vector<int64_t>> &shapes,
                           unsigned bytesPerElement) {
  auto [scratch, clone] = cloneAtShapes(func, shapes);
  uint64_t total = 0;
  auto count = [&](ArrayRef<int64_t> shape, Type elt, uint64_t copies) {
    uint64_t esz = bytesPerElement
                       ? bytesPerElement
                       : std::max<uint64_t>(1, elt.getIntOrFloatBitWidth() / 8);
    std::optional<uint64_t> b = checkedBytes(shape, esz);
    for (uint64_t i = 0; i < copies; ++i)
      total = addBytes(total, b ? *b : std::numeric_limits<uint64_t>::max());
  };
  clone.walk([&](Operation *op) {
    if (!isa<mlir::attn::AttnDialect>(op->getDialect()) || !staticOperands(op))
      return;
    refineResultTypes(op);
    for (Type t : op->getResultTypes()) {
      auto rt = cast<RankedTensorType>(t);
      count(rt.getShape(), rt.getElementType(), 1);
    }
    if (auto att = dyn_cast<mlir::attn::AttentionOp>(op)) {
      auto q = cast<RankedTensorType>(att.getQ().getType()).getShape();
      auto k = cast<RankedTensorType>(att.getK().getType()).getShape();
      uint64_t maps =
          2 + (att.getKqConvPre() ? 1 : 0) + (att.getHeadMixPre() ? 1 : 0) +
          (att.getKqConvPost() ? 1 : 0) + (att.getHeadMixPost() ? 1 : 0);
      count({q[0], q[1], q[2], k[2]}, Float32Type::get(op->getContext()), maps);
    }
  });
  return total;
}

llvm::Error verifyAtShapes(func::FuncOp func,
                           const std::vector<std::vector<int64_t>> &shapes,
                           std::vector<std::vector<int64_t>> *resultShapes) {
  auto [scratch, clone] = cloneAtShapes(func, shapes);
  std::string messages;
  llvm::raw_string_ostream os(messages);
  ScopedDiagnosticHandler handler(func.getContext(), [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag.str() << "\n";
    return success();
  });
  bool failedAny = false;
  clone.walk([&](Operation *op) {
    if (failedAny)
      return;
    if (!isa<mlir::attn::AttnDialect>(op->getDialect()))
      return refineOtherResultTypes(op);
    refineResultTypes(op);
    if (failed(mlir::verify(op, /*verifyRecursively=*/false)))
      failedAny = true;
  });
  if (!failedAny) {
    if (!resultShapes)
      return llvm::Error::success();
    auto ret = cast<func::ReturnOp>(clone.getBody().front().getTerminator());
    resultShapes->assign(ret.getNumOperands(), {});
    for (auto [shape, v] : llvm::zip(*resultShapes, ret.getOperands()))
      if (auto t = dyn_cast<RankedTensorType>(v.getType());
          t && t.hasStaticShape())
        shape.assign(t.getShape().begin(), t.getShape().end());
    return llvm::Error::success();
  }
  return llvm::createStringError("the inputs' shapes do not fit the program: " +
                                 llvm::StringRef(messages).rtrim().str());
}

} // namespace attn
