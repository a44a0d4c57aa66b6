//! Releases as part of the answer. Some defaults a configuration leaves to its consumer changed between
//! releases (Istio stopped retrying a plain 503 by default in 1.24; grpc-go moved from full jitter to ±20% in
//! 1.69), so a translation that relies on one says for which releases it holds. Each consumer below names the
//! newest release its rules were checked against: the import assumes it unless `--version NAME=X.Y` (or a
//! scenario's `import_version`) names another, and the table's header says which was read.

use std::cmp::Ordering;
use std::fmt;

/// A release number: up to three numeric parts ("1.24", "2.0.1"); a missing part is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Version([u32; 3]);

impl Version {
    pub(crate) const fn new(major: u32, minor: u32, patch: u32) -> Version {
        Version([major, minor, patch])
    }

    /// `"1.24"`, `"v1.24.3"`, `"2"`; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let digits = text.strip_prefix('v').unwrap_or(text);
        let mut parts = [0u32; 3];
        for (count, part) in digits.split('.').enumerate() {
            if count == 3 || part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            parts[count] = part.parse().ok()?;
        }
        Some(Version(parts))
    }
}

impl fmt::Display for Version {
    /// `1.24` when the patch is 0, else `1.24.3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [major, minor, patch] = self.0;
        if patch == 0 { write!(f, "{major}.{minor}") } else { write!(f, "{major}.{minor}.{patch}") }
    }
}

/// A library or proxy that reads configuration files, with the releases where a default the import relies on
/// changed.
#[derive(Debug)]
pub(crate) struct Consumer {
    /// The `--version` name: the project's own name, lower-case.
    pub(crate) name: &'static str,
    /// How the output names it ("Istio", "grpc-go").
    pub(crate) title: &'static str,
    /// The newest release the rules were checked against; assumed unless another is named.
    pub(crate) newest: Version,
    /// Each change the import knows, oldest first.
    pub(crate) changes: &'static [&'static Change],
}

/// A default that changed in a release.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) since: Version,
    /// What holds before `since`, and what holds from it on, in a few words each.
    pub(crate) before: &'static str,
    pub(crate) after: &'static str,
    /// Where it changed (a pull request, release notes).
    pub(crate) source: &'static str,
}

impl Consumer {
    /// `Istio 1.24 or later` / `Istio before 1.24` for `version` against `since`.
    pub(crate) fn range(&self, version: Version, since: Version) -> String {
        match version.cmp(&since) {
            Ordering::Less => format!("{} before {since}", self.title),
            Ordering::Equal | Ordering::Greater => format!("{} {since} or later", self.title),
        }
    }
}

/// A consumer's release named by `--version` or `import_version`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pinned {
    pub(crate) consumer: &'static Consumer,
    pub(crate) version: Version,
}

/// Reads `NAME=X.Y` items (a scenario's `import_version` may hold several, separated by commas); the message names
/// what would be valid.
pub(crate) fn parse_pins<'t>(items: impl IntoIterator<Item = &'t str>) -> Result<Vec<Pinned>, String> {
    let mut pins: Vec<Pinned> = Vec::new();
    for item in items.into_iter().flat_map(|item| item.split(',')).map(str::trim).filter(|item| !item.is_empty()) {
        let Some((name, version)) = item.split_once('=') else {
            return Err(format!("{item:?} names no release; write NAME=VERSION, e.g. istio=1.23"));
        };
        let consumer = consumer_named(name.trim())
            .ok_or_else(|| format!("no consumer {:?}; releases can be named for:\n{}", name.trim(), consumer_list()))?;
        let version = Version::parse(version).ok_or_else(|| {
            format!("{:?} is not a release number; write one like {}", version.trim(), consumer.newest)
        })?;
        if pins.iter().any(|pin| pin.consumer.name == consumer.name) {
            return Err(format!("{} is given two releases; give one", consumer.name));
        }
        pins.push(Pinned { consumer, version });
    }
    Ok(pins)
}

/// The consumer whose `--version` name is `name`.
pub(crate) fn consumer_named(name: &str) -> Option<&'static Consumer> {
    CONSUMERS.iter().copied().find(|consumer| consumer.name == name)
}

/// One line per consumer: its name, the newest release checked, and the releases where something changed.
fn consumer_list() -> String {
    let lines: Vec<String> = CONSUMERS
        .iter()
        .map(|consumer| {
            let changed: Vec<String> = consumer.changes.iter().map(|change| change.since.to_string()).collect();
            let changed = if changed.is_empty() {
                String::new()
            } else {
                format!("; defaults changed in {}", changed.join(", "))
            };
            format!("  {:<16} newest checked {}{changed}", consumer.name, consumer.newest)
        })
        .collect();
    lines.join("\n")
}

/// The markdown table of every release change the import knows, as docs/import.md shows it.
#[cfg(test)]
pub(crate) fn changes_table() -> String {
    let mut table = String::from("| `--version` name | newest checked | release | before | since | source |\n");
    table.push_str("|---|---|---|---|---|---|\n");
    for consumer in CONSUMERS {
        for change in consumer.changes {
            table.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} |\n",
                consumer.name, consumer.newest, change.since, change.before, change.after, change.source
            ));
        }
    }
    table
}

/// Every consumer whose releases the import tells apart.
pub(crate) const CONSUMERS: &[&Consumer] =
    &[&ISTIO, &LINKERD, &GOOGLE_API_CORE, &GRPC_GO, &GRPC_JAVA, &GRPC_JS, &GRPC_CORE];

/// Istio's pilot, which writes the Envoy retry policy of every route.
pub(crate) const ISTIO: Consumer =
    Consumer { name: "istio", title: "Istio", newest: Version::new(1, 30, 0), changes: &[&ISTIO_NO_503_BY_DEFAULT] };

/// Istio's default retry policy leaves a plain 503 alone from 1.24 on.
pub(crate) const ISTIO_NO_503_BY_DEFAULT: Change = Change {
    since: Version::new(1, 24, 0),
    before: "a route without `retries` also retries every HTTP 503 (retriable-status-codes 503)",
    after: "a route without `retries` retries connection failures only, not a plain 503",
    source: "istio/istio#52111 (EXCLUDE_UNSAFE_503_FROM_DEFAULT_RETRY; the flag removed in 1.27, #56023)",
};

/// Linkerd's proxy and policy controller (stable releases; an edge release reads as the stable after it).
pub(crate) const LINKERD: Consumer = Consumer {
    name: "linkerd",
    title: "Linkerd",
    newest: Version::new(2, 19, 0),
    changes: &[&LINKERD_NO_PROFILE_TIMEOUT],
};

/// A ServiceProfile route without `timeout` has had none since 2.9.
pub(crate) const LINKERD_NO_PROFILE_TIMEOUT: Change = Change {
    since: Version::new(2, 9, 0),
    before: "a ServiceProfile route without `timeout` gives up on the request, retries included, after 10s",
    after: "a ServiceProfile route without `timeout` has none",
    source: "linkerd/linkerd2#4958",
};

/// google-api-core, which runs the retries the generated Google client libraries configure.
pub(crate) const GOOGLE_API_CORE: Consumer = Consumer {
    name: "google-api-core",
    title: "google-api-core",
    newest: Version::new(2, 44, 0),
    changes: &[&GOOGLE_API_CORE_FULL_JITTER, &GOOGLE_API_CORE_FIRST_WAIT_CAPPED],
};

/// 2.11 rewrote the retry loop (googleapis/python-api-core#462; on the 1.x line 1.34).
pub(crate) const GOOGLE_API_CORE_FULL_JITTER: Change = Change {
    since: Version::new(2, 11, 0),
    before: "retry n sleeps min(U(0, 2 · initial · multiplier^(n−1)), maximum); the last sleep is cut to end at the \
             deadline; every attempt gets the whole timeout",
    after: "retry n sleeps U(0, min(initial · multiplier^(n−1), maximum)); it gives up rather than sleep past the \
            deadline; each attempt gets the time left",
    source: "googleapis/python-api-core#462",
};

/// From 2.16 the first wait is drawn below min(initial, maximum), not below initial.
pub(crate) const GOOGLE_API_CORE_FIRST_WAIT_CAPPED: Change = Change {
    since: Version::new(2, 16, 0),
    before: "with initialBackoff above maxBackoff the first wait is U(0, initialBackoff)",
    after: "the first wait is U(0, min(initialBackoff, maxBackoff))",
    source: "google-api-core 2.16.0 retry/retry_base.py exponential_sleep_generator",
};

/// grpc-go's backoff jitter.
pub(crate) const GRPC_GO: Consumer =
    Consumer { name: "grpc-go", title: "grpc-go", newest: Version::new(1, 77, 0), changes: &[&GRPC_GO_TWENTY_PERCENT] };

pub(crate) const GRPC_GO_TWENTY_PERCENT: Change = Change {
    since: Version::new(1, 69, 0),
    before: "retry n waits U(0, min(initialBackoff · multiplier^(n−1), maxBackoff)): full jitter",
    after: "retry n waits U(0.8, 1.2) × min(initialBackoff · multiplier^(n−1), maxBackoff)",
    source: "grpc/grpc-go#7869 (gRFC A6 as revised by grpc/proposal#452)",
};

/// grpc-java's backoff jitter: full jitter, then by mistake U(0.4, 1.2), then ±20%.
pub(crate) const GRPC_JAVA: Consumer = Consumer {
    name: "grpc-java",
    title: "grpc-java",
    newest: Version::new(1, 80, 0),
    changes: &[&GRPC_JAVA_FORTY_PERCENT, &GRPC_JAVA_TWENTY_PERCENT],
};

pub(crate) const GRPC_JAVA_FORTY_PERCENT: Change = Change {
    since: Version::new(1, 71, 0),
    before: GRPC_GO_TWENTY_PERCENT.before,
    after: "retry n waits U(0.4, 1.2) × min(initialBackoff · multiplier^(n−1), maxBackoff)",
    source: "grpc/grpc-java#11858",
};

pub(crate) const GRPC_JAVA_TWENTY_PERCENT: Change = Change {
    since: Version::new(1, 80, 0),
    before: GRPC_JAVA_FORTY_PERCENT.after,
    after: GRPC_GO_TWENTY_PERCENT.after,
    source: "grpc/grpc-java#12639",
};

/// grpc-js (Node.js): full jitter until 1.13, ±20% from 1.14.
pub(crate) const GRPC_JS: Consumer =
    Consumer { name: "grpc-js", title: "grpc-js", newest: Version::new(1, 14, 0), changes: &[&GRPC_JS_TWENTY_PERCENT] };

pub(crate) const GRPC_JS_TWENTY_PERCENT: Change = Change {
    since: Version::new(1, 14, 0),
    before: GRPC_GO_TWENTY_PERCENT.before,
    after: GRPC_GO_TWENTY_PERCENT.after,
    source: "grpc/grpc-node commit 82b331d9",
};

/// gRPC's C core (grpcio, C++, Ruby, PHP): ±20% in every release with retries.
pub(crate) const GRPC_CORE: Consumer =
    Consumer { name: "grpc-core", title: "the gRPC C core", newest: Version::new(1, 85, 0), changes: &[] };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_and_order_by_their_numbers() {
        assert_eq!(Version::parse("1.24"), Some(Version::new(1, 24, 0)));
        assert_eq!(Version::parse(" v1.9.3 "), Some(Version::new(1, 9, 3)));
        assert_eq!(Version::parse("2"), Some(Version::new(2, 0, 0)));
        for bad in ["", "1.", ".1", "1.2.3.4", "1.x", "one", "1..2", "-1"] {
            assert_eq!(Version::parse(bad), None, "{bad:?}");
        }
        assert!(Version::parse("1.9").unwrap() < Version::parse("1.10").unwrap());
        assert_eq!(Version::new(1, 24, 0).to_string(), "1.24");
        assert_eq!(Version::new(1, 24, 3).to_string(), "1.24.3");
    }

    #[test]
    fn a_range_says_which_side_of_a_change_a_release_is() {
        let since = ISTIO_NO_503_BY_DEFAULT.since;
        assert_eq!(ISTIO.range(Version::new(1, 23, 9), since), "Istio before 1.24");
        assert_eq!(ISTIO.range(Version::new(1, 24, 0), since), "Istio 1.24 or later");
        assert_eq!(ISTIO.range(Version::new(1, 30, 0), since), "Istio 1.24 or later");
    }

    #[test]
    fn pins_name_a_known_consumer_once_with_a_release() {
        let pins = parse_pins(["istio=1.22, grpc-go=1.68", ""]).unwrap();
        assert_eq!(pins.len(), 2);
        assert_eq!((pins[0].consumer.name, pins[0].version), ("istio", Version::new(1, 22, 0)));
        assert_eq!((pins[1].consumer.name, pins[1].version), ("grpc-go", Version::new(1, 68, 0)));
        let error = parse_pins(["istio"]).unwrap_err();
        assert!(error.contains("NAME=VERSION"), "{error}");
        let error = parse_pins(["istoi=1.2"]).unwrap_err();
        assert!(
            error.contains("no consumer \"istoi\"")
                && error.contains("\n  istio            newest checked 1.30; defaults changed in 1.24\n"),
            "{error}"
        );
        let error = parse_pins(["istio=latest"]).unwrap_err();
        assert!(error.contains("\"latest\" is not a release number") && error.contains("1.30"), "{error}");
        let error = parse_pins(["istio=1.22", "istio=1.23"]).unwrap_err();
        assert!(error.contains("istio is given two releases"), "{error}");
    }

    #[test]
    fn the_docs_list_every_release_change_the_import_knows() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/import.md")).unwrap();
        let table = changes_table();
        assert!(docs.contains(&table), "docs/import.md's table of releases should read:\n{table}");
    }
}
