// Health: is Cairn up (PostgreSQL, NATS), is the outbox keeping up, who is listening, how
// far records got through processing, and how assemblies perform. Refreshes every 5 s.

import { get, ready, text } from "./api.js";
import { failure, h, table } from "./dom.js";

const REFRESH_MS = 5000;
const METRICS = {
  cairn_outbox_pending: "outbox backlog (events not yet on NATS)",
  cairn_sse_connections: "open event streams",
};

export function mount(root) {
  const body = h("div", { id: "health" }, h("p", { class: "muted" }, "loading…"));
  root.append(h("h1", {}, "Health"), body);
  let timer = null;

  async function refresh() {
    const parts = await Promise.allSettled([ready(), text("/metrics"), get("/coverage"), get("/assemblies/stats")]);
    const [readiness, metrics, coverage, stats] = parts;
    body.replaceChildren(
      section("Readiness", readiness, readinessView),
      section("Events", metrics, metricsView),
      section("Processing", coverage, coverageView),
      section("Assemblies", stats, statsView),
    );
    timer = setTimeout(refresh, REFRESH_MS);
  }

  refresh();
  return { stop: () => clearTimeout(timer) };
}

function section(title, settled, view) {
  const content = settled.status === "fulfilled" ? view(settled.value) : failure(settled.reason);
  return h("section", { class: "panel" }, h("h2", {}, title), content);
}

function readinessView(body) {
  return h("ul", { class: "checks", id: "readiness" },
    Object.entries(body.checks ?? {}).map(([name, state]) =>
      h("li", { class: state === "ok" ? "ok" : state === "down" ? "down" : "muted" }, `${name}: ${state}`)));
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
