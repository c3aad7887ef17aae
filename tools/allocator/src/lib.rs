//! The workspace's allocator, declared once (issue #16).
//!
//! Every binary, example and bench of the workspace links this crate with one
//! line, `use workspace_allocator as _;`, and so runs on [mimalloc]. The
//! libraries never name it: an application that uses a stage crate keeps its own
//! allocator. Building a Kubernetes object is about a hundred small allocations
//! (every string of a `Pod` is its own), and with glibc's `malloc` and `free`
//! that was most of the time of a list (`reflector_list`), and memory freed by a
//! compaction stayed in glibc's arenas instead of going back to the system.
//! mimalloc's per-thread free lists halve the first and return freed pages (it
//! purges them after a short delay) for the second. The performance page has the
//! figures both ways.
//!
//! The allocator also counts, per thread, what the code under [`measure`] asks
//! for (the requested sizes, as the `allocation-counter` crate did): the memory
//! benches' bytes per object, and the no-allocation tests. Outside `measure` the
//! count costs one thread-local flag read per allocation.
//!
//! With the `system` feature the same counting wraps the system allocator
//! instead, to measure what the decision buys.
//!
//! # Giving memory back
//! mimalloc returns a page to the system (Linux `MADV_DONTNEED`) once every
//! block in it is free and a purge delay has passed, checked as the process
//! allocates and frees. mimalloc 3's default delay is 1 s; the workspace sets
//! 10 ms (mimalloc 2's default) before `main`, so a server that has just
//! compacted a burst away gives the memory back while it goes on serving.
//! `MIMALLOC_PURGE_DELAY` in the environment still wins.
//!
//! A page freed by another thread than the one that allocated it (a tokio task
//! moves between workers) is only found free when its owner collects, which
//! mimalloc does as that thread allocates. A worker that has gone idle never
//! does, so a server at rest kept what a burst had freed. The binaries' runtimes
//! therefore call [`on_thread_park`] when a worker parks: at most once a second
//! per worker, it collects that worker's free pages (`mi_collect(false)`), and
//! purges what has waited out the purge delay.
//!
//! [mimalloc]: https://github.com/microsoft/mimalloc

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

#[cfg(not(feature = "system"))]
type Inner = mimalloc::MiMalloc;
#[cfg(not(feature = "system"))]
const INNER: Inner = mimalloc::MiMalloc;
#[cfg(feature = "system")]
type Inner = std::alloc::System;
#[cfg(feature = "system")]
const INNER: Inner = std::alloc::System;

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_e`).
#[cfg(not(feature = "system"))]
const PURGE_DELAY_OPTION: libmimalloc_sys::mi_option_t = 15;

/// The purge delay the workspace runs with, in milliseconds.
pub const PURGE_DELAY_MS: i32 = 10;

/// Sets mimalloc's options before `main` (an ELF constructor): the purge delay,
/// unless the environment sets it.
#[cfg(all(target_os = "linux", not(feature = "system")))]
#[used]
#[unsafe(link_section = ".init_array")]
static CONFIGURE: extern "C" fn() = configure;

#[cfg(all(target_os = "linux", not(feature = "system")))]
extern "C" fn configure() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: a plain option store, made before `main` starts any thread.
        unsafe {
            libmimalloc_sys::mi_option_set(
                PURGE_DELAY_OPTION,
                std::ffi::c_long::from(PURGE_DELAY_MS),
            );
        }
    }
}

/// The purge delay in effect, in milliseconds (`None` on the system allocator).
#[allow(clippy::useless_conversion)] // `c_long` is `i64` here, `i32` on some targets.
pub fn purge_delay_ms() -> Option<i64> {
    #[cfg(not(feature = "system"))]
    {
        // SAFETY: a plain option read.
        let value = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY_OPTION) };
        Some(i64::from(value))
    }
    #[cfg(feature = "system")]
    None
}

/// How often a parking worker collects, at most.
const COLLECT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

thread_local! {
    /// When this thread last collected in [`on_thread_park`].
    static LAST_COLLECT: Cell<Option<std::time::Instant>> = const { Cell::new(None) };
}

/// For a tokio runtime's `Builder::on_thread_park`: when a worker goes idle, at
/// most once every second, hands the pages it owns that are all free back to
/// mimalloc's arenas and purges the ones past the purge delay, so memory a
/// burst freed goes back to the system while the server rests. Returns whether
/// it collected. Costs a clock read otherwise; does nothing on the system
/// allocator.
pub fn on_thread_park() -> bool {
    let now = std::time::Instant::now();
    let due = LAST_COLLECT
        .try_with(|last| match last.get() {
            Some(at) if now.duration_since(at) < COLLECT_EVERY => false,
            _ => {
                last.set(Some(now));
                true
            }
        })
        .unwrap_or(false);
    #[cfg(not(feature = "system"))]
    if due {
        // SAFETY: collects this thread's own heap; no pointer is passed.
        unsafe { libmimalloc_sys::mi_collect(false) };
    }
    due
}

/// A multi-threaded tokio runtime builder with [`on_thread_park`] installed:
/// what every binary of the workspace runs on.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(|| {
            on_thread_park();
        })
        .build()
}

/// What the allocator serves: the chosen one, counted.
struct Counting(Inner);

#[global_allocator]
static GLOBAL: Counting = Counting(INNER);

/// The name of the allocator in use, for a bench's report.
pub const NAME: &str = if cfg!(feature = "system") {
    "system (glibc malloc)"
} else {
    "mimalloc"
};

/// What the code under [`measure`] allocated on its thread, in requested bytes:
/// the fields of the `allocation-counter` crate's `AllocationInfo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocationInfo {
    /// Allocations made (a reallocation counts as one).
    pub count_total: u64,
    /// Allocations made and not freed since.
    pub count_current: i64,
    /// The most allocations alive at once.
    pub count_max: u64,
    /// Bytes allocated.
    pub bytes_total: u64,
    /// Bytes allocated and not freed since: what the code keeps.
    pub bytes_current: i64,
    /// The most bytes alive at once.
    pub bytes_max: u64,
}

thread_local! {
    /// Whether this thread is inside `measure` (nesting depth).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static COUNT_TOTAL: Cell<u64> = const { Cell::new(0) };
    static COUNT_CURRENT: Cell<i64> = const { Cell::new(0) };
    static COUNT_MAX: Cell<u64> = const { Cell::new(0) };
    static BYTES_TOTAL: Cell<u64> = const { Cell::new(0) };
    static BYTES_CURRENT: Cell<i64> = const { Cell::new(0) };
    static BYTES_MAX: Cell<u64> = const { Cell::new(0) };
}

/// Adds an allocation (`count` 1) or a free (`count` -1) of `bytes` to this
/// thread's figures, when it is measuring. Never allocates, never panics: during
/// thread teardown the thread-locals may be gone, and nothing is counted.
fn record(count: i64, bytes: i64) {
    let measuring = DEPTH.try_with(|depth| depth.get() > 0).unwrap_or(false);
    if !measuring {
        return;
    }
    let _ = COUNT_CURRENT.try_with(|current| {
        let now = current.get() + count;
        current.set(now);
        let _ = COUNT_MAX.try_with(|max| max.set(max.get().max(now.max(0) as u64)));
    });
    let _ = BYTES_CURRENT.try_with(|current| {
        let now = current.get() + bytes;
        current.set(now);
        let _ = BYTES_MAX.try_with(|max| max.set(max.get().max(now.max(0) as u64)));
    });
    if count > 0 {
        let _ = COUNT_TOTAL.try_with(|total| total.set(total.get() + 1));
        let _ = BYTES_TOTAL.try_with(|total| total.set(total.get() + bytes as u64));
    }
}

// SAFETY: every call is forwarded unchanged to the inner allocator, which upholds
// `GlobalAlloc`'s contract; the counting only reads the layouts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let ptr = unsafe { self.0.alloc(layout) };
        if !ptr.is_null() {
            record(1, layout.size() as i64);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let ptr = unsafe { self.0.alloc_zeroed(layout) };
        if !ptr.is_null() {
            record(1, layout.size() as i64);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { self.0.dealloc(ptr, layout) };
        record(-1, -(layout.size() as i64));
    }

    unsafe fn realloc(
        &self,
        ptr: *mut u8,
        layout: Layout,
        new_size: usize,
    ) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let new = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            record(-1, -(layout.size() as i64));
            record(1, new_size as i64);
        }
        new
    }
}

/// Runs `f` and returns what it allocated on this thread (allocations made by
/// other threads it starts are not counted). Nested calls each count their own
/// span; the outer one includes the inner.
pub fn measure<F: FnOnce()>(f: F) -> AllocationInfo {
    let before = snapshot();
    DEPTH.with(|depth| depth.set(depth.get() + 1));
    // Maxima are measured from here: start them at the current level.
    let (count_now, bytes_now) =
        (COUNT_CURRENT.with(Cell::get), BYTES_CURRENT.with(Cell::get));
    let saved_max = (COUNT_MAX.with(Cell::get), BYTES_MAX.with(Cell::get));
    COUNT_MAX.with(|max| max.set(count_now.max(0) as u64));
    BYTES_MAX.with(|max| max.set(bytes_now.max(0) as u64));
    f();
    DEPTH.with(|depth| depth.set(depth.get() - 1));
    let after = snapshot();
    COUNT_MAX.with(|max| max.set(max.get().max(saved_max.0)));
    BYTES_MAX.with(|max| max.set(max.get().max(saved_max.1)));
    AllocationInfo {
        count_total: after.count_total - before.count_total,
        count_current: after.count_current - before.count_current,
        count_max: after.count_max.saturating_sub(count_now.max(0) as u64),
        bytes_total: after.bytes_total - before.bytes_total,
        bytes_current: after.bytes_current - before.bytes_current,
        bytes_max: after.bytes_max.saturating_sub(bytes_now.max(0) as u64),
    }
}

fn snapshot() -> AllocationInfo {
    AllocationInfo {
        count_total: COUNT_TOTAL.with(Cell::get),
        count_current: COUNT_CURRENT.with(Cell::get),
        count_max: COUNT_MAX.with(Cell::get),
        bytes_total: BYTES_TOTAL.with(Cell::get),
        bytes_current: BYTES_CURRENT.with(Cell::get),
        bytes_max: BYTES_MAX.with(Cell::get),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_and_freed_allocations_are_counted_on_this_thread() {
        let mut kept = Vec::new();
        let info = measure(|| {
            let temporary = vec![0u8; 1000];
            std::hint::black_box(&temporary);
            drop(temporary);
            kept = vec![0u64; 100];
        });
        assert_eq!(info.count_total, 2);
        assert_eq!(info.bytes_total, 1800);
        assert_eq!(info.count_current, 1);
        assert_eq!(info.bytes_current, 800);
        assert_eq!(info.bytes_max, 1000);
        drop(kept);
    }

    #[test]
    fn nothing_is_counted_outside_measure_or_on_other_threads() {
        let outside = vec![1u8; 64];
        let info = measure(|| {
            std::thread::scope(|scope| {
                scope.spawn(|| std::hint::black_box(vec![0u8; 4096]));
            });
        });
        drop(outside);
        // The spawned thread's buffer is not this thread's; the scope's own
        // bookkeeping may allocate, but never 4096 bytes at once.
        assert!(info.bytes_max < 4096, "{info:?}");
    }

    #[test]
    fn the_purge_delay_is_set_before_main() {
        if cfg!(all(target_os = "linux", not(feature = "system")))
            && std::env::var_os("MIMALLOC_PURGE_DELAY").is_none()
        {
            assert_eq!(purge_delay_ms(), Some(i64::from(PURGE_DELAY_MS)));
        }
    }

    #[test]
    fn a_parking_worker_collects_at_most_once_a_second() {
        std::thread::spawn(|| {
            assert!(on_thread_park(), "the first park collects");
            assert!(!on_thread_park(), "the next within a second does not");
        })
        .join()
        .expect("the thread ran");
    }

    #[test]
    fn a_reallocation_counts_once_and_moves_the_bytes() {
        let mut grown: Vec<u8> = Vec::with_capacity(16);
        let info = measure(|| grown.reserve_exact(48));
        assert_eq!(info.count_total, 1);
        assert_eq!(info.bytes_current, 48 - 16);
        assert_eq!(info.count_current, 0);
    }
}
