// The requests NVIDIA's web-viewer-sample (github.com/NVIDIA-Omniverse/web-viewer-sample, 1.5.2) makes of a Kit
// App Streaming server, in its order, with its headers and its tests of each answer — written from its source, not
// copied from it:
//   Forms.tsx  ServerURLsForm._validateEndpoint: GET <app>/cfg/apps and GET <stream>/streaming/stream with
//              mode "cors" and Content-Type: application/json (so the browser sends a preflight), `response.ok`;
//              then getApplications (GET <app>/cfg/apps, no header), ApplicationsForm (GET .../versions),
//              VersionsForm (GET .../versions/<v>/profiles).
//   Endpoints.tsx + http.ts  createStreamingSession: POST <stream>/streaming/stream {id, version, profile} with
//              Content-Type: application/json; App.tsx _startStream treats `status > 400` as a failure, takes
//              `data.id`, and on 202 polls getStreamingSessionInfo (GET <stream>/streaming/stream/<id>) until a 200
//              (every 10 s there; `pollMs` here), then setupStream reads routes[first address].routes, the routes
//              described "signaling" and "media", and their source_port.
//   App.tsx _endStream: GET <stream>/streaming/stream/<id> must answer 200; then destroyStreamingSession,
//              DELETE <stream>/streaming/stream {id} — `!response.ok` or a body is a failure.
// Each request is recorded in window.kitClient.transcript; window.kitClient.state says where it stands.
(function () {
  const client = { transcript: [], state: "idle", error: null, session: null, stream: null };
  window.kitClient = client;

  function shown(url) {
    return url.replace(/kcu_[A-Za-z0-9_-]+/, "kcu_[redacted]");
  }

  async function call(method, url, { body, jsonHeader, cors } = {}) {
    const init = { method, headers: {} };
    if (cors) init.mode = "cors";
    if (jsonHeader) init.headers["Content-Type"] = "application/json";
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(url, init);
    const text = await response.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = text; }
    client.transcript.push({ method, url: shown(url), status: response.status, ok: response.ok,
                             body: body === undefined ? null : body, data });
    return { status: response.status, ok: response.ok, data, text };
  }

  function fail(message) {
    client.state = "failed";
    client.error = message;
    throw new Error(message);
  }

  client.start = async function (appServer, streamServer, choose = {}, pollMs = 1000) {
    try {
      client.state = "validating";
      if (!(await call("GET", `${appServer}/cfg/apps`, { jsonHeader: true, cors: true })).ok) fail("app server");
      if (!(await call("GET", `${streamServer}/streaming/stream`, { jsonHeader: true, cors: true })).ok) fail("stream server");
      client.state = "choosing";
      const apps = (await call("GET", `${appServer}/cfg/apps`)).data.items.map((a) => a.id);
      const appId = choose.app && apps.includes(choose.app) ? choose.app : apps[0];
      const versions = (await call("GET", `${appServer}/cfg/apps/${appId}/versions`)).data.items.map((i) => i.version);
      if (!versions.length) fail(`no versions of ${appId}`);
      const version = versions[0];
      const profiles = (await call("GET", `${appServer}/cfg/apps/${appId}/versions/${version}/profiles`)).data.items.map((p) => p.id);
      if (!profiles.length) fail(`no profiles for ${appId} ${version}`);
      const profile = choose.profile && profiles.includes(choose.profile) ? choose.profile : profiles[0];
      client.state = "creating";
      const created = await call("POST", `${streamServer}/streaming/stream`,
                                 { body: { id: appId, version: version, profile: profile }, jsonHeader: true });
      if (created.status > 400) fail(`create: ${created.status}`);
      client.session = created.data.id;
      client.state = "polling";
      let info = created;
      while (info.status === 202) {
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        info = await call("GET", `${streamServer}/streaming/stream/${client.session}`);
      }
      if (info.status !== 200) fail(`poll: ${info.status}`);
      const address = Object.keys(info.data.routes)[0];
      const routes = info.data.routes[address].routes;
      const signaling = routes.find((r) => r.description === "signaling");
      const media = routes.find((r) => r.description === "media");
      if (!signaling || !media) fail("signaling or media route missing");
      client.stream = { signalingServer: address, signalingPort: signaling.source_port, mediaServer: address,
                        mediaPort: media.source_port, mediaProtocol: media.protocol, sessionId: client.session };
      client.state = "streaming";
    } catch (e) {
      if (client.state !== "failed") { client.state = "failed"; client.error = String(e); }
    }
  };

  client.end = async function (streamServer) {
    try {
      const info = await call("GET", `${streamServer}/streaming/stream/${client.session}`);
      if (info.status !== 200) fail(`end: session answers ${info.status}`);
      const destroyed = await call("DELETE", `${streamServer}/streaming/stream`,
                                   { body: { id: client.session }, jsonHeader: true });
      if (!destroyed.ok || destroyed.text) fail(`destroy: ${destroyed.status} ${destroyed.text}`);
      client.state = "ended";
    } catch (e) {
      if (client.state !== "failed") { client.state = "failed"; client.error = String(e); }
    }
  };
})();
