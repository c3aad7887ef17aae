//! `cargo xtask exercise start TARGET [--force]`: the regions' bodies become
//! `todo!()`, then their tests are built so the first `check` is quick.

use std::collections::BTreeMap;

use super::learner::{Learner, git};
use super::manifest::Exercise;
use super::progress::Progress;
use super::{cargo, region};
use crate::error::Error;

impl Learner<'_> {
    /// `start TARGET [--force]`.
    pub(super) fn start(&self, arg: &str, force: bool) -> Result<(), Error> {
        let s = &self.style;
        let exercises = self.targets(arg)?;
        let mut files: Vec<&str> = Vec::new();
        for ex in &exercises {
            if !files.contains(&ex.file.as_str()) {
                files.push(&ex.file);
            }
        }
        let mut dirty = Vec::new();
        for file in &files {
            if !git(self.root, &["status", "--porcelain", "--", file])?
                .trim()
                .is_empty()
            {
                dirty.push(*file);
            }
        }
        if !dirty.is_empty() {
            return Err(Error::Refused(format!(
                "not starting: {} {} uncommitted changes, and the stubs would mix with them.\n\
                 Commit or stash them first (`git stash`), or drop them with `git checkout -- {}`.",
                dirty.join(", "),
                if dirty.len() == 1 { "has" } else { "have" },
                dirty.join(" ")
            )));
        }
        let mut texts: BTreeMap<&str, String> = BTreeMap::new();
        for file in &files {
            texts.insert(file, self.read(file)?);
        }
        let mut progress = Progress::load(self.root)?;
        let mut stubbed = BTreeMap::new();
        for ex in &exercises {
            let is_stub = region::is_stub(&texts[ex.file.as_str()], &ex.id)
                .map_err(Error::region(&ex.file))?;
            stubbed.insert(ex.id.as_str(), is_stub);
        }
        let worked_on: Vec<&str> = exercises
            .iter()
            .map(|ex| ex.id.as_str())
            .filter(|id| progress.is_started(id) && !stubbed[id])
            .collect();
        if !worked_on.is_empty() && !force {
            return Err(Error::Refused(refusal_to_restub(&worked_on)));
        }
        for ex in &exercises {
            if !stubbed[ex.id.as_str()]
                && let Some(text) = texts.get_mut(ex.file.as_str())
            {
                *text = region::stub(text, &ex.id, &self.manifest.stub_note(ex))
                    .map_err(Error::region(&ex.file))?;
            }
            progress.started.insert(ex.id.clone());
            progress.solved.remove(&ex.id);
        }
        for (file, text) in &texts {
            self.write(file, text)?;
        }
        progress.save(self.root)?;
        let total: u32 = exercises.iter().map(|ex| ex.minutes).sum();
        let what = match exercises.as_slice() {
            [one] => format!("Started {}", one.id),
            all => format!("Started {arg}: {} exercises", all.len()),
        };
        println!(
            "{what}, about {total} minutes. {} now `todo!()`:",
            if exercises.len() == 1 {
                "Its body is"
            } else {
                "Their bodies are"
            }
        );
        let id_width = exercises.iter().map(|ex| ex.id.len()).max().unwrap_or(0);
        let title_width = exercises
            .iter()
            .map(|ex| ex.title.chars().count())
            .max()
            .unwrap_or(0);
        for ex in &exercises {
            let text = &texts[ex.file.as_str()];
            let line = region::locate(text, &ex.id)
                .map(|(line, _)| line)
                .unwrap_or(0);
            println!(
                "  {}  {:<title_width$}  {}",
                s.bold(&format!("{:<id_width$}", ex.id)),
                ex.title,
                s.dim(&format!("{:>2} min  {}:{line}", ex.minutes, ex.file))
            );
        }
        self.warm_up(&exercises)?;
        println!(
            "\nNext: `{}` to see them fail, then `{}` for the first one.",
            s.bold("cargo xtask exercise check"),
            s.bold("cargo xtask exercise next")
        );
        Ok(())
    }

    /// Builds the tests of the exercises' crates as `check` will, so that the first
    /// `check` does not wait for the compiler.
    pub(super) fn warm_up(&self, exercises: &[&Exercise]) -> Result<(), Error> {
        let s = &self.style;
        let mut crates: Vec<&str> = Vec::new();
        for ex in exercises {
            if !crates.contains(&ex.crate_name.as_str()) {
                crates.push(&ex.crate_name);
            }
        }
        println!(
            "\n{}",
            s.dim(&format!(
                "Building the tests of {} now (cargo test --no-run, in {}), so that your first \
                 check is quick; the first time takes a few minutes…",
                crates.join(", "),
                cargo::exercise_target_dir(self.root).display()
            ))
        );
        let mut broken = false;
        for crate_name in &crates {
            broken |= self.build_errors(crate_name)?.is_some();
        }
        if !broken {
            println!("{} the tests are built", s.green("✓"));
        }
        Ok(())
    }
}

/// Why `start` will not stub regions that hold the learner's work.
pub(super) fn refusal_to_restub(ids: &[&str]) -> String {
    let (they, hold) = if ids.len() == 1 {
        ("it", "holds")
    } else {
        ("they", "hold")
    };
    format!(
        "not starting: you started {} before, and {they} {hold} your code now, not the stub. \
         Starting again would throw that code away.\n\
         To start over from `todo!()` anyway, add `--force` (or `cargo xtask exercise reset ID` \
         for one exercise); `cargo xtask exercise check` shows where you are.",
        ids.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_exercises_and_the_way_out() {
        let one = refusal_to_restub(&["ex1-a"]);
        assert!(one.contains("you started ex1-a before, and it holds your code"));
        assert!(one.contains("--force"));
        let two = refusal_to_restub(&["ex1-a", "ex1-b"]);
        assert!(two.contains("ex1-a, ex1-b before, and they hold"));
    }
}
