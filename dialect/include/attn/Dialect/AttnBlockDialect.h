//===- AttnBlockDialect.h - block program dialect ---------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNBLOCKDIALECT_H
#define ATTN_DIALECT_ATTNBLOCKDIALECT_H

#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/AttnBlockDialect.h.inc"
#include "attn/Dialect/AttnBlockEnums.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/AttnBlockOps.h.inc"

#endif // ATTN_DIALECT_ATTNBLOCKDIALECT_H
