import type { SourceTransform } from "@kb/components/node";
import { TLContext } from "@kb/tl";
import type * as TS from "typescript";

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
 * named with its version (its output is cached under that name). Loads the TypeScript parser.
 */
export async function callSiteTransform(): Promise<SourceTransform> {
  const ts = (await import("typescript")).default;
  const names = tlMethodNames();
  return { name: "kb-call-sites-1", apply: (code, filename) => tagCallSites(ts, names, code, filename) };
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

function tagCallSites(ts: typeof TS, names: ReadonlySet<string>, code: string, filename: string): string {
  if (code.includes("sourceMappingURL")) return code;
  const source = ts.createSourceFile(filename, code, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const inserts: Insert[] = [];
  const tagNames: string[] = [];
  const visit = (node: TS.Node): void => {
    if (
      ts.isCallExpression(node) &&
      node.questionDotToken === undefined &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.questionDotToken === undefined &&
      ts.isIdentifier(node.expression.expression) &&
      ts.isIdentifier(node.expression.name) &&
      names.has(node.expression.name.text)
    ) {
      const args = node.arguments;
      const last = args[args.length - 1];
      const pos = last === undefined ? node.end - 1 : last.end;
      if (
        code.charCodeAt(node.end - 1) === 41 /* ) */ &&
        source.getLineAndCharacterOfPosition(pos).line > 0
      ) {
        const tag = `...__kbSiteTag(${tagNames.length}, ${node.expression.expression.text})`;
        tagNames.push(node.expression.name.text);
        inserts.push({ pos, text: last === undefined ? tag : `, ${tag}` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (inserts.length === 0) return code;
  inserts.sort((a, b) => a.pos - b.pos);
  // Per line (1-based): (1-based column in the tagged text where an insert starts, its length).
  const shifts: Record<string, number[]> = {};
  let text = "";
  let from = 0;
  let line = -1;
  let added = 0;
  for (const insert of inserts) {
    const at = source.getLineAndCharacterOfPosition(insert.pos);
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
