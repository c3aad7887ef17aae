//! `cargo xtask exercise solution ID`: restores one region's reference body,
//! the newest committed one whose hash `exercises.lock` records, and shows the
//! diff.

use super::learner::{Learner, git};
use super::lock::{Lock, hash_body};
use super::manifest::Exercise;
use super::{lock, region};
use crate::error::Error;

impl Learner<'_> {
    /// The reference body of an exercise's region and the (short) commit it was
    /// found in: the newest committed body whose hash `exercises.lock` records.
    /// It looks at the commits that touch the file, from HEAD (following
    /// renames), then at those on any other branch. The learner's own versions
    /// never match the hash, so they are never taken for the reference.
    pub(super) fn find_reference(
        &self,
        ex: &Exercise,
        hash: &str,
    ) -> Result<(String, String), Error> {
        let mut candidates: Vec<(String, String)> = Vec::new();
        if let Ok(log) = git(
            self.root,
            &[
                "log",
                "--follow",
                "--format=%H",
                "--name-only",
                "HEAD",
                "--",
                &ex.file,
            ],
        ) {
            // `--name-only` paths are from the repository's top, as `COMMIT:PATH`
            // wants them.
            candidates.extend(
                history_with_paths(&log).into_iter().map(|(commit, path)| {
                    (commit.clone(), format!("{commit}:{path}"))
                }),
            );
        }
        if let Ok(list) = git(self.root, &["rev-list", "--all", "--", &ex.file]) {
            for commit in list.lines().map(str::trim).filter(|l| !l.is_empty()) {
                if !candidates.iter().any(|(seen, _)| seen == commit) {
                    candidates.push((
                        commit.to_string(),
                        format!("{commit}:./{}", ex.file),
                    ));
                }
            }
        }
        for (commit, object) in &candidates {
            let Ok(text) = git(self.root, &["show", object]) else {
                continue;
            };
            let Ok(body) = region::body(&text, &ex.id) else {
                continue;
            };
            if hash_body(&body) == hash {
                return Ok((body, commit.chars().take(10).collect()));
            }
        }
        Err(Error::NoReference {
            id: ex.id.clone(),
            file: ex.file.clone(),
            searched: candidates.len(),
            hash: hash.to_string(),
        })
    }

    /// `solution ID`.
    pub(super) fn solution(&self, id: &str) -> Result<(), Error> {
        let s = &self.style;
        let ex = self.manifest.find_exercise(id)?;
        let lock = Lock::load(self.root)?;
        let hash = lock.hash(&ex.id).ok_or_else(|| Error::Manifest {
            what: format!("{} records no reference for {}", lock::FILE, ex.id),
            problems: vec![format!(
                "without it, `solution` cannot tell the reference from your own commits; the file \
                 comes with the repository (`git log -- {}`), and `cargo xtask exercise schedule` \
                 regenerates it on a checkout without stubs",
                lock::FILE
            )],
        })?;
        let current = self.read(&ex.file)?;
        let before =
            region::body(&current, &ex.id).map_err(Error::region(&ex.file))?;
        if hash_body(&before) == hash {
            println!("{} already holds the reference.", s.bold(&ex.id));
            return Ok(());
        }
        let (after, commit) = self.find_reference(ex, hash)?;
        let restored = region::replace_body(&current, &ex.id, &after)
            .map_err(Error::region(&ex.file))?;
        self.write(&ex.file, &restored)?;
        let line = region::locate(&current, &ex.id)
            .map(|(l, _)| l)
            .unwrap_or(0);
        println!(
            "Restored {} in {}:{line} from the reference (as in commit {commit}):\n",
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
}

/// The commits and paths in the output of `git log --follow --format=%H
/// --name-only`: each commit's hash, then (after a blank line) the file's path at
/// that commit. A commit without a path (a merge that did not change it) is skipped.
pub(super) fn history_with_paths(log: &str) -> Vec<(String, String)> {
    let is_hash = |line: &str| {
        (line.len() == 40 || line.len() == 64)
            && line.bytes().all(|b| b.is_ascii_hexdigit())
    };
    let mut found = Vec::new();
    let mut commit: Option<&str> = None;
    for line in log.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if is_hash(line) {
            commit = Some(line);
        } else if let Some(hash) = commit.take() {
            found.push((hash.to_string(), line.to_string()));
        }
    }
    found
}

/// A line diff of `old` against `new`, by longest common subsequence: `(' '|'-'|'+',
/// line)`.
pub(super) fn diff_lines<'t>(
    old: &[&'t str],
    new: &[&'t str],
) -> Vec<(char, &'t str)> {
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
    fn renamed_files_keep_their_path_per_commit() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let m = "c".repeat(40);
        let log = format!(
            "{a}\n\nstage5-storage/src/kv.rs\n{m}\n{b}\n\nstage5-cacher/src/kv.rs\n"
        );
        assert_eq!(
            history_with_paths(&log),
            [
                (a.clone(), "stage5-storage/src/kv.rs".to_string()),
                (b.clone(), "stage5-cacher/src/kv.rs".to_string()),
            ]
        );
        assert!(history_with_paths("").is_empty());
    }
}
