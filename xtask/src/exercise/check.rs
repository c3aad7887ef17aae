//! `cargo xtask exercise check [TARGET]`: each started exercise's tests, pass or
//! fail, and a count.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use super::learner::Learner;
use super::manifest::Exercise;
use super::progress::Progress;
use super::{cargo, process, region};
use crate::error::Error;

/// How long one exercise's `cargo test` may run in `check` before it is killed (an
/// endless loop in the learner's code).
const CHECK_TIMEOUT: Duration = Duration::from_secs(300);

impl Learner<'_> {
    /// `check [TARGET]`.
    pub(super) fn check(&self, arg: Option<&str>) -> Result<(), Error> {
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
    pub(super) fn build_errors(
        &self,
        crate_name: &str,
    ) -> Result<Option<String>, Error> {
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
    pub(super) fn run_exercise_tests(
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
}

/// How one exercise's tests came out in `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TestVerdict {
    /// Every test passed; how many.
    Green(usize),
    /// Not solved; why, for the learner.
    Red(String),
}

/// What a `cargo test` run printed, as counted by [`parse_libtest`].
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct LibtestRun {
    /// Tests that passed.
    passed: usize,
    /// Tests that failed, with their first panic message.
    failed: Vec<(String, String)>,
}

/// Counts `test NAME ... ok|FAILED` lines and takes each failure's panic message
/// from its `---- NAME stdout ----` section.
pub(super) fn parse_libtest(output: &str) -> LibtestRun {
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

/// The exercise id in a stub's panic message, `not yet implemented: ex1-a: …`.
pub(super) fn stub_id(message: &str) -> Option<&str> {
    let id = message
        .strip_prefix("not yet implemented: ")?
        .split(':')
        .next()?;
    region::exercise_stage(id).map(|_| id)
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
    fn stub_panics_name_their_exercise() {
        assert_eq!(
            stub_id("not yet implemented: ex1-a: A — see p"),
            Some("ex1-a")
        );
        assert_eq!(stub_id("not yet implemented"), None);
        assert_eq!(stub_id("assertion failed"), None);
    }
}
