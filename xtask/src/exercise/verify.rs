//! `cargo xtask exercise verify`: the red check.
//!
//! For every exercise, in a scratch copy of the workspace that shares the target
//! directory: stub only that region, build the tests of the crate holding it,
//! require no warnings from that crate, then run each of its tests on its own, with
//! a time limit. The exercise's tests must fail, tests matching its `also_breaks`
//! filters may do anything, and every other test of the crate must pass. Before the
//! exercises of a crate, the unstubbed crate must build without warnings and pass
//! all its tests, so that a failure below always points at the stub. Builds
//! allow dead code, as the learner's do (see [`cargo`](super::cargo)): a helper that
//! only the stubbed region calls is unused, and that is expected. Every other
//! warning fails the check.
//!
//! The order of the exercises is checked too: a learner does them in the manifest's
//! order, so an exercise's tests must not need a region that comes later. When
//! region B is stubbed, a failing test that matches the `tests` filter of an
//! exercise A before B in the same stage is an ordering error, "A's tests need B,
//! which comes later", whatever B's `also_breaks` say.
//!
//! Doc-tests are skipped: they carry no exercise ids, and compiling them per region
//! would cost minutes.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Style;
use super::cargo::{exercise_cargo, workspace_target_dir};
use super::lock::fnv1a;
use super::manifest::{Exercise, Manifest, stage_crates, workspace_members};
use super::process::{self, Captured, Ending};
use super::region;
use crate::error::Error;

/// Command-line options of `verify` (parsed by clap, see
/// [`ExerciseCommand`](super::ExerciseCommand)).
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The time limit for one test.
    pub(crate) timeout: Duration,
    /// How many tests run at once.
    pub(crate) jobs: usize,
    /// Exercise ids or stages to check; all exercises when empty.
    pub(crate) only: Vec<String>,
}

/// Runs the red check. Fails naming every region that did not prove red, and why.
pub(crate) fn verify(
    root: &Path,
    options: &Options,
    style: &Style,
) -> Result<(), Error> {
    let started = Instant::now();
    let manifest = Manifest::load(root)?;
    let selected = select(&manifest, root, &options.only)?;
    let crates: Vec<&str> = manifest
        .crates()
        .into_iter()
        .filter(|name| {
            manifest
                .crate_exercises(name)
                .any(|ex| selected.contains(ex.id.as_str()))
        })
        .collect();
    let notes = manifest
        .check_against(root, (!options.only.is_empty()).then_some(&selected))?;
    println!(
        "verify: {} of {} exercises selected; every region found, stubbable and listed{}",
        selected.len(),
        manifest.exercises.len(),
        if options.only.is_empty() {
            String::new()
        } else {
            format!(" (in {})", crates.join(", "))
        }
    );
    for note in notes {
        println!("    {} {note}", style.yellow("note:"));
    }
    let scratch = Scratch::prepare(root)?;
    println!(
        "verify: scratch copy in {} (target dir {}); each test alone, {} at a time, {} s limit; \
         dead code allowed; doc-tests skipped",
        scratch.dir.display(),
        scratch.target_dir.display(),
        options.jobs,
        options.timeout.as_secs()
    );
    for chapter in &manifest.chapters {
        let wanted = manifest.exercises.iter().any(|ex| {
            ex.stage() == chapter.stage && selected.contains(ex.id.as_str())
        });
        if let (true, Some(why)) = (wanted, &chapter.order_unenforced) {
            println!(
                "    {} stage {}: the exercise order is not enforced yet ({why})",
                style.yellow("note:"),
                chapter.stage
            );
        }
    }
    let mut failed: Vec<String> = Vec::new();
    let mut proved = 0;
    let mut hangs = 0;
    for crate_name in crates {
        let exercises: Vec<&Exercise> = manifest
            .crate_exercises(crate_name)
            .filter(|ex| selected.contains(ex.id.as_str()))
            .collect();
        let clock = Instant::now();
        let baseline = match scratch.build_and_run(crate_name, options) {
            Ok(run) => run,
            Err(e) => {
                println!(
                    "{} {crate_name}: {}",
                    style.red("✗"),
                    crate::error::chain(&e)
                );
                failed.extend(
                    exercises
                        .iter()
                        .map(|ex| format!("{} (its crate does not build)", ex.id)),
                );
                continue;
            }
        };
        let mut baseline_problems = baseline.warning_problems();
        for result in &baseline.results {
            match &result.outcome {
                Outcome::Pass => {}
                Outcome::Fail(why) => baseline_problems.push(format!(
                    "{} fails without any stub: {why}",
                    result.shown()
                )),
                Outcome::Hang => baseline_problems.push(format!(
                    "{} hangs without any stub (over {} s)",
                    result.shown(),
                    options.timeout.as_secs()
                )),
            }
        }
        if baseline_problems.is_empty() {
            println!(
                "{} {crate_name} unstubbed: {} tests pass, no warnings ({:.0} s)",
                style.green("✓"),
                baseline.results.len(),
                clock.elapsed().as_secs_f64()
            );
        } else {
            println!("{} {crate_name} unstubbed is not clean:", style.red("✗"));
            for problem in &baseline_problems {
                println!("    {problem}");
            }
            failed.extend(exercises.iter().map(|ex| {
                format!("{} (its crate is not clean without stubs)", ex.id)
            }));
            continue;
        }
        for ex in exercises {
            let clock = Instant::now();
            let earlier = manifest.earlier_in_stage(ex);
            let verdict = scratch.check_exercise(
                ex,
                &earlier,
                &manifest.stub_note(ex),
                options,
            );
            let secs = clock.elapsed().as_secs_f64();
            hangs += verdict.hangs;
            match verdict.problems.as_slice() {
                [] => {
                    proved += 1;
                    println!(
                        "{} {}: {} red{}, {} others green ({secs:.0} s)",
                        style.green("✓"),
                        ex.id,
                        plural(verdict.red, "test"),
                        if verdict.also_failed > 0 {
                            format!(", {} also_breaks failed", verdict.also_failed)
                        } else {
                            String::new()
                        },
                        verdict.green
                    );
                }
                problems => {
                    failed.push(ex.id.clone());
                    println!("{} {} ({secs:.0} s):", style.red("✗"), ex.id);
                    for problem in problems {
                        println!("    {problem}");
                    }
                }
            }
            for note in &verdict.notes {
                println!("    {} {note}", style.yellow("note:"));
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    if hangs > 0 {
        println!(
            "{} {} ran into the time limit: a hang is a defect of the test (it should fail \
             quickly); fix it",
            style.yellow("verify:"),
            plural(hangs, "test")
        );
    }
    if failed.is_empty() {
        println!(
            "{} proved {} red in {secs:.0} s (doc-tests skipped)",
            style.green("verify:"),
            plural(proved, "region")
        );
        Ok(())
    } else {
        Err(Error::Check(format!(
            "{} of {} failed the red check in {secs:.0} s: {}",
            failed.len(),
            plural(failed.len() + proved, "region"),
            failed.join(", ")
        )))
    }
}

/// `n thing` or `n things`.
fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// The ids of the exercises to check: all, or those named by id, crate or stage.
fn select<'a>(
    manifest: &'a Manifest,
    root: &Path,
    only: &[String],
) -> Result<BTreeSet<&'a str>, Error> {
    if only.is_empty() {
        return Ok(manifest.exercises.iter().map(|ex| ex.id.as_str()).collect());
    }
    let stage_crates = stage_crates(root)?;
    let mut selected = BTreeSet::new();
    for arg in only {
        let target = manifest.resolve(arg, &stage_crates)?;
        selected.extend(
            manifest
                .exercises_of(&target)
                .into_iter()
                .map(|ex| ex.id.as_str()),
        );
    }
    Ok(selected)
}

/// How one test run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It passed.
    Pass,
    /// It failed; the first panic message, or the output's last line.
    Fail(String),
    /// It ran into the time limit and was killed.
    Hang,
}

/// One test of a stage and how its run ended.
#[derive(Debug, Clone)]
pub(crate) struct TestResult {
    /// The test target's name, e.g. `keys` (the lib's unit tests: the crate name).
    pub(crate) binary: String,
    /// The test's name, e.g. `ex1_split_key::name_only`.
    pub(crate) name: String,
    /// How it ended.
    pub(crate) outcome: Outcome,
}

impl TestResult {
    /// `binary: name`, for reports.
    fn shown(&self) -> String {
        format!("{}: {}", self.binary, self.name)
    }
}

/// A stage's tests, built.
struct Build {
    /// The test executables: `(target name, path)`.
    binaries: Vec<(String, PathBuf)>,
    /// The stage crate's warnings, rendered.
    warnings: Vec<String>,
}

/// A built and tested stage.
struct StageRun {
    /// The stage crate's warnings, rendered.
    warnings: Vec<String>,
    /// Every non-ignored test, in a stable order.
    results: Vec<TestResult>,
    /// Ignored tests (not run), as `binary: name`.
    ignored: Vec<String>,
}

impl StageRun {
    /// One problem per warning, shortened.
    fn warning_problems(&self) -> Vec<String> {
        self.warnings
            .iter()
            .map(|w| w.trim_end().replace('\n', "\n      "))
            .collect()
    }
}

/// What the red check found for one exercise.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    /// Why the exercise failed the check; empty when it passed.
    pub(crate) problems: Vec<String>,
    /// Remarks that do not fail the check (hangs, unneeded filters, ignored tests).
    pub(crate) notes: Vec<String>,
    /// Tests matching `tests` that failed.
    pub(crate) red: usize,
    /// Tests matching `also_breaks` that failed.
    pub(crate) also_failed: usize,
    /// Other tests that passed.
    pub(crate) green: usize,
    /// Tests that ran into the time limit.
    pub(crate) hangs: usize,
}

/// Applies the red check's rules to the test results of a stubbed exercise.
/// `earlier` are the exercises of the same stage that come before `ex`: a failing
/// test of theirs is an ordering error.
pub(crate) fn judge(
    ex: &Exercise,
    earlier: &[&Exercise],
    results: &[TestResult],
    ignored: &[String],
    timeout: Duration,
) -> Verdict {
    let mut verdict = Verdict::default();
    let stub_panic = format!("not yet implemented: {}:", ex.id);
    let mut named = 0;
    let mut still_green = Vec::new();
    let mut other_failures = Vec::new();
    let mut needed_by: Vec<(&str, Vec<String>)> = Vec::new();
    let mut filter_used = vec![false; ex.also_breaks.len()];
    let mut filter_failed = vec![false; ex.also_breaks.len()];
    for result in results {
        if result.outcome == Outcome::Hang {
            verdict.hangs += 1;
            verdict.notes.push(format!(
                "HANG {} ran past {} s with the stub (counted as failing; make it fail fast)",
                result.shown(),
                timeout.as_secs()
            ));
        }
        let fails = result.outcome != Outcome::Pass;
        if result.name.contains(&ex.tests) {
            named += 1;
            if fails {
                verdict.red += 1;
            } else {
                still_green.push(result.shown());
            }
            continue;
        }
        let mut out_of_order = false;
        if fails {
            for before in earlier.iter().filter(|a| result.name.contains(&a.tests)) {
                out_of_order = true;
                match needed_by.iter_mut().find(|(id, _)| *id == before.id) {
                    Some((_, tests)) => tests.push(result.shown()),
                    None => needed_by.push((&before.id, vec![result.shown()])),
                }
            }
        }
        let matching: Vec<usize> = (0..ex.also_breaks.len())
            .filter(|&i| result.name.contains(&ex.also_breaks[i]))
            .collect();
        if !matching.is_empty() {
            for i in matching {
                filter_used[i] = true;
                filter_failed[i] |= fails;
            }
            if fails {
                verdict.also_failed += 1;
            }
            continue;
        }
        if out_of_order {
            continue;
        }
        match &result.outcome {
            Outcome::Pass => verdict.green += 1,
            Outcome::Fail(why) if why.contains(&stub_panic) => other_failures
                .push(format!("{}: reaches the stub's todo!()", result.shown())),
            Outcome::Fail(why) => {
                other_failures.push(format!("{}: {why}", result.shown()))
            }
            Outcome::Hang => {
                other_failures.push(format!("{}: hangs", result.shown()))
            }
        }
    }
    if named == 0 {
        verdict.problems.push(format!(
            "no test of {} has `{}` in its name, so nothing proves this region",
            ex.crate_name, ex.tests
        ));
    }
    for (before, tests) in &needed_by {
        verdict.problems.push(format!(
            "{before}'s tests need {}, which comes later: a learner cannot finish {before} \
             before {}. Move {} before {before} in exercises.toml, or make those tests \
             independent of it:\n      {}",
            ex.id,
            ex.id,
            ex.id,
            tests.join("\n      ")
        ));
    }
    if !still_green.is_empty() {
        verdict.problems.push(format!(
            "still green with the region stubbed, so they do not prove it: {}",
            still_green.join(", ")
        ));
    }
    if !other_failures.is_empty() {
        verdict.problems.push(format!(
            "tests outside `tests` and `also_breaks` fail with the stub (add a filter to \
             `also_breaks` if they use the region indirectly):\n      {}",
            other_failures.join("\n      ")
        ));
    }
    for (i, filter) in ex.also_breaks.iter().enumerate() {
        if !filter_used[i] {
            verdict
                .problems
                .push(format!("`also_breaks` filter `{filter}` matches no test"));
        } else if !filter_failed[i] {
            verdict.notes.push(format!(
                "`also_breaks` filter `{filter}`: all its tests pass with the stub; it may be unneeded"
            ));
        }
    }
    let ignored_named: Vec<&String> =
        ignored.iter().filter(|t| t.contains(&ex.tests)).collect();
    if !ignored_named.is_empty() {
        verdict.notes.push(format!(
            "ignored, so not run: {}",
            ignored_named
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    verdict
}

/// A scratch copy of the workspace: the git-tracked files plus the untracked ones
/// that are not ignored. It lives at a fixed path per workspace under the system
/// temp directory, so the shared target directory keeps one set of its artifacts,
/// and is refreshed file by file (only changed files are rewritten, so unchanged
/// crates stay fresh for cargo).
struct Scratch {
    /// The copy's root (canonical).
    dir: PathBuf,
    /// Where test output goes.
    logs: PathBuf,
    /// The shared target directory.
    target_dir: PathBuf,
    /// The lock file this run holds, removed on drop; `None` for a private
    /// (per-process) copy.
    lock: Option<PathBuf>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(lock) = &self.lock {
            let _ = fs::remove_file(lock);
        } else {
            let _ = fs::remove_dir_all(&self.dir);
        }
        let _ = fs::remove_dir_all(&self.logs);
    }
}

impl Scratch {
    /// Creates or refreshes the scratch copy of the workspace at `root`.
    fn prepare(root: &Path) -> Result<Scratch, Error> {
        let base = std::env::temp_dir().join(format!(
            "kwr-exercise-verify-{:016x}",
            fnv1a(root.to_string_lossy().as_bytes())
        ));
        let lock = base.with_extension("lock");
        let (dir, lock) = match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
        {
            Ok(mut file) => {
                let _ = write!(file, "{}", std::process::id());
                (base, Some(lock))
            }
            Err(_) => {
                let holder = fs::read_to_string(&lock).unwrap_or_default();
                let alive = !holder.trim().is_empty()
                    && Path::new("/proc").join(holder.trim()).exists();
                if alive {
                    println!(
                        "verify: another verify (pid {}) uses {}; using a private copy",
                        holder.trim(),
                        base.display()
                    );
                    (base.with_extension(std::process::id().to_string()), None)
                } else {
                    fs::write(&lock, std::process::id().to_string())
                        .map_err(Error::io("write", &lock))?;
                    (base, Some(lock))
                }
            }
        };
        fs::create_dir_all(&dir).map_err(Error::io("create", &dir))?;
        let dir = fs::canonicalize(&dir).map_err(Error::io("resolve", &dir))?;
        let logs = PathBuf::from(format!("{}-logs", dir.display()));
        fs::create_dir_all(&logs).map_err(Error::io("create", &logs))?;
        let target_dir = workspace_target_dir(root);
        let scratch = Scratch {
            dir,
            logs,
            target_dir,
            lock,
        };
        scratch.sync(root)?;
        Ok(scratch)
    }

    /// Makes the copy hold exactly the workspace's tracked and unignored untracked
    /// files.
    fn sync(&self, root: &Path) -> Result<(), Error> {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args([
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ])
            .output()
            .map_err(Error::spawn("git"))?;
        if !out.status.success() {
            return Err(Error::Git {
                args: "ls-files -z --cached --others --exclude-standard".into(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        let manifests: BTreeSet<String> = std::iter::once("Cargo.toml".to_string())
            .chain(
                workspace_members(root)?
                    .into_iter()
                    .map(|member| format!("{member}/Cargo.toml")),
            )
            .collect();
        let tag = format!(
            "exercise-verify-{:016x}",
            fnv1a(self.dir.to_string_lossy().as_bytes())
        );
        let mut wanted = BTreeSet::new();
        for rel in String::from_utf8_lossy(&out.stdout).split('\0') {
            let source = root.join(rel);
            if rel.is_empty() || !source.is_file() {
                continue;
            }
            let bytes = match fs::read(&source) {
                Ok(bytes) => bytes,
                // An editor's temporary file that vanished since git listed it.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io("read", &source)(e)),
            };
            let bytes = if manifests.contains(rel) {
                tag_versions(&String::from_utf8_lossy(&bytes), &tag).into_bytes()
            } else {
                bytes
            };
            let dest = self.dir.join(rel);
            if fs::read(&dest).ok().as_deref() != Some(bytes.as_slice()) {
                if let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent)
                        .map_err(Error::io("create", parent))?;
                }
                fs::write(&dest, &bytes).map_err(Error::io("write", &dest))?;
            }
            wanted.insert(dest);
        }
        remove_unwanted(&self.dir, &wanted).map_err(Error::io("clean", &self.dir))
    }

    /// Builds the crate's tests in the copy as it is now, and runs each of them.
    fn build_and_run(
        &self,
        crate_name: &str,
        options: &Options,
    ) -> Result<StageRun, Error> {
        let Build { binaries, warnings } = self.build(crate_name)?;
        let mut tests = Vec::new();
        let mut ignored = Vec::new();
        for (name, exe) in &binaries {
            for test in list_tests(exe, false)? {
                tests.push((name.clone(), exe.clone(), test));
            }
            for test in list_tests(exe, true)? {
                ignored.push(format!("{name}: {test}"));
            }
        }
        tests
            .retain(|(name, _, test)| !ignored.contains(&format!("{name}: {test}")));
        let results = self.run_tests(crate_name, &tests, options)?;
        Ok(StageRun {
            warnings,
            results,
            ignored,
        })
    }

    /// `cargo test -p CRATE --tests --no-run`, dead code allowed: the test
    /// executables (the lib's unit tests and the integration tests; examples are
    /// not built, so their uplifted binaries in the shared target directory stay
    /// the workspace's own) and the crate's warnings; an error with the
    /// compiler's errors when the build fails.
    fn build(&self, crate_name: &str) -> Result<Build, Error> {
        let args = [
            "test",
            "-p",
            crate_name,
            "--tests",
            "--no-run",
            "--message-format=json",
        ];
        let out = exercise_cargo(&self.dir, false)
            .env("CARGO_TARGET_DIR", &self.target_dir)
            .env("CARGO_TERM_COLOR", "never")
            .args(args)
            .output()
            .map_err(Error::spawn("cargo"))?;
        let manifest_path = self.dir.join(crate_name).join("Cargo.toml");
        let mut binaries = Vec::new();
        let mut warnings = Vec::new();
        let mut errors = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Ok(message) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            match message["reason"].as_str() {
                Some("compiler-artifact")
                    if message["profile"]["test"] == Value::Bool(true) =>
                {
                    if let (Some(exe), Some(name)) = (
                        message["executable"].as_str(),
                        message["target"]["name"].as_str(),
                    ) {
                        binaries.push((name.to_string(), PathBuf::from(exe)));
                    }
                }
                Some("compiler-message") => {
                    let diagnostic = &message["message"];
                    let text = diagnostic["message"].as_str().unwrap_or("");
                    let rendered =
                        diagnostic["rendered"].as_str().unwrap_or(text).to_string();
                    let summary = text.ends_with("emitted")
                        || text.starts_with("aborting due to");
                    match diagnostic["level"].as_str() {
                        Some("error") if !summary => errors.push(rendered),
                        Some("warning")
                            if !summary
                                && message["manifest_path"]
                                    .as_str()
                                    .map(Path::new)
                                    == Some(manifest_path.as_path())
                                && !warnings.contains(&rendered) =>
                        {
                            warnings.push(rendered);
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        if !out.status.success() {
            let detail = if errors.is_empty() {
                String::from_utf8_lossy(&out.stderr).trim().to_string()
            } else {
                errors.join("\n")
            };
            return Err(Error::Cargo {
                args: args.join(" "),
                detail,
            });
        }
        binaries.sort();
        binaries.dedup();
        Ok(Build { binaries, warnings })
    }

    /// Runs each test alone, `options.jobs` at a time.
    fn run_tests(
        &self,
        crate_name: &str,
        tests: &[(String, PathBuf, String)],
        options: &Options,
    ) -> Result<Vec<TestResult>, Error> {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Result<TestResult, Error>>>> =
            Mutex::new((0..tests.len()).map(|_| None).collect());
        let package_dir = self.dir.join(crate_name);
        std::thread::scope(|scope| {
            for worker in 0..options.jobs.min(tests.len().max(1)) {
                let (next, results, package_dir) = (&next, &results, &package_dir);
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((binary, exe, name)) = tests.get(i) else {
                            break;
                        };
                        let log = self.logs.join(format!("worker-{worker}.log"));
                        let mut command = Command::new(exe);
                        command
                            .args(["--exact", name, "--test-threads=1"])
                            .current_dir(package_dir)
                            .env("CARGO_MANIFEST_DIR", package_dir)
                            .env("CARGO_PKG_NAME", crate_name)
                            .env("PROPTEST_DISABLE_FAILURE_PERSISTENCE", "1")
                            .env("RUST_BACKTRACE", "0");
                        let result = process::run(command, options.timeout, &log)
                            .map(|captured| TestResult {
                                binary: binary.clone(),
                                name: name.clone(),
                                outcome: outcome(&captured),
                            });
                        if let Ok(mut all) = results.lock() {
                            all[i] = Some(result);
                        }
                    }
                });
            }
        });
        let runner_failed = |detail: &str| Error::Tool {
            command: format!("the test runner of {crate_name}"),
            detail: detail.to_string(),
        };
        results
            .into_inner()
            .map_err(|_| runner_failed("a worker thread panicked"))?
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(runner_failed("a test was not run"))))
            .collect()
    }

    /// Stubs `ex`'s region in the copy, builds and runs its crate's tests, restores
    /// the file, and judges the results (`earlier`: the exercises of its stage
    /// before it).
    fn check_exercise(
        &self,
        ex: &Exercise,
        earlier: &[&Exercise],
        note: &region::Note,
        options: &Options,
    ) -> Verdict {
        let path = self.dir.join(&ex.file);
        let original = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                return Verdict {
                    problems: vec![format!("cannot read {}: {e}", ex.file)],
                    ..Verdict::default()
                };
            }
        };
        let run = region::stub(&original, &ex.id, note)
            .map_err(Error::region(&ex.file))
            .and_then(|stubbed| {
                fs::write(&path, stubbed).map_err(Error::io("write", &path))?;
                self.build_and_run(&ex.crate_name, options)
            });
        let restored = fs::write(&path, &original);
        let mut verdict = match run {
            Ok(run) => {
                let mut verdict =
                    judge(ex, earlier, &run.results, &run.ignored, options.timeout);
                let mut warnings = run.warning_problems();
                if !warnings.is_empty() {
                    warnings.insert(
                        0,
                        format!(
                            "the stubbed crate has {} (each region must stub cleanly):",
                            plural(warnings.len(), "warning")
                        ),
                    );
                    verdict.problems.splice(0..0, warnings);
                }
                verdict
            }
            Err(e) => Verdict {
                problems: vec![format!(
                    "the stubbed crate does not build: {}",
                    crate::error::chain(&e)
                )],
                ..Verdict::default()
            },
        };
        if let Err(e) = restored {
            verdict.problems.push(format!(
                "cannot restore {} in the scratch copy: {e}",
                ex.file
            ));
        }
        verdict
    }
}

/// `manifest` (a `Cargo.toml`) with the version of its `[package]` or
/// `[workspace.package]` table tagged with semver build metadata, `0.1.0` →
/// `0.1.0+TAG`.
///
/// Why: cargo names a workspace crate's artifacts after a hash of its package id,
/// and hashes a path package's location relative to the workspace root. The scratch
/// copy has the same layout as the workspace, so without the tag its stubbed builds
/// would write the very files the workspace's own builds use, and cargo's
/// mtime-based freshness check would then let the workspace run stubbed code. A
/// version is part of the package id, so the tag gives the copy's crates artifacts
/// of their own, while registry dependencies stay shared.
fn tag_versions(manifest: &str, tag: &str) -> String {
    let mut table = String::new();
    let mut out = String::with_capacity(manifest.len() + tag.len());
    for line in manifest.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            table = trimmed.to_string();
        }
        let tagged = (table == "[package]" || table == "[workspace.package]")
            .then(|| {
                let value = trimmed
                    .strip_prefix("version")?
                    .trim_start()
                    .strip_prefix('=')?;
                let version = value.trim().strip_prefix('"')?.strip_suffix('"')?;
                let separator = if version.contains('+') { '.' } else { '+' };
                let ending = &line[line.trim_end().len()..];
                Some(format!("version = \"{version}{separator}{tag}\"{ending}"))
            })
            .flatten();
        out.push_str(tagged.as_deref().unwrap_or(line));
    }
    out
}

/// Removes every file under `dir` that is not in `wanted`.
fn remove_unwanted(dir: &Path, wanted: &BTreeSet<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() && !path.is_symlink() {
            remove_unwanted(&path, wanted)?;
        } else if !wanted.contains(&path) {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// The tests in a libtest executable (`ignored`: only the ignored ones).
fn list_tests(exe: &Path, ignored: bool) -> Result<Vec<String>, Error> {
    let mut command = Command::new(exe);
    command.args(["--list", "--format", "terse"]);
    if ignored {
        command.arg("--ignored");
    }
    let out = command
        .output()
        .map_err(Error::spawn(exe.display().to_string()))?;
    if !out.status.success() {
        return Err(Error::Tool {
            command: format!("{} --list", exe.display()),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_string)
        .collect())
}

/// How a captured single-test run ended.
fn outcome(captured: &Captured) -> Outcome {
    match captured.ending {
        Ending::TimedOut => Outcome::Hang,
        _ if captured.success() => Outcome::Pass,
        _ => Outcome::Fail(
            process::panic_messages(&captured.output)
                .into_iter()
                .next()
                .or_else(|| {
                    captured
                        .output
                        .lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .map(str::to_string)
                })
                .unwrap_or_else(|| "failed without output".into()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(tests: &str, also_breaks: &[&str]) -> Exercise {
        Exercise {
            id: "ex1-a".into(),
            crate_name: "stage1-x".into(),
            file: "stage1-x/src/a.rs".into(),
            title: "A".into(),
            page: "p.md".into(),
            tests: tests.into(),
            also_breaks: also_breaks.iter().map(|s| s.to_string()).collect(),
            hints: vec!["h".into(), "i".into()],
            minutes: 5,
        }
    }

    fn result(name: &str, outcome: Outcome) -> TestResult {
        TestResult {
            binary: "t".into(),
            name: name.into(),
            outcome,
        }
    }

    fn fail() -> Outcome {
        Outcome::Fail("boom".into())
    }

    #[test]
    fn a_good_region_passes() {
        let results = [
            result("ex1_a::one", fail()),
            result("ex1_a_property", Outcome::Hang),
            result("scenarios::uses_a", fail()),
            result("scenarios::other", Outcome::Pass),
            result("unrelated", Outcome::Pass),
        ];
        let verdict = judge(
            &exercise("ex1_a", &["scenarios::"]),
            &[],
            &results,
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(verdict.problems, Vec::<String>::new());
        assert_eq!(
            (
                verdict.red,
                verdict.also_failed,
                verdict.green,
                verdict.hangs
            ),
            (2, 1, 1, 1)
        );
        assert!(
            verdict.notes[0].starts_with("HANG t: ex1_a_property"),
            "{:?}",
            verdict.notes
        );
    }

    #[test]
    fn green_named_tests_and_red_others_fail_the_check() {
        let results = [
            result("ex1_a::one", Outcome::Pass),
            result("ex1_a::two", fail()),
            result("unrelated", fail()),
        ];
        let verdict = judge(
            &exercise("ex1_a", &["nothing_matches"]),
            &[],
            &results,
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(verdict.problems.len(), 3, "{:?}", verdict.problems);
        assert!(
            verdict.problems[0].contains("still green")
                && verdict.problems[0].contains("t: ex1_a::one")
        );
        assert!(verdict.problems[1].contains("t: unrelated: boom"));
        assert!(verdict.problems[2].contains("`nothing_matches` matches no test"));
    }

    #[test]
    fn a_filter_without_tests_fails_the_check() {
        let results = [result("other", Outcome::Pass)];
        let verdict = judge(
            &exercise("ex1_a", &[]),
            &[],
            &results,
            &["t: ex1_a::slow".into()],
            Duration::from_secs(1),
        );
        assert_eq!(verdict.problems.len(), 1);
        assert!(verdict.problems[0].contains("nothing proves this region"));
        assert!(verdict.notes[0].contains("ignored, so not run: t: ex1_a::slow"));
    }

    /// An exercise `id` with `tests`, as the ordering check sees it.
    fn named(id: &str, tests: &str) -> Exercise {
        Exercise {
            id: id.into(),
            ..exercise(tests, &[])
        }
    }

    #[test]
    fn tests_of_an_earlier_exercise_that_fail_are_an_ordering_error() {
        let pop = named("ex2-pop", "ex2_pop");
        let dedup = named("ex2-dedup", "ex2_dedup");
        let mut replace = named("ex2-replace-deletions", "ex2_replace_deletions");
        // Even when the later exercise's `also_breaks` admit it.
        replace.also_breaks = vec!["ex2_pop::".into()];
        let results = [
            result("ex2_replace_deletions::one", fail()),
            result("ex2_pop::has_synced", fail()),
            result("ex2_pop::in_order", fail()),
            result("ex2_pop::wakes", Outcome::Pass),
            result("ex2_dedup::keeps", Outcome::Pass),
            result("unrelated", Outcome::Pass),
        ];
        let verdict = judge(
            &replace,
            &[&pop, &dedup],
            &results,
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(verdict.problems.len(), 1, "{:#?}", verdict.problems);
        assert!(
            verdict.problems[0].starts_with(
                "ex2-pop's tests need ex2-replace-deletions, which comes later"
            ),
            "{}",
            verdict.problems[0]
        );
        assert!(
            verdict.problems[0]
                .contains("t: ex2_pop::has_synced\n      t: ex2_pop::in_order")
        );
        assert_eq!((verdict.red, verdict.also_failed, verdict.green), (1, 2, 2));
        // Without `also_breaks`, the same failures are reported once, as an ordering
        // error.
        replace.also_breaks.clear();
        let verdict =
            judge(&replace, &[&pop], &results, &[], Duration::from_secs(60));
        assert_eq!(verdict.problems.len(), 1, "{:#?}", verdict.problems);
        assert!(verdict.problems[0].starts_with("ex2-pop's tests need"));
        // Later exercises' tests may fail: that is what `also_breaks` is for.
        let verdict = judge(
            &pop,
            &[],
            &[
                result("ex2_pop::in_order", fail()),
                result("ex2_replace_deletions::one", fail()),
            ],
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(verdict.problems.len(), 1);
        assert!(verdict.problems[0].contains("outside `tests` and `also_breaks`"));
    }

    #[test]
    fn versions_are_tagged_in_package_tables_only() {
        let manifest = "[package]\nname = \"a\"\nversion = \"0.1.0\"\n\n[dependencies]\nb = { version = \"1\" }\nversion = \"9\"\n";
        assert_eq!(
            tag_versions(manifest, "t1"),
            "[package]\nname = \"a\"\nversion = \"0.1.0+t1\"\n\n[dependencies]\nb = { version = \"1\" }\nversion = \"9\"\n"
        );
        let root =
            "[workspace.package]\nversion = \"2.0.0+x\"\r\nedition = \"2024\"\n";
        assert_eq!(
            tag_versions(root, "t1"),
            "[workspace.package]\nversion = \"2.0.0+x.t1\"\r\nedition = \"2024\"\n"
        );
        let inherited = "[package]\nversion.workspace = true\n";
        assert_eq!(tag_versions(inherited, "t1"), inherited);
    }

    #[test]
    fn scratch_files_are_pruned() {
        let dir = std::env::temp_dir()
            .join(format!("xtask-verify-prune-{}", std::process::id()));
        fs::create_dir_all(dir.join("a/b")).unwrap();
        fs::write(dir.join("a/b/keep.rs"), "x").unwrap();
        fs::write(dir.join("a/drop.rs"), "y").unwrap();
        let wanted = BTreeSet::from([dir.join("a/b/keep.rs")]);
        remove_unwanted(&dir, &wanted).unwrap();
        assert!(dir.join("a/b/keep.rs").exists());
        assert!(!dir.join("a/drop.rs").exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
