package io.spraynic.datapath.nic;

import io.spraynic.datapath.fault.FaultLog;
import io.spraynic.datapath.neighbour.NeighbourAgent;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.telemetry.CounterMirror;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import org.agrona.BufferUtil;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One run-to-completion poll-mode worker of an {@link EmbeddedNic}: it owns queue {@code index} of every
 * plane's port, one transport engine (with its connections and its copy of the protection domain), and
 * loops: run control commands, take packets other workers steered here, receive a burst from each plane,
 * parse, hand each packet to the engine or steer it to the worker that owns its connection, take posted
 * work requests from the connections' rings, tick the engine, transmit.
 * <p>
 * Nothing mutable is shared with other threads except through queues: control actions arrive as
 * {@link Command}s, work requests through each connection's {@link WorkRequestSource} (an in-process ring, or a
 * client process's request ring in shared memory, read in place and checked field by field), steered packets through
 * this worker's inbox (copied: a queue's receive buffers belong to its own thread), completions leave through
 * completion queues (moved on into a client process's completion rings here too) and counters through the
 * counters file.
 * <p>
 * Every input is isolated: an unexpected exception while handling one frame, steered frame, command, poller,
 * work-request ring or tick is caught, counted ({@code frame faults} / {@code loop faults} in the counters
 * file), logged at most once per reason per {@link FaultLog#DEFAULT_INTERVAL_NANOS}, and the loop goes on with
 * the next input; a receive burst is always released. The {@code catch} blocks call out-of-line methods, so
 * the normal path stays as it was.
 * <p>
 * The loop is here; its parts with a concern of their own are apart, each with its own test: {@link TickSpacing} (when
 * a poll thread ticks), {@link WorkerCountersPublisher} (the counters file, a slice of the connections at a time),
 * {@link WorkerFaults} (what a caught exception becomes), {@link WorkerNeighbours} (the neighbour agents on the worker
 * that runs them) and {@link TenantDomains} (protection domains per tenant).
 * <p>
 * Outside an {@link EmbeddedNic}, {@link #builder()} makes a lone worker around any ports and one engine (spray or
 * RoCEv2), with the clock it is given: test beds and benchmarks step it with {@link #doWork()} (in virtual time
 * where they inject a clock), or run it on an {@code AgentRunner}, so they exercise this loop, the shipped one. The
 * virtual-time fabric's endpoints step it at each frame arrival and at host timers, with a tick interval
 * ({@link NicWorkerBuilder#tickInterval}): the engine is then ticked when {@link #nextTickNanos()} says, not on every
 * loop.
 */
public final class NicWorker implements Agent
{
    /** A control action run on the worker's thread. */
    @FunctionalInterface
    interface Command
    {
        void execute(NicWorker worker, long nowNanos);
    }

    /** What becomes of a connection its transport closed on its own (the peer closed it, it idled out, it failed). */
    @FunctionalInterface
    interface ClosedConnections
    {
        /** Worker thread, at most once a publish interval per connection, until it is detached. */
        void onTransportClosed(NicWorker worker, NicConnection connection);
    }

    /** Steered packets taken per loop. */
    static final int STEERED_PER_LOOP = 256;
    /** Full receive bursts one loop takes from a port before it goes on. */
    static final int RX_BURSTS_PER_LOOP = 4;
    /** Inbox message types from here up carry a neighbour frame (ARP, ICMP) of plane {@code type - base}. */
    static final int NEIGHBOUR_MESSAGE_BASE = 1 << 16;

    private final int index;
    private final String roleName;
    private final int workers;
    private final PacketPort[] ports;
    private final WorkerTransport transport;
    private final ProtectionDomain protectionDomain;
    private final TenantDomains tenantDomains;
    private final NanoClock clock;
    private final int burstCapacity;
    private int trimCursor; // the connection whose queues the next loop may trim
    private long queuesIdleNanos = EmbeddedNicConfig.DEFAULT_QUEUES_IDLE_NANOS;
    private int rxBurstsPerLoop = RX_BURSTS_PER_LOOP; // 1 for a benchmark that times one burst per loop
    private final RoceParser parser;
    private final ParseCounters parseCounters;
    private final ManyToOneConcurrentArrayQueue<Command> commands = new ManyToOneConcurrentArrayQueue<>(1024);
    private final Consumer<Command> commandRunner = this::runCommand;
    private final MemorySegment inboxMemory;
    private final ManyToOneRingBuffer inbox;
    private final MessageHandler steeredHandler = this::onSteered;
    private final UnsafeBuffer forwardView = new UnsafeBuffer(0, 0);
    private final RoceFrame frame = new RoceFrame();
    private final WorkRequestIntake intake;
    private final WorkerCounters counters;
    private final WorkerFaults faults;
    private final WorkerCountersPublisher publisher;
    private final TickSchedule tickSchedule; // null: the engine is ticked on every loop, as a poll thread does
    private final TickSpacing tickSpacing = new TickSpacing(); // a poll thread's, with no tick schedule
    private NicWorker[] peers;
    private PacketBurst[] rxBursts;
    private NicConnection[] connections = new NicConnection[0];
    private Runnable[] pollers = new Runnable[0];
    private long nowNanos;
    private WorkerNeighbours neighbours; // on the worker that runs the neighbour agents; null elsewhere

    /**
     * The worker's own counters in the counters file.
     *
     * @param parse   mirrors the parse counters into the file, or null (not published).
     * @param engines mirror the engines' counters into the file (none: not published).
     */
    public record WorkerCounters(AtomicCounter rxFrames, AtomicCounter steeredOut, AtomicCounter steeredIn,
        AtomicCounter steerDrops, AtomicCounter badLkeys, AtomicCounter commands, AtomicCounter frameFaults,
        AtomicCounter loopFaults, CounterMirror parse, CounterMirror[] engines)
    {
        private static final int COUNT = 8;

        /** @return counters in memory of this process only, read through the worker (a lone worker's default). */
        public static WorkerCounters unpublished()
        {
            // direct and aligned: counters are written with ordered stores, which need 8-byte alignment
            final CountersManager manager = new CountersManager(
                new UnsafeBuffer(BufferUtil.allocateDirectAligned(COUNT * CountersReader.METADATA_LENGTH, 64)),
                new UnsafeBuffer(BufferUtil.allocateDirectAligned(COUNT * CountersReader.COUNTER_LENGTH, 64)));
            return new WorkerCounters(manager.newCounter("rx frames"), manager.newCounter("steered out"),
                manager.newCounter("steered in"), manager.newCounter("steering drops"),
                manager.newCounter("work requests with unknown lkey"), manager.newCounter("control commands"),
                manager.newCounter("frame faults"), manager.newCounter("loop faults"), null, new CounterMirror[0]);
        }
    }

    /** @return a builder of a lone worker (index 0 of 1) around ports and one engine. */
    public static NicWorkerBuilder builder()
    {
        return new NicWorkerBuilder();
    }

    NicWorker(
        final int index,
        final int workers,
        final PacketPort[] ports,
        final WorkerTransport transport,
        final ParseCounters parseCounters,
        final ProtectionDomain protectionDomain,
        final NanoClock clock,
        final int burstCapacity,
        final int inboxBytes,
        final Arena arena,
        final WorkerCounters counters,
        final String roleName,
        final TickSchedule tickSchedule)
    {
        this.index = index;
        this.roleName = roleName;
        this.workers = workers;
        this.ports = ports.clone();
        this.transport = transport;
        this.parseCounters = parseCounters;
        this.parser = transport.parser();
        this.protectionDomain = protectionDomain;
        this.tenantDomains = new TenantDomains(protectionDomain);
        this.clock = clock;
        this.burstCapacity = burstCapacity;
        this.counters = counters;
        this.intake = new WorkRequestIntake(protectionDomain, counters.badLkeys());
        this.faults = new WorkerFaults(counters.frameFaults(), counters.loopFaults(), roleName);
        this.publisher = new WorkerCountersPublisher(counters, faults);
        this.tickSchedule = tickSchedule;
        final int length = inboxBytes + RingBufferDescriptor.TRAILER_LENGTH;
        this.inboxMemory = arena.allocate(length, 64);
        this.inbox = new ManyToOneRingBuffer(new UnsafeBuffer(inboxMemory.address(), length));
    }

    /** @param closed told of every connection the transport closed on its own (before the worker starts). */
    void closedConnections(final ClosedConnections closed)
    {
        publisher.closedConnections(closed);
    }

    /** @param bursts full receive bursts one loop takes from a port, at least 1 (default {@link #RX_BURSTS_PER_LOOP}). */
    void rxBurstsPerLoop(final int bursts)
    {
        if (bursts < 1)
        {
            throw new IllegalArgumentException("receive bursts per loop must be at least 1: " + bursts);
        }
        this.rxBurstsPerLoop = bursts;
    }

    /** @param nanos how long a connection's ring and queues stay empty before they give their slots back. */
    void queuesIdle(final long nanos)
    {
        this.queuesIdleNanos = nanos;
    }

    void peers(final NicWorker[] peers)
    {
        this.peers = peers;
    }

    /**
     * Makes this worker the one that runs the NIC's neighbour agents (before it starts): other workers steer ARP
     * and ICMP frames to it.
     *
     * @param agents per plane, an agent or null for a plane without an address.
     * @param sinks  per plane, the agent's sink on this worker's queue of the plane's port.
     */
    void neighbours(final NeighbourAgent[] agents, final PortFrameSink[] sinks,
        final java.util.function.LongToIntFunction afterTick)
    {
        this.neighbours = new WorkerNeighbours(agents, sinks, faults, afterTick);
    }

    /** @return the agent of {@code plane} on this worker, or null (worker thread). */
    NeighbourAgent neighbour(final int plane)
    {
        return null == neighbours ? null : neighbours.agent(plane);
    }

    int index()
    {
        return index;
    }

    WorkerTransport transport()
    {
        return transport;
    }

    ProtectionDomain protectionDomain()
    {
        return protectionDomain;
    }

    /** @return the domain of tenant {@code domain} on this worker, made on first use (worker thread); 0 is the default. */
    ProtectionDomain protectionDomain(final int domain)
    {
        return tenantDomains.get(domain);
    }

    /** @return the domain of tenant {@code domain} on this worker if it has one, else null (worker thread); 0 is the default. */
    ProtectionDomain existingProtectionDomain(final int domain)
    {
        return tenantDomains.find(domain);
    }

    /** @return tenant domains this worker holds now (worker thread). */
    int tenantDomainCount()
    {
        return tenantDomains.tenantCount();
    }

    /** Forgets tenant {@code domain}'s domain on this worker once it holds no region (worker thread). */
    void releaseProtectionDomain(final int domain)
    {
        tenantDomains.release(domain);
    }

    ParseCounters parseCounters()
    {
        return parseCounters;
    }

    /**
     * @return false when the command queue is full (the caller retries).
     */
    boolean offer(final Command command)
    {
        return commands.offer(command);
    }

    public void onStart()
    {
        rxBursts = new PacketBurst[ports.length];
        for (int i = 0; i < ports.length; i++)
        {
            ports[i].onPollerStart();
            rxBursts[i] = ports[i].newBurst(burstCapacity);
        }
        transport.onStart();
        if (null != neighbours)
        {
            neighbours.start(clock.nanoTime());
        }
    }

    public int doWork()
    {
        if (null == rxBursts)
        {
            onStart();
        }
        // the loop's one clock read: the tick, its spacing, the steered frames and the commands all use it
        final long now = clock.nanoTime();
        nowNanos = now;
        int work = commands.drain(commandRunner, 16);
        for (final Runnable poller : pollers)
        {
            try
            {
                poller.run();
            }
            catch (final RuntimeException | AssertionError ex)
            {
                onLoopFault("poller", ex);
                removePoller(poller); // it would throw again on every loop
            }
        }
        transport.onReceiveStart();
        int arrived = inbox.read(steeredHandler, STEERED_PER_LOOP);
        for (int plane = 0; plane < ports.length; plane++)
        {
            // while bursts come full, a few more before the loop's walks over every connection (posts, completions),
            // which with thousands of connections cost more than a burst
            int received;
            int bursts = 0;
            do
            {
                received = receive(plane, now);
                arrived += received;
            }
            while (received == burstCapacity && ++bursts < rxBurstsPerLoop);
        }
        work += receiveEnd();
        final NicConnection[] cs = connections;
        for (final NicConnection c : cs)
        {
            try
            {
                arrived += intake.take(c);
            }
            catch (final RuntimeException | AssertionError ex)
            {
                onPostFault(c, ex);
            }
        }
        work += arrived;
        if (null == tickSchedule)
        {
            work += spacedTick(now);
        }
        else
        {
            work += scheduledTick(now, arrived);
        }
        try
        {
            transport.flush();
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onLoopFault("flush", ex);
        }
        for (final NicConnection c : cs)
        {
            try
            {
                work += c.requests.relayCompletions(c.sendCompletionQueue(), c.receiveCompletionQueue());
            }
            catch (final RuntimeException | AssertionError ex)
            {
                onLoopFault("completions", ex);
            }
        }
        if (cs.length > 0)
        {
            // one connection a loop: the ring and queues it has not used for a while give their slots back (issue 13)
            trimCursor = trimCursor < cs.length ? trimCursor : 0;
            try
            {
                cs[trimCursor++].trimQueues(now, queuesIdleNanos);
            }
            catch (final RuntimeException | AssertionError ex)
            {
                onLoopFault("trim", ex);
            }
        }
        if (null != neighbours)
        {
            work += neighbours.tick(now);
        }
        publisher.publishIfDue(this, cs, now);
        return work;
    }

    // spray: the ACKs the packets received called for, one per path (S6.4-2), before the timers fill the TX burst
    private int receiveEnd()
    {
        try
        {
            return transport.onReceiveEnd();
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onLoopFault("receive end", ex);
            return 0;
        }
    }

    // a poll thread's tick: spaced after a long one (TickSpacing), so that receiving keeps about half the thread; the
    // tick is timed only where TickSpacing says it can matter (a read costs ~26 ns here, section 56), and then alone:
    // a thread descheduled during the receive bursts is no long tick (section 63)
    private int spacedTick(final long now)
    {
        final TickSpacing spacing = tickSpacing;
        spacing.onLoopStart(now);
        if (!spacing.isDue(now))
        {
            return 0;
        }
        if (spacing.measuresTicks())
        {
            final long start = clock.nanoTime();
            final int work = tick(now);
            spacing.onTicked(start, clock.nanoTime());
            return work;
        }
        final int work = tick(now);
        spacing.onTickedUnmeasured(now);
        return work;
    }

    private int tick(final long now)
    {
        try
        {
            return transport.onTick(now);
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onLoopFault("tick", ex);
            return 0;
        }
    }

    // a worker stepped by a virtual-time fabric: the engine is ticked when its schedule says, not on every loop
    private int scheduledTick(final long now, final int arrived)
    {
        if (arrived > 0)
        {
            tickSchedule.onArrival(now);
        }
        if (!tickSchedule.isDue(now))
        {
            return 0;
        }
        final int work = tick(now);
        tickSchedule.onTicked(now, computeIdle());
        return work;
    }

    /**
     * Makes the engine's next tick due at once, for a worker with a tick interval (worker thread, e.g. after work
     * requests were posted to the engine directly); a worker without one ticks on every loop anyway.
     */
    public void kick()
    {
        if (null != tickSchedule)
        {
            tickSchedule.kick();
        }
    }

    /**
     * @return when this worker next needs a loop to tick its engine, for whoever steps it in virtual time:
     * {@link Long#MIN_VALUE} at once, {@link Long#MAX_VALUE} not before a frame arrives or a {@link #kick}. Without a
     * tick interval, {@link Long#MIN_VALUE}: every loop ticks.
     */
    public long nextTickNanos()
    {
        return null == tickSchedule ? Long.MIN_VALUE : tickSchedule.dueNanos();
    }

    private int receive(final int plane, final long now)
    {
        final PacketBurst burst = rxBursts[plane];
        final int n = ports[plane].receive(burst);
        if (n == 0)
        {
            return 0;
        }
        try
        {
            final long base = burst.memory().address();
            for (int i = 0; i < n; i++)
            {
                try
                {
                    dispatch(plane, burst.memory(), base, burst.offset(i), burst.length(i), now);
                }
                catch (final RuntimeException | AssertionError ex)
                {
                    onFrameFault(ex);
                }
            }
        }
        finally
        {
            ports[plane].release(burst); // never left to the next poll, which would append to it
        }
        counters.rxFrames().getAndAddRelease(n);
        return n;
    }

    private void dispatch(final int plane, final MemorySegment memory, final long base, final long offset,
        final int length, final long now)
    {
        if (parser.parse(memory, offset, length, frame) != FrameClass.ROCE)
        {
            if (frame.frameClass() == FrameClass.NOT_OURS)
            {
                onNotOurs(plane, memory, base, offset, length, now); // ARP, ICMP: the neighbours' control path
            }
            return; // counted by the parser: malformed, or not a packet of this transport
        }
        final int owner = workers == 1 ? 0 : transport.owner(frame, workers);
        if (owner == index)
        {
            transport.onFrame(plane, frame, now);
        }
        else
        {
            forwardView.wrap(base + offset, length);
            if (peers[owner].inbox.write(plane + 1, forwardView, 0, length))
            {
                counters.steeredOut().incrementRelease();
            }
            else
            {
                counters.steerDrops().incrementRelease(); // as a loss: the transport recovers it
            }
        }
    }

    // off the fast path: only frames the parser found not RoCEv2 come here
    private void onNotOurs(final int plane, final MemorySegment memory, final long base, final long offset,
        final int length, final long now)
    {
        if (null != neighbours)
        {
            neighbours.onFrame(plane, memory, offset, length, now);
        }
        else if (WorkerNeighbours.isNeighbourFrame(memory, offset, length))
        {
            for (final NicWorker peer : peers)
            {
                if (null != peer.neighbours)
                {
                    forwardView.wrap(base + offset, length);
                    if (!peer.inbox.write(NEIGHBOUR_MESSAGE_BASE + plane, forwardView, 0, length))
                    {
                        counters.steerDrops().incrementRelease(); // ARP and ping retry
                    }
                    break;
                }
            }
        }
    }

    /** Every next hop's MAC again ({@code {plane, high, low, mac}} each), for a worker that missed an update. */
    void onNextHopMacs(final long[] nextHops)
    {
        for (int i = 0; i + 3 < nextHops.length; i += 4)
        {
            onNextHopMac((int)nextHops[i], nextHops[i + 1], nextHops[i + 2], nextHops[i + 3]);
        }
    }

    /**
     * A next hop got a MAC (a first or a new one): every connection of this worker that sends to it on
     * {@code plane} now uses it (worker thread).
     */
    void onNextHopMac(final int plane, final long high, final long low, final long mac)
    {
        for (final NicConnection c : connections)
        {
            if (c.nextHop.is(plane, high, low))
            {
                c.nextHopMac(plane, mac);
            }
        }
    }

    private void onSteered(final int msgTypeId, final org.agrona.MutableDirectBuffer buffer, final int index, final int length)
    {
        if (msgTypeId >= NEIGHBOUR_MESSAGE_BASE)
        {
            final int plane = msgTypeId - NEIGHBOUR_MESSAGE_BASE;
            try
            {
                if (null != neighbours)
                {
                    neighbours.onFrame(plane, inboxMemory, index, length, nowNanos);
                }
            }
            catch (final RuntimeException | AssertionError ex)
            {
                onFrameFault(ex);
            }
            return;
        }
        counters.steeredIn().incrementRelease();
        try
        {
            if (parser.parse(inboxMemory, index, length, frame) == FrameClass.ROCE)
            {
                transport.onFrame(msgTypeId - 1, frame, nowNanos);
            }
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onFrameFault(ex);
        }
    }

    // out of line: the loops above stay small for the JIT; the exceptional path may allocate
    private void onFrameFault(final Throwable fault)
    {
        faults.onFrameFault(fault);
    }

    private void onLoopFault(final String where, final Throwable fault)
    {
        faults.onLoopFault(where, fault);
    }

    private void onPostFault(final NicConnection c, final Throwable fault)
    {
        onLoopFault("work request", fault);
        try
        {
            intake.failHead(c);
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onLoopFault("failing a work request", ex);
        }
    }

    /** @return the faults this worker caught and survived, by reason (for tests and reports). */
    FaultLog faultLog()
    {
        return faults.log();
    }

    /** @return frames, commands, pollers, posts and ticks that threw (caught, dropped); any thread. */
    public long faults()
    {
        return faults.count();
    }

    /** @return faults per reason ("where class"), a copy: what a test or a report reads. */
    public Map<String, Long> faultCounts()
    {
        return faults.counts();
    }

    /** @return the worker's own counters. */
    public WorkerCounters counters()
    {
        return counters;
    }

    private void runCommand(final Command command)
    {
        counters.commands().incrementRelease();
        try
        {
            command.execute(this, nowNanos);
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onLoopFault("command", ex);
        }
    }

    /** Adds a connection whose work requests this worker takes (worker thread). */
    void attach(final NicConnection connection)
    {
        connections = Arrays.copyOf(connections, connections.length + 1);
        connections[connections.length - 1] = connection;
    }

    /** Stops taking a connection's work requests (worker thread). */
    void detach(final NicConnection connection)
    {
        connections = without(connections, connection);
    }

    /** Adds something to run every loop until it removes itself (worker thread), e.g. waiting for a handshake. */
    void addPoller(final Runnable poller)
    {
        pollers = Arrays.copyOf(pollers, pollers.length + 1);
        pollers[pollers.length - 1] = poller;
    }

    void removePoller(final Runnable poller)
    {
        pollers = without(pollers, poller);
    }

    // control path: the worker loop iterates plain arrays, replaced (never edited in place) on a change
    private static <T> T[] without(final T[] items, final T item)
    {
        final T[] kept = items.clone();
        int n = 0;
        for (final T t : items)
        {
            if (t != item)
            {
                kept[n++] = t;
            }
        }
        return Arrays.copyOf(kept, n);
    }

    /**
     * @return true when no work request waits in a ring and no connection has one in flight.
     */
    boolean computeIdle()
    {
        if (!transport.isIdle() || pollers.length > 0)
        {
            return false;
        }
        for (final NicConnection c : connections)
        {
            if (c.requests.size() > 0 || !isIdle(c))
            {
                return false;
            }
        }
        return true;
    }

    static boolean isIdle(final NicConnection c)
    {
        return c.isTransportIdle();
    }

    public void onClose()
    {
        publisher.publishAll(this, connections);
        if (null != rxBursts)
        {
            for (int i = 0; i < ports.length; i++)
            {
                ports[i].release(rxBursts[i]);
                rxBursts[i].close();
            }
            transport.onClose();
            if (null != neighbours)
            {
                neighbours.close();
            }
            for (final PacketPort port : ports)
            {
                port.onPollerClose();
            }
            rxBursts = null;
        }
    }

    public String roleName()
    {
        return roleName;
    }
}
