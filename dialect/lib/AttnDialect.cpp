//===- AttnDialect.cpp - attn dialect registration ------------------------===//

#include "attn/Dialect/AttnDialect.h"
#include "attn/Dialect/AttnAsm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/AttnDialect.cpp.inc"
#include "attn/Dialect/AttnEnums.cpp.inc"
#include "attn/Dialect/AttnInterfaces.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/AttnOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "attn/Dialect/AttnOps.cpp.inc"
