// Verifier errors of launch plans (dialect/lib/AttnLaunchDialect.cpp).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// expected-error @+2 {{the grid: the map must have 3 results, got 2}}
// expected-error @+1 {{failed to parse AttnLaunch_PlanAttr parameter 'kernels'}}
func.func private @a(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [#attn_launch.dim<"N", input = 0, dim = 0>], values = [], buffers = [], kernels = [#attn_launch.kernel<name = @m::@f, grid = ()[s0] -> (s0, 1), block = [32, 1, 1], smem = 0, args = []>]>}

// -----

// expected-error @+1 {{kernel f grid: the map has 2 symbols, only 1 are defined there}}
func.func private @b(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [#attn_launch.dim<"N", input = 0, dim = 0>], values = [], buffers = [], kernels = [#attn_launch.kernel<name = @m::@f, grid = ()[s0, s1] -> (s1, 1, 1), block = [32, 1, 1], smem = 0, args = []>]>}

// -----

// expected-error @+1 {{kernel f argument 0: scratch 1 does not exist (the plan has 1 buffers)}}
func.func private @c(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [], values = [], buffers = [#attn_launch.buffer<"x", bytes = () -> (16)>], kernels = [#attn_launch.kernel<name = @m::@f, grid = () -> (1, 1, 1), block = [32, 1, 1], smem = 0, args = [#attn_launch.arg<scratch 1, elements = () -> (4)>]>]>}

// -----

// expected-error @+3 {{a scratch argument needs its elements}}
// expected-error @+2 {{failed to parse AttnLaunch_KernelAttr parameter 'args'}}
// expected-error @+1 {{failed to parse AttnLaunch_PlanAttr parameter 'kernels'}}
func.func private @d(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [], values = [], buffers = [], kernels = [#attn_launch.kernel<name = @m::@f, grid = () -> (1, 1, 1), block = [32, 1, 1], smem = 0, args = [#attn_launch.arg<scratch 0>]>]>}

// -----

// expected-error @+1 {{value 0: the map has 1 symbols, only 0 are defined there}}
func.func private @e(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [], values = [affine_map<()[s0] -> (s0)>], buffers = [], kernels = [#attn_launch.kernel<name = @m::@f, grid = () -> (1, 1, 1), block = [32, 1, 1], smem = 0, args = []>]>}

// -----

// expected-error @+2 {{block must be three positive thread counts}}
// expected-error @+1 {{failed to parse AttnLaunch_PlanAttr parameter 'kernels'}}
func.func private @f(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [], values = [], buffers = [], kernels = [#attn_launch.kernel<name = @m::@f, grid = () -> (1, 1, 1), block = [0, 1, 1], smem = 0, args = []>]>}

// -----

// expected-error @+1 {{plan dim 'T' reads dim 2 of input 0, which does not exist}}
func.func private @g(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [#attn_launch.dim<"T", input = 0, dim = 2>], values = [], buffers = [], kernels = [#attn_launch.kernel<name = @m::@f, grid = () -> (1, 1, 1), block = [32, 1, 1], smem = 0, args = []>]>}

// -----

// expected-error @+1 {{plan kernel @m::@f takes input 3 of 1}}
func.func private @h(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [], values = [], buffers = [], kernels = [#attn_launch.kernel<name = @m::@f, grid = () -> (1, 1, 1), block = [32, 1, 1], smem = 0, args = [#attn_launch.arg<input 3>]>]>}

// -----

// expected-error @+1 {{a plan launches at least one kernel}}
func.func private @i(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cpu, dims = [], values = [], buffers = [], kernels = []>}

// -----

// expected-error @+1 {{plan dim 'N' is defined twice}}
func.func private @j(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [#attn_launch.dim<"N", input = 0, dim = 0>, #attn_launch.dim<"N", input = 0, dim = 0>], values = [], buffers = [], kernels = [#attn_launch.kernel<name = @m::@f, grid = () -> (1, 1, 1), block = [32, 1, 1], smem = 0, args = []>]>}

// -----

// expected-error @+3 {{expected input, output, scratch or scalar}}
// expected-error @+2 {{failed to parse AttnLaunch_KernelAttr parameter 'args'}}
// expected-error @+1 {{failed to parse AttnLaunch_PlanAttr parameter 'kernels'}}
func.func private @k(tensor<?xf32>) -> tensor<?xf32> attributes {attn_launch.plan = #attn_launch.plan<device = cuda, dims = [], values = [], buffers = [], kernels = [#attn_launch.kernel<name = @m::@f, grid = () -> (1, 1, 1), block = [32, 1, 1], smem = 0, args = [#attn_launch.arg<buffer 0>]>]>}
