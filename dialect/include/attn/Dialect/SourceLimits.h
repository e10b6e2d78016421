//===- SourceLimits.h - text bounds checked before parsing ------*- C++ -*-===//
//
// MLIR's parser recurses once per nested region, operand list, attribute
// or type: text nested thousands deep overflows the stack of the thread
// that parses it and kills the process. Every place attn parses a user's
// program (the runtime's compile, attn-opt, attn-run, attn-fuzz) first
// bounds the nesting depth with this scan, which needs no recursion.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_SOURCELIMITS_H
#define ATTN_DIALECT_SOURCELIMITS_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::attn {

/// The deepest bracket nesting (`{ ( [ <` together) a program may have.
/// Real programs stay under 20; each level costs the parser up to about
/// 4 KiB of stack, so this stays far below an 8 MiB stack.
inline constexpr unsigned kMaxSourceNesting = 256;

/// Nothing when `text` nests brackets at most `limit` deep (outside string
/// literals and `//` comments); else the message for the first bracket
/// past it, as "NAME:LINE:COL: ..." with `name` the buffer's name.
std::optional<std::string>
checkSourceNesting(llvm::StringRef text, llvm::StringRef name,
                   unsigned limit = kMaxSourceNesting);

} // namespace mlir::attn

#endif // ATTN_DIALECT_SOURCELIMITS_H
