//===- ShapeSpecialize.cpp - verify a program at concrete shapes ----------===//

#include "ShapeSpecialize.h"

#include "attn/Memory.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// The result type a single-result attn op has when its operands have
/// static types.
static Type refinedResultType(Operation *op) {
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  Type resultType = op->getResult(0).getType();
  Type elt = cast<RankedTensorType>(resultType).getElementType();
  if (auto scores = dyn_cast<mlir::attn::ScoresOp>(op)) {
    ArrayRef<int64_t> q = shapeOf(scores.getQ()), k = shapeOf(scores.getK());
    return RankedTensorType::get({q[0], q[1], q[2], k[2]}, elt);
  }
  if (isa<mlir::attn::WeightedSumOp, mlir::attn::AttentionOp>(op)) {
    ArrayRef<int64_t> p = shapeOf(op->getOperand(0));
    ArrayRef<int64_t> v =
        shapeOf(isa<mlir::attn::WeightedSumOp>(op) ? op->getOperand(1)
                                                   : op->getOperand(2));
    return RankedTensorType::get({p[0], p[1], p[2], v[3]}, elt);
  }
  // Every other attn op keeps its first operand's shape.
  return RankedTensorType::get(shapeOf(op->getOperand(0)), elt);
}

/// The result types an attn op has when its operands have static types:
/// every result for the ops listed here, else the first one only (the
/// others keep their types).
static SmallVector<Type> refinedResultTypes(Operation *op) {
  // A vector-Jacobian product: result i is the gradient of operand i, in
  // its own element type.
  if (isa<mlir::attn::ScoresGradOp, mlir::attn::KqConvGradOp,
          mlir::attn::HeadMixGradOp>(op)) {
    SmallVector<Type> types;
    for (auto [result, operand] :
         llvm::zip(op->getResults(), op->getOperands()))
      types.push_back(RankedTensorType::get(
          cast<RankedTensorType>(operand.getType()).getShape(),
          cast<RankedTensorType>(result.getType()).getElementType()));
    return types;
  }
  return {refinedResultType(op)};
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
    for (auto [t, result] :
         llvm::zip_first(refinedResultTypes(op), op->getResults())) {
      result.setType(t);
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
                           std::vector<int64_t> *resultShape) {
  auto [scratch, clone] = cloneAtShapes(func, shapes);
  std::string messages;
  llvm::raw_string_ostream os(messages);
  ScopedDiagnosticHandler handler(func.getContext(), [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag.str() << "\n";
    return success();
  });
  bool failedAny = false;
  clone.walk([&](Operation *op) {
    if (failedAny || !isa<mlir::attn::AttnDialect>(op->getDialect()))
      return;
    for (auto [t, result] :
         llvm::zip_first(refinedResultTypes(op), op->getResults()))
      result.setType(t);
    if (failed(mlir::verify(op, /*verifyRecursively=*/false)))
      failedAny = true;
  });
  if (!failedAny) {
    if (!resultShape)
      return llvm::Error::success();
    auto ret = cast<func::ReturnOp>(clone.getBody().front().getTerminator());
    auto t = dyn_cast<RankedTensorType>(ret.getOperand(0).getType());
    resultShape->clear();
    if (t && t.hasStaticShape())
      resultShape->assign(t.getShape().begin(), t.getShape().end());
    return llvm::Error::success();
  }
  return llvm::createStringError("the inputs' shapes do not fit the program: " +
                                 llvm::StringRef(messages).rtrim().str());
}

} // namespace attn
