import type { ComponentDefinition, KbPlugin } from "@kb/components";
import { ComponentRegistry } from "@kb/components";
import { BUILTIN_KIND_ENERGY } from "./energy/tables.js";
import { hbmCtrlV1, sramV1 } from "./fabric-impls.js";
import { hbmCtrlV2 } from "./hbm-v2/hbm-ctrl-v2.js";
import { ioCpuV1, mCpuV1 } from "./host-impls.js";
import { portHopV1 } from "./noc/port-hop.js";
import { peCpuV1 } from "./pe-cpu.js";
import { peGemmV1 } from "./pe-gemm-v1.js";
import { peGemmV2 } from "./pe-gemm-v2.js";
import { peMathV1 } from "./pe-impls.js";
import { peDmaV1, peFetchStoreV1, peMmuV1, peTcmV1 } from "./pe-memory-engines.js";
import { peSchedulerV2 } from "./pe-scheduler.js";
import { mCpuDmaV1, transitV1 } from "./transit.js";

/** Every built-in implementation, registered by bare name in `defaultRegistry()`, with its energy table. */
export const BUILTIN_COMPONENTS: readonly ComponentDefinition[] = Object.freeze(
  [
    peCpuV1,
    peSchedulerV2,
    peDmaV1,
    peFetchStoreV1,
    peGemmV1,
    peGemmV2,
    peMathV1,
    peMmuV1,
    peTcmV1,
    hbmCtrlV1,
    hbmCtrlV2,
    transitV1,
    portHopV1,
    sramV1,
    mCpuV1,
    mCpuDmaV1,
    ioCpuV1,
  ].map(withEnergy) as ComponentDefinition[],
);

/** `definition` with the built-in energy table of its kind when it states none (docs/energy.md). */
function withEnergy<D extends { readonly kind: string; readonly energy?: unknown }>(definition: D): D {
  const energy = BUILTIN_KIND_ENERGY[definition.kind];
  return definition.energy !== undefined || energy === undefined
    ? definition
    : Object.freeze({ ...definition, energy });
}

/** A registry of the built-in impls plus `plugins` (what `buildMachine` uses when given no registry). */
export function defaultRegistry(plugins: readonly KbPlugin[] = []): ComponentRegistry {
  const registry = new ComponentRegistry().registerBuiltins(BUILTIN_COMPONENTS);
  for (const plugin of plugins) registry.registerPlugin(plugin);
  return registry;
}
