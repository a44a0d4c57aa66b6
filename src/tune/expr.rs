//! Parses the objective and constraints of `retrylab tune`: linear expressions over metric names such as
//! `calls + 0.01 * latency_p99_ms` and inequalities such as `success_rate >= 0.999`.
//! Grammar: `sum = product (("+"|"-") product)*`, `product = factor (("*"|"/") factor)*`,
//! `factor = "-" factor | number | metric | "(" sum ")"`, `constraint = sum (">="|"<="|"≥"|"≤") sum`.

use std::fmt;

/// A weighted sum of metrics plus a constant: Σ coefficient · metric + constant.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Objective {
    /// Each metric once, with its non-zero coefficient, in order of first appearance.
    pub(crate) terms: Vec<(f64, String)>,
    /// The part that names no metric.
    pub(crate) constant: f64,
}

/// The direction of a constraint's inequality.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comparison {
    /// `>=`: the left side must be at least the bound.
    AtLeast,
    /// `<=`: the left side must be at most the bound.
    AtMost,
}

/// A linear inequality `lhs >= bound` or `lhs <= bound`, with every metric moved to the left side.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Constraint {
    /// The metrics, with a zero constant.
    pub(crate) lhs: Objective,
    /// Whether `lhs` must stay at or above, or at or below, `bound`.
    pub(crate) op: Comparison,
    /// The constant the left side is compared with.
    pub(crate) bound: f64,
}

/// A parse error at a 1-based character column of the expression text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExprError {
    /// The offending token's first character, counted in characters from 1 (one past the end for an early end).
    pub(crate) column: usize,
    /// What was wrong and what would be valid there.
    pub(crate) message: String,
}

/// Parses a linear objective over `metrics`; it must name at least one of them.
pub(crate) fn parse_objective(text: &str, metrics: &[&str]) -> Result<Objective, ExprError> {
    let mut parser = Parser::new(text, metrics, "calls + 0.01 * latency_p99_ms")?;
    let objective = parser.sum()?;
    parser.follow(Some("an objective is a weighted sum, not a comparison; write conditions as constraints"))?;
    named(objective, "the objective names no metric; name at least one metric, e.g. \"calls + 0.01 * latency_p99_ms\"")
}

/// Parses `expr >= expr` or `expr <= expr`, moving every metric to the left and every constant to the right.
pub(crate) fn parse_constraint(text: &str, metrics: &[&str]) -> Result<Constraint, ExprError> {
    let mut parser = Parser::new(text, metrics, "success_rate >= 0.999")?;
    let mut lhs = parser.sum()?;
    let cmp = parser.tokens[parser.pos];
    let Some(op) = parser.follow(None)? else { unreachable!("follow(None) returns a comparison or an error") };
    let rhs = parser.sum()?;
    parser.follow(Some("a constraint has exactly one comparison"))?;
    lhs.add(rhs, -1.0);
    lhs = lhs.finite(cmp)?;
    let bound = 0.0 - lhs.constant;
    lhs.constant = 0.0;
    let lhs = named(lhs, "the constraint names no metric (or they cancel out); name at least one metric")?;
    Ok(Constraint { lhs, op, bound })
}

impl Objective {
    /// The objective's value given each metric's value.
    pub(crate) fn eval(&self, value_of: impl Fn(&str) -> f64) -> f64 {
        self.terms.iter().fold(self.constant, |sum, (coefficient, name)| sum + coefficient * value_of(name))
    }

    /// The least and greatest values the expression takes when each metric stays within `range_of(metric)`:
    /// Σ min/max(c·lo, c·hi) + constant, interval arithmetic over the terms.
    pub(crate) fn range(&self, range_of: impl Fn(&str) -> (f64, f64)) -> (f64, f64) {
        self.terms.iter().fold((self.constant, self.constant), |(least, greatest), (coefficient, name)| {
            let (lo, hi) = range_of(name);
            let (a, b) = (coefficient * lo, coefficient * hi);
            (least + a.min(b), greatest + a.max(b))
        })
    }

    fn add(&mut self, other: Objective, sign: f64) {
        self.constant += sign * other.constant;
        for (coefficient, name) in other.terms {
            match self.terms.iter_mut().find(|(_, seen)| *seen == name) {
                Some(term) => term.0 += sign * coefficient,
                None => self.terms.push((sign * coefficient, name)),
            }
        }
    }

    fn map(mut self, f: impl Fn(f64) -> f64) -> Objective {
        self.constant = f(self.constant);
        self.terms.iter_mut().for_each(|term| term.0 = f(term.0));
        self
    }

    /// `self`, or an error at `op` if a number overflowed.
    fn finite(self, op: Token) -> Result<Objective, ExprError> {
        if self.constant.is_finite() && self.terms.iter().all(|(coefficient, _)| coefficient.is_finite()) {
            return Ok(self);
        }
        fail(op, "the result is too large to represent; use smaller numbers")
    }
}

impl Constraint {
    /// Whether the constraint is satisfied given each metric's value.
    pub(crate) fn holds(&self, value_of: impl Fn(&str) -> f64) -> bool {
        self.slack(value_of) >= 0.0
    }

    /// Whether some values of the metrics, each within `range_of(metric)`, meet the constraint.
    pub(crate) fn can_hold(&self, range_of: impl Fn(&str) -> (f64, f64)) -> bool {
        let (least, greatest) = self.lhs.range(range_of);
        match self.op {
            Comparison::AtLeast => greatest >= self.bound,
            Comparison::AtMost => least <= self.bound,
        }
    }

    /// How far inside its bound the left side is: non-negative exactly when the constraint holds.
    pub(crate) fn slack(&self, value_of: impl Fn(&str) -> f64) -> f64 {
        let value = self.lhs.eval(value_of);
        match self.op {
            Comparison::AtLeast => value - self.bound,
            Comparison::AtMost => self.bound - value,
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &(coefficient, ref name)) in self.terms.iter().enumerate() {
            let sign = [["", "-"], [" + ", " - "]][usize::from(i > 0)][usize::from(coefficient < 0.0)];
            match coefficient.abs() {
                1.0 => write!(f, "{sign}{name}")?,
                size => write!(f, "{sign}{size} * {name}")?,
            }
        }
        match self.constant {
            constant if self.terms.is_empty() => write!(f, "{constant}"),
            0.0 => Ok(()),
            constant if constant < 0.0 => write!(f, " - {}", -constant),
            constant => write!(f, " + {constant}"),
        }
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = if self.op == Comparison::AtLeast { ">=" } else { "<=" };
        write!(f, "{} {op} {}", self.lhs, self.bound)
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for ExprError {}

/// `objective` without its zero terms, or an error with `message` if no metric is left.
fn named(mut objective: Objective, message: &str) -> Result<Objective, ExprError> {
    objective.terms.retain(|(coefficient, _)| *coefficient != 0.0);
    if objective.terms.is_empty() {
        return Err(ExprError { column: 1, message: message.to_owned() });
    }
    Ok(objective)
}

fn fail<T>(token: Token, message: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError { column: token.start + 1, message: message.into() })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Num(f64),
    Ident,
    /// Any other single character, operators and parentheses included.
    Char(char),
    /// A comparison; `None` for the refused `>`, `<`, `=`, `==` and `!=`.
    Cmp(Option<Comparison>),
    End,
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

/// The longest expression accepted.
const MAX_CHARS: usize = 1_000;

struct Parser<'a> {
    chars: Vec<char>,
    tokens: Vec<Token>,
    pos: usize,
    metrics: &'a [&'a str],
}

impl<'a> Parser<'a> {
    fn new(text: &str, metrics: &'a [&'a str], example: &str) -> Result<Self, ExprError> {
        if text.trim().is_empty() {
            let message = format!("the expression is empty; write e.g. \"{example}\"");
            return Err(ExprError { column: 1, message });
        }
        let chars: Vec<char> = text.chars().collect();
        if chars.len() > MAX_CHARS {
            // The parser recurses once per "(" or "-": a bound on the length bounds its depth.
            let message = format!("an expression is at most {MAX_CHARS} characters long; this one has {}", chars.len());
            return Err(ExprError { column: MAX_CHARS + 1, message });
        }
        let tokens = lex(&chars)?;
        Ok(Parser { chars, tokens, pos: 0, metrics })
    }

    fn bump(&mut self) -> Token {
        let token = self.tokens[self.pos];
        self.pos += usize::from(token.kind != Kind::End);
        token
    }

    fn text(&self, token: Token) -> String {
        self.chars[token.start..token.end].iter().collect()
    }

    fn found(&self, token: Token) -> String {
        match self.text(token).as_str() {
            "" => "the end of the expression".to_owned(),
            text => format!("\"{text}\""),
        }
    }

    fn sum(&mut self) -> Result<Objective, ExprError> {
        let mut sum = self.product()?;
        while let Kind::Char(sign @ ('+' | '-')) = self.tokens[self.pos].kind {
            let op = self.bump();
            sum.add(self.product()?, if sign == '+' { 1.0 } else { -1.0 });
            sum = sum.finite(op)?;
        }
        Ok(sum)
    }

    fn product(&mut self) -> Result<Objective, ExprError> {
        let (mut product, _) = self.factor()?;
        while let Kind::Char(op @ ('*' | '/')) = self.tokens[self.pos].kind {
            let op_token = self.bump();
            let (factor, at) = self.factor()?;
            let linear = "the objective is linear: a weighted sum of metrics";
            product = match (op, product.terms.is_empty(), factor.terms.is_empty()) {
                ('*', false, false) => return fail(at, format!("cannot multiply two metrics; {linear}")),
                ('*', true, _) => factor.map(|x| x * product.constant),
                ('*', false, true) => product.map(|x| x * factor.constant),
                (_, _, false) => {
                    return fail(at, format!("cannot divide by a metric; {linear}, so divide by a number"));
                }
                _ if factor.constant == 0.0 => return fail(at, "division by zero; divide by a non-zero number"),
                _ => product.map(|x| x / factor.constant),
            }
            .finite(op_token)?;
        }
        Ok(product)
    }

    fn factor(&mut self) -> Result<(Objective, Token), ExprError> {
        let token = self.bump();
        let value = match token.kind {
            Kind::Char('-') => self.factor()?.0.map(|x| -x),
            Kind::Num(constant) => Objective { terms: Vec::new(), constant },
            Kind::Ident => Objective { terms: vec![(1.0, self.metric(token)?)], constant: 0.0 },
            Kind::Char('(') => {
                let inner = self.sum()?;
                let close = self.bump();
                if close.kind != Kind::Char(')') {
                    let (open, found) = (token.start + 1, self.found(close));
                    return fail(close, format!("expected \")\" to close the \"(\" at column {open}, found {found}"));
                }
                inner
            }
            _ => {
                let found = self.found(token);
                return fail(token, format!("expected a number, a metric name or \"(\" here, found {found}"));
            }
        };
        Ok((value, token))
    }

    fn metric(&self, token: Token) -> Result<String, ExprError> {
        let name = self.text(token);
        if self.metrics.contains(&name.as_str()) {
            return Ok(name);
        }
        // Close means a small edit distance, or one name extending the other by whole words (`calls_total`).
        let limit = 2.max(name.chars().count() / 3);
        let extends = |long: &str, short: &str| long.strip_prefix(short).is_some_and(|rest| rest.starts_with('_'));
        let closest = (self.metrics.iter())
            .map(|metric| (levenshtein(&name, metric), metric))
            .filter(|(distance, metric)| *distance <= limit || extends(&name, metric) || extends(metric, &name))
            .min_by_key(|(distance, _)| *distance);
        let suggestion = closest.map(|(_, metric)| format!("; did you mean \"{metric}\"?")).unwrap_or_default();
        let listed = self.metrics.iter().take(12).copied().collect::<Vec<_>>().join(", ");
        let listed = if listed.is_empty() { "none" } else { &listed };
        let more = if self.metrics.len() > 12 { ", … (see `retrylab metrics`)" } else { "" };
        fail(token, format!("unknown metric \"{name}\"{suggestion} (metrics: {listed}{more})"))
    }

    /// Reads what may follow a complete expression: the end, or with no `stray` hint, a comparison.
    fn follow(&mut self, stray: Option<&str>) -> Result<Option<Comparison>, ExprError> {
        let token = self.bump();
        let (found, either) = (self.found(token), "\">=\" or \"<=\"");
        let message = match (token.kind, stray) {
            (Kind::End, Some(_)) => return Ok(None),
            (Kind::Cmp(Some(op)), None) => return Ok(Some(op)),
            (Kind::Cmp(None), None) => format!("{found} is not accepted; write {either} (bounds are inclusive)"),
            (Kind::Cmp(_), Some(hint)) => format!("unexpected {found} after the end of the expression; {hint}"),
            (Kind::Char(')'), _) => "unexpected \")\" with no matching \"(\"; remove it or add a \"(\"".to_owned(),
            (Kind::End, None) => format!("expected {either} here, found {found}; write e.g. \"success_rate >= 0.999\""),
            (_, None) => format!("unexpected {found}; expected +, -, *, /, {either}"),
            (_, Some(_)) => format!("unexpected {found} after the end of the expression; expected +, -, * or /"),
        };
        fail(token, message)
    }
}

fn lex(chars: &[char]) -> Result<Vec<Token>, ExprError> {
    let mut tokens = Vec::new();
    let mut i = 0;
    let run = |mut i: usize, more: fn(&char) -> bool| {
        while chars.get(i).is_some_and(more) {
            i += 1;
        }
        i
    };
    while i < chars.len() {
        let (start, c) = (i, chars[i]);
        i += 1;
        let kind = match c {
            c if c.is_whitespace() => continue,
            '≥' => Kind::Cmp(Some(Comparison::AtLeast)),
            '≤' => Kind::Cmp(Some(Comparison::AtMost)),
            '>' | '<' | '=' | '!' => {
                let equals = chars.get(i) == Some(&'=');
                i += usize::from(equals);
                match (c, equals) {
                    ('>', true) => Kind::Cmp(Some(Comparison::AtLeast)),
                    ('<', true) => Kind::Cmp(Some(Comparison::AtMost)),
                    ('!', false) => Kind::Char('!'),
                    _ => Kind::Cmp(None),
                }
            }
            c if c.is_alphabetic() || c == '_' => {
                i = run(i, |c| c.is_alphanumeric() || *c == '_');
                Kind::Ident
            }
            c if c.is_ascii_digit() || (c == '.' && chars.get(i).is_some_and(char::is_ascii_digit)) => {
                // Digits with underscores, an optional fraction, an optional exponent.
                let digits = |c: &char| c.is_ascii_digit() || *c == '_';
                i = run(start, digits);
                if chars.get(i) == Some(&'.') {
                    i = run(i + 1, digits);
                }
                let sign = usize::from(matches!(chars.get(i + 1), Some('+' | '-')));
                let exponent = chars.get(i + 1 + sign).is_some_and(char::is_ascii_digit);
                if exponent && matches!(chars.get(i), Some('e' | 'E')) {
                    i = run(i + 1 + sign, digits);
                }
                let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
                let value = text.parse().unwrap_or(f64::NAN);
                if !value.is_finite() {
                    let message = format!("the number {text} is not a finite f64; write e.g. 0.01, 1e-3 or 2_000");
                    return Err(ExprError { column: start + 1, message });
                }
                Kind::Num(value)
            }
            c => Kind::Char(c),
        };
        tokens.push(Token { kind, start, end: i });
    }
    tokens.push(Token { kind: Kind::End, start: chars.len(), end: chars.len() });
    Ok(tokens)
}

/// The Levenshtein distance between `a` and `b`, counted in characters.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: &[&str] = &["calls", "latency_p99_ms", "success_rate", "gave_up"];

    fn value_of(name: &str) -> f64 {
        METRICS.iter().position(|metric| *metric == name).map_or(f64::NAN, |i| [100.0, 250.0, 0.9995, 4.0][i])
    }

    #[test]
    fn a_huge_expression_is_refused_before_it_is_parsed() {
        let nested = format!("{}calls{}", "(".repeat(50_000), ")".repeat(50_000));
        let error = parse_objective(&nested, &["calls"]).unwrap_err();
        assert_eq!(error.column, MAX_CHARS + 1);
        assert!(error.message.contains("at most 1000 characters"), "{}", error.message);
        let deep = format!("{}calls{}", "(".repeat(400), ")".repeat(400));
        assert_eq!(parse_objective(&deep, &["calls"]).unwrap().terms, vec![(1.0, "calls".to_owned())]);
    }

    #[test]
    fn objectives_parse_merge_evaluate_and_round_trip() {
        let merged = parse_objective("gave_up + calls + 2*gave_up - calls/2 - 1", METRICS).unwrap();
        let terms = vec![(3.0, "gave_up".to_owned()), (0.5, "calls".to_owned())];
        assert_eq!(merged, Objective { terms, constant: -1.0 });
        let cases = [
            ("calls + 0.01*latency_p99_ms", "calls + 0.01 * latency_p99_ms", 102.5),
            ("2*(calls - gave_up)/3 + 5", "0.6666666666666666 * calls - 0.6666666666666666 * gave_up + 5", 69.0),
            ("-success_rate", "-success_rate", -0.9995),
            ("2 * -calls - -(1)", "-2 * calls + 1", -199.0),
            ("1e-3 * calls + 2_000 + .5 + 1.5E+2", "0.001 * calls + 2150.5", 2150.6),
            ("calls - calls + gave_up - 1/4", "gave_up - 0.25", 3.75),
        ];
        for (text, shown, value) in cases {
            let objective = parse_objective(text, METRICS).unwrap();
            assert_eq!(objective.to_string(), shown);
            assert!((objective.eval(value_of) - value).abs() < 1e-9, "{text}");
            assert_eq!(parse_objective(shown, METRICS).unwrap(), objective, "{text}");
        }
    }

    #[test]
    fn constraints_move_metrics_left_and_round_trip() {
        let both = parse_constraint("calls + 2 <= 3 * gave_up + 10", METRICS).unwrap();
        let terms = vec![(1.0, "calls".to_owned()), (-3.0, "gave_up".to_owned())];
        let lhs = Objective { terms, constant: 0.0 };
        assert_eq!(both, Constraint { lhs, op: Comparison::AtMost, bound: 8.0 });
        let cases = [
            ("calls + 2 <= 3 * gave_up + 10", "calls - 3 * gave_up <= 8"),
            ("success_rate >= 0.999", "success_rate >= 0.999"),
            ("success_rate ≥ 1 - 1e-3", "success_rate >= 0.999"),
            ("0.5 ≤ -gave_up", "gave_up <= -0.5"),
        ];
        for (text, shown) in cases {
            let constraint = parse_constraint(text, METRICS).unwrap();
            assert_eq!(constraint.to_string(), shown);
            assert_eq!(parse_constraint(shown, METRICS).unwrap(), constraint, "{text}");
        }
    }

    #[test]
    fn slack_is_non_negative_exactly_when_the_constraint_holds() {
        let at_least = parse_constraint("success_rate >= 0.999", METRICS).unwrap();
        assert!(at_least.holds(value_of) && (at_least.slack(value_of) - 0.0005).abs() < 1e-12);
        assert!(!at_least.holds(|_| 0.99) && (at_least.slack(|_| 0.99) + 0.009).abs() < 1e-12);
        let at_most = parse_constraint("calls + 2 <= 3 * gave_up + 10", METRICS).unwrap();
        assert_eq!((at_most.slack(value_of), at_most.holds(value_of)), (-80.0, false));
        assert_eq!((at_most.slack(|_| 10.0), at_most.holds(|_| 10.0)), (28.0, true));
    }

    #[test]
    fn a_constraint_out_of_the_metrics_reach_cannot_hold() {
        let range_of = |name: &str| if name == "success_rate" { (0.0, 1.0) } else { (0.0, f64::INFINITY) };
        let holds = |text: &str| parse_constraint(text, METRICS).unwrap().can_hold(range_of);
        assert!(!holds("success_rate >= 2") && holds("success_rate >= 1") && holds("success_rate <= 0"));
        assert!(!holds("calls <= -1") && holds("calls >= 1e12") && !holds("calls + success_rate <= -0.5"));
        assert!(holds("calls - gave_up <= -5"), "a difference of unbounded counts reaches any value");
        assert!(!holds("-success_rate >= 0.5") && holds("2 * success_rate - 1 >= 0.9"));
        let objective = parse_objective("calls - 2 * success_rate + 1", METRICS).unwrap();
        assert_eq!(objective.range(range_of), (-1.0, f64::INFINITY));
    }

    #[test]
    fn errors_point_at_the_offending_column_and_say_what_fits() {
        let valid = "(metrics: calls, latency_p99_ms, success_rate, gave_up)";
        let cases = [
            ("calls_total + 1", false, 1, "unknown metric \"calls_total\"; did you mean \"calls\"? (metrics: "),
            ("2 * Latncy_p99_ms", false, 5, "did you mean \"latency_p99_ms\"?"),
            ("gave", false, 1, "did you mean \"gave_up\"?"),
            ("calls * gave_up", false, 9, "the objective is linear: a weighted sum of metrics"),
            ("calls / (gave_up + 1)", false, 9, "cannot divide by a metric"),
            ("calls / (1 - 1)", false, 9, "division by zero; divide by a non-zero number"),
            ("calls + * 2", false, 9, "expected a number, a metric name or \"(\" here, found \"*\""),
            ("calls +", false, 8, "found the end of the expression"),
            ("calls + %", false, 9, "found \"%\""),
            ("calls gave_up", false, 7, "unexpected \"gave_up\" after the end of the expression; expected +"),
            ("(calls + 1", false, 11, "expected \")\" to close the \"(\" at column 1, found the end"),
            ("calls + 1)", false, 10, "unexpected \")\" with no matching \"(\""),
            ("", false, 1, "the expression is empty; write e.g. \"calls + 0.01 * latency_p99_ms\""),
            ("   ", true, 1, "the expression is empty; write e.g. \"success_rate >= 0.999\""),
            ("1 + 2", false, 1, "name at least one metric"),
            ("calls - calls + 1", false, 1, "name at least one metric"),
            ("calls <= calls + 1", true, 1, "name at least one metric"),
            ("calls + 1e400", false, 9, "the number 1e400 is not a finite f64; write e.g. 0.01"),
            ("1e300 * 1e300 * calls", false, 7, "too large"),
            ("calls >= 3", false, 7, "write conditions as constraints"),
            ("calls + 1", true, 10, "expected \">=\" or \"<=\" here, found the end of the expression"),
            ("calls 1", true, 7, "unexpected \"1\"; expected +, -, *, /, \">=\" or \"<=\""),
            ("0 <= calls <= 10", true, 12, "a constraint has exactly one comparison"),
            ("success_rate > 0.999", true, 14, "\">\" is not accepted; write \">=\" or \"<=\""),
            ("calls < 5", true, 7, "\"<\" is not accepted; write \">=\" or \"<=\""),
            ("calls == 5", true, 7, "\"==\" is not accepted; write \">=\" or \"<=\""),
            ("calls = 5", true, 7, "\"=\" is not accepted; write \">=\" or \"<=\""),
            ("calls ≥ x", true, 9, "unknown metric \"x\""),
            ("gave_up + é_rate", false, 11, "unknown metric \"é_rate\""),
            ("calls ≥ 0.5 +", true, 14, "found the end of the expression"),
        ];
        for (text, constraint, column, part) in cases {
            let parsed = if constraint {
                parse_constraint(text, METRICS).map(drop)
            } else {
                parse_objective(text, METRICS).map(drop)
            };
            let error = parsed.unwrap_err();
            assert_eq!(error.column, column, "{text}: {error}");
            assert!(error.message.contains(part), "{text}: {error}");
            assert!(!error.message.contains("unknown metric") || error.message.ends_with(valid), "{error}");
        }
        let far = parse_objective("calls + throughput", METRICS).unwrap_err();
        assert_eq!(far.to_string(), format!("column 9: unknown metric \"throughput\" {valid}"));
    }

    #[test]
    fn long_metric_lists_stop_at_twelve() {
        let names: Vec<String> = (0..15).map(|i| format!("metric_{i}")).collect();
        let metrics: Vec<&str> = names.iter().map(String::as_str).collect();
        let error = parse_objective("metric_99x", &metrics).unwrap_err();
        assert!(error.message.ends_with("metric_10, metric_11, … (see `retrylab metrics`))"), "{}", error.message);
        assert!(!error.message.contains("metric_12"), "{}", error.message);
    }

    #[test]
    fn levenshtein_counts_characters() {
        let pairs = [("kitten", "sitting", 3), ("", "abc", 3), ("calls", "calls", 0), ("≥a", "a", 1)];
        for (a, b, distance) in pairs {
            assert_eq!(levenshtein(a, b), distance, "{a} {b}");
        }
    }
}
