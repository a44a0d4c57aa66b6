//! The lab's JSON API (docs/lab.md). Every number comes from the study's own sweep and report: `POST /api/run`
//! answers with the cells `retrylab run` writes into summary.csv and timeline.csv, byte for byte.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::catalog::{Catalog, Entry};
use super::claims::Claim;
use super::runs::{self, Finished, Slot};
use crate::Error;
use crate::scenario::{Scenario, plan, write_into_source};

/// What the handlers share.
pub(crate) struct Lab {
    pub(crate) catalog: Catalog,
    /// A run still going after this long is stopped and answered 503.
    pub(crate) run_time_limit: Duration,
}

/// An error answer: a status and `{"error": message}` (plus `field` when one field of the request is at fault).
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
    field: Option<&'static str>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError { status, message: message.into(), field: None }
    }

    pub(super) fn in_field(status: StatusCode, field: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, message: message.into(), field: Some(field) }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({ "error": self.message });
        if let Some(field) = self.field {
            body["field"] = json!(field);
        }
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// An error's message with its causes, as the CLI prints it after `Error: `.
pub(super) fn chain(error: &Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

#[derive(Serialize)]
struct ScenarioItem<'a> {
    name: &'a str,
    title: &'a str,
    description: &'a str,
    model: &'a str,
    points: usize,
    replicates: u32,
    path: String,
}

impl<'a> From<&'a Entry> for ScenarioItem<'a> {
    fn from(entry: &'a Entry) -> Self {
        ScenarioItem {
            name: &entry.name,
            title: &entry.title,
            description: &entry.description,
            model: entry.model,
            points: entry.points,
            replicates: entry.replicates,
            path: entry.path().display().to_string(),
        }
    }
}

/// `GET /api/scenarios`: the scenarios and results folders served.
pub(crate) async fn scenarios(State(lab): State<Arc<Lab>>) -> Json<Value> {
    let scenarios: Vec<ScenarioItem> = lab.catalog.scenarios.values().map(ScenarioItem::from).collect();
    let results: Vec<Value> = lab
        .catalog
        .results
        .values()
        .map(|entry| json!({ "name": entry.name, "files": entry.files, "path": entry.dir.display().to_string() }))
        .collect();
    let lessons: Vec<Value> = lab
        .catalog
        .lessons
        .iter()
        .map(|lesson| {
            let front = &lesson.front;
            json!({ "name": lesson.name, "title": front.title, "summary": front.summary, "scenario": front.scenario })
        })
        .collect();
    Json(json!({ "scenarios": scenarios, "results": results, "lessons": lessons }))
}

/// `GET /api/lessons/{name}`: a lesson's front matter, text and figures.
pub(crate) async fn lesson(State(lab): State<Arc<Lab>>, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    let lesson = lab.catalog.lessons.iter().find(|lesson| lesson.name == name).ok_or_else(|| {
        let names: Vec<&str> = lab.catalog.lessons.iter().map(|lesson| lesson.name.as_str()).collect();
        ApiError::new(StatusCode::NOT_FOUND, format!("no lesson named {name:?}; the lab has: {}", names.join(", ")))
    })?;
    Ok(Json(serde_json::to_value(lesson).unwrap_or_default()))
}

/// `GET /api/scenarios/{name}`: one scenario with its TOML text.
pub(crate) async fn scenario(State(lab): State<Arc<Lab>>, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    let entry = find(&lab.catalog, &name)?;
    let scenario = entry.load(&[]).map_err(|error| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, chain(&error)))?;
    let mut item = serde_json::to_value(ScenarioItem::from(entry)).unwrap_or_default();
    item["source"] = json!(entry.source);
    item["controls"] = json!(super::controls::controls(&scenario));
    Ok(Json(item))
}

/// `GET /api/scenarios/{name}/toml?set=KEY%3DVALUE&…`: the scenario's text with the overrides written into its own
/// `set` list, as a file to download. `retrylab run` on it gives the numbers `POST /api/run` gives with them.
pub(crate) async fn download(
    State(lab): State<Arc<Lab>>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let entry = find(&lab.catalog, &name)?;
    let mut set = Vec::new();
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if key != "set" {
            let message = format!("unknown query parameter {key:?}; the only one is set=KEY%3DVALUE, repeated");
            return Err(ApiError::in_field(StatusCode::BAD_REQUEST, "set", message));
        }
        set.push(value.into_owned());
    }
    at_most_sets(set.len(), "set", "overrides")?;
    entry.load(&set).map_err(|error| ApiError::in_field(StatusCode::BAD_REQUEST, "set", chain(&error)))?;
    let internal = |why: String| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, why);
    let text = write_into_source(&entry.source, &set).map_err(|error| internal(error.to_string()))?;
    Scenario::with_overrides(&entry.path(), text.clone(), &[]).map_err(|error| internal(chain(&error)))?;
    let file: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{file}.toml\""))
        .map_err(|error| internal(error.to_string()))?;
    let content_type = HeaderValue::from_static("application/toml; charset=utf-8");
    Ok(([(header::CONTENT_TYPE, content_type), (header::CONTENT_DISPOSITION, disposition)], text).into_response())
}

/// `GET /api/progress`: the runs in progress.
pub(crate) async fn progress() -> Json<Value> {
    Json(json!({ "runs": runs::progress() }))
}

pub(super) fn find<'a>(catalog: &'a Catalog, name: &str) -> Result<&'a Entry, ApiError> {
    catalog.scenarios.get(name).ok_or_else(|| {
        let names: Vec<&str> = catalog.scenarios.keys().map(String::as_str).collect();
        ApiError::in_field(
            StatusCode::NOT_FOUND,
            "scenario",
            format!("no scenario named {name:?}; the lab serves: {}", names.join(", ")),
        )
    })
}

/// The body of `POST /api/run`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunRequest {
    scenario: String,
    /// `KEY=VALUE` overrides, as `--set` takes them (`replicates=5` and `seed=7` too).
    #[serde(default)]
    set: Vec<String>,
    /// A newer run on the same channel cancels this one (one channel per pane of a page).
    #[serde(default)]
    channel: Option<String>,
    /// A lesson's claims, checked on this run's summary (see [`super::claims`]).
    #[serde(default)]
    claims: Vec<String>,
}

/// The most `set` entries, and the longest channel name, a request may carry.
const MAX_SETS: usize = 64;
const MAX_CHANNEL_CHARS: usize = 64;

/// Refuses a request field holding more than [`MAX_SETS`] entries (400, naming the field).
fn at_most_sets(count: usize, field: &'static str, what: &str) -> Result<(), ApiError> {
    if count > MAX_SETS {
        return Err(ApiError::in_field(StatusCode::BAD_REQUEST, field, format!("at most {MAX_SETS} {what}")));
    }
    Ok(())
}

/// `POST /api/run`: runs a scenario with overrides and answers with its summary and timeline as CSV cells.
pub(crate) async fn run(State(lab): State<Arc<Lab>>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let request: RunRequest = serde_json::from_slice(&body).map_err(|error| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("request body: {error}; expected {{\"scenario\": \"<name>\", \"set\": [\"key=value\", …]}}"),
        )
    })?;
    at_most_sets(request.set.len(), "set", "overrides")?;
    if request.channel.as_ref().is_some_and(|channel| channel.chars().count() > MAX_CHANNEL_CHARS) {
        let message = format!("at most {MAX_CHANNEL_CHARS} characters");
        return Err(ApiError::in_field(StatusCode::BAD_REQUEST, "channel", message));
    }
    at_most_sets(request.claims.len(), "claims", "claims")?;
    let claims = request
        .claims
        .iter()
        .map(|text| Claim::parse(text))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| ApiError::in_field(StatusCode::BAD_REQUEST, "claims", why))?;
    let entry = find(&lab.catalog, &request.scenario)?;
    let bad = |error: Error| ApiError::in_field(StatusCode::BAD_REQUEST, "set", chain(&error));
    let scenario = entry.load(&request.set).map_err(bad)?;
    let points = plan(&scenario).map_err(|error| bad(error.into()))?;
    let command = cli_command(entry, &request.set);
    runs::check_size(&scenario, &points, &command)
        .map_err(|error| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, chain(&error)))?;
    let total = points.len() as u64 * u64::from(scenario.replicates);
    let slot = Slot::take(request.channel.as_deref(), total).ok_or_else(|| {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, format!("the lab is running {} studies already", runs::MAX_RUNS))
    })?;
    let started = Instant::now();
    let slot = Arc::new(slot);
    let running = Arc::clone(&slot);
    // A page that goes away (the connection closes) drops this future: the guard then stops its run.
    let guard = CancelOnDrop(Arc::clone(&slot));
    let task = tokio::task::spawn_blocking(move || {
        let finished = runs::execute(&scenario, &points, &running);
        (scenario, points, finished)
    });
    let joined = match tokio::time::timeout(lab.run_time_limit, task).await {
        Ok(joined) => joined,
        Err(_) => {
            slot.cancel();
            let seconds = lab.run_time_limit.as_secs_f64();
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "stopped after the lab's {seconds} s per run; make the study smaller, or run it with:\n  {command}"
                ),
            ));
        }
    };
    drop(guard);
    let (scenario, points, finished) =
        joined.map_err(|error| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the run failed: {error}")))?;
    let finished = finished.map_err(|error| match error {
        Error::Cancelled => ApiError::new(StatusCode::CONFLICT, chain(&error)),
        Error::Interrupted { .. } => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the lab is stopping"),
        other => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, chain(&other)),
    })?;
    let mut answer =
        answer(&request.scenario, &request.set, &command, points.len(), scenario.replicates, finished, started);
    answer["title"] = json!(scenario.name);
    answer["claims"] = json!(check_claims(&claims, &answer["summary"]));
    answer["swept"] = json!(scenario.sweep.iter().map(|axis| axis.name).collect::<Vec<_>>());
    answer["series"] = json!(timeline_series(&scenario));
    answer["key_metrics"] = json!(scenario.model.default_chart_metrics());
    answer["timeline_until_ms"] = json!(scenario.charts.timeline_until.map(|until| until.as_millis_f64()));
    answer["metrics"] = json!(
        scenario
            .model
            .metrics()
            .iter()
            .map(|metric| json!({ "name": metric.name, "help": metric.help }))
            .collect::<Vec<_>>()
    );
    Ok(Json(answer))
}

/// The timeline series the scenario's charts lead with: its `[charts] timeline_series`, else the model's default,
/// else every series.
fn timeline_series(scenario: &crate::scenario::Scenario) -> Vec<&'static str> {
    if !scenario.charts.timeline_series.is_empty() {
        return scenario.charts.timeline_series.clone();
    }
    match scenario.model.default_timeline_series() {
        [] => scenario.model.timeline_series().to_vec(),
        chosen => chosen.to_vec(),
    }
}

/// Cancels its slot's run when dropped: by the handler once the run has ended (a no-op then), or with the
/// handler's future when the client goes away mid-run.
struct CancelOnDrop(Arc<Slot>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

fn answer(
    name: &str,
    set: &[String],
    command: &str,
    points: usize,
    replicates: u32,
    finished: Finished,
    started: Instant,
) -> Value {
    json!({
        "scenario": name,
        "set": set,
        "command": command,
        "points": points,
        "replicates": replicates,
        "summary": table(&finished.tables.summary),
        "timeline": table(&finished.tables.timeline),
        "paired": finished.tables.paired.as_deref().map(table),
        "latency": finished.tables.latency.as_deref().map(table),
        "warnings": finished.warnings,
        "policies": finished.policies,
        "events": finished.events,
        "truncated_runs": finished.truncated_runs,
        "elapsed_ms": started.elapsed().as_millis() as u64,
    })
}

/// Each claim checked on the answer's summary table.
fn check_claims(claims: &[Claim], summary: &Value) -> Vec<Value> {
    let cells = |value: &Value| -> Vec<String> {
        value.as_array().into_iter().flatten().map(|cell| cell.as_str().unwrap_or_default().to_owned()).collect()
    };
    let columns = cells(&summary["columns"]);
    let rows: Vec<Vec<String>> = summary["rows"].as_array().into_iter().flatten().map(cells).collect();
    claims.iter().map(|claim| claim.check(&columns, &rows)).collect()
}

/// A CSV table as `{"columns": [...], "rows": [[cell, ...], ...]}`, each cell the text the CSV holds.
fn table(csv_bytes: &[u8]) -> Value {
    let mut reader = csv::Reader::from_reader(csv_bytes);
    let columns: Vec<String> =
        reader.headers().map(|headers| headers.iter().map(str::to_owned).collect()).unwrap_or_default();
    let rows: Vec<Vec<String>> =
        reader.records().filter_map(Result::ok).map(|record| record.iter().map(str::to_owned).collect()).collect();
    json!({ "columns": columns, "rows": rows })
}

/// The command that runs the same study with the CLI, its overrides quoted for a POSIX shell.
pub(crate) fn cli_command(entry: &Entry, set: &[String]) -> String {
    let mut command = format!("retrylab run {}", shell_quote(&entry.path().display().to_string()));
    for argument in set {
        command.push_str(" --set ");
        command.push_str(&shell_quote(argument));
    }
    command
}

/// `text` as one shell word: bare when it holds only safe characters, else in single quotes.
fn shell_quote(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_quoted_for_the_shell_only_when_they_need_it() {
        assert_eq!(shell_quote("clients=500"), "clients=500");
        assert_eq!(shell_quote(r#"strategy=["a", "b"]"#), r#"'strategy=["a", "b"]'"#);
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn a_csv_table_keeps_its_cells_as_text() {
        let value = table(b"a,b\n1,0.50\n\"x,y\",2\n");
        assert_eq!(value["columns"], json!(["a", "b"]));
        assert_eq!(value["rows"], json!([["1", "0.50"], ["x,y", "2"]]));
    }
}
