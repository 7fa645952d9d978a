// The console's shell: pages by URL hash (#/live, #/records/<id>, #/agents/<id>,
// #/graph/<id>, #/health), the token.

import { setToken, token } from "./api.js";
import * as contexts from "./contexts.js";
import { failure } from "./dom.js";
import * as health from "./health.js";
import * as live from "./live.js";
import * as records from "./records.js";

// A page whose module is fetched when it is first opened: the graph's d3 (280 KB) is not
// worth fetching and compiling for every other page. d3 is a UMD bundle that sets the
// global d3, so it runs before the page's module reads it.
function lazy(load) {
  return {
    mount(root, args) {
      let page = null;
      let stopped = false;
      load().then((module) => {
        if (!stopped) page = module.mount(root, args) ?? null;
      }, (error) => root.append(failure(error)));
      return { stop() { stopped = true; page?.stop?.(); } };
    },
  };
}

const graph = lazy(async () => {
  await import("../vendor/d3.min.js");
  return import("./graph.js");
});
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
