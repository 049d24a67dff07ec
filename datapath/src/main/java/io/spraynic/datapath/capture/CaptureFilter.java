package io.spraynic.datapath.capture;

import io.spraynic.datapath.wire.UdpHeader;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * Which frames a live capture takes: directions, the NIC's ports (planes) and queues (workers), and a few checks of
 * the frame itself cheap enough for a worker to make on every frame (no loops, no allocation, each read bounded by
 * the frame's length). Written as an expression, each term at most once, joined by {@code and}:
 * <pre>
 *   rx | tx                       the direction (default both)
 *   port N[,N...]                 the NIC's ports by index (default all)
 *   queue N[,N...]                queues, which are the workers (default all)
 *   spray | rocev2                UDP 4791 frames whose BTH opcode is spray's (0xC0-0xDF), or any other
 *   udp dst port N                UDP destination port N
 *   host A.B.C.D                  IPv4 source or destination A.B.C.D
 * </pre>
 * e.g. {@code rx and port 0 and queue 1,2 and spray and host 10.0.0.2}. The empty expression takes every frame.
 *
 * @param directions bit {@code 1 << TappingPacketPort.RX} and/or {@code 1 << TappingPacketPort.TX}.
 * @param ports      bit {@code p} for port (plane) {@code p}.
 * @param queues     bit {@code q} for queue (worker) {@code q}.
 * @param kind       which RoCEv2 frames.
 * @param udpDstPort a UDP destination port, or -1 for any.
 * @param host       an IPv4 address (when {@code hasHost}).
 * @param hasHost    whether {@code host} applies.
 */
public record CaptureFilter(int directions, long ports, long queues, Kind kind, int udpDstPort, int host,
    boolean hasHost)
{
    /** Both directions. */
    public static final int BOTH = (1 << TappingPacketPort.RX) | (1 << TappingPacketPort.TX);
    /** Every frame of every port and queue. */
    public static final CaptureFilter ALL = new CaptureFilter(BOTH, -1L, -1L, Kind.ANY, -1, 0, false);
    /** Longest expression accepted. */
    public static final int MAX_EXPRESSION_LENGTH = 512;

    /** The transport a frame belongs to. */
    public enum Kind
    {
        /** Any frame. */
        ANY,
        /** RoCEv2-encapsulated frames with a spray opcode. */
        SPRAY,
        /** RoCEv2 frames with any other opcode. */
        ROCEV2
    }

    public CaptureFilter
    {
        if (directions <= 0 || directions > BOTH)
        {
            throw new IllegalArgumentException("directions must be rx, tx or both, not bits " + directions);
        }
        if (ports == 0 || queues == 0)
        {
            throw new IllegalArgumentException("a capture of no port or no queue takes nothing");
        }
        if (null == kind)
        {
            throw new IllegalArgumentException("no frame kind");
        }
        if (udpDstPort < -1 || udpDstPort > 0xFFFF)
        {
            throw new IllegalArgumentException("UDP port " + udpDstPort + " is not in 0..65535");
        }
    }

    /**
     * @return the filter the expression describes.
     * @throws IllegalArgumentException naming the term that is wrong and what would be right.
     */
    public static CaptureFilter parse(final String expression)
    {
        if (expression.length() > MAX_EXPRESSION_LENGTH)
        {
            throw new IllegalArgumentException("a filter of " + expression.length() + " characters is longer than the " +
                MAX_EXPRESSION_LENGTH + " allowed");
        }
        final String[] tokens = expression.trim().toLowerCase(Locale.ROOT).split("\\s+");
        int directions = 0;
        long ports = 0;
        long queues = 0;
        Kind kind = null;
        int udpDstPort = -1;
        Integer host = null;
        int i = 0;
        if (tokens.length == 1 && tokens[0].isEmpty())
        {
            return ALL;
        }
        while (i < tokens.length)
        {
            final String term = tokens[i++];
            switch (term)
            {
                case "rx", "tx" ->
                {
                    once(directions != 0, "rx/tx", "a frame is either received or transmitted: leave both out for both");
                    directions = 1 << (term.equals("rx") ? TappingPacketPort.RX : TappingPacketPort.TX);
                }
                case "port" ->
                {
                    once(ports != 0, "port", "give the ports as one list, e.g. port 0,1");
                    ports = list(term, next(tokens, i++, "port N[,N...]"));
                }
                case "queue" ->
                {
                    once(queues != 0, "queue", "give the queues as one list, e.g. queue 0,1");
                    queues = list(term, next(tokens, i++, "queue N[,N...]"));
                }
                case "spray", "rocev2" ->
                {
                    once(null != kind, "spray/rocev2", "a frame is spray or RoCEv2, not both");
                    kind = term.equals("spray") ? Kind.SPRAY : Kind.ROCEV2;
                }
                case "udp" ->
                {
                    once(udpDstPort >= 0, "udp dst port", "a frame has one destination port");
                    if (!"dst".equals(next(tokens, i++, "udp dst port N")) || !"port".equals(next(tokens, i++, "udp dst port N")))
                    {
                        throw new IllegalArgumentException("write the UDP term as: udp dst port N");
                    }
                    udpDstPort = number(next(tokens, i++, "udp dst port N"), 0, 0xFFFF, "a UDP port");
                }
                case "host" ->
                {
                    once(null != host, "host", "a frame has one source and one destination: filter on one host");
                    final String address = next(tokens, i++, "host A.B.C.D");
                    try
                    {
                        host = Wire.parseIpv4(address);
                    }
                    catch (final RuntimeException ex)
                    {
                        throw new IllegalArgumentException("host " + address + " is not an IPv4 address A.B.C.D");
                    }
                }
                default -> throw new IllegalArgumentException("unknown filter term '" + term + "': use rx, tx, port N, " +
                    "queue N, spray, rocev2, udp dst port N, host A.B.C.D, joined by and");
            }
            if (i < tokens.length)
            {
                if (!tokens[i].equals("and"))
                {
                    throw new IllegalArgumentException("expected 'and' after " + term + ", not '" + tokens[i] + "'");
                }
                if (++i == tokens.length)
                {
                    throw new IllegalArgumentException("the filter ends with 'and': add a term or remove it");
                }
            }
        }
        return new CaptureFilter(0 == directions ? BOTH : directions, 0 == ports ? -1L : ports, 0 == queues ? -1L : queues,
            null == kind ? Kind.ANY : kind, udpDstPort, null == host ? 0 : host, null != host);
    }

    private static void once(final boolean seen, final String term, final String why)
    {
        if (seen)
        {
            throw new IllegalArgumentException("the filter names " + term + " twice: " + why);
        }
    }

    private static String next(final String[] tokens, final int i, final String form)
    {
        if (i >= tokens.length)
        {
            throw new IllegalArgumentException("the filter ends early: write " + form);
        }
        return tokens[i];
    }

    private static long list(final String term, final String list)
    {
        long mask = 0;
        for (final String item : list.split(",", -1))
        {
            mask |= 1L << number(item, 0, 63, "a " + term);
        }
        return mask;
    }

    private static int number(final String text, final int min, final int max, final String what)
    {
        try
        {
            final int value = Integer.parseInt(text);
            if (value >= min && value <= max)
            {
                return value;
            }
        }
        catch (final NumberFormatException ignored)
        {
            // answered below
        }
        throw new IllegalArgumentException("'" + text + "' is not " + what + " (" + min + ".." + max + ")");
    }

    /**
     * @return null when this filter fits a NIC of {@code planes} ports and {@code workers} queues, else why not.
     */
    public String problem(final int planes, final int workers)
    {
        if (ports != -1L && (planes >= 64 ? 0 : ports >>> planes) != 0)
        {
            return "port " + (63 - Long.numberOfLeadingZeros(ports)) + " is not one of the NIC's ports 0.." + (planes - 1);
        }
        if (queues != -1L && (workers >= 64 ? 0 : queues >>> workers) != 0)
        {
            return "queue " + (63 - Long.numberOfLeadingZeros(queues)) + " is not one of the NIC's queues 0.." +
                (workers - 1) + " (one per worker)";
        }
        return null;
    }

    /** @return true when the frame checks apply (else every frame of a chosen port, queue and direction matches). */
    public boolean checksFrames()
    {
        return kind != Kind.ANY || udpDstPort >= 0 || hasHost;
    }

    /** @return true when frames of {@code direction} on {@code plane} of queue {@code queue} are taken. */
    public boolean takes(final int plane, final int queue, final int direction)
    {
        return (directions & (1 << direction)) != 0 && (ports & (1L << plane)) != 0 && (queues & (1L << queue)) != 0;
    }

    /**
     * The per-frame checks (worker thread, every frame of a tapped port while {@link #checksFrames}): Ethernet with
     * or without one VLAN tag, IPv4 or IPv6, UDP. Never reads past {@code length} bytes; allocates nothing.
     */
    public boolean matches(final MemorySegment memory, final long offset, final int length)
    {
        if (length < 14)
        {
            return false;
        }
        final long end = offset + length;
        long l3 = offset + 14;
        int etherType = memory.get(Wire.SHORT_BE, offset + 12) & 0xFFFF;
        if (etherType == 0x8100)
        {
            if (length < 18)
            {
                return false;
            }
            etherType = memory.get(Wire.SHORT_BE, offset + 16) & 0xFFFF;
            l3 = offset + 18;
        }
        final int protocol;
        final long l4;
        if (etherType == 0x0800)
        {
            if (l3 + 20 > end)
            {
                return false;
            }
            if (hasHost && memory.get(Wire.INT_BE, l3 + 12) != host && memory.get(Wire.INT_BE, l3 + 16) != host)
            {
                return false;
            }
            protocol = memory.get(Wire.BYTE, l3 + 9) & 0xFF;
            l4 = l3 + Math.max(20, (memory.get(Wire.BYTE, l3) & 0x0F) * 4);
        }
        else if (etherType == 0x86DD && !hasHost)
        {
            if (l3 + 40 > end)
            {
                return false;
            }
            protocol = memory.get(Wire.BYTE, l3 + 6) & 0xFF;
            l4 = l3 + 40;
        }
        else
        {
            return false;
        }
        if (kind == Kind.ANY && udpDstPort < 0)
        {
            return true;
        }
        if (protocol != 17 || l4 + 8 > end)
        {
            return false;
        }
        final int port = memory.get(Wire.SHORT_BE, l4 + 2) & 0xFFFF;
        if (udpDstPort >= 0 && port != udpDstPort)
        {
            return false;
        }
        if (kind == Kind.ANY)
        {
            return true;
        }
        if (port != UdpHeader.ROCE_V2_PORT || l4 + 9 > end)
        {
            return false;
        }
        final int opcode = memory.get(Wire.BYTE, l4 + 8) & 0xFF;
        final boolean spray = opcode >= 0xC0 && opcode <= 0xDF;
        return kind == Kind.SPRAY == spray;
    }

    /** @return the expression, in the form {@link #parse} reads. */
    public String toString()
    {
        final StringBuilder s = new StringBuilder();
        if (directions != BOTH)
        {
            term(s, (directions & (1 << TappingPacketPort.RX)) != 0 ? "rx" : "tx");
        }
        if (ports != -1L)
        {
            term(s, "port " + bits(ports));
        }
        if (queues != -1L)
        {
            term(s, "queue " + bits(queues));
        }
        if (kind != Kind.ANY)
        {
            term(s, kind.name().toLowerCase(Locale.ROOT));
        }
        if (udpDstPort >= 0)
        {
            term(s, "udp dst port " + udpDstPort);
        }
        if (hasHost)
        {
            term(s, "host " + Wire.ipv4ToString(host));
        }
        return s.toString();
    }

    private static void term(final StringBuilder s, final String term)
    {
        s.append(s.isEmpty() ? "" : " and ").append(term);
    }

    private static String bits(final long mask)
    {
        final StringBuilder s = new StringBuilder();
        for (long m = mask; m != 0; m &= m - 1)
        {
            s.append(s.isEmpty() ? "" : ",").append(Long.numberOfTrailingZeros(m));
        }
        return s.toString();
    }
}
