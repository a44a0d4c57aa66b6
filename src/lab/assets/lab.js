// The lab's page: a list of the scenarios served, and a bench that runs one through the JSON API (docs/lab.md).
// The page computes no metric: every number shown is a cell of the API's answer, as summary.csv holds it.
"use strict";

const view = document.getElementById("view");
const status = document.getElementById("status");

// Builds an element: el("p", {class: "small"}, "text", child, ...).
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

async function api(path, body) {
  const options = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, options);
  const answer = await response.json();
  if (!response.ok) throw Object.assign(new Error(answer.error), { status: response.status });
  return answer;
}

// The route lives in the hash, so a link reopens the same study: #/s/<name>?set=k=v&set=k2=v2
function route() {
  const [path, query] = location.hash.slice(1).split("?");
  const params = new URLSearchParams(query || "");
  return { path: path || "/", set: params.getAll("set") };
}

async function home() {
  const catalog = await api("/api/scenarios");
  const cards = el("ul", { class: "cards" });
  for (const scenario of catalog.scenarios) {
    const link = el("a", { href: `#/s/${encodeURIComponent(scenario.name)}` },
      el("strong", {}, scenario.name), el("div", { class: "small" }, scenario.description || scenario.title),
      el("div", { class: "small" }, `${scenario.model} · ${scenario.points} points × ${scenario.replicates} replicates`));
    cards.append(el("li", {}, link));
  }
  view.replaceChildren(el("h1", {}, "Scenarios"), cards);
  if (catalog.results.length) {
    const list = el("ul", {});
    for (const folder of catalog.results) {
      const report = folder.files.includes("report.html") ? "report.html" : "summary.csv";
      list.append(el("li", {}, el("a", { href: `/results/${encodeURIComponent(folder.name)}/${report}` }, folder.name)));
    }
    view.append(el("h2", {}, "Results folders"), list);
  }
}

async function bench(name, set) {
  const scenario = await api(`/api/scenarios/${encodeURIComponent(name)}`);
  const sets = el("textarea", { id: "set", rows: 6, spellcheck: "false", "aria-describedby": "set-help" });
  sets.value = set.join("\n");
  const run = el("button", { type: "button" }, "Run");
  const output = el("section", { id: "output", "aria-live": "polite" });
  const controls = el("section", {},
    el("h1", {}, scenario.name), el("p", { class: "small" }, scenario.description),
    el("label", { for: "set" }, "Overrides (one KEY=VALUE per line, as --set takes them)"),
    el("p", { id: "set-help", class: "small" }, "e.g. clients=500, strategy=full-jitter, replicates=5"), sets, run,
    el("details", {}, el("summary", {}, `${scenario.path}`), el("pre", {}, scenario.source)));
  view.replaceChildren(el("div", { class: "bench" }, controls, output));
  const start = () => {
    const lines = sets.value.split("\n").map((line) => line.trim()).filter(Boolean);
    const query = lines.map((line) => `set=${encodeURIComponent(line)}`).join("&");
    history.replaceState(null, "", `#/s/${encodeURIComponent(name)}${query ? "?" + query : ""}`);
    execute(name, lines, output);
  };
  run.addEventListener("click", start);
  start();
}

async function execute(name, set, output) {
  status.textContent = "running…";
  try {
    const answer = await api("/api/run", { scenario: name, set, channel: "bench" });
    status.textContent = `${answer.points} points × ${answer.replicates} replicates in ${answer.elapsed_ms} ms`;
    output.replaceChildren(results(answer));
  } catch (error) {
    if (error.status === 409) return; // a newer run took this one's place
    status.textContent = "";
    output.replaceChildren(el("p", { class: "error" }, error.message));
  }
}

function results(answer) {
  const part = el("div", {});
  for (const warning of answer.warnings) part.append(el("p", { class: "warning" }, `warning: ${warning}`));
  part.append(el("h2", {}, "Summary"), el("div", { class: "scroll" }, grid(answer.summary, (column) => !column.endsWith("_sd"))));
  part.append(el("h2", {}, "The same numbers from the CLI"), el("code", { class: "command" }, answer.command));
  return part;
}

// A table of the API's cells, showing only the columns `keep` accepts.
function grid(table, keep) {
  const shown = table.columns.map((column, index) => [column, index]).filter(([column]) => keep(column));
  const head = el("tr", {}, ...shown.map(([column]) => el("th", { scope: "col" }, column)));
  const rows = table.rows.map((row) => el("tr", {}, ...shown.map(([, index]) => el("td", {}, row[index]))));
  return el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows));
}

async function show() {
  const { path, set } = route();
  try {
    if (path.startsWith("/s/")) await bench(decodeURIComponent(path.slice(3)), set);
    else await home();
  } catch (error) {
    view.replaceChildren(el("p", { class: "error" }, error.message));
  }
}

window.addEventListener("hashchange", show);
show();
