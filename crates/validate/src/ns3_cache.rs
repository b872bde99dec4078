//! ns-3's outputs kept on disk, keyed by the ns-3 build and the run's arguments: a rerun of the
//! grid (a changed concord, a second diagnosis, another machine) reads ns-3's figures back
//! instead of simulating again.
//!
//! The build is named by its identity: the text `bench/ns3/build-validate.sh` writes beside the
//! program (`validate.identity`: the ns-3 wheel's version and the SHA-256 of `validate.cc`), so a
//! changed `validate.cc` or another ns-3 is another build and misses the cache, while the same
//! source built on another machine hits it. A program without that file is named by a 64-bit
//! FNV-1a hash of its bytes. The arguments name the case, the seed and the ns-3 switch.
//!
//! The cache is a directory of one JSON-lines file per case, `<case id>.jsonl`, each line
//! `{"identity": ..., "args": ..., "output": ...}` with `output` the line of JSON the program
//! printed. Each file is written whole, sorted by identity and arguments (so the same runs give
//! the same bytes, and the directory can be committed), beside and then renamed (a reader never
//! sees half a file). Entries of the earlier format (one `<hash>.json` file a run: the arguments,
//! then the output, the hash taken over the program's bytes and the arguments) are read too
//! when their hash is this program's, and moved into the case's file when first used.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// 64-bit FNV-1a offset basis and prime (Fowler, Noll, Vo).
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over `bytes`, continuing from `h`.
pub fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// One stored run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Entry {
    /// The ns-3 build ([`identity`]).
    identity: String,
    /// The program's arguments, space-separated.
    args: String,
    /// The line of JSON the program printed.
    output: String,
}

/// The identity of the ns-3 program at `exe`: the first three lines of `<exe>.identity` when
/// that file exists (written by `build-validate.sh`), else the FNV-1a hash of the program.
pub fn identity(exe: &Path) -> Result<String, String> {
    let stamp = exe.with_extension("identity");
    if let Ok(text) = std::fs::read_to_string(&stamp) {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if !lines.is_empty() {
            return Ok(lines.join("; "));
        }
    }
    let bytes = std::fs::read(exe).map_err(|e| {
        format!(
            "cannot read {}: {e}; fix: build it with bench/ns3/build-validate.sh (or pass --ns3 PATH)",
            exe.display()
        )
    })?;
    Ok(format!("program fnv1a {:016x}", fnv1a(FNV_OFFSET, &bytes)))
}

/// A directory of ns-3 outputs, read for one ns-3 build; clones share the entries.
#[derive(Clone, Debug)]
pub struct Ns3Cache {
    dir: PathBuf,
    identity: String,
    /// Every entry of this build, by case id, then arguments.
    entries: Arc<Mutex<HashMap<String, BTreeMap<String, String>>>>,
    /// Entries of the earlier format made by this very program, by arguments.
    legacy: Arc<HashMap<String, String>>,
}

/// The earlier format's file name for `args` run by the program whose bytes hash to `program`.
fn legacy_name(program: u64, args: &str) -> String {
    let mut h = fnv1a(FNV_OFFSET, &program.to_le_bytes());
    for a in args.split(' ') {
        h = fnv1a(h, a.as_bytes());
        h = fnv1a(h, b"\n");
    }
    format!("{h:016x}.json")
}

impl Ns3Cache {
    /// The cache in `dir` for the program at `exe` (its [`identity`]); every entry of that
    /// build in `dir` is read now. An unreadable line is skipped (it costs a rerun).
    pub fn open(dir: &Path, exe: &Path) -> Result<Ns3Cache, String> {
        let identity = identity(exe)?;
        let mut cache = Self::open_as(dir, identity)?;
        if let Ok(bytes) = std::fs::read(exe) {
            cache.legacy = Arc::new(read_legacy(dir, fnv1a(FNV_OFFSET, &bytes)));
        }
        Ok(cache)
    }

    /// The cache in `dir` for the build named `identity`.
    pub fn open_as(dir: &Path, identity: String) -> Result<Ns3Cache, String> {
        std::fs::create_dir_all(dir).map_err(|e| {
            format!(
                "cannot create the ns-3 cache {}: {e}; fix: pass a writable --ns3-cache DIR or --no-ns3-cache",
                dir.display()
            )
        })?;
        let mut entries: HashMap<String, BTreeMap<String, String>> = HashMap::new();
        let listing = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read the ns-3 cache {}: {e}", dir.display()))?;
        for file in listing.flatten() {
            let path = file.path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            let Some(case) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let runs = entries.entry(case.to_string()).or_default();
            for e in text
                .lines()
                .filter_map(|l| serde_json::from_str::<Entry>(l).ok())
                .filter(|e| e.identity == identity)
            {
                runs.insert(e.args, e.output);
            }
        }
        Ok(Ns3Cache {
            dir: dir.to_path_buf(),
            identity,
            entries: Arc::new(Mutex::new(entries)),
            legacy: Arc::new(HashMap::new()),
        })
    }

    /// The build the cache reads and fills.
    pub fn build(&self) -> &str {
        &self.identity
    }

    /// Runs of this build stored.
    pub fn len(&self) -> usize {
        self.lock().values().map(BTreeMap::len).sum()
    }

    /// No run of this build stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, BTreeMap<String, String>>> {
        match self.entries.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// The output stored for case `case` run with `args`, if any.
    pub fn get(&self, case: &str, args: &[String]) -> Option<String> {
        let joined = args.join(" ");
        if let Some(o) = self.lock().get(case).and_then(|runs| runs.get(&joined)) {
            return Some(o.clone());
        }
        let old = self.legacy.get(&joined)?;
        // Moved into the case's file; a failure to write leaves it where it was.
        let _ = self.put(case, args, old);
        Some(old.clone())
    }

    /// Stores `output` (one line of JSON) for case `case` run with `args`, and writes the case's
    /// file again. A failure to write only costs a rerun later, so it is returned for the
    /// caller to report, not fatal. Entries of other builds in that file are dropped: the file
    /// holds the build in use.
    pub fn put(&self, case: &str, args: &[String], output: &str) -> Result<(), String> {
        let mut all = self.lock();
        let runs = all.entry(case.to_string()).or_default();
        runs.insert(args.join(" "), output.trim().to_string());
        let mut text = String::new();
        for (a, o) in runs.iter() {
            let line = serde_json::to_string(&Entry {
                identity: self.identity.clone(),
                args: a.clone(),
                output: o.clone(),
            })
            .map_err(|e| format!("cannot store a run of {case}: {e}"))?;
            text.push_str(&line);
            text.push('\n');
        }
        let path = self.dir.join(format!("{case}.jsonl"));
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot store {} in the ns-3 cache: {e}", path.display()))
    }
}

/// The entries of the earlier format in `dir` whose file name is their hash for the program
/// whose bytes hash to `program`.
fn read_legacy(dir: &Path, program: u64) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for file in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = file.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some((args, output)) = text.split_once('\n') else {
            continue;
        };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == legacy_name(program, args) {
            out.insert(args.to_string(), output.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        // FNV-1a 64 test vectors (draft-eastlake-fnv): "" and "a".
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
    }

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("concord-ns3-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        dir
    }

    #[test]
    fn an_entry_is_found_for_its_build_case_and_arguments_only() {
        let dir = temp("keys");
        let cache = dir.join("cache");
        let a = Ns3Cache::open_as(&cache, "ns-3 3.44.post0; validate.cc sha256 aa".into())
            .expect("opens");
        let args = vec!["--flows=4".to_string(), "--seed=1".to_string()];
        assert_eq!(a.get("c1", &args), None);
        a.put("c1", &args, "{\"simulator\": \"ns-3\"}\n")
            .expect("stores");
        assert_eq!(
            a.get("c1", &args).as_deref(),
            Some("{\"simulator\": \"ns-3\"}")
        );
        assert_eq!(a.get("c2", &args), None, "another case");
        let other = vec!["--flows=4".to_string(), "--seed=2".to_string()];
        assert_eq!(a.get("c1", &other), None, "another seed is another key");
        // Read back from disk by the same build; another build sees nothing.
        let again = Ns3Cache::open_as(&cache, a.build().to_string()).expect("opens");
        assert_eq!(again.len(), 1);
        assert_eq!(
            again.get("c1", &args).as_deref(),
            Some("{\"simulator\": \"ns-3\"}")
        );
        let b =
            Ns3Cache::open_as(&cache, "ns-3 3.45; validate.cc sha256 bb".into()).expect("opens");
        assert!(b.is_empty(), "another build is another key");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_file_is_sorted_so_the_same_runs_give_the_same_bytes() {
        let dir = temp("sorted");
        let (x, y) = (dir.join("x"), dir.join("y"));
        let id = "ns-3 3.44.post0".to_string();
        let one = Ns3Cache::open_as(&x, id.clone()).expect("opens");
        let two = Ns3Cache::open_as(&y, id).expect("opens");
        let s1 = vec!["--seed=1".to_string()];
        let s2 = vec!["--seed=2".to_string()];
        one.put("c", &s2, "{\"b\": 2}").expect("stores");
        one.put("c", &s1, "{\"a\": 1}").expect("stores");
        two.put("c", &s1, "{\"a\": 1}").expect("stores");
        two.put("c", &s2, "{\"b\": 2}").expect("stores");
        let text = std::fs::read_to_string(x.join("c.jsonl")).expect("written");
        assert_eq!(
            text,
            std::fs::read_to_string(y.join("c.jsonl")).expect("written")
        );
        assert_eq!(
            text,
            "{\"identity\":\"ns-3 3.44.post0\",\"args\":\"--seed=1\",\"output\":\"{\\\"a\\\": 1}\"}\n\
             {\"identity\":\"ns-3 3.44.post0\",\"args\":\"--seed=2\",\"output\":\"{\\\"b\\\": 2}\"}\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_identity_file_names_the_build_else_the_programs_bytes_do() {
        let dir = temp("identity");
        let exe = dir.join("validate");
        std::fs::write(&exe, b"program a").expect("program");
        let by_bytes = identity(&exe).expect("reads");
        assert_eq!(
            by_bytes,
            format!("program fnv1a {:016x}", fnv1a(FNV_OFFSET, b"program a"))
        );
        std::fs::write(
            dir.join("validate.identity"),
            "ns-3 3.44.post0\nvalidate.cc sha256 0123\n",
        )
        .expect("stamp");
        assert_eq!(
            identity(&exe).expect("reads"),
            "ns-3 3.44.post0; validate.cc sha256 0123"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_entry_of_the_earlier_format_by_this_program_is_read_and_moved() {
        let dir = temp("legacy");
        let exe = dir.join("validate");
        std::fs::write(&exe, b"program a").expect("program");
        let cache = dir.join("cache");
        std::fs::create_dir_all(&cache).expect("dir");
        let program = fnv1a(FNV_OFFSET, b"program a");
        let args = vec!["--flows=4".to_string(), "--seed=1".to_string()];
        let name = legacy_name(program, &args.join(" "));
        std::fs::write(cache.join(&name), "--flows=4 --seed=1\n{\"x\": 1}\n").expect("old");
        // Another program's entry, and one whose name is not its hash, are not read.
        let other = legacy_name(fnv1a(FNV_OFFSET, b"program b"), "--flows=4 --seed=2");
        std::fs::write(cache.join(other), "--flows=4 --seed=2\n{}\n").expect("old");
        std::fs::write(
            cache.join(&name).with_file_name("0000000000000000.json"),
            "--seed=3\n{}",
        )
        .expect("old");
        let c = Ns3Cache::open(&cache, &exe).expect("opens");
        assert_eq!(c.legacy.len(), 1);
        assert_eq!(c.get("c1", &args).as_deref(), Some("{\"x\": 1}"));
        let moved = std::fs::read_to_string(cache.join("c1.jsonl")).expect("moved");
        assert!(moved.contains("\"args\":\"--flows=4 --seed=1\""), "{moved}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unreadable_program_is_an_error_naming_the_fix() {
        let e = Ns3Cache::open(
            Path::new("/nonexistent/c"),
            Path::new("/nonexistent/validate"),
        )
        .expect_err("missing");
        assert!(
            e.contains("fix: build it with bench/ns3/build-validate.sh"),
            "{e}"
        );
    }
}
