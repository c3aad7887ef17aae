//! The objects the server stores.
//!
//! The apiserver is not generic over Go types: it handles every resource as a
//! `runtime.Object` through a codec and a `RESTStrategy`. Stage 5 does the same with
//! one [`Object`] type (any Kubernetes object as JSON with typed metadata, like
//! apimachinery's `unstructured.Unstructured`)
//! and a [`ResourceInfo`](crate::ResourceInfo) per served resource.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::{DynamicResourceScope, Resource, TypeMeta};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use crate::resource_info::ResourceInfo;

// ANCHOR: object
/// Any Kubernetes object: typed metadata and the rest as JSON.
///
/// Like kube's `DynamicObject`, but with `DynamicType = ()`, so stage 1's key
/// functions and stage 3's Reflector work on it unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
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

/// Reads an object in one pass. The derived `Deserialize` with two
/// `#[serde(flatten)]` fields first buffers the whole object into serde's
/// private `Content` tree, then reads `apiVersion`, `kind` and the rest out of
/// it again: every string is copied twice. This visitor reads each entry once,
/// straight into `types`, `metadata` or `data`, with the same result.
impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor {
            skip_managed_fields: false,
            raw_metadata: None,
        })
    }
}

/// A top-level key: the three the struct names, or any other.
enum ObjectKey {
    ApiVersion,
    Kind,
    Metadata,
    Other(String),
}

impl<'de> Deserialize<'de> for ObjectKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = ObjectKey;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a field name")
            }

            fn visit_str<E: serde::de::Error>(
                self,
                key: &str,
            ) -> Result<ObjectKey, E> {
                Ok(match key {
                    "apiVersion" => ObjectKey::ApiVersion,
                    "kind" => ObjectKey::Kind,
                    "metadata" => ObjectKey::Metadata,
                    other => ObjectKey::Other(other.to_string()),
                })
            }

            fn visit_string<E: serde::de::Error>(
                self,
                key: String,
            ) -> Result<ObjectKey, E> {
                Ok(match key.as_str() {
                    "apiVersion" | "kind" | "metadata" => {
                        return self.visit_str(&key);
                    }
                    _ => ObjectKey::Other(key),
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

struct ObjectVisitor<'a, 'de> {
    /// Read past `metadata.managedFields` instead of decoding it.
    skip_managed_fields: bool,
    /// With `skip_managed_fields`: where to keep `metadata` as it is encoded
    /// (the object's metadata is then decoded from it).
    raw_metadata: Option<&'a mut Option<&'de RawValue>>,
}

impl<'de> Visitor<'de> for ObjectVisitor<'_, 'de> {
    type Value = Object;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("struct Object")
    }

    fn visit_map<A: MapAccess<'de>>(
        mut self,
        mut map: A,
    ) -> Result<Object, A::Error> {
        let mut api_version = None;
        let mut kind = None;
        let mut metadata = None;
        let mut data = serde_json::Map::new();
        while let Some(key) = map.next_key::<ObjectKey>()? {
            match key {
                ObjectKey::ApiVersion => {
                    api_version = Some(map.next_value::<serde_json::Value>()?)
                }
                ObjectKey::Kind => {
                    kind = Some(map.next_value::<serde_json::Value>()?)
                }
                ObjectKey::Metadata if self.skip_managed_fields => {
                    metadata = Some(match self.raw_metadata.as_deref_mut() {
                        Some(slot) => {
                            let raw: &'de RawValue = map.next_value()?;
                            *slot = Some(raw);
                            MetaWithoutManagedFields
                                .deserialize(
                                    &mut serde_json::Deserializer::from_str(
                                        raw.get(),
                                    ),
                                )
                                .map_err(serde::de::Error::custom)?
                        }
                        None => map.next_value_seed(MetaWithoutManagedFields)?,
                    })
                }
                ObjectKey::Metadata => {
                    metadata = Some(map.next_value::<ObjectMeta>()?)
                }
                ObjectKey::Other(key) => {
                    data.insert(key, map.next_value()?);
                }
            }
        }
        // As the derived, flattened `Option<TypeMeta>`: both strings, or none.
        // A lone or non-string `apiVersion` or `kind` stays among the other
        // fields, so it is written back as it came.
        let types = match (api_version, kind) {
            (
                Some(serde_json::Value::String(api_version)),
                Some(serde_json::Value::String(kind)),
            ) => Some(TypeMeta { api_version, kind }),
            (api_version, kind) => {
                if let Some(value) = api_version {
                    data.insert("apiVersion".to_string(), value);
                }
                if let Some(value) = kind {
                    data.insert("kind".to_string(), value);
                }
                None
            }
        };
        Ok(Object {
            types,
            metadata: metadata.unwrap_or_default(),
            data: serde_json::Value::Object(data),
        })
    }
}

/// Reads `metadata` without its `managedFields`: every other entry is decoded
/// as the whole object's would be, the managed fields are only read past.
struct MetaWithoutManagedFields;

impl<'de> DeserializeSeed<'de> for MetaWithoutManagedFields {
    type Value = ObjectMeta;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<ObjectMeta, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MetaWithoutManagedFields {
    type Value = ObjectMeta;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("struct ObjectMeta")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<ObjectMeta, A::Error> {
        let mut entries = serde_json::Map::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "managedFields" {
                map.next_value::<IgnoredAny>()?;
            } else {
                entries.insert(key.into_owned(), map.next_value()?);
            }
        }
        ObjectMeta::deserialize(serde_json::Value::Object(entries))
            .map_err(serde::de::Error::custom)
    }
}

impl Object {
    /// Decodes an object's JSON without its `metadata.managedFields`, in one
    /// pass: all that a printer reads (no `printPod` or other column reads the
    /// managed fields), at a fraction of the whole object's cost, since the
    /// managed fields are often the larger part of it.
    pub fn from_json_without_managed_fields(
        json: &[u8],
    ) -> serde_json::Result<Object> {
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let obj = deserializer.deserialize_map(ObjectVisitor {
            skip_managed_fields: true,
            raw_metadata: None,
        })?;
        deserializer.end()?;
        Ok(obj)
    }

    /// [`from_json_without_managed_fields`](Self::from_json_without_managed_fields),
    /// and the object's `metadata` as it is encoded (managed fields included), in
    /// the same pass: what a Table row needs, its cells and its
    /// `PartialObjectMetadata`.
    pub fn from_json_without_managed_fields_with_metadata(
        json: &[u8],
    ) -> serde_json::Result<(Object, Option<&RawValue>)> {
        let mut raw_metadata = None;
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let obj = deserializer.deserialize_map(ObjectVisitor {
            skip_managed_fields: true,
            raw_metadata: Some(&mut raw_metadata),
        })?;
        deserializer.end()?;
        Ok((obj, raw_metadata))
    }

    /// An object of `info`'s kind with this namespace and name, and `data` as its
    /// other fields.
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

    /// An empty object of `info`'s kind, without a name: what an update that
    /// may create (`ignoreNotFound`) starts from.
    pub fn empty(info: &ResourceInfo) -> Self {
        Object {
            types: Some(info.type_meta()),
            metadata: ObjectMeta::default(),
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
    pub fn with_labels<'a>(
        mut self,
        labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
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

    /// The value at a dotted path below the top level (`spec.nodeName`), if it is a
    /// string, number or boolean, as a string.
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// Without its managed fields, an object decodes as it does whole, but for
    /// them: every other metadata field, the types and the other fields; and a
    /// body that is not one object is still an error.
    #[test]
    fn an_object_decodes_without_its_managed_fields() {
        let json = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": "web", "namespace": "default", "resourceVersion": "7",
                "creationTimestamp": "2026-11-28T02:29:52Z", "labels": {"app": "web"},
                "managedFields": [{"manager": "kubectl", "operation": "Update",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:nodeName": {}}}}],
            },
            "spec": {"nodeName": "n1"}, "status": {"phase": "Running"},
        })
        .to_string();
        let mut whole: Object = serde_json::from_str(&json).expect("whole");
        assert!(whole.metadata.managed_fields.is_some());
        whole.metadata.managed_fields = None;
        let slim = Object::from_json_without_managed_fields(json.as_bytes())
            .expect("without managed fields");
        assert_eq!(slim, whole);
        let (with_metadata, raw) =
            Object::from_json_without_managed_fields_with_metadata(json.as_bytes())
                .expect("with its metadata");
        assert_eq!(with_metadata, whole);
        let raw: serde_json::Value =
            serde_json::from_str(raw.expect("metadata").get()).expect("JSON");
        assert_eq!(raw["managedFields"][0]["manager"], "kubectl");
        assert_eq!(raw["name"], "web");
        assert!(Object::from_json_without_managed_fields(b"{} {}").is_err());
        assert!(Object::from_json_without_managed_fields(b"[1]").is_err());
    }

    /// A running pod on `node`, labelled `app=web`: the object the unit tests of
    /// this crate's selection code share.
    pub(crate) fn pod(name: &str, node: &str) -> Object {
        Object::new(&ResourceInfo::PODS, Some("default"), name)
            .with_data(
                json!({"spec": {"nodeName": node}, "status": {"phase": "Running"}}),
            )
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
    fn one_pass_decoding_reads_types_metadata_and_the_rest() {
        let text = r#"{"kind":"Pod","spec":{"nodeName":"n"},"apiVersion":"v1",
            "metadata":{"name":"a","labels":{"x":"y"}},"status":{}}"#;
        let obj: Object = serde_json::from_str(text).unwrap();
        assert_eq!(obj.types, Some(ResourceInfo::PODS.type_meta()));
        assert_eq!(obj.metadata.name.as_deref(), Some("a"));
        assert_eq!(obj.data, json!({"spec": {"nodeName": "n"}, "status": {}}));
        // The same from a `Value`, as `serde_json::from_value` callers do.
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::from_value::<Object>(value).unwrap(), obj);
    }

    #[test]
    fn a_lone_or_odd_type_field_stays_among_the_other_fields() {
        let obj: Object =
            serde_json::from_str(r#"{"kind":"Pod","spec":{}}"#).unwrap();
        assert_eq!(obj.types, None);
        assert_eq!(obj.metadata, ObjectMeta::default());
        assert_eq!(obj.data, json!({"kind": "Pod", "spec": {}}));
        assert_eq!(
            serde_json::to_value(&obj).unwrap(),
            json!({"kind": "Pod", "metadata": {}, "spec": {}})
        );
        let obj: Object =
            serde_json::from_str(r#"{"apiVersion":1,"kind":"Pod"}"#).unwrap();
        assert_eq!(obj.types, None);
        assert_eq!(obj.data, json!({"apiVersion": 1, "kind": "Pod"}));
        let empty: Object = serde_json::from_str("{}").unwrap();
        assert_eq!(empty.data, json!({}));
    }

    #[test]
    fn what_is_not_an_object_is_an_error() {
        for text in [
            "[]",
            "\"pod\"",
            "null",
            r#"{"metadata":[]}"#,
            r#"{"metadata":{"name":1}}"#,
            "{",
        ] {
            assert!(serde_json::from_str::<Object>(text).is_err(), "{text}");
        }
    }
}
