//! `cargo xtask exercise schedule`: one-day and two-day workshop schedules, computed
//! from the manifest's minutes, and the generated block in the facilitator's guide.
//! The same command regenerates the other generated files: the hints on the
//! exercises' own pages (see [`pages`](super::pages)) and `exercises.lock` (see
//! [`lock`](super::lock)).
//!
//! A chapter is taught as: the facilitator's talk and live demo (the chapter's
//! `minutes`), its exercises one after another (each exercise's `minutes`), then a
//! short debrief. A day opens with the welcome and set-up (first day) or a recap
//! (later days), and closes with a wrap-up by 17:30. Breaks are placed at the first
//! session boundary after their time: coffee at 10:30, lunch at 12:30, coffee at
//! 15:00. What does not fit by the end of the day is listed for self-study.
//!
//! A chapter may name exercises as take-home (`[chapter.take_home]` in the
//! manifest, each with its reason): its talk covers them, but the room does only
//! the chapter's other exercises, and the day lists them after its table. That is
//! how the two-day schedule keeps chapters 1 to 5 in the room: chapters 1 to 3 on
//! day 1, which would otherwise run past 18:00, and 4 and 5 on day 2; chapter 6
//! (the controllers, which needs only chapter 4) does not fit and is left for
//! self-study. The test `the_manifest_s_two_day_schedule_teaches_chapters_1_to_5`
//! guards it.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use super::manifest::Manifest;
use crate::error::Error;

/// The facilitator's guide, from the workspace root.
pub(crate) const GUIDE: &str = "book/src/facilitator.md";
/// The line that opens the generated block.
pub(crate) const BEGIN: &str = "<!-- schedule:begin -->";
/// The line that closes the generated block.
pub(crate) const END: &str = "<!-- schedule:end -->";

/// When a day starts, in minutes after midnight (09:00).
const DAY_START: u32 = 9 * 60;
/// When a day must be over (17:30): a workshop day of eight and a half hours,
/// breaks included, so that day 1 of two holds chapters 1 to 3.
const DAY_END: u32 = 17 * 60 + 30;
/// The first day's opening: welcome, everyone's set-up checked, `exercise start`.
const WELCOME: u32 = 30;
/// A later day's opening: what we built yesterday, questions.
const RECAP: u32 = 15;
/// After a chapter's exercises: the reference solution, what people tried.
const DEBRIEF: u32 = 10;
/// A day's last session.
const WRAP_UP: u32 = 15;

/// A break: not before `at`, lasting `minutes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pause {
    /// What the break is called.
    label: &'static str,
    /// The earliest start, in minutes after midnight.
    at: u32,
    /// Its length.
    minutes: u32,
}

/// The breaks of every day.
const PAUSES: [Pause; 3] = [
    Pause {
        label: "Break",
        at: 10 * 60 + 30,
        minutes: 15,
    },
    Pause {
        label: "Lunch",
        at: 12 * 60 + 30,
        minutes: 60,
    },
    Pause {
        label: "Break",
        at: 15 * 60,
        minutes: 15,
    },
];

/// What kind of session a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Welcome, recap, talks, debriefs, wrap-up: the facilitator speaks.
    Talk,
    /// Learners work on an exercise.
    Exercise,
    /// A break or lunch.
    Pause,
}

/// One row of a day's schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Session {
    /// Start, in minutes after midnight.
    pub(crate) start: u32,
    /// Length in minutes.
    pub(crate) minutes: u32,
    /// What happens.
    pub(crate) label: String,
    /// What kind of session it is.
    pub(crate) kind: Kind,
}

/// A chapter as the schedule sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    /// The chapter's title.
    pub(crate) title: String,
    /// Talk and demo minutes.
    pub(crate) talk: u32,
    /// The exercises done in the room: `(label, minutes)`.
    pub(crate) exercises: Vec<(String, u32)>,
    /// The take-home exercises: `(label, reason)`. The talk covers them; they
    /// take no time in the schedule.
    pub(crate) take_home: Vec<(String, String)>,
}

impl Unit {
    /// Minutes of teaching and exercises, without breaks.
    fn content(&self) -> u32 {
        self.talk + self.exercises.iter().map(|(_, m)| m).sum::<u32>() + DEBRIEF
    }
}

/// A day being filled, session by session.
#[derive(Debug, Clone)]
struct Day {
    /// The sessions so far.
    sessions: Vec<Session>,
    /// The clock: when the next session starts.
    now: u32,
    /// The breaks not taken yet.
    pauses: Vec<Pause>,
}

impl Day {
    /// An empty day at 09:00.
    fn new() -> Day {
        Day {
            sessions: Vec::new(),
            now: DAY_START,
            pauses: PAUSES.to_vec(),
        }
    }

    /// Adds a session, after any break that is due.
    fn place(&mut self, label: impl Into<String>, minutes: u32, kind: Kind) {
        while let Some(pause) =
            self.pauses.first().copied().filter(|p| self.now >= p.at)
        {
            self.pauses.remove(0);
            self.push(pause.label.to_string(), pause.minutes, Kind::Pause);
        }
        self.push(label.into(), minutes, kind);
    }

    /// Appends a session at the current time.
    fn push(&mut self, label: String, minutes: u32, kind: Kind) {
        self.sessions.push(Session {
            start: self.now,
            minutes,
            label,
            kind,
        });
        self.now += minutes;
    }

    /// Whether `sessions`, then the wrap-up, still end by [`DAY_END`].
    fn fits(&self, sessions: &[(String, u32, Kind)]) -> bool {
        let mut trial = self.clone();
        for (label, minutes, kind) in sessions {
            trial.place(label.clone(), *minutes, *kind);
        }
        trial.place("wrap-up", WRAP_UP, Kind::Talk);
        trial.now <= DAY_END
    }
}

/// A laid-out day, and what did not fit in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DayPlan {
    /// The day's sessions, wrap-up included.
    pub(crate) sessions: Vec<Session>,
    /// When the day ends.
    pub(crate) end: u32,
    /// Exercises and chapters left for self-study: they did not fit.
    pub(crate) left_over: Vec<String>,
    /// The take-home exercises of the chapters taught this day: `(label,
    /// reason)`.
    pub(crate) take_home: Vec<(String, String)>,
}

/// The sessions of a chapter with its first `k` exercises.
fn chapter_sessions(unit: &Unit, k: usize) -> Vec<(String, u32, Kind)> {
    let mut sessions = vec![(
        format!("{}: talk and demo", unit.title),
        unit.talk,
        Kind::Talk,
    )];
    for (label, minutes) in &unit.exercises[..k] {
        sessions.push((label.clone(), *minutes, Kind::Exercise));
    }
    sessions.push((format!("{}: debrief", unit.title), DEBRIEF, Kind::Talk));
    sessions
}

/// Lays out one day: the opening, as many chapters as fit (the last one possibly
/// without its last exercises, but with at least half of them), the wrap-up. The
/// take-home exercises of every chapter whose talk is given go with the day.
pub(crate) fn lay_out_day(units: &[Unit], first: bool, last: bool) -> DayPlan {
    let mut day = Day::new();
    if first {
        day.place("Welcome and set-up", WELCOME, Kind::Talk);
    } else {
        day.place("Recap and questions", RECAP, Kind::Talk);
    }
    let mut left_over = Vec::new();
    let mut take_home = Vec::new();
    let mut full = true;
    let mut placed = 0;
    for unit in units {
        if !full {
            left_over.push(format!("{} (the whole chapter)", unit.title));
            continue;
        }
        // A chapter is cut short only to at least half of its exercises, unless it
        // is the day's first: a talk followed by one exercise out of five is
        // not worth its slot.
        let least = if placed == 0 {
            0
        } else {
            unit.exercises.len().div_ceil(2)
        };
        let fitting = (least..=unit.exercises.len())
            .rev()
            .find(|&k| day.fits(&chapter_sessions(unit, k)));
        if fitting.is_some() {
            placed += 1;
        }
        match fitting {
            Some(k) => {
                for (label, minutes, kind) in chapter_sessions(unit, k) {
                    day.place(label, minutes, kind);
                }
                take_home.extend(unit.take_home.iter().cloned());
                if k < unit.exercises.len() {
                    full = false;
                    left_over.extend(
                        unit.exercises[k..].iter().map(|(label, _)| label.clone()),
                    );
                }
            }
            None => {
                full = false;
                left_over.push(format!("{} (the whole chapter)", unit.title));
            }
        }
    }
    day.place(
        if last {
            "Wrap-up and feedback"
        } else {
            "Wrap-up and questions"
        },
        WRAP_UP,
        Kind::Talk,
    );
    DayPlan {
        end: day.now,
        sessions: day.sessions,
        left_over,
        take_home,
    }
}

/// Where to end day 1 of a two-day workshop: the chapter boundary that best balances
/// the days' content (on a tie, the earlier one). `None` with fewer than two
/// chapters.
pub(crate) fn two_day_split(units: &[Unit]) -> Option<usize> {
    (1..units.len()).min_by_key(|&split| {
        let first: u32 =
            units[..split].iter().map(Unit::content).sum::<u32>() + WELCOME;
        let second: u32 =
            units[split..].iter().map(Unit::content).sum::<u32>() + RECAP;
        first.max(second)
    })
}

/// The schedule's units, from the manifest: each chapter that has exercises, in book
/// order, with its take-home exercises set apart.
pub(crate) fn units(manifest: &Manifest) -> Vec<Unit> {
    manifest
        .chapters
        .iter()
        .map(|chapter| {
            let (home, room): (Vec<_>, Vec<_>) = manifest
                .stage_exercises(chapter.stage)
                .partition(|ex| chapter.is_take_home(ex));
            Unit {
                title: chapter.title.clone(),
                talk: chapter.minutes,
                exercises: room
                    .into_iter()
                    .map(|ex| {
                        (format!("Exercise: {} (`{}`)", ex.title, ex.id), ex.minutes)
                    })
                    .collect(),
                take_home: home
                    .into_iter()
                    .map(|ex| {
                        (
                            format!(
                                "{} (`{}`, {} min)",
                                ex.title, ex.id, ex.minutes
                            ),
                            chapter.take_home[&ex.id].clone(),
                        )
                    })
                    .collect(),
            }
        })
        .filter(|unit| !unit.exercises.is_empty() || !unit.take_home.is_empty())
        .collect()
}

/// `HH:MM`.
fn clock(minutes: u32) -> String {
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

/// One day as a Markdown table, with its summary line.
fn render_day(out: &mut String, plan: &DayPlan) {
    out.push_str("| Time | Session | Minutes |\n|---|---|--:|\n");
    for session in &plan.sessions {
        let label = match session.kind {
            Kind::Pause => format!("*{}*", session.label),
            Kind::Exercise => session.label.clone(),
            Kind::Talk => session.label.clone(),
        };
        let _ = writeln!(
            out,
            "| {} | {label} | {} |",
            clock(session.start),
            session.minutes
        );
    }
    let _ = writeln!(out, "| {} | End | |", clock(plan.end));
    let minutes_of = |kind: Kind| -> u32 {
        plan.sessions
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| s.minutes)
            .sum()
    };
    let _ = writeln!(
        out,
        "\nTalks and demos {} min, exercises {} min, breaks {} min.",
        minutes_of(Kind::Talk),
        minutes_of(Kind::Exercise),
        minutes_of(Kind::Pause)
    );
    if !plan.take_home.is_empty() {
        out.push_str(
            "\n**Take home.** The chapter's talk covers these, and the room does its other \
             exercises; participants do them after the workshop:\n\n",
        );
        for (label, reason) in &plan.take_home {
            let _ = writeln!(out, "- {label}: {}.", reason.trim_end_matches('.'));
        }
    }
    if !plan.left_over.is_empty() {
        let _ = writeln!(
            out,
            "\n**Self-study.** Not taught in this schedule, because it does not fit in the day: \
             {}.",
            plan.left_over.join("; ")
        );
    }
}

/// The generated Markdown: both schedules.
pub(crate) fn render(manifest: &Manifest) -> String {
    let units = units(manifest);
    let mut out = String::new();
    out.push_str(
        "<!-- Generated by `cargo xtask exercise schedule` from exercises.toml. Do not edit by \
         hand: CI runs `cargo xtask exercise schedule --check`. -->\n\n",
    );
    let room: usize = units.iter().map(|u| u.exercises.len()).sum();
    let home: usize = units.iter().map(|u| u.take_home.len()).sum();
    let _ = writeln!(
        out,
        "Computed from `exercises.toml`: {} chapter(s) with {} exercise(s), {home} of them \
         take-home. Each chapter is a talk with a live demo, its exercises, and a \
         {DEBRIEF}-minute debrief. A day runs from {} to {} at the latest. Breaks fall at the \
         first session boundary after 10:30, 12:30 (lunch) and 15:00.\n",
        units.len(),
        room + home,
        clock(DAY_START),
        clock(DAY_END),
    );
    out.push_str("### One day {#one-day}\n\n");
    let one_day = lay_out_day(&units, true, true);
    render_day(&mut out, &one_day);
    out.push_str("\n### Two days {#two-days}\n\n");
    match two_day_split(&units) {
        None => {
            out.push_str(
                "Only one chapter has exercises so far, and it fits in the one-day schedule. The \
                 two-day schedule splits at a chapter boundary; it appears here once a second \
                 chapter has exercises.\n",
            );
        }
        Some(split) => {
            out.push_str("#### Day 1 {#day-1}\n\n");
            render_day(&mut out, &lay_out_day(&units[..split], true, false));
            out.push_str("\n#### Day 2 {#day-2}\n\n");
            render_day(&mut out, &lay_out_day(&units[split..], false, true));
        }
    }
    out
}

/// What the two-day schedule leaves for self-study, over both days (nothing with
/// fewer than two chapters, which have no two-day schedule).
pub(crate) fn two_day_self_study(units: &[Unit]) -> Vec<String> {
    let Some(split) = two_day_split(units) else {
        return Vec::new();
    };
    let mut left = lay_out_day(&units[..split], true, false).left_over;
    left.extend(lay_out_day(&units[split..], false, true).left_over);
    left
}

/// Splits the guide into the text before the generated block (through the begin
/// marker), the block, and the text from the end marker on.
fn split_guide(text: &str) -> Result<(&str, &str, &str), Error> {
    let begin = text
        .find(BEGIN)
        .ok_or_else(|| Error::Check(format!("{GUIDE} has no `{BEGIN}` line")))?;
    let body_start = begin + BEGIN.len();
    let end = text[body_start..]
        .find(END)
        .map(|at| body_start + at)
        .ok_or_else(|| {
            Error::Check(format!("{GUIDE} has no `{END}` line after `{BEGIN}`"))
        })?;
    Ok((&text[..body_start], &text[body_start..end], &text[end..]))
}

/// The guide's text with the generated block replaced by `block`.
pub(crate) fn with_block(text: &str, block: &str) -> Result<String, Error> {
    let (head, _, tail) = split_guide(text)?;
    Ok(format!("{head}\n{block}{tail}"))
}

/// `cargo xtask exercise schedule [--check]`: prints the schedules and updates the
/// generated files: the schedules in the facilitator's guide, the hints on the
/// exercises' own pages (see [`pages`](super::pages)) and `exercises.lock` (see
/// [`lock`](super::lock)). With `check`, changes nothing and fails if any is stale.
pub(crate) fn schedule(root: &Path, check: bool) -> Result<(), Error> {
    let manifest = Manifest::load(root)?;
    let block = render(&manifest);
    let path = root.join(GUIDE);
    let text = fs::read_to_string(&path).map_err(Error::io("read", &path))?;
    let updated = with_block(&text, &block)?;
    let mut stale = Vec::new();
    if updated != text {
        if !check {
            fs::write(&path, &updated).map_err(Error::io("write", &path))?;
        }
        stale.push(GUIDE.to_string());
    }
    let (pages, mut notes) = super::pages::update(root, &manifest, check)?;
    stale.extend(pages);
    let (lock_stale, lock_notes) = super::lock::update(root, &manifest, check)?;
    if lock_stale {
        stale.push(super::lock::FILE.to_string());
    }
    notes.extend(lock_notes);
    notes.extend(two_day_self_study(&units(&manifest)).into_iter().map(|left| {
        format!(
            "the two-day schedule leaves {left} as self-study; shorten minutes or mark \
             exercises as take-home in {}",
            super::manifest::FILE
        )
    }));
    if !check {
        print!("{block}");
        println!();
    }
    for note in notes {
        println!("schedule: note: {note}");
    }
    match (check, stale.is_empty()) {
        (_, true) => {
            println!(
                "schedule: {GUIDE}, the exercises' pages and {} are up to date",
                super::lock::FILE
            );
            Ok(())
        }
        (false, false) => {
            println!("schedule: updated {}", stale.join(", "));
            Ok(())
        }
        (true, false) => Err(Error::Check(format!(
            "out of date with exercises.toml or the reference code: {}; run `cargo xtask \
             exercise schedule` and commit the result",
            stale.join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(title: &str, talk: u32, exercises: &[u32]) -> Unit {
        Unit {
            title: title.into(),
            talk,
            exercises: exercises
                .iter()
                .enumerate()
                .map(|(i, m)| (format!("{title}.{}", i + 1), *m))
                .collect(),
            take_home: Vec::new(),
        }
    }

    fn rows(plan: &DayPlan) -> Vec<String> {
        plan.sessions
            .iter()
            .map(|s| format!("{} {} {}", clock(s.start), s.minutes, s.label))
            .collect()
    }

    #[test]
    fn a_short_day_has_a_morning_break() {
        let plan = lay_out_day(&[unit("1", 40, &[15, 20, 25, 20])], true, true);
        assert_eq!(
            rows(&plan),
            [
                "09:00 30 Welcome and set-up",
                "09:30 40 1: talk and demo",
                "10:10 15 1.1",
                "10:25 20 1.2",
                "10:45 15 Break",
                "11:00 25 1.3",
                "11:25 20 1.4",
                "11:45 10 1: debrief",
                "11:55 15 Wrap-up and feedback",
            ]
        );
        assert_eq!(plan.end, 12 * 60 + 10);
        assert!(plan.left_over.is_empty());
    }

    #[test]
    fn breaks_come_at_the_first_boundary_after_their_time() {
        let mut day = Day::new();
        for minutes in [75, 60, 60, 60, 60, 60] {
            day.place("s", minutes, Kind::Exercise);
        }
        let starts: Vec<String> = day
            .sessions
            .iter()
            .map(|s| format!("{} {}", clock(s.start), s.label))
            .collect();
        assert_eq!(
            starts,
            [
                "09:00 s",
                "10:15 s",
                "11:15 Break",
                "11:30 s",
                "12:30 Lunch",
                "13:30 s",
                "14:30 s",
                "15:30 Break",
                "15:45 s",
            ]
        );
        assert_eq!(day.now, 16 * 60 + 45);
    }

    #[test]
    fn what_does_not_fit_is_left_over() {
        // Chapter 2's second exercise would end the day at 17:35.
        let units = [
            unit("1", 60, &[60, 60]),
            unit("2", 60, &[60, 75]),
            unit("3", 30, &[20]),
        ];
        let plan = lay_out_day(&units, false, true);
        assert!(plan.end <= DAY_END, "{:?}", rows(&plan));
        assert_eq!(plan.left_over, ["2.2", "3 (the whole chapter)"]);
        assert_eq!(rows(&plan).last().unwrap(), "16:05 15 Wrap-up and feedback");
    }

    #[test]
    fn a_later_chapter_is_cut_to_no_less_than_half() {
        // After chapter 1 (ending 16:10 with its debrief), chapter 2's talk and one
        // of its four exercises would fit, but not two: the chapter is left
        // whole.
        let units = [
            unit("1", 60, &[60, 60, 60, 60]),
            unit("2", 30, &[20, 20, 20, 20]),
        ];
        let one_exercise = [unit("1", 60, &[60, 60, 60, 60]), unit("2", 30, &[20])];
        assert!(lay_out_day(&one_exercise, true, true).left_over.is_empty());
        let plan = lay_out_day(&units, true, true);
        assert_eq!(plan.left_over, ["2 (the whole chapter)"]);
        // The day's first chapter may be cut to anything.
        let plan = lay_out_day(&units[1..], true, true);
        assert!(plan.left_over.is_empty());
        let plan = lay_out_day(&[unit("1", 60, &[200, 200, 200])], true, true);
        assert_eq!(plan.left_over, ["1.2", "1.3"]);
    }

    #[test]
    fn a_chapter_whose_talk_cannot_fit_is_left_whole() {
        let units = [unit("1", 400, &[10]), unit("2", 100, &[10])];
        let plan = lay_out_day(&units, true, true);
        assert_eq!(
            plan.left_over,
            ["1 (the whole chapter)", "2 (the whole chapter)"]
        );
        assert_eq!(
            rows(&plan),
            [
                "09:00 30 Welcome and set-up",
                "09:30 15 Wrap-up and feedback"
            ]
        );
    }

    #[test]
    fn two_days_split_where_the_days_balance() {
        assert_eq!(two_day_split(&[unit("1", 30, &[30])]), None);
        // Contents: 160, 70, 70, 190 (each +10 debrief).
        let units = [
            unit("1", 50, &[100]),
            unit("2", 30, &[30]),
            unit("3", 30, &[30]),
            unit("4", 80, &[100]),
        ];
        // Split after 2: 30+160+70=260 vs 15+70+190=275; after 1: 190 vs 345; after
        // 3: 360 vs 205.
        assert_eq!(two_day_split(&units), Some(2));
    }

    #[test]
    fn take_home_exercises_take_no_time_and_go_with_their_chapter() {
        let mut reflector = unit("3", 50, &[10, 25]);
        reflector.take_home = vec![("3.x".into(), "the talk covers it".into())];
        let mut late = unit("4", 400, &[10]);
        late.take_home = vec![("4.x".into(), "r".into())];
        let plan = lay_out_day(&[reflector.clone(), late], true, true);
        assert_eq!(
            rows(&plan),
            [
                "09:00 30 Welcome and set-up",
                "09:30 50 3: talk and demo",
                "10:20 10 3.1",
                "10:30 15 Break",
                "10:45 25 3.2",
                "11:10 10 3: debrief",
                "11:20 15 Wrap-up and feedback",
            ]
        );
        // Chapter 4's talk does not fit: its take-home exercise goes with the whole
        // chapter to self-study, not to the day's take-home list.
        assert_eq!(
            plan.take_home,
            [("3.x".into(), "the talk covers it".into())]
        );
        assert_eq!(plan.left_over, ["4 (the whole chapter)"]);
        assert_eq!(reflector.content(), 50 + 10 + 25 + DEBRIEF);
    }

    #[test]
    fn units_set_take_home_exercises_apart() {
        let manifest = Manifest::parse(
            r#"
[[chapter]]
stage = 3
title = "3. The Reflector"
page = "stage3/index.md"
exercises_page = "stage3/exercises.md"
minutes = 50

[chapter.take_home]
ex3-b = "a list mode nothing later uses"

[[exercise]]
id = "ex3-a"
crate = "stage3-reflector"
file = "stage3-reflector/src/a.rs"
title = "A"
page = "p"
tests = "ex3_a"
hints = ["a", "b"]
minutes = 10

[[exercise]]
id = "ex3-b"
crate = "stage3-reflector"
file = "stage3-reflector/src/b.rs"
title = "B"
page = "p"
tests = "ex3_b"
hints = ["a", "b"]
minutes = 35
"#,
        )
        .unwrap();
        assert_eq!(manifest.problems(), Vec::<String>::new());
        let units = units(&manifest);
        assert_eq!(units[0].exercises, [("Exercise: A (`ex3-a`)".into(), 10)]);
        assert_eq!(
            units[0].take_home,
            [(
                "B (`ex3-b`, 35 min)".into(),
                "a list mode nothing later uses".into()
            )]
        );
        let block = render(&manifest);
        assert!(
            block.contains(
                "**Take home.** The chapter's talk covers these, and the room does its other \
                 exercises; participants do them after the workshop:\n\n- B (`ex3-b`, 35 min): \
                 a list mode nothing later uses.\n"
            ),
            "{block}"
        );
        assert!(
            block.contains("1 chapter(s) with 2 exercise(s), 1 of them take-home")
        );
    }

    /// The manifest's own minutes: the two-day schedule teaches chapters 1 to 5,
    /// the Reflector included, and leaves only chapter 6 for self-study.
    #[test]
    fn the_manifest_s_two_day_schedule_teaches_chapters_1_to_5() {
        let manifest =
            Manifest::parse(include_str!("../../../exercises.toml")).unwrap();
        assert_eq!(manifest.problems(), Vec::<String>::new());
        let units = units(&manifest);
        let controllers = units
            .iter()
            .position(|u| u.title == "6. Controllers")
            .expect("chapter 6");
        assert_eq!(
            two_day_self_study(&units),
            vec!["6. Controllers (the whole chapter)".to_string()]
        );
        let split = two_day_split(&units).expect("two chapters or more");
        let days = [
            lay_out_day(&units[..split], true, false),
            lay_out_day(&units[split..], false, true),
        ];
        for (n, day) in days.iter().enumerate() {
            assert!(day.end <= DAY_END, "day {}: {:?}", n + 1, rows(day));
        }
        let talks: Vec<&str> = days
            .iter()
            .flat_map(|day| &day.sessions)
            .filter_map(|s| s.label.strip_suffix(": talk and demo"))
            .collect();
        let titles: Vec<&str> = units[..controllers]
            .iter()
            .map(|u| u.title.as_str())
            .collect();
        assert_eq!(talks, titles);
        let reflector = manifest.chapter(3).expect("chapter 3");
        let in_room = days
            .iter()
            .flat_map(|day| &day.sessions)
            .filter(|s| s.kind == Kind::Exercise && s.label.contains("(`ex3-"))
            .count();
        assert!(
            in_room
                >= manifest.stage_exercises(3).count() - reflector.take_home.len()
                && in_room > 0,
            "the Reflector's exercises are done in the room"
        );
        let two_days = render(&manifest);
        let two_days = &two_days[two_days.find("### Two days").unwrap()..];
        assert!(
            two_days.contains(
                "**Self-study.** Not taught in this schedule, because it does not fit \
                 in the day: 6. Controllers (the whole chapter)."
            ),
            "{two_days}"
        );
    }

    #[test]
    fn the_block_is_replaced_between_markers() {
        let text = format!("# Guide\n\n{BEGIN}\nold\n{END}\n\nMore.\n");
        let new = with_block(&text, "new\n").unwrap();
        assert_eq!(new, format!("# Guide\n\n{BEGIN}\nnew\n{END}\n\nMore.\n"));
        assert_eq!(with_block(&new, "new\n").unwrap(), new);
        assert!(
            with_block("no markers", "x")
                .unwrap_err()
                .to_string()
                .contains("has no")
        );
        assert_eq!(clock(9 * 60 + 5), "09:05");
    }
}
