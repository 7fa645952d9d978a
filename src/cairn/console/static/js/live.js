// Live: the event stream as it happens, one line per change. Filters go to the server
// (the stream's own schema_name / any_tags / session parameters); pause holds lines back
// without dropping any, resume shows them in order. EventSource reconnects by itself and
// resumes with Last-Event-ID, so a dropped connection loses nothing.

import { events } from "./api.js";
import { clock, h, recordLink } from "./dom.js";

const MAX_LINES = 500;
const SHOWN_TYPES = new Set(["breadcrumb.created", "breadcrumb.updated", "breadcrumb.deleted"]);

export function mount(root) {
  const schema = h("input", { name: "schema_name", placeholder: "schema, e.g. note.v1", size: 18 });
  const tags = h("input", { name: "any_tags", placeholder: "any of tags a,b", size: 18 });
  const session = h("input", { name: "session", placeholder: "session", size: 14 });
  const pause = h("button", { type: "button", id: "pause" }, "Pause");
  const status = h("span", { id: "live-status", class: "status" }, "connecting…");
  const list = h("ol", { id: "events", class: "events", reversed: true });
  const form = h("form", { class: "filters" }, schema, tags, session,
    h("button", { type: "submit" }, "Apply"), pause, status);
  root.append(h("h1", {}, "Live events"), form, list);

  let source = null;
  let paused = false;
  let held = [];
  let received = 0;

  function report(state) {
    const waiting = held.length ? ` · ${held.length} held` : "";
    status.textContent = `${state} · ${received} events${waiting}`;
    status.dataset.state = state;
  }

  function show(event) {
    const kind = event.type.replace("breadcrumb.", "");
    const line = h("li", { class: `event ${kind}`, "data-id": event.breadcrumb_id },
      h("time", {}, clock(event.updated_at)), " ",
      h("span", { class: `kind ${kind}` }, kind), " ",
      h("span", { class: "schema" }, event.schema_name ?? ""), " ",
      kind === "deleted" ? h("span", { class: "title" }, event.title ?? event.breadcrumb_id)
        : recordLink(event.breadcrumb_id, event.title || event.breadcrumb_id),
      (event.tags ?? []).length ? h("span", { class: "tags" }, ` ${event.tags.join(" ")}`) : null,
      ` v${event.version ?? ""}`);
    list.prepend(line);
    while (list.children.length > MAX_LINES) list.lastElementChild.remove();
  }

  function connect() {
    source?.close();
    const params = { schema_name: schema.value.trim(), any_tags: tags.value.trim(),
      session: session.value.trim() };
    source = events(params);
    source.onopen = () => report("live");
    source.onerror = () => report(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      if (!SHOWN_TYPES.has(event.type)) return;
      received += 1;
      if (paused) held.push(event);
      else show(event);
      report(paused ? "paused" : "live");
    };
  }

  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    list.replaceChildren();
    held = [];
    received = 0;
    connect();
  });
  pause.addEventListener("click", () => {
    paused = !paused;
    pause.textContent = paused ? "Resume" : "Pause";
    if (!paused) {
      held.forEach(show);
      held = [];
    }
    report(paused ? "paused" : "live");
  });

  connect();
  return { stop: () => source?.close() };
}
