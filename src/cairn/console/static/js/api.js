// Cairn's HTTP API, as the console calls it: the visitor's token (kept in this tab's
// session storage only) goes with every request and, as ?access_token=, with the event
// stream (EventSource cannot send headers; the stream is the one route that takes it).

const TOKEN_KEY = "cairn.console.token";

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, detail) {
    super(`${status}: ${detail}`);
    this.status = status;
    this.detail = detail;
  }
}

function headers(extra = {}) {
  const value = token();
  return value ? { ...extra, Authorization: `Bearer ${value}` } : extra;
}

function url(path, params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(key, value);
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

async function problem(response) {
  try {
    const body = await response.json();
    return body.detail ?? body.title ?? response.statusText;
  } catch {
    return response.statusText;
  }
}

async function send(method, path, { params, body, accept = "application/json" } = {}) {
  const init = { method, headers: headers({ Accept: accept }) };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url(path, params), init);
  if (!response.ok) throw new ApiError(response.status, await problem(response));
  return accept === "application/json" ? response.json() : response.text();
}

export const get = (path, params) => send("GET", path, { params });
export const post = (path, body, params) => send("POST", path, { params, body });
export const text = (path, params) => send("GET", path, { params, accept: "text/plain" });

// GET /ready answers 503 with the same body when something is down: both are an answer.
export async function ready() {
  const response = await fetch("/ready", { headers: headers({ Accept: "application/json" }) });
  return { ok: response.ok, ...(await response.json()) };
}

export function events(params) {
  return new EventSource(url("/events/stream", { ...params, access_token: token() }));
}
