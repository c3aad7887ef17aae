//! CertificateSigningRequests: mirrors kubernetes'
//! `pkg/registry/certificates/certificates/strategy.go` (`csrStrategy`,
//! `csrStatusStrategy`, `csrApprovalStrategy`; `SelectableFields`, whose
//! `spec.signerName` is the resource's field label). A write to the request
//! itself changes only its metadata; `…/status` the status (the signer's
//! certificate), `…/approval` the conditions (an approver's `Approved` or
//! `Denied`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::certificates::validation;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::{Strategy, keep_status};

/// The certificate signing request registry's strategy.
#[derive(Debug)]
pub struct CsrStrategy;

impl Strategy for CsrStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::certificates::v1::CertificateSigningRequest>())
    }

    /// Mirrors `csrStrategy.PrepareForCreate`'s status: none yet.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({});
    }

    /// Mirrors the rest of `csrStrategy.PrepareForCreate`: the requester is
    /// the authenticated user, whatever the client wrote (`spec.username`, and
    /// the groups every authenticated user has; `uid` and `extra` cleared).
    /// A server that authenticates nobody keeps what the client wrote.
    fn prepare_for_create_by(&self, obj: &mut Object, user: Option<&str>) {
        let Some(user) = user else {
            return;
        };
        let spec = &mut obj.data["spec"];
        if let Some(spec) = spec.as_object_mut() {
            spec.remove("uid");
            spec.remove("extra");
        }
        spec["username"] = json!(user);
        spec["groups"] = json!(["system:authenticated"]);
    }

    /// Mirrors `csrStrategy.PrepareForUpdate`: the spec and the status stay.
    fn prepare_for_update(&self, next: &mut Object, current: &Object) {
        next.data["spec"] = current.data["spec"].clone();
        keep_status(next, current);
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_certificate_signing_request(&obj.data)
    }

    /// Mirrors `csrStrategy.ValidateUpdate`: the spec and status stay (see
    /// `prepare_for_update`), so only the conditions are checked again.
    fn validate_fields_update(&self, new: &Object, _old: &Object) -> ErrorList {
        validation::validate_conditions(&new.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn has_approval_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::CERTIFICATE_SIGNING_REQUEST
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::CERTIFICATE_SIGNING_REQUEST
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::CERTIFICATE_SIGNING_REQUEST
    }

    fn new_object(&self) -> Value {
        json!({"spec": {"request": null, "signerName": ""}, "status": {}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::ResourceInfo;

    #[test]
    fn the_requester_is_who_authenticated() {
        let mut csr =
            Object::new(&ResourceInfo::CERTIFICATE_SIGNING_REQUESTS, None, "c")
                .with_data(json!({"spec": {"username": "someone-else", "uid": "u",
                "extra": {"a": ["b"]}, "signerName": "x"}}));
        CsrStrategy.prepare_for_create_by(&mut csr, Some("system:node:n1"));
        assert_eq!(
            csr.data["spec"],
            json!({"username": "system:node:n1", "signerName": "x",
                "groups": ["system:authenticated"]})
        );
        let mut kept = csr.clone();
        CsrStrategy.prepare_for_create_by(&mut kept, None);
        assert_eq!(kept.data, csr.data);
    }
}
