// Agents and their assembled contexts: every agent.def.v1 with its trigger and sources, and
// for one agent and session the newest agent.context.v1 — its text by section, the tokens
// each section spent against the budget, the time each phase took, and the explanation:
// every record taken (how it was reached) and every candidate left out (and why), filterable
// so that "why is X not in the context?" is answered by typing X.

import { get, post } from "./api.js";
import { append, failure, h, recordLink, table, when } from "./dom.js";

// The phases an assembly runs, in order (context.builder, context.assemble, context.ondemand):
// the stored timings are a JSON object, whose key order the database does not keep.
const PHASES = ["trigger", "embed", "signals", "seeds", "graph", "judge", "render_items", "rank", "select", "render", "write"];

// What each reason of context.model.DropReason means, for a person reading the table.
const REASONS = {
  over_budget: "did not fit in the token budget",
  max_nodes: "the context already had its most records (max_nodes)",
  blacklisted: "its schema is excluded from contexts",
  duplicate: "seeded twice; the first seed counts",
  below_threshold: "its score was under the source's threshold",
  not_loaded: "seeded, but its record could not be loaded (deleted since?)",
  unreachable: "loaded, but no path from a seed reached it",
  isolated_domain: "its domain is isolated from the trigger's",
  no_section: "no section of the agent takes it",
  sections_full: "its section's items or tokens were spent",
  duplicate_content: "nearly the same text as a record already in the context",
};

export function mount(root, [agentId, session]) {
  if (agentId) return showContext(root, agentId, session ?? "");
  return listAgents(root);
}

// --- the agents ---------------------------------------------------------------------------

function listAgents(root) {
  const body = h("div", { id: "agents" }, h("p", { class: "muted" }, "loading…"));
  root.append(h("h1", {}, "Agents"), body);
  (async () => {
    try {
      const agents = await get("/breadcrumbs", { schema_name: "agent.def.v1", include_context: true, limit: 500 });
      body.replaceChildren(agents.length ? agentTable(agents) : h("p", { class: "muted" }, "no agents defined"));
    } catch (error) {
      body.replaceChildren(failure(error));
    }
  })();
}

function agentTable(agents) {
  const rows = agents.map((agent) => {
    const spec = agent.context ?? {};
    const id = String(spec.agent_id ?? "");
    return [
      id ? h("a", { href: `#/agents/${encodeURIComponent(id)}`, class: "agent-link" }, id) : "(no agent_id)",
      describeTrigger(spec.context_trigger),
      describeSources(spec.context_sources),
      spec.context_budget === undefined ? "default" : String(spec.context_budget),
      recordLink(agent.id, agent.title || agent.id),
    ];
  });
  return table(["agent", "trigger", "sources", "budget", "definition"], rows);
}

function describeTrigger(trigger) {
  if (!trigger || typeof trigger !== "object") return "none";
  return Object.entries(trigger).map(([key, value]) => `${key}: ${plain(value)}`).join(" · ");
}

function describeSources(sources) {
  if (!sources || typeof sources !== "object") return "defaults";
  return Object.entries(sources).map(([name, options]) => {
    if (Array.isArray(options)) return `${name} (${options.map((rule) => rule?.schema_name ?? rule?.tag ?? plain(rule)).join(", ")})`;
    if (!options || typeof options !== "object") return name;
    if (options.enabled === false || options.limit === 0) return `${name} (off)`;
    const facts = Object.entries(options).filter(([key]) => key !== "enabled").map(([k, v]) => `${k} ${plain(v)}`);
    return facts.length ? `${name} (${facts.join(", ")})` : name;
  }).join(" · ");
}

function plain(value) {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value.join(", ");
  return JSON.stringify(value);
}

// --- one agent's context ------------------------------------------------------------------

function showContext(root, agentId, session) {
  const field = h("input", { name: "session", placeholder: "session (none: triggers without one)", size: 32, value: session });
  const form = h("form", { class: "filters", id: "session-form" }, h("label", {}, "Session ", field), h("button", { type: "submit" }, "Show"));
  const sessions = h("p", { class: "muted", id: "sessions" });
  const body = h("div", { id: "context" }, h("p", { class: "muted" }, "loading…"));
  root.append(h("h1", {}, `Agent ${agentId}`), form, sessions, body);
  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    location.hash = sessionHash(agentId, field.value.trim());
  });

  async function load() {
    try {
      const assembled = await get(`/contexts/${encodeURIComponent(agentId)}`, { session });
      render(assembled);
    } catch (error) {
      body.replaceChildren(failure(error));
    }
  }

  function render(assembled) {
    const again = h("button", { id: "assemble-again", type: "button" }, "Assemble again");
    const status = h("span", { class: "muted", id: "assemble-status" });
    again.addEventListener("click", async () => {
      again.disabled = true;
      status.replaceChildren("assembling…");
      try {
        const fresh = await post("/contexts/assemble", { trigger_id: assembled.context.trigger_id, agent_id: agentId });
        render(fresh);
      } catch (error) {
        status.replaceChildren(failure(error));
        again.disabled = false;
      }
    });
    body.replaceChildren(...contextPage(assembled, again, status));
  }

  if (session) {
    listSessions(sessions, agentId);
    load();
    return;
  }
  (async () => {
    const known = await listSessions(sessions, agentId);
    // No session asked for: the context without one if there is one, else the newest.
    if (known && !known.includes("")) {
      if (known.length) location.replace(sessionHash(agentId, known[0]));
      else body.replaceChildren(h("p", { class: "muted" }, `no context assembled for ${agentId} yet`));
      return;
    }
    load();
  })();
}

function sessionHash(agentId, session) {
  return `#/agents/${encodeURIComponent(agentId)}${session ? `/${encodeURIComponent(session)}` : ""}`;
}

// The sessions this agent has a context in (each is one agent.context.v1 record), newest
// first ("": triggers without a session); null when they cannot be listed.
async function listSessions(node, agentId) {
  try {
    const rows = await get("/breadcrumbs", { schema_name: "agent.context.v1", tag: `consumer:${agentId}`, limit: 50 });
    const names = rows.map((row) => (row.tags.find((t) => t.startsWith("session:")) ?? "").slice("session:".length));
    const links = names.map((name) => [h("a", { href: sessionHash(agentId, name) }, name || "(no session)"), " "]);
    node.replaceChildren();
    if (links.length) append(node, ["contexts in: ", links]);
    return names;
  } catch (error) {
    node.replaceChildren(failure(error));
    return null;
  }
}

function contextPage(assembled, again, status) {
  const context = assembled.context ?? {};
  const explain = context.explain ?? {};
  const budget = Number(context.token_budget ?? explain.budget?.tokens ?? 0);
  const facts = [
    ["record", [recordLink(assembled.id), " · ",
      h("a", { href: `#/graph/context/${encodeURIComponent(assembled.id)}`, id: "context-graph-link" }, "graph")]],
    ["version", String(assembled.version)],
    ["session", assembled.session ?? "(none)"], ["trigger", recordLink(context.trigger_id)],
    ["assembled", when(context.assembled_at)],
    ["tokens", `${context.token_count} of ${budget} (budget from ${explain.budget?.source ?? "?"})`],
    ["records", String(context.breadcrumb_count ?? (explain.selected ?? []).length)],
  ];
  return [
    h("div", { class: "filters" }, again, status),
    h("dl", { class: "facts", id: "context-facts", "data-version": assembled.version }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    h("h2", {}, "Tokens by section"), tokenBars(context, explain, budget),
    h("h2", {}, "Timings"), waterfall(context.timings_ms ?? {}),
    h("h2", {}, "Formatted text"), formattedText(context.formatted_context ?? "", explain),
    ...explanation(explain),
  ];
}

// Each section's tokens (its items' tokens) against the budget; what is left of the count
// is headings and delimiters.
function tokenBars(context, explain, budget) {
  const used = sectionUse(explain);
  const overhead = Math.max(0, Number(context.token_count ?? 0) - used.reduce((sum, s) => sum + s.tokens, 0));
  const parts = [...used, { name: "headings and delimiters", tokens: overhead, overhead: true }].filter((s) => s.tokens > 0 || !s.overhead);
  const scale = Math.max(budget, 1);
  const rows = parts.map((part) => h(
    "div", { class: "bar-row token-bar", "data-section": part.name, "data-tokens": part.tokens },
    h("span", { class: "bar-label" }, part.name),
    h("span", { class: "bar-track" }, h("span", { class: `bar${part.overhead ? " overhead" : ""}`, "data-width": pct(part.tokens / scale) })),
    h("span", { class: "bar-value" }, part.allocated ? `${part.tokens} of ${part.allocated} allocated` : `${part.tokens}`),
  ));
  const free = Math.max(0, budget - Number(context.token_count ?? 0));
  const node = h("div", { id: "token-bars", "data-budget": budget }, rows, h("p", { class: "muted" }, `${free} of ${budget} tokens unused`));
  sized(node);
  return node;
}

function sectionUse(explain) {
  if (Array.isArray(explain.sections) && explain.sections.length) {
    return explain.sections.map((s) => ({ name: String(s.title || s.name), tokens: Number(s.used ?? 0), allocated: s.allocated }));
  }
  const totals = new Map();
  for (const item of explain.selected ?? []) {
    totals.set(item.section, (totals.get(item.section) ?? 0) + Number(item.tokens ?? 0));
  }
  return [...totals].map(([name, tokens]) => ({ name: String(name), tokens }));
}

// Phases one after another: each bar starts where the one before it ended.
function waterfall(timings) {
  const phases = Object.keys(timings).filter((name) => name !== "total");
  phases.sort((a, b) => rank(a) - rank(b));
  const total = Math.max(phases.reduce((sum, name) => sum + Number(timings[name]), 0), Number(timings.total ?? 0), 1e-9);
  let start = 0;
  const rows = phases.map((name) => {
    const ms = Number(timings[name]);
    const row = h(
      "div", { class: "bar-row phase", "data-phase": name, "data-ms": ms },
      h("span", { class: "bar-label" }, name),
      h("span", { class: "bar-track" }, h("span", { class: "bar", "data-left": pct(start / total), "data-width": pct(ms / total) })),
      h("span", { class: "bar-value" }, `${ms.toFixed(1)} ms`),
    );
    start += ms;
    return row;
  });
  const node = h("div", { id: "waterfall" }, rows, h("p", { class: "muted" }, `total ${Number(timings.total ?? start).toFixed(1)} ms`));
  sized(node);
  return node;
}

function rank(phase) {
  const index = PHASES.indexOf(phase);
  return index < 0 ? PHASES.length : index;
}

function pct(fraction) {
  return `${Math.max(0, Math.min(100, fraction * 100)).toFixed(2)}%`;
}

// The CSP allows no inline styles in markup; sizes set through the CSSOM are allowed.
function sized(node) {
  for (const bar of node.querySelectorAll(".bar")) {
    bar.style.width = bar.dataset.width;
    if (bar.dataset.left) bar.style.marginLeft = bar.dataset.left;
  }
}

// The text split where a section starts: Cairn's own ⟦section …⟧ delimiters, or the "###"
// headings of an agent's declared sections.
function formattedText(text, explain) {
  const titles = new Set((explain.sections ?? []).map((s) => `### ${s.title || s.name}`));
  const chunks = [];
  let current = { name: "", lines: [] };
  for (const line of text.split("\n")) {
    const own = line.match(/^⟦section (.+)⟧$/);
    if (own || titles.has(line)) {
      if (current.name || current.lines.some((l) => l.trim())) chunks.push(current);
      current = { name: own ? own[1] : line.slice(4), lines: own ? [] : [line] };
    } else {
      current.lines.push(line);
    }
  }
  if (current.name || current.lines.some((l) => l.trim())) chunks.push(current);
  if (!chunks.length) return h("p", { class: "muted", id: "formatted" }, "empty: nothing fit");
  return h("div", { id: "formatted" }, chunks.map((chunk) => h(
    "section", { class: "context-section", "data-section": chunk.name },
    h("h3", {}, chunk.name || "(before the first section)"),
    h("pre", { class: "text" }, chunk.lines.join("\n").replace(/\n+$/, "")),
  )));
}

// --- the explanation ----------------------------------------------------------------------

// The frame that brings the context on screen holds the selected records and, for the
// dropped ones, a line of counts by reason; their rows are drawn once that frame is painted
// and the page is idle, all in one task. At 10k records a context drops ~150 candidates: drawn in that first
// frame they held it back by a tenth of a second, and drawn a chunk per frame after it
// they kept the main thread in long frames (style, layout and paint of the growing table)
// for another tenth, far below the first screen. The tables skip layout and paint while
// off screen (content-visibility in console.css), so all the rows at once cost one short
// task; the titles are asked for once the page is idle.
function explanation(explain) {
  const selected = explain.selected ?? [];
  const dropped = explain.dropped ?? [];
  const byId = new Map(selected.map((item) => [item.record_id, item]));
  const filter = h("input", { id: "explain-filter", type: "search", placeholder: "why is X (id, title, reason…) not in the context?", size: 48 });
  const selectedTable = rowsTable("selected-table",
    ["record", "schema", "section", "source", "score", "path", "cost", "tokens"],
    selected.map((item) => () => ({ id: item.record_id, cells: [
      recordLink(item.record_id, item.title || item.record_id), item.schema_name ?? "", item.section ?? "",
      item.source ?? "", item.seed_score === null || item.seed_score === undefined ? "" : Number(item.seed_score).toFixed(3),
      path(item, byId), Number(item.path_cost ?? 0).toFixed(3), String(item.tokens ?? ""),
    ] })));
  const droppedTable = rowsTable("dropped-table",
    ["record", "reason", "why", "stage", "tokens", "cost"],
    dropped.map((item) => () => ({ id: item.record_id, cells: [
      recordLink(item.record_id), { class: "reason", content: item.reason },
      [REASONS[item.reason] ?? "", item.duplicate_of ? [" of ", recordLink(item.duplicate_of)] : null],
      item.stage ?? "", item.tokens === null || item.tokens === undefined ? "" : String(item.tokens),
      item.path_cost === null || item.path_cost === undefined ? "" : Number(item.path_cost).toFixed(3),
    ] })), 0);
  const counts = h("span", { class: "muted", id: "filter-counts" });
  const words = () => filter.value.trim().toLowerCase();
  const apply = () => {
    let shown = 0;
    for (const row of document.querySelectorAll("#selected-table tbody tr, #dropped-table tbody tr")) {
      if (show(row, words())) shown += 1;
    }
    counts.replaceChildren(words() ? `${shown} rows match` : "");
  };
  filter.addEventListener("input", apply);
  afterPaint(() => whenIdle(() => {
    droppedTable.fill();
    if (words()) apply();
    whenIdle(() => nameDropped(droppedTable.node, dropped));
  }));
  return [
    h("h2", {}, "Explanation"),
    h("div", { class: "filters" }, filter, counts),
    h("h3", {}, `Selected (${selected.length})`), selected.length ? offScreen(selectedTable.node) : h("p", { class: "muted" }, "nothing selected"),
    h("h3", {}, `Dropped (${dropped.length})`),
    ...(dropped.length ? [reasonCounts(dropped), offScreen(droppedTable.node)] : [h("p", { class: "muted" }, "nothing dropped")]),
  ];
}

// A table in a box that is neither laid out nor painted while off screen (console.css):
// content-visibility has no effect on a table itself.
function offScreen(tableNode) {
  return h("div", { class: "off-screen" }, tableNode);
}

// How many candidates each reason left out, most first: the dropped table's gist, on screen
// with the first frame.
function reasonCounts(dropped) {
  const counts = new Map();
  for (const item of dropped) counts.set(item.reason, (counts.get(item.reason) ?? 0) + 1);
  const parts = [...counts].sort((a, b) => b[1] - a[1]).map(([reason, n]) => `${n} ${reason}`);
  return h("p", { class: "muted", id: "dropped-counts" }, parts.join(" · "));
}

function show(row, words) {
  const hit = !words || row.textContent.toLowerCase().includes(words) || row.dataset.id.includes(words);
  row.hidden = !hit;
  return hit;
}

// After the frame that shows the page: what runs then must not hold back that first frame.
function afterPaint(run) {
  requestAnimationFrame(() => setTimeout(run, 0));
}

// Once the page has nothing more urgent to do (input, a frame; half a second at the latest):
// work that adds only to what is below the first screen.
function whenIdle(run) {
  if (window.requestIdleCallback) requestIdleCallback(run, { timeout: 500 });
  else setTimeout(run, 50);
}

// explain keeps no titles of dropped records: ask for them all at once (POST /breadcrumbs/
// render answers for the ids that still exist and lists the rest), so that a record can be
// found by its title too.
const TITLES_AT_ONCE = 100;

async function nameDropped(tableNode, dropped) {
  const ids = [...new Set(dropped.map((item) => item.record_id))].slice(0, TITLES_AT_ONCE);
  if (!ids.length) return;
  try {
    const { items } = await post("/breadcrumbs/render", { ids });
    const titles = new Map(items.map((item) => [item.id, item.title]));
    for (const row of tableNode.querySelectorAll("tbody tr")) {
      const title = titles.get(row.dataset.id);
      const link = row.querySelector("a.record-link");
      if (title && link) link.replaceChildren(title, h("span", { class: "muted short-id" }, ` ${row.dataset.id.slice(0, 8)}`));
    }
  } catch {
    // Titles are a convenience: the ids stay, and the page says nothing more.
  }
}

// A table of ``rows`` (each a function building {id, cells}; a cell is content, or {class,
// content}): the first ``first`` rows now, the rest when ``fill()`` is called, in one append.
// The table is ``aria-busy`` until then.
function rowsTable(id, columns, rows, first = rows.length) {
  const build = (row) => {
    const { id: rowId, cells } = row();
    return h("tr", { "data-id": rowId }, cells.map((cell) =>
      cell?.content !== undefined ? h("td", { class: cell.class }, cell.content) : h("td", {}, cell)));
  };
  const body = h("tbody", {}, rows.slice(0, first).map(build));
  const node = h("table", { id, class: "explain", "aria-busy": rows.length > first ? "true" : null },
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", {}, c)))), body);
  const fill = () => {
    body.append(...rows.slice(first).map(build));
    node.removeAttribute("aria-busy");
  };
  return { node, fill };
}

// How a record was reached: its seed's source, then each hop (via) to it.
function path(item, byId) {
  if (!item.hops) return `seed (${item.source})`;
  const chain = [];
  const seen = new Set([item.record_id]);
  let via = item.via;
  while (via && !seen.has(via)) {
    seen.add(via);
    chain.unshift(via);
    via = byId.get(via)?.via;
  }
  const steps = chain.flatMap((id) => [recordLink(id, byId.get(id)?.title || id.slice(0, 8)), " → "]);
  return [`${item.source} `, ...steps, `here (${item.hops} hop${item.hops === 1 ? "" : "s"})`];
}
