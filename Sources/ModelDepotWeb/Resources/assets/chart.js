// ModelDepot's charts: draws the geometry the presentation layer computed (TimeSeriesChart, StorageChart) as SVG.
// Nothing is computed here but placement; every value is an attribute or textContent, never markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svgElement(name, attributes, text) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value !== undefined && value !== null && value !== "") element.setAttribute(key, String(value));
  }
  if (text !== undefined) element.textContent = text;
  return element;
}

// The <svg> of a <figure class="chart">, made once: the figure reserves its box, so nothing moves when it fills.
// The drawing is hidden from screen readers; the figure's caption says the same in words.
function chartCanvas(figure, width, height) {
  let svg = figure.querySelector("svg");
  if (!svg) {
    svg = svgElement("svg", {});
    figure.prepend(svg);
  }
  svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  svg.setAttribute("aria-hidden", "true");
  return svg;
}

function setCaption(figure, text) {
  const caption = figure.querySelector("figcaption");
  if (caption) caption.textContent = text;
}

// A line chart over time: grid, each series' stretches (gaps stay gaps), the limit line, the time axis.
function drawTimeChart(figure, chart) {
  if (!figure || !chart) return;
  const svg = chartCanvas(figure, chart.width, chart.height);
  svg.dataset.maximum = chart.maximum;
  svg.dataset.plotTop = chart.plotTop;
  svg.dataset.plotBottom = chart.plotBottom;
  const parts = [svgElement("line", { class: "axis", x1: 0, x2: chart.width, y1: chart.plotBottom, y2: chart.plotBottom })];
  for (const tick of chart.ticks) {
    parts.push(svgElement("line", { class: "grid", x1: 0, x2: chart.width, y1: tick.y, y2: tick.y }));
    parts.push(svgElement("text", { class: "tick-label", x: 2, y: tick.y + 13 }, tick.label));
  }
  for (const series of chart.series) {
    const group = svgElement("g", { class: "series", "data-key": series.key });
    for (const points of series.segments) {
      group.appendChild(svgElement("polyline", { class: "line", points, "stroke-dasharray": series.dash }));
    }
    parts.push(group);
  }
  if (chart.limit) {
    parts.push(svgElement("line", {
      class: "limit", x1: 0, x2: chart.width, y1: chart.limit.y, y2: chart.limit.y, "stroke-dasharray": "6 4",
      "data-value": chart.limit.value,
    }));
    // Its label in the middle: recent values are at the right, the axis' labels at the left.
    parts.push(svgElement("text", { class: "limit-label", x: chart.width / 2, y: chart.limit.y - 4, "text-anchor": "middle" },
      chart.limit.label));
  }
  for (const label of chart.timeLabels) {
    parts.push(svgElement("text", { class: "time-label", x: label.x, y: chart.height - 4, "text-anchor": label.anchor },
      label.label));
  }
  svg.replaceChildren(...parts);
  setCaption(figure, chart.summary);
  drawLegend(figure, chart.series.length > 1 ? chart.series : []);
}

// Which line is which, by its dash and its name (a chart with one line has its title instead).
function drawLegend(figure, series) {
  let legend = figure.querySelector(".legend");
  if (!series.length) {
    if (legend) legend.remove();
    return;
  }
  if (!legend) {
    legend = document.createElement("ul");
    legend.className = "legend";
    figure.appendChild(legend);
  }
  legend.replaceChildren(...series.map((line) => {
    const item = document.createElement("li");
    const sample = svgElement("svg", { viewBox: "0 0 24 8", width: 24, height: 8, "aria-hidden": "true" });
    sample.appendChild(svgElement("line", { class: "line", x1: 0, x2: 24, y1: 4, y2: 4, "stroke-dasharray": line.dash }));
    item.append(sample, " " + line.label + (line.latestText ? ": " + line.latestText : ""));
    return item;
  }));
}

// The cache as bars on one scale: pieces by kind (patterns, not colour alone), the budget as a vertical line.
function drawStorageChart(figure, chart) {
  if (!figure || !chart) return;
  const svg = chartCanvas(figure, chart.width, chart.height);
  svg.dataset.scaleBytes = chart.scaleBytes;
  const hatch = svgElement("pattern", { id: "storage-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse",
    patternTransform: "rotate(45)" });
  hatch.append(svgElement("rect", { class: "pattern-back", width: 6, height: 6 }),
    svgElement("line", { class: "pattern-ink", x1: 0, y1: 0, x2: 0, y2: 6, "stroke-width": 3 }));
  const dots = svgElement("pattern", { id: "storage-dots", width: 5, height: 5, patternUnits: "userSpaceOnUse" });
  dots.append(svgElement("rect", { class: "pattern-back", width: 5, height: 5 }),
    svgElement("circle", { class: "pattern-dot", cx: 2.5, cy: 2.5, r: 1.4 }));
  const parts = [svgElement("defs", {})];
  parts[0].append(hatch, dots);
  const fills = { current: null, detached: "url(#storage-hatch)", partial: "url(#storage-dots)" };
  for (const bar of chart.bars) {
    const row = svgElement("g", { class: "bar", "data-label": bar.label });
    row.append(
      svgElement("text", { class: "bar-label", x: 0, y: bar.y + 12 }, bar.label),
      svgElement("text", { class: "bar-size", x: chart.width, y: bar.y + 12, "text-anchor": "end" }, bar.sizeText),
      svgElement("rect", { class: "track", x: 0, y: bar.barY, width: chart.width, height: chart.barHeight }));
    for (const piece of bar.pieces) {
      const rect = svgElement("rect", {
        class: "piece piece-" + piece.kind, x: piece.x, y: bar.barY, width: piece.width, height: chart.barHeight,
        fill: fills[piece.kind], "data-bytes": piece.bytes,
      });
      rect.appendChild(svgElement("title", {}, piece.label));
      row.appendChild(rect);
      if (piece.x > 0) {
        row.appendChild(svgElement("line", { class: "separator", x1: piece.x, x2: piece.x, y1: bar.barY,
          y2: bar.barY + chart.barHeight }));
      }
    }
    parts.push(row);
  }
  if (chart.budget) {
    const x = chart.budget.x;
    parts.push(svgElement("line", { class: "budget", x1: x, x2: x, y1: 0, y2: chart.barsHeight + 4,
      "stroke-dasharray": "6 4", "data-bytes": chart.budget.bytes }));
    parts.push(svgElement("text", { class: "budget-label", x: chart.budget.anchor === "end" ? x - 4 : x + 4,
      y: chart.height - 3, "text-anchor": chart.budget.anchor }, chart.budget.label));
  }
  svg.replaceChildren(...parts);
  setCaption(figure, chart.summary);
  let legend = figure.querySelector(".legend");
  if (!legend) {
    legend = document.createElement("ul");
    legend.className = "legend";
    figure.appendChild(legend);
  }
  legend.replaceChildren(...chart.legend.map((item) => {
    const entry = document.createElement("li");
    const swatch = svgElement("svg", { viewBox: "0 0 14 14", width: 14, height: 14, "aria-hidden": "true" });
    swatch.appendChild(svgElement("rect", { class: "piece piece-" + item.kind, width: 14, height: 14,
      fill: fills[item.kind] }));
    entry.append(swatch, " " + item.label);
    return entry;
  }));
}

// Charts whose values came with the page (a data-chart-values attribute holding the JSON); one that cannot be
// read is left empty, and the others are still drawn.
document.addEventListener("DOMContentLoaded", () => {
  for (const figure of document.querySelectorAll("figure[data-chart-values]")) {
    let chart;
    try {
      chart = JSON.parse(figure.dataset.chartValues);
    } catch (ignored) {
      continue;
    }
    if (figure.dataset.chartKind === "storage") drawStorageChart(figure, chart);
    else drawTimeChart(figure, chart);
  }
});
