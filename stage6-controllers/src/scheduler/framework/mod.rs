//! The scheduling framework: plugins at extension points, run by a profile's
//! [`Framework`].
//!
//! | kube-scheduler (Go)                                     | here (Rust)                       |
//! |---------------------------------------------------------|-----------------------------------|
//! | `framework/interface.go`: `Code`, `Status`, `CycleState`, `FilterPlugin`, `ScorePlugin` | [`interface`] |
//! | `framework/types.go`: `NodeInfo`, `Resource`, `FitError`, `Diagnosis` | [`types`] |
//! | `framework/runtime/framework.go`: `frameworkImpl`       | [`runtime::Framework`]            |
//! | `framework/plugins/*`                                   | [`plugins`]                       |

pub mod interface;
pub mod plugins;
pub mod runtime;
pub mod types;

pub use interface::{
    Code, CycleState, FilterPlugin, MAX_NODE_SCORE, MIN_NODE_SCORE,
    NodePluginScores, Plugin, PluginScore, PreFilterPlugin, PreScorePlugin,
    ScorePlugin, Status,
};
pub use runtime::Framework;
pub use types::{
    DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, Diagnosis, FitError,
    NodeInfo, RequestsOf, Resource, pod_requests,
};
