//! Strategic merge patch: mirrors apimachinery's
//! [`pkg/util/strategicpatch/patch.go`] (`StrategicMergeMapPatch`, `mergeMap`,
//! `mergeSlice` and the directives), the apply half that kube-apiserver runs for
//! `application/strategic-merge-patch+json`.
//!
//! It is a JSON merge patch that knows the object's types
//! ([`meta`](super::meta)): a list whose field is tagged
//! `patchStrategy:"merge"` merges item by item, matching items by the field's
//! `patchMergeKey` (a container by `name`), or as a set for a list of scalars
//! (finalizers). Any other list is replaced, as a merge patch replaces it. A
//! `null` deletes a map key.
//!
//! | Directive                                | Effect                                                        |
//! |------------------------------------------|---------------------------------------------------------------|
//! | `"$patch": "replace"` in a map            | the map becomes the patch's (without the directive)            |
//! | `"$patch": "delete"` in a map             | the map becomes `{}`                                           |
//! | `{"name": "x", "$patch": "delete"}` in a merging list | every item whose merge key is `x` goes            |
//! | `{"$patch": "replace"}` in a merging list | the list becomes the patch's other items                      |
//! | `"$deleteFromPrimitiveList/<field>": [...]` | those scalars leave `<field>`                               |
//! | `"$setElementOrder/<field>": [...]`       | the merged list is ordered as given (server-only items first)  |
//! | `"$retainKeys": [...]`                    | the map's keys not listed are cleared                          |
//!
//! Order, as upstream: without `$setElementOrder`, items named in the patch keep
//! the patch's order and come before any server-only item that is not earlier
//! in the live list than them, so a new item goes first (`mergeSortedSlice`).
//!
//! Errors are upstream's ([`MergeError`], `mergepatch`'s errors and the texts of
//! `strategicpatch`'s plain ones). What the server answers for each is the
//! apiserver's choice (`interpretStrategicMergePatchError` in its `patch.go`
//! handler): a malformed `$deleteFromPrimitiveList`, `$retainKeys` or
//! `$setElementOrder` is 400, a list of lists 422, and every other error (an
//! unknown `$patch` value, an item without its merge key, `$patch: merge` in a
//! list) is not a `Status` upstream, so `ErrorToAPIStatus` answers it 500 with
//! no reason and the error's text.
//!
//! Where this differs: Go walks its maps in random order; here a map's keys are
//! processed sorted (so a `$deleteFromPrimitiveList/x` before `x`). Go decodes
//! the result into the typed object, which drops unknown fields; here the
//! directives left in the result are dropped instead (the object is stored as
//! JSON), and `null`s in appended list items are dropped as a typed round trip
//! drops them.
//!
//! [`pkg/util/strategicpatch/patch.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/util/strategicpatch/patch.go

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::meta::{Lookup, StructMeta, lookup};

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

/// Why a strategic merge patch does not apply: mirrors the errors of
/// apimachinery's `mergepatch` package and `strategicpatch`.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MergeError {
    /// `mergepatch.ErrBadPatchFormatForPrimitiveList`.
    #[error("invalid patch format of primitive list")]
    BadPatchFormatForPrimitiveList,
    /// `mergepatch.ErrBadPatchFormatForRetainKeys`.
    #[error("invalid patch format of retainKeys")]
    BadPatchFormatForRetainKeys,
    /// `mergepatch.ErrBadPatchFormatForSetElementOrderList`.
    #[error("invalid patch format of setElementOrder list")]
    BadPatchFormatForSetElementOrderList,
    /// `mergepatch.ErrNoListOfLists`.
    #[error("lists of lists are not supported")]
    NoListOfLists,
    /// Any other error, with Go's text (`unknown patch type: …`, `map: … does
    /// not contain declared merge key: …`, ...).
    #[error("{0}")]
    Other(String),
}

type Result<T> = std::result::Result<T, MergeError>;

/// Mirrors `StrategicMergeMapPatch` with `MergeParallelList` and
/// `IgnoreUnmatchedNulls`, as the apiserver calls it: applies `patch` to
/// `original`, whose kind is `schema`.
pub fn strategic_merge_patch(
    original: &Value,
    patch: &Value,
    schema: &'static StructMeta,
) -> Result<Value> {
    let original = original.as_object().cloned().unwrap_or_default();
    let patch = match patch {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let mut merged = Value::Object(merge_map(original, patch, Some(schema))?);
    drop_directive_keys(&mut merged);
    Ok(merged)
}

/// Mirrors `mergeMap`.
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: Option<&'static StructMeta>,
) -> Result<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
        return directive_in_merge_map(directive.clone(), patch);
    }
    apply_retain_keys_directive(&mut original, &mut patch)?;
    merge_patch_into_original(&mut original, &mut patch, schema)?;
    for (key, patch_value) in patch {
        let (key, is_delete_list) =
            if key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
                (extract_key(&key, DELETE_FROM_PRIMITIVE_LIST_PREFIX)?, true)
            } else {
                (key, false)
            };
        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }
        let current = original.remove(&key);
        let merged = match (current, patch_value) {
            (Some(Value::Object(current)), Value::Object(patch_value)) => {
                // `mergeMapHandler`: a map merges unless its field is tagged
                // `patchStrategy:"replace"` (a disruption budget's selector).
                let field = lookup(schema, &key);
                if field.replaces() {
                    Some(Value::Object(patch_value))
                } else {
                    Some(Value::Object(merge_map(
                        current,
                        patch_value,
                        field.schema,
                    )?))
                }
            }
            (Some(Value::Array(current)), Value::Array(patch_value)) => {
                let field = lookup(schema, &key);
                Some(Value::Array(merge_slice_handler(
                    current,
                    patch_value,
                    &field,
                    is_delete_list,
                )?))
            }
            // A deletion list never adds a value nor replaces one of another
            // type.
            (None, _) if is_delete_list => None,
            (Some(current), patch_value)
                if is_delete_list && go_kind(&current) != go_kind(&patch_value) =>
            {
                Some(current)
            }
            (_, mut patch_value) => {
                discard_null_values(&mut patch_value);
                remove_directives(patch_value)
            }
        };
        if let Some(value) = merged {
            original.insert(key, value);
        }
    }
    Ok(original)
}

/// Mirrors `handleDirectiveInMergeMap`.
fn directive_in_merge_map(
    directive: Value,
    mut patch: Map<String, Value>,
) -> Result<Map<String, Value>> {
    match directive.as_str() {
        Some(REPLACE_DIRECTIVE) => {
            patch.remove(DIRECTIVE_MARKER);
            Ok(patch)
        }
        Some(DELETE_DIRECTIVE) => Ok(Map::new()),
        _ => Err(bad_patch_type(&directive, &patch)),
    }
}

/// `mergepatch.ErrBadPatchType`.
fn bad_patch_type(directive: &Value, map: &Map<String, Value>) -> MergeError {
    MergeError::Other(format!(
        "unknown patch type: {} in map: {}",
        go_fmt_s(directive),
        go_fmt_map(map)
    ))
}

/// `mergepatch.ErrNoMergeKey`.
fn no_merge_key(map: &Map<String, Value>, key: &str) -> MergeError {
    MergeError::Other(format!(
        "map: {} does not contain declared merge key: {key}",
        go_fmt_map(map)
    ))
}

/// `mergepatch.ErrBadArgType` for a value that should have been a list or a map.
fn bad_arg_type(expected: &str, actual: &Value) -> MergeError {
    MergeError::Other(format!(
        "expected a {expected}, but received a {}",
        go_type_name(actual)
    ))
}

/// Mirrors `applyRetainKeysDirective`: keys missing from `$retainKeys` are
/// cleared from `original`; a patch key missing from it is 400.
fn apply_retain_keys_directive(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<()> {
    let Some(retain) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(MergeError::BadPatchFormatForRetainKeys);
    };
    let retained = |key: &str| retain.iter().any(|k| k.as_str() == Some(key));
    for (key, value) in patch.iter() {
        if value.is_null()
            || key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || key.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !retained(key) {
            return Err(MergeError::BadPatchFormatForRetainKeys);
        }
    }
    original.retain(|key, _| retained(key));
    Ok(())
}

/// Mirrors `extractKey`: the field a `$deleteFromPrimitiveList/<field>` or
/// `$setElementOrder/<field>` key names.
fn extract_key(key: &str, prefix: &str) -> Result<String> {
    match key.split_once('/') {
        Some((head, field)) if head == prefix => Ok(field.to_string()),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST_PREFIX => {
            Err(MergeError::BadPatchFormatForPrimitiveList)
        }
        _ => Err(MergeError::BadPatchFormatForSetElementOrderList),
    }
}

/// Mirrors `mergePatchIntoOriginal`: each `$setElementOrder/<field>` merges
/// `<field>` now and orders the result as the directive says.
fn merge_patch_into_original(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: Option<&'static StructMeta>,
) -> Result<()> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX))
        .cloned()
        .collect();
    for key in keys {
        let Some(order) = patch.remove(&key) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(bad_arg_type("[]interface {}", &order));
        };
        let field_key = extract_key(&key, SET_ELEMENT_ORDER_PREFIX)?;
        let original_list = match original.get(&field_key) {
            None => None,
            Some(Value::Array(list)) => Some(list.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
        };
        let patch_list = match patch.get(&field_key) {
            None => None,
            Some(Value::Array(list)) => Some(list.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
        };
        let field = lookup(schema, &field_key);
        validate_patch_with_set_order_list(
            patch_list.as_deref().unwrap_or_default(),
            &order,
            field.merge_key,
        )?;
        let merged = match (&original_list, &patch_list) {
            (Some(current), None) => current.clone(),
            (None, Some(list)) => {
                match remove_directives(Value::Array(list.clone())) {
                    Some(Value::Array(list)) => list,
                    _ => continue,
                }
            }
            (Some(current), Some(list)) => {
                merge_slice_handler(current.clone(), list.clone(), &field, false)?
            }
            (None, None) => continue,
        };
        let (patch_items, server_only) = if field.merge_key.is_empty() {
            partition_primitives(merged, &order)
        } else {
            partition_maps(merged, &order, field.merge_key)?
        };
        let server_order = original_list.unwrap_or_default();
        let kind = slice_element_type(&[
            &server_order,
            patch_list.as_deref().unwrap_or_default(),
        ])?;
        let both = normalize_element_order(
            patch_items,
            server_only,
            &order,
            &server_order,
            field.merge_key,
            kind,
        )?;
        original.insert(field_key.clone(), Value::Array(both));
        patch.remove(&field_key);
    }
    Ok(())
}

/// Mirrors `validatePatchWithSetOrderList`: the patch's items (deletions aside)
/// must appear in the `$setElementOrder` list, in its order.
fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    order: &[Value],
    merge_key: &str,
) -> Result<()> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete: Vec<&Value> = if merge_key.is_empty() {
        patch_list.iter().collect()
    } else {
        let mut kept = Vec::new();
        for item in patch_list {
            let Value::Object(map) = item else {
                return Err(bad_arg_type("map[string]interface {}", item));
            };
            if map.get(DIRECTIVE_MARKER).and_then(Value::as_str)
                != Some(DELETE_DIRECTIVE)
            {
                kept.push(item);
            }
        }
        kept
    };
    let (mut patch_index, mut order_index) = (0, 0);
    while patch_index < non_delete.len() && order_index < order.len() {
        let item = non_delete[patch_index];
        if item.get(DIRECTIVE_MARKER).is_some() {
            patch_index += 1;
            continue;
        }
        if merge_key_value_equal(item, &order[order_index], merge_key)? {
            patch_index += 1;
        }
        order_index += 1;
    }
    if patch_index < non_delete.len() && order_index >= order.len() {
        return Err(MergeError::Other(format!(
            "the order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER_PREFIX} list:\n{}",
            go_fmt_v(&Value::Array(patch_list.to_vec())),
            go_fmt_v(&Value::Array(order.to_vec())),
        )));
    }
    Ok(())
}

/// Mirrors `mergeKeyValueEqual`.
fn merge_key_value_equal(
    left: &Value,
    right: &Value,
    merge_key: &str,
) -> Result<bool> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let Value::Object(left) = left else {
        return Err(bad_arg_type("map[string]interface {}", left));
    };
    let Value::Object(right) = right else {
        return Err(bad_arg_type("map[string]interface {}", right));
    };
    let Some(left_value) = left.get(merge_key) else {
        return Err(no_merge_key(left, merge_key));
    };
    let Some(right_value) = right.get(merge_key) else {
        return Err(no_merge_key(right, merge_key));
    };
    Ok(left_value == right_value)
}

/// Mirrors `mergeSliceHandler`: merge when the field merges (or for a deletion
/// list, whatever the field), else the patch's list replaces the live one.
fn merge_slice_handler(
    original: Vec<Value>,
    patch: Vec<Value>,
    field: &Lookup,
    is_delete_list: bool,
) -> Result<Vec<Value>> {
    if field.merges() || is_delete_list {
        merge_slice(original, patch, field, is_delete_list)
    } else {
        Ok(patch)
    }
}

/// The Go type of a decoded JSON value, as `reflect.TypeOf` tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GoKind {
    Nil,
    Bool,
    Int,
    Float,
    String,
    Slice,
    Map,
}

fn go_kind(value: &Value) -> GoKind {
    match value {
        Value::Null => GoKind::Nil,
        Value::Bool(_) => GoKind::Bool,
        Value::Number(n) if n.is_i64() => GoKind::Int,
        Value::Number(_) => GoKind::Float,
        Value::String(_) => GoKind::String,
        Value::Array(_) => GoKind::Slice,
        Value::Object(_) => GoKind::Map,
    }
}

fn go_type_name(value: &Value) -> &'static str {
    match go_kind(value) {
        GoKind::Nil => "<nil>",
        GoKind::Bool => "bool",
        GoKind::Int => "int64",
        GoKind::Float => "float64",
        GoKind::String => "string",
        GoKind::Slice => "[]interface {}",
        GoKind::Map => "map[string]interface {}",
    }
}

/// Mirrors `sliceElementType`: the one type of every item of `slices`.
fn slice_element_type(slices: &[&[Value]]) -> Result<GoKind> {
    let mut kind = None;
    for item in slices.iter().flat_map(|s| s.iter()) {
        let item_kind = go_kind(item);
        match kind {
            None if item_kind == GoKind::Slice => {
                return Err(MergeError::NoListOfLists);
            }
            None => kind = Some(item_kind),
            Some(k) if k != item_kind => {
                let all: Vec<Value> =
                    slices.iter().map(|s| Value::Array(s.to_vec())).collect();
                return Err(MergeError::Other(format!(
                    "list element types are not identical: {}",
                    go_fmt_v(&Value::Array(all))
                )));
            }
            Some(_) => {}
        }
    }
    kind.ok_or_else(|| {
        MergeError::Other("no elements in any of the given slices".into())
    })
}

// ANCHOR: merge_slice
/// Mirrors `mergeSlice`.
fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    field: &Lookup,
    is_delete_list: bool,
) -> Result<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = slice_element_type(&[&original, &patch])?;
    let merge_key = field.merge_key;
    let (original, patch, merged) = if kind != GoKind::Map {
        if is_delete_list {
            let deleted: HashSet<String> =
                patch.iter().map(Value::to_string).collect();
            return Ok(original
                .into_iter()
                .filter(|item| !deleted.contains(&item.to_string()))
                .collect());
        }
        let mut seen = HashSet::new();
        let merged = original
            .iter()
            .chain(&patch)
            .filter(|item| seen.insert(item.to_string()))
            .cloned()
            .collect();
        (original, patch, merged)
    } else {
        if merge_key.is_empty() {
            return Err(MergeError::Other(format!(
                "cannot merge lists without merge key for {}",
                field.elem_kind
            )));
        }
        let (original, patch) =
            merge_slice_with_special_elements(original, patch, merge_key)?;
        let merged = merge_slice_without_special_elements(
            original.clone(),
            &patch,
            merge_key,
            field.schema,
        )?;
        (original, patch, merged)
    };
    let (patch_items, server_only) = if merge_key.is_empty() {
        partition_primitives(merged, &patch)
    } else {
        partition_maps(merged, &patch, merge_key)?
    };
    normalize_element_order(
        patch_items,
        server_only,
        &patch,
        &original,
        merge_key,
        kind,
    )
}
// ANCHOR_END: merge_slice

/// Mirrors `mergeSliceWithSpecialElements`: applies the `$patch` items of a
/// merging list (`delete` by merge key, `replace` of the whole list) and
/// returns the live list and the patch's other items.
fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut plain = Vec::new();
    let mut deleted = HashSet::new();
    let mut replace = false;
    for item in patch {
        let Value::Object(map) = &item else {
            return Err(bad_arg_type("map[string]interface {}", &item));
        };
        let Some(directive) = map.get(DIRECTIVE_MARKER) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some(DELETE_DIRECTIVE) => {
                let Some(value) = map.get(merge_key) else {
                    return Err(no_merge_key(map, merge_key));
                };
                deleted.insert(value.to_string());
            }
            Some(REPLACE_DIRECTIVE) => replace = true,
            Some(MERGE_DIRECTIVE) => {
                return Err(MergeError::Other(
                    "merging lists cannot yet be specified in the patch".into(),
                ));
            }
            _ => return Err(bad_patch_type(directive, map)),
        }
    }
    if !deleted.is_empty() {
        original.retain(|live| {
            let key = live.get(merge_key).map(Value::to_string);
            !key.is_some_and(|key| deleted.contains(&key))
        });
    }
    if replace {
        Ok((plain, Vec::new()))
    } else {
        Ok((original, plain))
    }
}

/// The error of `findMapInSliceBasedOnKeyValue` for an item that is not a map.
fn not_a_map(index: usize) -> MergeError {
    MergeError::Other(format!("value for key {index} is not a map"))
}

/// Mirrors `mergeSliceWithoutSpecialElements`: an item whose merge key is live
/// merges into it (`mergeMap`), any other is appended.
fn merge_slice_without_special_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    schema: Option<&'static StructMeta>,
) -> Result<Vec<Value>> {
    let mut positions = Positions::of(&original, merge_key, GoKind::Map);
    for item in patch {
        let Value::Object(map) = item else {
            return Err(bad_arg_type("map[string]interface {}", item));
        };
        if !map.contains_key(merge_key) {
            return Err(no_merge_key(map, merge_key));
        }
        match positions.get(item, merge_key, GoKind::Map) {
            Some(index) => {
                let live = match std::mem::take(&mut original[index]) {
                    Value::Object(live) => live,
                    _ => Map::new(),
                };
                original[index] =
                    Value::Object(merge_map(live, map.clone(), schema)?);
            }
            None => {
                let mut added = item.clone();
                discard_null_values(&mut added);
                positions.add(&added, original.len(), merge_key, GoKind::Map);
                original.push(added);
            }
        }
    }
    Ok(original)
}

/// Mirrors `partitionPrimitivesByPresentInList`: the items of `list` that are
/// in `by`, and the others.
fn partition_primitives(list: Vec<Value>, by: &[Value]) -> (Vec<Value>, Vec<Value>) {
    let by: HashSet<String> = by.iter().map(Value::to_string).collect();
    list.into_iter()
        .partition(|item| by.contains(&item.to_string()))
}

/// Mirrors `partitionMapsByPresentInList`, by merge key.
fn partition_maps(
    list: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    for (index, item) in by.iter().enumerate() {
        if !item.is_object() {
            return Err(not_a_map(index));
        }
    }
    let positions = Positions::of(by, merge_key, GoKind::Map);
    let (mut present, mut absent) = (Vec::new(), Vec::new());
    for item in list {
        let Value::Object(map) = &item else {
            return Err(bad_arg_type("map[string]interface {}", &item));
        };
        if !map.contains_key(merge_key) {
            return Err(no_merge_key(map, merge_key));
        }
        if positions.get(&item, merge_key, GoKind::Map).is_some() {
            present.push(item);
        } else {
            absent.push(item);
        }
    }
    Ok((present, absent))
}

/// Positions in a list by identity (`index` in Go): an item is its merge key's
/// value for maps, itself otherwise. The first position of each wins.
struct Positions(HashMap<String, usize>);

impl Positions {
    fn of(list: &[Value], merge_key: &str, kind: GoKind) -> Positions {
        let mut positions = HashMap::new();
        for (index, item) in list.iter().enumerate() {
            positions
                .entry(identity(item, merge_key, kind))
                .or_insert(index);
        }
        Positions(positions)
    }

    fn add(&mut self, item: &Value, index: usize, merge_key: &str, kind: GoKind) {
        self.0
            .entry(identity(item, merge_key, kind))
            .or_insert(index);
    }

    fn get(&self, item: &Value, merge_key: &str, kind: GoKind) -> Option<usize> {
        self.0.get(&identity(item, merge_key, kind)).copied()
    }
}

fn identity(item: &Value, merge_key: &str, kind: GoKind) -> String {
    let value = if kind == GoKind::Map {
        item.get(merge_key).unwrap_or(&Value::Null)
    } else {
        item
    };
    value.to_string()
}

/// Mirrors `normalizeElementOrder`: the patch's items in `patch_order`, the
/// server-only items in `server_order`, then the two interleaved.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: GoKind,
) -> Result<Vec<Value>> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, kind)?;
    let server_only =
        normalize_slice_order(server_only, server_order, merge_key, kind)?;
    Ok(merge_sorted_slice(
        server_only,
        patch,
        server_order,
        merge_key,
        kind,
    ))
}

/// Mirrors `normalizeSliceOrder`: sorts `to_sort` by the positions of its items
/// in `order` with `sort.SliceStable` and the same comparison (an item not in
/// `order` is "less"), deletions last. The sort is an insertion sort, which is
/// what `SliceStable` runs on up to 20 items; for more, any stable sort agrees
/// with it whenever every item is in `order`, as every caller ensures.
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: GoKind,
) -> Result<Vec<Value>> {
    let mut deletions = Vec::new();
    let mut to_sort = if kind == GoKind::Map {
        for item in to_sort.iter().chain(order) {
            let Value::Object(map) = item else {
                return Err(bad_arg_type("map[string]interface {}", item));
            };
            if !map.contains_key(merge_key) {
                return Err(no_merge_key(map, merge_key));
            }
        }
        let (delete, keep): (Vec<Value>, Vec<Value>) =
            to_sort.into_iter().partition(|item| {
                item.get(DIRECTIVE_MARKER).and_then(Value::as_str)
                    == Some(DELETE_DIRECTIVE)
            });
        deletions = delete;
        keep
    } else {
        to_sort
    };
    let positions = Positions::of(order, merge_key, kind);
    let mut keyed: Vec<(Option<usize>, Value)> = to_sort
        .drain(..)
        .map(|item| (positions.get(&item, merge_key, kind), item))
        .collect();
    let less = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(a), Some(b)) => a < b,
        _ => true,
    };
    if keyed.iter().all(|(position, _)| position.is_some()) {
        keyed.sort_by_key(|(position, _)| *position);
    } else {
        for i in 1..keyed.len() {
            let mut j = i;
            while j > 0 && less(keyed[j].0, keyed[j - 1].0) {
                keyed.swap(j, j - 1);
                j -= 1;
            }
        }
    }
    let mut sorted: Vec<Value> = keyed.into_iter().map(|(_, item)| item).collect();
    sorted.extend(deletions);
    Ok(sorted)
}

/// Mirrors `mergeSortedSlice`: takes the server-only item (`left`) first only
/// when both it and the next patch item are live and it is earlier there.
fn merge_sorted_slice(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    kind: GoKind,
) -> Vec<Value> {
    let positions = Positions::of(server_order, merge_key, kind);
    let mut merged = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    while let (Some(l), Some(r)) = (left.peek(), right.peek()) {
        let left_first = matches!(
            (positions.get(l, merge_key, kind), positions.get(r, merge_key, kind)),
            (Some(li), Some(ri)) if li < ri
        );
        let next = if left_first {
            left.next()
        } else {
            right.next()
        };
        merged.extend(next);
    }
    merged.extend(left);
    merged.extend(right);
    merged
}

/// Mirrors `discardNullValuesFromPatch`.
fn discard_null_values(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(discard_null_values);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_null_values),
        _ => {}
    }
}

/// Mirrors `removeDirectives`: a map holding `$patch` goes (`None`), in itself
/// or as an item or value inside.
fn remove_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) => {
            if map.contains_key(DIRECTIVE_MARKER) {
                return None;
            }
            let kept = map
                .into_iter()
                .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                .collect();
            Some(Value::Object(kept))
        }
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

/// Whether `key` is a directive, which the typed object upstream decodes into
/// has no field for.
fn is_directive_key(key: &str) -> bool {
    key == DIRECTIVE_MARKER
        || key == RETAIN_KEYS_DIRECTIVE
        || key.starts_with(SET_ELEMENT_ORDER_PREFIX)
        || key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
}

/// Drops the directives left in a result (in a replaced map or list, or an
/// appended item), as decoding into the typed object drops them upstream.
fn drop_directive_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !is_directive_key(k));
            map.values_mut().for_each(drop_directive_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_directive_keys),
        _ => {}
    }
}

/// Go's `%v` of a decoded JSON value: `map[k:v ...]` with sorted keys, `[a b]`,
/// bare strings, `<nil>`.
fn go_fmt_v(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_fmt_v).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => go_fmt_map(map),
        other => other.to_string(),
    }
}

fn go_fmt_map(map: &Map<String, Value>) -> String {
    let entries: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}:{}", go_fmt_v(v)))
        .collect();
    format!("map[{}]", entries.join(" "))
}

/// Go's `%s` of a decoded JSON value: a string bare, a scalar of another type
/// as `%!s(type=value)`.
fn go_fmt_s(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        Value::Bool(_) | Value::Number(_) => {
            format!("%!s({}={})", go_type_name(value), value)
        }
        other => go_fmt_v(other),
    }
}

#[cfg(test)]
mod tests {
    use super::super::meta::{DEPLOYMENT, METADATA_ONLY, NODE, POD};
    use super::*;
    use serde_json::json;

    fn apply(
        schema: &'static StructMeta,
        original: Value,
        patch: Value,
    ) -> std::result::Result<Value, MergeError> {
        strategic_merge_patch(&original, &patch, schema)
    }

    fn pod(containers: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {"containers": containers}})
    }

    fn names(list: &Value) -> Vec<&str> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str())
            .collect()
    }

    #[test]
    fn a_map_tagged_replace_is_replaced_whole() {
        let live = json!({"spec": {"selector": {"matchLabels": {"app": "web"}},
            "minAvailable": 1}});
        let patched = apply(
            &super::super::meta::POD_DISRUPTION_BUDGET,
            live,
            json!({"spec": {"selector": {"matchLabels": {"tier": "db"}}}}),
        )
        .expect("patch");
        assert_eq!(
            patched["spec"],
            json!({"selector": {"matchLabels": {"tier": "db"}}, "minAvailable": 1})
        );
    }

    #[test]
    fn containers_merge_by_name_and_a_sidecar_keeps_the_others() {
        let live = pod(json!([
            {"name": "web", "image": "nginx"},
            {"name": "log", "image": "fluentd"},
        ]));
        let patched = apply(
            &POD,
            live.clone(),
            json!({"spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}),
        )
        .expect("applies");
        // A new item goes before the live ones (`mergeSortedSlice`).
        assert_eq!(
            names(&patched["spec"]["containers"]),
            ["sidecar", "web", "log"]
        );
        assert_eq!(patched["spec"]["containers"][1]["image"], "nginx");
        let changed = apply(
            &POD,
            live,
            json!({"spec": {"containers": [{"name": "log", "image": "vector"}]}}),
        )
        .expect("applies");
        assert_eq!(names(&changed["spec"]["containers"]), ["web", "log"]);
        assert_eq!(changed["spec"]["containers"][1]["image"], "vector");
        assert_eq!(changed["spec"]["containers"][0]["image"], "nginx");
    }

    #[test]
    fn ports_merge_by_container_port_and_env_by_name_with_null_deleting_a_key() {
        let live = pod(json!([{
            "name": "web",
            "ports": [{"containerPort": 80, "name": "http"}],
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        }]));
        let patched = apply(
            &POD,
            live,
            json!({"spec": {"containers": [{
                "name": "web",
                "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}],
                "env": [{"name": "B", "value": null, "valueFrom": {"fieldRef": {"fieldPath": "x"}}}],
            }]}}),
        )
        .expect("applies");
        let web = &patched["spec"]["containers"][0];
        assert_eq!(
            web["ports"],
            json!([{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 443}])
        );
        assert_eq!(
            web["env"],
            json!([
                {"name": "A", "value": "1"},
                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "x"}}},
            ])
        );
    }

    #[test]
    fn patch_delete_removes_a_list_item_and_a_map() {
        let live = pod(json!([{"name": "web"}, {"name": "log"}]));
        let patched = apply(
            &POD,
            live,
            json!({
                "metadata": {"labels": {"$patch": "delete"}},
                "spec": {"containers": [{"name": "log", "$patch": "delete"}]},
            }),
        )
        .expect("applies");
        assert_eq!(names(&patched["spec"]["containers"]), ["web"]);
        assert_eq!(patched["metadata"].get("labels"), None);
        let mut labelled = pod(json!([]));
        labelled["metadata"]["labels"] = json!({"a": "1"});
        let emptied = apply(
            &POD,
            labelled,
            json!({"metadata": {"labels": {"$patch": "delete"}}}),
        )
        .expect("applies");
        assert_eq!(emptied["metadata"]["labels"], json!({}));
    }

    #[test]
    fn patch_replace_of_a_list_and_of_a_map() {
        let mut live = pod(json!([{"name": "web"}, {"name": "log"}]));
        live["metadata"]["labels"] = json!({"a": "1", "b": "2"});
        let patched = apply(
            &POD,
            live,
            json!({
                "metadata": {"labels": {"$patch": "replace", "c": "3"}},
                "spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "x"}]},
            }),
        )
        .expect("applies");
        assert_eq!(patched["metadata"]["labels"], json!({"c": "3"}));
        assert_eq!(
            patched["spec"]["containers"],
            json!([{"name": "only", "image": "x"}])
        );
    }

    #[test]
    fn retain_keys_clears_the_keys_not_listed() {
        let live = json!({"spec": {"strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1},
        }}});
        let patched = apply(
            &DEPLOYMENT,
            live.clone(),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
        )
        .expect("applies");
        assert_eq!(patched["spec"]["strategy"], json!({"type": "Recreate"}));
        let error = apply(
            &DEPLOYMENT,
            live.clone(),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}),
        )
        .expect_err("a patched key must be retained");
        assert_eq!(error, MergeError::BadPatchFormatForRetainKeys);
        let error = apply(
            &DEPLOYMENT,
            live,
            json!({"spec": {"strategy": {"$retainKeys": "type"}}}),
        )
        .expect_err("not a list");
        assert_eq!(error, MergeError::BadPatchFormatForRetainKeys);
    }

    #[test]
    fn finalizers_merge_as_a_set_and_delete_from_primitive_list() {
        let live = json!({"metadata": {"finalizers": ["a", "b"]}});
        let added = apply(
            &METADATA_ONLY,
            live.clone(),
            json!({"metadata": {"finalizers": ["b", "c", "c"]}}),
        )
        .expect("applies");
        assert_eq!(added["metadata"]["finalizers"], json!(["a", "b", "c"]));
        let removed = apply(
            &METADATA_ONLY,
            live.clone(),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", "z"]}}),
        )
        .expect("applies");
        assert_eq!(removed["metadata"]["finalizers"], json!(["b"]));
        let both = apply(
            &METADATA_ONLY,
            live.clone(),
            json!({"metadata": {
                "$deleteFromPrimitiveList/finalizers": ["a"],
                "finalizers": ["c"],
            }}),
        )
        .expect("applies");
        assert_eq!(both["metadata"]["finalizers"], json!(["c", "b"]));
        let error = apply(
            &METADATA_ONLY,
            live,
            json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}),
        )
        .expect_err("no slash");
        assert_eq!(error, MergeError::BadPatchFormatForPrimitiveList);
        // A deletion list for a list that is not there adds nothing.
        let none = apply(
            &METADATA_ONLY,
            json!({"metadata": {}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        )
        .expect("applies");
        assert_eq!(none["metadata"], json!({}));
    }

    #[test]
    fn a_list_without_a_merge_key_is_replaced() {
        let live = json!({"spec": {"tolerations": [{"key": "a"}, {"key": "b"}], "taints": [{"key": "t"}]}});
        let patched = apply(
            &POD,
            live.clone(),
            json!({"spec": {"tolerations": [{"key": "c"}]}}),
        )
        .expect("applies");
        assert_eq!(patched["spec"]["tolerations"], json!([{"key": "c"}]));
        let node = apply(&NODE, live, json!({"spec": {"taints": [{"key": "u"}]}}))
            .expect("applies");
        assert_eq!(node["spec"]["taints"], json!([{"key": "u"}]));
    }

    #[test]
    fn a_deployment_template_merges_its_containers() {
        let live = json!({"spec": {"replicas": 1, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx", "env": [{"name": "A", "value": "1"}]}]},
        }}});
        let patched = apply(
            &DEPLOYMENT,
            live,
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "sidecar", "image": "busybox"},
                {"name": "web", "env": [{"name": "B", "value": "2"}]},
            ]}}}}),
        )
        .expect("applies");
        let containers = &patched["spec"]["template"]["spec"]["containers"];
        assert_eq!(names(containers), ["sidecar", "web"]);
        assert_eq!(containers[1]["image"], "nginx");
        // The new variable goes before the live one, as upstream puts it.
        assert_eq!(
            containers[1]["env"],
            json!([{"name": "B", "value": "2"}, {"name": "A", "value": "1"}])
        );
        assert_eq!(patched["spec"]["replicas"], 1);
        assert_eq!(
            patched["spec"]["template"]["metadata"]["labels"]["app"],
            "web"
        );
    }

    #[test]
    fn set_element_order_orders_the_merged_list() {
        let live = pod(json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]));
        let patched = apply(
            &POD,
            live.clone(),
            json!({"spec": {
                "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "d"}],
                "containers": [{"name": "d", "image": "x"}],
            }}),
        )
        .expect("applies");
        // b is only on the server: it comes first, then the directive's order.
        assert_eq!(names(&patched["spec"]["containers"]), ["b", "c", "a", "d"]);
        let error = apply(
            &POD,
            live.clone(),
            json!({"spec": {
                "$setElementOrder/containers": [{"name": "a"}],
                "containers": [{"name": "d"}],
            }}),
        )
        .expect_err("d is not in the order");
        assert!(matches!(error, MergeError::Other(_)), "{error:?}");
        let error = apply(&POD, live, json!({"spec": {"$setElementOrderX": []}}))
            .expect_err("no slash");
        assert_eq!(error, MergeError::BadPatchFormatForSetElementOrderList);
        let finalizers = apply(
            &METADATA_ONLY,
            json!({"metadata": {"finalizers": ["a", "b", "c"]}}),
            json!({"metadata": {
                "$setElementOrder/finalizers": ["c", "b", "d"],
                "finalizers": ["d"],
            }}),
        )
        .expect("applies");
        assert_eq!(
            finalizers["metadata"]["finalizers"],
            json!(["a", "c", "b", "d"])
        );
    }

    #[test]
    fn bad_directives_answer_as_upstream() {
        let live = pod(json!([{"name": "web"}]));
        let unknown = apply(
            &POD,
            live.clone(),
            json!({"spec": {"$patch": "frobnicate"}}),
        )
        .expect_err("unknown");
        assert_eq!(
            unknown,
            MergeError::Other(
                "unknown patch type: frobnicate in map: map[$patch:frobnicate]"
                    .into()
            )
        );
        let in_list = apply(
            &POD,
            live.clone(),
            json!({"spec": {"containers": [{"name": "web", "$patch": "merge"}]}}),
        )
        .expect_err("merge in a list");
        assert_eq!(
            in_list.to_string(),
            "merging lists cannot yet be specified in the patch"
        );
        let no_key = apply(
            &POD,
            live.clone(),
            json!({"spec": {"containers": [{"image": "x"}]}}),
        )
        .expect_err("no name");
        assert_eq!(
            no_key.to_string(),
            "map: map[image:x] does not contain declared merge key: name"
        );
        let lists = apply(
            &METADATA_ONLY,
            json!({"metadata": {"finalizers": []}}),
            json!({"metadata": {"finalizers": [["b"]]}}),
        )
        .expect_err("list of lists");
        assert_eq!(lists, MergeError::NoListOfLists);
        let mixed = apply(&POD, live, json!({"spec": {"containers": ["web"]}}))
            .expect_err("mixed");
        assert_eq!(
            mixed.to_string(),
            "list element types are not identical: [[map[name:web]] [web]]"
        );
    }

    #[test]
    fn directives_never_reach_the_stored_object() {
        let patched = apply(
            &POD,
            json!({"metadata": {"name": "p"}}),
            json!({
                "metadata": {"labels": {"$patch": "replace", "a": "1"}},
                "spec": {"containers": [{"name": "web", "$setElementOrder/env": [{"name": "A"}], "env": [{"name": "A"}]}]},
            }),
        )
        .expect("applies");
        // A new map holding `$patch` is dropped (`removeDirectives`), other
        // directives in new values are dropped as unknown fields.
        assert_eq!(patched["metadata"].get("labels"), None);
        assert_eq!(
            patched["spec"]["containers"],
            json!([{"name": "web", "env": [{"name": "A"}]}])
        );
    }
}
