/// <reference lib="dom" />
import { splitSiteKey } from "@kb/web-ui/source-model";

// The kernel line a click in the results' source view ("Time by kernel line") landed on, so the
// playground can put the editor's cursor there.

/**
 * The file and line of the source view's row under `target`, or null outside the rows. A row with
 * figures names its line in `data-site` (`file:line`); another row has its number first and its
 * file in the heading above its listing.
 */
export function sourceLineAt(target: EventTarget | null): { file: string; line: number } | null {
  if (!(target instanceof Element)) return null;
  const row = target.closest<HTMLElement>("#source-view .source-line");
  if (row === null) return null;
  const site = row.dataset.site;
  if (site !== undefined && site !== "") return splitSiteKey(site);
  const heading = row.closest(".source-listing")?.previousElementSibling;
  const line = Number(row.firstElementChild?.textContent);
  if (heading?.classList.contains("source-file") !== true || !Number.isInteger(line) || line < 1) return null;
  return { file: heading.textContent ?? "", line };
}
