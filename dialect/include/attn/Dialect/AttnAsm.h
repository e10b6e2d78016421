//===- AttnAsm.h - custom assembly directives of the attn ops ---*- C++ -*-===//
//
// Pieces of the declarative assembly formats (AttnOps.td) that ODS alone
// parses too leniently: an operand inside a keyword group such as `gate(..)`
// is Optional in ODS, so `gate()` would parse as "no gate" and the feature
// would silently disappear; an I64 attribute parsed as a signless integer
// accepts 2^63 .. 2^64-1 and wraps them to negative values.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNASM_H
#define ATTN_DIALECT_ATTNASM_H

#include "mlir/IR/OpImplementation.h"

#include <optional>

namespace mlir::attn {

/// `custom<Required>($x)` for an Optional operand inside a keyword group:
/// once the keyword was read, the operand must be there.
ParseResult
parseRequired(OpAsmParser &parser,
              std::optional<OpAsmParser::UnresolvedOperand> &operand);
void printRequired(OpAsmPrinter &printer, Operation *op, Value operand);

/// `custom<SignedI64>($attr)`: a decimal integer in [-2^63, 2^63 - 1] as an
/// i64 IntegerAttr; anything outside that range is a parse error.
ParseResult parseSignedI64(OpAsmParser &parser, IntegerAttr &attr);
void printSignedI64(OpAsmPrinter &printer, Operation *op, IntegerAttr attr);

/// `custom<HeadNormGradTypes>(...)`: attn.head_norm_grad's types as the
/// functional type `(input, gamma[, gate_w, gate_b], grad) -> (input_grad,
/// gamma_grad[, gate_w_grad, gate_b_grad])`. functional-type(operands,
/// results) cannot split the results into their segments; here five operand
/// types give the gate's operands and four result types its gradients.
ParseResult parseHeadNormGradTypes(OpAsmParser &parser, Type &input,
                                   Type &gamma, Type &gateW, Type &gateB,
                                   Type &grad, Type &inputGrad, Type &gammaGrad,
                                   Type &gateWGrad, Type &gateBGrad);
void printHeadNormGradTypes(OpAsmPrinter &printer, Operation *op, Type input,
                            Type gamma, Type gateW, Type gateB, Type grad,
                            Type inputGrad, Type gammaGrad, Type gateWGrad,
                            Type gateBGrad);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNASM_H
