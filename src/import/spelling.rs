//! Other spellings of a field that a consumer reads as the same field. protobuf's JSON reader (Envoy) takes a
//! field by its proto name (`retry_policy`) or its JSON name (`retryPolicy`); golang/protobuf's jsonpb (Istio)
//! the same the other way round. A format translates what the consumer runs, so it reads both, renaming each key
//! to the spelling its rules use before anything else looks at the file.

use super::Problem;
use super::doc::{Node, Value};

/// What the consumer does with a mapping that names one field in both spellings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnBoth {
    /// Refuses the file (protobuf's JSON reader: "has already been set").
    Refuse,
    /// Keeps the value under the canonical spelling and drops the other (jsonpb).
    KeepCanonical,
}

/// `retryPolicy` → `retry_policy`: a lowerCamelCase JSON name as its proto field name.
pub(crate) fn snake_case(name: &str) -> String {
    let mut snake = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    snake
}

/// `per_try_timeout` → `perTryTimeout`: a proto field name as its lowerCamelCase JSON name.
pub(crate) fn lower_camel(name: &str) -> String {
    let mut camel = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                camel.push(c.to_ascii_uppercase());
                upper = false;
            }
            c => camel.push(c),
        }
    }
    camel
}

/// Renames every key of `node`'s mappings (at any depth) that is not in `known` but whose `canonical` spelling
/// is, so the format reads one spelling; a mapping that names one field in both spellings is refused or keeps the
/// canonical one, as `on_both` says. `consumer` names who reads it that way, for the message.
pub(crate) fn respell(
    node: &mut Node,
    known: &[&str],
    canonical: fn(&str) -> String,
    on_both: OnBoth,
    consumer: &str,
) -> Result<(), Problem> {
    match &mut node.value {
        Value::Map(entries) => {
            let mut index = 0;
            while index < entries.len() {
                let key = entries[index].0.clone();
                let respelled = canonical(&key);
                if !known.contains(&key.as_str()) && respelled != key && known.contains(&respelled.as_str()) {
                    match entries.iter().position(|(other, _, _)| *other == respelled) {
                        Some(_) if on_both == OnBoth::Refuse => {
                            let message = format!(
                                "`{key}` and `{respelled}` are the same field, given twice; {consumer} refuses the \
                                 file (\"'{key}' has already been set\"): keep one"
                            );
                            return Err(Problem::new(Some(entries[index].1), &key, message));
                        }
                        Some(_) => {
                            entries.remove(index);
                            continue;
                        }
                        None => entries[index].0 = respelled,
                    }
                }
                index += 1;
            }
            for (_, _, value) in entries.iter_mut() {
                respell(value, known, canonical, on_both, consumer)?;
            }
        }
        Value::List(items) => {
            for item in items {
                respell(item, known, canonical, on_both, consumer)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::doc;

    #[test]
    fn names_convert_both_ways() {
        assert_eq!(snake_case("retryPolicy"), "retry_policy");
        assert_eq!(snake_case("hostSelectionRetryMaxAttempts"), "host_selection_retry_max_attempts");
        assert_eq!(snake_case("timeout"), "timeout");
        assert_eq!(lower_camel("per_try_timeout"), "perTryTimeout");
        assert_eq!(lower_camel("attempts"), "attempts");
    }

    #[test]
    fn another_spelling_is_renamed_at_any_depth_and_twice_one_field_is_refused_or_kept_once() {
        let known = ["virtual_hosts", "retry_policy", "num_retries", "routes"];
        let mut tree = doc::parse("virtualHosts:\n- routes:\n  - retryPolicy: {numRetries: 2}\n").unwrap().remove(0);
        respell(&mut tree, &known, snake_case, OnBoth::Refuse, "Envoy").unwrap();
        let policy = &tree.get("virtual_hosts").unwrap();
        let doc::Value::List(hosts) = &policy.value else { panic!("{policy:?}") };
        let doc::Value::List(routes) = &hosts[0].get("routes").unwrap().value else { panic!() };
        assert_eq!(routes[0].get("retry_policy").unwrap().get("num_retries").unwrap().value, doc::Value::Integer(2));
        // A key with no known spelling is left as it is.
        let mut other = doc::parse("typedConfig: {}\n").unwrap().remove(0);
        respell(&mut other, &known, snake_case, OnBoth::Refuse, "Envoy").unwrap();
        assert!(other.get("typedConfig").is_some());

        let twice = "retry_policy: {num_retries: 1}\nretryPolicy: {num_retries: 2}\n";
        let mut tree = doc::parse(twice).unwrap().remove(0);
        let error = respell(&mut tree, &known, snake_case, OnBoth::Refuse, "Envoy").unwrap_err();
        assert_eq!((error.field.as_str(), error.at.unwrap().line), ("retryPolicy", 2));
        assert!(error.message.contains("Envoy refuses the file"), "{}", error.message);
        let mut tree = doc::parse("perTryTimeout: 1s\nper_try_timeout: 2s\n").unwrap().remove(0);
        respell(&mut tree, &["perTryTimeout"], lower_camel, OnBoth::KeepCanonical, "Istio").unwrap();
        assert_eq!(tree.get("perTryTimeout").unwrap().value, doc::Value::Text("1s".into()));
        let doc::Value::Map(entries) = &tree.value else { panic!() };
        assert_eq!(entries.len(), 1);
    }
}
