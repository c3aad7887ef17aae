//! `cargo xtask exercise …`: exercises derived from the reference crates.
//!
//! The reference code is the only copy. An exercise is a region of it, the whole
//! body of one function between `// ANCHOR: ex<stage>-<name>` and `// ANCHOR_END:
//! …`, listed in `exercises.toml` with the crate that holds it, its tests, hints and
//! minutes (a stage may span several crates). The learner's commands work on their
//! own checkout; `TARGET` is a stage (`stage5` or `5`), one stage crate
//! (`stage5-storage`) or an exercise id:
//!
//! | command | what it does | file |
//! |---|---|---|
//! | `start TARGET [--force]` | replaces the region bodies with `todo!()`, then builds their tests | `exercise/start.rs` |
//! | `next` | the next unsolved exercise: where it is, what to read, a first hint | `exercise/next.rs` |
//! | `check [TARGET]` | runs each started exercise's tests, pass/fail per exercise, a count | `exercise/check.rs` |
//! | `hint [ID]` | the next hint | `exercise/hint.rs` |
//! | `solution ID` | restores one region's reference and shows the diff | `exercise/solution.rs` |
//! | `reset TARGET` | stubs the region(s) again | `exercise/reset.rs` |
//!
//! They share one `Learner` (`exercise/learner.rs`): the checkout, its manifest
//! and its stage crates.
//!
//! `start` refuses over uncommitted changes in the regions' files, and it refuses to
//! stub again a region that was started before and no longer holds the stub (the
//! learner's work) unless `--force` is given; `reset` is the explicit way to start
//! an exercise over. After stubbing, it builds the crates' tests (`cargo test
//! --no-run`), so that the first `check` is quick.
//!
//! Every cargo build these commands run allows dead code (`-A dead_code` appended to
//! the rustflags) and goes to `<target dir>/exercise`: a stub leaves the helpers
//! that only its region calls unused, and the reference code carries no
//! `#[allow(dead_code)]` for that. See [`cargo`].
//!
//! The reference is fixed by the repository, never by the learner's commits:
//! `exercises.lock` records a hash of every region's reference body, and `solution`
//! restores the newest committed body with that hash (see [`lock`]). It refuses when
//! no commit holds it, rather than take the learner's own code for the reference.
//!
//! CI's commands: `verify` (the red check, see [`verify`], `exercise/verify.rs`)
//! and `schedule --check`
//! (the generated files: the workshop schedules in the facilitator's guide, see
//! [`schedule`], the hints on each exercise's own page, see [`pages`], and
//! `exercises.lock`).
//!
//! Progress (started, solved, hints seen) lives in the git-ignored
//! `.exercise-progress`.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

mod cargo;
mod check;
mod hint;
mod learner;
mod lock;
pub(crate) mod manifest;
mod next;
mod pages;
mod process;
mod progress;
pub(crate) mod region;
mod reset;
mod schedule;
mod solution;
mod start;
mod suggest;
mod verify;

use crate::error::Error;
use learner::Learner;

/// The `exercise` subcommands.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub(crate) enum ExerciseCommand {
    /// Make the exercises' function bodies todo!() in your checkout
    ///
    /// Then builds their tests, so that the first `check` is quick. Refuses over
    /// uncommitted changes in those files, and over regions you started before
    /// that hold your code (unless --force).
    Start {
        /// A stage (`stage1` or `1`), one stage crate (`stage5-storage`) or an
        /// exercise id
        target: String,
        /// Stub again regions that you started before, discarding your code there
        #[arg(long)]
        force: bool,
    },
    /// The next unsolved exercise: where it is, what to read, a hint
    Next,
    /// Run the tests of your started exercises (or of TARGET)
    ///
    /// Shows pass/fail for each exercise, and how many are solved.
    Check {
        /// A stage, a stage crate or an exercise id
        target: Option<String>,
    },
    /// The next hint (for the next exercise when no ID is given)
    Hint {
        /// An exercise id
        id: Option<String>,
    },
    /// Restore one exercise's reference code and show the diff
    ///
    /// The reference is the newest committed body whose hash exercises.lock records:
    /// never your own commits.
    Solution {
        /// An exercise id, e.g. `ex1-split-key`
        id: String,
    },
    /// Make the region(s) todo!() again, discarding your code there
    Reset {
        /// A stage, a stage crate or an exercise id
        target: String,
    },
    /// CI's red check of every exercise region
    ///
    /// In a scratch copy, each region stubbed alone must build without warnings
    /// (dead code allowed), fail its own tests, keep its crate's other tests
    /// green, and not be needed by the tests of an earlier exercise of its
    /// stage.
    Verify {
        /// The time limit for one test, in seconds
        #[arg(long, value_name = "SECS", default_value_t = 60,
              value_parser = clap::value_parser!(u64).range(1..))]
        timeout: u64,
        /// How many tests run at once
        #[arg(long, value_name = "N", default_value_t = 2,
              value_parser = clap::value_parser!(u16).range(1..))]
        jobs: u16,
        /// Stages, stage crates or exercise ids to check (all when none is given)
        targets: Vec<String>,
    },
    /// Print the workshop schedules and update the generated files
    ///
    /// The generated files: the schedules in book/src/facilitator.md, the hints on
    /// each exercise's page, book/src/stageN/exercises/ID.md (both from
    /// exercises.toml) and exercises.lock (from the reference regions).
    Schedule {
        /// Change nothing; fail if any generated file is stale
        #[arg(long)]
        check: bool,
    },
}

/// `cargo xtask exercise COMMAND`.
pub(crate) fn run(root: &Path, command: ExerciseCommand) -> Result<(), Error> {
    let style = Style::detect();
    match command {
        ExerciseCommand::Verify {
            timeout,
            jobs,
            targets,
        } => {
            let options = verify::Options {
                timeout: Duration::from_secs(timeout),
                jobs: usize::from(jobs),
                only: targets,
            };
            verify::verify(root, &options, &style)
        }
        ExerciseCommand::Schedule { check } => schedule::schedule(root, check),
        ExerciseCommand::Start { target, force } => {
            Learner::new(root, style)?.start(&target, force)
        }
        ExerciseCommand::Next => Learner::new(root, style)?.next(),
        ExerciseCommand::Check { target } => {
            Learner::new(root, style)?.check(target.as_deref())
        }
        ExerciseCommand::Hint { id } => {
            Learner::new(root, style)?.hint(id.as_deref())
        }
        ExerciseCommand::Solution { id } => Learner::new(root, style)?.solution(&id),
        ExerciseCommand::Reset { target } => {
            Learner::new(root, style)?.reset(&target)
        }
    }
}

/// Terminal colours, used only when stdout is a terminal and `NO_COLOR` is unset.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    /// Whether to emit ANSI colour codes.
    color: bool,
}

impl Style {
    /// Colours on a terminal, plain text otherwise.
    pub(crate) fn detect() -> Style {
        Style {
            color: std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// `text` in the SGR style `code`.
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Green: passed.
    pub(crate) fn green(&self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Red: failed.
    pub(crate) fn red(&self, text: &str) -> String {
        self.paint("31", text)
    }

    /// Yellow: a hint or a note.
    pub(crate) fn yellow(&self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Bold: ids and commands.
    pub(crate) fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    /// Dim: secondary information.
    pub(crate) fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
}
