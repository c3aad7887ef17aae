//! Field paths and sets of them: mirrors structured-merge-diff's `fieldpath`
//! package (`element.go`, `path.go`, `set.go`, `serialize.go`,
//! `serialize-pe.go`).
//!
//! A [`Set`] is a tree: at each level the path elements that are members (the
//! field or item itself is owned) and the children (something below it is
//! owned). Its wire form is `FieldsV1`, the JSON of `metadata.managedFields[].fieldsV1`:
//!
//! | Element          | FieldsV1 key                     | In a path (`Path`'s `String`) |
//! |------------------|----------------------------------|-------------------------------|
//! | a field          | `f:replicas`                     | `.replicas`                   |
//! | a list-map item  | `k:{"name":"nginx"}` (keys sorted) | `[name="nginx"]`            |
//! | a set item       | `v:"example.com/finalizer"`      | `[="example.com/finalizer"]`  |
//! | an index         | `i:0`                            | `[0]`                         |
//!
//! A member is written as `{}`; an element that is both a member and has
//! children carries `".": {}` among them.
//!
//! See [`fieldpath`](https://github.com/kubernetes-sigs/structured-merge-diff/tree/v6.3.0/fieldpath).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

use crate::value;

/// Mirrors `fieldpath.PathElement`: one step into an object.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// `FieldName`: a field of a struct or a key of a map.
    Field(String),
    /// `Key`: the item of an associative list whose key fields have these values
    /// (sorted by name).
    Key(Vec<(String, Value)>),
    /// `Value`: the item of a set with this value.
    Value(Value),
    /// `Index`: an item of a list by position.
    Index(usize),
}

impl PathElement {
    /// A field element.
    pub fn field(name: &str) -> PathElement {
        PathElement::Field(name.to_string())
    }

    /// The element's rank in `PathElement.Compare`: fields, then keys, then
    /// values, then indices.
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// Mirrors `SerializePathElement`: `f:name`, `k:{...}`, `v:value`, `i:3`.
    pub fn serialize(&self) -> String {
        match self {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let map: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", Value::Object(map))
            }
            PathElement::Value(value) => format!("v:{value}"),
            PathElement::Index(index) => format!("i:{index}"),
        }
    }

    /// Mirrors `DeserializePathElement`. `Ok(None)` for an element type this
    /// version does not know (upstream drops those).
    pub fn deserialize(text: &str) -> Result<Option<PathElement>, String> {
        let Some((kind, rest)) = text.split_at_checked(2) else {
            return Err(format!("key must be 2 characters long: {text}"));
        };
        let mut chars = kind.chars();
        let (Some(kind), Some(':')) = (chars.next(), chars.next()) else {
            return Err(format!("missing colon: {text}"));
        };
        match kind {
            'f' => Ok(Some(PathElement::Field(rest.to_string()))),
            'v' => serde_json::from_str(rest)
                .map(|v| Some(PathElement::Value(v)))
                .map_err(|e| format!("parsing {text:?}: {e}")),
            'k' => {
                let fields: Map<String, Value> = serde_json::from_str(rest)
                    .map_err(|e| format!("parsing {text:?}: {e}"))?;
                Ok(Some(PathElement::Key(fields.into_iter().collect())))
            }
            'i' => rest
                .parse()
                .map(|i| Some(PathElement::Index(i)))
                .map_err(|e| format!("parsing {text:?}: {e}")),
            _ => Ok(None),
        }
    }
}

impl Ord for PathElement {
    /// Mirrors `PathElement.Compare`.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                value::compare_fields(a, b)
            }
            (PathElement::Value(a), PathElement::Value(b)) => value::compare(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    /// Mirrors `PathElement.String`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(name, value)| {
                        format!("{name}={}", value::to_string(value))
                    })
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(value) => write!(f, "[={}]", value::to_string(value)),
            PathElement::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// Mirrors `fieldpath.Path`: the steps from the object's root to a field.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// This path with `element` appended.
    #[must_use]
    pub fn child(&self, element: PathElement) -> Path {
        let mut next = self.0.clone();
        next.push(element);
        Path(next)
    }

    /// A path of field names (`MakePathOrDie("metadata", "name")`).
    pub fn fields(names: &[&str]) -> Path {
        Path(names.iter().map(|n| PathElement::field(n)).collect())
    }
}

impl fmt::Display for Path {
    /// Mirrors `Path.String`: the elements' strings joined (`.spec.replicas`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for element in &self.0 {
            write!(f, "{element}")?;
        }
        Ok(())
    }
}

/// Mirrors `fieldpath.Set`: the members at this level and the sets below.
/// Children are never empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    /// An empty set (`NewSet`).
    pub fn new() -> Set {
        Set::default()
    }

    /// A set of these paths.
    pub fn from_paths(paths: &[Path]) -> Set {
        let mut set = Set::new();
        for path in paths {
            set.insert(path);
        }
        set
    }

    /// Mirrors `Set.Insert`.
    pub fn insert(&mut self, path: &Path) {
        let Some((last, parents)) = path.0.split_last() else {
            return;
        };
        let mut node = self;
        for element in parents {
            node = node.children.entry(element.clone()).or_default();
        }
        node.members.insert(last.clone());
    }

    /// Mirrors `Set.Has`: whether `path` is a member.
    pub fn has(&self, path: &Path) -> bool {
        let Some((last, parents)) = path.0.split_last() else {
            return false;
        };
        let mut node = self;
        for element in parents {
            match node.children.get(element) {
                Some(child) => node = child,
                None => return false,
            }
        }
        node.members.contains(last)
    }

    /// Mirrors `Set.Empty`.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    /// Mirrors `Set.WithPrefix`: the set below `element` (empty if none).
    pub fn with_prefix(&self, element: &PathElement) -> Set {
        self.children.get(element).cloned().unwrap_or_default()
    }

    /// Mirrors `Set.Union`.
    #[must_use]
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (element, child) in &other.children {
            let merged = match out.children.get(element) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(element.clone(), merged);
        }
        out
    }

    /// Mirrors `Set.Intersection`.
    #[must_use]
    pub fn intersection(&self, other: &Set) -> Set {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, child)| {
                let both = child.intersection(other.children.get(element)?);
                (!both.is_empty()).then(|| (element.clone(), both))
            })
            .collect();
        Set { members, children }
    }

    /// Mirrors `Set.Difference`: the members of `self` not in `other` (members
    /// below a member of `other` stay).
    #[must_use]
    pub fn difference(&self, other: &Set) -> Set {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, child)| {
                let rest = match other.children.get(element) {
                    Some(theirs) => child.difference(theirs),
                    None => child.clone(),
                };
                (!rest.is_empty()).then(|| (element.clone(), rest))
            })
            .collect();
        Set { members, children }
    }

    /// Mirrors `Set.Iterate`: every member path, members of a level before its
    /// children, each level in order.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&Path::default(), &mut out);
        out
    }

    fn collect(&self, prefix: &Path, out: &mut Vec<Path>) {
        for member in &self.members {
            out.push(prefix.child(member.clone()));
        }
        for (element, child) in &self.children {
            child.collect(&prefix.child(element.clone()), out);
        }
    }

    /// Mirrors `Set.ToJSON` (`emitContentsV1`): the `FieldsV1` object.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        for member in &self.members {
            if self.children.get(member).is_none_or(Set::is_empty) {
                out.insert(member.serialize(), Value::Object(Map::new()));
            }
        }
        for (element, child) in &self.children {
            if child.is_empty() {
                continue;
            }
            let inner = child.emit(self.members.contains(element));
            out.insert(element.serialize(), Value::Object(inner));
        }
        if include_self && !out.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        out
    }

    /// Mirrors `Set.FromJSON` (`readIterV1`): a `FieldsV1` object back into a
    /// set. An element of an unknown type is dropped, as upstream drops it.
    pub fn from_fields_v1(value: &Value) -> Result<Set, String> {
        let Value::Object(map) = value else {
            return Err("FieldsV1 must be a JSON object".into());
        };
        let (set, _) = Set::read(map)?;
        Ok(set.unwrap_or_default())
    }

    /// The children read from `map`, and whether `map` marks its owner a member.
    fn read(map: &Map<String, Value>) -> Result<(Option<Set>, bool), String> {
        let mut children: Option<Set> = None;
        let mut is_member = false;
        for (key, value) in map {
            if key == "." {
                is_member = true;
                continue;
            }
            let Some(element) = PathElement::deserialize(key)? else {
                continue;
            };
            let Value::Object(inner) = value else {
                return Err(format!("the value of {key:?} must be a JSON object"));
            };
            let (grandchildren, child_is_member) = Set::read(inner)?;
            let set = children.get_or_insert_with(Set::new);
            if child_is_member {
                set.members.insert(element.clone());
            }
            if let Some(grandchildren) = grandchildren.filter(|g| !g.is_empty()) {
                set.children.insert(element, grandchildren);
            }
        }
        if children.is_none() {
            is_member = true;
        }
        Ok((children, is_member))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(name: &str) -> PathElement {
        PathElement::Key(vec![("name".into(), json!(name))])
    }

    fn p(elements: &[PathElement]) -> Path {
        Path(elements.to_vec())
    }

    #[test]
    fn fields_v1_round_trips_with_members_children_and_dots() {
        let mut set = Set::new();
        set.insert(&Path::fields(&["metadata", "labels", "app"]));
        let container = [
            PathElement::field("spec"),
            PathElement::field("containers"),
            key("nginx"),
        ];
        set.insert(&p(&container));
        let mut image = container.to_vec();
        image.push(PathElement::field("image"));
        set.insert(&p(&image));
        set.insert(&p(&[
            PathElement::field("metadata"),
            PathElement::field("finalizers"),
            PathElement::Value(json!("example.com/f")),
        ]));
        let wire = set.to_fields_v1();
        assert_eq!(
            wire,
            json!({
                "f:metadata": {
                    "f:finalizers": {"v:\"example.com/f\"": {}},
                    "f:labels": {"f:app": {}},
                },
                "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}}}},
            })
        );
        assert_eq!(
            serde_json::to_string(&wire["f:spec"]).expect("json"),
            r#"{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{}}}}"#
        );
        let back = Set::from_fields_v1(&wire).expect("parses");
        assert_eq!(back, set);
        assert!(back.has(&p(&container)));
        assert!(!back.has(&Path::fields(&["spec"])));
    }

    #[test]
    fn keys_are_sorted_and_unknown_elements_dropped() {
        let wire = json!({
            "f:spec": {"f:ports": {"k:{\"protocol\":\"TCP\",\"containerPort\":80}": {}}},
            "x:future": {},
        });
        let set = Set::from_fields_v1(&wire).expect("parses");
        let paths = set.paths();
        assert_eq!(paths.len(), 1);
        assert_eq!(
            paths[0].to_string(),
            ".spec.ports[containerPort=80,protocol=\"TCP\"]"
        );
        assert_eq!(
            set.to_fields_v1(),
            json!({"f:spec": {"f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {}}}})
        );
        assert!(Set::from_fields_v1(&json!({"f": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"k:notjson": {}})).is_err());
        assert!(Set::from_fields_v1(&json!([])).is_err());
    }

    #[test]
    fn union_intersection_difference() {
        let a = Set::from_paths(&[
            Path::fields(&["spec", "replicas"]),
            Path::fields(&["metadata", "labels", "app"]),
        ]);
        let b = Set::from_paths(&[
            Path::fields(&["spec", "replicas"]),
            Path::fields(&["spec", "paused"]),
        ]);
        let union = a.union(&b);
        assert_eq!(union.paths().len(), 3);
        let both = a.intersection(&b);
        assert_eq!(
            both,
            Set::from_paths(&[Path::fields(&["spec", "replicas"])])
        );
        let only_a = a.difference(&b);
        assert_eq!(
            only_a,
            Set::from_paths(&[Path::fields(&["metadata", "labels", "app"])])
        );
        assert!(a.difference(&a).is_empty());
        assert_eq!(a.difference(&a), Set::new(), "no empty children are left");
        // Iterate: members of a level before the levels below, in order.
        let order: Vec<String> =
            union.paths().iter().map(ToString::to_string).collect();
        assert_eq!(
            order,
            [".metadata.labels.app", ".spec.paused", ".spec.replicas"]
        );
    }

    #[test]
    fn element_order_is_upstreams() {
        let mut elements = [
            PathElement::Index(0),
            PathElement::Value(json!("a")),
            PathElement::Value(json!(2)),
            key("b"),
            PathElement::field("z"),
        ];
        elements.sort();
        let shown: Vec<String> = elements.iter().map(ToString::to_string).collect();
        assert_eq!(shown, [".z", "[name=\"b\"]", "[=2]", "[=\"a\"]", "[0]"]);
    }
}
