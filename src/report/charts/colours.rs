//! One colour per series name, the same in every chart, in report.html and in the notebooks: the table is
//! `assets/colours.json`, compiled in here and read by the notebooks. A name the table lists always has its
//! colour; any other name takes the fallback colour its stable hash (FNV-1a, 64 bits) picks, or, when another
//! series of the same chart already has that colour, the first free one. The colours are Tableau 10.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use plotters::style::RGBColor;
use serde::Deserialize;

/// The table, as the notebooks read it too.
pub(in crate::report) const TABLE: &str = include_str!("../../../assets/colours.json");

#[derive(Deserialize)]
struct Table {
    named: BTreeMap<String, String>,
    fallback: Vec<String>,
}

struct Colours {
    named: BTreeMap<String, RGBColor>,
    fallback: Vec<RGBColor>,
}

/// `#rrggbb` as a colour; the table is compiled in and checked by a test, so a bad entry reads as grey.
fn parse_hex(text: &str) -> RGBColor {
    let channel = |i: usize| text.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()).unwrap_or(127);
    RGBColor(channel(1), channel(3), channel(5))
}

fn colours() -> &'static Colours {
    static COLOURS: OnceLock<Colours> = OnceLock::new();
    COLOURS.get_or_init(|| {
        let table: Table =
            serde_json::from_str(TABLE).unwrap_or(Table { named: BTreeMap::new(), fallback: vec!["#7f7f7f".into()] });
        Colours {
            named: table.named.iter().map(|(name, hex)| (name.clone(), parse_hex(hex))).collect(),
            fallback: table.fallback.iter().map(|hex| parse_hex(hex)).collect(),
        }
    })
}

/// FNV-1a, 64 bits, of `name`'s UTF-8 bytes: the same on every machine and in the notebooks.
fn fnv1a(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// The colour `name` has when nothing else in its chart claims it.
pub(in crate::report) fn preferred(name: &str) -> RGBColor {
    let colours = colours();
    colours.named.get(name).copied().unwrap_or_else(|| {
        let fallback = &colours.fallback;
        fallback[(fnv1a(name) % fallback.len() as u64) as usize]
    })
}

/// The colours of the series `names` of one chart, in order: equal names share a colour, names in the table
/// keep theirs, and the others take their preferred colour unless an earlier series has it (then the first
/// free fallback colour; when every colour is taken, the preferred one again).
pub(in crate::report) fn assign<S: AsRef<str>>(names: &[S]) -> Vec<RGBColor> {
    let colours = colours();
    let mut distinct: Vec<&str> = Vec::new();
    for name in names {
        if !distinct.contains(&name.as_ref()) {
            distinct.push(name.as_ref());
        }
    }
    let mut chosen: Vec<Option<RGBColor>> = vec![None; distinct.len()];
    let mut taken: Vec<RGBColor> = Vec::new();
    // Named series first, so that a hashed name never takes a colour the table gives another series here.
    for (i, name) in distinct.iter().enumerate() {
        if let Some(colour) = colours.named.get(*name).filter(|colour| !taken.contains(colour)) {
            chosen[i] = Some(*colour);
            taken.push(*colour);
        }
    }
    for (i, name) in distinct.iter().enumerate() {
        if chosen[i].is_some() {
            continue;
        }
        let wanted = preferred(name);
        let colour = if taken.contains(&wanted) {
            colours.fallback.iter().copied().find(|c| !taken.contains(c)).unwrap_or(wanted)
        } else {
            wanted
        };
        chosen[i] = Some(colour);
        taken.push(colour);
    }
    names
        .iter()
        .map(|name| {
            let index = distinct.iter().position(|d| *d == name.as_ref()).unwrap_or(0);
            chosen[index].unwrap_or_else(|| preferred(name.as_ref()))
        })
        .collect()
}

/// `#rrggbb`, as CSS and the table write a colour.
pub(in crate::report) fn hex(colour: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", colour.0, colour.1, colour.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_its_strategies_have_distinct_colours() {
        let table: Table = serde_json::from_str(TABLE).unwrap();
        assert_eq!(table.fallback.len(), 10);
        for hex_text in table.named.values().chain(&table.fallback) {
            assert_eq!(hex(parse_hex(hex_text)), *hex_text, "written as #rrggbb in lower case");
        }
        let strategies = ["none", "exponential", "full-jitter", "decorrelated-jitter", "equal-jitter"];
        let mut seen: Vec<RGBColor> = strategies.iter().map(|s| colours().named[*s]).collect();
        seen.dedup();
        assert_eq!(seen.len(), strategies.len());
    }

    #[test]
    fn a_strategy_keeps_its_colour_whatever_else_the_chart_holds() {
        let four = assign(&["none", "exponential", "full-jitter", "decorrelated-jitter"]);
        let one = assign(&["exponential", "none"]);
        let other = assign(&["decorrelated-jitter", "aws-sdk-standard", "exponential"]);
        assert_eq!(four[1], one[0]);
        assert_eq!(four[1], other[2]);
        assert_eq!(hex(four[1]), "#ff7f0e");
    }

    #[test]
    fn unnamed_series_hash_to_a_colour_and_never_share_one_in_a_chart() {
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c, "the published FNV-1a test vector");
        assert_eq!(preferred("visibility-timeout"), preferred("visibility-timeout"));
        let names: Vec<String> = (0..10).map(|i| format!("value-{i}")).collect();
        let mut assigned = assign(&names);
        assert_eq!(assigned[3], assign(&names)[3], "stable");
        assigned.sort_by_key(|c| (c.0, c.1, c.2));
        assigned.dedup();
        assert_eq!(assigned.len(), 10, "ten series, ten colours");
        assert_eq!(assign(&["x", "x"])[0], assign(&["x", "x"])[1], "equal names share a colour");
    }
}
