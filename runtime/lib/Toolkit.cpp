//===- Toolkit.cpp - ask the CUDA toolkit's ptxas its release -------------===//
//
// The wgmma forms read a dot's A operand from registers (q~ and P in PaTH's
// attention kernel). ptxas 13.0 may hand those registers to other values
// before the asynchronous wgmma has read them, so some rows of a product
// come out wrong while the PTX is correct (the same PTX is right through
// ptxas 13.5, and through 13.0 at -O0): a form that depends on it needs to
// know the release. docs/targets.md.
//
//===----------------------------------------------------------------------===//

#include "attn/Toolkit.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <mutex>
#include <optional>

using namespace llvm;

namespace {

attn::PtxasVersion readVersion(StringRef ptxas) {
  attn::PtxasVersion v;
  mlir::attn::PtxasFacts &f = v.facts;
  if (!sys::fs::can_execute(ptxas)) {
    f.where = "no ptxas at " + ptxas.str();
    return v;
  }
  SmallString<128> log;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("attn-ptxas-version", "txt", log)) {
    f.where = "cannot create a temporary file: " + ec.message();
    return v;
  }
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string err;
  int rc = sys::ExecuteAndWait(ptxas, {ptxas, "--version"}, std::nullopt,
                               redirects, /*SecondsToWait=*/30, 0, &err);
  auto text = MemoryBuffer::getFile(log);
  sys::fs::remove(log);
  if (rc != 0 || !text) {
    f.where =
        ptxas.str() + " --version failed" + (err.empty() ? "" : ": " + err);
    return v;
  }
  StringRef s = (*text)->getBuffer();
  v.text = s.str();
  size_t at = s.find("release ");
  int major = 0, minor = 0;
  StringRef rest = at == StringRef::npos ? "" : s.substr(at + 8);
  if (rest.consumeInteger(10, major) || !rest.consume_front(".") ||
      rest.consumeInteger(10, minor)) {
    f.where = ptxas.str() + " --version names no release";
    return v;
  }
  f.release = std::pair(major, minor);
  f.where = ptxas.str();
  return v;
}

} // namespace

const attn::PtxasVersion &attn::ptxasVersion(StringRef toolkit) {
  SmallString<256> ptxas(toolkit);
  sys::path::append(ptxas, "bin", "ptxas");
  static std::mutex mu;
  static StringMap<PtxasVersion> seen;
  std::lock_guard<std::mutex> lock(mu);
  auto it = seen.find(ptxas);
  if (it == seen.end())
    it = seen.insert({ptxas, readVersion(ptxas)}).first;
  // StringMap's values stay where they are when others are inserted.
  return it->second;
}

mlir::attn::PtxasFacts attn::probePtxas(StringRef toolkit) {
  return ptxasVersion(toolkit).facts;
}
