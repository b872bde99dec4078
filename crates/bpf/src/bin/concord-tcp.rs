use concord_bpf::skel::*;
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use std::mem::MaybeUninit;
fn main() {
    let mut obj = MaybeUninit::uninit();
    let open = ConcordTcpSkelBuilder::default().open(&mut obj).expect("open");
    let mut skel = open.load().expect("load");
    let _l1 = skel.maps.newreno.attach_struct_ops().expect("attach");
    let _l2 = skel.maps.mccp.attach_struct_ops().expect("attach");
    println!("attached");
    std::thread::sleep(std::time::Duration::from_secs(1000));
}
