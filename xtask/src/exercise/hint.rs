//! `cargo xtask exercise hint [ID]`: the next hint.

use super::learner::Learner;
use super::progress::Progress;
use crate::error::Error;

impl Learner<'_> {
    /// `hint [ID]`.
    pub(super) fn hint(&self, id: Option<&str>) -> Result<(), Error> {
        let s = &self.style;
        let mut progress = Progress::load(self.root)?;
        let ex = match id {
            Some(id) => self.manifest.find_exercise(id)?,
            None => match self.next_exercise(&progress) {
                Some(ex) => ex,
                None => {
                    self.nothing_next(&progress);
                    return Ok(());
                }
            },
        };
        let total = ex.hints.len();
        let seen = progress.hints_seen(&ex.id);
        if seen >= total {
            println!("All {total} hints for {}:", s.bold(&ex.id));
            for (i, hint) in ex.hints.iter().enumerate() {
                println!("  {} {hint}", s.yellow(&format!("{}/{total}:", i + 1)));
            }
        } else {
            println!(
                "{}, hint {}: {}",
                s.bold(&ex.id),
                s.yellow(&format!("{}/{total}", seen + 1)),
                ex.hints[seen]
            );
            progress.hints.insert(ex.id.clone(), seen + 1);
            progress.save(self.root)?;
        }
        if seen + 1 < total {
            println!(
                "{}",
                s.dim(&format!("Another: cargo xtask exercise hint {}", ex.id))
            );
        } else {
            println!(
                "{}",
                s.dim(&format!(
                    "That was the last hint. The reference: cargo xtask exercise solution {} \
                     (it replaces your code in that region)",
                    ex.id
                ))
            );
        }
        Ok(())
    }
}
