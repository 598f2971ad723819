/**
 * Node-id globs, as written in `overrides[].match`.
 *
 * A node id is a dotted path (`sip0.cube1.pe3.pe_gemm`). In a glob, `*` matches any run of
 * characters (possibly empty) except `.`, so it stays within one segment: `sip*.cube0.pe*.pe_dma`
 * matches `sip1.cube0.pe12.pe_dma` but not `sip1.cube0.pe12.pe_cpu`, and `sip0.*` matches
 * `sip0.io_cpu` but not `sip0.cube0.m_cpu`. `**` is two `*` (still one segment); every other
 * character, `?` and `[` included, matches itself. A glob without `*` is an exact id.
 */

/** True when `pattern` has a wildcard (`*`); otherwise it is an exact node id. */
export function isIdGlob(pattern: string): boolean {
  return pattern.includes("*");
}

/**
 * Compiles a node-id glob (see the module comment) into an anchored regular expression.
 * `idGlobToRegExp("sip*.cube0.pe*.pe_dma").test("sip1.cube0.pe3.pe_dma")` is true.
 */
export function idGlobToRegExp(pattern: string): RegExp {
  const parts = pattern.split("*").map((part) => part.replace(/[\\^$.|?+()[\]{}/-]/g, "\\$&"));
  return new RegExp(`^${parts.join("[^.]*")}$`);
}
