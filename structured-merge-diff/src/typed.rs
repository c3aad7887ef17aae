//! Walking two objects by their schema: mirrors structured-merge-diff's `typed`
//! package (`merge.go`'s `mergingWalker`, `compare.go`, `tofieldset.go`,
//! `remove.go`).
//!
//! - [`merge`]: the applied configuration merged into the live object. Maps
//!   merge field by field, associative lists and sets item by item (in
//!   upstream's order), and everything else (scalars, atomic lists and maps) is
//!   replaced by the configuration's value.
//! - [`compare`]: which fields a change added, removed and modified.
//! - [`to_field_set`]: the fields a value sets.
//! - [`remove_items`]: a value without the fields of a set (`RemoveItems`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::fieldpath::{Path, PathElement, Set};
use crate::schema::{Schema, kind_of};

/// Mirrors `typed.Comparison`.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Fields in the old value and not in the new.
    pub removed: Set,
    /// Leaves in both whose values differ.
    pub modified: Set,
    /// Fields in the new value and not in the old.
    pub added: Set,
}

impl Comparison {
    /// Mirrors `Comparison.IsSame`.
    pub fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }
}

/// How a node is walked.
enum Shape {
    Leaf,
    Map,
    List,
}

/// A null stands for an empty map or list here, as `deduceAtom` lets it take
/// the other side's form.
fn shape<const N: usize>(schema: &Schema, values: [Option<&Value>; N]) -> Shape {
    let all = |f: fn(&Value) -> bool| {
        values.iter().all(|v| v.is_none_or(|v| v.is_null() || f(v)))
    };
    if schema.is_granular_list() && all(Value::is_array) {
        Shape::List
    } else if schema.is_granular_map() && all(Value::is_object) {
        Shape::Map
    } else {
        Shape::Leaf
    }
}

fn is_empty(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Object(map)) => map.is_empty(),
        Some(Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    }
}

/// Mirrors `mergingWalker`: walks `lhs` and `rhs` together, building the merged
/// value (rhs wins at leaves) and, when comparing, the comparison.
struct Walker<'a> {
    comparison: Option<&'a mut Comparison>,
}

impl Walker<'_> {
    fn merge(
        &mut self,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        schema: &'static Schema,
        path: &Path,
    ) -> Option<Value> {
        if lhs.is_none() && rhs.is_none() {
            return None;
        }
        let promote = is_empty(lhs) && is_empty(rhs);
        let out = match shape(schema, [lhs, rhs]) {
            Shape::Map if !promote => Some(self.merge_map(lhs, rhs, schema, path)),
            Shape::List if !promote => Some(self.merge_list(lhs, rhs, schema, path)),
            _ => return self.leaf(lhs, rhs, path),
        };
        // `postItemHook`: a non-leaf that appeared or went away.
        if let Some(comparison) = self.comparison.as_deref_mut() {
            if lhs.is_none() {
                comparison.added.insert(path);
            } else if rhs.is_none() {
                comparison.removed.insert(path);
            }
        }
        out
    }

    /// The leaf rule: `ruleKeepRHS`, and for a comparison added, removed or
    /// modified.
    fn leaf(
        &mut self,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        path: &Path,
    ) -> Option<Value> {
        if let Some(comparison) = self.comparison.as_deref_mut() {
            match (lhs, rhs) {
                (None, _) => comparison.added.insert(path),
                (_, None) => comparison.removed.insert(path),
                (Some(l), Some(r)) if l != r => comparison.modified.insert(path),
                _ => {}
            }
        }
        rhs.or(lhs).cloned()
    }

    fn merge_map(
        &mut self,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        schema: &'static Schema,
        path: &Path,
    ) -> Value {
        let empty = Map::new();
        let lhs = lhs.and_then(Value::as_object).unwrap_or(&empty);
        let rhs = rhs.and_then(Value::as_object).unwrap_or(&empty);
        let mut out = Map::new();
        for key in lhs
            .keys()
            .chain(rhs.keys().filter(|k| !lhs.contains_key(*k)))
        {
            let child = path.child(PathElement::Field(key.clone()));
            if let Some(value) =
                self.merge(lhs.get(key), rhs.get(key), schema.field(key), &child)
            {
                out.insert(key.clone(), value);
            }
        }
        Value::Object(out)
    }

    /// Mirrors `visitListItems`: items in both are merged, the order keeps the
    /// live items and places the configuration's items as the configuration
    /// orders them.
    fn merge_list(
        &mut self,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        schema: &'static Schema,
        path: &Path,
    ) -> Value {
        let lhs: &[Value] = lhs.and_then(Value::as_array).map_or(&[], Vec::as_slice);
        let rhs: &[Value] = rhs.and_then(Value::as_array).map_or(&[], Vec::as_slice);
        let (lhs_pes, observed_lhs) = index(schema, lhs);
        let (rhs_pes, observed_rhs) = index(schema, rhs);
        let mut shared: std::collections::VecDeque<&PathElement> = rhs_pes
            .iter()
            .filter(|pe| observed_lhs.contains_key(*pe))
            .collect();
        let mut next_shared = shared.pop_front();
        let mut merged_rhs = std::collections::BTreeSet::new();
        let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
        let item = schema.item();
        let (mut l, mut r) = (0, 0);
        while l < lhs_pes.len() || r < rhs_pes.len() {
            if l < lhs_pes.len() && r < rhs_pes.len() {
                let pe = &lhs_pes[l];
                if *pe == rhs_pes[r] {
                    merged_rhs.insert(pe.clone());
                    let merged = self.merge(
                        observed_lhs.get(pe).copied(),
                        observed_rhs.get(pe).copied(),
                        item,
                        &path.child(pe.clone()),
                    );
                    out.extend(merged);
                    l += 1;
                    r += 1;
                    next_shared = shared.pop_front();
                    continue;
                }
                if observed_rhs.contains_key(pe)
                    && next_shared.is_some_and(|n| n != pe)
                {
                    l += 1;
                    continue;
                }
            }
            if l < lhs_pes.len() {
                let pe = &lhs_pes[l];
                if !observed_rhs.contains_key(pe) {
                    let merged = self.merge(
                        Some(&lhs[l]),
                        None,
                        item,
                        &path.child(pe.clone()),
                    );
                    out.extend(merged);
                    l += 1;
                    continue;
                } else if merged_rhs.contains(pe) {
                    l += 1;
                    continue;
                }
            }
            if r < rhs_pes.len() {
                let pe = &rhs_pes[r];
                merged_rhs.insert(pe.clone());
                let merged = self.merge(
                    observed_lhs.get(pe).copied(),
                    observed_rhs.get(pe).copied(),
                    item,
                    &path.child(pe.clone()),
                );
                out.extend(merged);
                r += 1;
                if next_shared.is_some_and(|n| n == pe) {
                    next_shared = shared.pop_front();
                }
            }
        }
        Value::Array(out)
    }
}

/// Mirrors `indexListPathElements`: each item's element, and the first item of
/// each element. An item that cannot be named (a missing key) is named by its
/// index, as upstream does for the live object it allows duplicates in.
fn index<'v>(
    schema: &Schema,
    items: &'v [Value],
) -> (Vec<PathElement>, BTreeMap<PathElement, &'v Value>) {
    let mut elements = Vec::with_capacity(items.len());
    let mut observed = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let pe = schema.item_element(item).unwrap_or(PathElement::Index(i));
        observed.entry(pe.clone()).or_insert(item);
        elements.push(pe);
    }
    (elements, observed)
}

/// Mirrors `TypedValue.Merge`: `config` merged into `live`.
pub fn merge(live: &Value, config: &Value, schema: &'static Schema) -> Value {
    Walker { comparison: None }
        .merge(Some(live), Some(config), schema, &Path::default())
        .unwrap_or(Value::Null)
}

/// Mirrors `TypedValue.Compare`: what changed from `old` to `new`.
pub fn compare(old: &Value, new: &Value, schema: &'static Schema) -> Comparison {
    let mut comparison = Comparison::default();
    Walker {
        comparison: Some(&mut comparison),
    }
    .merge(Some(old), Some(new), schema, &Path::default());
    comparison
}

/// Mirrors `TypedValue.ToFieldSet`: the fields `value` sets. Leaves (scalars,
/// atomic lists and maps, empty or null maps) are members; list items are
/// members too (`"."`) next to their fields. With `strict` (an applied
/// configuration, which upstream converts without `AllowDuplicates`), an item
/// without its keys, a duplicate item or a list that is not a list is an error
/// (`.spec.containers: duplicate entries for key [name="c"]`).
pub fn to_field_set(
    value: &Value,
    schema: &'static Schema,
    strict: bool,
) -> Result<Set, String> {
    let mut set = Set::new();
    walk_field_set(value, schema, &Path::default(), &mut set, strict)?;
    Ok(set)
}

fn walk_field_set(
    value: &Value,
    schema: &'static Schema,
    path: &Path,
    set: &mut Set,
    strict: bool,
) -> Result<(), String> {
    match (shape(schema, [Some(value)]), value) {
        (Shape::Map, Value::Object(map)) => {
            for (key, child) in map {
                let child_path = path.child(PathElement::Field(key.clone()));
                walk_field_set(child, schema.field(key), &child_path, set, strict)?;
                if is_empty(Some(child)) && !child.is_array() {
                    set.insert(&child_path);
                }
            }
        }
        (Shape::List, Value::Array(items)) => {
            let mut seen = std::collections::BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let pe = match schema.item_element(item) {
                    Ok(pe) => pe,
                    Err(error) if strict => return Err(format!("{path}: {error}")),
                    Err(_) => PathElement::Index(i),
                };
                if !seen.insert(pe.clone()) && strict {
                    return Err(format!("{path}: duplicate entries for key {pe}"));
                }
                let child_path = path.child(pe);
                walk_field_set(item, schema.item(), &child_path, set, strict)?;
                set.insert(&child_path);
            }
        }
        _ => {
            if strict && schema.is_granular_list() && !value.is_null() {
                return Err(format!(
                    "{path}: expected list, got {}",
                    kind_of(value)
                ));
            }
            set.insert(path);
        }
    }
    Ok(())
}

/// Mirrors `TypedValue.RemoveItems`: `value` without the fields that are
/// members of `set` (map fields and list items; atomic values are kept whole).
pub fn remove_items(value: &Value, set: &Set, schema: &'static Schema) -> Value {
    match (shape(schema, [Some(value)]), value) {
        (Shape::Map, Value::Object(map)) => {
            let mut out = Map::new();
            for (key, child) in map {
                let pe = PathElement::Field(key.clone());
                if set.has(&Path(vec![pe.clone()])) {
                    continue;
                }
                let below = set.with_prefix(&pe);
                let child = if below.is_empty() {
                    child.clone()
                } else {
                    remove_items(child, &below, schema.field(key))
                };
                out.insert(key.clone(), child);
            }
            Value::Object(out)
        }
        (Shape::List, Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let Ok(pe) = schema.item_element(item) else {
                    out.push(item.clone());
                    continue;
                };
                if set.has(&Path(vec![pe.clone()])) {
                    continue;
                }
                let below = set.with_prefix(&pe);
                out.push(if below.is_empty() {
                    item.clone()
                } else {
                    remove_items(item, &below, schema.item())
                });
            }
            Value::Array(out)
        }
        _ => value.clone(),
    }
}
