// Records: the newest records or a search (hybrid: meaning and exact words), and one
// record's page — its raw context, the view an LLM gets (llm_hints applied, with how they
// applied), the text that was embedded, its history with what changed in each version, its
// processing state per stage and its edges in and out.

import { get } from "./api.js";
import { failure, h, recordLink, table, when } from "./dom.js";

export function mount(root, [id]) {
  if (id) return showRecord(root, id);
  return listRecords(root);
}

function listRecords(root) {
  const query = h("input", { name: "q", type: "search", placeholder: "search by meaning and words", size: 32 });
  const schema = h("input", { name: "schema_name", placeholder: "schema", size: 16 });
  const tag = h("input", { name: "tag", placeholder: "tag", size: 14 });
  const results = h("div", { id: "records" });
  const form = h("form", { class: "filters" }, query, schema, tag, h("button", { type: "submit" }, "Find"));
  root.append(h("h1", {}, "Records"), form, results);

  async function load() {
    results.replaceChildren(h("p", { class: "muted" }, "loading…"));
    const filters = { schema_name: schema.value.trim(), tag: tag.value.trim() };
    try {
      const q = query.value.trim();
      const rows = q
        ? await get("/breadcrumbs/search", { q, mode: "hybrid", nn: 50, ...filters })
        : await get("/breadcrumbs", { limit: 50, ...filters });
      const columns = q ? ["title", "schema", "tags", "score", "updated"] : ["title", "schema", "tags", "version", "updated"];
      results.replaceChildren(
        rows.length ? table(columns, rows.map((r) => [
          recordLink(r.id, r.title || r.id), r.schema_name ?? "", r.tags.join(" "),
          q ? r.score.toFixed(3) : String(r.version), when(r.updated_at),
        ])) : h("p", { class: "muted" }, "no records"),
      );
    } catch (error) {
      results.replaceChildren(failure(error));
    }
  }

  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    load();
  });
  load();
}

function showRecord(root, id) {
  const body = h("div", { id: "record" }, h("p", { class: "muted" }, "loading…"));
  root.append(body);
  (async () => {
    try {
      const [full, view, history] = await Promise.all([
        get(`/breadcrumbs/${encodeURIComponent(id)}/full`),
        get(`/breadcrumbs/${encodeURIComponent(id)}`, { explain: true }),
        get(`/breadcrumbs/${encodeURIComponent(id)}/history`),
      ]);
      body.replaceChildren(...recordPage(full, view, history));
    } catch (error) {
      body.replaceChildren(h("h1", {}, "Record"), failure(error));
      return;
    }
    // After the record is on screen: its processing state and its edges, each in place.
    const path = `/breadcrumbs/${encodeURIComponent(id)}`;
    const processing = h("section", { id: "processing" }, h("p", { class: "muted" }, "loading…"));
    const edges = h("section", { id: "edges" }, h("p", { class: "muted" }, "loading…"));
    body.querySelector("#history-heading").before(
      h("h2", {}, "Processing"), processing, h("h2", {}, "Edges"), edges);
    await Promise.all([
      fill(processing, () => get(`${path}/processing`), processingTable),
      fill(edges, () => get(`${path}/edges`, { limit: 100 }), edgeTables),
    ]);
  })();
}

async function fill(section, call, view) {
  try {
    section.replaceChildren(view(await call()));
  } catch (error) {
    section.replaceChildren(failure(error));
  }
}

const STAGE_MEANING = {
  embedded: "its vector, for search by meaning",
  keyed: "its keyword pointers, for exact-word search",
  chunked: "the vectors of a long record's chunks",
  edged: "its edges, built by the worker",
  labelled: "its domain labels",
};

function processingTable(processing) {
  return table(["stage", "state", "what it is", "attempts", "when", "error"],
    processing.stages.map((s) => [
      s.stage, h("span", { class: `state ${s.state}`, "data-stage": s.stage }, s.state),
      STAGE_MEANING[s.stage] ?? "", String(s.attempts),
      s.state === "pending" && s.next_attempt_at ? `next try ${when(s.next_attempt_at)}`
        : when(s.done_at ?? s.updated_at),
      s.last_error ?? "",
    ]));
}

function edgeTables(edges) {
  const rows = (list) => list.map((e) => [
    h("span", { class: `edge-kind ${e.kind}` }, e.kind), recordLink(e.id, e.title || e.id),
    e.schema_name ?? "", e.weight.toFixed(3)]);
  const columns = ["kind", "record", "schema", "weight"];
  const side = (name, list, label) => list.length
    ? h("div", { id: `edges-${name}` }, h("h3", {}, `${label} (${list.length})`), table(columns, rows(list)))
    : h("p", { id: `edges-${name}`, class: "muted" }, `no ${label.toLowerCase()}`);
  return h("div", {},
    side("out", edges.outgoing, "Out of this record"),
    side("in", edges.incoming, "Into this record"),
    edges.truncated ? h("p", { class: "muted" }, "only the strongest shown") : null);
}

function recordPage(full, view, history) {
  const facts = [
    ["id", full.id], ["schema", full.schema_name ?? ""], ["version", String(full.version)],
    ["tags", full.tags.join(" ")], ["domains", (full.domains ?? []).join(" ")],
    ["created", `${when(full.created_at)} by ${full.created_by ?? "?"}`],
    ["updated", `${when(full.updated_at)} by ${full.updated_by ?? "?"}`],
    ["size", `${full.size_bytes} bytes`], ["embedded", full.embedding ? "yes" : "no"],
  ];
  return [
    h("h1", {}, full.title || full.id),
    h("p", {}, h("a", { id: "graph-link", href: `#/graph/${full.schema_name === "agent.context.v1" ? "context/" : ""}${encodeURIComponent(full.id)}` }, "Graph")),
    h("dl", { class: "facts" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    h("h2", {}, "Context"), json(full.context, "raw-context"),
    h("h2", {}, "As an LLM sees it"),
    h("p", { class: "muted" }, view.transform ? `llm_hints from: ${view.transform.source}` : ""),
    json(view.context, "rendered-context"),
    full.llm_text ? [h("h2", {}, "Embedded text"), h("pre", { class: "text" }, full.llm_text)] : null,
    h("h2", { id: "history-heading" }, "History"), historyTable(history),
  ];
}

function json(value, id) {
  return h("pre", { class: "json", id }, JSON.stringify(value, null, 2));
}

// Newest first; each version against the one before it: which context keys changed.
function historyTable(history) {
  const ordered = [...history].sort((a, b) => a.version - b.version);
  const rows = ordered.map((entry, index) => {
    const before = index ? ordered[index - 1] : null;
    return [String(entry.version), entry.change, when(entry.updated_at), entry.updated_by ?? "",
      before ? changes(before, entry) : "created"];
  });
  return rows.length ? table(["version", "change", "when", "by", "what changed"], rows.reverse())
    : h("p", { class: "muted" }, "no history");
}

function changes(before, after) {
  const keys = new Set([...Object.keys(before.context), ...Object.keys(after.context)]);
  const parts = [];
  for (const key of [...keys].sort()) {
    const a = JSON.stringify(before.context[key]);
    const b = JSON.stringify(after.context[key]);
    if (a === undefined) parts.push(`+${key}`);
    else if (b === undefined) parts.push(`-${key}`);
    else if (a !== b) parts.push(`~${key}`);
  }
  if (before.title !== after.title) parts.push("~title");
  if (before.tags.join() !== after.tags.join()) parts.push("~tags");
  return parts.join(" ") || "nothing";
}
