// Debug paths over the graph: each path (debug.path.v1) whose waypoints (debug.waypoint.v1)
// came from records on the graph is a dashed line through those records in sequence order,
// red and moving while active, green once resolved, grey when abandoned, with a marker per
// waypoint coloured by its type. The paths come from the waypoint and path records on the
// graph; the event stream's path frames (?paths=true) then move them as they happen.

import { events, get } from "./api.js";

const d3 = window.d3;
const MAX_PATHS = 20;
const CLOSED = { path_resolved: "resolved", path_abandoned: "abandoned" };
const MARKER_RING = 11; // markers sit around their record, one slot per waypoint there

export class DebugPaths {
  constructor(group, positions, toggle, count) {
    this.group = group;
    this.positions = positions;
    this.toggle = toggle;
    this.count = count;
    this.paths = new Map();
    this.chosen = false; // the visitor used the toggle: leave it as they set it
    this.source = null;
    this.stopped = false;
    this.onToggle = () => {
      this.chosen = true;
      this.show();
    };
    toggle.addEventListener("change", this.onToggle);
  }

  async load(nodes) {
    const ids = new Set();
    for (const node of nodes) {
      if (node.schema_name === "debug.path.v1") ids.add(node.id);
      if (node.schema_name !== "debug.waypoint.v1") continue;
      for (const tag of node.tags) if (tag.startsWith("path:")) ids.add(tag.slice(5));
    }
    await Promise.all([...ids].slice(0, MAX_PATHS).map((id) => this.fetch(id)));
    if (this.stopped) return;
    this.render();
    this.listen();
  }

  async fetch(id) {
    const [record, waypoints] = await Promise.all([
      get(`/breadcrumbs/${encodeURIComponent(id)}/full`),
      get("/breadcrumbs", { schema_name: "debug.waypoint.v1", tag: `path:${id}`,
        include_context: true, limit: 1000 }),
    ]);
    const path = this.path(id);
    path.status = record.context?.status ?? path.status;
    for (const waypoint of waypoints) this.add(path, waypoint.id, waypoint.context ?? {});
  }

  path(id) {
    if (!this.paths.has(id)) this.paths.set(id, { id, status: "active", waypoints: new Map() });
    return this.paths.get(id);
  }

  add(path, id, context) {
    path.waypoints.set(id, { id, path: path.id, sequence: Number(context.sequence ?? 0),
      type: String(context.type ?? "waypoint"), source: context.source_record_id });
  }

  listen() {
    this.source = events({ paths: true });
    this.source.onopen = () => this.group.attr("data-live", "true");
    this.source.onmessage = (message) => {
      const frame = JSON.parse(message.data);
      if (typeof frame.type === "string" && frame.type.startsWith("path_")) this.apply(frame);
    };
  }

  apply(frame) {
    const known = this.paths.has(frame.path_id);
    if (frame.type === "path_waypoint") {
      if (!known && !this.positions.has(frame.source_record_id)) return;
      this.add(this.path(frame.path_id), frame.waypoint_id, {
        sequence: frame.sequence, type: frame.waypoint_type, source_record_id: frame.source_record_id });
    } else {
      if (!known && !this.positions.has(frame.trigger_record_id)) return;
      this.path(frame.path_id).status = frame.status ?? CLOSED[frame.type] ?? "active";
    }
    this.render();
  }

  // The paths with at least one waypoint on the graph, each with those waypoints in order.
  visible() {
    const shown = [];
    for (const path of this.paths.values()) {
      const stops = [...path.waypoints.values()]
        .filter((w) => this.positions.has(w.source))
        .sort((a, b) => a.sequence - b.sequence);
      if (stops.length) shown.push({ id: path.id, status: path.status, stops });
    }
    return shown;
  }

  render() {
    const shown = this.visible();
    const slots = new Map();
    const markers = shown.flatMap((p) => p.stops.map((w) => {
      const slot = slots.get(w.source) ?? 0;
      slots.set(w.source, slot + 1);
      return { ...w, slot, status: p.status };
    }));
    this.group.selectAll("path.debug-path").data(shown, (d) => d.id).join("path")
      .attr("class", (d) => `debug-path ${d.status}`)
      .attr("data-path", (d) => d.id);
    this.group.selectAll("circle.waypoint").data(markers, (d) => d.id).join(
      (enter) => enter.append("circle").call((c) => c.append("title")))
      .attr("class", (d) => `waypoint ${d.type}`)
      .attr("r", 4)
      .attr("data-path", (d) => d.path)
      .select("title").text((d) => `${d.sequence}. ${d.type}`);
    this.count.textContent = shown.length ? `(${shown.length})` : "";
    if (!this.chosen) this.toggle.checked = shown.length > 0;
    this.show();
    this.place();
  }

  show() {
    this.group.classed("hidden", !this.toggle.checked);
  }

  place() {
    const at = (id) => this.positions.get(id);
    const line = d3.line();
    this.group.selectAll("path.debug-path")
      .attr("d", (d) => line(d.stops.map((w) => [at(w.source).x, at(w.source).y])));
    this.group.selectAll("circle.waypoint")
      .attr("cx", (d) => at(d.source).x + MARKER_RING * Math.cos(d.slot * 0.9))
      .attr("cy", (d) => at(d.source).y + MARKER_RING * Math.sin(d.slot * 0.9));
  }

  stop() {
    this.stopped = true;
    this.source?.close();
    this.toggle.removeEventListener("change", this.onToggle);
  }
}
