// Number formats of the page: @kb/errors's, the one definition `kb run`'s summary and messages use
// too (re-exported here so the page's modules import them from one place), and HTML escaping.

export { formatNs, formatNumber, formatPercent, formatQuantity, formatRatio, formatSi } from "@kb/errors";

/** Text made safe for the HTML of chart tooltips. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
