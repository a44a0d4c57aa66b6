//! Named parts of a model in tables of their own (`[layer.api]`, `[layer.db]`): their links, checked for
//! missing names and cycles, and their own parameter values, each error located at the offending key.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::Origin;
use super::locator::Locator;
use super::value::{convert, type_name};
use crate::error::InputError;
use crate::model::ModelKind;
use crate::params::{ParamSpec, Part, PartTable, Value};

/// Where each part and each of its values was written, for errors found later (by the model or a sweep).
#[derive(Clone, Debug)]
pub struct PartOrigins {
    pub table: Origin,
    pub values: Vec<(&'static str, Origin)>,
}

/// Reads every `[<table>.<name>]` sub-table of `value` into parts, in the order written.
pub(super) fn read_parts(
    model: ModelKind,
    spec: &'static PartTable,
    value: &Spanned<DeValue<'_>>,
    at: Locator<'_>,
) -> Result<(Vec<Part>, Vec<PartOrigins>), InputError> {
    let tables = value.get_ref().as_table().ok_or_else(|| {
        at.error(
            value.span(),
            spec.table,
            format!("expected tables like [{}.api], found {}", spec.table, type_name(value.get_ref())),
        )
    })?;
    if tables.is_empty() {
        return Err(at.error(value.span(), spec.table, format!("declare at least one [{}.<name>] table", spec.table)));
    }
    if tables.len() > spec.max_parts {
        return Err(at.error(
            value.span(),
            spec.table,
            format!("{} tables is more than this model's limit of {}", tables.len(), spec.max_parts),
        ));
    }
    let names: Vec<&str> = tables.iter().map(|(name, _)| name.get_ref().as_ref()).collect();
    let mut parts = Vec::with_capacity(tables.len());
    let mut origins = Vec::with_capacity(tables.len());
    let mut link_spans: Vec<Vec<Range<usize>>> = Vec::with_capacity(tables.len());
    for (name, body) in tables.iter() {
        let prefix = format!("{}.{}", spec.table, name.get_ref());
        let table = body.get_ref().as_table().ok_or_else(|| {
            at.error(body.span(), &prefix, format!("expected a table, found {}", type_name(body.get_ref())))
        })?;
        let (part, part_origins, spans) = read_part(model, spec, name.get_ref(), &prefix, table, &names, at)?;
        parts.push(part);
        origins.push(PartOrigins { table: at.origin(name.span()), ..part_origins });
        link_spans.push(spans);
    }
    check_acyclic(spec, &parts, &link_spans, at)?;
    check_one_entry(spec, &parts, &origins, at)?;
    Ok((parts, origins))
}

type ReadPart = (Part, PartOrigins, Vec<Range<usize>>);

fn read_part(
    model: ModelKind,
    spec: &'static PartTable,
    name: &str,
    prefix: &str,
    table: &DeTable<'_>,
    names: &[&str],
    at: Locator<'_>,
) -> Result<ReadPart, InputError> {
    let mut part = Part { name: name.to_owned(), links: Vec::new(), overrides: Vec::new() };
    let mut origins = PartOrigins { table: Origin::Default, values: Vec::new() };
    let mut link_spans = Vec::new();
    for (key, value) in table.iter() {
        let key_text = key.get_ref().as_ref();
        let dotted = format!("{prefix}.{key_text}");
        if key_text == spec.link_key {
            for (index, span) in links(spec, value, &dotted, names, at)? {
                part.links.push(index);
                link_spans.push(span);
            }
            continue;
        }
        let param = own_param(model, spec, key_text, prefix, key.span(), at)?;
        if part.overrides.iter().any(|(set, _)| std::ptr::eq(*set, param)) {
            return Err(at.error(
                key.span(),
                &dotted,
                format!("`{}` is set twice in [{prefix}] (once under its former name); keep one", param.key),
            ));
        }
        part.overrides.push((param, own_value(spec, param, value, &dotted, at)?));
        origins.values.push((param.key, at.origin(value.span())));
    }
    Ok((part, origins, link_spans))
}

/// The parts a `link_key` value names (one name or a list), with where each was written.
fn links(
    spec: &PartTable,
    value: &Spanned<DeValue<'_>>,
    dotted: &str,
    names: &[&str],
    at: Locator<'_>,
) -> Result<Vec<(usize, Range<usize>)>, InputError> {
    let items: Vec<&Spanned<DeValue<'_>>> = match value.get_ref() {
        DeValue::String(_) => vec![value],
        DeValue::Array(items) => items.iter().collect(),
        other => {
            return Err(at.error(
                value.span(),
                dotted,
                format!("expected a name or a list of names, found {}", type_name(other)),
            ));
        }
    };
    items
        .into_iter()
        .map(|item| {
            let Some(target) = item.get_ref().as_str() else {
                return Err(at.error(item.span(), dotted, "expected the name of another table, as a string"));
            };
            let index = names.iter().position(|n| *n == target).ok_or_else(|| {
                at.error(
                    item.span(),
                    dotted,
                    format!(
                        "there is no [{}.{target}]; declared: {}",
                        spec.table,
                        names.iter().map(|n| format!("{}.{n}", spec.table)).collect::<Vec<_>>().join(", ")
                    ),
                )
            })?;
            Ok((index, item.span()))
        })
        .collect()
}

/// The parameter `key` names among those a part may set for itself (by its name or its former name).
fn own_param(
    model: ModelKind,
    spec: &PartTable,
    key: &str,
    prefix: &str,
    span: Range<usize>,
    at: Locator<'_>,
) -> Result<&'static ParamSpec, InputError> {
    model.params().find(|p| p.answers_to(None, key) && spec.overridable.contains(&p.key)).ok_or_else(|| {
        let mut valid = vec![spec.link_key];
        valid.extend_from_slice(spec.overridable);
        at.error(
            span,
            &format!("{prefix}.{key}"),
            format!("unknown key `{key}` in [{prefix}]; valid keys: {}", valid.join(", ")),
        )
    })
}

/// One value a part sets for itself: a single value, never a list or range.
fn own_value(
    spec: &PartTable,
    param: &'static ParamSpec,
    value: &Spanned<DeValue<'_>>,
    dotted: &str,
    at: Locator<'_>,
) -> Result<Value, InputError> {
    let list_kind = param.kind.takes_a_list();
    if matches!(value.get_ref(), DeValue::Table(_)) || (matches!(value.get_ref(), DeValue::Array(_)) && !list_kind) {
        return Err(at.error(
            value.span(),
            dotted,
            format!(
                "a [{}.*] table takes one value per key; to sweep `{}`, set it in [model] and sweep it there",
                spec.table, param.key
            ),
        ));
    }
    convert(param, dotted, value.get_ref(), value.span(), at)
}

/// `--set TABLE.NAME.KEY=VALUE`: changes one part's links or one of its own values, checked as the file's are
/// (the graph is checked again after a change of links).
pub(super) fn set_part_key(
    model: ModelKind,
    spec: &'static PartTable,
    parts: &mut [Part],
    origins: &mut [PartOrigins],
    name_and_key: &str,
    value: &Spanned<DeValue<'_>>,
    at: Locator<'_>,
) -> Result<(), InputError> {
    let dotted = format!("{}.{name_and_key}", spec.table);
    let names: Vec<&str> = parts.iter().map(|part| part.name.as_str()).collect();
    let Some((name, key)) = name_and_key.split_once('.') else {
        return Err(at.error(0..0, &dotted, format!("expected {}.NAME.KEY=VALUE, like {0}.db.workers=4", spec.table)));
    };
    let index = names.iter().position(|n| *n == name).ok_or_else(|| {
        let declared: Vec<String> = names.iter().map(|n| format!("{}.{n}", spec.table)).collect();
        at.error(0..0, &dotted, format!("there is no [{}.{name}]; declared: {}", spec.table, declared.join(", ")))
    })?;
    if key == spec.link_key {
        parts[index].links = links(spec, value, &dotted, &names, at)?.into_iter().map(|(link, _)| link).collect();
        // A command-line locator places every error at the argument, so the links need no spans of their own.
        let spans: Vec<Vec<Range<usize>>> = parts.iter().map(|part| vec![0..0; part.links.len()]).collect();
        check_acyclic(spec, parts, &spans, at)?;
        return check_one_entry(spec, parts, origins, at);
    }
    let prefix = format!("{}.{name}", spec.table);
    let param = own_param(model, spec, key, &prefix, 0..0, at)?;
    let converted = own_value(spec, param, value, &dotted, at)?;
    let part = &mut parts[index];
    part.overrides.retain(|(set, _)| !std::ptr::eq(*set, param));
    part.overrides.push((param, converted));
    let origin = at.origin(0..0);
    origins[index].values.retain(|(set, _)| *set != param.key);
    origins[index].values.push((param.key, origin));
    Ok(())
}

/// Refuses a cycle (a part that reaches itself through its links), pointing at the link that closes it.
fn check_acyclic(
    spec: &PartTable,
    parts: &[Part],
    link_spans: &[Vec<Range<usize>>],
    at: Locator<'_>,
) -> Result<(), InputError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut marks = vec![Mark::New; parts.len()];
    // Depth-first from every part, iteratively: (part, next link to follow).
    for start in 0..parts.len() {
        if marks[start] != Mark::New {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        marks[start] = Mark::OnPath;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            let Some(&target) = parts[node].links.get(*next) else {
                marks[node] = Mark::Done;
                path.pop();
                continue;
            };
            let link = *next;
            *next += 1;
            match marks[target] {
                Mark::New => {
                    marks[target] = Mark::OnPath;
                    path.push((target, 0));
                }
                Mark::OnPath => {
                    let from = path.iter().position(|(n, _)| *n == target).unwrap_or(0);
                    let mut cycle: Vec<&str> = path[from..].iter().map(|(n, _)| parts[*n].name.as_str()).collect();
                    cycle.push(&parts[target].name);
                    return Err(at.error(
                        link_spans[node][link].clone(),
                        &format!("{}.{}.{}", spec.table, parts[node].name, spec.link_key),
                        format!(
                            "cycle in the graph: {}; a {} may not reach itself through `{}`",
                            cycle.join(" → "),
                            spec.table,
                            spec.link_key
                        ),
                    ));
                }
                Mark::Done => {}
            }
        }
    }
    Ok(())
}

/// Requires exactly one part that no other part links to: the entry.
fn check_one_entry(
    spec: &PartTable,
    parts: &[Part],
    origins: &[PartOrigins],
    at: Locator<'_>,
) -> Result<(), InputError> {
    let entries: Vec<usize> = (0..parts.len()).filter(|&i| !parts.iter().any(|p| p.links.contains(&i))).collect();
    if entries.len() == 1 {
        return Ok(());
    }
    let names: Vec<&str> = entries.iter().map(|&i| parts[i].name.as_str()).collect();
    Err(InputError::new(
        at.file,
        origins[entries[1]].table.clone(),
        Some(format!("{}.{}", spec.table, parts[entries[1]].name)),
        format!(
            "requests enter at the one [{}] that no other links to, but nothing links to {}; add it to some `{}` \
             list or remove it",
            spec.table,
            names.join(" or "),
            spec.link_key
        ),
    ))
}
