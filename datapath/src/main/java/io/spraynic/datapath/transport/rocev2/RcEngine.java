package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.transport.FrameSink;

import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import org.agrona.collections.Int2ObjectHashMap;

import java.util.Arrays;

/**
 * The RoCEv2 RC protocol engine of one endpoint: its queue pairs, fed parsed packets and time, writing
 * frames into a {@link FrameSink}. Pure protocol: no DPDK, no thread, no clock of its own, so the same code
 * runs on a DPDK port in real time ({@link RoceTransportAgent}), over an in-JVM link, or in a virtual-time
 * simulator. Single-threaded: every call, posting work requests included, comes from the thread that
 * drives it.
 * <ul>
 *     <li>{@link #onFrame} takes one well-formed RoCEv2 packet ({@code RoceParser} said ROCE) and hands it to
 *     its destination QP; the payload is placed before it returns, so the caller may then free the buffer;</li>
 *     <li>{@link #onTick} runs every QP's timers and sends what is due, QPs taking turns.</li>
 * </ul>
 */
public final class RcEngine
{
    /** QP numbers 0 and 1 are IB's special QPs; ours start above. */
    private static final int FIRST_QP_NUMBER = 0x11;

    private final RcEngineConfig config;
    private final ProtectionDomain protectionDomain;
    private final FrameSink sink;
    private final RoceFrameWriter writer = new RoceFrameWriter();
    private final TransportCounters counters = RcCounters.create();
    private final Int2ObjectHashMap<RcQueuePair> queuePairs = new Int2ObjectHashMap<>();
    private RcQueuePair[] active = new RcQueuePair[0];
    private int nextQpNumber = FIRST_QP_NUMBER;
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
        this.config = config;
        this.protectionDomain = protectionDomain;
        this.sink = sink;
    }

    /**
     * Creates a queue pair in RESET (control path).
     *
     * @param sendCq            completions of its send queue.
     * @param receiveCq         completions of its receive queue (may be the same queue).
     * @param sendQueueDepth    most outstanding send requests.
     * @param receiveQueueDepth most outstanding receives.
     * @return the queue pair.
     */
    public RcQueuePair createQueuePair(
        final CompletionQueue sendCq,
        final CompletionQueue receiveCq,
        final int sendQueueDepth,
        final int receiveQueueDepth)
    {
        int qpn = nextQpNumber;
        while (queuePairs.containsKey(qpn) || qpn < FIRST_QP_NUMBER || qpn % qpPartitions != qpPartition)
        {
            qpn = (qpn + 1) & BaseTransportHeader.QP_MASK;
        }
        nextQpNumber = (qpn + 1) & BaseTransportHeader.QP_MASK;
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
     * Destroys a queue pair (control path): its number then names nothing.
     *
     * @param qp a queue pair of this engine.
     */
    public void destroyQueuePair(final RcQueuePair qp)
    {
        if (queuePairs.remove(qp.qpNumber()) != null)
        {
            active = queuePairs.values().toArray(new RcQueuePair[0]);
        }
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
        final int start = roundRobin++ % n;
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
