/**
 * The result types and reference constants of `kb probe` (see {@link runProbe} in `probe.ts`).
 */

/** The reference size of every probe transfer: 32 KiB. */
export const PROBE_BYTES = 32768;

/** Slack (ns) allowed when comparing times, for floating-point sums only. */
export const EPSILON_NS = 1e-6;

/**
 * How far an uncontended transfer (or a lone GEMM) may be from its formula: 1%. Applied only where
 * every impl that times it declares `analytic: true` (see `ComponentDefinition.analytic`).
 */
export const PROBE_UNCONTENDED_TOLERANCE = 0.01;

/** A component whose impl does not declare `analytic: true`, so the 1% check does not hold it. */
export interface ProbeNonAnalytic {
  /** Node id (`sip0.cube0.hbm`). */
  readonly id: string;
  /** The impl as the topology names it (`kb-plugin-banked-hbm:hbm_banked`). */
  readonly impl: string;
}

/** Where a probe transfer's memory is, seen from the requester. */
export type ProbePlacement = "host" | "local" | "bridge" | "ucie" | "far" | "spread";

/** The layout of a probe transfer in HBM (one 2-D block, see {@link runProbe}). */
export interface ProbeLayout {
  /** Device address of the first byte. */
  readonly address: number;
  readonly rows: number;
  readonly rowBytes: number;
  /** Bytes between row starts (`rowBytes` when `rows` is 1). */
  readonly stride: number;
}

/** One case of the catalog, measured on its own fresh machine. */
export interface ProbeCase {
  /** `h2d`, `d2h`, `dma-read-local`, ..., `dma-read-spread`. */
  readonly name: string;
  /** `h2d` (host write), `d2h` (host read), `dma_read` (HBM -> TCM), `dma_write` (TCM -> HBM). */
  readonly kind: "h2d" | "d2h" | "dma_read" | "dma_write";
  readonly placement: ProbePlacement;
  /** `host` or the PE id (`sip0.cube0.pe0`). */
  readonly requester: string;
  /** The pseudo-channel node the block sits in (the first one, for `spread`). */
  readonly memory: string;
  /** The route the data takes (node ids): the response route of a read, the route of a write. */
  readonly route: readonly string[];
  /** Links on that route. */
  readonly hops: number;
  readonly bytes: number;
  /** Pseudo-channels the block touches (1 except for `spread`). */
  readonly pcs: number;
  readonly layout: ProbeLayout;
  /**
   * PE-side fixed time before the first packet leaves (0 for host copies): the PE_CPU's
   * `dispatch_ns` + the PE_MMU's `miss_ns` per page the block touches (a fresh TLB) + the
   * PE_DMA's `setup_ns`, from the nodes' params. Subtracted from the submit-to-completion time.
   */
  readonly fixedNs: number;
  /** The model's uncontended time of the transfer (see {@link runProbe}), ns. */
  readonly formulaNs: number;
  /** Simulated time from the start of the transfer to its completion, less `fixedNs`. */
  readonly measuredNs: number;
  /** `measuredNs / formulaNs`. */
  readonly ratio: number;
  /**
   * Whether nothing shares the transfer's links and memory, so measured must be within 1% of the
   * formula when every impl on its path is analytic ({@link nonAnalytic} empty).
   */
  readonly uncontended: boolean;
  /**
   * The components that time the case (PE-side engines, forwarding hops, the memory) whose impl is
   * not analytic; when any, the case is not held to 1% (only to measured >= formula).
   */
  readonly nonAnalytic: readonly ProbeNonAnalytic[];
}

/** One point of the utilisation sweep: `pes` PEs read at once from the same pseudo-channel. */
export interface ProbeSweepPoint {
  readonly pes: number;
  /** The PEs, nearest (lowest formula) first. */
  readonly peIds: readonly string[];
  /** The pseudo-channel they all read. */
  readonly memory: string;
  /** Per PE, in `peIds` order: its uncontended read formula (its own route to the PC), ns. */
  readonly formulasNs: readonly number[];
  /** Mean of `formulasNs`. */
  readonly formulaNs: number;
  /** Per PE, in `peIds` order: submit to completion less its fixed PE-side time, ns. */
  readonly latenciesNs: readonly number[];
  readonly meanNs: number;
  readonly maxNs: number;
  /** `meanNs / formulaNs`. */
  readonly ratio: number;
  /** `pes x bytes / maxNs`: the bandwidth the PEs got together, GB/s. */
  readonly gbs: number;
  /** Components timing the PEs' reads whose impl is not analytic (see {@link ProbeCase.nonAnalytic}). */
  readonly nonAnalytic: readonly ProbeNonAnalytic[];
}

/**
 * One GEMM on the probe PE's PE_GEMM, alone on a fresh machine, against the impl's own formula
 * (its {@link GemmTiming}), so a plug-in engine is held to what it states.
 */
export interface ProbeGemmCase {
  /** `gemm-tile` (the PE_SCHEDULER's composite tile), `gemm-small` (32 x 32 x 32), `gemm-vector` (1 x tile_n x tile_k). */
  readonly name: string;
  /** The PE_GEMM component (`sip0.cube0.pe0.pe_gemm`). */
  readonly engine: string;
  readonly impl: string;
  /** Whether the impl declares `analytic: true`: only then is it held to within 1% of its formula. */
  readonly analytic: boolean;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly dtype: "f16";
  /** The impl's cycles for it (`gemmCycles`); null when the impl states no {@link GemmTiming}. */
  readonly cycles: number | null;
  /** `cycles / freqGhz`, ns; null likewise. */
  readonly formulaNs: number | null;
  /** A `gemm` command on TCM operands from submit to completion, less the PE_CPU's `dispatch_ns`. */
  readonly measuredNs: number;
  /** `measuredNs / formulaNs`; null likewise. */
  readonly ratio: number | null;
  /** The MAC array's utilisation on it, `m n k / (cycles x macRows x macCols)`; null likewise. */
  readonly utilisation: number | null;
}

/** The result of one invariant check. */
export interface ProbeInvariant {
  /** Stable id: `measured_ge_formula`, `uncontended_within_1pct`, `monotonic_in_utilisation`, `d2h_ge_h2d`, `best_lt_worst_placement`, `gemm_matches_formula`. */
  readonly id: string;
  /** What is checked, in words. */
  readonly title: string;
  /**
   * `skip` when nothing was checked: the topology makes the check meaningless, or every transfer
   * it would hold to 1% goes through a non-analytic impl (says why in `detail`).
   */
  readonly status: "pass" | "fail" | "skip";
  /** The numbers behind the verdict. */
  readonly detail: string;
  /**
   * What a `pass` or `fail` did not check, and why: the 1% part, for transfers or GEMMs timed by
   * an impl that is not analytic (`kb-plugin-x:hbm_banked (sip0.cube0.hbm) is not analytic;
   * measured is 1.23x the formula`). Absent when everything was checked.
   */
  readonly notChecked?: string;
}
