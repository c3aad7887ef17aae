//! How the exercise tool runs cargo: with dead-code warnings allowed, in a target
//! directory of its own.
//!
//! A stubbed region often leaves a helper that only the region calls unused, and
//! rustc would warn about it. Rather than an `#[allow(dead_code)]` on each such
//! helper in the reference code, every build the tool runs (`check`, `start`'s
//! warm-up, `verify`'s baseline and stubbed builds) adds `-A dead_code` to the
//! rustflags: appended to `CARGO_ENCODED_RUSTFLAGS` when that is set (cargo reads it
//! first), else to `RUSTFLAGS`. Any other warning still shows, and `verify` still
//! fails on it.
//!
//! Changed rustflags make cargo rebuild what it had built without them, so the
//! learner's commands build in `<target dir>/exercise` (`$CARGO_TARGET_DIR/exercise`
//! when that is set, else `target/exercise`): a plain `cargo test` and `cargo xtask
//! exercise check` do not undo each other's builds. `verify` builds in its own
//! scratch copy with its own artifacts.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The flags every exercise build adds.
pub(crate) const ALLOW_DEAD_CODE: [&str; 2] = ["-A", "dead_code"];

/// The `cargo` that runs xtask (from `$CARGO`), or `cargo` on `PATH`.
pub(crate) fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// `cargo` with the exercise rustflags (see the module docs), for the workspace at
/// `root`. With `learner_target`, it builds in the learner's target directory,
/// [`exercise_target_dir`].
pub(crate) fn exercise_cargo(root: &Path, learner_target: bool) -> Command {
    let mut command = cargo();
    let (name, value) = rustflags_with_allow(
        std::env::var_os("CARGO_ENCODED_RUSTFLAGS").as_deref(),
        std::env::var_os("RUSTFLAGS").as_deref(),
    );
    command.current_dir(root).env(name, value);
    if learner_target {
        command.env("CARGO_TARGET_DIR", exercise_target_dir(root));
    }
    command
}

/// The rustflags variable to set and its value: `CARGO_ENCODED_RUSTFLAGS` with
/// [`ALLOW_DEAD_CODE`] appended (`\x1f`-separated) when `encoded` is set, even to
/// nothing, as cargo then ignores `RUSTFLAGS`; else `RUSTFLAGS` with them appended
/// (space-separated).
pub(crate) fn rustflags_with_allow(
    encoded: Option<&OsStr>,
    plain: Option<&OsStr>,
) -> (&'static str, OsString) {
    let (name, separator, existing) = match encoded {
        Some(flags) => ("CARGO_ENCODED_RUSTFLAGS", "\x1f", flags),
        None => ("RUSTFLAGS", " ", plain.unwrap_or_default()),
    };
    let mut value = existing.to_os_string();
    let existing_is_blank = existing.to_string_lossy().trim().is_empty();
    if existing_is_blank {
        value = OsString::new();
    }
    for (i, flag) in ALLOW_DEAD_CODE.iter().enumerate() {
        if i > 0 || !existing_is_blank {
            value.push(separator);
        }
        value.push(flag);
    }
    (name, value)
}

/// The workspace's target directory: `$CARGO_TARGET_DIR` (relative to the current
/// directory, as cargo reads it), or `target` under the workspace root.
pub(crate) fn workspace_target_dir(root: &Path) -> PathBuf {
    target_dir_from(
        std::env::var_os("CARGO_TARGET_DIR").as_deref(),
        &std::env::current_dir().unwrap_or_else(|_| root.to_path_buf()),
        root,
    )
}

/// Where the learner's exercise builds go: `exercise` under the workspace's target
/// directory.
pub(crate) fn exercise_target_dir(root: &Path) -> PathBuf {
    workspace_target_dir(root).join("exercise")
}

/// [`workspace_target_dir`] from its inputs.
fn target_dir_from(env: Option<&OsStr>, cwd: &Path, root: &Path) -> PathBuf {
    match env {
        Some(dir) if !dir.is_empty() => cwd.join(dir),
        _ => root.join("target"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(encoded: Option<&str>, plain: Option<&str>) -> (&'static str, String) {
        let (name, value) =
            rustflags_with_allow(encoded.map(OsStr::new), plain.map(OsStr::new));
        (name, value.to_string_lossy().into_owned())
    }

    #[test]
    fn dead_code_is_allowed_after_the_users_flags() {
        assert_eq!(flags(None, None), ("RUSTFLAGS", "-A dead_code".into()));
        assert_eq!(
            flags(None, Some("  ")),
            ("RUSTFLAGS", "-A dead_code".into())
        );
        assert_eq!(
            flags(None, Some("-C target-cpu=native")),
            ("RUSTFLAGS", "-C target-cpu=native -A dead_code".into())
        );
        assert_eq!(
            flags(Some("-Cfoo\x1f--cfg\x1fx"), Some("ignored")),
            (
                "CARGO_ENCODED_RUSTFLAGS",
                "-Cfoo\x1f--cfg\x1fx\x1f-A\x1fdead_code".into()
            )
        );
        assert_eq!(
            flags(Some(""), Some("-C x")),
            ("CARGO_ENCODED_RUSTFLAGS", "-A\x1fdead_code".into())
        );
    }

    #[test]
    fn the_learner_target_dir_follows_cargo_target_dir() {
        let (cwd, root) = (Path::new("/home/me/ws/sub"), Path::new("/home/me/ws"));
        assert_eq!(
            target_dir_from(None, cwd, root),
            Path::new("/home/me/ws/target")
        );
        assert_eq!(
            target_dir_from(Some(OsStr::new("/tmp/t")), cwd, root),
            Path::new("/tmp/t")
        );
        assert_eq!(
            target_dir_from(Some(OsStr::new("t")), cwd, root),
            Path::new("/home/me/ws/sub/t")
        );
        assert_eq!(
            target_dir_from(Some(OsStr::new("")), cwd, root),
            Path::new("/home/me/ws/target")
        );
    }
}
