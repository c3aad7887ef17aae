//! `metadata.managedFields` on the wire: mirrors apimachinery's
//! [`pkg/util/managedfields/internal`] (`managedfields.go`: `DecodeManagedFields`,
//! `encodeManagedFields`, `BuildManagerIdentifier`,
//! `sortEncodedManagedFields`; `capmanagers.go`; `stripmeta.go`).
//!
//! Inside, managers are told apart by an identifier: the JSON of their entry
//! without fields and time (and, for appliers, without apiVersion), e.g.
//! `{"manager":"kubectl-create","operation":"Update","apiVersion":"v1"}`. So one
//! manager applying has one `Apply` entry, and updating through two versions or
//! a subresource has one `Update` entry each.
//!
//! [`pkg/util/managedfields/internal`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/util/managedfields/internal/managedfields.go

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    FieldsV1, ManagedFieldsEntry, Time,
};
use serde_json::Value;

use structured_merge_diff::fieldpath::{Path, Set};
use structured_merge_diff::merge::{ManagedFields, VersionedSet};

/// `metav1.ManagedFieldsOperationApply`.
pub const APPLY: &str = "Apply";
/// `metav1.ManagedFieldsOperationUpdate`.
pub const UPDATE: &str = "Update";
/// Upstream's `DefaultMaxUpdateManagers`: at most this many `Update` entries.
pub const MAX_UPDATE_MANAGERS: usize = 10;
/// The manager the oldest `Update` entries are merged into beyond the cap.
pub const OLD_UPDATES_MANAGER: &str = "ancient-changes";

/// Mirrors `internal.Managed`: the sets and the time each was last changed.
#[derive(Clone, Debug, Default)]
pub struct Managed {
    /// The sets by manager identifier.
    pub fields: ManagedFields,
    /// When each manager last changed something.
    pub times: BTreeMap<String, Option<Time>>,
}

/// The parts of an entry that make a manager identifier.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ManagerInfo {
    /// `manager`.
    pub manager: String,
    /// `operation`: `Apply` or `Update`.
    pub operation: String,
    /// `apiVersion` (empty in an applier's identifier).
    pub api_version: String,
    /// `subresource`.
    pub subresource: String,
}

impl ManagerInfo {
    /// Mirrors `BuildManagerIdentifier`: the entry's JSON in Go's field order,
    /// without an applier's apiVersion.
    pub fn identifier(&self) -> String {
        let mut text = format!(
            "{{\"manager\":{},\"operation\":{}",
            Value::String(self.manager.clone()),
            Value::String(self.operation.clone())
        );
        if self.operation != APPLY && !self.api_version.is_empty() {
            text.push_str(&format!(
                ",\"apiVersion\":{}",
                Value::String(self.api_version.clone())
            ));
        }
        if !self.subresource.is_empty() {
            text.push_str(&format!(
                ",\"subresource\":{}",
                Value::String(self.subresource.clone())
            ));
        }
        text.push('}');
        text
    }

    /// The parts of an identifier (`None` if it is not one).
    pub fn parse(identifier: &str) -> Option<ManagerInfo> {
        let value: Value = serde_json::from_str(identifier).ok()?;
        let get = |name: &str| value[name].as_str().unwrap_or_default().to_string();
        Some(ManagerInfo {
            manager: get("manager"),
            operation: get("operation"),
            api_version: get("apiVersion"),
            subresource: get("subresource"),
        })
    }
}

/// Mirrors `DecodeManagedFields`: the entries as sets, or why they are not valid.
pub fn decode(entries: &[ManagedFieldsEntry]) -> Result<Managed, String> {
    let mut managed = Managed::default();
    for (i, entry) in entries.iter().enumerate() {
        let operation = entry.operation.as_deref().unwrap_or_default();
        if operation != APPLY && operation != UPDATE {
            return Err("operation must be `Apply` or `Update`".into());
        }
        let api_version = entry.api_version.as_deref().unwrap_or_default();
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match entry.fields_type.as_deref().unwrap_or_default() {
            "FieldsV1" => {}
            "" => {
                return Err(format!(
                    "missing fieldsType in managed fields entry {i}"
                ));
            }
            other => {
                return Err(format!(
                    "invalid fieldsType {other:?} in managed fields entry {i}"
                ));
            }
        }
        let set = match &entry.fields_v1 {
            Some(FieldsV1(value)) => Set::from_fields_v1(value)?,
            None => Set::new(),
        };
        let id = ManagerInfo {
            manager: entry.manager.clone().unwrap_or_default(),
            operation: operation.to_string(),
            api_version: api_version.to_string(),
            subresource: entry.subresource.clone().unwrap_or_default(),
        }
        .identifier();
        managed.fields.insert(
            id.clone(),
            VersionedSet {
                set,
                api_version: api_version.to_string(),
                applied: operation == APPLY,
            },
        );
        managed.times.insert(id, entry.time.clone());
    }
    Ok(managed)
}

/// Mirrors `encodeManagedFields` and `sortEncodedManagedFields`: one entry per
/// manager, `Apply` before `Update`, then oldest first, then by manager,
/// apiVersion and subresource. No managers is no `managedFields`.
pub fn encode(managed: &Managed) -> Option<Vec<ManagedFieldsEntry>> {
    if managed.fields.is_empty() {
        return None;
    }
    let mut entries: Vec<ManagedFieldsEntry> = managed
        .fields
        .iter()
        .map(|(id, versioned)| {
            let info = ManagerInfo::parse(id).unwrap_or_default();
            let operation = if versioned.applied { APPLY } else { UPDATE };
            ManagedFieldsEntry {
                // `manager` is `omitempty`: an empty one is left out.
                manager: Some(info.manager).filter(|m| !m.is_empty()),
                operation: Some(operation.to_string()),
                api_version: Some(versioned.api_version.clone()),
                time: managed.times.get(id).cloned().flatten(),
                fields_type: Some("FieldsV1".into()),
                fields_v1: Some(FieldsV1(versioned.set.to_fields_v1())),
                subresource: Some(info.subresource).filter(|s| !s.is_empty()),
            }
        })
        .collect();
    let seconds =
        |e: &ManagedFieldsEntry| e.time.as_ref().map_or(0, |t| t.0.as_second());
    entries.sort_by(|p, q| {
        p.operation
            .cmp(&q.operation)
            .then_with(|| seconds(p).cmp(&seconds(q)))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    Some(entries)
}

/// Mirrors `stripMetaManager`'s set: fields no manager owns.
pub fn stripped_fields() -> Set {
    Set::from_paths(&[
        Path::fields(&["apiVersion"]),
        Path::fields(&["kind"]),
        Path::fields(&["metadata"]),
        Path::fields(&["metadata", "name"]),
        Path::fields(&["metadata", "namespace"]),
        Path::fields(&["metadata", "creationTimestamp"]),
        Path::fields(&["metadata", "selfLink"]),
        Path::fields(&["metadata", "uid"]),
        Path::fields(&["metadata", "clusterName"]),
        Path::fields(&["metadata", "generation"]),
        Path::fields(&["metadata", "managedFields"]),
        Path::fields(&["metadata", "resourceVersion"]),
    ])
}

/// Mirrors `stripMetaManager.stripFields`: `manager`'s set without the
/// [`stripped_fields`]; a manager left with nothing goes.
pub fn strip(managed: &mut Managed, manager: &str) {
    let Some(versioned) = managed.fields.get_mut(manager) else {
        return;
    };
    versioned.set = versioned.set.difference(&stripped_fields());
    if versioned.set.is_empty() {
        managed.fields.remove(manager);
    }
}

/// Mirrors `capManagersManager.capUpdateManagers`: beyond
/// [`MAX_UPDATE_MANAGERS`] `Update` entries, the oldest are merged, per
/// apiVersion, into an `ancient-changes` entry.
pub fn cap_update_managers(managed: &mut Managed) {
    let mut updaters: Vec<String> = managed
        .fields
        .iter()
        .filter(|(_, v)| !v.applied)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    let seconds = |id: &String| {
        managed
            .times
            .get(id)
            .and_then(Option::as_ref)
            .map_or(0, |t| t.0.as_second())
    };
    updaters.sort_by(|a, b| seconds(a).cmp(&seconds(b)).then_with(|| a.cmp(b)));
    let mut first_of_version: BTreeMap<String, String> = BTreeMap::new();
    let mut length = updaters.len();
    for manager in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(versioned) = managed.fields.get(&manager).cloned() else {
            continue;
        };
        let time = managed.times.get(&manager).cloned().flatten();
        let version = versioned.api_version.clone();
        let bucket = ManagerInfo {
            manager: OLD_UPDATES_MANAGER.into(),
            operation: UPDATE.into(),
            api_version: version.clone(),
            subresource: String::new(),
        }
        .identifier();
        let Some(first) = first_of_version.get(&version).cloned() else {
            first_of_version.insert(version, manager);
            continue;
        };
        if !managed.fields.contains_key(&bucket)
            && let Some(moved) = managed.fields.remove(&first)
        {
            managed.fields.insert(bucket.clone(), moved);
        }
        let merged = managed
            .fields
            .get(&bucket)
            .map_or_else(|| versioned.set.clone(), |b| versioned.set.union(&b.set));
        managed.fields.insert(
            bucket.clone(),
            VersionedSet {
                set: merged,
                api_version: versioned.api_version.clone(),
                applied: false,
            },
        );
        managed.fields.remove(&manager);
        managed.times.remove(&manager);
        length -= 1;
        managed.times.insert(bucket, time);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(manager: &str, operation: &str, second: i64) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some(operation.into()),
            api_version: Some("v1".into()),
            time: Some(Time(
                k8s_openapi::jiff::Timestamp::from_second(second).expect("time"),
            )),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(FieldsV1(
                json!({"f:data": {format!("f:{manager}"): {}}}),
            )),
            subresource: None,
        }
    }

    #[test]
    fn identifiers_follow_gos_field_order() {
        let update = ManagerInfo {
            manager: "kubectl-create".into(),
            operation: UPDATE.into(),
            api_version: "v1".into(),
            subresource: String::new(),
        };
        assert_eq!(
            update.identifier(),
            r#"{"manager":"kubectl-create","operation":"Update","apiVersion":"v1"}"#
        );
        let apply = ManagerInfo {
            manager: "kubectl".into(),
            operation: APPLY.into(),
            api_version: "v1".into(),
            subresource: "status".into(),
        };
        assert_eq!(
            apply.identifier(),
            r#"{"manager":"kubectl","operation":"Apply","subresource":"status"}"#
        );
        assert_eq!(ManagerInfo::parse(&update.identifier()), Some(update));
    }

    #[test]
    fn entries_round_trip_sorted_apply_first_then_by_time() {
        let entries = vec![
            entry("late", UPDATE, 200),
            entry("early", UPDATE, 100),
            entry("applier", APPLY, 300),
        ];
        let managed = decode(&entries).expect("valid");
        let encoded = encode(&managed).expect("some");
        let order: Vec<&str> = encoded
            .iter()
            .filter_map(|e| e.manager.as_deref())
            .collect();
        assert_eq!(order, ["applier", "early", "late"]);
        assert_eq!(encoded[1], entries[1]);
        assert!(encode(&Managed::default()).is_none());
    }

    #[test]
    fn bad_entries_do_not_decode() {
        let mut bad = entry("m", "Patch", 1);
        assert!(decode(&[bad.clone()]).is_err());
        bad.operation = Some(UPDATE.into());
        bad.fields_type = Some("FieldsV2".into());
        assert_eq!(
            decode(&[bad.clone()]).expect_err("fieldsType").as_str(),
            "invalid fieldsType \"FieldsV2\" in managed fields entry 0"
        );
        bad.fields_type = Some("FieldsV1".into());
        bad.api_version = None;
        assert!(decode(&[bad]).is_err());
    }

    #[test]
    fn update_entries_are_capped_into_ancient_changes() {
        let entries: Vec<_> = (0..12)
            .map(|i| entry(&format!("m{i:02}"), UPDATE, 100 + i))
            .collect();
        let mut managed = decode(&entries).expect("valid");
        cap_update_managers(&mut managed);
        let encoded = encode(&managed).expect("some");
        assert_eq!(encoded.len(), MAX_UPDATE_MANAGERS);
        let bucket = encoded
            .iter()
            .find(|e| e.manager.as_deref() == Some(OLD_UPDATES_MANAGER))
            .expect("a bucket");
        assert_eq!(
            bucket.fields_v1,
            Some(FieldsV1(
                json!({"f:data": {"f:m00": {}, "f:m01": {}, "f:m02": {}}})
            ))
        );
        assert!(!encoded.iter().any(|e| e.manager.as_deref() == Some("m00")));
        assert!(encoded.iter().any(|e| e.manager.as_deref() == Some("m03")));
    }
}
