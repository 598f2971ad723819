import { blockCount, type Program, type Step, type ValueType } from "./program.js";
import { round3Source, SECOND_KERNEL_NAME } from "./round3-source.js";
import { dotScaledSource } from "./scaled-steps.js";
import { blockRowsIndex, literal, q, rowsOf } from "./source-text.js";

// The kernel of a program as JavaScript source: the tester compiles and runs this very text, and
// prints it in a repro bench, so what fails is what the user reads.

/** The name of the kernel function in the source. */
export const KERNEL_NAME = "fuzzKernel";

/**
 * The grid a program runs on: `pes` PEs of one cube, on any topology (`{ pes }` alone would take
 * that many PEs in every cube, and programs of a common id would do each block once per cube).
 */
export function gridOf(program: Program): { sips: 1; cubes: 1; pes: number } {
  return { sips: 1, cubes: 1, pes: program.pes };
}

/** The kernel's parameters after `tl`: the inputs, then the outputs. */
export function kernelParams(program: Program): string[] {
  return [...program.inputs.map((input) => input.name), ...program.outputs.map((output) => output.name)];
}

/** True when `program` has a second launch (its `gatherBack` steps, after the kernel's). */
export function hasSecondLaunch(program: Program): boolean {
  return program.steps.some((step) => step.kind === "gatherBack");
}

/**
 * `async function fuzzKernel(tl, X0, ..., O0, ...) { ... }`, then the kernel of the second launch
 * (`fuzzGatherBack`, same parameters) when there is one.
 */
export function kernelSource(program: Program): string {
  const first = kernelFunction(program, KERNEL_NAME, (step) => step.kind !== "gatherBack");
  if (!hasSecondLaunch(program)) return first;
  return `${first}\n\n${kernelFunction(program, SECOND_KERNEL_NAME, (step) => step.kind === "gatherBack")}`;
}

/** One kernel function over the blocks, running the steps `runs` keeps. */
function kernelFunction(program: Program, name: string, runs: (step: Step) => boolean): string {
  const lines: string[] = [];
  const blocks = blockCount(program);
  lines.push(`async function ${name}(tl, ${kernelParams(program).join(", ")}) {`);
  lines.push(`  const R = ${program.rows}; // rows of the split tensors`);
  lines.push(`  const BR = ${program.blockRows}; // rows per block`);
  if (program.persistent) {
    lines.push(`  for (let b = tl.programId(0); b < ${blocks}; b += tl.numPrograms(0)) {`);
  } else {
    lines.push("  {");
    lines.push("    const b = tl.programId(0); // one block per program");
  }
  lines.push("    const rows = Math.min(BR, R - b * BR); // the last block may be shorter");
  lines.push("    const mark = tl.scratchMark();");
  program.steps.forEach((step, i) => {
    if (runs(step)) lines.push(`    ${stepSource(program, step, i)}`);
  });
  lines.push("    tl.scratchRelease(mark);");
  lines.push("  }");
  lines.push("}");
  return lines.join("\n");
}

/** The kernel's name for the accumulator of the dot at step `i`: an earlier value, or its `tl.zeros`. */
function accumulatorOf(step: Extract<Step, { kind: "dot" }>, i: number): string {
  return typeof step.acc === "number" ? `v${step.acc}` : `acc${i}`;
}

function stepSource(program: Program, step: Step, i: number): string {
  const v = (index: number) => `v${index}`;
  const type = (index: number) => program.types[index] as ValueType;
  const out = `const ${v(i)} =`;
  switch (step.kind) {
    case "load": {
      const input = program.inputs[step.input];
      if (input === undefined) throw new Error(`step ${i}: no input ${step.input}`);
      const t = type(i);
      if (!input.split) return `${out} await tl.load(${input.name}, [${t.rows}, ${t.cols}], ${q(t.dtype)});`;
      const stride = step.cols === input.shape[1] ? "" : `, { stride: ${input.shape[1]} }`;
      return `${out} await tl.load(${input.name}.at(b * BR, ${step.col0}), [rows, ${step.cols}], ${q(t.dtype)}${stride});`;
    }
    case "full": {
      const t = type(i);
      return `${out} tl.full([${rowsOf(t.rows)}, ${t.cols}], ${literal(step.value)}, ${q(t.dtype)});`;
    }
    case "unary":
    case "libdevice":
      return `${out} await tl.${step.op}(${v(step.x)});`;
    case "binary":
      return `${out} await tl.${step.op}(${v(step.a)}, ${typeof step.b === "number" ? v(step.b) : literal(step.b.scalar)});`;
    case "inplace":
      return `${out} await tl.${step.op}(${v(step.acc)}, ${v(step.x)}, { out: ${v(step.acc)} });`;
    case "fma":
      return `${out} await tl.fma(${v(step.a)}, ${v(step.b)}, ${v(step.c)});`;
    case "where":
      return `${out} await tl.where(${v(step.cond)}, ${v(step.a)}, ${v(step.b)});`;
    case "clamp":
      return `${out} await tl.clamp(${v(step.x)}, ${literal(step.lo)}, ${literal(step.hi)});`;
    case "reduce":
      return `${out} await tl.${step.op}(${v(step.x)}, ${step.axis});`;
    case "softmax":
      return `${out} await tl.softmax(${v(step.x)}, ${step.axis});`;
    case "scan":
      return `${out} await tl.${step.op}(${v(step.x)}, ${step.axis});`;
    case "cast":
      return `${out} await tl.cast(${v(step.x)}, ${q(step.dtype)});`;
    case "row": {
      const t = type(step.x);
      const start = step.which === "first" ? "0" : `(${rowsOf(t.rows)} - 1) * ${t.cols}`;
      return `${out} tl.view(${v(step.x)}, ${start}, [1, ${t.cols}]);`;
    }
    case "dot": {
      const weight = program.steps[step.b];
      const stored = weight?.kind === "load" ? program.inputs[weight.input] : undefined;
      const b = stored?.transposed === true ? `tl.trans(${v(step.b)})` : v(step.b);
      const result = type(i);
      const options =
        step.acc !== null
          ? `, { acc: ${accumulatorOf(step, i)} }`
          : step.outDtype !== null
            ? `, { outDtype: ${q(step.outDtype)} }`
            : "";
      const zeros =
        step.acc === "zeros"
          ? `const ${accumulatorOf(step, i)} = tl.zeros([${rowsOf(result.rows)}, ${result.cols}], ${q(result.dtype)}); `
          : "";
      return `${zeros}${out} await tl.dot(${v(step.a)}, ${b}${options});`;
    }
    case "useConsumed": {
      const dot = program.steps[step.dot];
      if (dot?.kind !== "dot") throw new Error(`step ${i}: step ${step.dot} is not a dot`);
      return `await tl.${step.op}(${accumulatorOf(dot, step.dot)}); // consumed by the dot of ${v(step.dot)}: refused`;
    }
    case "branch":
      return `${out} ${v(step.x)}.data.getFlat(0) > 0 ? await tl.${step.then}(${v(step.y)}) : await tl.${step.otherwise}(${v(step.y)});`;
    case "gather": {
      const input = program.inputs[step.input];
      const index = program.inputs[step.index];
      if (input === undefined || index === undefined) throw new Error(`step ${i}: bad gather`);
      const t = type(i);
      const k = index.shape[1];
      const offsets = `await tl.add(await tl.mul(${blockRowsIndex}, ${input.shape[1]}), await tl.load(${index.name}, [1, ${k}], "i32"))`;
      return `${out} await tl.load(${input.name}, [rows, ${k}], ${q(t.dtype)}, { offsets: ${offsets} });`;
    }
    case "bits":
      return step.b === null
        ? `${out} await tl.${step.op}(${v(step.a)});`
        : `${out} await tl.${step.op}(${v(step.a)}, ${typeof step.b === "number" ? v(step.b) : literal(step.b.scalar)});`;
    case "reduceAll":
      return `${out} await tl.${step.op}(${v(step.x)}); // every axis`;
    case "random": {
      const offsets = `await tl.add(await tl.mul(${blockRowsIndex}, ${step.cols}), tl.expandDims(tl.arange(0, ${step.cols}), 0))`;
      return `${out} await tl.${step.op}(${literal(step.seed)}, ${offsets});`;
    }
    case "shape": {
      const t = type(step.a);
      const [r, c] = [rowsOf(t.rows), t.cols];
      const pairs = `${step.op === "join" ? "tl.join" : "tl.cat"}(${v(step.a)}, ${v(step.b)})`;
      const halves = `tl.reshape(${v(step.a)}, [${r}, ${c / 2}, 2])`;
      switch (step.op) {
        case "join":
        case "cat":
          return `${out} tl.reshape(await ${pairs}, [${r}, ${2 * c}]);`;
        case "split":
          return `${out} (await tl.split(${halves}))[${step.half}];`;
        case "permute":
          return `${out} tl.reshape(await tl.permute(${halves}, [0, 2, 1]), [${r}, ${c}]);`;
      }
      break;
    }
    case "maskedGather": {
      const input = program.inputs[step.input];
      const index = program.inputs[step.index];
      if (input === undefined || index === undefined) throw new Error(`step ${i}: bad gather`);
      const k = index.shape[1];
      const offsets = `await tl.add(await tl.mul(${blockRowsIndex}, ${input.shape[1]}), await tl.load(${index.name}, [1, ${k}], "i32"))`;
      const mask = `await tl.lt(tl.arange(0, ${k}), ${step.on})`;
      return `${out} await tl.load(${input.name}, [rows, ${k}], ${q(type(i).dtype)}, { offsets: ${offsets}, mask: ${mask}, other: ${literal(step.other)} });`;
    }
    case "scatter": {
      const index = program.inputs[step.index];
      const output = program.outputs[step.output];
      if (index === undefined || output === undefined) throw new Error(`step ${i}: bad scatter`);
      const k = index.shape[1];
      const offsets = `await tl.add(await tl.mul(${blockRowsIndex}, ${k}), await tl.load(${index.name}, [1, ${k}], "i32"))`;
      if (step.on === null) return `await tl.store(${output.name}, ${v(step.x)}, { offsets: ${offsets} });`;
      const mask = `await tl.lt(tl.arange(0, ${k}), ${step.on})`;
      return `await tl.store(${output.name}.at(b * BR, 0), ${v(step.x)}); await tl.store(${output.name}, ${v(step.x)}, { offsets: ${offsets}, mask: ${mask} });`;
    }
    case "wideLoad": {
      const input = program.inputs[step.input];
      if (input === undefined) throw new Error(`step ${i}: no input ${step.input}`);
      const c = input.shape[1];
      const mask = `await tl.lt(tl.arange(0, ${step.block}), ${c})`;
      return `${out} await tl.load(${input.name}.at(b * BR, 0), [rows, ${step.block}], ${q(type(i).dtype)}, { stride: ${c}, mask: ${mask}, other: ${literal(step.other)} });`;
    }
    case "atomic":
    case "rowScatter":
    case "gatherBack":
      return round3Source(program, step, i);
    case "loadInto": {
      const input = program.inputs[step.input];
      if (input === undefined) throw new Error(`step ${i}: no input ${step.input}`);
      const t = type(i);
      return `${out} await tl.load(${input.name}.at(b * BR, 0), [rows, ${t.cols}], ${q(t.dtype)}, { out: tl.empty([rows, ${t.cols}], ${q(t.dtype)}) });`;
    }
    case "dotScaled":
      return dotScaledSource(program, step, i);
    case "store": {
      const output = program.outputs[step.output];
      if (output === undefined) throw new Error(`step ${i}: no output ${step.output}`);
      const row = output.rowsPerBlock === "block" ? "b * BR" : "b";
      return `await tl.store(${output.name}.at(${row}, 0), ${v(step.x)});`;
    }
    case "compositeGemm": {
      const a = program.inputs[step.a];
      const b = program.inputs[step.b];
      const output = program.outputs[step.output];
      if (a === undefined || b === undefined || output === undefined)
        throw new Error(`step ${i}: bad composite`);
      const aRef = a.transposed
        ? `tl.trans(tl.ref(${a.name}, [${a.shape[0]}, ${a.shape[1]}], ${q(a.dtype)}))`
        : `tl.ref(${a.name}.at(b * BR, 0), [rows, ${a.shape[1]}], ${q(a.dtype)})`;
      const bRef = b.transposed
        ? `tl.trans(tl.ref(${b.name}, [${b.shape[0]}, ${b.shape[1]}], ${q(b.dtype)}))`
        : `tl.ref(${b.name}, [${b.shape[0]}, ${b.shape[1]}], ${q(b.dtype)})`;
      const options = [`outPtr: ${output.name}.at(b * BR, 0)`];
      if (step.tile !== null) options.push(`tileShape: [${step.tile.join(", ")}]`);
      if (step.epilogue.length > 0) options.push(`epilogue: ${JSON.stringify(step.epilogue)}`);
      if (step.outDtype !== null) options.push(`outDtype: ${q(step.outDtype)}`);
      return `await tl.wait(await tl.composite("gemm", ${aRef}, ${bRef}, { ${options.join(", ")} }));`;
    }
    case "compositeMath": {
      const refs = step.inputs.map((index) => {
        const input = program.inputs[index];
        if (input === undefined) throw new Error(`step ${i}: no input ${index}`);
        return `tl.ref(${input.name}.at(b * BR, 0), [rows, ${input.shape[1]}], ${q(input.dtype)})`;
      });
      const output = program.outputs[step.output];
      if (output === undefined) throw new Error(`step ${i}: no output ${step.output}`);
      const options = [`outPtr: ${output.name}.at(b * BR, 0)`, `mathOp: ${q(step.op)}`];
      if (step.scalar !== null) options.push(`scalars: [${literal(step.scalar)}]`);
      return `await tl.wait(await tl.composite("math", ${refs[0]}, ${refs[1] ?? "null"}, { ${options.join(", ")} }));`;
    }
  }
}

/** Numbers as a JS array literal (NaN, Infinity and -0 kept). */
function arrayLiteral(values: readonly number[]): string {
  return `[${values.map(literal).join(", ")}]`;
}

/**
 * A bench file (`.mjs`, runs with `kb run FILE --verify`) that reproduces `program`: its inputs,
 * its kernel as the tester ran it, and the evaluator's expected outputs as references.
 */
export function reproBench(
  program: Program,
  expected: readonly (readonly number[])[],
  header: readonly string[],
): string {
  const lines: string[] = [];
  // A failure message may hold line breaks: each of its lines is a comment line of its own.
  for (const line of header)
    for (const part of line.split(/\r\n|\r|\n|\u2028|\u2029/)) lines.push(`// ${part}`);
  lines.push('import { defineBench } from "@kb/runtime";');
  lines.push('import * as z from "zod";');
  lines.push("");
  lines.push(kernelSource(program));
  lines.push("");
  lines.push("export default defineBench({");
  lines.push('  name: "fuzz-tl-repro",');
  lines.push(
    '  description: "A kernel of the tl differential tester whose phase-2 output differs from the evaluator.",',
  );
  lines.push("  params: z.object({}),");
  lines.push("  async run(sim) {");
  for (const input of program.inputs) {
    lines.push(
      `    const ${input.name} = await sim.toDevice(sim.fromArray(${arrayLiteral(input.values)}, [${input.shape.join(", ")}], ${q(input.dtype)}), { name: ${q(input.name)} });`,
    );
  }
  for (const output of program.outputs) {
    const shape = `[${output.shape.join(", ")}]`;
    lines.push(
      output.init === undefined
        ? `    const ${output.name} = sim.empty(${shape}, ${q(output.dtype)}, { name: ${q(output.name)} });`
        : `    const ${output.name} = await sim.toDevice(sim.fromArray(${arrayLiteral(output.init)}, ${shape}, ${q(output.dtype)}), { name: ${q(output.name)} });`,
    );
  }
  for (const kernel of hasSecondLaunch(program) ? [KERNEL_NAME, SECOND_KERNEL_NAME] : [KERNEL_NAME]) {
    lines.push(
      `    await sim.launch(${kernel}, { grid: { sips: 1, cubes: 1, pes: ${gridOf(program).pes} }, args: [${kernelParams(program).join(", ")}] });`,
    );
  }
  lines.push("    return {");
  lines.push("      check: {");
  program.outputs.forEach((output, i) => {
    lines.push(
      `        ${output.name}: { actual: ${output.name}, reference: () => sim.fromArray(${arrayLiteral(expected[i] ?? [])}, [${output.shape.join(", ")}], ${q(output.dtype)}) },`,
    );
  });
  lines.push("      },");
  lines.push("    };");
  lines.push("  },");
  lines.push("});");
  return `${lines.join("\n")}\n`;
}
