//===- AttnInterfaces.td - attn op interfaces --------------*- tablegen -*-===//
//
// VJPOpInterface: an op states its vector-Jacobian product in attn ops, so
// `attn-grad` differentiates programs without knowing any op
// (docs/training.md).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INTERFACES_TD
#define ATTN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Attn_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let description = [{
    An op with one result whose vector-Jacobian product is a program of attn
    ops (the `*_grad` ops and `attn.rope ... inverse`). Given the cotangent
    `grad` of the result, `buildVJP` emits that program at the builder's
    insertion point and returns one cotangent per operand, in operand order:
    a null value for an operand that is not differentiable (an integer
    positions tensor); absent optional operands have no entry.
  }];
  let cppNamespace = "::mlir::attn";
  let methods = [
    InterfaceMethod<
      "Emits the VJP of the result for cotangent `grad`; returns one cotangent per operand (null: none).",
      "::llvm::SmallVector<::mlir::Value>", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Value":$grad)>
  ];
}

#endif // ATTN_INTERFACES_TD
