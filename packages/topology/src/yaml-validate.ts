import { KbError } from "@kb/errors";
import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from "yaml";
import type * as z from "zod";

/** One problem found in a YAML file, with where it is. */
export interface LocatedIssue {
  /** The file name given to the validator. */
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly col: number;
  /** Dotted path of the key, such as `cube.hbm.channels` or `overrides[2].match` (`<top level>` for the root). */
  readonly path: string;
  /** What is wrong and, where it can say, what to write instead. */
  readonly message: string;
}

/**
 * A YAML file that does not parse or does not match its schema. `issues` lists every problem at
 * once, sorted by position; the message has one `file:line:col: path: message` line per issue.
 */
export class YamlValidationError extends KbError {
  /** Every problem, sorted by line and column. */
  readonly issues: readonly LocatedIssue[];

  constructor(
    code: "TOPOLOGY_YAML_SYNTAX" | "TOPOLOGY_INVALID",
    file: string,
    issues: readonly LocatedIssue[],
  ) {
    const first = issues[0];
    super(
      code,
      `${issues.length} problem(s) in ${file}:\n${issues.map(formatIssue).join("\n")}`,
      first === undefined ? { context: { file } } : { context: { file, line: first.line, col: first.col } },
    );
    this.issues = issues;
  }
}

/** Formats an issue as `file:line:col: path: message`. */
export function formatIssue(issue: LocatedIssue): string {
  return `${issue.file}:${issue.line}:${issue.col}: ${issue.path}: ${issue.message}`;
}

/**
 * Parses `text` as YAML and validates it with `schema`, reporting every problem with its
 * `file:line:col`. Returns the schema's output (defaults filled in).
 *
 * Throws {@link YamlValidationError} with code `TOPOLOGY_YAML_SYNTAX` when the text is not valid
 * YAML (duplicate keys included), and `TOPOLOGY_INVALID` when it does not match the schema:
 * unknown keys (with a "did you mean" suggestion), missing keys, wrong types, values out of range
 * or not among the allowed ones.
 */
export function validateYaml<S extends z.ZodType>(schema: S, text: string, file: string): z.output<S> {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    const issues = document.errors.map((error): LocatedIssue => {
      const position = lineCounter.linePos(error.pos[0]);
      return {
        file,
        line: position.line,
        col: position.col,
        path: "<yaml>",
        message: error.message.split("\n")[0] ?? error.message,
      };
    });
    throw new YamlValidationError("TOPOLOGY_YAML_SYNTAX", file, sortIssues(issues));
  }
  const result = schema.safeParse(document.toJS(), { reportInput: true });
  if (result.success) return result.data;
  const locate = (offset: number | undefined) => lineCounter.linePos(offset ?? 0);
  const issues: LocatedIssue[] = [];
  for (const issue of result.error.issues) {
    for (const located of describeIssue(issue, schema)) {
      const { node, keyOffset } = findNode(document.contents as Node | null, located.path, located.key);
      const position = locate(keyOffset ?? node?.range?.[0]);
      issues.push({
        file,
        line: position.line,
        col: position.col,
        path: formatPath(located.path, located.key),
        message: located.message,
      });
    }
  }
  throw new YamlValidationError("TOPOLOGY_INVALID", file, sortIssues(issues));
}

interface DescribedIssue {
  readonly path: readonly PropertyKey[];
  /** For key-level problems (unknown or missing key): the key, located in the map at `path`. */
  readonly key?: string;
  readonly message: string;
}

function describeIssue(issue: z.core.$ZodIssue, schema: z.ZodType): DescribedIssue[] {
  const path = issue.path;
  switch (issue.code) {
    case "unrecognized_keys": {
      const allowed = objectKeys(schemaAt(schema, path));
      return issue.keys.map((key) => {
        const suggestion = closest(key, allowed);
        return {
          path,
          key,
          message: `unknown key "${key}"${suggestion === undefined ? "" : `; did you mean "${suggestion}"?`}${
            allowed.length > 0 ? ` Allowed keys here: ${allowed.join(", ")}.` : ""
          }`,
        };
      });
    }
    case "invalid_type": {
      if (issue.input === undefined && path.length > 0) {
        const key = String(path[path.length - 1]);
        return [
          {
            path: path.slice(0, -1),
            key,
            message: `missing required key "${key}" (${article(issue.expected)}).`,
          },
        ];
      }
      return [{ path, message: `expected ${article(issue.expected)}, got ${describeInput(issue.input)}.` }];
    }
    case "invalid_value": {
      const options = issue.values.map((value) => JSON.stringify(value));
      const suggestion =
        typeof issue.input === "string"
          ? closest(
              issue.input,
              issue.values.filter((value): value is string => typeof value === "string"),
            )
          : undefined;
      return [
        {
          path,
          message: `${describeInput(issue.input)} is not allowed; expected ${
            options.length === 1 ? options[0] : `one of ${options.join(", ")}`
          }${suggestion === undefined ? "" : `; did you mean "${suggestion}"?`}`,
        },
      ];
    }
    case "too_small":
    case "too_big": {
      const bound = Number(issue.code === "too_small" ? issue.minimum : issue.maximum);
      const relation =
        issue.code === "too_small" ? (issue.inclusive ? ">=" : ">") : issue.inclusive ? "<=" : "<";
      const what =
        issue.origin === "array" ? "number of entries" : issue.origin === "string" ? "length" : "value";
      return [{ path, message: `${what} must be ${relation} ${bound}, got ${describeInput(issue.input)}.` }];
    }
    default:
      return [{ path, message: issue.message.endsWith(".") ? issue.message : `${issue.message}.` }];
  }
}

/** Finds the YAML node at `path`, and the offset of `key` in that map when a key is named. */
function findNode(
  root: Node | null,
  path: readonly PropertyKey[],
  key: string | undefined,
): { node: Node | null; keyOffset: number | undefined } {
  let node: Node | null = root;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = (node as YAMLMap).items.find(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (pair === undefined) break;
      node = (pair.value as Node | null) ?? (pair.key as Node);
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)];
      if (item === undefined) break;
      node = item as Node;
    } else {
      break;
    }
  }
  if (key !== undefined && isMap(node)) {
    const pair = (node as YAMLMap).items.find(
      (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === key,
    );
    if (pair !== undefined && isScalar(pair.key)) return { node, keyOffset: pair.key.range?.[0] };
  }
  return { node, keyOffset: undefined };
}

function formatPath(path: readonly PropertyKey[], key?: string): string {
  const segments = key === undefined ? path : [...path, key];
  if (segments.length === 0) return "<top level>";
  let text = "";
  for (const segment of segments) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += text === "" ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

function sortIssues(issues: LocatedIssue[]): LocatedIssue[] {
  return issues.sort((a, b) => a.line - b.line || a.col - b.col || a.message.localeCompare(b.message));
}

type AnyDef = {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  shape?: Record<string, z.ZodType>;
  in?: z.ZodType;
};

function defOf(schema: z.ZodType): AnyDef {
  return (schema as unknown as { _zod: { def: AnyDef } })._zod.def;
}

/** The schema that validates the value at `path` (following objects, arrays, records, wrappers). */
function schemaAt(schema: z.ZodType | undefined, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current = schema;
  for (const segment of path) {
    current = unwrap(current);
    if (current === undefined) return undefined;
    const def = defOf(current);
    if (def.type === "object") current = def.shape?.[String(segment)];
    else if (def.type === "array") current = def.element;
    else if (def.type === "record") current = def.valueType;
    else if (def.type === "union") {
      current = def.options
        ?.map((option) => schemaAt(option, [segment]))
        .find((found) => found !== undefined);
    } else return undefined;
  }
  return unwrap(current);
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  for (;;) {
    if (current === undefined) return undefined;
    const def = defOf(current);
    if (def.innerType !== undefined) current = def.innerType;
    else if (def.type === "pipe" && def.in !== undefined) current = def.in;
    else return current;
  }
}

function objectKeys(schema: z.ZodType | undefined): string[] {
  if (schema === undefined) return [];
  const def = defOf(schema);
  if (def.type === "object") return Object.keys(def.shape ?? {}).sort();
  if (def.type === "union")
    return [...new Set(def.options?.flatMap((option) => objectKeys(unwrap(option))) ?? [])].sort();
  return [];
}

/** The candidate closest to `word` by edit distance, if it is close enough to be a likely typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describeInput(input: unknown): string {
  if (input === null) return "null";
  if (input === undefined) return "nothing";
  if (Array.isArray(input)) return "a list";
  if (typeof input === "object") return "a mapping";
  if (typeof input === "string") return `the string ${JSON.stringify(input)}`;
  return `${typeof input} ${String(input)}`;
}
