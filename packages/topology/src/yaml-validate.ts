import { closest, formatIssuePath, KbError } from "@kb/errors";
import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from "yaml";
import type * as z from "zod";
import { prototypeKeyMessage, prototypeKeyPath } from "./prototype-keys.js";
import { cyclePath } from "./yaml-cycles.js";
import { yamlSyntaxIssues } from "./yaml-syntax.js";

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
 * The codes a {@link YamlValidationError} carries: the file is not YAML, does not match its schema,
 * or (found when a machine is built from it) names a component impl that no registry provides or
 * params that the impl's schema rejects.
 */
export type YamlValidationCode =
  | "TOPOLOGY_YAML_SYNTAX"
  | "TOPOLOGY_INVALID"
  | "COMPONENT_UNKNOWN_IMPL"
  | "COMPONENT_INVALID_PARAMS";

/**
 * A YAML file that does not parse or does not match its schema. `issues` lists every problem at
 * once, sorted by position; the message has one `file:line:col: path: message` line per issue.
 */
export class YamlValidationError extends KbError {
  /** Every problem, sorted by line and column. */
  readonly issues: readonly LocatedIssue[];

  constructor(code: YamlValidationCode, file: string, issues: readonly LocatedIssue[]) {
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
 * YAML (duplicate keys, an unclosed quote at its opening quote, a second document included; see
 * `yamlSyntaxIssues`), and `TOPOLOGY_INVALID` when it does not match the schema:
 * unknown keys (with a "did you mean" suggestion), missing keys, wrong types, values out of range
 * or not among the allowed ones, and any key that `isPrototypeKey` refuses (`__proto__`,
 * `constructor`, `prototype`), wherever it is, before the schema sees the value.
 */
export function validateYaml<S extends z.ZodType>(schema: S, text: string, file: string): z.output<S> {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    const issues = yamlSyntaxIssues(document, text, lineCounter, file);
    throw new YamlValidationError("TOPOLOGY_YAML_SYNTAX", file, sortIssues(issues));
  }
  let value: unknown;
  try {
    value = document.toJS();
  } catch (error) {
    // Aliases that expand too far (the `yaml` library's maxAliasCount), and the like.
    const message = (error as Error).message.replace(/\.$/, "");
    throw new YamlValidationError("TOPOLOGY_YAML_SYNTAX", file, [
      { file, line: 1, col: 1, path: "<yaml>", message: `${message}; write the values out instead.` },
    ]);
  }
  const locate = (offset: number | undefined) => lineCounter.linePos(offset ?? 0);
  const prototypeKey = prototypeKeyPath(value);
  if (prototypeKey !== undefined) {
    const key = String(prototypeKey[prototypeKey.length - 1]);
    const path = prototypeKey.slice(0, -1);
    const { keyOffset } = findNode(document.contents as Node | null, path, key);
    const position = locate(keyOffset);
    throw new YamlValidationError("TOPOLOGY_INVALID", file, [
      { file, ...position, path: formatPath(path, key), message: prototypeKeyMessage(key) },
    ]);
  }
  const cycle = cyclePath(value);
  if (cycle !== undefined) {
    const { node } = findNode(document.contents as Node | null, cycle, undefined);
    throw new YamlValidationError("TOPOLOGY_YAML_SYNTAX", file, [
      {
        file,
        ...locate(node?.range?.[0]),
        path: formatPath(cycle),
        message: "an alias that contains itself (its anchor is around it); write the value out instead.",
      },
    ]);
  }
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
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

/**
 * A zod issue of `schema` in the words of a YAML file ("value must be >= 1, got number 0.",
 * "expected a whole number, got the string \"x\".", "missing required key ..."), as
 * {@link validateYaml} words it; for issues found outside a file, such as a component's params.
 */
export function describeSchemaIssue(issue: z.core.$ZodIssue, schema: z.ZodType): string {
  return describeIssue(issue, schema)
    .map((described) => described.message)
    .join(" ");
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
      const here = schemaAt(schema, path);
      const allowed = objectKeys(here);
      return issue.keys.map((key) => {
        const owner = allowed.find((candidate) => objectKeys(schemaAt(here, [candidate])).includes(key));
        const suggestion = closest(key, allowed);
        const hint =
          owner !== undefined
            ? `; it belongs under "${owner}" (${formatPath([...path, owner], key)}).`
            : suggestion !== undefined
              ? `; did you mean "${suggestion}"?`
              : ".";
        return {
          path,
          key,
          message: `unknown key "${key}"${hint}${allowed.length > 0 ? ` Allowed keys here: ${allowed.join(", ")}.` : ""}`,
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
            message: `missing required key "${key}" (${expectedText(issue.expected)}).`,
          },
        ];
      }
      const empty =
        path.length === 0 && (issue.input === null || issue.input === undefined)
          ? " (the file is empty)"
          : "";
      return [
        {
          path,
          message: `expected ${expectedText(issue.expected)}, got ${describeInput(issue.input)}${empty}.`,
        },
      ];
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
          }${suggestion === undefined ? "." : `; did you mean "${suggestion}"?`}${
            path[path.length - 1] === "kind" && options.length === 1
              ? " The kind is fixed by where the component sits; to change its timing model, set impl."
              : ""
          }`,
        },
      ];
    }
    case "invalid_key": {
      // A record's key that its key schema refuses: said at the key, in the key schema's words.
      const messages = issue.issues.map((inner) => inner.message.replace(/\.?$/, "."));
      return [{ path: path.slice(0, -1), key: String(path[path.length - 1]), message: messages.join(" ") }];
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

/**
 * The 1-based line and column of the value at `path` in YAML `text` (of the nearest enclosing
 * node that exists), for problems found after validation, such as an override that matches no
 * node.
 */
export function locateYamlPath(text: string, path: readonly PropertyKey[]): { line: number; col: number } {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  const { node } = findNode(document.contents as Node | null, path, undefined);
  return lineCounter.linePos(node?.range?.[0] ?? 0);
}

/** Where a path is written in a YAML text, as {@link yamlLocator} finds it. */
export interface YamlPlace {
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly col: number;
  /** How many leading segments of the path are written (`path.length` when the whole path is). */
  readonly found: number;
}

/**
 * A locator over one YAML text, parsed once, for problems found after validation at places that
 * may hold a default (a component's `impl`, a param the file does not set).
 *
 * `locate(path)` gives the position of the value at `path` (with `{ key: true }`, of its key);
 * when only a prefix of the path is written, the position of the key of the deepest written
 * segment (the start of the document when not even the first is), with `found` saying how many
 * segments are written. Unlike {@link locateYamlPath}, which points at the value of the nearest
 * enclosing node, a missing key points at the line that names its parent (`pe_gemm:` for a
 * missing `pe_gemm.impl`).
 */
export function yamlLocator(
  text: string,
): (path: readonly PropertyKey[], options?: { readonly key?: boolean }) => YamlPlace {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  const root = document.contents as Node | null;
  return (path, options = {}) => {
    let node: Node | null = root;
    let offset = root?.range?.[0] ?? 0;
    let found = 0;
    for (const segment of path) {
      let keyOffset: number | undefined;
      let next: Node | null | undefined;
      if (isMap(node)) {
        const pair = (node as YAMLMap).items.find(
          (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment),
        );
        if (pair === undefined) break;
        keyOffset = (pair.key as Node).range?.[0];
        next = (pair.value as Node | null) ?? null;
      } else if (isSeq(node)) {
        const item = node.items[Number(segment)] as Node | undefined;
        if (item === undefined) break;
        keyOffset = item.range?.[0];
        next = item;
      } else {
        break;
      }
      found += 1;
      const last = found === path.length;
      offset =
        last && options.key !== true
          ? (next?.range?.[0] ?? keyOffset ?? offset)
          : (keyOffset ?? next?.range?.[0] ?? offset);
      node = next;
    }
    const position = lineCounter.linePos(offset);
    return { line: position.line, col: position.col, found };
  };
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

/** `path` (and `key` under it) as {@link LocatedIssue.path} writes it. */
function formatPath(path: readonly PropertyKey[], key?: string): string {
  return formatIssuePath(key === undefined ? path : [...path, key]);
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

// Zod's type names, in the words of a YAML file.
const EXPECTED_TEXT: Record<string, string> = {
  object: "a mapping",
  record: "a mapping of name: value",
  array: "a list",
  int: "a whole number",
  number: "a number",
  string: "a string",
  boolean: "true or false",
};

function expectedText(type: string): string {
  return EXPECTED_TEXT[type] ?? (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
}

function describeInput(input: unknown): string {
  if (input === null) return "null";
  if (input === undefined) return "nothing";
  if (Array.isArray(input)) return "a list";
  if (typeof input === "object") return "a mapping";
  if (typeof input === "string") return `the string ${JSON.stringify(input)}`;
  return `${typeof input} ${String(input)}`;
}
