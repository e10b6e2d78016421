//===- AttnLaunch.td - launch plans as data ----------------*- tablegen -*-===//
//
// How a host runs a compiled program, stated in the IR by the lowering that
// built the kernels and executed by one generic executor in the runtime
// (runtime/lib/LaunchPlan.cpp): the problem's dims read from the inputs'
// shapes, derived integer values, scratch buffers with their sizes, and the
// kernels in launch order with their grids, block sizes, dynamic shared
// memory and arguments. Every integer is an affine map with no dims whose
// symbols are the plan's dims followed by its values (semi-affine: products
// of symbols are allowed). The format, with an example: docs/launch-plan.md.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LAUNCH_TD
#define ATTN_LAUNCH_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def AttnLaunch_Dialect : Dialect {
  let name = "attn_launch";
  let summary = "Launch plans: which kernels a host runs, on what, in which order";
  let cppNamespace = "::mlir::attn_launch";
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The name of the plan attribute on an entry function.
    static constexpr ::llvm::StringLiteral kPlanAttrName = "attn_launch.plan";
  }];
}

def AttnLaunch_Device : I32EnumAttr<"Device", "where a plan's kernels run", [
    I32EnumAttrCase<"cpu", 0>,
    I32EnumAttrCase<"cuda", 1>]> {
  let cppNamespace = "::mlir::attn_launch";
  let genSpecializedAttr = 0;
}

def AttnLaunch_ArgKind : I32EnumAttr<"ArgKind", "what a kernel argument is", [
    I32EnumAttrCase<"input", 0>,
    I32EnumAttrCase<"output", 1>,
    I32EnumAttrCase<"scratch", 2>,
    I32EnumAttrCase<"scalar", 3>]> {
  let cppNamespace = "::mlir::attn_launch";
  let genSpecializedAttr = 0;
}

class AttnLaunch_Attr<string name, string attrMnemonic>
    : AttrDef<AttnLaunch_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def AttnLaunch_DimAttr : AttnLaunch_Attr<"Dim", "dim"> {
  let summary = "a problem dim read from an input's shape";
  let description = [{
    `#attn_launch.dim<"T", input = 0, dim = 2>`: the value named `T` is the
    size of dim 2 of input 0 at launch.
  }];
  let parameters = (ins StringRefParameter<"the dim's name">:$name,
                        "int64_t":$input, "int64_t":$dim);
  let assemblyFormat = "`<` $name `,` `input` `=` $input `,` `dim` `=` $dim `>`";
  let genVerifyDecl = 1;
}

def AttnLaunch_BufferAttr : AttnLaunch_Attr<"Buffer", "buffer"> {
  let summary = "a scratch buffer of the plan";
  let description = [{
    `#attn_launch.buffer<"rope_cos", bytes = affine_map<...>>`: device (or
    host) memory the executor provides, at least `bytes` bytes, 16-byte
    aligned, kept across launches; its contents are undefined at the start
    of a launch (the plan's kernels write it before reading it).
  }];
  let parameters = (ins StringRefParameter<"the buffer's name">:$name,
                        "::mlir::AffineMap":$bytes);
  let assemblyFormat = "`<` $name `,` `bytes` `=` $bytes `>`";
}

def AttnLaunch_ArgAttr : AttnLaunch_Attr<"Arg", "arg"> {
  let summary = "one kernel argument";
  let description = [{
    `input i` (the i-th input view), `output` or `output i` (the view of
    the entry's first or i-th result), `scratch j`
    (the plan's j-th buffer) or `scalar` (an i64 value). Buffers are passed
    as memref descriptors; on the GPU as 1-D `memref<?xT>` descriptors
    flattened into five kernel parameters (allocated, aligned, offset,
    size, stride), `elements` giving the size (default for views: their
    element count); on the CPU as pointers to full-rank strided
    descriptors (the C interface). A scalar's `value` is its i64.

    ```mlir
    #attn_launch.arg<input 0>
    #attn_launch.arg<output, elements = affine_map<()[s0] -> (0)>>
    #attn_launch.arg<output 1>
    #attn_launch.arg<scratch 1, elements = affine_map<()[s0, s1] -> (s0 * s1)>>
    #attn_launch.arg<scalar affine_map<()[s0, s1, s2, s3, s4] -> (s4)>>
    ```
  }];
  let parameters = (ins "ArgKind":$kind, "int64_t":$index,
                        "::mlir::AffineMap":$value);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def AttnLaunch_KernelAttr : AttnLaunch_Attr<"Kernel", "kernel"> {
  let summary = "one kernel launch";
  let description = [{
    Launches `name` (a kernel of the plan's gpu.module on the GPU,
    `@gpu_module::@kernel`; the JIT'd function on the CPU) over `grid`
    (three results: x, y, z; a launch whose grid has a zero dim is skipped)
    with `block` threads and `smem` bytes of dynamic shared memory, on
    `args`. `dependent`: the kernel may start while the one before it still
    runs (programmatic dependent launch, sm_90+); it waits for that
    kernel's results itself. The CPU ignores grid, block, smem and
    dependent.
  }];
  let parameters = (ins "::mlir::SymbolRefAttr":$name,
                        "::mlir::AffineMap":$grid,
                        "::mlir::DenseI64ArrayAttr":$block,
                        "int64_t":$smem,
                        "::mlir::ArrayAttr":$args,
                        DefaultValuedParameter<"bool", "false">:$dependent);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def AttnLaunch_PlanAttr : AttnLaunch_Attr<"Plan", "plan"> {
  let summary = "how a host runs an entry function";
  let description = [{
    Attached to the entry function as `attn_launch.plan`. `dims` name the
    problem's sizes (read from input shapes), `values` derive integers from
    them (the result of a value's map is the maximum of its results; a
    minimum is written as the negated maximum of negated terms), `buffers`
    are the scratch buffers and `kernels` run in order on one stream. Every
    map has no dims; its symbols are the dims, then the values (a value's
    map only sees the values before it). See docs/launch-plan.md.
  }];
  let parameters = (ins EnumParameter<AttnLaunch_Device>:$device, "::mlir::ArrayAttr":$dims,
                        "::mlir::ArrayAttr":$values,
                        "::mlir::ArrayAttr":$buffers,
                        "::mlir::ArrayAttr":$kernels);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Symbols a map may use: the dims and every value.
    unsigned getNumSymbols() const {
      return getDims().size() + getValues().size();
    }
  }];
}

#endif // ATTN_LAUNCH_TD
