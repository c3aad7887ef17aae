//! kubemark's hollow node: a kubelet without containers, many to a process,
//! for clusters that need nodes but not workloads.
//!
//! | kubemark and the kubelet (Go)                                         | here (Rust)                                 |
//! |-----------------------------------------------------------------------|---------------------------------------------|
//! | `pkg/kubemark/hollow_kubelet.go`: `HollowKubelet`, `NewHollowKubelet`, `Run` | [`HollowKubelet`], [`HollowKubelet::new`], [`HollowKubelet::run`], [`HollowKubeletConfig`] |
//! | `kubelet_node_status.go`: `initialNode`, `registerWithAPIServer`, `syncNodeStatus`; `nodestatus/setters.go` | [`node_status`] |
//! | component-helpers `apimachinery/lease/controller.go`; `kubelet/nodelease.go` | [`node_lease::NodeLeaseController`] |
//! | `kubelet_pods.go`: `generateAPIPodStatus`; `status/generate.go`        | [`pod_status`]                              |
//! | `cmd/kubemark` (`--morph=kubelet`), `app/hollow_node.go`'s flags     | the `hollow-node` binary, [`hollow_node::HollowNodeOptions`] |

pub mod hollow_kubelet;
pub mod hollow_node;
pub mod node_lease;
pub mod node_status;
pub mod pod_status;

pub use hollow_kubelet::{HollowKubelet, HollowKubeletConfig, HollowKubeletError};
pub use hollow_node::HollowNodeOptions;
pub use node_lease::NodeLeaseController;
