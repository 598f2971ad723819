/// <reference lib="dom" />
// DOM helpers the pages share (kb web's run and sweep pages, the playground).

/** The element of the page with id `id`; a page without it is a bug of the page, thrown as such. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found as T;
}

/** Fills `select` with `labels` (values their indices), `selected` chosen; disabled with fewer than two. */
export function fillSelect(select: HTMLSelectElement, labels: readonly string[], selected: number): void {
  select.replaceChildren(
    ...labels.map((label, index) => {
      const option = document.createElement("option");
      option.value = String(index);
      option.textContent = label;
      option.selected = index === selected;
      return option;
    }),
  );
  select.disabled = labels.length < 2;
}
