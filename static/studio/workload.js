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

  // The page's reads of the JSON API. A page being left (Stop or Delete submits, then the next page comes) cancels
  // its reads in flight and sends no more: once the form is through, the workload they ask about is gone. A 404
  // of the workload's own outputs or metrics means it is gone (deleted elsewhere): their polls stop.
  let leaving = false;
  let gone = false;
  const inFlight = new Set();
  window.addEventListener("beforeunload", () => { leaving = true; inFlight.forEach((c) => c.abort()); });
  window.addEventListener("pageshow", (event) => { if (event.persisted) leaving = false; });  // back, from the cache

  // The response, or null: the page is being left, the workload is gone, or the read failed (the next tick
  // tries again).
  async function read(url, headers) {
    if (leaving || gone) return null;
    const controller = new AbortController();
    inFlight.add(controller);
    try {
      return await fetch(url, { credentials: "same-origin", headers: headers || {}, signal: controller.signal });
    } catch (e) {
      return null;
    } finally {
      inFlight.delete(controller);
    }
  }

  // The JSON body of a workload-wide read (outputs, metrics), or null; a 404 marks the workload gone.
  async function readJson(url, accepted) {
    const response = await read(url, { Accept: "application/json" });
    if (!response) return null;
    if (response.status === 404) gone = true;
    if (!response.ok && !(accepted || []).includes(response.status)) return null;
    try { return await response.json(); } catch (e) { return null; }
  }

  const revealed = new Set();  // names the user chose to see, kept across refreshes
  const OUTPUT_POLL_MS = 3000;
  const OUTPUT_POLLS = 200;

  // Outputs that need an endpoint read null until the sync knows it: fetch again until every value is known.
  async function loadOutputs(box, polls) {
    const body = await readJson(box.dataset.url);
    if (leaving) return;
    if (!body) { box.replaceChildren(text("p", "No outputs.", "text-secondary")); return; }
    const outputs = body.outputs || [];
    box.replaceChildren();
    if (!outputs.length) { box.append(text("p", "No outputs.", "text-secondary")); return; }
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
        const reveal = text("button", "Reveal", "btn btn-sm");
        reveal.type = "button";
        reveal.setAttribute("aria-label", "Reveal " + label);
        reveal.addEventListener("click", () => { revealed.add(output.name); value.textContent = output.value; reveal.remove(); });
        dd.append(reveal, " ");
      }
      if (output.value) {
        const copy = text("button", "Copy", "btn btn-sm");
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

  // --- charts: a time axis that only moves forward, units on the axes, human legends, reference lines ------
  // A chart whose canvas the page does not carry is not drawn (no GPU charts for a job that asks for no GPU).
  const GIB = 1 / (1024 * 1024 * 1024);
  const CHARTS = {
    "chart-gpu": { unit: "%", max: 100, series: {
      GPU_UTILIZATION: { label: "GPU utilization (mean)" } } },
    "chart-gpu-memory": { unit: "GiB", scale: GIB, series: {
      GPU_MEMORY_USAGE_BYTES: { label: "GPU memory used" },
      GPU_MEMORY_REQUEST_BYTES: { label: "GPU memory requested", reference: true } } },
    // One series per GPU of each pod (the DCGM exporter's `gpu` label), pods that are gone included.
    "chart-gpu-per": { unit: "%", max: 100, perPod: true, series: {
      GPU_UTILIZATION_PER_GPU: { label: "GPU" } } },
    "chart-cpu": { unit: "cores", series: {
      CPU_USAGE_CORES: { label: "CPU used" },
      CPU_REQUEST_CORES: { label: "CPU requested", reference: true },
      CPU_LIMIT_CORES: { label: "CPU limit", reference: true, dash: [2, 3] } } },
    "chart-memory": { unit: "GiB", scale: GIB, series: {
      CPU_MEMORY_USAGE_BYTES: { label: "CPU memory used" },
      CPU_MEMORY_REQUEST_BYTES: { label: "CPU memory requested", reference: true },
      CPU_MEMORY_LIMIT_BYTES: { label: "CPU memory limit", reference: true, dash: [2, 3] } } },
  };
  const COLOURS = ["#206bc4", "#2fb344", "#f76707", "#ae3ec9", "#d63939", "#17a2b8"];
  const REFRESH_MS = 5000;
  let rangeSeconds = 3600;
  const charts = {};  // id → {chart, series: key → {dataset, last}}

  function seriesKey(m) {
    const labels = m.labels || {};
    return [m.type, labels.pod || "", labels.gpu !== undefined ? labels.gpu : ""].join("|");
  }

  function legend(config, m) {
    if (config.perPod) return `${m.labels.pod} · GPU ${m.labels.gpu}`;
    const base = config.series[m.type].label;
    return m.labels && m.labels.gpu !== undefined ? `${base} (GPU ${m.labels.gpu})` : base;
  }

  function makeChart(canvas, id, config) {
    const note = text("p", "No samples yet.", "text-secondary small mb-0 chart-note");
    canvas.parentElement.after(note);
    const chart = new Chart(canvas, {
      type: "line",
      data: { datasets: [] },
      options: {
        animation: false, maintainAspectRatio: false, parsing: false, normalized: true,
        interaction: { mode: "nearest", axis: "x", intersect: false },
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } },
                   tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${c.parsed.y.toFixed(2)} ${config.unit}` } } },
        scales: {
          x: { type: "time", time: { tooltipFormat: "yyyy-MM-dd HH:mm:ss", displayFormats: { minute: "HH:mm", hour: "HH:mm", second: "HH:mm:ss", day: "MMM d" } },
               title: { display: true, text: "Time" }, ticks: { maxTicksLimit: 6 } },
          y: { beginAtZero: true, suggestedMax: config.max, max: config.max, title: { display: true, text: config.unit } },
        },
      },
    });
    charts[id] = { chart, config, note, series: {} };
  }

  // Add what a read brought, then fit every series to the window [rangeStart, end]. The window is the picked
  // range, never the start of an incremental read (that would drop every point drawn before it).
  function addSamples(entry, measurements, rangeStart, end) {
    const { chart, config, series } = entry;
    for (const m of measurements) {
      if (!config.series[m.type] || !m.values.length) continue;
      const key = seriesKey(m);
      const style = config.series[m.type];
      let item = series[key];
      if (!item) {
        const colour = COLOURS[Object.keys(series).length % COLOURS.length];
        const dataset = { label: legend(config, m), data: [], borderColor: colour, backgroundColor: colour,
                          borderWidth: style.reference ? 1.5 : 2, pointRadius: style.reference ? 0 : 2,
                          borderDash: style.reference ? (style.dash || [6, 4]) : [], stepped: !!style.reference };
        item = series[key] = { dataset, reference: !!style.reference, last: -Infinity, value: null };
      }
      // Only points later than the newest already drawn, in time order: the axis never runs backwards.
      const points = m.values.filter((v) => v.value !== null && v.value !== "")
        .map((v) => ({ x: Date.parse(v.timestamp), y: Number(v.value) * (config.scale || 1) }))
        .filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y) && p.x > item.last).sort((a, b) => a.x - b.x);
      if (!points.length) continue;
      item.last = points[points.length - 1].x;
      item.value = points[points.length - 1].y;
      if (item.reference) continue;  // drawn below as a line across the whole range
      item.dataset.data.push(...points);
    }
    fit(entry, rangeStart, end);
  }

  function fit(entry, rangeStart, end) {
    const { chart, series } = entry;
    const min = rangeStart.getTime();
    for (const item of Object.values(series)) {
      if (item.reference) {
        // A request or limit is a setting, not a measurement: one level across the range, at its latest value.
        // 0 means "not set" (no limit): no line, rather than one that claims the workload may use nothing.
        item.dataset.data = !item.value ? [] : [{ x: min, y: item.value }, { x: end.getTime(), y: item.value }];
      } else {
        item.dataset.data = item.dataset.data.filter((p) => p.x >= min);
      }
    }
    // A series with no point in the window (an unset limit, samples gone out of the range) is not drawn: no
    // empty line, no legend entry that names nothing.
    chart.data.datasets = Object.values(series).map((item) => item.dataset).filter((d) => d.data.length);
    chart.options.scales.x.min = min;
    chart.options.scales.x.max = end.getTime();
    const hasData = Object.values(series).some((i) => !i.reference && i.dataset.data.length);
    entry.note.hidden = hasData;
    chart.update("none");
  }

  async function fetchMeasurements(entry, url, from, end, samples) {
    const params = new URLSearchParams({ start: from.toISOString(), end: end.toISOString(), numberOfSamples: String(samples) });
    Object.keys(entry.config.series).forEach((t) => params.append("metricType", t));
    const body = await readJson(url + "?" + params, [207]);  // 207: some metrics could not be read
    return (body && body.measurements) || [];
  }

  // A read that a range change overtook is dropped: its window is no longer the one shown.
  let generation = 0;

  async function loadMetrics(box, { reset }) {
    if (typeof Chart === "undefined") return;
    if (reset) generation += 1;
    const mine = generation;
    const end = new Date();
    const rangeStart = new Date(end.getTime() - rangeSeconds * 1000);
    for (const [id, config] of Object.entries(CHARTS)) {
      const canvas = document.getElementById(id);
      if (!canvas) continue;
      if (!charts[id]) makeChart(canvas, id, config);
      const entry = charts[id];
      if (reset) {
        entry.chart.data.datasets = [];
        entry.series = {};
      }
      // The first read is bucketed over the range; later reads fetch only what came since the newest point.
      const newest = Math.max(-Infinity, ...Object.values(entry.series).map((i) => i.last));
      const from = !Number.isFinite(newest) ? rangeStart : new Date(newest + 1);
      if (from < end) {
        let measurements = [];
        const url = config.perPod ? box.dataset.gpuUrl : box.dataset.url;
        try { measurements = await fetchMeasurements(entry, url, from, end, Number.isFinite(newest) ? 0 : 120); }
        catch (e) { /* a missed refresh is retried on the next tick */ }
        if (mine !== generation) return;
        addSamples(entry, measurements, rangeStart, end);
      }
      if (mine !== generation) return;
      fit(entry, rangeStart, end);  // the window moves on even when nothing new came
    }
  }

  function setupRange(box) {
    rangeSeconds = Number(box.dataset.window) || rangeSeconds;  // the window that holds the workload's life
    document.querySelectorAll("[data-range]").forEach((button) => {
      button.addEventListener("click", () => {
        rangeSeconds = Number(button.dataset.range);
        document.querySelectorAll("[data-range]").forEach((b) => {
          b.classList.toggle("active", b === button);
          b.setAttribute("aria-pressed", String(b === button));
        });
        loadMetrics(box, { reset: true });
      });
    });
  }

  // --- logs: a pod picker, the last N lines, following while the box is scrolled to its end ---------------
  const LOG_POLL_MS = 2000;

  function setupLogs(panel) {
    const view = panel.querySelector("#log-view");
    const pod = panel.querySelector("#log-pod");
    const tail = panel.querySelector("#log-tail");
    const follow = panel.querySelector("#log-follow");
    const note = panel.querySelector("#log-note");
    const stamps = panel.querySelector("#log-timestamps");
    const previous = panel.querySelector("#log-previous");
    const search = panel.querySelector("#log-search");
    const download = panel.querySelector("#log-download");
    let lastText = null;
    let busy = false;
    let kept = "";  // a gone pod's lines as kept: when they were captured (X-Log-Note)

    function query(extra) {
      const params = { pod: pod.value, tailLines: tail.value, ...extra };
      if (stamps.checked) params.timestamps = "true";
      if (previous.checked) params.previous = "true";
      return panel.dataset.url + "?" + new URLSearchParams(params);
    }

    // Search: only the lines that hold the text (case-insensitive), and how many of the read lines they are.
    function show(body) {
      const wanted = search.value.trim().toLowerCase();
      if (!wanted) { view.textContent = body; return; }
      const lines = body.split("\n").filter((line) => line);
      const found = lines.filter((line) => line.toLowerCase().includes(wanted));
      view.textContent = found.join("\n");
      note.textContent = `${kept ? kept + " " : ""}${found.length} of ${lines.length} lines hold "${search.value.trim()}".`;
    }

    // Pods that never ran have no log to give (the API answers 409): say so instead of asking.
    const NOT_STARTED = new Set(["Pending", "Unknown", ""]);

    async function refresh(force) {
      if (busy || (!force && !follow.checked)) return;
      const option = pod.selectedOptions[0];
      if (!pod.value) { note.textContent = "No pods yet: the log appears when the first one starts."; return; }
      if (option.dataset.phase === "Captured" && lastText !== null && !force) return;  // kept lines do not change
      if (NOT_STARTED.has(option.dataset.phase || "")) { note.textContent = "The pod has not started yet."; return; }
      busy = true;
      try {
        download.href = query({ download: "true" });
        const response = await read(query({}));
        if (!response) return;
        if (!response.ok) { note.textContent = `The log could not be read (${response.status}).`; return; }
        const body = await response.text();
        if (response.headers.get("X-Log-Problem")) { note.textContent = body; return; }
        // A pod that is gone: its last lines as kept, and when they were captured.
        kept = response.headers.get("X-Log-Note") || "";
        note.textContent = kept || (body ? "" : "The pod has written nothing yet.");
        if (body === lastText) { if (search.value.trim()) show(body); return; }
        const atEnd = view.scrollTop + view.clientHeight >= view.scrollHeight - 24;
        show(body);
        lastText = body;
        if (follow.checked || atEnd) view.scrollTop = view.scrollHeight;
      } catch (e) { /* retried on the next tick */ }
      finally { busy = false; }
    }

    // Pods come and go (a job's retry, a resumed workspace): the live part brings their names.
    document.body.addEventListener("htmx:afterSwap", () => {
      const names = document.getElementById("pod-names");
      if (!names) return;
      const fresh = [...names.content.querySelectorAll("option")];
      const signature = (options) => options.map((o) => `${o.value}:${o.dataset.phase}`).join("\n");
      if (signature(fresh) === signature([...pod.options].filter((o) => o.value))) return;
      const chosen = pod.value;
      const options = fresh.map((o) => o.cloneNode(true));
      if (!options.length) options.push(new Option("No pods yet", ""));
      pod.replaceChildren(...options);
      if (fresh.some((o) => o.value === chosen)) pod.value = chosen;
      refresh(true);
    });
    pod.addEventListener("change", () => { lastText = null; refresh(true); });
    tail.addEventListener("change", () => { lastText = null; refresh(true); });
    follow.addEventListener("change", () => refresh(true));
    for (const toggle of [stamps, previous]) toggle.addEventListener("change", () => { lastText = null; refresh(true); });
    search.addEventListener("input", () => { if (lastText !== null) show(lastText); if (!search.value.trim()) note.textContent = kept; });
    refresh(true);
    const poll = setInterval(() => (gone ? clearInterval(poll) : refresh(false)), LOG_POLL_MS);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const outputs = document.getElementById("outputs");
    if (outputs) loadOutputs(outputs, OUTPUT_POLLS);
    const metrics = document.getElementById("metrics");
    if (metrics) {
      setupRange(metrics);
      loadMetrics(metrics, { reset: true });
      const poll = setInterval(() => (gone ? clearInterval(poll) : loadMetrics(metrics, { reset: false })), REFRESH_MS);
    }
    const logs = document.getElementById("logs");
    if (logs) setupLogs(logs);
  });
})();
