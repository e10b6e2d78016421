//===- PtxasVersion.cpp - which ptxas assembles register-A wgmma ----------===//
//
// The wgmma forms read a dot's A operand from registers (q~ and P in PaTH's
// attention kernel). ptxas 13.0 may hand those registers to other values
// before the asynchronous wgmma has read them, so some rows of a product
// come out wrong while the PTX is correct (the same PTX is right through
// ptxas 13.5, and through 13.0 at -O0). A form that depends on it asks for
// a fixed ptxas here instead of running silently wrong.
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

/// `ptxas --version`'s "release X.Y", or why there is none.
std::string readRelease(StringRef ptxas, std::optional<PtxasRelease> &out) {
  if (!sys::fs::can_execute(ptxas))
    return "no ptxas at " + ptxas.str();
  SmallString<128> log;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("attn-ptxas-version", "txt", log))
    return "cannot create a temporary file: " + ec.message();
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string err;
  int rc = sys::ExecuteAndWait(ptxas, {ptxas, "--version"}, std::nullopt,
                               redirects, /*SecondsToWait=*/30, 0, &err);
  auto text = MemoryBuffer::getFile(log);
  sys::fs::remove(log);
  if (rc != 0 || !text)
    return ptxas.str() + " --version failed" + (err.empty() ? "" : ": " + err);
  StringRef s = (*text)->getBuffer();
  size_t at = s.find("release ");
  if (at == StringRef::npos)
    return ptxas.str() + " --version names no release";
  StringRef rest = s.substr(at + 8);
  PtxasRelease r;
  if (rest.consumeInteger(10, r.major) || !rest.consume_front(".") ||
      rest.consumeInteger(10, r.minor))
    return ptxas.str() + " --version names no release";
  out = r;
  return "";
}

} // namespace

std::string mlir::attn::checkPtxasForRegisterWgmma(StringRef toolkit,
                                                   StringRef what) {
  SmallString<256> ptxas(toolkit);
  sys::path::append(ptxas, "bin", "ptxas");
  static std::mutex mu;
  static StringMap<std::pair<std::string, std::optional<PtxasRelease>>> seen;
  std::lock_guard<std::mutex> lock(mu);
  auto it = seen.find(ptxas);
  if (it == seen.end()) {
    std::optional<PtxasRelease> r;
    std::string why = readRelease(ptxas, r);
    it = seen.insert({ptxas, {why, r}}).first;
  }
  const auto &[why, release] = it->second;
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
