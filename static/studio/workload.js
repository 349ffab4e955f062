// Workload detail page: outputs (copy, reveal) and metrics charts, both read from the JSON API.
(function () {
  "use strict";

  function text(tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value;
    if (cls) el.className = cls;
    return el;
  }

  async function loadOutputs(box) {
    const response = await fetch(box.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    box.replaceChildren();
    if (!response.ok) { box.append(text("p", "No outputs.", "muted")); return; }
    const outputs = (await response.json()).outputs || [];
    if (!outputs.length) { box.append(text("p", "No outputs yet.", "muted")); return; }
    const list = document.createElement("dl");
    list.className = "kv";
    for (const output of outputs) {
      list.append(text("dt", output.label || output.name));
      const dd = document.createElement("dd");
      const value = text("code", output.sensitive ? "••••••••" : (output.value ?? "pending"));
      value.dataset.output = output.name;
      dd.append(value, " ");
      if (output.sensitive && output.value) {
        const reveal = text("button", "Reveal", "secondary");
        reveal.type = "button";
        reveal.setAttribute("aria-label", "Reveal " + (output.label || output.name));
        reveal.addEventListener("click", () => { value.textContent = output.value; reveal.remove(); });
        dd.append(reveal, " ");
      }
      if (output.value) {
        const copy = text("button", "Copy", "secondary");
        copy.type = "button";
        copy.setAttribute("aria-label", "Copy " + (output.label || output.name));
        copy.addEventListener("click", async () => {
          try { await navigator.clipboard.writeText(output.value); copy.textContent = "Copied"; }
          catch (e) { copy.textContent = "Copy failed"; }
        });
        dd.append(copy);
      }
      list.append(dd);
    }
    box.append(list);
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
        pointRadius: 0, borderWidth: 2,
      }));
      const canvas = document.getElementById(id);
      if (!datasets.length) { canvas.replaceWith(text("p", "No samples yet.", "muted")); continue; }
      new Chart(canvas, { type: "line", data: { datasets }, options: { animation: false, parsing: { xAxisKey: "x", yAxisKey: "y" }, scales: { x: { type: "category" } } } });
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const outputs = document.getElementById("outputs");
    if (outputs) loadOutputs(outputs);
    const metrics = document.getElementById("metrics");
    if (metrics) loadMetrics(metrics);
  });
})();
