//! Output directories that never lose data.
//!
//! A command that writes a directory (`run`, `reproduce`, `sweep` with `--out DIR`) first
//! [claims](OutputDir::claim) `DIR`, before it runs anything: `DIR` must be absent, empty, or an
//! earlier output of concord, recognised by the marker file [`MARKER`] that concord writes into
//! every output directory it makes. Anything else is refused (exit 2) and nothing is deleted.
//!
//! Everything is written into a staging directory beside `DIR` (`.DIR.tmp-PID`), then
//! [committed](OutputDir::commit): the marker is added, every file and directory is fsynced, and
//! the staging directory takes `DIR`'s place in one step (`renameat2(RENAME_EXCHANGE)` where the
//! file system has it, else two renames), after which the parent is fsynced and the previous
//! output, now in the staging directory, is removed. A `kill -9` at any moment therefore leaves
//! `DIR` as either the previous whole output or the new whole output, never a mix.
//!
//! What a killed run leaves beside `DIR` (`.DIR.tmp-PID`, `.DIR.old-PID`, and the report
//! writer's own `..DIR.tmp-PID.tmp-PID`) is removed by the next claim of `DIR` once process PID
//! has ended; concord deletes nothing else.

use crate::Failure;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The file that marks a directory as an output of concord, which concord may replace whole.
pub const MARKER: &str = ".concord-output";

/// What [`MARKER`] holds: a note for whoever opens the directory.
const MARKER_TEXT: &str = "This directory was written by concord. A later concord command given \
it as --out replaces it whole; keep your own files elsewhere.\n";

/// A claimed output directory: where to write now (the staging directory) and where the output
/// goes when it is complete.
#[derive(Debug)]
pub struct OutputDir {
    /// `--out` as given.
    target: PathBuf,
    /// The directory holding `target`.
    parent: PathBuf,
    /// `target`'s last component.
    stem: String,
    /// The empty directory `parent/.stem.tmp-PID` the command writes into.
    staging: PathBuf,
}

impl OutputDir {
    /// Claims `target` for a new output, before any work is done: refuses (an input error, exit
    /// 2) a `target` that is not a directory, or a directory holding files without the marker;
    /// removes what killed runs left beside it; creates the empty staging directory.
    pub fn claim(target: &Path) -> Result<OutputDir, Failure> {
        let stem = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| n != "." && n != "..")
            .ok_or_else(|| {
                Failure::input(format!(
                    "--out {} names no directory; give a path ending in a directory name",
                    target.display()
                ))
            })?;
        check_replaceable(target)?;
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        std::fs::create_dir_all(&parent).map_err(|e| {
            Failure::runtime(format!(
                "cannot create {}: {e}; choose a writable --out",
                parent.display()
            ))
        })?;
        remove_abandoned(&parent, &stem);
        let staging = parent.join(format!(".{stem}.tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir(&staging).map_err(|e| {
            Failure::runtime(format!(
                "cannot write beside {}: {e}; choose a writable --out",
                target.display()
            ))
        })?;
        Ok(OutputDir {
            target: target.to_path_buf(),
            parent,
            stem,
            staging,
        })
    }

    /// The directory to write the output into (empty when claimed).
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// Puts the staged output in the target's place whole (see the module's documentation).
    pub fn commit(self) -> Result<(), Failure> {
        let fail = |e: io::Error| {
            Failure::runtime(format!(
                "cannot put the output in {}: {e}; the previous contents are unchanged; choose a writable --out",
                self.target.display()
            ))
        };
        write_synced(&self.staging.join(MARKER), MARKER_TEXT.as_bytes()).map_err(fail)?;
        sync_tree(&self.staging).map_err(fail)?;
        // The target may have changed while the command ran: check it again.
        check_replaceable(&self.target)?;
        if self.target.exists() {
            if let Err(e) = exchange(&self.staging, &self.target) {
                if !exchange_unsupported(&e) {
                    return Err(fail(e));
                }
                // Two renames: between them `target` is absent, its old contents in `.old-PID`.
                let old = self
                    .parent
                    .join(format!(".{}.old-{}", self.stem, std::process::id()));
                std::fs::rename(&self.target, &old).map_err(fail)?;
                std::fs::rename(&self.staging, &self.target).map_err(fail)?;
                sync_dir(&self.parent).map_err(fail)?;
                let _ = std::fs::remove_dir_all(&old);
                return Ok(());
            }
            // The staging directory now holds the previous output, marked as concord's; it is
            // removed as `self` is dropped, on return.
            sync_dir(&self.parent).map_err(fail)?;
        } else {
            std::fs::rename(&self.staging, &self.target).map_err(fail)?;
            sync_dir(&self.parent).map_err(fail)?;
        }
        Ok(())
    }
}

impl Drop for OutputDir {
    /// A command that fails before its commit leaves nothing behind: its staging directory
    /// goes (after a commit the name is gone or holds the previous output, also to be removed).
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.staging);
    }
}

/// `Ok` if `target` is absent, an empty directory, or a directory holding [`MARKER`].
fn check_replaceable(target: &Path) -> Result<(), Failure> {
    let meta = match std::fs::symlink_metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(Failure::input(format!(
                "cannot inspect --out {}: {e}; choose another --out",
                target.display()
            )))
        }
    };
    if meta.file_type().is_symlink() {
        return Err(Failure::input(format!(
            "--out {} is a symbolic link; give the directory itself",
            target.display()
        )));
    }
    if !meta.is_dir() {
        return Err(Failure::input(format!(
            "--out {} exists and is not a directory; choose another --out",
            target.display()
        )));
    }
    let marked = std::fs::symlink_metadata(target.join(MARKER)).is_ok_and(|m| m.is_file());
    let empty = std::fs::read_dir(target)
        .map_err(|e| {
            Failure::input(format!(
                "cannot read --out {}: {e}; choose another --out",
                target.display()
            ))
        })?
        .next()
        .is_none();
    if marked || empty {
        Ok(())
    } else {
        Err(Failure::input(format!(
            "--out {} holds files concord did not write (it has no {MARKER} marker); nothing was \
             run or deleted; choose a new or empty directory",
            target.display()
        )))
    }
}

/// Removes `.stem.tmp-PID`, `.stem.old-PID` and `..stem.tmp-PID.tmp-PID2` (or `.old-PID2`)
/// in `parent` whose process PID has ended.
fn remove_abandoned(parent: &Path, stem: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = abandoned_pid(&name, stem) {
            let alive =
                pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists();
            if !alive {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// The PID in `name` if it is one of the names [`remove_abandoned`] clears for `stem`.
fn abandoned_pid(name: &str, stem: &str) -> Option<u32> {
    let rest = [name, name.strip_prefix('.').unwrap_or(name)]
        .into_iter()
        .find_map(|n| {
            [".tmp-", ".old-"]
                .iter()
                .find_map(|kind| n.strip_prefix(&format!(".{stem}{kind}")))
        })?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (pid, tail) = rest.split_at(digits);
    let tail_ok = tail.is_empty()
        || [".tmp-", ".old-"].iter().any(|kind| {
            tail.strip_prefix(kind)
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        });
    if tail_ok {
        pid.parse().ok()
    } else {
        None
    }
}

/// Swaps the directories `a` and `b` in one step (`renameat2(RENAME_EXCHANGE)`).
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(io::Error::from)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (a, b);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// True if `e` says the file system (or the kernel) has no `RENAME_EXCHANGE`.
fn exchange_unsupported(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
        || matches!(
            e.raw_os_error(),
            Some(code) if code == rustix::io::Errno::INVAL.raw_os_error()
                || code == rustix::io::Errno::NOSYS.raw_os_error()
                || code == rustix::io::Errno::OPNOTSUPP.raw_os_error()
        )
}

/// Writes `bytes` to `path` and fsyncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut f = File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Fsyncs every file and directory under `dir`, and `dir` itself.
fn sync_tree(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            sync_tree(&entry.path())?;
        } else if kind.is_file() {
            File::open(entry.path())?.sync_all()?;
        }
    }
    sync_dir(dir)
}

/// Fsyncs the directory `dir` (its entries: names created, renamed or removed).
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("concord-outdir-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch");
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_directory_with_other_files_is_refused_and_left_as_it_was() {
        let base = scratch("foreign");
        let out = base.join("proj");
        std::fs::create_dir_all(out.join("src")).expect("dir");
        std::fs::write(out.join("results.json"), "{\"my\":\"data\"}").expect("file");
        std::fs::write(out.join("precious.txt"), "x").expect("file");
        let e = OutputDir::claim(&out).expect_err("refused");
        assert_eq!(e.code, 2);
        assert!(
            e.message.contains("no .concord-output marker"),
            "{}",
            e.message
        );
        assert_eq!(names(&out), ["precious.txt", "results.json", "src"]);
        assert_eq!(names(&base), ["proj"], "no staging directory made");
    }

    #[test]
    fn a_file_or_a_symbolic_link_is_refused() {
        let base = scratch("notdir");
        std::fs::write(base.join("f"), "x").expect("file");
        assert_eq!(OutputDir::claim(&base.join("f")).expect_err("file").code, 2);
        std::os::unix::fs::symlink(&base, base.join("link")).expect("link");
        assert_eq!(
            OutputDir::claim(&base.join("link")).expect_err("link").code,
            2
        );
        assert_eq!(OutputDir::claim(Path::new("..")).expect_err("..").code, 2);
    }

    #[test]
    fn a_new_output_appears_whole_with_its_marker() {
        let base = scratch("new");
        let out = base.join("a").join("out");
        let dir = OutputDir::claim(&out).expect("claimed");
        assert!(!out.exists(), "nothing appears before the commit");
        std::fs::write(dir.staging().join("summary.json"), "{}").expect("write");
        dir.commit().expect("committed");
        assert_eq!(names(&out), [MARKER, "summary.json"]);
        assert_eq!(names(&base.join("a")), ["out"], "no staging left");
    }

    #[test]
    fn an_earlier_output_is_replaced_whole_and_nothing_of_it_remains() {
        let base = scratch("replace");
        let out = base.join("out");
        let first = OutputDir::claim(&out).expect("claimed");
        std::fs::write(first.staging().join("old.pcap"), "old").expect("write");
        first.commit().expect("committed");
        let second = OutputDir::claim(&out).expect("an earlier output is replaceable");
        std::fs::write(second.staging().join("new.csv"), "new").expect("write");
        second.commit().expect("committed");
        assert_eq!(names(&out), [MARKER, "new.csv"]);
        assert_eq!(names(&base), ["out"]);
    }

    #[test]
    fn an_empty_directory_is_taken() {
        let base = scratch("empty");
        let out = base.join("out");
        std::fs::create_dir(&out).expect("dir");
        let dir = OutputDir::claim(&out).expect("claimed");
        dir.commit().expect("committed");
        assert_eq!(names(&out), [MARKER]);
    }

    #[test]
    fn a_directory_filled_while_running_is_not_replaced() {
        let base = scratch("raced");
        let out = base.join("out");
        let dir = OutputDir::claim(&out).expect("claimed");
        std::fs::create_dir(&out).expect("dir");
        std::fs::write(out.join("mine.txt"), "x").expect("file");
        assert_eq!(dir.commit().expect_err("refused").code, 2);
        assert_eq!(names(&out), ["mine.txt"]);
        assert_eq!(names(&base), ["out"], "the staging directory is removed");
    }

    #[test]
    fn only_leftovers_of_ended_processes_are_cleared() {
        let base = scratch("leftovers");
        let dead = 4_294_967_294u32;
        let own = std::process::id();
        for n in [
            format!(".out.tmp-{dead}"),
            format!(".out.old-{dead}"),
            format!("..out.tmp-{dead}.tmp-{dead}"),
            format!(".out.tmp-{own}9"),
            ".out.tmp-12x".into(),
            ".other.tmp-5".into(),
            "out.tmp-5".into(),
        ] {
            std::fs::create_dir(base.join(n)).expect("dir");
        }
        remove_abandoned(&base, "out");
        let mut want = vec![
            ".other.tmp-5".to_string(),
            ".out.tmp-12x".into(),
            "out.tmp-5".into(),
        ];
        if Path::new("/proc").join(format!("{own}9")).exists() {
            want.push(format!(".out.tmp-{own}9"));
        }
        want.sort();
        assert_eq!(names(&base), want);
    }

    #[test]
    fn abandoned_names_are_read_exactly() {
        assert_eq!(abandoned_pid(".out.tmp-12", "out"), Some(12));
        assert_eq!(abandoned_pid(".out.old-7", "out"), Some(7));
        assert_eq!(abandoned_pid("..out.tmp-7.old-9", "out"), Some(7));
        assert_eq!(abandoned_pid(".out.tmp-7.bak", "out"), None);
        assert_eq!(abandoned_pid(".out.tmp-", "out"), None);
        assert_eq!(abandoned_pid(".outx.tmp-3", "out"), None);
        assert_eq!(abandoned_pid(".out.tmp-3", "ou"), None);
    }
}
