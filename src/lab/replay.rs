//! `POST /api/replay`: one replicate of one point, run again with tracing on (the same seeds, so the same run the
//! summary counted, as `retrylab run --trace` does) and returned as attempts for the page to draw as moving dots.
//! Large runs are sampled by client: every k-th owner (client, request or station) with all of its attempts, so
//! each dot shown is a whole history, and the answer says which were kept.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{ApiError, Lab, chain, find};
use super::runs::Slot;
use crate::Error;
use crate::model::{RunSettings, event_cap, trace::Span};
use crate::scenario::{PlannedPoint, Scenario, plan};

/// The most owners a replay returns: the page draws one dot each and stays smooth at this many.
pub(crate) const MAX_OWNERS: u32 = 2_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplayRequest {
    scenario: String,
    #[serde(default)]
    set: Vec<String>,
    /// The point, in summary.csv's row order.
    #[serde(default)]
    point: usize,
    #[serde(default)]
    replicate: u32,
    /// Owners to keep at most (default and ceiling [`MAX_OWNERS`]).
    #[serde(default)]
    owners: Option<u32>,
}

/// `POST /api/replay`.
pub(crate) async fn replay(State(lab): State<Arc<Lab>>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let request: ReplayRequest = serde_json::from_slice(&body).map_err(|error| {
        let expected = r#"{"scenario": "<name>", "set": [...], "point": 0, "replicate": 0, "owners": 1000}"#;
        ApiError::new(StatusCode::BAD_REQUEST, format!("request body: {error}; expected {expected}"))
    })?;
    let entry = find(&lab.catalog, &request.scenario)?;
    let bad = |field, error: Error| ApiError::in_field(StatusCode::BAD_REQUEST, field, chain(&error));
    let scenario = entry.load(&request.set).map_err(|error| bad("set", error))?;
    let points = plan(&scenario).map_err(|error| bad("set", error.into()))?;
    if request.point >= points.len() {
        let message = format!(
            "point {} is out of range: the study has {} (0 to {})",
            request.point,
            points.len(),
            points.len() - 1
        );
        return Err(ApiError::in_field(StatusCode::BAD_REQUEST, "point", message));
    }
    if request.replicate >= scenario.replicates {
        let message = format!(
            "replicate {} is out of range: the study runs {} (0 to {})",
            request.replicate,
            scenario.replicates,
            scenario.replicates - 1
        );
        return Err(ApiError::in_field(StatusCode::BAD_REQUEST, "replicate", message));
    }
    let owners = match request.owners {
        Some(owners) if owners == 0 || owners > MAX_OWNERS => {
            let message = format!("from 1 to {MAX_OWNERS}");
            return Err(ApiError::in_field(StatusCode::BAD_REQUEST, "owners", message));
        }
        owners => owners.unwrap_or(1_000),
    };
    let command = super::api::cli_command(entry, &request.set);
    super::runs::check_size(&scenario, &points[request.point..=request.point], &command)
        .map_err(|error| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, chain(&error)))?;
    let slot = Slot::take(Some("replay"), 1)
        .ok_or_else(|| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the lab is busy; try again"))?;
    let (point, replicate) = (request.point, request.replicate);
    let task = tokio::task::spawn_blocking(move || record(&scenario, &points[point], replicate, owners, &slot));
    match tokio::time::timeout(lab.run_time_limit, task).await {
        Ok(Ok(answer)) => answer.map(Json).map_err(|error| ApiError::new(StatusCode::CONFLICT, chain(&error))),
        Ok(Err(error)) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the replay failed: {error}"))),
        Err(_) => Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the replay took longer than the lab allows")),
    }
}

/// Runs replicate `replicate` of `point` with tracing on and keeps every k-th owner's attempts.
fn record(scenario: &Scenario, point: &PlannedPoint, replicate: u32, owners: u32, slot: &Slot) -> Result<Value, Error> {
    let settings = RunSettings {
        seeds: point.seeds(scenario.seed, replicate),
        bucket: scenario.timeline_bucket,
        max_events: event_cap(scenario.max_events_per_run, &point.config),
        trace: true,
        stop: slot.flag(),
    };
    let output = point.config.simulate(settings);
    crate::interrupt::check_flag(slot.flag())?;
    let total = output.spans.iter().map(|span| span.owner).max().map_or(0, |most| most + 1);
    let stride = total.div_ceil(owners.max(1)).max(1);
    let kept: Vec<&Span> = output.spans.iter().filter(|span| span.owner % stride == 0).collect();
    let millis = |time: crate::time::SimTime| time.as_millis_f64();
    let attempts: Vec<Value> = kept
        .iter()
        .map(|span| {
            let arrived = span.at_server.map(|at| millis(at.arrived));
            let service = span.at_server.and_then(|at| at.service);
            let (served_from, served_to) = (service.map(|s| millis(s.0)), service.map(|s| millis(s.1)));
            json!([
                span.owner / stride,
                millis(span.start),
                millis(span.end),
                span.attempt,
                span.outcome,
                span.status,
                arrived,
                served_from,
                served_to
            ])
        })
        .collect();
    let point_values = crate::scenario::point_of(scenario, &point.swept);
    // The server's workers, for the page to draw their slots (unset: unlimited, as for models without them).
    let workers = match point_values.get("workers") {
        Ok(Some(crate::params::Value::Count(workers))) => Some(workers),
        _ => None,
    };
    let horizon = kept.iter().map(|span| millis(span.end)).fold(0.0, f64::max);
    Ok(json!({
        "owner": point.config.trace_owner(),
        "owners": total,
        "shown": total.div_ceil(stride),
        "sampled": if stride == 1 { "every owner".to_owned() } else { format!("every {stride}th owner of {total}") },
        "truncated_spans": output.spans.len() >= crate::model::trace::MAX_TRACE_SPANS,
        "columns": ["dot", "start_ms", "end_ms", "attempt", "outcome", "status", "arrived_ms", "service_start_ms",
                    "service_end_ms"],
        "workers": workers,
        "attempts": attempts,
        "horizon_ms": horizon,
        "truncated": output.truncated,
    }))
}
