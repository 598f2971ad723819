// `@kb/components/engine`: what a PE engine, a PE scheduler or a host-side component needs of the
// framework beyond `@kb/components` itself (the contract, Component, Message and the tile tokens).
// The built-in models of @kb/builtins are written on these and on `@kb/components` alone, so a
// plug-in that replaces one of them can be too. See the README's "Writing a PE engine".

export type { PcShare } from "./block-split.js";
export { splitByPseudoChannel } from "./block-split.js";
export type { SipLaunch } from "./control.js";
export { CONTROL_BYTES } from "./control.js";
export type { AtomicStage } from "./message.js";
export { compute, computeSlotOf, ns, peOf, wrongMessage } from "./pe-support.js";
export type { BufferNeeds, Feed, PeEngines, TileDefaults } from "./plan.js";
export { feedOf, TILE_BUFFER_ALIGN } from "./plan.js";
export type { LaunchReport } from "./program.js";
export { ControlMessage, ProgramMessage, Submission } from "./program.js";
