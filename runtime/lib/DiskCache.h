//===- DiskCache.h - compiled GPU images on disk ----------------*- C++ -*-===//
//
// $ATTN_CACHE_DIR (default $XDG_CACHE_HOME/attn, else ~/.cache/attn) holds
// one file per compiled image, named by a hash of the key (gpuImageKey:
// compiler version, target, format, ptxas's version for a cubin and the
// kernels' NVVM-level IR). A file is a
// header (magic, payload size, payload hash) and the payload; it is written
// to a temporary name and renamed, so readers never see half a file, and
// a file whose header does not match its payload is ignored and rewritten.
// ATTN_CACHE_DIR=off disables the disk cache.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_DISKCACHE_H
#define ATTN_RUNTIME_DISKCACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace attn::detail {

/// The key of a GPU image of `module` (its NVVM-level IR, printed) for
/// `chip`: a cubin (`cubin`, made by `toolkit`'s ptxas, whose
/// `ptxas --version` text it holds) or PTX.
std::string gpuImageKey(llvm::StringRef chip, bool cubin,
                        llvm::StringRef toolkit, llvm::StringRef module);

/// The cache directory, or "" when disabled.
std::string cacheDirectory();

/// The payload stored under `key`, if a valid entry exists.
std::optional<std::vector<char>> cacheLoad(llvm::StringRef key);

/// Stores `payload` under `key`; failures are ignored (the cache is an
/// optimisation, never a reason for a compile to fail).
void cacheStore(llvm::StringRef key, llvm::ArrayRef<char> payload);

} // namespace attn::detail

#endif // ATTN_RUNTIME_DISKCACHE_H
