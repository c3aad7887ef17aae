//! `exercises.toml`: the list of exercises and the chapters they belong to, and its
//! checks.
//!
//! The manifest is the only list of exercises. The regions themselves live in the
//! stage crates; [`Manifest::check_against`] makes sure both agree: every entry's
//! crate is a workspace member and its region exists and can be stubbed, and every
//! `// ANCHOR: ex<N>-…` region in a stage crate has an entry.
//!
//! A chapter names its stage by number (`stage = 5`); an exercise names the crate
//! that holds its region (`crate = "stage5-storage"`), since a stage may span
//! several crates. The number in the exercise's id (`ex5-…`), the number in its
//! crate's name (`stage5-…`) and its chapter's stage must agree.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::region;
use super::suggest::did_you_mean;
use crate::error::Error;

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
    /// The stage the chapter rebuilds, e.g. `5`; its exercises may lie in several
    /// crates.
    pub(crate) stage: u32,
    /// The chapter's title as in SUMMARY.md, e.g. `1. The indexed store`.
    pub(crate) title: String,
    /// The chapter's page under `book/src`.
    pub(crate) page: String,
    /// The chapter's exercises index under `book/src`, e.g. `stage1/exercises.md`.
    /// Each exercise has a page of its own in the folder of the same name (see
    /// [`Manifest::exercise_page`]).
    pub(crate) exercises_page: String,
    /// Minutes for the facilitator's talk and live demo of the chapter.
    pub(crate) minutes: u32,
    /// Why `verify` does not yet enforce the exercise order in this stage, if it
    /// does not: its exercises' tests still need each other's regions, whatever
    /// the order. `verify` then reports the order problems as notes instead of
    /// failing, until the tests are made independent and this is removed.
    #[serde(default)]
    pub(crate) order_unenforced: Option<String>,
    /// The exercises of this chapter that the workshop schedules leave as
    /// take-home, each with the reason: the talk covers them, and the room does
    /// the chapter's other exercises. Written as a `[chapter.take_home]` table
    /// of `id = "reason"` after the chapter's fields.
    #[serde(default)]
    pub(crate) take_home: BTreeMap<String, String>,
}

impl Chapter {
    /// Whether the workshop schedules leave `ex` as take-home.
    pub(crate) fn is_take_home(&self, ex: &Exercise) -> bool {
        self.take_home.contains_key(&ex.id)
    }
}

/// One exercise: a region of the reference code and what proves it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Exercise {
    /// The region's anchor name, `ex<stage>-<name>`.
    pub(crate) id: String,
    /// The package holding the region, e.g. `stage5-storage`; its directory has the
    /// same name.
    #[serde(rename = "crate")]
    pub(crate) crate_name: String,
    /// The file holding the region, from the workspace root.
    pub(crate) file: String,
    /// A short title in the learner's words.
    pub(crate) title: String,
    /// The book page that teaches it, under `book/src`, optionally with a
    /// `#fragment`.
    pub(crate) page: String,
    /// The test-name filter (a substring, as for `cargo test`) whose tests prove
    /// the region.
    pub(crate) tests: String,
    /// Further test-name filters whose tests may fail while the region is stubbed,
    /// because they use it indirectly.
    #[serde(default)]
    pub(crate) also_breaks: Vec<String>,
    /// Two or three hints, from a nudge to nearly the answer.
    pub(crate) hints: Vec<String>,
    /// Estimated minutes for a learner.
    pub(crate) minutes: u32,
}

impl Exercise {
    /// The exercise's stage: the number in its crate's name (0 for a malformed name,
    /// which [`Manifest::problems`] reports).
    pub(crate) fn stage(&self) -> u32 {
        stage_number(&self.crate_name).unwrap_or(0)
    }

    /// Whether one of this exercise's `also_breaks` filters may match `other`'s
    /// tests, i.e. the manifest says that `other`'s tests use this region.
    /// Filters are substrings of test names, so two filters overlap when either
    /// holds the other.
    pub(crate) fn breaks_tests_of(&self, other: &Exercise) -> bool {
        self.also_breaks.iter().any(|filter| {
            filter.contains(&other.tests) || other.tests.contains(filter.as_str())
        })
    }
}

impl Manifest {
    /// Reads and checks `exercises.toml` in `root` (the checks that need no other
    /// file).
    pub(crate) fn load(root: &Path) -> Result<Manifest, Error> {
        let path = root.join(FILE);
        let text = fs::read_to_string(&path).map_err(Error::io("read", &path))?;
        let manifest = Manifest::parse(&text).map_err(|source| Error::Toml {
            path: PathBuf::from(FILE),
            source,
        })?;
        let problems = manifest.problems();
        if problems.is_empty() {
            Ok(manifest)
        } else {
            Err(Error::Manifest {
                what: format!("{FILE} is not valid"),
                problems,
            })
        }
    }

    /// Parses the manifest's text without checking it.
    pub(crate) fn parse(text: &str) -> Result<Manifest, toml::de::Error> {
        toml::from_str(text)
    }

    /// Everything wrong with the manifest on its own, one message each.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut chapter_stages: Vec<u32> = Vec::new();
        for chapter in &self.chapters {
            if chapter.stage == 0 {
                problems.push(format!(
                    "chapter `{}`: `stage` must be a stage number, 1 or more",
                    chapter.title
                ));
            } else if chapter_stages.contains(&chapter.stage) {
                problems.push(format!(
                    "chapter `{}`: another chapter already has `stage = {}`",
                    chapter.title, chapter.stage
                ));
            }
            chapter_stages.push(chapter.stage);
            if chapter
                .exercises_page
                .strip_suffix(".md")
                .is_none_or(str::is_empty)
            {
                problems.push(format!(
                    "chapter `{}`: `exercises_page` must name a Markdown page, like \
                     `stage1/exercises.md`",
                    chapter.title
                ));
            }
            for (id, reason) in &chapter.take_home {
                let at =
                    format!("chapter `{}`: `take_home` names `{id}`", chapter.title);
                if !self
                    .exercises
                    .iter()
                    .any(|ex| ex.id == *id && ex.stage() == chapter.stage)
                {
                    problems.push(format!(
                        "{at}, which is not an exercise of this chapter"
                    ));
                }
                if reason.trim().is_empty() {
                    problems.push(format!("{at} without a reason"));
                }
            }
            let mut exercises = self.stage_exercises(chapter.stage).peekable();
            if exercises.peek().is_some()
                && exercises.all(|ex| chapter.is_take_home(ex))
            {
                problems.push(format!(
                    "chapter `{}`: every exercise is `take_home`; keep at least one for the room",
                    chapter.title
                ));
            }
        }
        let mut ids = BTreeSet::new();
        let mut last_chapter = 0;
        for ex in &self.exercises {
            let at = |what: String| format!("exercise `{}`: {what}", ex.id);
            if !ids.insert(ex.id.as_str()) {
                problems.push(at("the id appears twice".into()));
            }
            let id_stage = region::exercise_stage(&ex.id);
            let crate_stage = stage_number(&ex.crate_name);
            match (id_stage, crate_stage) {
                (None, _) => problems.push(at("the id must look like `ex<stage>-<name>`".into())),
                (_, None) => problems.push(at(format!(
                    "`crate = \"{}\"` is not a stage crate name like `stage1-store`",
                    ex.crate_name
                ))),
                (Some(n), Some(m)) if n != m => problems.push(at(format!(
                    "the id says stage {n}, but `crate = \"{}\"` is a stage {m} crate",
                    ex.crate_name
                ))),
                _ => {}
            }
            if !ex.file.starts_with(&format!("{}/", ex.crate_name)) {
                problems.push(at(format!(
                    "`file` must lie in the crate's directory, `{}/`",
                    ex.crate_name
                )));
            }
            if let Some(stage) = crate_stage.or(id_stage) {
                match chapter_stages.iter().position(|s| *s == stage) {
                    None => problems.push(at(format!("no `[[chapter]]` has `stage = {stage}`"))),
                    Some(index) if index < last_chapter => problems.push(at(
                        "out of book order: it comes after an exercise of a later chapter".into(),
                    )),
                    Some(index) => last_chapter = index,
                }
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
                problems
                    .push(at(format!("needs 2 or 3 hints, has {}", ex.hints.len())));
            }
            if ex.minutes == 0 {
                problems.push(at("`minutes` must be more than 0".into()));
            }
        }
        problems
    }

    /// The exercises (all, or those in `only`) whose crate is not among the
    /// workspace's `members`, one message per crate.
    pub(crate) fn member_problems(
        &self,
        members: &[String],
        only: Option<&BTreeSet<&str>>,
    ) -> Vec<String> {
        let mut missing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for ex in self
            .exercises
            .iter()
            .filter(|ex| only.is_none_or(|ids| ids.contains(ex.id.as_str())))
            .filter(|ex| !members.contains(&ex.crate_name))
        {
            missing.entry(&ex.crate_name).or_default().push(&ex.id);
        }
        missing
            .into_iter()
            .map(|(name, ids)| {
                format!(
                    "crate `{name}` (of {}) is not a member of the workspace: add it to \
                     `[workspace] members` in the root Cargo.toml, or fix `crate`",
                    ids.join(", ")
                )
            })
            .collect()
    }

    /// Checks the manifest against the workspace in `root`: every exercise's crate
    /// is a member, every region exists and can be stubbed, and every exercise
    /// region in the stage crates has an entry. With `only` (exercise ids), just
    /// those exercises and the regions of their crates. Returns notes that do
    /// not fail the check: book pages that do not exist yet (a chapter may land
    /// after its crate).
    pub(crate) fn check_against(
        &self,
        root: &Path,
        only: Option<&BTreeSet<&str>>,
    ) -> Result<Vec<String>, Error> {
        let mut problems = self.member_problems(&workspace_members(root)?, only);
        let mut notes = Vec::new();
        let selected: Vec<&Exercise> = self
            .exercises
            .iter()
            .filter(|ex| only.is_none_or(|ids| ids.contains(ex.id.as_str())))
            .collect();
        let crates: BTreeSet<&str> =
            selected.iter().map(|ex| ex.crate_name.as_str()).collect();
        let stages: BTreeSet<u32> = selected.iter().map(|ex| ex.stage()).collect();
        for ex in &selected {
            match fs::read_to_string(root.join(&ex.file)) {
                Err(e) => problems.push(format!(
                    "exercise `{}`: cannot read {}: {e}",
                    ex.id, ex.file
                )),
                Ok(text) => {
                    if let Err(e) = region::stub(&text, &ex.id, &self.stub_note(ex))
                    {
                        problems.push(format!(
                            "exercise `{}` in {}: {e}",
                            ex.id, ex.file
                        ));
                    }
                }
            }
        }
        for chapter in self
            .chapters
            .iter()
            .filter(|c| only.is_none() || stages.contains(&c.stage))
        {
            let mut pages =
                vec![chapter.page.clone(), chapter.exercises_page.clone()];
            for ex in self.stage_exercises(chapter.stage) {
                pages.push(self.exercise_page(ex));
                pages.push(ex.page.split('#').next().unwrap_or("").to_string());
            }
            let mut seen = BTreeSet::new();
            pages.retain(|page| seen.insert(page.clone()));
            for page in pages {
                if !root.join("book/src").join(&page).is_file() {
                    let note = format!(
                        "stage {}: book page book/src/{page} does not exist yet",
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
            let crate_dir = file.split('/').next().unwrap_or("");
            if only.is_some() && !crates.contains(crate_dir) {
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
            Err(Error::Manifest {
                what: format!("{FILE} and the workspace disagree"),
                problems,
            })
        }
    }

    /// The exercise's own page under `book/src`: the task, what to read, how to
    /// check, its generated hints and the link to its solution. It lies in the
    /// folder named after its chapter's exercises index: `stage1/exercises.md` has
    /// `stage1/exercises/ex1-split-key.md`.
    pub(crate) fn exercise_page(&self, ex: &Exercise) -> String {
        let folder = match self.chapter(ex.stage()) {
            Some(chapter) => chapter
                .exercises_page
                .strip_suffix(".md")
                .unwrap_or(&chapter.exercises_page)
                .to_string(),
            None => format!("stage{}/exercises", ex.stage()),
        };
        format!("{folder}/{}.md", ex.id)
    }

    /// What an exercise's stub says (see [`region::stub`]): `todo!("<id>: <title>")`,
    /// under a comment that names the exercise's own page.
    pub(crate) fn stub_note(&self, ex: &Exercise) -> region::Note {
        region::Note {
            message: format!("{}: {}", ex.id, ex.title),
            page: format!("book/src/{}", self.exercise_page(ex)),
        }
    }

    /// The exercises of one stage, in book order (across the stage's crates).
    pub(crate) fn stage_exercises(
        &self,
        stage: u32,
    ) -> impl Iterator<Item = &Exercise> {
        self.exercises.iter().filter(move |ex| ex.stage() == stage)
    }

    /// The exercises of one crate, in book order.
    pub(crate) fn crate_exercises<'a>(
        &'a self,
        crate_name: &'a str,
    ) -> impl Iterator<Item = &'a Exercise> {
        self.exercises
            .iter()
            .filter(move |ex| ex.crate_name == crate_name)
    }

    /// The exercise with this id.
    pub(crate) fn exercise(&self, id: &str) -> Option<&Exercise> {
        self.exercises.iter().find(|ex| ex.id == id)
    }

    /// The exercise with this id, or a usage error that suggests the id the learner
    /// may have meant.
    pub(crate) fn find_exercise(&self, id: &str) -> Result<&Exercise, Error> {
        self.exercise(id).ok_or_else(|| {
            let suggestion = did_you_mean(id, self.exercises.iter().map(|ex| ex.id.as_str()));
            Error::Usage(match suggestion {
                Some(near) => format!("no exercise `{id}`; did you mean `{near}`?"),
                None if self.stage_exercises_by_name(id).is_some() => format!(
                    "`{id}` is a stage; this command takes one exercise id, like `{}`",
                    self.exercises
                        .first()
                        .map_or("ex1-split-key", |ex| ex.id.as_str())
                ),
                None => format!(
                    "no exercise `{id}`; ids look like `ex1-split-key` (see {FILE}, or the \
                     exercises page of each chapter)"
                ),
            })
        })
    }

    /// The stage a `stageN` or `N` argument names, if it has exercises.
    fn stage_exercises_by_name(&self, arg: &str) -> Option<u32> {
        let number = arg
            .strip_prefix("stage")
            .unwrap_or(arg)
            .parse::<u32>()
            .ok()?;
        self.stage_exercises(number).next().map(|_| number)
    }

    /// The chapter of a stage.
    pub(crate) fn chapter(&self, stage: u32) -> Option<&Chapter> {
        self.chapters.iter().find(|c| c.stage == stage)
    }

    /// The stages that have exercises, in book order.
    pub(crate) fn stages(&self) -> Vec<u32> {
        let mut stages: Vec<u32> = Vec::new();
        for ex in &self.exercises {
            if !stages.contains(&ex.stage()) {
                stages.push(ex.stage());
            }
        }
        stages
    }

    /// The crates that hold exercises, in the order of their first exercise.
    pub(crate) fn crates(&self) -> Vec<&str> {
        let mut crates: Vec<&str> = Vec::new();
        for ex in &self.exercises {
            if !crates.contains(&ex.crate_name.as_str()) {
                crates.push(&ex.crate_name);
            }
        }
        crates
    }

    /// The exercises of `ex`'s stage that come before it, in book order.
    pub(crate) fn earlier_in_stage(&self, ex: &Exercise) -> Vec<&Exercise> {
        if self
            .chapter(ex.stage())
            .is_some_and(|c| c.order_unenforced.is_some())
        {
            return Vec::new();
        }
        self.exercises
            .iter()
            .take_while(|other| other.id != ex.id)
            .filter(|other| other.stage() == ex.stage())
            .collect()
    }

    /// The exercises of `ex`'s stage that come after it and whose `also_breaks` say
    /// that they break `ex`'s tests: while one of them is unsolved, some of
    /// `ex`'s tests stay red.
    pub(crate) fn later_needed_by(&self, ex: &Exercise) -> Vec<&Exercise> {
        self.exercises
            .iter()
            .skip_while(|other| other.id != ex.id)
            .skip(1)
            .filter(|later| later.stage() == ex.stage() && later.breaks_tests_of(ex))
            .collect()
    }
}

/// The number in a stage crate's name: `stage12-x` → 12.
pub(crate) fn stage_number(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("stage")?;
    let digits = rest.find('-')?;
    if digits == 0
        || rest.len() == digits + 1
        || !rest[..digits].bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    rest[..digits].parse().ok()
}

/// The workspace's members, as listed in the root `Cargo.toml`.
pub(crate) fn workspace_members(root: &Path) -> Result<Vec<String>, Error> {
    #[derive(Deserialize)]
    struct Root {
        workspace: Workspace,
    }
    #[derive(Deserialize)]
    struct Workspace {
        members: Vec<String>,
    }
    let path = root.join("Cargo.toml");
    let text = fs::read_to_string(&path).map_err(Error::io("read", &path))?;
    let parsed: Root =
        toml::from_str(&text).map_err(|source| Error::Toml { path, source })?;
    Ok(parsed.workspace.members)
}

/// The stage crates among the workspace's `members`: those whose name (a top-level
/// directory) starts `stage<N>-`, several per stage possible, sorted by stage and
/// otherwise in member order.
pub(crate) fn stage_crates_of(members: Vec<String>) -> Vec<String> {
    let mut stages: Vec<String> = members
        .into_iter()
        .filter(|m| stage_number(m).is_some() && !m.contains('/'))
        .collect();
    stages.sort_by_key(|s| stage_number(s));
    stages
}

/// The workspace's stage crates (see [`stage_crates_of`]).
pub(crate) fn stage_crates(root: &Path) -> Result<Vec<String>, Error> {
    Ok(stage_crates_of(workspace_members(root)?))
}

/// Every exercise region in the stage crates: `(file from root, id, line)`, in path
/// order. A member whose directory does not exist (yet) has none.
pub(crate) fn regions_in_stages(
    root: &Path,
) -> Result<Vec<(String, String, usize)>, Error> {
    let mut files = Vec::new();
    for stage in stage_crates(root)? {
        let dir = root.join(&stage);
        collect_rust_files(&dir, &mut files).map_err(Error::io("list", &dir))?;
    }
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).map_err(Error::io("read", &file))?;
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
    /// A whole stage, all its crates: `stage5` or `5`.
    Stage(u32),
    /// One crate of a stage: `stage5-storage`.
    Crate(String),
    /// One exercise.
    Exercise(&'a Exercise),
}

impl Manifest {
    /// Resolves `stage1`, `1`, a stage crate's name such as `stage5-storage`, or an
    /// exercise id. `stage_crates` are the workspace's stage crates, so that a
    /// stage or crate without exercises gets a clear message. Anything else is a
    /// usage error that suggests what the learner may have meant.
    pub(crate) fn resolve<'a>(
        &'a self,
        arg: &str,
        stage_crates: &[String],
    ) -> Result<Target<'a>, Error> {
        if let Some(ex) = self.exercise(arg) {
            return Ok(Target::Exercise(ex));
        }
        let listed_crate = self.exercises.iter().any(|ex| ex.crate_name == arg);
        if listed_crate {
            return Ok(Target::Crate(arg.to_string()));
        }
        if stage_crates.iter().any(|c| c == arg) {
            let stage = stage_number(arg).unwrap_or(0);
            let others = self
                .crates()
                .into_iter()
                .filter(|c| stage_number(c) == Some(stage))
                .collect::<Vec<_>>();
            return Err(Error::Usage(if others.is_empty() {
                format!("{arg} has no exercises yet")
            } else {
                format!(
                    "{arg} has no exercises; stage {stage}'s are in {} (or name the whole stage: \
                     `stage{stage}`)",
                    others.join(", ")
                )
            }));
        }
        let number = arg.strip_prefix("stage").unwrap_or(arg).parse::<u32>().ok();
        if let Some(stage) = number {
            if self.stage_exercises(stage).next().is_some() {
                return Ok(Target::Stage(stage));
            }
            if stage_crates.iter().any(|c| stage_number(c) == Some(stage))
                || self.chapter(stage).is_some()
            {
                return Err(Error::Usage(format!(
                    "stage {stage} has no exercises yet"
                )));
            }
        }
        let stage_names: Vec<String> =
            self.stages().iter().map(|n| format!("stage{n}")).collect();
        let candidates = self
            .exercises
            .iter()
            .map(|ex| ex.id.as_str())
            .chain(stage_crates.iter().map(String::as_str))
            .chain(stage_names.iter().map(String::as_str));
        Err(Error::Usage(match did_you_mean(arg, candidates) {
            Some(near) => {
                format!("no exercise or stage `{arg}`; did you mean `{near}`?")
            }
            None => format!(
                "`{arg}` is neither an exercise id (like `ex1-split-key`) nor a stage (the stages \
                 with exercises are {}; a stage may also be named by number, or by one of its \
                 crates, like `stage1-store`)",
                stage_names.join(", ")
            ),
        }))
    }

    /// The exercises a target names, in book order.
    pub(crate) fn exercises_of(&self, target: &Target<'_>) -> Vec<&Exercise> {
        match target {
            Target::Exercise(ex) => self
                .exercises
                .iter()
                .filter(|listed| listed.id == ex.id)
                .collect(),
            Target::Crate(name) => self
                .exercises
                .iter()
                .filter(|ex| ex.crate_name == *name)
                .collect(),
            Target::Stage(stage) => self.stage_exercises(*stage).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[[chapter]]
stage = 1
title = "1. The indexed store"
page = "stage1/index.md"
exercises_page = "stage1/exercises.md"
minutes = 30

[[chapter]]
stage = 5
title = "5. The watch cache"
page = "stage5/index.md"
exercises_page = "stage5/exercises.md"
minutes = 60

[[exercise]]
id = "ex1-split-key"
crate = "stage1-store"
file = "stage1-store/src/store.rs"
title = "Split a key"
page = "stage1/index.md#keys"
tests = "ex1_split_key"
hints = ["one", "two"]
minutes = 10

[[exercise]]
id = "ex1-update-index"
crate = "stage1-store"
file = "stage1-store/src/thread_safe_store.rs"
title = "Update an index"
page = "stage1/index.md"
tests = "ex1_update_index"
also_breaks = ["store_scenarios::", "ex1_split_key::"]
hints = ["one", "two", "three"]
minutes = 20

[[exercise]]
id = "ex5-transform"
crate = "stage5-storage"
file = "stage5-storage/src/etcd3/watcher.rs"
title = "Transform"
page = "stage5/storage.md"
tests = "ex5_transform"
hints = ["one", "two"]
minutes = 10

[[exercise]]
id = "ex5-resize"
crate = "stage5-cacher"
file = "stage5-cacher/src/watch_cache.rs"
title = "Resize"
page = "stage5/cacher.md"
tests = "ex5_resize"
hints = ["one", "two"]
minutes = 10
"#;

    fn good() -> Manifest {
        Manifest::parse(GOOD).unwrap()
    }

    fn stage_crates() -> Vec<String> {
        stage_crates_of(
            [
                "stage1-store",
                "stage4-shared-informer",
                "apimachinery",
                "stage5-storage",
                "stage5-cacher",
                "stage5-apiserver",
                "tools/watch-fanout",
                "xtask",
            ]
            .map(String::from)
            .to_vec(),
        )
    }

    #[test]
    fn a_good_manifest_parses_and_passes() {
        let manifest = good();
        assert_eq!(manifest.problems(), Vec::<String>::new());
        assert_eq!(manifest.exercises.len(), 4);
        assert_eq!(manifest.chapters[1].stage, 5);
        assert_eq!(manifest.exercises[2].crate_name, "stage5-storage");
        assert_eq!(manifest.exercises[2].stage(), 5);
        assert!(manifest.exercises[0].also_breaks.is_empty());
        assert_eq!(manifest.stages(), [1, 5]);
        assert_eq!(
            manifest.crates(),
            ["stage1-store", "stage5-storage", "stage5-cacher"]
        );
        assert_eq!(
            manifest.stub_note(&manifest.exercises[0]),
            region::Note {
                message: "ex1-split-key: Split a key".into(),
                page: "book/src/stage1/exercises/ex1-split-key.md".into(),
            }
        );
        assert_eq!(
            manifest.exercise_page(&manifest.exercises[3]),
            "stage5/exercises/ex5-resize.md"
        );
        let ids = |exercises: Vec<&Exercise>| -> Vec<String> {
            exercises.iter().map(|ex| ex.id.clone()).collect()
        };
        assert_eq!(
            ids(manifest.stage_exercises(5).collect()),
            ["ex5-transform", "ex5-resize"]
        );
        assert_eq!(
            ids(manifest.earlier_in_stage(&manifest.exercises[3])),
            ["ex5-transform"]
        );
        assert_eq!(
            ids(manifest.earlier_in_stage(&manifest.exercises[0])),
            Vec::<String>::new()
        );
    }

    #[test]
    fn stage_crates_are_every_stage_member() {
        assert_eq!(
            stage_crates(),
            [
                "stage1-store",
                "stage4-shared-informer",
                "stage5-storage",
                "stage5-cacher",
                "stage5-apiserver"
            ]
        );
    }

    #[test]
    fn the_old_format_is_refused() {
        let old = GOOD.replacen("stage = 1", "stage = \"stage1-store\"", 1);
        let err = Manifest::parse(&old).unwrap_err().to_string();
        assert!(err.contains("invalid type"), "{err}");
        let old =
            GOOD.replace("crate = \"stage1-store\"", "stage = \"stage1-store\"");
        let err = Manifest::parse(&old).unwrap_err().to_string();
        assert!(err.contains("unknown field `stage`"), "{err}");
    }

    #[test]
    fn unknown_fields_are_refused() {
        let err = Manifest::parse(
            &GOOD.replace("minutes = 20", "minutes = 20\nhint = \"x\""),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("unknown field"), "{err}");
    }

    #[test]
    fn problems_name_the_exercise() {
        let bad = GOOD
            .replace("id = \"ex1-update-index\"", "id = \"ex2-split-key\"")
            .replace("tests = \"ex1_update_index\"", "tests = \"\"")
            .replace(
                "hints = [\"one\", \"two\"]\nminutes = 10\n\n[[exercise]]\nid = \"ex2",
                "hints = [\"one\"]\nminutes = 10\n\n[[exercise]]\nid = \"ex2",
            )
            .replace("minutes = 20", "minutes = 0")
            .replace(
                "file = \"stage1-store/src/thread_safe_store.rs\"",
                "file = \"src/x.rs\"",
            )
            .replace("crate = \"stage5-cacher\"", "crate = \"cacher\"");
        let problems = Manifest::parse(&bad).unwrap().problems();
        assert_eq!(
            problems,
            [
                "exercise `ex1-split-key`: needs 2 or 3 hints, has 1",
                "exercise `ex2-split-key`: the id says stage 2, but `crate = \"stage1-store\"` is a stage 1 crate",
                "exercise `ex2-split-key`: `file` must lie in the crate's directory, `stage1-store/`",
                "exercise `ex2-split-key`: `tests` is empty",
                "exercise `ex2-split-key`: `tests` must carry the id, as in \"ex2_split_key\"",
                "exercise `ex2-split-key`: `minutes` must be more than 0",
                "exercise `ex5-resize`: `crate = \"cacher\"` is not a stage crate name like `stage1-store`",
                "exercise `ex5-resize`: `file` must lie in the crate's directory, `cacher/`",
            ]
        );
    }

    #[test]
    fn duplicate_ids_chapters_and_missing_chapters_are_problems() {
        let mut text = GOOD
            .replace("ex1-update-index", "ex1-split-key")
            .replace("stage = 5", "stage = 1");
        text.push_str(
            "\n[[exercise]]\nid = \"ex3-a\"\ncrate = \"stage3-reflector\"\nfile = \"stage3-reflector/src/a.rs\"\n\
             title = \"A\"\npage = \"p\"\ntests = \"ex3_a\"\nhints = [\"a\", \"b\"]\nminutes = 5\n",
        );
        let problems = Manifest::parse(&text).unwrap().problems();
        for expected in [
            "chapter `5. The watch cache`: another chapter already has `stage = 1`",
            "exercise `ex1-split-key`: the id appears twice",
            "exercise `ex1-split-key`: `tests` must carry the id, as in \"ex1_split_key\"",
            "exercise `ex5-transform`: no `[[chapter]]` has `stage = 5`",
            "exercise `ex3-a`: no `[[chapter]]` has `stage = 3`",
        ] {
            assert!(
                problems.contains(&expected.to_string()),
                "{expected}\n{problems:#?}"
            );
        }
        let zero = GOOD.replace("stage = 5", "stage = 0");
        assert!(
            Manifest::parse(&zero).unwrap().problems()[0]
                .contains("`stage` must be a stage number, 1 or more")
        );
    }

    #[test]
    fn book_order_is_enforced() {
        let text = GOOD.to_string()
            + "\n[[exercise]]\nid = \"ex1-late\"\ncrate = \"stage1-store\"\nfile = \"stage1-store/a.rs\"\n\
               title = \"A\"\npage = \"p\"\ntests = \"ex1_late\"\nhints = [\"a\", \"b\"]\nminutes = 5\n";
        let problems = Manifest::parse(&text).unwrap().problems();
        assert_eq!(
            problems,
            [
                "exercise `ex1-late`: out of book order: it comes after an exercise of a later chapter"
            ]
        );
    }

    #[test]
    fn take_home_exercises_belong_to_the_chapter_and_leave_one_in_the_room() {
        let chapter_1 = "exercises_page = \"stage1/exercises.md\"\nminutes = 30\n";
        let with = |table: &str| {
            GOOD.replacen(
                chapter_1,
                &format!("{chapter_1}\n[chapter.take_home]\n{table}\n"),
                1,
            )
        };
        let manifest =
            Manifest::parse(&with("ex1-split-key = \"the talk covers it\""))
                .unwrap();
        assert_eq!(manifest.problems(), Vec::<String>::new());
        let chapter = &manifest.chapters[0];
        assert!(chapter.is_take_home(&manifest.exercises[0]));
        assert!(!chapter.is_take_home(&manifest.exercises[1]));
        assert!(manifest.chapters[1].take_home.is_empty());

        let problems = Manifest::parse(&with(
            "ex1-split-key = \" \"\nex1-update-index = \"r\"\nex5-resize = \"r\"",
        ))
        .unwrap()
        .problems();
        assert_eq!(
            problems,
            [
                "chapter `1. The indexed store`: `take_home` names `ex1-split-key` without a reason",
                "chapter `1. The indexed store`: `take_home` names `ex5-resize`, which is not an \
                 exercise of this chapter",
                "chapter `1. The indexed store`: every exercise is `take_home`; keep at least one \
                 for the room",
            ]
        );
    }

    #[test]
    fn crates_must_be_members() {
        let manifest = good();
        let members = ["stage1-store", "stage5-cacher", "xtask"].map(String::from);
        assert_eq!(
            manifest.member_problems(&members, None),
            [
                "crate `stage5-storage` (of ex5-transform) is not a member of the workspace: add \
                 it to `[workspace] members` in the root Cargo.toml, or fix `crate`"
            ]
        );
        let only = BTreeSet::from(["ex1-split-key"]);
        assert!(manifest.member_problems(&members, Some(&only)).is_empty());
    }

    #[test]
    fn targets_resolve() {
        let manifest = good();
        let stages = stage_crates();
        for arg in ["stage1", "1"] {
            assert_eq!(manifest.resolve(arg, &stages).unwrap(), Target::Stage(1));
        }
        assert_eq!(
            manifest.resolve("stage1-store", &stages).unwrap(),
            Target::Crate("stage1-store".into())
        );
        let ids = |arg: &str| -> Vec<String> {
            let target = manifest.resolve(arg, &stages).unwrap();
            manifest
                .exercises_of(&target)
                .iter()
                .map(|ex| ex.id.clone())
                .collect()
        };
        assert_eq!(ids("stage5"), ["ex5-transform", "ex5-resize"]);
        assert_eq!(ids("5"), ["ex5-transform", "ex5-resize"]);
        assert_eq!(ids("stage5-storage"), ["ex5-transform"]);
        assert_eq!(ids("stage5-cacher"), ["ex5-resize"]);
        assert_eq!(ids("ex1-split-key"), ["ex1-split-key"]);
        let usage = |arg: &str| -> String {
            match manifest.resolve(arg, &stages) {
                Err(Error::Usage(message)) => message,
                other => panic!("{arg}: {other:?}"),
            }
        };
        assert_eq!(usage("stage4"), "stage 4 has no exercises yet");
        assert_eq!(
            usage("stage4-shared-informer"),
            "stage4-shared-informer has no exercises yet"
        );
        assert_eq!(
            usage("stage5-apiserver"),
            "stage5-apiserver has no exercises; stage 5's are in stage5-storage, stage5-cacher (or \
             name the whole stage: `stage5`)"
        );
        assert_eq!(
            usage("ex1-splt-key"),
            "no exercise or stage `ex1-splt-key`; did you mean `ex1-split-key`?"
        );
        assert_eq!(
            usage("stgae5"),
            "no exercise or stage `stgae5`; did you mean `stage5`?"
        );
        assert_eq!(
            usage("stage5-storag"),
            "no exercise or stage `stage5-storag`; did you mean `stage5-storage`?"
        );
        assert!(
            usage("42").contains("the stages with exercises are stage1, stage5"),
            "{}",
            usage("42")
        );
        assert!(
            !usage("42").contains("ex1-update-index"),
            "no list of every id"
        );
    }

    #[test]
    fn exercise_ids_get_suggestions() {
        let manifest = good();
        let message = |id: &str| manifest.find_exercise(id).unwrap_err().to_string();
        assert_eq!(
            message("ex1-split-kye"),
            "no exercise `ex1-split-kye`; did you mean `ex1-split-key`?"
        );
        assert!(
            message("stage1")
                .contains("is a stage; this command takes one exercise id")
        );
        assert!(message("zzz").starts_with("no exercise `zzz`; ids look like"));
        assert_eq!(
            manifest.find_exercise("ex5-resize").unwrap().id,
            "ex5-resize"
        );
    }

    #[test]
    fn later_exercises_that_break_earlier_tests() {
        let text = GOOD.replace(
            "tests = \"ex1_split_key\"\nhints",
            "tests = \"ex1_split_key\"\nalso_breaks = [\"ex1_update_index::\"]\nhints",
        );
        let manifest = Manifest::parse(&text).unwrap();
        let split = &manifest.exercises[0];
        let update = &manifest.exercises[1];
        assert!(update.breaks_tests_of(split));
        assert!(split.breaks_tests_of(update));
        let later: Vec<&str> = manifest
            .later_needed_by(split)
            .iter()
            .map(|ex| ex.id.as_str())
            .collect();
        assert_eq!(later, ["ex1-update-index"]);
        assert!(
            manifest.later_needed_by(update).is_empty(),
            "only later ones count"
        );
    }

    #[test]
    fn stage_numbers() {
        assert_eq!(stage_number("stage1-store"), Some(1));
        assert_eq!(stage_number("stage12-x"), Some(12));
        assert_eq!(stage_number("stage-x"), None);
        assert_eq!(stage_number("stage1-"), None);
        assert_eq!(stage_number("stage+1-x"), None);
        assert_eq!(stage_number("xtask"), None);
    }
}
