//! A lesson's claims, checked on the live numbers: `calls[strategy=exponential] < calls[strategy=none]` holds or
//! not on the summary the reader's own settings produced, so a claim the reader's change has broken says so. A
//! side is a metric's mean at one row (`metric[key=value,key=value]`, or `metric` in a study of one point) or a
//! number; the operators are `<`, `<=`, `>` and `>=`. The means compared are summary.csv's cells.

use serde_json::{Value, json};

/// One side of a claim.
#[derive(Clone, Debug, PartialEq)]
enum Side {
    Number(f64),
    Metric { metric: String, at: Vec<(String, String)> },
}

/// A parsed claim.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Claim {
    text: String,
    left: Side,
    operator: &'static str,
    right: Side,
}

const OPERATORS: [&str; 4] = ["<=", ">=", "<", ">"];

impl Claim {
    /// Parses `LEFT OP RIGHT`, or says what a claim looks like.
    pub(crate) fn parse(text: &str) -> Result<Claim, String> {
        let (at, operator) = OPERATORS
            .iter()
            .filter_map(|operator| text.find(operator).map(|at| (at, *operator)))
            .min_by_key(|(at, operator)| (*at, usize::MAX - operator.len()))
            .ok_or_else(|| {
                format!("{text:?}: no comparison; write e.g. calls[strategy=exponential] < calls[strategy=none]")
            })?;
        let side = |part: &str| Side::parse(part.trim()).map_err(|why| format!("{text:?}: {why}"));
        Ok(Claim {
            text: text.to_owned(),
            left: side(&text[..at])?,
            operator,
            right: side(&text[at + operator.len()..])?,
        })
    }

    /// Checks the claim on a summary table (`columns`, `rows` of cells): `{"claim", "holds", "left", "right"}`, or
    /// `"holds": null` with `"why"` when a side names no row or column of this summary.
    pub(crate) fn check(&self, columns: &[String], rows: &[Vec<String>]) -> Value {
        match (self.left.value(columns, rows), self.right.value(columns, rows)) {
            (Ok(left), Ok(right)) => {
                let holds = match self.operator {
                    "<" => left < right,
                    "<=" => left <= right,
                    ">" => left > right,
                    _ => left >= right,
                };
                json!({ "claim": self.text, "holds": holds, "left": left, "right": right })
            }
            (Err(why), _) | (_, Err(why)) => json!({ "claim": self.text, "holds": null, "why": why }),
        }
    }
}

impl Side {
    fn parse(text: &str) -> Result<Side, String> {
        if let Ok(number) = text.parse::<f64>() {
            return Ok(Side::Number(number));
        }
        let (metric, at) = match text.split_once('[') {
            Some((metric, rest)) => {
                let inside = rest.strip_suffix(']').ok_or_else(|| format!("{text:?} opens [ without closing it"))?;
                let pairs = inside
                    .split(',')
                    .map(|pair| {
                        pair.split_once('=')
                            .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
                            .ok_or_else(|| format!("{pair:?} in {text:?} is not key=value"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                (metric.trim(), pairs)
            }
            None => (text, Vec::new()),
        };
        let simple = |c: char| c.is_ascii_alphanumeric() || c == '_';
        if metric.is_empty() || !metric.chars().all(simple) {
            return Err(format!("{text:?} is neither a number nor metric[key=value]"));
        }
        Ok(Side::Metric { metric: metric.to_owned(), at })
    }

    fn value(&self, columns: &[String], rows: &[Vec<String>]) -> Result<f64, String> {
        let (metric, at) = match self {
            Side::Number(number) => return Ok(*number),
            Side::Metric { metric, at } => (metric, at),
        };
        let column = |name: &str| columns.iter().position(|column| column == name);
        let mean = column(&format!("{metric}_mean")).ok_or_else(|| format!("this model has no metric {metric}"))?;
        let mut chosen = rows
            .iter()
            .filter(|row| at.iter().all(|(key, value)| column(key).is_some_and(|index| row.get(index) == Some(value))));
        let describe = || at.iter().map(|(key, value)| format!("{key}={value}")).collect::<Vec<_>>().join(", ");
        match (chosen.next(), chosen.next()) {
            (Some(row), None) => row[mean].parse().map_err(|_| format!("{metric} is not a number at {}", describe())),
            (None, _) => Err(format!("these settings have no point {}", describe())),
            (Some(_), Some(_)) => Err(format!("{} names more than one point; add the other swept keys", describe())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary() -> (Vec<String>, Vec<Vec<String>>) {
        let columns = ["strategy", "replicates", "calls_mean"].map(String::from).to_vec();
        let rows = vec![
            ["none", "5", "198598.4"].map(String::from).to_vec(),
            ["exponential", "5", "6477.6"].map(String::from).to_vec(),
        ];
        (columns, rows)
    }

    #[test]
    fn a_claim_holds_or_not_on_the_summarys_cells() {
        let (columns, rows) = summary();
        let claim = Claim::parse("calls[strategy=exponential] < calls[strategy=none]").unwrap();
        assert_eq!(claim.check(&columns, &rows)["holds"], true);
        let check = |text: &str| Claim::parse(text).unwrap().check(&columns, &rows)["holds"].clone();
        assert_eq!(check("calls[strategy=exponential] >= calls[strategy=none]"), false);
        assert_eq!(check("calls[strategy=exponential] <= 6477.6"), true);
        assert_eq!(check("calls[strategy=exponential] > 6477.6"), false);
        assert_eq!(check("calls[strategy=none] > 6477.6"), true);
        let missing = Claim::parse("calls[strategy=full-jitter] < 1").unwrap().check(&columns, &rows);
        assert_eq!(
            (missing["holds"].clone(), missing["why"].as_str()),
            (Value::Null, Some("these settings have no point strategy=full-jitter"))
        );
        let ambiguous = Claim::parse("calls < 1").unwrap().check(&columns, &rows);
        assert!(ambiguous["why"].as_str().unwrap().contains("more than one point"));
    }

    #[test]
    fn a_malformed_claim_says_what_a_claim_looks_like() {
        assert!(Claim::parse("calls is small").unwrap_err().contains("no comparison"));
        assert!(Claim::parse("calls[strategy=none < 3").unwrap_err().contains("without closing"));
        assert!(Claim::parse("calls[strategy] < 3").unwrap_err().contains("not key=value"));
        assert!(Claim::parse("2 + 2 < 5").unwrap_err().contains("neither a number"));
        assert_eq!(Claim::parse("a<=b").unwrap().operator, "<=");
    }
}
