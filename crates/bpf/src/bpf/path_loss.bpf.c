// SPDX-License-Identifier: GPL-2.0
/* Random loss for the test bed: a tc program that drops each packet it sees with a fixed
 * probability, drawn from a seeded generator so that a run's drop pattern (given the order of
 * packets) is the same every time. Attached at the egress of the router's link to the
 * receiver, before the bottleneck's queue: the loss a lossy link would add. There is no netem
 * on the machines concord's test bed runs on. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2

/* Drop when the next 32-bit draw is below this (probability * 2^32). Set before loading. */
const volatile __u32 drop_below = 0;
/* The generator's seed. Set before loading. */
const volatile __u64 seed = 1;

/* splitmix64's state; 0 until the first packet seeds it. */
__u64 state = 0;
/* Packets seen and packets dropped. */
__u64 seen = 0;
__u64 dropped = 0;

SEC("tc")
int drop_random(struct __sk_buff *skb)
{
	__u64 z;

	if (state == 0)
		state = seed;
	/* splitmix64 (Steele, Lea, Flood 2014); racy across CPUs, which only reorders draws. */
	state += 0x9e3779b97f4a7c15ULL;
	z = state;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	__sync_fetch_and_add(&seen, 1);
	if ((__u32)(z >> 32) < drop_below) {
		__sync_fetch_and_add(&dropped, 1);
		return TC_ACT_SHOT;
	}
	return TC_ACT_OK;
}
