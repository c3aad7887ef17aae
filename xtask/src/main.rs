//! `cargo xtask`: the workspace's tooling entry point.
//!
//! Run it through the alias in `.cargo/config.toml`:
//!
//! ```text
//! cargo xtask book build          check the book's sources, build both editions
//! cargo xtask book serve [ARGS]   `mdbook serve book [ARGS]`, e.g. `--open` or `-p 3001`;
//!                                  `--lang zh-CN` serves the Chinese edition
//! cargo xtask book po-update      merge the English messages into book/po/zh-CN.po
//! cargo xtask book browser-check  every page of both editions in headless Chromium
//! cargo xtask book preprocess     the book's mdBook preprocessor: exercise stubs in the
//!                                  chapters (book.toml runs it)
//! cargo xtask exercise COMMAND     the exercises: start, next, check, hint, solution, reset,
//!                                  and CI's verify and schedule --check
//! cargo xtask protobuf-schema     write the server's protobuf table from k8s-pb and
//!                                  k8s-openapi (`--check`: fail if it is stale)
//! cargo xtask help [COMMAND]      the commands, their arguments and options
//! ```
//!
//! Each subcommand lives in its own module; `main` only parses the command line
//! (with clap's derive: [`Cli`], [`Commands`], [`BookCommand`], and
//! [`exercise::ExerciseCommand`]) and dispatches. To add a subcommand, add a module,
//! a variant to the matching enum and an arm to the `match` in [`run`]. Errors are
//! [`error::Error`]s: `main` prints them with their causes and exits with 2 for a
//! usage error (clap does the same for the ones it finds) and 1 for any other
//! failure.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod book;
mod error;
mod exercise;
mod protobuf_schema;

use error::Error;

/// The workspace's tooling: the book and the exercises.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    /// What to do.
    #[command(subcommand)]
    command: Commands,
}

/// The top-level commands.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
enum Commands {
    /// The book: check its includes and build it, or serve it with live reload
    Book {
        /// `build` or `serve`
        #[command(subcommand)]
        command: BookCommand,
    },
    /// The exercises: start, next, check, hint, solution, reset; CI's verify and
    /// schedule
    Exercise {
        /// What to do with the exercises
        #[command(subcommand)]
        command: exercise::ExerciseCommand,
    },
    /// Write stage5-apiserver's protobuf table (src/protobuf/schema.rs) from the
    /// k8s-pb and k8s-openapi sources
    ProtobufSchema {
        /// Fail if the committed table differs instead of writing it
        #[arg(long)]
        check: bool,
    },
}

/// `cargo xtask book …`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
enum BookCommand {
    /// Check every {{#include}} in book/src, then build the book into book/book
    ///
    /// Installs the pinned mdbook tools if needed.
    Build,
    /// Serve the book with live reload; ARGS go to `mdbook serve` (e.g. --open, -p
    /// 3001)
    ///
    /// Binds 127.0.0.1 unless ARGS choose a hostname.
    Serve {
        /// The edition: `en` (the default) or `zh-CN`
        #[arg(long, value_name = "LANG")]
        lang: Option<String>,
        /// Arguments for `mdbook serve`
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// Open every page of the built book in headless Chromium and fail on console
    /// errors, raw directives, broken or too-wide listings and unrendered diagrams
    ///
    /// Run `cargo xtask book build` first. Uses $CHROMIUM, or chromium on PATH.
    BrowserCheck,
    /// Merge the English pages' current messages into book/po/zh-CN.po
    ///
    /// New messages arrive untranslated and changed ones fuzzy; the build fails
    /// until each is translated. Needs GNU gettext (msgmerge, msgattrib).
    PoUpdate,
    /// The mdBook preprocessor that shows each exercise's function with its stub
    /// on the chapter pages (book/book.toml runs it)
    ///
    /// Reads mdBook's [context, book] JSON from stdin and writes the book to stdout.
    /// A chapter page that includes an exercise region itself is an error.
    Preprocess {
        /// `supports RENDERER`: whether it runs for that renderer (exit code 0)
        #[command(subcommand)]
        command: Option<PreprocessCommand>,
    },
}

/// `cargo xtask book preprocess …`: mdBook's questions to a preprocessor.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
enum PreprocessCommand {
    /// Exit with 0 if the preprocessor runs for RENDERER, with 1 if not
    Supports {
        /// The renderer, e.g. `html`
        renderer: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Commands::Book {
        command:
            BookCommand::Preprocess {
                command: Some(PreprocessCommand::Supports { renderer }),
            },
    } = &cli.command
    {
        return if book::supports(renderer) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    match run(&workspace_root(), cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: {}", error::chain(&error));
            ExitCode::from(error.exit_code())
        }
    }
}

/// Runs the chosen subcommand.
fn run(root: &Path, command: Commands) -> Result<(), Error> {
    match command {
        Commands::Book {
            command: BookCommand::Build,
        } => book::build(root),
        Commands::Book {
            command: BookCommand::Serve { lang, args },
        } => book::serve(root, lang.as_deref(), &args),
        Commands::Book {
            command: BookCommand::PoUpdate,
        } => book::po_update(root),
        Commands::Book {
            command: BookCommand::BrowserCheck,
        } => book::browser_check(root),
        Commands::Book {
            command: BookCommand::Preprocess { command: None },
        } => book::preprocess(root),
        Commands::Book {
            command:
                BookCommand::Preprocess {
                    command: Some(PreprocessCommand::Supports { renderer }),
                },
        } => {
            if book::supports(&renderer) {
                Ok(())
            } else {
                Err(Error::Check(format!(
                    "the exercise stubs do not run for the `{renderer}` renderer"
                )))
            }
        }
        Commands::Exercise { command } => exercise::run(root, command),
        Commands::ProtobufSchema { check } => protobuf_schema::run(root, check),
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use clap::error::ErrorKind;
    use exercise::ExerciseCommand;

    fn parse(args: &[&str]) -> Result<Commands, clap::Error> {
        Cli::try_parse_from(std::iter::once("xtask").chain(args.iter().copied()))
            .map(|cli| cli.command)
    }

    fn exercise(args: &[&str]) -> ExerciseCommand {
        let mut all = vec!["exercise"];
        all.extend_from_slice(args);
        match parse(&all) {
            Ok(Commands::Exercise { command }) => command,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn book_serve_passes_its_arguments_through() {
        assert_eq!(
            parse(&["book", "serve", "--open", "-p", "3001"]).unwrap(),
            Commands::Book {
                command: BookCommand::Serve {
                    lang: None,
                    args: vec!["--open".into(), "-p".into(), "3001".into()]
                }
            }
        );
        assert_eq!(
            parse(&["book", "serve", "--lang", "zh-CN", "-p", "3001"]).unwrap(),
            Commands::Book {
                command: BookCommand::Serve {
                    lang: Some("zh-CN".into()),
                    args: vec!["-p".into(), "3001".into()]
                }
            }
        );
        assert_eq!(
            parse(&["book", "serve"]).unwrap(),
            Commands::Book {
                command: BookCommand::Serve {
                    lang: None,
                    args: vec![]
                }
            }
        );
        assert_eq!(
            parse(&["book", "build"]).unwrap(),
            Commands::Book {
                command: BookCommand::Build
            }
        );
        assert_eq!(
            parse(&["book", "preprocess"]).unwrap(),
            Commands::Book {
                command: BookCommand::Preprocess { command: None }
            }
        );
        assert_eq!(
            parse(&["book", "preprocess", "supports", "html"]).unwrap(),
            Commands::Book {
                command: BookCommand::Preprocess {
                    command: Some(PreprocessCommand::Supports {
                        renderer: "html".into()
                    })
                }
            }
        );
        let err = parse(&["book", "build", "extra"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownArgument);
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn exercise_commands_parse() {
        assert_eq!(
            exercise(&["start", "stage5"]),
            ExerciseCommand::Start {
                target: "stage5".into(),
                force: false
            }
        );
        assert_eq!(
            exercise(&["start", "--force", "ex1-split-key"]),
            ExerciseCommand::Start {
                target: "ex1-split-key".into(),
                force: true
            }
        );
        assert_eq!(exercise(&["next"]), ExerciseCommand::Next);
        assert_eq!(
            exercise(&["check"]),
            ExerciseCommand::Check { target: None }
        );
        assert_eq!(
            exercise(&["check", "stage5-storage"]),
            ExerciseCommand::Check {
                target: Some("stage5-storage".into())
            }
        );
        assert_eq!(exercise(&["hint"]), ExerciseCommand::Hint { id: None });
        assert_eq!(
            exercise(&["solution", "ex2-pop"]),
            ExerciseCommand::Solution {
                id: "ex2-pop".into()
            }
        );
        assert_eq!(
            exercise(&["reset", "2"]),
            ExerciseCommand::Reset { target: "2".into() }
        );
        assert_eq!(
            exercise(&["schedule", "--check"]),
            ExerciseCommand::Schedule { check: true }
        );
        assert_eq!(
            exercise(&[
                "verify",
                "--timeout",
                "5",
                "ex1-a",
                "--jobs",
                "1",
                "stage2"
            ]),
            ExerciseCommand::Verify {
                timeout: 5,
                jobs: 1,
                targets: vec!["ex1-a".into(), "stage2".into()]
            }
        );
        assert_eq!(
            exercise(&["verify"]),
            ExerciseCommand::Verify {
                timeout: 60,
                jobs: 2,
                targets: vec![]
            }
        );
    }

    #[test]
    fn usage_errors_exit_with_2() {
        for args in [
            &["exercise", "verify", "--timeout", "0"][..],
            &["exercise", "verify", "--jobs", "0"],
            &["exercise", "verify", "--fast"],
            &["exercise", "solution"],
            &["exercise", "start"],
            &["exercise", "next", "extra"],
            &["exercise", "schedule", "--chek"],
            &["exercise", "begin"],
            &["bok"],
        ] {
            let err = parse(args).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{args:?}: {err}");
        }
        let err = parse(&["exercise", "strat"]).unwrap_err().to_string();
        assert!(err.contains("similar subcommand exists: 'start'"), "{err}");
    }
}
