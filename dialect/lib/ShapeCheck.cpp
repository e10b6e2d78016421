//===- ShapeCheck.cpp - symbolic shape checking for verifiers -------------===//

#include "attn/Dialect/ShapeCheck.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

static bool parseLiteral(StringRef sym, int64_t &value) {
  return !sym.getAsInteger(10, value);
}

/// "kq_conv_pre.c_q" is the extent c_q private to kq_conv_pre; messages show
/// the part after the dot.
static StringRef displayName(StringRef sym) {
  return sym.contains('.') ? sym.rsplit('.').second : sym;
}

int64_t ShapeEnv::get(StringRef sym) const {
  int64_t literal;
  if (parseLiteral(sym, literal))
    return literal;
  auto it = values.find(sym);
  return it == values.end() ? ShapedType::kDynamic : it->second;
}

std::string ShapeEnv::describe(ArrayRef<StringRef> dims) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(dims, os, [&](StringRef d) { os << displayName(d); });
  os << "] = [";
  llvm::interleaveComma(dims, os, [&](StringRef d) {
    int64_t v = get(d);
    if (ShapedType::isDynamic(v))
      os << "?";
    else
      os << v;
  });
  os << "]";
  return s;
}

LogicalResult ShapeEnv::bind(StringRef name, Type type,
                             ArrayRef<StringRef> dims) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped)
    return op->emitOpError()
           << "'" << name << "' must be a ranked tensor, got " << type;
  if (shaped.getRank() != static_cast<int64_t>(dims.size()))
    return op->emitOpError()
           << "'" << name << "' must have rank " << dims.size() << " "
           << describe(dims) << ", got " << type;
  // Check every dim against the bindings made so far before binding any new
  // ones, so the message shows what was expected before this operand.
  for (auto [idx, sym] : llvm::enumerate(dims)) {
    int64_t have = shaped.getDimSize(idx);
    int64_t want = get(sym);
    if (ShapedType::isDynamic(have) || ShapedType::isDynamic(want) ||
        have == want)
      continue;
    InFlightDiagnostic diag = op->emitOpError();
    diag << "'" << name << "' must have shape " << describe(dims) << ", got "
         << type << " (dim " << idx << " '" << displayName(sym) << "' is "
         << want;
    int64_t literal;
    if (!parseLiteral(sym, literal))
      diag << " from " << origin.lookup(sym);
    diag << ")";
    return diag;
  }
  for (auto [idx, sym] : llvm::enumerate(dims)) {
    int64_t have = shaped.getDimSize(idx);
    int64_t literal;
    if (ShapedType::isDynamic(have) || parseLiteral(sym, literal) ||
        values.count(sym))
      continue;
    values[sym] = have;
    origin[sym] = ("'" + name + "'").str();
  }
  return success();
}

LogicalResult mlir::attn::requireStatic(Operation *op, int64_t value,
                                        StringRef what) {
  if (ShapedType::isDynamic(value))
    return op->emitOpError() << what << " must be static";
  if (value < 1)
    return op->emitOpError() << what << " must be >= 1, got " << value;
  return success();
}
