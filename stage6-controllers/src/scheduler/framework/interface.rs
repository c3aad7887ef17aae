//! The scheduling framework's vocabulary: a plugin's [`Status`] and its
//! [`Code`], the [`CycleState`] plugins share during one scheduling cycle, and
//! the extension points a plugin implements.
//!
//! Mirrors kube-scheduler's
//! [interface.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/staging/src/k8s.io/kube-scheduler/framework/interface.go)
//! (`Code`, `Status`, `PreFilterPlugin`, `FilterPlugin`, `PreScorePlugin`,
//! `ScorePlugin`, `MaxNodeScore`) and
//! [cycle_state.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/staging/src/k8s.io/kube-scheduler/framework/cycle_state.go).
//! Only the extension points the plugins here need: no `PostFilter`
//! (preemption), `Reserve`, `Permit`, `PreBind`, `Bind` or `PostBind` plugins;
//! the scheduler binds through `pods/binding` itself, as upstream's
//! `DefaultBinder` does.

use std::any::Any;
use std::collections::HashMap;

use k8s_openapi::api::core::v1::Pod;

use super::types::NodeInfo;

/// Mirrors `MaxNodeScore`: the highest score a score plugin gives a node.
pub const MAX_NODE_SCORE: i64 = 100;

/// Mirrors `MinNodeScore`.
pub const MIN_NODE_SCORE: i64 = 0;

/// Mirrors `Code`: how a plugin's call went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// The plugin ran and the pod may go on (upstream's `nil` status).
    Success,
    /// An internal error: the pod is retried with backoff.
    Error,
    /// The pod does not fit the node now; preemption might help.
    Unschedulable,
    /// The pod does not fit the node, and preemption would not help.
    UnschedulableAndUnresolvable,
}

/// Mirrors `Status`: a [`Code`], the reasons, and the plugin that said so.
///
/// Upstream's success is a `nil` `*Status`; here it is [`Status::success`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    code: Code,
    reasons: Vec<String>,
    plugin: &'static str,
}

impl Default for Status {
    fn default() -> Self {
        Status::success()
    }
}

impl Status {
    /// Mirrors a `nil` status.
    #[must_use]
    pub fn success() -> Self {
        Status {
            code: Code::Success,
            reasons: Vec::new(),
            plugin: "",
        }
    }

    /// Mirrors `NewStatus(code, reasons...)`.
    #[must_use]
    pub fn new<R: Into<String>>(
        code: Code,
        reasons: impl IntoIterator<Item = R>,
    ) -> Self {
        Status {
            code,
            reasons: reasons.into_iter().map(Into::into).collect(),
            plugin: "",
        }
    }

    /// Mirrors `AsStatus(err)`: an [`Code::Error`] with the error's message.
    #[must_use]
    pub fn error(message: impl Into<String>) -> Self {
        Status::new(Code::Error, [message.into()])
    }

    /// Mirrors `WithPlugin`: records which plugin returned this status.
    #[must_use]
    pub fn with_plugin(mut self, plugin: &'static str) -> Self {
        self.plugin = plugin;
        self
    }

    /// Mirrors `Code`.
    #[must_use]
    pub fn code(&self) -> Code {
        self.code
    }

    /// Mirrors `Reasons`.
    #[must_use]
    pub fn reasons(&self) -> &[String] {
        &self.reasons
    }

    /// Mirrors `Message`: the reasons joined with `", "`.
    #[must_use]
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }

    /// Mirrors `Plugin`: the plugin that returned this status, or `""`.
    #[must_use]
    pub fn plugin(&self) -> &'static str {
        self.plugin
    }

    /// Mirrors `IsSuccess`.
    #[must_use]
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    /// Mirrors `IsRejected`: `Unschedulable` or `UnschedulableAndUnresolvable`.
    #[must_use]
    pub fn is_rejected(&self) -> bool {
        matches!(
            self.code,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable
        )
    }
}

/// Mirrors `CycleState`: what plugins compute for one pod in one scheduling
/// cycle (at `PreFilter`, `PreScore`) and read later (at `Filter`, `Score`),
/// keyed by a name each plugin owns (`"PreFilterNodeResourcesFit"`).
#[derive(Default)]
pub struct CycleState {
    storage: HashMap<&'static str, Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for CycleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CycleState")
            .field("keys", &self.storage.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl CycleState {
    /// Mirrors `NewCycleState`.
    #[must_use]
    pub fn new() -> Self {
        CycleState::default()
    }

    /// Mirrors `Write`.
    pub fn write<T: Any + Send + Sync>(&mut self, key: &'static str, value: T) {
        self.storage.insert(key, Box::new(value));
    }

    /// Mirrors `Read`: the value under `key`, if one of type `T` is there
    /// (upstream's `ErrNotFound` is `None`).
    #[must_use]
    pub fn read<T: Any>(&self, key: &str) -> Option<&T> {
        self.storage.get(key).and_then(|value| value.downcast_ref())
    }
}

/// Mirrors `Plugin`: every plugin has a name.
pub trait Plugin: Send + Sync + 'static {
    /// The plugin's name in configurations and statuses.
    fn name(&self) -> &'static str;
}

/// Mirrors `PreFilterPlugin`: runs once per cycle before the filters.
pub trait PreFilterPlugin: Plugin {
    /// Mirrors `PreFilter`: a rejection makes the pod unschedulable on every
    /// node.
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod) -> Status;
}

/// Mirrors `FilterPlugin`: may the pod run on this node?
pub trait FilterPlugin: Plugin {
    /// Mirrors `Filter`.
    fn filter(&self, state: &CycleState, pod: &Pod, node_info: &NodeInfo) -> Status;
}

/// Mirrors `PreScorePlugin`: runs once per cycle before the scores.
pub trait PreScorePlugin: Plugin {
    /// Mirrors `PreScore`, over the nodes that passed the filters.
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
    ) -> Status;
}

/// Mirrors `ScorePlugin`: how good is this node for the pod, from
/// [`MIN_NODE_SCORE`] to [`MAX_NODE_SCORE`]?
pub trait ScorePlugin: Plugin {
    /// Mirrors `Score` (upstream's newer signature, with the `NodeInfo`).
    ///
    /// # Errors
    ///
    /// A [`Status`] that is not a success.
    fn score(
        &self,
        state: &CycleState,
        pod: &Pod,
        node_info: &NodeInfo,
    ) -> Result<i64, Status>;
}

/// Mirrors `PluginScore`: one plugin's weighted score of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginScore {
    /// The plugin.
    pub name: &'static str,
    /// Its score times its weight.
    pub score: i64,
}

/// Mirrors `NodePluginScores`: every plugin's score of one node, and the sum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePluginScores {
    /// The node.
    pub name: String,
    /// Per plugin.
    pub scores: Vec<PluginScore>,
    /// The sum of `scores`.
    pub total_score: i64,
}
