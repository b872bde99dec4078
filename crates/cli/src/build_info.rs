//! How this binary was compiled (recorded by `build.rs`), for `concord bench` to print beside
//! its speed figures: a figure of an unoptimised build, or of the profile-guided one, says so.

use serde_json::{json, Value};

/// The cargo profile's optimisation level (`"0"` to `"3"`, `"s"`, `"z"`).
pub const OPT_LEVEL: &str = env!("CONCORD_BUILD_OPT_LEVEL");

/// True if the code was compiled with a profile of a training run (`bench/pgo.sh`).
pub const PROFILE_GUIDED: bool = matches!(env!("CONCORD_BUILD_PGO").as_bytes(), b"1");

/// True if debug assertions are compiled in (the `dev` and `test` profiles).
pub const DEBUG_ASSERTIONS: bool = cfg!(debug_assertions);

/// One line saying which build this is, and what to do if it is not one to measure speed with.
pub fn describe() -> String {
    let mut s = format!("opt-level {OPT_LEVEL}");
    if DEBUG_ASSERTIONS {
        s.push_str(", debug assertions");
    }
    if PROFILE_GUIDED {
        s.push_str(", profile-guided (bench/pgo.sh)");
    }
    if OPT_LEVEL != "3" || DEBUG_ASSERTIONS {
        s.push_str(
            ": not a release build, so its speed is not comparable; measure with `cargo build --release`",
        );
    }
    s
}

/// The same as JSON: `{"opt_level": "3", "debug_assertions": false, "profile_guided": false}`.
pub fn json() -> Value {
    json!({
        "opt_level": OPT_LEVEL,
        "debug_assertions": DEBUG_ASSERTIONS,
        "profile_guided": PROFILE_GUIDED,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_names_the_level_and_warns_off_an_unoptimised_build() {
        let d = describe();
        assert!(d.starts_with(&format!("opt-level {OPT_LEVEL}")), "{d}");
        let release = OPT_LEVEL == "3" && !DEBUG_ASSERTIONS;
        assert_eq!(d.contains("not a release build"), !release, "{d}");
        assert_eq!(d.contains("profile-guided"), PROFILE_GUIDED, "{d}");
        assert_eq!(json()["opt_level"], OPT_LEVEL);
    }
}
