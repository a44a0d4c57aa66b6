// The lab's page in headless Chromium (issue 31), run by scripts/lab-browser-check. Each check prints a line; the
// first miss stops the run with a message that says what was expected and what the page showed. Timings are
// measured and printed, never asserted: the machine is shared and its speed is not the page's.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const RETRYLAB = resolve(process.env.RETRYLAB || "./target/release/retrylab");
const SCREENSHOTS = resolve(process.env.LAB_SCREENSHOTS || "target/lab-screenshots");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
// Bounds on waiting, so a broken page fails instead of hanging CI; generous, as they are not measurements.
const WAIT_MS = 90_000;
const HERD = "#/s/thundering-herd?set=replicates%3D3";
// One client count and one strategy: the aws-jitter-2015 study cut to a single point, a lesson-sized run.
const AWS = "#/s/aws-jitter-2015?set=clients%3D50&set=strategy%3Dfull-jitter";
const WORKERS = '[id="control-model.workers"]';
// The metastable study cut to one point of 20 s, with no outage of its own: the faults timeline places one.
const METASTABLE = "#/s/metastable?" + ["replicates=100", "rate=900", "outage_duration=0s", "limiter=none", "workload.duration=20s"]
  .map((line) => `set=${encodeURIComponent(line)}`).join("&");
const FAULTS = '[id="control-model.faults"]'; // the id holds a dot, which a #id selector would read as a class

class Miss extends Error {}
const fail = (message) => { throw new Miss(message); };
const passed = [];
const began = performance.now();
// Each check's line says when it finished, so a slow step shows where the run's time went.
function ok(what) { passed.push(what); console.log(`ok ${passed.length} - ${what} [${((performance.now() - began) / 1000).toFixed(1)} s]`); }

// --- the server ---------------------------------------------------------------------------------------------

// `serve --port 0` picks a free port and prints its address first, so parallel runs never collide.
async function startServer() {
  const server = spawn(RETRYLAB, ["serve", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  server.log = [];
  server.stderr.on("data", (chunk) => server.log.push(chunk.toString()));
  const exited = new Promise((done) => server.on("exit", (code, signal) => {
    server.log.push(`[serve exited with ${code ?? "signal " + signal}]\n`);
    done({ code, signal });
  }));
  server.exited = exited;
  const lines = createInterface({ input: server.stdout });
  const first = await Promise.race([
    new Promise((done) => lines.once("line", done)),
    exited.then(({ code }) => fail(`${RETRYLAB} serve exited with ${code} before printing its address:\n${server.log.join("")}`)),
    sleep(WAIT_MS).then(() => fail(`${RETRYLAB} serve printed nothing in ${WAIT_MS / 1000} s`)),
  ]);
  lines.on("line", (line) => server.log.push(line + "\n")); // keep draining stdout so the server never blocks
  const match = /^retrylab lab: (http:\/\/127\.0\.0\.1:\d+\/) /.exec(first);
  if (!match) fail(`serve's first line should be "retrylab lab: http://127.0.0.1:PORT/ (...)", got: ${first}`);
  server.url = match[1];
  return server;
}

// unref: a bound that was never reached must not keep node alive for its remaining time after the checks end.
const sleep = (ms) => new Promise((done) => setTimeout(done, ms).unref());

// --- the page -----------------------------------------------------------------------------------------------

// Every console error and uncaught exception of every page, checked at the end: a warning in the console is a
// bug a user never reports.
const errors = [];
const notes = [];
// Console errors of the page that are known and waiting for a fix in src/lab: each is printed as a note on every
// run instead of failing the check. Empty: add an entry only with an issue that tracks the fix.
const KNOWN = [];
async function newPage(context) {
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const url = message.location().url; // a "Failed to load resource" line names its request only here
    const known = KNOWN.find((k) => k.matches(message.text(), url));
    if (known) { if (!notes.includes(known.note)) notes.push(known.note); return; }
    errors.push(`console error on ${page.url()}: ${message.text()}${url ? ` (${url})` : ""}`);
  });
  page.on("pageerror", (error) => errors.push(`page error on ${page.url()}: ${error.message}`));
  return page;
}

// The bench's state once a run has finished: no run in flight, a summary table (or an error message) shown.
async function settled(page, what) {
  try {
    await page.waitForFunction(() => {
      const output = document.getElementById("output");
      return output && !output.hasAttribute("aria-busy") && output.querySelector("table, .error") &&
        !output.querySelector("table[data-check-stale]");
    }, null, { timeout: WAIT_MS, polling: 20 });
  } catch {
    fail(`${what}: no result within ${WAIT_MS / 1000} s; status "${await text(page, "#status")}", ` +
      `page: ${(await page.textContent("#view").catch(() => "")).slice(0, 300)}`);
  }
  const error = await page.$("#output .error");
  if (error) fail(`${what}: the page shows an error instead of a result: ${await error.textContent()}`);
  return await result(page, what);
}

async function text(page, selector) {
  return ((await page.textContent(selector).catch(() => null)) ?? "").trim();
}

// What a finished run shows: the status line's counts, the summary table as text, the CLI command.
async function result(page, what) {
  const status = await text(page, "#status");
  const counts = /^(\d+) points? × (\d+) replicates?, (\d+) ms$/.exec(status);
  if (!counts) fail(`${what}: #status should read "N points × R replicates, T ms", got "${status}"`);
  if (!(await page.$("#output svg.chart"))) fail(`${what}: no svg.chart in #output`);
  const table = await page.$eval("#output table", (table) => ({
    head: [...table.querySelectorAll("thead th")].map((th) => th.textContent),
    rows: [...table.querySelectorAll("tbody tr")].map((tr) => ({
      label: tr.querySelector("th")?.textContent ?? "",
      cells: [...tr.querySelectorAll("td")].map((td) => td.textContent),
    })),
  }));
  return { status, points: Number(counts[1]), replicates: Number(counts[2]), elapsedMs: Number(counts[3]),
    table, command: await text(page, "#output code.command") };
}

// Mark the table shown now, so the wait below knows the next one from it even if the text is the same.
async function markStale(page) {
  await page.$eval("#output table", (table) => table.setAttribute("data-check-stale", ""));
}

// Changes a control as the page sees a user's edit (a new value, then `change`) and measures, in the page's own
// clock, the time from that event to the new summary table in the DOM: the issue's slider-to-chart time.
async function change(page, selector, value) {
  const elapsed = page.evaluate(([selector, value]) => new Promise((done) => {
    const output = document.getElementById("output");
    const before = output.querySelector("table");
    const input = document.querySelector(selector);
    const finished = () => !output.hasAttribute("aria-busy") &&
      (output.querySelector(".error") || (output.querySelector("table") && output.querySelector("table") !== before));
    let started;
    const watch = new MutationObserver(() => {
      if (finished()) { watch.disconnect(); done(performance.now() - started); }
    });
    watch.observe(output, { childList: true, subtree: true, attributes: true });
    started = performance.now();
    input.value = value;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }), [selector, value]);
  const ms = await Promise.race([elapsed, sleep(WAIT_MS).then(() => fail(`setting ${selector} to ${value}: no new result within ${WAIT_MS / 1000} s`))]);
  const shown = await settled(page, `after setting ${selector} to ${value}`);
  return { ms, ...shown };
}

// --- the CLI's side -----------------------------------------------------------------------------------------

// Splits a command line as a POSIX shell would for plain words and quotes ('…', "…" with \ escapes, \x).
function shellWords(line) {
  const words = [];
  let word = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (/\s/.test(c)) { if (word !== null) words.push(word); word = null; continue; }
    word ??= "";
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) fail(`unbalanced ' in the page's command: ${line}`);
      word += line.slice(i + 1, end); i = end;
    } else if (c === '"') {
      for (i++; i < line.length && line[i] !== '"'; i++) word += line[i] === "\\" && '"\\$`'.includes(line[i + 1]) ? line[++i] : line[i];
      if (i >= line.length) fail(`unbalanced " in the page's command: ${line}`);
    } else if (c === "\\") {
      word += line[++i] ?? "";
    } else word += c;
  }
  if (word !== null) words.push(word);
  return words;
}

// RFC 4180 CSV: quoted cells may hold commas, quotes (doubled) and line breaks.
function csv(textIn) {
  const rows = [];
  let row = [], cell = "", quoted = false;
  for (let i = 0; i < textIn.length; i++) {
    const c = textIn[i];
    if (quoted) {
      if (c === '"' && textIn[i + 1] === '"') { cell += '"'; i++; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { row.push(cell); cell = ""; }
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && textIn[i + 1] === "\n") i++;
      row.push(cell); rows.push(row); row = []; cell = "";
    } else cell += c;
  }
  if (cell !== "" || row.length) { row.push(cell); rows.push(row); }
  return rows;
}

// Runs the page's command (or `retrylab` with `runArgs`) with this binary and compares every summary cell the page
// shows with summary.csv.
function compareWithCli(shown, runArgs) {
  const argv = runArgs ? ["retrylab", ...runArgs] : shellWords(shown.command);
  if (argv[0] !== "retrylab" || argv[1] !== "run") fail(`the page's command should start "retrylab run", got: ${shown.command}`);
  const out = mkdtempSync(join(tmpdir(), "lab-browser-check-"));
  try {
    const args = [...argv.slice(1), "--quiet", "--out", out];
    try {
      execFileSync(RETRYLAB, args, { stdio: ["ignore", "ignore", "pipe"] });
    } catch (error) {
      fail(`the page's command failed: ${RETRYLAB} ${args.join(" ")}\n${error.stderr}`);
    }
    const file = findFile(out, "summary.csv") || fail(`${RETRYLAB} ${args.join(" ")} wrote no summary.csv under ${out}`);
    const [columns, ...rows] = csv(readFileSync(file, "utf8"));
    const metrics = columns.filter((c) => c.endsWith("_mean")).map((c) => c.slice(0, -"_mean".length));
    const { head, rows: pageRows } = shown.table;
    if (JSON.stringify(head.slice(1)) !== JSON.stringify(metrics)) {
      fail(`the page's metric columns differ from summary.csv's *_mean columns:\n  page: ${head.slice(1).join(", ")}\n  csv:  ${metrics.join(", ")}`);
    }
    if (pageRows.length !== rows.length) fail(`the page shows ${pageRows.length} rows, summary.csv has ${rows.length}`);
    // The first header cell names the swept columns, joined by ", "; a study without a sweep shows "point".
    const swept = head[0] === "point" ? [] : head[0].split(", ");
    for (const name of swept) if (!columns.includes(name)) fail(`the page's row header "${head[0]}" names ${name}, not a summary.csv column`);
    let cells = 0;
    rows.forEach((row, r) => {
      const label = swept.length ? swept.map((name) => row[columns.indexOf(name)]).join(", ") : "all";
      if (pageRows[r].label !== label) fail(`row ${r + 1}: the page labels it "${pageRows[r].label}", summary.csv "${label}"`);
      metrics.forEach((metric, m) => {
        const expected = `${row[columns.indexOf(metric + "_mean")]} ± ${row[columns.indexOf(metric + "_ci95")]}`;
        const got = pageRows[r].cells[m];
        if (got !== expected) fail(`row "${label}", ${metric}: the page shows "${got}", summary.csv gives "${expected}"`);
        cells++;
      });
    });
    return { cells, rows: rows.length, command: `${RETRYLAB} ${args.join(" ")}` };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function findFile(dir, name) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isFile() && entry.name === name) return path;
    if (entry.isDirectory()) { const found = findFile(path, name); if (found) return found; }
  }
  return null;
}

// The committed scenarios by their `name =` line, as the lab lists them.
function committedScenarios() {
  return readdirSync("scenarios").filter((f) => f.endsWith(".toml")).map((f) => {
    const name = /^name\s*=\s*"([^"]+)"/m.exec(readFileSync(join("scenarios", f), "utf8"));
    return name ? name[1] : f.slice(0, -".toml".length);
  }).sort();
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const summarize = (xs) => `median ${median(xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;

// --- the checks ---------------------------------------------------------------------------------------------

async function main(server, browser) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  context.setDefaultTimeout(WAIT_MS);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const timings = [];

  // 1. The home page: one card per committed scenario, linking to its bench.
  const home = await newPage(context);
  await home.goto(server.url);
  await home.waitForSelector("ul.cards a");
  const links = await home.$$eval("ul.cards a", (as) => as.map((a) => a.getAttribute("href")));
  const lessons = links.filter((href) => href.startsWith("#/l/"));
  if (!lessons.includes("#/l/thundering-herd")) fail(`the home page lists no herd lesson: ${lessons.join(", ")}`);
  const listed = links.filter((href) => !href.startsWith("#/l/")).map((href) => (/^#\/s\/(.+)$/.exec(href) || fail(`a card links to "${href}", not #/s/<name>`))[1]).map(decodeURIComponent).sort();
  const committed = committedScenarios();
  const absent = committed.filter((name) => !listed.includes(name));
  const extra = listed.filter((name) => !committed.includes(name));
  if (absent.length || extra.length) fail(`the home page's cards differ from scenarios/*.toml: missing ${absent.join(", ") || "none"}; not committed ${extra.join(", ") || "none"}`);
  await home.screenshot({ path: join(SCREENSHOTS, "home.png"), fullPage: true });
  ok(`home page lists ${lessons.length} lessons and the ${committed.length} committed scenarios, each linking to #/s/<name>`);

  // 2. The herd bench: a first run, then model.workers changed five times (ending at 20), each timed.
  const bench = await newPage(context);
  await bench.goto(server.url + HERD);
  const first = await settled(bench, `opening ${HERD}`);
  if (first.points !== 4 || first.replicates !== 3) fail(`${HERD}: expected 4 points × 3 replicates, status reads "${first.status}"`);
  const herd = [];
  let last = first;
  for (const workers of ["20", "21", "20", "21", "20"]) {
    const shown = await change(bench, WORKERS, workers);
    if (shown.status === "running…") fail(`after workers=${workers}: status still reads "running…"`);
    if (!shown.command.includes(`--set model.workers=${workers}`)) fail(`after workers=${workers}: the command shown does not set it: ${shown.command}`);
    herd.push(shown);
    last = shown;
  }
  timings.push({ study: "thundering-herd, 1,000 clients, 4 points × 3 replicates, model.workers changed", runs: herd });
  ok(`herd bench: first result "${first.status}"; 5 changes of model.workers each gave a new table and chart`);

  // 3. The page's numbers are summary.csv's, character for character.
  const cli = compareWithCli(last);
  ok(`page's ${cli.cells} summary cells (${cli.rows} rows) equal summary.csv of: ${cli.command}`);

  // 4. The address after the change reopens the same study.
  const href = await bench.evaluate(() => location.href);
  const reopened = await newPage(context);
  await reopened.goto(href);
  const again = await settled(reopened, `reopening ${href}`);
  const workersShown = await reopened.inputValue(WORKERS);
  if (workersShown !== "20") fail(`reopening ${href}: ${WORKERS} shows "${workersShown}", expected 20`);
  if (JSON.stringify(again.table) !== JSON.stringify(last.table)) fail(`reopening ${href}: the summary table differs from the one before`);
  if (again.command !== last.command) fail(`reopening ${href}: the command differs:\n  before: ${last.command}\n  now:    ${again.command}`);
  await reopened.close();
  ok(`deep link ${href.slice(server.url.length)} reopens workers=20 and the same table`);

  // 5. Keyboard only: Tab to the workers field, replace its value, Tab away to commit it.
  const keys = await newPage(context);
  await keys.goto(server.url + HERD);
  await settled(keys, `opening ${HERD} for the keyboard check`);
  let presses = 0;
  while (!(await keys.evaluate(() => document.activeElement?.id === "control-model.workers"))) {
    if (++presses > 60) fail(`60 presses of Tab never focused ${WORKERS}; focus is on ${await keys.evaluate(() => document.activeElement?.outerHTML.slice(0, 120))}`);
    await keys.keyboard.press("Tab");
  }
  await markStale(keys);
  await keys.keyboard.press("ControlOrMeta+A");
  await keys.keyboard.type("15");
  await keys.keyboard.press("Tab");
  const typed = await settled(keys, "after typing 15 into model.workers");
  if (!typed.command.includes("--set model.workers=15")) fail(`after typing 15: the command shown does not set model.workers=15: ${typed.command}`);
  ok(`keyboard: ${presses} Tab presses reach model.workers; typing 15 and Tab ran "${typed.status}"`);

  // 5b. Hovering one pane's timeline reads every pane at the same bucket (their axes are shared).
  const paneChart = await keys.$(".pane svg.chart");
  if (!paneChart) fail("the herd bench shows no panes");
  await paneChart.hover({ position: { x: 60, y: 40 } });
  const readouts = await keys.$$eval(".pane", (panes) => panes.map((pane) => pane.querySelector(".readout")?.textContent ?? ""));
  const times = readouts.map((line) => (/^t = (\d+(?:\.\d+)?) ms: (?:calls \d+(?:\.\d+)?|no bucket, this run had ended)$/.exec(line) || [])[1]);
  if (readouts.length !== 4 || times.some((t) => t === undefined) || new Set(times).size !== 1) {
    fail(`hovering pane A's timeline should read all 4 panes at one bucket, got: ${JSON.stringify(readouts)}`);
  }
  ok(`hovering pane A's timeline reads the 4 panes at t = ${times[0]} ms`);

  // 6. Screenshots, and the bench's headings read back from its pixels by OCR.
  // The viewport, as a user sees it: a full-page shot would follow the page's width wherever a table pushes it.
  await keys.screenshot({ path: join(SCREENSHOTS, "bench.png") });
  const width = await keys.evaluate(() => document.documentElement.scrollWidth);
  if (width > 1400) notes.push(`the bench is ${width} px wide in a 1400 px viewport: the summary table widens the page instead of scrolling inside its .scroll box`);
  let ocr;
  try {
    // One thread: tesseract's OpenMP threads only contend on a shared 2-core machine, and take twice as long.
    ocr = execFileSync("tesseract", [join(SCREENSHOTS, "bench.png"), "stdout"],
      { stdio: ["ignore", "pipe", "ignore"], env: { ...process.env, OMP_THREAD_LIMIT: "1" } }).toString();
  } catch (error) {
    if (error.code === "ENOENT") fail("tesseract is missing: apt-get install --no-install-recommends tesseract-ocr");
    throw error;
  }
  const words = ocr.replace(/\s+/g, " ");
  // The herd's chart heading (its first series is calls) and the panes' heading, as rendered pixels.
  for (const wanted of ["calls per bucket", "Side by side"]) {
    if (!words.includes(wanted)) fail(`OCR of ${join(SCREENSHOTS, "bench.png")} does not read "${wanted}"; it read: ${words.slice(0, 400)}`);
  }
  ok(`screenshots home.png and bench.png in ${SCREENSHOTS}; OCR reads "calls per bucket" and "Side by side"`);

  // 2 again, for a second study: aws-jitter-2015 cut to one point, the seed changed five times. A page of its
  // own: on the herd's page the new address would change only the hash, and the herd's finished table would
  // still be there to be mistaken for the new result.
  await bench.close();
  const second = await newPage(context);
  await second.goto(server.url + AWS);
  const aws = await settled(second, `opening ${AWS}`);
  if (aws.points !== 1) fail(`${AWS}: expected 1 point, status reads "${aws.status}"`);
  const awsRuns = [];
  for (const seed of ["1", "2", "3", "4", "5"]) awsRuns.push(await change(second, '[id="control-seed"]', seed));
  timings.push({ study: `aws-jitter-2015, clients=50, strategy=full-jitter, ${aws.points} point × ${aws.replicates} replicates, seed changed`, runs: awsRuns });
  ok(`aws-jitter-2015 bench: 5 changes of seed each gave a new table and chart`);

  // 8. A lesson: predict, then the figure runs and its claims hold with the lesson's defaults; the dots replay
  // the herd and keep at least 30 frames a second with 1,000 dots (measured by the page, reported here).
  await second.close();
  const lesson = await newPage(context);
  await lesson.goto(server.url + "#/l/thundering-herd");
  await lesson.waitForSelector("aside.predict button", { timeout: WAIT_MS });
  await lesson.click("aside.predict button");
  // Every figure has run once its claims are listed (the first waits for the prediction, the others do not).
  await lesson.waitForFunction(() => document.querySelectorAll("figure.live").length > 0 &&
    document.querySelectorAll("figure.live ul.claims").length === document.querySelectorAll("figure.live").length,
    null, { timeout: WAIT_MS });
  const claims = await lesson.$$eval("figure.live ul.claims li", (items) => items.map((item) => [item.className, item.textContent]));
  if (claims.length < 3 || claims.some(([kind]) => kind !== "holds")) fail(`the herd lesson's claims with its defaults: ${JSON.stringify(claims)}`);
  await lesson.waitForSelector("#replay", { timeout: WAIT_MS });
  await lesson.selectOption("#replay-point", { label: "exponential" });
  await lesson.click("#replay");
  await lesson.waitForSelector("canvas", { timeout: WAIT_MS });
  await lesson.waitForFunction(() => document.querySelector("canvas")?.dataset.fps, null, { timeout: WAIT_MS });
  await sleep(3000);
  const fps = Number(await lesson.$eval("canvas", (canvas) => canvas.dataset.fps));
  const shown = await text(lesson, "#replay-info");
  if (!/1000 of 1000 clients/.test(shown)) fail(`the replay should show every one of the herd's 1,000 clients: ${shown}`);
  frameRate = fps;
  await lesson.screenshot({ path: join(SCREENSHOTS, "lesson.png"), fullPage: false });
  ok(`the herd lesson: prediction taken, ${claims.length} claims hold, 1,000 dots replayed at ${fps} frames/s`);

  // 9. Faults as a timeline: an outage dragged onto the track becomes `model.faults`, the run shows its progress,
  // and the page's numbers equal the CLI's, both by its command and by the scenario it offers to download.
  await lesson.close();
  const faults = await newPage(context);
  await faults.goto(server.url + METASTABLE);
  await settled(faults, `opening ${METASTABLE}`);
  await faults.evaluate(() => {
    window.statusSeen = [];
    new MutationObserver(() => window.statusSeen.push(document.getElementById("status").textContent))
      .observe(document.getElementById("status"), { childList: true, characterData: true, subtree: true });
  });
  const track = await faults.$(".faults-timeline svg");
  await track.scrollIntoViewIfNeeded();
  const box = await track.boundingBox();
  await markStale(faults);
  await faults.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.3);
  await faults.mouse.down();
  await faults.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.3, { steps: 5 });
  await faults.mouse.up();
  const placed = await settled(faults, "after dragging an outage onto the faults timeline");
  await faults.screenshot({ path: join(SCREENSHOTS, "faults.png") });
  const written = await faults.inputValue(FAULTS);
  if (!/^[67](\.\d+)?s\.\.[78](\.\d+)?s black-hole$/.test(written)) fail(`the dragged window should read about "6s..8s black-hole", the faults box holds "${written}"`);
  if (!placed.command.includes(`model.faults=`)) fail(`the command does not set model.faults: ${placed.command}`);
  const progress = (await faults.evaluate(() => window.statusSeen)).filter((line) => /^running… \d+ of 100 runs$/.test(line));
  const byCommand = compareWithCli(placed);
  const download = await faults.getAttribute("#download", "href");
  const folder = mkdtempSync(join(tmpdir(), "lab-download-"));
  try {
    const answer = await fetch(new URL(download, server.url));
    if (!answer.ok) fail(`GET ${download} answered ${answer.status}: ${await answer.text()}`);
    const file = join(folder, "downloaded.toml");
    writeFileSync(file, await answer.text());
    compareWithCli(placed, ["run", file]);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  ok(`faults timeline: a drag wrote "${written}"; ${progress.length} progress readings ("${progress.at(-1) ?? "none: the run was quicker than a poll"}"); ` +
    `the page's ${byCommand.cells} cells equal the CLI's by the command and by the downloaded scenario`);

  await context.close();
  if (errors.length) fail(`the pages logged ${errors.length} error(s):\n  ${errors.join("\n  ")}`);
  ok(`no console errors or page errors on any page${notes.length ? ` (besides the known issues noted below)` : ""}`);
  return timings;
}

let server, browser, timings, frameRate;
try {
  server = await startServer();
  browser = await chromium.launch({ executablePath: CHROMIUM });
  timings = await main(server, browser);
  await browser.close();
  browser = null;

  // 7. Ctrl-C stops the server cleanly.
  server.kill("SIGINT");
  const { code, signal } = await Promise.race([server.exited, sleep(WAIT_MS).then(() => fail(`serve did not exit within ${WAIT_MS / 1000} s of SIGINT`))]);
  if (code !== 0) fail(`serve exited with ${code ?? "signal " + signal} after SIGINT, expected 0:\n${server.log.join("")}`);
  server = null;
  ok("SIGINT stops serve with exit code 0");
} catch (error) {
  console.error(`\nlab-browser-check FAILED after ${passed.length} check(s) passed:\n${error instanceof Miss ? error.message : error.stack}`);
  if (server?.log.length) console.error(`\nserve's output:\n${server.log.join("").slice(-2000)}`);
  process.exitCode = 1;
} finally {
  await browser?.close().catch(() => {});
  if (server) server.kill("SIGKILL");
}

if (!process.exitCode) {
  console.log(`\nlab-browser-check: ${passed.length} checks passed`);
  console.log("slider-to-chart (change event to new summary table in the DOM):");
  console.log(`dots: 1,000 clients replayed at ${frameRate} frames/s (the page's own count over its last second)`);
  for (const { study, runs } of timings) {
    console.log(`  ${study}: ${summarize(runs.map((r) => r.ms))} over ${runs.length} changes; ` +
      `server's run ${summarize(runs.map((r) => r.elapsedMs))}`);
  }
}
for (const note of notes) console.log(`note (page issue, not failed): ${note}`);
