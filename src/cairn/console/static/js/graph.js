// Graph: the records linked to one record (#/graph/<id>) or to an assembled context's
// selection (#/graph/context/<id>), from GET /graph, in a force layout (d3, vendored:
// static/vendor/d3.min.js, loaded by app.js before this module as the global d3). Nodes are coloured by
// schema, edges by kind; a context's selected records and the paths that reached them are
// drawn heavier. Zoom and pan with the wheel and drag; a click opens the record. Debug
// paths through the records shown are drawn over it (graph_paths.js).

import { get } from "./api.js";
import { failure, h } from "./dom.js";
import { DebugPaths } from "./graph_paths.js";

const d3 = window.d3;
const HEIGHT = 560;
const EDGE_KINDS = ["causal", "temporal", "tag", "semantic"];
const LABELLED = 40; // nodes carry their titles up to this many
const LIMITS = [100, 200, 500]; // records drawn at most (GET /graph allows 500)
const DEFAULT_LIMIT = 200;
const STEPS_BUDGET_MS = 12; // layout steps per frame: as many as fit in this, then one paint
const SHOWN_WHILE_LAID_OUT = 150; // records: a larger graph is shown once mostly laid out
const HIDDEN_BUDGET_MS = 40; // layout steps per frame while nothing is painted
const SHOW_AT_ALPHA = 0.05; // d3's alpha (1 at the start, 0.001 at the end) to show it at

export function mount(root, args) {
  const [first, second] = args;
  const contextId = first === "context" ? second : null;
  const recordId = contextId ? null : first;
  if (!contextId && !recordId) return newest(root);

  const depth = h("select", { name: "depth" },
    [1, 2, 3].map((d) => h("option", { value: d, selected: d === (contextId ? 1 : 2) }, `depth ${d}`)));
  const most = h("select", { name: "limit" },
    LIMITS.map((n) => h("option", { value: n, selected: n === DEFAULT_LIMIT }, `${n} records`)));
  const toggle = h("input", { type: "checkbox", name: "paths", id: "paths-toggle" });
  const status = h("span", { id: "graph-status", class: "status" }, "loading…");
  const canvas = h("div", { id: "graph", class: "graph-canvas" });
  const legend = h("div", { id: "graph-legend", class: "legend" });
  const title = contextId ? "Context graph" : "Graph";
  const about = contextId ? `assembled context ${contextId}` : `around record ${recordId}`;
  root.append(
    h("h1", {}, title),
    h("p", { class: "muted" }, about, " · ",
      h("a", { href: `#/records/${encodeURIComponent(contextId ?? recordId)}` }, "the record")),
    h("form", { class: "filters" }, depth, most,
      h("label", {}, toggle, " debug paths ", h("span", { id: "paths-count" }, "")), status),
    canvas, legend);

  let drawing = null;
  // Only the newest request draws: depth then size changed in quick succession send two, and
  // the first answer may arrive last (it drew the graph that was no longer asked for).
  let asked = 0;
  async function load() {
    drawing?.stop();
    const mine = ++asked;
    status.textContent = "loading…";
    const params = contextId ? { context: contextId } : { around: recordId };
    try {
      const graph = await get("/graph", { ...params, depth: depth.value, limit: most.value });
      if (mine !== asked) return;
      drawing = draw(canvas, legend, graph, recordId);
      const selected = graph.nodes.filter((n) => n.selected).length;
      status.textContent = `${graph.nodes.length} records · ${graph.edges.length} edges`
        + (contextId ? ` · ${selected} selected` : "") + (graph.truncated ? " · truncated" : "");
      drawing.paths = new DebugPaths(drawing.layer.overlay, drawing.positions, toggle,
        document.getElementById("paths-count"));
      await drawing.paths.load(graph.nodes);
    } catch (error) {
      if (mine !== asked) return;
      status.textContent = "";
      canvas.replaceChildren(failure(error));
    }
  }
  depth.addEventListener("change", load);
  most.addEventListener("change", load);
  load();
  return { stop: () => drawing?.stop() };
}

// #/graph alone: the graph around the newest record.
function newest(root) {
  root.append(h("h1", {}, "Graph"));
  get("/breadcrumbs", { limit: 1 }).then((rows) => {
    if (rows.length) location.hash = `#/graph/${encodeURIComponent(rows[0].id)}`;
    else root.append(h("p", { class: "muted" }, "no records yet"));
  }, (error) => root.append(failure(error)));
}

function pathPairs(nodes) {
  const pairs = new Set();
  for (const node of nodes) {
    const path = node.path ?? [];
    for (let i = 1; i < path.length; i += 1) pairs.add(pairKey(path[i - 1], path[i]));
  }
  return pairs;
}

const pairKey = (a, b) => (a < b ? `${a}|${b}` : `${b}|${a}`);
const endId = (end) => (typeof end === "object" ? end.id : end);

function draw(canvas, legend, graph, centreId) {
  const width = canvas.clientWidth || 900;
  const nodes = graph.nodes.map((n) => ({ ...n }));
  const links = graph.edges.map((e) => ({ ...e }));
  const onPath = pathPairs(graph.nodes);
  const reaching = new Set(graph.nodes.flatMap((n) => n.path ?? []));
  const schemas = [...new Set(nodes.map((n) => n.schema_name ?? "(none)"))].sort();
  const colour = d3.scaleOrdinal(schemas, d3.schemeTableau10.concat(d3.schemeSet3));

  const svg = d3.create("svg").attr("viewBox", [0, 0, width, HEIGHT]).attr("class", "graph");
  const root = svg.append("g").attr("class", "layer");
  svg.call(d3.zoom().scaleExtent([0.2, 6]).on("zoom", (e) => root.attr("transform", e.transform)));
  const line = root.append("g").attr("class", "edges").selectAll("line").data(links).join("line")
    .attr("class", (d) => `edge ${d.kind}${onPath.has(pairKey(d.source, d.target)) ? " on-path" : ""}`);
  const overlay = root.append("g").attr("class", "debug-paths");
  const circle = root.append("g").attr("class", "nodes").selectAll("circle").data(nodes).join("circle")
    .attr("class", (d) => ["node", d.selected && "selected", !d.selected && reaching.has(d.id) && "via",
      d.id === centreId && "centre"].filter(Boolean).join(" "))
    .attr("r", (d) => (d.selected || d.id === centreId ? 9 : 6))
    .attr("fill", (d) => colour(d.schema_name ?? "(none)"))
    .attr("data-id", (d) => d.id)
    .on("click", (_, d) => { location.hash = `#/records/${encodeURIComponent(d.id)}`; });
  circle.append("title").text((d) => `${d.title}\n${d.schema_name ?? ""}`);
  const label = root.append("g").attr("class", "labels").selectAll("text")
    .data(nodes.length <= LABELLED ? nodes : nodes.filter((n) => n.selected || n.id === centreId))
    .join("text").text((d) => (d.title.length > 28 ? `${d.title.slice(0, 27)}…` : d.title));

  const positions = new Map(nodes.map((n) => [n.id, n]));
  const simulation = d3.forceSimulation(nodes)
    .force("link", d3.forceLink(links).id((d) => d.id).distance(70))
    .force("charge", d3.forceManyBody().strength(-180))
    .force("center", d3.forceCenter(width / 2, HEIGHT / 2))
    .force("collide", d3.forceCollide(14))
    .alphaDecay(0.05);
  const drawing = { layer: { overlay }, positions, paths: null };
  // d3 runs one step of the layout per frame, and each frame repaints every line and circle:
  // at a few hundred records the painting, not the layout, is what costs. So each frame
  // takes as many steps as fit in its budget and paints once (d3 checks for the end after
  // this handler, so the layout still ends, and says so, as before).
  // A large graph is laid out before it is shown: its first steps move every record across
  // the whole picture, and each of those frames would repaint all of it. The page stays
  // responsive meanwhile: the steps are spread over frames.
  let hidden = nodes.length > SHOWN_WHILE_LAID_OUT;
  svg.classed("laying-out", hidden);
  simulation.on("tick", () => {
    const until = performance.now() + (hidden ? HIDDEN_BUDGET_MS : STEPS_BUDGET_MS);
    while (simulation.alpha() >= simulation.alphaMin() && performance.now() < until) simulation.tick();
    if (hidden) {
      if (simulation.alpha() > SHOW_AT_ALPHA && simulation.alpha() >= simulation.alphaMin()) return;
      hidden = false;
      svg.classed("laying-out", false);
    }
    line.attr("x1", (d) => d.source.x).attr("y1", (d) => d.source.y)
      .attr("x2", (d) => d.target.x).attr("y2", (d) => d.target.y);
    circle.attr("cx", (d) => d.x).attr("cy", (d) => d.y);
    label.attr("x", (d) => d.x + 11).attr("y", (d) => d.y + 4);
    drawing.paths?.place();
  });
  simulation.on("end", () => svg.attr("data-settled", "true"));
  circle.call(d3.drag()
    .on("start", (e, d) => { if (!e.active) simulation.alphaTarget(0.2).restart(); d.fx = d.x; d.fy = d.y; })
    .on("drag", (e, d) => { d.fx = e.x; d.fy = e.y; })
    .on("end", (e, d) => { if (!e.active) simulation.alphaTarget(0); d.fx = null; d.fy = null; }));

  canvas.replaceChildren(svg.node());
  legend.replaceChildren(legendOf(schemas, colour, links));
  drawing.stop = () => { simulation.stop(); drawing.paths?.stop(); };
  return drawing;
}

function swatch(kind, attributes) {
  const svg = d3.create("svg").attr("width", 22).attr("height", 12).attr("class", "swatch");
  if (kind === "circle") svg.append("circle").attr("cx", 6).attr("cy", 6).attr("r", 5).attr("fill", attributes.fill);
  else svg.append("line").attr("x1", 0).attr("y1", 6).attr("x2", 22).attr("y2", 6).attr("class", attributes.class);
  return svg.node();
}

function legendOf(schemas, colour, links) {
  const kinds = EDGE_KINDS.filter((k) => links.some((l) => l.kind === k));
  return h("div", {},
    h("ul", { class: "legend-schemas" },
      schemas.map((s) => h("li", { "data-schema": s }, swatch("circle", { fill: colour(s) }), s))),
    h("ul", { class: "legend-edges" },
      kinds.map((k) => h("li", {}, swatch("line", { class: `edge ${k}` }), k)),
      h("li", {}, swatch("line", { class: "edge on-path" }), "path to a selected record"),
      ["active", "resolved", "abandoned"].map((s) =>
        h("li", {}, swatch("line", { class: `debug-path ${s}` }), `debug path, ${s}`))));
}
