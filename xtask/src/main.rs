//! `cargo xtask`: the workspace's tooling entry point.
//!
//! Run it through the alias in `.cargo/config.toml`:
//!
//! ```text
//! cargo xtask book build          check the book's includes, then `mdbook build book`
//! cargo xtask book serve [ARGS]   `mdbook serve book [ARGS]`, e.g. `--open` or `-p 3001`
//! cargo xtask exercise COMMAND     the exercises: start, next, check, hint, solution, reset,
//!                                  and CI's verify and schedule --check
//! ```
//!
//! Each subcommand lives in its own module; `main` only parses the command line and dispatches.
//! To add a subcommand, add a module, a line to [`USAGE`] and an arm to the `match` in
//! [`run`].

use std::env;
use std::path::PathBuf;
use std::process::ExitCode;

mod book;
mod exercise;

/// The help text, printed for `help`, `-h`, `--help` and on a usage error.
const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  book build           check every {{#include}} in book/src, then build the book
                       into book/book (installs the pinned mdbook tools if needed)
  book serve [ARGS]    serve the book with live reload; ARGS go to `mdbook serve`
                       (e.g. --open, -p 3001)
  help                 print this text

exercise commands (cargo xtask exercise ...; STAGE is stage1, 1 or stage1-store):
  start STAGE|ID       replace the exercise regions' bodies with todo!() in your
                       checkout (refuses over uncommitted changes in those files)
  next                 the next unsolved exercise: where it is, what to read, a hint
  check [ID|STAGE]     run the tests of your started exercises (or of ID/STAGE):
                       pass/fail for each, and how many are solved
  hint [ID]            the next hint (for the next exercise when no ID is given)
  solution ID          restore one region from the reference (git), show the diff
  reset ID|STAGE       make the region(s) todo!() again, discarding your code there
  verify [--timeout SECS] [--jobs N] [ID|STAGE...]
                       CI's red check: in a scratch copy, each region stubbed alone
                       must build without warnings, fail its own tests and keep the
                       stage's other tests green
  schedule [--check]   print the workshop schedules, and update the book's parts
                       generated from exercises.toml: the schedules in
                       book/src/facilitator.md and the hints on the exercises pages
                       (--check: change nothing, fail if any is stale)
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(msg)) => {
            eprintln!("xtask: {msg}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Failed(msg)) => {
            eprintln!("xtask: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// Why a subcommand did not succeed.
#[derive(Debug)]
enum Failure {
    /// The command line was not understood; the usage text is printed after the message.
    Usage(String),
    /// The command ran and failed.
    Failed(String),
}

/// Parses the command line and runs the chosen subcommand.
fn run(args: &[String]) -> Result<(), Failure> {
    let root = workspace_root();
    let strs: Vec<&str> = args.iter().map(String::as_str).collect();
    match strs.as_slice() {
        ["book", "build"] => book::build(&root).map_err(Failure::Failed),
        ["book", "serve", rest @ ..] => book::serve(&root, rest).map_err(Failure::Failed),
        ["book", "build", extra, ..] => Err(Failure::Usage(format!(
            "`book build` takes no arguments (got `{extra}`)"
        ))),
        ["book", other, ..] => Err(Failure::Usage(format!("unknown book command `{other}`"))),
        ["book"] => Err(Failure::Usage("`book` needs `build` or `serve`".into())),
        ["exercise", rest @ ..] => exercise::run(&root, rest).map_err(|e| match e {
            exercise::Error::Usage(msg) => Failure::Usage(msg),
            exercise::Error::Failed(msg) => Failure::Failed(msg),
        }),
        ["help" | "-h" | "--help"] => {
            print!("{USAGE}");
            Ok(())
        }
        [] => Err(Failure::Usage("no command given".into())),
        [other, ..] => Err(Failure::Usage(format!("unknown command `{other}`"))),
    }
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(PathBuf::from)
        .unwrap_or(manifest_dir)
}
