//! Server-side apply and field ownership: mirrors apiserver's
//! `pkg/endpoints/handlers/fieldmanager` (which wraps apimachinery's
//! `pkg/util/managedfields/internal`) over structured-merge-diff v4.
//!
//! Every write records who set which fields in `metadata.managedFields`:
//! creates, `PUT`s and JSON or merge patches as `Update` entries
//! ([`update_no_errors`], named by the `fieldManager` parameter or the
//! User-Agent's first word), and `PATCH` with
//! `Content-Type: application/apply-patch+yaml` as `Apply` entries
//! ([`apply`]). An apply that would change a field another manager owns fails
//! with 409 and the list of conflicts, unless `force=true`.
//!
//! The libraries under it sit where upstream keeps them: the field sets, typed
//! walks and the merge in the workspace's `structured-merge-diff` crate, the
//! wire form of `managedFields` and the served kinds' schemas in
//! `apimachinery::util::managedfields`. This module is the glue the handlers
//! call.
//!
//! | Go (upstream)                                   | Rust (here)                                   |
//! |-------------------------------------------------|-----------------------------------------------|
//! | `fieldpath.Set`, `typed`, `merge.Updater` (structured-merge-diff) | [`structured_merge_diff`]     |
//! | the OpenAPI-built `schema.Schema` (`NewTypeConverter`) | [`typeconverter`](apimachinery::util::managedfields::typeconverter) |
//! | `merge.Conflicts`, `internal.NewConflictError`  | [`Conflict`], [`conflict_error`]              |
//! | `DecodeManagedFields`, `encodeManagedFields`, `BuildManagerIdentifier`, `stripMetaManager`, `capManagersManager` | [`managed_fields`] |
//! | `skipNonAppliedManager` (`before-first-apply`)  | in [`apply`]                                  |
//! | `FieldManager.UpdateNoErrors` / `Apply`         | [`update_no_errors`] / [`apply`]              |
//! | `managerOrUserAgent`, `prefixFromUserAgent`     | [`manager_or_user_agent`]                     |
//! | `ValidatePatchOptions`                          | [`validate_patch_options`]                    |
//!
//! Where it differs: there is one version per resource, so no conversion
//! between versions; the schema is a table of the list keys and atomic types
//! of the served kinds, with everything else deduced (objects merged field by
//! field, lists atomic); kubectl's `last-applied-configuration` annotation is
//! not kept in step (`lastAppliedManager`, `lastAppliedUpdater`); status is
//! not reset by a write to the main resource, so status fields are tracked
//! like any other.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Status, StatusCause, StatusDetails,
};
use serde_json::{Map, Value};
use stage5_storage::{Object, ResourceInfo};

use crate::status::ApiError;

use crate::registry::strategy_for;
use apimachinery::util::managedfields::internal::{
    self as managed_fields, APPLY, Managed, ManagerInfo, UPDATE,
};
use structured_merge_diff::merge::{self as update, ApplyError, Conflict};

/// Upstream's `FieldManagerMaxLength`.
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// The manager that owns an object's fields when it is first applied to
/// without managed fields (`skipNonAppliedManager`).
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// Mirrors `prefixFromUserAgent`: the User-Agent up to its first `/`, without
/// unprintable characters, cut to [`FIELD_MANAGER_MAX_LENGTH`] bytes.
pub fn prefix_from_user_agent(user_agent: &str) -> String {
    let head = user_agent.split('/').next().unwrap_or_default();
    let mut out = String::new();
    for c in head.chars().filter(|c| is_print(*c)) {
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

/// Mirrors `managerOrUserAgent`: the `fieldManager` parameter, else the
/// User-Agent's prefix (`kubectl-create`, `kube`, ...).
pub fn manager_or_user_agent(manager: &str, user_agent: &str) -> String {
    if manager.is_empty() {
        prefix_from_user_agent(user_agent)
    } else {
        manager.to_string()
    }
}

/// Go's `unicode.IsPrint`, near enough: no control characters, and of the
/// spaces only U+0020.
fn is_print(c: char) -> bool {
    !c.is_control() && (c == ' ' || !c.is_whitespace())
}

/// Mirrors `ValidatePatchOptions`: an apply needs a `fieldManager`, other
/// patches may not set `force`, and a manager is at most 128 printable
/// characters. 422 `Invalid` for `PatchOptions.meta.k8s.io`.
pub fn validate_patch_options(
    manager: &str,
    force_given: bool,
    apply: bool,
) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    let cause = |reason: &str, field: String, message: String| StatusCause {
        reason: Some(reason.into()),
        field: Some(field),
        message: Some(message),
    };
    if !apply && force_given {
        causes.push(cause(
            "FieldValueForbidden",
            "force".into(),
            "Forbidden: may not be specified for non-apply patch".into(),
        ));
    }
    if apply && manager.is_empty() {
        causes.push(cause(
            "FieldValueRequired",
            "fieldManager".into(),
            "Required value: is required for apply patch".into(),
        ));
    }
    if manager.chars().count() > FIELD_MANAGER_MAX_LENGTH {
        causes.push(cause(
            "FieldValueTooLong",
            "fieldManager".into(),
            format!(
                "Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"
            ),
        ));
    }
    for (i, c) in manager.char_indices() {
        if !is_print(c) {
            causes.push(cause(
                "FieldValueInvalid",
                format!("fieldManager[{i}]"),
                format!(
                    "Invalid value: {}: invalid character",
                    apimachinery::util::validation::field::go_quote(manager)
                ),
            ));
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let mut error =
        ApiError::invalid_causes("meta.k8s.io", "PatchOptions", "", causes);
    if let Some(details) = error.status.details.as_mut() {
        details.name = None;
    }
    Err(error)
}

/// Mirrors the apply patcher's decoding (`yaml.Unmarshal` into a map): the
/// body as YAML or JSON, which must be an object; 400 otherwise.
pub fn decode_apply_body(body: &[u8]) -> Result<Value, ApiError> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(_) => serde_yaml::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("error decoding YAML: {e}"))
        })?,
    };
    match value {
        Value::Object(_) => Ok(value),
        Value::Null => Ok(Value::Object(Map::new())),
        other => Err(ApiError::bad_request(format!(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: \
             cannot unmarshal {} into Go value of type map[string]interface {{}}",
            match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                _ => "bool",
            }
        ))),
    }
}

/// An object as JSON without `metadata.managedFields`
/// (`RemoveObjectManagedFields`).
fn value_without_managed_fields(obj: &Object) -> Value {
    let mut value = serde_json::to_value(obj).unwrap_or(Value::Null);
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut)
    {
        metadata.remove("managedFields");
    }
    value
}

/// What `Creater.New` makes, as the unstructured converter writes it: an empty
/// object of the kind, whose struct fields (`spec`, `status`) are there but
/// empty. A map or list the create adds is so owned as a whole too (`"."`),
/// and a struct is not.
fn empty_value(info: &ResourceInfo) -> Value {
    use serde_json::json;
    let mut value = json!({"apiVersion": info.api_version(), "kind": info.kind,
        "metadata": {"creationTimestamp": null}});
    let rest = strategy_for(info).new_object();
    if let (Some(out), Value::Object(rest)) = (value.as_object_mut(), rest) {
        out.extend(rest);
    }
    value
}

/// Mirrors `FieldManager.UpdateNoErrors`: records `manager`'s `Update` of
/// `live` (none on create) into `new` (`subresource` for writes through
/// `status` or `scale`). Managed fields the client sent are kept if they
/// decode (that is how they are edited); otherwise the live object's are
/// used. If nothing decodes, `new` loses its managed fields rather than
/// carrying garbage.
pub fn update_no_errors(
    info: &ResourceInfo,
    live: Option<&Object>,
    new: &mut Object,
    manager: &str,
    subresource: Option<&str>,
) {
    match update_managed_fields(info, live, new, manager, subresource) {
        Ok(entries) => new.metadata.managed_fields = entries,
        Err(error) => {
            tracing::debug!(%error, "managed fields not updated");
            new.metadata.managed_fields = None;
        }
    }
}

fn update_managed_fields(
    info: &ResourceInfo,
    live: Option<&Object>,
    new: &Object,
    manager: &str,
    subresource: Option<&str>,
) -> Result<
    Option<Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry>>,
    String,
> {
    let sent = subresource
        .is_none()
        .then_some(new.metadata.managed_fields.as_deref())
        .flatten()
        .map(managed_fields::decode);
    let mut managed = match sent {
        Some(Ok(managed)) if !managed.fields.is_empty() => managed,
        _ => managed_fields::decode(
            live.and_then(|l| l.metadata.managed_fields.as_deref())
                .unwrap_or_default(),
        )
        .map_err(|e| format!("failed to decode managed fields: {e}"))?,
    };
    let live_value =
        live.map_or_else(|| empty_value(info), value_without_managed_fields);
    let new_value = value_without_managed_fields(new);
    let api_version = info.api_version();
    let id = ManagerInfo {
        manager: manager.to_string(),
        operation: UPDATE.into(),
        api_version: api_version.clone(),
        subresource: subresource.unwrap_or_default().to_string(),
    }
    .identifier();
    record_update(info, &mut managed, &live_value, &new_value, &id);
    managed_fields::cap_update_managers(&mut managed);
    Ok(managed_fields::encode(&managed))
}

/// `managedFieldsUpdater.Update` over `stripMetaManager` and the updater:
/// `id` owns what changed; its time moves only if it added or changed a field.
fn record_update(
    info: &ResourceInfo,
    managed: &mut Managed,
    live: &Value,
    new: &Value,
    id: &str,
) {
    let schema = strategy_for(info).field_schema();
    let fields = std::mem::take(&mut managed.fields);
    let (fields, touched) =
        update::update_fields(live, new, schema, &info.api_version(), fields, id);
    managed.fields = fields;
    managed_fields::strip(managed, id);
    if !touched
        .difference(&managed_fields::stripped_fields())
        .is_empty()
    {
        managed
            .times
            .insert(id.to_string(), Some(crate::registry::rest::now()));
    }
}

/// `GroupVersionKind.String()`: `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

/// Mirrors `FieldManager.Apply` (through `versionCheckManager`,
/// `skipNonAppliedManager`, `managedFieldsUpdater`, `stripMetaManager` and
/// `structuredMergeManager`): `config` applied to `live` by `manager`.
///
/// - 400 when the configuration is of another kind (`invalid object type:
///   /v1, Kind=Pod`) or carries `metadata.managedFields`;
/// - 409 with one cause per field when it would change fields other managers
///   own, unless `force`;
/// - 500 (reason `Unknown`, as upstream's plain error) when it is not a valid
///   object of its kind (a duplicate or keyless list item).
///
/// Answers the object to store, with the managers' entries.
pub fn apply(
    info: &ResourceInfo,
    live: &Object,
    config: &Value,
    manager: &str,
    force: bool,
) -> Result<Object, ApiError> {
    let api_version = info.api_version();
    let sent_version = config["apiVersion"].as_str().unwrap_or_default();
    let sent_kind = config["kind"].as_str().unwrap_or_default();
    if sent_version != api_version || sent_kind != info.kind {
        return Err(ApiError::bad_request(format!(
            "invalid object type: {}",
            gvk_string(sent_version, sent_kind)
        )));
    }
    if !config["metadata"]["managedFields"].is_null() {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let schema = strategy_for(info).field_schema();
    let mut managed = managed_fields::decode(
        live.metadata.managed_fields.as_deref().unwrap_or_default(),
    )
    .map_err(|e| unknown(format!("failed to decode managed fields: {e}")))?;
    let live_value = if live.metadata.uid.is_some() {
        value_without_managed_fields(live)
    } else {
        empty_value(info)
    };
    if managed.fields.is_empty() {
        let id = ManagerInfo {
            manager: BEFORE_FIRST_APPLY.into(),
            operation: UPDATE.into(),
            api_version: api_version.clone(),
            subresource: String::new(),
        }
        .identifier();
        record_update(info, &mut managed, &empty_value(info), &live_value, &id);
    }
    let id = ManagerInfo {
        manager: manager.to_string(),
        operation: APPLY.into(),
        api_version: api_version.clone(),
        subresource: String::new(),
    }
    .identifier();
    let fields = std::mem::take(&mut managed.fields);
    let (merged, fields) = match update::apply(
        &live_value,
        config,
        schema,
        &api_version,
        fields,
        &id,
        force,
    ) {
        Ok(done) => done,
        Err(ApplyError::Conflicts(conflicts)) => {
            return Err(conflict_error(&conflicts));
        }
        Err(ApplyError::Invalid(message)) => {
            let name = config["metadata"]["name"].as_str().unwrap_or_default();
            let namespaced = match config["metadata"]["namespace"].as_str() {
                Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
                _ => name.to_string(),
            };
            return Err(unknown(format!(
                "failed to create typed patch object ({}) {namespaced}: {message}",
                gvk_string(&api_version, info.kind)
            )));
        }
    };
    managed.fields = fields;
    managed_fields::strip(&mut managed, &id);
    if merged.is_some() {
        managed.times.insert(id, Some(crate::registry::rest::now()));
    }
    let mut value = merged.unwrap_or(live_value);
    drop_nulls(&mut value);
    let mut obj: Object = serde_json::from_value(value).map_err(|e| {
        ApiError::bad_request(format!("the applied object is not valid: {e}"))
    })?;
    obj.types = Some(info.type_meta());
    // Go's `omitempty`: a map or list of the metadata pruned to nothing is gone.
    let meta = &mut obj.metadata;
    crate::registry::rest::omit_empty_metadata(meta);
    meta.managed_fields = managed_fields::encode(&managed);
    Ok(obj)
}

/// A `null` in a configuration sets nothing: the field is owned and absent, as
/// it is once upstream converts the merged object back to its Go type.
fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// Mirrors `ErrorToAPIStatus` for an error that is not a `Status`: 500 with
/// reason `Unknown` and the error's text.
fn unknown(message: String) -> ApiError {
    ApiError {
        status: Box::new(Status {
            code: Some(500),
            reason: Some("Unknown".into()),
            message: Some(message),
            status: Some("Failure".into()),
            details: None,
            metadata: Default::default(),
        }),
    }
}

/// Mirrors `printManager`: `"kubectl"`, `"kubectl-create" using v1`,
/// `"m" with subresource "status" using v1`.
fn print_manager(id: &str) -> String {
    let Some(info) = ManagerInfo::parse(id) else {
        return apimachinery::util::validation::field::go_quote(id);
    };
    let mut out = apimachinery::util::validation::field::go_quote(&info.manager);
    if !info.subresource.is_empty() {
        out.push_str(&format!(
            " with subresource {}",
            apimachinery::util::validation::field::go_quote(&info.subresource)
        ));
    }
    if info.operation == UPDATE {
        out.push_str(&format!(" using {}", info.api_version));
    }
    out
}

/// Mirrors `internal.NewConflictError` → `apierrors.NewApplyConflict`: 409
/// `Conflict`, one `FieldManagerConflict` cause per field, and the message
/// `Apply failed with 1 conflict: conflict with "m": .spec.replicas`, or for
/// several the fields grouped under each manager (managers sorted).
pub fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let causes: Vec<StatusCause> = conflicts
        .iter()
        .map(|c| StatusCause {
            reason: Some("FieldManagerConflict".into()),
            message: Some(format!("conflict with {}", print_manager(&c.manager))),
            field: Some(c.path.to_string()),
        })
        .collect();
    let message = if let [one] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            print_manager(&one.manager),
            one.path
        )
    } else {
        let mut by_manager: std::collections::BTreeMap<&str, Vec<String>> =
            std::collections::BTreeMap::new();
        for c in conflicts {
            by_manager
                .entry(&c.manager)
                .or_default()
                .push(c.path.to_string());
        }
        let mut lines = Vec::new();
        for (manager, paths) in by_manager {
            lines.push(format!("conflicts with {}:", print_manager(manager)));
            lines.extend(paths.into_iter().map(|p| format!("- {p}")));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError {
        status: Box::new(Status {
            code: Some(409),
            reason: Some("Conflict".into()),
            message: Some(message),
            status: Some("Failure".into()),
            details: Some(StatusDetails {
                causes: Some(causes),
                ..StatusDetails::default()
            }),
            metadata: Default::default(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn configmap(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": data})
    }

    fn managers(obj: &Object) -> Vec<(String, String)> {
        obj.metadata
            .managed_fields
            .iter()
            .flatten()
            .map(|e| {
                (
                    e.manager.clone().unwrap_or_default(),
                    e.operation.clone().unwrap_or_default(),
                )
            })
            .collect()
    }

    fn stored(mut obj: Object) -> Object {
        obj.metadata.uid = Some("u".into());
        obj
    }

    #[test]
    fn user_agent_prefixes() {
        assert_eq!(
            prefix_from_user_agent(
                "kubectl-create/v1.28.0 (linux/amd64) kubernetes/abc"
            ),
            "kubectl-create"
        );
        assert_eq!(prefix_from_user_agent("a\u{7}b/1"), "ab");
        assert_eq!(prefix_from_user_agent(&"x".repeat(200)).len(), 128);
        assert_eq!(manager_or_user_agent("mine", "kubectl/v1"), "mine");
        assert_eq!(manager_or_user_agent("", "kubectl/v1"), "kubectl");
    }

    #[test]
    fn patch_options_need_a_manager_for_apply() {
        let error = validate_patch_options("", false, true).expect_err("required");
        assert_eq!(error.code(), 422);
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
            )
        );
        let details = error.status.details.as_ref().expect("details");
        assert_eq!(details.group.as_deref(), Some("meta.k8s.io"));
        assert_eq!(details.kind.as_deref(), Some("PatchOptions"));
        assert_eq!(details.name, None);
        let forced = validate_patch_options("", true, false).expect_err("forbidden");
        assert_eq!(
            forced.status.message.as_deref(),
            Some(
                "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
            )
        );
        assert!(validate_patch_options("m", true, true).is_ok());
        assert!(validate_patch_options("", false, false).is_ok());
    }

    #[test]
    fn yaml_and_json_bodies_decode() {
        let yaml = decode_apply_body(
            b"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"1\"\n",
        )
        .expect("yaml");
        assert_eq!(yaml["data"]["a"], "1");
        let json = decode_apply_body(br#"{"kind":"ConfigMap"}"#).expect("json");
        assert_eq!(json["kind"], "ConfigMap");
        assert_eq!(decode_apply_body(b"[1]").expect_err("list").code(), 400);
        assert_eq!(decode_apply_body(b"a: [").expect_err("bad").code(), 400);
    }

    #[test]
    fn create_update_then_apply_conflicts_and_forces() {
        let info = ResourceInfo::CONFIGMAPS;
        // kubectl create: an Update entry by kubectl-create.
        let mut created: Object =
            serde_json::from_value(configmap(json!({"a": "1"}))).expect("obj");
        update_no_errors(&info, None, &mut created, "kubectl-create", None);
        assert_eq!(
            managers(&created),
            [("kubectl-create".into(), "Update".into())]
        );
        let entry = &created.metadata.managed_fields.as_ref().expect("entries")[0];
        assert_eq!(entry.api_version.as_deref(), Some("v1"));
        assert_eq!(entry.fields_type.as_deref(), Some("FieldsV1"));
        assert_eq!(
            entry.fields_v1.as_ref().map(|f| f.0.clone()),
            Some(json!({"f:data": {".": {}, "f:a": {}}}))
        );
        assert!(entry.time.is_some());
        let live = stored(created);
        // An apply that changes a: conflict with kubectl-create.
        let error = apply(&info, &live, &configmap(json!({"a": "2"})), "mgr", false)
            .expect_err("conflict");
        assert_eq!(error.code(), 409);
        assert_eq!(error.status.reason.as_deref(), Some("Conflict"));
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "Apply failed with 1 conflict: conflict with \"kubectl-create\" using v1: .data.a"
            )
        );
        let cause = &error
            .status
            .details
            .as_ref()
            .and_then(|d| d.causes.clone())
            .expect("causes")[0];
        assert_eq!(cause.reason.as_deref(), Some("FieldManagerConflict"));
        assert_eq!(cause.field.as_deref(), Some(".data.a"));
        assert_eq!(
            cause.message.as_deref(),
            Some("conflict with \"kubectl-create\" using v1")
        );
        // The same value is shared; a new field is the applier's.
        let shared = apply(
            &info,
            &live,
            &configmap(json!({"a": "1", "b": "2"})),
            "mgr",
            false,
        )
        .expect("no conflict");
        assert_eq!(
            managers(&shared),
            [
                ("mgr".into(), "Apply".into()),
                ("kubectl-create".into(), "Update".into())
            ]
        );
        assert_eq!(shared.data["data"], json!({"a": "1", "b": "2"}));
        // Forced: mgr takes a.
        let forced = apply(
            &info,
            &stored(shared),
            &configmap(json!({"a": "3", "b": "2"})),
            "mgr",
            true,
        )
        .expect("forced");
        assert_eq!(forced.data["data"]["a"], "3");
        assert_eq!(
            managers(&forced),
            [
                ("mgr".into(), "Apply".into()),
                ("kubectl-create".into(), "Update".into())
            ]
        );
        let entries = forced.metadata.managed_fields.as_ref().expect("entries");
        assert_eq!(
            entries[0].fields_v1.as_ref().map(|f| f.0.clone()),
            Some(json!({"f:data": {"f:a": {}, "f:b": {}}}))
        );
        assert_eq!(
            entries[1].fields_v1.as_ref().map(|f| f.0.clone()),
            Some(json!({"f:data": {}})),
            "the map itself stays kubectl-create's"
        );
    }

    #[test]
    fn several_conflicts_are_grouped_by_manager() {
        let path =
            |names: &[&str]| structured_merge_diff::fieldpath::Path::fields(names);
        let a = ManagerInfo {
            manager: "a".into(),
            operation: APPLY.into(),
            ..ManagerInfo::default()
        }
        .identifier();
        let b = ManagerInfo {
            manager: "b".into(),
            operation: UPDATE.into(),
            api_version: "apps/v1".into(),
            subresource: "scale".into(),
        }
        .identifier();
        let error = conflict_error(&[
            Conflict {
                manager: b.clone(),
                path: path(&["spec", "replicas"]),
            },
            Conflict {
                manager: a.clone(),
                path: path(&["spec", "paused"]),
            },
            Conflict {
                manager: a,
                path: path(&["spec", "minReadySeconds"]),
            },
        ]);
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "Apply failed with 3 conflicts: conflicts with \"a\":\n- .spec.paused\n- .spec.minReadySeconds\n\
                 conflicts with \"b\" with subresource \"scale\" using apps/v1:\n- .spec.replicas"
            )
        );
    }

    #[test]
    fn applies_of_another_kind_or_with_managed_fields_are_400() {
        let info = ResourceInfo::CONFIGMAPS;
        let live = Object::default();
        let mut wrong = configmap(json!({}));
        wrong["kind"] = json!("Secret");
        let error = apply(&info, &live, &wrong, "m", false).expect_err("kind");
        assert_eq!(
            error.status.message.as_deref(),
            Some("invalid object type: /v1, Kind=Secret")
        );
        let mut managed = configmap(json!({}));
        managed["metadata"]["managedFields"] = json!([]);
        let error = apply(&info, &live, &managed, "m", false).expect_err("managed");
        assert_eq!(
            error.status.message.as_deref(),
            Some("metadata.managedFields must be nil")
        );
        let dup = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c"}, {"name": "c"}]}});
        let error =
            apply(&ResourceInfo::PODS, &live, &dup, "m", false).expect_err("dup");
        assert_eq!(error.code(), 500);
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "failed to create typed patch object (/v1, Kind=Pod) ns/p: .spec.containers: duplicate entries for key [name=\"c\"]"
            )
        );
    }

    #[test]
    fn the_first_apply_to_an_untracked_object_gives_its_fields_to_before_first_apply()
     {
        let info = ResourceInfo::CONFIGMAPS;
        let live = stored(
            serde_json::from_value(configmap(json!({"a": "1"}))).expect("obj"),
        );
        let error = apply(&info, &live, &configmap(json!({"a": "2"})), "m", false)
            .expect_err("conflict");
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.a"
            )
        );
    }
}
