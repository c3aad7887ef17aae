//! The [`ListerWatcher`] trait.
//!
//! Mirrors client-go's [`tools/cache/listwatch.go`]: the `Lister`, `Watcher` and
//! `ListerWatcher` interfaces the Reflector talks to. Their options,
//! [`ListOptions`] and [`WatchOptions`], are apimachinery's `metav1` types
//! ([`apimachinery::apis::meta::v1`]).
//!
//! [`tools/cache/listwatch.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/listwatch.go

use std::future::Future;
use std::sync::Arc;

use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};

use crate::error::Error;
use crate::watch::Watch;

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
