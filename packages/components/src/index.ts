// The engine's types a model's context exposes (`context.env`, `env.timeout(ns).addCallback(...)`):
// re-exported so a plug-in needs no @kb/des of its own.
export type { Environment, Event } from "@kb/des";
export { KbError } from "@kb/errors";
// The vocabulary (dtypes, PE commands, the math op table, atomics, the HBM params a controller
// receives) is defined in @kb/spec; re-exported here, where plug-ins first found it.
export type {
  AtomicOp,
  CompositeGemmCommand,
  CompositeMathCommand,
  CyclesCommand,
  DelayCommand,
  DmaAtomic,
  DmaCommand,
  DmaIndexed,
  DmaMask,
  Dtype,
  EpilogueOp,
  GemmCommand,
  IndexedRun,
  IpcqRecvCommand,
  IpcqSendCommand,
  MaskPiece,
  MathCommand,
  MathOpInfo,
  MathOpName,
  MathShape,
  PeCommand,
  PublicMathOpName,
  WaitCommand,
} from "@kb/spec";
export {
  atomicResult,
  broadcastShapes,
  DTYPE_BYTES,
  evaluateMath,
  hbmTopologyParams,
  indexedRuns,
  indexedRunsProblem,
  MATH_OPS,
  MATH_SHAPES,
  maskPieces,
  maskRunsProblem,
  mathOutputShape,
  PUBLIC_MATH_OPS,
  queueDepthParam,
  SCALAR_OPS,
} from "@kb/spec";
export type { HbmAddressMap, HbmCoordinates } from "@kb/topology";
// The TCM address helpers are facts of the memory map (@kb/topology); re-exported here as before.
export { TCM_WINDOW_BYTES, tcmAddress, tcmLocation } from "@kb/topology";
export type {
  ComponentContext,
  ComponentOptions,
  ComponentPeak,
  ComponentStats,
  Lane,
  StageWork,
} from "./component.js";
export { Component } from "./component.js";
export type { CounterPointSink } from "./counter-sampler.js";
export { CounterSampler, DEFAULT_COUNTER_INTERVAL_NS } from "./counter-sampler.js";
export type { ComponentDefinition, KbPlugin, PluginCodeSource, PluginMeta } from "./define.js";
export { defineComponent, definePlugin } from "./define.js";
export { Fabric } from "./fabric.js";
export type {
  ForwardingKind,
  ForwardingModel,
  ForwardingModelContext,
  ForwardingModelDefinition,
  HopPacket,
  HopPart,
} from "./forwarding.js";
export { defineForwardingModel, forwardingTopologyParams } from "./forwarding.js";
export { ForwardingComponent } from "./forwarding-component.js";
export type { GemmTiming } from "./gemm-timing.js";
export { gemmPeakFlopsPerNs, gemmTimingOf } from "./gemm-timing.js";
export type { HbmStackPeak } from "./hbm-peaks.js";
export { hbmStackPeaks } from "./hbm-peaks.js";
export type { IpcqConfig, IpcqDataHooks, IpcqDirection, IpcqPayload } from "./ipcq.js";
export { IPCQ_DIRECTIONS, IpcqNetwork, ipcqConfigOf, ipcqRegionBytes, oppositeDirection } from "./ipcq.js";
export type { HbmAccessObserver, LaunchOptions, MachineOptions, ParamsIssue } from "./machine.js";
export { buildMachine, ComponentParamsError, Machine, PageTable } from "./machine.js";
export type {
  ComponentReport,
  CounterReport,
  KindReport,
  LaneReport,
  LinkReport,
  MachineStats,
  Spread,
} from "./machine-stats.js";
export { SpreadBuilder } from "./machine-stats.js";
export type {
  MemoryModel,
  MemoryModelContext,
  MemoryModelDefinition,
  MemoryRequest,
  MemoryTiming,
} from "./memory.js";
export { defineMemoryModel, MemoryComponent } from "./memory.js";
export type {
  DmaCopy,
  MemoryBlock,
  OpSpec,
  Stage,
  StageParams,
  StageType,
  TilePlan,
} from "./message.js";
export { Message, PipelineContext, ServiceRequest, TileToken } from "./message.js";
export type { ModelStat, ModelStatInfo } from "./model-stats.js";
export type { PathEnd } from "./packet.js";
export { CompiledPath, Link, Packet } from "./packet.js";
export { compute, computeSlotOf } from "./pe-support.js";
export type { CommandSource, PeProgram } from "./program.js";
export type { RegisteredImpl } from "./registry.js";
export { ComponentRegistry, componentDefinitionOf } from "./registry.js";
export type {
  GemmStage,
  MathStage,
  StageEngineArray,
  StageEngineContext,
  StageEngineDefinition,
  StageEngineKind,
  StageTiming,
  TileWork,
  TileWorkOf,
} from "./stage-engine.js";
export { defineStageEngine, gemmWork, mathWork, StageEngine } from "./stage-engine.js";
export type {
  ChromeTrace,
  ChromeTraceEvent,
  ChromeTraceStream,
  RecordedTraceEvent,
  TraceEventType,
  TraceFilter,
  TraceRecorderOptions,
  Tracer,
} from "./trace.js";
export { globMatcher, TraceRecorder } from "./trace.js";
export type { TrafficOptions, TrafficPacket, TrafficRun } from "./traffic.js";
export { startTraffic } from "./traffic.js";
export type { TrafficPattern, TrafficPatternName } from "./traffic-patterns.js";
export { TRAFFIC_PATTERNS, trafficPattern } from "./traffic-patterns.js";
export { Transfer } from "./transfer.js";
