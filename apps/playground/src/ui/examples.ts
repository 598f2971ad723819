/// <reference types="vite/client" />
// The examples the playground opens: a few benches and the Triton tutorials, with every file they
// may import (benches/lib/*.ts, the tutorials' siblings), and the reference topologies. Each is
// read at build time as text (Vite's `?raw`), in its own small chunk loaded when asked for.

/** A bench the examples menu offers. */
export interface BenchExample {
  /** Virtual path, as in the repository: `benches/vector-add.ts`. */
  readonly path: string;
  /** Shown in the menu. */
  readonly label: string;
  /** `key=value` pairs that keep the run to about a second in the browser. */
  readonly params: string;
}

/** Benches and tutorials in menu order; the first is the default. */
export const BENCH_EXAMPLES: readonly BenchExample[] = [
  { path: "benches/vector-add.ts", label: "vector-add", params: "n=65536" },
  { path: "benches/gemm.ts", label: "gemm", params: "M=256 N=256 K=256 dtype=f32" },
  { path: "benches/softmax.ts", label: "softmax", params: "rows=256 cols=256" },
  { path: "benches/attention.ts", label: "attention", params: "S=128 D=64 block=64" },
  { path: "benches/row-sum.ts", label: "row-sum", params: "rows=256 cols=256" },
  { path: "benches/exp.ts", label: "exp", params: "n=65536" },
  { path: "benches/allreduce.ts", label: "allreduce", params: "minBytes=1024 maxBytes=65536" },
  {
    path: "examples/triton-tutorials/01-vector-add.ts",
    label: "Triton 01: vector add",
    params: "n_elements=65536",
  },
  {
    path: "examples/triton-tutorials/02-fused-softmax.ts",
    label: "Triton 02: fused softmax",
    params: "n_rows=256 n_cols=256",
  },
  {
    path: "examples/triton-tutorials/03-matmul.ts",
    label: "Triton 03: matmul",
    params: "M=256 N=256 K=256",
  },
  {
    path: "examples/triton-tutorials/05-layer-norm.ts",
    label: "Triton 05: layer norm",
    params: "M=256 N=256",
  },
  {
    path: "examples/triton-tutorials/05-layer-norm-backward.ts",
    label: "Triton 05: layer norm backward",
    params: "M=64 N=256 GROUP_SIZE_M=8",
  },
  {
    path: "examples/triton-tutorials/06-fused-attention.ts",
    label: "Triton 06: fused attention",
    params: "H=1 N_CTX=128",
  },
  {
    path: "examples/triton-tutorials/04-low-memory-dropout.ts",
    label: "Triton 04: low-memory dropout",
    params: "n_elements=65536",
  },
  {
    path: "examples/triton-tutorials/06-fused-attention-backward.ts",
    label: "Triton 06: fused attention backward",
    params:
      "H=1 N_CTX=256 HEAD_DIM=32 BLOCK_M=64 BLOCK_N=32 PRE_BLOCK=64 BLOCK_M1=16 BLOCK_N1=64 BLOCK_M2=64 BLOCK_N2=16",
  },
  {
    path: "examples/triton-tutorials/07-extern-functions.ts",
    label: "Triton 07: libdevice functions",
    params: "n_elements=65536",
  },
  {
    path: "examples/triton-tutorials/08-grouped-gemm.ts",
    label: "Triton 08: grouped GEMM",
    params: "sizes=256x128x64,128x64x128,64x64x64 BLOCK_SIZE_M=64 BLOCK_SIZE_N=64 BLOCK_SIZE_K=32",
  },
  {
    path: "examples/triton-tutorials/09-persistent-matmul.ts",
    label: "Triton 09: persistent matmul",
    params: "M=256 N=256 K=256 BLOCK_SIZE_M=64 BLOCK_SIZE_N=64 BLOCK_SIZE_K=64",
  },
  {
    path: "examples/triton-tutorials/10-block-scaled-matmul.ts",
    label: "Triton 10: block-scaled matmul (mxfp4)",
    params: "M=128 N=128 K=256 BLOCK_M=64 BLOCK_N=64 BLOCK_K=64 format=mxfp4",
  },
];

/** The reference topologies, by file name; the first is the default (the small one). */
export const TOPOLOGY_EXAMPLES: readonly string[] = ["default.yaml", "ref-cube.yaml", "ref-4sip.yaml"];

// Keys are paths relative to this file; VIRTUAL turns them into the repository's paths.
const sources = import.meta.glob<string>(
  [
    "../../../../benches/{vector-add,gemm,softmax,attention,row-sum,exp,allreduce}.ts",
    "../../../../benches/lib/*.ts",
    "../../../../examples/triton-tutorials/*.ts",
  ],
  { query: "?raw", import: "default", eager: false },
);
const topologies = import.meta.glob<string>("../../../../topologies/*.yaml", {
  query: "?raw",
  import: "default",
  eager: false,
});

const VIRTUAL = /^(\.\.\/)+/;

/** The virtual path of a glob key. */
function virtualPath(key: string): string {
  return key.replace(VIRTUAL, "");
}

const loaders = new Map(Object.entries(sources).map(([key, load]) => [virtualPath(key), load]));
const topologyLoaders = new Map(
  Object.entries(topologies).map(([key, load]) => [virtualPath(key).replace(/^topologies\//, ""), load]),
);

/** The example of `path`, if the menu has it. */
export function benchExample(path: string): BenchExample | undefined {
  return BENCH_EXAMPLES.find((example) => example.path === path);
}

/** The text of the bench or library file at virtual `path`. Throws when the playground has none. */
export async function loadSource(path: string): Promise<string> {
  const load = loaders.get(path);
  if (load === undefined) throw new Error(`the playground has no file ${path}`);
  return load();
}

/**
 * Every file a bench at `main` may import by a relative path, text by virtual path: the
 * benches' library (benches/lib/*.ts) and, for a tutorial, its siblings. `main` itself is left
 * to the caller (the editor holds its text).
 */
export async function loadImportable(main: string): Promise<Record<string, string>> {
  const folder = main.slice(0, main.lastIndexOf("/") + 1);
  const paths = [...loaders.keys()].filter(
    (path) =>
      path !== main &&
      (path.startsWith("benches/lib/") || (folder !== "benches/" && path.startsWith(folder))),
  );
  const texts = await Promise.all(paths.map((path) => loadSource(path)));
  return Object.fromEntries(paths.map((path, index) => [path, texts[index] as string]));
}

/** The text of reference topology `name` (`default.yaml`). Throws when there is none. */
export async function loadTopology(name: string): Promise<string> {
  const load = topologyLoaders.get(name);
  if (load === undefined) throw new Error(`the playground has no reference topology ${name}`);
  return load();
}
