package io.spraynic.bench.e2e;

import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.HostHugepages;
import io.spraynic.pmd.HugepageChoice;
import io.spraynic.pmd.HugepageMode;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;

import java.util.List;

/**
 * The DPDK set-up of the end-to-end benchmarks: EAL without hugepages (or with, {@link #start(HugepageMode)}) and one crossed pair of
 * {@code net_ring} ports, {@code a} and {@code b}, one per endpoint. A frame transmitted on one is received
 * on the other: a wire with no rate limit and no loss, so what is measured is the software.
 */
public final class RingNic
{
    public static final String PORT_A = "a";
    public static final String PORT_B = "b";
    static final int RING_SLOTS = 1024;
    static final int MBUFS = 32767;

    private RingNic()
    {
    }

    public static NicConfig config()
    {
        return NicConfig.of(
            EalConfig.DEFAULT.withFilePrefix("spraynic-e2e-" + ProcessHandle.current().pid())
                .withLogLevels(List.of("lib.eal:warning")),
            MempoolConfig.DEFAULT.withMbufs(MBUFS),
            List.of(PortConfig.ringPair(PORT_A, PORT_B).withDescriptors(RING_SLOTS, RING_SLOTS),
                PortConfig.ringPair(PORT_B, PORT_A).withDescriptors(RING_SLOTS, RING_SLOTS)));
    }

    /** Starts EAL (once per process) and both ports, without hugepages. */
    public static DpdkNic start()
    {
        return DpdkNic.start(config());
    }

    /**
     * Starts EAL (once per process) and both ports, from hugepages as {@code hugepages} and the host decide; the
     * choice is one line on stderr.
     */
    public static DpdkNic start(final HugepageMode hugepages)
    {
        final HugepageChoice choice = HugepageChoice.choose(config(), hugepages, HostHugepages.probe());
        System.err.println("spraynic: " + choice.notice());
        return DpdkNic.start(choice.config());
    }

    /**
     * Frees whatever is left in both ports' receive rings (between runs, on a thread registered with EAL).
     *
     * @return frames freed.
     */
    public static int drain(final DpdkNic nic)
    {
        int freed = 0;
        for (final String name : List.of(PORT_A, PORT_B))
        {
            final PacketPort port = nic.packetPort(name, 0);
            final PacketBurst burst = port.newBurst(32);
            int n;
            while ((n = port.receive(burst)) > 0)
            {
                freed += n;
                port.release(burst);
            }
            burst.close();
        }
        return freed;
    }
}
