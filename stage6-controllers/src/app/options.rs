//! The controller manager's flags: mirrors `cmd/kube-controller-manager/app/options`
//! (`KubeControllerManagerOptions`, with the `--controllers` list of
//! `GenericControllerManagerConfigurationOptions` and each controller's
//! `Concurrent…Syncs`), as clap arguments that `mini-controller-manager` and
//! `mini-cluster` both flatten into their command lines.

use std::time::Duration;

use clap::Args;
use stage5_apiserver::app::options::parse_duration;

/// `names.ReplicaSetController`.
pub const REPLICASET_CONTROLLER: &str = "replicaset-controller";
/// `names.DeploymentController`.
pub const DEPLOYMENT_CONTROLLER: &str = "deployment-controller";
/// `names.GarbageCollectorController`.
pub const GARBAGE_COLLECTOR_CONTROLLER: &str = "garbage-collector-controller";

/// Every controller this manager knows, in the order it starts them
/// (`NewControllerDescriptors`).
pub const KNOWN_CONTROLLERS: &[&str] = &[
    REPLICASET_CONTROLLER,
    DEPLOYMENT_CONTROLLER,
    GARBAGE_COLLECTOR_CONTROLLER,
];

/// The flags of the controllers.
#[derive(Clone, Debug, Args)]
pub struct ControllerManagerOptions {
    /// The controllers to run, comma separated: `*` for every one, `name` to
    /// add one, `-name` to leave one out (upstream's `--controllers`).
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub controllers: Vec<String>,
    /// ReplicaSets synced at once (`--concurrent-replicaset-syncs`).
    #[arg(long, default_value_t = 5)]
    pub concurrent_replicaset_syncs: usize,
    /// Deployments synced at once (`--concurrent-deployment-syncs`).
    #[arg(long, default_value_t = 5)]
    pub concurrent_deployment_syncs: usize,
    /// Garbage-collector workers (`--concurrent-gc-syncs`).
    #[arg(long, default_value_t = 20)]
    pub concurrent_gc_syncs: usize,
    /// The informers resync every object between this and twice this
    /// (`--min-resync-period`, `12h`); `0s` turns resync off.
    #[arg(long, default_value = "12h", value_parser = parse_duration)]
    pub min_resync_period: Duration,
}

impl Default for ControllerManagerOptions {
    fn default() -> Self {
        Self {
            controllers: vec!["*".to_string()],
            concurrent_replicaset_syncs: 5,
            concurrent_deployment_syncs: 5,
            concurrent_gc_syncs: 20,
            min_resync_period: Duration::from_secs(12 * 3600),
        }
    }
}

/// Why the options cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub struct OptionsError(pub String);

impl std::fmt::Display for OptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptionsError {}

impl ControllerManagerOptions {
    /// Only the controllers in `names` (for tests and single-controller runs).
    #[must_use]
    pub fn only(names: &[&str]) -> Self {
        Self {
            controllers: names.iter().map(|n| n.to_string()).collect(),
            ..Self::default()
        }
    }

    /// Mirrors `GenericControllerManagerConfigurationOptions.Validate`: every
    /// name in `--controllers` must be known (with or without its `-`).
    pub fn validate(&self) -> Result<(), OptionsError> {
        for name in &self.controllers {
            let bare = name.strip_prefix('-').unwrap_or(name);
            if bare != "*" && !KNOWN_CONTROLLERS.contains(&bare) {
                return Err(OptionsError(format!(
                    "{name:?} is not in the list of known controllers"
                )));
            }
        }
        Ok(())
    }

    // ANCHOR: is_enabled
    /// Mirrors `IsControllerEnabled`: an explicit `name` or `-name` wins
    /// (the first one found), else `*` enables every controller.
    pub fn is_enabled(&self, name: &str) -> bool {
        let mut star = false;
        for entry in &self.controllers {
            if entry == name {
                return true;
            }
            if entry.strip_prefix('-') == Some(name) {
                return false;
            }
            star |= entry == "*";
        }
        star
    }
    // ANCHOR_END: is_enabled
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `TestIsControllerEnabled`'s cases.
    #[test]
    fn test_is_controller_enabled() {
        let cases: &[(&[&str], &str, bool)] = &[
            (&[], "replicaset-controller", false),
            (&["*"], "replicaset-controller", true),
            (&["replicaset-controller"], "replicaset-controller", true),
            (&["-replicaset-controller"], "replicaset-controller", false),
            (
                &["-replicaset-controller", "*"],
                "replicaset-controller",
                false,
            ),
            (
                &["*", "-replicaset-controller"],
                "replicaset-controller",
                false,
            ),
            (
                &["*", "-deployment-controller"],
                "replicaset-controller",
                true,
            ),
            (&["deployment-controller"], "replicaset-controller", false),
        ];
        for (controllers, name, want) in cases {
            let options = ControllerManagerOptions::only(controllers);
            assert_eq!(options.is_enabled(name), *want, "{controllers:?} {name}");
        }
    }

    #[test]
    fn unknown_controllers_are_refused() {
        assert!(
            ControllerManagerOptions::only(&["*", "-deployment-controller"])
                .validate()
                .is_ok()
        );
        let error = ControllerManagerOptions::only(&["cronjob-controller"])
            .validate()
            .unwrap_err();
        assert_eq!(
            error.0,
            "\"cronjob-controller\" is not in the list of known controllers"
        );
    }
}
