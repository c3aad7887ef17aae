//! `cargo xtask exercise reset TARGET`: the region(s) become `todo!()` again.

use super::learner::Learner;
use super::progress::Progress;
use super::region;
use crate::error::Error;

impl Learner<'_> {
    /// `reset TARGET`.
    pub(super) fn reset(&self, arg: &str) -> Result<(), Error> {
        let s = &self.style;
        let exercises = self.targets(arg)?;
        let mut progress = Progress::load(self.root)?;
        for ex in exercises {
            let text = self.read(&ex.file)?;
            if region::is_stub(&text, &ex.id).map_err(Error::region(&ex.file))? {
                println!("{} {} is already `todo!()`", s.dim("·"), ex.id);
            } else {
                let discarded = region::body(&text, &ex.id)
                    .map_err(Error::region(&ex.file))?
                    .lines()
                    .count();
                let stubbed =
                    region::stub(&text, &ex.id, &self.manifest.stub_note(ex))
                        .map_err(Error::region(&ex.file))?;
                self.write(&ex.file, &stubbed)?;
                println!(
                    "{} {} is `todo!()` again {}",
                    s.yellow("↺"),
                    s.bold(&ex.id),
                    s.dim(&format!("({discarded} lines of the region discarded)"))
                );
            }
            progress.started.insert(ex.id.clone());
            progress.solved.remove(&ex.id);
        }
        progress.save(self.root)?;
        Ok(())
    }
}
