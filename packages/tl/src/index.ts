export type { AtomicOptions } from "./atomics.js";
export { ATOMIC_SCOPES, ATOMIC_SEMS } from "./atomics.js";
export { commandList } from "./command-list.js";
/** The kernel API's name in kernels: `async function k(tl: TL, ...)`. */
export type { TLContext as TL } from "./context.js";
export { TLContext } from "./context.js";
export type { Waitable } from "./control-calls.js";
export type { DotScaledOptions, ScaledFormat } from "./dot-scaled-calls.js";
export { SCALED_FORMAT_DTYPES } from "./dot-scaled-calls.js";
export type { HandleOrigin, HandleSpace } from "./handles.js";
export { CompletionHandle, LoadFuture, RecvFuture, TensorHandle } from "./handles.js";
export type { DeviceTensorInfo, KernelMemory, LoadObservation } from "./kernel-memory.js";
export type {
  BlockOptions,
  CompositeOptions,
  DotOptions,
  EpilogueSpec,
  KernelPlacement,
  LoadOptions,
  MathOptions,
  Pointer,
  RecvOptions,
  StoreOptions,
  TLOptions,
} from "./options.js";
export { KernelRegistry } from "./registry.js";
export type { Kernel, KernelRunnerOptions } from "./runner.js";
export { KernelHost, KernelRunner, type RunSlices } from "./runner.js";
export { SCRATCH_ALIGN } from "./scratch.js";
/** The tag function of a module whose tl calls were tagged when it was loaded (`tagCallSites` of `@kb/runtime/node`). */
export { siteTags } from "./site-tags.js";
export type { StallBudget, StalledKernel, StallReport } from "./stall-watch.js";
