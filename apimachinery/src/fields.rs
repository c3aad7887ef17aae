//! Field selectors: `spec.nodeName=node-1,status.phase!=Failed`.
//!
//! Mirrors apimachinery's [`pkg/fields`] (`selector.go`: `ParseSelector`,
//! `RequiresExactMatch`, `Matches`; `fields.go`: `Set`). An object's selectable
//! fields are computed once, by the resource's strategy
//! (`GetAttrs`/`ToSelectableFields` in each registry's `strategy.go`), into a
//! small [`Fields`] set; a [`FieldSelector`] is an AND of `=`/`==`/`!=` requirements
//! over it.
//!
//! Stage 5's server parses `?fieldSelector=` with it, and its watch cache asks
//! [`FieldSelector::requires_exact_match`] for the trigger value (`spec.nodeName`).
//!
//! [`pkg/fields`]: https://github.com/kubernetes/apimachinery/tree/v0.36.0/pkg/fields

use std::fmt;

use smallvec::SmallVec;

/// An object's field labels and values, computed once (a strategy's `GetAttrs`).
pub type Fields = SmallVec<[(&'static str, String); 4]>;

/// Whatever can answer "the value of this field label": the computed
/// [`Fields`], or a cache's packed copy of them.
pub trait FieldSource {
    /// The value of `label`, if the object has that field label.
    fn field(&self, label: &str) -> Option<&str>;
}

impl FieldSource for Fields {
    fn field(&self, label: &str) -> Option<&str> {
        field_value(self, label)
    }
}

/// The value of `label` in `fields`.
pub fn field_value<'a>(fields: &'a Fields, label: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(name, _)| *name == label)
        .map(|(_, value)| value.as_str())
}

/// A field selector's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
}

/// One requirement of a field selector: `spec.nodeName=node-0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRequirement {
    /// The field label.
    pub field: String,
    /// The operator.
    pub op: FieldOp,
    /// The value.
    pub value: String,
}

/// A parsed field selector: apimachinery's `fields.Selector` (an AND of
/// requirements).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

/// Why a field selector was rejected: a term without an operator
/// (`fields.ParseSelector`'s "invalid selector" error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid selector: '{selector}'; can't understand '{term}'")]
pub struct FieldSelectorError {
    /// The whole selector.
    pub selector: String,
    /// The term that has no operator.
    pub term: String,
}

impl FieldSelector {
    /// Mirrors `fields.ParseSelector`: `a=b,c!=d,e==f`; an empty string selects
    /// everything. Backslash escapes `\,` `\=` `\!` and `\\` are honoured in
    /// values.
    pub fn parse(selector: &str) -> Result<FieldSelector, FieldSelectorError> {
        let mut requirements = Vec::new();
        for term in split_unescaped(selector, ',') {
            if term.trim().is_empty() {
                continue;
            }
            let (field, op, value) = if let Some(i) = find_unescaped(&term, "!=") {
                (&term[..i], FieldOp::NotEquals, &term[i + 2..])
            } else if let Some(i) = find_unescaped(&term, "==") {
                (&term[..i], FieldOp::Equals, &term[i + 2..])
            } else if let Some(i) = find_unescaped(&term, "=") {
                (&term[..i], FieldOp::Equals, &term[i + 1..])
            } else {
                return Err(FieldSelectorError {
                    selector: selector.to_string(),
                    term: term.clone(),
                });
            };
            requirements.push(FieldRequirement {
                field: field.trim().to_string(),
                op,
                value: unescape(value.trim()),
            });
        }
        Ok(FieldSelector { requirements })
    }

    /// The same selector with each field label renamed by `rename`: what a
    /// scheme's field label conversion does for a type served in two versions.
    #[must_use]
    pub fn with_renamed_fields(
        &self,
        rename: impl Fn(&str) -> String,
    ) -> FieldSelector {
        FieldSelector {
            requirements: self
                .requirements
                .iter()
                .map(|r| FieldRequirement {
                    field: rename(&r.field),
                    ..r.clone()
                })
                .collect(),
        }
    }

    /// The requirements, in the order written.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Whether it selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Mirrors `Selector.RequiresExactMatch`: the value `field` must equal, if the
    /// selector says.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.field == field && r.op == FieldOp::Equals)
            .map(|r| r.value.as_str())
    }

    /// Whether an object with these fields is selected. A missing field reads as
    /// `""`.
    pub fn matches<F: FieldSource + ?Sized>(&self, fields: &F) -> bool {
        self.requirements.iter().all(|r| {
            let actual = fields.field(&r.field).unwrap_or("");
            match r.op {
                FieldOp::Equals => actual == r.value,
                FieldOp::NotEquals => actual != r.value,
            }
        })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = match r.op {
                FieldOp::Equals => "=",
                FieldOp::NotEquals => "!=",
            };
            write!(f, "{}{op}{}", r.field, r.value)?;
        }
        Ok(())
    }
}

fn split_unescaped(s: &str, sep: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            current.push(c);
            if let Some(next) = chars.next() {
                current.push(next);
            }
        } else if c == sep {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
}

fn find_unescaped(s: &str, needle: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i..].starts_with(needle.as_bytes()) {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(node: &str) -> Fields {
        let mut f = Fields::new();
        f.push(("spec.nodeName", node.to_string()));
        f.push(("status.phase", "Running".to_string()));
        f
    }

    #[test]
    fn field_selectors_parse_match_and_report_exact_matches() {
        let sel = FieldSelector::parse("spec.nodeName=node-1,status.phase!=Failed")
            .unwrap();
        assert_eq!(sel.requires_exact_match("spec.nodeName"), Some("node-1"));
        assert_eq!(sel.requires_exact_match("status.phase"), None);
        assert!(sel.matches(&fields("node-1")));
        assert!(!sel.matches(&fields("node-2")));
        assert!(FieldSelector::parse("").unwrap().is_empty());
        assert_eq!(
            FieldSelector::parse("spec.nodeName").unwrap_err(),
            FieldSelectorError {
                selector: "spec.nodeName".into(),
                term: "spec.nodeName".into()
            }
        );
        assert_eq!(
            FieldSelector::parse(r"a==x\,y").unwrap().requirements()[0].value,
            "x,y"
        );
    }

    #[test]
    fn a_missing_field_reads_as_empty_and_selectors_print_back() {
        let sel =
            FieldSelector::parse("spec.missing!=x, spec.nodeName == n").unwrap();
        assert!(sel.matches(&fields("n")));
        assert_eq!(sel.to_string(), "spec.missing!=x,spec.nodeName=n");
        assert_eq!(field_value(&fields("n"), "status.phase"), Some("Running"));
        assert_eq!(field_value(&fields("n"), "nope"), None);
    }
}
