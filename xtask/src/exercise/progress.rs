//! The learner's progress: a plain-text, git-ignored file at the workspace root.
//!
//! ```text
//! # cargo xtask exercise: your progress. Delete this file to forget it.
//! started ex1-split-key
//! solved ex1-split-key
//! hints ex1-update-index 2
//! ```
//!
//! Unknown lines are ignored, so an old or hand-edited file never stops the tool.
//! (Older versions wrote the commit at `start` after a `started` id and took it for
//! the reference; the commit is now ignored, see [`lock`](super::lock).)

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// The progress file's name, at the workspace root (listed in `.gitignore`).
pub(crate) const FILE: &str = ".exercise-progress";

/// What the learner has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    /// Exercises that `start` (or `reset`) stubbed at some time.
    pub(crate) started: BTreeSet<String>,
    /// Exercises whose tests passed at the last `check`.
    pub(crate) solved: BTreeSet<String>,
    /// How many hints of each exercise have been shown.
    pub(crate) hints: BTreeMap<String, usize>,
}

impl Progress {
    /// The progress file of the workspace at `root`.
    pub(crate) fn path(root: &Path) -> PathBuf {
        root.join(FILE)
    }

    /// Reads the progress file; a missing file is no progress.
    pub(crate) fn load(root: &Path) -> Result<Progress, Error> {
        let path = Self::path(root);
        match fs::read_to_string(&path) {
            Ok(text) => Ok(Progress::parse(&text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Progress::default())
            }
            Err(e) => Err(Error::io("read", path)(e)),
        }
    }

    /// Writes the progress file.
    pub(crate) fn save(&self, root: &Path) -> Result<(), Error> {
        let path = Self::path(root);
        fs::write(&path, self.render()).map_err(Error::io("write", path))
    }

    /// Parses the file's text, ignoring lines it does not understand.
    pub(crate) fn parse(text: &str) -> Progress {
        let mut progress = Progress::default();
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["started", id] | ["started", id, _] => {
                    progress.started.insert(id.to_string());
                }
                ["solved", id] => {
                    progress.solved.insert(id.to_string());
                }
                ["hints", id, count] => {
                    if let Ok(count) = count.parse() {
                        progress.hints.insert(id.to_string(), count);
                    }
                }
                _ => {}
            }
        }
        progress
    }

    /// The file's text.
    pub(crate) fn render(&self) -> String {
        let mut out = String::from(
            "# cargo xtask exercise: your progress (git-ignored). Delete this file to forget it.\n",
        );
        for id in &self.started {
            out.push_str(&format!("started {id}\n"));
        }
        for id in &self.solved {
            out.push_str(&format!("solved {id}\n"));
        }
        for (id, count) in &self.hints {
            out.push_str(&format!("hints {id} {count}\n"));
        }
        out
    }

    /// Whether the exercise has been started.
    pub(crate) fn is_started(&self, id: &str) -> bool {
        self.started.contains(id)
    }

    /// Whether the exercise's tests passed at the last check.
    pub(crate) fn is_solved(&self, id: &str) -> bool {
        self.solved.contains(id)
    }

    /// How many hints of the exercise have been shown.
    pub(crate) fn hints_seen(&self, id: &str) -> usize {
        self.hints.get(id).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_tolerance() {
        let mut progress = Progress::default();
        progress.started.insert("ex1-a".into());
        progress.started.insert("ex1-b".into());
        progress.solved.insert("ex1-a".into());
        progress.hints.insert("ex1-b".into(), 2);
        let text = progress.render();
        assert_eq!(Progress::parse(&text), progress);
        let noisy = format!("{text}garbage line\nhints ex1-c many\n\n");
        assert_eq!(Progress::parse(&noisy), progress);
        assert!(progress.is_started("ex1-b") && !progress.is_solved("ex1-b"));
        assert_eq!(
            (progress.hints_seen("ex1-b"), progress.hints_seen("ex1-a")),
            (2, 0)
        );
        // An older file's commit after the id is read, and dropped.
        let old = Progress::parse("started ex1-a 99ee745d1c\n");
        assert!(old.is_started("ex1-a"));
        assert_eq!(old.render().lines().nth(1), Some("started ex1-a"));
    }
}
