import type { SourceTransform } from "@kb/components/node";
import { TLContext } from "@kb/tl";
import type * as Acorn from "acorn";

/**
 * Tags a kernel module's tl calls with their place in its source, so a call's site is known
 * without walking the stack (`siteTags` of @kb/tl, site-tags.ts there): what `kb run` applies to a
 * bench file and the files it imports, after jiti's own transform (the text node runs).
 *
 * Each call `name(...)` of an identifier (`tl.load(ptr)`) whose name is a method of tl's context
 * gets one more argument, spread from an empty array after the others: `tl.load(ptr,
 * ...__kbSiteTag(3, tl))`, evaluated last, just before the call, so the call is the same (its
 * arguments, their order, `arguments.length`). A call of another object with such a name (`Math.max`)
 * is tagged too and its tag taken by nobody. What is added to a line moves the columns after it;
 * the module hands @kb/tl where (a table per line), and tl moves a frame's column back, so
 * located errors and reports read the same columns as without tags. Line 1 is left as it is (the
 * module wrapper node puts on it shifts its columns already), and so is a module whose text carries
 * a source map (its frames are mapped through it).
 */
export type CallSiteTagger = (code: string, filename: string) => string;

/**
 * The tagger {@link CallSiteTagger} as a transform of `importSourceFile` (@kb/components/node),
 * named with its version (its output is cached under that name). Loads the parser (acorn).
 */
export async function callSiteTransform(): Promise<SourceTransform> {
  const { parse } = await import("acorn");
  const names = tlMethodNames();
  return { name: "kb-call-sites-1", apply: (code, filename) => tagCallSites(parse, names, code, filename) };
}

/** The method names of tl's context (`load`, `store`, ...), but its internal (`_`) ones. */
function tlMethodNames(): ReadonlySet<string> {
  const names = new Set<string>();
  for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(TLContext.prototype))) {
    if (typeof descriptor.value === "function" && name !== "constructor" && !name.startsWith("_"))
      names.add(name);
  }
  return names;
}

interface Insert {
  readonly pos: number;
  readonly text: string;
}

/** An ESTree node as acorn gives it (the parts read here). */
interface EsNode {
  readonly type: string;
  readonly start: number;
  readonly end: number;
  readonly [key: string]: unknown;
}

function tagCallSites(
  parse: typeof Acorn.parse,
  names: ReadonlySet<string>,
  code: string,
  filename: string,
): string {
  if (code.includes("sourceMappingURL")) return code;
  let program: EsNode;
  try {
    program = parse(code, {
      ecmaVersion: "latest",
      sourceType: "script",
      allowAwaitOutsideFunction: true,
      allowReturnOutsideFunction: true,
      allowHashBang: true,
    }) as unknown as EsNode;
  } catch {
    return code; // Not for this parser: untagged, its calls' sites are found by the stack as before.
  }
  const firstLineEnd = code.search(/[\n\r\u2028\u2029]/);
  const inserts: Insert[] = [];
  const tagNames: string[] = [];
  const visit = (node: EsNode): void => {
    if (node.type === "CallExpression" && node.optional !== true) {
      const callee = node.callee as EsNode;
      const object = callee.object as EsNode | undefined;
      const property = callee.property as EsNode | undefined;
      if (
        callee.type === "MemberExpression" &&
        callee.computed === false &&
        callee.optional !== true &&
        object?.type === "Identifier" &&
        property?.type === "Identifier" &&
        names.has(property.name as string)
      ) {
        const args = node.arguments as EsNode[];
        const last = args[args.length - 1];
        const pos = last === undefined ? node.end - 1 : last.end;
        if (code.charCodeAt(node.end - 1) === 41 /* ) */ && firstLineEnd >= 0 && pos > firstLineEnd) {
          const tag = `...__kbSiteTag(${tagNames.length}, ${object.name as string})`;
          tagNames.push(property.name as string);
          inserts.push({ pos, text: last === undefined ? tag : `, ${tag}` });
        }
      }
    }
    for (const key in node) {
      const value = node[key];
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) visit(item);
      } else if (isNode(value)) visit(value);
    }
  };
  visit(program);
  if (inserts.length === 0) return code;
  inserts.sort((a, b) => a.pos - b.pos);
  const lineStarts = lineStartsOf(code);
  // Per line (1-based): (1-based column in the tagged text where an insert starts, its length).
  const shifts: Record<string, number[]> = {};
  let text = "";
  let from = 0;
  let line = -1;
  let added = 0;
  for (const insert of inserts) {
    const at = positionOf(lineStarts, insert.pos);
    let pairs = shifts[String(at.line + 1)];
    if (at.line !== line || pairs === undefined) {
      line = at.line;
      added = 0;
      pairs = [];
      shifts[String(line + 1)] = pairs;
    }
    pairs.push(at.character + added + 1, insert.text.length);
    added += insert.text.length;
    text += code.slice(from, insert.pos) + insert.text;
    from = insert.pos;
  }
  text += code.slice(from);
  // Declared after the code, on lines of their own (no line of the module moves); a function
  // declaration is hoisted, so a tag made while the module loads finds it.
  return `${text}\n;function __kbSiteTag(index, receiver) { return (__kbSiteTags ??= require("@kb/tl").siteTags(${JSON.stringify(filename)}, ${JSON.stringify(tagNames)}, ${JSON.stringify(shifts)}))(index, receiver); }\nvar __kbSiteTags;\n`;
}

function isNode(value: unknown): value is EsNode {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}

/** Where each line of `code` starts (line terminators as JavaScript's: \n, \r\n, \r, U+2028, U+2029). */
function lineStartsOf(code: string): number[] {
  const starts = [0];
  const terminator = /\r\n?|[\n\u2028\u2029]/g;
  for (let match = terminator.exec(code); match !== null; match = terminator.exec(code)) {
    starts.push(match.index + match[0].length);
  }
  return starts;
}

/** The 0-based line and character of `pos`. */
function positionOf(lineStarts: readonly number[], pos: number): { line: number; character: number } {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((lineStarts[middle] as number) <= pos) low = middle;
    else high = middle - 1;
  }
  return { line: low, character: pos - (lineStarts[low] as number) };
}
