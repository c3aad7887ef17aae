//! # The ground floor: apimachinery's selectors
//!
//! Both sides of the watch select objects the same way: a client's lister (stage 4)
//! and the server's `?labelSelector=` and `?fieldSelector=` (stage 5). In Kubernetes
//! both sides import `k8s.io/apimachinery`; here both stand on this small crate,
//! which every stage may use.
//!
//! | Go (k8s.io/apimachinery)                                  | Rust                          |
//! |-----------------------------------------------------------|-------------------------------|
//! | `pkg/labels/selector.go` (`Parse`, `Lexer`, `Parser`)     | [`labels::parse_label_selector`] |
//! | `labels.Selector.Matches`                                 | [`labels::matches_labels`]    |
//! | `pkg/fields/selector.go` (`ParseSelector`, `RequiresExactMatch`) | [`fields::FieldSelector`] |
//! | `pkg/fields/fields.go` (`Set`)                            | [`fields::Fields`]            |

pub mod fields;
pub mod labels;

pub use fields::{
    FieldOp, FieldRequirement, FieldSelector, FieldSelectorError, Fields,
    field_value,
};
pub use labels::*;
