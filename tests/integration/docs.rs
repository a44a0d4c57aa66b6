//! The README and the pages under docs/ stay navigable: every relative link points at a file or folder that
//! exists, every `#fragment` names a heading of the page it points at, the README stays short enough to finish,
//! and no page cites the team's private notes instead of the primary sources in docs/references.md.
//!
//! Links are found with a small extractor rather than a Markdown parser: inline `[text](target)` and
//! `![alt](target)` outside fenced code blocks and inline code spans. Reference-style links are not used here.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The team's notes of published numbers, which are not part of this repository (spelled in two pieces so that
/// this file does not cite them either).
const PRIVATE_NOTES: &str = concat!("ANCHORS", ".md");

/// The README must fit in 15 KiB.
const README_LIMIT: usize = 15 * 1024;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/, in a stable order.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                out.push(path);
            }
        }
    }
    let mut pages = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut pages);
    pages
}

/// A fence opener or closer: up to three spaces, then three or more backticks or tildes. Returns the fence.
fn fence(line: &str) -> Option<&str> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = trimmed.len() - trimmed.trim_start_matches(marker).len();
    (run >= 3).then(|| &trimmed[..run])
}

/// The lines of `text` outside fenced code blocks, with their 1-based line numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut open: Option<&str> = None;
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        match (open, fence(line)) {
            (None, Some(opener)) => open = Some(opener),
            // A fence closes on a run of the same character at least as long as the opener, with nothing after.
            (Some(opener), Some(closer))
                if closer.starts_with(&opener[..1])
                    && closer.len() >= opener.len()
                    && line.trim().len() == closer.len() =>
            {
                open = None
            }
            (None, None) => out.push((index + 1, line)),
            _ => {}
        }
    }
    out
}

/// `line` with inline code spans (`` `…` ``, ``` ``…`` ```) blanked out, so code that looks like a link is not one.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].len() - rest[start..].trim_start_matches('`').len();
        let after = &rest[start + ticks..];
        match after.find(&"`".repeat(ticks)) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                // An unmatched run of backticks is literal text.
                out.push_str(&rest[start..start + ticks]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the inline links and images on one line of prose: whatever follows `](` up to the closing `)`,
/// without an optional `"title"` or surrounding `<…>`.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut targets = Vec::new();
    let mut rest = line.as_str();
    while let Some(start) = rest.find("](") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(')') else { break };
        let raw = after[..end].trim();
        let target = raw.split_once(" \"").map_or(raw, |(target, _title)| target);
        let target = target.trim_start_matches('<').trim_end_matches('>');
        if !target.is_empty() {
            targets.push(target.to_owned());
        }
        rest = &after[end + 1..];
    }
    targets
}

/// GitHub's anchor for a heading: lowercase; keep letters, digits, spaces, hyphens and underscores; spaces become
/// hyphens.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of every ATX heading (`#` … `######`) outside code blocks. A repeated heading gets `-1`, `-2`, …
/// as on GitHub.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let title = line[hashes..].trim().trim_end_matches('#').trim();
        let base = anchor(title);
        let count = seen.entry(base.clone()).or_insert(0);
        out.push(if *count == 0 { base.clone() } else { format!("{base}-{count}") });
        *count += 1;
    }
    out
}

fn is_external(target: &str) -> bool {
    ["http://", "https://", "mailto:"].iter().any(|scheme| target.starts_with(scheme))
}

/// Why the relative link `target` on `page` does not resolve, or `None` if it does (or is not relative).
fn link_problem(page: &Path, target: &str) -> Option<String> {
    if is_external(target) {
        return None;
    }
    let (path, fragment) = match target.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (target, None),
    };
    let linked = if path.is_empty() { page.to_path_buf() } else { page.parent().unwrap().join(path) };
    if !linked.exists() {
        return Some(format!("{} does not exist", linked.display()));
    }
    // Only fragments of Markdown pages are checked: they are the ones whose headings we can read.
    let fragment = fragment.filter(|_| linked.extension().is_some_and(|ext| ext == "md"))?;
    let headings = anchors(&fs::read_to_string(&linked).unwrap());
    (!headings.iter().any(|h| h == fragment)).then(|| format!("no heading #{fragment} in {}", linked.display()))
}

/// Every broken relative link of `page`, as "page:line: (target): why".
fn broken_links(page: &Path) -> Vec<String> {
    let text = fs::read_to_string(page).unwrap();
    let name = page.strip_prefix(root()).unwrap_or(page).display().to_string();
    let mut broken = Vec::new();
    for (line_no, line) in prose_lines(&text) {
        for target in link_targets(line) {
            if let Some(problem) = link_problem(page, &target) {
                broken.push(format!("{name}:{line_no}: ({target}): {problem}"));
            }
        }
    }
    broken
}

#[test]
fn docs_relative_links_and_fragments_resolve() {
    let pages = pages();
    assert!(pages.len() >= 9, "README.md and the docs/ pages: {pages:?}");
    let broken: Vec<String> = pages.iter().flat_map(|page| broken_links(page)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn docs_readme_stays_short() {
    let size = fs::metadata(root().join("README.md")).unwrap().len() as usize;
    assert!(
        size <= README_LIMIT,
        "README.md is {size} bytes; keep it at most {README_LIMIT} and move the rest to docs/"
    );
}

#[test]
fn docs_cite_primary_sources_not_private_notes() {
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        assert!(
            !text.contains(PRIVATE_NOTES),
            "{} mentions {PRIVATE_NOTES}; cite docs/references.md instead",
            page.display()
        );
    }
}

#[test]
fn docs_link_extractor_reads_links_and_skips_code() {
    let text = "\
See [a](a.md) and ![b](img/b.png \"title\") and [c](<c d.md#x>).
`[not](a link)` and ``[nor](this)``
```toml
[x](inside-a-fence.md)
```
~~~
[y](also-inside.md)
```
still inside the tilde fence
~~~
[after](after.md#the-end) and [web](https://example.com)
";
    let found: Vec<String> = prose_lines(text).into_iter().flat_map(|(_, line)| link_targets(line)).collect();
    assert_eq!(found, ["a.md", "img/b.png", "c d.md#x", "after.md#the-end", "https://example.com"]);
    assert!(is_external("https://example.com") && !is_external("docs/models.md"));
}

#[test]
fn docs_anchors_follow_githubs_rule() {
    assert_eq!(anchor("The AWS 2015 study, reproduced"), "the-aws-2015-study-reproduced");
    assert_eq!(anchor("occ: the AWS 2015 study"), "occ-the-aws-2015-study");
    assert_eq!(anchor("--set on the command line"), "--set-on-the-command-line");
    assert_eq!(anchor("[layer.*] tables: services_of `layers`"), "layer-tables-services_of-layers");
    let text = "# Title\n## Same\n```\n## not a heading\n```\n## Same\n#hashtag\n### Closed ###\n";
    assert_eq!(anchors(text), ["title", "same", "same-1", "closed"]);
}
