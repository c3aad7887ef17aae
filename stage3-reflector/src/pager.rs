//! Listing in pages.
//!
//! Mirrors client-go's [`tools/pager/pager.go`]: `ListPager.List` asks for `limit`
//! items at a time, follows continue tokens, and joins the pages into one list whose
//! resource version is the first page's. If a continue token expires half way (the
//! server compacted the version the first page was read at), it gives up on paging
//! and fetches everything in one request at the originally requested version.
//!
//! [`tools/pager/pager.go`]: https://github.com/kubernetes/client-go/blob/v0.34.0/tools/pager/pager.go

use crate::error::Error;
use crate::listwatch::{ListOptions, ListPage, ListerWatcher};

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

    // ANCHOR: pager_list
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
