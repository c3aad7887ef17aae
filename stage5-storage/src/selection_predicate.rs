//! apiserver's `pkg/storage/selection_predicate.go`: which objects a list or watch
//! wants, from `?labelSelector=` and `?fieldSelector=` (parsed by the shared
//! `apimachinery` crate).

use std::collections::BTreeMap;

use apimachinery::fields::{FieldSelector, FieldSelectorError, Fields};
use apimachinery::labels::{SelectorError, matches_labels, parse_label_selector};
use kube::core::Selector;

use crate::Object;
use crate::resource_info::ResourceInfo;

/// Why a selector was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    /// The label selector does not parse.
    #[error("unable to parse requirement: {0}")]
    Label(#[from] SelectorError),
    /// A field selector term has no operator.
    #[error(transparent)]
    Field(#[from] FieldSelectorError),
    /// A field label this resource does not support (`field label not supported:
    /// x`).
    #[error("field label not supported: {0}")]
    UnsupportedField(String),
}

// ANCHOR: selection_predicate
/// Mirrors apiserver's `storage.SelectionPredicate`: which objects a list or watch
/// wants.
#[derive(Clone, Debug, Default)]
pub struct SelectionPredicate {
    /// The label selector.
    pub label: Selector,
    /// The field selector.
    pub field: FieldSelector,
}

impl SelectionPredicate {
    /// Parses `?labelSelector=` and `?fieldSelector=` for `info`, rejecting field
    /// labels the resource does not support.
    pub fn parse(
        info: &ResourceInfo,
        label_selector: &str,
        field_selector: &str,
    ) -> Result<SelectionPredicate, SelectionError> {
        let label = parse_label_selector(label_selector)?;
        let field = FieldSelector::parse(field_selector)?;
        if let Some(bad) = field
            .requirements()
            .iter()
            .find(|r| !info.supports_field_label(&r.field))
        {
            return Err(SelectionError::UnsupportedField(bad.field.clone()));
        }
        Ok(SelectionPredicate { label, field })
    }

    /// Whether it selects every object (`Everything`).
    pub fn is_everything(&self) -> bool {
        self.label.selects_all() && self.field.is_empty()
    }

    /// Whether an object with these labels and fields is selected
    /// (`MatchesObjectAttributes`).
    pub fn matches_attrs(
        &self,
        labels: Option<&BTreeMap<String, String>>,
        fields: &Fields,
    ) -> bool {
        matches_labels(&self.label, labels) && self.field.matches(fields)
    }

    /// Whether `obj` is selected, computing its fields with `info` when the field
    /// selector needs them (`Matches`).
    pub fn matches(&self, info: &ResourceInfo, obj: &Object) -> bool {
        if !matches_labels(&self.label, obj.metadata.labels.as_ref()) {
            return false;
        }
        self.field.is_empty() || self.field.matches(&info.fields(obj))
    }
}
// ANCHOR_END: selection_predicate

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::tests::pod;

    #[test]
    fn a_predicate_rejects_unsupported_field_labels() {
        let err = SelectionPredicate::parse(
            &ResourceInfo::CONFIGMAPS,
            "",
            "spec.nodeName=a",
        )
        .unwrap_err();
        assert_eq!(
            err,
            SelectionError::UnsupportedField("spec.nodeName".into())
        );
        let p = SelectionPredicate::parse(
            &ResourceInfo::PODS,
            "app=web",
            "spec.nodeName=n",
        )
        .unwrap();
        assert!(p.matches(&ResourceInfo::PODS, &pod("a", "n")));
        assert!(!p.matches(&ResourceInfo::PODS, &pod("a", "m")));
        assert!(
            SelectionPredicate::parse(&ResourceInfo::PODS, "a in (", "").is_err()
        );
    }
}
