//! Child processes with a time limit, their output captured in a file.
//!
//! The output goes to a file rather than a pipe, so a chatty child can never block
//! on a full pipe while we wait for it. On a time limit the child is killed,
//! together with the processes it started (e.g. `cargo test` and the test binary it
//! runs): on Linux, their ids are read from `/proc` before anything is killed, and
//! each is killed by its own (positive) id. No process group or other process is
//! ever signalled.

use std::fs::{self, File};
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::Error;

/// How a captured run ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// The child exited by itself.
    Exited(ExitStatus),
    /// The child ran past its time limit and was killed.
    TimedOut,
}

/// A finished run: how it ended and everything it wrote to stdout and stderr.
#[derive(Debug)]
pub(crate) struct Captured {
    /// How the run ended.
    pub(crate) ending: Ending,
    /// stdout and stderr, interleaved.
    pub(crate) output: String,
}

impl Captured {
    /// Whether the child exited successfully in time.
    pub(crate) fn success(&self) -> bool {
        matches!(&self.ending, Ending::Exited(status) if status.success())
    }
}

/// Runs `command` with stdout and stderr sent to `log` (overwritten). After `limit`,
/// kills the child and every process it started (see [`kill_tree`]).
pub(crate) fn run(
    mut command: Command,
    limit: Duration,
    log: &Path,
) -> Result<Captured, Error> {
    let file = File::create(log).map_err(Error::io("create", log))?;
    let err_file = file.try_clone().map_err(Error::io("reopen", log))?;
    command.stdin(std::process::Stdio::null());
    command.stdout(file).stderr(err_file);
    let shown = command.get_program().to_string_lossy().into_owned();
    let mut child = command.spawn().map_err(Error::spawn(shown.clone()))?;
    let started = Instant::now();
    let mut pause = Duration::from_millis(5);
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ending::Exited(status),
            Ok(None) if started.elapsed() >= limit => {
                kill_tree(&mut child);
                break Ending::TimedOut;
            }
            Ok(None) => {
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(Error::spawn(shown)(e)),
        }
    };
    let bytes = fs::read(log).map_err(Error::io("read", log))?;
    Ok(Captured {
        ending,
        output: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// Kills `child` and, on Linux, every descendant of it. The descendants are listed
/// first (from `/proc`, while `child` still holds them), then each is killed by its
/// own id with `kill -s KILL -- PID…` (positive ids only, after `--`), then `child`
/// itself.
fn kill_tree(child: &mut Child) {
    let descendants: Vec<u32> = descendants_of(child.id())
        .into_iter()
        .filter(|pid| *pid > 1)
        .collect();
    if !descendants.is_empty() {
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--"])
            .args(descendants.iter().map(u32::to_string))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The ids of all processes below `root` in the process tree, read from
/// `/proc/*/stat`. Empty where there is no `/proc`.
fn descendants_of(root: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = entries
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parent_in_stat(&stat)?))
        })
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, _) in parents.iter().filter(|(_, ppid)| *ppid == parent) {
            if !found.contains(pid) && *pid != root {
                found.push(*pid);
                frontier.push(*pid);
            }
        }
    }
    found
}

/// The parent id in a `/proc/PID/stat` line: `pid (comm) state ppid …`, where `comm`
/// may hold spaces and parentheses, so the fields are counted after the last `)`.
fn parent_in_stat(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Panic messages in a libtest failure output: for each `panicked at` line, the line
/// after it (where the message starts), trimmed to one short line.
pub(crate) fn panic_messages(output: &str) -> Vec<String> {
    let lines: Vec<&str> = output.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.contains("panicked at") {
            let message = lines
                .get(i + 1)
                .map(|l| l.trim())
                .filter(|l| !l.is_empty())
                .unwrap_or("(no message)");
            found.push(shorten(message, 160));
        }
    }
    found
}

/// `text` cut to at most `max` characters, with `…` when cut.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_after_panics() {
        let output = "running 1 test\n\nthread 'a::b' panicked at src/x.rs:3:5:\nnot yet implemented: ex1-a\nnote: run with\n";
        assert_eq!(panic_messages(output), ["not yet implemented: ex1-a"]);
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("abc", 4), "abc");
    }

    #[test]
    fn stat_lines_give_the_parent() {
        assert_eq!(parent_in_stat("123 (cargo) S 77 123 77 0"), Some(77));
        assert_eq!(parent_in_stat("9 (a b) (c)) R 4 9 4"), Some(4));
        assert_eq!(parent_in_stat("garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_run_past_its_limit_is_killed_with_what_it_started() {
        let log = std::env::temp_dir()
            .join(format!("xtask-process-test-{}", std::process::id()));
        let mut command = Command::new("sh");
        // The shell starts a grandchild, prints its id, and waits.
        command.args(["-c", "sleep 30 & echo $!; wait"]);
        let started = Instant::now();
        let captured = run(command, Duration::from_millis(300), &log).unwrap();
        assert!(matches!(captured.ending, Ending::TimedOut));
        assert!(started.elapsed() < Duration::from_secs(10));
        let grandchild: u32 = captured.output.trim().parse().unwrap();
        // Killed: gone, or a zombie waiting for init to reap it. A SIGKILL is
        // delivered asynchronously, so on a loaded machine give it a moment
        // (bounded).
        let state_of = |pid: u32| {
            fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    stat[stat.rfind(')')? + 1..]
                        .split_whitespace()
                        .next()
                        .map(str::to_string)
                })
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut state = state_of(grandchild);
        while !matches!(state.as_deref(), None | Some("Z"))
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
            state = state_of(grandchild);
        }
        assert!(matches!(state.as_deref(), None | Some("Z")), "{state:?}");
        let mut command = Command::new("sh");
        command.args(["-c", "echo out; echo err >&2; exit 3"]);
        let captured = run(command, Duration::from_secs(20), &log).unwrap();
        assert!(!captured.success());
        assert!(captured.output.contains("out") && captured.output.contains("err"));
        let _ = fs::remove_file(log);
    }
}
