//===- AttnBlockBase.td - the block program dialect --------*- tablegen -*-===//
//
// The attn_block dialect definition, shared by its ops (AttnBlockOps.td,
// AttnBlockGpuOps.td) and its attributes and types (AttnBlockAttrs.td).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BLOCK_BASE_TD
#define ATTN_BLOCK_BASE_TD

include "mlir/IR/OpBase.td"

def AttnBlock_Dialect : Dialect {
  let name = "attn_block";
  let summary = "Block-level (tile) programs: attn's fused-kernel IR";
  let cppNamespace = "::mlir::attn_block";
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

#endif // ATTN_BLOCK_BASE_TD
