package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Two embedded NICs, one worker and one plane each, on two DPDK ports of one {@link DpdkNic} that reach each
 * other (a ring pair, or af_packet ports on a bridged veth): a verified transfer each way with
 * {@link PeerExchange}, every frame either NIC transmits measured on its way out.
 */
final class MaxFrameTransfer
{
    /** What a run saw: whether both directions verified, and the longest frame each NIC sent. */
    record Outcome(boolean verified, int longestFrameA, int longestFrameB, int mtuA, int mtuB, String detail)
    {
    }

    private MaxFrameTransfer()
    {
    }

    /**
     * @param configA  NIC A's configuration (mode, MTU); planes, addresses and frame limits are set here.
     * @param configB  NIC B's.
     * @return the outcome; both NICs are closed.
     */
    static Outcome run(final DpdkNic dpdk, final String portA, final String portB, final EmbeddedNicConfig configA,
        final EmbeddedNicConfig configB, final Path dir, final long bytes) throws Exception
    {
        final String[] portNames = {portA, portB};
        final EmbeddedNicConfig[] configs = {configA, configB};
        final FrameLengthProbe[] probes = new FrameLengthProbe[2];
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        final CountersFile[] counters = new CountersFile[2];
        try
        {
            for (int h = 0; h < 2; h++)
            {
                probes[h] = new FrameLengthProbe(dpdk.packetPort(portNames[h], 0));
                configs[h].workers(1).planes(1).local(0, 0x0A63_0001 + h, 0x02_00_00_00_63_01L + h)
                    .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig)
                    .bursts(32, dpdk.maxFrameLength(portNames[h]));
                counters[h] = CountersFile.create(dir, "maxframe" + h + "-" + ProcessHandle.current().pid(), 4096);
                nics[h] = EmbeddedNic.start(configs[h], new PacketPort[][]{{probes[h]}}, counters[h]);
            }
            final Path exchange = Files.createDirectory(dir.resolve("exchange-" + System.nanoTime()));
            final CompletableFuture<PeerExchange.Result> server =
                CompletableFuture.supplyAsync(() -> exchange(nics[1], PeerExchange.Role.SERVER, exchange, bytes));
            final PeerExchange.Result client = exchange(nics[0], PeerExchange.Role.CLIENT, exchange, bytes);
            final PeerExchange.Result served = server.get(120, TimeUnit.SECONDS);
            return new Outcome(client.verified() && served.verified() && served.bytesEachWay() == bytes,
                probes[0].longest, probes[1].longest, configs[0].mtu, configs[1].mtu,
                client.toJson() + " / " + served.toJson());
        }
        finally
        {
            for (int h = 0; h < 2; h++)
            {
                if (null != nics[h])
                {
                    nics[h].close();
                }
                if (null != counters[h])
                {
                    counters[h].close();
                }
            }
        }
    }

    private static PeerExchange.Result exchange(final EmbeddedNic nic, final PeerExchange.Role role, final Path directory,
        final long bytes)
    {
        try
        {
            return PeerExchange.run(nic, role, directory, bytes, 64 * 1024, Duration.ofSeconds(60));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** A port that notes the longest frame transmitted through it (test code: the worker's thread writes, the test reads after close). */
    static final class FrameLengthProbe implements PacketPort
    {
        private final PacketPort inner;
        volatile int longest;

        FrameLengthProbe(final PacketPort inner)
        {
            this.inner = inner;
        }

        public String name()
        {
            return inner.name();
        }

        public PacketBurst newBurst(final int capacity)
        {
            return inner.newBurst(capacity);
        }

        public int receive(final PacketBurst burst)
        {
            return inner.receive(burst);
        }

        public boolean allocate(final PacketBurst burst, final int count)
        {
            return inner.allocate(burst, count);
        }

        public int transmit(final PacketBurst burst)
        {
            int max = longest;
            for (int i = 0; i < burst.size(); i++)
            {
                max = Math.max(max, burst.length(i));
            }
            longest = max;
            return inner.transmit(burst);
        }

        public void release(final PacketBurst burst)
        {
            inner.release(burst);
        }

        public void releaseLast(final PacketBurst burst)
        {
            inner.releaseLast(burst);
        }

        public void onPollerStart()
        {
            inner.onPollerStart();
        }

        public void onPollerClose()
        {
            inner.onPollerClose();
        }

        public void close()
        {
            inner.close();
        }
    }
}
