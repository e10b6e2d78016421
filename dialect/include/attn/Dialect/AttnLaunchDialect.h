//===- AttnLaunchDialect.h - launch plans as data ---------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNLAUNCHDIALECT_H
#define ATTN_DIALECT_ATTNLAUNCHDIALECT_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "attn/Dialect/AttnLaunchDialect.h.inc"
#include "attn/Dialect/AttnLaunchEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnLaunchAttrs.h.inc"

#endif // ATTN_DIALECT_ATTNLAUNCHDIALECT_H
