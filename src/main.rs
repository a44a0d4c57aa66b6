mod cli;
mod signals;

use std::process::ExitCode;

use clap::Parser;
use retrylab::commands::{
    self, BoundaryOptions, CompareOptions, DelaysFormat, DelaysOptions, RunOptions, TraceRequest, TuneOptions,
};
use retrylab::emulate::EmulateOptions;
use retrylab::policy::FailureKind;
use retrylab::report::terminal::View;
use retrylab::shard::ShardSpec;

fn execute(command: cli::Command) -> Result<(), retrylab::Error> {
    let mut stdout = std::io::stdout().lock();
    match command {
        cli::Command::Run {
            scenarios,
            out,
            seed,
            replicates,
            threads,
            set,
            quiet,
            show,
            list_points,
            shard,
            shard_count,
            shard_by,
            resume,
            max_memory,
            trace,
            trace_point,
            trace_replicate,
            trace_format,
        } => {
            let otlp = trace_format == cli::TraceFormat::Otlp;
            let trace = trace.map(|file| TraceRequest { file, point: trace_point, replicate: trace_replicate, otlp });
            if list_points {
                return commands::list_points(&scenarios, &set, &mut stdout);
            }
            let threads = threads.map(usize::from);
            let shard = shard.map(|text| ShardSpec::from_argument(&text, shard_count, shard_by)).transpose()?;
            let options = RunOptions {
                scenarios,
                out,
                seed,
                replicates,
                threads,
                set,
                quiet,
                show,
                trace,
                shard,
                resume,
                max_memory,
            };
            commands::run(&options, &mut stdout)
        }
        cli::Command::Validate { scenarios, set } => commands::validate(&scenarios, &set, &mut stdout),
        cli::Command::Strategies => commands::strategies(&mut stdout),
        cli::Command::Boundary {
            scenario,
            over,
            between,
            tolerance,
            set,
            max_replicates,
            threads,
            csv,
            stuck,
            verdict,
        } => {
            let between = between.map(|ends| (ends[0].clone(), ends[1].clone()));
            let threads = threads.map(usize::from);
            let options = BoundaryOptions {
                scenario,
                over,
                between,
                tolerance,
                set,
                max_replicates,
                threads,
                csv,
                stuck_fraction: stuck,
                verdict,
            };
            commands::boundary(&options, &mut stdout)
        }
        cli::Command::Fluid { scenario, set, scale, step, csv, over, between, tolerance } => {
            let csv = csv.map(|what| match what {
                cli::FluidCsvArg::Timeline => commands::FluidCsv::Timeline,
                cli::FluidCsvArg::Regimes => commands::FluidCsv::Regimes,
            });
            let between = between.map(|ends| (ends[0].clone(), ends[1].clone()));
            let options = commands::FluidOptions { scenario, set, scale, step, csv, over, between, tolerance };
            commands::fluid(&options, &mut stdout)
        }
        cli::Command::Rare(args) => commands::rare(&args.into_options(), &mut stdout),
        cli::Command::Tune {
            scenario,
            objective,
            constraints,
            budget,
            out,
            set,
            seed,
            threads,
            resume,
            quiet,
            show,
        } => {
            let threads = threads.map(usize::from);
            let options =
                TuneOptions { scenario, objective, constraints, budget, out, set, seed, threads, resume, quiet, show };
            commands::tune(&options, &mut stdout)
        }
        cli::Command::Delays { policy, set, retries, samples, seed, error, csv, raw } => {
            let error = match error {
                cli::ErrorKindArg::Transient => FailureKind::Transient,
                cli::ErrorKindArg::Throttling => FailureKind::Throttling,
            };
            let format = if raw {
                DelaysFormat::Raw
            } else if csv {
                DelaysFormat::Csv
            } else {
                DelaysFormat::Table
            };
            commands::delays(&DelaysOptions { policy, set, retries, samples, seed, error, format }, &mut stdout)
        }
        cli::Command::Import { file, format, method, route, profile, instance, version, reading, out } => {
            let choice = method.or(route).or(profile).or(instance);
            let options = commands::ImportOptions { file, format, choice, versions: version, reading, out };
            commands::import(&options, &mut stdout)
        }
        cli::Command::Metrics { model, markdown } => commands::metrics(model.as_deref(), markdown, &mut stdout),
        cli::Command::Show { dirs } => commands::show(&dirs, &View::for_stdout(), &mut stdout),
        cli::Command::Merge { dirs, out, quiet } => commands::merge(&dirs, out.as_deref(), quiet, &mut stdout),
        cli::Command::Plot { dirs } => commands::plot(&dirs, &mut stdout),
        cli::Command::Compare { dirs, metric, out, paired } => {
            commands::compare(&CompareOptions { dirs, metric, out, paired }, &mut stdout)
        }
        cli::Command::Emulate {
            scenario,
            set,
            time_scale,
            out,
            replicates,
            seed,
            target,
            allow_remote,
            max_requests,
            max_duration,
            max_overhead,
            check,
            quiet,
        } => {
            let time_scale = match time_scale {
                cli::TimeScale::Auto => None,
                cli::TimeScale::Fixed(scale) => Some(scale),
            };
            let options = EmulateOptions {
                scenario,
                set,
                time_scale,
                out,
                target,
                allow_remote,
                replicates,
                seed,
                max_requests,
                max_duration_s: max_duration,
                max_overhead,
                check,
                quiet,
            };
            retrylab::emulate::emulate(&options, &mut stdout)
        }
        cli::Command::Serve { inputs, port, bind, open } => {
            retrylab::lab::serve(&retrylab::lab::ServeOptions { inputs, bind, port, open }, &mut stdout)
        }
    }
}

fn main() -> ExitCode {
    if let Err(error) = signals::install() {
        eprintln!("warning: Ctrl-C will stop at once, keeping only the points already stored: {error}");
    }
    let cli = cli::Cli::parse();
    match execute(cli.command).map_err(anyhow::Error::from) {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stops early (`retrylab delays … --raw | head`) closes the pipe: that is not a failure.
        Err(error) if is_closed_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            if let Some(retrylab::Error::Interrupted { signal, resumable, .. }) = error.downcast_ref() {
                if *resumable {
                    eprintln!("{error}; resume with:\n  {}", signals::resume_command(&arguments()));
                } else {
                    eprintln!("{error}");
                }
                return ExitCode::from(u8::try_from(signals::exit_code(*signal)).unwrap_or(1));
            }
            eprintln!("Error: {error:#}");
            let bad_input = error.downcast_ref::<retrylab::Error>().is_some_and(retrylab::Error::is_bad_input);
            ExitCode::from(if bad_input { 2 } else { 1 })
        }
    }
}

/// Whether writing the output failed only because its reader has gone away.
fn is_closed_pipe(error: &anyhow::Error) -> bool {
    matches!(
        error.downcast_ref::<retrylab::Error>(),
        Some(retrylab::Error::Write { path, source })
            if path.as_os_str() == "<stdout>" && source.kind() == std::io::ErrorKind::BrokenPipe
    )
}

/// The program and its arguments as given (not valid Unicode: shown lossily).
fn arguments() -> Vec<String> {
    std::env::args_os().map(|arg| arg.to_string_lossy().into_owned()).collect()
}
