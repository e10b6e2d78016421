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

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
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

/// What `python -c script` prints, "" when it cannot run or fails.
std::string pythonOutput(StringRef python, StringRef script) {
  if (python.empty())
    return "";
  auto exe = python.contains('/') ? ErrorOr<std::string>(python.str())
                                  : sys::findProgramByName(python);
  if (!exe || !sys::fs::can_execute(*exe))
    return "";
  SmallString<128> out;
  if (sys::fs::createTemporaryFile("attn-python", "txt", out))
    return "";
  // Warnings on stderr go to the null device ("").
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(out),
                                          StringRef("")};
  int rc = sys::ExecuteAndWait(*exe, {*exe, "-c", script}, std::nullopt,
                               redirects, /*SecondsToWait=*/30);
  auto text = MemoryBuffer::getFile(out);
  sys::fs::remove(out);
  if (rc != 0 || !text)
    return "";
  return (*text)->getBuffer().trim().str();
}

/// "13.0", or "missing" without a release.
std::string releaseText(const mlir::attn::PtxasFacts &f) {
  return f.release ? std::to_string(f.release->first) + "." +
                         std::to_string(f.release->second)
                   : "missing";
}

bool registerWgmmaPtxas(const mlir::attn::PtxasFacts &f) {
  return mlir::attn::checkPtxasForRegisterWgmma(f, "").empty();
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

std::string attn::findExtraPtxas(StringRef python) {
  if (const char *env = std::getenv("ATTN_PTXAS"); env && *env)
    return StringRef(env) == "none" ? "" : env;
  // nvidia-cuda-nvcc puts its tools in the `nvidia` namespace package.
  return pythonOutput(python,
                      "import importlib.util as u, os\n"
                      "s = u.find_spec('nvidia')\n"
                      "for d in (s.submodule_search_locations if s else []):\n"
                      "    p = os.path.join(d, 'cu13', 'bin', 'ptxas')\n"
                      "    if os.access(p, os.X_OK):\n"
                      "        print(p)\n"
                      "        break\n");
}

attn::ChosenToolkit attn::chooseToolkit(StringRef base, StringRef workDir,
                                        StringRef python) {
  ChosenToolkit chosen{base.str(), ""};
  const PtxasVersion &own = ptxasVersion(base);
  if (registerWgmmaPtxas(own.facts))
    return chosen;
  std::string extra = findExtraPtxas(python);
  if (extra.empty())
    return chosen;
  SmallString<256> real;
  if (sys::fs::real_path(extra, real)) {
    chosen.note = "ATTN_PTXAS / nvidia-cuda-nvcc's ptxas " + extra +
                  " does not exist: compiling with " + base.str();
    return chosen;
  }
  // A toolkit of its own per ptxas: bin/ptxas and nvvm/ (libdevice) links.
  std::string name =
      "toolkit-" +
      toHex(SHA256::hash(arrayRefFromStringRef((real + "\n" + base).str())))
          .substr(0, 16);
  SmallString<256> dir(workDir), bin, ptxas, nvvm, baseNvvm(base);
  sys::path::append(dir, name);
  bin = dir;
  sys::path::append(bin, "bin");
  ptxas = bin;
  sys::path::append(ptxas, "ptxas");
  nvvm = dir;
  sys::path::append(nvvm, "nvvm");
  sys::path::append(baseNvvm, "nvvm");
  auto link = [](StringRef to, StringRef at) {
    std::error_code ec = sys::fs::create_link(to, at);
    return !ec || ec == errc::file_exists;
  };
  if (sys::fs::create_directories(bin) || !link(real, ptxas) ||
      (sys::fs::is_directory(baseNvvm) && !link(baseNvvm, nvvm))) {
    chosen.note = "cannot make a toolkit with " + extra + " under " +
                  workDir.str() + ": compiling with " + base.str();
    return chosen;
  }
  const PtxasVersion &found = ptxasVersion(dir);
  if (!registerWgmmaPtxas(found.facts)) {
    chosen.note = extra + " is no newer (" + found.facts.where +
                  "): compiling with " + base.str();
    return chosen;
  }
  chosen.path = dir.str().str();
  chosen.note = "ptxas " + releaseText(found.facts) + " from " + extra + " (" +
                base.str() + "'s is " + releaseText(own.facts) + ")";
  return chosen;
}
