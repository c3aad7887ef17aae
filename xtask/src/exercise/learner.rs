//! The learner's commands share one [`Learner`]: the checkout, its
//! `exercises.toml` and its stage crates; each command is a file of its own
//! (`start.rs`, `next.rs`, `check.rs`, `hint.rs`, `solution.rs`, `reset.rs`).

use std::fs;
use std::path::Path;
use std::process::Command;

use super::Style;
use super::manifest::{self, Exercise, Manifest, stage_crates};
use crate::error::Error;

/// The learner's commands, on the checkout at `root`.
pub(crate) struct Learner<'a> {
    /// The workspace root.
    pub(super) root: &'a Path,
    /// `exercises.toml`.
    pub(super) manifest: Manifest,
    /// The workspace's stage crates.
    pub(super) stage_crates: Vec<String>,
    /// Colours or not.
    pub(super) style: Style,
}

impl<'a> Learner<'a> {
    /// Loads the manifest and the stage crates.
    pub(crate) fn new(root: &'a Path, style: Style) -> Result<Learner<'a>, Error> {
        Ok(Learner {
            root,
            manifest: Manifest::load(root)?,
            stage_crates: stage_crates(root)?,
            style,
        })
    }

    /// The exercises a `TARGET` argument names, in book order. Their crates must be
    /// members of the workspace.
    pub(super) fn targets(&self, arg: &str) -> Result<Vec<&Exercise>, Error> {
        let target = self.manifest.resolve(arg, &self.stage_crates)?;
        let exercises = self.manifest.exercises_of(&target);
        let ids = exercises.iter().map(|ex| ex.id.as_str()).collect();
        let problems = self
            .manifest
            .member_problems(&self.stage_crates, Some(&ids));
        if problems.is_empty() {
            Ok(exercises)
        } else {
            Err(Error::Manifest {
                what: format!("{} and the workspace disagree", manifest::FILE),
                problems,
            })
        }
    }

    /// Reads a file of the workspace.
    pub(super) fn read(&self, file: &str) -> Result<String, Error> {
        let path = self.root.join(file);
        fs::read_to_string(&path).map_err(Error::io("read", path))
    }

    /// Writes a file of the workspace.
    pub(super) fn write(&self, file: &str, text: &str) -> Result<(), Error> {
        let path = self.root.join(file);
        fs::write(&path, text).map_err(Error::io("write", path))
    }
}

/// Runs `git ARGS` in `root` and returns its stdout.
pub(super) fn git(root: &Path, args: &[&str]) -> Result<String, Error> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(Error::spawn("git"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(Error::Git {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}
