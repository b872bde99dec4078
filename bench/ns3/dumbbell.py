"""ns-3 side of the concord dumbbell benchmark, through the `ns3` wheel's Python bindings.

N senders -- 1 Gbps / 1 ms --> R1 == 10 Mbps / 25 ms, 100-packet DropTail ==> R2 -- 1 Gbps / 1 ms
--> N receivers, one TCP NewReno bulk transfer per pair. The scenario and its settings are the
same as in dumbbell.cc (see README.md beside this file); this version exists because it needs
nothing but the wheel, while dumbbell.cc also needs g++.

No Python code runs during Simulator::Run: the few things that need C++ (casts, and a counter
for the drops at R1's traffic-control layer, bumped once per drop) are small C++ functions
compiled by cppyy before the run. Every figure is read from counters after Run returns.
"""

import time

PROGRAM_START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402

from ns import ns  # noqa: E402  (loads the ns-3 libraries and headers into cppyy)

import cppyy  # noqa: E402

IMPORT_DONE = time.perf_counter()

cppyy.cppdef(
    r"""
namespace concord_bench
{
// Drops by R1's traffic-control layer (see dumbbell.cc for why the bottleneck drops land there).
uint64_t g_tcDrops = 0;

void CountTcDrop(ns3::Ptr<const ns3::Packet>) { ++g_tcDrops; }

bool ConnectTcDrop(ns3::Ptr<ns3::Node> node)
{
    return node->GetObject<ns3::TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop", ns3::MakeCallback(&CountTcDrop));
}

uint64_t TcDrops() { return g_tcDrops; }

ns3::Ptr<ns3::Queue<ns3::Packet>> DeviceQueue(ns3::Ptr<ns3::NetDevice> dev)
{
    return ns3::DynamicCast<ns3::PointToPointNetDevice>(dev)->GetQueue();
}

ns3::Ptr<ns3::QueueDisc> RootQdisc(ns3::Ptr<ns3::Node> node, ns3::Ptr<ns3::NetDevice> dev)
{
    return node->GetObject<ns3::TrafficControlLayer>()->GetRootQueueDiscOnDevice(dev);
}

std::string QdiscName(ns3::Ptr<ns3::QueueDisc> q)
{
    return q ? q->GetInstanceTypeId().GetName() : std::string("none");
}

uint64_t QdiscDrops(ns3::Ptr<ns3::QueueDisc> q)
{
    return q ? q->GetStats().nTotalDroppedPackets : 0;
}

uint64_t SinkRx(ns3::Ptr<ns3::Application> app)
{
    return ns3::DynamicCast<ns3::PacketSink>(app)->GetTotalRx();
}
}
"""
)
cb = cppyy.gbl.concord_bench


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--flows", type=int, default=64, help="sender/receiver pairs")
    p.add_argument("--duration", type=float, default=60.0, help="simulated seconds")
    p.add_argument("--seed", type=int, default=1, help="RngSeedManager seed (start times)")
    p.add_argument("--queue", type=int, default=100, help="bottleneck device queue, packets")
    p.add_argument(
        "--recovery",
        choices=("classic", "prr"),
        default="classic",
        help="loss recovery: classic (RFC 6582 NewReno) or prr (ns-3's default)",
    )
    p.add_argument("--buf", type=int, default=1 << 20, help="TCP send/receive buffer, bytes")
    return p.parse_args(argv)


def configure_tcp(args):
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TcpNewReno.GetTypeId()))
    recovery = ns.TcpClassicRecovery if args.recovery == "classic" else ns.TcpPrrRecovery
    sd("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(recovery.GetTypeId()))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(200)))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(args.buf))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(args.buf))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    # ns-3 defaults, set so the comparison is explicit (see dumbbell.cc).
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))


def main(argv):
    args = parse_args(argv)
    n = args.flows
    configure_tcp(args)
    ns.RngSeedManager.SetSeed(args.seed)
    ns.RngSeedManager.SetRun(1)

    senders = ns.NodeContainer()
    senders.Create(n)
    receivers = ns.NodeContainer()
    receivers.Create(n)
    routers = ns.NodeContainer()
    routers.Create(2)
    r1, r2 = routers.Get(0), routers.Get(1)

    stack = ns.InternetStackHelper()
    stack.Install(senders)
    stack.Install(receivers)
    stack.Install(routers)

    qsize = ns.QueueSizeValue(ns.QueueSize("%dp" % args.queue))
    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.StringValue("1Gbps"))
    access.SetChannelAttribute("Delay", ns.StringValue("1ms"))
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", qsize)
    bottleneck = ns.PointToPointHelper()
    bottleneck.SetDeviceAttribute("DataRate", ns.StringValue("10Mbps"))
    bottleneck.SetChannelAttribute("Delay", ns.StringValue("25ms"))
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", qsize)

    mask = ns.Ipv4Mask("255.255.255.0")
    addr = ns.Ipv4AddressHelper()
    all_devices = ns.NetDeviceContainer()

    core = bottleneck.Install(r1, r2)
    addr.SetBase(ns.Ipv4Address("10.255.0.0"), mask)
    addr.Assign(core)
    all_devices.Add(core)

    receiver_addr = []
    for i in range(n):
        left = access.Install(senders.Get(i), r1)
        right = access.Install(r2, receivers.Get(i))
        addr.SetBase(ns.Ipv4Address("10.%d.%d.0" % (1 + i // 256, i % 256)), mask)
        addr.Assign(left)
        addr.SetBase(ns.Ipv4Address("10.%d.%d.0" % (128 + i // 256, i % 256)), mask)
        receiver_addr.append(addr.Assign(right).GetAddress(1))
        all_devices.Add(left)
        all_devices.Add(right)
    # Remove the default root qdisc (fq_codel) Ipv4AddressHelper::Assign installs: each
    # device keeps only its DropTail queue.
    ns.TrafficControlHelper().Uninstall(all_devices)

    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 5001
    start_rv = ns.CreateObject[ns.UniformRandomVariable]()
    start_rv.SetAttribute("Min", ns.DoubleValue(0.0))
    start_rv.SetAttribute("Max", ns.DoubleValue(0.1))
    start_rv.SetStream(0)

    sinks, starts = [], []
    for i in range(n):
        sink_helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo(),
        )
        sa = sink_helper.Install(receivers.Get(i))
        sa.Start(ns.Seconds(0.0))
        sinks.append(sa.Get(0))

        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(receiver_addr[i], port).ConvertTo()
        )
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(1448))
        ba = bulk.Install(senders.Get(i))
        starts.append(start_rv.GetValue())
        ba.Start(ns.Seconds(starts[-1]))

    bn_dev = core.Get(0)
    bn_queue = cb.DeviceQueue(bn_dev)
    bn_qdisc = cb.RootQdisc(r1, bn_dev)
    if not cb.ConnectTcDrop(r1):
        sys.exit("cannot connect to TrafficControlLayer TcDrop")

    ns.Simulator.Stop(ns.Seconds(args.duration))
    t0 = time.perf_counter()
    c0 = time.process_time()
    ns.Simulator.Run()
    run_wall = time.perf_counter() - t0
    run_cpu = time.process_time() - c0

    goodput = [cb.SinkRx(s) * 8.0 / args.duration for s in sinks]
    total = sum(goodput)
    sum_sq = sum(g * g for g in goodput)
    jain = total * total / (n * sum_sq) if sum_sq > 0 else 0.0
    dev_drops = int(bn_queue.GetTotalDroppedPackets())
    tc_drops = int(cb.TcDrops()) + int(cb.QdiscDrops(bn_qdisc))
    tx_packets = int(bn_queue.GetTotalReceivedPackets()) - int(bn_queue.GetNPackets())
    tx_bytes = int(bn_queue.GetTotalReceivedBytes()) - int(bn_queue.GetNBytes())
    capacity_bytes = 10e6 * args.duration / 8.0
    qdisc_name = str(cb.QdiscName(bn_qdisc))

    ns.Simulator.Destroy()

    result = {
        "simulator": "ns-3",
        "ns3_version": "3.44",
        "frontend": "python",
        "flows": n,
        "duration_s": args.duration,
        "seed": args.seed,
        "recovery": args.recovery,
        "bottleneck_qdisc": qdisc_name,
        "bottleneck_device_queue_packets": args.queue,
        "run_wall_s": run_wall,
        "run_cpu_s": run_cpu,
        "import_wall_s": IMPORT_DONE - PROGRAM_START,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "total_goodput_bps": total,
        "jain_index": jain,
        "bottleneck_drops": dev_drops + tc_drops,
        "bottleneck_device_drops": dev_drops,
        "bottleneck_tc_drops": tc_drops,
        "bottleneck_tx_packets": tx_packets,
        "bottleneck_tx_bytes": tx_bytes,
        "bottleneck_utilisation": tx_bytes / capacity_bytes,
        "start_times_s": starts,
        "per_flow_goodput_bps": goodput,
    }
    # Whole program: from the first line of this file (before ns-3 is loaded) to here.
    result["program_wall_s"] = time.perf_counter() - PROGRAM_START
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
