// The console's shell: pages by URL hash (#/live, #/records/<id>, #/agents/<id>,
// #/graph/<id>, #/health), the token.

import { setToken, token } from "./api.js";
import * as contexts from "./contexts.js";
import * as graph from "./graph.js";
import * as health from "./health.js";
import * as live from "./live.js";
import * as records from "./records.js";

const PAGES = { live, records, agents: contexts, graph, health };
let current = null;

function route() {
  const [name, ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  const page = PAGES[name] ? name : "live";
  current?.stop?.();
  const main = document.getElementById("main");
  main.replaceChildren();
  for (const link of document.querySelectorAll("#nav a")) {
    link.classList.toggle("active", link.dataset.page === page);
  }
  current = PAGES[page].mount(main, rest.map(decodeURIComponent)) ?? null;
}

const field = document.getElementById("token");
field.value = token();
document.getElementById("token-form").addEventListener("submit", (submitted) => {
  submitted.preventDefault();
  setToken(field.value.trim());
  route();
});
window.addEventListener("hashchange", route);
route();
