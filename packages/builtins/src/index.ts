// @kb/builtins: the built-in timing models of kernbench-ts (PE engines, HBM controllers, fabric
// hops, host-side CPUs), written on @kb/components like any plug-in, and `defaultRegistry(plugins)`
// that registers them with the plug-ins a run loads.

export { BUILTIN_COMPONENTS, defaultRegistry } from "./default-registry.js";
export type { DramPowerFile } from "./energy/drampower.js";
export { drampowerFiles, drampowerMemspec } from "./energy/drampower.js";
export type { HbmCommandEnergy, HbmPower } from "./energy/hbm.js";
export {
  HBM_CTRL_V1_ENERGY,
  HBM_CTRL_V2_ENERGY,
  HBM_POWER,
  hbmCommandEnergy,
  hbmCtrlV2CommandEnergy,
} from "./energy/hbm.js";
export { HOROWITZ_NODE, PE_GEMM_ENERGY, sramPjPerBit } from "./energy/logic.js";
export { BUILTIN_KIND_ENERGY, LINK_ENERGY, WIRE_ENERGY } from "./energy/tables.js";
export { drampowerTrace, HbmCommandLog } from "./hbm-v2/command-log.js";
export type { HbmPortStats } from "./hbm-v2/controller.js";
export type { HbmCtrlV2Model } from "./hbm-v2/hbm-ctrl-v2.js";
export { hbmCtrlV2 } from "./hbm-v2/hbm-ctrl-v2.js";
export type { HbmCtrlV2Config, HbmCtrlV2Params } from "./hbm-v2/params.js";
export { hbmCtrlV2Config, hbmCtrlV2Params } from "./hbm-v2/params.js";
export { PAGE_POLICIES, REFRESH_POLICIES, SCHEDULERS } from "./hbm-v2/policies/index.js";
export type {
  HbmPagePolicy,
  HbmPolicies,
  HbmQueueView,
  HbmRefreshPolicy,
  HbmRefreshPort,
  HbmSchedulerPolicy,
} from "./hbm-v2/policies/policy.js";
export { frFcfsCap } from "./hbm-v2/policies/scheduler-fr-fcfs-cap.js";
export type { HbmPreset, HbmPresetName, HbmTiming } from "./hbm-v2/presets.js";
export { HBM_PRESETS } from "./hbm-v2/presets.js";
export type { HbmCtrlV2PolicyOptions } from "./hbm-v2/with-policies.js";
export { hbmCtrlV2WithPolicies } from "./hbm-v2/with-policies.js";
export type { PortHopParams } from "./noc/port-hop.js";
export { portHopParams, portHopV1 } from "./noc/port-hop.js";
export { gemmParams, macArrayCycles, macArrayNs } from "./pe-gemm-v1.js";
export type { GemmDataflow, GemmMapping, PeGemmV2Params } from "./pe-gemm-v2.js";
export { GEMM_DATAFLOWS, gemmMapping, peGemmV2Cycles, peGemmV2Params } from "./pe-gemm-v2.js";
export { simdNs } from "./pe-impls.js";
export { transitParams } from "./transit.js";
