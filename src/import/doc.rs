//! A configuration file as a tree whose every node knows its line and column, so an importer's message names
//! where the bad value is. YAML 1.2 (read by saphyr-parser) covers JSON too, so one reader serves every tree-shaped
//! format. Plain scalars are typed by YAML 1.2's core schema (`null`, `true`, `42`, `0.5`); quoted ones stay text.

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use crate::error::LineCol;

/// One value of the file and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub(crate) value: Value,
    pub(crate) at: LineCol,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// Keys in file order, each with where the key is written.
    Map(Vec<(String, LineCol, Node)>),
    List(Vec<Node>),
    Text(String),
    Integer(i64),
    Real(f64),
    Bool(bool),
    Null,
}

/// A syntax error: where, and what the reader expected.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SyntaxError {
    pub(crate) at: LineCol,
    pub(crate) message: String,
}

/// The most nodes one file may hold: configuration files are small, and aliases could otherwise multiply them.
const MAX_NODES: usize = 100_000;

/// Every document of `text` (a Kubernetes manifest may hold several, separated by `---`).
pub(crate) fn parse(text: &str) -> Result<Vec<Node>, SyntaxError> {
    let mut builder = Builder { stack: Vec::new(), documents: Vec::new(), nodes: 0 };
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|error| SyntaxError {
            at: at(error.marker().line(), error.marker().col()),
            message: error.info().to_owned(),
        })?;
        builder.on(event, span)?;
    }
    Ok(builder.documents)
}

fn at(line: usize, col: usize) -> LineCol {
    LineCol { line, column: col + 1 }
}

fn start_of(span: &Span) -> LineCol {
    at(span.start.line(), span.start.col())
}

/// Builds nodes from the parser's events: open maps and lists wait on a stack, a map's pending key beside it.
struct Builder {
    stack: Vec<(Node, Option<(String, LineCol)>)>,
    documents: Vec<Node>,
    nodes: usize,
}

impl Builder {
    fn on(&mut self, event: Event<'_>, span: Span) -> Result<(), SyntaxError> {
        let here = start_of(&span);
        match event {
            Event::MappingStart(..) => self.stack.push((Node { value: Value::Map(Vec::new()), at: here }, None)),
            Event::SequenceStart(..) => self.stack.push((Node { value: Value::List(Vec::new()), at: here }, None)),
            Event::MappingEnd | Event::SequenceEnd => {
                let (node, _) = self.stack.pop().expect("the parser closes only what it opened");
                self.add(node)?;
            }
            Event::Scalar(text, style, _, _) => {
                let value = if style == ScalarStyle::Plain { plain(&text) } else { Value::Text(text.into_owned()) };
                self.add(Node { value, at: here })?;
            }
            Event::Alias(_) => {
                return Err(SyntaxError {
                    at: here,
                    message: "YAML aliases (*name) are not read here; write the value out".into(),
                });
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentStart(_) | Event::DocumentEnd => {}
        }
        Ok(())
    }

    /// Puts a finished node where it belongs: a document, a list item, a map's key, or the value of that key.
    fn add(&mut self, node: Node) -> Result<(), SyntaxError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(SyntaxError { at: node.at, message: format!("more than {MAX_NODES} values in one file") });
        }
        let Some((parent, key)) = self.stack.last_mut() else {
            self.documents.push(node);
            return Ok(());
        };
        match (&mut parent.value, key.take()) {
            (Value::List(items), _) => items.push(node),
            (Value::Map(entries), Some((name, key_at))) => {
                if entries.iter().any(|(existing, _, _)| *existing == name) {
                    let message = format!("`{name}` is given twice in one mapping; keep one");
                    return Err(SyntaxError { at: key_at, message });
                }
                entries.push((name, key_at, node));
            }
            (Value::Map(_), None) => {
                let name = match node.value {
                    Value::Text(text) => text,
                    Value::Integer(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return Err(SyntaxError { at: node.at, message: "a key must be a plain value".into() }),
                };
                *key = Some((name, node.at));
            }
            _ => unreachable!("only maps and lists are pushed"),
        }
        Ok(())
    }
}

/// A plain scalar by YAML 1.2's core schema.
fn plain(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = digits.parse::<i64>()
    {
        return Value::Integer(sign * n);
    }
    let radix = |prefix: &str, radix: u32| text.strip_prefix(prefix).and_then(|d| i64::from_str_radix(d, radix).ok());
    if let Some(n) = radix("0x", 16).or_else(|| radix("0o", 8)) {
        return Value::Integer(n);
    }
    let float = digits.bytes().all(|b| b.is_ascii_digit() || b"eE+-.".contains(&b))
        && digits.bytes().any(|b| b.is_ascii_digit());
    if float && let Ok(x) = text.parse::<f64>() {
        return Value::Real(x);
    }
    match digits.to_ascii_lowercase().as_str() {
        ".inf" => Value::Real(if sign < 0 { f64::NEG_INFINITY } else { f64::INFINITY }),
        ".nan" if sign == 1 && !text.starts_with('+') => Value::Real(f64::NAN),
        _ => Value::Text(text.to_owned()),
    }
}

impl Node {
    /// The value under `key`, for a map.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(name, _, _)| name == key).map(|(_, _, node)| node),
            _ => None,
        }
    }

    /// What a message calls this value's type.
    pub(crate) fn kind(&self) -> &'static str {
        match self.value {
            Value::Map(_) => "a mapping",
            Value::List(_) => "a list",
            Value::Text(_) => "text",
            Value::Integer(_) => "an integer",
            Value::Real(_) => "a number",
            Value::Bool(_) => "a boolean",
            Value::Null => "null",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Node {
        let mut documents = parse(text).unwrap();
        assert_eq!(documents.len(), 1, "{documents:?}");
        documents.remove(0)
    }

    #[test]
    fn json_and_yaml_give_the_same_tree_with_positions() {
        let json = one("{\n  \"a\": {\"b\": [1, 2.5, \"3\", true, null]}\n}\n");
        let yaml = one("a:\n  b: [1, 2.5, \"3\", true, ~]\n");
        fn shape(node: &Node) -> String {
            match &node.value {
                Value::Map(entries) => {
                    entries.iter().map(|(key, _, value)| format!("{key}: {}", shape(value))).collect()
                }
                Value::List(items) => items.iter().map(shape).collect::<Vec<_>>().join(", "),
                other => format!("{other:?}"),
            }
        }
        assert_eq!(shape(&json), shape(&yaml));
        let b = yaml.get("a").unwrap().get("b").unwrap();
        assert_eq!(b.at, LineCol { line: 2, column: 6 });
        let Value::List(items) = &b.value else { panic!() };
        assert_eq!(items[0].value, Value::Integer(1));
        assert_eq!(items[1].value, Value::Real(2.5));
        assert_eq!(items[2].value, Value::Text("3".into()), "a quoted number stays text");
        assert_eq!(items[4].value, Value::Null);
        assert_eq!(items[2].at, LineCol { line: 2, column: 15 });
    }

    #[test]
    fn plain_scalars_follow_the_core_schema() {
        for (text, value) in [
            ("-7", Value::Integer(-7)),
            ("0x1f", Value::Integer(31)),
            ("1e3", Value::Real(1000.0)),
            ("-.inf", Value::Real(f64::NEG_INFINITY)),
            ("0.1s", Value::Text("0.1s".into())),
            ("FALSE", Value::Bool(false)),
            ("yes", Value::Text("yes".into())),
            ("1_000", Value::Text("1_000".into())),
        ] {
            assert_eq!(plain(text), value, "{text}");
        }
    }

    #[test]
    fn bad_files_are_located() {
        let error = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!((error.at, error.message.contains("`a` is given twice")), (LineCol { line: 2, column: 1 }, true));
        let error = parse("{\"a\": [1, 2}\n").unwrap_err();
        assert_eq!(error.at.line, 1, "{error:?}");
        let error = parse("a: &x 1\nb: *x\n").unwrap_err();
        assert_eq!((error.at, error.message.contains("aliases")), (LineCol { line: 2, column: 4 }, true));
        assert_eq!(parse("---\na: 1\n---\nb: 2\n").unwrap().len(), 2);
    }
}
