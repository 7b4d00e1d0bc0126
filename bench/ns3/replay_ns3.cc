// The zone of a rocesw replay on mainline ns-3 (3.37): the same hosts, switches and links
// (PointToPoint devices at the links' speeds, channels with their propagation delays), every host
// sending the frames of its capture at their timestamps, every switch forwarding each frame out
// of the port rocesw's replay sent that flow by (routes from bench/ns3/zone_to_ns3.py). Counts
// the frames each switch port received and sent; optionally writes a pcap of every device.
// Used by bench/replay_ns3.sh to compare ns-3's packet-hops per second with rocesw's.
//
// What crosses a link is the frame's IPv4 packet in PPP (2 bytes), ns-3's PointToPoint framing,
// 12 bytes shorter than the Ethernet frame with its FCS. The channel's delay and the devices'
// inter-frame gap make up the difference, so a frame is received and the wire is free again
// exactly when rocesw's links say: (frame + FCS + preamble) and (+ inter-frame gap) byte times.
//
// This program links ns-3 (GPL-2.0-only) and is not part of rocesw's build.
#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pcap-file.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-helper.h"
#include "ns3/version.h"

#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_map>

using namespace ns3;

namespace
{

const uint16_t kIpv4 = 0x0800;
const uint32_t kPppBytes = 2;            // what ns-3's PointToPoint puts in front of the packet
const uint32_t kEthBytes = 14;           // what it carries instead: the frame's Ethernet header
const uint32_t kFcsPreambleBytes = 4 + 8; // counted by rocesw's links until the frame is received
const uint32_t kIfgBytes = 12;           // and then until the wire is free

[[noreturn]] void
Fail(const std::string& what)
{
    std::cerr << "replay_ns3: " << what << std::endl;
    exit(1);
}

struct FlowKey
{
    uint32_t src, dst;
    uint16_t sport, dport;

    bool operator==(const FlowKey& o) const
    {
        return src == o.src && dst == o.dst && sport == o.sport && dport == o.dport;
    }
};

struct FlowKeyHash
{
    size_t operator()(const FlowKey& k) const
    {
        uint64_t a = (uint64_t(k.src) << 32) | k.dst;
        uint64_t b = (uint64_t(k.sport) << 16) | k.dport;
        return std::hash<uint64_t>()(a * 0x9E3779B97F4A7C15ULL ^ b);
    }
};

struct Port
{
    std::string name; // SWITCH|PORT, or the host's name
    Ptr<PointToPointNetDevice> dev;
    uint64_t rx = 0, tx = 0, drops = 0;
};

// A switch: looks up the frame's flow and sends it out of the route's port.
struct Switch
{
    std::string name;
    std::map<std::string, Port*> byName;
    std::vector<Port*> byIfIndex;
    std::unordered_map<FlowKey, Port*, FlowKeyHash> routes;
    uint64_t unrouted = 0;

    void Receive(Ptr<NetDevice> dev,
                 Ptr<const Packet> p,
                 uint16_t,
                 const Address&,
                 const Address&,
                 NetDevice::PacketType)
    {
        byIfIndex[dev->GetIfIndex()]->rx++;
        uint8_t h[24]; // IPv4 header without options, then the UDP ports
        if (p->CopyData(h, sizeof h) != sizeof h || (h[0] & 0x0f) != 5)
        {
            unrouted++;
            return;
        }
        FlowKey k;
        memcpy(&k.src, h + 12, 4);
        memcpy(&k.dst, h + 16, 4);
        k.sport = uint16_t(h[20] << 8 | h[21]);
        k.dport = uint16_t(h[22] << 8 | h[23]);
        auto r = routes.find(k);
        if (r == routes.end())
        {
            unrouted++;
            return;
        }
        r->second->tx++;
        r->second->dev->Send(p->Copy(), r->second->dev->GetBroadcast(), kIpv4);
    }
};

// A host: sends its capture's frames at their timestamps, one read ahead; receives everything.
struct Host
{
    Port* port = nullptr;
    PcapFile in;
    std::string file;
    uint64_t frame = 0;
    Ptr<Packet> next;
    std::vector<uint8_t> buf = std::vector<uint8_t>(65536);

    void ReadNext()
    {
        uint32_t sec, frac, incl, orig, got;
        in.Read(buf.data(), buf.size(), sec, frac, incl, orig, got);
        if (in.Fail())
        {
            next = nullptr;
            return;
        }
        frame++;
        if (incl != orig || incl < kEthBytes + 24 || buf[12] != 0x08 || buf[13] != 0x00)
        {
            Fail(file + ": frame " + std::to_string(frame) +
                 " is not a whole Ethernet IPv4 frame");
        }
        Time t = Seconds(sec) + (in.IsNanoSecMode() ? NanoSeconds(frac) : MicroSeconds(frac));
        next = Create<Packet>(buf.data() + kEthBytes, incl - kEthBytes);
        // times never go back, as in rocesw: an earlier stamp leaves now
        Time delay = t > Simulator::Now() ? t - Simulator::Now() : Time(0);
        Simulator::ScheduleWithContext(port->dev->GetNode()->GetId(), delay, &Host::Send, this);
    }

    void Send()
    {
        port->tx++;
        port->dev->Send(next, port->dev->GetBroadcast(), kIpv4);
        ReadNext();
    }

    void Receive(Ptr<NetDevice>,
                 Ptr<const Packet>,
                 uint16_t,
                 const Address&,
                 const Address&,
                 NetDevice::PacketType)
    {
        port->rx++;
    }
};

std::map<std::string, Ptr<Node>> nodes;
std::map<std::string, Switch*> switches;
std::map<std::string, Host*> hosts;
std::vector<Port*> ports;

uint32_t
Addr(const std::string& dotted)
{
    in_addr a;
    if (inet_pton(AF_INET, dotted.c_str(), &a) != 1)
    {
        Fail("bad IPv4 address " + dotted);
    }
    return a.s_addr;
}

// A link end: a host's name, or SWITCH|PORT; returns the port of DEV there.
Port*
Attach(const std::string& end, Ptr<NetDevice> dev)
{
    size_t bar = end.find('|');
    std::string node = end.substr(0, bar);
    auto p = new Port{end, DynamicCast<PointToPointNetDevice>(dev)};
    ports.push_back(p);
    if (bar == std::string::npos)
    {
        Host* h = hosts.at(node);
        if (h->port)
        {
            Fail("host " + node + " has two links");
        }
        h->port = p;
        return p;
    }
    Switch* s = switches.at(node);
    s->byName[end.substr(bar + 1)] = p;
    if (s->byIfIndex.size() <= dev->GetIfIndex())
    {
        s->byIfIndex.resize(dev->GetIfIndex() + 1);
    }
    s->byIfIndex[dev->GetIfIndex()] = p;
    return p;
}

void
CountDrop(Port* port, Ptr<const Packet>)
{
    port->drops++;
}

// Reads the description; returns the number of routes.
uint64_t
Build(const std::string& topo)
{
    std::ifstream f(topo);
    if (!f)
    {
        Fail("cannot read " + topo);
    }
    PointToPointHelper p2p;
    std::string line, kind, a, b;
    uint64_t routes = 0;
    for (size_t lineNo = 1; std::getline(f, line); lineNo++)
    {
        std::istringstream w(line);
        std::string where = topo + ":" + std::to_string(lineNo) + ": ";
        if (!(w >> kind))
        {
            continue;
        }
        if (kind == "node" && w >> a >> b && (b == "host" || b == "switch"))
        {
            if (nodes.count(a))
            {
                Fail(where + "node " + a + " twice");
            }
            Ptr<Node> n = CreateObject<Node>();
            nodes[a] = n;
            if (b == "host")
            {
                auto h = hosts[a] = new Host;
                n->RegisterProtocolHandler(MakeCallback(&Host::Receive, h), kIpv4, nullptr);
            }
            else
            {
                auto s = switches[a] = new Switch;
                s->name = a;
                n->RegisterProtocolHandler(MakeCallback(&Switch::Receive, s), kIpv4, nullptr);
            }
            continue;
        }
        uint64_t mbps, delayNs;
        if (kind == "link" && w >> a >> b >> mbps >> delayNs)
        {
            auto na = nodes.find(a.substr(0, a.find('|')));
            auto nb = nodes.find(b.substr(0, b.find('|')));
            if (na == nodes.end() || nb == nodes.end())
            {
                Fail(where + "a link end is no node");
            }
            // picoseconds per byte at this speed (20 at 400G), and the bytes rocesw's wire
            // counts that ours does not: the Ethernet header less PPP's, FCS, preamble
            double psPerByte = 8e12 / (mbps * 1e6);
            uint32_t toRx = kEthBytes - kPppBytes + kFcsPreambleBytes;
            Time gap = PicoSeconds(std::llround(psPerByte * (toRx + kIfgBytes)));
            Time delay = NanoSeconds(delayNs) + PicoSeconds(std::llround(psPerByte * toRx));
            p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(mbps * 1000000)));
            p2p.SetDeviceAttribute("InterframeGap", TimeValue(gap));
            p2p.SetChannelAttribute("Delay", TimeValue(delay));
            NetDeviceContainer d = p2p.Install(na->second, nb->second);
            for (uint32_t i = 0; i < 2; i++)
            {
                Port* p = Attach(i ? b : a, d.Get(i));
                p->dev->GetQueue()->TraceConnectWithoutContext("Drop",
                                                               MakeBoundCallback(&CountDrop, p));
            }
            continue;
        }
        std::string src, dst, port;
        uint16_t sport, dport;
        if (kind == "route" && w >> a >> src >> dst >> sport >> dport >> port)
        {
            auto s = switches.find(a);
            if (s == switches.end() || !s->second->byName.count(port))
            {
                Fail(where + "no linked port " + a + "|" + port);
            }
            FlowKey k{Addr(src), Addr(dst), sport, dport};
            s->second->routes[k] = s->second->byName[port];
            routes++;
            continue;
        }
        if (kind == "in" && w >> a >> b && hosts.count(a))
        {
            Host* h = hosts[a];
            h->file = b;
            h->in.Open(b, std::ios::in);
            if (h->in.Fail())
            {
                Fail(where + "cannot read the capture " + b);
            }
            continue;
        }
        Fail(where + "cannot read this line");
    }
    return routes;
}

// Every device's departures in a pcap named as rocesw names its captures.
void
CaptureDepartures(const std::string& out, uint32_t snaplen)
{
    PcapHelper pcap;
    for (Port* p : ports)
    {
        std::string name = p->name;
        size_t bar = name.find('|');
        if (bar != std::string::npos)
        {
            mkdir((out + "/" + name.substr(0, bar)).c_str(), 0755);
            name[bar] = '/';
        }
        Ptr<PcapFileWrapper> file =
            pcap.CreateFile(out + "/" + name + ".pcap", std::ios::out, PcapHelper::DLT_PPP,
                            snaplen ? snaplen : std::numeric_limits<uint32_t>::max());
        pcap.HookDefaultSink<PointToPointNetDevice>(p->dev, "PhyTxBegin", file);
    }
}

} // namespace

int
main(int argc, char** argv)
{
    // rocesw's wire times are fractions of a nanosecond at 400G (1 byte = 20 ps)
    Time::SetResolution(Time::PS);
    std::string topo, out, captures = "none", counts;
    uint64_t stopNs = 0;
    uint32_t snaplen = 0;
    CommandLine cmd(__FILE__);
    cmd.Usage("Sends the frames of a rocesw zone replay's host captures over the same links "
              "and routes on ns-3 (the description from bench/ns3/zone_to_ns3.py).");
    cmd.AddValue("topology", "the description written by zone_to_ns3.py", topo);
    cmd.AddValue("captures",
                 "none; tx: DIR/SWITCH/PORT.pcap and DIR/HOST.pcap of the frames each device "
                 "sent (what rocesw's captures hold); all: PointToPointHelper::EnablePcapAll, "
                 "each frame at both ends",
                 captures);
    cmd.AddValue("out", "directory of the captures", out);
    cmd.AddValue("snaplen",
                 "with --captures tx: bytes kept of each frame (0: whole frames), as tcpdump -s",
                 snaplen);
    cmd.AddValue("counts", "file to write every port's received and sent frames to", counts);
    cmd.AddValue("stop-ns", "stop at this virtual time (0: when every frame has arrived)", stopNs);
    cmd.Parse(argc, argv);
    if (topo.empty() || (captures != "none" && captures != "tx" && captures != "all") ||
        (captures != "none" && out.empty()))
    {
        Fail("needs --topology FILE, and --out DIR with --captures tx|all (--help)");
    }
    // No frame is lost in ns-3's queues: rocesw's lossless classes hold them with PFC instead.
    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", StringValue("4294967295p"));
    Config::SetDefault("ns3::PcapFileWrapper::NanosecMode", BooleanValue(true));
    uint64_t routes = Build(topo);
    if (captures == "tx")
    {
        CaptureDepartures(out, snaplen);
    }
    else if (captures == "all")
    {
        PointToPointHelper().EnablePcapAll(out + "/ns3");
    }
    for (auto& [name, h] : hosts)
    {
        if (!h->port)
        {
            Fail("host " + name + " has no link");
        }
        if (!h->file.empty())
        {
            h->ReadNext();
        }
    }
    if (stopNs)
    {
        Simulator::Stop(NanoSeconds(stopNs));
    }
    // what set-up cost, measured in this run, for the bench to subtract (as rocesw's
    // ROCESW_REPLAY_STATS=1 says it)
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::cerr << "ns-3: set-up " << std::fixed << std::setprecision(6)
              << (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6
              << " s of CPU (user + system)" << std::endl;
    Simulator::Run();
    uint64_t end = Simulator::Now().GetNanoSeconds();

    uint64_t sent = 0, received = 0, hops = 0, drops = 0, unrouted = 0;
    std::ofstream c;
    if (!counts.empty())
    {
        c.open(counts);
    }
    for (Port* p : ports)
    {
        bool isHost = p->name.find('|') == std::string::npos;
        (isHost ? sent : hops) += isHost ? p->tx : p->rx;
        received += isHost ? p->rx : 0;
        drops += p->drops;
        if (c.is_open())
        {
            c << p->name << " " << p->rx << " " << p->tx << "\n";
        }
    }
    for (auto& [name, s] : switches)
    {
        unrouted += s->unrouted;
    }
    std::cout << "ns-3 (" << Version::BuildProfile() << " build): " << switches.size()
              << " switches, " << hosts.size() << " hosts, " << routes << " routes; frames sent "
              << sent << ", received " << received << "; switch-hops " << hops << "; dropped "
              << drops << ", unrouted " << unrouted << "; last event at " << end << " ns"
              << std::endl;
    Simulator::Destroy();
    if (c.is_open() && !c.good())
    {
        Fail("cannot write " + counts);
    }
    return drops || unrouted ? 1 : 0;
}
