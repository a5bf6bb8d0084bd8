/**
 * The catalog of diagnostics: every stable code, its rule name and the rule in one line.
 * Codes never change meaning once published; add new ones at the end of their block.
 *   TX1xxx  builder and layout (DSL use)      TX2xxx  well-formedness
 *   TX3xxx  cp.async tile pattern             TX4xxx  bulk copies and mbarriers
 *   TX5xxx  launch arguments and targets      TX6xxx  simulated-device hazards
 *   TX7xxx  tensor cores (ldmatrix, stmatrix, mma fragments)
 *   TX8xxx  the tirx command line: arguments, the kernel file, output paths
 */
export const CATALOG = {
  TX1001: {
    rule: "dsl/outside-function",
    title: "T.* statements are recorded only inside a T.function body",
  },
  TX1002: {
    rule: "dsl/bad-argument",
    title: "an argument of a T.* call has the wrong type or value",
  },
  TX1003: { rule: "dsl/bad-dtype", title: "unknown dtype name" },
  TX1004: { rule: "dsl/index-rank", title: "the number of indices must equal the rank" },
  TX1005: { rule: "dsl/index-bounds", title: "a constant index lies outside its axis" },
  TX1006: {
    rule: "dsl/device-entry",
    title: "T.device_entry must be called once, before any other statement",
  },
  TX1007: { rule: "dsl/dtype-mismatch", title: "operands of an operator must have the same dtype" },
  TX1010: { rule: "layout/rearrange-syntax", title: "malformed einops pattern" },
  TX1011: {
    rule: "layout/rearrange-size",
    title: "axis sizes of an einops pattern must multiply to the axis length",
  },
  TX1012: {
    rule: "layout/rearrange-merge",
    title: "grouped output axes must be mergeable without a copy",
  },
  TX1013: { rule: "layout/slice", title: "a slice must lie inside its axis with a positive step" },
  TX1014: {
    rule: "layout/reinterpret",
    title: "a reinterpreting view needs a contiguous final axis of whole elements",
  },
  TX1015: {
    rule: "dsl/literal-range",
    title: "a literal must be representable in its dtype (integers exactly, 16-bit floats finite)",
  },
  TX1016: {
    rule: "layout/swizzle",
    title:
      "a swizzle layout needs bit counts in 0..16 with atom_len ≥ swizzle_len, on a shared buffer whose size is a multiple of the swizzle's period",
  },
  TX1020: {
    rule: "script/unsupported-syntax",
    title: "script mode accepts only the kernel subset of TypeScript",
  },
  TX1021: {
    rule: "script/source",
    title: "a T.prim_func kernel's source must be found and parse",
  },
  TX1022: {
    rule: "script/annotation",
    title: "a script kernel parameter needs a Tensor<shape, dtype> or dtype annotation",
  },
  TX1023: {
    rule: "script/store-dtype",
    title: "a stored value must have the element dtype (cast it explicitly)",
  },
  TX1024: {
    rule: "dsl/unknown-name",
    title:
      "a name in a kernel must exist: in script mode a parameter, a local, T, or a module constant; a member of T one that T has",
  },
  TX1025: {
    rule: "dsl/async-body",
    title:
      "a kernel body (T.function, T.if_, T.while_) is traced synchronously: it may not be async or return a promise",
  },
  TX1026: {
    rule: "layout/tile-layout",
    title:
      "a TileLayout (S[...] + R[...] + O[...]) needs positive integer extents, integer strides and offsets on known axes, and a shard that groups by the tile's shape",
  },
  TX1027: {
    rule: "dsl/packed-storage",
    title:
      "float16x2, bfloat16x2 and the vectors (float32x4, int32x2, float16x8, …) are register values: no tensor, buffer or scalar parameter has a vector dtype, no tensor or buffer a pair's (a view of a buffer of the lane dtype may: view_as)",
  },
  TX2001: {
    rule: "wf/undefined-var",
    title: "a variable is used outside the scope that defines it",
  },
  TX2002: {
    rule: "wf/thread-index-scope",
    title: "thread and block indices exist only inside T.device_entry",
  },
  TX2003: {
    rule: "wf/static-shape",
    title: "shapes, launch extents and loop bounds that size storage must be static",
  },
  TX2004: { rule: "wf/device-entry", title: "a kernel needs exactly one T.device_entry" },
  TX2005: { rule: "wf/dtype", title: "an operand has the wrong dtype" },
  TX2006: {
    rule: "wf/bounds",
    title: "a buffer access lies outside the buffer, or one of its indices outside its axis",
  },
  TX2007: { rule: "wf/launch", title: "launch extents must be positive and within CUDA limits" },
  TX2008: { rule: "wf/shared-capacity", title: "shared memory use exceeds what a CTA may have" },
  TX2009: { rule: "wf/scope", title: "the buffer's state space does not allow this access" },
  TX2010: { rule: "wf/intrinsic", title: "unknown intrinsic or wrong operands" },
  TX2011: {
    rule: "wf/index-width",
    title: "a tensor holds at most 2^48 bytes (the GPU's address space)",
  },
  TX2012: {
    rule: "wf/unroll",
    title: "fully unrolled code needs constant trip counts of at most 4096",
  },
  TX2013: {
    rule: "wf/expr-depth",
    title: "expressions and statements nest at most 2048 deep",
  },
  TX2014: {
    rule: "sync/named-barrier",
    title: "a named barrier's thread count must be a multiple of 32 within the CTA's threads",
  },
  TX2015: {
    rule: "cta/reduce-scratch",
    title:
      "cta_reduce needs whole warps, num_warps matching the launch and shared scratch of num_warps elements of the value's dtype",
  },
  TX2016: {
    rule: "wf/collective-in-loop-bound",
    title: "a warp collective cannot be a loop bound; compute it into a variable first",
  },
  TX2017: {
    rule: "wf/static-operand",
    title:
      "an operand that selects the instruction (a count, mode, flag or immediate) must be a static JS integer",
  },
  TX2018: {
    rule: "wf/expr-size",
    title:
      "an expression has at most 65536 operations, each use of a shared value counted (bind it with T.let_)",
  },
  TX2019: {
    rule: "wf/kernel-name",
    title:
      "a kernel name must make a PTX identifier: not _ alone, not WARP_SZ, at most 1024 characters",
  },
  TX2020: {
    rule: "wf/local-capacity",
    title: "a thread's local arrays hold at most 512 KiB",
  },
  TX2021: {
    rule: "layout/local-tile",
    title:
      "a local tile's TileLayout must hold the tile's size, keep m inside the tile, and bind thread axes within the launch",
  },
  TX2022: {
    rule: "tile/dispatch",
    title:
      "a T.tile primitive has no lowering for its operands' layouts, scope and dtypes; the message names the failed requirement and the nearest layout that works",
  },
  TX3001: {
    rule: "cp-async/opcode",
    title: "opcode must be cp.async.{ca|cg}.shared{::cta}.global with known qualifiers",
  },
  TX3002: {
    rule: "cp-async/state-space",
    title: "cp.async copies from .global to .shared (or .shared::cta) only",
  },
  TX3003: {
    rule: "cp-async/prefetch-once",
    title: "at most one .L2::64B/128B/256B prefetch qualifier",
  },
  TX3004: {
    rule: "cp-async/unknown-param",
    title: "only chunk_bytes, scope, src_size, ignore_src, cache_policy and pred are parameters",
  },
  TX3005: {
    rule: "cp-async/chunk-bytes-required",
    title: "chunk_bytes is required and never inferred from the layout",
  },
  TX3006: { rule: "cp-async/chunk-bytes", title: "chunk_bytes must be the constant 4, 8 or 16" },
  TX3007: { rule: "cp-async/cg-16", title: ".cg copies exactly 16 bytes" },
  TX3008: { rule: "cp-async/scope", title: 'scope must be "thread" or "cta"' },
  TX3009: {
    rule: "cp-async/group-axes",
    title: "CTA scope needs explicit (warp, lane) group axes in front of both operands",
  },
  TX3010: {
    rule: "cp-async/group-extent",
    title: "group axes must match the launch: warp = threads / 32, lane = 32",
  },
  TX3011: {
    rule: "cp-async/direction",
    title: "destination must be shared memory and source global memory (operand order dst, src)",
  },
  TX3012: {
    rule: "cp-async/atom-size",
    title: "the final axis must occupy exactly chunk_bytes bytes on both sides",
  },
  TX3013: {
    rule: "cp-async/atom-contiguous",
    title: "the final axis must be contiguous on both sides",
  },
  TX3014: {
    rule: "cp-async/atom-aligned",
    title: "every atom must be aligned to chunk_bytes on both sides",
  },
  TX3015: {
    rule: "cp-async/whole-elements",
    title: "an atom must hold whole elements on both sides",
  },
  TX3016: {
    rule: "cp-async/shapes-agree",
    title: "group and repeat shapes of dst and src must agree",
  },
  TX3017: {
    rule: "cp-async/src-bounds",
    title: "the source view must lie within its tensor, even with zero fill",
  },
  TX3018: {
    rule: "cp-async/fill-exclusive",
    title: "src_size and ignore_src are alternatives; give at most one",
  },
  TX3019: { rule: "cp-async/src-size-range", title: "src_size must lie in 0..chunk_bytes" },
  TX3020: {
    rule: "cp-async/cache-policy",
    title: "cache_policy is required exactly when the opcode has .L2::cache_hint",
  },
  TX3021: { rule: "cp-async/operand-type", title: "runtime operand has the wrong type" },
  TX3022: { rule: "cp-async/wait-group", title: "wait_group takes a static integer 0..7" },
  TX3023: { rule: "cp-async/target", title: "cp.async needs sm_80 or newer" },
  TX3024: {
    rule: "cp-async/dst-bounds",
    title: "the destination view must lie within its shared buffer",
  },
  TX3025: {
    rule: "cp-async/swizzle-split",
    title:
      "a cp.async chunk must lie in one atom of its shared buffer's swizzle (a 16-byte chunk needs 16-byte atoms)",
  },
  TX4001: {
    rule: "bulk/opcode",
    title: "opcode must be a cp.async.bulk form this toolchain supports",
  },
  TX4002: { rule: "bulk/unknown-param", title: "unknown parameter of cp.async.bulk" },
  TX4003: { rule: "bulk/chunk-bytes", title: "chunk_bytes must be a positive multiple of 16" },
  TX4004: {
    rule: "bulk/contiguous",
    title: "a bulk copy moves one contiguous, 16-byte aligned region on both sides",
  },
  TX4005: {
    rule: "bulk/direction",
    title: "the state spaces of the operands do not match the opcode",
  },
  TX4006: {
    rule: "bulk/mbarrier",
    title: "global to shared bulk copies complete on an mbarrier in shared memory",
  },
  TX4007: {
    rule: "bulk/target",
    title: "cp.async.bulk, mbarrier transaction counts and async-proxy fences need sm_90",
  },
  TX4008: {
    rule: "bulk/expect-tx",
    title: "bytes announced with expect_tx must equal the bytes the bulk copies complete",
  },
  TX4009: {
    rule: "bulk/ignore-oob",
    title: ".ignore_oob needs PTX 9.2; this toolchain supports PTX up to 9.0",
  },
  TX4010: {
    rule: "bulk/shapes-agree",
    title: "dst and src of a bulk copy must have the same bytes",
  },
  TX4011: {
    rule: "mbarrier/object",
    title: "an mbarrier is an 8-byte aligned uint64 in shared memory",
  },
  TX4012: { rule: "mbarrier/count", title: "mbarrier arrival count must lie in [1, 2^20 - 1]" },
  TX4013: { rule: "bulk/bounds", title: "a bulk copy's views must lie within their buffers" },
  TX4014: {
    rule: "bulk/scope",
    title: 'a bulk copy is issued by one thread: scope must be "thread"',
  },
  TX4015: {
    rule: "tma/opcode",
    title: "opcode must be a cp.async.bulk.tensor form this toolchain supports",
  },
  TX4016: {
    rule: "tma/tensor-map",
    title: "a TMA copy needs tensor_map: a tensor map of its global operand, of the opcode's rank",
  },
  TX4017: {
    rule: "tma/box",
    title:
      "tensor-map box extents lie in [1, 256], inner box bytes are a multiple of 16 (at most the swizzle span), element strides in [1, 8] (the innermost 1)",
  },
  TX4018: {
    rule: "tma/tile-shape",
    title: "the shared tile must be the tensor-map box: same shape, dtype, dense row-major",
  },
  TX4019: {
    rule: "tma/shared-align",
    title: "a TMA shared operand is 128-byte aligned (1024 with 128B swizzle)",
  },
  TX4020: {
    rule: "tma/swizzle-layout",
    title: "the tensor map's swizzle must agree with the shared buffer's layout",
  },
  TX4021: {
    rule: "tma/multicast",
    title:
      "cta_mask goes with .multicast::cluster, which needs a cluster launch and a shared::cluster destination",
  },
  TX4022: {
    rule: "tma/target",
    title: "TMA multicast needs the architecture-specific target sm_90a",
  },
  TX4023: {
    rule: "tma/coords",
    title:
      "coords holds one int32 coordinate per tensor axis; a constant innermost one is a multiple of 16 bytes",
  },
  TX4024: {
    rule: "tma/global-tensor",
    title:
      "a tensor-map tensor has a TMA dtype, rank 1..5, dims in 1..2^32 and row strides that are multiples of 16 bytes below 2^40",
  },
  TX4025: {
    rule: "cluster/dims",
    title: "cluster dims are static, divide the grid and hold at most 8 CTAs",
  },
  TX4026: {
    rule: "bulk/reduce-dtype",
    title: "both views of a bulk reduction hold elements of the opcode's .type",
  },
  TX4027: {
    rule: "tma/global-address",
    title: "a tensor map's global address is 16-byte aligned (32 with 32B interleave)",
  },
  TX4028: {
    rule: "tma/modes",
    title:
      "a tensor map's interleave, swizzle, L2 promotion and oob fill are values of their cuda.h enums; 32B interleave needs 32B swizzle",
  },
  TX4029: {
    rule: "tma/oob-fill",
    title: 'oob_fill "nan" (NAN_REQUEST_ZERO_FMA) needs a floating-point tensor dtype',
  },
  TX4030: {
    rule: "bulk/cluster-launch",
    title:
      "a shared::cta → shared::cluster bulk copy needs a cluster launch (T.device_entry's cluster dims)",
  },
  TX5001: { rule: "launch/arg-count", title: "wrong number of kernel arguments" },
  TX5002: { rule: "launch/arg-dtype", title: "a tensor argument has the wrong dtype" },
  TX5003: { rule: "launch/arg-shape", title: "a tensor argument has the wrong shape" },
  TX5004: {
    rule: "launch/arg-device",
    title: "tensor arguments must live on the device the kernel runs on",
  },
  TX5005: {
    rule: "launch/arg-kind",
    title: "a scalar parameter needs a number, a tensor parameter a tensor",
  },
  TX5006: { rule: "target/arch", title: "unknown or unsupported target architecture" },
  TX5007: {
    rule: "runtime/tensor-data",
    title: "host data does not fit the tensor's shape and dtype",
  },
  TX5008: {
    rule: "launch/symbolic-dim",
    title: "a tensor's extent differs from the scalar argument that names its dim",
  },
  TX5009: {
    rule: "launch/runtime-grid",
    title: "a runtime grid extent must be positive and within CUDA limits",
  },
  TX5010: {
    rule: "device/unavailable",
    title: "a CUDA GPU was asked for, but no CUDA driver or device is usable here",
  },
  TX5011: {
    rule: "runtime/disposed",
    title:
      "a tensor (or graph) is used after dispose(), or after its device was reset; make it again",
  },
  TX5012: {
    rule: "runtime/device",
    title:
      "a device is one that sim() or cuda(n) returned; TIRX_DEVICE and TIRX_SIM_SEED hold values they take",
  },
  TX5013: {
    rule: "runtime/autotune",
    title:
      "autotune needs a candidate config that builds, fits the device's shared memory and registers, and runs",
  },
  TX5014: {
    rule: "runtime/nccl",
    title:
      "a multi-GPU call needs NCCL (libnccl.so.2) or the CUDA virtual memory API, and it is missing or failed",
  },
  TX5015: {
    rule: "launch/pes",
    title:
      "a launch on several GPUs (PEs) takes a SymmetricTensor over those GPUs for each parameter whose leading dim is the PE count, one tensor per PE for other tensors, and a grid every GPU holds at once when the kernel calls barrier_all",
  },
  TX6001: {
    rule: "hazard/async-pending",
    title: "shared bytes accessed while a cp.async targeting them is not yet waited for",
  },
  TX6002: {
    rule: "hazard/global-write-pending-read",
    title: "global bytes written while a pending async copy reads them",
  },
  TX6003: {
    rule: "hazard/unsynchronized",
    title: "a thread read bytes another thread wrote with no cta_sync between",
  },
  TX6004: {
    rule: "hazard/uninitialized-shared",
    title: "shared memory read before anything wrote it",
  },
  TX6005: {
    rule: "hazard/out-of-bounds",
    title: "access outside the buffer, or one of its indices outside its axis",
  },
  TX6006: { rule: "hazard/deadlock", title: "a wait can never complete" },
  TX6007: {
    rule: "hazard/bulk-pending",
    title: "bulk-copy destination read before its mbarrier phase completed",
  },
  TX6008: {
    rule: "hazard/async-overlap",
    title: "two async copies in one group write the same bytes",
  },
  TX6009: {
    rule: "hazard/barrier-divergence",
    title: "not every thread of the CTA reached the same cta_sync",
  },
  TX6010: {
    rule: "hazard/src-size-range",
    title: "a runtime src_size larger than chunk_bytes (undefined behaviour in PTX)",
  },
  TX6011: {
    rule: "hazard/warp-collective",
    title:
      "a warp collective's member mask names a lane that does not execute it, or executing lanes pass different masks",
  },
  TX6012: {
    rule: "hazard/named-barrier-count",
    title:
      "a named barrier instance (bar.sync / bar.arrive id, count) that never completes, whose arrivers disagree on the count, or that threads may join unordered with its previous instance",
  },
  TX6013: {
    rule: "hazard/write-after-read",
    title: "a thread wrote bytes another thread read with no synchronization ordering the two",
  },
  TX6014: {
    rule: "hazard/write-after-write",
    title: "two threads (or two CTAs) wrote the same bytes with no synchronization ordering them",
  },
  TX6015: {
    rule: "hazard/proxy-fence",
    title:
      "shared bytes written by the generic proxy are read by the async proxy with no fence.proxy.async after the write",
  },
  TX6016: {
    rule: "hazard/mbarrier-init-fence",
    title:
      "an mbarrier is used by the async proxy with no fence.mbarrier_init after its mbarrier.init",
  },
  TX6017: {
    rule: "hazard/exit-pending",
    title: "a CTA exits with async copies not waited for or mbarrier transactions incomplete",
  },
  TX6018: {
    rule: "hazard/matrix-row-address",
    title:
      "an ldmatrix/stmatrix row address is not 16-byte aligned or its 16-byte row leaves the shared buffer, or a wgmma operand's footprint leaves the shared buffer its descriptor starts in",
  },
  TX6020: {
    rule: "contract/mbarrier-count",
    title: "a runtime mbarrier.init count outside [1, 2^20 - 1]",
  },
  TX6021: {
    rule: "contract/async-alignment",
    title: "a runtime cp.async or bulk-copy address not aligned to its chunk (16 bytes for bulk)",
  },
  TX6022: {
    rule: "contract/expect-tx",
    title: "bulk copies completed more bytes on an mbarrier phase than expect_tx announced",
  },
  TX6023: {
    rule: "hazard/wgmma-accumulator",
    title:
      "a thread accessed wgmma accumulator registers before the wgmma.wait_group that retires the wgmma writing them",
  },
  TX6024: {
    rule: "hazard/wgmma-operand-overwrite",
    title: "shared bytes a wgmma still reads (not retired by wgmma.wait_group) were overwritten",
  },
  TX6025: {
    rule: "hazard/cluster-exit",
    title:
      "a CTA exits while another CTA of its cluster may still access its shared memory (no cluster barrier before exit)",
  },
  TX6026: {
    rule: "contract/wgmma-descriptor",
    title:
      "a runtime wgmma descriptor disagrees with the shared tile it points into (dtype, LBO/SBO for the tile's layout, start off a swizzle-atom row)",
  },
  TX6027: {
    rule: "hazard/wgmma-fence",
    title:
      "a wgmma.mma_async with no wgmma.fence before it in its warpgroup, or after its accumulator/A registers were written by other instructions",
  },
  TX6028: {
    rule: "hazard/uninitialized-register",
    title:
      "a register (an element of a local array) read before its thread wrote it: registers start undefined",
  },
  TX6029: {
    rule: "contract/mma-sp-metadata",
    title:
      "mma.sp::ordered_metadata metadata whose index pair of a 4-wide chunk is not increasing (undefined behaviour in PTX)",
  },
  TX6030: {
    rule: "contract/dsmem-copy",
    title:
      "a shared::cta → shared::cluster bulk copy whose destination and mbarrier are not in one CTA of the cluster, or whose bytes leave the destination's shared buffer",
  },
  TX6031: {
    rule: "hazard/tma-inner-coordinate",
    title:
      "a TMA copy's innermost coordinate is not a multiple of 16 bytes of the tensor's elements (the copy engine raises an illegal instruction)",
  },
  TX6032: {
    rule: "contract/mbarrier-parity",
    title: "a runtime mbarrier.try_wait.parity phase parity other than 0 or 1",
  },
  TX7001: {
    rule: "mma/fragment-operand",
    title:
      "a fragment operand must be an element of a local register array of the fragment's dtype with room for the whole fragment",
  },
  TX7002: {
    rule: "mma/matrix-address",
    title:
      "an ldmatrix/stmatrix address must be an element of a shared buffer, 16-byte aligned (each row of 8 b16 elements)",
  },
  TX7003: {
    rule: "mma/target",
    title: "ldmatrix needs sm_75, mma.sync m16n8k16/m16n8k8/m16n8k32 sm_80, stmatrix sm_90",
  },
  TX7004: {
    rule: "mma/variant",
    title: "unsupported tensor-core instruction variant (shape, layouts, dtypes, matrix count)",
  },
  TX7005: {
    rule: "mma/swizzle-split",
    title:
      "an ldmatrix/stmatrix row (16 bytes) must lie in one atom of its buffer's swizzle (the swizzle keeps at least 16 bytes together)",
  },
  TX7006: {
    rule: "wgmma/target",
    title: "wgmma and setmaxnreg need the architecture-specific target sm_90a",
  },
  TX7007: {
    rule: "wgmma/descriptor",
    title:
      "a wgmma matrix descriptor must describe a shared buffer of the instruction's dtype with static 16-byte-multiple offsets, a 16-byte-aligned start, the buffer's own swizzle and the LBO/SBO of the buffer's layout",
  },
  TX7008: { rule: "setmaxnreg/count", title: "setmaxnreg counts are multiples of 8 in 24..256" },
  TX7009: {
    rule: "setmaxnreg/budget",
    title:
      "setmaxnreg needs a block of whole warpgroups and counts that fit the SM's 64K registers",
  },
  TX7010: {
    rule: "wgmma/warpgroup",
    title:
      "a wgmma instruction must be executed by all 128 threads of a warpgroup (4 consecutive warps from a multiple of 4) with one set of descriptors",
  },
  TX7011: {
    rule: "wgmma/fence",
    title: "a wgmma.mma_async comes before any wgmma.fence in program order",
  },
  TX7012: {
    rule: "wgmma/warpgroup-divergent",
    title:
      "a warpgroup-aligned instruction (wgmma, setmaxnreg: .sync.aligned) under a condition that differs between the threads of one warpgroup",
  },
  TX7013: {
    rule: "mma/sparsity-selector",
    title:
      "an mma.sp sparsity selector must be a static value the form allows (0..3 for m16n8k16 .f16/.bf16, 0..1 for m16n8k32, 0 for m16n8k64)",
  },
  TX8001: {
    rule: "cli/usage",
    title:
      "the command line names one command (build, trace, layout), one kernel file and the options of that command, each with a value",
  },
  TX8002: {
    rule: "cli/input",
    title: "the kernel file must be an existing, readable regular file of TypeScript or JavaScript",
  },
  TX8003: {
    rule: "cli/output",
    title:
      "an output path must be writable: a file in an existing folder for trace --out, a folder for layout --out",
  },
  TX8004: {
    rule: "cli/load",
    title: "the kernel file must parse, and its top-level code run without throwing",
  },
  TX8005: {
    rule: "cli/unsettled-await",
    title: "the kernel file's top-level await must settle (Node exits with code 13 when it cannot)",
  },
  TX8006: {
    rule: "cli/no-kernels",
    title: "the kernel file must export a kernel (the result of T.function or T.prim_func)",
  },
  TX8007: {
    rule: "cli/kernel-choice",
    title:
      "--kernel must name a kernel the file exports; trace and layout need it when there are several",
  },
  TX8008: {
    rule: "cli/layout-spec",
    title:
      "the layout tirx layout draws must be given once (--tile notation, --builtin name, or --layout naming an export) and parse, name a known built-in, and group by --shape",
  },
  TX9001: {
    rule: "kernels/config",
    title:
      "a library kernel's sizes and options must be ones it offers (head dims, sequence multiples, masks, heads)",
  },
  TX9002: {
    rule: "kernels/tensors",
    title:
      "a library call's tensors must agree in shape, dtype and device with each other and with its options",
  },
} as const satisfies Record<string, { rule: string; title: string }>;

/** A stable diagnostic code such as `"TX3007"`. */
export type DiagnosticCode = keyof typeof CATALOG;
