import type { EnergyTable } from "@kb/spec";
import { HBM_CTRL_V1_ENERGY } from "./hbm.js";
import {
  CPU_ENERGY,
  HOROWITZ_NODE,
  PE_ENGINE_ENERGY,
  PE_GEMM_ENERGY,
  PE_MATH_ENERGY,
  PE_TCM_ENERGY,
  SRAM_ENERGY,
  TRANSIT_ENERGY,
} from "./logic.js";

/**
 * The built-in energy table of each component kind: what an impl that states no `energy` of its
 * own is charged with (a plug-in's PE_GEMM costs a built-in MAC per dtype). `hbm_ctrl` is
 * `hbm_ctrl_v1`'s (bytes only); `hbm_ctrl_v2` states its own, per DRAM command.
 */
export const BUILTIN_KIND_ENERGY: Readonly<Record<string, EnergyTable>> = Object.freeze({
  pe_cpu: CPU_ENERGY,
  pe_scheduler: CPU_ENERGY,
  m_cpu: CPU_ENERGY,
  io_cpu: CPU_ENERGY,
  pe_dma: PE_ENGINE_ENERGY,
  pe_fetch_store: PE_ENGINE_ENERGY,
  pe_mmu: PE_ENGINE_ENERGY,
  pe_gemm: PE_GEMM_ENERGY,
  pe_math: PE_MATH_ENERGY,
  pe_tcm: PE_TCM_ENERGY,
  sram: SRAM_ENERGY,
  hbm_ctrl: HBM_CTRL_V1_ENERGY,
  xbar: TRANSIT_ENERGY,
  bridge: TRANSIT_ENERGY,
  noc_router: TRANSIT_ENERGY,
  ucie_port: TRANSIT_ENERGY,
  m_cpu_dma: TRANSIT_ENERGY,
});

/**
 * Links, by class (docs/energy.md): on-die wires are charged per bit and mm (`wire_pj_per_bit`
 * on `bytes_mm`, bytes x length_mm; logic-scaled), the others per bit over the PHY of their class.
 */
export const WIRE_ENERGY: EnergyTable = Object.freeze({
  costs: [
    {
      name: "wire_pj_per_bit",
      per: "bytes_mm",
      value: 0.2,
      description: "A bit moved 1 mm over an on-die link (length_mm of the link; 0 mm links cost nothing).",
      source:
        "assumption: tenths of a pJ per bit per mm for a repeated on-chip wire at 40-45 nm, the range Keckler et al. (IEEE Micro 2011, GPUs and the future of parallel computing) give",
    },
  ],
  node: HOROWITZ_NODE,
});

/** Die-to-die and off-package links: per bit, by PHY (not scaled with the logic). */
export const LINK_ENERGY: EnergyTable = Object.freeze({
  costs: [
    {
      name: "ucie_pj_per_bit",
      per: "bytes.ucie",
      value: 0.5,
      description: "A bit over a UCIe link between cubes (sip.ucie).",
      source: "UCIe 1.0 specification / white paper: 0.5 pJ/bit target for the advanced package",
    },
    {
      name: "package_pj_per_bit",
      per: "bytes.package",
      value: 1,
      description: "A bit between the IO_CPU die and a cube in one package (sip.io_link).",
      source: "UCIe 1.0 specification / white paper: 1.0 pJ/bit target for the standard package",
    },
    {
      name: "sip_link_pj_per_bit",
      per: "bytes.sip_link",
      value: 5,
      description: "A bit between packages (system.sip_link).",
      source: "assumption: a long-reach 112G PAM4 SerDes class link, about 5 pJ/bit",
    },
    {
      name: "host_link_pj_per_bit",
      per: "bytes.host_link",
      value: 5,
      description: "A bit between the host and the IO_CPU (sip.host_link, PCIe class).",
      source: "assumption: a PCIe Gen5/Gen6 SerDes class link, about 5 pJ/bit",
    },
  ],
});
