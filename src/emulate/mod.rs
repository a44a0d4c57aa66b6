//! `retrylab emulate`: the server model's scenario on real sockets. A real HTTP/1.1 server on loopback (workers,
//! a bounded FIFO queue, service times spent as real waits, the scenario's faults on the wall clock) and a fleet of
//! real clients running the simulation's own policy code (`model::server::decide`, the policy and limiter values),
//! or, with `--target`, that fleet against the user's own service. It writes the files `run` writes, in scenario
//! time, with `"mode": "emulated"` and its measured overhead in the manifest, so `show` and `compare` read a
//! simulated and an emulated folder alike.
//!
//! It sits above the study, beside the models: it plans with `scenario`, configures with `model`, decides with
//! `policy`, tallies with the server model's `Tally` and writes with `report`; of `engine` it uses the seeded
//! random streams only, never the event queue.

mod check;
mod clock;
mod fleet;
mod http;
mod record;
mod server;
mod support;

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use clock::{Clock, Lags};
use fleet::{Destination, Fleet};
use record::{Books, Shared};

use crate::commands::{OutputKind, check_output_path};
use crate::engine::{Stream, sim_rng};
use crate::loopback::{Target, host_of, parse_target};
use crate::model::RunOutput;
use crate::model::server::ServerConfig;
use crate::report::{self, EmulationInfo, RunInfo, atomic};
use crate::scenario::{Scenario, plan};
use crate::sweep::Run;
use crate::time::SimDuration;
use crate::{Error, interrupt};

/// How `retrylab emulate` runs.
#[derive(Clone, Debug)]
pub struct EmulateOptions {
    pub scenario: PathBuf,
    pub set: Vec<String>,
    /// Wall seconds per scenario second; `None`: the smallest that keeps the overhead within `max_overhead`.
    pub time_scale: Option<f64>,
    pub out: Option<PathBuf>,
    /// `--target URL`: load that service instead of the built-in server.
    pub target: Option<String>,
    pub allow_remote: bool,
    pub replicates: Option<u32>,
    pub seed: Option<u64>,
    /// The most attempts one run may send.
    pub max_requests: u64,
    /// The longest one run may take, in wall seconds.
    pub max_duration_s: f64,
    /// The share of the mean service time the timers' 99th-percentile lateness may take.
    pub max_overhead: f64,
    /// `--check`: simulate too, into `<out>/simulated` beside `<out>/emulated`, and compare.
    pub check: bool,
    pub quiet: bool,
}

/// The bounds a `--time-scale` must keep within.
pub const TIME_SCALES: (f64, f64) = (0.01, 1000.0);

/// Runs the emulation and writes its results folder (with `--check`, the simulation's beside it, and compares).
pub fn emulate(options: &EmulateOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    // The target is decided from the URL's text before anything else: no socket, no name lookup.
    let target = match &options.target {
        Some(url) => Some(
            parse_target(url, options.allow_remote).map_err(|why| Error::Usage(format!("--target {url}: {why}")))?,
        ),
        None => None,
    };
    check_bounds(options)?;
    let mut scenario = Scenario::load(&options.scenario, &options.set)?;
    if let Some(seed) = options.seed {
        scenario.seed = seed;
    }
    let simulated_replicates = scenario.replicates;
    if let Some(replicates) = options.replicates {
        scenario.replicates = replicates;
    }
    let points = plan(&scenario)?;
    let configs = support::configs(&scenario, &points)?;
    let suffix = if options.check { "check" } else { "emulated" };
    let out =
        options.out.clone().unwrap_or_else(|| PathBuf::from("results").join(format!("{}-{suffix}", scenario.stem())));
    check_output_path("--out", &out, OutputKind::Folder)?;
    let clients = configs.iter().map(|config| Fleet::warm_connections(config)).max().unwrap_or(0);
    check_descriptors(u64::from(clients) * if target.is_some() { 1 } else { 2 })?;
    let service_mean = match &target {
        Some(_) => None,
        None => mean_service(&configs),
    };
    let scale = choose_scale(options, service_mean, clients)?;
    if let Some(target) = &target {
        // One connection first, so a service that is not there is said before the folder is touched.
        std::net::TcpStream::connect_timeout(&target.address, Duration::from_secs(5)).map_err(|error| {
            Error::Usage(format!(
                "--target {}: cannot connect to {}: {error}; is the service running?",
                target.host, target.address
            ))
        })?;
    }
    atomic::ensure_writable_dir(&out)?;
    let study =
        Study { scenario: &scenario, points: &points, configs: &configs, target: target.as_ref(), service_mean, scale };
    if !options.check {
        return study.emulate_into(options, &out, stdout).map(|_| ());
    }
    let (simulated, emulated) = (out.join("simulated"), out.join("emulated"));
    atomic::ensure_writable_dir(&emulated)?;
    let run_options = crate::commands::RunOptions {
        scenarios: vec![options.scenario.clone()],
        out: Some(simulated.clone()),
        seed: options.seed,
        replicates: Some(simulated_replicates),
        threads: None,
        set: options.set.clone(),
        quiet: true,
        trace: None,
        show: false,
        shard: None,
        resume: false,
        max_memory: None,
    };
    crate::commands::run(&run_options, stdout)?;
    let info = study.emulate_into(options, &emulated, stdout)?;
    let overhead = check::Overhead {
        mean_ms: info.timer_lag_mean_ms + info.transport_mean_ms.unwrap_or(0.0),
        tail_ms: info.timer_lag_p99_ms + info.transport_p99_ms.unwrap_or(0.0),
        service_mean_ms: info.service_mean_ms,
    };
    let comparisons = check::compare(&scenario, &points, &simulated, &emulated, overhead)?;
    check::write_csv(&comparisons, &out.join("check.csv"))?;
    let differ = comparisons.iter().filter(|c| !c.agrees()).count();
    let _ = write!(stdout, "\n{}", check::table(&comparisons));
    let _ = writeln!(
        stdout,
        "\nsimulated {simulated_replicates} and emulated {} replicate(s); measured overhead per timed wait {:.3} ms \
         mean, {:.3} ms p99 (timer lag + client to server, scenario time); wrote {}",
        scenario.replicates,
        overhead.mean_ms,
        overhead.tail_ms,
        out.join("check.csv").display()
    );
    match differ {
        0 => {
            let _ = writeln!(stdout, "every one of {} comparisons agrees", comparisons.len());
            Ok(())
        }
        _ => Err(Error::Disagreement(format!(
            "{differ} of {} comparisons differ by more than both intervals and the measured overhead (see {})",
            comparisons.len(),
            out.join("check.csv").display()
        ))),
    }
}

/// What the emulation of a planned scenario needs, decided before any socket.
struct Study<'a> {
    scenario: &'a Scenario,
    points: &'a [crate::scenario::PlannedPoint],
    configs: &'a [Arc<ServerConfig>],
    target: Option<&'a Target>,
    service_mean: Option<SimDuration>,
    scale: f64,
}

impl Study<'_> {
    /// Runs every point's replicates on real sockets and writes the results folder `out`; returns the overhead
    /// record the manifest holds.
    fn emulate_into(
        &self,
        options: &EmulateOptions,
        out: &std::path::Path,
        stdout: &mut dyn Write,
    ) -> Result<EmulationInfo, Error> {
        let (scenario, target, scale) = (self.scenario, self.target, self.scale);
        if !options.quiet {
            let _ = writeln!(
                stdout,
                "emulating {}: {} point(s) × {} replicate(s) against {} at time scale {scale} (1 scenario second = \
                 {scale} s); each run sends at most {} attempts and stops after {} s",
                scenario.name,
                self.points.len(),
                scenario.replicates,
                target.map_or_else(
                    || "the built-in server on 127.0.0.1".to_owned(),
                    |t| format!("{} ({})", t.host, t.address)
                ),
                options.max_requests,
                options.max_duration_s
            );
        }
        let started = Instant::now();
        let total = self.points.len() as u64 * u64::from(scenario.replicates);
        let bar = crate::commands::progress_bar(total, &format!("{} (emulated)", scenario.name), options.quiet);
        let (lags, transport) = (Lags::default(), Lags::default());
        let mut runs = Vec::new();
        let mut interrupted = None;
        'points: for (point, config) in self.points.iter().zip(self.configs) {
            for replicate in 0..scenario.replicates {
                let seeds = point.seeds(scenario.seed, replicate);
                let run = Replicate { config, seeds, bucket: scenario.timeline_bucket, scale, options, target };
                let measured = run.run().inspect_err(|_| bar.finish_and_clear())?;
                bar.inc(1);
                lags.absorb(&measured.lags);
                if let Some(server) = &measured.transport {
                    transport.absorb(server);
                }
                runs.push(Run { point: point.index, replicate, seed: seeds.policy, output: measured.output });
                if let Some(signal) = interrupt::requested() {
                    interrupted = Some(signal);
                    break 'points;
                }
            }
        }
        bar.finish_and_clear();
        if let Some(signal) = interrupted
            && target.is_none()
        {
            return Err(Error::Interrupted {
                signal,
                message: format!("{}: interrupted by {}; nothing was written", scenario.name, interrupt::name(signal)),
                resumable: false,
            });
        }
        let lag_p99 = lags.quantile_ms(0.99);
        let info = EmulationInfo {
            server: options.target.clone().unwrap_or_else(|| "built-in".into()),
            time_scale: scale,
            timer_lag_mean_ms: lags.mean_ms(),
            timer_lag_p50_ms: lags.quantile_ms(0.5),
            timer_lag_p99_ms: lag_p99,
            transport_mean_ms: (transport.count() > 0).then(|| transport.mean_ms()),
            transport_p99_ms: (transport.count() > 0).then(|| transport.quantile_ms(0.99)),
            service_mean_ms: self.service_mean.map(SimDuration::as_millis_f64),
            overhead_allowed: options.max_overhead,
            overhead_measured: self
                .service_mean
                .filter(|mean| !mean.is_zero())
                .map(|mean| lag_p99 / mean.as_millis_f64()),
            max_requests: options.max_requests,
            max_duration_s: options.max_duration_s,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            keeps_on_signal: target.is_some(),
        };
        let aggregate = report::aggregate(scenario.model, self.points.len(), &runs);
        let run_info = RunInfo {
            threads: 2,
            elapsed_s: started.elapsed().as_secs_f64(),
            overrides: options.set.clone(),
            shards: None,
            emulation: Some(info.clone()),
        };
        report::write_results(scenario, self.points, &runs, &aggregate, &run_info, out)?;
        report_overhead(&info, scenario, runs.len(), out, options.quiet, stdout);
        match interrupted {
            Some(signal) => Err(Error::Interrupted {
                signal,
                message: format!(
                    "{}: interrupted by {}; kept the {} finished run(s) in {}",
                    scenario.name,
                    interrupt::name(signal),
                    runs.len(),
                    out.display()
                ),
                resumable: false,
            }),
            None => Ok(info),
        }
    }
}

/// Refuses bounds that cannot work, before anything runs.
fn check_bounds(options: &EmulateOptions) -> Result<(), Error> {
    if let Some(scale) = options.time_scale
        && !(TIME_SCALES.0..=TIME_SCALES.1).contains(&scale)
    {
        return Err(Error::Usage(format!(
            "--time-scale {scale}: must be from {} to {} (wall seconds per scenario second), or auto",
            TIME_SCALES.0, TIME_SCALES.1
        )));
    }
    if !(options.max_overhead > 0.0 && options.max_overhead <= 1.0) {
        return Err(Error::Usage(format!(
            "--max-overhead {}: must be a share above 0 and at most 1 (0.1 = 10% of the mean service time)",
            options.max_overhead
        )));
    }
    if options.max_requests == 0 {
        return Err(Error::Usage("--max-requests 0: a run must be allowed at least one attempt".into()));
    }
    if !(options.max_duration_s > 0.0 && options.max_duration_s <= 86_400.0) {
        return Err(Error::Usage(format!(
            "--max-duration {}: must be above 0 and at most 86400 s",
            options.max_duration_s
        )));
    }
    Ok(())
}

/// The emulation needs a socket per client (two with the built-in server, which holds the other end); the soft
/// limit on open files is raised to the hard one if that is what it takes.
fn check_descriptors(needed: u64) -> Result<(), Error> {
    let needed = needed + 256;
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read and write the struct passed, nothing else.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 || limit.rlim_cur >= needed as libc::rlim_t {
            return Ok(());
        }
        if limit.rlim_max >= needed as libc::rlim_t {
            let raised = libc::rlimit { rlim_cur: needed as libc::rlim_t, rlim_max: limit.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return Ok(());
            }
        }
    }
    Err(Error::Usage(format!(
        "this many clients need about {needed} open files, but the limit here is {} (hard {}): raise it with \
         `ulimit -n {needed}` or emulate fewer clients",
        limit.rlim_cur, limit.rlim_max
    )))
}

/// The smallest mean service time over the points (the one the overhead weighs most against), measured over
/// 4,096 draws of each; `None` when there is no service time to judge the overhead against.
fn mean_service(configs: &[Arc<ServerConfig>]) -> Option<SimDuration> {
    let mut rng = sim_rng(Stream::Service as u64);
    let means = configs.iter().map(|config| {
        let sum: f64 = (0..4096).map(|_| config.service.sample_nanos(&mut rng)).sum();
        sum / 4096.0
    });
    let smallest = means.fold(f64::INFINITY, f64::min);
    (smallest.is_finite() && smallest > 0.0).then(|| SimDuration::from_nanos_f64(smallest))
}

/// The time scale: the one asked for, if its overhead fits; else (auto) the smallest of 1, 2, 5, 10, 20, … that
/// keeps the timers' 99th-percentile lateness, measured by a probe now, within `max_overhead` of the mean service.
fn choose_scale(options: &EmulateOptions, service_mean: Option<SimDuration>, clients: u32) -> Result<f64, Error> {
    let Some(mean) = service_mean else { return Ok(options.time_scale.unwrap_or(1.0)) };
    let lag_ms = probe_timer_lag_ms(clients);
    let allowed_ms = options.max_overhead * mean.as_millis_f64();
    let needed = lag_ms / allowed_ms;
    match options.time_scale {
        Some(scale) if scale >= needed => Ok(scale),
        Some(scale) => Err(Error::Usage(format!(
            "--time-scale {scale}: timers here wake {lag_ms:.2} ms late (99th percentile, measured just now), which \
             at this scale is {:.0}% of the mean service time ({:.2} ms), above --max-overhead {}; use --time-scale \
             {} or more (or auto)",
            100.0 * lag_ms / scale / mean.as_millis_f64(),
            mean.as_millis_f64(),
            options.max_overhead,
            nice_scale(needed)
        ))),
        None => Ok(nice_scale(needed)),
    }
}

/// The smallest of 1, 2, 5, 10, 20, 50, … (up to the largest allowed) at or above `needed`.
fn nice_scale(needed: f64) -> f64 {
    const SCALES: [f64; 10] = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0];
    SCALES.into_iter().find(|&scale| scale >= needed).unwrap_or(TIME_SCALES.1)
}

/// How late tokio's timers wake on this machine now, in wall ms (99th percentile), under as many concurrent
/// sleepers as the run has clients (at least 100, at most 2,000), each sleeping 1 to 3 ms twenty times.
fn probe_timer_lag_ms(clients: u32) -> f64 {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_time().build() else { return 0.0 };
    let lags = Arc::new(Lags::default());
    let clock = Clock::new(tokio::time::Instant::now(), 1.0);
    let sleepers = clients.clamp(100, 2000);
    runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for sleeper in 0..sleepers {
            let lags = lags.clone();
            tasks.spawn(async move {
                let mut at = clock.now();
                for step in 0..20u32 {
                    at += SimDuration::from_micros(1000 + u64::from((sleeper * 7 + step * 13) % 2000));
                    at = clock.sleep_until(at, &lags).await.max(at);
                }
            });
        }
        while tasks.join_next().await.is_some() {}
    });
    lags.quantile_ms(0.99)
}

/// One replicate's run: its server (unless `--target`), its fleet, its books.
struct Replicate<'a> {
    config: &'a Arc<ServerConfig>,
    seeds: crate::engine::RunSeeds,
    bucket: SimDuration,
    scale: f64,
    options: &'a EmulateOptions,
    target: Option<&'a Target>,
}

/// What one replicate measured.
struct Measured {
    output: RunOutput,
    lags: Arc<Lags>,
    transport: Option<Arc<Lags>>,
}

impl Replicate<'_> {
    fn run(&self) -> Result<Measured, Error> {
        let books = Shared::new(Books::new(self.config, self.seeds, self.bucket, self.options.max_requests));
        let clock_cell = Arc::new(OnceLock::new());
        let server = match self.target {
            Some(_) => None,
            None => Some(
                server::start(self.config.clone(), books.clone(), clock_cell.clone())
                    .map_err(|error| Error::Usage(format!("cannot start the built-in server on 127.0.0.1: {error}")))?,
            ),
        };
        let destination = match (self.target, &server) {
            (Some(target), _) => {
                Destination { address: target.address, host: target.host.clone(), path: target.path.clone() }
            }
            (None, Some(server)) => {
                Destination { address: server.address, host: host_of(server.address), path: "/".into() }
            }
            (None, None) => unreachable!("a run has a server or a target"),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|error| Error::Threads(error.to_string()))?;
        let lags = runtime.block_on(self.drive(&books, &clock_cell, destination))?;
        drop(runtime);
        let transport = server.as_ref().map(|server| server.transport.clone());
        if let Some(server) = server {
            lags.absorb(&server.lags);
            server.stop();
        }
        let (broken, first) = {
            let books = books.lock();
            (books.broken_answers, books.first_broken.clone())
        };
        if let Some(first) = first {
            eprintln!("warning: {broken} attempt(s) got no HTTP answer and counted as resets; the first: {first}");
        }
        Ok(Measured { output: books.finish(self.config), lags, transport })
    }

    /// Opens the clients' connections, starts the clock and runs the fleet until every request ended and the
    /// server holds no work, or a bound or a signal stops it.
    async fn drive(
        &self,
        books: &Shared,
        clock_cell: &OnceLock<Clock>,
        destination: Destination,
    ) -> Result<Arc<Lags>, Error> {
        let mut warm = Vec::new();
        for _ in 0..Fleet::warm_connections(self.config) {
            match http::Conn::open(destination.address).await {
                Ok(conn) => warm.push(conn),
                Err(error) => {
                    return Err(Error::Usage(format!("cannot connect to {}: {error}", destination.address)));
                }
            }
        }
        // Scenario time 0 a little ahead, so every client task is spawned and waiting when it comes.
        let clock = Clock::new(tokio::time::Instant::now() + Duration::from_millis(20), self.scale);
        let _ = clock_cell.set(clock);
        let think_seed = self.seeds.seed_of(Stream::Think);
        let fleet = Arc::new(Fleet::new(
            self.config.clone(),
            books.clone(),
            clock,
            destination,
            self.target.is_some(),
            think_seed,
        ));
        let lags = fleet.lags.clone();
        let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(self.options.max_duration_s);
        let stopped = async {
            loop {
                tokio::time::sleep(Duration::from_millis(20)).await;
                if interrupt::requested().is_some() || tokio::time::Instant::now() >= deadline {
                    return;
                }
            }
        };
        let finished = tokio::select! {
            () = fleet.clone().drive(warm) => true,
            () = stopped => false,
        };
        // The server may still be serving work nobody waits for (on_timeout = "abandon"): the run ends with it.
        while finished && books.lock().server.holding > 0 && tokio::time::Instant::now() < deadline {
            if interrupt::requested().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        if !finished || books.lock().server.holding > 0 {
            books.lock().truncated = true;
        }
        Ok(lags)
    }
}

/// Says where the results went and what the emulation's own overhead was, warning when it went above the share
/// allowed.
fn report_overhead(
    info: &EmulationInfo,
    scenario: &Scenario,
    runs: usize,
    out: &std::path::Path,
    quiet: bool,
    stdout: &mut dyn Write,
) {
    if let (Some(share), Some(mean)) = (info.overhead_measured, info.service_mean_ms)
        && share > info.overhead_allowed
    {
        eprintln!(
            "warning: timers woke up to {:.2} ms late (99th percentile, scenario time): {:.0}% of the mean service time \
             ({mean:.2} ms), above --max-overhead {}; emulate again with a larger --time-scale",
            info.timer_lag_p99_ms,
            share * 100.0,
            info.overhead_allowed
        );
    }
    if quiet {
        return;
    }
    let transport = info.transport_p99_ms.map_or(String::new(), |ms| format!(", client to server {ms:.3} ms p99"));
    let _ = writeln!(
        stdout,
        "{}: {runs} emulated run(s); overhead in scenario time: timer lag {:.3} ms p50, {:.3} ms p99{transport}",
        scenario.name, info.timer_lag_p50_ms, info.timer_lag_p99_ms
    );
    let _ = writeln!(stdout, "wrote {}", out.display());
}

#[cfg(test)]
mod tests {
    use super::nice_scale;

    #[test]
    fn the_auto_scale_is_the_next_round_one_at_or_above_the_need() {
        let cases = [(0.3, 1.0), (1.0, 1.0), (1.1, 2.0), (4.9, 5.0), (12.0, 20.0), (999.0, 1000.0), (5000.0, 1000.0)];
        for (needed, scale) in cases {
            assert_eq!(nice_scale(needed), scale, "{needed}");
        }
    }
}
