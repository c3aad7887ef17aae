//! The [`ListerWatcher`] trait and its options.
//!
//! Mirrors client-go's [`tools/cache/listwatch.go`]: the `Lister`, `Watcher` and
//! `ListerWatcher` interfaces the Reflector talks to, and the parts of
//! `metav1.ListOptions` that lists and watches use. Go passes one `ListOptions` to
//! both calls; here a list takes [`ListOptions`] and a watch takes [`WatchOptions`],
//! so each call only carries what it uses.
//!
//! Strings mirror Go's: an empty `resource_version` means "unset" (the newest data,
//! read from etcd), `"0"` means "any version" (the API server's watch cache may
//! answer), anything else means "not older than this".
//!
//! [`tools/cache/listwatch.go`]: https://github.com/kubernetes/client-go/blob/v0.34.0/tools/cache/listwatch.go

use std::future::Future;
use std::sync::Arc;

use crate::error::Error;
use crate::watch::Watch;

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

/// One list response: the items, the collection's resource version and the token for
/// the next page. Mirrors what the Reflector reads from a list object with
/// `meta.ListAccessor` and `meta.ExtractList`.
#[derive(Debug)]
pub struct ListPage<T> {
    /// The objects, shared, never copied.
    pub items: Vec<Arc<T>>,
    /// The resource version of the collection at the time of the list.
    pub resource_version: String,
    /// Empty on the last page; otherwise pass it as
    /// [`ListOptions::continue_token`].
    pub continue_token: String,
}

impl<T> ListPage<T> {
    /// A last (or only) page.
    pub fn new(items: Vec<Arc<T>>, resource_version: impl Into<String>) -> Self {
        ListPage {
            items,
            resource_version: resource_version.into(),
            continue_token: String::new(),
        }
    }

    /// This page, with a continue token for the next one.
    #[must_use]
    pub fn with_continue(mut self, continue_token: impl Into<String>) -> Self {
        self.continue_token = continue_token.into();
        self
    }
}

impl<T> Clone for ListPage<T> {
    fn clone(&self) -> Self {
        ListPage {
            items: self.items.clone(),
            resource_version: self.resource_version.clone(),
            continue_token: self.continue_token.clone(),
        }
    }
}

// ANCHOR: lister_watcher
/// Mirrors client-go's `ListerWatcher`: what a Reflector needs from an API server.
///
/// Both calls return `Send` futures, so a Reflector over any implementation can run
/// on a multi-threaded runtime. Implementations:
/// [`KubeListerWatcher`](crate::KubeListerWatcher) over kube-client, and
/// [`FakeListerWatcher`](crate::FakeListerWatcher) for tests.
pub trait ListerWatcher<T>: Send + Sync {
    /// One list request. A paging caller sends `limit` and follows `continue_token`.
    fn list(
        &self,
        options: ListOptions,
    ) -> impl Future<Output = Result<ListPage<T>, Error>> + Send;

    /// Opens a watch. The returned [`Watch`] delivers events until it ends or is
    /// stopped.
    fn watch(
        &self,
        options: WatchOptions,
    ) -> impl Future<Output = Result<Watch<T>, Error>> + Send;
}
// ANCHOR_END: lister_watcher

impl<T, L: ListerWatcher<T> + ?Sized> ListerWatcher<T> for Arc<L> {
    fn list(
        &self,
        options: ListOptions,
    ) -> impl Future<Output = Result<ListPage<T>, Error>> + Send {
        (**self).list(options)
    }

    fn watch(
        &self,
        options: WatchOptions,
    ) -> impl Future<Output = Result<Watch<T>, Error>> + Send {
        (**self).watch(options)
    }
}
