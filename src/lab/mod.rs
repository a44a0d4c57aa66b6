//! `retrylab serve`: the lab in a browser. A local HTTP server whose page and JSON API sit above the study: every
//! number it shows comes from the same plan, sweep and report as `retrylab run` (see [`api`]).
//!
//! Safe on a shared machine: it binds loopback unless told otherwise; it answers only requests whose Host (and
//! Origin, when sent) name the server itself, which defeats DNS rebinding; it serves only embedded files and the
//! files of the results folders it was given, by exact name; request bodies, runs at once and a run's time are
//! bounded; Ctrl-C stops it and the runs in progress.

mod api;
mod catalog;
mod claims;
mod controls;
mod lessons;
mod replay;
mod runs;

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::Error;
use crate::loopback::{self, Refusal, allowed_hosts, host_of};
use api::{ApiError, Lab};
use catalog::Catalog;

/// The largest request body accepted (a run request is well under 1 KiB).
pub const MAX_BODY_BYTES: usize = 64 << 10;
/// A run still going after this long is stopped.
pub const RUN_TIME_LIMIT: Duration = Duration::from_secs(60);

/// Options of `retrylab serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Scenario files and results folders to serve beside the committed scenarios.
    pub inputs: Vec<PathBuf>,
    pub bind: IpAddr,
    /// 0 picks a free port.
    pub port: u16,
    /// Open the page in the default browser once the server listens.
    pub open: bool,
}

/// The page and its script and style, embedded in the binary.
const PAGE: &[(&str, &str, &str)] = &[
    ("/", "text/html; charset=utf-8", include_str!("assets/index.html")),
    ("/lab.js", "text/javascript; charset=utf-8", include_str!("assets/lab.js")),
    ("/faults.js", "text/javascript; charset=utf-8", include_str!("assets/faults.js")),
    ("/lab.css", "text/css; charset=utf-8", include_str!("assets/lab.css")),
    ("/colours.json", "application/json", include_str!("../../assets/colours.json")),
];

/// Checks every input, binds, prints the URL, then serves until a signal asks the process to stop.
pub fn serve(options: &ServeOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    let catalog = Catalog::load(&options.inputs)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|error| Error::Threads(error.to_string()))?;
    let address = SocketAddr::new(options.bind, options.port);
    let listener = runtime.block_on(tokio::net::TcpListener::bind(address)).map_err(|error| {
        Error::Usage(format!("cannot listen on {address}: {error}; choose another --port (0 picks a free one)"))
    })?;
    let bound = listener.local_addr().map_err(|error| Error::Usage(format!("cannot listen on {address}: {error}")))?;
    let url = format!("http://{}/", host_of(bound));
    if !options.bind.is_loopback() {
        eprintln!(
            "warning: listening on {} — anyone who can reach this machine can run studies; the default, 127.0.0.1, \
             keeps the lab to this machine",
            options.bind
        );
    }
    let _ = writeln!(
        stdout,
        "retrylab lab: {url} ({} scenarios, {} results folders); Ctrl-C stops it",
        catalog.scenarios.len(),
        catalog.results.len()
    );
    let _ = stdout.flush();
    if options.open {
        open_browser(&url);
    }
    let lab = Arc::new(Lab { catalog, run_time_limit: RUN_TIME_LIMIT });
    let hosts = Arc::new(allowed_hosts(bound));
    let app = router(lab).layer(middleware::from_fn_with_state(hosts, same_origin));
    runtime
        .block_on(async {
            axum::serve(listener, app).with_graceful_shutdown(signalled()).await?;
            Ok::<(), std::io::Error>(())
        })
        .map_err(|error| Error::Usage(format!("the lab's server stopped: {error}")))?;
    Ok(())
}

fn router(lab: Arc<Lab>) -> Router {
    let mut router = Router::new()
        .route("/api/scenarios", get(api::scenarios))
        .route("/api/scenarios/{name}", get(api::scenario))
        .route("/api/scenarios/{name}/toml", get(api::download))
        .route("/api/run", post(api::run))
        .route("/api/progress", get(api::progress))
        .route("/api/replay", post(replay::replay))
        .route("/api/lessons/{name}", get(api::lesson))
        .route("/results/{folder}/{file}", get(results_file));
    for (path, content_type, body) in PAGE {
        router = router.route(path, get(move || async move { ([(header::CONTENT_TYPE, *content_type)], *body) }));
    }
    router
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such page; the lab's API is under /api/") })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(lab)
}

/// A file of a results folder given on the command line, by its exact name in the folder's listing at start.
async fn results_file(State(lab): State<Arc<Lab>>, Path((folder, file)): Path<(String, String)>) -> Response {
    let Some(entry) = lab.catalog.results.get(&folder) else {
        return ApiError::new(StatusCode::NOT_FOUND, format!("no results folder named {folder:?}")).into_response();
    };
    if !entry.files.contains(&file) {
        return ApiError::new(StatusCode::NOT_FOUND, format!("{folder} has no file {file:?}")).into_response();
    }
    let content_type = match file.rsplit_once('.').map(|(_, extension)| extension) {
        Some("html") => "text/html; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("csv") => "text/csv; charset=utf-8",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    };
    let path = entry.dir.join(&file);
    match tokio::task::spawn_blocking(move || std::fs::read(path)).await.unwrap_or_else(|error| Err(error.into())) {
        Ok(bytes) => ([(header::CONTENT_TYPE, content_type)], bytes).into_response(),
        Err(error) => ApiError::new(StatusCode::NOT_FOUND, format!("{folder}/{file}: {error}")).into_response(),
    }
}

/// Refuses a request whose Host is not this server's (421) or whose Origin, when present, is another site's (403):
/// a page on another site, or a DNS name rebound to this machine, cannot drive the lab (see [`loopback`]).
async fn same_origin(
    State(hosts): State<Arc<Vec<String>>>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let text = |name| headers.get(name).map(|value: &header::HeaderValue| value.to_str().unwrap_or(""));
    match loopback::check_host_origin(text(header::HOST), text(header::ORIGIN), &hosts) {
        Ok(()) => next.run(request).await,
        Err(Refusal::ForeignHost(message)) => ApiError::new(StatusCode::MISDIRECTED_REQUEST, message).into_response(),
        Err(Refusal::ForeignOrigin(message)) => ApiError::new(StatusCode::FORBIDDEN, message).into_response(),
    }
}

/// Resolves once a signal has asked the process to stop, after stopping every run in progress.
async fn signalled() {
    loop {
        let signal = crate::interrupt::SIGNAL.load(Ordering::Relaxed);
        if signal != 0 {
            runs::stop_all(signal);
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Asks the desktop to open `url`; a machine without one (a server, CI) keeps only the printed URL.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let opened = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if opened.is_err() {
        eprintln!("note: could not start {opener}; open {url} yourself");
    }
}
