/* The protocol between concord's BPF datapath and its agent: the records the datapath puts on
 * the ring buffer and the per-socket decisions the agent writes back. The Rust side mirrors these
 * layouts in src/protocol.rs; both are plain little-endian C structs of fixed-width fields. */
#ifndef CONCORD_TCP_H
#define CONCORD_TCP_H

/* Which controller a socket asked for (the algorithm name it was given). */
enum concord_algo {
	CONCORD_NEWRENO = 1,
	CONCORD_MCCP = 2,
	CONCORD_CM = 3,
	CONCORD_WESTWOOD = 4,
	CONCORD_CUBIC = 5,
};

/* What a measurement record reports. */
enum concord_rec_kind {
	/* A socket started using a concord algorithm (init). */
	CONCORD_REC_INIT = 1,
	/* An ACK arrived (pkts_acked): bytes, packets, RTT sample. */
	CONCORD_REC_ACK = 2,
	/* The congestion state changes (set_state): `event` is the new state, `ca_state` the old. */
	CONCORD_REC_STATE = 3,
	/* A reduction is being undone (undo_cwnd); the next record carries the restored window. */
	CONCORD_REC_UNDO = 4,
	/* A cwnd event (cwnd_event); `event` is the tcp_ca_event. */
	CONCORD_REC_EVENT = 5,
	/* The socket stopped using the algorithm (release). */
	CONCORD_REC_RELEASE = 6,
};

/* The ACK carried ECN-Echo (in_ack_event CA_ACK_ECE). */
#define CONCORD_FLAG_ECE 1
/* The socket is cwnd-limited (the kernel's tcp_is_cwnd_limited): only then may cwnd grow
 * (RFC 7661 section 4.3; Linux's tcp_reno_cong_avoid). */
#define CONCORD_FLAG_CWND_LIMITED 2
/* A congestion signal (the state record after an ssthresh call) whose first hole, at snd_una,
 * was sent before the last reduction of the socket's TCP/CM macroflow: part of the congestion
 * event that reduction answered (RFC 6582 section 3.2's recover, across the macroflow). */
#define CONCORD_FLAG_SAME_EVENT 4

/* One measurement, datapath to agent (ring buffer). 80 bytes. */
struct concord_rec {
	/* The socket's id, unique while this datapath is loaded. */
	__u64 sock_id;
	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC, nanoseconds. */
	__u64 time_ns;
	/* enum concord_rec_kind. */
	__u8 kind;
	/* enum concord_algo. */
	__u8 algo;
	/* The socket's tcp_ca_state when the record was made. */
	__u8 ca_state;
	/* CONCORD_FLAG_*: this ACK carried ECN-Echo; the socket is cwnd-limited. */
	__u8 flags;
	/* The tcp_ca_event for CONCORD_REC_EVENT, the new tcp_ca_state for CONCORD_REC_STATE. */
	__u32 event;
	/* Bytes newly acknowledged (snd_una advance). */
	__u32 bytes_acked;
	/* Packets acknowledged (ack_sample.pkts_acked). */
	__u32 pkts_acked;
	/* RTT sample in microseconds, -1 when the ACK gave none (ack_sample.rtt_us). */
	__s32 rtt_us;
	/* Smoothed RTT in microseconds (srtt_us >> 3). */
	__u32 srtt_us;
	/* Packets delivered so far (tp->delivered). */
	__u32 delivered;
	/* Packets marked lost so far (tp->lost). */
	__u32 lost;
	/* Packets in flight (tcp_packets_in_flight). */
	__u32 in_flight;
	/* Sender MSS in bytes (tp->mss_cache). */
	__u32 mss;
	/* The kernel's cwnd and ssthresh, in segments. */
	__u32 cwnd;
	__u32 ssthresh;
	/* Congestion reductions (ssthresh calls) on this socket so far. */
	__u32 loss_events;
	/* Remote IPv4 address and ports, network byte order (0 for IPv6 peers). */
	__u32 daddr;
	__u16 dport;
	__u16 sport;
	__u32 saddr;
};

/* One socket's decisions, agent to datapath (hash map keyed by sock_id). 40 bytes. */
struct concord_ctl {
	/* When the agent wrote this, CLOCK_MONOTONIC nanoseconds. Older than a few RTTs: the
	 * datapath ignores it and runs Reno itself. */
	__u64 stamp_ns;
	/* Congestion window and slow-start threshold, in segments. */
	__u32 cwnd;
	__u32 ssthresh;
	/* The ssthresh to take when the kernel next detects congestion, in segments (the
	 * controller's reaction computed ahead, since the ssthresh hook cannot wait). */
	__u32 loss_ssthresh;
	/* Congestion reductions the agent has seen; the datapath applies cwnd only when it
	 * matches its own count, so a decision made before a loss never undoes the loss. */
	__u32 loss_events;
	/* Pacing rate in bytes per second; 0 leaves the kernel's. */
	__u64 pacing_rate;
	/* Reductions of the socket's TCP/CM macroflow so far (0 for the window algorithms). When
	 * it changes, the datapath takes the socket's snd_nxt as its recover point. */
	__u32 reductions;
	__u32 reserved;
};

#endif
