//! The one error type of xtask: what went wrong, and the file, command or exercise
//! it concerns.
//!
//! Messages say what to do where there is something to do. `main` prints an error
//! with its `#[source]` chain (`cannot read exercises.toml: No such file or
//! directory`) and exits with 2 for [`Error::Usage`] (as clap does for its own usage
//! errors) and 1 for everything else.

use std::io;
use std::path::PathBuf;

use crate::exercise::region;

/// Why an xtask command did not succeed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The command line named something that does not exist, e.g. a mistyped
    /// exercise id.
    #[error("{0}")]
    Usage(String),
    /// Reading, writing or listing a file or directory failed.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done: `read`, `write`, `create`, `list`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// A program could not be started (or waited for) at all.
    #[error("could not run `{program}`")]
    Spawn {
        /// The program, e.g. `git` or `cargo`.
        program: String,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// A git command exited with an error.
    #[error("`git {args}` failed: {stderr}")]
    Git {
        /// The arguments, space-separated.
        args: String,
        /// What git wrote to stderr, trimmed.
        stderr: String,
    },
    /// A cargo command exited with an error.
    #[error("`cargo {args}` failed:\n{detail}")]
    Cargo {
        /// The arguments, space-separated.
        args: String,
        /// The compiler's errors, or cargo's stderr.
        detail: String,
    },
    /// Another tool failed: `mdbook`, `cargo install`.
    #[error("`{command}` failed: {detail}")]
    Tool {
        /// The command as typed.
        command: String,
        /// Its exit status, or what else went wrong.
        detail: String,
    },
    /// A TOML file could not be read as the tool expects (the source says where).
    #[error("{} is not valid", path.display())]
    Toml {
        /// The file, e.g. `exercises.toml` or `Cargo.toml`.
        path: PathBuf,
        /// The parser's message, with the line.
        #[source]
        source: toml::de::Error,
    },
    /// `exercises.toml` (or `exercises.lock`) is not valid, or disagrees with the
    /// code.
    #[error("{what}:\n  {}", problems.join("\n  "))]
    Manifest {
        /// What kind of disagreement, e.g. `exercises.toml is not valid`.
        what: String,
        /// One message per problem.
        problems: Vec<String>,
    },
    /// An exercise region could not be found, read or stubbed.
    #[error("{file}")]
    Region {
        /// The file holding the region, from the workspace root.
        file: String,
        /// What is wrong with the region.
        #[source]
        source: region::Error,
    },
    /// `solution` found no committed version of a region that matches
    /// `exercises.lock`.
    #[error(
        "found no reference for {id}: none of the {searched} commit(s) that touch {file} holds \
         the body that exercises.lock records ({hash}). Your own commits are never taken for the \
         reference; `git log -- {file}` lists the commits, and the book's solution page shows \
         the reference"
    )]
    NoReference {
        /// The exercise.
        id: String,
        /// Its file.
        file: String,
        /// How many commits were looked at.
        searched: usize,
        /// The hash recorded in `exercises.lock`.
        hash: String,
    },
    /// The command refused to run, to protect the learner's work.
    #[error("{0}")]
    Refused(String),
    /// The command ran and its check failed: red exercises, regions that are not
    /// proved red, generated files out of date, broken book includes.
    #[error("{0}")]
    Check(String),
}

impl Error {
    /// An [`Error::Io`] maker for `map_err`: `fs::read(&p).map_err(Error::io("read",
    /// &p))`.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }

    /// An [`Error::Spawn`] maker for `map_err`.
    pub(crate) fn spawn(
        program: impl Into<String>,
    ) -> impl FnOnce(io::Error) -> Error {
        let program = program.into();
        move |source| Error::Spawn { program, source }
    }

    /// An [`Error::Region`] maker for `map_err`.
    pub(crate) fn region(
        file: impl Into<String>,
    ) -> impl FnOnce(region::Error) -> Error {
        let file = file.into();
        move |source| Error::Region { file, source }
    }

    /// The process exit code: 2 for a usage error, 1 for any other failure.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// The error and its `#[source]` chain, joined by `: `, as `main` prints it.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_are_printed_with_their_sources() {
        let err = Error::io("read", "exercises.toml")(io::Error::new(
            io::ErrorKind::NotFound,
            "No such file or directory",
        ));
        assert_eq!(
            chain(&err),
            "cannot read exercises.toml: No such file or directory"
        );
        assert_eq!(err.exit_code(), 1);
        assert_eq!(Error::Usage("no".into()).exit_code(), 2);
        let err =
            Error::region("a.rs")(region::Error::NoAnchor { id: "ex1-a".into() });
        assert_eq!(chain(&err), "a.rs: no `// ANCHOR: ex1-a` line");
        let err = Error::Manifest {
            what: "exercises.toml is not valid".into(),
            problems: vec!["one".into(), "two".into()],
        };
        assert_eq!(
            err.to_string(),
            "exercises.toml is not valid:\n  one\n  two"
        );
    }
}
