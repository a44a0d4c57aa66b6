#!/usr/bin/env node
// Draw retry sleeps from the AWS SDK for JavaScript v3's retry strategy (@smithy/util-retry), through the
// library's own StandardRetryStrategy.
//
//   node sample_smithy.js --modules DIR/node_modules --cases cases.csv --seed 1 --samples 20000 --out smithy.csv
//   node sample_smithy.js --list      the cases this file can sample
//
// Writes CSV `case,retry,sleep_ms`, `--samples` rows per retry index; `retry` is retrylab's n (attempts failed so
// far; the sleep before the first retry has n = 1). For each simulated request a fresh `new
// StandardRetryStrategy()` (no arguments: the library's default max attempts and base delay, as the SDK's
// resolveRetryConfig builds it) is asked for retry tokens with the given error type until it refuses; the number
// of retries it grants is checked against cases.csv.
//
// Seeding: the strategy draws its jitter from Math.random, which cannot be seeded, so Math.random is REPLACED
// below by a seeded generator written here (xorshift128, seeded through a splitmix-style hash of the seed and the
// case name). The strategy also sleeps by itself inside refreshRetryTokenForRetry (`await new Promise(r =>
// setTimeout(r, retryDelay))`); setTimeout is replaced while sampling by a function that records the delay and
// resolves at once, and the recorded value is the sample.
"use strict";

const fs = require("fs");
const path = require("path");

// case -> the errorType the SDK's retry middleware reports for that kind of error
const CASES = {
  "aws-sdk-js-v3": "TRANSIENT",
  "aws-sdk-js-v3-throttling": "THROTTLING",
};

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || i + 1 >= argv.length) throw new Error(`bad argument: ${argv[i]}`);
    args[argv[i].slice(2)] = argv[i + 1];
  }
  for (const key of ["modules", "cases", "seed", "samples", "out"]) {
    if (args[key] === undefined) throw new Error(`--${key} is required`);
  }
  return args;
}

function readCases(file) {
  const [header, ...rows] = fs.readFileSync(file, "utf8").trim().split("\n");
  const cols = header.split(",");
  const table = {};
  for (const row of rows) {
    // retrylab_args is the last column and holds no comma
    const cells = row.split(",");
    const rec = Object.fromEntries(cols.map((c, i) => [c, cells[i]]));
    table[rec.case] = Number(rec.retries);
  }
  return table;
}

// 32-bit mixing of a string into a seed word (FNV-1a style), then a splitmix-like scrambler to fill the state.
function hashString(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function seededRandom(seedText) {
  let z = hashString(seedText);
  const next32 = () => {
    z = (z + 0x9e3779b9) >>> 0;
    let x = z;
    x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
    x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
    return (x ^ (x >>> 16)) >>> 0;
  };
  let s0 = next32(), s1 = next32(), s2 = next32(), s3 = next32();
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1;
  const xorshift128 = () => {
    let t = s3;
    const s = s0;
    s3 = s2;
    s2 = s1;
    s1 = s;
    t ^= t << 11;
    t ^= t >>> 8;
    s0 = (t ^ s ^ (s >>> 19)) >>> 0;
    return s0;
  };
  // 53 random bits in [0, 1), like Math.random's resolution
  return () => ((xorshift128() >>> 5) * 67108864 + (xorshift128() >>> 6)) / 9007199254740992;
}

async function sampleCase(StandardRetryStrategy, caseName, errorType, retries, seed, samples) {
  Math.random = seededRandom(`${caseName}/${seed}`);
  const columns = Array.from({ length: retries }, () => []);
  let recorded = null;
  const realSetTimeout = global.setTimeout;
  global.setTimeout = (fn, ms) => {
    recorded = ms;
    fn();
    return 0;
  };
  try {
    for (let i = 0; i < samples; i++) {
      const strategy = new StandardRetryStrategy();
      let token = await strategy.acquireInitialRetryToken("");
      const sleeps = [];
      for (let n = 1; n <= retries + 1; n++) {
        recorded = null;
        try {
          token = await strategy.refreshRetryTokenForRetry(token, { errorType });
        } catch (refused) {
          break;
        }
        if (recorded === null) throw new Error(`${caseName}: a retry was granted without a sleep`);
        sleeps.push(recorded);
      }
      if (sleeps.length !== retries) {
        throw new Error(`${caseName}: the library allows ${sleeps.length} retries, cases.csv says ${retries}`);
      }
      sleeps.forEach((ms, k) => columns[k].push(ms));
    }
  } finally {
    global.setTimeout = realSetTimeout;
  }
  return columns;
}

async function main() {
  if (process.argv.length === 3 && process.argv[2] === "--list") {
    console.log(Object.keys(CASES).join("\n"));
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  const { StandardRetryStrategy } = require(path.resolve(args.modules, "@smithy/util-retry"));
  const table = readCases(args.cases);
  const wanted = args.only ? args.only.split(",").filter(Boolean) : Object.keys(CASES).filter((c) => c in table);
  const lines = ["case,retry,sleep_ms"];
  for (const caseName of wanted) {
    if (!(caseName in CASES) || !(caseName in table)) throw new Error(`${caseName}: not a JS case in ${args.cases}`);
    const columns = await sampleCase(
      StandardRetryStrategy,
      caseName,
      CASES[caseName],
      table[caseName],
      Number(args.seed),
      Number(args.samples),
    );
    columns.forEach((column, k) => {
      for (const ms of column) lines.push(`${caseName},${k + 1},${ms}`);
    });
  }
  fs.writeFileSync(args.out, lines.join("\n") + "\n");
}

main().catch((e) => {
  console.error(`sample_smithy: ${e.message}`);
  process.exit(1);
});
