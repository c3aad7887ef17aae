//! [`Framework`]: one scheduling profile's plugins, run extension point by
//! extension point.
//!
//! Mirrors kube-scheduler's
//! [runtime/framework.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/framework/runtime/framework.go)
//! (`frameworkImpl`: `RunPreFilterPlugins`, `RunFilterPlugins`,
//! `RunPreScorePlugins`, `RunScorePlugins`) with the plugin set of
//! [default_plugins.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/apis/config/v1/default_plugins.go)
//! that exists here: `NodeUnschedulable`, `TaintToleration` and
//! `NodeResourcesFit` (least allocated, weight 1).
//!
//! Plugins run one after the other (upstream filters nodes in parallel with
//! 16 workers); a node's filters stop at the first rejection, as upstream's.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::interface::{
    CycleState, FilterPlugin, NodePluginScores, PluginScore, PreFilterPlugin,
    PreScorePlugin, ScorePlugin, Status,
};
use super::plugins::{NodeResourcesFit, NodeUnschedulable, TaintToleration};
use super::types::NodeInfo;

/// Mirrors `frameworkImpl`: the plugins of one profile (one `schedulerName`).
pub struct Framework {
    profile_name: String,
    pre_filter_plugins: Vec<Arc<dyn PreFilterPlugin>>,
    filter_plugins: Vec<Arc<dyn FilterPlugin>>,
    pre_score_plugins: Vec<Arc<dyn PreScorePlugin>>,
    score_plugins: Vec<(Arc<dyn ScorePlugin>, i64)>,
}

impl std::fmt::Debug for Framework {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let filters: Vec<_> = self.filter_plugins.iter().map(|p| p.name()).collect();
        let scores: Vec<_> =
            self.score_plugins.iter().map(|(p, _)| p.name()).collect();
        f.debug_struct("Framework")
            .field("profile_name", &self.profile_name)
            .field("filter_plugins", &filters)
            .field("score_plugins", &scores)
            .finish_non_exhaustive()
    }
}

impl Framework {
    /// An empty profile named `profile_name` (the `schedulerName` it serves).
    #[must_use]
    pub fn new(profile_name: impl Into<String>) -> Self {
        Framework {
            profile_name: profile_name.into(),
            pre_filter_plugins: Vec::new(),
            filter_plugins: Vec::new(),
            pre_score_plugins: Vec::new(),
            score_plugins: Vec::new(),
        }
    }

    /// Mirrors the default profile (`getDefaultPlugins`), reduced to the
    /// plugins this crate has, in upstream's order: filters
    /// `NodeUnschedulable`, `TaintToleration`, `NodeResourcesFit`; score
    /// `NodeResourcesFit` (least allocated over cpu and memory) with weight 1.
    #[must_use]
    pub fn default_profile(profile_name: impl Into<String>) -> Self {
        let fit = Arc::new(NodeResourcesFit::default());
        Framework::new(profile_name)
            .with_pre_filter_plugin(fit.clone())
            .with_filter_plugin(Arc::new(NodeUnschedulable))
            .with_filter_plugin(Arc::new(TaintToleration))
            .with_filter_plugin(fit.clone())
            .with_pre_score_plugin(fit.clone())
            .with_score_plugin(fit, 1)
    }

    /// Adds a `PreFilter` plugin.
    #[must_use]
    pub fn with_pre_filter_plugin(
        mut self,
        plugin: Arc<dyn PreFilterPlugin>,
    ) -> Self {
        self.pre_filter_plugins.push(plugin);
        self
    }

    /// Adds a `Filter` plugin.
    #[must_use]
    pub fn with_filter_plugin(mut self, plugin: Arc<dyn FilterPlugin>) -> Self {
        self.filter_plugins.push(plugin);
        self
    }

    /// Adds a `PreScore` plugin.
    #[must_use]
    pub fn with_pre_score_plugin(mut self, plugin: Arc<dyn PreScorePlugin>) -> Self {
        self.pre_score_plugins.push(plugin);
        self
    }

    /// Adds a `Score` plugin whose scores count `weight` times.
    #[must_use]
    pub fn with_score_plugin(
        mut self,
        plugin: Arc<dyn ScorePlugin>,
        weight: i64,
    ) -> Self {
        self.score_plugins.push((plugin, weight));
        self
    }

    /// Mirrors `ProfileName`.
    #[must_use]
    pub fn profile_name(&self) -> &str {
        &self.profile_name
    }

    /// Mirrors `HasScorePlugins`.
    #[must_use]
    pub fn has_score_plugins(&self) -> bool {
        !self.score_plugins.is_empty()
    }

    /// Mirrors `RunPreFilterPlugins`: the first status that is not a success,
    /// with its plugin.
    pub fn run_pre_filter_plugins(
        &self,
        state: &mut CycleState,
        pod: &Pod,
    ) -> Status {
        for plugin in &self.pre_filter_plugins {
            let status = plugin.pre_filter(state, pod);
            if !status.is_success() {
                return status.with_plugin(plugin.name());
            }
        }
        Status::success()
    }

    /// Mirrors `RunFilterPlugins`: the first status that is not a success,
    /// with its plugin; the remaining filters do not run.
    #[must_use]
    pub fn run_filter_plugins(
        &self,
        state: &CycleState,
        pod: &Pod,
        node_info: &NodeInfo,
    ) -> Status {
        for plugin in &self.filter_plugins {
            let status = plugin.filter(state, pod, node_info);
            if !status.is_success() {
                return status.with_plugin(plugin.name());
            }
        }
        Status::success()
    }

    /// Mirrors `RunPreScorePlugins`.
    pub fn run_pre_score_plugins(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
    ) -> Status {
        for plugin in &self.pre_score_plugins {
            let status = plugin.pre_score(state, pod, nodes);
            if !status.is_success() {
                return status.with_plugin(plugin.name());
            }
        }
        Status::success()
    }

    /// Mirrors `RunScorePlugins`: every plugin's score of every node, times the
    /// plugin's weight, and each node's total.
    ///
    /// # Errors
    ///
    /// The first plugin status that is not a success.
    pub fn run_score_plugins(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
    ) -> Result<Vec<NodePluginScores>, Status> {
        nodes
            .iter()
            .map(|node_info| {
                let mut scores = Vec::with_capacity(self.score_plugins.len());
                let mut total_score = 0;
                for (plugin, weight) in &self.score_plugins {
                    let score = plugin
                        .score(state, pod, node_info)
                        .map_err(|status| status.with_plugin(plugin.name()))?;
                    scores.push(PluginScore {
                        name: plugin.name(),
                        score: score * weight,
                    });
                    total_score += score * weight;
                }
                Ok(NodePluginScores {
                    name: node_info.name().to_string(),
                    scores,
                    total_score,
                })
            })
            .collect()
    }
}
