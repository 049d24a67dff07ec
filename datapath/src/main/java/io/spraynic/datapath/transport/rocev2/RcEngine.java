package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.transport.FrameSink;

import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import org.agrona.collections.Int2ObjectHashMap;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * The RoCEv2 RC protocol engine of one endpoint: its queue pairs, fed parsed packets and time, writing
 * frames into a {@link FrameSink}. Pure protocol: no DPDK, no thread, no clock of its own, so the same code
 * runs on a DPDK port in real time (driven by the NIC's worker loop, {@code nic.NicWorker}), over an in-JVM link,
 * or in a virtual-time simulator ({@code fabric.RcFabricEndpoint}). Single-threaded: every call, posting work requests included, comes from the thread that
 * drives it.
 * <ul>
 *     <li>{@link #onFrame} takes one well-formed RoCEv2 packet ({@code RoceParser} said ROCE) and hands it to
 *     its destination QP; the payload is placed before it returns, so the caller may then free the buffer;</li>
 *     <li>{@link #onTick} runs every QP's timers and sends what is due, QPs taking turns.</li>
 * </ul>
 * QP numbers are drawn at random (a {@link SecureRandom} unless a generator is given), so an off-path host cannot
 * name a live queue pair by counting; the engine holds at most {@link RcEngineConfig#maxQueuePairs()}.
 */
public final class RcEngine
{
    /** QP numbers 0 and 1 are IB's special QPs; ours stay above a small reserved range. */
    private static final int FIRST_QP_NUMBER = 0x11;
    private static final int QP_NUMBER_SPACE = BaseTransportHeader.QP_MASK + 1;

    private final RcEngineConfig config;
    private final ProtectionDomain protectionDomain;
    private final FrameSink sink;
    private final RoceFrameWriter writer = new RoceFrameWriter();
    private final TransportCounters counters = RcCounters.create();
    private final Int2ObjectHashMap<RcQueuePair> queuePairs = new Int2ObjectHashMap<>();
    private final RandomGenerator qpNumbers;
    private RcQueuePair[] active = new RcQueuePair[0];
    private int qpPartition;
    private int qpPartitions = 1;
    private int roundRobin;

    /**
     * @param config           this endpoint's addresses and protocol settings.
     * @param protectionDomain the memory its QPs may touch.
     * @param sink             where frames go.
     */
    public RcEngine(final RcEngineConfig config, final ProtectionDomain protectionDomain, final FrameSink sink)
    {
        this(config, protectionDomain, sink, new SecureRandom());
    }

    /**
     * @param config           this endpoint's addresses and protocol settings.
     * @param protectionDomain the memory its QPs may touch.
     * @param sink             where frames go.
     * @param qpNumbers        where QP numbers come from (a seeded generator makes a simulation reproducible).
     */
    public RcEngine(
        final RcEngineConfig config,
        final ProtectionDomain protectionDomain,
        final FrameSink sink,
        final RandomGenerator qpNumbers)
    {
        this.config = config;
        this.protectionDomain = protectionDomain;
        this.sink = sink;
        this.qpNumbers = qpNumbers;
    }

    /**
     * Creates a queue pair in RESET (control path).
     *
     * @param sendCq            completions of its send queue.
     * @param receiveCq         completions of its receive queue (may be the same queue).
     * @param sendQueueDepth    most outstanding send requests.
     * @param receiveQueueDepth most outstanding receives.
     * @return the queue pair, its number random, unused in this engine and in its {@link #qpNumberPartition share}.
     * @throws IllegalStateException when the engine already holds {@link RcEngineConfig#maxQueuePairs()}.
     */
    public RcQueuePair createQueuePair(
        final CompletionQueue sendCq,
        final CompletionQueue receiveCq,
        final int sendQueueDepth,
        final int receiveQueueDepth)
    {
        // at most half of this engine's share of the number space is ever used, so a random draw finds a free
        // number in two tries on average
        final int cap = Math.min(config.maxQueuePairs(), QP_NUMBER_SPACE / qpPartitions / 2);
        if (queuePairs.size() >= cap)
        {
            throw new IllegalStateException("no room for another queue pair: this engine holds " + queuePairs.size() +
                ", the most allowed (RcEngineConfig.maxQueuePairs " + config.maxQueuePairs() + ", shared by " +
                qpPartitions + " engine(s)); destroy queue pairs that are no longer used or raise maxQueuePairs");
        }
        int qpn;
        do
        {
            final int drawn = qpNumbers.nextInt(QP_NUMBER_SPACE);
            qpn = drawn - drawn % qpPartitions + qpPartition;
        }
        while (qpn >= QP_NUMBER_SPACE || qpn < FIRST_QP_NUMBER || queuePairs.containsKey(qpn));
        final RcQueuePair qp = new RcQueuePair(this, qpn, sendCq, receiveCq, sendQueueDepth, receiveQueueDepth);
        queuePairs.put(qpn, qp);
        active = Arrays.copyOf(active, active.length + 1);
        active[active.length - 1] = qp;
        return qp;
    }

    /**
     * Splits the QP number space between engines that share one address (the workers of one NIC): QP numbers
     * this engine hands out satisfy {@code qpn % count == index}, so any worker can tell from a packet's DestQP
     * which worker owns its queue pair. Call before creating queue pairs.
     *
     * @param index this engine's share, 0..count-1.
     * @param count engines sharing the address.
     */
    public void qpNumberPartition(final int index, final int count)
    {
        if (count < 1 || count > 256 || index < 0 || index >= count)
        {
            throw new IllegalArgumentException("QP number partition " + index + " of " + count +
                ": need 0 <= index < count <= 256");
        }
        this.qpPartition = index;
        this.qpPartitions = count;
    }

    /**
     * Destroys a queue pair (control path): what it still had outstanding completes with WR_FLUSH_ERR first, it
     * drops every reference to registered memory, and its number then names nothing.
     *
     * @param qp a queue pair of this engine.
     */
    public void destroyQueuePair(final RcQueuePair qp)
    {
        if (queuePairs.get(qp.qpNumber()) == qp)
        {
            qp.destroy();
            queuePairs.remove(qp.qpNumber());
            active = queuePairs.values().toArray(new RcQueuePair[0]);
        }
    }

    /**
     * Revokes a region being deregistered (control path, on the engine's thread, after the region's domain
     * deregistered it): every operation of every queue pair that uses it is cut short before this returns, so no
     * byte is placed into it or read from it afterwards. A WRITE under way into it is refused at its next packet
     * (NAK remote access error), READ responses not yet sent from it are replaced by that NAK, and local work
     * requests naming it complete with LOC_PROT_ERR (their queue pair goes to the error state, as a NIC's would).
     *
     * @param region the region, as this engine's domain knows it.
     * @return queue pairs that had an operation using it.
     */
    public int revoke(final MemoryRegion region)
    {
        int hit = 0;
        for (final RcQueuePair qp : active)
        {
            if (qp.revoke(region))
            {
                hit++;
            }
        }
        return hit;
    }

    /** @return the queue pairs held. */
    public int queuePairCount()
    {
        return queuePairs.size();
    }

    /**
     * @param qpNumber a QP number.
     * @return the queue pair, or null.
     */
    public RcQueuePair queuePair(final int qpNumber)
    {
        return queuePairs.get(qpNumber);
    }

    /**
     * Takes one parsed RoCEv2 packet.
     *
     * @param frame    a frame the parser classified ROCE.
     * @param nowNanos the time.
     */
    public void onFrame(final RoceFrame frame, final long nowNanos)
    {
        counters.increment(RcCounters.RX_PACKETS);
        final int opcode = frame.opcode();
        if (Opcode.service(opcode) != Opcode.RC && opcode != Opcode.CNP)
        {
            counters.increment(RcCounters.RX_UNSUPPORTED_OPCODE);
            return;
        }
        final RcQueuePair qp = queuePairs.get(frame.destQp());
        if (null == qp)
        {
            counters.increment(RcCounters.RX_UNKNOWN_QP);
            return;
        }
        qp.onFrame(frame, nowNanos);
    }

    /**
     * Runs timers and sends what is due, each QP in turn, starting one further along each call.
     *
     * @param nowNanos the time.
     * @return work done (packets sent and timer events).
     */
    public int onTick(final long nowNanos)
    {
        final RcQueuePair[] qps = active;
        final int n = qps.length;
        if (n == 0)
        {
            return 0;
        }
        int work = 0;
        final int start = Integer.remainderUnsigned(roundRobin++, n); // the counter wraps within minutes of ticks
        for (int k = 0; k < n; k++)
        {
            work += qps[(start + k) % n].doWork(nowNanos);
        }
        return work;
    }

    /** @return the counters. */
    public TransportCounters counters()
    {
        return counters;
    }

    /** @return the configuration. */
    public RcEngineConfig config()
    {
        return config;
    }

    /** @return the protection domain. */
    public ProtectionDomain protectionDomain()
    {
        return protectionDomain;
    }

    RoceFrameWriter writer()
    {
        return writer;
    }

    FrameSink sink()
    {
        return sink;
    }

    void onQueuePairError(final RcQueuePair qp)
    {
        // what ibverbs reports as an asynchronous IBV_EVENT_QP_FATAL; the completions carry the cause
        counters.increment(RcCounters.QP_ERRORS);
    }
}
