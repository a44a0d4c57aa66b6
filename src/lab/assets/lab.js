// The lab's page: the scenarios served, and a bench that runs one through the JSON API (docs/lab.md). The page
// computes no metric: every number it shows is a cell of the API's answer, as summary.csv and timeline.csv hold it.
"use strict";

const view = document.getElementById("view");
const status = document.getElementById("status");
const SVG = "http://www.w3.org/2000/svg";

// el("p", {class: "small"}, "text", child, ...): an element with attributes and children.
function el(tag, attributes, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

async function api(path, body, signal) {
  const options = body === undefined ? {} :
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), signal };
  const response = await fetch(path, options);
  const answer = await response.json();
  if (!response.ok) throw Object.assign(new Error(answer.error), { status: response.status });
  return answer;
}

// Colours: one per series name, as in every chart and notebook (assets/colours.json): a named colour, else the
// fallback at FNV-1a 64 of the name, else the first fallback colour this chart has not used yet.
let palette = { named: {}, fallback: ["#1f77b4"] };
function fnv1a64(text) {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return hash;
}
function colours(names) {
  const taken = new Set();
  return names.map((name) => {
    let colour = palette.named[name] || palette.fallback[Number(fnv1a64(name) % BigInt(palette.fallback.length))];
    if (!palette.named[name] && taken.has(colour)) colour = palette.fallback.find((c) => !taken.has(c)) || colour;
    taken.add(colour);
    return colour;
  });
}

// The route is in the hash, so a link reopens the same study: #/s/<name>?set=k%3Dv&set=...
function route() {
  const [path, query] = location.hash.slice(1).split("?");
  return { path: path || "/", set: new URLSearchParams(query || "").getAll("set") };
}

async function home() {
  const catalog = await api("/api/scenarios");
  const cards = el("ul", { class: "cards" });
  for (const scenario of catalog.scenarios) {
    cards.append(el("li", {}, el("a", { href: `#/s/${encodeURIComponent(scenario.name)}` },
      el("strong", {}, scenario.name), el("div", { class: "small" }, scenario.description || scenario.title),
      el("div", { class: "small" }, `${scenario.model} · ${scenario.points} points × ${scenario.replicates} replicates`))));
  }
  const lessons = el("ul", { class: "cards" }, ...catalog.lessons.map((lesson) => el("li", {},
    el("a", { href: `#/l/${encodeURIComponent(lesson.name)}` }, el("strong", {}, lesson.title),
      el("div", { class: "small" }, lesson.summary)))));
  view.replaceChildren(el("h1", {}, "Lessons"), lessons, el("h1", {}, "Scenarios"), cards);
  if (catalog.results.length) {
    const list = el("ul", {});
    for (const folder of catalog.results) {
      const page = folder.files.includes("report.html") ? "report.html" : "summary.csv";
      list.append(el("li", {}, el("a", { href: `/results/${encodeURIComponent(folder.name)}/${page}` }, folder.name)));
    }
    view.append(el("h2", {}, "Results folders"), list);
  }
}

// A control's value as the scenario holds it: its sweep as a TOML array, else its value, else its default.
function original(control) {
  if (control.swept) {
    const numeric = control.kind === "count" || control.kind === "real";
    return "[" + control.swept.map((v) => (numeric ? v : JSON.stringify(v))).join(", ") + "]";
  }
  return control.value ?? control.default ?? "";
}

// Durations as the scenario writes them ("5ms", "1.5s") to nanoseconds and back, for the log-scale sliders.
const UNITS = [["h", 3600e9], ["min", 60e9], ["s", 1e9], ["ms", 1e6], ["us", 1e3], ["ns", 1]];
function nanos(text) {
  const match = /^([0-9.]+)\s*(ns|us|µs|ms|s|min|h)$/.exec(text.trim());
  return match ? Number(match[1]) * UNITS.find(([unit]) => unit === match[2].replace("µ", "u"))[1] : NaN;
}
function duration(ns) {
  if (ns === 0) return "0s";
  const [unit, size] = UNITS.find(([, size]) => ns >= size) || ["ns", 1];
  return `${Number((ns / size).toPrecision(3))}${unit}`;
}

// A slider over [value/10, value*10] on a log scale, for a positive number or duration.
function slider(label, value, toNumber, fromNumber, onInput) {
  const centre = toNumber(value);
  if (!(centre > 0)) return null;
  const range = el("input", { type: "range", min: -1000, max: 1000, value: 0, "aria-label": `${label} (slider)` });
  range.addEventListener("input", () => onInput(fromNumber(centre * 10 ** (Number(range.value) / 1000))));
  return range;
}

function controlRow(control, value, changed, horizonMs) {
  const id = `control-${control.key}`;
  const about = el("div", { class: "small" }, control.help);
  let input;
  if ((control.kind === "choice") && !control.swept) {
    input = el("select", { id });
    for (const group of control.groups) {
      const optgroup = el("optgroup", { label: group.label });
      for (const option of group.options) optgroup.append(el("option", { value: option.name, title: option.about }, option.name));
      input.append(optgroup);
    }
    input.value = value;
    const explain = () => {
      const chosen = control.groups.flatMap((g) => g.options).find((o) => o.name === input.value);
      about.textContent = chosen && chosen.about ? chosen.about : control.help;
    };
    explain();
    input.addEventListener("change", () => { explain(); changed(); });
  } else {
    input = el("input", { id, type: "text", value, spellcheck: "false" });
    input.addEventListener("change", changed);
  }
  const row = el("div", { class: "control" }, el("label", { for: id }, control.name), input);
  if (!control.swept && (control.kind === "count" || control.kind === "real" || control.kind === "duration")) {
    const isDuration = control.kind === "duration";
    const fromNumber = isDuration ? duration : (x) => (control.kind === "count" ? String(Math.max(1, Math.round(x))) : String(Number(x.toPrecision(3))));
    const range = slider(control.name, value, isDuration ? nanos : Number, fromNumber, (text) => { input.value = text; changed(true); });
    if (range) row.append(range);
  }
  if (control.widget === "faults") row.append(faultsTimeline(input, changed, horizonMs));
  row.append(about);
  return { row, input };
}

async function bench(name, set) {
  const scenario = await api(`/api/scenarios/${encodeURIComponent(name)}`);
  const given = new Map(set.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
  const output = el("section", { id: "output", "aria-live": "polite" });
  const form = el("form", { class: "controls", onsubmit: "return false" });
  const inputs = [];
  let timer;
  // A committed value (typed, picked) runs at once; a slider being dragged runs 150 ms after it rests.
  const changed = (dragging) => { clearTimeout(timer); timer = setTimeout(start, dragging === true ? 150 : 0); };
  const sections = new Map();
  const horizonMs = runLength(scenario.controls, given);
  for (const control of scenario.controls) {
    const start = original(control);
    const { row, input } = controlRow(control, given.has(control.key) ? given.get(control.key) : start, changed, horizonMs);
    given.delete(control.key);
    inputs.push({ control, input, start });
    if (!sections.has(control.section)) sections.set(control.section, el("fieldset", {}, el("legend", {}, control.section)));
    sections.get(control.section).append(row);
  }
  const extra = el("textarea", { id: "extra", rows: 3, spellcheck: "false" });
  extra.value = [...given].map(([key, value]) => `${key}=${value}`).join("\n");
  extra.addEventListener("change", changed);
  form.append(...sections.values(), el("label", { for: "extra" }, "Other overrides (KEY=VALUE per line, as --set takes them)"), extra);
  view.replaceChildren(el("h1", {}, scenario.name), el("p", { class: "small" }, scenario.description),
    el("div", { class: "bench" }, form, output));
  function start() {
    const overrides = inputs.filter(({ input, start }) => input.value.trim() !== start).map(({ control, input }) => `${control.key}=${input.value.trim()}`);
    overrides.push(...extra.value.split("\n").map((line) => line.trim()).filter(Boolean));
    const query = overrides.map((line) => `set=${encodeURIComponent(line)}`).join("&");
    history.replaceState(null, "", `#/s/${encodeURIComponent(name)}${query ? "?" + query : ""}`);
    execute(name, overrides, output).then((answer) => {
      if (answer) for (const node of form.querySelectorAll(".faults-timeline")) node.setHorizon(timelineEnd(answer));
    });
  }
  start();
}

// How long a run lasts before one has answered: the workload's `duration` where it has one, else a minute.
function runLength(controls, given) {
  const control = controls.find((c) => c.name === "duration" && c.kind === "duration" && !c.swept);
  const ms = control ? nanos(String(given.get(control.key) ?? original(control))) / 1e6 : NaN;
  return ms > 0 ? ms : 60000;
}

// Where a run's timeline chart ends, in milliseconds: its last bucket, or the scenario's timeline_until.
function timelineEnd(answer) {
  const at = answer.timeline.columns.indexOf("bucket_start_ms");
  const last = Math.max(0, ...answer.timeline.rows.map((row) => Number(row[at])));
  return answer.timeline_until_ms === null ? last : Math.min(last, answer.timeline_until_ms);
}

// One run in flight per channel: a newer one aborts the request of the older, and the server stops its run.
// Channels carry this page's own id, so two open pages never cancel each other's runs.
const inFlight = new Map();
const PAGE_ID = Math.random().toString(36).slice(2, 10);
const progressBar = document.getElementById("progress");

async function execute(name, set, output, channel = "bench", claims = []) {
  status.textContent = "running…";
  output.setAttribute("aria-busy", "true");
  inFlight.get(channel)?.abort();
  const controller = new AbortController();
  inFlight.set(channel, controller);
  const serverChannel = `${PAGE_ID}-${channel}`;
  // While the run goes on, the runs it has finished (GET /api/progress), four times a second.
  const poll = setInterval(async () => {
    const mine = (await api("/api/progress").catch(() => ({ runs: [] }))).runs.find((r) => r.channel === serverChannel);
    if (!mine || inFlight.get(channel) !== controller) return;
    progressBar.hidden = false;
    [progressBar.max, progressBar.value] = [mine.total, mine.done];
    status.textContent = `running… ${mine.done} of ${mine.total} runs`;
  }, 250);
  try {
    const answer = await api("/api/run", { scenario: name, set, channel: serverChannel, claims }, controller.signal);
    const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
    status.textContent = `${plural(answer.points, "point")} × ${plural(answer.replicates, "replicate")}, ${answer.elapsed_ms} ms`;
    output.replaceChildren(results(answer));
    return answer;
  } catch (error) {
    if (error.name === "AbortError" || error.status === 409) return null; // a newer run took this one's place
    status.textContent = "";
    output.replaceChildren(el("p", { class: "error", role: "alert" }, error.message));
  } finally {
    clearInterval(poll);
    if (inFlight.get(channel) === controller) progressBar.hidden = true;
    output.removeAttribute("aria-busy");
  }
}

// The label of a row: its swept values, or the scenario's one point.
function labels(table, swept) {
  const at = swept.map((name) => table.columns.indexOf(name));
  return (row) => (at.length ? at.map((i) => row[i]).join(", ") : "all");
}

function results(answer) {
  const part = el("div", {});
  for (const warning of answer.warnings) part.append(el("p", { class: "warning" }, `warning: ${warning}`));
  if (answer.policies && answer.policies.length) {
    // What each caller really runs, defaults and imports resolved: nobody retries unless this says so.
    const list = el("ul", {}, ...answer.policies.map((policy) => el("li", {}, policy)));
    part.append(el("details", { class: "policies" }, el("summary", {}, "Effective policy of every caller"), list));
  }
  const series = answer.series[0];
  let chart = null;
  if (series && answer.timeline.rows.length) {
    chart = timeline(answer, series);
    part.append(el("h2", {}, `${series} per bucket`), chart);
  }
  if (answer.swept.length === 1 && answer.summary.rows.length >= 2 && answer.summary.rows.length <= 4) {
    part.append(panes(answer));
  }
  part.append(replayPanel(answer, chart));
  part.append(el("h2", {}, "Summary (mean ± 95% interval)"), el("div", { class: "scroll" }, summary(answer)));
  const copy = el("button", { type: "button" }, "Copy the CLI command");
  copy.addEventListener("click", () => navigator.clipboard.writeText(answer.command).then(() => { copy.textContent = "Copied"; }));
  const query = answer.set.map((line) => `set=${encodeURIComponent(line)}`).join("&");
  const download = el("a", { class: "button", id: "download", download: `${answer.scenario}.toml`,
    href: `/api/scenarios/${encodeURIComponent(answer.scenario)}/toml${query ? "?" + query : ""}` }, "Download the scenario");
  part.append(el("h2", {}, "The same numbers from the CLI"), el("code", { class: "command" }, answer.command),
    el("div", { class: "row" }, copy, download),
    el("p", { class: "small" }, "The downloaded file is the scenario with these changes written into its own " +
      "`set` list: `retrylab run` on it, with no --set, writes the same numbers."));
  return part;
}

function summary(answer) {
  const { columns, rows } = answer.summary;
  const label = labels(answer.summary, answer.swept);
  const help = new Map(answer.metrics.map((m) => [m.name, m.help]));
  const metrics = columns.filter((c) => c.endsWith("_mean")).map((c) => c.slice(0, -5));
  const head = el("tr", {}, el("th", { scope: "col" }, answer.swept.join(", ") || "point"),
    ...metrics.map((m) => el("th", { scope: "col", title: help.get(m) || "" }, m)));
  const body = rows.map((row) => el("tr", {}, el("th", { scope: "row" }, label(row)),
    ...metrics.map((m) => el("td", {}, `${row[columns.indexOf(m + "_mean")]} ± ${row[columns.indexOf(m + "_ci95")]}`))));
  return el("table", {}, el("thead", {}, head), el("tbody", {}, ...body));
}

// One line per point of `series` over time, with a legend and a hover readout of the cells under the cursor.
function timeline(answer, series) {
  const { columns, rows } = answer.timeline;
  const label = labels(answer.timeline, answer.swept);
  const [x, y] = [columns.indexOf("bucket_start_ms"), columns.indexOf(series)];
  const lines = new Map();
  for (const row of rows) {
    const key = label(row);
    if (!lines.has(key)) lines.set(key, []);
    lines.get(key).push([Number(row[x]), Number(row[y]), row[y]]);
  }
  const names = [...lines.keys()];
  const colour = colours(names.map((n) => n.split(", ").pop()));
  if (answer.timeline_until_ms !== null) {
    // The scenario's [charts] timeline_until crops the chart where its story ends, as timeline.png does.
    for (const [key, line] of lines) lines.set(key, line.filter(([t]) => t <= answer.timeline_until_ms));
  }
  const points = [...lines.values()].flat();
  const [width, height, left, bottom] = [760, 280, 56, 28];
  const maxX = Math.max(...points.map((p) => p[0]), 1);
  const maxY = Math.max(...points.map((p) => p[1]), 1e-9);
  const px = (v) => left + (v / maxX) * (width - left - 8);
  const py = (v) => height - bottom - (v / maxY) * (height - bottom - 8);
  const svg = el("svg:svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `${series} per bucket over time, one line per point` });
  svg.append(el("svg:line", { x1: left, y1: py(0), x2: width - 8, y2: py(0), stroke: "#999" }),
    el("svg:text", { x: left - 6, y: py(maxY) + 4, "text-anchor": "end" }, String(Number(maxY.toPrecision(3)))),
    el("svg:text", { x: left - 6, y: py(0) + 4, "text-anchor": "end" }, "0"),
    el("svg:text", { x: width - 8, y: height - 8, "text-anchor": "end" }, `${(maxX / 1000).toPrecision(3)} s`));
  names.forEach((name, i) => {
    const d = lines.get(name).map(([t, v], j) => `${j ? "L" : "M"}${px(t).toFixed(1)},${py(v).toFixed(1)}`).join("");
    svg.append(el("svg:path", { d, fill: "none", stroke: colour[i], "stroke-width": 1.5 }));
  });
  const cursor = el("svg:line", { y1: 8, y2: height - bottom, stroke: "#444", visibility: "hidden" });
  const readout = el("div", { class: "small readout" }, "hover the chart for the values of a bucket");
  svg.append(cursor);
  svg.addEventListener("mousemove", (event) => {
    const box = svg.getBoundingClientRect();
    const t = ((event.clientX - box.left) * (width / box.width) - left) / (width - left - 8) * maxX;
    const cells = names.map((name) => {
      const line = lines.get(name);
      return line.reduce((best, p) => (Math.abs(p[0] - t) < Math.abs(best[0] - t) ? p : best), line[0]);
    });
    cursor.setAttribute("x1", px(cells[0][0])); cursor.setAttribute("x2", px(cells[0][0]));
    cursor.setAttribute("visibility", "visible");
    readout.textContent = `t = ${cells[0][0]} ms: ` + names.map((n, i) => `${n} ${cells[i][2]}`).join(" · ");
  });
  const legend = el("ul", { class: "legend" }, ...names.map((name, i) =>
    el("li", {}, el("span", { class: "swatch", style: `background:${colour[i]}` }), name)));
  const figure = el("figure", {}, svg, legend, readout);
  // The replay moves this cursor with its clock.
  figure.moveCursor = (t) => {
    cursor.setAttribute("x1", px(Math.min(t, maxX))); cursor.setAttribute("x2", px(Math.min(t, maxX)));
    cursor.setAttribute("visibility", "visible");
  };
  return figure;
}

async function show() {
  const { path, set } = route();
  try {
    if (path.startsWith("/s/")) await bench(decodeURIComponent(path.slice(3)), set);
    else if (path.startsWith("/l/")) await lessonPage(decodeURIComponent(path.slice(3)));
    else await home();
  } catch (error) {
    view.replaceChildren(el("p", { class: "error", role: "alert" }, error.message));
  }
}

fetch("/colours.json").then((r) => r.json()).then((table) => { palette = table; }).finally(show);
window.addEventListener("hashchange", show);

// The run as dots: each dot one client (or request), replayed from the attempts the engine recorded for one
// replicate (POST /api/replay). A dot travels to the server when an attempt leaves, waits there until the
// recorded end, and comes home coloured by how it ended; between attempts it waits at home, backing off.
const OUTCOME = { served: "#2ca02c", rejected: "#d62728", "timed out": "#9467bd", "gave up": "#7f7f7f",
  backing: "#ff7f0e", flying: "#1f77b4", idle: "#c7c7c7" };
function kindOf(outcome) {
  if (outcome === "success") return "served";
  if (outcome === "timeout") return "timed out";
  return "rejected";
}

function replayPanel(answer, chart) {
  const label = labels(answer.summary, answer.swept);
  const pick = el("select", { id: "replay-point", "aria-label": "point to replay" },
    ...answer.summary.rows.map((row, i) => el("option", { value: i }, label(row))));
  const go = el("button", { type: "button", id: "replay" }, "Replay as dots");
  const stage = el("div", { id: "stage" });
  go.addEventListener("click", async () => {
    go.disabled = true;
    try {
      const recorded = await api("/api/replay", { scenario: answer.scenario, set: answer.set, point: Number(pick.value), replicate: 0 });
      stage.replaceChildren(player(recorded, chart));
    } catch (error) {
      stage.replaceChildren(el("p", { class: "error", role: "alert" }, error.message));
    } finally {
      go.disabled = false;
    }
  });
  const legend = el("p", { class: "small" }, "Dots: ", ...Object.entries(OUTCOME).map(([word, colour]) =>
    el("span", { class: "outcome", style: `color:${colour}` }, `● ${word} `)));
  const server = el("p", { class: "small" }, "The server's queue is on the left (in order of arrival; a black hole " +
    "holds attempts there too) and its workers on the right, a square each; an outlined square is a worker still " +
    "serving an attempt whose client has stopped waiting.");
  return el("section", {}, el("h2", {}, "Watch one run"), el("div", { class: "row" }, pick, go), legend, server, stage);
}

function player(recorded, chart) {
  const [width, height] = [760, 360];
  const canvas = el("canvas", { width, height, role: "img",
    "aria-label": `${recorded.shown} ${recorded.owner}s replayed as dots travelling to a server, waiting in its queue, served by its workers, and back` });
  const dots = [];
  for (const [dot, start, end, attempt, outcome, , arrived, serviceStart, serviceEnd] of recorded.attempts) {
    (dots[dot] ||= []).push({ start, end, attempt, kind: kindOf(outcome), timedOut: outcome === "timeout",
      arrived, serviceStart, serviceEnd });
  }
  const slots = workerSlots(dots, recorded.workers);
  const columns = Math.ceil(Math.sqrt(dots.length * 1.4));
  const cell = Math.min(340 / columns, 320 / Math.ceil(dots.length / columns));
  const size = Math.max(cell - 1, 2);
  const home = (i) => [12 + (i % columns) * cell, 20 + Math.floor(i / columns) * cell];
  // The server: a queue lane on its left, a grid of worker slots on its right.
  const [queueBox, workerBox] = [[420, 40, 130, 300], [570, 40, 180, 300]];
  const slotColumns = Math.ceil(Math.sqrt(slots.count * workerBox[2] / workerBox[3]));
  const slotSize = Math.min(workerBox[2] / slotColumns, workerBox[3] / Math.ceil(slots.count / slotColumns), 24);
  const slotAt = (k) => [workerBox[0] + (k % slotColumns) * slotSize + 2, workerBox[1] + Math.floor(k / slotColumns) * slotSize + 2];
  const queueSize = Math.max(Math.min(size, 8), 3);
  const queueColumns = Math.floor((queueBox[2] - 4) / queueSize);
  const queueAt = (rank) => [queueBox[0] + 2 + (rank % queueColumns) * queueSize,
    queueBox[1] + 2 + Math.min(Math.floor(rank / queueColumns) * queueSize, queueBox[3] - queueSize - 2)];
  const entry = [queueBox[0], queueBox[1] + queueBox[3] / 2];
  // Models whose trace has no server side (a channel, a queue of messages): one box, dots spread inside it.
  const atServer = recorded.attempts.some((attempt) => attempt[6] !== null);
  const inside = (i) => [queueBox[0] + 10 + ((i * 97) % 300), queueBox[1] + 10 + ((i * 61) % 280)];
  const clock = el("input", { type: "range", min: 0, max: recorded.horizon_ms, step: "any", value: 0, "aria-label": "time (scrub)" });
  const speed = el("select", { "aria-label": "speed" }, ...[0.05, 0.1, 0.25, 0.5, 1, 2].map((x) =>
    el("option", { value: x }, `${x}× real time`)));
  speed.value = "0.1";
  const play = el("button", { type: "button" }, "Pause");
  const info = el("p", { class: "small", id: "replay-info" });
  let t = 0, playing = true, last = null, frames = 0, since = performance.now();
  play.addEventListener("click", () => { playing = !playing; play.textContent = playing ? "Pause" : "Play"; });
  clock.addEventListener("input", () => { t = Number(clock.value); });
  const context = canvas.getContext("2d");
  const lerp = ([ax, ay], [bx, by], f) => [ax + (bx - ax) * f, ay + (by - ay) * f];
  const progress = (from, to) => Math.min(Math.max((t - from) / Math.max(to - from, 1e-9), 0), 1);
  // Where dot i is at time t: at home (coloured by how its last attempt ended), on its way, in the queue (placed
  // after the frame's other queued dots, by arrival), or in a worker's slot.
  function place(i, attempts) {
    let lo = 0, hi = attempts.length - 1, at = -1;
    while (lo <= hi) { const mid = (lo + hi) >> 1; if (attempts[mid].start <= t) { at = mid; lo = mid + 1; } else hi = mid - 1; }
    if (at < 0) return { xy: home(i), colour: OUTCOME.idle };
    const a = attempts[at];
    if (t >= a.end) {
      if (a.kind === "served") return { xy: home(i), colour: OUTCOME.served };
      // How it failed shows for a moment (200 ms of the run, at most half the wait before the next attempt).
      const next = attempts[at + 1];
      if (t - a.end < Math.min(200, next ? (next.start - a.end) / 2 : 200)) return { xy: home(i), colour: OUTCOME[a.kind] };
      return { xy: home(i), colour: next ? OUTCOME.backing : OUTCOME["gave up"] };
    }
    if (a.arrived === null) return { xy: lerp(home(i), inside(i), progress(a.start, a.start + Math.min((a.end - a.start) / 2, 50))), colour: OUTCOME.flying };
    if (t < a.arrived) return { xy: lerp(home(i), entry, progress(a.start, a.arrived)), colour: OUTCOME.flying };
    if (a.serviceStart !== null && t >= a.serviceStart) {
      if (t < a.serviceEnd) return { xy: slotAt(a.slot), colour: OUTCOME.flying, serving: true };
      return { xy: lerp(slotAt(a.slot), home(i), progress(a.serviceEnd, a.end)), colour: OUTCOME.flying };
    }
    // Refused on arrival: straight back. Otherwise it waits (in the queue, or held by a black hole) until served
    // or until its client stops waiting.
    if (a.serviceStart === null && !a.timedOut) return { xy: lerp(entry, home(i), progress(a.arrived, a.end)), colour: OUTCOME.flying };
    return { queued: a.arrived, colour: OUTCOME.flying };
  }
  function frame(now) {
    if (!canvas.isConnected) return;
    if (playing && last !== null) t = Math.min(t + (now - last) * Number(speed.value), recorded.horizon_ms);
    last = now;
    clock.value = t;
    context.clearRect(0, 0, width, height);
    context.strokeStyle = context.fillStyle = "#5b6475";
    if (!atServer) context.strokeRect(queueBox[0], queueBox[1], workerBox[0] + workerBox[2] - queueBox[0], queueBox[3]);
    else { context.strokeRect(...queueBox); context.strokeRect(...workerBox); }
    for (let k = 0; k < slots.count; k++) context.strokeRect(...slotAt(k), slotSize - 4, slotSize - 4);
    const placed = dots.map((attempts, i) => (attempts ? place(i, attempts) : null));
    const queued = placed.filter((p) => p && p.queued !== undefined).sort((a, b) => a.queued - b.queued);
    queued.forEach((p, rank) => { p.xy = queueAt(rank); });
    let busy = 0;
    for (const p of placed) {
      if (!p) continue;
      busy += p.serving ? 1 : 0;
      context.fillStyle = p.colour;
      const side = p.serving ? slotSize - 4 : p.queued !== undefined ? queueSize - 1 : size;
      context.fillRect(...p.xy, side, side);
    }
    // Work whose client has already stopped waiting, still served: an outlined slot.
    context.strokeStyle = OUTCOME["timed out"];
    let late = 0;
    for (const a of slots.late) {
      if (a.end <= t && t < a.serviceEnd) { context.strokeRect(...slotAt(a.slot), slotSize - 4, slotSize - 4); late++; }
    }
    context.fillStyle = "#5b6475";
    if (!atServer) context.fillText("server", queueBox[0], queueBox[1] - 6);
    const ofShown = recorded.shown < recorded.owners ? " (dots shown)" : "";
    if (atServer) context.fillText(`queue: ${queued.length}${ofShown}`, queueBox[0], queueBox[1] - 6);
    if (atServer) context.fillText(`workers: ${busy + late} busy of ${recorded.workers ?? "unlimited"}${late ? `, ${late} for clients gone` : ""}${ofShown}`, workerBox[0], workerBox[1] - 6);
    if (chart) chart.moveCursor(t);
    frames += 1;
    if (now - since > 1000) {
      canvas.dataset.fps = (frames * 1000 / (now - since)).toFixed(0);
      frames = 0; since = now;
    }
    info.textContent = `t = ${(t / 1000).toFixed(3)} s · ${recorded.shown} of ${recorded.owners} ${recorded.owner}s shown (${recorded.sampled}), replicate 0 · ${canvas.dataset.fps || "…"} frames/s`;
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);
  return el("div", {}, canvas, el("div", { class: "row" }, play, speed, clock), info);
}

// Gives every served attempt a worker slot, first free first, in the order services began: the slots a replay
// draws. As many as the server's workers, or as the most services shown at once when that is more (unlimited
// workers, or a sampled replay).
function workerSlots(dots, workers) {
  const services = dots.flat().filter((a) => a && a.serviceStart !== null).sort((x, y) => x.serviceStart - y.serviceStart);
  const freeFrom = [];
  for (const a of services) {
    let k = freeFrom.findIndex((free) => free <= a.serviceStart);
    if (k < 0) { k = freeFrom.length; freeFrom.push(0); }
    freeFrom[k] = a.serviceEnd;
    a.slot = k;
  }
  return { count: Math.max(Math.min(workers ?? 0, 400), freeFrom.length), late: services.filter((a) => a.serviceEnd > a.end) };
}

// Side by side: a study that sweeps one key over two to four values is drawn as panes A–D sharing their y-axes:
// each pane's leading series per bucket, its latency CDF, its key metrics, and its difference from A with the
// paired interval paired.csv holds (the panes share their random numbers, so the paired interval is the honest one).
function panes(answer) {
  const axis = answer.swept[0];
  const { columns, rows } = answer.summary;
  const at = columns.indexOf(axis);
  const values = rows.map((row) => row[at]);
  const colour = colours(values);
  const letters = ["A", "B", "C", "D"];
  const series = answer.series[0];
  const cell = (row, name) => row[columns.indexOf(name)];
  const timelineOf = (value) => answer.timeline.rows.filter((row) => row[answer.timeline.columns.indexOf(axis)] === value);
  const seriesAt = answer.timeline.columns.indexOf(series);
  const tAt = answer.timeline.columns.indexOf("bucket_start_ms");
  const maxY = Math.max(...answer.timeline.rows.map((row) => Number(row[seriesAt])), 1e-9);
  const until = answer.timeline_until_ms ?? Infinity; // cropped where the scenario's story ends, as the chart above
  const maxT = Math.max(...answer.timeline.rows.map((row) => Number(row[tAt])).filter((t) => t <= until), 1);
  const latency = answer.latency;
  const maxLatency = latency ? Math.max(...latency.rows.map((row) => Number(row[latency.columns.indexOf("latency_ms")])), 1e-9) : 0;
  const grid = el("div", { class: "panes" });
  // Hovering a pane's chart reads every pane's chart of that kind at the same x (the axes are shared).
  const sparks = [];
  // Timelines share their buckets: the pointer snaps to the nearest bucket of any pane, and a pane whose run had
  // ended by then says so. Latency CDFs each show their own nearest point.
  const nearest = (points, x) => points.reduce((best, p) => (Math.abs(p[0] - x) < Math.abs(best[0] - x) ? p : best));
  const hover = (kind, x) => {
    const shown = sparks.filter((s) => s.kind === kind && s.points.length);
    const t = kind === "timeline" ? nearest(shown.map((s) => nearest(s.points, x)), x)[0] : null;
    for (const spark of shown) {
      const near = kind === "timeline" ? spark.points.find((p) => p[0] === t) : nearest(spark.points, x);
      const px = ((near ? near[0] : t) / spark.maxX) * 300;
      spark.cursor.setAttribute("x1", px); spark.cursor.setAttribute("x2", px); spark.cursor.setAttribute("visibility", "visible");
      if (kind !== "timeline") spark.readout.textContent = `${near[3]} of answers within ${near[2]} ms`;
      else spark.readout.textContent = near ? `t = ${near[2]} ms: ${series} ${near[3]}` : `t = ${t} ms: no bucket, this run had ended`;
    }
  };
  values.forEach((value, i) => {
    const pane = el("section", { class: "pane", "aria-label": `pane ${letters[i]}: ${value}` },
      el("h3", {}, el("span", { style: `color:${colour[i]}` }, `${letters[i]}: ${value}`)));
    const [w, h] = [300, 120];
    // points: [x, y, x as its CSV cell, y as its CSV cell].
    const spark = (kind, points, maxX, maxV, label) => {
      const d = points.map(([x, v], j) => `${j ? "L" : "M"}${(x / maxX * w).toFixed(1)},${(h - v / maxV * (h - 4)).toFixed(1)}`).join("");
      const cursor = el("svg:line", { y1: 0, y2: h, stroke: "#444", visibility: "hidden" });
      const svg = el("svg:svg", { class: "chart", viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: "none", role: "img", "aria-label": label },
        el("svg:path", { d, fill: "none", stroke: colour[i], "stroke-width": 1.5 }),
        el("svg:line", { x1: 0, y1: h, x2: w, y2: h, stroke: "#999" }), cursor);
      const readout = el("div", { class: "small readout" });
      sparks.push({ kind, points, maxX, cursor, readout });
      svg.addEventListener("mousemove", (event) => {
        const box = svg.getBoundingClientRect();
        hover(kind, ((event.clientX - box.left) / box.width) * maxX);
      });
      return [svg, readout];
    };
    if (series) {
      const points = timelineOf(value).filter((row) => Number(row[tAt]) <= until)
        .map((row) => [Number(row[tAt]), Number(row[seriesAt]), row[tAt], row[seriesAt]]);
      pane.append(el("div", { class: "small" }, `${series} per bucket (shared axis, up to ${Number(maxY.toPrecision(3))})`),
        ...spark("timeline", points, maxT, maxY, `${series} over time for ${value}`));
    }
    if (latency) {
      const [v, l] = ["latency_ms", "fraction"].map((c) => latency.columns.indexOf(c));
      const key = latency.columns.indexOf(axis);
      const points = latency.rows.filter((row) => row[key] === value).map((row) => [Number(row[v]), Number(row[l]), row[v], row[l]]);
      pane.append(el("div", { class: "small" }, `latency CDF (shared axis, up to ${Number(maxLatency.toPrecision(3))} ms)`),
        ...spark("latency", points, maxLatency, 1, `latency CDF for ${value}`));
    }
    const list = el("dl", { class: "metrics" });
    for (const metric of answer.key_metrics) {
      list.append(el("dt", {}, metric), el("dd", {}, `${cell(rows[i], metric + "_mean")} ± ${cell(rows[i], metric + "_ci95")}`));
      if (i > 0 && answer.paired) {
        const p = answer.paired;
        const pair = p.rows.find((row) => row[p.columns.indexOf("a")] === values[0] && row[p.columns.indexOf("b")] === value);
        if (pair) {
          const diff = pair[p.columns.indexOf(metric + "_diff_mean")], half = pair[p.columns.indexOf(metric + "_paired_ci95")];
          list.append(el("dd", { class: "small" }, `A − ${letters[i]} = ${diff} ± ${half} (paired)`));
        }
      }
    }
    pane.append(list);
    grid.append(pane);
  });
  return el("section", {}, el("h2", {}, `Side by side: ${axis}`),
    el("p", { class: "small" }, "The panes share their random numbers: in each replicate every pane meets the same arrivals, " +
      "service times and faults, so a difference between panes is the policy's, and its paired interval is narrower than " +
      "comparing the panes' own intervals would suggest."), grid);
}

// Lessons (#/l/<name>): the lesson's Markdown with its live parts. Prose is rendered from a small subset (headings,
// paragraphs, lists, `code`, **bold**, *emphasis*, [[word]] in the colour of the dots that word names), built as
// DOM nodes, never as HTML text.
const WORDS = { served: OUTCOME.served, rejected: OUTCOME.rejected, "timed out": OUTCOME["timed out"],
  "backing off": OUTCOME.backing, "given up": OUTCOME["gave up"] };
function inline(text) {
  const nodes = [];
  const pattern = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*]+\*|\[\[[^\]]+\]\])/g;
  let at = 0;
  for (const match of text.matchAll(pattern)) {
    nodes.push(text.slice(at, match.index));
    const token = match[0];
    if (token.startsWith("`")) nodes.push(el("code", {}, token.slice(1, -1)));
    else if (token.startsWith("**")) nodes.push(el("strong", {}, token.slice(2, -2)));
    else if (token.startsWith("[[")) {
      const word = token.slice(2, -2);
      nodes.push(el("span", { class: "outcome", style: `color:${WORDS[word] || "inherit"}` }, word));
    } else nodes.push(el("em", {}, token.slice(1, -1)));
    at = match.index + token.length;
  }
  nodes.push(text.slice(at));
  return nodes;
}

function prose(text) {
  const parts = [];
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split("\n").filter((line) => line.trim());
    if (!lines.length) continue;
    const heading = /^(#{1,3}) (.*)$/.exec(lines[0]);
    if (heading) parts.push(el(`h${heading[1].length}`, {}, ...inline(heading[2])));
    else if (lines.every((line) => line.startsWith("- "))) parts.push(el("ul", {}, ...lines.map((line) => el("li", {}, ...inline(line.slice(2))))));
    else parts.push(el("p", {}, ...inline(lines.join(" "))));
  }
  return parts;
}

async function lessonPage(name) {
  const lesson = await api(`/api/lessons/${encodeURIComponent(name)}`);
  const scenario = await api(`/api/scenarios/${encodeURIComponent(lesson.scenario)}`);
  const page = el("article", { class: "lesson" });
  const pieces = lesson.markdown.split(/^```(predict|lab)\n([\s\S]*?)^```$/m);
  let figureIndex = 0;
  let waitingFor = null;
  for (let i = 0; i < pieces.length; i += 3) {
    page.append(...prose(pieces[i]));
    if (i + 2 >= pieces.length) break;
    const [kind, body] = [pieces[i + 1], pieces[i + 2]];
    if (kind === "predict") {
      waitingFor = predict(body);
      page.append(waitingFor.node);
    } else {
      const figure = lesson.figures[figureIndex];
      page.append(livefigure(lesson, scenario, figure, figureIndex, waitingFor));
      figureIndex += 1;
      waitingFor = null;
    }
  }
  view.replaceChildren(page);
}

// A question the reader answers before the figure after it runs.
function predict(body) {
  const [question, ...choices] = body.trim().split("\n");
  let answered;
  const promise = new Promise((resolve) => { answered = resolve; });
  const said = el("p", { class: "small", "aria-live": "polite" });
  const buttons = choices.filter((c) => c.startsWith("- ")).map((choice) => {
    const button = el("button", { type: "button" }, choice.slice(2));
    button.addEventListener("click", () => {
      said.textContent = `You predicted: ${choice.slice(2)}. The figure below now runs; see whether it agrees.`;
      answered();
    });
    return button;
  });
  const skip = el("button", { type: "button", class: "quiet" }, "Just show me");
  skip.addEventListener("click", () => answered());
  return { node: el("aside", { class: "predict" }, el("p", {}, el("strong", {}, "Predict first: "), question), ...buttons, skip, said), promise };
}

function livefigure(lesson, scenario, figure, index, waitingFor) {
  const output = el("div", { class: "figure-output", "aria-live": "polite" });
  const inputs = [];
  const controls = el("div", { class: "figure-controls" });
  let timer;
  const changed = (dragging) => { clearTimeout(timer); timer = setTimeout(run, dragging === true ? 150 : 0); };
  for (const key of figure.controls) {
    const control = scenario.controls.find((c) => c.key === key);
    const given = [...lesson.set, ...figure.set].map((line) => line.split("=")).find(([k]) => k === key || k === control.name);
    const start = given ? given.slice(1).join("=") : original(control);
    const { row, input } = controlRow({ ...control, key: `${control.key}#${index}` }, start, changed);
    inputs.push({ control, input, start });
    controls.append(row);
  }
  async function run() {
    const set = [...lesson.set, ...figure.set];
    for (const { control, input, start } of inputs) if (input.value.trim() !== start) set.push(`${control.key}=${input.value.trim()}`);
    const answer = await execute(lesson.scenario, set, output, `lesson-${index}`, figure.claims);
    if (!answer) return;
    const parts = [];
    for (const view of figure.show) {
      if (view === "timeline" && answer.series[0]) parts.push(timeline(answer, answer.series[0]));
      if (view === "panes" && answer.swept.length === 1) parts.push(panes(answer));
      if (view === "summary") parts.push(el("div", { class: "scroll" }, summary(answer)));
      if (view === "dots") parts.push(replayPanel(answer, null));
    }
    parts.push(claimList(answer.claims));
    output.replaceChildren(...parts);
  }
  const figureNode = el("figure", { class: "live" }, controls, output);
  if (waitingFor) {
    output.append(el("p", { class: "small" }, "Answer the question above, and this figure runs."));
    waitingFor.promise.then(run);
  } else {
    run();
  }
  return figureNode;
}

function claimList(claims) {
  return el("ul", { class: "claims" }, ...claims.map((claim) => {
    if (claim.holds === true) return el("li", { class: "holds" }, `✓ holds with these settings: ${claim.claim} (${claim.left} vs ${claim.right})`);
    if (claim.holds === false) return el("li", { class: "broken" }, `✗ no longer holds with your settings: ${claim.claim} (${claim.left} vs ${claim.right})`);
    return el("li", { class: "unknown" }, `? cannot be checked with these settings: ${claim.claim} (${claim.why})`);
  }));
}
