import { type Document, isScalar, type LineCounter, visit, type YAMLError } from "yaml";
import type { LocatedIssue } from "./yaml-validate.js";

/**
 * The YAML library's syntax errors of a parsed document as located issues, in our words and at
 * the place to fix:
 *
 * - an unclosed quote at its opening quote (the library reports the end of the file, where the
 *   string it opened ends); the errors it causes further on are left out;
 * - a second document (`---`) as "topology files hold one YAML document; found a second at line N";
 * - a duplicate key naming the key.
 *
 * Other errors keep the library's first line, at its position.
 */
export function yamlSyntaxIssues(
  document: Document.Parsed,
  text: string,
  lineCounter: LineCounter,
  file: string,
): LocatedIssue[] {
  const at = (offset: number, message: string): LocatedIssue => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, col, path: "<yaml>", message };
  };
  const unclosed = document.errors.filter(isUnclosedQuote);
  if (unclosed.length > 0) {
    return unclosed.map((error) => {
      const quote = error.message.includes("'") ? "'" : '"';
      const opening = openingQuoteOf(document, error.pos[0]);
      const escaping = quote === '"' ? 'write \\" for a quote inside it' : "write '' for a quote inside it";
      return at(
        opening ?? error.pos[0],
        `unclosed ${quote} quote: the string that opens here runs to the end of the file. Close it with ${quote} (${escaping}).`,
      );
    });
  }
  return document.errors.map((error) => {
    if (error.code === "MULTIPLE_DOCS") {
      const { line } = lineCounter.linePos(error.pos[0]);
      return at(
        error.pos[0],
        `topology files hold one YAML document; found a second at line ${line}. Remove this "---" and what follows it, or move the second topology to a file of its own.`,
      );
    }
    if (error.code === "DUPLICATE_KEY") {
      const key = /^[^:\n]*/.exec(text.slice(error.pos[0]))?.[0]?.trim() ?? "";
      return at(error.pos[0], `duplicate key "${key}": each key may appear only once in a mapping.`);
    }
    const message = error.message.split("\n")[0] ?? error.message;
    return at(error.pos[0], `${message.replace(/\.$/, "")}.`);
  });
}

function isUnclosedQuote(error: YAMLError): boolean {
  return error.code === "MISSING_CHAR" && /closing ["']quote/.test(error.message);
}

/** The offset of the opening quote of the quoted scalar that the error at `end` ends. */
function openingQuoteOf(document: Document.Parsed, end: number): number | undefined {
  let opening: number | undefined;
  visit(document, {
    Scalar(_, node) {
      const range = node.range;
      if (
        isScalar(node) &&
        range !== undefined &&
        range !== null &&
        (node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE") &&
        range[1] === end
      ) {
        opening = range[0];
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return opening;
}
