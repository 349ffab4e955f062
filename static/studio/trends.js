// GPU trends (templates/usage/_trend.html): draws each trend card's chart from the JSON the card carries, when
// the page loads and whenever htmx swaps a card in (a page's first load of it, a range button). Chart.js is loaded
// the first time a card needs it, so pages without a trend never fetch it.
(function () {
  "use strict";

  const COLOURS = { allocated: "#206bc4", used: "#2fb344", idle: "#f76707" };
  let chartLoading = null;

  function loadChart(src) {
    if (typeof Chart !== "undefined") return Promise.resolve();
    if (!chartLoading) {
      chartLoading = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = src;
        script.onload = resolve;
        script.onerror = reject;
        document.head.appendChild(script);
      });
    }
    return chartLoading;
  }

  function label(iso, range) {
    const at = new Date(iso);
    if (range === "30d") return iso;  // a day, as the server names it (UTC)
    const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    if (range === "7d") return at.toLocaleDateString([], { month: "short", day: "numeric" }) + " " + time;
    return time;
  }

  function draw(canvas) {
    if (canvas.dataset.drawn) return;
    canvas.dataset.drawn = "1";
    const source = document.getElementById(canvas.dataset.source);
    if (!source) return;
    const data = JSON.parse(source.textContent);
    loadChart(canvas.dataset.chartSrc).then(() => {
      if (!canvas.isConnected) return;
      new Chart(canvas, {
        type: "line",
        data: {
          labels: data.labels.map((iso) => label(iso, data.range)),
          datasets: data.series.map((s) => ({
            label: s.label, data: s.values, borderColor: COLOURS[s.key], backgroundColor: COLOURS[s.key],
            borderWidth: 2, pointRadius: data.labels.length > 48 ? 0 : 2, tension: 0.2,
            fill: false, borderDash: s.key === "idle" ? [6, 4] : [],
          })),
        },
        options: {
          animation: false, maintainAspectRatio: false,
          interaction: { mode: "index", intersect: false },
          plugins: {
            legend: { position: "bottom", labels: { boxWidth: 12 } },
            tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${Number(c.parsed.y).toFixed(2)} GPUs` } },
          },
          scales: {
            x: { ticks: { maxTicksLimit: 6, maxRotation: 0, autoSkip: true } },
            y: { beginAtZero: true, title: { display: true, text: "GPUs (average)" } },
          },
        },
      });
    }).catch(() => { canvas.dataset.drawn = ""; });
  }

  function drawAll(root) {
    (root || document).querySelectorAll("canvas[data-trend-chart]").forEach(draw);
  }

  document.addEventListener("DOMContentLoaded", () => {
    drawAll(document);
    document.body.addEventListener("htmx:afterSettle", () => drawAll(document));
  });
})();
