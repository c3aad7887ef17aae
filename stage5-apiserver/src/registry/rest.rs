//! What a kind's registry tells the server, and how the server asks: mirrors
//! apiserver's `pkg/registry/rest` (`RESTCreateStrategy` and `BeforeCreate` in
//! `create.go`, `RESTUpdateStrategy` and `BeforeUpdate` in `update.go`,
//! `TableConvertor` in `table.go`, `FillObjectMetaSystemFields` in `meta.go`)
//! and `pkg/storage/names` (`SimpleNameGenerator`).
//!
//! Every per-kind rule lives in one [`Strategy`], in its kind's file under
//! `registry/` (`registry/core/pod/strategy.rs`, ...), as upstream keeps one
//! `strategy.go` per kind. The handlers never ask which kind they serve: they
//! ask the kind's strategy ([`super::strategy_for`]).
//!
//! | Go (k8s.io/apiserver, and each kind's `strategy.go`) | Rust                              |
//! |------------------------------------------------------|-----------------------------------|
//! | scheme defaulting (`SetObjectDefaults_*`)            | [`Strategy::set_defaults`]        |
//! | `RESTCreateStrategy.PrepareForCreate`, `Validate`    | [`Strategy::prepare_for_create`], [`Strategy::validate`], [`Strategy::validate_fields`] |
//! | `Store.BeginCreate`                                  | [`Strategy::begin_create`]        |
//! | `RESTUpdateStrategy.PrepareForUpdate`, `ValidateUpdate` | [`Strategy::prepare_for_update`], [`Strategy::validate_update`], [`Strategy::validate_fields_update`] |
//! | `ValidateObjectMeta`'s `ValidateNameFunc`            | [`Strategy::name_rule`]           |
//! | the registry's `StatusREST`, `ScaleREST`, `BindingREST` | [`Strategy::has_status_subresource`], [`Strategy::has_scale_subresource`], [`Strategy::has_binding_subresource`] |
//! | `EvictionREST`, `FinalizeREST`, `ApprovalREST`       | [`Strategy::has_eviction_subresource`], [`Strategy::has_finalize_subresource`], [`Strategy::has_approval_subresource`] |
//! | `AllowUnconditionalUpdate`, `DefaultGarbageCollectionPolicy` | [`Strategy::allow_unconditional_update`], [`Strategy::orphans_dependents_by_default`] |
//! | `RESTGracefulDeleteStrategy.CheckGracefulDelete`     | [`Strategy::check_graceful_delete`] |
//! | `TableConvertor` (`printersinternal.AddHandlers`)    | [`Strategy::table_handler`]       |
//! | the kind's `patchStrategy` tags, OpenAPI schema, `New()` | [`Strategy::patch_meta`], [`Strategy::field_schema`], [`Strategy::new_object`] |
//! | `BeforeCreate`, `BeforeUpdate`                       | [`validate_create`], [`validate_update`] |
//! | `FillObjectMetaSystemFields`, `SimpleNameGenerator`  | [`fill_object_meta_system_fields`], [`generate_name`] |

use apimachinery::api::validation::objectmeta::{
    NameRule, validate_object_meta, validate_object_meta_update,
};
use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::{ErrorList, FieldError};
use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, StatusCause};
use rand::RngExt as _;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::{Object, ResourceInfo, Storage};
use structured_merge_diff::schema::Schema;

use crate::printers::{TableHandler, internalversion};
use crate::status::ApiError;

// ANCHOR: strategy
/// One kind's rules: what upstream's `strategy.go` of the kind says (and the few
/// facts the kind's `storage.go` and API types add). Every method has the
/// answer of a kind with no rules of its own, so a kind's file says only what
/// is special about it.
pub trait Strategy: Send + Sync {
    /// The scheme's defaults for a decoded object of the kind
    /// (`SetObjectDefaults_Pod`, ...).
    fn set_defaults(&self, _obj: &mut Object) {}

    /// Mirrors `PrepareForCreate`: what a new object gets whatever the client
    /// sent (a pod's status, a namespace's finalizer).
    fn prepare_for_create(&self, _obj: &mut Object) {}

    /// The part of `PrepareForCreate` that reads who asks
    /// (`genericapirequest.UserFrom(ctx)`): `user` is the authenticated user,
    /// `None` when the server authenticates nobody. Only a certificate signing
    /// request records it.
    fn prepare_for_create_by(&self, _obj: &mut Object, _user: Option<&str>) {}

    /// Mirrors the registry `Store`'s `BeginCreate` hook: what a create does
    /// with the kind's storage once the object is valid and before it is
    /// stored (a service's cluster IP and node ports). Most kinds do nothing.
    fn begin_create<'a>(
        &'a self,
        _storage: &'a dyn Storage,
        _obj: &'a mut Object,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async { Ok(()) })
    }

    /// Mirrors `PrepareForUpdate` of a write to the main resource: a kind with
    /// a status subresource keeps its status ([`keep_status`]), and the
    /// generation moves when the spec changed ([`next_generation`]).
    fn prepare_for_update(&self, next: &mut Object, current: &Object) {
        if self.has_status_subresource() {
            keep_status(next, current);
        }
        next.metadata.generation = next_generation(next, current, false);
    }

    /// Mirrors the status strategy's `PrepareForUpdate` for the metadata: what
    /// a write to `…/status` carries over besides the status. Most status
    /// strategies reset only the spec, so labels and annotations change with
    /// the write; the rest of the metadata is the server's.
    fn prepare_for_status_update(&self, next: &mut Object, written: &ObjectMeta) {
        next.metadata.labels = written.labels.clone();
        next.metadata.annotations = written.annotations.clone();
    }

    /// Mirrors the `ValidateNameFunc` the kind's `ValidateObjectMeta` uses.
    fn name_rule(&self) -> NameRule {
        NameRule::DnsSubdomain
    }

    /// Mirrors `Validate`: every served kind's starts with `ValidateObjectMeta`
    /// under its name rule, then checks the kind's own fields.
    fn validate(&self, info: &ResourceInfo, obj: &Object) -> ErrorList {
        let mut errors =
            validate_object_meta(&obj.metadata, info.namespaced, self.name_rule());
        errors.extend(self.validate_fields(obj));
        errors
    }

    /// The kind's own rules for its fields (its `Validate…` in
    /// `pkg/apis/<group>/validation`, [`crate::apis`]); none by default.
    fn validate_fields(&self, _obj: &Object) -> ErrorList {
        ErrorList::new()
    }

    /// Mirrors `ValidateUpdate`: every served kind's starts with
    /// `ValidateObjectMetaUpdate`, then checks the kind's own fields.
    fn validate_update(
        &self,
        _info: &ResourceInfo,
        new: &Object,
        old: &Object,
    ) -> ErrorList {
        let mut errors = validate_object_meta_update(&new.metadata, &old.metadata);
        errors.extend(self.validate_fields_update(new, old));
        errors
    }

    /// The kind's own rules for an update of its fields (its
    /// `Validate…Update`); by default those of a new object.
    fn validate_fields_update(&self, new: &Object, _old: &Object) -> ErrorList {
        self.validate_fields(new)
    }

    /// Whether the registry has a `status` subresource (a `StatusREST`).
    fn has_status_subresource(&self) -> bool {
        false
    }

    /// Whether the registry has a `scale` subresource (a `ScaleREST`).
    fn has_scale_subresource(&self) -> bool {
        false
    }

    /// Whether the registry has a `binding` subresource (the pod registry's
    /// `BindingREST`).
    fn has_binding_subresource(&self) -> bool {
        false
    }

    /// Whether the registry has a pod's `eviction` subresource (the pod
    /// registry's `EvictionREST`).
    fn has_eviction_subresource(&self) -> bool {
        false
    }

    /// Whether the registry has a namespace's `finalize` subresource
    /// (`FinalizeREST`).
    fn has_finalize_subresource(&self) -> bool {
        false
    }

    /// Whether the registry has a certificate signing request's `approval`
    /// subresource (`ApprovalREST`).
    fn has_approval_subresource(&self) -> bool {
        false
    }

    /// The selector a `scale` subresource shows as `status.selector`: a
    /// `LabelSelector`'s string (`metav1.LabelSelectorAsSelector`), as the apps
    /// kinds' `scaleFrom…` write it.
    fn scale_selector(&self, obj: &Object) -> String {
        apimachinery::labels::selector_string(&obj.data["spec"]["selector"])
    }

    /// Mirrors `RESTUpdateStrategy.AllowUnconditionalUpdate`: whether a `PUT`
    /// without a resourceVersion may overwrite whatever is stored. A kind that
    /// says no gets 422 for such a write.
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// Mirrors `GarbageCollectionDeleteStrategy.DefaultGarbageCollectionPolicy`:
    /// whether a delete that names no propagation policy orphans the
    /// object's dependents (`OrphanDependents`, the `orphan` finalizer), as
    /// `v1` ReplicationControllers and `batch/v1` Jobs do for compatibility.
    fn orphans_dependents_by_default(&self) -> bool {
        false
    }

    /// Mirrors `RESTGracefulDeleteStrategy.CheckGracefulDelete`: the grace
    /// period of a delete that asked for `requested` seconds (or none), or
    /// `None` for a kind that is never deleted gracefully.
    fn check_graceful_delete(
        &self,
        _obj: &Object,
        _requested: Option<i64>,
    ) -> Option<i64> {
        None
    }

    /// Mirrors `Store.ShouldDeleteDuringUpdate`'s kind-specific part: whether
    /// an object marked for deletion, its finalizers gone and its grace
    /// period over, may go after a write. A namespace also waits for its
    /// `spec.finalizers` (`ShouldDeleteNamespaceDuringUpdate`).
    fn should_delete_during_update(&self, _obj: &Object) -> bool {
        true
    }

    /// Whether a delete only starts the object's termination (the namespace
    /// registry's own `Delete`), which a controller then finishes.
    fn delete_terminates(&self) -> bool {
        false
    }

    /// The kind's printer (`TableConvertor` over `AddHandlers`); a kind
    /// without one gets `DefaultTableConvertor`'s name and age.
    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::DEFAULT
    }

    /// The kind's strategic merge patch metadata (its Go struct's
    /// `patchStrategy` tags); a kind with none has only its metadata's.
    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::METADATA_ONLY
    }

    /// The kind's server-side apply schema (from its OpenAPI).
    fn field_schema(&self) -> &'static Schema {
        &typeconverter::PLAIN
    }

    /// The fields of an empty object of the kind beside its type and metadata,
    /// as `New()` and the unstructured converter write it: the struct fields
    /// (`spec`, `status`) are there but empty.
    fn new_object(&self) -> Value {
        json!({})
    }

    /// The kind's OpenAPI schema (what kube-apiserver's generated OpenAPI
    /// serves at `/openapi/v3`), from its k8s-openapi type; `None` for a kind
    /// without one.
    fn openapi_schema(
        &self,
        _generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        None
    }
}
// ANCHOR_END: strategy

/// Go's `omitempty` on `ObjectMeta`'s maps and lists: labels, annotations,
/// finalizers or owner references emptied (a patch that removed the last one)
/// are left out of the stored object, as a Go server's encoding leaves them.
pub fn omit_empty_metadata(meta: &mut ObjectMeta) {
    if meta.labels.as_ref().is_some_and(|m| m.is_empty()) {
        meta.labels = None;
    }
    if meta.annotations.as_ref().is_some_and(|m| m.is_empty()) {
        meta.annotations = None;
    }
    if meta.finalizers.as_ref().is_some_and(|l| l.is_empty()) {
        meta.finalizers = None;
    }
    if meta.owner_references.as_ref().is_some_and(|l| l.is_empty()) {
        meta.owner_references = None;
    }
}

/// A kind with no rules of its own: every [`Strategy`] default.
#[derive(Debug)]
pub struct DefaultStrategy;

impl Strategy for DefaultStrategy {}

/// The status of a write to the main resource: the old one again, as the status
/// strategies' `PrepareForUpdate` keep it (only `…/status` changes it).
pub fn keep_status(next: &mut Object, current: &Object) {
    let (Value::Object(next_data), Value::Object(current_data)) =
        (&mut next.data, &current.data)
    else {
        return;
    };
    match current_data.get("status") {
        Some(status) => next_data.insert("status".into(), status.clone()),
        None => next_data.remove("status"),
    };
}

/// Mirrors the strategies' `PrepareForUpdate` generation rule: a change of the
/// spec (or, with `annotations_count`, of the annotations too) bumps
/// `metadata.generation`; anything else keeps it, whatever the client sent.
pub fn next_generation(
    next: &Object,
    current: &Object,
    annotations_count: bool,
) -> Option<i64> {
    let generation = current.metadata.generation?;
    let spec_changed = next.data.get("spec") != current.data.get("spec");
    let annotations_changed = annotations_count
        && next.metadata.annotations != current.metadata.annotations;
    Some(if spec_changed || annotations_changed {
        generation + 1
    } else {
        generation
    })
}

/// Mirrors `rest.BeforeCreate`'s `strategy.Validate`: errors are answered as
/// `apierrors.NewInvalid` (422).
pub fn validate_create(info: &ResourceInfo, obj: &Object) -> Result<(), ApiError> {
    let errors = super::strategy_for(info).validate(info, obj);
    invalid(info, obj.name(), &errors)
}

/// Mirrors `rest.BeforeUpdate`: `validateCommonFields` (`ValidateObjectMetaAccessor`
/// with path-segment names, then `ValidateObjectMetaAccessorUpdate`) followed by
/// the strategy's `ValidateUpdate`.
///
/// So one bad label is reported three or four times in `details.causes`, as
/// kube-apiserver does (kubernetes/kubernetes#130656), while the message lists it
/// once: `NewInvalid`'s aggregate drops repeated messages.
pub fn validate_update(
    info: &ResourceInfo,
    new: &Object,
    old: &Object,
) -> Result<(), ApiError> {
    let mut errors =
        validate_object_meta(&new.metadata, info.namespaced, NameRule::PathSegment);
    errors.extend(validate_object_meta_update(&new.metadata, &old.metadata));
    errors.extend(super::strategy_for(info).validate_update(info, new, old));
    invalid(info, new.name(), &errors)
}

/// `apierrors.NewInvalid(kind.GroupKind(), name, errs)` when there are errors.
pub fn invalid(
    info: &ResourceInfo,
    name: &str,
    errors: &[FieldError],
) -> Result<(), ApiError> {
    if errors.is_empty() {
        return Ok(());
    }
    let causes: Vec<StatusCause> = errors.iter().map(FieldError::to_cause).collect();
    Err(ApiError::invalid_causes(
        info.group, info.kind, name, causes,
    ))
}

/// Mirrors `rest.FillObjectMetaSystemFields` and the rest of `BeforeCreate`'s
/// metadata: a new uid, the creation time, generation 1, no deletion time.
pub fn fill_object_meta_system_fields(obj: &mut Object) {
    obj.metadata.uid = Some(new_uid());
    obj.metadata.creation_timestamp = Some(now());
    obj.metadata.deletion_timestamp = None;
    obj.metadata.generation = Some(1);
}

/// Mirrors `names.SimpleNameGenerator.GenerateName`: the base (cut to leave room)
/// and five random lowercase consonants and digits.
pub fn generate_name(base: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    const MAX_BASE: usize = 63 - 5;
    let base: String = base.chars().take(MAX_BASE).collect();
    let mut rng = rand::rng();
    let suffix: String = (0..5)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect();
    format!("{base}{suffix}")
}

/// A random (version 4) UUID, as `uuid.NewUUID` gives `metadata.uid`.
pub fn new_uid() -> String {
    let mut bytes: [u8; 16] = rand::rng().random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

pub use apimachinery::apis::meta::v1::now;

#[cfg(test)]
mod tests {
    use super::*;
    use apimachinery::util::validation::is_dns1123_subdomain;

    #[test]
    fn generated_names_and_uids() {
        let name = generate_name("web-");
        assert!(name.starts_with("web-") && name.len() == 9, "{name}");
        assert!(is_dns1123_subdomain(&name).is_empty());
        let uid = new_uid();
        assert_eq!(uid.len(), 36);
        assert_ne!(uid, new_uid());
    }

    #[test]
    fn the_generation_moves_with_the_spec() {
        let info = ResourceInfo::DEPLOYMENTS;
        let mut current = Object::new(&info, Some("ns"), "web")
            .with_data(json!({"spec": {"replicas": 1}}));
        current.metadata.generation = Some(3);
        let mut next = current.clone();
        next.metadata.annotations = Some([("a".into(), "b".into())].into());
        assert_eq!(next_generation(&next, &current, false), Some(3));
        assert_eq!(next_generation(&next, &current, true), Some(4));
        next.data["spec"]["replicas"] = json!(2);
        assert_eq!(next_generation(&next, &current, false), Some(4));
    }
}
