//! report.html's warnings and its "Settings" section: what the results say about themselves (a backlog still
//! growing when new work stopped), and the client policy and model settings each point ran with, every default
//! resolved, so that nothing that decides a verdict is left for the reader to guess.

use std::fmt::Write as _;

use super::html::escape;
use super::manifest::Manifest;
use crate::scenario::{PlannedPoint, Scenario};

/// The warnings, when there are any, under their own heading at the top of the page.
pub(super) fn warnings(page: &mut String, manifest: &Manifest) {
    if manifest.warnings.is_empty() {
        return;
    }
    page.push_str(
        "<section class=\"warnings\">\n<h2 id=\"warnings\">Warnings</h2>\n<p class=\"note\">The numbers below hold \
         for these settings, and these points depend on them (docs/outputs.md, Warnings):</p>\n<ul>\n",
    );
    for warning in &manifest.warnings {
        let _ = writeln!(page, "<li>{}</li>", escape(warning));
    }
    page.push_str("</ul>\n</section>\n");
}

/// The effective client policy and model settings: one line each when every point shares them, else a table
/// of points (swept values first).
pub(super) fn settings(page: &mut String, scenario: &Scenario, points: &[PlannedPoint]) {
    let rows: [(&str, Vec<&str>); 2] = [
        ("client policy", points.iter().filter_map(|point| point.policy.as_deref()).collect()),
        ("model settings", points.iter().filter_map(|point| point.settings.as_deref()).collect()),
    ];
    if rows.iter().all(|(_, values)| values.is_empty()) {
        return;
    }
    page.push_str(
        "<h2 id=\"settings\">Settings</h2>\n<p class=\"note\">What each point ran with, presets resolved and every \
         default the scenario left unset marked <i>(default)</i>: manifest.json's <code>policies</code> and \
         <code>settings</code>.</p>\n",
    );
    let shared = |values: &[&str]| values.iter().all(|value| *value == values[0]);
    page.push_str("<table class=\"kv\">\n");
    for (name, values) in rows.iter().filter(|(_, values)| !values.is_empty() && shared(values)) {
        let _ = writeln!(page, "<tr><th>{name}</th><td>{} (every point)</td></tr>", escape(values[0]));
    }
    page.push_str("</table>\n");
    let varying: Vec<&(&str, Vec<&str>)> =
        rows.iter().filter(|(_, values)| !values.is_empty() && !shared(values)).collect();
    if varying.is_empty() {
        return;
    }
    page.push_str("<div class=\"scroll\">\n<table class=\"kv\">\n<thead><tr>");
    for axis in &scenario.sweep {
        let _ = write!(page, "<th>{}</th>", escape(axis.name));
    }
    for (name, _) in &varying {
        let _ = write!(page, "<th>{name}</th>");
    }
    page.push_str("</tr></thead>\n<tbody>\n");
    for (index, point) in points.iter().enumerate().take(super::html::MAX_ROWS) {
        page.push_str("<tr>");
        for value in &point.swept {
            let _ = write!(page, "<td>{}</td>", escape(&value.to_string()));
        }
        for (_, values) in &varying {
            let _ = write!(page, "<td>{}</td>", escape(values.get(index).copied().unwrap_or("")));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody>\n</table>\n</div>\n");
}
