//! Leases: mirrors kubernetes' `pkg/registry/coordination/lease/strategy.go`
//! (`leaseStrategy`): no status, no subresources; what a kubelet renews in
//! `kube-node-lease` as its node's heartbeat.

use schemars::{Schema as SchemaObject, SchemaGenerator};

use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The lease registry's strategy.
#[derive(Debug)]
pub struct LeaseStrategy;

impl Strategy for LeaseStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::coordination::v1::Lease>())
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::LEASE
    }
}
