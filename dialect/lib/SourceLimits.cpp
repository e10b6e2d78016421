//===- SourceLimits.cpp - bounds checked on program text before parsing ---===//

#include "attn/Dialect/SourceLimits.h"

#include "llvm/ADT/Twine.h"

namespace mlir::attn {

std::optional<std::string>
checkSourceNesting(llvm::StringRef text, llvm::StringRef name, unsigned limit) {
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '/':
      if (i + 1 < n && text[i + 1] == '/')
        while (i + 1 < n && text[i + 1] != '\n')
          ++i;
      break;
    case '"':
      // A string literal: brackets inside do not nest; it ends at the next
      // unescaped quote or the end of its line, as the lexer reads it.
      for (++i; i < n && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i < n && text[i] == '\n')
        --i;
      break;
    case '{':
    case '(':
    case '[':
    case '<':
      if (++depth > limit)
        return (llvm::Twine(name) + ":" + llvm::Twine(line) + ":" +
                llvm::Twine(i - lineStart + 1) +
                ": brackets nested deeper than " + llvm::Twine(limit) +
                " levels: refused before parsing (the parser recurses once "
                "per level and would overflow its stack)")
            .str();
      break;
    case '}':
    case ')':
    case ']':
    case '>':
      // `->` is an arrow, not a closing bracket.
      if (depth > 0 && !(c == '>' && i > 0 && text[i - 1] == '-'))
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

} // namespace mlir::attn
