//! `exercises.toml`: the list of exercises and the chapters they belong to, and its checks.
//!
//! The manifest is the only list of exercises. The regions themselves live in the reference
//! crates; [`Manifest::check_against`] makes sure both agree: every entry's region exists and can
//! be stubbed, and every `// ANCHOR: ex<N>-…` region in a stage crate has an entry.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::region;

/// The manifest's file name, at the workspace root.
pub(crate) const FILE: &str = "exercises.toml";

/// The whole manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    /// The chapters that have exercises, in book order.
    #[serde(default, rename = "chapter")]
    pub(crate) chapters: Vec<Chapter>,
    /// The exercises, in book order.
    #[serde(default, rename = "exercise")]
    pub(crate) exercises: Vec<Exercise>,
}

/// One chapter of the book, as the workshop schedule needs it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Chapter {
    /// The stage crate the chapter rebuilds, e.g. `stage1-store`.
    pub(crate) stage: String,
    /// The chapter's title as in SUMMARY.md, e.g. `1. The indexed store`.
    pub(crate) title: String,
    /// The chapter's page under `book/src`.
    pub(crate) page: String,
    /// The chapter's exercises page under `book/src`.
    pub(crate) exercises_page: String,
    /// Minutes for the facilitator's talk and live demo of the chapter.
    pub(crate) minutes: u32,
}

/// One exercise: a region of the reference code and what proves it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Exercise {
    /// The region's anchor name, `ex<stage>-<name>`.
    pub(crate) id: String,
    /// The stage crate, e.g. `stage1-store`.
    pub(crate) stage: String,
    /// The file holding the region, from the workspace root.
    pub(crate) file: String,
    /// A short title in the learner's words.
    pub(crate) title: String,
    /// The book page that teaches it, under `book/src`, optionally with a `#fragment`.
    pub(crate) page: String,
    /// The test-name filter (a substring, as for `cargo test`) whose tests prove the region.
    pub(crate) tests: String,
    /// Further test-name filters whose tests may fail while the region is stubbed, because they
    /// use it indirectly.
    #[serde(default)]
    pub(crate) also_breaks: Vec<String>,
    /// Two or three hints, from a nudge to nearly the answer.
    pub(crate) hints: Vec<String>,
    /// Estimated minutes for a learner.
    pub(crate) minutes: u32,
}

impl Manifest {
    /// Reads and checks `exercises.toml` in `root` (the checks that need no other file).
    pub(crate) fn load(root: &Path) -> Result<Manifest, String> {
        let path = root.join(FILE);
        let text = fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let manifest = Manifest::parse(&text)?;
        let problems = manifest.problems();
        if problems.is_empty() {
            Ok(manifest)
        } else {
            Err(format!("{FILE} is not valid:\n  {}", problems.join("\n  ")))
        }
    }

    /// Parses the manifest's text without checking it.
    pub(crate) fn parse(text: &str) -> Result<Manifest, String> {
        toml::from_str(text).map_err(|e| format!("{FILE}: {e}"))
    }

    /// Everything wrong with the manifest on its own, one message each.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut ids = BTreeSet::new();
        let mut chapter_stages = Vec::new();
        for chapter in &self.chapters {
            if chapter_stages.contains(&chapter.stage.as_str()) {
                problems.push(format!("chapter for `{}` appears twice", chapter.stage));
            }
            chapter_stages.push(chapter.stage.as_str());
            if stage_number(&chapter.stage).is_none() {
                problems.push(format!(
                    "chapter stage `{}` is not a stage crate name like `stage1-store`",
                    chapter.stage
                ));
            }
        }
        let mut last_chapter = 0;
        for ex in &self.exercises {
            let at = |what: String| format!("exercise `{}`: {what}", ex.id);
            if !ids.insert(ex.id.as_str()) {
                problems.push(at("the id appears twice".into()));
            }
            match (region::exercise_stage(&ex.id), stage_number(&ex.stage)) {
                (None, _) => problems.push(at("the id must look like `ex<stage>-<name>`".into())),
                (Some(n), Some(m)) if n != m => problems.push(at(format!(
                    "the id says stage {n} but `stage` is `{}`",
                    ex.stage
                ))),
                (_, None) => problems.push(at(format!(
                    "`stage = \"{}\"` is not a stage crate name like `stage1-store`",
                    ex.stage
                ))),
                _ => {}
            }
            if !ex.file.starts_with(&format!("{}/", ex.stage)) {
                problems.push(at(format!("`file` must lie in `{}/`", ex.stage)));
            }
            match chapter_stages.iter().position(|s| *s == ex.stage) {
                None => problems.push(at(format!("no `[[chapter]]` for `{}`", ex.stage))),
                Some(index) if index < last_chapter => problems.push(at(
                    "out of book order: it comes after an exercise of a later chapter".into(),
                )),
                Some(index) => last_chapter = index,
            }
            if ex.title.trim().is_empty() {
                problems.push(at("`title` is empty".into()));
            }
            if ex.tests.trim().is_empty() {
                problems.push(at("`tests` is empty".into()));
            }
            let expected_filter = ex.id.replace('-', "_");
            if !ex.tests.contains(&expected_filter) {
                problems.push(at(format!(
                    "`tests` must carry the id, as in \"{expected_filter}\""
                )));
            }
            if ex.also_breaks.iter().any(|f| f.trim().is_empty()) {
                problems.push(at("`also_breaks` holds an empty filter".into()));
            }
            if !(2..=3).contains(&ex.hints.len()) {
                problems.push(at(format!("needs 2 or 3 hints, has {}", ex.hints.len())));
            }
            if ex.minutes == 0 {
                problems.push(at("`minutes` must be more than 0".into()));
            }
        }
        problems
    }

    /// Checks the manifest against the workspace in `root`: every region exists and can be
    /// stubbed, and every exercise region in the stage crates has an entry. With `only` (exercise
    /// ids), just those exercises and the regions of their stage crates. Returns notes that do
    /// not fail the check: book pages that do not exist yet (a chapter may land after its crate).
    pub(crate) fn check_against(
        &self,
        root: &Path,
        only: Option<&BTreeSet<&str>>,
    ) -> Result<Vec<String>, String> {
        let mut problems = Vec::new();
        let mut notes = Vec::new();
        let stages: BTreeSet<&str> = self
            .exercises
            .iter()
            .filter(|ex| only.is_none_or(|ids| ids.contains(ex.id.as_str())))
            .map(|ex| ex.stage.as_str())
            .collect();
        let wanted = |stage: &str| only.is_none() || stages.contains(stage);
        for ex in self
            .exercises
            .iter()
            .filter(|ex| only.is_none_or(|ids| ids.contains(ex.id.as_str())))
        {
            let path = root.join(&ex.file);
            match fs::read_to_string(&path) {
                Err(e) => problems.push(format!(
                    "exercise `{}`: cannot read {}: {e}",
                    ex.id, ex.file
                )),
                Ok(text) => {
                    if let Err(e) = region::stub(&text, &ex.id, &self.todo_message(ex)) {
                        problems.push(format!("exercise `{}` in {}: {e}", ex.id, ex.file));
                    }
                }
            }
        }
        for chapter in self.chapters.iter().filter(|c| wanted(&c.stage)) {
            let mut pages = vec![chapter.page.as_str(), chapter.exercises_page.as_str()];
            pages.extend(
                self.stage_exercises(&chapter.stage)
                    .map(|ex| ex.page.split('#').next().unwrap_or("")),
            );
            pages.dedup();
            for page in pages {
                if !root.join("book/src").join(page).is_file() {
                    let note = format!(
                        "{}: book page book/src/{page} does not exist yet",
                        chapter.stage
                    );
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
            }
        }
        let known: BTreeMap<&str, &str> = self
            .exercises
            .iter()
            .map(|ex| (ex.id.as_str(), ex.file.as_str()))
            .collect();
        for (file, id, line) in regions_in_stages(root)? {
            if !wanted(file.split('/').next().unwrap_or("")) {
                continue;
            }
            match known.get(id.as_str()) {
                None => problems.push(format!(
                    "{file}:{line}: region `{id}` has no entry in {FILE}"
                )),
                Some(listed) if *listed != file => problems.push(format!(
                    "{file}:{line}: region `{id}` is listed in {FILE} with file `{listed}`"
                )),
                Some(_) => {}
            }
        }
        if problems.is_empty() {
            Ok(notes)
        } else {
            Err(format!(
                "{FILE} and the code disagree:\n  {}",
                problems.join("\n  ")
            ))
        }
    }

    /// The message of an exercise's stub: `todo!("<id>: <title> — see the book, <page>")`, where
    /// the page is the exercise's section on its chapter's exercises page.
    pub(crate) fn todo_message(&self, ex: &Exercise) -> String {
        let page = match self.chapter(&ex.stage) {
            Some(chapter) => format!("{}#{}", chapter.exercises_page, ex.id),
            None => ex.page.clone(),
        };
        format!("{}: {} — see the book, {page}", ex.id, ex.title)
    }

    /// The exercises of one stage crate, in book order.
    pub(crate) fn stage_exercises<'a>(
        &'a self,
        stage: &'a str,
    ) -> impl Iterator<Item = &'a Exercise> {
        self.exercises.iter().filter(move |ex| ex.stage == stage)
    }

    /// The exercise with this id.
    pub(crate) fn exercise(&self, id: &str) -> Option<&Exercise> {
        self.exercises.iter().find(|ex| ex.id == id)
    }

    /// The chapter of a stage crate.
    pub(crate) fn chapter(&self, stage: &str) -> Option<&Chapter> {
        self.chapters.iter().find(|c| c.stage == stage)
    }

    /// The stage crates that have exercises, in book order.
    pub(crate) fn stages(&self) -> Vec<&str> {
        let mut stages: Vec<&str> = Vec::new();
        for ex in &self.exercises {
            if !stages.contains(&ex.stage.as_str()) {
                stages.push(&ex.stage);
            }
        }
        stages
    }
}

/// The number in a stage crate's name: `stage12-x` → 12.
pub(crate) fn stage_number(stage: &str) -> Option<u32> {
    let rest = stage.strip_prefix("stage")?;
    let digits = rest.find('-')?;
    if digits == 0 || rest.len() == digits + 1 {
        return None;
    }
    rest[..digits].parse().ok()
}

/// The workspace's members, as listed in the root `Cargo.toml`.
pub(crate) fn workspace_members(root: &Path) -> Result<Vec<String>, String> {
    #[derive(Deserialize)]
    struct Root {
        workspace: Workspace,
    }
    #[derive(Deserialize)]
    struct Workspace {
        members: Vec<String>,
    }
    let path = root.join("Cargo.toml");
    let text =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let parsed: Root = toml::from_str(&text).map_err(|e| format!("Cargo.toml: {e}"))?;
    Ok(parsed.workspace.members)
}

/// The workspace members whose directory name is a stage crate name (`stage<N>-…`), sorted.
pub(crate) fn stage_crates(root: &Path) -> Result<Vec<String>, String> {
    let mut stages: Vec<String> = workspace_members(root)?
        .into_iter()
        .filter(|m| stage_number(m).is_some() && !m.contains('/'))
        .collect();
    stages.sort_by_key(|s| stage_number(s));
    Ok(stages)
}

/// Every exercise region in the stage crates: `(file from root, id, line)`, in path order.
pub(crate) fn regions_in_stages(root: &Path) -> Result<Vec<(String, String, usize)>, String> {
    let mut files = Vec::new();
    for stage in stage_crates(root)? {
        collect_rust_files(&root.join(&stage), &mut files)
            .map_err(|e| format!("cannot list {stage}: {e}"))?;
    }
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let relative = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace('\\', "/");
        for (id, line) in region::exercise_anchors(&text) {
            found.push((relative.clone(), id, line));
        }
    }
    Ok(found)
}

/// Appends every `*.rs` file under `dir` to `out`, skipping `target` directories.
fn collect_rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                collect_rust_files(&path, out)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// What a learner named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// A whole stage crate.
    Stage(&'a str),
    /// One exercise.
    Exercise(&'a Exercise),
}

impl Manifest {
    /// Resolves `stage1`, `1`, `stage1-store` or an exercise id. `stages` are the workspace's
    /// stage crates, so that a stage without exercises gets a clear message.
    pub(crate) fn resolve<'a>(
        &'a self,
        arg: &str,
        stages: &[String],
    ) -> Result<Target<'a>, String> {
        if let Some(ex) = self.exercise(arg) {
            return Ok(Target::Exercise(ex));
        }
        let number = arg.strip_prefix("stage").unwrap_or(arg).parse::<u32>().ok();
        let stage = stages
            .iter()
            .find(|s| s.as_str() == arg || number.is_some() && stage_number(s) == number);
        match stage {
            Some(stage) => match self.exercises.iter().find(|ex| &ex.stage == stage) {
                Some(ex) => Ok(Target::Stage(&ex.stage)),
                None => Err(format!("{stage} has no exercises yet")),
            },
            None => {
                let ids: Vec<&str> = self.exercises.iter().map(|e| e.id.as_str()).collect();
                Err(format!(
                    "`{arg}` is neither a stage (e.g. `stage1`, `1` or `stage1-store`) nor an \
                     exercise id ({})",
                    ids.join(", ")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[[chapter]]
stage = "stage1-store"
title = "1. The indexed store"
page = "stage1/index.md"
exercises_page = "stage1/exercises.md"
minutes = 30

[[exercise]]
id = "ex1-split-key"
stage = "stage1-store"
file = "stage1-store/src/store.rs"
title = "Split a key"
page = "stage1/index.md#keys"
tests = "ex1_split_key"
hints = ["one", "two"]
minutes = 10

[[exercise]]
id = "ex1-update-index"
stage = "stage1-store"
file = "stage1-store/src/thread_safe_store.rs"
title = "Update an index"
page = "stage1/index.md"
tests = "ex1_update_index"
also_breaks = ["store_scenarios::"]
hints = ["one", "two", "three"]
minutes = 20
"#;

    #[test]
    fn a_good_manifest_parses_and_passes() {
        let manifest = Manifest::parse(GOOD).unwrap();
        assert_eq!(manifest.problems(), Vec::<String>::new());
        assert_eq!(manifest.exercises.len(), 2);
        assert_eq!(manifest.exercises[1].also_breaks, ["store_scenarios::"]);
        assert!(manifest.exercises[0].also_breaks.is_empty());
        assert_eq!(manifest.stages(), ["stage1-store"]);
        assert_eq!(
            manifest.todo_message(&manifest.exercises[0]),
            "ex1-split-key: Split a key — see the book, stage1/exercises.md#ex1-split-key"
        );
    }

    #[test]
    fn unknown_fields_are_refused() {
        let err = Manifest::parse(&GOOD.replace("minutes = 10", "minutes = 10\nhint = \"x\""))
            .unwrap_err();
        assert!(err.contains("unknown field"), "{err}");
    }

    #[test]
    fn problems_name_the_exercise() {
        let bad = GOOD
            .replace("id = \"ex1-update-index\"", "id = \"ex2-split-key\"")
            .replace("tests = \"ex1_update_index\"", "tests = \"\"")
            .replace("hints = [\"one\", \"two\"]", "hints = [\"one\"]")
            .replace("minutes = 20", "minutes = 0")
            .replace(
                "file = \"stage1-store/src/thread_safe_store.rs\"",
                "file = \"src/x.rs\"",
            );
        let problems = Manifest::parse(&bad).unwrap().problems();
        assert_eq!(
            problems,
            [
                "exercise `ex1-split-key`: needs 2 or 3 hints, has 1",
                "exercise `ex2-split-key`: the id says stage 2 but `stage` is `stage1-store`",
                "exercise `ex2-split-key`: `file` must lie in `stage1-store/`",
                "exercise `ex2-split-key`: `tests` is empty",
                "exercise `ex2-split-key`: `tests` must carry the id, as in \"ex2_split_key\"",
                "exercise `ex2-split-key`: `minutes` must be more than 0",
            ]
        );
    }

    #[test]
    fn duplicate_ids_and_missing_chapters_are_problems() {
        let bad = GOOD.replace("ex1-update-index", "ex1-split-key").replace(
            "exercises_page = \"stage1/exercises.md\"\nminutes = 30\n",
            "exercises_page = \"stage1/exercises.md\"\nminutes = 30\n\n[[chapter]]\nstage = \"stage2-deltafifo\"\n\
             title = \"2\"\npage = \"p\"\nexercises_page = \"q\"\nminutes = 1\n",
        );
        let mut text = bad.clone();
        text.push_str(
            "\n[[exercise]]\nid = \"ex3-a\"\nstage = \"stage3-reflector\"\nfile = \"stage3-reflector/src/a.rs\"\n\
             title = \"A\"\npage = \"p\"\ntests = \"ex3_a\"\nhints = [\"a\", \"b\"]\nminutes = 5\n",
        );
        let problems = Manifest::parse(&text).unwrap().problems();
        assert!(
            problems.contains(&"exercise `ex1-split-key`: the id appears twice".to_string()),
            "{problems:?}"
        );
        assert!(
            problems.contains(
                &"exercise `ex1-split-key`: `tests` must carry the id, as in \"ex1_split_key\""
                    .to_string()
            ),
            "{problems:?}"
        );
        assert!(
            problems
                .contains(&"exercise `ex3-a`: no `[[chapter]]` for `stage3-reflector`".to_string()),
            "{problems:?}"
        );
    }

    #[test]
    fn book_order_is_enforced() {
        let text = GOOD.replace(
            "exercises_page = \"stage1/exercises.md\"\nminutes = 30\n",
            "exercises_page = \"stage1/exercises.md\"\nminutes = 30\n\n[[chapter]]\nstage = \"stage0-x\"\n\
             title = \"0\"\npage = \"p\"\nexercises_page = \"q\"\nminutes = 1\n",
        ) + "\n[[exercise]]\nid = \"ex0-a\"\nstage = \"stage0-x\"\nfile = \"stage0-x/a.rs\"\ntitle = \"A\"\n\
             page = \"p\"\ntests = \"ex0_a\"\nhints = [\"a\", \"b\"]\nminutes = 5\n\n[[exercise]]\nid = \"ex1-late\"\n\
             stage = \"stage1-store\"\nfile = \"stage1-store/a.rs\"\ntitle = \"A\"\npage = \"p\"\ntests = \"ex1_late\"\n\
             hints = [\"a\", \"b\"]\nminutes = 5\n";
        let problems = Manifest::parse(&text).unwrap().problems();
        assert_eq!(
            problems,
            [
                "exercise `ex1-late`: out of book order: it comes after an exercise of a later chapter"
            ]
        );
    }

    #[test]
    fn targets_resolve() {
        let manifest = Manifest::parse(GOOD).unwrap();
        let stages = vec![
            "stage1-store".to_string(),
            "stage4-shared-informer".to_string(),
        ];
        for arg in ["stage1", "1", "stage1-store"] {
            assert_eq!(
                manifest.resolve(arg, &stages).unwrap(),
                Target::Stage("stage1-store")
            );
        }
        assert!(matches!(
            manifest.resolve("ex1-split-key", &stages).unwrap(),
            Target::Exercise(ex) if ex.id == "ex1-split-key"
        ));
        assert_eq!(
            manifest.resolve("stage4", &stages).unwrap_err(),
            "stage4-shared-informer has no exercises yet"
        );
        assert!(
            manifest
                .resolve("ex9", &stages)
                .unwrap_err()
                .contains("ex1-split-key, ex1-update-index")
        );
    }

    #[test]
    fn stage_numbers() {
        assert_eq!(stage_number("stage1-store"), Some(1));
        assert_eq!(stage_number("stage12-x"), Some(12));
        assert_eq!(stage_number("stage-x"), None);
        assert_eq!(stage_number("stage1-"), None);
        assert_eq!(stage_number("xtask"), None);
    }
}
