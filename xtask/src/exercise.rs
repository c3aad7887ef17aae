//! `cargo xtask exercise …`: exercises derived from the reference crates.
//!
//! The reference code is the only copy. An exercise is a region of it, the whole body of one
//! function between `// ANCHOR: ex<stage>-<name>` and `// ANCHOR_END: …`, listed in
//! `exercises.toml` with its tests, hints and minutes. The learner's commands work on their own
//! checkout:
//!
//! | command | what it does |
//! |---|---|
//! | `start STAGE\|ID` | replaces the region bodies with `todo!()` (refuses over uncommitted changes) |
//! | `next` | the next unsolved exercise: where it is, what to read, a first hint |
//! | `check [ID\|STAGE]` | runs each started exercise's tests, pass/fail per exercise, a count |
//! | `hint [ID]` | the next hint |
//! | `solution ID` | restores one region from the reference (git) and shows the diff |
//! | `reset ID\|STAGE` | stubs the region(s) again |
//!
//! CI's commands: `verify` (the red check, see [`verify`]) and `schedule --check` (the parts of
//! the book generated from the manifest: the workshop schedules in the facilitator's guide, see
//! [`schedule`], and the hints on the exercises pages, see [`pages`]).
//!
//! Progress (started, solved, hints seen) lives in the git-ignored `.exercise-progress`.

use std::collections::BTreeMap;
use std::fs;
use std::io::IsTerminal;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod manifest;
mod pages;
mod process;
mod progress;
mod region;
mod schedule;
mod verify;

use manifest::{Exercise, Manifest, Target, stage_crates};
use progress::Progress;

/// Why an `exercise` command did not succeed.
#[derive(Debug)]
pub(crate) enum Error {
    /// The command line was not understood.
    Usage(String),
    /// The command ran and failed.
    Failed(String),
}

impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::Failed(message)
    }
}

/// How long one exercise's `cargo test` may run in `check` before it is killed (an endless loop
/// in the learner's code).
const CHECK_TIMEOUT: Duration = Duration::from_secs(300);

/// `cargo xtask exercise ARGS`.
pub(crate) fn run(root: &Path, args: &[&str]) -> Result<(), Error> {
    let style = Style::detect();
    match args {
        ["verify", rest @ ..] => {
            let options = verify::Options::parse(rest).map_err(Error::Usage)?;
            Ok(verify::verify(root, &options, &style)?)
        }
        ["schedule"] => Ok(schedule::schedule(root, false)?),
        ["schedule", "--check"] => Ok(schedule::schedule(root, true)?),
        ["schedule", other, ..] => Err(Error::Usage(format!(
            "`exercise schedule` takes only `--check` (got `{other}`)"
        ))),
        [command, ..]
            if !["start", "next", "check", "hint", "solution", "reset"].contains(command) =>
        {
            Err(Error::Usage(format!(
                "unknown exercise command `{command}`"
            )))
        }
        [command, rest @ ..] => {
            let learner = Learner::new(root, style)?;
            match (*command, rest) {
                ("start", [target]) => learner.start(target),
                ("next", []) => learner.next(),
                ("check", []) => learner.check(None),
                ("check", [target]) => learner.check(Some(target)),
                ("hint", []) => learner.hint(None),
                ("hint", [id]) => learner.hint(Some(id)),
                ("solution", [id]) => learner.solution(id),
                ("reset", [target]) => learner.reset(target),
                ("start" | "reset", _) => Err(Error::Usage(format!(
                    "`exercise {command}` needs one stage (e.g. `stage1`) or exercise id"
                ))),
                ("solution", _) => Err(Error::Usage(
                    "`exercise solution` needs one exercise id, e.g. `ex1-split-key`".into(),
                )),
                ("next" | "check" | "hint", _) => Err(Error::Usage(format!(
                    "too many arguments for `exercise {command}`"
                ))),
                (other, _) => Err(Error::Usage(format!("unknown exercise command `{other}`"))),
            }
        }
        [] => Err(Error::Usage(
            "`exercise` needs a command: start, next, check, hint, solution, reset, verify or \
             schedule"
                .into(),
        )),
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
            color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
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
fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| format!("could not run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The learner's commands, on the checkout at `root`.
struct Learner<'a> {
    /// The workspace root.
    root: &'a Path,
    /// `exercises.toml`.
    manifest: Manifest,
    /// The workspace's stage crates.
    stages: Vec<String>,
    /// Colours or not.
    style: Style,
}

impl<'a> Learner<'a> {
    /// Loads the manifest and the stage list.
    fn new(root: &'a Path, style: Style) -> Result<Learner<'a>, Error> {
        Ok(Learner {
            root,
            manifest: Manifest::load(root)?,
            stages: stage_crates(root)?,
            style,
        })
    }

    /// The exercises a `STAGE|ID` argument names, in book order.
    fn targets(&self, arg: &str) -> Result<Vec<&Exercise>, Error> {
        match self
            .manifest
            .resolve(arg, &self.stages)
            .map_err(Error::Usage)?
        {
            Target::Exercise(ex) => Ok(vec![ex]),
            Target::Stage(stage) => Ok(self.manifest.stage_exercises(stage).collect()),
        }
    }

    /// The exercise an `ID` argument names (a stage is a usage error here).
    fn exercise(&self, id: &str) -> Result<&Exercise, Error> {
        self.manifest.exercise(id).ok_or_else(|| {
            let ids: Vec<&str> = self
                .manifest
                .exercises
                .iter()
                .map(|e| e.id.as_str())
                .collect();
            Error::Usage(format!(
                "no exercise `{id}`; the exercises are {}",
                ids.join(", ")
            ))
        })
    }

    /// Reads a file of the workspace.
    fn read(&self, file: &str) -> Result<String, String> {
        fs::read_to_string(self.root.join(file)).map_err(|e| format!("cannot read {file}: {e}"))
    }

    /// Writes a file of the workspace.
    fn write(&self, file: &str, text: &str) -> Result<(), String> {
        fs::write(self.root.join(file), text).map_err(|e| format!("cannot write {file}: {e}"))
    }

    /// The commit at HEAD.
    fn head(&self) -> Result<String, String> {
        Ok(git(self.root, &["rev-parse", "HEAD"])?.trim().to_string())
    }

    /// `start STAGE|ID`.
    fn start(&self, arg: &str) -> Result<(), Error> {
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
            return Err(Error::Failed(format!(
                "not starting: {} {} uncommitted changes, and the stubs would mix with them.\n\
                 Commit or stash them first (`git stash`), or drop them with `git checkout -- {}`.",
                dirty.join(", "),
                if dirty.len() == 1 { "has" } else { "have" },
                dirty.join(" ")
            )));
        }
        let head = self.head()?;
        let mut texts: BTreeMap<&str, String> = BTreeMap::new();
        for file in &files {
            texts.insert(file, self.read(file)?);
        }
        let mut progress = Progress::load(self.root)?;
        for ex in &exercises {
            let text = texts
                .get_mut(ex.file.as_str())
                .ok_or_else(|| "file not loaded".to_string())?;
            let committed_stub = region::is_stub(text, &ex.id)?;
            if !committed_stub {
                *text = region::stub(text, &ex.id, &self.manifest.todo_message(ex))?;
            }
            progress
                .started
                .insert(ex.id.clone(), (!committed_stub).then(|| head.clone()));
            progress.solved.remove(&ex.id);
        }
        for (file, text) in &texts {
            self.write(file, text)?;
        }
        progress.save(self.root)?;
        let s = &self.style;
        let total: u32 = exercises.iter().map(|ex| ex.minutes).sum();
        let what = match exercises.as_slice() {
            [one] => format!("Started {}", one.id),
            all => format!("Started {}: {} exercises", all[0].stage, all.len()),
        };
        println!("{what}, about {total} minutes. Their bodies are now `todo!()`:");
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
        println!(
            "\nNext: `{}` to see them fail, then `{}` for the first one.",
            s.bold("cargo xtask exercise check"),
            s.bold("cargo xtask exercise next")
        );
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
            .map(|ex| ex.stage.as_str());
        if progress.started.is_empty() {
            let first = stage.unwrap_or("stage1-store");
            println!(
                "Nothing started yet. Begin with `{}`.",
                s.bold(&format!(
                    "cargo xtask exercise start {}",
                    short_stage(first)
                ))
            );
        } else if let Some(stage) = stage {
            println!(
                "{} Every exercise you started is solved. Go on with `{}`.",
                s.green("Well done!"),
                s.bold(&format!(
                    "cargo xtask exercise start {}",
                    short_stage(stage)
                ))
            );
        } else {
            println!(
                "{} Every exercise is solved; there are no more for now.",
                s.green("Well done!")
            );
        }
    }

    /// Shows an exercise: where it is, what to read, its first hint.
    fn show(&self, ex: &Exercise, progress: &mut Progress) -> Result<(), Error> {
        let s = &self.style;
        let text = self.read(&ex.file)?;
        let (line, function) = region::locate(&text, &ex.id)?;
        let exercises_page = self
            .manifest
            .chapter(&ex.stage)
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
        let seen = progress.hints.entry(ex.id.clone()).or_insert(0);
        *seen = (*seen).max(1);
        Ok(())
    }

    /// `check [ID|STAGE]`.
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
        let logs =
            std::env::temp_dir().join(format!("xtask-exercise-check-{}.log", std::process::id()));
        let id_width = exercises.iter().map(|ex| ex.id.len()).max().unwrap_or(0);
        let mut failing: Vec<&Exercise> = Vec::new();
        let mut stage_built: Option<(&str, Option<String>)> = None;
        for ex in &exercises {
            if stage_built
                .as_ref()
                .is_none_or(|(stage, _)| *stage != ex.stage)
            {
                println!("{}", s.dim(&format!("building the tests of {}…", ex.stage)));
                stage_built = Some((&ex.stage, self.build_errors(&ex.stage)?));
            }
            let verdict = match stage_built.as_ref().and_then(|(_, errors)| errors.as_ref()) {
                Some(_) => Err("does not compile (see above)".to_string()),
                None => self.run_exercise_tests(ex, &logs)?,
            };
            match verdict {
                Ok(count) => {
                    progress.solved.insert(ex.id.clone());
                    println!(
                        "{} {}  {} {}",
                        s.green("✓"),
                        s.bold(&format!("{:<id_width$}", ex.id)),
                        ex.title,
                        s.dim(&format!("({count} tests pass)"))
                    );
                }
                Err(why) => {
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
                Err(Error::Failed(format!(
                    "{} of {} still red",
                    failing.len(),
                    exercises.len()
                )))
            }
        }
    }

    /// Builds a stage's tests; `Some(errors)` when that fails (the errors are printed).
    fn build_errors(&self, stage: &str) -> Result<Option<String>, String> {
        let out = process::cargo()
            .current_dir(self.root)
            .env("CARGO_TERM_COLOR", "never")
            .args([
                "test",
                "-p",
                stage,
                "--tests",
                "--no-run",
                "--message-format=short",
            ])
            .output()
            .map_err(|e| format!("could not run cargo: {e}"))?;
        if out.status.success() {
            return Ok(None);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("error") && !l.trim_start().starts_with("Compiling"))
            .collect();
        let shown = if errors.is_empty() {
            stderr.trim().to_string()
        } else {
            errors.join("\n")
        };
        println!("{}", self.style.red(&format!("{stage} does not compile:")));
        for line in shown.lines().take(20) {
            println!("  {line}");
        }
        println!(
            "  {}",
            self.style
                .dim(&format!("(full messages: cargo test -p {stage} --no-run)"))
        );
        Ok(Some(shown))
    }

    /// Runs one exercise's tests: `Ok(passed)` when all pass, `Err(why)` otherwise.
    fn run_exercise_tests(
        &self,
        ex: &Exercise,
        log: &Path,
    ) -> Result<Result<usize, String>, String> {
        let mut command = process::cargo();
        command
            .current_dir(self.root)
            .env("CARGO_TERM_COLOR", "never")
            .env("PROPTEST_DISABLE_FAILURE_PERSISTENCE", "1")
            .args([
                "test",
                "-p",
                &ex.stage,
                "--tests",
                "--no-fail-fast",
                "--",
                &ex.tests,
            ]);
        let captured = process::run(command, CHECK_TIMEOUT, log)?;
        if matches!(captured.ending, process::Ending::TimedOut) {
            return Ok(Err(format!(
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
                Err(format!(
                    "no test matches `{}` (a bug in exercises.toml)",
                    ex.tests
                ))
            } else {
                Ok(run.passed)
            });
        }
        if stubbed {
            return Ok(Err("still `todo!()`".into()));
        }
        // Failures that all reach another exercise's stub: this one waits for that one.
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
            return Ok(Err(format!(
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
            return Ok(Err(format!("the test run failed: {last}")));
        }
        let total = run.passed + run.failed.len();
        let mut why = format!("{} of {total} tests fail", run.failed.len());
        for (name, message) in run.failed.iter().take(3) {
            why.push_str(&format!("\n      {name}: {}", self.style.dim(message)));
        }
        if run.failed.len() > 3 {
            why.push_str(&format!("\n      … and {} more", run.failed.len() - 3));
        }
        Ok(Err(why))
    }

    /// `hint [ID]`.
    fn hint(&self, id: Option<&str>) -> Result<(), Error> {
        let s = &self.style;
        let mut progress = Progress::load(self.root)?;
        let ex = match id {
            Some(id) => self.exercise(id)?,
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

    /// The reference version of an exercise's file: from the commit recorded at `start`, or HEAD.
    fn reference(&self, ex: &Exercise, progress: &Progress) -> Result<(String, String), String> {
        let mut commits: Vec<String> = Vec::new();
        if let Some(Some(commit)) = progress.started.get(&ex.id) {
            commits.push(commit.clone());
        }
        commits.push("HEAD".into());
        for commit in &commits {
            let Ok(text) = git(self.root, &["show", &format!("{commit}:./{}", ex.file)]) else {
                continue;
            };
            if region::find(&text, &ex.id).is_ok() && !region::is_stub(&text, &ex.id)? {
                let short: String = commit.chars().take(10).collect();
                return Ok((text, short));
            }
        }
        Err(format!(
            "found no reference for {} in git ({}); `git log -- {}` lists the commits that have it",
            ex.id,
            commits.join(", "),
            ex.file
        ))
    }

    /// `solution ID`.
    fn solution(&self, id: &str) -> Result<(), Error> {
        let s = &self.style;
        let ex = self.exercise(id)?;
        let progress = Progress::load(self.root)?;
        let (reference, commit) = self.reference(ex, &progress)?;
        let current = self.read(&ex.file)?;
        let before = region::body(&current, &ex.id)?;
        let after =
            region::body(&reference, &ex.id).map_err(|e| format!("in the reference: {e}"))?;
        if before == after {
            println!("{} already holds the reference.", s.bold(&ex.id));
            return Ok(());
        }
        self.write(&ex.file, &region::restore(&current, &reference, &ex.id)?)?;
        let line = region::locate(&current, &ex.id)
            .map(|(l, _)| l)
            .unwrap_or(0);
        println!(
            "Restored {} in {}:{line} from the reference (commit {commit}):\n",
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

    /// `reset ID|STAGE`.
    fn reset(&self, arg: &str) -> Result<(), Error> {
        let s = &self.style;
        let exercises = self.targets(arg)?;
        let mut progress = Progress::load(self.root)?;
        let head = self.head().ok();
        for ex in exercises {
            let text = self.read(&ex.file)?;
            if region::is_stub(&text, &ex.id)? {
                println!("{} {} is already `todo!()`", s.dim("·"), ex.id);
            } else {
                let discarded = region::body(&text, &ex.id)?.lines().count();
                self.write(
                    &ex.file,
                    &region::stub(&text, &ex.id, &self.manifest.todo_message(ex))?,
                )?;
                println!(
                    "{} {} is `todo!()` again {}",
                    s.yellow("↺"),
                    s.bold(&ex.id),
                    s.dim(&format!("({discarded} lines of the region discarded)"))
                );
            }
            progress
                .started
                .entry(ex.id.clone())
                .or_insert_with(|| head.clone());
            progress.solved.remove(&ex.id);
        }
        progress.save(self.root)?;
        Ok(())
    }
}

/// The exercise id in a stub's panic message, `not yet implemented: ex1-a: …`.
fn stub_id(message: &str) -> Option<&str> {
    let id = message
        .strip_prefix("not yet implemented: ")?
        .split(':')
        .next()?;
    region::exercise_stage(id).map(|_| id)
}

/// `stage1-store` → `stage1`, for commands to suggest.
fn short_stage(stage: &str) -> &str {
    stage.split('-').next().unwrap_or(stage)
}

/// What a `cargo test` run printed, as counted by [`parse_libtest`].
#[derive(Debug, Default, PartialEq, Eq)]
struct LibtestRun {
    /// Tests that passed.
    passed: usize,
    /// Tests that failed, with their first panic message.
    failed: Vec<(String, String)>,
}

/// Counts `test NAME ... ok|FAILED` lines and takes each failure's panic message from its
/// `---- NAME stdout ----` section.
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
            let message =
                process::panic_messages(&lines[i..=(i + 1).min(lines.len() - 1)].join("\n"));
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

/// A line diff of `old` against `new`, by longest common subsequence: `(' '|'-'|'+', line)`.
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
    fn stage_names_shorten() {
        assert_eq!(short_stage("stage1-store"), "stage1");
        assert_eq!(short_stage("stage12-x-y"), "stage12");
    }
}
