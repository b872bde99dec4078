//! Builds the BPF datapath when the `datapath` feature is on: vmlinux.h from the running
//! kernel's BTF (bpftool), then the C program with clang through libbpf-cargo, which also
//! writes the Rust skeleton the agent loads it with.

fn main() {
    #[cfg(feature = "datapath")]
    datapath::build();
}

#[cfg(feature = "datapath")]
mod datapath {
    use std::path::PathBuf;
    use std::process::Command;

    /// The BPF programs and the skeleton each becomes.
    const SOURCES: [(&str, &str); 2] = [
        ("src/bpf/concord_tcp.bpf.c", "concord_tcp.skel.rs"),
        ("src/bpf/path_loss.bpf.c", "path_loss.skel.rs"),
    ];
    const BTF: &str = "/sys/kernel/btf/vmlinux";

    pub fn build() {
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let vmlinux = out.join("vmlinux.h");
        let dumped = Command::new("bpftool")
            .args(["btf", "dump", "file", BTF, "format", "c"])
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "the datapath feature needs bpftool to read {BTF} ({e}); \
                     install it (apt-get install bpftool) or build without --features datapath"
                )
            });
        if !dumped.status.success() {
            panic!(
                "bpftool could not dump {BTF}: {}; the kernel needs BTF (CONFIG_DEBUG_INFO_BTF) \
                 for the datapath, or build without --features datapath",
                String::from_utf8_lossy(&dumped.stderr)
            );
        }
        std::fs::write(&vmlinux, dumped.stdout).expect("write vmlinux.h into OUT_DIR");

        let arch = match std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
            Ok("x86_64") => "x86",
            Ok("aarch64") => "arm64",
            Ok(other) => panic!("no BPF target arch known for {other}"),
            Err(_) => "x86",
        };
        for (src, skel) in SOURCES {
            libbpf_cargo::SkeletonBuilder::new()
                .source(src)
                .clang_args([
                    format!("-I{}", out.display()),
                    format!("-D__TARGET_ARCH_{arch}"),
                    "-Wall".to_string(),
                ])
                .build_and_generate(out.join(skel))
                .unwrap_or_else(|e| panic!("building {src} failed: {e:#}"));
            println!("cargo:rerun-if-changed={src}");
        }
        println!("cargo:rerun-if-changed=src/bpf/concord_tcp.h");
    }
}
