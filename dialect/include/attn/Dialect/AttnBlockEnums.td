//===- AttnBlockEnums.td - block program enums -------------*- tablegen -*-===//

#ifndef ATTN_BLOCK_ENUMS_TD
#define ATTN_BLOCK_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def AttnBlock_ReduceKind : I32EnumAttr<"ReduceKind", "tile reduction", [
    I32EnumAttrCase<"max", 0>, I32EnumAttrCase<"sum", 1>]> {
  let cppNamespace = "::mlir::attn_block";
}

#endif // ATTN_BLOCK_ENUMS_TD
