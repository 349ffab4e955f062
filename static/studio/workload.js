// Workload detail page: outputs (copy; sensitive ones masked until revealed) and metrics charts, read from the
// JSON API.
(function () {
  "use strict";

  function text(tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value;
    if (cls) el.className = cls;
    return el;
  }

  const revealed = new Set();  // names the user chose to see, kept across refreshes
  const OUTPUT_POLL_MS = 3000;
  const OUTPUT_POLLS = 200;

  // Outputs that need an endpoint read null until the sync knows it: fetch again until every value is known.
  async function loadOutputs(box, polls) {
    const response = await fetch(box.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!response.ok) { box.replaceChildren(text("p", "No outputs.", "muted")); return; }
    const outputs = (await response.json()).outputs || [];
    box.replaceChildren();
    if (!outputs.length) { box.append(text("p", "No outputs.", "muted")); return; }
    const list = document.createElement("dl");
    list.className = "kv";
    for (const output of outputs) {
      const label = output.label || output.name;
      list.append(text("dt", label));
      const dd = document.createElement("dd");
      const hidden = output.sensitive && output.value && !revealed.has(output.name);
      const value = text("code", output.value === null ? "pending" : (hidden ? "••••••••" : output.value));
      value.dataset.output = output.name;
      dd.append(value, " ");
      if (hidden) {
        const reveal = text("button", "Reveal", "secondary");
        reveal.type = "button";
        reveal.setAttribute("aria-label", "Reveal " + label);
        reveal.addEventListener("click", () => { revealed.add(output.name); value.textContent = output.value; reveal.remove(); });
        dd.append(reveal, " ");
      }
      if (output.value) {
        const copy = text("button", "Copy", "secondary");
        copy.type = "button";
        copy.setAttribute("aria-label", "Copy " + label);
        copy.addEventListener("click", async () => {
          try { await navigator.clipboard.writeText(output.value); copy.textContent = "Copied"; }
          catch (e) { copy.textContent = "Copy failed"; }
        });
        dd.append(copy);
      }
      list.append(dd);
    }
    box.append(list);
    if (outputs.some((o) => o.value === null) && polls > 0) {
      setTimeout(() => loadOutputs(box, polls - 1), OUTPUT_POLL_MS);
    }
  }

  const CHARTS = {
    "chart-gpu": { types: ["GPU_UTILIZATION"], scale: 1 },
    "chart-cpu": { types: ["CPU_USAGE_CORES", "CPU_REQUEST_CORES"], scale: 1 },
    "chart-memory": { types: ["CPU_MEMORY_USAGE_BYTES", "CPU_MEMORY_REQUEST_BYTES"], scale: 1 / 1048576 },
  };

  async function loadMetrics(box) {
    if (typeof Chart === "undefined") return;
    const end = new Date();
    const start = new Date(end.getTime() - 3600 * 1000);
    for (const [id, chart] of Object.entries(CHARTS)) {
      const params = new URLSearchParams({ start: start.toISOString(), end: end.toISOString(), numberOfSamples: "60" });
      chart.types.forEach((t) => params.append("metricType", t));
      const response = await fetch(box.dataset.url + "?" + params, { credentials: "same-origin" });
      if (!response.ok && response.status !== 207) continue;
      const measurements = (await response.json()).measurements || [];
      const datasets = measurements.filter((m) => m.values.length).map((m) => ({
        label: m.type + (m.labels && m.labels.gpu !== undefined ? " gpu " + m.labels.gpu : ""),
        data: m.values.map((v) => ({ x: new Date(v.timestamp).toLocaleTimeString(), y: Number(v.value) * chart.scale })),
        pointRadius: 2, borderWidth: 2,  // points, so that a workload with one sample so far shows it
      }));
      const canvas = document.getElementById(id);
      if (!datasets.length) { canvas.replaceWith(text("p", "No samples yet.", "muted")); continue; }
      new Chart(canvas, { type: "line", data: { datasets }, options: { animation: false, parsing: { xAxisKey: "x", yAxisKey: "y" }, scales: { x: { type: "category" } } } });
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const outputs = document.getElementById("outputs");
    if (outputs) loadOutputs(outputs, OUTPUT_POLLS);
    const metrics = document.getElementById("metrics");
    if (metrics) loadMetrics(metrics);
  });
})();
