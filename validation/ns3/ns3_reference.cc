// Independent ns-3 (Debian libns3-dev 3.37) reference run for the latency_model
// `--stack ns3` profile.  See NOTES.md in this folder.
//
// Scenario: two nodes A -> B over one point-to-point link (100 Mb/s, 50 ms
// one-way delay, large queues).  One BulkSend transfer of N segments of 500
// bytes (MaxBytes = N*500, the application closes the socket, so the last
// data segment carries FIN).  TcpNewReno + TcpClassicRecovery, SACK and
// timestamps off, receive buffer 15000 bytes (30 segments).
//
// Losses are injected only on the data direction, by a receive ErrorModel on
// B's device that parses PPP/IPv4/TCP headers:
//   --mode=none      no loss
//   --mode=scripted  drop the FIRST transmission of data segment --drop=i
//                    (0-based, i = (seq - ISN - 1) / 500); retransmissions pass.
//                    With --drop=-1 the run index is used as i (so
//                    --runStart=0 --runCount=N sweeps i = 0..N-1).
//   --mode=random    every data packet (first transmissions and
//                    retransmissions; never SYN / pure ACK) is dropped
//                    independently with probability --p, using a
//                    std::mt19937_64 seeded from (seed, N, W0, b, lt, run)
//
// Metric (completion_s): time from the first data segment handed by the
// sender's TcpSocketBase to IP (socket "Tx" trace source, first segment with
// payload > 0; the SYN is excluded) to the moment the first ACK whose ack
// number covers the last data byte (ack >= ISN + 1 + N*500) is handed to the
// sender's TcpSocketBase (socket "Rx" trace source, fired in
// TcpSocketBase::DoForwardUp before any processing).
//
// Output: one CSV line per run, flushed immediately, so that a driver can
// resume a batch after a crash:
//   run,completion_s,k,drops,rto,fr,retx,status
// k     = number of data segments whose FIRST transmission was dropped
// drops = total data packets dropped
// rto   = number of retransmission-timer expiries (ReTxTimeout), detected as
//         a doubling of the socket's m_rto (RTO trace source)
// fr    = number of fast-retransmit episodes (CongState -> CA_RECOVERY)
// retx  = number of retransmitted data segments (Tx of a data segment whose
//         sequence number is below the highest sequence already sent)
// status= ok | timeout
//
// --trace=1 prints a per-packet event log of the sender socket to stderr.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/ipv4-header.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/ppp-header.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-state.h"

#include <cinttypes>
#include <cstdio>
#include <random>
#include <set>
#include <string>

using namespace ns3;

namespace
{

const uint32_t kMss = 500;

// ---------------------------------------------------------------------------
// Data-direction loss model (installed as ReceiveErrorModel on B's device).
class DataDropModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("latencymodel::DataDropModel")
                                .SetParent<ErrorModel>()
                                .AddConstructor<DataDropModel>();
        return tid;
    }

    std::string mode{"none"};
    int64_t dropIndex{-1};
    double p{0.0};
    std::mt19937_64 rng;
    bool trace{false};

    uint32_t k{0};     // first transmissions lost
    uint32_t drops{0}; // all data packets lost

  private:
    bool m_haveIsn{false};
    SequenceNumber32 m_isn;
    std::set<uint32_t> m_seen; // data sequence numbers that already arrived once

    bool DoCorrupt(Ptr<Packet> pkt) override
    {
        Ptr<Packet> c = pkt->Copy();
        PppHeader ppp;
        c->RemoveHeader(ppp);
        Ipv4Header ip;
        c->RemoveHeader(ip);
        TcpHeader tcp;
        c->RemoveHeader(tcp);
        uint32_t payload = c->GetSize();
        if (tcp.GetFlags() & TcpHeader::SYN)
        {
            m_haveIsn = true;
            m_isn = tcp.GetSequenceNumber();
            return false;
        }
        if (payload == 0)
        {
            return false; // pure ACK / FIN-only: never dropped
        }
        uint32_t seq = tcp.GetSequenceNumber().GetValue();
        bool first = m_seen.insert(seq).second;
        bool drop = false;
        if (mode == "scripted")
        {
            int64_t idx = static_cast<int64_t>((tcp.GetSequenceNumber() - m_isn - 1) / kMss);
            drop = first && idx == dropIndex;
        }
        else if (mode == "random")
        {
            std::uniform_real_distribution<double> u(0.0, 1.0);
            drop = u(rng) < p;
        }
        if (drop)
        {
            ++drops;
            if (first)
            {
                ++k;
            }
            if (trace)
            {
                std::fprintf(stderr,
                             "%.9f DROP seq_idx=%u%s\n",
                             Simulator::Now().GetSeconds(),
                             (seq - m_isn.GetValue() - 1) / kMss,
                             first ? " (first tx)" : " (retx)");
            }
        }
        return drop;
    }

    void DoReset() override
    {
    }
};

// ---------------------------------------------------------------------------
struct RunState
{
    uint32_t n{0};
    bool trace{false};
    bool haveIsn{false};
    SequenceNumber32 isn;
    SequenceNumber32 highestSent; // highest seq+size of data sent so far
    bool started{false};
    Time tFirstData;
    Time tDone;
    bool done{false};
    uint32_t rto{0};
    uint32_t fr{0};
    uint32_t retx{0};
    Ptr<TcpSocketBase> sock;
};

RunState g;

uint32_t
Idx(SequenceNumber32 s)
{
    return (s - g.isn - 1) / kMss;
}

void
OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (!g.haveIsn)
    {
        // The SYN was sent before the traces were connected; the first data
        // byte is ISN+1 and the handshake ACK (sent just before the first data
        // segment) carries seq = ISN+1.
        g.haveIsn = true;
        g.isn = h.GetSequenceNumber() - 1;
        g.highestSent = h.GetSequenceNumber();
    }
    uint32_t sz = p->GetSize();
    if (sz > 0)
    {
        if (!g.started)
        {
            g.started = true;
            g.tFirstData = Simulator::Now();
        }
        bool isRetx = h.GetSequenceNumber() < g.highestSent;
        if (isRetx)
        {
            ++g.retx;
        }
        if (h.GetSequenceNumber() + sz > g.highestSent)
        {
            g.highestSent = h.GetSequenceNumber() + sz;
        }
        if (g.trace)
        {
            std::fprintf(stderr,
                         "%.9f TX  seg=%u%s%s\n",
                         Simulator::Now().GetSeconds(),
                         Idx(h.GetSequenceNumber()),
                         isRetx ? " RETX" : "",
                         (h.GetFlags() & TcpHeader::FIN) ? " FIN" : "");
        }
    }
    else if (g.trace)
    {
        std::fprintf(stderr,
                     "%.9f TX  empty flags=%s\n",
                     Simulator::Now().GetSeconds(),
                     TcpHeader::FlagsToString(h.GetFlags()).c_str());
    }
}

void
OnRx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (g.trace)
    {
        std::fprintf(stderr,
                     "%.9f RX  ack_idx=%d (ack-ISN-1=%u bytes) win=%u flags=%s\n",
                     Simulator::Now().GetSeconds(),
                     g.haveIsn ? static_cast<int>(Idx(h.GetAckNumber())) : -1,
                     g.haveIsn ? (h.GetAckNumber() - g.isn - 1) : 0u,
                     h.GetWindowSize(),
                     TcpHeader::FlagsToString(h.GetFlags()).c_str());
    }
    if (!g.done && g.haveIsn && (h.GetFlags() & TcpHeader::ACK) &&
        h.GetAckNumber() >= g.isn + 1 + g.n * kMss)
    {
        g.done = true;
        g.tDone = Simulator::Now();
        Simulator::Stop();
    }
}

void
OnRto(Time oldV, Time newV)
{
    // ReTxTimeout doubles m_rto (capped at 60 s); every other writer of m_rto
    // recomputes it from the estimator (>= MinRto), never exactly doubling it.
    if (oldV.IsStrictlyPositive() && newV == oldV + oldV)
    {
        ++g.rto;
        if (g.trace)
        {
            std::fprintf(stderr,
                         "%.9f RTO fired, m_rto %.6f -> %.6f\n",
                         Simulator::Now().GetSeconds(),
                         oldV.GetSeconds(),
                         newV.GetSeconds());
        }
    }
    else if (g.trace)
    {
        std::fprintf(stderr,
                     "%.9f m_rto %.6f -> %.6f\n",
                     Simulator::Now().GetSeconds(),
                     oldV.GetSeconds(),
                     newV.GetSeconds());
    }
}

void
OnCongState(TcpSocketState::TcpCongState_t oldV, TcpSocketState::TcpCongState_t newV)
{
    if (newV == TcpSocketState::CA_RECOVERY)
    {
        ++g.fr;
    }
    if (g.trace)
    {
        std::fprintf(stderr,
                     "%.9f STATE %s -> %s\n",
                     Simulator::Now().GetSeconds(),
                     TcpSocketState::TcpCongStateName[oldV],
                     TcpSocketState::TcpCongStateName[newV]);
    }
}

void
OnU32(const char* what, uint32_t oldV, uint32_t newV)
{
    std::fprintf(stderr,
                 "%.9f %s %u -> %u\n",
                 Simulator::Now().GetSeconds(),
                 what,
                 oldV,
                 newV);
}

void
OnRtt(Time oldV, Time newV)
{
    std::fprintf(stderr,
                 "%.9f SRTT(lastRtt) %.9f -> %.9f\n",
                 Simulator::Now().GetSeconds(),
                 oldV.GetSeconds(),
                 newV.GetSeconds());
}

void
ConnectTraces(Ptr<BulkSendApplication> app)
{
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(app->GetSocket());
    NS_ABORT_MSG_IF(!s, "no TcpSocketBase");
    g.sock = s;
    s->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx));
    s->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));
    s->TraceConnectWithoutContext("RTO", MakeCallback(&OnRto));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    if (g.trace)
    {
        s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnU32, "CWND"));
        s->TraceConnectWithoutContext("SlowStartThreshold",
                                      MakeBoundCallback(&OnU32, "SSTHRESH"));
        s->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&OnU32, "INFLIGHT"));
        s->TraceConnectWithoutContext("RWND", MakeBoundCallback(&OnU32, "RWND"));
        s->TraceConnectWithoutContext("RTT", MakeCallback(&OnRtt));
    }
}

void
ReportRxWindow(Ptr<PacketSink> sink)
{
    for (auto& so : sink->GetAcceptedSockets())
    {
        Ptr<TcpSocketBase> t = DynamicCast<TcpSocketBase>(so);
        if (t)
        {
            UintegerValue rcv;
            t->GetAttribute("RcvBufSize", rcv);
            std::fprintf(stderr,
                         "%.9f receiver socket RcvBufSize=%" PRIu64 "\n",
                         Simulator::Now().GetSeconds(),
                         static_cast<uint64_t>(rcv.Get()));
        }
    }
}

struct Params
{
    uint32_t n{10};
    uint32_t w0{2};
    uint32_t b{1};
    bool lt{false};
    std::string mode{"none"};
    int64_t drop{-1};
    double p{0.1};
    uint64_t seed{1};
    bool trace{false};
    double maxSimTime{2000.0};
};

void
RunOne(const Params& P, uint64_t run)
{
    g = RunState();
    g.n = P.n;
    g.trace = P.trace;

    // ---- TCP configuration (applies to both endpoints) ----
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RttEstimatorType",
                       TypeIdValue(RttMeanDeviation::GetTypeId()));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(1.0)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kMss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(P.w0));
    Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold", UintegerValue(30 * kMss));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(30 * kMss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(131072));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(P.b));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(3)));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(6));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(1.0)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(3));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(P.lt));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(false));

    NodeContainer nodes;
    nodes.Create(2);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    p2p.SetChannelAttribute("Delay", StringValue("50ms"));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("10000p"));
    NetDeviceContainer devs = p2p.Install(nodes);

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(devs); // also installs pfifo_fast (1000p)

    Ptr<DataDropModel> em = CreateObject<DataDropModel>();
    em->mode = P.mode;
    // scripted mode with --drop=-1: the run index is the dropped segment index
    em->dropIndex = (P.mode == "scripted" && P.drop < 0) ? static_cast<int64_t>(run) : P.drop;
    em->p = P.p;
    em->trace = P.trace;
    {
        // Per-run stream: splitmix of (seed, N, W0, b, lt, run)
        std::seed_seq ss{static_cast<uint32_t>(P.seed),
                         static_cast<uint32_t>(P.seed >> 32),
                         P.n,
                         P.w0,
                         P.b,
                         static_cast<uint32_t>(P.lt),
                         static_cast<uint32_t>(run),
                         static_cast<uint32_t>(run >> 32)};
        em->rng.seed(ss);
    }
    devs.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));

    uint16_t port = 5000;
    PacketSinkHelper sinkH("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApps = sinkH.Install(nodes.Get(1));
    sinkApps.Start(Seconds(0.0));

    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(static_cast<uint64_t>(P.n) * kMss));
    bulk.SetAttribute("SendSize", UintegerValue(kMss));
    ApplicationContainer srcApps = bulk.Install(nodes.Get(0));
    srcApps.Start(Seconds(0.0));

    Ptr<BulkSendApplication> app = DynamicCast<BulkSendApplication>(srcApps.Get(0));
    Simulator::Schedule(MicroSeconds(1), &ConnectTraces, app);
    if (P.trace)
    {
        Simulator::Schedule(MilliSeconds(150),
                            &ReportRxWindow,
                            DynamicCast<PacketSink>(sinkApps.Get(0)));
    }

    Simulator::Stop(Seconds(P.maxSimTime));
    Simulator::Run();

    const char* status = g.done ? "ok" : "timeout";
    double comp = g.done ? (g.tDone - g.tFirstData).GetSeconds() : -1.0;
    std::printf("%" PRIu64 ",%.9f,%u,%u,%u,%u,%u,%s\n",
                run,
                comp,
                em->k,
                em->drops,
                g.rto,
                g.fr,
                g.retx,
                status);
    std::fflush(stdout);
    if (P.trace)
    {
        std::fprintf(stderr,
                     "first data tx at %.9f, done at %.9f\n",
                     g.tFirstData.GetSeconds(),
                     g.tDone.GetSeconds());
    }
    g.sock = nullptr;
    Simulator::Destroy();
}

} // namespace

int
main(int argc, char* argv[])
{
    Params P;
    uint64_t runStart = 0;
    uint64_t runCount = 1;
    CommandLine cmd(__FILE__);
    cmd.AddValue("N", "number of data segments", P.n);
    cmd.AddValue("W0", "initial cwnd (segments)", P.w0);
    cmd.AddValue("b", "DelAckCount", P.b);
    cmd.AddValue("lt", "LimitedTransmit (0/1)", P.lt);
    cmd.AddValue("mode", "none|scripted|random", P.mode);
    cmd.AddValue("drop", "scripted: 0-based data segment whose first tx is dropped", P.drop);
    cmd.AddValue("p", "random: per-packet drop probability", P.p);
    cmd.AddValue("seed", "random: base seed", P.seed);
    cmd.AddValue("runStart", "first run index", runStart);
    cmd.AddValue("runCount", "number of runs", runCount);
    cmd.AddValue("trace", "print per-packet event log to stderr", P.trace);
    cmd.AddValue("maxSimTime", "simulation time cap (s)", P.maxSimTime);
    cmd.Parse(argc, argv);

    for (uint64_t r = runStart; r < runStart + runCount; ++r)
    {
        RunOne(P, r);
    }
    return 0;
}
