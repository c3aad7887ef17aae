//! Listing in pages.
//!
//! Mirrors client-go's [`tools/pager/pager.go`]: `ListPager.List` asks for `limit`
//! items at a time, follows continue tokens, and joins the pages into one list whose
//! resource version is the first page's. If a continue token expires half way (the
//! server compacted the version the first page was read at), it gives up on paging
//! and fetches everything in one request at the originally requested version.
//!
//! [`tools/pager/pager.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/pager/pager.go

use crate::error::Error;
use apimachinery::apis::meta::v1::ListOptions;

use crate::listwatch::{ListPage, ListerWatcher};

/// `pager.defaultPageSize`: the reflector's page size unless told otherwise.
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// Whether a list came back in more than one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paging {
    /// The first response was the whole list.
    SinglePage,
    /// The server returned a continue token, so the list was joined from several
    /// pages.
    Paginated,
}

/// Mirrors client-go's `pager.ListPager`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListPager {
    /// The `limit` sent when the options carry none; `0` turns paging off.
    pub page_size: u32,
    /// On an expired continue token, fetch the whole list in one request instead of
    /// failing.
    pub full_list_if_expired: bool,
}

impl Default for ListPager {
    fn default() -> Self {
        ListPager {
            page_size: DEFAULT_PAGE_SIZE,
            full_list_if_expired: true,
        }
    }
}

impl ListPager {
    /// A pager with the default page size (500) that falls back to a full list.
    pub fn new() -> Self {
        ListPager::default()
    }

    /// The same pager with another page size; `0` turns paging off.
    #[must_use]
    pub fn with_page_size(mut self, page_size: u32) -> Self {
        self.page_size = page_size;
        self
    }

    /// Mirrors `ListPager.List`: lists everything `options` selects, `page_size`
    /// items per request, and reports whether the server paginated.
    ///
    /// # Recovery
    /// An expired continue token (page 2 or later) makes one more, unpaged request
    /// at the originally requested resource version, when `full_list_if_expired`
    /// is set. Any other error, and an expired first page, is returned: the
    /// caller decides (the reflector relists from `""`).
    ///
    /// # Memory usage
    /// The first page's vector becomes the result and later pages are moved into it;
    /// objects are `Arc`s and are never copied.
    // ANCHOR: pager_list
    pub async fn list<T, L>(
        &self,
        lister: &L,
        mut options: ListOptions,
    ) -> Result<(ListPage<T>, Paging), Error>
    where
        L: ListerWatcher<T> + ?Sized,
    {
        // ANCHOR: ex3-pager
        if options.limit == 0 {
            options.limit = self.page_size;
        }
        let requested_resource_version = options.resource_version.clone();
        let requested_match = options.resource_version_match;
        let mut joined: Option<ListPage<T>> = None;
        let mut paging = Paging::SinglePage;
        loop {
            let mut page = match lister.list(options.clone()).await {
                Ok(page) => page,
                Err(error)
                    if error.is_expired()
                        && self.full_list_if_expired
                        && !options.continue_token.is_empty() =>
                {
                    // The version the first page was read at has been compacted:
                    // list again, in one request, at the version
                    // the caller asked for.
                    options.limit = 0;
                    options.continue_token.clear();
                    options.resource_version = requested_resource_version;
                    options.resource_version_match = requested_match;
                    let full = lister.list(options).await?;
                    return Ok((full, paging));
                }
                Err(error) => return Err(error),
            };
            let continue_token = std::mem::take(&mut page.continue_token);
            // The first page's vector and resource version become the joined list's.
            let list = match joined.take() {
                None => page,
                Some(mut list) => {
                    list.items.extend(page.items);
                    list
                }
            };
            if continue_token.is_empty() {
                return Ok((list, paging));
            }
            joined = Some(list);
            // A continue token carries the version; the server rejects one next to
            // it.
            options.continue_token = continue_token;
            options.resource_version.clear();
            options.resource_version_match = None;
            paging = Paging::Paginated;
        }
        // ANCHOR_END: ex3-pager
    }
    // ANCHOR_END: pager_list
}

/// Unit tests of `ListPager::list` (the `ex3-pager` region) against the fake
/// server, with no reflector around it.
#[cfg(test)]
mod ex3_pager {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::Pod;

    use super::*;
    use crate::fake::{FakeListerWatcher, ListReply, expired_status};
    use apimachinery::apis::meta::v1::ResourceVersionMatch;

    fn pod(name: &str) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.to_string());
        pod.metadata.namespace = Some("default".to_string());
        pod
    }

    /// A fake holding `count` pods, created one per version.
    fn fake_with_count(count: usize) -> FakeListerWatcher<Pod> {
        let fake = FakeListerWatcher::new();
        for i in 0..count {
            fake.add(pod(&format!("pod-{i:04}"))).expect("named");
        }
        fake
    }

    fn names(items: &[Arc<Pod>]) -> Vec<String> {
        items
            .iter()
            .filter_map(|pod| pod.metadata.name.clone())
            .collect()
    }

    async fn list(
        pager: ListPager,
        fake: &FakeListerWatcher<Pod>,
        options: ListOptions,
    ) -> Result<(ListPage<Pod>, Paging), Error> {
        let listed = pager.list(fake, options);
        tokio::time::timeout(std::time::Duration::from_secs(60), listed)
            .await
            .expect("the pager returns")
    }

    #[tokio::test]
    async fn ex3_pager_pages_by_500_unless_told_otherwise() {
        let fake = fake_with_count(1200);
        let options = ListOptions {
            resource_version: "0".to_string(),
            ..ListOptions::default()
        };
        let (list_of_all, paging) = list(ListPager::new(), &fake, options.clone())
            .await
            .expect("served");
        assert_eq!(paging, Paging::Paginated);
        assert_eq!(list_of_all.items.len(), 1200);
        assert_eq!(list_of_all.resource_version, "1200");
        let calls = fake.list_calls();
        assert_eq!(calls.len(), 3);
        assert_eq!(
            (calls[0].resource_version.as_str(), calls[0].limit),
            ("0", 500)
        );
        for page in &calls[1..] {
            assert_eq!(
                page.resource_version, "",
                "a continue request has no version"
            );
            assert_eq!(page.limit, 500);
            assert!(!page.continue_token.is_empty());
        }
        // A limit in the options wins; a page size of 0 turns paging off.
        let fake = fake_with_count(10);
        let limited = ListOptions {
            limit: 4,
            ..options.clone()
        };
        let (listed, _) = list(ListPager::new(), &fake, limited)
            .await
            .expect("served");
        assert_eq!(listed.items.len(), 10);
        assert!(fake.list_calls().iter().all(|call| call.limit == 4));
        let fake = fake_with_count(10);
        let (listed, paging) =
            list(ListPager::new().with_page_size(0), &fake, options)
                .await
                .expect("served");
        assert_eq!((listed.items.len(), paging), (10, Paging::SinglePage));
        assert_eq!(fake.list_calls().len(), 1);
    }

    #[tokio::test]
    async fn ex3_pager_joins_the_pages_under_the_first_pages_version() {
        let fake = FakeListerWatcher::<Pod>::new();
        fake.push_list_reply(ListReply::Page(
            ListPage::new(vec![Arc::new(pod("a"))], "10").with_continue("c1"),
        ));
        fake.push_list_reply(ListReply::Page(
            ListPage::new(vec![Arc::new(pod("b"))], "11").with_continue("c2"),
        ));
        fake.push_list_reply(ListReply::Page(ListPage::new(
            vec![Arc::new(pod("c"))],
            "12",
        )));
        let options = ListOptions {
            resource_version: "7".to_string(),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListOptions::default()
        };
        let (list_of_all, paging) =
            list(ListPager::new().with_page_size(1), &fake, options)
                .await
                .expect("scripted pages");
        assert_eq!(paging, Paging::Paginated);
        assert_eq!(list_of_all.resource_version, "10");
        assert_eq!(list_of_all.continue_token, "");
        assert_eq!(names(&list_of_all.items), ["a", "b", "c"]);
        let calls = fake.list_calls();
        assert_eq!(
            calls[0].resource_version_match,
            Some(ResourceVersionMatch::NotOlderThan)
        );
        assert_eq!(calls[1].continue_token, "c1");
        assert_eq!(calls[1].resource_version_match, None);
        assert_eq!(calls[2].continue_token, "c2");
    }

    #[tokio::test]
    async fn ex3_pager_falls_back_to_one_full_list_when_a_continue_token_expires() {
        let fake = fake_with_count(8);
        fake.push_list_reply(ListReply::ServeThenExpireContinueTokens);
        let options = ListOptions {
            resource_version: "0".to_string(),
            ..ListOptions::default()
        };
        let (list_of_all, paging) =
            list(ListPager::new().with_page_size(4), &fake, options)
                .await
                .expect("the full list succeeds");
        assert_eq!(paging, Paging::Paginated);
        assert_eq!(list_of_all.items.len(), 8);
        let calls = fake.list_calls();
        assert_eq!(calls.len(), 3);
        assert!(!calls[1].continue_token.is_empty());
        assert_eq!(
            calls[2],
            ListOptions {
                resource_version: "0".to_string(),
                ..ListOptions::default()
            }
        );
    }

    #[tokio::test]
    async fn ex3_pager_restores_the_requested_version_for_its_full_list() {
        let fake = fake_with_count(3);
        fake.push_list_reply(ListReply::ServeThenExpireContinueTokens);
        let options = ListOptions {
            resource_version: "2".to_string(),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListOptions::default()
        };
        let (list_of_all, paging) =
            list(ListPager::new().with_page_size(2), &fake, options)
                .await
                .expect("the full list succeeds");
        assert_eq!(paging, Paging::Paginated);
        assert_eq!(list_of_all.items.len(), 3);
        let full = fake.list_calls().pop().expect("three calls");
        assert_eq!(full.resource_version, "2");
        assert_eq!(
            full.resource_version_match,
            Some(ResourceVersionMatch::NotOlderThan)
        );
        assert_eq!((full.limit, full.continue_token.as_str()), (0, ""));
    }

    #[tokio::test]
    async fn ex3_pager_returns_an_expired_first_page_and_other_errors() {
        let fake = fake_with_count(3);
        fake.fail_next_list(Error::from_status(expired_status("too old")));
        let error = list(ListPager::new(), &fake, ListOptions::default())
            .await
            .expect_err("an expired first page is the caller's problem");
        assert!(error.is_expired());
        assert_eq!(fake.list_calls().len(), 1);

        let pager = ListPager {
            page_size: 1,
            full_list_if_expired: false,
        };
        fake.push_list_reply(ListReply::ServeThenExpireContinueTokens);
        let error = list(pager, &fake, ListOptions::default())
            .await
            .expect_err("no fallback when it is turned off");
        assert!(error.is_expired());
        assert_eq!(fake.list_calls().len(), 3);
    }
}
