//===- PtxasVersion.cpp - which ptxas assembles register-A wgmma ----------===//
//
// The wgmma forms read a dot's A operand from registers (q~ and P in PaTH's
// attention kernel). ptxas 13.0 may hand those registers to other values
// before the asynchronous wgmma has read them, so some rows of a product
// come out wrong while the PTX is correct (the same PTX is right through
// ptxas 13.5, and through 13.0 at -O0). A form that depends on it asks for
// a fixed ptxas here instead of running silently wrong. The version text
// also keys the runtime's disk cache (ptxasVersionText).
//
//===----------------------------------------------------------------------===//

#include "attn/Passes/Passes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <mutex>
#include <optional>

using namespace llvm;

namespace {

struct PtxasRelease {
  int major = 0, minor = 0;
};

/// What `ptxas --version` said: its text (empty when it did not run) and
/// the release in it, or why there is none.
struct PtxasVersion {
  std::string why, text;
  std::optional<PtxasRelease> release;
};

PtxasVersion readVersion(StringRef ptxas) {
  PtxasVersion v;
  if (!sys::fs::can_execute(ptxas)) {
    v.why = "no ptxas at " + ptxas.str();
    return v;
  }
  SmallString<128> log;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("attn-ptxas-version", "txt", log)) {
    v.why = "cannot create a temporary file: " + ec.message();
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
    v.why = ptxas.str() + " --version failed" + (err.empty() ? "" : ": " + err);
    return v;
  }
  StringRef s = (*text)->getBuffer();
  v.text = s.str();
  size_t at = s.find("release ");
  PtxasRelease r;
  StringRef rest = at == StringRef::npos ? "" : s.substr(at + 8);
  if (rest.consumeInteger(10, r.major) || !rest.consume_front(".") ||
      rest.consumeInteger(10, r.minor)) {
    v.why = ptxas.str() + " --version names no release";
    return v;
  }
  v.release = r;
  return v;
}

/// readVersion of `toolkit`'s bin/ptxas, once per path and process.
const PtxasVersion &versionOf(StringRef toolkit, SmallString<256> &ptxas) {
  ptxas = toolkit;
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

} // namespace

std::string mlir::attn::checkPtxasForRegisterWgmma(StringRef toolkit,
                                                   StringRef what) {
  SmallString<256> ptxas;
  const PtxasVersion &v = versionOf(toolkit, ptxas);
  const std::string &why = v.why;
  const std::optional<PtxasRelease> &release = v.release;
  std::string need = std::to_string(kPtxasRegisterWgmmaMajor) + "." +
                     std::to_string(kPtxasRegisterWgmmaMinor);
  if (!release)
    return what.str() + " needs ptxas " + need + " or newer (" + why + ")";
  if (release->major > kPtxasRegisterWgmmaMajor ||
      (release->major == kPtxasRegisterWgmmaMajor &&
       release->minor >= kPtxasRegisterWgmmaMinor))
    return "";
  return what.str() + " needs ptxas " + need + " or newer, found " +
         std::to_string(release->major) + "." + std::to_string(release->minor) +
         " at " + ptxas.str().str() +
         " (it reuses a register-A wgmma's registers before the wgmma has "
         "read them; point CUDA_HOME or toolkit= at a newer toolkit)";
}

std::string mlir::attn::ptxasVersionText(StringRef toolkit) {
  SmallString<256> ptxas;
  return versionOf(toolkit, ptxas).text;
}
