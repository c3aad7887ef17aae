//! `cargo xtask exercise …`: exercises derived from the reference crates.
//!
//! The reference code is the only copy. An exercise is a region of it, the whole
//! body of one function between `// ANCHOR: ex<stage>-<name>` and `// ANCHOR_END:
//! …`, listed in `exercises.toml` with the crate that holds it, its tests, hints and
//! minutes (a stage may span several crates). The learner's commands work on their
//! own checkout; `TARGET` is a stage (`stage5` or `5`), one stage crate
//! (`stage5-storage`) or an exercise id:
//!
//! | command | what it does |
//! |---|---|
//! | `start TARGET [--force]` | replaces the region bodies with `todo!()`, then builds their tests |
//! | `next` | the next unsolved exercise: where it is, what to read, a first hint |
//! | `check [TARGET]` | runs each started exercise's tests, pass/fail per exercise, a count |
//! | `hint [ID]` | the next hint |
//! | `solution ID` | restores one region's reference and shows the diff |
//! | `reset TARGET` | stubs the region(s) again |
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
//! CI's commands: `verify` (the red check, see [`verify`]) and `schedule --check`
//! (the generated files: the workshop schedules in the facilitator's guide, see
//! [`schedule`], the hints on the exercises pages, see [`pages`], and
//! `exercises.lock`).
//!
//! Progress (started, solved, hints seen) lives in the git-ignored
//! `.exercise-progress`.

use std::collections::BTreeMap;
use std::fs;
use std::io::IsTerminal;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod cargo;
mod lock;
pub(crate) mod manifest;
mod pages;
mod process;
mod progress;
pub(crate) mod region;
mod schedule;
mod suggest;
mod verify;

use crate::error::Error;
use lock::{Lock, hash_body};
use manifest::{Exercise, Manifest, stage_crates};
use progress::Progress;

/// How long one exercise's `cargo test` may run in `check` before it is killed (an
/// endless loop in the learner's code).
const CHECK_TIMEOUT: Duration = Duration::from_secs(300);

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
    /// the exercises pages (both from exercises.toml) and exercises.lock (from
    /// the reference regions).
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

/// Runs `git ARGS` in `root` and returns its stdout.
fn git(root: &Path, args: &[&str]) -> Result<String, Error> {
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

/// The commits and paths in the output of `git log --follow --format=%H
/// --name-only`: each commit's hash, then (after a blank line) the file's path at
/// that commit. A commit without a path (a merge that did not change it) is skipped.
fn history_with_paths(log: &str) -> Vec<(String, String)> {
    let is_hash = |line: &str| {
        (line.len() == 40 || line.len() == 64)
            && line.bytes().all(|b| b.is_ascii_hexdigit())
    };
    let mut found = Vec::new();
    let mut commit: Option<&str> = None;
    for line in log.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if is_hash(line) {
            commit = Some(line);
        } else if let Some(hash) = commit.take() {
            found.push((hash.to_string(), line.to_string()));
        }
    }
    found
}

/// How one exercise's tests came out in `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TestVerdict {
    /// Every test passed; how many.
    Green(usize),
    /// Not solved; why, for the learner.
    Red(String),
}

/// The learner's commands, on the checkout at `root`.
struct Learner<'a> {
    /// The workspace root.
    root: &'a Path,
    /// `exercises.toml`.
    manifest: Manifest,
    /// The workspace's stage crates.
    stage_crates: Vec<String>,
    /// Colours or not.
    style: Style,
}

impl<'a> Learner<'a> {
    /// Loads the manifest and the stage crates.
    fn new(root: &'a Path, style: Style) -> Result<Learner<'a>, Error> {
        Ok(Learner {
            root,
            manifest: Manifest::load(root)?,
            stage_crates: stage_crates(root)?,
            style,
        })
    }

    /// The exercises a `TARGET` argument names, in book order. Their crates must be
    /// members of the workspace.
    fn targets(&self, arg: &str) -> Result<Vec<&Exercise>, Error> {
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
    fn read(&self, file: &str) -> Result<String, Error> {
        let path = self.root.join(file);
        fs::read_to_string(&path).map_err(Error::io("read", path))
    }

    /// Writes a file of the workspace.
    fn write(&self, file: &str, text: &str) -> Result<(), Error> {
        let path = self.root.join(file);
        fs::write(&path, text).map_err(Error::io("write", path))
    }

    /// `start TARGET [--force]`.
    fn start(&self, arg: &str, force: bool) -> Result<(), Error> {
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
    fn warm_up(&self, exercises: &[&Exercise]) -> Result<(), Error> {
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

    /// The first started, unsolved exercise in book order.
    fn next_exercise(&self, progress: &Progress) -> Option<&Exercise> {
        self.manifest
            .exercises
            .iter()
            .find(|ex| progress.is_started(&ex.id) && !progress.is_solved(&ex.id))
    }

    /// `next`.
    fn next(&self) -> Result<(), Error> {
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
    fn nothing_next(&self, progress: &Progress) {
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
    fn show(&self, ex: &Exercise, progress: &mut Progress) -> Result<(), Error> {
        let s = &self.style;
        let text = self.read(&ex.file)?;
        let (line, function) =
            region::locate(&text, &ex.id).map_err(Error::region(&ex.file))?;
        let exercises_page = self
            .manifest
            .chapter(ex.stage())
            .map(|c| format!(" and {}#{}", c.exercises_page, ex.id))
            .unwrap_or_default();
        println!(
            "{} {} — {} {}",
            s.bold("Next:"),
            s.bold(&ex.id),
            ex.title,
            s.dim(&format!("(about {} min)", ex.minutes))
        );
        println!("  code   {}:{line}, the body of `fn {function}`", ex.file);
        println!(
            "  read   {}{exercises_page} {}",
            ex.page,
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

    /// `check [TARGET]`.
    fn check(&self, arg: Option<&str>) -> Result<(), Error> {
        let s = &self.style;
        let mut progress = Progress::load(self.root)?;
        let exercises: Vec<&Exercise> = match arg {
            Some(arg) => self.targets(arg)?,
            None => self
                .manifest
                .exercises
                .iter()
                .filter(|ex| progress.is_started(&ex.id))
                .collect(),
        };
        if exercises.is_empty() {
            self.nothing_next(&progress);
            return Ok(());
        }
        let logs = std::env::temp_dir()
            .join(format!("xtask-exercise-check-{}.log", std::process::id()));
        let id_width = exercises.iter().map(|ex| ex.id.len()).max().unwrap_or(0);
        let mut failing: Vec<&Exercise> = Vec::new();
        let mut built: BTreeMap<&str, Option<String>> = BTreeMap::new();
        for ex in &exercises {
            if !built.contains_key(ex.crate_name.as_str()) {
                println!(
                    "{}",
                    s.dim(&format!("building the tests of {}…", ex.crate_name))
                );
                built.insert(&ex.crate_name, self.build_errors(&ex.crate_name)?);
            }
            let verdict = match built.get(ex.crate_name.as_str()) {
                Some(Some(_)) => {
                    TestVerdict::Red("does not compile (see above)".into())
                }
                _ => self.run_exercise_tests(ex, &logs)?,
            };
            match verdict {
                TestVerdict::Green(count) => {
                    progress.solved.insert(ex.id.clone());
                    println!(
                        "{} {}  {} {}",
                        s.green("✓"),
                        s.bold(&format!("{:<id_width$}", ex.id)),
                        ex.title,
                        s.dim(&format!("({count} tests pass)"))
                    );
                }
                TestVerdict::Red(why) => {
                    progress.solved.remove(&ex.id);
                    failing.push(ex);
                    println!(
                        "{} {}  {}: {why}",
                        s.red("✗"),
                        s.bold(&format!("{:<id_width$}", ex.id)),
                        ex.title
                    );
                }
            }
        }
        let _ = fs::remove_file(&logs);
        let solved = exercises.len() - failing.len();
        let width = 20;
        let filled = solved * width / exercises.len();
        println!(
            "\n[{}{}] {solved}/{} solved",
            s.green(&"#".repeat(filled)),
            "-".repeat(width - filled),
            exercises.len()
        );
        match failing.first() {
            None => {
                progress.save(self.root)?;
                if arg.is_none() {
                    self.nothing_next(&progress);
                }
                Ok(())
            }
            Some(first) => {
                println!();
                self.show(first, &mut progress)?;
                if first.hints.len() > 1 {
                    println!("  more   cargo xtask exercise hint {}", first.id);
                }
                progress.save(self.root)?;
                Err(Error::Check(format!(
                    "{} of {} still red",
                    failing.len(),
                    exercises.len()
                )))
            }
        }
    }

    /// Builds a crate's tests as the exercise commands do (dead code allowed, in the
    /// exercise target directory); `Some(errors)` when that fails (the errors
    /// are printed).
    fn build_errors(&self, crate_name: &str) -> Result<Option<String>, Error> {
        let out = cargo::exercise_cargo(self.root, true)
            .env("CARGO_TERM_COLOR", "never")
            .args([
                "test",
                "-p",
                crate_name,
                "--tests",
                "--no-run",
                "--message-format=short",
            ])
            .output()
            .map_err(Error::spawn("cargo"))?;
        if out.status.success() {
            return Ok(None);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| {
                l.contains("error") && !l.trim_start().starts_with("Compiling")
            })
            .collect();
        let shown = if errors.is_empty() {
            stderr.trim().to_string()
        } else {
            errors.join("\n")
        };
        println!(
            "{}",
            self.style.red(&format!("{crate_name} does not compile:"))
        );
        for line in shown.lines().take(20) {
            println!("  {line}");
        }
        println!(
            "  {}",
            self.style.dim(&format!(
                "(full messages: cargo test -p {crate_name} --no-run)"
            ))
        );
        Ok(Some(shown))
    }

    /// Runs one exercise's tests.
    fn run_exercise_tests(
        &self,
        ex: &Exercise,
        log: &Path,
    ) -> Result<TestVerdict, Error> {
        let mut command = cargo::exercise_cargo(self.root, true);
        command
            .env("CARGO_TERM_COLOR", "never")
            .env("PROPTEST_DISABLE_FAILURE_PERSISTENCE", "1")
            .args([
                "test",
                "-p",
                &ex.crate_name,
                "--tests",
                "--no-fail-fast",
                "--",
                &ex.tests,
            ]);
        let captured = process::run(command, CHECK_TIMEOUT, log)?;
        if matches!(captured.ending, process::Ending::TimedOut) {
            return Ok(TestVerdict::Red(format!(
                "the tests ran for over {} s and were stopped: an endless loop?",
                CHECK_TIMEOUT.as_secs()
            )));
        }
        let run = parse_libtest(&captured.output);
        let stubbed = self
            .read(&ex.file)
            .ok()
            .and_then(|text| region::is_stub(&text, &ex.id).ok())
            .unwrap_or(false);
        if run.failed.is_empty() && captured.success() {
            return Ok(if run.passed == 0 {
                TestVerdict::Red(format!(
                    "no test matches `{}` (a bug in exercises.toml)",
                    ex.tests
                ))
            } else {
                TestVerdict::Green(run.passed)
            });
        }
        if stubbed {
            return Ok(TestVerdict::Red("still `todo!()`".into()));
        }
        // Failures that all reach another exercise's stub: this one waits for that
        // one.
        let mut blockers: Vec<&str> = Vec::new();
        for (_, message) in &run.failed {
            match stub_id(message) {
                Some(id) if id != ex.id => {
                    if !blockers.contains(&id) {
                        blockers.push(id);
                    }
                }
                _ => {
                    blockers.clear();
                    break;
                }
            }
        }
        if !blockers.is_empty() {
            return Ok(TestVerdict::Red(format!(
                "its tests need {}, still `todo!()`",
                blockers.join(" and ")
            )));
        }
        if run.failed.is_empty() {
            let last = captured
                .output
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            return Ok(TestVerdict::Red(format!("the test run failed: {last}")));
        }
        let total = run.passed + run.failed.len();
        let mut why = format!("{} of {total} tests fail", run.failed.len());
        for (name, message) in run.failed.iter().take(3) {
            why.push_str(&format!("\n      {name}: {}", self.style.dim(message)));
        }
        if run.failed.len() > 3 {
            why.push_str(&format!("\n      … and {} more", run.failed.len() - 3));
        }
        Ok(TestVerdict::Red(why))
    }

    /// `hint [ID]`.
    fn hint(&self, id: Option<&str>) -> Result<(), Error> {
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

    /// The reference body of an exercise's region and the (short) commit it was
    /// found in: the newest committed body whose hash `exercises.lock` records.
    /// It looks at the commits that touch the file, from HEAD (following
    /// renames), then at those on any other branch. The learner's own versions
    /// never match the hash, so they are never taken for the reference.
    fn find_reference(
        &self,
        ex: &Exercise,
        hash: &str,
    ) -> Result<(String, String), Error> {
        let mut candidates: Vec<(String, String)> = Vec::new();
        if let Ok(log) = git(
            self.root,
            &[
                "log",
                "--follow",
                "--format=%H",
                "--name-only",
                "HEAD",
                "--",
                &ex.file,
            ],
        ) {
            // `--name-only` paths are from the repository's top, as `COMMIT:PATH`
            // wants them.
            candidates.extend(
                history_with_paths(&log).into_iter().map(|(commit, path)| {
                    (commit.clone(), format!("{commit}:{path}"))
                }),
            );
        }
        if let Ok(list) = git(self.root, &["rev-list", "--all", "--", &ex.file]) {
            for commit in list.lines().map(str::trim).filter(|l| !l.is_empty()) {
                if !candidates.iter().any(|(seen, _)| seen == commit) {
                    candidates.push((
                        commit.to_string(),
                        format!("{commit}:./{}", ex.file),
                    ));
                }
            }
        }
        for (commit, object) in &candidates {
            let Ok(text) = git(self.root, &["show", object]) else {
                continue;
            };
            let Ok(body) = region::body(&text, &ex.id) else {
                continue;
            };
            if hash_body(&body) == hash {
                return Ok((body, commit.chars().take(10).collect()));
            }
        }
        Err(Error::NoReference {
            id: ex.id.clone(),
            file: ex.file.clone(),
            searched: candidates.len(),
            hash: hash.to_string(),
        })
    }

    /// `solution ID`.
    fn solution(&self, id: &str) -> Result<(), Error> {
        let s = &self.style;
        let ex = self.manifest.find_exercise(id)?;
        let lock = Lock::load(self.root)?;
        let hash = lock.hash(&ex.id).ok_or_else(|| Error::Manifest {
            what: format!("{} records no reference for {}", lock::FILE, ex.id),
            problems: vec![format!(
                "without it, `solution` cannot tell the reference from your own commits; the file \
                 comes with the repository (`git log -- {}`), and `cargo xtask exercise schedule` \
                 regenerates it on a checkout without stubs",
                lock::FILE
            )],
        })?;
        let current = self.read(&ex.file)?;
        let before =
            region::body(&current, &ex.id).map_err(Error::region(&ex.file))?;
        if hash_body(&before) == hash {
            println!("{} already holds the reference.", s.bold(&ex.id));
            return Ok(());
        }
        let (after, commit) = self.find_reference(ex, hash)?;
        let restored = region::replace_body(&current, &ex.id, &after)
            .map_err(Error::region(&ex.file))?;
        self.write(&ex.file, &restored)?;
        let line = region::locate(&current, &ex.id)
            .map(|(l, _)| l)
            .unwrap_or(0);
        println!(
            "Restored {} in {}:{line} from the reference (as in commit {commit}):\n",
            s.bold(&ex.id),
            ex.file
        );
        let old: Vec<&str> = before.lines().collect();
        let new: Vec<&str> = after.lines().collect();
        for (sign, text) in diff_lines(&old, &new) {
            match sign {
                '-' => println!("{}", s.red(&format!("-{text}"))),
                '+' => println!("{}", s.green(&format!("+{text}"))),
                _ => println!(" {text}"),
            }
        }
        println!(
            "\nRead it next to {}; `{}` should now pass.",
            ex.page,
            s.bold(&format!("cargo xtask exercise check {}", ex.id))
        );
        Ok(())
    }

    /// `reset TARGET`.
    fn reset(&self, arg: &str) -> Result<(), Error> {
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

/// Why `start` will not stub regions that hold the learner's work.
fn refusal_to_restub(ids: &[&str]) -> String {
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

/// The exercise id in a stub's panic message, `not yet implemented: ex1-a: …`.
fn stub_id(message: &str) -> Option<&str> {
    let id = message
        .strip_prefix("not yet implemented: ")?
        .split(':')
        .next()?;
    region::exercise_stage(id).map(|_| id)
}

/// What a `cargo test` run printed, as counted by [`parse_libtest`].
#[derive(Debug, Default, PartialEq, Eq)]
struct LibtestRun {
    /// Tests that passed.
    passed: usize,
    /// Tests that failed, with their first panic message.
    failed: Vec<(String, String)>,
}

/// Counts `test NAME ... ok|FAILED` lines and takes each failure's panic message
/// from its `---- NAME stdout ----` section.
fn parse_libtest(output: &str) -> LibtestRun {
    let mut run = LibtestRun::default();
    let mut messages: BTreeMap<String, String> = BTreeMap::new();
    let mut section: Option<String> = None;
    let lines: Vec<&str> = output.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.strip_prefix("test ") {
            if let Some(name) = rest.strip_suffix(" ... ok") {
                let _ = name;
                run.passed += 1;
            } else if let Some(name) = rest.strip_suffix(" ... FAILED") {
                run.failed.push((name.to_string(), String::new()));
            }
        } else if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|rest| rest.strip_suffix(" stdout ----"))
        {
            section = Some(name.to_string());
        } else if *line == "failures:" {
            section = None;
        } else if line.contains("panicked at")
            && let Some(name) = &section
        {
            let message = process::panic_messages(
                &lines[i..=(i + 1).min(lines.len() - 1)].join("\n"),
            );
            messages
                .entry(name.clone())
                .or_insert_with(|| message.into_iter().next().unwrap_or_default());
        }
    }
    for (name, message) in &mut run.failed {
        if let Some(found) = messages.get(name.as_str()) {
            message.clone_from(found);
        }
    }
    run
}

/// A line diff of `old` against `new`, by longest common subsequence: `(' '|'-'|'+',
/// line)`.
fn diff_lines<'t>(old: &[&'t str], new: &[&'t str]) -> Vec<(char, &'t str)> {
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            out.push((' ', old[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(('-', old[i]));
            i += 1;
        } else {
            out.push(('+', new[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_output_is_counted() {
        let output = "\
running 3 tests
test ex1_a::one ... ok
test ex1_a::two ... FAILED
test ex1_a::three ... FAILED

failures:

---- ex1_a::two stdout ----

thread 'ex1_a::two' panicked at tests/a.rs:10:5:
assertion `left == right` failed
  left: 1
 right: 2

---- ex1_a::three stdout ----
thread 'ex1_a::three' panicked at src/a.rs:3:5:
not yet implemented: ex1-a: A

failures:
    ex1_a::two
    ex1_a::three

test result: FAILED. 1 passed; 2 failed; 0 ignored
";
        let run = parse_libtest(output);
        assert_eq!(run.passed, 1);
        assert_eq!(
            run.failed,
            [
                (
                    "ex1_a::two".to_string(),
                    "assertion `left == right` failed".to_string()
                ),
                (
                    "ex1_a::three".to_string(),
                    "not yet implemented: ex1-a: A".to_string()
                ),
            ]
        );
    }

    #[test]
    fn diffs_keep_common_lines() {
        let old = ["a", "b", "c"];
        let new = ["a", "x", "c", "d"];
        assert_eq!(
            diff_lines(&old, &new),
            [(' ', "a"), ('-', "b"), ('+', "x"), (' ', "c"), ('+', "d")]
        );
        assert_eq!(diff_lines(&[], &["n"]), [('+', "n")]);
    }

    #[test]
    fn stub_panics_name_their_exercise() {
        assert_eq!(
            stub_id("not yet implemented: ex1-a: A — see p"),
            Some("ex1-a")
        );
        assert_eq!(stub_id("not yet implemented"), None);
        assert_eq!(stub_id("assertion failed"), None);
    }

    #[test]
    fn renamed_files_keep_their_path_per_commit() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let m = "c".repeat(40);
        let log = format!(
            "{a}\n\nstage5-storage/src/kv.rs\n{m}\n{b}\n\nstage5-cacher/src/kv.rs\n"
        );
        assert_eq!(
            history_with_paths(&log),
            [
                (a.clone(), "stage5-storage/src/kv.rs".to_string()),
                (b.clone(), "stage5-cacher/src/kv.rs".to_string()),
            ]
        );
        assert!(history_with_paths("").is_empty());
    }

    #[test]
    fn a_refusal_names_the_exercises_and_the_way_out() {
        let one = refusal_to_restub(&["ex1-a"]);
        assert!(one.contains("you started ex1-a before, and it holds your code"));
        assert!(one.contains("--force"));
        let two = refusal_to_restub(&["ex1-a", "ex1-b"]);
        assert!(two.contains("ex1-a, ex1-b before, and they hold"));
    }
}
