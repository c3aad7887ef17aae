//! The objects the server stores, the resource types it serves, and how they are selected.
//!
//! The apiserver is not generic over Go types: it handles every resource as a `runtime.Object`
//! through a codec and a `RESTStrategy`. Stage 5 does the same with one [`Object`] type (any
//! Kubernetes object as JSON with typed metadata) and a [`ResourceInfo`] per served resource.
//!
//! Selection mirrors apiserver's `storage.SelectionPredicate`: a label selector (parsed by stage 4's
//! [`parse_label_selector`]) and a field selector over the few field labels each resource
//! supports (`GetAttrs` in each registry's `strategy.go`: `metadata.name`, `metadata.namespace`,
//! and for pods `spec.nodeName` and `status.phase`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::{DynamicResourceScope, Resource, Selector, TypeMeta};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use stage4_shared_informer::{SelectorError, matches_labels, parse_label_selector};

// ANCHOR: object
/// Any Kubernetes object: typed metadata and the rest as JSON.
///
/// Like kube's `DynamicObject`, but with `DynamicType = ()`, so stage 1's key functions and stage
/// 3's Reflector work on it unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Object {
    /// `apiVersion` and `kind`.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub types: Option<TypeMeta>,
    /// `metadata`.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Every other top-level field (`spec`, `status`, `data`, …).
    #[serde(flatten)]
    pub data: serde_json::Value,
}
// ANCHOR_END: object

impl Object {
    /// An object of `info`'s kind with this namespace and name, and `data` as its other fields.
    pub fn new(info: &ResourceInfo, namespace: Option<&str>, name: &str) -> Self {
        Object {
            types: Some(info.type_meta()),
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: namespace.map(str::to_string),
                ..ObjectMeta::default()
            },
            data: serde_json::Value::Object(serde_json::Map::new()),
        }
    }

    /// The same object with `data` as its other fields.
    #[must_use]
    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = data;
        self
    }

    /// The same object with these labels.
    #[must_use]
    pub fn with_labels<'a>(mut self, labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        self.metadata.labels = Some(
            labels
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        self
    }

    /// `metadata.name`, or `""`.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    /// `metadata.namespace`, or `""`.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("")
    }

    /// `metadata.resourceVersion`, or `""`.
    pub fn resource_version(&self) -> &str {
        self.metadata.resource_version.as_deref().unwrap_or("")
    }

    /// The value at a dotted path below the top level (`spec.nodeName`), if it is a string,
    /// number or boolean, as a string.
    pub fn field(&self, path: &str) -> Option<Cow<'_, str>> {
        let mut value = &self.data;
        for part in path.split('.') {
            value = value.get(part)?;
        }
        match value {
            serde_json::Value::String(s) => Some(Cow::Borrowed(s)),
            serde_json::Value::Bool(b) => Some(Cow::Owned(b.to_string())),
            serde_json::Value::Number(n) => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    }
}

impl Resource for Object {
    type DynamicType = ();
    type Scope = DynamicResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Object".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "objects".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

// ANCHOR: resource_info
/// One served resource type: what discovery reports, where its objects live in etcd, and which
/// field labels its field selectors may use. Mirrors the facts a registry's `Store` and strategy
/// give the apiserver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceInfo {
    /// API group; `""` for the core group.
    pub group: &'static str,
    /// API version, e.g. `v1`.
    pub version: &'static str,
    /// Kind, e.g. `Pod`.
    pub kind: &'static str,
    /// Plural resource name, e.g. `pods`: the URL segment and the etcd key segment.
    pub plural: &'static str,
    /// Singular name for discovery, e.g. `pod`.
    pub singular: &'static str,
    /// Short names for kubectl, e.g. `po`.
    pub short_names: &'static [&'static str],
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Field labels beyond `metadata.name` and `metadata.namespace` that field selectors accept.
    pub field_labels: &'static [&'static str],
}
// ANCHOR_END: resource_info

impl ResourceInfo {
    /// `v1` or `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `apiVersion` and `kind` of an object of this type.
    pub fn type_meta(&self) -> TypeMeta {
        TypeMeta {
            api_version: self.api_version(),
            kind: self.kind.to_string(),
        }
    }

    /// `apiVersion` and `kind` of a list of this type (`PodList`).
    pub fn list_type_meta(&self) -> TypeMeta {
        TypeMeta {
            api_version: self.api_version(),
            kind: format!("{}List", self.kind),
        }
    }

    /// The etcd prefix of every object of this type: `/registry/pods/`.
    pub fn key_prefix(&self) -> String {
        if self.group.is_empty() || self.group == "apps" {
            format!("/registry/{}/", self.plural)
        } else {
            format!("/registry/{}/{}/", self.group, self.plural)
        }
    }

    /// Whether `label` may appear in a field selector for this type.
    pub fn supports_field_label(&self, label: &str) -> bool {
        label == "metadata.name"
            || label == "metadata.namespace"
            || self.field_labels.contains(&label)
    }

    /// Mirrors a strategy's `GetAttrs` for fields: every supported field label and its value.
    pub fn fields(&self, obj: &Object) -> Fields {
        let mut fields = Fields::new();
        fields.push(("metadata.name", obj.name().to_string()));
        if self.namespaced {
            fields.push(("metadata.namespace", obj.namespace().to_string()));
        }
        for label in self.field_labels {
            let value = obj.field(label).map(Cow::into_owned).unwrap_or_default();
            fields.push((label, value));
        }
        fields
    }

    /// Pods: `spec.nodeName` and `status.phase` are field labels.
    pub const PODS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Pod",
        plural: "pods",
        singular: "pod",
        short_names: &["po"],
        namespaced: true,
        field_labels: &["spec.nodeName", "status.phase"],
    };
    /// ConfigMaps.
    pub const CONFIGMAPS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
        singular: "configmap",
        short_names: &["cm"],
        namespaced: true,
        field_labels: &[],
    };
    /// Secrets: `type` is a field label.
    pub const SECRETS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Secret",
        plural: "secrets",
        singular: "secret",
        short_names: &[],
        namespaced: true,
        field_labels: &["type"],
    };
    /// Namespaces (cluster-scoped): `status.phase` is a field label.
    pub const NAMESPACES: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        singular: "namespace",
        short_names: &["ns"],
        namespaced: false,
        field_labels: &["status.phase"],
    };
    /// Nodes (cluster-scoped): `spec.unschedulable` is a field label.
    pub const NODES: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Node",
        plural: "nodes",
        singular: "node",
        short_names: &["no"],
        namespaced: false,
        field_labels: &["spec.unschedulable"],
    };
    /// Deployments (`apps/v1`).
    pub const DEPLOYMENTS: ResourceInfo = ResourceInfo {
        group: "apps",
        version: "v1",
        kind: "Deployment",
        plural: "deployments",
        singular: "deployment",
        short_names: &["deploy"],
        namespaced: true,
        field_labels: &[],
    };

    /// Every resource type the server serves.
    pub const BUILTIN: &'static [ResourceInfo] = &[
        ResourceInfo::PODS,
        ResourceInfo::CONFIGMAPS,
        ResourceInfo::SECRETS,
        ResourceInfo::NAMESPACES,
        ResourceInfo::NODES,
        ResourceInfo::DEPLOYMENTS,
    ];
}

/// An object's field labels and values, computed once (a strategy's `GetAttrs`).
pub type Fields = SmallVec<[(&'static str, String); 4]>;

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

/// A parsed field selector: apimachinery's `fields.Selector` (an AND of requirements).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

/// Why a selector was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    /// The label selector does not parse.
    #[error("unable to parse requirement: {0}")]
    Label(#[from] SelectorError),
    /// A field selector term has no operator.
    #[error("invalid selector: '{0}'; can't understand '{1}'")]
    FieldSyntax(String, String),
    /// A field label this resource does not support (`field label not supported: x`).
    #[error("field label not supported: {0}")]
    UnsupportedField(String),
}

impl FieldSelector {
    /// Mirrors `fields.ParseSelector`: `a=b,c!=d,e==f`; an empty string selects everything.
    /// Backslash escapes `\,` `\=` `\!` and `\\` are honoured in values.
    pub fn parse(selector: &str) -> Result<FieldSelector, SelectionError> {
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
                return Err(SelectionError::FieldSyntax(
                    selector.to_string(),
                    term.clone(),
                ));
            };
            requirements.push(FieldRequirement {
                field: field.trim().to_string(),
                op,
                value: unescape(value.trim()),
            });
        }
        Ok(FieldSelector { requirements })
    }

    /// The requirements, in the order written.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Whether it selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Mirrors `Selector.RequiresExactMatch`: the value `field` must equal, if the selector says.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.field == field && r.op == FieldOp::Equals)
            .map(|r| r.value.as_str())
    }

    /// Whether an object with these fields is selected. A missing field reads as `""`.
    pub fn matches(&self, fields: &Fields) -> bool {
        self.requirements.iter().all(|r| {
            let actual = field_value(fields, &r.field).unwrap_or("");
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

// ANCHOR: selection_predicate
/// Mirrors apiserver's `storage.SelectionPredicate`: which objects a list or watch wants.
#[derive(Clone, Debug, Default)]
pub struct SelectionPredicate {
    /// The label selector.
    pub label: Selector,
    /// The field selector.
    pub field: FieldSelector,
}

impl SelectionPredicate {
    /// Parses `?labelSelector=` and `?fieldSelector=` for `info`, rejecting field labels the
    /// resource does not support.
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

    /// Whether an object with these labels and fields is selected (`MatchesObjectAttributes`).
    pub fn matches_attrs(
        &self,
        labels: Option<&BTreeMap<String, String>>,
        fields: &Fields,
    ) -> bool {
        matches_labels(&self.label, labels) && self.field.matches(fields)
    }

    /// Whether `obj` is selected, computing its fields with `info` when the field selector needs
    /// them (`Matches`).
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
    use serde_json::json;

    fn pod(name: &str, node: &str) -> Object {
        Object::new(&ResourceInfo::PODS, Some("default"), name)
            .with_data(json!({"spec": {"nodeName": node}, "status": {"phase": "Running"}}))
            .with_labels([("app", "web")])
    }

    #[test]
    fn an_object_round_trips_through_json_with_its_type() {
        let obj = pod("web-0", "node-1");
        let text = serde_json::to_string(&obj).unwrap();
        assert!(text.contains(r#""kind":"Pod""#), "{text}");
        let back: Object = serde_json::from_str(&text).unwrap();
        assert_eq!(back, obj);
    }

    #[test]
    fn fields_follow_the_resource_and_read_dotted_paths() {
        let fields = ResourceInfo::PODS.fields(&pod("web-0", "node-1"));
        assert_eq!(field_value(&fields, "spec.nodeName"), Some("node-1"));
        assert_eq!(field_value(&fields, "status.phase"), Some("Running"));
        assert_eq!(field_value(&fields, "metadata.namespace"), Some("default"));
    }

    #[test]
    fn field_selectors_parse_match_and_report_exact_matches() {
        let sel = FieldSelector::parse("spec.nodeName=node-1,status.phase!=Failed").unwrap();
        assert_eq!(sel.requires_exact_match("spec.nodeName"), Some("node-1"));
        assert_eq!(sel.requires_exact_match("status.phase"), None);
        let fields = ResourceInfo::PODS.fields(&pod("a", "node-1"));
        assert!(sel.matches(&fields));
        let other = ResourceInfo::PODS.fields(&pod("a", "node-2"));
        assert!(!sel.matches(&other));
        assert!(FieldSelector::parse("").unwrap().is_empty());
        assert!(matches!(
            FieldSelector::parse("spec.nodeName"),
            Err(SelectionError::FieldSyntax(..))
        ));
        assert_eq!(
            FieldSelector::parse(r"a==x\,y").unwrap().requirements()[0].value,
            "x,y"
        );
    }

    #[test]
    fn a_predicate_rejects_unsupported_field_labels() {
        let err = SelectionPredicate::parse(&ResourceInfo::CONFIGMAPS, "", "spec.nodeName=a")
            .unwrap_err();
        assert_eq!(
            err,
            SelectionError::UnsupportedField("spec.nodeName".into())
        );
        let p =
            SelectionPredicate::parse(&ResourceInfo::PODS, "app=web", "spec.nodeName=n").unwrap();
        assert!(p.matches(&ResourceInfo::PODS, &pod("a", "n")));
        assert!(!p.matches(&ResourceInfo::PODS, &pod("a", "m")));
        assert!(SelectionPredicate::parse(&ResourceInfo::PODS, "a in (", "").is_err());
    }
}
