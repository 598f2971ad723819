import { BUILTIN_KIND_ENERGY } from "@kb/builtins";
import type { ComponentRegistry, ModelStatInfo } from "@kb/components";
import { type EnergyCost, type EnergyNode, type EnergyTable, energyUnitOf } from "@kb/spec";
import * as z from "zod";

/** One param of an impl, from its zod schema (input side: what a topology may write). */
export interface ParamInfo {
  readonly name: string;
  /** Readable type with its range: `number > 0`, `integer >= 1`, `record<string, number>`. */
  readonly type: string;
  /** Whether a topology must write it (no default). */
  readonly required: boolean;
  /** The default, when there is one. */
  readonly default?: unknown;
  readonly description?: string;
  /** The param's JSON Schema, for tools. */
  readonly schema: Record<string, unknown>;
}

/** One registered impl of one kind, as `kb components list` prints it. */
export interface ImplInfo {
  readonly kind: string;
  /** The name to write in a topology's `impl:` (`"<package>:<impl>"` for plug-ins). */
  readonly impl: string;
  /** `"built-in"` or the plug-in package. */
  readonly source: string;
  readonly description: string;
  readonly params: readonly ParamInfo[];
  /** Set when the schema could not be described (it is not a zod 4 object schema). */
  readonly paramsNote?: string;
  /** The counters the impl declares it publishes (`counters` of its definition); absent when none. */
  readonly counters?: readonly ModelStatInfo[];
  /** Its energy table (`energy` of its definition, or the built-in table of its kind); absent when none. */
  readonly energy?: EnergyInfo;
}

/** An impl's energy table as listed: each cost with its unit, and the node logic costs are stated at. */
export interface EnergyInfo {
  /** Set when the costs are scaled to the topology's energy.process_nm and vdd_v. */
  readonly node?: EnergyNode;
  /** True when the impl states no table and is charged with the built-in table of its kind. */
  readonly ofKind?: boolean;
  readonly costs: readonly (EnergyCost & { readonly unit: string })[];
}

/** Every impl of `registry`, by kind then name, with its params (in schema order). */
export function describeImpls(registry: ComponentRegistry): ImplInfo[] {
  return registry.list().map((entry) => {
    const base = {
      kind: entry.kind,
      impl: entry.name,
      source: entry.source,
      description: entry.definition.description,
      ...((entry.definition.counters ?? []).length === 0
        ? {}
        : {
            counters: (entry.definition.counters ?? []).map(({ name, unit, description }) => ({
              name,
              unit,
              description,
            })),
          }),
      ...energyInfo(
        entry.definition.energy ?? BUILTIN_KIND_ENERGY[entry.kind],
        entry.definition.energy === undefined,
      ),
    };
    try {
      return { ...base, params: paramsOf(entry.definition.params as z.ZodType) };
    } catch (error) {
      return { ...base, params: [], paramsNote: `params not listed: ${(error as Error).message}` };
    }
  });
}

function energyInfo(table: EnergyTable | undefined, ofKind: boolean): { energy?: EnergyInfo } {
  if (table === undefined || table.costs.length === 0) return {};
  return {
    energy: {
      ...(table.node === undefined ? {} : { node: { ...table.node } }),
      ...(ofKind ? { ofKind } : {}),
      costs: table.costs.map((cost) => ({ ...cost, unit: energyUnitOf(cost.name) ?? "?" })),
    },
  };
}

interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly default?: unknown;
  readonly description?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
}

function paramsOf(schema: z.ZodType): ParamInfo[] {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { $schema: _, ...rest } = property as Record<string, unknown>;
    return {
      name,
      type: typeText(property),
      required: required.has(name),
      ...("default" in property ? { default: property.default } : {}),
      ...(property.description === undefined ? {} : { description: property.description }),
      schema: rest,
    };
  });
}

function typeText(schema: JsonSchema): string {
  if (schema.enum !== undefined) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  if ("const" in schema) return JSON.stringify(schema.const);
  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) return union.map(typeText).join(" | ");
  const types = typeof schema.type === "string" ? [schema.type] : (schema.type ?? []);
  if (types.length === 0) return "any";
  return types
    .map((type) => {
      if (type === "array") {
        const items = schema.items === undefined ? "any" : typeText(schema.items);
        return items.includes(" ") ? `(${items})[]` : `${items}[]`;
      }
      if (
        type === "object" &&
        schema.properties === undefined &&
        typeof schema.additionalProperties === "object"
      ) {
        return `record<string, ${typeText(schema.additionalProperties)}>`;
      }
      if (type === "number" || type === "integer") return `${type}${rangeText(schema)}`;
      return type;
    })
    .join(" | ");
}

function rangeText(schema: JsonSchema): string {
  const bounds: string[] = [];
  if (schema.exclusiveMinimum !== undefined) bounds.push(`> ${schema.exclusiveMinimum}`);
  else if (schema.minimum !== undefined && schema.minimum > Number.MIN_SAFE_INTEGER)
    bounds.push(`>= ${schema.minimum}`);
  if (schema.exclusiveMaximum !== undefined) bounds.push(`< ${schema.exclusiveMaximum}`);
  else if (schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER)
    bounds.push(`<= ${schema.maximum}`);
  return bounds.length === 0 ? "" : ` ${bounds.join(", ")}`;
}

/**
 * The human listing: impls grouped by kind, each with its description and one entry per param
 * (`name  type, default D` and the description below), wrapped to `width` columns. An impl that
 * serves several kinds is described under the first and referred to under the others.
 */
export function formatImpls(impls: readonly ImplInfo[], width: number): string {
  const lines: string[] = [];
  const sources = [...new Set(impls.map((impl) => impl.source))];
  const builtins = new Set(impls.filter((impl) => impl.source === "built-in").map((impl) => impl.impl)).size;
  const plugins = sources.filter((source) => source !== "built-in");
  const header =
    `${builtins} built-in impl(s)${plugins.length === 0 ? "" : `; plug-ins: ${plugins.join(", ")}`}. ` +
    "Write the name in a topology's impl: and the params under params:.";
  lines.push(...wrap(header, width, ""));
  const described = new Map<string, string>();
  let kind: string | undefined;
  for (const impl of impls) {
    if (impl.kind !== kind) {
      kind = impl.kind;
      lines.push("", kind);
    }
    const firstKind = described.get(impl.impl);
    if (firstKind !== undefined) {
      lines.push(`  ${impl.impl} (${impl.source}): described under ${firstKind}`);
      continue;
    }
    described.set(impl.impl, impl.kind);
    lines.push(`  ${impl.impl} (${impl.source})`);
    lines.push(...wrap(impl.description, width, "    "));
    if (impl.paramsNote !== undefined) {
      lines.push(...wrap(impl.paramsNote, width, "    "));
      continue;
    }
    if (impl.params.length === 0) {
      lines.push("    (no params)");
      lines.push(...formatCounters(impl, width));
      continue;
    }
    const nameWidth = Math.min(24, Math.max(...impl.params.map((param) => param.name.length)));
    const hanging = " ".repeat(4 + nameWidth + 2);
    for (const param of impl.params) {
      const value = param.required
        ? `${param.type}, required`
        : `${param.type}${"default" in param ? `, default ${formatDefault(param.default)}` : ""}`;
      const head = `    ${param.name.padEnd(nameWidth)}  `;
      if (head.length > hanging.length) {
        lines.push(head.trimEnd(), ...wrap(value, width, hanging));
      } else {
        const [first = "", ...rest] = wrap(value, width, hanging);
        lines.push(head + first.slice(hanging.length), ...rest);
      }
      if (param.description !== undefined) lines.push(...wrap(param.description, width, hanging));
    }
    lines.push(...formatCounters(impl, width));
  }
  return `${lines.join("\n")}\n`;
}

/** The counters an impl publishes, after its params: `counters (components[].stats of kb run --json)`, then `name (unit): description`; then its energy table. */
function formatCounters(impl: ImplInfo, width: number): string[] {
  const lines: string[] = [];
  if (impl.counters !== undefined) {
    lines.push(
      "    counters (components[].stats of the results):",
      ...impl.counters.flatMap((counter) =>
        wrap(`${counter.name} (${counter.unit}): ${counter.description}`, width, "      "),
      ),
    );
  }
  return [...lines, ...formatEnergy(impl, width)];
}

/** `energy (...)`, then `name = value unit per measure: description (source)` for each cost. */
function formatEnergy(impl: ImplInfo, width: number): string[] {
  if (impl.energy === undefined) return [];
  const { node, costs, ofKind } = impl.energy;
  const stated =
    node === undefined
      ? "not scaled"
      : `stated at ${node.process_nm} nm, ${node.vdd_v} V, scaled to the topology's energy.process_nm and vdd_v`;
  return [
    ...wrap(
      `energy (${ofKind === true ? `none of its own: the built-in table of ${impl.kind}; ` : ""}defaults for the default params; ${stated}; override under energy.costs.${impl.kind} or .${impl.impl}; docs/energy.md):`,
      width,
      "    ",
    ),
    ...costs.flatMap((cost) =>
      wrap(
        `${cost.name} = ${formatCost(cost.value)} ${cost.unit} ${cost.unit === "mW" ? "over" : cost.unit === "pJ" ? "per" : "of"} ${cost.per}: ${cost.description} (${cost.source})`,
        width,
        "      ",
      ),
    ),
  ];
}

function formatCost(value: number): string {
  return Number.parseFloat(value.toPrecision(4)).toString();
}

/**
 * A param's default as JSON with a space after the comma between an object's entries, so that
 * a long map (`dtype_cycles`) wraps between entries instead of running past the width.
 */
function formatDefault(value: unknown): string {
  return JSON.stringify(value).replaceAll(',"', ', "');
}

/** Greedy word wrap of `text` to `width` columns, every line starting with `indent`. */
function wrap(text: string, width: number, indent: string): string[] {
  const room = Math.max(20, width - indent.length);
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((part) => part !== "")) {
    if (line !== "" && line.length + 1 + word.length > room) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  if (line !== "") lines.push(indent + line);
  return lines;
}
