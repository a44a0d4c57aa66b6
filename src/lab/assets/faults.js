// The `faults` control as a timeline: the windows a server or queue scenario takes as text
// ("10s..12s black-hole, 30s..35s slowdown x3") drawn on the run's time axis. Drag on the empty track to place an
// outage of the kind picked, drag a window to move it; a focused window moves with the arrow keys and goes with
// Delete. The text box stays the value the run gets: the timeline writes it, and redraws whenever it changes.
// Uses `el`, `nanos` and `duration` from lab.js.
"use strict";

const FAULT_COLOURS = { "black-hole": "#9467bd", "fail-fast": "#d62728", reset: "#8c564b", slowdown: "#ff7f0e" };

// "10s..12s black-hole, …" to [{ start, end, kind }] in milliseconds; null when the text is not in that form.
function parseFaults(text) {
  const windows = [];
  for (const item of text.split(",").map((part) => part.trim()).filter(Boolean)) {
    const match = /^(\S+)\.\.(\S+)\s+(.+)$/.exec(item);
    if (!match) return null;
    const [start, end] = [nanos(match[1]) / 1e6, nanos(match[2]) / 1e6];
    if (!(end > start)) return null;
    windows.push({ start, end, kind: match[3].trim() });
  }
  return windows;
}

function writeFaults(windows) {
  return [...windows].sort((a, b) => a.start - b.start)
    .map((w) => `${duration(w.start * 1e6)}..${duration(w.end * 1e6)} ${w.kind}`).join(", ");
}

// A step of 1, 2 or 5 × 10^k ms near a two-hundredth of the axis: where windows snap.
function snapStep(horizonMs) {
  const rough = horizonMs / 200;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough);
}

function faultsTimeline(input, changed, horizonMs) {
  const [width, height, top, track] = [320, 58, 6, 28];
  const svg = el("svg:svg", { class: "chart faults", viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": "fault windows on the run's time axis: drag on the track to place one" });
  const kind = el("select", { "aria-label": "kind of the next window" },
    ...["black-hole", "fail-fast", "reset", "slowdown x3"].map((k) => el("option", { value: k }, k)));
  const add = el("button", { type: "button" }, "Add a window");
  const clear = el("button", { type: "button", class: "quiet" }, "Clear");
  let horizon = horizonMs;
  let windows = parseFaults(input.value) || [];
  let drag = null;
  const x = (t) => (t / horizon) * width;
  const time = (event) => {
    const box = svg.getBoundingClientRect();
    return Math.max(0, Math.min(horizon, ((event.clientX - box.left) / box.width) * horizon));
  };
  const snap = (t) => Math.round(t / snapStep(horizon)) * snapStep(horizon);
  const commit = () => { input.value = writeFaults(windows); changed(); };
  // Keeps window `i` inside the axis and clear of its neighbours, at its length.
  const clamp = (i) => {
    const w = windows[i], length = w.end - w.start;
    const before = Math.max(0, ...windows.filter((o, j) => j !== i && o.end <= w.start + length / 2).map((o) => o.end));
    const after = Math.min(horizon, ...windows.filter((o, j) => j !== i && o.start >= w.start + length / 2).map((o) => o.start));
    w.start = Math.max(before, Math.min(w.start, after - length));
    w.end = w.start + length;
  };
  function draw() {
    const last = Math.max(0, ...windows.map((w) => w.end));
    if (last > horizon) horizon = last * 1.1;
    svg.replaceChildren(el("svg:rect", { x: 0, y: top, width, height: track, fill: "#f3f5f8", stroke: "#d8dce4" }));
    for (const t of [0, horizon / 2, horizon]) {
      svg.append(el("svg:text", { x: Math.min(Math.max(x(t), 0), width), y: height - 4,
        "text-anchor": t === 0 ? "start" : t === horizon ? "end" : "middle" }, duration(t * 1e6)));
    }
    windows.forEach((w, i) => {
      const colour = FAULT_COLOURS[w.kind.split(" ")[0]] || "#7f7f7f";
      const label = `${w.kind} from ${duration(w.start * 1e6)} to ${duration(w.end * 1e6)}`;
      const rect = el("svg:rect", { x: x(w.start), y: top, width: Math.max(x(w.end) - x(w.start), 2), height: track,
        fill: colour, "fill-opacity": 0.55, stroke: colour, tabindex: 0, role: "button", class: "fault",
        "aria-label": `${label}: arrow keys move it, Delete removes it` });
      rect.append(el("svg:title", {}, label));
      rect.addEventListener("pointerdown", (event) => {
        event.stopPropagation();
        svg.setPointerCapture(event.pointerId);
        drag = { index: i, from: time(event), start: w.start };
      });
      rect.addEventListener("keydown", (event) => {
        const step = snapStep(horizon) * 5;
        if (event.key === "Delete" || event.key === "Backspace") windows.splice(i, 1);
        else if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
          const length = w.end - w.start;
          w.start = Math.max(0, w.start + (event.key === "ArrowLeft" ? -step : step));
          w.end = w.start + length;
          clamp(i);
        } else return;
        event.preventDefault();
        commit();
        draw();
        svg.querySelectorAll("rect.fault")[Math.min(i, windows.length - 1)]?.focus();
      });
      svg.append(rect);
    });
  }
  svg.addEventListener("pointerdown", (event) => {
    const t = snap(time(event));
    windows.push({ start: t, end: t, kind: kind.value });
    svg.setPointerCapture(event.pointerId);
    drag = { index: windows.length - 1, anchor: t };
  });
  svg.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const w = windows[drag.index], t = snap(time(event));
    if (drag.anchor !== undefined) [w.start, w.end] = [Math.min(drag.anchor, t), Math.max(drag.anchor, t)];
    else {
      const length = w.end - w.start;
      w.start = snap(Math.max(0, drag.start + time(event) - drag.from));
      w.end = w.start + length;
      clamp(drag.index);
    }
    draw();
  });
  svg.addEventListener("pointerup", () => {
    if (!drag) return;
    const w = windows[drag.index];
    if (drag.anchor !== undefined) {
      // A click without a drag places a window of a twentieth of the axis; a new window replaces any it overlaps.
      if (w.end - w.start < snapStep(horizon)) w.end = Math.min(horizon, w.start + snap(horizon / 20));
      windows = windows.filter((o) => o === w || o.end <= w.start || o.start >= w.end);
    }
    drag = null;
    commit();
    draw();
  });
  add.addEventListener("click", () => {
    const start = snap(Math.max(0, ...windows.map((w) => w.end), horizon / 4));
    if (start < horizon) windows.push({ start, end: Math.min(horizon, start + snap(horizon / 20)), kind: kind.value });
    commit();
    draw();
  });
  clear.addEventListener("click", () => { windows = []; commit(); draw(); });
  input.addEventListener("change", () => { windows = parseFaults(input.value) || windows; draw(); });
  draw();
  const node = el("div", { class: "faults-timeline" }, svg, el("div", { class: "row" }, kind, add, clear));
  // The bench gives the run's length once a run has answered.
  node.setHorizon = (ms) => { if (ms > 0 && !drag) { horizon = ms; draw(); } };
  return node;
}
