//! The in-tree plugins this scheduler has, one file each as upstream's
//! `pkg/scheduler/framework/plugins/<name>/`.

pub mod node_resources_fit;
pub mod node_unschedulable;
pub mod taint_toleration;

pub use node_resources_fit::{
    InsufficientResource, NodeResourcesFit, ScoredResource,
    compute_pod_resource_request, fits, least_requested_score,
};
pub use node_unschedulable::NodeUnschedulable;
pub use taint_toleration::{
    TaintToleration, find_matching_untolerated_taint, taints_by_condition,
    tolerates_taint, tolerations_tolerate_taint,
};
