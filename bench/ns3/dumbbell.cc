// ns-3 side of the concord dumbbell benchmark.
//
// N senders -- 1 Gbps / 1 ms --> R1 == 10 Mbps / 25 ms (--rate, --delay), 100-packet DropTail ==> R2 -- 1 Gbps / 1 ms --> N
// receivers, one TCP NewReno bulk transfer per sender/receiver pair. Nothing is traced during
// the run: every figure is read from counters (PacketSink, the bottleneck device queue) after
// Simulator::Run returns, and the result is printed as one JSON object.
//
// The same scenario, with the same settings, is in dumbbell.py; see README.md beside this file.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/ppp-header.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

using namespace ns3;

namespace
{

double
SecondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Packets the traffic-control layer of R1 discarded. With no root qdisc on a device that does
// flow control (PointToPointNetDevice does), the device queue is "stopped" while it holds its
// 100 packets and the traffic-control layer drops arrivals itself: that is where the DropTail
// drops of the bottleneck happen, so they are not in the device queue's own drop counter.
// This is a C++ counter bumped once per drop; nothing is traced per forwarded packet.
uint64_t g_r1TcDrops = 0;

void
CountTcDrop(Ptr<const Packet>)
{
    ++g_r1TcDrops;
}

// Optional diagnostic (--diag, off for timed runs): data segments dequeued at the bottleneck,
// and how many of them repeat a (sender, sequence number) already seen there, i.e. were
// retransmissions of segments that had already crossed the bottleneck once.
uint64_t g_diagDataSegments = 0;
uint64_t g_diagRepeatedSegments = 0;
std::unordered_set<uint64_t> g_diagSeen;

void
DiagDequeue(Ptr<const Packet> p)
{
    Ptr<Packet> c = p->Copy();
    PppHeader ppp;
    Ipv4Header ip;
    TcpHeader tcp;
    c->RemoveHeader(ppp);
    c->RemoveHeader(ip);
    c->RemoveHeader(tcp);
    if (c->GetSize() == 0)
    {
        return;
    }
    ++g_diagDataSegments;
    const uint64_t key =
        (static_cast<uint64_t>(ip.GetSource().Get()) << 32) | tcp.GetSequenceNumber().GetValue();
    if (!g_diagSeen.insert(key).second)
    {
        ++g_diagRepeatedSegments;
    }
}

// CPU seconds used by this process so far: on a shared machine, a steadier figure than wall time.
double
ProcessCpuSeconds()
{
    struct timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double
PeakRssMiB()
{
    struct rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_maxrss) / 1024.0; // ru_maxrss is in KiB on Linux
}

std::string
Num(double v)
{
    std::ostringstream os;
    os << std::setprecision(12) << v;
    return os.str();
}

} // namespace

int
main(int argc, char* argv[])
{
    const auto programStart = std::chrono::steady_clock::now();

    uint32_t nFlows = 64;
    double duration = 60.0;
    uint32_t seed = 1;
    uint32_t queuePackets = 100;
    std::string recovery = "classic";
    uint32_t bufBytes = 1 << 20;
    bool diag = false;
    std::string rate = "10Mbps";
    std::string delay = "25ms";

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of sender/receiver pairs", nFlows);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("seed", "RngSeedManager seed (start times)", seed);
    cmd.AddValue("queue", "bottleneck DropTail device queue, packets", queuePackets);
    cmd.AddValue("recovery", "loss recovery: classic (RFC 6582 NewReno) or prr (ns-3 default)", recovery);
    cmd.AddValue("buf", "TCP send and receive buffer, bytes", bufBytes);
    cmd.AddValue("rate", "bottleneck data rate (concord bench --rate)", rate);
    cmd.AddValue("delay", "bottleneck one-way delay (concord bench --delay)", delay);
    cmd.AddValue("diag", "count repeated segments on the bottleneck (slows the run)", diag);
    cmd.Parse(argc, argv);

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
        std::cerr << "unknown --recovery " << recovery << "\n";
        return 2;
    }
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    // Left at their ns-3 defaults, stated here so the comparison is explicit: timestamps on
    // (12 option bytes per segment, so a full segment is a 1500-byte IP packet), window
    // scaling on, limited transmit on, Nagle off, initial RTO 1 s, clock granularity 1 ms.
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(1);

    // --- topology -------------------------------------------------------------------------
    NodeContainer senders;
    senders.Create(nFlows);
    NodeContainer receivers;
    receivers.Create(nFlows);
    NodeContainer routers;
    routers.Create(2);
    Ptr<Node> r1 = routers.Get(0);
    Ptr<Node> r2 = routers.Get(1);

    InternetStackHelper stack;
    stack.Install(senders);
    stack.Install(receivers);
    stack.Install(routers);

    const std::string queueSize = std::to_string(queuePackets) + "p";

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    access.SetChannelAttribute("Delay", StringValue("1ms"));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(queueSize)));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", StringValue(delay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(queueSize)));

    TrafficControlHelper tch;
    Ipv4AddressHelper addr;
    NetDeviceContainer allDevices;

    NetDeviceContainer core = bottleneck.Install(r1, r2);
    addr.SetBase("10.255.0.0", "255.255.255.0");
    addr.Assign(core);
    allDevices.Add(core);

    std::vector<Ipv4Address> receiverAddr(nFlows);
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        NetDeviceContainer left = access.Install(senders.Get(i), r1);
        NetDeviceContainer right = access.Install(r2, receivers.Get(i));
        // 10.<1 + i/256>.<i%256>.0/24 on the left, 10.<128 + i/256>.<i%256>.0/24 on the right.
        std::ostringstream l;
        l << "10." << (1 + i / 256) << "." << (i % 256) << ".0";
        addr.SetBase(l.str().c_str(), "255.255.255.0");
        addr.Assign(left);
        std::ostringstream r;
        r << "10." << (128 + i / 256) << "." << (i % 256) << ".0";
        addr.SetBase(r.str().c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ri = addr.Assign(right);
        receiverAddr[i] = ri.GetAddress(1);
        allDevices.Add(left);
        allDevices.Add(right);
    }
    // Ipv4AddressHelper::Assign puts ns-3's default root qdisc (fq_codel) on every device;
    // remove it so each device has only its DropTail queue, as in concord.
    tch.Uninstall(allDevices);

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // --- applications ---------------------------------------------------------------------
    const uint16_t port = 5001;
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetAttribute("Min", DoubleValue(0.0));
    startRv->SetAttribute("Max", DoubleValue(0.1));
    startRv->SetStream(0);

    std::vector<Ptr<PacketSink>> sinks(nFlows);
    std::vector<double> starts(nFlows);
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(receivers.Get(i));
        sa.Start(Seconds(0.0));
        sinks[i] = DynamicCast<PacketSink>(sa.Get(0));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(receiverAddr[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(1448));
        ApplicationContainer ba = bulk.Install(senders.Get(i));
        starts[i] = startRv->GetValue();
        ba.Start(Seconds(starts[i]));
    }

    Ptr<NetDevice> bnDev = core.Get(0);
    Ptr<Queue<Packet>> bnQueue = DynamicCast<PointToPointNetDevice>(bnDev)->GetQueue();
    Ptr<TrafficControlLayer> r1Tc = r1->GetObject<TrafficControlLayer>();
    Ptr<QueueDisc> bnQdisc = r1Tc->GetRootQueueDiscOnDevice(bnDev);
    if (!r1Tc->TraceConnectWithoutContext("TcDrop", MakeCallback(&CountTcDrop)))
    {
        std::cerr << "cannot connect to TrafficControlLayer TcDrop\n";
        return 1;
    }

    if (diag)
    {
        bnQueue->TraceConnectWithoutContext("Dequeue", MakeCallback(&DiagDequeue));
    }

    Simulator::Stop(Seconds(duration));
    const auto runStart = std::chrono::steady_clock::now();
    const double runCpuStart = ProcessCpuSeconds();
    Simulator::Run();
    const double runWall = SecondsSince(runStart);
    const double runCpu = ProcessCpuSeconds() - runCpuStart;

    // --- results --------------------------------------------------------------------------
    std::vector<double> goodput(nFlows);
    double total = 0.0;
    double sumSq = 0.0;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        goodput[i] = static_cast<double>(sinks[i]->GetTotalRx()) * 8.0 / duration;
        total += goodput[i];
        sumSq += goodput[i] * goodput[i];
    }
    const double jain = sumSq > 0.0 ? total * total / (nFlows * sumSq) : 0.0;

    const uint64_t devDrops = bnQueue->GetTotalDroppedPackets();
    // Drops at R1's traffic-control layer: by a root qdisc if one were installed, else the
    // stopped-device-queue drops counted above. R1's other devices send only ACKs at 1 Gbps
    // and never fill, so every one of these is a bottleneck drop.
    const uint64_t tcDrops =
        g_r1TcDrops + (bnQdisc ? bnQdisc->GetStats().nTotalDroppedPackets : 0);
    // Everything the device queue accepted and no longer holds went onto the wire.
    const uint64_t txPackets = bnQueue->GetTotalReceivedPackets() - bnQueue->GetNPackets();
    const uint64_t txBytes = bnQueue->GetTotalReceivedBytes() - bnQueue->GetNBytes();
    const double capacityBytes = DataRate(rate).GetBitRate() * duration / 8.0;

    Simulator::Destroy();

    std::ostringstream js;
    js << "{";
    js << "\"simulator\": \"ns-3\", \"ns3_version\": \"3.44\", \"frontend\": \"c++\"";
    js << ", \"flows\": " << nFlows << ", \"duration_s\": " << Num(duration);
    js << ", \"seed\": " << seed << ", \"recovery\": \"" << recovery << "\"";
    js << ", \"bottleneck_qdisc\": \"" << (bnQdisc ? bnQdisc->GetInstanceTypeId().GetName() : "none")
       << "\"";
    js << ", \"bottleneck_device_queue_packets\": " << queuePackets;
    js << ", \"run_wall_s\": " << Num(runWall) << ", \"run_cpu_s\": " << Num(runCpu);
    js << ", \"peak_rss_mib\": " << Num(PeakRssMiB());
    js << ", \"total_goodput_bps\": " << Num(total);
    js << ", \"jain_index\": " << Num(jain);
    js << ", \"bottleneck_drops\": " << (devDrops + tcDrops);
    js << ", \"bottleneck_device_drops\": " << devDrops << ", \"bottleneck_tc_drops\": " << tcDrops;
    js << ", \"bottleneck_tx_packets\": " << txPackets;
    js << ", \"bottleneck_tx_bytes\": " << txBytes;
    js << ", \"bottleneck_utilisation\": " << Num(static_cast<double>(txBytes) / capacityBytes);
    js << ", \"start_times_s\": [";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        js << (i ? ", " : "") << Num(starts[i]);
    }
    js << "]";
    if (diag)
    {
        js << ", \"diag_data_segments\": " << g_diagDataSegments
           << ", \"diag_repeated_segments\": " << g_diagRepeatedSegments;
    }
    js << ", \"per_flow_goodput_bps\": [";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        js << (i ? ", " : "") << Num(goodput[i]);
    }
    js << "]";
    // Whole program: from the start of main to here (process start-up and library loading
    // before main are not included; run.sh also times the whole process from outside).
    js << ", \"program_wall_s\": " << Num(SecondsSince(programStart));
    js << "}";
    std::cout << js.str() << std::endl;
    return 0;
}
