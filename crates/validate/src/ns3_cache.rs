//! ns-3's outputs kept on disk, keyed by the ns-3 program and its arguments: a rerun of the grid
//! (a changed concord, a second diagnosis) reads ns-3's figures back instead of simulating again.
//!
//! The key is a 64-bit FNV-1a hash of the program file's bytes (so a rebuilt `validate.cc`, or
//! one linked against another ns-3, is a different program) and of the arguments, one per line
//! (case, seed and variant). Each entry is one file, `<key>.json`: the arguments on the first
//! line (checked on reading, so a hash collision is a miss, never a wrong result), then the line
//! of JSON the program printed.

use std::path::{Path, PathBuf};

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

/// A directory of ns-3 outputs for one ns-3 program.
#[derive(Clone, Debug)]
pub struct Ns3Cache {
    dir: PathBuf,
    /// FNV-1a of the program file's bytes.
    program: u64,
}

impl Ns3Cache {
    /// The cache in `dir` for the program at `exe` (read once to fingerprint it).
    pub fn open(dir: &Path, exe: &Path) -> Result<Ns3Cache, String> {
        let bytes = std::fs::read(exe).map_err(|e| {
            format!(
                "cannot read {}: {e}; fix: build it with bench/ns3/build-validate.sh (or pass --ns3 PATH)",
                exe.display()
            )
        })?;
        std::fs::create_dir_all(dir).map_err(|e| {
            format!(
                "cannot create the ns-3 cache {}: {e}; fix: choose a writable --out or pass --no-ns3-cache",
                dir.display()
            )
        })?;
        Ok(Ns3Cache {
            dir: dir.to_path_buf(),
            program: fnv1a(FNV_OFFSET, &bytes),
        })
    }

    fn path(&self, args: &[String]) -> PathBuf {
        let mut h = fnv1a(FNV_OFFSET, &self.program.to_le_bytes());
        for a in args {
            h = fnv1a(h, a.as_bytes());
            h = fnv1a(h, b"\n");
        }
        self.dir.join(format!("{h:016x}.json"))
    }

    /// The output stored for `args`, if any (and if stored for exactly these arguments).
    pub fn get(&self, args: &[String]) -> Option<String> {
        let text = std::fs::read_to_string(self.path(args)).ok()?;
        let (first, rest) = text.split_once('\n')?;
        (first == args.join(" ")).then(|| rest.to_string())
    }

    /// Stores `output` for `args`. A failure to write only costs a rerun later, so it is
    /// returned for the caller to report, not fatal.
    pub fn put(&self, args: &[String], output: &str) -> Result<(), String> {
        let path = self.path(args);
        // Written beside, then renamed: a reader never sees half an entry.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, format!("{}\n{}", args.join(" "), output))
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot store {} in the ns-3 cache: {e}", path.display()))
    }
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

    #[test]
    fn an_entry_is_found_for_its_program_and_arguments_only() {
        let dir = std::env::temp_dir().join(format!("concord-ns3-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let prog_a = dir.join("a");
        let prog_b = dir.join("b");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(&prog_a, b"program a").expect("a");
        std::fs::write(&prog_b, b"program b").expect("b");
        let cache = dir.join("cache");
        let a = Ns3Cache::open(&cache, &prog_a).expect("opens");
        let b = Ns3Cache::open(&cache, &prog_b).expect("opens");
        let args = vec!["--flows=4".to_string(), "--seed=1".to_string()];
        assert_eq!(a.get(&args), None);
        a.put(&args, "{\"simulator\": \"ns-3\"}\n").expect("stores");
        assert_eq!(a.get(&args).as_deref(), Some("{\"simulator\": \"ns-3\"}\n"));
        assert_eq!(b.get(&args), None, "another program is another key");
        let other = vec!["--flows=4".to_string(), "--seed=2".to_string()];
        assert_eq!(a.get(&other), None, "another seed is another key");
        // An entry whose first line names other arguments (a collision) is a miss.
        std::fs::write(a.path(&other), "--flows=9\n{}").expect("forged");
        assert_eq!(a.get(&other), None);
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
