import type { RunResults, SiteRow } from "@kb/runtime";

// The source view's model (browser-safe, no DOM): each launch's kernel lines with their share of
// the launch's program time (docs/reports.md, "By line"), laid over the kernel's source text.

/** One line of a kernel file as the source view draws it. */
export interface SourceLine {
  /** 1-based line number. */
  readonly number: number;
  /** `file:line`, the key of the launch's `sites` and of trace slices' `args.site`. */
  readonly key: string;
  readonly text: string;
  /** The launch's figures of this line, or null when it issued no command. */
  readonly site: SiteRow | null;
}

/** A kernel file of a launch: its lines (the whole text when known, else only the lines with figures). */
export interface SourceFile {
  readonly file: string;
  /** False when the text was not available: `lines` holds the sited lines only, with empty text. */
  readonly hasText: boolean;
  readonly lines: readonly SourceLine[];
}

/** A launch's source view. */
export interface LaunchSource {
  readonly launch: string;
  /** The largest share among its lines (bars are drawn against it). */
  readonly maxShare: number;
  readonly files: readonly SourceFile[];
}

/** Splits `file:line` at its last colon. */
export function splitSiteKey(key: string): { readonly file: string; readonly line: number } {
  const colon = key.lastIndexOf(":");
  return { file: key.slice(0, colon), line: Number(key.slice(colon + 1)) };
}

/** The kernel files the launches' sites name, in order of first appearance. */
export function siteFiles(results: RunResults): string[] {
  const files = new Set<string>();
  for (const launch of results.launches) {
    for (const site of launch.sites?.lines ?? []) files.add(splitSiteKey(site.line).file);
  }
  return [...files];
}

/**
 * The source views of `results`' launches (those with `sites`): per kernel file, its lines with
 * the launch's figures; `sources` holds the files' text by path (as the sites name them).
 */
export function launchSources(
  results: RunResults,
  sources: Readonly<Record<string, string>>,
): LaunchSource[] {
  const views: LaunchSource[] = [];
  results.launches.forEach((launch, index) => {
    const sites = launch.sites;
    if (sites === undefined || sites.lines.length === 0) return;
    const byKey = new Map(sites.lines.map((site) => [site.line, site]));
    const files: SourceFile[] = [];
    for (const file of new Set(sites.lines.map((site) => splitSiteKey(site.line).file))) {
      const text = Object.hasOwn(sources, file) ? sources[file] : undefined;
      if (text !== undefined) {
        const lines = text.replace(/\n$/, "").split("\n");
        files.push({
          file,
          hasText: true,
          lines: lines.map((line, at) => {
            const key = `${file}:${at + 1}`;
            return { number: at + 1, key, text: line, site: byKey.get(key) ?? null };
          }),
        });
      } else {
        const lines = sites.lines
          .filter((site) => splitSiteKey(site.line).file === file)
          .map((site) => ({ number: splitSiteKey(site.line).line, key: site.line, text: "", site }))
          .sort((a, b) => a.number - b.number);
        files.push({ file, hasText: false, lines });
      }
    }
    const name = results.launches.length > 1 ? `${launch.name} (launch ${index + 1})` : launch.name;
    views.push({ launch: name, maxShare: Math.max(...sites.lines.map((site) => site.share)), files });
  });
  return views;
}
