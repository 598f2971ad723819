/// <reference lib="dom" />
import type { EChartsType } from "echarts/core";
import { byId } from "./dom.js";
import { metricName } from "./metric-names.js";
import type { SweepData, SweepWebRow } from "./sweep-api.js";
import { renderParallel, renderScatter } from "./sweep-charts.js";
import {
  type AxisColours,
  axisColours,
  cellText,
  cellValue,
  type Direction,
  logScaleOf,
  metricDirection,
  numericMetrics,
  parallelModel,
  runHint,
  type ScatterModel,
  scatterModel,
  sortRows,
  sweepColumns,
} from "./sweep-model.js";
import { empty } from "./tables.js";

// The sweep page `kb web RESULTS.jsonl` serves at /: the points' table, the scatter of two metrics
// with its Pareto front, and the parallel coordinates; a point whose run is cached opens its run
// page (/?run=DIGEST) in a new tab.

/** What the page exposes on `window.kbSweep` for tests and for poking at in the console. */
export interface KbSweepHandle {
  readonly data: SweepData;
  /** The metrics plotted, and which way each is better. */
  x: string | null;
  y: string | null;
  readonly directions: Map<string, Direction>;
  /** Metrics drawn on a log scale when plotted (chosen, or suggested at first plot). */
  readonly logScale: Map<string, boolean>;
  /** The axis whose values colour the scatter's points, or null (front red, others blue). */
  colourBy: string | null;
  /** Its colours, while one is chosen. */
  colours: AxisColours | null;
  /** What the scatter draws. */
  model: ScatterModel | null;
  scatter: EChartsType | null;
  parallel: EChartsType | null;
  /** The run pages opened, in order. */
  readonly opened: string[];
}

declare global {
  interface Window {
    kbSweep?: KbSweepHandle;
  }
}

/** The run page of a point. */
function runUrl(row: SweepWebRow): string | null {
  return row.cached && row.digest !== null ? `/?run=${row.digest}` : null;
}

/** Fills `select` with `names` (the values), each shown as `text(name)`. */
function fillSelect(
  select: HTMLSelectElement,
  names: readonly string[],
  selected: string | null,
  text: (name: string) => string = (name) => metricName(name).text,
): void {
  select.replaceChildren(
    ...names.map((name) => {
      const option = document.createElement("option");
      option.value = name;
      option.textContent = text(name);
      option.selected = name === selected;
      return option;
    }),
  );
  select.disabled = names.length === 0;
}

async function main(): Promise<void> {
  const response = await fetch("/api/sweep");
  if (!response.ok) throw new Error(`GET /api/sweep answered ${response.status}: ${await response.text()}`);
  const data = (await response.json()) as SweepData;
  if (data.schema !== "kb.sweep-web/1") throw new Error(`unexpected sweep schema ${String(data.schema)}`);
  const plottable = numericMetrics(data);
  const handle: KbSweepHandle = {
    data,
    x: plottable[0] ?? null,
    y: plottable[1] ?? plottable[0] ?? null,
    directions: new Map(data.metrics.map((name) => [name, metricDirection(name)])),
    logScale: new Map(),
    colourBy: null,
    colours: null,
    model: null,
    scatter: null,
    parallel: null,
    opened: [],
  };
  window.kbSweep = handle;

  const ok = data.rows.filter((row) => row.status === "ok").length;
  const cached = data.rows.filter((row) => row.cached).length;
  byId("sweep-name").textContent = `— sweep ${data.file}`;
  byId("sweep-summary").textContent =
    `${data.rows.length} points: ${ok} ok, ${data.rows.length - ok} failed. ` +
    (data.cacheDir === null
      ? "Runs do not open: run kb web with --cache DIR (the folder given to kb sweep --cache)."
      : `${cached} of them have results in ${data.cacheDir}: click one to open its run.`);
  byId("warnings").replaceChildren(
    ...data.warnings.map((warning) => {
      const item = document.createElement("li");
      item.textContent = warning;
      return item;
    }),
  );

  const open = (row: SweepWebRow) => {
    const url = runUrl(row);
    if (url === null) return;
    handle.opened.push(url);
    window.open(url, "_blank", "noopener");
  };

  const xSelect = byId<HTMLSelectElement>("scatter-x");
  const ySelect = byId<HTMLSelectElement>("scatter-y");
  const xDirection = byId<HTMLSelectElement>("direction-x");
  const yDirection = byId<HTMLSelectElement>("direction-y");
  const xLog = byId<HTMLInputElement>("log-x");
  const yLog = byId<HTMLInputElement>("log-y");
  /** Whether `metric` is drawn on a log scale, and the checkbox of its axis set to say so. */
  const logOf = (box: HTMLInputElement, metric: string, values: readonly number[]): boolean => {
    const scale = logScaleOf(values);
    const log = scale.possible && (handle.logScale.get(metric) ?? scale.suggested);
    box.disabled = !scale.possible;
    box.checked = log;
    box.parentElement?.setAttribute("title", scale.why);
    return log;
  };
  fillSelect(xSelect, plottable, handle.x);
  fillSelect(ySelect, plottable, handle.y);
  const colourSelect = byId<HTMLSelectElement>("scatter-colour");
  fillSelect(colourSelect, ["", ...data.axes], "", (name) => (name === "" ? "front / others" : name));
  colourSelect.disabled = data.axes.length === 0;
  const draw = () => {
    const { x, y } = handle;
    xDirection.disabled = x === null;
    yDirection.disabled = y === null;
    let front = new Set<number>();
    if (x === null || y === null) {
      byId("scatter-chart").replaceChildren(empty("No metric has a number in an ok row: nothing to plot."));
    } else {
      const directions = [handle.directions.get(x) ?? "min", handle.directions.get(y) ?? "min"] as const;
      xDirection.value = directions[0];
      yDirection.value = directions[1];
      const model = scatterModel(data.rows, x, y, directions);
      handle.model = model;
      const plotted = [...model.front, ...model.others];
      const logX = logOf(
        xLog,
        x,
        plotted.map((point) => point.x),
      );
      const logY = logOf(
        yLog,
        y,
        plotted.map((point) => point.y),
      );
      // The values of the points drawn: failed points are never on the scatter.
      handle.colours =
        handle.colourBy === null
          ? null
          : axisColours(
              plotted.map((point) => point.row),
              handle.colourBy,
            );
      handle.scatter = renderScatter(
        byId("scatter-chart"),
        model,
        { x, y, logX, logY, colour: handle.colours },
        data,
        open,
      );
      byId("scatter-colour-legend").replaceChildren(...colourLegend(handle.colours));
      byId("scatter-left-out").replaceChildren(...leftOut(model, x, y));
      front = new Set(model.front.map((point) => point.row.point));
    }
    handle.parallel = renderParallel(byId("parallel-chart"), parallelModel(data), front, data, open);
  };
  colourSelect.addEventListener("change", () => {
    handle.colourBy = colourSelect.value === "" ? null : colourSelect.value;
    draw();
  });
  xSelect.addEventListener("change", () => {
    handle.x = xSelect.value;
    draw();
  });
  ySelect.addEventListener("change", () => {
    handle.y = ySelect.value;
    draw();
  });
  for (const [select, axis] of [
    [xDirection, "x"],
    [yDirection, "y"],
  ] as const) {
    select.addEventListener("change", () => {
      const metric = handle[axis];
      if (metric !== null) handle.directions.set(metric, select.value === "max" ? "max" : "min");
      draw();
    });
  }
  for (const [box, axis] of [
    [xLog, "x"],
    [yLog, "y"],
  ] as const) {
    box.addEventListener("change", () => {
      const metric = handle[axis];
      if (metric !== null) handle.logScale.set(metric, box.checked);
      draw();
    });
  }
  draw();
  renderTable(byId("sweep-table"), data, open);
  window.addEventListener("resize", () => {
    handle.scatter?.resize();
    handle.parallel?.resize();
  });

  byId("status").hidden = true;
  document.body.dataset.ready = "true";
}

/** The legend of the points' colours: a swatch and the value per entry (none without colours). */
function colourLegend(colours: AxisColours | null): HTMLElement[] {
  if (colours === null) return [];
  return colours.legend.map(({ value, colour }) => {
    const item = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = colour;
    item.append(swatch, `${colours.axis} = ${value}`);
    item.dataset.value = value;
    return item;
  });
}

/** A reason's lines joined into one. */
function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, " ");
}

/** The points the scatter leaves out, and why. */
function leftOut(model: ScatterModel, x: string, y: string): HTMLElement[] {
  const item = (text: string) => {
    const li = document.createElement("li");
    li.textContent = text;
    return li;
  };
  return [
    ...model.failed.map((row) =>
      item(`point ${row.point} failed (not on the front): ${oneLine(row.reason ?? "")}`),
    ),
    ...model.missing.map((row) => item(`point ${row.point} has no number for ${x} or ${y}`)),
  ];
}

/** The table of every point; sorted by a column when its title is clicked (again: the other way). */
function renderTable(container: HTMLElement, data: SweepData, open: (row: SweepWebRow) => void): void {
  const columns = sweepColumns(data);
  let sortBy = "point";
  let descending = false;
  const draw = () => {
    const table = document.createElement("table");
    table.className = "sweep-table";
    const head = table.createTHead().insertRow();
    for (const column of columns) {
      const th = document.createElement("th");
      th.textContent = `${column.title}${column.id === sortBy ? (descending ? " ▼" : " ▲") : ""}`;
      th.dataset.column = column.id;
      if (column.id.startsWith("metric:")) th.title = `metric ${column.id.slice(7)} of the sweep spec`;
      th.className = "sortable";
      th.addEventListener("click", () => {
        descending = column.id === sortBy ? !descending : false;
        sortBy = column.id;
        draw();
      });
      head.appendChild(th);
    }
    const body = table.createTBody();
    for (const row of sortRows(data.rows, sortBy, descending)) {
      const tr = body.insertRow();
      tr.dataset.point = String(row.point);
      tr.className = `${row.status === "ok" ? "" : "failed "}${row.cached ? "opens" : ""}`.trim();
      tr.title = runHint(row, data.cacheDir);
      for (const column of columns) {
        const td = tr.insertCell();
        const url = column.id === "point" ? runUrl(row) : null;
        if (url !== null) {
          const link = document.createElement("a");
          link.href = url;
          link.target = "_blank";
          link.rel = "noopener";
          link.textContent = String(row.point);
          td.appendChild(link);
        } else if (column.id === "reason" && row.reason !== null) {
          // On one line, cut by the column's width; the whole reason (a stack, a log tail) on hover.
          td.textContent = oneLine(row.reason);
          td.title = row.reason;
        } else {
          td.textContent = cellText(cellValue(row, column.id));
        }
        if (column.numeric) td.className = "num";
        if (column.id === "status" && row.status !== "ok") td.className = "fail";
      }
      tr.addEventListener("click", (event) => {
        // The point's link opens the run itself.
        if (!(event.target instanceof HTMLAnchorElement)) open(row);
      });
    }
    container.replaceChildren(table);
  };
  draw();
}

main().catch((error: unknown) => {
  const status = document.getElementById("status");
  const message = error instanceof Error ? error.message : String(error);
  if (status !== null) {
    status.textContent = `kb web could not draw the sweep page: ${message}`;
    status.classList.add("error");
  }
  document.body.dataset.ready = "error";
  document.body.dataset.error = message;
});
