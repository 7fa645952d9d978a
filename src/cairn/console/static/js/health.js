// Health: is Cairn up (PostgreSQL, NATS, a worker on the event stream), is the outbox
// keeping up, who is listening, how far records got through processing, and how assemblies
// perform. Refreshes every 5 s.

import { get, ready, text } from "./api.js";
import { failure, h, table, when } from "./dom.js";

const REFRESH_MS = 5000;
const METRICS = {
  cairn_outbox_pending: "outbox backlog (events not yet on NATS)",
  cairn_sse_connections: "open event streams",
};

// Each panel is drawn when its own answer arrives. /coverage counts every record of the
// tenant by stage (the slowest call by far, 0.1-1 s of database work at 10k records) and is
// asked only once the quick panels are drawn: sent with them, its queries took the CPU the
// quick answers (and the browser drawing them) were waiting for on a small machine.
const PANELS = [
  ["Readiness", () => ready(), readinessView],
  ["Workers", () => get("/workers"), workersView],
  ["Events", () => text("/metrics"), metricsView],
  ["Processing", () => get("/coverage"), coverageView, { last: true }],
  ["Assemblies", () => get("/assemblies/stats"), statsView],
];

export function mount(root) {
  const panels = PANELS.map(([title]) =>
    h("section", { class: "panel" }, h("h2", {}, title), h("p", { class: "muted" }, "loading…")));
  root.append(h("h1", {}, "Health"), h("div", { id: "health" }, panels));
  let timer = null;
  let stopped = false;

  async function draw(index) {
    const [title, call, view] = PANELS[index];
    let content;
    try {
      content = view(await call());
    } catch (error) {
      content = failure(error);
    }
    if (!stopped) panels[index].replaceChildren(h("h2", {}, title), content);
  }

  async function refresh() {
    const quick = PANELS.flatMap(([, , , options], index) => (options?.last ? [] : [index]));
    const last = PANELS.flatMap(([, , , options], index) => (options?.last ? [index] : []));
    await Promise.allSettled(quick.map(draw));
    if (!stopped) await Promise.allSettled(last.map(draw));
    if (!stopped) timer = setTimeout(refresh, REFRESH_MS);
  }

  refresh();
  return { stop: () => { stopped = true; clearTimeout(timer); } };
}

function readinessView(body) {
  return h("ul", { class: "checks", id: "readiness" },
    Object.entries(body.checks ?? {}).map(([name, state]) =>
      h("li", { class: state === "ok" ? "ok" : state === "down" ? "down" : "muted" }, `${name}: ${state}`)));
}

const WORKER_STATES = {
  pulling: ["ok", "a worker is waiting for events"],
  busy: ["ok", "workers are handling events"],
  none: ["down", "no worker is connected: events wait on the stream"],
  no_consumer: ["down", "no worker has started on this stream"],
  unknown: ["muted", "NATS is not reachable"],
};

// The workers' shared consumer on the event stream (GET /workers): is anyone pulling.
function workersView(body) {
  return h("ul", { class: "checks", id: "workers" }, body.consumers.map((c) => {
    const [level, meaning] = WORKER_STATES[c.state] ?? ["muted", c.state];
    const last = c.last_delivery ? ` · last event handed out ${when(c.last_delivery)}` : "";
    return h("li", { class: level, "data-state": c.state },
      `${c.name}: ${c.state} — ${meaning} · ${c.in_progress} in progress, ${c.pending} waiting`
      + ` on the stream, ${c.waiting_pulls} open pulls${last}`);
  }));
}

// Prometheus text: the few gauges worth a glance, summed over their labels.
function metricsView(exposition) {
  const totals = {};
  for (const line of exposition.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = line.match(/^([a-z_]+)(\{[^}]*\})?\s+([0-9.eE+-]+)/);
    if (match && match[1] in METRICS) totals[match[1]] = (totals[match[1]] ?? 0) + Number(match[3]);
  }
  return table(["", ""], Object.entries(METRICS).map(([name, label]) => [label, String(totals[name] ?? 0)]));
}

function coverageView(coverage) {
  const rows = Object.entries(coverage.stages).map(([stage, f]) => [
    stage, `${f.percent.toFixed(1)}%`, String(f.done), String(f.pending), String(f.failed)]);
  return h("div", {},
    h("p", {}, `${coverage.records} records · ${coverage.islands.count} with no edge`),
    table(["stage", "done", "records done", "pending", "failed"], rows));
}

function statsView(stats) {
  if (!stats.agents.length) return h("p", { class: "muted" }, "no assemblies yet");
  return table(["agent", "assemblies", "p50 ms", "p99 ms", "mean tokens", "budget use"],
    stats.agents.map((a) => [a.agent_id, String(a.count), a.p50_ms.toFixed(1), a.p99_ms.toFixed(1),
      a.mean_tokens.toFixed(0), a.mean_budget_use == null ? "" : `${(a.mean_budget_use * 100).toFixed(0)}%`]));
}
