//! `cargo xtask exercise next`: the next unsolved exercise, where it is, what
//! to read and a first hint.

use super::learner::Learner;
use super::manifest::Exercise;
use super::progress::Progress;
use super::region;
use crate::error::Error;

impl Learner<'_> {
    /// The first started, unsolved exercise in book order.
    pub(super) fn next_exercise(&self, progress: &Progress) -> Option<&Exercise> {
        self.manifest
            .exercises
            .iter()
            .find(|ex| progress.is_started(&ex.id) && !progress.is_solved(&ex.id))
    }

    /// `next`.
    pub(super) fn next(&self) -> Result<(), Error> {
        let mut progress = Progress::load(self.root)?;
        match self.next_exercise(&progress) {
            Some(ex) => {
                self.show(ex, &mut progress)?;
                progress.save(self.root)?;
            }
            None => self.nothing_next(&progress),
        }
        Ok(())
    }

    /// What to do when no started exercise is left unsolved.
    pub(super) fn nothing_next(&self, progress: &Progress) {
        let s = &self.style;
        let stage = self
            .manifest
            .exercises
            .iter()
            .find(|ex| !progress.is_started(&ex.id))
            .map(Exercise::stage);
        if progress.started.is_empty() {
            println!(
                "Nothing started yet. Begin with `{}`.",
                s.bold(&format!(
                    "cargo xtask exercise start stage{}",
                    stage.unwrap_or(1)
                ))
            );
        } else if let Some(stage) = stage {
            println!(
                "{} Every exercise you started is solved. Go on with `{}`.",
                s.green("Well done!"),
                s.bold(&format!("cargo xtask exercise start stage{stage}"))
            );
        } else {
            println!(
                "{} Every exercise is solved; there are no more for now.",
                s.green("Well done!")
            );
        }
    }

    /// Shows an exercise: where it is, what to read, its first hint, and the later
    /// exercises its tests wait for.
    pub(super) fn show(
        &self,
        ex: &Exercise,
        progress: &mut Progress,
    ) -> Result<(), Error> {
        let s = &self.style;
        let text = self.read(&ex.file)?;
        let (line, function) =
            region::locate(&text, &ex.id).map_err(Error::region(&ex.file))?;
        let exercise_page = self.manifest.exercise_page(ex);
        println!(
            "{} {} — {} {}",
            s.bold("Next:"),
            s.bold(&ex.id),
            ex.title,
            s.dim(&format!("(about {} min)", ex.minutes))
        );
        println!("  code   {}:{line}, the body of `fn {function}`", ex.file);
        println!("  read   {}", ex.page);
        println!(
            "         {exercise_page} {}",
            s.dim("(in the book: cargo xtask book serve)")
        );
        println!(
            "  hint   {} {}",
            s.yellow(&format!("1/{}:", ex.hints.len())),
            ex.hints[0]
        );
        println!("  check  cargo xtask exercise check {}", ex.id);
        let waiting: Vec<&str> = self
            .manifest
            .later_needed_by(ex)
            .into_iter()
            .filter(|later| {
                progress.is_started(&later.id) && !progress.is_solved(&later.id)
            })
            .map(|later| later.id.as_str())
            .collect();
        if !waiting.is_empty() {
            println!(
                "  {}   some of its tests also run {}, which {} later and {} not solved yet: \
                 those tests stay red until {} (see `also_breaks` in exercises.toml)",
                s.yellow("note"),
                waiting.join(" and "),
                if waiting.len() == 1 { "comes" } else { "come" },
                if waiting.len() == 1 { "is" } else { "are" },
                if waiting.len() == 1 {
                    "it is"
                } else {
                    "they are"
                }
            );
        }
        let seen = progress.hints.entry(ex.id.clone()).or_insert(0);
        *seen = (*seen).max(1);
        Ok(())
    }
}
