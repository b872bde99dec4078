// SPDX-License-Identifier: GPL-2.0
/* concord's TCP datapath: a tcp_congestion_ops that reports every ACK to the concord-tcp agent
 * through a ring buffer and takes cwnd, ssthresh and pacing rate from a per-socket map the agent
 * writes. The kernel keeps its own loss recovery (the cong_avoid hook, not cong_control). When a
 * socket's map entry is missing or older than a few RTTs (the agent lags, crashed or has not
 * seen the socket yet), the datapath runs Reno by itself (RFC 5681), so no connection stalls.
 * Integer arithmetic only. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "concord_tcp.h"

char _license[] SEC("license") = "GPL";

/* The kernel's Reno (net/ipv4/tcp_cong.c), callable from tcp_congestion_ops programs. */
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/* A decision is stale after this many smoothed RTTs ... */
#define STALE_RTTS 4
/* ... and never before this many nanoseconds (20 ms), so a short-RTT path tolerates the agent's
 * scheduling delay. */
#define STALE_FLOOR_NS 20000000ULL
/* Wake the agent when this many bytes of records wait; it also polls every millisecond. */
#define WAKEUP_BYTES (64 * sizeof(struct concord_rec))

/* Measurements to the agent. 4 MiB: about 50000 records. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} records SEC(".maps");

/* Decisions from the agent, keyed by sock_id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct concord_ctl);
} decisions SEC(".maps");

/* Counters the agent reads: [0] records dropped because the ring buffer was full,
 * [1] ACKs where the datapath ran Reno itself (no fresh decision). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* The next sock_id. */
__u64 next_sock_id = 1;

/* Per-socket state kept in the socket itself (icsk_ca_priv, at most 104 bytes). */
struct concord_priv {
	__u64 sock_id;
	/* snd_una at the previous ACK, to count bytes acknowledged. */
	__u32 prior_snd_una;
	/* Congestion reductions (ssthresh calls) so far. */
	__u32 loss_events;
	/* enum concord_algo. */
	__u8 algo;
	/* The ACK being processed carried ECN-Echo. */
	__u8 ece;
	/* The last ssthresh call was part of the macroflow's last congestion event; reported with
	 * the state record that follows it. */
	__u8 same_event;
	/* concord_cm: the macroflow's reductions seen in decisions, and snd_nxt when the count
	 * last changed (the recover point of RFC 6582 section 3.2, for the whole macroflow). */
	__u32 reductions;
	__u32 recover;
};

static __always_inline struct concord_priv *priv_of(struct sock *sk)
{
	return (struct concord_priv *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		__sync_fetch_and_add(c, 1);
}

/* tcp_is_cwnd_limited() of include/net/tcp.h: in slow start, cwnd below twice the most
 * packets out in the last window; else the flag the sender latches once per window. */
static __always_inline int cwnd_limited(const struct tcp_sock *tp)
{
	if (tp->snd_cwnd < tp->snd_ssthresh)
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

static __always_inline __u32 packets_in_flight(const struct tcp_sock *tp)
{
	/* tcp_packets_in_flight() of include/net/tcp.h. */
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* Puts one record on the ring buffer with the socket's current state filled in. */
static __always_inline void report(struct sock *sk, __u8 kind, __u32 bytes_acked,
				   __u32 pkts_acked, __s32 rtt_us, __u32 event)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct concord_priv *p = priv_of(sk);
	struct concord_rec *r;
	__u64 flags;

	r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	if (!r) {
		count(0);
		return;
	}
	r->sock_id = p->sock_id;
	r->time_ns = bpf_ktime_get_ns();
	r->kind = kind;
	r->algo = p->algo;
	r->ca_state = ((struct inet_connection_sock *)sk)->icsk_ca_state;
	r->flags = (p->ece ? CONCORD_FLAG_ECE : 0) |
		   (cwnd_limited(tp) ? CONCORD_FLAG_CWND_LIMITED : 0) |
		   (p->same_event ? CONCORD_FLAG_SAME_EVENT : 0);
	r->event = event;
	r->bytes_acked = bytes_acked;
	r->pkts_acked = pkts_acked;
	r->rtt_us = rtt_us;
	r->srtt_us = tp->srtt_us >> 3;
	r->delivered = tp->delivered;
	r->lost = tp->lost;
	r->in_flight = packets_in_flight(tp);
	r->mss = tp->mss_cache;
	r->cwnd = tp->snd_cwnd;
	r->ssthresh = tp->snd_ssthresh;
	r->loss_events = p->loss_events;
	r->daddr = sk->__sk_common.skc_daddr;
	r->dport = sk->__sk_common.skc_dport;
	r->sport = sk->__sk_common.skc_num;
	r->saddr = sk->__sk_common.skc_rcv_saddr;
	/* Batching: an ACK or a cwnd event wakes the agent only once enough records wait (the
	 * agent also takes what waits every millisecond); a congestion-state change, an undo, an
	 * open or a close wakes it at once. */
	if ((kind != CONCORD_REC_ACK && kind != CONCORD_REC_EVENT) ||
	    bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) >= WAKEUP_BYTES)
		flags = BPF_RB_FORCE_WAKEUP;
	else
		flags = BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(r, flags);
}

/* The agent's decision for this socket if it is fresh and made after the last reduction. */
static __always_inline struct concord_ctl *fresh_decision(struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct concord_priv *p = priv_of(sk);
	/* Map keys must live on the stack, not in the socket. */
	__u64 id = p->sock_id;
	struct concord_ctl *c;
	__u64 now, limit;

	c = bpf_map_lookup_elem(&decisions, &id);
	if (!c)
		return 0;
	now = bpf_ktime_get_ns();
	limit = (__u64)(tp->srtt_us >> 3) * 1000 * STALE_RTTS;
	if (limit < STALE_FLOOR_NS)
		limit = STALE_FLOOR_NS;
	if (c->stamp_ns > now || now - c->stamp_ns > limit)
		return 0;
	return c;
}

static __always_inline void concord_init(struct sock *sk, __u8 algo)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct concord_priv *p = priv_of(sk);

	p->sock_id = __sync_fetch_and_add(&next_sock_id, 1);
	p->prior_snd_una = tp->snd_una;
	p->loss_events = 0;
	p->algo = algo;
	p->ece = 0;
	p->same_event = 0;
	p->reductions = 0;
	p->recover = tp->snd_nxt;
	report(sk, CONCORD_REC_INIT, 0, 0, -1, 0);
}

static __always_inline void concord_release(struct sock *sk)
{
	__u64 id = priv_of(sk)->sock_id;

	report(sk, CONCORD_REC_RELEASE, 0, 0, -1, 0);
	bpf_map_delete_elem(&decisions, &id);
}

static __always_inline void concord_cong_avoid(struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct concord_priv *p = priv_of(sk);
	struct concord_ctl *c = fresh_decision(sk);
	__u32 cwnd;

	if (!c || c->loss_events != p->loss_events) {
		count(1);
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	cwnd = c->cwnd;
	if (cwnd < 2)
		cwnd = 2;
	if (cwnd > tp->snd_cwnd_clamp)
		cwnd = tp->snd_cwnd_clamp;
	tp->snd_cwnd = cwnd;
	tp->snd_ssthresh = c->ssthresh < 2 ? 2 : c->ssthresh;
	if (c->pacing_rate)
		sk->sk_pacing_rate = c->pacing_rate;
}

static __always_inline __u32 concord_ssthresh(struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct concord_priv *p = priv_of(sk);
	struct concord_ctl *c = fresh_decision(sk);
	__u32 fresh = c && c->loss_events == p->loss_events;
	__u32 ss;

	p->loss_events += 1;
	p->same_event = 0;
	if (!fresh)
		return tcp_reno_ssthresh(sk);
	/* concord_cm: the first hole (snd_una) was sent before the macroflow's last reduction, so
	 * this loss belongs to the congestion event that reduction answered, as a single TCP's
	 * losses below recover do (RFC 6582 section 3.2): keep the reduced share, no new halving. */
	if (p->algo == CONCORD_CM && p->reductions && (__s32)(tp->snd_una - p->recover) < 0) {
		p->same_event = 1;
		ss = c->cwnd;
		return ss < 2 ? 2 : ss;
	}
	ss = c->loss_ssthresh;
	return ss < 2 ? 2 : ss;
}

static __always_inline __u32 concord_undo_cwnd(struct sock *sk)
{
	/* The kernel restores ssthresh itself; the agent takes the restored cwnd and ssthresh
	 * from the socket's next record. */
	report(sk, CONCORD_REC_UNDO, 0, 0, -1, 0);
	return tcp_reno_undo_cwnd(sk);
}

static __always_inline void concord_pkts_acked(struct sock *sk, const struct ack_sample *s)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct concord_priv *p = priv_of(sk);
	__u32 una = tp->snd_una;
	__u32 bytes = una - p->prior_snd_una;

	p->prior_snd_una = una;
	report(sk, CONCORD_REC_ACK, bytes, s->pkts_acked, s->rtt_us, 0);
	p->ece = 0;
	if (p->algo == CONCORD_CM) {
		/* A new reduction of the macroflow: what this socket has sent so far was sent
		 * before it. */
		__u64 id = p->sock_id;
		struct concord_ctl *c = bpf_map_lookup_elem(&decisions, &id);

		if (c && c->reductions != p->reductions) {
			p->reductions = c->reductions;
			p->recover = tp->snd_nxt;
		}
	}
}

static __always_inline void concord_set_state(struct sock *sk, __u8 new_state)
{
	report(sk, CONCORD_REC_STATE, 0, 0, -1, new_state);
	priv_of(sk)->same_event = 0;
}

static __always_inline void concord_in_ack_event(struct sock *sk, __u32 flags)
{
	priv_of(sk)->ece = (flags & CA_ACK_ECE) ? 1 : 0;
}

/* One tcp_congestion_ops per algorithm name; all share the datapath above and differ only in
 * the controller the agent runs for their sockets. */
#define CONCORD_ALGO(algo_name, algo_id)                                                      \
	SEC("struct_ops")                                                                   \
	void BPF_PROG(algo_name##_init, struct sock *sk) { concord_init(sk, algo_id); }     \
	SEC("struct_ops")                                                                   \
	void BPF_PROG(algo_name##_release, struct sock *sk) { concord_release(sk); }        \
	SEC("struct_ops")                                                                   \
	void BPF_PROG(algo_name##_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)      \
	{                                                                                   \
		concord_cong_avoid(sk, ack, acked);                                         \
	}                                                                                   \
	SEC("struct_ops")                                                                   \
	__u32 BPF_PROG(algo_name##_ssthresh, struct sock *sk) { return concord_ssthresh(sk); } \
	SEC("struct_ops")                                                                   \
	__u32 BPF_PROG(algo_name##_undo_cwnd, struct sock *sk) { return concord_undo_cwnd(sk); } \
	SEC("struct_ops")                                                                   \
	void BPF_PROG(algo_name##_pkts_acked, struct sock *sk, const struct ack_sample *s)  \
	{                                                                                   \
		concord_pkts_acked(sk, s);                                                  \
	}                                                                                   \
	SEC("struct_ops")                                                                   \
	void BPF_PROG(algo_name##_in_ack_event, struct sock *sk, __u32 flags)               \
	{                                                                                   \
		concord_in_ack_event(sk, flags);                                            \
	}                                                                                   \
	SEC("struct_ops")                                                                   \
	void BPF_PROG(algo_name##_cwnd_event, struct sock *sk, enum tcp_ca_event ev)        \
	{                                                                                   \
		report(sk, CONCORD_REC_EVENT, 0, 0, -1, ev);                                \
	}                                                                                   \
	SEC("struct_ops")                                                                   \
	void BPF_PROG(algo_name##_set_state, struct sock *sk, __u8 new_state)               \
	{                                                                                   \
		concord_set_state(sk, new_state);                                           \
	}                                                                                   \
	SEC(".struct_ops.link")                                                             \
	struct tcp_congestion_ops algo_name = {                                             \
		.init = (void *)algo_name##_init,                                           \
		.release = (void *)algo_name##_release,                                     \
		.cong_avoid = (void *)algo_name##_cong_avoid,                               \
		.ssthresh = (void *)algo_name##_ssthresh,                                   \
		.undo_cwnd = (void *)algo_name##_undo_cwnd,                                 \
		.pkts_acked = (void *)algo_name##_pkts_acked,                               \
		.in_ack_event = (void *)algo_name##_in_ack_event,                           \
		.cwnd_event = (void *)algo_name##_cwnd_event,                               \
		.set_state = (void *)algo_name##_set_state,                                 \
		.name = "concord_" #algo_name, /* at most 15 characters (TCP_CA_NAME_MAX 16) */                                              \
	};

CONCORD_ALGO(newreno, CONCORD_NEWRENO)
CONCORD_ALGO(mccp, CONCORD_MCCP)
CONCORD_ALGO(cm, CONCORD_CM)
CONCORD_ALGO(westw, CONCORD_WESTWOOD)
CONCORD_ALGO(cubic, CONCORD_CUBIC)
