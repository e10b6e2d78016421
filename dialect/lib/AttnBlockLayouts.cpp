//===- AttnBlockLayouts.cpp - tile layouts and shared buffers -------------===//
//
// Verifiers of the layout attributes and of the shared-buffer type, and the
// rank rules that tie a tile's encoding to its shape.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn_block;

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnBlockAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/AttnBlockTypes.cpp.inc"

namespace {
/// Prints layouts under short aliases (#blocked, #mma, #dot_op, ...), as
/// Triton does, so that kernels stay readable.
struct LayoutAliases : OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    StringRef name = TypeSwitch<Attribute, StringRef>(attr)
                         .Case([](BlockedLayoutAttr) { return "blocked"; })
                         .Case([](MmaLayoutAttr) { return "mma"; })
                         .Case([](DotOperandLayoutAttr) { return "dot_op"; })
                         .Case([](SliceLayoutAttr) { return "slice"; })
                         .Case([](SharedLayoutAttr) { return "shared"; })
                         .Case([](NvmmaSharedLayoutAttr) { return "nvmma"; })
                         .Case([](PaddedSharedLayoutAttr) { return "padded"; })
                         .Default([](Attribute) { return ""; });
    if (name.empty())
      return AliasResult::NoAlias;
    os << name;
    return AliasResult::FinalAlias;
  }
};
} // namespace

void AttnBlockDialect::registerAttributes() {
  addInterfaces<LayoutAliases>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/AttnBlockAttrs.cpp.inc"
      >();
}

void AttnBlockDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "attn/Dialect/AttnBlockTypes.cpp.inc"
      >();
}

static int64_t product(ArrayRef<int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v)
    p *= x;
  return p;
}

/// `order` lists each of the dims 0 .. rank-1 once.
static LogicalResult verifyOrder(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> order) {
  SmallVector<bool> seen(order.size(), false);
  for (int64_t d : order) {
    if (d < 0 || d >= static_cast<int64_t>(order.size()) || seen[d])
      return emitError() << "'order' must be a permutation of the dims 0.."
                         << order.size() - 1;
    seen[d] = true;
  }
  return success();
}

static LogicalResult
verifyPositive(function_ref<InFlightDiagnostic()> emitError, StringRef name,
               ArrayRef<int64_t> v) {
  for (int64_t x : v)
    if (x < 1)
      return emitError() << "'" << name << "' entries must be >= 1";
  return success();
}

LogicalResult BlockedLayoutAttr::verify(
    function_ref<InFlightDiagnostic()> emitError,
    ArrayRef<int64_t> sizePerThread, ArrayRef<int64_t> threadsPerWarp,
    ArrayRef<int64_t> warpsPerCTA, ArrayRef<int64_t> order) {
  size_t rank = order.size();
  if (rank == 0 || sizePerThread.size() != rank ||
      threadsPerWarp.size() != rank || warpsPerCTA.size() != rank)
    return emitError() << "blocked layout: sizePerThread, threadsPerWarp, "
                          "warpsPerCTA and order need one entry per dim";
  if (failed(verifyPositive(emitError, "sizePerThread", sizePerThread)) ||
      failed(verifyPositive(emitError, "threadsPerWarp", threadsPerWarp)) ||
      failed(verifyPositive(emitError, "warpsPerCTA", warpsPerCTA)))
    return failure();
  if (product(threadsPerWarp) != 32)
    return emitError() << "blocked layout: threadsPerWarp must multiply to "
                          "the 32 threads of a warp, got "
                       << product(threadsPerWarp);
  return verifyOrder(emitError, order);
}

int64_t BlockedLayoutAttr::getNumWarps() const {
  return product(getWarpsPerCTA());
}

LogicalResult
MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t version, ArrayRef<int64_t> warpsPerCTA,
                      ArrayRef<int64_t> instrShape) {
  if (warpsPerCTA.size() != 2)
    return emitError() << "mma layout: warpsPerCTA needs 2 entries";
  if (failed(verifyPositive(emitError, "warpsPerCTA", warpsPerCTA)))
    return failure();
  if (version == 2) {
    if (instrShape != ArrayRef<int64_t>{16, 8})
      return emitError() << "mma layout version 2 (mma.sync m16n8k16) needs "
                            "instrShape = [16, 8]";
    return success();
  }
  if (version == 3) {
    if (instrShape.size() != 3 || instrShape[0] != 64 || instrShape[2] != 16 ||
        instrShape[1] < 8 || instrShape[1] > 256 || instrShape[1] % 8 != 0)
      return emitError() << "mma layout version 3 (wgmma) needs instrShape = "
                            "[64, N, 16] with N a multiple of 8 in [8, 256]";
    if (warpsPerCTA[0] % 4 != 0)
      return emitError() << "mma layout version 3: warpsPerCTA[0] must be a "
                            "multiple of the 4 warps of a warpgroup";
    return success();
  }
  return emitError() << "mma layout: version must be 2 (mma.sync) or 3 "
                        "(wgmma), got "
                     << version;
}

int64_t MmaLayoutAttr::getNumWarps() const { return product(getWarpsPerCTA()); }

LogicalResult
DotOperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                             int64_t opIdx, Attribute parentAttr,
                             int64_t kWidth) {
  auto parent = dyn_cast<MmaLayoutAttr>(parentAttr);
  if (!parent)
    return emitError() << "dot_operand layout: parent must be an "
                          "#attn_block.mma layout";
  if (opIdx != 0 && opIdx != 1)
    return emitError() << "dot_operand layout: opIdx must be 0 (A) or 1 (B)";
  if (kWidth != 1 && kWidth != 2 && kWidth != 4 && kWidth != 8)
    return emitError() << "dot_operand layout: kWidth must be 1, 2, 4 or 8";
  if (parent.getVersion() == 3 && opIdx == 1)
    return emitError() << "dot_operand layout: wgmma reads its B operand "
                          "from shared memory, not registers";
  return success();
}

LogicalResult
SliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t dim, Attribute parent) {
  if (!isTileLayout(parent) || isa<DotOperandLayoutAttr>(parent))
    return emitError() << "slice layout: parent must be a blocked, mma or "
                          "slice layout";
  if (dim < 0)
    return emitError() << "slice layout: dim must be >= 0";
  return success();
}

LogicalResult
SharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t vec, int64_t perPhase, int64_t maxPhase,
                         ArrayRef<int64_t> order) {
  if (vec < 1 || perPhase < 1 || maxPhase < 1)
    return emitError() << "shared layout: vec, perPhase and maxPhase must be "
                          ">= 1";
  if (order.empty())
    return emitError() << "shared layout: order needs one entry per dim";
  return verifyOrder(emitError, order);
}

LogicalResult
NvmmaSharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t swizzleBytes, bool transposed) {
  if (swizzleBytes != 0 && swizzleBytes != 32 && swizzleBytes != 64 &&
      swizzleBytes != 128)
    return emitError() << "nvmma_shared layout: swizzleBytes must be 0, 32, "
                          "64 or 128, got "
                       << swizzleBytes;
  return success();
}

LogicalResult
PaddedSharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t rowStride) {
  if (rowStride < 1)
    return emitError() << "padded_shared layout: rowStride must be >= 1";
  return success();
}

/// The rank a register layout describes.
static int64_t layoutRank(Attribute layout) {
  return TypeSwitch<Attribute, int64_t>(layout)
      .Case([](BlockedLayoutAttr a) { return a.getRank(); })
      .Case([](SliceLayoutAttr a) { return layoutRank(a.getParent()) - 1; })
      .Default([](Attribute) { return 2; }); // mma, dot_operand
}

bool mlir::attn_block::isTileLayout(Attribute attr) {
  return isa_and_nonnull<BlockedLayoutAttr, MmaLayoutAttr, DotOperandLayoutAttr,
                         SliceLayoutAttr>(attr);
}

LogicalResult
mlir::attn_block::verifyTileLayout(function_ref<InFlightDiagnostic()> emitError,
                                   RankedTensorType tile) {
  Attribute enc = tile.getEncoding();
  if (!enc ||
      isa<SharedLayoutAttr, NvmmaSharedLayoutAttr, PaddedSharedLayoutAttr>(enc))
    return success(); // a tile read in place from shared memory
  if (!isTileLayout(enc))
    return emitError() << "tile " << tile
                       << " has an encoding that is neither a register nor a "
                          "shared-memory layout";
  if (auto slice = dyn_cast<SliceLayoutAttr>(enc))
    if (slice.getDim() >= layoutRank(slice.getParent()))
      return emitError() << "slice layout removes dim " << slice.getDim()
                         << " of a rank-" << layoutRank(slice.getParent())
                         << " parent";
  if (layoutRank(enc) != tile.getRank())
    return emitError() << "layout " << enc << " describes rank-"
                       << layoutRank(enc) << " tiles, not " << tile;
  return success();
}

//===----------------------------------------------------------------------===//
// !attn_block.smem
//===----------------------------------------------------------------------===//

Type SharedBufferType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elt;
  Attribute enc;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elt) || parser.parseComma() ||
      parser.parseAttribute(enc) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), shape, elt, enc);
}

void SharedBufferType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ", " << getEncoding() << ">";
}

LogicalResult
SharedBufferType::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> shape, Type elementType,
                         Attribute encoding) {
  if (shape.empty())
    return emitError() << "shared buffer needs at least one dim";
  for (int64_t d : shape)
    if (d < 1)
      return emitError() << "shared buffer dims must be static and >= 1";
  if (!elementType.isIntOrFloat())
    return emitError() << "shared buffer elements must be integers or floats";
  if (auto s = dyn_cast<SharedLayoutAttr>(encoding)) {
    if (static_cast<int64_t>(s.getOrder().size()) >
        static_cast<int64_t>(shape.size()))
      return emitError() << "shared layout order has more dims than the buffer";
    return success();
  }
  if (isa<NvmmaSharedLayoutAttr>(encoding))
    return success();
  if (auto p = dyn_cast<PaddedSharedLayoutAttr>(encoding)) {
    if (shape.size() != 2 || p.getRowStride() < shape[1])
      return emitError() << "a padded_shared buffer is 2-D with a row stride "
                            "of at least its columns, got rowStride "
                         << p.getRowStride() << " for " << shape.size()
                         << "-D shape";
    return success();
  }
  return emitError() << "shared buffer encoding must be #attn_block.shared, "
                        "#attn_block.nvmma_shared or #attn_block.padded_shared";
}

int64_t SharedBufferType::getNumElements() const {
  // A padded buffer takes its row stride per row.
  if (auto p = dyn_cast<PaddedSharedLayoutAttr>(getEncoding()))
    return getShape()[0] * p.getRowStride();
  return product(getShape());
}

int64_t SharedBufferType::getSizeInBytes() const {
  return getNumElements() * getElementType().getIntOrFloatBitWidth() / 8;
}
