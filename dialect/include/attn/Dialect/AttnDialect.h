//===- AttnDialect.h - attn dialect -----------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNDIALECT_H
#define ATTN_DIALECT_ATTNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/AttnDialect.h.inc"
#include "attn/Dialect/AttnEnums.h.inc"
#include "attn/Dialect/AttnInterfaces.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTNDIALECT_H
