//! apimachinery's `pkg/api/resource`: the quantities of a pod's requests and a
//! node's capacity.
//!
//! k8s-openapi keeps a `Quantity` as the string the user wrote (`"100m"`,
//! `"64Mi"`); [`Quantity`] here is that string parsed, with upstream's
//! `MilliValue` and `Value`, so that a scheduler can add and compare them.
//!
//! This belongs in the workspace's `apimachinery` crate, where upstream keeps it;
//! it lives here until that crate has one.

pub mod quantity;

pub use quantity::{Quantity, QuantityError, parse_quantity};
