//! The options of lists and watches: mirrors apimachinery's
//! [`pkg/apis/meta/v1/types.go`] (`ListOptions`, `ResourceVersionMatch`).
//!
//! Go passes one `ListOptions` to both calls; here a list takes [`ListOptions`]
//! and a watch takes [`WatchOptions`], so each call only carries what it uses.
//! Both sides use them: client-go's `ListerWatcher` (stage 3) sends them, and
//! the server's storage (stage 5) receives them.
//!
//! Strings mirror Go's: an empty `resource_version` means "unset" (the newest
//! data, read from etcd), `"0"` means "any version" (the API server's watch cache
//! may answer), anything else means "not older than this".
//!
//! [`pkg/apis/meta/v1/types.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/apis/meta/v1/types.go

/// Mirrors `metav1.ResourceVersionMatch`: how `resource_version` is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceVersionMatch {
    /// Data at least as new as `resource_version` (`NotOlderThan`).
    NotOlderThan,
    /// Data at exactly `resource_version` (`Exact`); not allowed with `"0"`.
    Exact,
}

impl ResourceVersionMatch {
    /// The wire value: `"NotOlderThan"` or `"Exact"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceVersionMatch::NotOlderThan => "NotOlderThan",
            ResourceVersionMatch::Exact => "Exact",
        }
    }
}

/// The options of a list call: the list half of `metav1.ListOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// `""` for the newest data, `"0"` for any, otherwise "not older than".
    pub resource_version: String,
    /// How `resource_version` is compared; `None` leaves it to the server's
    /// default.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// The most items one response may carry; `0` means no limit.
    pub limit: u32,
    /// The continue token of the previous page; empty for the first page.
    pub continue_token: String,
    /// A label selector such as `app=web`; empty selects everything.
    pub label_selector: String,
    /// A field selector such as `spec.nodeName=n1`; empty selects everything.
    pub field_selector: String,
}

/// The options of a watch call: the watch half of `metav1.ListOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WatchOptions {
    /// Events after this version; `""` starts at the newest version (or, with
    /// `send_initial_events`, at a consistent snapshot).
    pub resource_version: String,
    /// Only with `send_initial_events`, where the API server requires
    /// `NotOlderThan`.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// The server ends the watch after this many seconds; `None` leaves it to the
    /// client.
    pub timeout_seconds: Option<u32>,
    /// Ask for `BOOKMARK` events. Servers may ignore this.
    pub allow_watch_bookmarks: bool,
    /// Start with synthetic `ADDED` events for the current state, ended by a
    /// bookmark annotated `k8s.io/initial-events-end` (a streaming list).
    pub send_initial_events: bool,
    /// A label selector; empty selects everything.
    pub label_selector: String,
    /// A field selector; empty selects everything.
    pub field_selector: String,
}
