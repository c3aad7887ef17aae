//! `cargo xtask`: the workspace's tooling entry point.
//!
//! Run it through the alias in `.cargo/config.toml`:
//!
//! ```text
//! cargo xtask book build          check the book's includes, then `mdbook build book`
//! cargo xtask book serve [ARGS]   `mdbook serve book [ARGS]`, e.g. `--open` or `-p 3001`
//! ```
//!
//! Each subcommand lives in its own module; `main` only parses the command line and dispatches.
//! To add a subcommand, add a module, a line to [`USAGE`] and an arm to the `match` in
//! [`run`].

use std::env;
use std::path::PathBuf;
use std::process::ExitCode;

mod book;
// mod exercise; // `cargo xtask exercise ...` goes here.

/// The help text, printed for `help`, `-h`, `--help` and on a usage error.
const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  book build           check every {{#include}} in book/src, then build the book
                       into book/book (installs the pinned mdbook tools if needed)
  book serve [ARGS]    serve the book with live reload; ARGS go to `mdbook serve`
                       (e.g. --open, -p 3001)
  help                 print this text
";
// Add new commands to USAGE above, e.g. an `exercise` line.

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
        // ["exercise", rest @ ..] => exercise::run(&root, rest).map_err(Failure::Failed),
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
