//! Records how this binary was compiled, so that `concord bench` can say beside its speed
//! figures which build made them: the optimisation level of the cargo profile and whether the
//! code was laid out by a profile (`bench/pgo.sh` passes `-Cprofile-use=...` in RUSTFLAGS).

fn main() {
    // Cargo gives a build script the flags it passes to rustc, separated by 0x1f.
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let pgo = flags.split('\x1f').any(|f| f.contains("profile-use"));
    let opt_level = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=CONCORD_BUILD_OPT_LEVEL={opt_level}");
    println!("cargo:rustc-env=CONCORD_BUILD_PGO={}", u8::from(pgo));
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-changed=build.rs");
}
