import { KbError } from "@kb/errors";
import { isPrototypeKey, prototypeKeyMessage } from "@kb/topology";

// Constraints: small expressions over a point's values, parsed once and evaluated without eval()
// (a spec is data, never code). Grammar, loosest first:
//   or := and ("||" and)*      and := compare ("&&" compare)*
//   compare := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
//   sum := product (("+" | "-") product)*      product := unary (("*" | "/" | "%") unary)*
//   unary := ("!" | "-") unary | postfix       postfix := primary ("." name | "[" or "]")*
//   primary := number | 'string' | "string" | true | false | null | name | "(" or ")"
//            | "[" (or ("," or)*)? "]"

type Node =
  | { readonly kind: "literal"; readonly value: unknown }
  | { readonly kind: "name"; readonly name: string }
  | { readonly kind: "list"; readonly items: readonly Node[] }
  | { readonly kind: "member"; readonly object: Node; readonly key: Node }
  | { readonly kind: "unary"; readonly op: string; readonly operand: Node }
  | { readonly kind: "binary"; readonly op: string; readonly left: Node; readonly right: Node };

/** A parsed constraint: `evaluate(scope)` says whether a point with these names satisfies it. */
export interface Constraint {
  readonly source: string;
  /** The names the expression reads (axis names, params, topology). */
  readonly names: readonly string[];
  /**
   * Truthiness of the expression's value; an unknown name, a field of a non-object or a
   * prototype key (`params[k]` with k `"constructor"`) throws `SWEEP_INVALID`. A field the value
   * does not hold itself (`topology.toString`) is `undefined`.
   */
  evaluate(scope: Readonly<Record<string, unknown>>): boolean;
}

const TOKEN =
  /\s*(?:(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|([A-Za-z_$][A-Za-z0-9_$]*)|(==|!=|<=|>=|&&|\|\||[-+*/%<>!().,[\]]))/y;

interface Token {
  readonly text: string;
  readonly kind: "number" | "string" | "name" | "op";
  readonly at: number;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  let at = 0;
  while (at < source.length) {
    if (/^\s*$/.test(source.slice(at))) break;
    TOKEN.lastIndex = at;
    const match = TOKEN.exec(source);
    if (match === null)
      throw new Error(`unexpected "${source.slice(at).trimStart()[0]}" at column ${at + 1}`);
    const [whole, number, string, name, op] = match;
    const start = at + whole.length - (number ?? string ?? name ?? op ?? "").length;
    if (number !== undefined) tokens.push({ text: number, kind: "number", at: start });
    else if (string !== undefined) tokens.push({ text: string, kind: "string", at: start });
    else if (name !== undefined) tokens.push({ text: name, kind: "name", at: start });
    else tokens.push({ text: op as string, kind: "op", at: start });
    at += whole.length;
  }
  return tokens;
}

const BINARY_LEVELS: readonly (readonly string[])[] = [
  ["||"],
  ["&&"],
  ["==", "!=", "<", "<=", ">", ">="],
  ["+", "-"],
  ["*", "/", "%"],
];

/** Parses a constraint; a syntax error throws an `Error` saying where (the spec loader locates it). */
export function parseConstraint(source: string): Constraint {
  const tokens = tokenize(source);
  let position = 0;
  const peek = () => tokens[position];
  const expect = (text: string) => {
    const token = tokens[position];
    if (token?.text !== text) {
      throw new Error(
        `expected "${text}" ${token === undefined ? "at the end" : `at column ${token.at + 1}, found "${token.text}"`}`,
      );
    }
    position++;
  };
  const names = new Set<string>();

  const binary = (level: number): Node => {
    if (level === BINARY_LEVELS.length) return unary();
    const ops = BINARY_LEVELS[level] as readonly string[];
    let left = binary(level + 1);
    // Comparisons do not chain (a < b < c is almost always a mistake).
    const once = level === 2;
    while (peek()?.kind === "op" && ops.includes(peek()?.text as string)) {
      const op = (tokens[position++] as Token).text;
      left = { kind: "binary", op, left, right: binary(level + 1) };
      if (once) break;
    }
    return left;
  };
  const unary = (): Node => {
    const token = peek();
    if (token?.kind === "op" && (token.text === "!" || token.text === "-")) {
      position++;
      return { kind: "unary", op: token.text, operand: unary() };
    }
    return postfix();
  };
  const postfix = (): Node => {
    let node = primary();
    for (;;) {
      const token = peek();
      if (token?.text === ".") {
        position++;
        const key = tokens[position++];
        if (key?.kind !== "name")
          throw new Error(`expected a field name after "." at column ${token.at + 2}`);
        refusePrototypeKey(key.text, key.at);
        node = { kind: "member", object: node, key: { kind: "literal", value: key.text } };
      } else if (token?.text === "[") {
        position++;
        const at = peek()?.at ?? token.at;
        const key = binary(0);
        if (key.kind === "literal") refusePrototypeKey(String(key.value), at);
        expect("]");
        node = { kind: "member", object: node, key };
      } else {
        return node;
      }
    }
  };
  const primary = (): Node => {
    const token = tokens[position++];
    if (token === undefined) throw new Error("the expression ends too early");
    if (token.kind === "number") return { kind: "literal", value: Number(token.text) };
    if (token.kind === "string")
      return {
        kind: "literal",
        value: JSON.parse(`"${token.text.slice(1, -1).replaceAll('"', '\\"').replaceAll("\\'", "'")}"`),
      };
    if (token.kind === "name") {
      if (token.text === "true") return { kind: "literal", value: true };
      if (token.text === "false") return { kind: "literal", value: false };
      if (token.text === "null") return { kind: "literal", value: null };
      refusePrototypeKey(token.text, token.at);
      names.add(token.text);
      return { kind: "name", name: token.text };
    }
    if (token.text === "[") {
      const items: Node[] = [];
      while (peek()?.text !== "]") {
        if (items.length > 0) expect(",");
        items.push(binary(0));
      }
      position++;
      return { kind: "list", items };
    }
    if (token.text === "(") {
      const inner = binary(0);
      expect(")");
      return inner;
    }
    throw new Error(`unexpected "${token.text}" at column ${token.at + 1}`);
  };

  const root = binary(0);
  const rest = peek();
  if (rest !== undefined) throw new Error(`unexpected "${rest.text}" at column ${rest.at + 1}`);
  return {
    source,
    names: [...names],
    evaluate: (scope) => Boolean(evaluate(root, scope, source)),
  };
}

/** A name or field a constraint may not read (see `isPrototypeKey`), found when it is parsed. */
function refusePrototypeKey(key: string, at: number): void {
  if (isPrototypeKey(key)) throw new Error(`at column ${at + 1}: ${prototypeKeyMessage(key)}`);
}

function evaluate(node: Node, scope: Readonly<Record<string, unknown>>, source: string): unknown {
  switch (node.kind) {
    case "literal":
      return node.value;
    case "list":
      return node.items.map((item) => evaluate(item, scope, source));
    case "name":
      if (!Object.hasOwn(scope, node.name)) {
        throw new KbError(
          "SWEEP_INVALID",
          `constraint "${source}": no value named "${node.name}"; known: ${Object.keys(scope).join(", ")}.`,
        );
      }
      return scope[node.name];
    case "member": {
      const object = evaluate(node.object, scope, source);
      const key = evaluate(node.key, scope, source);
      if (object === null || typeof object !== "object") {
        throw new KbError(
          "SWEEP_INVALID",
          `constraint "${source}": cannot read [${JSON.stringify(key)}] of ${JSON.stringify(object) ?? "undefined"}.`,
        );
      }
      const field = String(key);
      if (isPrototypeKey(field)) {
        throw new KbError("SWEEP_INVALID", `constraint "${source}": ${prototypeKeyMessage(field)}`);
      }
      // Own fields only: a point's values are data; what their prototype holds is not a value.
      return Object.hasOwn(object, field) ? (object as Record<string, unknown>)[field] : undefined;
    }
    case "unary": {
      const operand = evaluate(node.operand, scope, source);
      return node.op === "!" ? !operand : -(operand as number);
    }
    case "binary": {
      if (node.op === "&&") return evaluate(node.left, scope, source) && evaluate(node.right, scope, source);
      if (node.op === "||") return evaluate(node.left, scope, source) || evaluate(node.right, scope, source);
      const left = evaluate(node.left, scope, source) as number;
      const right = evaluate(node.right, scope, source) as number;
      switch (node.op) {
        case "==":
          return sameValue(left, right);
        case "!=":
          return !sameValue(left, right);
        case "<":
          return left < right;
        case "<=":
          return left <= right;
        case ">":
          return left > right;
        case ">=":
          return left >= right;
        case "+":
          return left + right;
        case "-":
          return left - right;
        case "*":
          return left * right;
        case "/":
          return left / right;
        default:
          return left % right;
      }
    }
  }
}

/** Equality by value: lists and objects compare by their JSON (tile == [64, 64, 64]). */
function sameValue(left: unknown, right: unknown): boolean {
  if (typeof left === "object" && typeof right === "object" && left !== null && right !== null) {
    return JSON.stringify(left) === JSON.stringify(right);
  }
  return left === right;
}
