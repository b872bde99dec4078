// ns-3 side of `concord validate`: one case of the cross-validation grid (a dumbbell or a
// parking lot, DropTail or RED with or without ECN, random loss), run once, printed as one JSON
// object. The settings mirror concord's scenario for the same case (crates/validate/src/
// concord_run.rs); see docs/validation.md.
//
//   dumbbell:     s_i -- 1 Gbps/1 ms -- r1 == rate/delay ==> r2 -- 1 Gbps/1 ms -- d_i
//   parking lot:  src -- r1 ==> r2 ==> ... ==> r(H+1) -- dst, and per hop h: c_h -- r_h ==> r(h+1) -- x_h
//
// TCP: NewReno, classic recovery (RFC 5681/6582), IW 10, MSS 1448, delayed ACKs (2 segments,
// 200 ms), minimum RTO 200 ms, SACK off, timestamps on, limited transmit on (ns-3's default);
// --recovery=prr, --sack=1, --limitedTransmit=0, --redWait=0, --delAckTimeoutMs=40,
// --rfcRecover=1, --rfcLossExit=1 and --rfcEcnOnce=1 switch one mechanism each (--minRtoMs sets
// the minimum RTO, for measurements by hand). The last three correct a departure of ns-3 3.44
// from an RFC (DeviationSocket below); they are off in the reference runs.
//
// --rfcRecover=1 adds RFC 6582 section 3.2 step 1's test to ns-3's sender: three duplicate ACKs
// whose cumulative ACK does not cover more than `recover` (the highest sequence sent when the last
// fast retransmit or timeout happened) do not start fast retransmit. ns-3 3.44's
// TcpSocketBase::DupAck enters recovery on `m_highRxAckMark >= m_recover || !m_recoverActive`,
// which lets through the duplicate ACKs of data resent after a timeout (go-back-N) that the
// receiver already held; the test keeps them out ("recover_blocked" counts the entries kept out).
//
// --rfcLossExit=1 grows cwnd on the ACK that ends loss recovery after a timeout (RFC 5681 3.1;
// ns-3 counts 0 segments on it when it is exactly `recover`) and keeps the backed-off RTO until
// an RTT sample is taken (RFC 6298 5.7; ns-3 recomputes it on any new ACK): "loss_exit_grown"
// and "rto_kept" count the ACKs on which each acted. --rfcEcnOnce=1 leaves unanswered an ECN echo
// on an ACK that acknowledges only data sent before the last window reduction (RFC 3168 6.1.2;
// ns-3 enters CWR on it even in loss recovery): "ece_ignored" counts them, and
// "cwr_after_reduction" (every run) the entries into CWR from loss or fast recovery.
//
// Every timeout is also counted by its cause ("timeout_causes"): whether the receiver already held
// the segment at snd.una when the timer fired (a spurious timeout), else the congestion state the
// flow was in (fast recovery, an earlier timeout's loss recovery, or neither: a tail loss).
// Likewise each entry into fast recovery whose segment at snd.una the receiver already held
// ("fast_retransmit_causes": "receiver_held", a spurious fast retransmit) is counted apart.
//
// --trace=1 also prints every flow's events to stderr, one per line, for tracing a case by hand:
// `<time s> <flow> cwnd <segments>` (the inflated window), `ssthresh <segments>`,
// `state <old>-><new>` (ns-3's congestion states), `timeout <kind>` (its cause as counted) and
// `drop` (a packet dropped at a bottleneck, flow unknown: -1).
//
// Everything is counted by C++ callbacks; no Python is involved.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <time.h>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// One flow's counters.
struct FlowTrace
{
    // Congestion window (the inflated one during recovery, as concord traces), segments.
    bool started = false;
    double firstS = 0.0;
    double lastS = 0.0;
    double value = 0.0;
    double sum = 0.0;   // integral of the window over time, segment-seconds
    double sumSq = 0.0; // integral of its square
    double max = 0.0;
    // Retransmission timeouts once the connection is established: ReTxTimeout doubles the RTO
    // (RFC 6298 5.5), so a new RTO of twice the old one (or the 60 s cap) is a timeout.
    uint64_t timeouts = 0;
    uint64_t synTimeouts = 0;
    // Entries into fast recovery (CA_RECOVERY) and into loss (CA_LOSS).
    uint64_t recoveries = 0;
    uint64_t lossEpisodes = 0;
    // Entries into CA_RECOVERY while the receiver already held the segment at snd.una: the
    // duplicate ACKs were caused by duplicate segments (resent data the receiver had), not by a
    // loss (RFC 6582 section 4.1).
    uint64_t spuriousRecoveries = 0;
    // Entries into CA_CWR (an ECN echo answered) from CA_LOSS or CA_RECOVERY: a second reduction
    // in a window already reduced by a timeout or a fast retransmit (RFC 3168 6.1.2 has one).
    uint64_t cwrAfterReduction = 0;
    bool established = false;
    // The timeouts by what the connection held when the timer fired (RtoChange):
    // - receiverHeld: the receiver already had the segment at the sender's snd.una (its next
    //   expected sequence is past it): the ACK was held by the delayed-ACK timer or in flight,
    //   a spurious timeout (RFC 5681 4.2 against RFC 6298 2.4);
    // - inRecovery: the segment is missing and the flow was in fast recovery (its
    //   retransmission, or a later hole's, lost);
    // - repeat: the segment is missing and the flow was already in loss recovery after an
    //   earlier timeout (the retransmission after a timeout lost again);
    // - open / disorder: the segment is missing and the flow was in neither (no duplicate ACK /
    //   one or two: too few for fast retransmit, a tail loss).
    uint64_t receiverHeld = 0;
    uint64_t inRecovery = 0;
    uint64_t repeat = 0;
    uint64_t open = 0;
    uint64_t disorder = 0;
    // The congestion state, the state before the last entry into CA_LOSS, and when that was.
    TcpSocketState::TcpCongState_t state = TcpSocketState::CA_OPEN;
    TcpSocketState::TcpCongState_t beforeLoss = TcpSocketState::CA_OPEN;
    Time enteredLoss = Seconds(-1);
    Ptr<TcpSocketBase> sender;
    Ptr<PacketSink> sink;
};

std::vector<FlowTrace> g_flows;
uint32_t g_segment = 1448;
bool g_trace = false;

// One --trace line: the time, the flow and the event.
void
Trace(int64_t flow, const std::string& event)
{
    if (g_trace)
    {
        std::cerr << std::setprecision(9) << Simulator::Now().GetSeconds() << " " << flow << " "
                  << event << "\n";
    }
}

// What each switch of DeviationSocket did (printed in the JSON, 0 with the switch off):
// - g_recoverBlocked: duplicate-ACK thresholds kept from starting fast retransmit (--rfcRecover);
// - g_lossExitGrown: ACKs ending loss recovery on which the window grew by the segments they
//   acknowledge (--rfcLossExit);
// - g_rtoKept: new ACKs on which the backed-off RTO was kept, no RTT sample having been taken
//   since the timeout (--rfcLossExit);
// - g_eceIgnored: ECN echoes of data sent before the last window reduction not answered
//   (--rfcEcnOnce).
uint64_t g_recoverBlocked = 0;
uint64_t g_lossExitGrown = 0;
uint64_t g_rtoKept = 0;
uint64_t g_eceIgnored = 0;
// Set while DeviationSocket restores a backed-off RTO, so that RtoChange does not take the
// restore (a doubling of the value ns-3 has just collapsed it to) for a timeout.
bool g_restoringRto = false;

// ns-3 3.44's TcpSocketBase with up to three departures from the RFCs corrected, each a switch,
// each off by default (the reference runs use ns-3 as shipped).
//
// --rfcRecover=1, RFC 6582 3.2 step 1's test: duplicate ACKs whose cumulative ACK does not
// cover more than recover do not start fast retransmit. recover is kept in ns-3's form
// (m_recover = m_highTxMark, one past the highest sequence sent), so an ACK covers more than
// recover when it is above it; it is the largest m_recover ns-3 has set (at a fast retransmit or
// a timeout), which ns-3 itself forgets once m_recoverActive clears.
//
// --rfcLossExit=1, two rules on leaving loss recovery after a timeout:
// - RFC 5681 3.1: in slow start cwnd grows by up to SMSS on every ACK of new data. ns-3's
//   ProcessAck, on the ACK that ends CA_LOSS (ack >= m_recover), passes IncreaseWindow only the
//   segments above m_recover, (ack - m_recover) / SMSS, which is 0 when the ACK is m_recover
//   itself; the switch makes the count the segments the ACK acknowledges, (ack - snd.una) /
//   SMSS, as ns-3 counts them on every other ACK (and on leaving fast recovery).
// - RFC 6298 5.5-5.7 and the note after 5.7 (Karn): the backed-off RTO stays until an RTT sample
//   is taken from data sent after the timeout. ns-3's NewAck recomputes the RTO from the
//   estimator on every new ACK; the switch keeps the backed-off value, and its timer, until
//   EstimateRtt takes a sample.
//
// --rfcEcnOnce=1, RFC 3168 6.1.2: the sender reduces its window at most once per window of data
// ("the TCP sender's congestion window should be reduced only once in response to a series of
// dropped and/or CE packets from a single window of data"). ns-3 enters CWR on an ECN echo
// whatever its state, also in CA_LOSS and CA_RECOVERY on an echo of a mark made before the
// timeout or fast retransmit that already reduced the window, and sets ssthresh from the flight
// of then (after a timeout one segment: ssthresh 2 segments). m_recover is m_highTxMark at the
// last reduction (timeout, fast retransmit or CWR), so an ACK at or below it acknowledges only
// data sent before that reduction: its echo is not answered. The echo is still taken as
// received (ECN_ECE_RCVD, m_ecnEchoSeq), so the next new segment carries CWR and the receiver
// stops echoing, as after a reduction (RFC 3168 6.1.2: CWR after any reduction).
class DeviationSocket : public TcpSocketBase
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ValidateDeviationSocket")
                                .SetParent<TcpSocketBase>()
                                .SetGroupName("Internet")
                                .AddConstructor<DeviationSocket>();
        return tid;
    }

    bool rfcRecover = false;
    bool rfcLossExit = false;
    bool rfcEcnOnce = false;

  protected:
    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& tcpHeader) override
    {
        const SequenceNumber32 ack = tcpHeader.GetAckNumber();
        if (rfcEcnOnce && (tcpHeader.GetFlags() & TcpHeader::ECE) &&
            m_tcb->m_ecnState != TcpSocketState::ECN_DISABLED &&
            ack > m_txBuffer->HeadSequence() && m_ecnEchoSeq.Get() < ack &&
            m_tcb->m_congState != TcpSocketState::CA_CWR && ack <= m_recover)
        {
            // ns-3 would enter CWR here (ReceivedAck): taken as received, not answered.
            static const char* const kNames[] = {"open", "disorder", "cwr", "recovery", "loss"};
            Trace(m_traceFlow, std::string("ece_ignored in ") + kNames[m_tcb->m_congState.Get()]);
            m_ecnEchoSeq = ack;
            m_tcb->m_ecnState = TcpSocketState::ECN_ECE_RCVD;
            ++g_eceIgnored;
        }
        TcpSocketBase::ReceivedAck(packet, tcpHeader);
    }

    void ProcessAck(const SequenceNumber32& ackNumber,
                    bool scoreboardUpdated,
                    uint32_t currentDelivered,
                    const SequenceNumber32& oldHeadSequence,
                    bool receivedData) override
    {
        Track();
        const bool dup = ackNumber == oldHeadSequence && ackNumber < m_tcb->m_highTxMark;
        const bool notRecovering = m_tcb->m_congState == TcpSocketState::CA_OPEN ||
                                   m_tcb->m_congState == TcpSocketState::CA_DISORDER;
        if (rfcRecover && dup && notRecovering && m_seen && ackNumber <= m_rfcRecover &&
            m_dupAckCount + 1 >= m_retxThresh)
        {
            // This ACK would be the threshold's: RFC 6582 3.2 step 1 says do not enter fast
            // retransmit; the duplicates counted so far are forgotten, as ns-3 does on leaving
            // recovery.
            m_dupAckCount = 0;
            if (!m_sackEnabled)
            {
                m_txBuffer->ResetRenoSack();
            }
            ++g_recoverBlocked;
        }
        // The ACK ending loss recovery: the segments ns-3 counts (above m_recover) and those it
        // acknowledges (above snd.una).
        const bool lossExit = rfcLossExit &&
                              m_tcb->m_congState == TcpSocketState::CA_LOSS &&
                              ackNumber >= m_recover && ackNumber > oldHeadSequence;
        const uint32_t counted = lossExit ? (ackNumber - m_recover) / m_tcb->m_segmentSize : 0;
        const uint32_t acked = lossExit ? (ackNumber - oldHeadSequence) / m_tcb->m_segmentSize : 0;
        TcpSocketBase::ProcessAck(ackNumber, scoreboardUpdated, currentDelivered, oldHeadSequence, receivedData);
        // ns-3 called IncreaseWindow(counted) once; one call with `acked` would have done in slow
        // start one SMSS (as with counted >= 1) and passed the rest to congestion avoidance if
        // cwnd reached ssthresh. The difference: all of `acked` if counted is 0, else the rest
        // once cwnd is at ssthresh.
        if (lossExit && acked > counted && m_tcb->m_congState == TcpSocketState::CA_OPEN &&
            (counted == 0 || m_tcb->m_cWnd >= m_tcb->m_ssThresh))
        {
            m_congestionControl->IncreaseWindow(m_tcb, acked - counted);
            m_tcb->m_cWndInfl = m_tcb->m_cWnd;
            ++g_lossExitGrown;
            std::ostringstream e;
            e << "loss_exit_grown " << acked - counted;
            Trace(m_traceFlow, e.str());
        }
        Track();
    }

    void ReTxTimeout() override
    {
        const Time before = m_rto.Get();
        TcpSocketBase::ReTxTimeout();
        if (m_rto.Get() > before)
        {
            m_backedOff = true;
        }
    }

    void EstimateRtt(const TcpHeader& tcpHeader) override
    {
        const uint32_t samples = m_rtt->GetNSamples();
        TcpSocketBase::EstimateRtt(tcpHeader);
        if (m_rtt->GetNSamples() != samples)
        {
            // RFC 6298 5.7's note: a new RTT measurement ends the backoff.
            m_backedOff = false;
        }
    }

    void NewAck(const SequenceNumber32& ack, bool resetRTO) override
    {
        const Time backedOff = m_rto.Get();
        TcpSocketBase::NewAck(ack, resetRTO);
        if (rfcLossExit && m_backedOff && resetRTO && m_rto.Get() < backedOff)
        {
            g_restoringRto = true;
            m_rto = backedOff;
            g_restoringRto = false;
            if (m_retxEvent.IsPending())
            {
                m_retxEvent.Cancel();
                m_retxEvent = Simulator::Schedule(m_rto, &DeviationSocket::ReTxTimeout, this);
            }
            ++g_rtoKept;
            Trace(m_traceFlow, "rto_kept");
        }
    }

  public:
    // The flow's index in --trace lines (-1 until HookSocket sets it).
    int64_t m_traceFlow = -1;

  private:
    void Track()
    {
        if (m_recoverActive && (!m_seen || m_recover > m_rfcRecover))
        {
            m_rfcRecover = m_recover;
            m_seen = true;
        }
    }

    SequenceNumber32 m_rfcRecover{0};
    bool m_seen = false;
    // A timeout doubled the RTO and no RTT sample has been taken since.
    bool m_backedOff = false;
};

// Creates DeviationSocket as TcpL4Protocol::CreateSocket creates ns-3's own socket (NewReno,
// RttMeanDeviation, the recovery given), with the switches given.
class DeviationFactory : public SocketFactory
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ValidateDeviationFactory")
                                .SetParent<SocketFactory>()
                                .SetGroupName("Internet");
        return tid;
    }

    Ptr<Socket> CreateSocket() override
    {
        Ptr<Node> node = GetObject<Node>();
        Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
        Ptr<DeviationSocket> s = CreateObject<DeviationSocket>();
        s->SetNode(node);
        s->SetTcp(tcp);
        s->SetRtt(CreateObject<RttMeanDeviation>());
        s->SetCongestionControlAlgorithm(CreateObject<TcpNewReno>());
        if (prr)
        {
            s->SetRecoveryAlgorithm(CreateObject<TcpPrrRecovery>());
        }
        else
        {
            s->SetRecoveryAlgorithm(CreateObject<TcpClassicRecovery>());
        }
        s->rfcRecover = rfcRecover;
        s->rfcLossExit = rfcLossExit;
        s->rfcEcnOnce = rfcEcnOnce;
        tcp->AddSocket(s);
        return s;
    }

    bool prr = false;
    bool rfcRecover = false;
    bool rfcLossExit = false;
    bool rfcEcnOnce = false;
};
uint64_t g_tcDrops = 0;
uint64_t g_wireLosses = 0;

void
CwndChange(uint32_t flow, uint32_t, uint32_t newValue)
{
    FlowTrace& f = g_flows[flow];
    const double now = Simulator::Now().GetSeconds();
    const double v = static_cast<double>(newValue) / g_segment;
    if (!f.started)
    {
        f.started = true;
        f.firstS = now;
    }
    else
    {
        const double dt = now - f.lastS;
        f.sum += f.value * dt;
        f.sumSq += f.value * f.value * dt;
    }
    f.lastS = now;
    f.value = v;
    if (g_trace)
    {
        std::ostringstream e;
        e << "cwnd " << v;
        Trace(flow, e.str());
    }
    f.max = std::max(f.max, v);
}

// The receiver's next expected sequence, if its connection exists.
bool
ReceiverNext(const FlowTrace& f, SequenceNumber32& next)
{
    if (!f.sink)
    {
        return false;
    }
    for (const Ptr<Socket>& s : f.sink->GetAcceptedSockets())
    {
        Ptr<TcpSocketBase> t = DynamicCast<TcpSocketBase>(s);
        if (t)
        {
            next = t->GetRxBuffer()->NextRxSequence();
            return true;
        }
    }
    return false;
}

// Counts a timeout under its cause (see FlowTrace). Whichever ReTxTimeout does first, enter
// CA_LOSS or double the RTO, the state before this timeout is the one left at a CA_LOSS entry at
// this instant, or else the current one (CA_LOSS itself: an earlier timeout's recovery).
void
ClassifyTimeout(FlowTrace& f)
{
    SequenceNumber32 next;
    if (f.sender && ReceiverNext(f, next) && next > f.sender->GetTxBuffer()->HeadSequence())
    {
        ++f.receiverHeld;
        Trace(&f - g_flows.data(), "timeout receiver_held");
        return;
    }
    static const char* const kNames[] = {"open", "disorder", "cwr", "recovery", "loss"};
    Trace(&f - g_flows.data(), std::string("timeout from ") + kNames[f.enteredLoss == Simulator::Now() ? f.beforeLoss : f.state]);
    const TcpSocketState::TcpCongState_t before =
        f.enteredLoss == Simulator::Now() ? f.beforeLoss : f.state;
    switch (before)
    {
    case TcpSocketState::CA_RECOVERY:
    case TcpSocketState::CA_CWR:
        ++f.inRecovery;
        break;
    case TcpSocketState::CA_LOSS:
        ++f.repeat;
        break;
    case TcpSocketState::CA_DISORDER:
        ++f.disorder;
        break;
    default:
        ++f.open;
        break;
    }
}

void
RtoChange(uint32_t flow, Time oldValue, Time newValue)
{
    if (g_restoringRto)
    {
        return;
    }
    const bool doubled = newValue == oldValue * 2 ||
                         (newValue == Seconds(60) && oldValue > Seconds(30) && oldValue != newValue);
    if (doubled)
    {
        if (g_flows[flow].established)
        {
            ++g_flows[flow].timeouts;
            ClassifyTimeout(g_flows[flow]);
        }
        else
        {
            ++g_flows[flow].synTimeouts;
        }
    }
}

void
StateChange(uint32_t flow, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t newValue)
{
    if (newValue == TcpSocket::ESTABLISHED)
    {
        g_flows[flow].established = true;
    }
}

void
CongStateChange(uint32_t flow,
                TcpSocketState::TcpCongState_t oldValue,
                TcpSocketState::TcpCongState_t newValue)
{
    g_flows[flow].state = newValue;
    if (g_trace)
    {
        static const char* const kNames[] = {"open", "disorder", "cwr", "recovery", "loss"};
        Trace(flow, std::string("state ") + kNames[oldValue] + "->" + kNames[newValue]);
    }
    if (newValue == TcpSocketState::CA_RECOVERY)
    {
        FlowTrace& f = g_flows[flow];
        ++f.recoveries;
        SequenceNumber32 next;
        if (f.sender && ReceiverNext(f, next) && next > f.sender->GetTxBuffer()->HeadSequence())
        {
            ++f.spuriousRecoveries;
        }
    }
    else if (newValue == TcpSocketState::CA_CWR &&
             (oldValue == TcpSocketState::CA_LOSS || oldValue == TcpSocketState::CA_RECOVERY))
    {
        ++g_flows[flow].cwrAfterReduction;
    }
    else if (newValue == TcpSocketState::CA_LOSS)
    {
        ++g_flows[flow].lossEpisodes;
        g_flows[flow].beforeLoss = oldValue;
        g_flows[flow].enteredLoss = Simulator::Now();
    }
}

void
SsthreshChange(uint32_t flow, uint32_t, uint32_t newValue)
{
    std::ostringstream e;
    e << "ssthresh " << static_cast<double>(newValue) / g_segment;
    Trace(flow, e.str());
}

void
CountTcDrop(Ptr<const Packet>)
{
    ++g_tcDrops;
    Trace(-1, "drop");
}

// A bottleneck device queue's drop (counted from the queue's statistics at the end).
void
CountTcDropTraceOnly(Ptr<const Packet>)
{
    Trace(-1, "drop");
}

void
TraceQdiscDrop(Ptr<const QueueDiscItem>)
{
    Trace(-1, "drop");
}

void
TraceMark(Ptr<const QueueDiscItem>, const char*)
{
    Trace(-1, "mark");
}

void
CountWireLoss(Ptr<const Packet>)
{
    ++g_wireLosses;
}

// Connects the traces of a BulkSend's socket, which exists once the application has started.
void
HookSocket(Ptr<BulkSendApplication> app, uint32_t flow)
{
    Ptr<Socket> s = app->GetSocket();
    if (!s)
    {
        std::cerr << "flow " << flow << ": no socket after the start\n";
        std::exit(1);
    }
    bool ok = s->TraceConnectWithoutContext("CongestionWindowInflated",
                                            MakeBoundCallback(&CwndChange, flow));
    ok = ok && s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&RtoChange, flow));
    ok = ok && s->TraceConnectWithoutContext("State", MakeBoundCallback(&StateChange, flow));
    ok = ok && s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongStateChange, flow));
    if (g_trace)
    {
        ok = ok && s->TraceConnectWithoutContext("SlowStartThreshold",
                                                MakeBoundCallback(&SsthreshChange, flow));
    }
    g_flows[flow].sender = DynamicCast<TcpSocketBase>(s);
    if (Ptr<DeviationSocket> d = DynamicCast<DeviationSocket>(s))
    {
        d->m_traceFlow = flow;
    }
    if (!ok)
    {
        std::cerr << "flow " << flow << ": cannot connect the socket's traces\n";
        std::exit(1);
    }
}

std::string
Num(double v)
{
    std::ostringstream os;
    os << std::setprecision(12) << v;
    return os.str();
}

double
ProcessCpuSeconds()
{
    struct timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string topology = "dumbbell";
    uint32_t hops = 1;
    uint32_t nFlows = 1;
    uint64_t rateBps = 10000000;
    uint64_t delayUs = 23000;
    uint32_t limit = 100;
    std::string queue = "droptail";
    double minTh = 25;
    double maxTh = 75;
    bool ecn = false;
    double loss = 0.0;
    double duration = 30.0;
    uint32_t seed = 1;
    uint32_t buf = 1 << 20;
    std::string recovery = "classic";
    bool sack = false;
    bool limitedTransmit = true;
    bool redWait = true;
    uint32_t delAckTimeoutMs = 200;
    uint32_t minRtoMs = 200;
    bool timestamps = true;
    bool rfcRecover = false;
    bool rfcLossExit = false;
    bool rfcEcnOnce = false;
    bool trace = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("topology", "dumbbell or parking", topology);
    cmd.AddValue("hops", "parking lot: router-to-router links", hops);
    cmd.AddValue("flows", "dumbbell: pairs; parking lot: end-to-end flows (and cross flows per hop)", nFlows);
    cmd.AddValue("rateBps", "bottleneck rate, bit/s", rateBps);
    cmd.AddValue("delayUs", "bottleneck one-way delay, microseconds", delayUs);
    cmd.AddValue("limit", "bottleneck queue limit, packets", limit);
    cmd.AddValue("queue", "droptail or red", queue);
    cmd.AddValue("minTh", "RED min_th, packets", minTh);
    cmd.AddValue("maxTh", "RED max_th, packets", maxTh);
    cmd.AddValue("ecn", "RED marks and TCP negotiates ECN", ecn);
    cmd.AddValue("loss", "random loss on each bottleneck link's data direction", loss);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("seed", "ns-3 run number (RngSeedManager::SetRun), from 1", seed);
    cmd.AddValue("buf", "TCP send and receive buffers, bytes", buf);
    cmd.AddValue("recovery", "classic (RFC 6582) or prr (RFC 6937)", recovery);
    cmd.AddValue("sack", "SACK on", sack);
    cmd.AddValue("limitedTransmit", "limited transmit (RFC 3042)", limitedTransmit);
    cmd.AddValue("redWait", "RED waits between early drops (ns-3 default)", redWait);
    cmd.AddValue("delAckTimeoutMs", "delayed-ACK timer, milliseconds", delAckTimeoutMs);
    cmd.AddValue("minRtoMs", "minimum RTO, milliseconds", minRtoMs);
    cmd.AddValue("timestamps", "RFC 7323 timestamps (RTT samples from every ACK; ns-3 default on)", timestamps);
    cmd.AddValue("rfcRecover", "RFC 6582 3.2 step 1's recover test before fast retransmit", rfcRecover);
    cmd.AddValue("rfcLossExit",
                 "RFC 5681 3.1 window growth on the ACK ending loss recovery and RFC 6298 5.7's "
                 "backed-off RTO kept until an RTT sample",
                 rfcLossExit);
    cmd.AddValue("rfcEcnOnce",
                 "RFC 3168 6.1.2: no answer to an ECN echo of data sent before the last window reduction",
                 rfcEcnOnce);
    cmd.AddValue("trace", "print every flow's events to stderr", trace);
    cmd.Parse(argc, argv);
    g_trace = trace;

    if (topology != "dumbbell" && topology != "parking")
    {
        std::cerr << "--topology must be dumbbell or parking\n";
        return 2;
    }
    if (topology == "dumbbell")
    {
        hops = 1;
    }
    if (queue != "droptail" && queue != "red")
    {
        std::cerr << "--queue must be droptail or red\n";
        return 2;
    }
    if (nFlows == 0 || hops == 0 || rateBps == 0 || limit == 0 || duration <= 0 || seed == 0)
    {
        std::cerr << "--flows, --hops, --rateBps, --limit, --duration and --seed must be above zero\n";
        return 2;
    }

    // --- TCP ------------------------------------------------------------------------------
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    if (recovery == "classic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpClassicRecovery::GetTypeId()));
    }
    else if (recovery == "prr")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpPrrRecovery::GetTypeId()));
    }
    else
    {
        std::cerr << "--recovery must be classic or prr\n";
        return 2;
    }
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(g_segment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(delAckTimeoutMs)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buf));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(minRtoMs)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecn ? "On" : "Off"));

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // --- topology -------------------------------------------------------------------------
    NodeContainer routers;
    routers.Create(hops + 1);
    // Flow k's endpoints; dumbbell: s_k -> d_k; parking: src -> dst for k < n, then c_h -> x_h.
    NodeContainer hosts;
    InternetStackHelper stack;
    stack.Install(routers);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    access.SetChannelAttribute("Delay", StringValue("1ms"));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("100p")));

    PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rateBps)));
    link.SetChannelAttribute("Delay", TimeValue(MicroSeconds(delayUs)));
    // With RED, RED is the queue: the device keeps one packet waiting behind the one on the wire.
    const std::string devQueue = queue == "red" ? "1p" : std::to_string(limit) + "p";
    link.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(devQueue)));

    Ipv4AddressHelper addr;
    NetDeviceContainer allDevices;
    std::vector<Ptr<NetDevice>> bnDevs;   // data direction, upstream router's side
    std::vector<Ptr<NetDevice>> bnRxDevs; // downstream router's side
    uint32_t subnet = 0;
    auto assign = [&](NetDeviceContainer d) {
        std::ostringstream base;
        base << "10." << (subnet / 256) << "." << (subnet % 256) << ".0";
        ++subnet;
        addr.SetBase(base.str().c_str(), "255.255.255.0");
        allDevices.Add(d);
        return addr.Assign(d);
    };
    for (uint32_t h = 0; h < hops; ++h)
    {
        NetDeviceContainer d = link.Install(routers.Get(h), routers.Get(h + 1));
        assign(d);
        bnDevs.push_back(d.Get(0));
        bnRxDevs.push_back(d.Get(1));
    }
    struct Endpoints
    {
        Ptr<Node> from;
        Ptr<Node> to;
        Ipv4Address toAddr;
        uint16_t port;
    };
    std::vector<Endpoints> flows;
    auto host = [&](Ptr<Node> router, bool sender) {
        Ptr<Node> n = CreateObject<Node>();
        stack.Install(n);
        NetDeviceContainer d = sender ? access.Install(n, router) : access.Install(router, n);
        Ipv4InterfaceContainer ifs = assign(d);
        return std::make_pair(n, ifs.GetAddress(sender ? 0 : 1));
    };
    if (topology == "dumbbell")
    {
        std::vector<std::pair<Ptr<Node>, Ipv4Address>> s, d;
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            s.push_back(host(routers.Get(0), true));
        }
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            d.push_back(host(routers.Get(1), false));
        }
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            flows.push_back({s[i].first, d[i].first, d[i].second, 5001});
        }
    }
    else
    {
        auto src = host(routers.Get(0), true);
        auto dst = host(routers.Get(hops), false);
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            flows.push_back({src.first, dst.first, dst.second, static_cast<uint16_t>(5001 + i)});
        }
        for (uint32_t h = 0; h < hops; ++h)
        {
            auto c = host(routers.Get(h), true);
            auto x = host(routers.Get(h + 1), false);
            for (uint32_t i = 0; i < nFlows; ++i)
            {
                flows.push_back({c.first, x.first, x.second, static_cast<uint16_t>(5001 + i)});
            }
        }
    }
    // Ipv4AddressHelper::Assign puts ns-3's default root qdisc (fq_codel) on every device;
    // remove it so each device has only its DropTail queue, as in concord; RED goes back on the
    // bottleneck devices.
    TrafficControlHelper tch;
    tch.Uninstall(allDevices);
    std::vector<Ptr<QueueDisc>> redDiscs;
    if (queue == "red")
    {
        TrafficControlHelper red;
        red.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(std::to_string(limit) + "p")),
                             "MinTh", DoubleValue(minTh),
                             "MaxTh", DoubleValue(maxTh),
                             "QW", DoubleValue(0.002),
                             "LInterm", DoubleValue(10.0), // max_p = 0.1
                             "Gentle", BooleanValue(true),
                             "UseEcn", BooleanValue(ecn),
                             "MeanPktSize", UintegerValue(1500),
                             "Wait", BooleanValue(redWait),
                             "LinkBandwidth", DataRateValue(DataRate(rateBps)),
                             "LinkDelay", TimeValue(MicroSeconds(delayUs)));
        for (auto& dev : bnDevs)
        {
            QueueDiscContainer q = red.Install(dev);
            redDiscs.push_back(q.Get(0));
            if (g_trace)
            {
                q.Get(0)->TraceConnectWithoutContext("Drop", MakeCallback(&TraceQdiscDrop));
                q.Get(0)->TraceConnectWithoutContext("Mark", MakeCallback(&TraceMark));
            }
        }
    }
    if (loss > 0.0)
    {
        for (auto& dev : bnRxDevs)
        {
            Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
            em->SetAttribute("ErrorRate", DoubleValue(loss));
            em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
            dev->SetAttribute("ReceiveErrorModel", PointerValue(em));
            dev->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&CountWireLoss));
        }
    }
    if (g_trace)
    {
        for (auto& dev : bnDevs)
        {
            DynamicCast<PointToPointNetDevice>(dev)->GetQueue()->TraceConnectWithoutContext(
                "Drop", MakeCallback(&CountTcDropTraceOnly));
        }
    }
    for (uint32_t h = 0; h < hops; ++h)
    {
        routers.Get(h)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop", MakeCallback(&CountTcDrop));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // --- applications ---------------------------------------------------------------------
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetAttribute("Min", DoubleValue(0.0));
    startRv->SetAttribute("Max", DoubleValue(0.1));
    startRv->SetStream(0);
    const uint32_t total = flows.size();
    g_flows.assign(total, FlowTrace{});
    std::vector<Ptr<PacketSink>> sinks(total);
    for (uint32_t k = 0; k < total; ++k)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), flows[k].port));
        ApplicationContainer sa = sinkHelper.Install(flows[k].to);
        sa.Start(Seconds(0.0));
        sinks[k] = DynamicCast<PacketSink>(sa.Get(0));
        g_flows[k].sink = sinks[k];
        std::string factory = "ns3::TcpSocketFactory";
        if (rfcRecover || rfcLossExit || rfcEcnOnce)
        {
            if (!flows[k].from->GetObject<DeviationFactory>())
            {
                Ptr<DeviationFactory> f = CreateObject<DeviationFactory>();
                f->prr = recovery == "prr";
                f->rfcRecover = rfcRecover;
                f->rfcLossExit = rfcLossExit;
                f->rfcEcnOnce = rfcEcnOnce;
                flows[k].from->AggregateObject(f);
            }
            factory = "ns3::ValidateDeviationFactory";
        }
        BulkSendHelper bulk(factory, InetSocketAddress(flows[k].toAddr, flows[k].port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(g_segment));
        ApplicationContainer ba = bulk.Install(flows[k].from);
        const double start = startRv->GetValue();
        ba.Start(Seconds(start));
        Simulator::Schedule(Seconds(start) + NanoSeconds(1),
                            &HookSocket,
                            DynamicCast<BulkSendApplication>(ba.Get(0)),
                            k);
    }

    Simulator::Stop(Seconds(duration));
    const double cpu0 = ProcessCpuSeconds();
    Simulator::Run();
    const double runCpu = ProcessCpuSeconds() - cpu0;

    // --- results --------------------------------------------------------------------------
    double util = 0.0;
    uint64_t devDrops = 0;
    for (auto& dev : bnDevs)
    {
        Ptr<Queue<Packet>> q = DynamicCast<PointToPointNetDevice>(dev)->GetQueue();
        const uint64_t txBytes = q->GetTotalReceivedBytes() - q->GetNBytes();
        util += static_cast<double>(txBytes) * 8.0 / (static_cast<double>(rateBps) * duration);
        devDrops += q->GetTotalDroppedPackets();
    }
    util /= hops;
    uint64_t qdiscDrops = 0;
    uint64_t marks = 0;
    for (auto& q : redDiscs)
    {
        const QueueDisc::Stats& st = q->GetStats();
        qdiscDrops += st.nTotalDroppedPackets;
        marks += st.nTotalMarkedPackets;
    }
    std::ostringstream js;
    js << "{\"simulator\": \"ns-3\", \"ns3_version\": \"3.44\"";
    js << ", \"topology\": \"" << topology << "\", \"hops\": " << hops << ", \"flows\": " << total;
    js << ", \"duration_s\": " << Num(duration) << ", \"seed\": " << seed;
    js << ", \"recovery\": \"" << recovery << "\", \"sack\": " << (sack ? "true" : "false");
    js << ", \"limited_transmit\": " << (limitedTransmit ? "true" : "false");
    js << ", \"red_wait\": " << (redWait ? "true" : "false");
    js << ", \"rfc_recover\": " << (rfcRecover ? "true" : "false");
    js << ", \"recover_blocked\": " << g_recoverBlocked;
    js << ", \"rfc_loss_exit\": " << (rfcLossExit ? "true" : "false");
    js << ", \"loss_exit_grown\": " << g_lossExitGrown << ", \"rto_kept\": " << g_rtoKept;
    js << ", \"rfc_ecn_once\": " << (rfcEcnOnce ? "true" : "false");
    js << ", \"ece_ignored\": " << g_eceIgnored;
    js << ", \"utilisation\": " << Num(util);
    js << ", \"drops\": " << (g_tcDrops + devDrops + qdiscDrops);
    js << ", \"marks\": " << marks << ", \"wire_losses\": " << g_wireLosses;
    uint64_t timeouts = 0, synTimeouts = 0, recoveries = 0, lossEpisodes = 0;
    uint64_t held = 0, inRecovery = 0, repeat = 0, open = 0, disorder = 0, spurious = 0;
    uint64_t cwrAfterReduction = 0;
    for (auto& f : g_flows)
    {
        held += f.receiverHeld;
        inRecovery += f.inRecovery;
        repeat += f.repeat;
        open += f.open;
        disorder += f.disorder;
        timeouts += f.timeouts;
        synTimeouts += f.synTimeouts;
        recoveries += f.recoveries;
        lossEpisodes += f.lossEpisodes;
        spurious += f.spuriousRecoveries;
        cwrAfterReduction += f.cwrAfterReduction;
    }
    js << ", \"timeouts\": " << timeouts << ", \"syn_timeouts\": " << synTimeouts;
    js << ", \"fast_retransmits\": " << recoveries << ", \"loss_episodes\": " << lossEpisodes;
    js << ", \"timeout_causes\": {\"receiver_held\": " << held << ", \"in_recovery\": " << inRecovery
       << ", \"repeat\": " << repeat << ", \"open\": " << open << ", \"disorder\": " << disorder << "}";
    js << ", \"fast_retransmit_causes\": {\"receiver_held\": " << spurious << "}";
    js << ", \"cwr_after_reduction\": " << cwrAfterReduction;
    js << ", \"per_flow_goodput_bps\": [";
    for (uint32_t k = 0; k < total; ++k)
    {
        js << (k ? ", " : "") << Num(static_cast<double>(sinks[k]->GetTotalRx()) * 8.0 / duration);
    }
    js << "], \"cwnd\": [";
    for (uint32_t k = 0; k < total; ++k)
    {
        FlowTrace& f = g_flows[k];
        // Close the last value at the end of the run.
        if (f.started)
        {
            const double dt = duration - f.lastS;
            f.sum += f.value * dt;
            f.sumSq += f.value * f.value * dt;
        }
        js << (k ? ", " : "") << "{\"first_s\": " << Num(f.started ? f.firstS : duration)
           << ", \"sum\": " << Num(f.sum) << ", \"sum_sq\": " << Num(f.sumSq)
           << ", \"max\": " << Num(f.max) << "}";
    }
    js << "], \"run_cpu_s\": " << Num(runCpu) << "}";
    g_flows.clear(); // the sockets it points to go with the simulation
    Simulator::Destroy();
    std::cout << js.str() << std::endl;
    return 0;
}
