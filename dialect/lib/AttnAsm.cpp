//===- AttnAsm.cpp - custom assembly directives of the attn ops -----------===//

#include "attn/Dialect/AttnAsm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

ParseResult mlir::attn::parseRequired(
    OpAsmParser &parser,
    std::optional<OpAsmParser::UnresolvedOperand> &operand) {
  OpAsmParser::UnresolvedOperand value;
  // parseOperand reports "expected SSA operand" at `)` of an empty group.
  if (parser.parseOperand(value))
    return failure();
  operand = value;
  return success();
}

void mlir::attn::printRequired(OpAsmPrinter &printer, Operation *,
                               Value operand) {
  printer << operand;
}

ParseResult mlir::attn::parseSignedI64(OpAsmParser &parser, IntegerAttr &attr) {
  SMLoc loc = parser.getCurrentLocation();
  APInt value;
  OptionalParseResult parsed = parser.parseOptionalInteger(value);
  if (!parsed.has_value())
    return parser.emitError(loc, "expected an integer");
  if (failed(*parsed))
    return failure();
  // parseOptionalInteger yields the magnitude's bits with the sign applied;
  // anything that does not fit a signed 64-bit value is refused rather
  // than wrapped.
  if (value.getSignificantBits() > 64)
    return parser.emitError(loc, "integer ")
           << llvm::toString(value, 10, /*Signed=*/true)
           << " does not fit in a signed 64-bit attribute "
           << "(range -9223372036854775808 .. 9223372036854775807)";
  attr = parser.getBuilder().getI64IntegerAttr(value.getSExtValue());
  return success();
}

void mlir::attn::printSignedI64(OpAsmPrinter &printer, Operation *,
                                IntegerAttr attr) {
  printer << attr.getInt();
}

ParseResult mlir::attn::parseHeadNormGradTypes(OpAsmParser &parser, Type &input,
                                               Type &gamma, Type &gateW,
                                               Type &gateB, Type &grad,
                                               Type &inputGrad, Type &gammaGrad,
                                               Type &gateWGrad,
                                               Type &gateBGrad) {
  SMLoc loc = parser.getCurrentLocation();
  FunctionType fn;
  if (parser.parseType(fn))
    return failure();
  ArrayRef<Type> ins = fn.getInputs(), outs = fn.getResults();
  if ((ins.size() != 3 && ins.size() != 5) ||
      (outs.size() != 2 && outs.size() != 4))
    return parser.emitError(loc)
           << "expected (input, gamma[, gate_w, gate_b], grad) -> "
              "(input_grad, gamma_grad[, gate_w_grad, gate_b_grad]) types, got "
           << ins.size() << " -> " << outs.size();
  input = ins.front();
  gamma = ins[1];
  grad = ins.back();
  if (ins.size() == 5) {
    gateW = ins[2];
    gateB = ins[3];
  }
  inputGrad = outs[0];
  gammaGrad = outs[1];
  if (outs.size() == 4) {
    gateWGrad = outs[2];
    gateBGrad = outs[3];
  }
  return success();
}

void mlir::attn::printHeadNormGradTypes(OpAsmPrinter &printer, Operation *,
                                        Type input, Type gamma, Type gateW,
                                        Type gateB, Type grad, Type inputGrad,
                                        Type gammaGrad, Type gateWGrad,
                                        Type gateBGrad) {
  auto present = [](ArrayRef<Type> types) {
    return llvm::to_vector(llvm::make_filter_range(
        types, [](Type t) { return static_cast<bool>(t); }));
  };
  printer.printFunctionalType(
      TypeRange(present({input, gamma, gateW, gateB, grad})),
      TypeRange(present({inputGrad, gammaGrad, gateWGrad, gateBGrad})));
}

ParseResult mlir::attn::parseScoresGradResults(OpAsmParser &parser, Type &dq,
                                               Type &dk, Type &dw, Type &dbeta,
                                               Type &dg) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<Type> types;
  if (parser.parseTypeList(types))
    return failure();
  if (types.size() < 2 || types.size() > 5)
    return parser.emitError(loc, "expected 2 to 5 result types "
                                 "(dq, dk [, dw, dbeta] [, dg]), got ")
           << types.size();
  dq = types[0];
  dk = types[1];
  // 3: the gate's dg; 4: the path's dw, dbeta; 5: both.
  if (types.size() >= 4) {
    dw = types[2];
    dbeta = types[3];
  }
  if (types.size() % 2 == 1)
    dg = types.back();
  return success();
}

void mlir::attn::printScoresGradResults(OpAsmPrinter &printer, Operation *,
                                        Type dq, Type dk, Type dw, Type dbeta,
                                        Type dg) {
  SmallVector<Type> types = {dq, dk};
  for (Type t : {dw, dbeta, dg})
    if (t)
      types.push_back(t);
  llvm::interleaveComma(types, printer);
}
