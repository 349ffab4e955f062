// The workload page's terminal: xterm.js (static/vendor/xterm) over the exec WebSocket of the API
// (/api/v1/workloads/{id}/exec), which speaks Kubernetes' channel protocol (v5.channel.k8s.io, v4.channel.k8s.io):
// binary frames whose first byte is the channel — 0 stdin, 1 stdout, 2 stderr, 3 the status when the command ends
// (JSON, a Kubernetes Status), 4 the terminal's size (JSON {"Width", "Height"}). The browser's session cookie
// authenticates it (same origin); the server refuses a viewer (4403), a workload outside the user's projects
// (4404) and a workload with no running pod (4409) by closing with that code and a JSON reason.
(function () {
  "use strict";

  const STDIN = 0, STDOUT = 1, STDERR = 2, STATUS = 3, RESIZE = 4;
  const PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
  // The server's refusals: a close code and, as the reason, JSON {"code", "message"} naming what was wrong; these
  // words only where it gave none.
  const REFUSED = {
    4400: "The terminal's request was refused",
    4401: "You are not signed in (log in again)",
    4403: "Your role in this project may not open a terminal (viewers may not run commands)",
    4404: "The workload is gone, or it is not in one of your projects",
    4409: "The workload has no running pod: start or resume it first",
    4502: "The cluster refused the session or could not be reached",
  };
  const NOT_RUNNING = new Set(["Pending", "Unknown", "Succeeded", "Failed", ""]);
  const encoder = new TextEncoder();

  function setup(panel) {
    const view = panel.querySelector("#terminal-view");
    const pod = panel.querySelector("#terminal-pod");
    const command = panel.querySelector("#terminal-command");
    const connect = panel.querySelector("#terminal-connect");
    const disconnect = panel.querySelector("#terminal-disconnect");
    const note = panel.querySelector("#terminal-note");
    let term = null, fit = null, socket = null, size = "";

    function say(text) { note.textContent = text; }

    function line(text) {  // a line of our own in the terminal, dimmed, between the command's output
      if (term) term.write(`\r\n\x1b[2m[${text}]\x1b[0m\r\n`);
    }

    function frame(channel, bytes) {
      if (!socket || socket.readyState !== WebSocket.OPEN) return;
      const data = new Uint8Array(bytes.length + 1);
      data[0] = channel;
      data.set(bytes, 1);
      socket.send(data);
    }

    function resize() {
      if (!term) return;
      fit.fit();
      const now = `${term.cols}x${term.rows}`;
      if (now === size) return;
      size = now;
      frame(RESIZE, encoder.encode(JSON.stringify({ Width: term.cols, Height: term.rows })));
    }

    function ensureTerminal() {
      if (term) return;
      term = new window.Terminal({
        cursorBlink: true, convertEol: false, scrollback: 5000, fontSize: 13,
        fontFamily: getComputedStyle(document.body).getPropertyValue("--tblr-font-monospace") || "monospace",
        theme: { background: "#0f172a", foreground: "#e2e8f0" },
      });
      fit = new window.FitAddon.FitAddon();
      term.loadAddon(fit);
      term.open(view);
      term.onData((data) => frame(STDIN, encoder.encode(data)));
      // Bytes that are not text (some mouse reports): each character is one byte.
      term.onBinary((data) => frame(STDIN, Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff)));
      new ResizeObserver(() => resize()).observe(view);
      window.addEventListener("resize", resize);
    }

    // The Status of channel 3: Success, or why the command ended (its exit code).
    function ended(status) {
      if (status.status === "Success") return "The command ended (exit code 0).";
      const causes = (status.details && status.details.causes) || [];
      const code = causes.find((c) => c.reason === "ExitCode");
      return code ? `The command ended with exit code ${code.message}.` : (status.message || "The command failed.");
    }

    function reasonOf(text) {
      let message;
      try { message = JSON.parse(text).message || ""; } catch (e) { message = text || ""; }
      return message.replace(/\.$/, "");
    }

    function url() {
      const params = new URLSearchParams();
      for (const word of command.value.trim().split(/\s+/).filter(Boolean)) params.append("command", word);
      params.set("pod", pod.value);
      for (const stream of ["stdin", "stdout", "stderr", "tty"]) params.set(stream, "true");
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      return `${scheme}//${location.host}${panel.dataset.url}?${params}`;
    }

    function close() {
      if (socket) {
        const old = socket;
        socket = null;
        old.onclose = null;
        old.close(1000);
      }
      disconnect.hidden = true;
    }

    function open() {
      close();
      if (!pod.value) { say("No pod to connect to yet: the terminal opens once one runs."); return; }
      if (!command.value.trim()) { say("Name a command to run, e.g. sh."); command.focus(); return; }
      ensureTerminal();
      term.reset();
      size = "";
      let status = null;
      const target = pod.value;
      say(`Connecting to ${target}…`);
      connect.textContent = "Reconnect";
      const current = new WebSocket(url(), PROTOCOLS);
      socket = current;
      current.binaryType = "arraybuffer";
      current.onopen = () => {
        say(`Connected to ${target} (${current.protocol || "no subprotocol"}): ${command.value.trim()}`);
        disconnect.hidden = false;
        resize();
        term.focus();
      };
      current.onmessage = (event) => {
        if (typeof event.data === "string") return;  // the binary protocols only
        const data = new Uint8Array(event.data);
        if (data.length < 2) return;  // a channel announcing itself
        const channel = data[0], payload = data.subarray(1);
        if (channel === STDOUT || channel === STDERR) term.write(payload);
        else if (channel === STATUS) {
          try { status = JSON.parse(new TextDecoder().decode(payload)); } catch (e) { status = { message: "The command ended." }; }
          line(ended(status));
        }
      };
      current.onclose = (event) => {
        if (socket !== current) return;
        socket = null;
        disconnect.hidden = true;
        const refused = REFUSED[event.code];
        let why;
        if (refused) why = `${reasonOf(event.reason) || refused}.`;  // the server's own words, where it gave them
        else if (status) why = ended(status);
        else if (event.code === 1000) why = `The session ended${event.reason ? `: ${event.reason}` : ""}.`;
        else why = `The connection closed (code ${event.code}${event.reason ? `: ${event.reason}` : ""}): the server refused it or could not be reached.`;
        if (!status) line(why);
        say(`${why} Reconnect to start again.`);
      };
    }

    connect.addEventListener("click", open);
    disconnect.addEventListener("click", () => { close(); line("Disconnected."); say("Disconnected. Reconnect to start again."); });
    command.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); open(); } });

    // Pods come and go (a retry, a resumed workspace): the live part of the page brings their names and phases.
    function choosePods(options) {
      const chosen = pod.value;
      const running = options.filter((o) => !NOT_RUNNING.has(o.dataset.phase || ""));
      pod.replaceChildren(...(running.length ? running : [new Option("No running pod", "")]));
      if (running.some((o) => o.value === chosen)) pod.value = chosen;
    }
    document.body.addEventListener("htmx:afterSwap", () => {
      const names = document.getElementById("pod-names");
      if (names) choosePods([...names.content.querySelectorAll("option")].map((o) => o.cloneNode(true)));
    });
    choosePods([...pod.options].filter((o) => o.value).map((o) => o.cloneNode(true)));
  }

  document.addEventListener("DOMContentLoaded", () => {
    const panel = document.getElementById("terminal");
    if (panel && window.Terminal && window.FitAddon) setup(panel);
  });
})();
