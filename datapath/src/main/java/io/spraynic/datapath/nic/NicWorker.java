package io.spraynic.datapath.nic;

import io.spraynic.datapath.fault.FaultLog;
import io.spraynic.datapath.neighbour.NeighbourAgent;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.telemetry.CounterMirror;
import io.spraynic.datapath.wire.ArpHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.IcmpHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.Arrays;
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
 */
final class NicWorker implements Agent
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

    /** Per connection and call, most work requests taken from its ring: keeps one busy poster from starving the loop. */
    static final int POSTS_PER_CONNECTION = 64;
    /** Steered packets taken per loop. */
    static final int STEERED_PER_LOOP = 256;
    static final long PUBLISH_INTERVAL_NANOS = 1_000_000L;
    /** Inbox message types from here up carry a neighbour frame (ARP, ICMP) of plane {@code type - base}. */
    static final int NEIGHBOUR_MESSAGE_BASE = 1 << 16;

    private final int index;
    private final int workers;
    private final PacketPort[] ports;
    private final WorkerTransport transport;
    private static final SecureRandom TENANT_KEYS = new SecureRandom();

    private final ProtectionDomain protectionDomain;
    private final Int2ObjectHashMap<ProtectionDomain> tenantDomains =
        new Int2ObjectHashMap<>();
    private final NanoClock clock;
    private final int burstCapacity;
    private final RoceParser parser;
    private final ParseCounters parseCounters;
    private final ManyToOneConcurrentArrayQueue<Command> commands = new ManyToOneConcurrentArrayQueue<>(1024);
    private final Consumer<Command> commandRunner = this::runCommand;
    private final MemorySegment inboxMemory;
    private final ManyToOneRingBuffer inbox;
    private final MessageHandler steeredHandler = this::onSteered;
    private final UnsafeBuffer forwardView = new UnsafeBuffer(0, 0);
    private final RoceFrame frame = new RoceFrame();
    private final SendWorkRequest sendRequest = new SendWorkRequest();
    private final ReceiveWorkRequest receiveRequest = new ReceiveWorkRequest();
    private final WorkerCounters counters;
    private final FaultLog faultLog;
    private NicWorker[] peers;
    private PacketBurst[] rxBursts;
    private NicConnection[] connections = new NicConnection[0];
    private Runnable[] pollers = new Runnable[0];
    private ClosedConnections closedConnections; // null: kept until the application closes them
    private long nowNanos;
    private long nextPublishNanos;
    // the neighbour agents of every plane, on the worker that runs them (null elsewhere) with their own TX bursts
    private NeighbourAgent[] neighbours;
    private PortFrameSink[] neighbourSinks;

    /** The worker's own counters in the counters file. */
    record WorkerCounters(AtomicCounter rxFrames, AtomicCounter steeredOut, AtomicCounter steeredIn,
        AtomicCounter steerDrops, AtomicCounter badLkeys, AtomicCounter commands, AtomicCounter frameFaults,
        AtomicCounter loopFaults, CounterMirror parse, CounterMirror[] engines)
    {
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
        final WorkerCounters counters)
    {
        this.index = index;
        this.workers = workers;
        this.ports = ports.clone();
        this.transport = transport;
        this.parseCounters = parseCounters;
        this.parser = transport.parser();
        this.protectionDomain = protectionDomain;
        this.clock = clock;
        this.burstCapacity = burstCapacity;
        this.counters = counters;
        this.faultLog = new FaultLog(roleName());
        final int length = inboxBytes + RingBufferDescriptor.TRAILER_LENGTH;
        this.inboxMemory = arena.allocate(length, 64);
        this.inbox = new ManyToOneRingBuffer(new UnsafeBuffer(inboxMemory.address(), length));
    }

    /** @param closed told of every connection the transport closed on its own (before the worker starts). */
    void closedConnections(final ClosedConnections closed)
    {
        this.closedConnections = closed;
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
    void neighbours(final NeighbourAgent[] agents, final PortFrameSink[] sinks)
    {
        this.neighbours = agents;
        this.neighbourSinks = sinks;
    }

    /** @return the agent of {@code plane} on this worker, or null (worker thread). */
    NeighbourAgent neighbour(final int plane)
    {
        return null == neighbours ? null : neighbours[plane];
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
        if (0 == domain)
        {
            return protectionDomain;
        }
        ProtectionDomain d = tenantDomains.get(domain);
        if (null == d)
        {
            d = new ProtectionDomain(domain, TENANT_KEYS); // registerWithKeys: the keys come from the NIC's control domain
            tenantDomains.put(domain, d);
        }
        return d;
    }

    /** Forgets tenant {@code domain}'s domain on this worker once it holds no region (worker thread). */
    void releaseProtectionDomain(final int domain)
    {
        final ProtectionDomain d = tenantDomains.get(domain);
        if (null != d && d.isEmpty())
        {
            tenantDomains.remove(domain);
        }
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
            final long now = clock.nanoTime();
            for (int p = 0; p < neighbours.length; p++)
            {
                if (null != neighbours[p])
                {
                    neighbourSinks[p].onStart();
                    neighbours[p].start(now);
                    neighbourSinks[p].flush();
                }
            }
        }
    }

    public int doWork()
    {
        if (null == rxBursts)
        {
            onStart();
        }
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
        work += inbox.read(steeredHandler, STEERED_PER_LOOP);
        for (int plane = 0; plane < ports.length; plane++)
        {
            work += receive(plane, now);
        }
        final NicConnection[] cs = connections;
        for (final NicConnection c : cs)
        {
            try
            {
                work += takePosts(c);
            }
            catch (final RuntimeException | AssertionError ex)
            {
                onPostFault(c, ex);
            }
        }
        try
        {
            work += transport.onTick(now);
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onLoopFault("tick", ex);
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
        if (null != neighbours)
        {
            work += neighbourWork(now);
        }
        if (now >= nextPublishNanos)
        {
            nextPublishNanos = now + PUBLISH_INTERVAL_NANOS;
            publish();
        }
        return work;
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
            final NeighbourAgent agent = neighbours[plane];
            if (null != agent)
            {
                agent.onFrame(memory, offset, length, now);
            }
        }
        else if (isNeighbourFrame(memory, offset, length))
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

    private static boolean isNeighbourFrame(final MemorySegment memory, final long offset, final int length)
    {
        final int etherType = EthernetHeader.etherType(memory, offset);
        return etherType == ArpHeader.ETHER_TYPE_ARP || etherType == EthernetHeader.ETHER_TYPE_IPV4 &&
            length >= EthernetHeader.LENGTH + Ipv4Header.LENGTH &&
            Ipv4Header.protocol(memory, offset + EthernetHeader.LENGTH) == IcmpHeader.PROTOCOL_ICMP ||
            etherType == EthernetHeader.ETHER_TYPE_IPV6 && length >= EthernetHeader.LENGTH + Ipv6Header.LENGTH &&
            Ipv6Header.nextHeader(memory, offset + EthernetHeader.LENGTH) == Ipv6Header.NEXT_HEADER_ICMPV6;
    }

    private int neighbourWork(final long now)
    {
        int work = 0;
        for (int p = 0; p < neighbours.length; p++)
        {
            final NeighbourAgent agent = neighbours[p];
            if (null != agent)
            {
                try
                {
                    work += agent.onTick(now);
                    neighbourSinks[p].flush();
                }
                catch (final RuntimeException | AssertionError ex)
                {
                    onLoopFault("neighbours", ex);
                }
            }
        }
        return work;
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
                if (null != neighbours && plane < neighbours.length && null != neighbours[plane])
                {
                    neighbours[plane].onFrame(inboxMemory, index, length, nowNanos);
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
        counters.frameFaults().incrementRelease();
        faultLog.record("frame", fault);
    }

    private void onLoopFault(final String where, final Throwable fault)
    {
        counters.loopFaults().incrementRelease();
        faultLog.record(where, fault);
    }

    private void onPostFault(final NicConnection c, final Throwable fault)
    {
        onLoopFault("work request", fault);
        // the record that threw would throw again on every loop: fail it to the application and move on
        final WorkRequestSource requests = c.requests;
        try
        {
            final byte kind = requests.peek();
            if (kind == WorkRequestSource.SEND || kind == WorkRequestSource.RECEIVE)
            {
                fail(c, kind, WorkCompletionStatus.LOC_QP_OP_ERR);
            }
            if (kind != 0)
            {
                requests.advance();
            }
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onLoopFault("failing a work request", ex);
        }
    }

    /** @return the faults this worker caught and survived, by reason (for tests and reports). */
    FaultLog faultLog()
    {
        return faultLog;
    }

    /**
     * Takes what the application posted, each field checked here whoever wrote it (another process may have: its
     * request ring is read in place, see {@link WorkRequestSource}); a request that fails a check completes with an
     * error status and is counted by reason, and never reaches the transport.
     */
    private int takePosts(final NicConnection c)
    {
        final WorkRequestSource requests = c.requests;
        final ProtectionDomain domain = null == c.protectionDomain ? protectionDomain : c.protectionDomain;
        int taken = 0;
        byte kind;
        while (taken < POSTS_PER_CONNECTION && (kind = requests.peek()) != 0)
        {
            taken++;
            if (kind == WorkRequestSource.MALFORMED)
            {
                requests.advance(); // counted by the source; no wrId to complete it with
                continue;
            }
            final int lkey = requests.lkey();
            final long localAddress = requests.localAddress();
            final int length = requests.length();
            final int stream = requests.stream();
            final boolean send = kind == WorkRequestSource.SEND;
            final WorkRequestOpcode opcode = send ? requests.opcode() : null;
            // a connection bound to a tenant names only that tenant's regions
            final MemoryRegion region = 0 == lkey ? null : domain.regionByLkey(lkey);
            final int refusal;
            if (length < 0)
            {
                refusal = WorkRequestSource.REFUSED_LENGTH;
            }
            else if (0 != lkey && null == region)
            {
                counters.badLkeys().incrementRelease();
                refusal = WorkRequestSource.REFUSED_LKEY;
            }
            else if (null == region ? 0 != length : !region.contains(localAddress, length))
            {
                refusal = WorkRequestSource.REFUSED_OUT_OF_REGION;
            }
            else if (stream < 0 || stream >= c.streams)
            {
                refusal = WorkRequestSource.REFUSED_STREAM;
            }
            else if (send && null == opcode)
            {
                refusal = WorkRequestSource.REFUSED_OPCODE;
            }
            else
            {
                refusal = -1;
            }
            if (refusal >= 0)
            {
                requests.refused(refusal);
                fail(c, kind, refusal == WorkRequestSource.REFUSED_LENGTH ? WorkCompletionStatus.LOC_LEN_ERR :
                    refusal == WorkRequestSource.REFUSED_LKEY || refusal == WorkRequestSource.REFUSED_OUT_OF_REGION ?
                    WorkCompletionStatus.LOC_PROT_ERR : WorkCompletionStatus.LOC_QP_OP_ERR);
                requests.advance();
                continue;
            }
            final int result;
            if (send)
            {
                sendRequest.reset().wrId(requests.wrId()).opcode(opcode).local(region, localAddress, length)
                    .remote(requests.remoteAddress(), requests.rkey()).immediate(requests.immediateData())
                    .signaled(requests.signaled()).solicited(requests.solicited());
                result = c.sendCompletionQueue().hasOverrun() ? PostResult.COMPLETION_QUEUE_OVERRUN :
                    c.transportPostSend(stream, sendRequest);
            }
            else
            {
                receiveRequest.reset().wrId(requests.wrId()).buffer(region, localAddress, length);
                result = c.receiveCompletionQueue().hasOverrun() ? PostResult.COMPLETION_QUEUE_OVERRUN :
                    c.transportPostReceive(stream, receiveRequest);
            }
            if (result == PostResult.QUEUE_FULL)
            {
                taken--;
                break; // stays in the ring until the transport has room: back-pressure to the application
            }
            if (result != PostResult.OK)
            {
                requests.refused(WorkRequestSource.REFUSED_BY_TRANSPORT);
                fail(c, kind, result == PostResult.INVALID_STATE || result == PostResult.COMPLETION_QUEUE_OVERRUN ?
                    WorkCompletionStatus.WR_FLUSH_ERR : WorkCompletionStatus.LOC_QP_OP_ERR);
            }
            c.countTaken(send);
            requests.advance();
        }
        return taken;
    }

    private void fail(final NicConnection c, final byte kind, final WorkCompletionStatus status)
    {
        final WorkRequestSource requests = c.requests;
        final boolean offered;
        if (kind == WorkRequestSource.SEND)
        {
            final WorkRequestOpcode opcode = requests.opcode();
            offered = c.sendCompletionQueue().offer(requests.wrId(), status, null == opcode ? WorkCompletionOpcode.SEND :
                opcode.completionOpcode(), 0, false, 0, c.localId);
        }
        else
        {
            offered = c.receiveCompletionQueue().offer(requests.wrId(), status, WorkCompletionOpcode.RECV, 0, false, 0,
                c.localId);
        }
        if (!offered)
        {
            c.onCompletionQueueOverrun(); // counted by the queue; an error of the connection using it, as in IB
        }
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

    private void publish()
    {
        counters.parse().publish();
        for (final CounterMirror engine : counters.engines())
        {
            engine.publish();
        }
        for (final NicConnection c : connections)
        {
            for (final CounterMirror mirror : c.mirrors)
            {
                mirror.publish();
            }
            if (null != c.gauges)
            {
                c.gauges.publish();
            }
            if (null != closedConnections && !c.isClosing() && c.isTransportClosed())
            {
                try
                {
                    closedConnections.onTransportClosed(this, c);
                }
                catch (final RuntimeException | AssertionError ex)
                {
                    onLoopFault("closed connection", ex);
                }
            }
        }
    }

    public void onClose()
    {
        publish();
        if (null != rxBursts)
        {
            for (int i = 0; i < ports.length; i++)
            {
                ports[i].release(rxBursts[i]);
                rxBursts[i].close();
            }
            transport.onClose();
            if (null != neighbourSinks)
            {
                for (final PortFrameSink sink : neighbourSinks)
                {
                    if (null != sink)
                    {
                        sink.close();
                    }
                }
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
        return "spraynic-worker-" + index;
    }
}
