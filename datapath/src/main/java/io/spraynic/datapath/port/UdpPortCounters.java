package io.spraynic.datapath.port;

import org.agrona.concurrent.status.AtomicCounter;

import java.util.function.Function;

/**
 * What a {@link UdpSocketPacketPort} counts, each an Agrona {@link AtomicCounter} (so {@code spraynic stat} reads
 * them from outside): datagrams moved, and every datagram or frame it refused, by reason.
 */
public final class UdpPortCounters implements AutoCloseable
{
    /** Why a datagram or frame was dropped at the port. */
    public enum Reason
    {
        /** A datagram shorter than a BTH and an ICRC: not RoCEv2. */
        RX_SHORT("rx drops (datagram shorter than BTH + ICRC)"),
        /** A datagram longer than the port's buffers (the kernel truncated it). */
        RX_TOO_LONG("rx drops (datagram longer than a buffer)"),
        /** A datagram whose first 12 bytes are no BTH (transport version not 0). */
        RX_NOT_BTH("rx drops (not a BTH: transport version not 0)"),
        /**
         * A datagram from a sender not of the port's family: not IPv4 on an IPv4 port, not IPv6 (or an
         * IPv4-mapped IPv6 address) on an IPv6 port.
         */
        RX_WRONG_FAMILY("rx drops (sender not of the port's address family)"),
        /** {@code recvmmsg} failed with something other than {@code EAGAIN}. */
        RX_ERROR("rx errors (recvmmsg failed)"),
        /**
         * The engine's frame is not IPv4 without options (IPv6 without extension headers on an IPv6 port) / UDP
         * to port 4791, or its lengths disagree.
         */
        TX_NOT_IP_UDP("tx drops (frame not UDP to 4791 over the port's IP family)"),
        /** The engine's frame has an IP source other than the address the port's sockets are bound to. */
        TX_WRONG_SOURCE("tx drops (source address not the port's)"),
        /** {@code sendmmsg} refused a datagram with something other than {@code EAGAIN}. */
        TX_ERROR("tx drops (sendmmsg refused)");

        private final String label;

        Reason(final String label)
        {
            this.label = label;
        }

        /** @return the counter's label, after the port's prefix. */
        public String label()
        {
            return label;
        }
    }

    private static final Reason[] REASONS = Reason.values();

    private final AtomicCounter rxDatagrams;
    private final AtomicCounter txDatagrams;
    private final AtomicCounter txWouldBlock;
    private final AtomicCounter rxKernelDrops;
    private final AtomicCounter[] drops = new AtomicCounter[REASONS.length];

    /**
     * @param newCounter makes a counter from its label (e.g. {@code CountersFile::newCounter}).
     * @param prefix     put before every label, e.g. {@code "port udp0/q0: "}.
     */
    public UdpPortCounters(final Function<String, AtomicCounter> newCounter, final String prefix)
    {
        rxDatagrams = newCounter.apply(prefix + "udp rx datagrams");
        txDatagrams = newCounter.apply(prefix + "udp tx datagrams");
        txWouldBlock = newCounter.apply(prefix + "udp tx would block (send buffer full, retried)");
        rxKernelDrops = newCounter.apply(prefix + "udp rx dropped by the kernel (receive buffer full)");
        for (final Reason reason : REASONS)
        {
            drops[reason.ordinal()] = newCounter.apply(prefix + "udp " + reason.label());
        }
    }

    void received(final int count)
    {
        rxDatagrams.getAndAddRelease(count);
    }

    void sent(final int count)
    {
        txDatagrams.getAndAddRelease(count);
    }

    void wouldBlock()
    {
        txWouldBlock.incrementRelease();
    }

    void kernelDrops(final long total)
    {
        rxKernelDrops.setRelease(total);
    }

    void drop(final Reason reason)
    {
        drops[reason.ordinal()].incrementRelease();
    }

    /** @return datagrams received and handed to the engine. */
    public long rxDatagrams()
    {
        return rxDatagrams.get();
    }

    /** @return datagrams the kernel took. */
    public long txDatagrams()
    {
        return txDatagrams.get();
    }

    /** @return sends the kernel refused for want of buffer space (the frames stayed queued). */
    public long txWouldBlock()
    {
        return txWouldBlock.get();
    }

    /** @return datagrams the kernel dropped before the port could receive them (its receive buffer was full). */
    public long rxKernelDrops()
    {
        return rxKernelDrops.get();
    }

    /** @return drops for {@code reason}. */
    public long drops(final Reason reason)
    {
        return drops[reason.ordinal()].get();
    }

    public void close()
    {
        rxDatagrams.close();
        txDatagrams.close();
        txWouldBlock.close();
        rxKernelDrops.close();
        for (final AtomicCounter counter : drops)
        {
            counter.close();
        }
    }
}
