//! # sigs.k8s.io/structured-merge-diff
//!
//! The library under server-side apply: which manager owns which field of an
//! object. kube-apiserver records every write's fields in
//! `metadata.managedFields`, and an apply that would change a field another
//! manager owns is a conflict. Upstream keeps this in its own repository,
//! `sigs.k8s.io/structured-merge-diff`, which apimachinery's
//! `util/managedfields` imports; here it is this crate, which the workspace's
//! `apimachinery` imports the same way.
//!
//! | Go (sigs.k8s.io/structured-merge-diff)              | Rust                                  |
//! |-----------------------------------------------------|---------------------------------------|
//! | `fieldpath.PathElement`, `Path`, `Set`              | [`fieldpath::PathElement`], [`fieldpath::Path`], [`fieldpath::Set`] |
//! | `Set.ToJSON` / `FromJSON` (FieldsV1)                | [`fieldpath::Set::to_fields_v1`] / [`fieldpath::Set::from_fields_v1`] |
//! | `schema.Schema` (`Atom`, `Map`, `List`, keys)       | [`schema::Schema`], [`schema::ListKey`] |
//! | `typed.TypedValue.Merge` / `Compare` / `ToFieldSet` / `RemoveItems` | [`typed::merge`], [`typed::compare`], [`typed::to_field_set`], [`typed::remove_items`] |
//! | `merge.Updater.Update` / `Apply`, `merge.Conflicts` | [`merge::update_fields`], [`merge::apply`], [`merge::Conflict`] |
//! | `value.ToString`, `value.Compare`                   | [`value::to_string`], [`value::compare`] |
//!
//! Objects are `serde_json` values: the server keeps JSON, so there is no typed
//! Go value to walk. Where the schema says nothing, the shape is deduced
//! (`DeducedParseableType`): objects merge field by field, lists are atomic.

pub mod fieldpath;
pub mod merge;
pub mod schema;
pub mod typed;
pub mod value;
