// ns-3's distributed simulator as the synchroniser and carrier of rocesw-replay-mpi (GPL-2.0 as a
// whole, since it links ns-3). One ns-3 node per rank (its SystemId), and for each pair of ranks
// that share links a PointToPointRemoteChannel whose delay is the pair's lookahead: ns-3 computes
// its granted time window or its null messages from those channels. Frames do not go through
// the channel's devices: MpiInterface::SendPacket carries our message to the MpiReceiver of the
// device at the far rank, for a time chosen by the replay.
//
// The replay's own agenda runs inside one ns-3 event, a step at the replay's next time. Frames
// for another rank wait in a batch per peer; the batch leaves in one message after the last step
// before its deadline, the earliest receive time of its frames less the pair's lookahead, so
// each message is sent at least a lookahead before it is received, as ns-3 requires in both
// modes (docs/replay-parallel.md, "Frames crossing ranks, batched"). A frame is received one
// nanosecond before it arrives (the lookahead allows for that), so it is on the replay's agenda
// before the step of its time runs, whatever the order of MPI.
#include <mpi.h>

#include <sys/resource.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/distributed-simulator-impl.h"
#include "ns3/granted-time-window-mpi-interface.h"
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
uint64_t g_sent = 0, g_received = 0;        // frames crossing ranks
uint64_t g_sent_due = 0, g_received_due = 0; // those that arrive by the stop time
uint64_t g_sent_bytes = 0;                  // their records in the messages
uint64_t g_msg_sent = 0, g_msg_received = 0; // the messages that carried them
uint64_t g_split = 0;                        // batches that left in several messages
// ns-3 receives a message into a buffer of MAX_MPI_MSG_SIZE bytes (16 KiB in the build of
// scripts/setup-ns3-mpi.sh, in both modes), its own header and the packet's serialisation
// included: a batch is cut into messages of at most this much
const size_t CHUNK = ns3::MAX_MPI_MSG_SIZE - 256;

// frames waiting for a peer rank: each `len u32, message` in chunks of at most CHUNK bytes
struct Peer {
	std::deque<std::vector<uint8_t>> chunk;
	uint64_t first_rx = UINT64_MAX; // the earliest receive time of a waiting frame
	uint64_t lookahead = 0;
	EventId flush;       // the rest of a batch that leaves in several messages
	bool waiting = false; // in g_waiting
};
std::vector<Peer> g_peer;
std::vector<unsigned> g_waiting; // peers with frames waiting
// Ticks: at the same virtual times every rank checks with the others whether anything is left
// anywhere (an allreduce, which each rank reaches, as null messages or granted windows keep
// every rank's time moving), and runs the replay's PFC deadlock grid point of that time
// (replay_part.h) before any step of it. With null messages, which run until stopped, a tick
// comes at least every CHECK_NS; with granted windows the ticks end when nothing is left.
const uint64_t CHECK_NS = 100000;
EventId g_tick;
uint64_t g_tick_t = UINT64_MAX;
// what null messages have promised each peer rank: nothing from this rank before then
std::vector<uint64_t> g_promised;
// ROCESW_MPI_STATS=1: where each rank's time went (docs/replay-parallel.md, "Measured")
bool g_stats = false;
// time spent, on the wall clock and on a core (what carries over to another machine: on a busy
// one the wall clock also counts the time other processes had the core)
struct Spent {
	double wall = 0, cpu = 0;
};
Spent g_step_s, g_msg_s;
uint64_t g_steps = 0;
// synchronisations, counted at MPI's profiling interface (below): granted time windows agreed
// (rounds that found a message still in flight agree nothing and are repeated), or null-message
// waits (a rank blocked until a peer's message raises its safe time)
bool g_running = false;
uint64_t g_rounds = 0, g_repeated = 0, g_waits = 0;

double WallNow()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double CpuNow()
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// ROCESW_MPI_STATS: the time from `since` (both clocks) added to `to`
Spent Mark()
{
	Spent m;
	if (g_stats)
		m.wall = WallNow(), m.cpu = CpuNow();
	return m;
}

void Add(Spent &to, const Spent &since)
{
	if (!g_stats)
		return;
	to.wall += WallNow() - since.wall;
	to.cpu += CpuNow() - since.cpu;
}

double g_cpu0 = 0;
long g_preempt0 = 0;

void Step();
void FlushDue();
void Tick();

// the replay's next time, as the one pending step
void Arm()
{
	uint64_t n = rsw_mpi_next();
	if (g_stop && n != UINT64_MAX && n > g_stop)
		n = UINT64_MAX;
	if (n == g_step_t && g_step.IsRunning())
		return;
	// removed, not cancelled: a cancelled step stays on ns-3's agenda, and its time would
	// count as this rank's next event when the ranks agree on a window
	if (g_step.IsRunning())
		Simulator::Remove(g_step);
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
	if (t == g_tick_t) { // the tick of this time comes first, whichever ns-3 put first
		Simulator::Remove(g_tick);
		Tick();
	}
	g_step_t = UINT64_MAX;
	Spent t0 = Mark();
	if (rsw_mpi_run_at(t) < 0)
		rsw_ns3_abort();
	Add(g_step_s, t0);
	g_steps++;
	Arm();
	FlushDue();
}

void ArmTick()
{
	uint64_t now = (uint64_t)Simulator::Now().GetNanoSeconds(), t = rsw_mpi_dl_next();
	if (g_null && (now / CHECK_NS + 1) * CHECK_NS < t)
		t = (now / CHECK_NS + 1) * CHECK_NS;
	g_tick_t = t;
	g_tick = Simulator::Schedule(NanoSeconds(t - now), &Tick);
}

// Something is left when a rank has a wake-up due (up to the stop time) or a frame that arrives
// by then was sent and not yet received: then a wake-up at or after this time will run, and the
// replay of one process would run the grid point of this time too.
void Tick()
{
	uint64_t t = g_tick_t;
	g_tick_t = UINT64_MAX;
	uint64_t n = rsw_mpi_next();
	uint64_t v[4] = {(uint64_t)rsw_mpi_dl_armed(), n != UINT64_MAX && (!g_stop || n <= g_stop),
			 g_sent_due, g_received_due};
	MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (!v[1] && v[2] == v[3]) {
		if (g_null)
			Simulator::Stop();
		return;
	}
	if (t == rsw_mpi_dl_next())
		rsw_mpi_dl_at(t, v[0] != 0);
	ArmTick();
}

// A batch: every frame onto the replay's agenda at its own arrival time, then the next step.
void Receive(Ptr<Packet> p)
{
	g_msg_received++;
	Spent t0 = Mark();
	uint32_t n = p->GetSize();
	std::vector<uint8_t> buf(n);
	p->CopyData(buf.data(), n);
	for (size_t at = 0; at < n;) {
		uint32_t len = 0;
		if (n - at < sizeof(len) || (memcpy(&len, &buf[at], sizeof(len)), len > n - at - 4)) {
			fprintf(stderr, "rocesw-replay-mpi: a malformed batch from another rank\n");
			rsw_ns3_abort();
		}
		uint64_t t = rsw_mpi_receive(&buf[at + 4], len);
		at += 4 + len;
		g_received++;
		g_received_due += !g_stop || t <= g_stop;
	}
	Arm();
	Add(g_msg_s, t0);
}

// The first chunk waiting for peer `to` leaves, to be received at the earliest receive time of
// the waiting frames, a lookahead from now at the latest. More chunks leave in an event after
// this one at the same time, never in this one: a message's null-message guarantee is
// min(next event, safe time) + lookahead, and that next event must not be later than now while
// frames still wait.
void Flush(unsigned to)
{
	Peer &p = g_peer[to];
	Spent t0 = Mark();
	std::vector<uint8_t> c = std::move(p.chunk.front());
	p.chunk.pop_front();
	uint64_t rx = p.first_rx;
	if (!p.chunk.empty()) {
		p.flush = Simulator::ScheduleNow(&Flush, to);
	} else {
		p.first_rx = UINT64_MAX;
		p.flush = EventId();
	}
	g_msg_sent++;
	MpiInterface::SendPacket(Create<Packet>(c.data(), (uint32_t)c.size()), NanoSeconds(rx), to,
				 (uint32_t)g_dev[rsw_ns3_rank()][to]);
	Add(g_msg_s, t0);
}

// After a step: the batches whose deadline (earliest receive time less the lookahead) comes
// before the next step leave now. Frames are only put on links in steps, so a batch waits for
// as long as a step at or before its deadline is on the agenda, and no event of its own adds a
// time at which the ranks would synchronise.
void FlushDue()
{
	size_t keep = 0;
	for (unsigned to : g_waiting) {
		Peer &p = g_peer[to];
		if (!p.flush.IsRunning() &&
		    (g_step_t == UINT64_MAX || g_step_t > p.first_rx - p.lookahead)) {
			Flush(to);
			g_split += !p.chunk.empty();
		}
		p.waiting = !p.chunk.empty();
		if (p.waiting)
			g_waiting[keep++] = to;
	}
	g_waiting.resize(keep);
}

void PrintStats(double wall)
{
	uint64_t msgs = g_msg_sent + g_msg_received, frames = g_sent + g_received;
	double end = (double)Simulator::Now().GetNanoSeconds(), la = 0;
	for (const Peer &p : g_peer)
		if (p.lookahead && (!la || (double)p.lookahead < la))
			la = (double)p.lookahead;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = CpuNow() - g_cpu0;
	Spent sync = {wall - g_step_s.wall - g_msg_s.wall, cpu - g_step_s.cpu - g_msg_s.cpu};
	uint64_t n_sync = g_null ? g_waits : g_rounds;
	char what[96];
	if (g_null)
		snprintf(what, sizeof(what), "%llu waits", (unsigned long long)g_waits);
	else
		snprintf(what, sizeof(what), "%llu rounds, %llu of them repeated",
			 (unsigned long long)g_rounds, (unsigned long long)g_repeated);
	auto us = [](double s, uint64_t n) { return n ? s / (double)n * 1e6 : 0.0; };
	unsigned r = rsw_ns3_rank();
	fprintf(stderr, "rank %u: run %.3f s, on a core %.3f s (preempted %ld times); virtual end "
		"%.0f ns, %.0f lookaheads of %.0f ns\n", r, wall, cpu, ru.ru_nivcsw - g_preempt0,
		end, la ? end / la : 0.0, la);
	fprintf(stderr, "rank %u: replay steps %.3f s, on a core %.3f s (%llu)\n", r,
		g_step_s.wall, g_step_s.cpu, (unsigned long long)g_steps);
	fprintf(stderr, "rank %u: frames sent %llu received %llu in messages sent %llu received "
		"%llu (%llu batches sent in several): %.3f s, on a core %.3f s (%.2f us a message, "
		"%.2f us a frame)\n", r, (unsigned long long)g_sent, (unsigned long long)g_received,
		(unsigned long long)g_msg_sent, (unsigned long long)g_msg_received,
		(unsigned long long)g_split, g_msg_s.wall,
		g_msg_s.cpu, us(g_msg_s.cpu, msgs), us(g_msg_s.cpu, frames));
	fprintf(stderr, "rank %u: frame records sent %llu bytes (%.1f a frame)\n", r,
		(unsigned long long)g_sent_bytes, g_sent ? (double)g_sent_bytes / (double)g_sent : 0.0);
	fprintf(stderr, "rank %u: synchronisation and waiting %.3f s, on a core %.3f s (%s: "
		"%.1f us each, %.1f us on a core)\n", r, sync.wall, sync.cpu, what,
		us(sync.wall, n_sync), us(sync.cpu, n_sync));
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
	g_peer.resize(n);
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
	g_peer[a].lookahead = g_peer[b].lookahead = delay_ns;
}

void *rsw_ns3_frame(unsigned to, uint64_t rx_ns, size_t len)
{
	Peer &p = g_peer[to];
	if (len > CHUNK - 4) {
		fprintf(stderr, "rocesw-replay-mpi: a message of %zu bytes for another rank is more "
			"than ns-3 receives (%zu)\n", len, CHUNK - 4);
		rsw_ns3_abort();
	}
	g_sent++;
	g_sent_due += !g_stop || rx_ns <= g_stop;
	g_sent_bytes += len;
	if (p.chunk.empty() || p.chunk.back().size() + 4 + len > CHUNK) {
		p.chunk.emplace_back();
		p.chunk.back().reserve(CHUNK);
	}
	std::vector<uint8_t> &c = p.chunk.back();
	size_t at = c.size();
	uint32_t l = (uint32_t)len;
	c.resize(at + 4 + len);
	memcpy(&c[at], &l, sizeof(l));
	// received a nanosecond early: on the replay's agenda before the step of its time. The
	// frame was put on its link now or earlier, so rx - lookahead is not before now.
	uint64_t rx = rx_ns - 1, now = (uint64_t)Simulator::Now().GetNanoSeconds();
	if (rx < now + p.lookahead) {
		fprintf(stderr, "rocesw-replay-mpi: a frame for rank %u arrives at %llu ns, sooner "
			"than the lookahead (%llu ns) from now (%llu ns)\n", to,
			(unsigned long long)rx_ns, (unsigned long long)p.lookahead,
			(unsigned long long)now);
		rsw_ns3_abort();
	}
	if (!p.waiting)
		g_waiting.push_back(to);
	p.waiting = true;
	if (rx < p.first_rx)
		p.first_rx = rx;
	return &c[at + 4];
}

void rsw_ns3_run(uint64_t stop_ns)
{
	g_stop = stop_ns;
	Simulator::ScheduleNow(&Arm);
	ArmTick();
	const char *st = getenv("ROCESW_MPI_STATS");
	g_stats = st && *st == '1';
	double t0 = WallNow();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	g_preempt0 = ru.ru_nivcsw;
	g_cpu0 = CpuNow();
	g_running = true;
	Simulator::Run();
	g_running = false;
	if (g_stats) {
		double wall = WallNow() - t0;
		PrintStats(wall);
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

} // extern "C"

namespace
{
// Each rank's byte count and place in the whole, from the lengths; the whole's length.
long long Places(const std::vector<long long> &all, std::vector<int> &cnt, std::vector<int> &disp)
{
	long long total = 0;
	for (size_t i = 0; i < all.size(); i++) {
		cnt[i] = (int)all[i];
		disp[i] = (int)total;
		total += all[i];
	}
	return total;
}
} // namespace

extern "C" {

void rsw_ns3_gather(const void *data, size_t len, char **out, size_t *lens)
{
	int n = (int)rsw_ns3_size(), me = (int)rsw_ns3_rank();
	long long l = (long long)len;
	std::vector<long long> all(n);
	MPI_Gather(&l, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
	std::vector<int> cnt(n), disp(n);
	long long total = Places(all, cnt, disp);
	for (int i = 0; me == 0 && i < n; i++)
		lens[i] = (size_t)all[i];
	char *buf = me == 0 ? static_cast<char *>(malloc((size_t)total + 1)) : nullptr;
	MPI_Gatherv(data, (int)len, MPI_BYTE, buf, cnt.data(), disp.data(), MPI_BYTE, 0,
		    MPI_COMM_WORLD);
	if (me == 0)
		*out = buf;
}

int rsw_ns3_allgather(const void *data, size_t len, char **out, size_t *out_len)
{
	int n = (int)rsw_ns3_size();
	long long l = (long long)len;
	std::vector<long long> all(n);
	if (MPI_Allgather(&l, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD))
		return -1;
	std::vector<int> cnt(n), disp(n);
	long long total = Places(all, cnt, disp);
	char *buf = static_cast<char *>(malloc((size_t)total + 1));
	if (!buf || MPI_Allgatherv(data, (int)len, MPI_BYTE, buf, cnt.data(), disp.data(),
				   MPI_BYTE, MPI_COMM_WORLD)) {
		free(buf);
		return -1;
	}
	*out = buf;
	*out_len = (size_t)total;
	return 0;
}

// MPI's profiling interface, for ROCESW_MPI_STATS only: ns-3's synchroniser calls these, they
// count and pass on to the PMPI_ entry points
int MPI_Allgather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,
		  MPI_Comm comm)
{
	int rc = PMPI_Allgather(sb, sn, st, rb, rn, rt, comm);
	if (g_running && sn == (int)sizeof(LbtsMessage) && st == MPI_BYTE) {
		LbtsMessage *m = static_cast<LbtsMessage *>(rb);
		uint64_t tx = 0, rx = 0;
		for (uint32_t i = 0; i < rsw_ns3_size(); i++) {
			tx += m[i].GetTxCount();
			rx += m[i].GetRxCount();
		}
		g_rounds++;
		g_repeated += tx != rx;
	}
	return rc;
}

int MPI_Waitany(int n, MPI_Request *req, int *index, MPI_Status *status)
{
	g_waits += g_running;
	return PMPI_Waitany(n, req, index, status);
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
