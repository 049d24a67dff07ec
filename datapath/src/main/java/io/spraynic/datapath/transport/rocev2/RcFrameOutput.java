package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrameWriter;

import java.lang.foreign.MemorySegment;

/**
 * The frames of one queue pair: Ethernet, IP and UDP to its peer and a BTH to its remote QP, written by the
 * engine's {@link RoceFrameWriter} into the engine's {@link FrameSink}. The caller first puts the opcode's
 * extension headers (RETH, AETH, ImmDt) on {@link #writer()}. Data frames are charged to the DCQCN reaction
 * point by their time on the wire.
 */
final class RcFrameOutput
{
    /** Ethernet preamble and start delimiter (8), FCS (4) and inter-frame gap (12): wire bytes besides the frame. */
    static final int WIRE_OVERHEAD_BYTES = 24;

    private final RcEngineConfig config;
    private final TransportCounters counters;
    private final RoceFrameWriter writer;
    private final FrameSink sink;
    private final DcqcnRateLimiter rateLimiter;

    private RcConnectionAttributes attributes;
    private int remoteQpNumber;
    private long remoteMac;
    private int remoteIpv4;
    private int udpSourcePort;
    private boolean ipv6;

    RcFrameOutput(
        final RcEngineConfig config,
        final TransportCounters counters,
        final RoceFrameWriter writer,
        final FrameSink sink,
        final DcqcnRateLimiter rateLimiter)
    {
        this.config = config;
        this.counters = counters;
        this.writer = writer;
        this.sink = sink;
        this.rateLimiter = rateLimiter;
    }

    /** Addresses frames to the peer the attributes name (control path, at RTR). */
    void connect(final RcConnectionAttributes attributes)
    {
        this.attributes = attributes;
        this.remoteQpNumber = attributes.remoteQpNumber();
        this.remoteMac = attributes.remoteMac();
        this.remoteIpv4 = attributes.remoteIpv4();
        this.udpSourcePort = attributes.udpSourcePort();
        this.ipv6 = attributes.ipVersion() == 6;
    }

    /** @return the largest frame the sink holds. */
    int maxFrameLength()
    {
        return sink.maxFrameLength();
    }

    long nextHopMac()
    {
        return remoteMac;
    }

    void nextHopMac(final long mac)
    {
        remoteMac = mac;
    }

    /** @return the writer, for the extension headers of the next frame. */
    RoceFrameWriter writer()
    {
        return writer;
    }

    /**
     * Writes one frame to the sink; the caller has set the opcode's extension headers on the writer.
     *
     * @param data true for a request or READ response: ECN-capable, and paced.
     * @return the frame length, or -1 when the sink had no buffer.
     */
    int emit(
        final int opcode,
        final int psn,
        final boolean ackReq,
        final boolean solicited,
        final MemorySegment payload,
        final long payloadOffset,
        final int payloadLength,
        final boolean data,
        final long nowNanos)
    {
        writer.ethernet(config.localMac(), remoteMac);
        if (ipv6)
        {
            writer.ipv6(attributes.localIpv6High(), attributes.localIpv6Low(), attributes.remoteIpv6High(),
                attributes.remoteIpv6Low());
        }
        else
        {
            writer.ipv4(config.localIpv4(), remoteIpv4);
        }
        writer.udpSourcePort(udpSourcePort)
            .ecn(data ? config.dataEcn() : 0)
            .opcode(opcode)
            .destQp(remoteQpNumber)
            .psn(psn)
            .ackReq(ackReq)
            .solicited(solicited);
        final int maxLength = writer.frameLength(payloadLength);
        if (!sink.claim(0, maxLength)) // an RC engine drives one port
        {
            counters.increment(RcCounters.SINK_FULL);
            return -1;
        }
        final int length = payloadLength > 0 ?
            writer.writeFrame(sink.buffer(), sink.offset(), payload, payloadOffset, payloadLength) :
            writer.writeFrame(sink.buffer(), sink.offset(), 0);
        sink.commit(length);
        counters.increment(RcCounters.TX_PACKETS);
        if (data)
        {
            // paced by wire time: the frame plus preamble, FCS and inter-frame gap, or pacing at line rate overruns the line
            rateLimiter.onSent(length + WIRE_OVERHEAD_BYTES, nowNanos);
        }
        return length;
    }

    /**
     * Writes an ACK, NAK or RNR NAK.
     *
     * @return false when the sink had no buffer.
     */
    boolean acknowledge(final int syndrome, final int msn, final int psn, final long nowNanos)
    {
        writer.aeth(syndrome, msn);
        return emit(Opcode.RC_ACKNOWLEDGE, psn, false, false, null, 0, 0, false, nowNanos) >= 0;
    }

    /**
     * Writes a congestion notification packet (BECN set) to the peer's QP.
     *
     * @return false when the sink had no buffer.
     */
    boolean congestionNotification(final long nowNanos)
    {
        writer.resv8a(BaseTransportHeader.BECN_FLAG);
        final int length = emit(Opcode.CNP, 0, false, false, null, 0, 0, false, nowNanos);
        writer.resv8a(0);
        if (length < 0)
        {
            return false;
        }
        counters.increment(RcCounters.TX_CNP);
        return true;
    }
}
