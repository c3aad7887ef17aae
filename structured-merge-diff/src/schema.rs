//! The shape of a value: mirrors structured-merge-diff's [`schema`] package
//! (`schema.Atom`, `Map` with its `ElementRelationship`, `List` with its keys),
//! as far as apply needs it: which maps merge field by field and which are
//! atomic, which lists are associative (and by which keys) or sets, and which
//! are atomic.
//!
//! A schema names only what is not the default, and everything else is
//! *deduced* as structured-merge-diff's `DeducedParseableType` does: objects
//! are merged field by field, lists are atomic (replaced whole), scalars are
//! leaves. The schemas of the served kinds are a table built from the shapes
//! (apimachinery's `util::managedfields::typeconverter`), as kube-apiserver
//! builds them from its OpenAPI.
//!
//! [`schema`]: https://github.com/kubernetes-sigs/structured-merge-diff/tree/v6.3.0/schema

use serde_json::Value;

use crate::fieldpath::PathElement;

/// The shape of a value: `schema.Atom` with its element relationship.
#[derive(Debug)]
pub enum Schema {
    /// A struct or map merged field by field (`ElementRelationship: separable`),
    /// with the fields whose shape is not deduced.
    Fields(&'static [(&'static str, &'static Schema)]),
    /// A struct or map owned as a whole (`mapType=atomic`).
    AtomicMap,
    /// An associative list (`listType=map`) keyed by these fields.
    MapList {
        /// `x-kubernetes-list-map-keys`, each with its default if it has one.
        keys: &'static [ListKey],
        /// The items' shape.
        item: &'static Schema,
    },
    /// A list of scalars that is a set (`listType=set`).
    SetList,
    /// Unknown: objects field by field, lists atomic, scalars leaves.
    Deduced,
}

/// A key field of an associative list.
#[derive(Debug)]
pub struct ListKey {
    /// The field's name.
    pub name: &'static str,
    /// The value a missing key takes (the schema's default).
    pub default: Option<&'static str>,
}

/// A key without a default (`x-kubernetes-list-map-keys`).
pub const fn key(name: &'static str) -> ListKey {
    ListKey {
        name,
        default: None,
    }
}

/// Unknown: deduced (objects field by field, lists atomic).
pub static DEDUCED: Schema = Schema::Deduced;
/// A map or struct owned as a whole.
pub static ATOMIC: Schema = Schema::AtomicMap;
/// A list of scalars that is a set.
pub static SET: Schema = Schema::SetList;

impl Schema {
    /// The shape of field `name` of a map of this shape.
    pub fn field(&'static self, name: &str) -> &'static Schema {
        match self {
            Schema::Fields(fields) => fields
                .iter()
                .find(|(field, _)| *field == name)
                .map_or(&DEDUCED, |(_, schema)| *schema),
            _ => &DEDUCED,
        }
    }

    /// The shape of this list's items.
    pub fn item(&'static self) -> &'static Schema {
        match self {
            Schema::MapList { item, .. } => item,
            _ => &DEDUCED,
        }
    }

    /// Whether this is an associative list or a set (merged item by item).
    pub fn is_granular_list(&self) -> bool {
        matches!(self, Schema::MapList { .. } | Schema::SetList)
    }

    /// Whether this is a map merged field by field.
    pub fn is_granular_map(&self) -> bool {
        matches!(self, Schema::Fields(_) | Schema::Deduced)
    }

    /// Mirrors `listItemToPathElement`: the element naming `item` in a list of
    /// this shape. A list-map item is named by its keys (a missing key takes its
    /// default, or is an error); a set item by its value.
    pub fn item_element(&self, item: &Value) -> Result<PathElement, String> {
        match self {
            Schema::MapList { keys, .. } => {
                let Value::Object(map) = item else {
                    return Err(format!(
                        "expected map in associative list, got {}",
                        kind_of(item)
                    ));
                };
                let mut fields = Vec::with_capacity(keys.len());
                for key in *keys {
                    let value = match (map.get(key.name), key.default) {
                        (Some(value), _) if !value.is_null() => value.clone(),
                        (_, Some(default)) => Value::String(default.to_string()),
                        _ => {
                            return Err(format!(
                                "associative list with keys has an element that omits key \
                                 field {:?} (and doesn't have default value)",
                                key.name
                            ));
                        }
                    };
                    if value.is_object() || value.is_array() {
                        return Err(format!(
                            "associative list key {:?} must be a scalar",
                            key.name
                        ));
                    }
                    fields.push((key.name.to_string(), value));
                }
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(PathElement::Key(fields))
            }
            Schema::SetList => {
                if item.is_object() || item.is_array() {
                    return Err(format!(
                        "expected scalar in set, got {}",
                        kind_of(item)
                    ));
                }
                Ok(PathElement::Value(item.clone()))
            }
            _ => Err("not an associative list".into()),
        }
    }
}

/// A value's kind, for messages.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}
