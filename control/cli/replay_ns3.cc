// ns-3's distributed simulator as the synchroniser and carrier of rocesw-replay-mpi (GPL-2.0 as a
// whole, since it links ns-3). One ns-3 node per rank (its SystemId), and for each pair of ranks
// that share links a PointToPointRemoteChannel whose delay is the pair's lookahead: ns-3 computes
// its granted time window or its null messages from those channels. Frames do not go through
// the channel's devices: MpiInterface::SendPacket carries our message (the frame's bytes) to the
// MpiReceiver of the device at the far rank, for a time chosen by the replay.
//
// The replay's own agenda runs inside one ns-3 event, a step at the replay's next time; a frame
// from another rank is received one nanosecond before it arrives (its lookahead allows for that),
// so it is on the replay's agenda before the step of its time runs, whatever the order of MPI.
#include <mpi.h>

#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/point-to-point-remote-channel.h"

#include "replay_ns3.h"

using namespace ns3;

namespace
{
std::vector<Ptr<Node>> g_node;                    // by rank
std::vector<std::vector<int>> g_dev;              // [from][to]: device of node `to` facing `from`
EventId g_step;
uint64_t g_step_t = UINT64_MAX;
uint64_t g_stop = 0;
bool g_null = false;
uint64_t g_sent = 0, g_received = 0;
// null messages run until stopped: every period of virtual time the ranks check together
// whether anything is left (an allreduce at the same virtual time on every rank, which each
// rank reaches, as null messages keep every rank's time moving)
const uint64_t CHECK_NS = 100000;
// what null messages have promised each peer rank: nothing from this rank before then
std::vector<uint64_t> g_promised;
// ROCESW_MPI_STATS=1: where each rank's time went (docs/replay-parallel.md, "Measured")
bool g_stats = false;
double g_step_s = 0, g_msg_s = 0;
uint64_t g_steps = 0;

double WallNow()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void Step();

// the replay's next time, as the one pending step
void Arm()
{
	uint64_t n = rsw_mpi_next();
	if (g_stop && n != UINT64_MAX && n > g_stop)
		n = UINT64_MAX;
	if (n == g_step_t && g_step.IsRunning())
		return;
	if (g_step.IsRunning())
		Simulator::Cancel(g_step);
	g_step_t = n;
	if (n != UINT64_MAX)
		g_step = Simulator::Schedule(NanoSeconds(n) - Simulator::Now(), &Step);
}

// A step's frames for other ranks leave while it runs. With each message, null messages promise
// the peer nothing earlier than min(this rank's next event, its safe time) + lookahead, and the
// running step is no longer on ns-3's agenda: the next step is armed by an event at this time,
// scheduled first, so the promise is now + lookahead, which no frame of this step undercuts.
void Step()
{
	uint64_t t = g_step_t;
	g_step_t = UINT64_MAX;
	Simulator::ScheduleNow(&Arm);
	double t0 = g_stats ? WallNow() : 0;
	if (rsw_mpi_run_at(t) < 0)
		rsw_ns3_abort();
	if (g_stats) {
		g_step_s += WallNow() - t0;
		g_steps++;
	}
}

// Nothing left anywhere: no rank has a wake-up due (up to the stop time) and every frame sent
// was received.
void Check()
{
	uint64_t n = rsw_mpi_next();
	uint64_t v[3] = {n != UINT64_MAX && (!g_stop || n <= g_stop), g_sent, g_received};
	MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (!v[0] && v[1] == v[2])
		Simulator::Stop();
	else
		Simulator::Schedule(NanoSeconds(CHECK_NS), &Check);
}

void Receive(Ptr<Packet> p)
{
	g_received++;
	double t0 = g_stats ? WallNow() : 0;
	uint32_t n = p->GetSize();
	std::vector<uint8_t> buf(n);
	p->CopyData(buf.data(), n);
	rsw_mpi_receive(buf.data(), n);
	Arm();
	if (g_stats)
		g_msg_s += WallNow() - t0;
}
} // namespace

extern "C" {

void rsw_ns3_init(int *argc, char ***argv, int null_messages)
{
	g_null = null_messages;
	GlobalValue::Bind("SimulatorImplementationType",
			  StringValue(null_messages ? "ns3::NullMessageSimulatorImpl"
						    : "ns3::DistributedSimulatorImpl"));
	MpiInterface::Enable(argc, argv);
	uint32_t n = MpiInterface::GetSize();
	for (uint32_t r = 0; r < n; r++)
		g_node.push_back(CreateObject<Node>(r));
	g_dev.assign(n, std::vector<int>(n, -1));
	g_promised.assign(n, 0);
}

unsigned rsw_ns3_rank(void)
{
	return MpiInterface::GetSystemId();
}

unsigned rsw_ns3_size(void)
{
	return MpiInterface::GetSize();
}

void rsw_ns3_pair(unsigned a, unsigned b, uint64_t delay_ns)
{
	Ptr<PointToPointRemoteChannel> ch = CreateObject<PointToPointRemoteChannel>();
	ch->SetAttribute("Delay", TimeValue(NanoSeconds(delay_ns)));
	unsigned end[2] = {a, b};
	for (unsigned e = 0; e < 2; e++) {
		Ptr<PointToPointNetDevice> d = CreateObject<PointToPointNetDevice>();
		d->SetAddress(Mac48Address::Allocate());
		g_node[end[e]]->AddDevice(d);
		d->Attach(ch);
		Ptr<MpiReceiver> rx = CreateObject<MpiReceiver>();
		rx->SetReceiveCallback(MakeCallback(&Receive));
		d->AggregateObject(rx);
		g_dev[end[1 - e]][end[e]] = (int)d->GetIfIndex();
	}
}

void rsw_ns3_send(unsigned to, uint64_t rx_ns, const void *msg, size_t len)
{
	g_sent++;
	double t0 = g_stats ? WallNow() : 0;
	Ptr<Packet> p = Create<Packet>(static_cast<const uint8_t *>(msg), (uint32_t)len);
	// received a nanosecond early: on the replay's agenda before the step of its time
	MpiInterface::SendPacket(p, NanoSeconds(rx_ns - 1), to,
				 (uint32_t)g_dev[rsw_ns3_rank()][to]);
	if (g_stats)
		g_msg_s += WallNow() - t0;
}

void rsw_ns3_run(uint64_t stop_ns)
{
	g_stop = stop_ns;
	Simulator::ScheduleNow(&Arm);
	if (g_null && rsw_ns3_size() > 1)
		Simulator::Schedule(NanoSeconds(CHECK_NS), &Check);
	const char *st = getenv("ROCESW_MPI_STATS");
	g_stats = st && *st == '1';
	double t0 = WallNow();
	Simulator::Run();
	if (g_stats) {
		double wall = WallNow() - t0;
		fprintf(stderr, "rank %u: run %.3f s: replay steps %.3f s (%llu), frames sent %llu "
			"received %llu in %.3f s (%.2f us each), synchronisation and waiting %.3f s, "
			"virtual end %.0f ns\n", rsw_ns3_rank(), wall, g_step_s,
			(unsigned long long)g_steps, (unsigned long long)g_sent,
			(unsigned long long)g_received, g_msg_s,
			g_sent + g_received ? g_msg_s / (double)(g_sent + g_received) * 1e6 : 0.0,
			wall - g_step_s - g_msg_s, Simulator::Now().GetNanoSeconds() * 1.0);
	}
}

void rsw_ns3_abort(void)
{
	MPI_Abort(MPI_COMM_WORLD, 1);
}

void rsw_ns3_finish(void)
{
	Simulator::Destroy();
	MpiInterface::Disable();
}

void rsw_ns3_sum_u64(uint64_t *v, size_t n)
{
	MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}

void rsw_ns3_max_u64(uint64_t *v, size_t n)
{
	MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
}

void rsw_ns3_min_u64(uint64_t *v, size_t n)
{
	MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
}

void rsw_ns3_gather(const void *data, size_t len, char **out, size_t *lens)
{
	int n = (int)rsw_ns3_size(), me = (int)rsw_ns3_rank();
	long long l = (long long)len;
	std::vector<long long> all(n);
	MPI_Gather(&l, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
	std::vector<int> cnt(n), disp(n);
	long long total = 0;
	for (int i = 0; i < n; i++) {
		cnt[i] = (int)all[i];
		disp[i] = (int)total;
		total += all[i];
		if (me == 0)
			lens[i] = (size_t)all[i];
	}
	char *buf = me == 0 ? static_cast<char *>(malloc((size_t)total + 1)) : nullptr;
	MPI_Gatherv(data, (int)len, MPI_BYTE, buf, cnt.data(), disp.data(), MPI_BYTE, 0,
		    MPI_COMM_WORLD);
	if (me == 0)
		*out = buf;
}

// MPI's profiling interface: every message of ns-3's null messages (NullMessageMpiInterface,
// ns-3.37: receive time, guarantee, node, device, then the packet; receive time 0 for a null
// message) is checked against the guarantees already sent to its peer, which may have run up to
// them. A frame to be received earlier could be taken after the step of its time, and the
// outputs would depend on timing: the run stops instead.
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
	      MPI_Request *req)
{
	if (g_null && type == MPI_CHAR && count >= 16 && dest >= 0 &&
	    (size_t)dest < g_promised.size() && comm == MpiInterface::GetCommunicator()) {
		uint64_t h[2]; // receive time, guarantee
		memcpy(h, buf, sizeof(h));
		if (h[0] && h[0] < g_promised[dest]) {
			fprintf(stderr, "rocesw-replay-mpi: rank %u: a frame to be received by "
				"rank %d at %lld ns, after promising it nothing before %lld ns: it "
				"could arrive after that rank ran past it\n", rsw_ns3_rank(), dest,
				(long long)TimeStep(h[0]).GetNanoSeconds(),
				(long long)TimeStep(g_promised[dest]).GetNanoSeconds());
			rsw_ns3_abort();
		}
		if (h[1] > g_promised[dest])
			g_promised[dest] = h[1];
	}
	return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}
}
