//! Command-line definitions (clap). Nothing here runs anything.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use retrylab::commands;
use retrylab::shard::ShardBy;

#[derive(Parser, Debug)]
#[command(
    name = "retrylab",
    version,
    about = "Simulate and compare retry strategies: backoff, jitter, thundering herds.",
    after_help = "Examples:\n  \
        retrylab run scenarios/aws-jitter-2015.toml\n  \
        retrylab run scenarios/aws-jitter-2015.toml --replicates 10 --set clients=50 --out /tmp/quick\n  \
        retrylab validate scenarios/*.toml\n  \
        retrylab show results/thundering-herd\n  \
        retrylab tune scenarios/tune-outage.toml\n  \
        retrylab strategies"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run scenario files and write CSV, charts and a manifest to their results folders.
    #[command(after_help = "Examples:\n  \
        retrylab run scenarios/aws-jitter-2015.toml\n  \
        retrylab run scenarios/aws-jitter-2015.toml --set 'strategy=[\"exponential\", \"full-jitter\"]' --replicates 20\n  \
        retrylab run a.toml b.toml --out /tmp/results   # writes /tmp/results/a and /tmp/results/b\n  \
        retrylab run scenarios/thundering-herd.toml --trace herd.json --trace-point 1   # open in ui.perfetto.dev\n  \
        retrylab run scenarios/aws-jitter-2015.toml --shard 2/8 --resume   # one of 8 array tasks; then `retrylab merge`\n  \
        retrylab run scenarios/aws-jitter-2015.toml --shard auto --resume  # inside a Slurm array job")]
    Run {
        /// Scenario files (TOML).
        #[arg(required = true, value_name = "SCENARIO")]
        scenarios: Vec<PathBuf>,
        /// Output folder [default: results/<scenario file stem>/].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Master seed, overriding the scenario's `seed`.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Replicates per sweep point, overriding the scenario's `replicates`.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        replicates: Option<u32>,
        /// Worker threads [default: all cores]. Results do not depend on it.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// Override any key of the scenario: KEY=VALUE, e.g. clients=50, client.base=10ms, 'sweep.clients=[10, 20]',
        /// charts.timeline_until=25s, layer.db.workers=4 (repeatable; applied in order).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Print nothing but errors, and no progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Also write every attempt of one replicate as a trace: Chrome trace JSON (open it in ui.perfetto.dev) or,
        /// with --trace-format otlp, OpenTelemetry's OTLP/JSON.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// With --trace: chrome (Trace Event JSON for Perfetto) or otlp (OTLP/JSON for an OpenTelemetry collector,
        /// Jaeger or Tempo: a trace per request, a span per attempt, a service.name per service).
        #[arg(long, value_enum, value_name = "FORMAT", default_value_t = TraceFormat::Chrome, requires = "trace")]
        trace_format: TraceFormat,
        /// With --trace: the sweep point to trace, by its position in summary.csv (0 = first row).
        #[arg(long, value_name = "N", default_value_t = 0, requires = "trace")]
        trace_point: usize,
        /// With --trace: the replicate to trace (0 = first).
        #[arg(long, value_name = "N", default_value_t = 0, requires = "trace")]
        trace_replicate: u32,
        /// After writing the results, draw them in the terminal (as `retrylab show` does).
        #[arg(long)]
        show: bool,
        /// Print the sweep's points in canonical order with their stable ids, swept values, effective policy
        /// and model settings (defaults resolved), tab-separated, and run nothing.
        #[arg(long, conflicts_with_all = ["trace", "show", "out", "shard", "resume"])]
        list_points: bool,
        /// Run only shard I of N (0-based; `auto` reads an array job's index) into <out>/shard-I-of-N/
        /// [default out: results/<stem>/shards]; join the shards with `retrylab merge`.
        #[arg(long, value_name = "I/N|auto", conflicts_with_all = ["trace", "show"])]
        shard: Option<String>,
        /// With --shard auto: the number of shards, for schedulers that do not tell a task (Kubernetes Indexed
        /// Jobs: spec.completions; AWS Batch: the array size). Under Slurm it makes each task id the shard index, to
        /// resubmit some tasks of an array (--array=3,5).
        #[arg(long, value_name = "N", requires = "shard", value_parser = clap::value_parser!(u32).range(1..))]
        shard_count: Option<u32>,
        /// With --shard: own every N-th run (balanced) or every N-th point with all its replicates.
        #[arg(long, value_enum, value_name = "UNIT", default_value_t = ShardBy::Runs, requires = "shard")]
        shard_by: ShardBy,
        /// Continue an interrupted run: skip the points it finished (kept in the shard folder, or in
        /// <out>/.retrylab-checkpoint/ without --shard). Refused if that run had another scenario text, --set, seed,
        /// replicates, retrylab version or shard.
        #[arg(long)]
        resume: bool,
        /// Refuse (exit 2) a plan whose estimated peak memory is above SIZE, e.g. 8GB or 512MiB [default: half the
        /// machine's memory]. `retrylab validate` prints the estimate.
        #[arg(long, value_name = "SIZE")]
        max_memory: Option<String>,
    },
    /// Join the shard folders of a sharded run into one results folder (CSV and charts as one machine writes them).
    #[command(
        after_help = "Each DIR is a shard folder (shard-I-of-N/) or a folder holding them. Refused, with a list \
        of what is wrong, unless every shard of one study (same scenario, overrides, seed, replicates and retrylab \
        version) is present exactly once and complete.\n\n\
        Examples:\n  \
        retrylab run scenarios/aws-jitter-2015.toml --shard 0/2 & retrylab run scenarios/aws-jitter-2015.toml --shard 1/2; wait\n  \
        retrylab merge results/aws-jitter-2015/shards   # writes results/aws-jitter-2015/\n  \
        retrylab merge /scratch/a /scratch/b --out results/study"
    )]
    Merge {
        /// Shard folders, or folders that hold them.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Output folder [default: results/<scenario file stem>/].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check scenario files (every sweep point) without running them.
    #[command(after_help = "Examples:\n  \
        retrylab validate scenarios/*.toml\n  \
        retrylab validate scenarios/metastable.toml --set 'rate=[500, 900]' --set charts.timeline_until=30s")]
    Validate {
        #[arg(required = true, value_name = "SCENARIO")]
        scenarios: Vec<PathBuf>,
        /// Override a setting first, as `run --set` does: KEY=VALUE (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// List every backoff strategy with its formula, and the models with their parameters.
    Strategies,
    /// Find the value of one parameter at which the system tips into a stuck state, by bisection on the stuck
    /// fraction.
    #[command(after_help = "Each probe pins KEY and runs replicates of the one point left, in batches of 10, until \
        the Wilson 95% interval of its stuck fraction lies below or above Q (--stuck, 0.5 by default; or \
        --max-replicates is reached: the probe is at the boundary and the search stops). Both ends are checked \
        before either is probed. The ends must be stable on one side and stuck on the \
        other. The scenario needs a trigger (an outage, fault windows or trigger_end); other swept keys must be \
        pinned with --set. --verdict judges another outcome of the model instead of stuck (the channel's growing: \
        whether a run's backlog kept rising).\n\n\
        Examples:\n  \
        retrylab boundary scenarios/bronson-2021.toml --over rate --between 100 200 --set 'faults=\"60s..70s slowdown x10\"'\n  \
        retrylab boundary scenarios/metastable.toml --over outage_duration --set rate=900 --set limiter=none\n  \
        retrylab boundary scenarios/bronson-2021.toml --over rate --between 100 200 --tolerance 2 --csv\n  \
        retrylab boundary scenarios/bronson-2021.toml --over rate --between 100 200 --stuck 0.1   # where 10% get stuck\n  \
        retrylab boundary scenarios/hlr-1996.toml --over arrival_rate --verdict growing --set stations=16 --set strategy=hlr-exponential")]
    Boundary {
        /// The scenario file (TOML).
        #[arg(value_name = "SCENARIO")]
        scenario: PathBuf,
        /// The parameter searched: a number or a duration of the scenario's model (a load, a trigger length, a
        /// capacity).
        #[arg(long, value_name = "KEY")]
        over: String,
        /// The bracket's ends [default: the ends of KEY's sweep axis].
        #[arg(long, num_args = 2, value_names = ["A", "B"])]
        between: Option<Vec<String>>,
        /// Stop once the bracket is this narrow, in KEY's units, greater than 0 [default: 1/64 of the bracket].
        #[arg(long, value_name = "T", allow_hyphen_values = true)]
        tolerance: Option<String>,
        /// Override any key of the scenario, as `run --set` does (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Replicates at most per probe.
        #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(10..=100_000))]
        max_replicates: u32,
        /// Worker threads [default: all cores]. Results do not depend on it.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// The share of runs stuck at the boundary, strictly between 0 and 1: the search finds where the stuck
        /// fraction crosses it.
        #[arg(long, value_name = "Q", default_value_t = commands::DEFAULT_STUCK_FRACTION, allow_negative_numbers = true)]
        stuck: f64,
        /// The outcome judged per run, a metric of the model that is 1 or 0: stuck (server, layers) or another,
        /// such as the channel's growing; the table, the messages and the CSV's verdict column name it.
        #[arg(long, value_name = "METRIC", default_value = commands::DEFAULT_VERDICT)]
        verdict: String,
        /// Write CSV, one row per probe: key,boundary,low,high,runs,stuck_target,probe,value,probe_runs,stuck,
        /// stuck_fraction,stuck_lo95,stuck_hi95,verdict (durations in ms).
        #[arg(long)]
        csv: bool,
    },
    /// The server model's fluid (large-N) limit: its stationary regimes (healthy, stuck and the separatrix between),
    /// its trajectory as expected counts per bucket, and with --over the boundary where a stuck regime appears.
    #[command(after_help = "No replicates and no noise: the expected counts of a fleet so large that chance \
        vanishes, computed in a second for any number of clients. Regimes are solved at the open workload's last \
        rate, after every fault; the trajectory runs from t = 0 through the faults and spikes. Points the fluid \
        limit cannot express (a retry limiter, a random network delay, a retry deadline, the server's rate limit, \
        a periodic workload, aligned clocks) are refused at their key. See docs/analysis.md.\n\n\
        Examples:\n  \
        retrylab fluid scenarios/descartes-retry-storm.toml\n  \
        retrylab fluid scenarios/bronson-2021.toml --over rate --between 100 200 --set 'faults=\"60s..70s slowdown x10\"'\n  \
        retrylab fluid scenarios/thundering-herd.toml --set strategy=full-jitter --scale 1e6   # a billion clients\n  \
        retrylab fluid scenarios/metafor-service52.toml --set 'faults=\"10s..15s slowdown x5\"' --csv timeline")]
    Fluid {
        /// The scenario file (TOML); its model must be the server.
        #[arg(value_name = "SCENARIO")]
        scenario: PathBuf,
        /// Override any key of the scenario, as `run --set` does (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Multiply the arrivals (rate, clients), workers and queue places by X, and divide latency_per_request by
        /// it: the same system N times larger.
        #[arg(long, value_name = "X", default_value_t = 1.0)]
        scale: f64,
        /// The time step [default: a twentieth of a random service's mean (a quarter of a constant one), at most a
        /// hundredth of the timeout and a tenth of the bucket].
        #[arg(long, value_name = "DURATION")]
        step: Option<String>,
        /// Write CSV instead of the report: the timeline (timeline.csv's columns, expected counts) or the regimes.
        #[arg(long, value_name = "WHAT")]
        csv: Option<FluidCsvArg>,
        /// The parameter along which to find the boundaries: a number or a duration of the server model.
        #[arg(long, value_name = "KEY")]
        over: Option<String>,
        /// The bracket's ends for --over [default: the ends of KEY's sweep axis].
        #[arg(long, num_args = 2, value_names = ["A", "B"], requires = "over")]
        between: Option<Vec<String>>,
        /// For --over: stop the trajectory's bisection once the bracket is this narrow [default: 1/1024 of it].
        #[arg(long, value_name = "T", requires = "over", allow_hyphen_values = true)]
        tolerance: Option<String>,
    },
    /// Pick the retry policy that minimises an objective under constraints: races the [tune] table's candidates on
    /// common random numbers.
    #[command(
        after_help = "Candidates are every combination of the [client] values listed in [tune] (lists or ranges, as \
        in [sweep]); candidates with the same effective policy run once. Every candidate runs the same replicates, \
        in rounds that double them; after each round a candidate leaves once its paired 95% interval of \
        (objective − best's) lies above zero, or a constraint's interval lies wholly on the wrong side. Writes \
        tune.csv, recommendation.toml (the winner's [client] block) and tune.svg/.png; see docs/tuning.md.\n\n\
        Examples:\n  \
        retrylab tune scenarios/tune-outage.toml\n  \
        retrylab tune scenarios/tune-outage.toml --objective 'calls + 0.01 * latency_p99_ms' --constraint 'success_rate >= 0.999'\n  \
        retrylab tune scenarios/tune-outage.toml --budget 2000 --resume --show"
    )]
    Tune {
        /// The scenario file (TOML) with a [tune] table.
        #[arg(value_name = "SCENARIO")]
        scenario: PathBuf,
        /// What to minimise: a metric or a weighted sum of metrics [default: the [tune] objective].
        #[arg(long, value_name = "EXPR")]
        objective: Option<String>,
        /// A condition the winner must meet, `EXPR >= NUMBER` or `EXPR <= NUMBER` (repeatable; replaces the
        /// [tune] constraints).
        #[arg(long = "constraint", value_name = "EXPR")]
        constraints: Vec<String>,
        /// Runs the search may spend [default: the [tune] budget, else 40 per candidate].
        #[arg(long, value_name = "RUNS", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        budget: Option<u64>,
        /// Output folder [default: results/<scenario stem>/tune].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Override any key of the scenario, as `run --set` does (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Master seed, overriding the scenario's `seed`.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Worker threads [default: all cores]. Results do not depend on it.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// Reuse the runs an earlier search of the same study stored in <out>/.retrylab-tune-runs (after an
        /// interrupt, or to spend a larger budget).
        #[arg(long)]
        resume: bool,
        /// Print nothing but errors, and no progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Print the whole ranking (tune.csv) as well as the winner.
        #[arg(long)]
        show: bool,
    },
    /// Sample the sleep before each retry of a strategy or preset, without running a simulation.
    #[command(after_help = "Per retry n = 1, 2, …: the mean, p10, p50, p90, min and max of the sleep, and the mean \
        time since the first try (sleeps only: attempts take no time, no limiter or deadline applies).\n\n\
        Examples:\n  \
        retrylab delays full-jitter --set base=100ms --set cap=10s --retries 6\n  \
        retrylab delays botocore-standard --error throttling\n  \
        retrylab delays k8s-crashloop --set cap=60s --csv > crashloop.csv")]
    Delays {
        /// A backoff strategy or a preset (see `retrylab strategies`).
        #[arg(value_name = "STRATEGY|PRESET")]
        policy: String,
        /// Set a backoff key first: base, cap, multiplier, max_attempts, floor, jitter, jitter_fraction, steps,
        /// throttling_base (repeatable; a preset's own value gives way).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Sample retries 1..=N, ignoring max_attempts [default: every retry max_attempts allows; 10 if unlimited].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(commands::MAX_RETRIES)))]
        retries: Option<u32>,
        /// Independent operations to sample.
        #[arg(long, value_name = "N", default_value_t = 100_000,
              value_parser = clap::value_parser!(u32).range(1..=i64::from(commands::MAX_SAMPLES)))]
        samples: u32,
        /// Seed of the sampled stream (the output is a function of the arguments).
        #[arg(long, value_name = "N", default_value_t = 1)]
        seed: u64,
        /// The failure each retry follows: SDKs such as botocore back off from a larger base after throttling.
        #[arg(long, value_enum, value_name = "KIND", default_value_t = ErrorKindArg::Transient)]
        error: ErrorKindArg,
        /// Write CSV: retry,mean_ms,p10_ms,p50_ms,p90_ms,min_ms,max_ms,at_mean_ms.
        #[arg(long, conflicts_with = "raw")]
        csv: bool,
        /// Write every sample as CSV: retry,sleep_ms.
        #[arg(long)]
        raw: bool,
    },
    /// Translate a real retry configuration (a gRPC service config, an AWS config profile, …) into a scenario's
    /// [client] table, each key commented with the field it came from, and every trap crossed on stderr.
    #[command(after_help = "The format is recognised from the file unless --format names it. A file holding several \
        methods, routes or profiles lists them and asks for one. docs/import.md documents every format, its \
        sources and its traps.\n\n\
        Examples:\n  \
        retrylab import service-config.json --method helloworld.Greeter/SayHello\n  \
        retrylab import ~/.aws/config --profile prod --out client.toml\n  \
        retrylab import virtual-service.yaml --route reviews/default --version istio=1.22")]
    Import {
        /// The configuration file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The file's format [default: recognised from the file].
        #[arg(long, value_name = "FORMAT", value_parser = clap::builder::PossibleValuesParser::new(retrylab::import::names()))]
        format: Option<String>,
        /// The gRPC method (service/method) to translate; gRPC's own lookup picks its config.
        #[arg(long, value_name = "NAME", conflicts_with_all = ["route", "profile", "instance"])]
        method: Option<String>,
        /// The route to translate, for files that hold several.
        #[arg(long, value_name = "NAME", conflicts_with_all = ["profile", "instance"])]
        route: Option<String>,
        /// The AWS config profile to translate (`default` for [default]).
        #[arg(long, value_name = "NAME", conflicts_with = "instance")]
        profile: Option<String>,
        /// The Resilience4j or Polly instance (retry options) to translate.
        #[arg(long, value_name = "NAME")]
        instance: Option<String>,
        /// Read the file as this release of its consumer, where a default changed between releases
        /// (istio=1.22, grpc-go=1.68); repeatable [default: the newest release checked, named in the output].
        #[arg(long, value_name = "NAME=X.Y")]
        version: Vec<String>,
        /// For a file read two ways: a googleapis service config as the generated clients run it (gapic, the
        /// default) or as a gRPC channel would (channel); an Envoy or Istio route as carrying HTTP (http, the
        /// default) or gRPC (grpc).
        #[arg(long, value_name = "READING")]
        reading: Option<String>,
        /// Write the table to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// What every metric and timeline series means: unit, meaning, how replicates are summarised.
    #[command(after_help = "Examples:\n  \
        retrylab metrics server\n  \
        retrylab metrics --markdown > docs/metrics.md")]
    Metrics {
        /// Only this model's metrics (occ, server, channel, layers, fanout) [default: every model].
        #[arg(value_name = "MODEL")]
        model: Option<String>,
        /// Write the reference as the Markdown page docs/metrics.md is.
        #[arg(long)]
        markdown: bool,
    },
    /// Draw results folders in the terminal: the timeline of every point as Unicode bars, and the summary table.
    #[command(after_help = "Width: $COLUMNS, else the terminal's, else 100. Colour only on a terminal and when \
        NO_COLOR is unset.\n\n\
        Examples:\n  \
        retrylab show results/thundering-herd\n  \
        COLUMNS=80 NO_COLOR=1 retrylab show results/aws-jitter-2015 | less")]
    Show {
        /// Results folders written by `retrylab run`.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
    /// Redraw the charts of results folders from their CSV files, manifest and stored scenario.
    #[command(after_help = "Examples:\n  \
        retrylab plot results/thundering-herd\n  \
        retrylab plot results/*/")]
    Plot {
        /// Results folders written by `retrylab run`.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
    /// Draw one metric of several results folders (or of the series within one) on one chart.
    #[command(after_help = "The x axis is the first numeric swept parameter of the first folder that every folder \
        sweeps; each (folder, series) gets a line.\n\n\
        Examples:\n  \
        retrylab compare results/aws-jitter-2015 --metric completion_ms\n  \
        retrylab compare /tmp/base /tmp/slow --metric calls --out /tmp/calls.svg")]
    Compare {
        /// Results folders written by `retrylab run`.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// The metric to draw [default: the first chart metric of the first folder].
        #[arg(long, value_name = "M")]
        metric: Option<String>,
        /// Where to write the chart (.svg and .png are both written) [default: ./compare.svg and ./compare.png].
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Print each folder's paired differences of the metric (paired.csv: a − b on common random numbers, its
        /// paired and unpaired 95% half-widths, and the variance reduction) instead of drawing.
        #[arg(long, conflicts_with = "out")]
        paired: bool,
    },
    /// Run a server scenario on real sockets: a real HTTP server on loopback and real clients with the scenario's
    /// retry policy, written like `run`'s results; or, with --target, that client fleet against your own service.
    #[command(after_help = "Scenario time runs --time-scale times slower on the wall clock (auto: the smallest of 1, \
        2, 5, 10, … at which timers' lateness, measured by a probe first, stays within --max-overhead of the mean \
        service time). The results folder holds the files `run` writes, in scenario time, and its manifest says \
        \"mode\": \"emulated\" with the measured overhead, so `show` and `compare` read it beside a simulated one. \
        --target sends load to loopback addresses only (127.0.0.0/8, ::1, localhost) unless --allow-remote is \
        given; the bounds on attempts and time are printed before it starts, and Ctrl-C keeps what was measured. \
        Described in docs/emulate.md.\n\n\
        Examples:\n  \
        retrylab emulate scenarios/emulate-herd.toml\n  \
        retrylab emulate scenarios/emulate-herd.toml --time-scale 10 --replicates 3 --out /tmp/herd-emulated\n  \
        retrylab emulate --check scenarios/emulate-herd.toml --replicates 3   # side by side, with verdicts\n  \
        retrylab emulate scenarios/emulate-herd.toml --target http://127.0.0.1:8080/work --max-requests 5000")]
    Emulate {
        /// A scenario file (TOML) of the server model: a burst, open or closed workload.
        #[arg(value_name = "SCENARIO")]
        scenario: PathBuf,
        /// Override a scenario value (repeatable), as `run --set`.
        #[arg(long, value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Wall seconds per scenario second, from 0.01 to 1000, or auto.
        #[arg(long, value_name = "X|auto", default_value = "auto", value_parser = parse_time_scale)]
        time_scale: TimeScale,
        /// The results folder [default: results/<scenario>-emulated, or results/<scenario>-check with --check].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Replicates per point [default: the scenario's].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        replicates: Option<u32>,
        /// The master seed [default: the scenario's].
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Simulate the scenario too and compare, metric by metric, within the intervals and the measured overhead:
        /// writes <out>/simulated, <out>/emulated and <out>/check.csv; exit 1 when any comparison differs.
        #[arg(long, conflicts_with = "target")]
        check: bool,
        /// Load this service (http://HOST:PORT/PATH) instead of the built-in server.
        #[arg(long, value_name = "URL")]
        target: Option<String>,
        /// Let --target name an address that is not loopback (or a name, which is then looked up).
        #[arg(long, requires = "target")]
        allow_remote: bool,
        /// The most attempts one run may send.
        #[arg(long, value_name = "N", default_value_t = 1_000_000)]
        max_requests: u64,
        /// The longest one run may take, in wall seconds.
        #[arg(long, value_name = "S", default_value_t = 600.0)]
        max_duration: f64,
        /// The share of the mean service time that timers' 99th-percentile lateness may take.
        #[arg(long, value_name = "SHARE", default_value_t = 0.1)]
        max_overhead: f64,
        /// Print nothing but errors and warnings.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Serve the lab in a browser: every committed scenario, plus the scenario files and results folders given.
    #[command(after_help = "Listens on 127.0.0.1 only, unless --bind says otherwise; answers only requests that \
        name the server itself (Host, Origin). The page and its JSON API are described in docs/lab.md.\n\n\
        Examples:\n  \
        retrylab serve\n  \
        retrylab serve --open --port 8080\n  \
        retrylab serve my-study.toml results/thundering-herd")]
    Serve {
        /// Scenario files (.toml) and results folders to serve beside the committed scenarios.
        #[arg(value_name = "SCENARIO|DIR")]
        inputs: Vec<PathBuf>,
        /// The port to listen on; 0 picks a free one.
        #[arg(long, value_name = "N", default_value_t = 7878)]
        port: u16,
        /// The address to listen on. Anything but loopback lets other machines run studies here.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// Open the page in the default browser.
        #[arg(long)]
        open: bool,
    },
    /// Estimate how likely one point of a server scenario reaches a rare event within a horizon, by multilevel
    /// splitting, with a 95% interval and the cost against brute force.
    #[command(after_help = "Splits runs where the server's queue (or with --importance backlog, the clients' open \
        requests) first reaches each level; levels come from a pilot at the 0.8 quantile of each stage's maxima \
        unless --levels gives them. The interval is Student's t over --replications independent estimates. \
        Events: stuck and tipped (the verdict, judged from the trigger's end, or from warmup without one), \
        queue>=N, or a condition on the run's metrics. The scenario's duration becomes the horizon. With --resume \
        (or --out) each finished replication is kept, so the same command goes on after Ctrl-C. See docs/rare.md.\n\n\
        Examples:\n  \
        retrylab rare scenarios/rare-storm.toml --within 1h\n  \
        retrylab rare scenarios/rare-storm.toml --within 10min --event 'queue>=30' --budget 40000\n  \
        retrylab rare scenarios/rare-storm.toml --within 1h --event 'success_rate <= 0.5' --csv > rare.csv\n  \
        retrylab rare scenarios/rare-storm.toml --within 1h --budget 40000 --resume   # after Ctrl-C, run it again")]
    Rare(RareArgs),
}

/// The arguments of `retrylab rare`.
#[derive(Debug, clap::Args)]
pub struct RareArgs {
    /// The scenario file (TOML); its model must be the server, with one point (pin swept keys with --set).
    #[arg(value_name = "SCENARIO")]
    scenario: PathBuf,
    /// The horizon: the event must happen by this time (it becomes the scenario's duration), e.g. 1h.
    #[arg(long, value_name = "T")]
    within: String,
    /// stuck, tipped, queue>=N, or a condition on the run's final metrics such as 'success_rate <= 0.5'.
    #[arg(long, value_name = "EVENT", default_value = "stuck")]
    event: String,
    /// Trajectories to run in all, the pilot's included.
    #[arg(long, value_name = "RUNS", default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    budget: u64,
    /// Independent replications the interval is computed from.
    #[arg(long, value_name = "M", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(2..=i64::from(commands::MAX_RARE_REPLICATIONS)))]
    replications: u32,
    /// What the levels measure.
    #[arg(long, value_name = "WHAT", default_value = "queue")]
    importance: ImportanceArg,
    /// auto (from a pilot), or rising levels such as 5,10,20.
    #[arg(long, value_name = "LEVELS", default_value = "auto")]
    levels: String,
    /// Master seed, overriding the scenario's `seed`.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Override any key of the scenario, as `run --set` does (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Worker threads [default: all cores]. Results do not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    /// Print one CSV row (with its header) instead of the report.
    #[arg(long)]
    csv: bool,
    /// Keep the pilot's levels and each finished replication in DIR (rep-<r>.json), for --resume [default with
    /// --resume: results/<scenario stem>/rare].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Keep each finished replication, and skip those an interrupted estimate of the same study kept. Refused if
    /// that estimate had another scenario text, --set, seed, --within, --event, --importance, --levels, --budget,
    /// --replications or retrylab version.
    #[arg(long)]
    resume: bool,
}

impl RareArgs {
    pub fn into_options(self) -> commands::RareOptions {
        let importance = match self.importance {
            ImportanceArg::Queue => commands::RareImportance::Queue,
            ImportanceArg::Backlog => commands::RareImportance::Backlog,
        };
        commands::RareOptions {
            scenario: self.scenario,
            within: self.within,
            event: self.event,
            budget: self.budget,
            replications: self.replications,
            importance,
            levels: self.levels,
            seed: self.seed,
            set: self.set,
            threads: self.threads.map(usize::from),
            csv: self.csv,
            out: self.out,
            resume: self.resume,
        }
    }
}

/// `--importance` of `retrylab rare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ImportanceArg {
    /// The server's live queue.
    Queue,
    /// The clients' open requests.
    Backlog,
}

/// `--trace-format` of `retrylab run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    /// Chrome Trace Event JSON, for ui.perfetto.dev and chrome://tracing.
    Chrome,
    /// OpenTelemetry OTLP/JSON (an ExportTraceServiceRequest), for an OpenTelemetry collector, Jaeger or Tempo.
    Otlp,
}

/// `--csv` of `retrylab fluid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FluidCsvArg {
    /// Expected counts per bucket, with timeline.csv's columns (after the swept keys).
    Timeline,
    /// One row per stationary regime.
    Regimes,
}

/// `--error` of `retrylab delays`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ErrorKindArg {
    /// A timeout, a reset, a 5xx.
    Transient,
    /// A 429 or a throttling error code.
    Throttling,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap's own consistency checks (conflicting flags, bad defaults, duplicate names), which otherwise only
    /// run when the offending subcommand is parsed.
    #[test]
    fn the_command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}

/// `--time-scale` of `retrylab emulate`: a number, or the smallest that keeps the overhead within bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeScale {
    Auto,
    Fixed(f64),
}

fn parse_time_scale(text: &str) -> Result<TimeScale, String> {
    if text.eq_ignore_ascii_case("auto") {
        return Ok(TimeScale::Auto);
    }
    let (low, high) = retrylab::emulate::TIME_SCALES;
    match text.parse::<f64>() {
        Ok(scale) if (low..=high).contains(&scale) => Ok(TimeScale::Fixed(scale)),
        _ => Err(format!("must be a number from {low} to {high} (wall seconds per scenario second), or auto")),
    }
}
