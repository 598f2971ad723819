export { commandList } from "./command-list.js";
/** The kernel API's name in kernels: `async function k(tl: TL, ...)`. */
export type {
  BlockOptions,
  CompositeOptions,
  DeviceTensorInfo,
  DotOptions,
  EpilogueSpec,
  KernelMemory,
  KernelPlacement,
  LoadOptions,
  MathOptions,
  Pointer,
  RecvOptions,
  TLContext as TL,
  TLOptions,
} from "./context.js";
export { SCRATCH_ALIGN, TLContext } from "./context.js";
export type { HandleOrigin, HandleSpace } from "./handles.js";
export { CompletionHandle, RecvFuture, TensorHandle } from "./handles.js";
export { KernelRegistry } from "./registry.js";
export type { Kernel, KernelRunnerOptions } from "./runner.js";
export { KernelHost, KernelRunner } from "./runner.js";
