import type { EnergyCost, EnergyNode, EnergyTable } from "@kb/spec";

// The built-in energy tables of the logic components (docs/energy.md): stated at 45 nm and 0.9 V,
// the node of Horowitz's table, and scaled by a run to its topology's energy.process_nm / vdd_v.

/** The node the logic tables are stated at: Horowitz, ISSCC 2014, 45 nm at 0.9 V. */
export const HOROWITZ_NODE: EnergyNode = Object.freeze({ process_nm: 45, vdd_v: 0.9 });

const HOROWITZ = "Horowitz, 'Computing's energy problem', ISSCC 2014 (45 nm, 0.9 V)";

/** A cost row: name, per, value, description, source. */
type Row = readonly [string, string, number, string, string];

function table(rows: readonly Row[], values?: EnergyTable["values"]): EnergyTable {
  const costs: EnergyCost[] = rows.map(([name, per, value, description, source]) => ({
    name,
    per,
    value,
    description,
    source,
  }));
  return Object.freeze({ costs, node: HOROWITZ_NODE, ...(values === undefined ? {} : { values }) });
}

/** Leakage of one MAC cell of a GEMM array (its static power is this times R x C). */
const MAC_LEAK_MW = 0.0005;

/** PE_GEMM: a MAC per input dtype (multiply + add), and leakage in proportion to the array. */
export const PE_GEMM_ENERGY: EnergyTable = table(
  [
    ["mac_i8_pj", "macs.i8", 0.23, "One i8 MAC.", `${HOROWITZ}: 8-bit multiply 0.2 + add 0.03 pJ`],
    ["mac_f16_pj", "macs.f16", 1.5, "One f16 MAC.", `${HOROWITZ}: 16-bit FP multiply 1.1 + add 0.4 pJ`],
    [
      "mac_bf16_pj",
      "macs.bf16",
      1.5,
      "One bf16 MAC.",
      `${HOROWITZ}: as f16 (an upper bound: bf16's 8-bit mantissa multiplier is smaller)`,
    ],
    ["mac_f32_pj", "macs.f32", 4.6, "One f32 MAC.", `${HOROWITZ}: 32-bit FP multiply 3.7 + add 0.9 pJ`],
    [
      "mac_f8e4m3_pj",
      "macs.f8e4m3",
      0.35,
      "One fp8 (e4m3) MAC, accumulated in f32.",
      "assumption: between Horowitz's i8 MAC and f16 MAC (a 4-bit mantissa multiplier, a wider adder)",
    ],
    ["mac_f8e5m2_pj", "macs.f8e5m2", 0.35, "One fp8 (e5m2) MAC.", "assumption: as f8e4m3"],
    [
      "mac_f4e2m1_pj",
      "macs.f4e2m1",
      0.12,
      "One fp4 (e2m1) MAC.",
      "assumption: about half Horowitz's i8 MAC (a 2-bit mantissa multiplier)",
    ],
    [
      "mac_other_pj",
      "macs.other",
      4.6,
      "One MAC on any other input dtype (i32, u32, ...).",
      `${HOROWITZ}: as f32 (32-bit multiply 3.1-3.7 pJ)`,
    ],
    [
      "static_mw",
      "time_ns",
      MAC_LEAK_MW * 32 * 32,
      "Leakage of the MAC array: 0.0005 mW per MAC cell x mac_rows x mac_cols.",
      "assumption: leakage about a tenth of the array's dynamic power at 1 GHz and 10% activity",
    ],
  ],
  (params) => {
    const { mac_rows: rows = 32, mac_cols: cols = 32 } = params as { mac_rows?: number; mac_cols?: number };
    return { static_mw: MAC_LEAK_MW * rows * cols };
  },
);

/** PE_MATH: an element operation. */
export const PE_MATH_ENERGY: EnergyTable = table([
  [
    "op_pj",
    "flops",
    2.3,
    "One element operation (flops of PE_MATH).",
    `${HOROWITZ}: mean of a 32-bit FP add (0.9) and multiply (3.7) pJ`,
  ],
  ["static_mw", "time_ns", 1, "Leakage of the vector unit.", "assumption"],
]);

/** SRAM read or write of one byte at capacity `bytes`: 10 pJ per 64 bits at 8 KiB, x sqrt(size / 8 KiB). */
export function sramPjPerBit(bytes: number): number {
  return (10 / 64) * Math.sqrt(bytes / 8192);
}

const SRAM_SOURCE = `${HOROWITZ}: a 64-bit access costs 10 pJ at 8 KiB, 20 at 32 KiB, 100 at 1 MiB, fitted by 10 x sqrt(size / 8 KiB) pJ (width-independent per bit)`;

function sramTable(defaultBytes: number, staticMw: number): EnergyTable {
  return table(
    [
      [
        "access_pj_per_bit",
        "bytes",
        sramPjPerBit(defaultBytes),
        "A bit read or written: (10 / 64) x sqrt(capacity_bytes / 8 KiB).",
        SRAM_SOURCE,
      ],
      ["static_mw", "time_ns", staticMw, "Leakage of the array.", "assumption"],
    ],
    (params) => ({
      access_pj_per_bit: sramPjPerBit((params as { capacity_bytes?: number }).capacity_bytes ?? defaultBytes),
    }),
  );
}

/** PE_TCM: the scratchpad, by its capacity. */
export const PE_TCM_ENERGY: EnergyTable = sramTable(4 * 2 ** 20, 2);

/** The cube's shared SRAM, by its capacity. */
export const SRAM_ENERGY: EnergyTable = sramTable(8 * 2 ** 20, 4);

const COMMAND_SOURCE = `${HOROWITZ}: about 70 pJ of instruction overhead per instruction of a simple RISC core; one per message is an assumption`;

/** A controller or CPU that handles messages (commands, launches), per message. */
function controllerTable(opPj: number, staticMw: number, what: string): EnergyTable {
  return table([
    ["op_pj", "ops", opPj, `One ${what} handled.`, COMMAND_SOURCE],
    ["static_mw", "time_ns", staticMw, "Leakage and clock of the unit.", "assumption"],
  ]);
}

/** PE_CPU, PE_SCHEDULER, M_CPU, IO_CPU: per message. */
export const CPU_ENERGY: EnergyTable = controllerTable(70, 5, "command or message");

/** PE_DMA, PE_FETCH_STORE, PE_MMU: per command (the bytes are charged where they move). */
export const PE_ENGINE_ENERGY: EnergyTable = table([
  [
    "op_pj",
    "ops",
    10,
    "One command (address generation, a translation).",
    `assumption: a few register-file accesses of ${HOROWITZ}`,
  ],
  ["static_mw", "time_ns", 0.5, "Leakage and clock of the engine.", "assumption"],
]);

/** Routers, XBAR halves, bridges, UCIe ports, M_CPU.DMA: per bit forwarded. */
export const TRANSIT_ENERGY: EnergyTable = table([
  [
    "hop_pj_per_bit",
    "bytes",
    0.3,
    "A bit through the hop (input buffer, crossbar, output).",
    "assumption: in the range DSENT gives for a 5-port mesh router at 45 nm",
  ],
  ["static_mw", "time_ns", 2, "Leakage and clock of the hop.", "assumption"],
]);
