// Building the page from data without innerHTML: every value is text, never markup.

export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// One formatter each: toLocaleString with options builds a new one per call, which a table
// of a few hundred timestamps pays for in milliseconds.
// The fields are toLocaleString's own defaults, so the text is the same.
const HMS = { hour: "numeric", minute: "numeric", second: "numeric", hour12: false };
const TIME = new Intl.DateTimeFormat([], HMS);
const DATE_TIME = new Intl.DateTimeFormat([], { year: "numeric", month: "numeric", day: "numeric", ...HMS });

export function clock(iso) {
  return iso ? TIME.format(new Date(iso)) : "";
}

export function when(iso) {
  return iso ? DATE_TIME.format(new Date(iso)) : "";
}

export function recordLink(id, label) {
  return h("a", { href: `#/records/${encodeURIComponent(id)}`, class: "record-link" }, label ?? id);
}

export function failure(error) {
  const message = error?.status ? `${error.status}: ${error.detail}` : String(error?.message ?? error);
  return h("p", { class: "error", role: "alert" }, message);
}

export function table(columns, rows) {
  return h(
    "table",
    {},
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, row.map((cell) => h("td", {}, cell))))),
  );
}
